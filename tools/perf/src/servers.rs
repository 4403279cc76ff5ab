//! The servers a run targets, started on 127.0.0.1, and the objects the read workloads need:
//! `null` (plain HTTP), `null-tls` (the same behind TLS, its CA generated for the run) and
//! `local-s3` (plain HTTP, data on tmpfs).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use perf_peer::BUCKET;
use perf_peer::tasks::Action;
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::{BucketName, ObjectKey};
use s3_wire_tokio::transfer::TransferOptions;
use s3_wire_tokio::{Client, PayloadSigning, UploadSource};

use crate::MIB;
use crate::null;
use crate::workloads::Workload;

/// The null server's credentials (it checks none, but clients sign).
const NULL_KEY: &str = "null-access-key";
const NULL_SECRET: &str = "null-secret-key";

/// The object the `get` workload reads.
pub const GET_KEY: &str = "single/get";
/// The object the `download` workload reads.
pub const DOWNLOAD_KEY: &str = "download/source";

/// A running server the workloads target.
pub struct Server {
    pub name: &'static str,
    pub endpoint: String,
    pub access_key: String,
    pub secret_key: String,
    /// The PEM file of the CA that issued the server's certificate (`null-tls`).
    pub ca_file: Option<PathBuf>,
    _local: Option<local_s3::LocalS3>,
    _moto: Option<crate::moto::Moto>,
}

/// The servers of a run when `--servers` names none: TLS first, as clients meet S3.
pub const DEFAULT_SERVERS: &str = "null-tls,null,local-s3";

/// The variable that chooses how s3-wire protects payloads over plain HTTP in a run:
/// `signed` (the default) or `unsigned-with-checksum` (`ClientBuilder::payload_signing`).
/// The children inherit it.
pub const PAYLOAD_SIGNING_VAR: &str = "S3W_PERF_PAYLOAD_SIGNING";

/// The variables that change how s3-wire's clients of a run behave; the report names those
/// set.
pub const SETTINGS_VARS: [&str; 3] = [PAYLOAD_SIGNING_VAR, SYNC_FILES_VAR, REQUEST_HOOK_VAR];

/// The variable that turns off s3-wire's sync of each downloaded file in a run (`off`;
/// `TransferOptions::sync_files`, default `on`). The children inherit it, the Python
/// package's peer too (its `sync_files`).
pub const SYNC_FILES_VAR: &str = "S3W_PERF_SYNC_FILES";

/// An s3-wire client of `endpoint` as every s3-wire side of a run makes it (the setup,
/// `perf child`, the tests): `us-east-1`, static keys, no proxy from the environment, the
/// payload signing [`PAYLOAD_SIGNING_VAR`] chooses, and `ca_pem` (the CA of `null-tls`)
/// trusted besides the platform's roots.
pub fn client(
    endpoint: &str,
    access_key: &str,
    secret_key: &str,
    ca_pem: Option<Vec<u8>>,
) -> Result<Client, String> {
    client_builder(endpoint, access_key, secret_key, ca_pem)?
        .build()
        .map_err(|e| e.to_string())
}

/// The builder of [`client`], for a caller that sets more.
pub fn client_builder(
    endpoint: &str,
    access_key: &str,
    secret_key: &str,
    ca_pem: Option<Vec<u8>>,
) -> Result<s3_wire_tokio::ClientBuilder, String> {
    let signing = match std::env::var(PAYLOAD_SIGNING_VAR).as_deref() {
        Err(_) | Ok("signed") => PayloadSigning::Signed,
        Ok("unsigned-with-checksum") => PayloadSigning::UnsignedWithChecksum,
        Ok(other) => {
            return Err(format!(
                "{PAYLOAD_SIGNING_VAR}={other}: expected signed or unsigned-with-checksum"
            ));
        }
    };
    let mut builder = Client::builder()
        .endpoint(endpoint)
        .region("us-east-1")
        .static_credentials(access_key, secret_key, None)
        .proxy_from_env(false)
        .payload_signing(signing);
    if let Some(pem) = ca_pem {
        builder = builder.add_root_certificates_pem(pem);
    }
    match std::env::var(SYNC_FILES_VAR).as_deref() {
        Err(_) | Ok("on") => {}
        Ok("off") => {
            let mut options = TransferOptions::default();
            options.sync_files = false;
            builder = builder.transfer_options(options);
        }
        Ok(other) => return Err(format!("{SYNC_FILES_VAR}={other}: expected on or off")),
    }
    match std::env::var(REQUEST_HOOK_VAR).as_deref() {
        Err(_) => {}
        Ok("count") => builder = builder.request_hook(CountAttempts::default()),
        Ok(other) => return Err(format!("{REQUEST_HOOK_VAR}={other}: expected count")),
    }
    Ok(builder)
}

/// The variable that gives s3-wire's clients of a run a request hook (`count`: one that
/// counts attempts and bytes), to measure what a hook costs against none.
pub const REQUEST_HOOK_VAR: &str = "S3W_PERF_REQUEST_HOOK";

/// The cheapest useful hook: it counts attempts and the bytes they moved.
#[derive(Default)]
struct CountAttempts {
    attempts: AtomicUsize,
    bytes: AtomicUsize,
}

impl s3_wire_tokio::RequestHook for CountAttempts {
    fn on_attempt(&self, attempt: &s3_wire_tokio::AttemptRecord<'_>) {
        self.attempts.fetch_add(1, Ordering::Relaxed);
        let moved = attempt.bytes_sent + attempt.bytes_received;
        self.bytes.fetch_add(moved as usize, Ordering::Relaxed);
    }
}

/// Starts `null`, `null-tls` (its CA's PEM written into `scratch`), `local-s3` (its
/// data under `scratch`, which is on tmpfs) or `moto`.
pub fn start(name: &str, scratch: &Path) -> Result<Server, String> {
    match name {
        "null" => {
            let addr = null::NullServer::new().spawn().map_err(|e| e.to_string())?;
            Ok(Server {
                name: "null",
                endpoint: format!("http://{addr}"),
                access_key: NULL_KEY.into(),
                secret_key: NULL_SECRET.into(),
                ca_file: None,
                _local: None,
                _moto: None,
            })
        }
        "null-tls" => {
            let pki = crate::tls::generate(scratch)?;
            let addr = null::NullServer::new()
                .spawn_tls(pki.server)
                .map_err(|e| e.to_string())?;
            Ok(Server {
                name: "null-tls",
                endpoint: format!("https://{addr}"),
                access_key: NULL_KEY.into(),
                secret_key: NULL_SECRET.into(),
                ca_file: Some(pki.ca_file),
                _local: None,
                _moto: None,
            })
        }
        "local-s3" => {
            let mut options = local_s3::Options::default();
            let data = scratch.join("local-s3");
            let _ = std::fs::remove_dir_all(&data);
            options.data_dir = Some(data);
            let local = local_s3::LocalS3::start_with(options).map_err(|e| e.to_string())?;
            Ok(Server {
                name: "local-s3",
                endpoint: local.endpoint().to_string(),
                access_key: local.access_key().to_owned(),
                secret_key: local.secret_key().to_owned(),
                ca_file: None,
                _local: Some(local),
                _moto: None,
            })
        }
        "moto" => {
            let moto = crate::moto::Moto::start(&scratch.join("moto.log"))?;
            Ok(Server {
                name: "moto",
                endpoint: format!("http://127.0.0.1:{}", moto.port),
                access_key: "moto-access-key".into(),
                secret_key: "moto-secret-key".into(),
                ca_file: None,
                _local: None,
                _moto: Some(moto),
            })
        }
        other => Err(format!("unknown server {other}")),
    }
}

impl Server {
    /// The CA PEM a client of this server must trust, if it is behind TLS.
    pub fn ca_pem(&self) -> Result<Option<Vec<u8>>, String> {
        self.ca_file
            .as_ref()
            .map(|path| std::fs::read(path).map_err(|e| format!("{}: {e}", path.display())))
            .transpose()
    }
}

/// The bucket and the objects the GET, download and list workloads and the download
/// tasks read.
pub async fn setup(server: &Server, workloads: &[Workload]) -> Result<(), String> {
    let client = client(
        &server.endpoint,
        &server.access_key,
        &server.secret_key,
        server.ca_pem()?,
    )?;
    let bucket = BucketName::new(BUCKET).unwrap();
    client
        .create_bucket(CreateBucket::new(bucket.clone()))
        .await
        .map_err(|e| format!("create bucket: {e}"))?;
    let put = move |key: String, len: u64| {
        let client = client.clone();
        let bucket = bucket.clone();
        async move {
            client
                .upload(
                    bucket,
                    ObjectKey::new(key).unwrap(),
                    UploadSource::bytes(pattern(len)),
                )
                .await
                .map(|_| ())
                .map_err(|e| format!("setup: {e}"))
        }
    };
    // Many small objects: 32 PUTs at a time.
    let put_all = |objects: Vec<(String, u64)>| {
        let put = put.clone();
        async move {
            let objects = Arc::new(objects);
            let next = Arc::new(AtomicUsize::new(0));
            let mut tasks = tokio::task::JoinSet::new();
            for _ in 0..32 {
                let (next, put, objects) = (next.clone(), put.clone(), objects.clone());
                tasks.spawn(async move {
                    while let Some((key, len)) = objects.get(next.fetch_add(1, Ordering::Relaxed)) {
                        put(key.clone(), *len).await?;
                    }
                    Ok::<_, String>(())
                });
            }
            while let Some(done) = tasks.join_next().await {
                done.map_err(|e| e.to_string())??;
            }
            Ok::<_, String>(())
        }
    };
    let mut task_objects = std::collections::BTreeMap::new();
    for w in workloads {
        match w.kind {
            "get" => put(GET_KEY.into(), w.size).await?,
            "download" => put(DOWNLOAD_KEY.into(), w.size).await?,
            "list" => put_all((0..w.count).map(|i| (format!("list/{i:06}"), 16)).collect()).await?,
            "tasks" => {
                let set = w.task_set()?;
                let downloads = set
                    .tasks
                    .into_iter()
                    .filter(|t| t.action == Action::Download);
                for task in downloads {
                    let size = task_objects.entry(task.key.clone()).or_insert(task.size);
                    if *size != task.size {
                        return Err(format!(
                            "{}: {} bytes in one workload file, {size} in another",
                            task.key, task.size
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    // The download tasks' objects once, though several files read them (disk and memory).
    put_all(task_objects.into_iter().collect()).await?;
    Ok(())
}

/// The pattern the null server serves, so objects read the same from both servers. Up to
/// a MiB it is a slice of one block made once (the task workloads write and PUT 10,000s
/// of small objects).
pub fn pattern(len: u64) -> bytes::Bytes {
    static BLOCK: std::sync::OnceLock<bytes::Bytes> = std::sync::OnceLock::new();
    let make =
        |len: u64| -> bytes::Bytes { (0..len).map(null::pattern_byte).collect::<Vec<u8>>().into() };
    if len <= MIB {
        BLOCK.get_or_init(|| make(MIB)).slice(..len as usize)
    } else {
        make(len)
    }
}

/// A source file of `len` bytes: the pattern, one MiB block after another.
pub fn write_file(path: &Path, len: u64) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let block = pattern(MIB);
    let mut left = len;
    while left > 0 {
        let n = left.min(MIB) as usize;
        file.write_all(&block[..n])?;
        left -= n as u64;
    }
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use s3_wire_tokio::Body;
    use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
    use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
    use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
    use s3_wire_tokio::s3_ops::ops::put_object::PutObject;

    /// The null server is a correct-enough S3 for s3-wire: PUT, GET (whole and ranged),
    /// HEAD, managed multipart upload, parallel download, listing and DeleteObjects.
    #[test]
    fn null_server_round_trip_with_s3_wire() {
        let server = null::NullServer::new();
        let addr = server.clone().spawn().unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let client = client(&format!("http://{addr}"), NULL_KEY, NULL_SECRET, None).unwrap();
        runtime.block_on(round_trip(server, client));
    }

    /// The same over TLS (`null-tls`): s3-wire trusting the run's CA gets every answer; a
    /// client that does not trust it is refused before a request is sent.
    #[test]
    fn null_tls_server_round_trip_with_s3_wire() {
        let dir = std::env::temp_dir().join(format!("perf-null-tls-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pki = crate::tls::generate(&dir).unwrap();
        let server = null::NullServer::new();
        let addr = server.clone().spawn_tls(pki.server).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let endpoint = format!("https://{addr}");
        let untrusting = client(&endpoint, NULL_KEY, NULL_SECRET, None).unwrap();
        let refused = runtime.block_on(
            untrusting.create_bucket(CreateBucket::new(BucketName::new("bucket").unwrap())),
        );
        assert!(refused.is_err(), "{refused:?}");
        let ca = std::fs::read(&pki.ca_file).unwrap();
        assert!(ca.starts_with(b"-----BEGIN CERTIFICATE-----\n"));
        let trusting = client(&endpoint, NULL_KEY, NULL_SECRET, Some(ca)).unwrap();
        runtime.block_on(round_trip(server, trusting));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    async fn round_trip(server: null::NullServer, client: Client) {
        use s3_wire_tokio::s3_ops::ByteRange;
        use s3_wire_tokio::s3_ops::ops::delete_objects::DeleteObjects;
        let bucket = BucketName::new("bucket").unwrap();
        let key = |k: &str| ObjectKey::new(k).unwrap();
        client
            .create_bucket(CreateBucket::new(bucket.clone()))
            .await
            .unwrap();
        client
            .put_object(
                PutObject::new(bucket.clone(), key("one")),
                Body::from_bytes(vec![1u8; 100_000]),
            )
            .await
            .unwrap();
        assert_eq!(server.received(), 100_000);
        let got = client
            .get_object(GetObject::new(bucket.clone(), key("one")))
            .await
            .unwrap();
        assert_eq!(got.body.collect().await.unwrap(), pattern(100_000));
        let ranged = client
            .get_object(
                GetObject::new(bucket.clone(), key("one")).range(ByteRange::Closed {
                    first: 1000,
                    last: 1999,
                }),
            )
            .await
            .unwrap()
            .body
            .collect()
            .await
            .unwrap();
        assert_eq!(ranged, pattern(2000).slice(1000..));
        let head = client
            .head_object(HeadObject::new(bucket.clone(), key("one")))
            .await
            .unwrap();
        assert_eq!(head.content_length, Some(100_000));
        // 20 MiB in 5 MiB parts: a real multipart upload.
        let big = 20 * MIB;
        let stored = client
            .upload(
                bucket.clone(),
                key("big"),
                UploadSource::bytes(vec![7u8; big as usize]),
            )
            .part_size(5 * MIB)
            .concurrency(4)
            .await
            .unwrap();
        assert_eq!(stored.size, big);
        assert_eq!(server.received(), 100_000 + big);
        let dir = std::env::temp_dir().join(format!(
            "perf-null-test-{}-{:p}",
            std::process::id(),
            &client
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("big.bin");
        let got = client
            .download(bucket.clone(), key("big"), target.as_path())
            .part_size(5 * MIB)
            .concurrency(4)
            .await
            .unwrap();
        assert!(got.requests >= 4, "{} GETs", got.requests);
        assert_eq!(std::fs::read(&target).unwrap(), pattern(big).to_vec());
        std::fs::remove_dir_all(&dir).unwrap();
        for i in 0..1500 {
            client
                .put_object(
                    PutObject::new(bucket.clone(), key(&format!("list/{i:05}"))),
                    Body::from_bytes(vec![0u8; 3]),
                )
                .await
                .unwrap();
        }
        let mut pages =
            client.list_objects_v2_pages(ListObjectsV2::new(bucket.clone()).prefix("list/"));
        let (mut keys, mut count) = (Vec::new(), 0);
        while let Some(page) = pages.next_page().await {
            let page = page.unwrap();
            count += 1;
            keys.extend(page.result.contents.into_iter().map(|o| o.key));
        }
        assert_eq!((keys.len(), count), (1500, 2));
        assert_eq!(keys[1499], "list/01499");
        let deleted = client
            .delete_objects(DeleteObjects::new(bucket.clone(), [key("one"), key("big")]))
            .await
            .unwrap();
        assert_eq!(deleted.result.deleted.len(), 2);
        assert!(
            client
                .head_object(HeadObject::new(bucket.clone(), key("one")))
                .await
                .is_err()
        );
    }
}

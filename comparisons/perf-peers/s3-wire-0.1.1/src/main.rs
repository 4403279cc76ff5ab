//! The published s3-wire 0.1.1 as a `tools/perf` peer (see the `perf-peer` crate for the
//! protocol): one workload per process through 0.1.1's own API, `S3Client` on a validated
//! `S3Config` (one bucket per client, path-style, plain HTTP opted into).

use std::sync::Arc;

use perf_peer::tasks::{Action, Task, TaskData};
use perf_peer::{Args, BUCKET, Outcome, SmallOp, Stopwatch};
use s3_wire::{
    AddressingStyle, ByteStream, Credentials, Endpoint, GetObjectRequest, HeadObjectRequest,
    ListObjectsV2Request, ManagedMultipartUploadRequest, MultipartOptions, ObjectKey,
    PutObjectRequest, S3Client, S3Config, StaticCredentialsProvider,
};

/// Page bound handed to `list_objects_v2_all` (it requires one): far above the
/// harness's 10,000 keys at the 1,000-key pages 0.1.1 asks for.
const MAX_LIST_PAGES: usize = 1000;

fn main() {
    perf_peer::run(std::env::args().skip(1), workload);
}

fn client(args: &Args) -> Result<S3Client, String> {
    let credentials = Credentials::new(args.access_key.as_str(), args.secret_key.as_str(), None)
        .map_err(|e| e.to_string())?;
    let config = S3Config::builder()
        .endpoint(Endpoint::new(args.endpoint.as_str()).map_err(|e| e.to_string())?)
        .allow_http_for_local_testing()
        .region("us-east-1")
        .bucket(BUCKET)
        .addressing_style(AddressingStyle::Path)
        .credentials_provider(Arc::new(StaticCredentialsProvider::new(credentials)))
        .build()
        .map_err(|e| e.to_string())?;
    S3Client::new(config).map_err(|e| e.to_string())
}

/// The part size of 0.1.1's `MultipartOptions::default()`: a task below it is one PUT.
const DEFAULT_PART_SIZE: u64 = 8 << 20;

async fn workload(args: Args) -> Result<Outcome, String> {
    if !args.ca_file.as_os_str().is_empty() {
        return Ok(Outcome::Unsupported(
            "s3-wire 0.1.1 trusts only the compiled-in WebPKI roots (hyper-rustls \
             with_webpki_roots) and has no API to add a CA, so it cannot reach a server \
             whose certificate a private CA issued"
                .into(),
        ));
    }
    if args.kind == "construct" {
        return perf_peer::construct(|| client(&args));
    }
    let client = client(&args)?;
    let key = || ObjectKey::new(args.key.as_str()).map_err(|e| e.to_string());
    let size = args.size;
    match args.kind.as_str() {
        "put" => {
            let data = perf_peer::put_payload(&args);
            let request = PutObjectRequest::new(key()?, ByteStream::from_bytes(data));
            let watch = Stopwatch::start();
            client
                .put_object(request)
                .await
                .map_err(|e| e.to_string())?;
            Ok(watch.moved(size))
        }
        "get" => {
            let watch = Stopwatch::start();
            let got = get_to_sink(&client, key()?).await?;
            perf_peer::expect("bytes the GET returned", got, size)?;
            Ok(watch.moved(got))
        }
        "upload" => {
            let mut request = ManagedMultipartUploadRequest::from_path(key()?, &args.file);
            if args.part_size > 0 {
                let options = MultipartOptions::new(args.part_size, args.concurrency)
                    .map_err(|e| e.to_string())?;
                request = request.with_options(options);
            }
            let watch = Stopwatch::start();
            client
                .multipart_upload(request)
                .await
                .map_err(|e| e.to_string())?;
            let outcome = watch.moved(size);
            // 0.1.1's completion output carries no size: check it with a HEAD, untimed.
            let stored = client
                .head_object(HeadObjectRequest::new(key()?))
                .await
                .map_err(|e| e.to_string())?
                .content_length;
            perf_peer::expect("bytes stored", stored, size)?;
            Ok(outcome)
        }
        "download" => Ok(Outcome::Unsupported(
            "s3-wire 0.1.1 has no parallel or ranged download to a file: its only download is \
             one streamed GetObject (ResponseStream::write_to, as in its \
             examples/download_file.rs), which the get workload already measures"
                .into(),
        )),
        "small" => {
            perf_peer::small_objects(&args, move |op, key, payload| {
                let client = client.clone();
                async move { small_request(&client, op, key, payload).await }
            })
            .await
        }
        "list" => {
            let request = ListObjectsV2Request {
                prefix: Some("list/".to_owned()),
                ..ListObjectsV2Request::default()
            };
            let watch = Stopwatch::start();
            let pages = client
                .list_objects_v2_all(request, MAX_LIST_PAGES)
                .await
                .map_err(|e| e.to_string())?;
            let keys: usize = pages.iter().map(|page| page.objects.len()).sum();
            perf_peer::expect("keys listed", keys, args.count)?;
            Ok(watch.moved(0))
        }
        "tasks" => {
            perf_peer::tasks::run(&args, move |task, data| {
                let client = client.clone();
                async move { transfer_task(&client, task, data).await }
            })
            .await
        }
        other => Err(format!("unknown workload {other}")),
    }
}

/// One task of a `tasks` workload as a 0.1.1 user moves objects of any size: below its
/// default part size one `put_object` (a file read into memory first), else its managed
/// multipart upload (`from_path` or `from_bytes`); downloads as one streamed GET into the
/// file or a sink (0.1.1 has no parallel download).
async fn transfer_task(client: &S3Client, task: Task, data: TaskData) -> Result<u64, String> {
    let key = ObjectKey::new(task.key.as_str()).map_err(|e| e.to_string())?;
    match (task.action, data) {
        (Action::Upload, data) => {
            let request = match data {
                TaskData::File(path) if task.size < DEFAULT_PART_SIZE => {
                    let bytes = tokio::fs::read(&path)
                        .await
                        .map_err(|e| format!("{}: {e}", path.display()))?;
                    return put(client, key, task.size, ByteStream::from_bytes(bytes)).await;
                }
                TaskData::Memory(bytes) if task.size < DEFAULT_PART_SIZE => {
                    return put(client, key, task.size, ByteStream::from_bytes(bytes)).await;
                }
                TaskData::File(path) => ManagedMultipartUploadRequest::from_path(key, &path),
                TaskData::Memory(bytes) => ManagedMultipartUploadRequest::from_bytes(key, bytes),
            };
            client
                .multipart_upload(request)
                .await
                .map_err(|e| e.to_string())?;
            Ok(task.size)
        }
        (Action::Download, TaskData::File(path)) => {
            let mut file = tokio::fs::File::create(&path)
                .await
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let got = client
                .get_object(GetObjectRequest::new(key))
                .await
                .map_err(|e| e.to_string())?
                .body
                .write_to(&mut file)
                .await
                .map_err(|e| e.to_string())?;
            tokio::io::AsyncWriteExt::flush(&mut file)
                .await
                .map_err(|e| e.to_string())?;
            Ok(got)
        }
        (Action::Download, TaskData::Memory(_)) => get_to_sink(client, key).await,
    }
}

/// One `put_object` of `body`, which holds `len` bytes; `len`.
async fn put(client: &S3Client, key: ObjectKey, len: u64, body: ByteStream) -> Result<u64, String> {
    client
        .put_object(PutObjectRequest::new(key, body))
        .await
        .map_err(|e| e.to_string())?;
    Ok(len)
}

/// GetObject streamed into a sink (0.1.1 checks length and checksum as it streams);
/// the byte count.
async fn get_to_sink(client: &S3Client, key: ObjectKey) -> Result<u64, String> {
    client
        .get_object(GetObjectRequest::new(key))
        .await
        .map_err(|e| e.to_string())?
        .body
        .write_to(&mut tokio::io::sink())
        .await
        .map_err(|e| e.to_string())
}

async fn small_request(
    client: &S3Client,
    op: SmallOp,
    key: String,
    payload: impl Into<ByteStream> + AsRef<[u8]>,
) -> Result<(), String> {
    let expected = payload.as_ref().len() as u64;
    let key = ObjectKey::new(key).map_err(|e| e.to_string())?;
    match op {
        SmallOp::Put => {
            client
                .put_object(PutObjectRequest::new(key, payload.into()))
                .await
                .map_err(|e| e.to_string())?;
        }
        SmallOp::Get => {
            let got = get_to_sink(client, key).await?;
            perf_peer::expect("bytes a small GET returned", got, expected)?;
        }
        SmallOp::Head => {
            client
                .head_object(HeadObjectRequest::new(key))
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

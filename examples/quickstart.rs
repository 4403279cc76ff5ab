//! s3-wire quickstart: the common operations end to end, with timings.
//!
//! ```text
//! cargo run --release --example quickstart
//! ```
//!
//! With no endpoint configured (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL` or a
//! profile's `endpoint_url`) it starts the embedded `local-s3` server on
//! 127.0.0.1 and uses that; otherwise it uses the configured endpoint with the
//! credentials and region of the standard AWS environment. It creates a
//! bucket, uploads a small object and reads it back (its stored CRC32 checked),
//! uploads a 64 MiB file as a managed multipart
//! upload with progress, downloads it in parallel and verifies its SHA-256,
//! streams it back once more, lists, presigns a GET and fetches it with plain
//! reqwest, copies, and deletes everything it created.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use sha2::{Digest, Sha256};

use s3_wire::credentials::{ProcessEnv, SharedConfig};
use s3_wire::ops::{
    CopySource, CreateBucket, DeleteBucket, DeleteObject, GetObject, HeadObject, ListObjectsV2,
    PutObject,
};
use s3_wire::{Client, Progress, UploadSource, bucket, key};

const LARGE_FILE_SIZE: u64 = 64 * 1024 * 1024;

type AnyError = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), AnyError> {
    let configured_endpoint = SharedConfig::load(&ProcessEnv)?.endpoint_url()?;
    // The embedded server runs on its own threads; it is started before the
    // example's runtime and stopped when dropped at the end of `main`.
    let local_server = match &configured_endpoint {
        Some(endpoint) => {
            println!("Using the configured endpoint {endpoint}");
            None
        }
        None => {
            let server = local_s3::LocalS3::start()?;
            println!(
                "No endpoint configured (AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL): started the \
                 embedded local-s3 server at {}",
                server.endpoint()
            );
            Some(server)
        }
    };
    let client = match &local_server {
        None => Client::from_env()?,
        Some(server) => Client::builder()
            .endpoint(server.endpoint())
            .region(server.region())
            .static_credentials(server.access_key(), server.secret_key(), None)
            .build()?,
    };
    let embedded = local_server.is_some();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(client, embedded))
}

/// `embedded`: the endpoint is the local-s3 server started on this machine's loopback.
async fn run(client: Client, embedded: bool) -> Result<(), AnyError> {
    let unique = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)?
        .as_millis();
    let bucket_name = format!("s3-wire-quickstart-{unique}");
    let bucket = bucket(&bucket_name)?;
    let small_key = key("hello/world.txt")?;
    let large_key = key("large/64MiB.bin")?;
    let copy_key = key("copies/world.txt")?;

    step("create bucket", None, async {
        client
            .create_bucket(CreateBucket::new(bucket.clone()))
            .await
    })
    .await?;

    let greeting = "Hello from s3-wire!\n";
    step("put small object", Some(greeting.len() as u64), async {
        client
            .put_object(
                PutObject::new(bucket.clone(), small_key.clone()).content_type("text/plain"),
                greeting,
            )
            .await
    })
    .await?;

    // Uploads carry a CRC32 by default, and downloads check the stored checksum.
    let (text, verification) = step("get small object", Some(greeting.len() as u64), async {
        let object = client
            .get_object(GetObject::new(bucket.clone(), small_key.clone()))
            .await?;
        let verification = object.body.verification().clone();
        Ok::<_, AnyError>((object.body.collect().await?, verification))
    })
    .await?;
    println!("    {:?}, {verification}", String::from_utf8_lossy(&text));

    let (path, expected_sha256) = step("write 64 MiB local file", Some(LARGE_FILE_SIZE), async {
        write_random_file(LARGE_FILE_SIZE)
    })
    .await?;
    let _cleanup = RemoveOnDrop(path.clone());

    // Notes when each quarter of the upload was acknowledged by the store.
    let started = Instant::now();
    let milestones = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = milestones.clone();
    let stored = step(
        "upload 64 MiB file (multipart)",
        Some(LARGE_FILE_SIZE),
        async {
            client
                .upload(bucket.clone(), large_key.clone(), UploadSource::file(&path))
                .on_progress(move |progress: Progress| {
                    let mut seen = record.lock().unwrap_or_else(|e| e.into_inner());
                    let quarter = progress.committed * 4 / LARGE_FILE_SIZE;
                    if quarter as usize > seen.len() {
                        seen.push((started.elapsed(), progress));
                    }
                })
                .await
        },
    )
    .await?;
    for (at, progress) in milestones.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        println!(
            "    {:>4.0} ms: {:>2} MiB acknowledged, {:>2} MiB in flight",
            at.as_secs_f64() * 1000.0,
            progress.committed >> 20,
            progress.in_flight >> 20
        );
    }
    println!(
        "    {} parts; {}",
        stored.parts.unwrap_or(1),
        stored.verification
    );

    let download_path = path.with_extension("download");
    let _cleanup_download = RemoveOnDrop(download_path.clone());
    let downloaded = step(
        "download 64 MiB in parallel",
        Some(LARGE_FILE_SIZE),
        async {
            client
                .download(bucket.clone(), large_key.clone(), download_path.as_path())
                .await
        },
    )
    .await?;
    let downloaded_sha256: [u8; 32] = Sha256::digest(std::fs::read(&download_path)?).into();
    if downloaded_sha256 != expected_sha256 {
        return Err("SHA-256 of the downloaded file differs from the uploaded file".into());
    }
    println!(
        "    {} ranged GETs; SHA-256 of the file matches the upload ({}); checksum {}",
        downloaded.requests,
        hex(&downloaded_sha256),
        downloaded.verification
    );

    let head = step("head 64 MiB object", None, async {
        client
            .head_object(HeadObject::new(bucket.clone(), large_key.clone()))
            .await
    })
    .await?;
    println!(
        "    content-length {:?}, etag {:?}",
        head.content_length, head.etag
    );

    let streamed_sha256 = step(
        "stream 64 MiB back + SHA-256",
        Some(LARGE_FILE_SIZE),
        async {
            let mut object = client
                .get_object(GetObject::new(bucket.clone(), large_key.clone()))
                .await?;
            let mut hasher = Sha256::new();
            while let Some(chunk) = object.body.next_chunk().await {
                hasher.update(&chunk?);
            }
            Ok::<_, AnyError>(<[u8; 32]>::from(hasher.finalize()))
        },
    )
    .await?;
    if streamed_sha256 != expected_sha256 {
        return Err("SHA-256 of the downloaded object differs from the uploaded file".into());
    }
    println!("    SHA-256 verified: {}", hex(&streamed_sha256));

    let listing = step("list objects", None, async {
        client
            .list_objects_v2(ListObjectsV2::new(bucket.clone()))
            .await
    })
    .await?;
    for object in &listing.result.contents {
        println!("    {:>10} bytes  {}", object.size, object.key);
    }

    let presigned = client
        .presign(
            &GetObject::new(bucket.clone(), small_key.clone()),
            Duration::from_secs(300),
        )
        .await?;
    let fetched = step("fetch presigned GET with plain reqwest", None, async {
        // Plain reqwest, as any HTTP client holding the URL would use it; like the
        // s3-wire client, it leaves the embedded (loopback) server out of any proxy.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = if embedded {
            reqwest::Client::builder().no_proxy().build()?
        } else {
            reqwest::Client::new()
        };
        let response = http.get(presigned.url()).send().await?.error_for_status()?;
        Ok::<_, AnyError>(response.text().await?)
    })
    .await?;
    if fetched != greeting {
        return Err(format!("presigned GET returned {fetched:?}").into());
    }
    println!("    got {fetched:?}");

    step("copy object", None, async {
        client
            .copy(
                CopySource::new(bucket.clone(), small_key.clone()),
                bucket.clone(),
                copy_key.clone(),
            )
            .await
    })
    .await?;

    step("delete objects and bucket", None, async {
        for key in [&small_key, &large_key, &copy_key] {
            client
                .delete_object(DeleteObject::new(bucket.clone(), key.clone()))
                .await?;
        }
        client
            .delete_bucket(DeleteBucket::new(bucket.clone()))
            .await
    })
    .await?;

    println!("Done.");
    Ok(())
}

/// Runs one step and prints its duration (and throughput for `bytes`).
async fn step<T, E>(
    name: &str,
    bytes: Option<u64>,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, AnyError>
where
    E: Into<AnyError>,
{
    print!("{name:.<44} ");
    let _ = std::io::stdout().flush();
    let started = Instant::now();
    let result = work.await.map_err(Into::into);
    let elapsed = started.elapsed();
    match (&result, bytes) {
        (Ok(_), Some(bytes)) => println!(
            "{:>9.1} ms  {}",
            elapsed.as_secs_f64() * 1000.0,
            throughput(bytes, elapsed)
        ),
        (Ok(_), None) => println!("{:>9.1} ms", elapsed.as_secs_f64() * 1000.0),
        (Err(error), _) => println!("FAILED: {error}"),
    }
    result
}

fn throughput(bytes: u64, elapsed: Duration) -> String {
    let per_second = bytes as f64 / elapsed.as_secs_f64().max(1e-9);
    if per_second >= 1024.0 * 1024.0 {
        format!("{:>8.1} MiB/s", per_second / (1024.0 * 1024.0))
    } else {
        format!("{:>8.1} KiB/s", per_second / 1024.0)
    }
}

/// Writes `size` pseudo-random bytes to a temporary file; returns its path and
/// SHA-256.
fn write_random_file(size: u64) -> Result<(PathBuf, [u8; 32]), AnyError> {
    let path = std::env::temp_dir().join(format!(
        "s3-wire-quickstart-{}-{}.bin",
        std::process::id(),
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)?
            .as_nanos()
    ));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path)?);
    let mut hasher = Sha256::new();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut block = vec![0u8; 1024 * 1024];
    let mut written = 0;
    while written < size {
        for word in block.chunks_exact_mut(8) {
            // xorshift64: fast incompressible filler.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            word.copy_from_slice(&state.to_le_bytes());
        }
        let take = (size - written).min(block.len() as u64) as usize;
        file.write_all(&block[..take])?;
        hasher.update(&block[..take]);
        written += take as u64;
    }
    file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok((path, hasher.finalize().into()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

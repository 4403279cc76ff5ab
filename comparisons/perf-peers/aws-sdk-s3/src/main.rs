//! The perf harness's peer for the official AWS SDK for Rust: `aws-sdk-s3` for single
//! requests and listing, AWS's transfer manager (`aws-sdk-s3-transfer-manager`) for
//! `upload` and `download`. One workload per process; see the `perf-peer` crate for the
//! protocol and README.md beside this file for the settings.

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::error::DisplayErrorContext;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3_transfer_manager::io::InputStream;
use aws_sdk_s3_transfer_manager::types::{ConcurrencyMode, PartSize};
use aws_smithy_http_client::tls;
use perf_peer::tasks::{Action, Task, TaskData};
use perf_peer::{Args, BUCKET, Outcome, SmallOp, Stopwatch};

fn main() {
    perf_peer::run(std::env::args().skip(1), workload);
}

/// An error with its whole source chain (an `SdkError` alone says only "service error").
fn chain(err: impl std::error::Error) -> String {
    DisplayErrorContext(err).to_string()
}

/// The S3 client's configuration: the harness's endpoint, path-style, static credentials,
/// `us-east-1`, the latest behavior version and the SDK's defaults for everything else;
/// for an HTTPS endpoint with `--ca-file`, the SDK's own HTTPS client (rustls with
/// aws-lc, as its default) trusting that CA besides the platform's roots.
fn config(args: &Args) -> Result<aws_sdk_s3::config::Builder, String> {
    let mut config = aws_sdk_s3::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(args.endpoint.as_str())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new(
            args.access_key.as_str(),
            args.secret_key.as_str(),
            None,
            None,
            "perf",
        ))
        .force_path_style(true);
    if let Some(pem) = args.ca_pem()? {
        let trust = tls::TrustStore::default().with_pem_certificate(pem);
        let context = tls::TlsContext::builder()
            .with_trust_store(trust)
            .build()
            .map_err(chain)?;
        let http = aws_smithy_http_client::Builder::new()
            .tls_provider(tls::Provider::Rustls(
                tls::rustls_provider::CryptoMode::AwsLc,
            ))
            .tls_context(context)
            .build_https();
        config = config.http_client(http);
    }
    Ok(config)
}

fn client(args: &Args) -> Result<aws_sdk_s3::Client, String> {
    Ok(aws_sdk_s3::Client::from_conf(config(args)?.build()))
}

/// The transfer manager's own download part size for `PartSize::Auto` (5 MiB).
const TM_AUTO_DOWNLOAD_PART_SIZE: u64 = 5 << 20;

/// The transfer manager over the same S3 configuration; `part_size > 0` pins the part
/// size and the parts in flight, otherwise everything is the manager's default.
fn transfer_manager(
    args: &Args,
    part_size: u64,
) -> Result<aws_sdk_s3_transfer_manager::Client, String> {
    // Over TLS the manager must use the S3 client's HTTPS client, the one that trusts the
    // run's CA: its own managed per-thread client (the default) takes no trust store.
    let s3_config = aws_sdk_s3_transfer_manager::S3ClientConfig::new(config(args)?)
        .enable_runtime_http(args.ca_pem()?.is_none());
    let mut tm = aws_sdk_s3_transfer_manager::Config::builder().s3_config(s3_config);
    if part_size > 0 {
        tm = tm.part_size(PartSize::Target(part_size));
    }
    if args.concurrency > 0 {
        tm = tm.concurrency(ConcurrencyMode::Explicit(args.concurrency));
    }
    Ok(aws_sdk_s3_transfer_manager::Client::new(tm.build()))
}

async fn workload(args: Args) -> Result<Outcome, String> {
    let size = args.size;
    match args.kind.as_str() {
        "construct" => perf_peer::construct(|| client(&args)),
        "put" => {
            let client = client(&args)?;
            let data = perf_peer::put_payload(&args);
            let watch = Stopwatch::start();
            put(&client, &args.key, data).await?;
            Ok(watch.moved(size))
        }
        "get" => {
            let client = client(&args)?;
            let watch = Stopwatch::start();
            let mut body = client
                .get_object()
                .bucket(BUCKET)
                .key(&args.key)
                .send()
                .await
                .map_err(chain)?
                .body;
            let mut got = 0u64;
            while let Some(chunk) = body.next().await {
                got += chunk.map_err(chain)?.len() as u64;
            }
            perf_peer::expect("bytes the GET returned", got, size)?;
            Ok(watch.moved(got))
        }
        "upload" => {
            let tm = transfer_manager(&args, args.part_size)?;
            let watch = Stopwatch::start();
            let body = InputStream::from_path(&args.file).map_err(chain)?;
            upload(&tm, &args.key, body).await?;
            let outcome = watch.moved(size);
            // The check is outside the timed operation: a HEAD of what was stored.
            let stored = head(&client(&args)?, &args.key).await?;
            perf_peer::expect("bytes stored", stored, size as i64)?;
            Ok(outcome)
        }
        "download" => {
            // The manager's default part size, pinned: with `PartSize::Auto` and response
            // checksum validation on (the default) it re-discovers a multipart object
            // with `GetObject?partNumber=1` to align its ranges to the stored parts, and
            // local-s3 (s3s-fs) ignores `partNumber`: it answers 200 with the whole
            // object and no Content-Range, which the manager rejects ("nonempty
            // partNumber response missing content-range"). See README.md.
            let tm = transfer_manager(&args, TM_AUTO_DOWNLOAD_PART_SIZE)?;
            let watch = Stopwatch::start();
            let done = tm
                .download()
                .bucket(BUCKET)
                .key(&args.key)
                .write_to_path(&args.file)
                .await
                .map_err(chain)?
                .join()
                .await
                .map_err(chain)?;
            let outcome = watch.moved(size);
            let reported = done.object_meta.total_object_size();
            let written = std::fs::metadata(&args.file)
                .map_err(|e| format!("{}: {e}", args.file.display()))?
                .len();
            perf_peer::expect("object size the download reported", reported, size)?;
            perf_peer::expect("bytes the download wrote", written, size)?;
            Ok(outcome)
        }
        "small" => {
            let client = client(&args)?;
            perf_peer::small_objects(&args, move |op, key, payload| {
                let client = client.clone();
                async move {
                    match op {
                        SmallOp::Put => put(&client, &key, payload).await?,
                        SmallOp::Get => {
                            let got = client
                                .get_object()
                                .bucket(BUCKET)
                                .key(&key)
                                .send()
                                .await
                                .map_err(chain)?
                                .body
                                .collect()
                                .await
                                .map_err(chain)?
                                .into_bytes();
                            perf_peer::expect(
                                "bytes a small GET returned",
                                got.len(),
                                payload.len(),
                            )?;
                        }
                        SmallOp::Head => {
                            head(&client, &key).await?;
                        }
                    }
                    Ok(())
                }
            })
            .await
        }
        "list" => {
            let client = client(&args)?;
            let watch = Stopwatch::start();
            let mut pages = client
                .list_objects_v2()
                .bucket(BUCKET)
                .prefix("list/")
                .into_paginator()
                .send();
            let mut keys = 0usize;
            while let Some(page) = pages.next().await {
                keys += page.map_err(chain)?.contents().len();
            }
            perf_peer::expect("keys listed", keys, args.count)?;
            Ok(watch.moved(0))
        }
        "tasks" => {
            // The download part size pinned for the reason given in `download`.
            let tm = transfer_manager(&args, TM_AUTO_DOWNLOAD_PART_SIZE)?;
            perf_peer::tasks::run(&args, move |task, data| {
                let tm = tm.clone();
                async move { transfer_task(&tm, task, data).await }
            })
            .await
        }
        other => Err(format!("unknown workload {other}")),
    }
}

/// One managed upload of `body` to `key` through the transfer manager, to its end.
async fn upload(
    tm: &aws_sdk_s3_transfer_manager::Client,
    key: &str,
    body: InputStream,
) -> Result<(), String> {
    tm.upload()
        .bucket(BUCKET)
        .key(key)
        .body(body)
        .initiate()
        .map_err(chain)?
        .join()
        .await
        .map_err(chain)?;
    Ok(())
}

/// One task of a `tasks` workload through the transfer manager: uploads from the file
/// (`InputStream::from_path`) or the bytes, downloads to the file (`write_to_path`) or
/// through the handle's body, whose chunks are counted and dropped.
async fn transfer_task(
    tm: &aws_sdk_s3_transfer_manager::Client,
    task: Task,
    data: TaskData,
) -> Result<u64, String> {
    match (task.action, data) {
        (Action::Upload, data) => {
            let body = match data {
                TaskData::File(path) => InputStream::from_path(&path).map_err(chain)?,
                TaskData::Memory(bytes) => InputStream::from(bytes),
            };
            upload(tm, &task.key, body).await?;
            Ok(task.size)
        }
        (Action::Download, TaskData::File(path)) => {
            tm.download()
                .bucket(BUCKET)
                .key(&task.key)
                .write_to_path(&path)
                .await
                .map_err(chain)?
                .join()
                .await
                .map_err(chain)?;
            std::fs::metadata(&path)
                .map(|m| m.len())
                .map_err(|e| format!("{}: {e}", path.display()))
        }
        (Action::Download, TaskData::Memory(_)) => {
            let mut handle = tm
                .download()
                .bucket(BUCKET)
                .key(&task.key)
                .initiate()
                .map_err(chain)?;
            let mut got = 0u64;
            while let Some(chunk) = handle.body_mut().next().await {
                got += chunk.map_err(chain)?.data.len() as u64;
            }
            handle.join().await.map_err(chain)?;
            Ok(got)
        }
    }
}

/// PutObject of an in-memory body (the `put` workload and the small-object PUTs).
async fn put(
    client: &aws_sdk_s3::Client,
    key: &str,
    body: impl Into<ByteStream>,
) -> Result<(), String> {
    client
        .put_object()
        .bucket(BUCKET)
        .key(key)
        .body(body.into())
        .send()
        .await
        .map_err(chain)?;
    Ok(())
}

/// HeadObject; the stored length (-1 when the answer has none).
async fn head(client: &aws_sdk_s3::Client, key: &str) -> Result<i64, String> {
    let head = client
        .head_object()
        .bucket(BUCKET)
        .key(key)
        .send()
        .await
        .map_err(chain)?;
    Ok(head.content_length().unwrap_or(-1))
}

//! `object_store`'s `AmazonS3` as a `tools/perf` peer (see the `perf-peer` crate for the
//! protocol), one workload per process, written the way a user of `object_store` would.

use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::buffered::BufWriter;
use object_store::path::Path;
use object_store::{
    Certificate, ClientOptions, ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart,
};
use perf_peer::tasks::{Action, Task, TaskData};
use perf_peer::{Args, BUCKET, Outcome, SmallOp, Stopwatch};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `download`: bytes per ranged GET.
const RANGE_SIZE: u64 = 8 << 20;
/// `download`: ranged GETs in flight at once (so at most 32 MiB of ranges held).
const RANGES_IN_FLIGHT: usize = 4;
/// `upload` with object_store's defaults: the read buffer between the file and `BufWriter`.
const FILE_BUFFER: usize = 1 << 20;

fn main() {
    perf_peer::run(std::env::args().skip(1), workload);
}

fn builder(args: &Args) -> Result<AmazonS3Builder, String> {
    // The CA of an HTTPS endpoint, trusted besides the platform's roots. Client options
    // first: `with_allow_http` below writes into them.
    let mut options = ClientOptions::new();
    if let Some(pem) = args.ca_pem()? {
        options = options.with_root_certificate(Certificate::from_pem(&pem).map_err(err)?);
    }
    // `new()`, not `from_env()`: nothing is read from AWS_* variables, and with static
    // credentials and a region there is no IMDS or region lookup.
    Ok(AmazonS3Builder::new()
        .with_client_options(options)
        .with_endpoint(args.endpoint.as_str())
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_bucket_name(BUCKET)
        .with_access_key_id(args.access_key.as_str())
        .with_secret_access_key(args.secret_key.as_str())
        .with_virtual_hosted_style_request(false))
}

fn store(args: &Args) -> Result<AmazonS3, String> {
    builder(args)?.build().map_err(|e| e.to_string())
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

async fn workload(args: Args) -> Result<Outcome, String> {
    if args.kind == "construct" {
        return perf_peer::construct(|| store(&args));
    }
    let store = Arc::new(store(&args)?);
    let path = Path::from(args.key.as_str());
    let size = args.size;
    match args.kind.as_str() {
        "put" => {
            let data = PutPayload::from(perf_peer::put_payload(&args));
            let watch = Stopwatch::start();
            store.put(&path, data).await.map_err(err)?;
            Ok(watch.moved(size))
        }
        "get" => {
            let watch = Stopwatch::start();
            let mut stream = store.get(&path).await.map_err(err)?.into_stream();
            let mut got = 0u64;
            while let Some(chunk) = stream.next().await {
                got += chunk.map_err(err)?.len() as u64;
            }
            perf_peer::expect("bytes the GET returned", got, size)?;
            Ok(watch.moved(got))
        }
        "upload" => {
            let watch = Stopwatch::start();
            if args.part_size > 0 {
                upload_parts(&store, &path, &args).await?;
            } else {
                upload_defaults(store.clone(), &path, &args.file).await?;
            }
            let outcome = watch.moved(size);
            // The check is outside the timed operation, as in the other peers.
            let stored = store.head(&path).await.map_err(err)?.size;
            perf_peer::expect("bytes stored", stored, size)?;
            Ok(outcome)
        }
        "download" => {
            let watch = Stopwatch::start();
            download(&store, &path, &args.file, args.size).await?;
            let on_disk = std::fs::metadata(&args.file).map_err(err)?.len();
            perf_peer::expect("bytes the download wrote", on_disk, size)?;
            Ok(watch.moved(size))
        }
        "small" => {
            perf_peer::small_objects(&args, move |op, key, payload| {
                let store = store.clone();
                async move { small_request(&store, op, key, payload).await }
            })
            .await
        }
        "list" => {
            let watch = Stopwatch::start();
            let prefix = Path::from("list");
            let keys = store
                .list(Some(&prefix))
                .try_fold(0usize, |n, _| async move { Ok(n + 1) })
                .await
                .map_err(err)?;
            perf_peer::expect("keys listed", keys, args.count)?;
            Ok(watch.moved(0))
        }
        "tasks" => {
            perf_peer::tasks::run(&args, move |task, data| {
                let store = store.clone();
                async move { transfer_task(store, task, data).await }
            })
            .await
        }
        other => Err(format!("unknown workload {other}")),
    }
}

/// One task of a `tasks` workload as an object_store user moves objects of any size:
/// uploads through `buffered::BufWriter` (one PUT below 10 MiB, else a multipart upload)
/// from the file or the bytes; downloads as this peer's ranged download to the file, or
/// one streamed GET whose bytes are counted and dropped.
async fn transfer_task(store: Arc<AmazonS3>, task: Task, data: TaskData) -> Result<u64, String> {
    let path = Path::from(task.key.as_str());
    match (task.action, data) {
        (Action::Upload, TaskData::File(file)) => {
            upload_defaults(store, &path, &file).await?;
            Ok(task.size)
        }
        (Action::Upload, TaskData::Memory(bytes)) => {
            let len = bytes.len() as u64;
            let mut writer = BufWriter::new(store, path);
            writer.put(bytes).await.map_err(err)?;
            writer.shutdown().await.map_err(err)?;
            Ok(len)
        }
        (Action::Download, TaskData::File(file)) => {
            download(&store, &path, &file, task.size).await?;
            Ok(std::fs::metadata(&file).map_err(err)?.len())
        }
        (Action::Download, TaskData::Memory(_)) => {
            let mut stream = store.get(&path).await.map_err(err)?.into_stream();
            let mut got = 0u64;
            while let Some(chunk) = stream.next().await {
                got += chunk.map_err(err)?.len() as u64;
            }
            Ok(got)
        }
    }
}

/// `put_multipart` + `WriteMultipart` in `part_size` chunks read from the file, at most
/// `concurrency` parts in flight.
async fn upload_parts(store: &AmazonS3, path: &Path, args: &Args) -> Result<(), String> {
    let part_size = args.part_size as usize;
    let mut file = tokio::fs::File::open(&args.file).await.map_err(err)?;
    let upload = store.put_multipart(path).await.map_err(err)?;
    let mut writer = WriteMultipart::new_with_chunk_size(upload, part_size);
    loop {
        writer
            .wait_for_capacity(args.concurrency.max(1))
            .await
            .map_err(err)?;
        let mut chunk = BytesMut::with_capacity(part_size);
        while chunk.len() < part_size {
            if file.read_buf(&mut chunk).await.map_err(err)? == 0 {
                break;
            }
        }
        let last = chunk.len() < part_size;
        if !chunk.is_empty() {
            writer.put(chunk.freeze());
        }
        if last {
            break;
        }
    }
    writer.finish().await.map_err(err)?;
    Ok(())
}

/// object_store's default path for a stream of unknown length: `buffered::BufWriter` with
/// its defaults (one PUT below 10 MiB, else 10 MiB parts, 8 in flight), fed from the file.
async fn upload_defaults(
    store: Arc<dyn ObjectStore>,
    path: &Path,
    source: &std::path::Path,
) -> Result<(), String> {
    let file = tokio::fs::File::open(source).await.map_err(err)?;
    let mut reader = tokio::io::BufReader::with_capacity(FILE_BUFFER, file);
    let mut writer = BufWriter::new(store, path.clone());
    tokio::io::copy_buf(&mut reader, &mut writer)
        .await
        .map_err(err)?;
    writer.shutdown().await.map_err(err)?;
    Ok(())
}

/// `get_range` over `RANGE_SIZE` ranges, `RANGES_IN_FLIGHT` at once, each written at its
/// offset as it arrives.
async fn download(
    store: &AmazonS3,
    path: &Path,
    target: &std::path::Path,
    size: u64,
) -> Result<(), String> {
    let file = std::fs::File::create(target).map_err(err)?;
    file.set_len(size).map_err(err)?;
    let file = Arc::new(file);
    let ranges = (0..size)
        .step_by(RANGE_SIZE as usize)
        .map(|start| start..(start + RANGE_SIZE).min(size));
    futures::stream::iter(ranges)
        .map(|range: Range<u64>| {
            let file = file.clone();
            async move {
                let bytes = store.get_range(path, range.clone()).await.map_err(err)?;
                perf_peer::expect(
                    "bytes of a range",
                    bytes.len() as u64,
                    range.end - range.start,
                )?;
                tokio::task::spawn_blocking(move || file.write_all_at(&bytes, range.start))
                    .await
                    .map_err(err)?
                    .map_err(err)
            }
        })
        .buffer_unordered(RANGES_IN_FLIGHT)
        .try_collect::<()>()
        .await
}

async fn small_request(
    store: &AmazonS3,
    op: SmallOp,
    key: String,
    payload: Bytes,
) -> Result<(), String> {
    let path = Path::from(key);
    match op {
        SmallOp::Put => {
            store
                .put(&path, PutPayload::from(payload))
                .await
                .map_err(err)?;
        }
        SmallOp::Get => {
            let got = store
                .get(&path)
                .await
                .map_err(err)?
                .bytes()
                .await
                .map_err(err)?;
            perf_peer::expect("bytes a small GET returned", got.len(), payload.len())?;
        }
        SmallOp::Head => {
            store.head(&path).await.map_err(err)?;
        }
    }
    Ok(())
}

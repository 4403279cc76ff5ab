//! `perf child`: s3-wire as a peer (see the `perf-peer` crate for the protocol), one
//! workload per process through the facade's managed transfers and single requests.

use perf_peer::tasks::{Action, Task, TaskData};
use perf_peer::{Args, BUCKET, Outcome, SmallOp, Stopwatch};
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::{BucketName, ObjectKey};
use s3_wire_tokio::{Body, Client, Destination, UploadSource};

/// Runs the workload `perf child <kind> --flags...` names and prints its result lines.
pub fn main() {
    perf_peer::run(std::env::args().skip(2), workload);
}

fn client(args: &Args) -> Result<Client, String> {
    crate::servers::client(
        &args.endpoint,
        &args.access_key,
        &args.secret_key,
        args.ca_pem()?,
    )
}

async fn workload(args: Args) -> Result<Outcome, String> {
    let calling = Calling::from_env()?;
    if calling == Calling::Blocking {
        return blocking_workload(args).await;
    }
    if args.kind == "construct" {
        return perf_peer::construct(|| client(&args));
    }
    let client = client(&args)?;
    if calling != Calling::BlockOn && args.kind != "get" {
        return Ok(Outcome::Unsupported(format!(
            "{} changes how a GET's body is read, nothing else",
            calling.client_name()
        )));
    }
    let bucket = BucketName::new(BUCKET).map_err(|e| e.to_string())?;
    let key = || ObjectKey::new(args.key.as_str()).map_err(|e| e.to_string());
    let size = args.size;
    match args.kind.as_str() {
        "put" => {
            let data = perf_peer::put_payload(&args);
            let watch = Stopwatch::start();
            client
                .put_object(PutObject::new(bucket, key()?), Body::from_bytes(data))
                .await
                .map_err(|e| e.to_string())?;
            Ok(watch.moved(size))
        }
        "get" => get(client, bucket, key()?, size, calling).await,
        "upload" => {
            let watch = Stopwatch::start();
            let mut upload = client.upload(bucket, key()?, UploadSource::file(&args.file));
            if args.part_size > 0 {
                upload = upload
                    .part_size(args.part_size)
                    .concurrency(args.concurrency);
            }
            let stored = upload.await.map_err(|e| e.to_string())?;
            perf_peer::expect("bytes stored", stored.size, size)?;
            Ok(watch.moved(size))
        }
        "download" => {
            let watch = Stopwatch::start();
            let got = client
                .download(bucket, key()?, args.file.as_path())
                .await
                .map_err(|e| e.to_string())?;
            perf_peer::expect("bytes the download wrote", got.size, size)?;
            Ok(watch.moved(got.size))
        }
        "small" => {
            perf_peer::small_objects(&args, move |op, key, payload| {
                let (client, bucket) = (client.clone(), bucket.clone());
                async move { small_request(&client, bucket, op, key, payload).await }
            })
            .await
        }
        "list" => {
            let watch = Stopwatch::start();
            let mut pages =
                client.list_objects_v2_pages(ListObjectsV2::new(bucket).prefix("list/"));
            let mut keys = 0usize;
            while let Some(page) = pages.next_page().await {
                keys += page.map_err(|e| e.to_string())?.result.contents.len();
            }
            perf_peer::expect("keys listed", keys, args.count)?;
            Ok(watch.moved(0))
        }
        "tasks" => {
            perf_peer::tasks::run(&args, move |task, data| {
                let (client, bucket) = (client.clone(), bucket.clone());
                async move { transfer_task(&client, bucket, task, data).await }
            })
            .await
        }
        other => Err(format!("unknown workload {other}")),
    }
}

/// How the program calls s3-wire: the ways docs/performance.md states a figure for (issue
/// 43). All but [`Calling::Blocking`] differ only in how a GET's body is read. The harness
/// names each as a client of its own (`s3-wire`, `s3-wire-task`, ...) and passes it in
/// [`CALLING_VAR`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Calling {
    /// `next_chunk` in a loop from `block_on` on the multi-thread runtime (`#[tokio::main]`'s
    /// `main`): every chunk handed to a thread outside the runtime's workers.
    BlockOn,
    /// The same loop in a task (`tokio::spawn`), awaited from `block_on`.
    Task,
    /// `ObjectBody::collect` from `block_on`: the whole body, read in a task of its own.
    Collect,
    /// `s3_wire::blocking`, called from plain threads as a program with no runtime calls
    /// it ([`blocking_workload`]): every workload, a GET's body read as `std::io::Read`
    /// into a 1 MiB buffer (boto3's peer reads 1 MiB chunks).
    Blocking,
}

/// The variable naming the [`Calling`] of a `perf child` (unset: [`Calling::BlockOn`]).
pub const CALLING_VAR: &str = "PERF_S3WIRE_CALLING";

impl Calling {
    pub const ALL: [Calling; 4] = [
        Calling::BlockOn,
        Calling::Task,
        Calling::Collect,
        Calling::Blocking,
    ];

    /// The client name a run gives it.
    pub fn client_name(self) -> &'static str {
        match self {
            Calling::BlockOn => "s3-wire",
            Calling::Task => "s3-wire-task",
            Calling::Collect => "s3-wire-collect",
            Calling::Blocking => "s3-wire-blocking",
        }
    }

    fn from_env() -> Result<Self, String> {
        match std::env::var(CALLING_VAR) {
            Err(_) => Ok(Calling::BlockOn),
            Ok(name) => Self::ALL
                .into_iter()
                .find(|calling| calling.client_name() == name)
                .ok_or_else(|| format!("{CALLING_VAR}={name}: no such way of calling")),
        }
    }
}

/// The `get` workload: one GET of `size` bytes, read as `calling` says, bytes counted.
async fn get(
    client: Client,
    bucket: BucketName,
    key: ObjectKey,
    size: u64,
    calling: Calling,
) -> Result<Outcome, String> {
    let request = GetObject::new(bucket, key);
    let error = |e: s3_wire_tokio::Error| e.to_string();
    let (watch, got) = match calling {
        Calling::BlockOn => {
            let watch = Stopwatch::start();
            (watch, read_chunks(&client, request).await?)
        }
        Calling::Task => {
            let watch = Stopwatch::start();
            let read = tokio::spawn(async move { read_chunks(&client, request).await });
            (watch, read.await.map_err(|e| e.to_string())??)
        }
        Calling::Collect => {
            let watch = Stopwatch::start();
            let body = client.get_object(request).await.map_err(error)?.body;
            (watch, body.collect().await.map_err(error)?.len() as u64)
        }
        Calling::Blocking => unreachable!("blocking_workload reads its GET"),
    };
    perf_peer::expect("bytes the GET returned", got, size)?;
    Ok(watch.moved(got))
}

/// Every workload through `s3_wire::blocking`, called as a program with no runtime calls
/// it: from plain threads, one per request or transfer in flight (perf-peer's
/// `*_on_threads`; a single operation on a thread of the harness runtime's blocking pool,
/// which keeps it, and its CPU time, until the figures are read).
async fn blocking_workload(args: Args) -> Result<Outcome, String> {
    use s3_wire_tokio::blocking;
    if args.kind == "construct" {
        return unblock(move || {
            perf_peer::construct(|| {
                blocking::Client::new(client(&args)?).map_err(|e| e.to_string())
            })
        })
        .await;
    }
    let client = client(&args)?;
    let client = unblock(move || blocking::Client::new(client).map_err(|e| e.to_string())).await?;
    let bucket = BucketName::new(BUCKET).map_err(|e| e.to_string())?;
    let key = ObjectKey::new(args.key.as_str()).map_err(|e| e.to_string())?;
    let size = args.size;
    // Each call gets a clone: the last one dropped ends the runtime, and with its threads
    // their CPU time, which the figures read after the call.
    let caller = client.clone();
    // A PUT's payload is made before the clock starts, as the async client's is.
    let payload = (args.kind == "put").then(|| perf_peer::put_payload(&args));
    let watch = Stopwatch::start();
    let moved = match args.kind.as_str() {
        "put" => {
            let data = payload.unwrap_or_default();
            unblock(move || {
                caller
                    .put_object(PutObject::new(bucket, key), data)
                    .map_err(|e| e.to_string())
            })
            .await?;
            size
        }
        "get" => {
            let got = unblock(move || read_blocking(&caller, GetObject::new(bucket, key))).await?;
            perf_peer::expect("bytes the GET returned", got, size)?;
            got
        }
        "upload" => {
            let (file, part_size, concurrency) =
                (args.file.clone(), args.part_size, args.concurrency);
            let stored = unblock(move || {
                caller
                    .upload(bucket, key, UploadSource::file(file))
                    .configure(|upload| match part_size {
                        0 => upload,
                        _ => upload.part_size(part_size).concurrency(concurrency),
                    })
                    .run()
                    .map_err(|e| e.to_string())
            })
            .await?;
            perf_peer::expect("bytes stored", stored.size, size)?;
            size
        }
        "download" => {
            let file = args.file.clone();
            let got = unblock(move || {
                caller
                    .download(bucket, key, file.as_path())
                    .run()
                    .map_err(|e| e.to_string())
            })
            .await?;
            perf_peer::expect("bytes the download wrote", got.size, size)?;
            got.size
        }
        "small" => {
            return unblock(move || {
                perf_peer::small_objects_on_threads(&args, |op, key, payload| {
                    small_request_blocking(&caller, bucket.clone(), op, key, payload)
                })
            })
            .await;
        }
        "list" => {
            let keys = unblock(move || {
                let mut keys = 0usize;
                for page in caller.list_objects_v2_pages(ListObjectsV2::new(bucket).prefix("list/"))
                {
                    keys += page.map_err(|e| e.to_string())?.result.contents.len();
                }
                Ok(keys)
            })
            .await?;
            perf_peer::expect("keys listed", keys, args.count)?;
            0
        }
        "tasks" => {
            return unblock(move || {
                perf_peer::tasks::run_on_threads(&args, |task, data| {
                    transfer_task_blocking(&caller, bucket.clone(), task, data)
                })
            })
            .await;
        }
        other => return Err(format!("unknown workload {other}")),
    };
    Ok(watch.moved(moved))
}

/// Runs `work` on a plain thread of the blocking pool.
async fn unblock<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| e.to_string())?
}

/// [`small_request`] through the blocking client.
fn small_request_blocking(
    client: &s3_wire_tokio::blocking::Client,
    bucket: BucketName,
    op: SmallOp,
    key: String,
    payload: bytes::Bytes,
) -> Result<(), String> {
    let key = ObjectKey::new(key).map_err(|e| e.to_string())?;
    let error = |e: s3_wire_tokio::Error| e.to_string();
    match op {
        SmallOp::Put => drop(
            client
                .put_object(PutObject::new(bucket, key), payload)
                .map_err(error)?,
        ),
        SmallOp::Get => {
            let got = client
                .get_object(GetObject::new(bucket, key))
                .map_err(error)?
                .body
                .bytes()
                .map_err(error)?;
            perf_peer::expect("bytes a small GET returned", got.len(), payload.len())?;
        }
        SmallOp::Head => drop(
            client
                .head_object(HeadObject::new(bucket, key))
                .map_err(error)?,
        ),
    }
    Ok(())
}

/// [`transfer_task`] through the blocking client.
fn transfer_task_blocking(
    client: &s3_wire_tokio::blocking::Client,
    bucket: BucketName,
    task: Task,
    data: TaskData,
) -> Result<u64, String> {
    let key = ObjectKey::new(task.key).map_err(|e| e.to_string())?;
    let error = |e: s3_wire_tokio::Error| e.to_string();
    match task.action {
        Action::Upload => Ok(client
            .upload(bucket, key, task_source(data))
            .run()
            .map_err(error)?
            .size),
        Action::Download => Ok(client
            .download(bucket, key, task_destination(data))
            .run()
            .map_err(error)?
            .size),
    }
}

/// Sends `request` with the blocking client and reads its body as `std::io::Read` into a
/// 1 MiB buffer, counting the bytes.
fn read_blocking(
    client: &s3_wire_tokio::blocking::Client,
    request: GetObject,
) -> Result<u64, String> {
    let mut body = client.get_object(request).map_err(|e| e.to_string())?.body;
    let mut buffer = vec![0u8; 1 << 20];
    let mut got = 0u64;
    loop {
        match std::io::Read::read(&mut body, &mut buffer) {
            Ok(0) => return Ok(got),
            Ok(n) => got += n as u64,
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Sends `request` and counts its body's bytes, chunk by chunk.
async fn read_chunks(client: &Client, request: GetObject) -> Result<u64, String> {
    let mut body = client
        .get_object(request)
        .await
        .map_err(|e| e.to_string())?
        .body;
    let mut got = 0u64;
    while let Some(chunk) = body.next_chunk().await {
        got += chunk.map_err(|e| e.to_string())?.len() as u64;
    }
    Ok(got)
}

/// One task of a `tasks` workload through the managed transfers with their defaults:
/// `upload` from the file or the bytes, `download` to the file or, when the task's bytes
/// stay in memory, into a writer that drops them (`tokio::io::sink`).
async fn transfer_task(
    client: &Client,
    bucket: BucketName,
    task: Task,
    data: TaskData,
) -> Result<u64, String> {
    let key = ObjectKey::new(task.key).map_err(|e| e.to_string())?;
    match task.action {
        Action::Upload => {
            let stored = client
                .upload(bucket, key, task_source(data))
                .await
                .map_err(|e| e.to_string())?;
            Ok(stored.size)
        }
        Action::Download => client
            .download(bucket, key, task_destination(data))
            .await
            .map(|got| got.size)
            .map_err(|e| e.to_string()),
    }
}

/// What an upload task reads: the file, or the bytes.
fn task_source(data: TaskData) -> UploadSource {
    match data {
        TaskData::File(path) => UploadSource::file(path),
        TaskData::Memory(bytes) => UploadSource::bytes(bytes),
    }
}

/// Where a download task writes: the file, or, when its bytes stay in memory, a writer
/// that drops them (`tokio::io::sink`).
fn task_destination(data: TaskData) -> Destination {
    match data {
        TaskData::File(path) => Destination::file(path),
        TaskData::Memory(_) => Destination::writer(tokio::io::sink()),
    }
}

async fn small_request(
    client: &Client,
    bucket: BucketName,
    op: SmallOp,
    key: String,
    payload: bytes::Bytes,
) -> Result<(), String> {
    let key = ObjectKey::new(key).map_err(|e| e.to_string())?;
    match op {
        SmallOp::Put => {
            client
                .put_object(PutObject::new(bucket, key), Body::from_bytes(payload))
                .await
                .map_err(|e| e.to_string())?;
        }
        SmallOp::Get => {
            let got = client
                .get_object(GetObject::new(bucket, key))
                .await
                .map_err(|e| e.to_string())?
                .body
                .collect()
                .await
                .map_err(|e| e.to_string())?;
            perf_peer::expect("bytes a small GET returned", got.len(), payload.len())?;
        }
        SmallOp::Head => {
            client
                .head_object(HeadObject::new(bucket, key))
                .await
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

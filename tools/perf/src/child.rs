//! `perf child`: s3-wire as a peer (see the `perf-peer` crate for the protocol), one
//! workload per process through the facade's managed transfers and single requests.

use std::sync::{Arc, Barrier, Mutex, PoisonError};

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
    if args.kind == "construct" {
        return perf_peer::construct(|| client(&args));
    }
    let client = client(&args)?;
    let calling = Calling::from_env()?;
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

/// How the program calls s3-wire to read a GET's body: the ways docs/performance.md
/// states a figure for (issue 43). The harness names each as a client of its own
/// (`s3-wire`, `s3-wire-task`, ...) and passes it in [`CALLING_VAR`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Calling {
    /// `next_chunk` in a loop from `block_on` on the multi-thread runtime (`#[tokio::main]`'s
    /// `main`): every chunk handed to a thread outside the runtime's workers.
    BlockOn,
    /// The same loop in a task (`tokio::spawn`), awaited from `block_on`.
    Task,
    /// `ObjectBody::collect` from `block_on`: the whole body, read in a task of its own.
    Collect,
    /// `s3_wire::blocking`: a thread with no runtime reading the body as `std::io::Read`
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
        Calling::Blocking => {
            // Outside every runtime, as a blocking program is: a thread of its own. The
            // clock and the CPU are read on this thread while that one waits at the barrier:
            // a running thread's own schedstat lags (it is brought up to date when the
            // thread is switched out), and an exited thread's is gone.
            let steps = Arc::new(Barrier::new(2));
            let got = Arc::new(Mutex::new(Err("not read".to_owned())));
            let reader = {
                let (steps, got) = (steps.clone(), got.clone());
                std::thread::spawn(move || {
                    // Kept until the end: dropping it ends its runtime's threads, and
                    // their CPU with them.
                    let client = s3_wire_tokio::blocking::Client::new(client);
                    steps.wait(); // ready
                    let read = match &client {
                        Ok(client) => read_blocking(client, request),
                        Err(e) => Err(e.to_string()),
                    };
                    *got.lock().unwrap_or_else(PoisonError::into_inner) = read;
                    steps.wait(); // read
                    steps.wait(); // measured
                })
            };
            steps.wait();
            let watch = Stopwatch::start();
            steps.wait();
            let got = got.lock().unwrap_or_else(PoisonError::into_inner).clone();
            let outcome = got.clone().map(|got| watch.moved(got));
            steps.wait();
            reader.join().map_err(|_| "the reading thread panicked")?;
            perf_peer::expect("bytes the GET returned", got?, size)?;
            return outcome;
        }
    };
    perf_peer::expect("bytes the GET returned", got, size)?;
    Ok(watch.moved(got))
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
    match (task.action, data) {
        (Action::Upload, data) => {
            let source = match data {
                TaskData::File(path) => UploadSource::file(path),
                TaskData::Memory(bytes) => UploadSource::bytes(bytes),
            };
            let stored = client
                .upload(bucket, key, source)
                .await
                .map_err(|e| e.to_string())?;
            Ok(stored.size)
        }
        (Action::Download, data) => {
            let destination = match data {
                TaskData::File(path) => Destination::file(path),
                TaskData::Memory(_) => Destination::writer(tokio::io::sink()),
            };
            client
                .download(bucket, key, destination)
                .await
                .map(|got| got.size)
                .map_err(|e| e.to_string())
        }
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

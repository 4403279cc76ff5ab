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
    if args.kind == "construct" {
        return perf_peer::construct(|| client(&args));
    }
    let client = client(&args)?;
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
        "get" => {
            let watch = Stopwatch::start();
            let mut body = client
                .get_object(GetObject::new(bucket, key()?))
                .await
                .map_err(|e| e.to_string())?
                .body;
            let mut got = 0u64;
            while let Some(chunk) = body.next_chunk().await {
                got += chunk.map_err(|e| e.to_string())?.len() as u64;
            }
            perf_peer::expect("bytes the GET returned", got, size)?;
            Ok(watch.moved(got))
        }
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

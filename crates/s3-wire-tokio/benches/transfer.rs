//! Managed transfers of one large file against `tools/local-s3` (s3s-fs, data on tmpfs),
//! side by side in one run: the managed upload and download over a grid of part sizes and
//! concurrencies, and one PutObject / one streaming GetObject of the same object through
//! the same server as the reference. Prints the median of `REPS` runs per cell (wall time,
//! MiB/s, and the process's CPU time per GiB from /proc/self/stat).
//!
//! `cargo bench -p s3-wire-tokio --bench transfer [-- SIZE_MIB]` (default 256)

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use local_s3::{LocalS3, Options};
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::{BucketName, ObjectKey};
use s3_wire_tokio::{Body, Client, UploadSource};

const REPS: usize = 3;
const MIB: u64 = 1 << 20;

/// User + system CPU time of this process so far (Linux).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may contain spaces) in parentheses.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the file, 12 and 13 after the name.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

struct Sample {
    wall: Duration,
    cpu: Duration,
}

async fn measure<F, Fut>(mut run: F) -> Sample
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut samples = Vec::new();
    for _ in 0..REPS {
        let (cpu, wall) = (cpu_time(), Instant::now());
        run().await;
        samples.push(Sample {
            wall: wall.elapsed(),
            cpu: cpu_time() - cpu,
        });
    }
    samples.sort_by_key(|s| s.wall);
    samples.swap_remove(REPS / 2)
}

fn row(name: &str, bytes: u64, sample: &Sample) {
    let seconds = sample.wall.as_secs_f64();
    let gib = bytes as f64 / (1u64 << 30) as f64;
    println!(
        "| {name:<34} | {:>8.0} ms | {:>7.0} MiB/s | {:>5.2} s/GiB |",
        seconds * 1000.0,
        bytes as f64 / MIB as f64 / seconds,
        sample.cpu.as_secs_f64() / gib,
    );
}

fn write_file(path: &Path, len: u64) {
    use std::io::Write;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut block = vec![0u8; MIB as usize];
    for _ in 0..len / MIB {
        for word in block.chunks_exact_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            word.copy_from_slice(&state.to_le_bytes());
        }
        file.write_all(&block).expect("write");
    }
    file.flush().expect("flush");
}

fn main() {
    let size_mib: u64 = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(256);
    let len = size_mib * MIB;
    let scratch =
        PathBuf::from("/dev/shm").join(format!("s3w-transfer-bench-{}", std::process::id()));
    std::fs::create_dir_all(scratch.join("data")).expect("scratch dir on tmpfs");
    let source = scratch.join("source.bin");
    write_file(&source, len);
    let mut options = Options::default();
    options.data_dir = Some(scratch.join("data"));
    let server = LocalS3::start_with(options).expect("local-s3");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let client = Client::builder()
            .endpoint(server.endpoint())
            .region(server.region())
            .static_credentials(server.access_key(), server.secret_key(), None)
            .proxy_from_env(false)
            .transfer_memory(1 << 30)
            .build()
            .expect("client");
        let bucket = BucketName::new("bench").unwrap();
        client
            .create_bucket(CreateBucket::new(bucket.clone()))
            .await
            .expect("bucket");
        let key = ObjectKey::new("object.bin").unwrap();
        let target = scratch.join("download.bin");
        println!("{size_mib} MiB, median of {REPS}, local-s3 with data on tmpfs");
        println!("| workload | wall | throughput | CPU |");
        println!("|---|---:|---:|---:|");
        let single_put = measure(|| async {
            let body = Body::from_file(&source).await.expect("file");
            client
                .put_object(PutObject::new(bucket.clone(), key.clone()), body)
                .await
                .expect("put");
        })
        .await;
        row("one PutObject (reference)", len, &single_put);
        let single_get = measure(|| async {
            client
                .get_object(GetObject::new(bucket.clone(), key.clone()))
                .await
                .expect("get")
                .body
                .write_to_file(&target)
                .await
                .expect("body");
        })
        .await;
        row("one GetObject to a file (reference)", len, &single_get);
        for part_size in [8 * MIB, 16 * MIB, 32 * MIB] {
            for concurrency in [2, 4, 8, 16] {
                let upload = measure(|| async {
                    client
                        .upload(bucket.clone(), key.clone(), UploadSource::file(&source))
                        .part_size(part_size)
                        .concurrency(concurrency)
                        .await
                        .expect("upload");
                })
                .await;
                row(
                    &format!("upload {} MiB × {concurrency}", part_size / MIB),
                    len,
                    &upload,
                );
                let download = measure(|| async {
                    client
                        .download(bucket.clone(), key.clone(), target.as_path())
                        .part_size(part_size)
                        .concurrency(concurrency)
                        .await
                        .expect("download");
                })
                .await;
                row(
                    &format!("download {} MiB × {concurrency}", part_size / MIB),
                    len,
                    &download,
                );
            }
        }
    });
    drop(server);
    let _ = std::fs::remove_dir_all(&scratch);
}

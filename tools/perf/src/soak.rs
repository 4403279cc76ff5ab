//! `perf soak`: a long mixed run of s3-wire that shows whether anything grows without
//! bound. Per server (the null server, local-s3), a child process (`perf soak-child`) runs
//! `--ops` operations, `--concurrency` at a time, of every kind a user mixes — small PUT, GET,
//! HEAD and DELETE, 256 KiB PUTs, listings, managed multipart uploads and parallel downloads
//! to a file — and a share of them (`--fault-share`, in the middle of the run) goes through a
//! fault-injecting TCP proxy in the parent that refuses or cuts half of its connections. Every
//! `--sample-ms` the child samples itself: resident memory, open file descriptors, sockets
//! (its connection pool and requests in flight: the servers and the proxy live in the
//! parent), threads and live Tokio tasks. The parent writes the samples and, per metric, the
//! start, peak, end and slope into `measurements/<name>.md` and `.jsonl`.
//!
//! ```text
//! perf soak [--ops 100000] [--servers null,local-s3] [--concurrency 16]
//!     [--fault-share 0.3] [--sample-ms 2000] [--idle-secs 5] [--out measurements]
//!     [--name soak-<date>]
//! ```
//!
//! The run fails (exit 1, after writing its report) when a metric grows past its bound
//! ([`BOUNDS`]) after the warm-up: its least-squares slope per 10,000 operations, or its
//! last sample (taken after a pause longer than the pool's idle timeout, when idle
//! connections are gone) against the mid-run plateau; and when the run was shorter than
//! twice the pool's idle timeout, too short for an idle connection that is never closed to
//! show.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use perf_peer::BUCKET;
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::ops::delete_object::DeleteObject;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::{BucketName, ObjectKey};
use s3_wire_tokio::{Body, Client, UploadSource};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{MIB, machine, servers};

/// Objects the small GETs and HEADs read.
const SMALL_OBJECTS: usize = 200;
/// Keys the small PUTs and DELETEs write.
const WRITTEN_KEYS: usize = 1000;
/// Keys under the listed prefix.
const LISTED_KEYS: usize = 50;
const SMALL: u64 = 4096;
const MEDIUM: u64 = 256 * 1024;
/// A managed upload: a multipart upload of three 8 MiB parts.
const LARGE_UPLOAD: u64 = 20 * MIB;
/// The object the managed downloads read (three ranges of 8 MiB).
const LARGE_DOWNLOAD: u64 = 24 * MIB;

/// The share of the proxy's connections it refuses or cuts (pooled connections carry many
/// requests, so this is far fewer failed requests).
const FAULT_PROBABILITY: f64 = 0.5;

/// The operations of the mix and their weights (per 1000).
const MIX: [(&str, u32); 9] = [
    ("put-small", 300),
    ("get-small", 300),
    ("head", 150),
    ("delete", 50),
    ("list", 46),
    ("put-medium", 100),
    ("get-medium", 50),
    ("managed-upload", 2),
    ("managed-download", 2),
];

#[derive(Debug)]
struct Options {
    ops: usize,
    servers: Vec<String>,
    concurrency: usize,
    fault_share: f64,
    sample_ms: u64,
    /// The pool idle timeout of the child's clients: the run must last twice as long, and
    /// the last sample follows a pause longer than it, so an idle connection that is never
    /// closed shows as a leak.
    idle_secs: u64,
    out: PathBuf,
    name: String,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut flags = BTreeMap::new();
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        let name = flag
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument {flag}"))?;
        let value = iter.next().ok_or_else(|| format!("{flag} needs a value"))?;
        flags.insert(name.to_owned(), value.clone());
    }
    let number = |name: &str, default: u64| -> Result<u64, String> {
        flags.get(name).map_or(Ok(default), |v| {
            v.parse().map_err(|_| format!("bad --{name}"))
        })
    };
    let options = Options {
        ops: number("ops", 100_000)? as usize,
        servers: flags
            .get("servers")
            .map_or("null,local-s3", String::as_str)
            .split(',')
            .map(str::to_owned)
            .collect(),
        concurrency: number("concurrency", 16)? as usize,
        fault_share: flags
            .get("fault-share")
            .map_or(Ok(0.3), |v| v.parse().map_err(|_| "bad --fault-share"))?,
        sample_ms: number("sample-ms", 2000)?,
        idle_secs: number("idle-secs", 5)?.max(1),
        out: PathBuf::from(flags.get("out").map_or("measurements", String::as_str)),
        name: flags
            .get("name")
            .cloned()
            .unwrap_or_else(|| format!("soak-{}", machine::today())),
    };
    let known = [
        "ops",
        "servers",
        "concurrency",
        "fault-share",
        "sample-ms",
        "idle-secs",
        "out",
        "name",
    ];
    if let Some(unknown) = flags.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!("unknown flag --{unknown}"));
    }
    Ok(options)
}

/// `perf soak [--flags]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let options = options(args)?;
    std::fs::create_dir_all(&options.out).map_err(|e| format!("{}: {e}", options.out.display()))?;
    let command = std::iter::once("perf".to_owned())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let scratch = PathBuf::from("/dev/shm").join(format!("s3w-soak-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let load_before = machine::load();
    let started = machine::now_utc();
    let mut results = Vec::new();
    for name in &options.servers {
        let result = soak_server(&runtime, name, &scratch, &options);
        results.push((name.clone(), result?));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let meta = json!({
        "meta": true,
        "date": started,
        "commit": machine::git(&["rev-parse", "--short", "HEAD"]),
        "dirty": !machine::git(&["status", "--porcelain", "--untracked-files=no"]).is_empty(),
        "cpu": machine::cpu_model(),
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "load_before": load_before,
        "load_after": machine::load(),
        "command": command,
    });
    let mut jsonl = format!("{meta}\n");
    for (server, result) in &results {
        for line in &result.lines {
            let mut line = line.clone();
            line["server"] = json!(server);
            jsonl.push_str(&format!("{line}\n"));
        }
    }
    let jsonl_path = options.out.join(format!("{}.jsonl", options.name));
    std::fs::write(&jsonl_path, jsonl).map_err(|e| e.to_string())?;
    let md = report(&meta, &results, &options);
    let md_path = options.out.join(format!("{}.md", options.name));
    std::fs::write(&md_path, &md).map_err(|e| e.to_string())?;
    println!("{md}");
    eprintln!("wrote {} and {}", jsonl_path.display(), md_path.display());
    let failures: Vec<String> = results
        .iter()
        .flat_map(|(server, result)| {
            verdicts(&result.lines, &options)
                .into_iter()
                .filter(|v| !v.within)
                .map(move |v| format!("{server}: {}", v.text))
        })
        .collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("soak bounds exceeded:\n{}", failures.join("\n")))
    }
}

/// What one server's soak produced: the child's lines and the faults the proxy injected.
struct SoakResult {
    lines: Vec<Value>,
    faults: BTreeMap<&'static str, u64>,
}

fn soak_server(
    runtime: &tokio::runtime::Runtime,
    name: &str,
    scratch: &Path,
    options: &Options,
) -> Result<SoakResult, String> {
    if name == "null-tls" {
        return Err(
            "soak: its fault proxy forwards plain HTTP; use --servers null,local-s3".into(),
        );
    }
    let server = servers::start(name, scratch)?;
    runtime.block_on(seed(&server))?;
    let upstream: SocketAddr = server
        .endpoint
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .map_err(|e| format!("{}: {e}", server.endpoint))?;
    let proxy = runtime.block_on(FaultProxy::start(upstream, FAULT_PROBABILITY))?;
    let child_scratch = scratch.join(format!("child-{name}"));
    std::fs::create_dir_all(&child_scratch).map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let fault_ops = (options.ops as f64 * options.fault_share) as usize;
    let fault_from = (options.ops - fault_ops) / 2;
    let mut child = Command::new(exe)
        .arg("soak-child")
        .args(["--endpoint", &server.endpoint])
        .args(["--proxy", &format!("http://{}", proxy.addr)])
        .args(["--access-key", &server.access_key])
        .args(["--secret-key", &server.secret_key])
        .args(["--ops", &options.ops.to_string()])
        .args(["--concurrency", &options.concurrency.to_string()])
        .args(["--fault-from", &fault_from.to_string()])
        .args(["--fault-to", &(fault_from + fault_ops).to_string()])
        .args(["--sample-ms", &options.sample_ms.to_string()])
        .args(["--idle-secs", &options.idle_secs.to_string()])
        .args(["--scratch", &child_scratch.to_string_lossy()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().expect("piped");
    let mut lines = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| e.to_string())?;
        let value: Value =
            serde_json::from_str(&line).map_err(|e| format!("soak child: {e}: {line}"))?;
        eprintln!("soak {name}: {line}");
        lines.push(value);
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("soak child on {name} failed: {status}"));
    }
    let faults = proxy.counts();
    Ok(SoakResult { lines, faults })
}

/// The objects the reads find, under the bucket every workload uses.
async fn seed(server: &servers::Server) -> Result<(), String> {
    let client = servers::client(
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
    let put = |key: String, len: u64| {
        let (client, bucket) = (client.clone(), bucket.clone());
        async move {
            client
                .put_object(
                    PutObject::new(bucket, ObjectKey::new(key).unwrap()),
                    Body::from_bytes(servers::pattern(len)),
                )
                .await
                .map(|_| ())
                .map_err(|e| format!("seed: {e}"))
        }
    };
    for i in 0..SMALL_OBJECTS {
        put(format!("soak/small-{i:04}"), SMALL).await?;
    }
    for i in 0..LISTED_KEYS {
        put(format!("soak/list/{i:04}"), 16).await?;
    }
    put("soak/medium".into(), MEDIUM).await?;
    client
        .upload(
            bucket,
            ObjectKey::new("soak/large").unwrap(),
            UploadSource::bytes(servers::pattern(LARGE_DOWNLOAD)),
        )
        .await
        .map_err(|e| format!("seed: {e}"))?;
    Ok(())
}

/// A TCP proxy in front of a server that, for a share of the connections, refuses them or
/// cuts them after a few bytes of the answers.
struct FaultProxy {
    addr: SocketAddr,
    refused: Arc<AtomicU64>,
    cut: Arc<AtomicU64>,
    connections: Arc<AtomicU64>,
}

impl FaultProxy {
    async fn start(upstream: SocketAddr, probability: f64) -> Result<Self, String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let (refused, cut, connections) = (
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicU64::new(0)),
        );
        let counters = (refused.clone(), cut.clone(), connections.clone());
        tokio::spawn(async move {
            let mut rng = Rng(0x50A4);
            while let Ok((mut client, _)) = listener.accept().await {
                let (refused, cut, connections) = counters.clone();
                connections.fetch_add(1, Ordering::Relaxed);
                let roll = rng.unit();
                let cut_after = (rng.unit() * 256.0 * 1024.0) as u64;
                tokio::spawn(async move {
                    if roll < probability / 3.0 {
                        refused.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                    let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else {
                        return;
                    };
                    // A relayed piece shorter than a segment must not wait for the peer's
                    // delayed ACK (Nagle), or every small request through the proxy stalls.
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    if roll >= probability {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        return;
                    }
                    // Forward the request side whole, the answers until `cut_after` bytes.
                    let (mut client_read, mut client_write) = client.split();
                    let (mut server_read, mut server_write) = server.split();
                    let up = tokio::io::copy(&mut client_read, &mut server_write);
                    let down = async {
                        let mut forwarded = 0u64;
                        let mut buffer = vec![0u8; 16 * 1024];
                        loop {
                            let n = server_read.read(&mut buffer).await.unwrap_or(0);
                            if n == 0 {
                                return;
                            }
                            let n = n.min((cut_after - forwarded) as usize);
                            if client_write.write_all(&buffer[..n]).await.is_err() {
                                return;
                            }
                            forwarded += n as u64;
                            if forwarded >= cut_after {
                                cut.fetch_add(1, Ordering::Relaxed);
                                return;
                            }
                        }
                    };
                    tokio::select! {
                        _ = up => {}
                        () = down => {}
                    }
                });
            }
        });
        Ok(Self {
            addr,
            refused,
            cut,
            connections,
        })
    }

    fn counts(&self) -> BTreeMap<&'static str, u64> {
        BTreeMap::from([
            ("connections", self.connections.load(Ordering::Relaxed)),
            ("refused", self.refused.load(Ordering::Relaxed)),
            ("cut", self.cut.load(Ordering::Relaxed)),
        ])
    }
}

/// splitmix64, for the proxy's and the mix's seeded choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

// ---------------------------------------------------------------------------------------------
// The child
// ---------------------------------------------------------------------------------------------

/// `perf soak-child --flags`: runs the operations and prints a JSON line per sample, then a
/// summary line.
pub fn child(args: &[String]) -> Result<(), String> {
    let mut flags = BTreeMap::new();
    let mut iter = args.iter();
    while let (Some(flag), Some(value)) = (iter.next(), iter.next()) {
        flags.insert(flag.trim_start_matches("--").to_owned(), value.clone());
    }
    let get = |name: &str| {
        flags
            .get(name)
            .cloned()
            .ok_or_else(|| format!("soak-child needs --{name}"))
    };
    let number = |name: &str| -> Result<usize, String> {
        get(name)?.parse().map_err(|_| format!("bad --{name}"))
    };
    let plan = ChildPlan {
        ops: number("ops")?,
        concurrency: number("concurrency")?.max(1),
        faults: number("fault-from")?..number("fault-to")?,
        sample: Duration::from_millis(number("sample-ms")? as u64),
        idle: Duration::from_secs(number("idle-secs")? as u64),
        scratch: PathBuf::from(get("scratch")?),
    };
    let (access, secret) = (get("access-key")?, get("secret-key")?);
    // The soak servers are plain HTTP (its fault proxy forwards plain HTTP).
    let direct = servers::client_builder(&get("endpoint")?, &access, &secret, None)?
        .pool_idle_timeout(plan.idle)
        .build()
        .map_err(|e| e.to_string())?;
    let through_proxy = Client::builder()
        .endpoint(get("proxy")?)
        .region("us-east-1")
        .static_credentials(&access, &secret, None)
        .proxy_from_env(false)
        .stall_timeout(Duration::from_secs(2))
        .pool_idle_timeout(plan.idle)
        .build()
        .map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(soak_child(plan, direct, through_proxy))
}

struct ChildPlan {
    ops: usize,
    concurrency: usize,
    /// Operation indices that go through the fault proxy.
    faults: std::ops::Range<usize>,
    sample: Duration,
    /// The clients' pool idle timeout.
    idle: Duration,
    scratch: PathBuf,
}

async fn soak_child(plan: ChildPlan, direct: Client, through_proxy: Client) -> Result<(), String> {
    let plan = Arc::new(plan);
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let outcomes: Arc<std::sync::Mutex<BTreeMap<String, u64>>> = Arc::default();
    let started = Instant::now();
    let sampler = {
        let (plan, done) = (plan.clone(), done.clone());
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(plan.sample);
            loop {
                interval.tick().await;
                println!("{}", sample(started, done.load(Ordering::Relaxed)));
            }
        })
    };
    let medium = servers::pattern(MEDIUM);
    let small = servers::pattern(SMALL);
    let large = servers::pattern(LARGE_UPLOAD);
    let mut workers = tokio::task::JoinSet::new();
    for worker in 0..plan.concurrency {
        let (plan, next, done, outcomes) =
            (plan.clone(), next.clone(), done.clone(), outcomes.clone());
        let (direct, through_proxy) = (direct.clone(), through_proxy.clone());
        let (small, medium, large) = (small.clone(), medium.clone(), large.clone());
        workers.spawn(async move {
            let mut rng = Rng(0x50A4_0000 + worker as u64);
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= plan.ops {
                    return;
                }
                let client = if plan.faults.contains(&index) {
                    &through_proxy
                } else {
                    &direct
                };
                let kind = pick(&mut rng);
                let data = Data {
                    small: &small,
                    medium: &medium,
                    large: &large,
                };
                let result = operation(client, kind, index, &data, &plan.scratch).await;
                let label = match result {
                    Ok(()) => format!("{kind}: ok"),
                    Err(error) => format!("{kind}: {error}"),
                };
                *outcomes.lock().unwrap().entry(label).or_default() += 1;
                done.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    while let Some(joined) = workers.join_next().await {
        joined.map_err(|e| e.to_string())?;
    }
    let secs = started.elapsed().as_secs_f64();
    // Twice the pool's idle timeout (its reaper runs once per timeout, so an idle
    // connection goes within two) and a sample's length: idle connections are closed and the
    // transfers' background tasks done; then one last sample.
    tokio::time::sleep(2 * plan.idle + plan.sample.max(Duration::from_secs(1))).await;
    sampler.abort();
    println!("{}", sample(started, done.load(Ordering::Relaxed)));
    let outcomes = outcomes.lock().unwrap().clone();
    println!(
        "{}",
        json!({
            "summary": true,
            "ops": done.load(Ordering::Relaxed),
            "secs": secs,
            "outcomes": outcomes,
            "through_proxy": plan.faults.len(),
        })
    );
    Ok(())
}

fn pick(rng: &mut Rng) -> &'static str {
    let total: u32 = MIX.iter().map(|(_, w)| w).sum();
    let mut roll = (rng.next() % u64::from(total)) as u32;
    for (kind, weight) in MIX {
        if roll < weight {
            return kind;
        }
        roll -= weight;
    }
    MIX[0].0
}

struct Data<'a> {
    small: &'a Bytes,
    medium: &'a Bytes,
    large: &'a Bytes,
}

/// One operation of `kind`; an error is reduced to its kind for the counts.
async fn operation(
    client: &Client,
    kind: &str,
    index: usize,
    data: &Data<'_>,
    scratch: &Path,
) -> Result<(), String> {
    let bucket = BucketName::new(BUCKET).unwrap();
    let key = |name: String| ObjectKey::new(name).unwrap();
    let kind_of = |error: s3_wire_tokio::Error| {
        format!("{:?}", error.kind())
            .chars()
            .take(60)
            .collect::<String>()
    };
    match kind {
        "put-small" => client
            .put_object(
                PutObject::new(bucket, key(format!("soak/w/{:04}", index % WRITTEN_KEYS))),
                Body::from_bytes(data.small.clone()),
            )
            .await
            .map(|_| ())
            .map_err(kind_of),
        "put-medium" => client
            .put_object(
                PutObject::new(bucket, key(format!("soak/m/{:04}", index % 100))),
                Body::from_bytes(data.medium.clone()),
            )
            .await
            .map(|_| ())
            .map_err(kind_of),
        "get-small" | "get-medium" => {
            let name = if kind == "get-small" {
                format!("soak/small-{:04}", index % SMALL_OBJECTS)
            } else {
                "soak/medium".to_owned()
            };
            let got = client
                .get_object(GetObject::new(bucket, key(name)))
                .await
                .map_err(kind_of)?;
            got.body.collect().await.map(|_| ()).map_err(kind_of)
        }
        "head" => client
            .head_object(HeadObject::new(
                bucket,
                key(format!("soak/small-{:04}", index % SMALL_OBJECTS)),
            ))
            .await
            .map(|_| ())
            .map_err(kind_of),
        "delete" => client
            .delete_object(DeleteObject::new(
                bucket,
                key(format!("soak/w/{:04}", index % WRITTEN_KEYS)),
            ))
            .await
            .map(|_| ())
            .map_err(kind_of),
        "list" => {
            let mut pages =
                client.list_objects_v2_pages(ListObjectsV2::new(bucket).prefix("soak/list/"));
            let mut keys = 0;
            while let Some(page) = pages.next_page().await {
                keys += page.map_err(kind_of)?.result.contents.len();
            }
            if keys == LISTED_KEYS {
                Ok(())
            } else {
                Err(format!("listed {keys} keys"))
            }
        }
        "managed-upload" => client
            .upload(
                bucket,
                key(format!("soak/u/{:02}", index % 10)),
                UploadSource::bytes(data.large.clone()),
            )
            .await
            .map(|_| ())
            .map_err(kind_of),
        "managed-download" => {
            let target = scratch.join(format!("download-{index}"));
            let got = client
                .download(bucket, key("soak/large".into()), target.as_path())
                .await
                .map(|_| ())
                .map_err(kind_of);
            let _ = std::fs::remove_file(&target);
            got
        }
        other => Err(format!("unknown operation {other}")),
    }
}

/// The child's own figures now.
fn sample(started: Instant, ops: usize) -> Value {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let rss_kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0);
    let (mut fds, mut sockets) = (0u64, 0u64);
    if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
        for entry in entries.flatten() {
            fds += 1;
            if std::fs::read_link(entry.path())
                .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"))
            {
                sockets += 1;
            }
        }
    }
    let threads = std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count());
    let tasks = tokio::runtime::Handle::current()
        .metrics()
        .num_alive_tasks();
    json!({
        "sample": true,
        "secs": started.elapsed().as_secs_f64(),
        "ops": ops,
        "rss_kib": rss_kib,
        "fds": fds,
        "sockets": sockets,
        "threads": threads,
        "tasks": tasks,
    })
}

// ---------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------

/// The metrics sampled, with their units.
const METRICS: [(&str, &str); 5] = [
    ("rss_kib", "resident memory, KiB"),
    ("fds", "open file descriptors"),
    ("sockets", "sockets (connections)"),
    ("threads", "threads"),
    ("tasks", "live Tokio tasks"),
];

/// How far each metric may grow after the warm-up: its least-squares slope per 10,000
/// operations (judged on runs of at least [`SLOPE_RUN`] operations: on a shorter one the
/// warm-up and the fault window are most of it), and its last sample over the mid-run
/// plateau (the mean of the first half after the warm-up). The null server's run of
/// 2026-12-02 (60 s idle timeout, its last sample 2 s after the end) grew sockets +4 per
/// 10,000 operations, all idle connections of the proxied client; with the idle timeout
/// passed before the last sample a pool returns to its plateau. A leak of one connection per
/// 2,500 operations, or of 200 bytes per operation, exceeds these.
const BOUNDS: [(&str, f64, f64); 5] = [
    // (metric, slope per 10,000 operations, end over the plateau)
    ("rss_kib", 2048.0, 32_768.0),
    ("fds", 4.0, 8.0),
    ("sockets", 4.0, 8.0),
    ("threads", 1.0, 4.0),
    ("tasks", 8.0, 16.0),
];

/// The shortest run whose slopes are judged.
const SLOPE_RUN: usize = 50_000;

/// One metric's check: within its bounds or not, and how it reads.
struct Verdict {
    within: bool,
    text: String,
}

/// The checks of one server's run: every metric against [`BOUNDS`], and the run's length
/// against twice the idle timeout.
fn verdicts(lines: &[Value], options: &Options) -> Vec<Verdict> {
    let samples: Vec<&Value> = lines
        .iter()
        .filter(|l| l["sample"].as_bool() == Some(true))
        .collect();
    let secs = lines
        .iter()
        .find(|l| l["summary"].as_bool() == Some(true))
        .and_then(|l| l["secs"].as_f64())
        .unwrap_or(0.0);
    let long_enough = secs >= 2.0 * options.idle_secs as f64;
    let mut verdicts = vec![Verdict {
        within: long_enough,
        text: format!(
            "run length {secs:.0} s against twice the pool's idle timeout, {} s{}",
            2 * options.idle_secs,
            if long_enough {
                ""
            } else {
                ": too short to show an idle connection that is never closed (raise --ops)"
            }
        ),
    }];
    let warm = options.ops as f64 / 10.0;
    for (metric, max_slope, max_growth) in BOUNDS {
        let points: Vec<(f64, f64)> = samples
            .iter()
            .filter(|s| s["ops"].as_f64().unwrap_or(0.0) >= warm)
            .map(|s| {
                (
                    s["ops"].as_f64().unwrap_or(0.0) / 10_000.0,
                    s[metric].as_f64().unwrap_or(0.0),
                )
            })
            .collect();
        let (Some(&(_, end)), true) = (points.last(), points.len() >= 2) else {
            verdicts.push(Verdict {
                within: false,
                text: format!("{metric}: fewer than two samples after the warm-up"),
            });
            continue;
        };
        let half = &points[..points.len() / 2];
        let plateau = half.iter().map(|p| p.1).sum::<f64>() / half.len().max(1) as f64;
        // The last sample is taken after the run: the slope is the run's.
        let slope = slope(&points[..points.len() - 1]);
        let judged = options.ops >= SLOPE_RUN;
        let within = (!judged || slope <= max_slope) && end - plateau <= max_growth;
        let slope_text = if judged {
            format!("slope {slope:+.2} per 10,000 ops (bound {max_slope})")
        } else {
            format!("slope {slope:+.2} per 10,000 ops (not judged below {SLOPE_RUN} ops)")
        };
        verdicts.push(Verdict {
            within,
            text: format!(
                "{metric}: {slope_text}, end {end:.0} against the plateau {plateau:.0} \
                 (bound +{max_growth}){}",
                if within { "" } else { ": EXCEEDED" }
            ),
        });
    }
    verdicts
}

/// The least-squares slope of `points` (x, y).
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let covariance: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let variance: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if variance == 0.0 {
        0.0
    } else {
        covariance / variance
    }
}

fn report(meta: &Value, results: &[(String, SoakResult)], options: &Options) -> String {
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(format!(
        "# Soak run ({})",
        meta["date"].as_str().unwrap_or("")
    ));
    line(String::new());
    line(format!(
        "Commit {}{}, {} cores ({}), load average {} before and {} after. The raw samples \
         are in [{name}.jsonl]({name}.jsonl).",
        meta["commit"].as_str().unwrap_or(""),
        if meta["dirty"].as_bool() == Some(true) {
            " (with uncommitted changes)"
        } else {
            ""
        },
        meta["cores"],
        meta["cpu"].as_str().unwrap_or(""),
        meta["load_before"].as_str().unwrap_or(""),
        meta["load_after"].as_str().unwrap_or(""),
        name = options.name,
    ));
    line(String::new());
    line("```sh".into());
    line(format!(
        "cargo run --release -p perf -- {}",
        meta["command"]
            .as_str()
            .unwrap_or("")
            .trim_start_matches("perf ")
    ));
    line("```".into());
    line(String::new());
    let mix: Vec<String> = MIX
        .iter()
        .map(|(kind, weight)| format!("{kind} {:.1} %", f64::from(*weight) / 10.0))
        .collect();
    line(format!(
        "{} operations per server, {} at a time, in one child process (the servers and the \
         fault proxy run in the parent, so the child's sockets are its own connections): {}. \
         Small objects are 4 KiB, medium 256 KiB, a managed upload 20 MiB (three parts), a \
         managed download 24 MiB to a file on tmpfs (three ranges). The middle {:.0} % of the \
         operations go through a TCP proxy that refuses or cuts half of its connections \
         (after up to 256 KiB of answers). A sample every {} ms, and one after the last \
         operation and a pause longer than the pool's idle timeout ({} s, both clients: the \
         operations through the proxy use a second one). After the first tenth of the \
         operations (the warm-up: pools and buffers filling) the samples are split in two \
         halves by time, each half's mean given, and the slope is least squares over the \
         run's samples, per 10,000 operations.",
        options.ops,
        options.concurrency,
        mix.join(", "),
        options.fault_share * 100.0,
        options.sample_ms,
        options.idle_secs,
    ));
    for (server, result) in results {
        let samples: Vec<&Value> = result
            .lines
            .iter()
            .filter(|l| l["sample"].as_bool() == Some(true))
            .collect();
        let summary = result
            .lines
            .iter()
            .find(|l| l["summary"].as_bool() == Some(true));
        line(String::new());
        line(format!("## {server}"));
        line(String::new());
        if let Some(summary) = summary {
            line(format!(
                "{} operations in {:.0} s ({} samples); through the proxy: {} operations; the \
                 proxy: {}.",
                summary["ops"],
                summary["secs"].as_f64().unwrap_or(0.0),
                samples.len(),
                summary["through_proxy"],
                result
                    .faults
                    .iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        line(String::new());
        line(
            "| metric | start | peak | end | mean after warm-up, first half | mean, second half | slope per 10,000 ops after warm-up |"
                .into(),
        );
        line("|---|---:|---:|---:|---:|---:|---:|".into());
        let warm = options.ops as f64 / 10.0;
        for (metric, title) in METRICS {
            let values: Vec<f64> = samples
                .iter()
                .map(|s| s[metric].as_f64().unwrap_or(0.0))
                .collect();
            let (Some(first), Some(last)) = (values.first(), values.last()) else {
                continue;
            };
            let peak = values.iter().copied().fold(f64::MIN, f64::max);
            let points: Vec<(f64, f64)> = samples
                .iter()
                .filter(|s| s["ops"].as_f64().unwrap_or(0.0) >= warm)
                .map(|s| {
                    (
                        s["ops"].as_f64().unwrap_or(0.0) / 10_000.0,
                        s[metric].as_f64().unwrap_or(0.0),
                    )
                })
                .collect();
            let half = points.len() / 2;
            let mean = |points: &[(f64, f64)]| {
                points.iter().map(|p| p.1).sum::<f64>() / points.len().max(1) as f64
            };
            line(format!(
                "| {title} | {first:.0} | {peak:.0} | {last:.0} | {:.0} | {:.0} | {:+.2} |",
                mean(&points[..half]),
                mean(&points[half..]),
                slope(&points)
            ));
        }
        line(String::new());
        line(
            "Bounds (`BOUNDS` in `tools/perf/src/soak.rs`; the run fails when one is exceeded):"
                .into(),
        );
        line(String::new());
        for verdict in verdicts(&result.lines, options) {
            line(format!(
                "- {} {}",
                if verdict.within {
                    "within:"
                } else {
                    "**EXCEEDED:**"
                },
                verdict.text
            ));
        }
        if let Some(summary) = summary {
            line(String::new());
            line("| outcome | count |".into());
            line("|---|---:|".into());
            if let Some(outcomes) = summary["outcomes"].as_object() {
                for (outcome, count) in outcomes {
                    line(format!("| {outcome} | {count} |"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slope_of_a_line_and_of_a_plateau() {
        let line: Vec<(f64, f64)> = (0..10)
            .map(|x| (f64::from(x), 3.0 * f64::from(x) + 1.0))
            .collect();
        assert!((slope(&line) - 3.0).abs() < 1e-9);
        let flat: Vec<(f64, f64)> = (0..10).map(|x| (f64::from(x), 7.0)).collect();
        assert_eq!(slope(&flat), 0.0);
        assert_eq!(slope(&[(1.0, 1.0)]), 0.0);
    }

    fn run(samples: &[(f64, f64)], secs: f64) -> Vec<Value> {
        let mut lines: Vec<Value> = samples
            .iter()
            .map(|&(ops, sockets)| {
                json!({"sample": true, "ops": ops, "sockets": sockets, "rss_kib": 50_000,
                       "fds": sockets + 10.0, "threads": 12, "tasks": 40})
            })
            .collect();
        lines.push(json!({"summary": true, "secs": secs}));
        lines
    }

    fn options() -> Options {
        super::options(&[
            "--ops".into(),
            "100000".into(),
            "--idle-secs".into(),
            "10".into(),
        ])
        .unwrap()
    }

    #[test]
    fn a_plateau_is_within_bounds_and_a_leak_or_a_short_run_is_not() {
        let ops = |i: u32| f64::from(i) * 5_000.0;
        // A pool at its plateau, idle connections gone at the end.
        let plateau: Vec<(f64, f64)> = (0..21)
            .map(|i| (ops(i), if i == 20 { 20.0 } else { 40.0 }))
            .collect();
        let fine = verdicts(&run(&plateau, 60.0), &options());
        assert!(
            fine.iter().all(|v| v.within),
            "{:?}",
            fine.iter().map(|v| &v.text).collect::<Vec<_>>()
        );
        // One connection never closed per 2,000 operations.
        let leak: Vec<(f64, f64)> = (0..21).map(|i| (ops(i), 40.0 + ops(i) / 2_000.0)).collect();
        let leaked = verdicts(&run(&leak, 60.0), &options());
        assert!(
            leaked
                .iter()
                .any(|v| !v.within && v.text.starts_with("sockets"))
        );
        assert!(
            leaked
                .iter()
                .any(|v| !v.within && v.text.starts_with("fds"))
        );
        // A run shorter than twice the idle timeout proves nothing about idle connections.
        let short = verdicts(&run(&plateau, 15.0), &options());
        assert!(!short[0].within, "{}", short[0].text);
    }

    #[test]
    fn the_mix_picks_every_kind_by_weight() {
        let mut rng = Rng(1);
        let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
        for _ in 0..100_000 {
            *counts.entry(pick(&mut rng)).or_default() += 1;
        }
        for (kind, weight) in MIX {
            let share = f64::from(counts[kind]) / 100_000.0;
            let expected = f64::from(weight) / 1000.0;
            assert!(
                (share - expected).abs() < 0.01,
                "{kind}: {share} vs {expected}"
            );
        }
    }
}

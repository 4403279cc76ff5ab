//! `perf`: the transfer + memory harness. Runs every workload for every client in its
//! own child process against `tools/local-s3` (data on tmpfs) and the null server, N
//! repetitions each, and writes JSON lines plus a markdown report into `measurements/`.
//!
//! ```text
//! cargo run --release -p perf -- run [--reps N] [--clients s3-wire,curl] [--servers null,local-s3]
//!     [--workloads put,get,...] [--tiny] [--out DIR] [--name NAME]
//! ```
//!
//! How usage is measured: the s3-wire child reads its own `/proc/self/status` (VmHWM,
//! VmRSS) and `/proc/self/stat` (utime, stime) just before it exits and prints them in its
//! JSON line; foreign programs (curl) run under `/usr/bin/time -f "%M %U %S"`. Both give
//! the whole process's peak RSS and CPU. The parent never reaps with `wait4` (that needs
//! `unsafe` or another dependency), and polling a foreign child's VmHWM misses the last
//! milliseconds. Wall time is the operation's own (the child's clock around the
//! workload, curl's `%{time_total}`), so process start-up is not charged to a transfer.

mod null;
mod procfs;
mod stats;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::{BucketName, ObjectKey};
use s3_wire_tokio::{Body, Client, UploadSource};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const BUCKET: &str = "perf";
const NULL_KEY: &str = "null-access-key";
const NULL_SECRET: &str = "null-secret-key";

/// Sizes of one run: the real ones or `--tiny` for the smoke test.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    single: u64,
    multipart: [u64; 2],
    download: u64,
    small_count: usize,
    small_size: u64,
    list_keys: usize,
}

impl Sizes {
    const REAL: Sizes = Sizes {
        single: 64 * MIB,
        multipart: [256 * MIB, GIB],
        download: GIB,
        small_count: 1000,
        small_size: 4096,
        list_keys: 10_000,
    };
    const TINY: Sizes = Sizes {
        single: MIB,
        multipart: [12 * MIB, 20 * MIB],
        download: 20 * MIB,
        small_count: 40,
        small_size: 4096,
        list_keys: 1500,
    };
}

/// One workload as the children see it: a name and its argument size.
#[derive(Clone, Debug)]
struct Workload {
    name: String,
    kind: &'static str,
    size: u64,
    part_size: u64,
    concurrency: usize,
    count: usize,
}

fn workloads(sizes: Sizes) -> Vec<Workload> {
    let w = |name: String, kind, size, part_size, concurrency, count| Workload {
        name,
        kind,
        size,
        part_size,
        concurrency,
        count,
    };
    let mut list = vec![
        w(
            format!("put-{}", human(sizes.single)),
            "put",
            sizes.single,
            0,
            0,
            0,
        ),
        w(
            format!("get-{}", human(sizes.single)),
            "get",
            sizes.single,
            0,
            0,
            0,
        ),
    ];
    for size in sizes.multipart {
        list.push(w(
            format!("upload-{}-8MiBx4", human(size)),
            "upload",
            size,
            8 * MIB,
            4,
            0,
        ));
        list.push(w(
            format!("upload-{}-defaults", human(size)),
            "upload",
            size,
            0,
            0,
            0,
        ));
    }
    list.push(w(
        format!("download-{}", human(sizes.download)),
        "download",
        sizes.download,
        0,
        0,
        0,
    ));
    list.push(w(
        format!("small-{}x{}", sizes.small_count, human(sizes.small_size)),
        "small",
        sizes.small_size,
        0,
        32,
        sizes.small_count,
    ));
    list.push(w(
        format!("list-{}", sizes.list_keys),
        "list",
        0,
        0,
        0,
        sizes.list_keys,
    ));
    list.push(w("construct".into(), "construct", 0, 0, 0, 0));
    list
}

fn human(bytes: u64) -> String {
    if bytes >= GIB && bytes.is_multiple_of(GIB) {
        format!("{}GiB", bytes / GIB)
    } else if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{}MiB", bytes / MIB)
    } else {
        format!("{}KiB", bytes / 1024)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("child") => child(&args[1..]),
        Some("null-server") => serve_null(),
        _ => Err("usage: perf run [--reps N] [--clients a,b] [--servers null,local-s3] [--workloads k1,k2] [--tiny] [--out DIR] [--name NAME]".into()),
    };
    if let Err(err) = result {
        eprintln!("perf: {err}");
        std::process::exit(1);
    }
}

/// `perf null-server`: a null server in the foreground, for trying other clients.
fn serve_null() -> Result<(), String> {
    let addr = null::NullServer::new().spawn().map_err(|e| e.to_string())?;
    println!("http://{addr}");
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Parsed `--flag value` options.
fn flags(args: &[String]) -> Result<BTreeMap<String, String>, String> {
    let mut map = BTreeMap::new();
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        let name = flag
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument {flag}"))?;
        if name == "tiny" {
            map.insert(name.to_owned(), "1".to_owned());
            continue;
        }
        let value = iter.next().ok_or_else(|| format!("{flag} needs a value"))?;
        map.insert(name.to_owned(), value.clone());
    }
    Ok(map)
}

// ---------------------------------------------------------------------------------------
// The child: one workload, one client (s3-wire), one JSON line per result.

fn child(args: &[String]) -> Result<(), String> {
    let kind = args.first().ok_or("child needs a workload")?.clone();
    let f = flags(&args[1..])?;
    let get = |name: &str| f.get(name).cloned().unwrap_or_default();
    let num = |name: &str| get(name).parse::<u64>().unwrap_or(0);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let build = || {
        Client::builder()
            .endpoint(get("endpoint"))
            .region("us-east-1")
            .static_credentials(get("access-key"), get("secret-key"), None)
            .proxy_from_env(false)
            .build()
            .map_err(|e| e.to_string())
    };
    let bucket = BucketName::new(BUCKET).map_err(|e| e.to_string())?;
    let key = ObjectKey::new(get("key")).map_err(|e| e.to_string())?;
    let (size, part_size, concurrency, count) = (
        num("size"),
        num("part-size"),
        num("concurrency") as usize,
        num("count") as usize,
    );
    let file = PathBuf::from(get("file"));
    let lines: Vec<Value> = runtime.block_on(async {
        if kind == "construct" {
            let (_, base_rss, ..) = procfs::self_usage();
            let start = Instant::now();
            let mut clients = Vec::new();
            for _ in 0..100 {
                clients.push(build()?);
            }
            let wall = start.elapsed().as_secs_f64() / 100.0;
            drop(clients);
            return Ok::<_, String>(vec![
                json!({"wall_s": wall, "bytes": 0, "base_kib": base_rss}),
            ]);
        }
        let client = build()?;
        // The data a PUT from memory sends exists before the baseline is taken.
        let data = (kind == "put").then(|| bytes::Bytes::from(vec![0x5au8; size as usize]));
        let (_, base_rss, ..) = procfs::self_usage();
        let start = Instant::now();
        let mut extra = Vec::new();
        let bytes = match kind.as_str() {
            "put" => {
                client
                    .put_object(
                        PutObject::new(bucket.clone(), key.clone()),
                        Body::from_bytes(data.unwrap()),
                    )
                    .await
                    .map_err(|e| e.to_string())?;
                size
            }
            "get" => {
                let mut body = client
                    .get_object(GetObject::new(bucket.clone(), key.clone()))
                    .await
                    .map_err(|e| e.to_string())?
                    .body;
                let mut got = 0u64;
                while let Some(chunk) = body.next_chunk().await {
                    got += chunk.map_err(|e| e.to_string())?.len() as u64;
                }
                if got != size {
                    return Err(format!("GET returned {got} bytes, expected {size}"));
                }
                got
            }
            "upload" => {
                let mut upload =
                    client.upload(bucket.clone(), key.clone(), UploadSource::file(&file));
                if part_size > 0 {
                    upload = upload.part_size(part_size).concurrency(concurrency);
                }
                let stored = upload.await.map_err(|e| e.to_string())?;
                if stored.size != size {
                    return Err(format!(
                        "upload stored {} bytes, expected {size}",
                        stored.size
                    ));
                }
                size
            }
            "download" => {
                let got = client
                    .download(bucket.clone(), key.clone(), file.as_path())
                    .await
                    .map_err(|e| e.to_string())?;
                if got.size != size {
                    return Err(format!("download got {} bytes, expected {size}", got.size));
                }
                got.size
            }
            "small" => {
                let payload = bytes::Bytes::from(vec![0x33u8; size as usize]);
                for phase in ["put", "get", "head"] {
                    let (wall, mut latencies) =
                        small_phase(&client, &bucket, phase, count, concurrency, &payload).await?;
                    latencies.sort_by(f64::total_cmp);
                    extra.push(json!({
                        "phase": phase,
                        "ops": count,
                        "wall_s": wall,
                        "ops_per_s": count as f64 / wall,
                        "p50_ms": stats::percentile(&latencies, 50.0).unwrap_or(0.0) * 1000.0,
                        "p99_ms": stats::percentile(&latencies, 99.0).unwrap_or(0.0) * 1000.0,
                    }));
                }
                size * count as u64 * 2
            }
            "list" => {
                let mut pages = client
                    .list_objects_v2_pages(ListObjectsV2::new(bucket.clone()).prefix("list/"));
                let mut keys = 0usize;
                while let Some(page) = pages.next_page().await {
                    keys += page.map_err(|e| e.to_string())?.result.contents.len();
                }
                if keys != count {
                    return Err(format!("listed {keys} keys, expected {count}"));
                }
                0
            }
            other => return Err(format!("unknown workload {other}")),
        };
        let wall = start.elapsed().as_secs_f64();
        if extra.is_empty() {
            Ok(vec![
                json!({"wall_s": wall, "bytes": bytes, "base_kib": base_rss}),
            ])
        } else {
            Ok(extra
                .into_iter()
                .map(|mut phase| {
                    phase["bytes"] = json!(size * count as u64);
                    phase["base_kib"] = json!(base_rss);
                    phase
                })
                .collect())
        }
    })?;
    drop(runtime);
    let (hwm, _, user, system) = procfs::self_usage();
    for mut line in lines {
        line["hwm_kib"] = json!(hwm);
        line["user_s"] = json!(user);
        line["sys_s"] = json!(system);
        println!("{line}");
    }
    Ok(())
}

async fn small_phase(
    client: &Client,
    bucket: &BucketName,
    phase: &str,
    count: usize,
    concurrency: usize,
    payload: &bytes::Bytes,
) -> Result<(f64, Vec<f64>), String> {
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency.max(1) {
        let (client, bucket, next, payload, phase) = (
            client.clone(),
            bucket.clone(),
            next.clone(),
            payload.clone(),
            phase.to_owned(),
        );
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    return Ok::<_, String>(latencies);
                }
                let key = ObjectKey::new(format!("small/{i:05}")).map_err(|e| e.to_string())?;
                let t = Instant::now();
                match phase.as_str() {
                    "put" => {
                        client
                            .put_object(
                                PutObject::new(bucket.clone(), key),
                                Body::from_bytes(payload.clone()),
                            )
                            .await
                            .map_err(|e| e.to_string())?;
                    }
                    "get" => {
                        let got = client
                            .get_object(GetObject::new(bucket.clone(), key))
                            .await
                            .map_err(|e| e.to_string())?
                            .body
                            .collect()
                            .await
                            .map_err(|e| e.to_string())?;
                        if got.len() != payload.len() {
                            return Err(format!("small GET: {} bytes", got.len()));
                        }
                    }
                    _ => {
                        client
                            .head_object(HeadObject::new(bucket.clone(), key))
                            .await
                            .map_err(|e| e.to_string())?;
                    }
                }
                latencies.push(t.elapsed().as_secs_f64());
            }
        });
    }
    let mut all = Vec::new();
    while let Some(done) = tasks.join_next().await {
        all.extend(done.map_err(|e| e.to_string())??);
    }
    Ok((start.elapsed().as_secs_f64(), all))
}

// ---------------------------------------------------------------------------------------
// The parent.

/// A running server the workloads target.
struct Server {
    name: &'static str,
    endpoint: String,
    access_key: String,
    secret_key: String,
    _local: Option<local_s3::LocalS3>,
}

fn run(args: &[String]) -> Result<(), String> {
    let f = flags(args)?;
    let reps: usize = f
        .get("reps")
        .map_or(Ok(5), |v| v.parse())
        .map_err(|_| "bad --reps")?;
    let sizes = if f.contains_key("tiny") {
        Sizes::TINY
    } else {
        Sizes::REAL
    };
    let list = |name: &str, default: &str| -> Vec<String> {
        f.get(name)
            .map_or(default, String::as_str)
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let clients = list("clients", "s3-wire,curl");
    let servers = list("servers", "null,local-s3");
    let only = list("workloads", "");
    let out = PathBuf::from(f.get("out").map_or("measurements", String::as_str));
    let name = f
        .get("name")
        .cloned()
        .unwrap_or_else(|| format!("perf-{}", today()));
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let command = std::iter::once("perf".to_owned())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let load_before = load();
    let scratch = PathBuf::from("/dev/shm").join(format!("s3w-perf-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let result = run_all(&scratch, reps, sizes, &clients, &servers, &only);
    let _ = std::fs::remove_dir_all(&scratch);
    let records = result?;
    let meta = json!({
        "meta": true,
        "date": now_utc(),
        "commit": git(&["rev-parse", "--short", "HEAD"]),
        "dirty": !git(&["status", "--porcelain", "--untracked-files=no"]).is_empty(),
        "cpu": cpu_model(),
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "load_before": load_before,
        "load_after": load(),
        "toolchain": tool_version("rustc", &["-V"]),
        "curl": tool_version("curl", &["-V"]).lines().next().unwrap_or("").to_owned(),
        "command": command,
        "reps": reps,
    });
    let mut jsonl = format!("{meta}\n");
    for record in &records {
        jsonl.push_str(&format!("{record}\n"));
    }
    let jsonl_path = out.join(format!("{name}.jsonl"));
    std::fs::write(&jsonl_path, jsonl).map_err(|e| e.to_string())?;
    let md = report(&meta, &records, &clients);
    let md_path = out.join(format!("{name}.md"));
    std::fs::write(&md_path, &md).map_err(|e| e.to_string())?;
    println!("{md}");
    eprintln!("wrote {} and {}", jsonl_path.display(), md_path.display());
    Ok(())
}

fn run_all(
    scratch: &Path,
    reps: usize,
    sizes: Sizes,
    clients: &[String],
    servers: &[String],
    only: &[String],
) -> Result<Vec<Value>, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let workloads: Vec<Workload> = workloads(sizes)
        .into_iter()
        .filter(|w| only.is_empty() || only.iter().any(|o| o == w.kind || *o == w.name))
        .collect();
    // Source files on tmpfs, one per upload size, plus the single-PUT file curl reads.
    let mut files = BTreeMap::new();
    for w in &workloads {
        if matches!(w.kind, "upload" | "put") && !files.contains_key(&w.size) {
            let path = scratch.join(format!("source-{}", human(w.size)));
            write_file(&path, w.size).map_err(|e| e.to_string())?;
            files.insert(w.size, path);
        }
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut records = Vec::new();
    for server_name in servers {
        let server = start_server(server_name, scratch)?;
        runtime.block_on(setup(&server, &workloads))?;
        for w in &workloads {
            for client in clients {
                for rep in 0..reps {
                    let target = scratch.join("download.bin");
                    let file = match w.kind {
                        "download" => target.clone(),
                        _ => files.get(&w.size).cloned().unwrap_or_default(),
                    };
                    let key = match w.kind {
                        "get" => "single/get".to_owned(),
                        "download" => "download/source".to_owned(),
                        _ => format!("{}/{client}", w.name),
                    };
                    let outcome = match client.as_str() {
                        "s3-wire" => run_child(&exe, &["child"], w, &server, &key, &file),
                        "boto3" => {
                            let python = boto3_python()?;
                            let peer = peers_dir().join("boto3/peer.py");
                            run_child(
                                &python,
                                &[peer.to_str().unwrap_or_default()],
                                w,
                                &server,
                                &key,
                                &file,
                            )
                        }
                        "curl" => run_curl(w, &server, &key, &file),
                        other => Err(format!("unknown client {other}")),
                    };
                    let _ = std::fs::remove_file(&target);
                    let base = json!({
                        "server": server.name, "workload": w.name, "client": client, "rep": rep,
                    });
                    match outcome {
                        Ok(None) => {
                            let mut record = base;
                            record["unsupported"] = json!(unsupported_reason(client, w.kind));
                            records.push(record);
                            break;
                        }
                        Ok(Some(lines)) => {
                            for line in lines {
                                let mut record = base.clone();
                                merge(&mut record, line);
                                eprintln!("{record}");
                                records.push(record);
                            }
                        }
                        Err(err) => {
                            let mut record = base;
                            record["error"] = json!(err);
                            eprintln!("{record}");
                            records.push(record);
                        }
                    }
                }
            }
        }
        drop(server);
    }
    Ok(records)
}

/// Why a client has no figure for a workload ("—" in the report).
fn unsupported_reason(client: &str, kind: &str) -> &'static str {
    match (client, kind) {
        ("curl", "upload" | "download") => {
            "curl has no multipart upload or parallel ranged download; it is the floor for single PUT/GET only"
        }
        ("curl", "small") => {
            "one process per request would measure process start-up, not the client"
        }
        ("curl", "list") => "curl does not paginate ListObjectsV2",
        ("curl", "construct") => "no client object to construct",
        _ => "not implemented by this peer",
    }
}

fn merge(into: &mut Value, from: Value) {
    if let (Some(into), Value::Object(from)) = (into.as_object_mut(), from) {
        for (k, v) in from {
            into.insert(k, v);
        }
    }
}

fn start_server(name: &str, scratch: &Path) -> Result<Server, String> {
    match name {
        "null" => {
            let addr = null::NullServer::new().spawn().map_err(|e| e.to_string())?;
            Ok(Server {
                name: "null",
                endpoint: format!("http://{addr}"),
                access_key: NULL_KEY.into(),
                secret_key: NULL_SECRET.into(),
                _local: None,
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
                _local: Some(local),
            })
        }
        other => Err(format!("unknown server {other}")),
    }
}

/// The bucket and the objects the GET, download and list workloads read.
async fn setup(server: &Server, workloads: &[Workload]) -> Result<(), String> {
    let client = Client::builder()
        .endpoint(server.endpoint.as_str())
        .region("us-east-1")
        .static_credentials(server.access_key.clone(), server.secret_key.clone(), None)
        .proxy_from_env(false)
        .build()
        .map_err(|e| e.to_string())?;
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
    for w in workloads {
        match w.kind {
            "get" => put("single/get".into(), w.size).await?,
            "download" => put("download/source".into(), w.size).await?,
            "list" => {
                let next = Arc::new(AtomicUsize::new(0));
                let mut tasks = tokio::task::JoinSet::new();
                for _ in 0..32 {
                    let (next, put, count) = (next.clone(), put.clone(), w.count);
                    tasks.spawn(async move {
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= count {
                                return Ok::<_, String>(());
                            }
                            put(format!("list/{i:06}"), 16).await?;
                        }
                    });
                }
                while let Some(done) = tasks.join_next().await {
                    done.map_err(|e| e.to_string())??;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The pattern the null server serves, so objects read the same from both servers.
fn pattern(len: u64) -> bytes::Bytes {
    (0..len).map(null::pattern_byte).collect::<Vec<u8>>().into()
}

fn write_file(path: &Path, len: u64) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let block: Vec<u8> = (0..MIB).map(|i| (i * 7 % 253) as u8).collect();
    let mut left = len;
    while left > 0 {
        let n = left.min(MIB) as usize;
        file.write_all(&block[..n])?;
        left -= n as u64;
    }
    file.flush()
}

/// `comparisons/perf-peers/` of the source tree this harness was built from.
fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../comparisons/perf-peers")
}

/// The boto3 peer's python: a venv under the target directory, made from the pinned
/// `comparisons/perf-peers/boto3/requirements.txt` on first use (its name carries a hash
/// of that file; a marker written last says it is complete).
fn boto3_python() -> Result<PathBuf, String> {
    static PYTHON: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let requirements = peers_dir().join("boto3/requirements.txt");
            let text = std::fs::read(&requirements)
                .map_err(|e| format!("{}: {e}", requirements.display()))?;
            let hash = text.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
            });
            let exe = std::env::current_exe().map_err(|e| e.to_string())?;
            let target = exe
                .parent()
                .and_then(Path::parent)
                .ok_or("no target directory")?;
            let venv = target.join(format!("perf-venv-{hash:016x}"));
            let python = venv.join("bin/python");
            if venv.join("s3w-complete").exists() {
                return Ok(python);
            }
            let _ = std::fs::remove_dir_all(&venv);
            let interpreter = std::env::var("S3W_PYTHON").unwrap_or_else(|_| "python3".into());
            let step = |command: &mut Command, what: &str| -> Result<(), String> {
                let status = command.status().map_err(|e| format!("{what}: {e}"))?;
                status
                    .success()
                    .then_some(())
                    .ok_or(format!("{what}: {status}"))
            };
            eprintln!("perf: making the boto3 venv {}", venv.display());
            step(
                Command::new(&interpreter).arg("-m").arg("venv").arg(&venv),
                "python3 -m venv",
            )?;
            step(
                Command::new(&python)
                    .args(["-m", "pip", "install", "--quiet", "--no-deps", "-r"])
                    .arg(&requirements),
                "pip install",
            )?;
            std::fs::write(venv.join("s3w-complete"), b"").map_err(|e| e.to_string())?;
            Ok(python)
        })
        .clone()
}

fn run_child(
    exe: &Path,
    prefix: &[&str],
    w: &Workload,
    server: &Server,
    key: &str,
    file: &Path,
) -> Result<Option<Vec<Value>>, String> {
    let output = Command::new(exe)
        .args(prefix)
        .arg(w.kind)
        .args([
            "--endpoint",
            &server.endpoint,
            "--access-key",
            &server.access_key,
        ])
        .args(["--secret-key", &server.secret_key, "--key", key])
        .args([
            "--size",
            &w.size.to_string(),
            "--part-size",
            &w.part_size.to_string(),
        ])
        .args([
            "--concurrency",
            &w.concurrency.to_string(),
            "--count",
            &w.count.to_string(),
        ])
        .arg("--file")
        .arg(file)
        .output()
        .map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!(
            "child failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).map_err(|e| format!("{e}: {line}")))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// curl: the floor for one PUT (of the same bytes, from a tmpfs file) and one GET to
/// /dev/null, under `/usr/bin/time`. Other workloads are not curl's ("—").
fn run_curl(
    w: &Workload,
    server: &Server,
    key: &str,
    file: &Path,
) -> Result<Option<Vec<Value>>, String> {
    let url = format!("{}/{BUCKET}/{key}", server.endpoint);
    let mut command = Command::new("/usr/bin/time");
    command.args([
        "-f",
        "%M %U %S",
        "curl",
        "-sS",
        "--fail",
        "--aws-sigv4",
        "aws:amz:us-east-1:s3",
    ]);
    command.args([
        "--user",
        &format!("{}:{}", server.access_key, server.secret_key),
    ]);
    command.args(["-w", "%{time_total} %{size_upload} %{size_download}"]);
    // curl 7.88 sends no payload hash; s3s wants the header (curl signs it).
    command.args(["-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]);
    match w.kind {
        "put" => command.arg("-T").arg(file),
        "get" => command.args(["-o", "/dev/null"]),
        _ => return Ok(None),
    };
    let output = command.arg(&url).output().map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!(
            "curl failed ({}): {}",
            output.status,
            stderr.trim()
        ));
    }
    let (rss, user, system) =
        procfs::parse_time_output(&stderr).ok_or_else(|| format!("no usage in {stderr:?}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<f64> = stdout
        .split_whitespace()
        .filter_map(|v| v.parse().ok())
        .collect();
    let [wall, up, down] = fields[..] else {
        return Err(format!("curl -w output {stdout:?}"));
    };
    if (up + down) as u64 != w.size {
        return Err(format!("curl moved {up}+{down} bytes, expected {}", w.size));
    }
    Ok(Some(vec![json!({
        "wall_s": wall, "bytes": w.size, "hwm_kib": rss, "user_s": user, "sys_s": system,
        "base_kib": Value::Null,
    })]))
}

// ---------------------------------------------------------------------------------------
// The report.

/// One cell: the medians of a (server, workload, client) over its repetitions.
#[derive(Debug, Clone, PartialEq)]
struct Cell {
    /// Throughput in MiB/s (transfers), ops/s (small objects), or 1/latency.
    rate: f64,
    wall: f64,
    cpu: f64,
    hwm_mib: f64,
    over_base_mib: Option<f64>,
    cpu_per_gib: Option<f64>,
    extra: String,
}

fn workload_label(record: &Value) -> String {
    let workload = record["workload"].as_str().unwrap_or("");
    match record["phase"].as_str() {
        Some(phase) => format!("{workload} {phase}"),
        None => workload.to_owned(),
    }
}

fn cells(records: &[Value]) -> BTreeMap<(String, String, String), Result<Cell, String>> {
    let mut groups: BTreeMap<(String, String, String), Vec<&Value>> = BTreeMap::new();
    for record in records.iter().filter(|r| r["unsupported"].is_null()) {
        let key = (
            record["server"].as_str().unwrap_or("").to_owned(),
            workload_label(record),
            record["client"].as_str().unwrap_or("").to_owned(),
        );
        groups.entry(key).or_default().push(record);
    }
    groups
        .into_iter()
        .map(|(key, group)| {
            let cell = summarize(&group);
            (key, cell)
        })
        .collect()
}

fn summarize(group: &[&Value]) -> Result<Cell, String> {
    if let Some(err) = group.iter().find_map(|r| r["error"].as_str()) {
        return Err(format!(
            "error: {}",
            err.chars().take(80).collect::<String>()
        ));
    }
    let values = |f: &dyn Fn(&Value) -> Option<f64>| -> Vec<f64> {
        group.iter().filter_map(|r| f(r)).collect()
    };
    let median = |v: Vec<f64>| stats::min_median_max(&v).map(|(_, m, _)| m);
    let minmax = |v: Vec<f64>| stats::min_median_max(&v);
    let wall = median(values(&|r| r["wall_s"].as_f64())).unwrap_or(0.0);
    let cpu = median(values(&|r| {
        Some(r["user_s"].as_f64()? + r["sys_s"].as_f64()?)
    }))
    .unwrap_or(0.0);
    let hwm_mib = median(values(&|r| Some(r["hwm_kib"].as_f64()? / 1024.0))).unwrap_or(0.0);
    let over_base_mib = median(values(&|r| {
        Some((r["hwm_kib"].as_f64()? - r["base_kib"].as_f64()?) / 1024.0)
    }));
    let bytes = group[0]["bytes"].as_f64().unwrap_or(0.0);
    let (rate, extra) = if let Some(_ops) = group[0]["ops_per_s"].as_f64() {
        let ops = values(&|r| r["ops_per_s"].as_f64());
        let (lo, m, hi) = minmax(ops).unwrap_or_default();
        let p50 = median(values(&|r| r["p50_ms"].as_f64())).unwrap_or(0.0);
        let p99 = median(values(&|r| r["p99_ms"].as_f64())).unwrap_or(0.0);
        (
            m,
            format!("{m:.0} ops/s [{lo:.0}–{hi:.0}], p50 {p50:.2} ms, p99 {p99:.2} ms"),
        )
    } else if bytes > 0.0 {
        let rates = values(&|r| Some(r["bytes"].as_f64()? / MIB as f64 / r["wall_s"].as_f64()?));
        let (lo, m, hi) = minmax(rates).unwrap_or_default();
        (m, format!("{m:.0} MiB/s [{lo:.0}–{hi:.0}]"))
    } else {
        let walls = values(&|r| r["wall_s"].as_f64());
        let (lo, m, hi) = minmax(walls).unwrap_or_default();
        let fmt = |s: f64| {
            if s < 0.01 {
                format!("{:.1} µs", s * 1e6)
            } else {
                format!("{:.0} ms", s * 1e3)
            }
        };
        (1.0 / m, format!("{} [{}–{}]", fmt(m), fmt(lo), fmt(hi)))
    };
    let cpu_per_gib = (bytes >= MIB as f64 && group[0]["ops_per_s"].is_null())
        .then(|| cpu / (bytes / GIB as f64));
    Ok(Cell {
        rate,
        wall,
        cpu,
        hwm_mib,
        over_base_mib,
        cpu_per_gib,
        extra,
    })
}

fn report(meta: &Value, records: &[Value], clients: &[String]) -> String {
    let cells = cells(records);
    let mut md = String::new();
    let s = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    let _ = writeln!(md, "# perf: transfers, CPU and memory, side by side\n");
    let _ = writeln!(md, "- date: {}", s(&meta["date"]));
    let _ = writeln!(
        md,
        "- commit: {}{}",
        s(&meta["commit"]),
        if meta["dirty"] == json!(true) {
            " (with uncommitted changes)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        md,
        "- machine: {}, {} cores available",
        s(&meta["cpu"]),
        meta["cores"]
    );
    let _ = writeln!(
        md,
        "- load average before: {}, after: {}",
        s(&meta["load_before"]),
        s(&meta["load_after"])
    );
    let _ = writeln!(
        md,
        "- toolchain: {}; {}",
        s(&meta["toolchain"]),
        s(&meta["curl"])
    );
    let _ = writeln!(md, "- command: `{}`", s(&meta["command"]));
    let _ = writeln!(
        md,
        "- repetitions: {} per cell, each in its own child process; median [min–max]\n",
        meta["reps"]
    );
    let mut rows: Vec<(String, String)> = cells
        .keys()
        .map(|(a, b, _)| (a.clone(), b.clone()))
        .collect();
    rows.dedup();
    let _ = writeln!(md, "## Medians\n");
    let _ = write!(md, "| server | workload |");
    for c in clients {
        let _ = write!(md, " {c} |");
    }
    let _ = writeln!(md, " s3-wire / best peer | s3-wire / curl |");
    let _ = write!(md, "|---|---|");
    for _ in clients {
        let _ = write!(md, "---:|");
    }
    let _ = writeln!(md, "---:|---:|");
    for (server, workload) in &rows {
        let _ = write!(md, "| {server} | {workload} |");
        let get = |c: &str| cells.get(&(server.clone(), workload.clone(), c.to_owned()));
        for c in clients {
            let text = match get(c) {
                Some(Ok(cell)) => cell.extra.clone(),
                Some(Err(e)) => e.clone(),
                None => "—".into(),
            };
            let _ = write!(md, " {text} |");
        }
        let ours = match get("s3-wire") {
            Some(Ok(cell)) => Some(cell.rate),
            _ => None,
        };
        let best_peer = clients
            .iter()
            .filter(|c| *c != "s3-wire" && *c != "curl")
            .filter_map(|c| match get(c) {
                Some(Ok(cell)) => Some(cell.rate),
                _ => None,
            })
            .fold(None, |acc: Option<f64>, r| {
                Some(acc.map_or(r, |a| a.max(r)))
            });
        let curl = match get("curl") {
            Some(Ok(cell)) => Some(cell.rate),
            _ => None,
        };
        let ratio = |other: Option<f64>| match (ours, other) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
            _ => "—".into(),
        };
        let _ = writeln!(md, " {} | {} |", ratio(best_peer), ratio(curl));
    }
    let mut reasons: Vec<String> = records
        .iter()
        .filter_map(|r| {
            let reason = r["unsupported"].as_str()?;
            let kind = r["workload"].as_str()?.split('-').next()?;
            Some(format!(
                "- {} / {kind}: — ({reason})",
                r["client"].as_str()?
            ))
        })
        .collect();
    reasons.sort();
    reasons.dedup();
    if !reasons.is_empty() {
        let _ = writeln!(md, "\nNot measured:\n\n{}", reasons.join("\n"));
    }
    let _ = writeln!(
        md,
        "\nConstruction is the mean of 100 `build()` calls in one process; its ratio compares 1/time.\n"
    );
    let _ = writeln!(md, "## CPU and memory (medians)\n");
    let _ = writeln!(
        md,
        "| server | workload | client | wall | CPU user+sys | CPU s/GiB | peak RSS (VmHWM) | over baseline |"
    );
    let _ = writeln!(md, "|---|---|---|---:|---:|---:|---:|---:|");
    for ((server, workload, client), cell) in &cells {
        let Ok(cell) = cell else { continue };
        let _ = writeln!(
            md,
            "| {server} | {workload} | {client} | {:.3} s | {:.2} s | {} | {:.1} MiB | {} |",
            cell.wall,
            cell.cpu,
            cell.cpu_per_gib.map_or("—".into(), |v| format!("{v:.2}")),
            cell.hwm_mib,
            cell.over_base_mib
                .map_or("—".into(), |v| format!("{v:.1} MiB")),
        );
    }
    let _ = writeln!(
        md,
        "\nCPU and peak RSS are the whole child process's (s3-wire: its own /proc at exit; curl: `/usr/bin/time`). \"over baseline\" is VmHWM minus VmRSS just before the workload started (after runtime, client and, for the PUT from memory, the 64 MiB buffer). The small-object phases share one process, so their CPU and RSS are the process's for all three phases."
    );
    md
}

// ---------------------------------------------------------------------------------------
// Environment.

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn tool_version(tool: &str, args: &[&str]) -> String {
    Command::new(tool)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|_| format!("{tool}: not found"))
}

fn git(args: &[&str]) -> String {
    tool_version("git", args)
}

fn now_utc() -> String {
    tool_version("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"])
}

fn today() -> String {
    tool_version("date", &["-u", "+%Y-%m-%d"])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(client: &str, wall: f64, hwm: f64) -> Value {
        json!({"server": "null", "workload": "put-64MiB", "client": client, "wall_s": wall,
               "bytes": 64 * MIB, "hwm_kib": hwm, "base_kib": 1024.0, "user_s": 0.1, "sys_s": 0.1})
    }

    #[test]
    fn cells_take_medians_and_report_ratios() {
        let records = vec![
            record("s3-wire", 0.5, 4096.0),
            record("s3-wire", 0.25, 2048.0),
            record("s3-wire", 1.0, 8192.0),
            record("curl", 0.5, 3072.0),
        ];
        let cells = cells(&records);
        let ours = cells[&("null".into(), "put-64MiB".into(), "s3-wire".into())]
            .clone()
            .unwrap();
        assert_eq!(ours.rate, 128.0);
        assert_eq!(ours.hwm_mib, 4.0);
        assert_eq!(ours.over_base_mib, Some(3.0));
        assert_eq!(ours.cpu_per_gib, Some(0.2 / 0.0625));
        let md = report(
            &json!({"reps": 3}),
            &records,
            &["s3-wire".into(), "curl".into()],
        );
        assert!(
            md.contains(
                "| null | put-64MiB | 128 MiB/s [64–256] | 128 MiB/s [128–128] | — | 1.00× |"
            ),
            "{md}"
        );
    }

    #[test]
    fn unsupported_and_failed_cells() {
        let records = vec![
            json!({"server": "null", "workload": "list-10", "client": "curl", "unsupported": "no"}),
            json!({"server": "null", "workload": "list-10", "client": "s3-wire", "error": "boom"}),
        ];
        let cells = cells(&records);
        assert!(!cells.contains_key(&("null".into(), "list-10".into(), "curl".into())));
        let md = report(
            &json!({"reps": 1}),
            &records,
            &["s3-wire".into(), "curl".into()],
        );
        assert!(md.contains("- curl / list: — (no)"), "{md}");
        assert_eq!(
            cells[&("null".into(), "list-10".into(), "s3-wire".into())],
            Err("error: boom".into())
        );
    }

    #[test]
    fn workload_names() {
        let names: Vec<String> = workloads(Sizes::REAL).into_iter().map(|w| w.name).collect();
        assert_eq!(
            names,
            [
                "put-64MiB",
                "get-64MiB",
                "upload-256MiB-8MiBx4",
                "upload-256MiB-defaults",
                "upload-1GiB-8MiBx4",
                "upload-1GiB-defaults",
                "download-1GiB",
                "small-1000x4KiB",
                "list-10000",
                "construct"
            ]
        );
    }

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
        runtime.block_on(round_trip(server, addr));
    }

    async fn round_trip(server: null::NullServer, addr: std::net::SocketAddr) {
        use s3_wire_tokio::s3_ops::ByteRange;
        use s3_wire_tokio::s3_ops::ops::delete_objects::DeleteObjects;
        let client = Client::builder()
            .endpoint(format!("http://{addr}"))
            .region("us-east-1")
            .static_credentials(NULL_KEY, NULL_SECRET, None)
            .proxy_from_env(false)
            .build()
            .unwrap();
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
        let dir = std::env::temp_dir().join(format!("perf-null-test-{}", std::process::id()));
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

//! The protocol between the `tools/perf` harness and a client under test (a *peer*).
//!
//! A peer is a program that runs one workload per process and prints its result as JSON
//! lines on stdout. The harness starts it as
//!
//! ```text
//! <peer> <put|get|upload|download|small|list|construct|tasks> --endpoint URL
//!     --access-key K --secret-key S --key KEY --size N --part-size N
//!     --concurrency N --count N --file PATH [--ca-file PEM] [--workload FILE]
//! ```
//!
//! against bucket [`BUCKET`], which the harness has made and filled (the objects `get`,
//! `download`, `list` and the download tasks read). `upload` with `--part-size 0` means the
//! client's own defaults; otherwise that part size at `--concurrency` parts at once. Every
//! peer checks what it moved (bytes stored, bytes read, keys listed) and fails loudly
//! otherwise.
//!
//! With `--ca-file`, the endpoint is `https://127.0.0.1:PORT` and its certificate is issued
//! by the CA in that PEM file (generated for the run): the peer trusts that CA, and no
//! other check is relaxed. A client that cannot be given a CA reports every workload as
//! unsupported.
//!
//! `tasks` runs a workload file in the format of AWS's S3 benchmarks ([`tasks`]): every
//! upload and download task it lists, `--concurrency` tasks at a time, each through the
//! client's own managed transfer; `--file` is the directory of the tasks' files when the
//! file says `filesOnDisk`.
//!
//! Each result line carries `wall_s` (the operation alone: no process start-up, no client
//! construction, no buffer filling), `bytes`, `base_kib` (VmRSS just before the operation),
//! `op_cpu_s` (the CPU its threads used during the operation, from their schedstat) and,
//! read from `/proc/self` just before exit, `hwm_kib` (VmHWM), `user_s` and `sys_s` (the
//! whole process's CPU).
//! The small-object workload prints one line per phase (`put`, `get`, `head`) with `ops`,
//! `ops_per_s`, `p50_ms` and `p99_ms`. A peer that cannot do a workload prints one line
//! `{"unsupported": "why"}` and exits 0.
//!
//! A Rust peer is a `main` around [`run`]:
//!
//! ```no_run
//! use perf_peer::{Args, Outcome, Stopwatch};
//!
//! perf_peer::run(std::env::args().skip(1), |args: Args| async move {
//!     match args.kind.as_str() {
//!         "put" => {
//!             let data = perf_peer::put_payload(&args);
//!             let watch = Stopwatch::start();
//!             // ... send `data` to args.key ...
//!             # drop(data);
//!             Ok(watch.moved(args.size))
//!         }
//!         _ => Ok(Outcome::Unsupported("not written yet".into())),
//!     }
//! });
//! ```

pub mod procfs;
pub mod tasks;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use bytes::Bytes;
use serde_json::{Value, json};

/// The bucket every workload uses.
pub const BUCKET: &str = "perf";

/// One workload's arguments, as the harness passes them.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Args {
    /// `put`, `get`, `upload`, `download`, `small`, `list` or `construct`.
    pub kind: String,
    /// `http://127.0.0.1:PORT`, path-style.
    pub endpoint: String,
    /// Static credentials; the region is always `us-east-1`.
    pub access_key: String,
    /// Static credentials' secret.
    pub secret_key: String,
    /// The object key of `put`, `get`, `upload` and `download`.
    pub key: String,
    /// Bytes of the object (`put`, `get`, `upload`, `download`) or of each small object.
    pub size: u64,
    /// `upload`'s part size; 0 means the client's defaults (and `concurrency` is 0 too).
    pub part_size: u64,
    /// Requests or parts in flight at once.
    pub concurrency: usize,
    /// Small objects per phase (`small`), or keys the listing must find (`list`).
    pub count: usize,
    /// `upload`'s source file, `download`'s destination; for `tasks`, the directory
    /// holding the tasks' files (`DIR/<key>`) when they are on disk.
    pub file: PathBuf,
    /// The PEM file of the CA that issued the endpoint's certificate (HTTPS endpoints);
    /// empty for plain HTTP.
    pub ca_file: PathBuf,
    /// `tasks`: the workload file (AWS's `*.run.json` format, see [`tasks`]).
    pub workload_file: PathBuf,
}

impl Args {
    /// Parses `<kind> --flag value ...` (the program name already skipped).
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
        let mut iter = args.into_iter();
        let mut out = Args {
            kind: iter.next().ok_or("no workload given")?,
            ..Args::default()
        };
        while let Some(flag) = iter.next() {
            let value = iter.next().ok_or_else(|| format!("{flag} needs a value"))?;
            let number = || {
                value
                    .parse::<u64>()
                    .map_err(|_| format!("{flag}: not a number: {value}"))
            };
            match flag.as_str() {
                "--endpoint" => out.endpoint = value,
                "--access-key" => out.access_key = value,
                "--secret-key" => out.secret_key = value,
                "--key" => out.key = value,
                "--file" => out.file = PathBuf::from(value),
                "--ca-file" => out.ca_file = PathBuf::from(value),
                "--workload" => out.workload_file = PathBuf::from(value),
                "--size" => out.size = number()?,
                "--part-size" => out.part_size = number()?,
                "--concurrency" => out.concurrency = number()? as usize,
                "--count" => out.count = number()? as usize,
                _ => return Err(format!("unknown flag {flag}")),
            }
        }
        Ok(out)
    }

    /// The harness's flags for these arguments: the inverse of [`Args::parse`].
    pub fn to_flags(&self) -> Vec<String> {
        let mut v = vec![self.kind.clone()];
        for (flag, value) in [
            ("--endpoint", self.endpoint.clone()),
            ("--access-key", self.access_key.clone()),
            ("--secret-key", self.secret_key.clone()),
            ("--key", self.key.clone()),
            ("--size", self.size.to_string()),
            ("--part-size", self.part_size.to_string()),
            ("--concurrency", self.concurrency.to_string()),
            ("--count", self.count.to_string()),
            ("--file", self.file.to_string_lossy().into_owned()),
        ] {
            v.push(flag.to_owned());
            v.push(value);
        }
        // Only when set: a plain-HTTP, single-workload run passes what it always did.
        for (flag, path) in [
            ("--ca-file", &self.ca_file),
            ("--workload", &self.workload_file),
        ] {
            if !path.as_os_str().is_empty() {
                v.push(flag.to_owned());
                v.push(path.to_string_lossy().into_owned());
            }
        }
        v
    }

    /// The CA PEM of `--ca-file`, read; `None` for plain HTTP.
    pub fn ca_pem(&self) -> Result<Option<Vec<u8>>, String> {
        if self.ca_file.as_os_str().is_empty() {
            return Ok(None);
        }
        std::fs::read(&self.ca_file)
            .map(Some)
            .map_err(|e| format!("--ca-file {}: {e}", self.ca_file.display()))
    }
}

/// The `put` workload's bytes (`size` of 0x5a), made before the stopwatch starts.
pub fn put_payload(args: &Args) -> Bytes {
    Bytes::from(vec![0x5a; args.size as usize])
}

/// What one workload produced.
#[derive(Debug)]
#[non_exhaustive]
pub enum Outcome {
    /// One timed operation that moved `bytes`.
    Moved {
        /// The operation's wall time.
        wall_s: f64,
        /// Bytes moved.
        bytes: u64,
        /// VmRSS (KiB) when the operation started.
        base_kib: u64,
        /// CPU seconds the process's threads used during the operation.
        op_cpu_s: f64,
    },
    /// The small-object workload's phases.
    Phases {
        /// VmRSS (KiB) before the first phase.
        base_kib: u64,
        /// One entry per phase, in order.
        phases: Vec<Phase>,
    },
    /// This client cannot do the workload, and why.
    Unsupported(String),
}

/// One phase of the small-object workload.
#[derive(Debug)]
pub struct Phase {
    /// `put`, `get` or `head`.
    pub op: SmallOp,
    /// Requests made.
    pub ops: usize,
    /// Wall time of the whole phase.
    pub wall_s: f64,
    /// Each request's latency in seconds, sorted.
    pub latencies: Vec<f64>,
    /// Payload bytes moved by the phase.
    pub bytes: u64,
    /// CPU seconds the process's threads used during the phase.
    pub op_cpu_s: f64,
}

/// A request of the small-object workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmallOp {
    /// PUT `size` bytes of 0x33.
    Put,
    /// GET it back (the peer checks the length).
    Get,
    /// HEAD it.
    Head,
}

impl SmallOp {
    /// The phase's name in the result line.
    pub fn name(self) -> &'static str {
        match self {
            SmallOp::Put => "put",
            SmallOp::Get => "get",
            SmallOp::Head => "head",
        }
    }
}

/// Times one operation from the moment the client and its data are ready.
#[derive(Debug)]
pub struct Stopwatch {
    usage: procfs::Usage,
    cpu_ns: Option<u64>,
    start: Instant,
}

impl Stopwatch {
    /// Takes the RSS and CPU baseline and starts the clock.
    pub fn start() -> Stopwatch {
        Stopwatch {
            usage: procfs::self_usage(),
            cpu_ns: procfs::threads_cpu_ns(),
            start: Instant::now(),
        }
    }

    /// Wall and CPU seconds since the start: the threads' schedstat nanoseconds, or
    /// the process's 10 ms ticks where the kernel has no schedstat.
    fn elapsed(&self) -> (f64, f64) {
        let wall = self.start.elapsed().as_secs_f64();
        let cpu = match (self.cpu_ns, procfs::threads_cpu_ns()) {
            (Some(start), Some(now)) => now.saturating_sub(start) as f64 / 1e9,
            _ => {
                let now = procfs::self_usage();
                (now.user_s + now.sys_s) - (self.usage.user_s + self.usage.sys_s)
            }
        };
        (wall, cpu.max(0.0))
    }

    /// The operation ended having moved `bytes`.
    pub fn moved(self, bytes: u64) -> Outcome {
        let elapsed = self.elapsed();
        self.moved_in(elapsed, bytes)
    }

    /// The operation took `(wall, CPU)` seconds, read earlier ([`on_threads`]), and moved
    /// `bytes`.
    pub fn moved_in(self, (wall_s, op_cpu_s): (f64, f64), bytes: u64) -> Outcome {
        Outcome::Moved {
            wall_s,
            bytes,
            base_kib: self.usage.rss_kib,
            op_cpu_s,
        }
    }
}

/// The `construct` workload: the mean time of 100 `build` calls, all clients kept alive
/// until the end (so dropping one is not what is timed).
pub fn construct<C>(mut build: impl FnMut() -> Result<C, String>) -> Result<Outcome, String> {
    const ROUNDS: u32 = 100;
    let watch = Stopwatch::start();
    let clients = (0..ROUNDS)
        .map(|_| build())
        .collect::<Result<Vec<C>, _>>()?;
    let (wall_s, op_cpu_s) = watch.elapsed();
    drop(clients);
    Ok(Outcome::Moved {
        wall_s: wall_s / f64::from(ROUNDS),
        bytes: 0,
        base_kib: watch.usage.rss_kib,
        op_cpu_s: op_cpu_s / f64::from(ROUNDS),
    })
}

/// Checks what a peer moved or found against what the workload asked for, so a client
/// that answers quickly with the wrong result fails instead of scoring:
/// `expect("bytes stored", stored, size)?`.
pub fn expect<T: PartialEq + std::fmt::Display>(
    what: &str,
    got: T,
    expected: T,
) -> Result<(), String> {
    if got == expected {
        Ok(())
    } else {
        Err(format!("{what}: {got}, expected {expected}"))
    }
}

/// The key of small object `i`.
pub fn small_key(i: usize) -> String {
    format!("small/{i:05}")
}

/// The small-object workload: `args.count` objects of `args.size` bytes, PUT, then GET,
/// then HEAD, `args.concurrency` requests at a time, each phase timed with per-request
/// latencies. `request(op, key, payload)` makes one request; for `Get` it must check
/// that `payload.len()` bytes came back.
pub async fn small_objects<F, Fut>(args: &Args, request: F) -> Result<Outcome, String>
where
    F: Fn(SmallOp, String, Bytes) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let payload = Bytes::from(vec![0x33u8; args.size as usize]);
    let request = Arc::new(request);
    let base_kib = procfs::self_usage().rss_kib;
    let mut phases = Vec::new();
    for op in [SmallOp::Put, SmallOp::Get, SmallOp::Head] {
        let next = Arc::new(AtomicUsize::new(0));
        let watch = Stopwatch::start();
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..args.concurrency.max(1) {
            let (next, request, payload, count) =
                (next.clone(), request.clone(), payload.clone(), args.count);
            tasks.spawn(async move {
                let mut latencies = Vec::new();
                while let Some(i) = next_small(&next, count) {
                    let t = Instant::now();
                    request(op, small_key(i), payload.clone()).await?;
                    latencies.push(t.elapsed().as_secs_f64());
                }
                Ok::<_, String>(latencies)
            });
        }
        let mut latencies = Vec::new();
        while let Some(done) = tasks.join_next().await {
            latencies.extend(done.map_err(|e| e.to_string())??);
        }
        phases.push(Phase::new(op, args, latencies, watch.elapsed()));
    }
    Ok(Outcome::Phases { base_kib, phases })
}

/// [`small_objects`] for a blocking client: `request` called from plain threads, one per
/// request in flight.
pub fn small_objects_on_threads(
    args: &Args,
    request: impl Fn(SmallOp, String, Bytes) -> Result<(), String> + Sync,
) -> Result<Outcome, String> {
    let payload = Bytes::from(vec![0x33u8; args.size as usize]);
    let base_kib = procfs::self_usage().rss_kib;
    let mut phases = Vec::new();
    for op in [SmallOp::Put, SmallOp::Get, SmallOp::Head] {
        let next = AtomicUsize::new(0);
        let watch = Stopwatch::start();
        let (done, elapsed) = on_threads(args.concurrency.max(1), &watch, || {
            let mut latencies = Vec::new();
            while let Some(i) = next_small(&next, args.count) {
                let t = Instant::now();
                request(op, small_key(i), payload.clone())?;
                latencies.push(t.elapsed().as_secs_f64());
            }
            Ok(latencies)
        });
        let mut latencies = Vec::new();
        for worker in done {
            latencies.extend(worker?);
        }
        phases.push(Phase::new(op, args, latencies, elapsed));
    }
    Ok(Outcome::Phases { base_kib, phases })
}

/// The index of the next small object to send, while any are left.
fn next_small(next: &AtomicUsize, count: usize) -> Option<usize> {
    Some(next.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < count)
}

impl Phase {
    fn new(
        op: SmallOp,
        args: &Args,
        mut latencies: Vec<f64>,
        (wall_s, op_cpu_s): (f64, f64),
    ) -> Self {
        latencies.sort_by(f64::total_cmp);
        Phase {
            op,
            ops: args.count,
            wall_s,
            latencies,
            bytes: args.size * args.count as u64,
            op_cpu_s,
        }
    }
}

/// Runs `work` on `threads` plain threads and returns each one's result, with `watch`'s
/// `(wall, CPU)` seconds read once every thread has finished but before any exits: an
/// exited thread takes its CPU time out of the threads' schedstat sum.
pub fn on_threads<T: Send>(
    threads: usize,
    watch: &Stopwatch,
    work: impl Fn() -> Result<T, String> + Sync,
) -> (Vec<Result<T, String>>, (f64, f64)) {
    let finished = std::sync::Barrier::new(threads + 1);
    let measured = std::sync::Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    // A panic too must reach the barriers, or the others wait forever.
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&work))
                        .unwrap_or_else(|_| Err("a worker thread panicked".into()));
                    finished.wait();
                    measured.wait();
                    result
                })
            })
            .collect();
        finished.wait();
        let elapsed = watch.elapsed();
        measured.wait();
        let results = workers
            .into_iter()
            .map(|worker| worker.join().expect("a worker's panic is caught"))
            .collect();
        (results, elapsed)
    })
}

/// The `p`-th percentile (0–100) of `sorted` by the nearest-rank method.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// The JSON result lines of `outcome`, with this process's usage `at_exit`.
pub fn result_lines(outcome: &Outcome, at_exit: procfs::Usage) -> Vec<Value> {
    let usage = |mut line: Value| {
        line["hwm_kib"] = json!(at_exit.hwm_kib);
        line["user_s"] = json!(at_exit.user_s);
        line["sys_s"] = json!(at_exit.sys_s);
        line
    };
    match outcome {
        Outcome::Unsupported(why) => vec![json!({ "unsupported": why })],
        Outcome::Moved {
            wall_s,
            bytes,
            base_kib,
            op_cpu_s,
        } => vec![usage(
            json!({"wall_s": wall_s, "bytes": bytes, "base_kib": base_kib, "op_cpu_s": op_cpu_s}),
        )],
        Outcome::Phases { base_kib, phases } => phases
            .iter()
            .map(|p| {
                let ms = |q| percentile(&p.latencies, q).unwrap_or(0.0) * 1000.0;
                usage(json!({
                    "phase": p.op.name(), "ops": p.ops, "wall_s": p.wall_s,
                    "ops_per_s": p.ops as f64 / p.wall_s, "p50_ms": ms(50.0), "p99_ms": ms(99.0),
                    "bytes": p.bytes, "base_kib": base_kib, "op_cpu_s": p.op_cpu_s,
                }))
            })
            .collect(),
    }
}

/// Picks the peers' tokio runtime: `multi-thread` (the default: what most services run,
/// one worker per core) or `current-thread`, for finding what the scheduler costs.
pub const RUNTIME_VAR: &str = "PERF_PEER_RUNTIME";

/// A peer's whole `main`: parses `args` (`std::env::args().skip(1)` for most peers),
/// runs `workload` on a tokio runtime (multi-thread unless [`RUNTIME_VAR`] says
/// otherwise), drops the runtime, reads this process's usage and prints the result lines.
/// On an error it prints `perf peer: <error>` to stderr and exits 1.
pub fn run<F, Fut>(args: impl IntoIterator<Item = String>, workload: F)
where
    F: FnOnce(Args) -> Fut,
    Fut: Future<Output = Result<Outcome, String>>,
{
    let result = Args::parse(args).and_then(|args| {
        let mut runtime = match std::env::var(RUNTIME_VAR).as_deref() {
            Ok("current-thread") => tokio::runtime::Builder::new_current_thread(),
            Ok("multi-thread") | Err(_) => tokio::runtime::Builder::new_multi_thread(),
            Ok(other) => {
                return Err(format!(
                    "{RUNTIME_VAR}={other}: not current-thread or multi-thread"
                ));
            }
        };
        let runtime = runtime.enable_all().build().map_err(|e| e.to_string())?;
        let outcome = runtime.block_on(workload(args));
        drop(runtime);
        outcome
    });
    match result {
        Ok(outcome) => {
            for line in result_lines(&outcome, procfs::self_usage()) {
                println!("{line}");
            }
        }
        Err(err) => {
            eprintln!("perf peer: {err}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_round_trip_through_flags() {
        let args = Args {
            kind: "upload".into(),
            endpoint: "http://127.0.0.1:9".into(),
            access_key: "ak".into(),
            secret_key: "sk".into(),
            key: "k/1".into(),
            size: 1 << 30,
            part_size: 8 << 20,
            concurrency: 4,
            count: 0,
            file: "/dev/shm/x".into(),
            ca_file: PathBuf::new(),
            workload_file: PathBuf::new(),
        };
        let parsed = Args::parse(args.to_flags()).unwrap();
        assert_eq!(format!("{parsed:?}"), format!("{args:?}"));
        assert!(!args.to_flags().contains(&"--ca-file".to_owned()));
        let tls = Args {
            kind: "tasks".into(),
            ca_file: "/dev/shm/ca.pem".into(),
            workload_file: "w/upload.run.json".into(),
            ..args
        };
        let parsed = Args::parse(tls.to_flags()).unwrap();
        assert_eq!(format!("{parsed:?}"), format!("{tls:?}"));
        assert_eq!(
            parsed.ca_pem().unwrap_err().split(':').next(),
            Some("--ca-file /dev/shm/ca.pem")
        );
        assert_eq!(
            Args::parse(["get".into(), "--size".into(), "ten".into()]).unwrap_err(),
            "--size: not a number: ten"
        );
        assert_eq!(
            Args::parse(["get".into(), "--bogus".into(), "1".into()]).unwrap_err(),
            "unknown flag --bogus"
        );
        assert!(Args::parse(["get".into(), "--key".into()]).is_err());
    }

    #[test]
    fn expect_names_what_differs() {
        assert_eq!(expect("keys listed", 3, 3), Ok(()));
        assert_eq!(
            expect("bytes stored", 5u64, 8),
            Err("bytes stored: 5, expected 8".to_owned())
        );
    }

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&values, 50.0), Some(50.0));
        assert_eq!(percentile(&values, 99.0), Some(99.0));
        assert_eq!(percentile(&values, 100.0), Some(100.0));
        assert_eq!(percentile(&values, 0.0), Some(1.0));
        assert_eq!(percentile(&[5.0, 9.0], 50.0), Some(5.0));
        assert_eq!(percentile(&[5.0, 9.0], 99.0), Some(9.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    /// The multi-thread runtime `run` gives a peer, on two workers.
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap()
    }

    #[test]
    fn small_objects_runs_three_phases_over_every_key() {
        let runtime = runtime();
        let args = Args {
            size: 10,
            count: 25,
            concurrency: 4,
            ..Args::default()
        };
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        let outcome = runtime
            .block_on(small_objects(&args, move |op, key, payload| {
                log.lock().unwrap().push((op, key, payload.len()));
                async { Ok(()) }
            }))
            .unwrap();
        let Outcome::Phases { phases, .. } = &outcome else {
            panic!("{outcome:?}")
        };
        let ops: Vec<_> = phases.iter().map(|p| (p.op, p.ops, p.bytes)).collect();
        assert_eq!(
            ops,
            [
                (SmallOp::Put, 25, 250),
                (SmallOp::Get, 25, 250),
                (SmallOp::Head, 25, 250)
            ]
        );
        assert!(phases.iter().all(|p| p.latencies.len() == 25));
        let mut seen = seen.lock().unwrap().clone();
        seen.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.name().cmp(b.0.name())));
        assert_eq!(seen.len(), 75);
        assert_eq!(seen[0], (SmallOp::Get, "small/00000".into(), 10));
        assert_eq!(seen[74].1, "small/00024");
        let lines = result_lines(
            &outcome,
            procfs::Usage {
                hwm_kib: 9,
                rss_kib: 8,
                user_s: 0.5,
                sys_s: 0.25,
            },
        );
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1]["phase"], "get");
        assert_eq!(lines[1]["hwm_kib"], 9);
        assert!(lines[1]["ops_per_s"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn a_failed_request_fails_the_workload() {
        let runtime = runtime();
        let args = Args {
            size: 1,
            count: 3,
            concurrency: 2,
            ..Args::default()
        };
        let err = runtime
            .block_on(small_objects(&args, |op, key, _| async move {
                if op == SmallOp::Get && key.ends_with('1') {
                    Err(format!("GET {key}: short"))
                } else {
                    Ok(())
                }
            }))
            .unwrap_err();
        assert_eq!(err, "GET small/00001: short");
    }

    #[test]
    fn unsupported_and_moved_lines() {
        let at_exit = procfs::Usage::default();
        assert_eq!(
            result_lines(&Outcome::Unsupported("no".into()), at_exit),
            [json!({"unsupported": "no"})]
        );
        let built = construct(|| Ok::<_, String>(7u8)).unwrap();
        let line = &result_lines(&built, at_exit)[0];
        assert_eq!(line["bytes"], 0);
        assert!(line["wall_s"].as_f64().unwrap() >= 0.0);
        assert!(construct(|| Err::<u8, _>("bad".to_owned())).is_err());
    }
}

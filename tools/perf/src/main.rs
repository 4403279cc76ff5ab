//! `perf`: the transfer + memory harness. Runs every workload for every client in its
//! own child process against `tools/local-s3` (data on tmpfs) and the null server, N
//! repetitions each, and writes JSON lines plus a markdown report into `measurements/`.
//!
//! ```text
//! cargo run --release -p perf -- run [--reps N] [--clients s3-wire,curl,...]
//!     [--servers null-tls,null,local-s3] [--workloads put,get,tasks,...] [--tiny]
//!     [--weight] [--out DIR] [--name NAME]
//! cargo run --release -p perf -- null-server [--tls]
//! cargo run --release -p perf -- write-workloads
//! cargo run --release -p perf -- cli [--reps 3] [--clients s3w,rclone,aws] [--tiny]
//! cargo run --release -p perf -- soak [--ops N] [--servers null,local-s3] ...
//! ```
//!
//! Servers: `null-tls` (the null server behind rustls, HTTP/1.1, a CA and certificate for
//! 127.0.0.1 and localhost generated per run, every client told to trust that CA and
//! nothing else relaxed), `null` (the same over plain HTTP) and `local-s3` (plain HTTP,
//! data on tmpfs). The report's first table is `null-tls`: S3 is reached over TLS.
//!
//! Workloads: the built-in ones ([`workloads`]), then every workload file of
//! `tools/perf/workloads/` in the format of AWS's S3 benchmarks (awslabs/
//! aws-crt-s3-benchmarks, `*.run.json` version 2; `perf_peer::tasks`), run as the `tasks`
//! workload: each client moves every listed object, 64 at a time, from and to files on
//! disk (under `$TMPDIR`) or memory as the file says. `perf write-workloads` writes the
//! repository's files ([`workloads::task_files_of_repository`]); `--tiny` runs
//! `tools/perf/workloads/tiny/` instead.
//!
//! `soak` ([`soak`]) is the long mixed run that shows whether memory, descriptors,
//! connections, threads or tasks grow over 100,000 operations, faults included.
//!
//! `S3W_PERF_PAYLOAD_SIGNING=unsigned-with-checksum` runs s3-wire with checksummed payloads
//! unsigned over plain HTTP (`ClientBuilder::payload_signing`; default `signed`);
//! `S3W_PERF_SYNC_FILES=off` runs its downloads to files without syncing each file
//! (`TransferOptions::sync_files`, the Python package's `sync_files`; default `on`), as
//! the other clients write.
//!
//! Clients: `s3-wire` (this binary's `child`), `curl`, and every directory of
//! `comparisons/perf-peers/` holding a Rust peer (`s3-wire-0.1.1`, `object_store`,
//! `aws-sdk-s3`), built on first use, or a Python one (`boto3`, `boto3-crt`, `obstore`,
//! `s3fs`, `s3wire-python`: `peer.py` in a venv of its pinned `requirements.txt`, made on
//! first use; s3wire-python's also gets `python/` built in release mode once per run). All
//! speak the protocol of the `perf-peer` crate.
//!
//! How usage is measured: a peer reads its own `/proc/self/status` (VmHWM, VmRSS) and
//! `/proc/self/stat` (utime, stime) just before it exits and prints them in its JSON
//! line, with the CPU of the operation alone (its threads' schedstat before and after);
//! curl runs under `/usr/bin/time -f "%M %U %S"`. Both give the whole process's
//! peak RSS and CPU. The parent never reaps with `wait4` (that needs `unsafe` or another
//! dependency), and polling a foreign child's VmHWM misses the last milliseconds. Wall
//! time is the operation's own (the peer's clock around the workload, curl's
//! `%{time_total}`), so process start-up is not charged to a transfer.
//!
//! `perf cli` ([`cli`]) runs the command-line clients instead (s3w, rclone, the AWS CLI)
//! as a user does, one process per operation.
//!
//! Modules: [`workloads`] (what runs), [`servers`] (where), [`clients`] (who, and how
//! each is started), [`harness`] (the loop), [`report`], [`machine`], [`null`] (the null
//! server), [`tls`] (the `null-tls` certificates), [`child`] (s3-wire as a peer).

mod child;
mod cli;
mod clients;
mod harness;
mod machine;
mod moto;
mod null;
mod report;
mod servers;
mod soak;
mod stats;
mod tls;
mod venv;
mod workloads;

use std::time::Duration;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") => harness::run(&args[1..]),
        Some("child") => {
            child::main();
            Ok(())
        }
        Some("null-server") => serve_null(&args[1..]),
        Some("write-workloads") => workloads::write_repository_files(),
        Some("cli") => cli::run(&args[1..]),
        Some("soak") => soak::run(&args[1..]),
        Some("soak-child") => soak::child(&args[1..]),
        _ => Err("usage: perf run [--reps N] [--clients a,b] [--servers null,local-s3] [--workloads k1,k2] [--tiny] [--weight] [--out DIR] [--name NAME] | perf null-server [--tls] | perf write-workloads | perf cli [--reps N] [--clients s3w,rclone,aws] [--tiny] [--out DIR] [--name NAME] | perf soak [--ops N] [--servers null,local-s3] [--concurrency N] [--fault-share F] [--sample-ms MS] [--out DIR] [--name NAME]".into()),
    };
    if let Err(err) = result {
        eprintln!("perf: {err}");
        std::process::exit(1);
    }
}

/// `perf null-server [--tls]`: a null server in the foreground, for trying other clients;
/// with `--tls`, its CA's PEM is written to the current directory (`ca.pem`).
fn serve_null(args: &[String]) -> Result<(), String> {
    let server = null::NullServer::new();
    let url = match args {
        [] => format!("http://{}", server.spawn().map_err(|e| e.to_string())?),
        [flag] if flag == "--tls" => {
            let pki = tls::generate(std::path::Path::new("."))?;
            let addr = server.spawn_tls(pki.server).map_err(|e| e.to_string())?;
            format!("https://{addr} (CA: {})", pki.ca_file.display())
        }
        _ => return Err("usage: perf null-server [--tls]".into()),
    };
    println!("{url}");
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

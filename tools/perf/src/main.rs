//! `perf`: the transfer + memory harness. Runs every workload for every client in its
//! own child process against `tools/local-s3` (data on tmpfs) and the null server, N
//! repetitions each, and writes JSON lines plus a markdown report into `measurements/`.
//!
//! ```text
//! cargo run --release -p perf -- run [--reps N] [--clients s3-wire,curl,...]
//!     [--servers null,local-s3] [--workloads put,get,...] [--tiny] [--weight]
//!     [--out DIR] [--name NAME]
//! cargo run --release -p perf -- null-server
//! cargo run --release -p perf -- cli [--reps 3] [--clients s3w,rclone,aws] [--tiny]
//! cargo run --release -p perf -- soak [--ops N] [--servers null,local-s3] ...
//! ```
//!
//! `soak` ([`soak`]) is the long mixed run that shows whether memory, descriptors,
//! connections, threads or tasks grow over 100,000 operations, faults included.
//!
//! `S3W_PERF_PAYLOAD_SIGNING=unsigned-with-checksum` runs s3-wire with checksummed payloads
//! unsigned over plain HTTP (`ClientBuilder::payload_signing`; default `signed`).
//!
//! Clients: `s3-wire` (this binary's `child`), `boto3`, `curl`, and every directory of
//! `comparisons/perf-peers/` holding a Rust peer (`s3-wire-0.1.1`, `object_store`,
//! `aws-sdk-s3`), built on first use. All speak the protocol of the `perf-peer` crate.
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
//! server), [`child`] (s3-wire as a peer).

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
        Some("null-server") => serve_null(),
        Some("cli") => cli::run(&args[1..]),
        Some("soak") => soak::run(&args[1..]),
        Some("soak-child") => soak::child(&args[1..]),
        _ => Err("usage: perf run [--reps N] [--clients a,b] [--servers null,local-s3] [--workloads k1,k2] [--tiny] [--weight] [--out DIR] [--name NAME] | perf null-server | perf cli [--reps N] [--clients s3w,rclone,aws] [--tiny] [--out DIR] [--name NAME] | perf soak [--ops N] [--servers null,local-s3] [--concurrency N] [--fault-share F] [--sample-ms MS] [--out DIR] [--name NAME]".into()),
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

//! `perf cli`: the command-line clients side by side on local-s3 (or moto, `--server
//! moto`) — s3w, rclone and the AWS CLI v1 — one process per operation, as a user runs
//! them: one big file up and down, 2,000 small files up and down, `ls -r` of 10,000
//! keys, `rm -r` of 2,000 keys. Interleaved (every client once per repetition of a workload before the next
//! repetition), each run's wall time and maximum RSS taken by `/usr/bin/time`, every result
//! checked (sizes, counts), medians over the repetitions.
//!
//! ```text
//! cargo run --release -p perf -- cli [--reps 3] [--clients s3w,rclone,aws] [--tiny]
//!     [--server local-s3|moto] [--out DIR] [--name NAME]
//!     [--workloads big-up,big-down,small-up,small-down,ls-r,rm-r]
//! ```
//!
//! Peers come from the registries: rclone from Debian (`apt-get install rclone`, tried once
//! if it is missing), the AWS CLI v1 from PyPI into a venv under the target directory
//! ([`AWSCLI`]); moto from PyPI too ([`crate::moto`]). A peer that cannot be had is
//! skipped with a line saying why.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::{MIB, machine, servers, stats};

/// The AWS CLI v1 the venv gets (its botocore and s3transfer follow from it).
const AWSCLI: &str = "awscli==1.46.2";

/// Sizes of one run.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    big: u64,
    small_count: usize,
    small_size: u64,
    list_keys: usize,
}

const REAL: Sizes = Sizes {
    big: 1024 * MIB,
    small_count: 2000,
    small_size: 4096,
    list_keys: 10_000,
};

/// The CI smoke run's: one 8 MiB file and one small one through each workload prove the
/// harness and the CLI work (a 1,500-key listing made it cost minutes of CI).
const TINY: Sizes = Sizes {
    big: 8 * MIB,
    small_count: 1,
    small_size: 4096,
    list_keys: 1,
};

const WORKLOADS: [&str; 6] = [
    "big-up",
    "big-down",
    "small-up",
    "small-down",
    "ls-r",
    "rm-r",
];

/// How to run one client.
struct Peer {
    name: String,
    program: PathBuf,
    /// Arguments before every command (configuration, quiet output).
    base: Vec<String>,
    env: Vec<(String, String)>,
}

impl Peer {
    /// The arguments of `workload` (`rep` keeps written keys apart).
    fn args(&self, workload: &str, scratch: &Path, rep: usize) -> Vec<String> {
        let me = &self.name;
        let big = scratch.join("big.bin").display().to_string();
        let small = scratch.join("small").display().to_string();
        let down = scratch.join("down").display().to_string();
        let s3 = |key: &str| format!("s3://perf/{key}");
        let rc = |key: &str| format!("local:perf/{key}");
        let words: Vec<String> = match (me.as_str(), workload) {
            ("rclone", "big-up") => vec!["copyto".into(), big, rc(&format!("big/{me}"))],
            ("rclone", "big-down") => {
                vec!["copyto".into(), rc("big/source"), format!("{down}/big.bin")]
            }
            ("rclone", "small-up") => vec!["copy".into(), small, rc(&format!("small/{me}-{rep}"))],
            ("rclone", "small-down") => vec!["copy".into(), rc("small/source"), down],
            ("rclone", "ls-r") => vec!["ls".into(), rc("list")],
            ("rclone", "rm-r") => vec!["delete".into(), rc(&format!("rm/{me}-{rep}"))],
            (_, "big-up") => vec!["cp".into(), big, s3(&format!("big/{me}"))],
            (_, "big-down") => vec!["cp".into(), s3("big/source"), format!("{down}/big.bin")],
            (_, "small-up") => vec![
                "cp".into(),
                "--recursive".into(),
                small,
                s3(&format!("small/{me}-{rep}/")),
            ],
            (_, "small-down") => vec!["cp".into(), "--recursive".into(), s3("small/source/"), down],
            (_, "ls-r") => vec!["ls".into(), "--recursive".into(), s3("list/")],
            (_, "rm-r") => vec![
                "rm".into(),
                "--recursive".into(),
                s3(&format!("rm/{me}-{rep}/")),
            ],
            _ => unreachable!("known workloads"),
        };
        // A listing is the output: not quieted (and `aws s3 ls` takes no such option).
        let mut args: Vec<String> = self
            .base
            .iter()
            .filter(|a| {
                !(workload == "ls-r" && ["--quiet", "--only-show-errors"].contains(&a.as_str()))
            })
            .cloned()
            .collect();
        if me == "aws" {
            args.push("s3".into());
        }
        args.extend(words);
        args
    }
}

/// `perf cli [--flags]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let flags = crate::harness::flags(args, &["tiny"])?;
    for name in flags.keys() {
        if ![
            "tiny",
            "reps",
            "clients",
            "workloads",
            "server",
            "out",
            "name",
        ]
        .contains(&name.as_str())
        {
            return Err(format!("unknown flag --{name}"));
        }
    }
    let reps: usize = flags
        .get("reps")
        .map_or(Ok(3), |v| v.parse())
        .map_err(|_| "bad --reps")?;
    let sizes = if flags.contains_key("tiny") {
        TINY
    } else {
        REAL
    };
    let wanted: Vec<String> = flags
        .get("clients")
        .map_or("s3w,rclone,aws", String::as_str)
        .split(',')
        .map(str::to_owned)
        .collect();
    let workloads: Vec<&str> = match flags.get("workloads") {
        Some(list) => list
            .split(',')
            .map(|w| {
                WORKLOADS
                    .iter()
                    .copied()
                    .find(|k| *k == w)
                    .ok_or(format!("unknown workload {w}"))
            })
            .collect::<Result<_, _>>()?,
        None => WORKLOADS.to_vec(),
    };
    let server = match flags.get("server").map_or("local-s3", String::as_str) {
        "local-s3" => "local-s3",
        "moto" => "moto",
        other => return Err(format!("unknown server {other} (local-s3, moto)")),
    };
    let out = PathBuf::from(flags.get("out").map_or("measurements", String::as_str));
    let name = flags
        .get("name")
        .cloned()
        .unwrap_or_else(|| format!("cli-{}", machine::today()));
    let command = std::iter::once("perf".to_owned())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let scratch = PathBuf::from("/dev/shm").join(format!("s3w-perf-cli-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let load_before = machine::load();
    let result = measure(&scratch, server, sizes, reps, &wanted, &workloads);
    let _ = std::fs::remove_dir_all(&scratch);
    let (records, versions, skipped) = result?;
    let meta = json!({
        "meta": true, "date": machine::now_utc(),
        "commit": machine::git(&["rev-parse", "--short", "HEAD"]),
        "dirty": !machine::git(&["status", "--porcelain", "--untracked-files=no"]).is_empty(),
        "cpu": machine::cpu_model(),
        "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "load_before": load_before, "load_after": machine::load(),
        "command": command, "server": server, "reps": reps, "versions": versions, "skipped": skipped,
    });
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut jsonl = format!("{meta}\n");
    for record in &records {
        jsonl.push_str(&format!("{record}\n"));
    }
    std::fs::write(out.join(format!("{name}.jsonl")), jsonl).map_err(|e| e.to_string())?;
    let md = report(&meta, &records, sizes);
    std::fs::write(out.join(format!("{name}.md")), &md).map_err(|e| e.to_string())?;
    println!("{md}");
    Ok(())
}

type Measured = (Vec<Value>, Value, Vec<String>);

fn measure(
    scratch: &Path,
    server: &str,
    sizes: Sizes,
    reps: usize,
    wanted: &[String],
    workloads: &[&str],
) -> Result<Measured, String> {
    let server = servers::start(server, scratch)?;
    let env = vec![
        ("AWS_ACCESS_KEY_ID".to_owned(), server.access_key.clone()),
        (
            "AWS_SECRET_ACCESS_KEY".to_owned(),
            server.secret_key.clone(),
        ),
        ("AWS_DEFAULT_REGION".to_owned(), "us-east-1".to_owned()),
        ("AWS_REGION".to_owned(), "us-east-1".to_owned()),
        ("AWS_ENDPOINT_URL".to_owned(), server.endpoint.clone()),
        ("AWS_CONFIG_FILE".to_owned(), "/nonexistent".to_owned()),
        (
            "AWS_SHARED_CREDENTIALS_FILE".to_owned(),
            "/nonexistent".to_owned(),
        ),
        ("AWS_EC2_METADATA_DISABLED".to_owned(), "true".to_owned()),
        ("HOME".to_owned(), scratch.display().to_string()),
        ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
    ];
    let (mut peers, mut skipped, mut versions) = (Vec::new(), Vec::new(), json!({}));
    for name in wanted {
        match peer(name, scratch, &server.endpoint, &env) {
            Ok((peer, version)) => {
                versions[name.as_str()] = json!(version);
                peers.push(peer);
            }
            Err(why) => {
                eprintln!("perf cli: skipping {name}: {why}");
                skipped.push(format!("{name}: {why}"));
            }
        }
    }
    let s3w = peers
        .iter()
        .find(|p| p.name == "s3w")
        .map(|p| p.program.clone())
        .map_or_else(s3w_binary, Ok)?;
    // The sources and the objects the reads need, made by s3w (untimed).
    let setup = |args: &[&str]| -> Result<(), String> {
        let status = Command::new(&s3w)
            .args(["--quiet", "--no-progress", "--concurrency", "32"])
            .args(args)
            .env_clear()
            .envs(env.iter().cloned())
            .status()
            .map_err(|e| e.to_string())?;
        status
            .success()
            .then_some(())
            .ok_or(format!("setup s3w {args:?}: {status}"))
    };
    servers::write_file(&scratch.join("big.bin"), sizes.big).map_err(|e| e.to_string())?;
    let tree = |dir: &Path, count: usize, size: u64| -> Result<(), String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let body = servers::pattern(size);
        for i in 0..count {
            std::fs::write(dir.join(format!("f{i:05}")), &body).map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    tree(&scratch.join("small"), sizes.small_count, sizes.small_size)?;
    tree(&scratch.join("list"), sizes.list_keys, 16)?;
    let path = |name: &str| scratch.join(name).display().to_string();
    setup(&["mb", "s3://perf"])?;
    setup(&["cp", &path("big.bin"), "s3://perf/big/source"])?;
    setup(&["cp", "-r", &path("small"), "s3://perf/small/source/"])?;
    setup(&["cp", "-r", &path("list"), "s3://perf/list/"])?;
    let mut records = Vec::new();
    for &workload in workloads {
        for rep in 0..reps {
            for peer in &peers {
                if workload == "rm-r" {
                    setup(&[
                        "cp",
                        "-r",
                        &path("small"),
                        &format!("s3://perf/rm/{}-{rep}/", peer.name),
                    ])?;
                }
                let down = scratch.join("down");
                let _ = std::fs::remove_dir_all(&down);
                std::fs::create_dir_all(&down).map_err(|e| e.to_string())?;
                let mut record = json!({"workload": workload, "client": peer.name, "rep": rep});
                match timed(peer, &peer.args(workload, scratch, rep)) {
                    Ok((wall, rss_kib, stdout)) => {
                        record["wall_s"] = json!(wall);
                        record["max_rss_kib"] = json!(rss_kib);
                        let count = |prefix: &str| objects(&s3w, &env, prefix);
                        if let Err(why) =
                            check(workload, sizes, &stdout, &down, &count, &peer.name, rep)
                        {
                            record["check_failed"] = json!(why);
                        }
                    }
                    Err(error) => record["error"] = json!(error),
                }
                eprintln!("{record}");
                records.push(record);
            }
        }
    }
    Ok((records, versions, skipped))
}

/// Runs a client under `/usr/bin/time`: wall seconds, maximum RSS (KiB), its stdout.
fn timed(peer: &Peer, args: &[String]) -> Result<(f64, u64, String), String> {
    let output = Command::new("/usr/bin/time")
        .args(["-f", "s3w-perf-time %e %M"])
        .arg(&peer.program)
        .args(args)
        .env_clear()
        .envs(peer.env.iter().cloned())
        .output()
        .map_err(|e| format!("/usr/bin/time: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("s3w-perf-time "))
        .ok_or_else(|| format!("no timing in {stderr:?}"))?;
    let mut fields = line.split_whitespace();
    let wall: f64 = fields
        .next()
        .and_then(|v| v.parse().ok())
        .ok_or("wall time")?;
    let rss: u64 = fields
        .next()
        .and_then(|v| v.parse().ok())
        .ok_or("max RSS")?;
    if !output.status.success() {
        let said: String = stderr
            .lines()
            .filter(|l| !l.starts_with("s3w-perf-time"))
            .take(3)
            .collect::<Vec<_>>()
            .join(" | ");
        return Err(format!("exit {}: {said}", output.status));
    }
    Ok((
        wall,
        rss,
        String::from_utf8_lossy(&output.stdout).into_owned(),
    ))
}

/// How many objects s3w lists under `s3://perf/<prefix>`.
fn objects(s3w: &Path, env: &[(String, String)], prefix: &str) -> usize {
    Command::new(s3w)
        .args([
            "--json",
            "ls",
            "--recursive",
            &format!("s3://perf/{prefix}"),
        ])
        .env_clear()
        .envs(env.iter().cloned())
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.contains("\"type\":\"object\""))
                .count()
        })
        .unwrap_or(0)
}

/// Whether a run did its job: the objects written (counted by s3w), the bytes and files
/// downloaded, the keys listed, the keys deleted.
fn check(
    workload: &str,
    sizes: Sizes,
    stdout: &str,
    down: &Path,
    count: &dyn Fn(&str) -> usize,
    client: &str,
    rep: usize,
) -> Result<(), String> {
    let files = || std::fs::read_dir(down).map(|d| d.count()).unwrap_or(0);
    let expect = |prefix: String, want: usize| {
        let found = count(&prefix);
        (found == want)
            .then_some(())
            .ok_or(format!("{found} objects under {prefix}, expected {want}"))
    };
    match workload {
        "big-up" => expect(format!("big/{client}"), 1),
        "small-up" => expect(format!("small/{client}-{rep}/"), sizes.small_count),
        "rm-r" => expect(format!("rm/{client}-{rep}/"), 0),
        "big-down" => {
            let len = std::fs::metadata(down.join("big.bin"))
                .map(|m| m.len())
                .unwrap_or(0);
            (len == sizes.big)
                .then_some(())
                .ok_or(format!("{len} bytes downloaded"))
        }
        "small-down" => (files() == sizes.small_count)
            .then_some(())
            .ok_or(format!("{} files downloaded", files())),
        "ls-r" => {
            let lines = stdout.lines().filter(|l| !l.trim().is_empty()).count();
            (lines == sizes.list_keys)
                .then_some(())
                .ok_or(format!("listed {lines} of {} keys", sizes.list_keys))
        }
        _ => Ok(()),
    }
}

/// The s3w binary beside this harness (built if missing, with the harness's profile).
fn s3w_binary() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().ok_or("no directory")?;
    // A test binary lies in <profile>/deps.
    let profile_dir = if dir.ends_with("deps") {
        dir.parent().ok_or("no profile")?
    } else {
        dir
    };
    let s3w = profile_dir.join("s3w");
    if !s3w.exists() {
        let release = profile_dir.ends_with("release");
        let mut build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        build.args(["build", "-p", "s3w"]);
        if release {
            build.arg("--release");
        }
        let status = build
            .status()
            .map_err(|e| format!("cargo build -p s3w: {e}"))?;
        if !status.success() {
            return Err(format!("cargo build -p s3w: {status}"));
        }
    }
    Ok(s3w)
}

/// A client and its version, or why it cannot run here.
fn peer(
    name: &str,
    scratch: &Path,
    endpoint: &str,
    env: &[(String, String)],
) -> Result<(Peer, String), String> {
    let env = env.to_vec();
    let version = |program: &Path, flag: &str| {
        Command::new(program)
            .arg(flag)
            .output()
            .map(|o| {
                let text = format!(
                    "{}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                );
                text.lines().next().unwrap_or("").to_owned()
            })
            .unwrap_or_default()
    };
    match name {
        "s3w" => {
            let program = s3w_binary()?;
            let v = version(&program, "--version");
            let base = ["--quiet", "--no-progress"].map(String::from).to_vec();
            Ok((
                Peer {
                    name: name.into(),
                    program,
                    base,
                    env,
                },
                v,
            ))
        }
        "rclone" => {
            let program = which("rclone").or_else(|| {
                eprintln!("perf cli: installing rclone from Debian (apt-get install -y rclone)");
                let _ = Command::new("apt-get")
                    .args(["install", "-y", "rclone"])
                    .status();
                which("rclone")
            });
            let program =
                program.ok_or("rclone is not installed and apt-get could not install it")?;
            let config = scratch.join("rclone.conf");
            let (key, secret) = (
                lookup(&env, "AWS_ACCESS_KEY_ID"),
                lookup(&env, "AWS_SECRET_ACCESS_KEY"),
            );
            std::fs::write(
                &config,
                format!("[local]\ntype = s3\nprovider = Other\naccess_key_id = {key}\nsecret_access_key = {secret}\nendpoint = {endpoint}\nregion = us-east-1\n"),
            )
            .map_err(|e| e.to_string())?;
            let v = version(&program, "version");
            // One retry: local-s3 answers HEAD of a "directory" key with 500, which rclone
            // otherwise retries for a minute before it lists. `--ignore-times`: every run
            // transfers (rclone skips files the destination already has, as a sync).
            let base = vec![
                "--ignore-times".into(),
                "--config".into(),
                config.display().to_string(),
                "--retries".into(),
                "1".into(),
                "--low-level-retries".into(),
                "1".into(),
                "-q".into(),
            ];
            // rclone reads AWS_* CA-bundle variables of the environment; give it none.
            let env = env
                .into_iter()
                .filter(|(k, _)| !k.starts_with("AWS_"))
                .collect();
            Ok((
                Peer {
                    name: name.into(),
                    program,
                    base,
                    env,
                },
                v,
            ))
        }
        "aws" => {
            let program = awscli()?;
            let v = version(&program, "--version");
            let base = vec![
                "--endpoint-url".into(),
                endpoint.to_owned(),
                "--only-show-errors".into(),
            ];
            Ok((
                Peer {
                    name: name.into(),
                    program,
                    base,
                    env,
                },
                v,
            ))
        }
        other => Err(format!("unknown client {other} (s3w, rclone, aws)")),
    }
}

fn lookup(env: &[(String, String)], name: &str) -> String {
    env.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|path| path.is_file())
    })
}

/// The AWS CLI v1 in a venv under the target directory, made on first use.
fn awscli() -> Result<PathBuf, String> {
    let python = crate::venv::python("awscli", crate::venv::Install::Package(AWSCLI))?;
    Ok(python.with_file_name("aws"))
}

/// The markdown table: median wall time and maximum RSS per workload and client.
fn report(meta: &Value, records: &[Value], sizes: Sizes) -> String {
    let mut clients: Vec<String> = Vec::new();
    for record in records {
        let client = record["client"].as_str().unwrap_or("").to_owned();
        if !clients.contains(&client) {
            clients.push(client);
        }
    }
    let mut md = format!(
        "# CLI clients on {} ({})\n\nCommit {} (dirty: {}), {} ({} cores), load {} before / {} after. \
         Medians of {} interleaved runs; wall time and maximum RSS by `/usr/bin/time` \
         (process start-up included: what a user waits for). Big file {} MiB; {} small files of {} B; \
         `ls -r` of {} keys; `rm -r` of {} keys.\n\nCommand: `{}`\n\nVersions: {}\n\n",
        meta["server"].as_str().unwrap_or("local-s3"),
        meta["date"].as_str().unwrap_or(""),
        meta["commit"].as_str().unwrap_or(""),
        meta["dirty"],
        meta["cpu"].as_str().unwrap_or(""),
        meta["cores"],
        meta["load_before"].as_str().unwrap_or(""),
        meta["load_after"].as_str().unwrap_or(""),
        meta["reps"],
        sizes.big / MIB,
        sizes.small_count,
        sizes.small_size,
        sizes.list_keys,
        sizes.small_count,
        meta["command"].as_str().unwrap_or(""),
        meta["versions"],
    );
    md.push_str("| workload |");
    for client in &clients {
        md.push_str(&format!(" {client} wall (s) | {client} max RSS (MiB) |"));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|---|".repeat(clients.len()));
    md.push('\n');
    // Only the workloads that ran (`--workloads` may choose a few).
    for workload in WORKLOADS
        .into_iter()
        .filter(|w| records.iter().any(|r| r["workload"] == *w))
    {
        md.push_str(&format!("| {workload} |"));
        for client in &clients {
            let runs: Vec<&Value> = records
                .iter()
                .filter(|r| r["workload"] == workload && r["client"] == client.as_str())
                .collect();
            let failed = runs
                .iter()
                .find_map(|r| r["error"].as_str().or(r["check_failed"].as_str()));
            let walls: Vec<f64> = runs.iter().filter_map(|r| r["wall_s"].as_f64()).collect();
            let rss: Vec<f64> = runs
                .iter()
                .filter_map(|r| r["max_rss_kib"].as_f64())
                .map(|k| k / 1024.0)
                .collect();
            match (
                failed,
                stats::min_median_max(&walls),
                stats::min_median_max(&rss),
            ) {
                (Some(why), _, _) => md.push_str(&format!(
                    " failed: {} | |",
                    why.chars().take(70).collect::<String>()
                )),
                (None, Some((lo, mid, hi)), Some((_, rss, _))) => {
                    md.push_str(&format!(" {mid:.2} ({lo:.2}–{hi:.2}) | {rss:.0} |"))
                }
                _ => md.push_str(" – | – |"),
            }
        }
        md.push('\n');
    }
    if let Some(skipped) = meta["skipped"].as_array().filter(|s| !s.is_empty()) {
        md.push_str(&format!(
            "\nSkipped: {}\n",
            skipped
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    md
}

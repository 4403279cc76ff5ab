//! The clients a run compares, each run as a peer process (see the `perf-peer` crate):
//! s3-wire (this binary's `child`; `s3-wire-task` and `s3-wire-collect` read a GET the other
//! ways a program calls it, and `s3-wire-blocking` runs every workload through
//! `s3_wire::blocking`, [`Calling`]), the Rust peers under `comparisons/perf-peers/<name>/`
//! (each its own workspace and lockfile, built on first use), the Python peers there
//! (`peer.py` in a venv the harness makes from the directory's pinned `requirements.txt`:
//! boto3, boto3-crt, obstore, s3fs, and s3wire-python, whose venv also gets this
//! repository's `python/` package, built once per run) and curl, the floor for one PUT and
//! one GET (`--cacert` for the CA of `null-tls`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use perf_peer::{Args, BUCKET};
use serde_json::{Value, json};

use crate::child::{CALLING_VAR, Calling};
use crate::venv::{self, succeed, target_dir};

/// Runs one workload on `client` and returns its result lines (one
/// `{"unsupported": why}` line when the client cannot do it). `tmp` is the peer's
/// `TMPDIR`, on the same tmpfs as the source files (s3-wire 0.1.1 stages uploads there).
pub fn run(client: &str, args: &Args, tmp: &Path) -> Result<Vec<Value>, String> {
    let peer = |program: &Path, prefix: &[&str]| run_peer(program, prefix, &[], args, tmp);
    if let Some(calling) = Calling::ALL.into_iter().find(|c| c.client_name() == client) {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let env = [(CALLING_VAR, calling.client_name())];
        return run_peer(&exe, &["child"], &env, args, tmp);
    }
    match client {
        "curl" => run_curl(args),
        other if peers_dir().join(other).join("peer.py").is_file() => {
            let script = peers_dir().join(other).join("peer.py");
            peer(&python_peer(other)?, &[script.to_str().unwrap_or_default()])
        }
        other if peers_dir().join(other).join("Cargo.toml").is_file() => {
            peer(&cargo_peer(other)?, &[])
        }
        other => Err(format!(
            "unknown client {other}: not s3-wire (or s3-wire-task, -collect, -blocking), curl or a peer directory of {}",
            peers_dir().display()
        )),
    }
}

/// True for s3-wire under any of its names (a [`Calling`]): not a peer it is compared with.
pub fn is_s3_wire(client: &str) -> bool {
    Calling::ALL.iter().any(|c| c.client_name() == client)
}

/// `comparisons/perf-peers/` of the source tree this harness was built from.
fn peers_dir() -> PathBuf {
    repository().join("comparisons/perf-peers")
}

/// This repository's root.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// What `make` returned for `name` the first time this run asked (a peer's build or venv
/// is made once per run).
fn once_per_run(
    name: &str,
    make: impl FnOnce() -> Result<PathBuf, String>,
) -> Result<PathBuf, String> {
    static MADE: OnceLock<Mutex<Vec<(String, PathBuf)>>> = OnceLock::new();
    let made = MADE.get_or_init(Default::default);
    let mut made = made.lock().map_err(|e| e.to_string())?;
    if let Some((_, path)) = made.iter().find(|(n, _)| n == name) {
        return Ok(path.clone());
    }
    let path = make()?;
    made.push((name.to_owned(), path.clone()));
    Ok(path)
}

/// The binary `peer` of `comparisons/perf-peers/<name>/`, built once per run with its own
/// lockfile into `<target>/perf-peers/<name>` (`--ignore-rust-version`: s3-wire 0.1.1
/// declares a newer toolchain than it needs).
fn cargo_peer(name: &str) -> Result<PathBuf, String> {
    once_per_run(name, || {
        let manifest = peers_dir().join(name).join("Cargo.toml");
        let target = target_dir()?.join("perf-peers").join(name);
        eprintln!("perf: building the {name} peer ({})", manifest.display());
        succeed(
            Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args(["build", "--release", "--locked", "--ignore-rust-version"])
                .args(["--bin", "peer", "--manifest-path"])
                .arg(&manifest)
                .arg("--target-dir")
                .arg(&target)
                .env_remove("CARGO_TARGET_DIR"),
            &format!("cargo build of the {name} peer"),
        )?;
        Ok(target.join("release/peer"))
    })
}

/// The Python peers whose venv also holds a package of this repository: the peer's
/// name and the package's directory (a maturin project).
const LOCAL_PACKAGES: [(&str, &str); 1] = [("s3wire-python", "python")];

/// The python of the Python peer `name`: a venv made from the pinned
/// `comparisons/perf-peers/<name>/requirements.txt` on first use, and for a peer of
/// [`LOCAL_PACKAGES`] the package's wheel built and installed into it once per run.
fn python_peer(name: &str) -> Result<PathBuf, String> {
    once_per_run(name, || {
        let requirements = peers_dir().join(name).join("requirements.txt");
        let python = venv::python(name, venv::Install::Requirements(&requirements))?;
        if let Some((_, dir)) = LOCAL_PACKAGES.iter().find(|(peer, _)| *peer == name) {
            let source = repository().join(dir);
            venv::install_maturin_package(name, &python, &source)?;
        }
        Ok(python)
    })
}

/// Runs `program prefix... <args>` with `env` added and parses its JSON result lines.
fn run_peer(
    program: &Path,
    prefix: &[&str],
    env: &[(&str, &str)],
    args: &Args,
    tmp: &Path,
) -> Result<Vec<Value>, String> {
    let output = Command::new(program)
        .args(prefix)
        .args(args.to_flags())
        .envs(env.iter().copied())
        .env("TMPDIR", tmp)
        .output()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    if !output.status.success() {
        return Err(format!(
            "peer failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).map_err(|e| format!("{e}: {line}")))
        .collect()
}

/// curl: the floor for one PUT (of the same bytes, from a tmpfs file), one GET to
/// /dev/null and one GET into the download's file (`curl -o`, one stream: the bar a
/// parallel download to a file is held to), under `/usr/bin/time`. Other workloads are
/// not curl's.
fn run_curl(args: &Args) -> Result<Vec<Value>, String> {
    let unsupported = |why: &str| Ok(vec![json!({ "unsupported": why })]);
    match args.kind.as_str() {
        "put" | "get" | "download" => {}
        "upload" => {
            return unsupported(
                "curl has no multipart upload; it is the floor for single PUT/GET and `curl -o` only",
            );
        }
        "small" => {
            return unsupported(
                "one process per request would measure process start-up, not the client",
            );
        }
        "list" => return unsupported("curl does not paginate ListObjectsV2"),
        "tasks" => {
            return unsupported(
                "one process per object would measure process start-up, and curl has no multipart upload or ranged download",
            );
        }
        _ => return unsupported("no client object to construct"),
    }
    let url = format!("{}/{BUCKET}/{}", args.endpoint, args.key);
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
        &format!("{}:{}", args.access_key, args.secret_key),
    ]);
    command.args(["-w", "%{time_total} %{size_upload} %{size_download}"]);
    // curl 7.88 sends no payload hash; s3s wants the header (curl signs it).
    command.args(["-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]);
    if !args.ca_file.as_os_str().is_empty() {
        command.arg("--cacert").arg(&args.ca_file);
    }
    match args.kind.as_str() {
        "put" => command.arg("-T").arg(&args.file),
        "download" => command.arg("-o").arg(&args.file),
        _ => command.args(["-o", "/dev/null"]),
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
    let (rss, user, system) = perf_peer::procfs::parse_time_output(&stderr)
        .ok_or_else(|| format!("no usage in {stderr:?}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<f64> = stdout
        .split_whitespace()
        .filter_map(|v| v.parse().ok())
        .collect();
    let [wall, up, down] = fields[..] else {
        return Err(format!("curl -w output {stdout:?}"));
    };
    if (up + down) as u64 != args.size {
        return Err(format!(
            "curl moved {up}+{down} bytes, expected {}",
            args.size
        ));
    }
    Ok(vec![json!({
        "wall_s": wall, "bytes": args.size, "hwm_kib": rss, "user_s": user, "sys_s": system,
        "base_kib": Value::Null,
    })])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curl_answers_only_put_get_and_download() {
        for kind in ["upload", "small", "list", "construct", "tasks"] {
            let mut args = Args::default();
            args.kind = kind.into();
            let lines = run("curl", &args, Path::new("/tmp")).unwrap();
            assert_eq!(lines.len(), 1, "{kind}");
            assert!(
                lines[0]["unsupported"].as_str().is_some(),
                "{kind}: {lines:?}"
            );
        }
    }

    #[test]
    fn unknown_clients_are_refused_by_name() {
        let err = run("no-such-peer", &Args::default(), Path::new("/tmp")).unwrap_err();
        assert!(err.starts_with("unknown client no-such-peer: "), "{err}");
        // Every Rust peer under comparisons/perf-peers/ is a client by its directory name.
        for name in ["s3-wire-0.1.1", "object_store"] {
            assert!(
                peers_dir().join(name).join("Cargo.toml").is_file(),
                "{name}"
            );
        }
        // And every Python one: its peer.py and the pins of its venv.
        for name in ["boto3", "boto3-crt", "obstore", "s3fs", "s3wire-python"] {
            for file in ["peer.py", "requirements.txt", "README.md"] {
                assert!(peers_dir().join(name).join(file).is_file(), "{name}/{file}");
            }
        }
        for (peer, dir) in LOCAL_PACKAGES {
            let project = repository().join(dir);
            assert!(project.join("pyproject.toml").is_file(), "{peer}: {dir}");
        }
    }
}

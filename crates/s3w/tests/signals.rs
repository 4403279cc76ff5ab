//! Ctrl-C typed into a pseudo-terminal (`script`) while s3w transfers through a proxy that
//! slows the parts down: with `--no-resume` the multipart upload is aborted (moto's
//! ListMultipartUploads is empty afterwards) and s3w exits 130; by default the upload and
//! its journal are kept and the same command sends only the missing parts (or, with
//! `--no-resume`, aborts the kept upload before it starts over); an interrupted
//! download leaves no partial file; `cp -r` and `sync` stop their transfers the same way;
//! a second Ctrl-C quits at once, without waiting for the clean-up; SIGTERM does what
//! Ctrl-C does and exits 143.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod support;

#[path = "../../s3-wire-tokio/tests/support/moto.rs"]
#[allow(dead_code)]
mod moto;

use support::proxy::{Proxy, Verdict};
use support::write;

const PART: usize = 5 << 20;
const PARTS: usize = 8;

/// s3w against `endpoint` with moto's credentials, a home of its own.
fn s3w(endpoint: &str, home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_s3w"));
    command.args(args);
    for (name, value) in moto_env(endpoint, home) {
        command.env(name, value);
    }
    command
}

/// Runs s3w to success and returns its stdout.
fn ok(endpoint: &str, home: &Path, args: &[&str]) -> Vec<u8> {
    let out = s3w(endpoint, home, args).output().unwrap();
    assert!(
        out.status.success(),
        "s3w {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn moto_env(endpoint: &str, home: &Path) -> Vec<(String, String)> {
    let home = home.display().to_string();
    [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("AWS_ENDPOINT_URL", endpoint.to_owned()),
        ("AWS_ACCESS_KEY_ID", "testing".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "testing".to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
        ("AWS_CONFIG_FILE", format!("{home}/no-config")),
        (
            "AWS_SHARED_CREDENTIALS_FILE",
            format!("{home}/no-credentials"),
        ),
        ("AWS_EC2_METADATA_DISABLED", "true".to_owned()),
        ("HOME", home),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// Runs `s3w args` with `envs` (only) on a pseudo-terminal, types Ctrl-C once `ready()`
/// holds, and returns its exit status and what it drew.
fn ctrl_c(
    envs: Vec<(String, String)>,
    args: &[&str],
    ready: impl Fn() -> bool,
) -> (Option<i32>, String) {
    ctrl_c_then(envs, args, ready, None)
}

/// [`ctrl_c`], and Ctrl-C once more `again` after the first (`None`: once only).
fn ctrl_c_then(
    envs: Vec<(String, String)>,
    args: &[&str],
    ready: impl Fn() -> bool,
    again: Option<Duration>,
) -> (Option<i32>, String) {
    let command = std::iter::once(env!("CARGO_BIN_EXE_s3w").to_owned())
        .chain(args.iter().map(|a| format!("'{a}'")))
        .collect::<Vec<_>>()
        .join(" ");
    let mut script = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_clear()
        .envs(envs)
        .env("TERM", "xterm")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("script (util-linux)");
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < Duration::from_secs(60), "never ready");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stdin = script.stdin.take().unwrap();
    // The terminal's interrupt character: the line discipline sends SIGINT.
    stdin.write_all(b"\x03").unwrap();
    stdin.flush().unwrap();
    if let Some(pause) = again {
        std::thread::sleep(pause);
        stdin.write_all(b"\x03").unwrap();
        stdin.flush().unwrap();
    }
    let out: Output = script.wait_with_output().unwrap();
    // `script -e` exits with the child's status.
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn ctrl_c_aborts_a_multipart_upload_or_keeps_it_for_a_resume_that_sends_only_the_missing_parts() {
    let moto = moto::Moto::start();
    // Each part waits, so that Ctrl-C lands in the middle of the upload.
    let proxy = Proxy::start(&moto.endpoint(), |line| {
        if line.starts_with("PUT") && line.contains("partNumber=") {
            Verdict::Delay(Duration::from_millis(300))
        } else {
            Verdict::Forward
        }
    });
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.bin");
    let bytes: Vec<u8> = (0..PART * PARTS).map(|i| (i % 251) as u8).collect();
    write(&file, &bytes);
    let file = file.to_str().unwrap();
    ok(&proxy.endpoint, home.path(), &["mb", "s3://sig-b"]);
    let tuning = ["--part-size", "5M", "--part-concurrency", "2"];
    let parts_stored = || proxy.count(&["PUT", "partNumber="], 200);

    // --no-resume: the upload is aborted, and s3w says so (SIGINT sent to the process
    // itself here: `script` may lose a child's last line when it exits).
    let args = [
        &tuning[..],
        &["cp", "--no-resume", file, "s3://sig-b/aborted.bin"],
    ]
    .concat();
    let child = s3w(&proxy.endpoint, home.path(), &args)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while parts_stored() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no part stored"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{said}");
    assert!(said.contains("interrupted"), "{said}");
    assert!(
        said.contains("its multipart upload was aborted"),
        "says what it cleaned up: {said}"
    );
    assert!(
        proxy.count(&["DELETE", "uploadId="], 204) >= 1,
        "no abort: {:?}",
        proxy.seen
    );
    let uploads = || {
        ok(
            &moto.endpoint(),
            home.path(),
            &["--json", "uploads", "s3://sig-b/"],
        )
    };
    let open = uploads();
    assert!(
        open.is_empty(),
        "uploads left open: {}",
        String::from_utf8_lossy(&open)
    );

    // By default the upload is kept, with its journal, and a second run resumes it.
    let before = parts_stored();
    let args = [&tuning[..], &["cp", file, "s3://sig-b/resumed.bin"]].concat();
    let (code, drawn) = ctrl_c(moto_env(&proxy.endpoint, home.path()), &args, || {
        parts_stored() >= before + 3
    });
    assert_eq!(code, Some(130), "{drawn}");
    // (What it said is not checked here: `script` may lose a child's last line.)
    // The parts in flight when s3w quit still reach moto (the proxy forwards what it read).
    std::thread::sleep(Duration::from_secs(1));
    let stored_first = parts_stored() - before;
    assert_eq!(
        String::from_utf8_lossy(&uploads()).lines().count(),
        1,
        "the upload is kept"
    );
    let before = parts_stored();
    let again = ok(
        &proxy.endpoint,
        home.path(),
        &[
            &tuning[..],
            &["--json", "cp", file, "s3://sig-b/resumed.bin"],
        ]
        .concat(),
    );
    let result: serde_json::Value = serde_json::from_slice(&again).unwrap();
    let sent = parts_stored() - before;
    // Parts moto stored after s3w quit are not in the journal: those are sent again.
    let resumed = result["resumed_parts"].as_u64().unwrap();
    assert!(resumed >= 1 && resumed <= stored_first as u64, "{result}");
    assert_eq!(
        sent as u64 + result["resumed_parts"].as_u64().unwrap(),
        PARTS as u64,
        "{result}"
    );
    assert!(sent < PARTS, "everything was sent again");
    let back = dir.path().join("back.bin");
    ok(
        &moto.endpoint(),
        home.path(),
        &["cp", "s3://sig-b/resumed.bin", back.to_str().unwrap()],
    );
    assert!(
        std::fs::read(&back).unwrap() == bytes,
        "the resumed object differs"
    );

    // Starting over (--no-resume) after an interruption aborts the kept upload first: it
    // is not left open beside the new one.
    let before = parts_stored();
    let args = [&tuning[..], &["cp", file, "s3://sig-b/restarted.bin"]].concat();
    let (code, drawn) = ctrl_c(moto_env(&proxy.endpoint, home.path()), &args, || {
        parts_stored() >= before + 2
    });
    assert_eq!(code, Some(130), "{drawn}");
    assert_eq!(
        String::from_utf8_lossy(&uploads()).lines().count(),
        1,
        "the upload is kept"
    );
    let args = [
        &tuning[..],
        &["cp", "--no-resume", file, "s3://sig-b/restarted.bin"],
    ]
    .concat();
    let out = s3w(&proxy.endpoint, home.path(), &args).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("aborted the earlier upload"), "{said}");
    let open = uploads();
    assert!(
        open.is_empty(),
        "the earlier upload is left open: {}",
        String::from_utf8_lossy(&open)
    );
}

#[test]
fn ctrl_c_during_a_download_leaves_no_partial_file() {
    let env = support::Env::new();
    env.ok(&["mb", "s3://dl-b"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.bin");
    write(&file, &vec![9u8; 24 << 20]);
    env.ok(&["cp", file.to_str().unwrap(), "s3://dl-b/big.bin"]);
    let proxy = Proxy::start(env.server.endpoint(), |line| {
        if line.starts_with("GET /dl-b/big.bin") {
            Verdict::Delay(Duration::from_millis(400))
        } else {
            Verdict::Forward
        }
    });
    let target = tempfile::tempdir().unwrap();
    let args = [
        "--range-size",
        "5M",
        "--part-concurrency",
        "2",
        "cp",
        "s3://dl-b/big.bin",
        target.path().to_str().unwrap(),
    ];
    let partial = || {
        std::fs::read_dir(target.path())
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".part"))
    };
    let (code, drawn) = ctrl_c(command_envs(&env, &proxy.endpoint), &args, partial);
    assert_eq!(code, Some(130), "{drawn}");
    let left: Vec<String> = std::fs::read_dir(target.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// The environment `Env::cmd` gives s3w, with another endpoint.
fn command_envs(env: &support::Env, endpoint: &str) -> Vec<(String, String)> {
    let command = env.cmd(&[]);
    command
        .get_envs()
        .filter_map(|(k, v)| {
            let (k, v) = (
                k.to_string_lossy().into_owned(),
                v?.to_string_lossy().into_owned(),
            );
            Some(if k == "AWS_ENDPOINT_URL" {
                (k, endpoint.to_owned())
            } else {
                (k, v)
            })
        })
        .collect()
}

#[test]
fn ctrl_c_during_a_listing_ends_it_at_once() {
    let env = support::Env::new();
    env.ok(&["mb", "s3://ls-b"]);
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("a.txt"), b"a");
    env.ok(&["cp", "-r", dir.path().to_str().unwrap(), "s3://ls-b/d/"]);
    // Every listing request waits 20 s: only an interruption ends the command early.
    let proxy = Proxy::start(env.server.endpoint(), |line| {
        if line.starts_with("GET /ls-b?") {
            Verdict::Delay(Duration::from_secs(20))
        } else {
            Verdict::Forward
        }
    });
    let started = Instant::now();
    // By then s3w waits for its first page (the proxy records a request only once answered).
    let (code, drawn) = ctrl_c(
        command_envs(&env, &proxy.endpoint),
        &["ls", "-r", "s3://ls-b/"],
        || started.elapsed() > Duration::from_millis(700),
    );
    assert_eq!(code, Some(130), "{drawn}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "it waited for the listing"
    );
}

/// A directory of `count` files of `size` bytes each (a, b, c, ...).
fn tree(count: u8, size: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..count {
        let name = char::from(b'a' + i).to_string();
        write(&dir.path().join(name), &vec![i; size]);
    }
    dir
}

/// The names left in `dir` that a transfer would have left half written.
fn partial_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".part") || name.starts_with(".s3w"))
        .collect()
}

/// `cp -r` down and `sync` up, each interrupted by Ctrl-C in the middle: exit 130, no
/// partial file left, no multipart upload left open (moto lists them), and what was
/// finished is whole.
#[test]
fn ctrl_c_during_a_recursive_copy_or_a_sync_stops_every_transfer_cleanly() {
    let moto = moto::Moto::start();
    let proxy = Proxy::start(&moto.endpoint(), |line| {
        if (line.starts_with("PUT") && line.contains("partNumber="))
            || (line.starts_with("GET /tree-b/") && !line.contains('?'))
        {
            Verdict::Delay(Duration::from_millis(300))
        } else {
            Verdict::Forward
        }
    });
    let home = tempfile::tempdir().unwrap();
    ok(&moto.endpoint(), home.path(), &["mb", "s3://tree-b"]);
    // Over the 16 MiB a single request takes: multipart uploads, ranged downloads.
    let source = tree(3, 17 << 20);
    let tuning = [
        "--part-size",
        "5M",
        "--range-size",
        "5M",
        "--concurrency",
        "2",
    ];
    // The objects to download, put there directly.
    ok(
        &moto.endpoint(),
        home.path(),
        &[
            "cp",
            "-r",
            source.path().to_str().unwrap(),
            "s3://tree-b/down/",
        ],
    );
    let target = tempfile::tempdir().unwrap();
    let gets =
        || proxy.count(&["GET /tree-b/down/"], 206) + proxy.count(&["GET /tree-b/down/"], 200);
    let args = [
        &tuning[..],
        &[
            "cp",
            "-r",
            "s3://tree-b/down/",
            target.path().to_str().unwrap(),
        ],
    ]
    .concat();
    let (code, drawn) = ctrl_c(moto_env(&proxy.endpoint, home.path()), &args, || {
        gets() >= 2
    });
    assert_eq!(code, Some(130), "{drawn}");
    assert_eq!(partial_files(target.path()), Vec::<String>::new());
    for entry in std::fs::read_dir(target.path()).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        assert_eq!(
            std::fs::read(entry.path()).unwrap(),
            std::fs::read(source.path().join(&name)).unwrap(),
            "{name} is not whole"
        );
    }
    // sync up: interrupted while parts are in flight.
    let parts = || proxy.count(&["PUT", "partNumber="], 200);
    let args = [
        &tuning[..],
        &["sync", source.path().to_str().unwrap(), "s3://tree-b/up/"],
    ]
    .concat();
    let (code, drawn) = ctrl_c(moto_env(&proxy.endpoint, home.path()), &args, || {
        parts() >= 2
    });
    assert_eq!(code, Some(130), "{drawn}");
    let open = ok(
        &moto.endpoint(),
        home.path(),
        &["--json", "uploads", "s3://tree-b/"],
    );
    assert!(
        open.is_empty(),
        "uploads left open: {}",
        String::from_utf8_lossy(&open)
    );
    // A second sync completes the rest.
    ok(
        &moto.endpoint(),
        home.path(),
        &["sync", source.path().to_str().unwrap(), "s3://tree-b/up/"],
    );
    let listed = String::from_utf8(ok(
        &moto.endpoint(),
        home.path(),
        &["ls", "-r", "s3://tree-b/up/"],
    ))
    .unwrap();
    assert_eq!(listed.lines().count(), 3, "{listed}");
}

/// A clean-up that hangs (every abort waits 60 s at the proxy, past the library's own 30 s
/// bound on an abort): the first Ctrl-C starts it, the second quits at once.
#[test]
fn a_second_ctrl_c_quits_without_waiting_for_the_clean_up() {
    let moto = moto::Moto::start();
    let proxy = Proxy::start(&moto.endpoint(), |line| {
        if line.starts_with("DELETE") && line.contains("uploadId=") {
            Verdict::Delay(Duration::from_secs(60))
        } else if line.starts_with("PUT") && line.contains("partNumber=") {
            Verdict::Delay(Duration::from_millis(300))
        } else {
            Verdict::Forward
        }
    });
    let home = tempfile::tempdir().unwrap();
    ok(&moto.endpoint(), home.path(), &["mb", "s3://twice-b"]);
    let source = tree(1, 24 << 20);
    let file = source.path().join("a");
    let started = Instant::now();
    let (code, drawn) = ctrl_c_then(
        moto_env(&proxy.endpoint, home.path()),
        &[
            "--part-size",
            "5M",
            "cp",
            "--no-resume",
            file.to_str().unwrap(),
            "s3://twice-b/a",
        ],
        || proxy.count(&["PUT", "partNumber="], 200) >= 1,
        Some(Duration::from_millis(700)),
    );
    assert_eq!(code, Some(130), "{drawn}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "it waited for the abort"
    );
}

/// SIGTERM (as `kill` or a service manager sends it) stops a download as Ctrl-C does (no
/// partial file) and exits 143, 128 + 15.
#[test]
fn sigterm_stops_like_ctrl_c_and_exits_143() {
    let env = support::Env::new();
    env.ok(&["mb", "s3://term-b"]);
    let source = tree(1, 24 << 20);
    env.ok(&[
        "cp",
        source.path().join("a").to_str().unwrap(),
        "s3://term-b/big.bin",
    ]);
    let proxy = Proxy::start(env.server.endpoint(), |line| {
        if line.starts_with("GET /term-b/big.bin") {
            Verdict::Delay(Duration::from_millis(400))
        } else {
            Verdict::Forward
        }
    });
    let target = tempfile::tempdir().unwrap();
    let child = env
        .cmd(&[
            "--endpoint-url",
            proxy.endpoint.as_str(),
            "--range-size",
            "5M",
            "cp",
            "s3://term-b/big.bin",
            target.path().to_str().unwrap(),
        ])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while proxy.count(&["GET /term-b/big.bin"], 206) < 1 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no range fetched"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{said}");
    assert!(said.contains("interrupted"), "{said}");
    let left: Vec<_> = std::fs::read_dir(target.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

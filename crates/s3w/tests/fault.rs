//! Failure paths through a small fault proxy in front of local-s3: in a `cp --recursive`
//! one object's upload is refused (403 AccessDenied every time), another's first attempt
//! gets a 503 SlowDown (retried by the library), the rest pass through untouched; a
//! download killed part of the way (its ranged GETs slowed) is resumed by the same command.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

mod support;

use support::proxy::{Proxy, Verdict, error_reply};

/// A proxy to `upstream`: every PUT of `broken` is refused, the first PUT of `flaky` gets a
/// 503.
fn start_proxy(upstream: String, slowdowns: Arc<AtomicUsize>) -> String {
    Proxy::start(&upstream, move |line| {
        if line.starts_with("PUT") && line.contains("broken") {
            Verdict::Answer(error_reply("403 Forbidden", "AccessDenied"))
        } else if line.starts_with("PUT")
            && line.contains("flaky")
            && slowdowns.fetch_add(1, Ordering::SeqCst) == 0
        {
            Verdict::Answer(error_reply("503 Service Unavailable", "SlowDown"))
        } else {
            Verdict::Forward
        }
    })
    .endpoint
}

fn s3w(server: &local_s3::LocalS3, endpoint: &str, home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_s3w"));
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("AWS_ENDPOINT_URL", endpoint)
        .env("AWS_ACCESS_KEY_ID", server.access_key())
        .env("AWS_SECRET_ACCESS_KEY", server.secret_key())
        .env("AWS_REGION", server.region())
        .env("AWS_CONFIG_FILE", home.join("no-config"))
        .env("AWS_SHARED_CREDENTIALS_FILE", home.join("no-credentials"))
        .env("AWS_EC2_METADATA_DISABLED", "true");
    command
}

#[test]
fn errors_mid_recursive_copy_fail_one_object_the_others_complete_exit_1() {
    let server = local_s3::LocalS3::start().expect("start local-s3");
    let home = tempfile::tempdir().unwrap();
    let upstream = server
        .endpoint()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let slowdowns = Arc::new(AtomicUsize::new(0));
    let proxy = start_proxy(upstream, slowdowns.clone());

    let mb = s3w(&server, &proxy, home.path(), &["mb", "s3://fault-b"])
        .output()
        .unwrap();
    assert!(
        mb.status.success(),
        "{}",
        String::from_utf8_lossy(&mb.stderr)
    );

    let src = tempfile::tempdir().unwrap();
    let names = ["a.txt", "b/broken.txt", "c/flaky.txt", "d e.txt", "f.txt"];
    for name in names {
        let path = src.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("bytes of {name}")).unwrap();
    }
    let out = s3w(
        &server,
        &proxy,
        home.path(),
        &[
            "--json",
            "--concurrency",
            "2",
            "cp",
            "--recursive",
            src.path().to_str().unwrap(),
            "s3://fault-b/t/",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1), "exit code");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.trim().lines().collect();
    assert_eq!(lines.len(), 1, "one error line: {stderr}");
    assert!(
        lines[0].contains("broken.txt") && lines[0].contains("AccessDenied"),
        "{stderr}"
    );
    assert!(lines[0].contains("FAULT-1"), "request id: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("Error {"));

    let results: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(results.len(), names.len(), "{results:?}");
    let failed: Vec<_> = results
        .iter()
        .filter(|r| r.get("error").is_some())
        .collect();
    assert_eq!(failed.len(), 1, "{results:?}");
    assert_eq!(failed[0]["key"], "t/b/broken.txt");
    assert_eq!(failed[0]["code"], "AccessDenied", "{results:?}");
    assert_eq!(failed[0]["request_id"], "FAULT-1", "{results:?}");
    for ok in results.iter().filter(|r| r.get("error").is_none()) {
        assert!(ok["size"].is_u64() && ok["duration_ms"].is_u64(), "{ok}");
    }
    assert!(slowdowns.load(Ordering::SeqCst) >= 2, "flaky retried");

    // Every other object is stored, byte for byte (read directly from local-s3).
    let direct = server.endpoint();
    let dest = tempfile::tempdir().unwrap();
    for name in names.iter().filter(|n| !n.contains("broken")) {
        let target = dest.path().join(name.replace('/', "_"));
        let get = s3w(
            &server,
            direct,
            home.path(),
            &[
                "cp",
                &format!("s3://fault-b/t/{name}"),
                target.to_str().unwrap(),
            ],
        )
        .output()
        .unwrap();
        assert!(
            get.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&get.stderr)
        );
        assert_eq!(
            std::fs::read(&target).unwrap(),
            format!("bytes of {name}").into_bytes()
        );
    }
    let missing = s3w(
        &server,
        direct,
        home.path(),
        &["stat", "s3://fault-b/t/b/broken.txt"],
    )
    .output()
    .unwrap();
    assert_eq!(missing.status.code(), Some(1));
}

/// A download killed part of the way (its ranged GETs slowed by the proxy) and run again:
/// only the missing ranges are fetched (counted at a recording proxy), and the result says
/// how many bytes were already on disk; a run after that resumes nothing. For `cp` of the
/// object and for `cp -r` of its prefix.
#[test]
fn a_killed_download_is_resumed_by_the_same_command_and_says_so() {
    let env = support::Env::new();
    env.ok(&["mb", "s3://resume-b"]);
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("big.bin");
    let data: Vec<u8> = (0..24u32 << 20).map(|i| (i % 253) as u8).collect();
    std::fs::write(&source, &data).unwrap();
    env.ok(&["cp", source.to_str().unwrap(), "s3://resume-b/big.bin"]);
    // Slow ranged GETs, so that the download is killed part of the way.
    let proxy = Proxy::start(env.server.endpoint(), |line| {
        if line.starts_with("GET") && line.contains("big.bin") {
            Verdict::Delay(std::time::Duration::from_millis(400))
        } else {
            Verdict::Forward
        }
    });
    let single = dir.path().join("single");
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(&single).unwrap();
    let cases = [
        (
            "cp",
            single.join("back.bin"),
            vec!["cp", "s3://resume-b/big.bin", "PLACE"],
            single.join("back.bin"),
        ),
        (
            "cp -r",
            tree.clone(),
            vec!["cp", "-r", "s3://resume-b/", "PLACE"],
            tree.join("big.bin"),
        ),
    ];
    for (name, place, command, target) in cases {
        let journal = target.with_file_name(format!(
            ".{}.s3w-download.journal",
            target.file_name().unwrap().to_string_lossy()
        ));
        let mut args = vec!["--range-size", "1M", "--part-concurrency", "2"];
        args.extend(command.iter().map(|a| {
            if *a == "PLACE" {
                place.to_str().unwrap()
            } else {
                a
            }
        }));
        let mut slow = vec!["--endpoint-url", proxy.endpoint.as_str()];
        slow.extend(&args);
        let mut child = env.cmd(&slow).spawn().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        // Killed once the journal records a written range.
        while !std::fs::read_to_string(&journal).is_ok_and(|text| {
            text.lines()
                .any(|l| l.starts_with("done") && l.contains('-'))
        }) {
            assert!(
                std::time::Instant::now() < deadline,
                "{name}: no range written"
            );
            assert!(
                child.try_wait().unwrap().is_none(),
                "{name}: finished before the kill"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!target.exists());

        // The same command, through a proxy that only records.
        let recorder = Proxy::start(env.server.endpoint(), |_| Verdict::Forward);
        let mut again = vec!["--json", "--endpoint-url", recorder.endpoint.as_str()];
        again.extend(&args);
        let value: serde_json::Value = serde_json::from_str(env.ok(&again).trim()).unwrap();
        let resumed = value["resumed_bytes"].as_u64().unwrap();
        let size = data.len() as u64;
        assert!(resumed > 0 && resumed < size, "{name}: {value}");
        // Each range asked for, in bytes; `None` for the opening GET without a range,
        // which gives the object's head and whose body is dropped when the first range is
        // on disk.
        let ranges: Vec<Option<u64>> = recorder
            .heads
            .lock()
            .unwrap()
            .iter()
            .filter(|head| head.starts_with("GET /resume-b/big.bin"))
            .map(|head| {
                let range = head.lines().find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("range: bytes=")
                        .map(str::to_owned)
                })?;
                let (from, to) = range.trim().split_once('-')?;
                Some(to.parse::<u64>().ok()? - from.parse::<u64>().ok()? + 1)
            })
            .collect();
        assert_eq!(
            ranges.iter().filter(|r| r.is_none()).count(),
            1,
            "{name}: {ranges:?}"
        );
        let fetched: u64 = ranges.iter().flatten().sum();
        assert_eq!(fetched, size - resumed, "{name}: {value} {ranges:?}");
        assert_eq!(std::fs::read(&target).unwrap(), data, "{name}");
        assert!(!journal.exists(), "{name}");
        if name == "cp" {
            // Again: the file is whole, nothing to resume.
            let mut last = vec!["--json"];
            last.extend(&args);
            let value: serde_json::Value = serde_json::from_str(env.ok(&last).trim()).unwrap();
            assert_eq!(
                value["resumed_bytes"], 0,
                "a finished download leaves nothing to resume"
            );
        }
    }
}

/// A store that does not implement ListObjectsV2 (`501 NotImplemented` to `list-type=2`,
/// through the proxy; local-s3 behind it serves version 1): `ls -r`, `sync --delete` and
/// `rm -r` each list it with ListObjects (version 1) after that one refusal.
#[test]
fn a_store_without_list_objects_v2_is_listed_with_version_1() {
    let env = support::Env::new();
    env.ok(&["mb", "s3://v1-b"]);
    let proxy = Proxy::start(env.server.endpoint(), |line| {
        if line.starts_with("GET") && line.contains("list-type=2") {
            Verdict::Answer(error_reply("501 Not Implemented", "NotImplemented"))
        } else {
            Verdict::Forward
        }
    });
    let at_proxy = |args: &[&str]| {
        let mut all = vec!["--endpoint-url", proxy.endpoint.as_str()];
        all.extend(args);
        env.ok(&all)
    };
    let src = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b/c.txt", "b/d.txt", "e.txt"] {
        let path = src.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("bytes of {name}")).unwrap();
    }
    env.ok(&["cp", "-r", src.path().to_str().unwrap(), "s3://v1-b/t/"]);
    env.ok(&[
        "cp",
        src.path().join("a.txt").to_str().unwrap(),
        "s3://v1-b/keep/a.txt",
    ]);
    let listed = at_proxy(&["ls", "-r", "s3://v1-b/t/"]);
    for key in ["t/a.txt", "t/b/c.txt", "t/b/d.txt", "t/e.txt"] {
        assert!(listed.contains(key), "{key} in {listed}");
    }
    // sync --delete: one file gone locally, one changed.
    std::fs::remove_file(src.path().join("b/d.txt")).unwrap();
    std::fs::write(src.path().join("e.txt"), "changed, longer").unwrap();
    at_proxy(&[
        "sync",
        "--delete",
        src.path().to_str().unwrap(),
        "s3://v1-b/t/",
    ]);
    let direct = env.ok(&["ls", "-r", "s3://v1-b/"]);
    assert!(!direct.contains("t/b/d.txt"), "{direct}");
    assert!(
        direct.contains("t/a.txt") && direct.contains("keep/a.txt"),
        "{direct}"
    );
    assert_eq!(env.ok(&["cat", "s3://v1-b/t/e.txt"]), "changed, longer");
    at_proxy(&["rm", "-r", "s3://v1-b/t/"]);
    let left = env.ok(&["ls", "-r", "s3://v1-b/"]);
    for gone in ["t/a.txt", "t/b/c.txt", "t/e.txt"] {
        assert!(!left.contains(gone), "{gone} in {left}");
    }
    assert!(left.contains("keep/a.txt"), "{left}");
    // Each of the three commands asked ListObjectsV2 once, and listed with version 1.
    let seen = proxy.seen.lock().unwrap().clone();
    let refused = seen
        .iter()
        .filter(|(line, status)| line.contains("list-type=2") && *status == 501)
        .count();
    assert_eq!(refused, 3, "{seen:?}");
    let version_1 = seen
        .iter()
        .filter(|(line, status)| {
            line.starts_with("GET /v1-b")
                && !line.contains("list-type")
                && *status == 200
                && line.contains("prefix=")
        })
        .count();
    assert!(version_1 >= 3, "{seen:?}");
    // --list-objects-v1 asks version 1 from the start: no refusal at all.
    let listed = at_proxy(&["--list-objects-v1", "ls", "-r", "s3://v1-b/"]);
    assert!(listed.contains("keep/a.txt"), "{listed}");
    let refused_after = proxy
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(line, _)| line.contains("list-type=2"))
        .count();
    assert_eq!(refused_after, 3);
}

/// The answer to the first CreateMultipartUpload of each command is lost on its way back
/// (the store made the upload): the client creates another, and local-s3 cannot list
/// uploads to abort the first. Each result names the possible orphan and s3w warns, for a
/// multipart S3→S3 copy as for a directory upload.
#[test]
fn a_lost_create_answer_is_reported_as_a_possible_orphan_by_cp_and_cp_r() {
    let env = support::Env::new();
    env.ok(&["mb", "s3://orphan-b"]);
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.bin");
    std::fs::write(&big, vec![5u8; 17 << 20]).unwrap();
    env.ok(&["cp", big.to_str().unwrap(), "s3://orphan-b/big.bin"]);
    let creates = Arc::new(AtomicUsize::new(0));
    let start = |creates: Arc<AtomicUsize>| {
        Proxy::start(env.server.endpoint(), move |line| {
            if line.starts_with("POST")
                && line.contains("?uploads")
                && creates.fetch_add(1, Ordering::SeqCst) == 0
            {
                return Verdict::LoseAnswer;
            }
            Verdict::Forward
        })
    };
    let run = |proxy: &Proxy, args: &[&str]| {
        let mut all = vec![
            "--json",
            "--multipart-threshold",
            "8M",
            "--endpoint-url",
            proxy.endpoint.as_str(),
        ];
        all.extend(args);
        let out = env.run(&all);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let results: Vec<serde_json::Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (results, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let proxy = start(creates.clone());
    let (copied, said) = run(
        &proxy,
        &["cp", "s3://orphan-b/big.bin", "s3://orphan-b/copy.bin"],
    );
    assert_eq!(copied.len(), 1, "{copied:?}");
    assert!(copied[0]["possible_orphan"].is_string(), "{copied:?}");
    assert!(
        said.contains("may have an extra, empty multipart upload"),
        "{said}"
    );
    creates.store(0, Ordering::SeqCst);
    let (uploaded, said) = run(
        &proxy,
        &[
            "cp",
            "-r",
            dir.path().to_str().unwrap(),
            "s3://orphan-b/tree/",
        ],
    );
    assert_eq!(uploaded.len(), 1, "{uploaded:?}");
    assert_eq!(uploaded[0]["key"], "tree/big.bin");
    assert!(uploaded[0]["possible_orphan"].is_string(), "{uploaded:?}");
    assert!(
        said.contains("may have an extra, empty multipart upload"),
        "{said}"
    );
    // Both objects are whole.
    for key in ["copy.bin", "tree/big.bin"] {
        let stat: serde_json::Value = serde_json::from_str(
            env.ok(&["--json", "stat", &format!("s3://orphan-b/{key}")])
                .trim(),
        )
        .unwrap();
        assert_eq!(stat["size"], 17 << 20, "{key}");
    }
}

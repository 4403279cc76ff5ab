//! End-to-end tests of what issue 31 asked of the commands: `-` as stdin/stdout with a
//! 100 MiB stream, a sync round trip that transfers nothing, the filter order, symbolic
//! links, options a command cannot honour, S3→S3 REPLACE, completions for three shells,
//! and `--json` lines of every command parsed, failures included.

use std::io::Write;
use std::process::Stdio;

mod support;

use support::{Env, write};

fn json_lines(text: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(text)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn dash_is_stdin_and_stdout_for_a_100_mib_stream() {
    let env = Env::new();
    env.ok(&["mb", "s3://dash-b"]);
    let size = 100usize << 20;
    let data: Vec<u8> = (0..size).map(|i| (i * 7 % 253) as u8).collect();
    let mut child = env
        .cmd(&["--json", "cp", "-", "s3://dash-b/stream.bin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = {
        let data = data.clone();
        std::thread::spawn(move || stdin.write_all(&data).unwrap())
    };
    let up = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let line = &json_lines(&up.stdout)[0];
    assert_eq!(
        (line["type"].as_str(), line["size"].as_u64()),
        (Some("result"), Some(size as u64))
    );
    let down = env.run(&["cp", "s3://dash-b/stream.bin", "-"]);
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    assert!(down.stdout == data, "stdout is not the object");
    let cat = env.run(&["cat", "s3://dash-b/stream.bin"]);
    assert!(
        cat.status.success() && cat.stdout == data,
        "cat is not the object"
    );
    // `-` never names a file.
    assert!(!std::path::Path::new("-").exists());
}

#[test]
fn a_sync_round_trip_transfers_nothing_and_keeps_file_times() {
    let env = Env::new();
    env.ok(&["mb", "s3://rt-b"]);
    let src = tempfile::tempdir().unwrap();
    for name in ["a.txt", "dir/b.bin", "dir/deeper/c.json"] {
        write(&src.path().join(name), name.as_bytes());
    }
    let root = src.path().to_str().unwrap();
    assert_eq!(env.ok(&["sync", root, "s3://rt-b/t"]).lines().count(), 3);
    let down = tempfile::tempdir().unwrap();
    let droot = down.path().to_str().unwrap();
    assert_eq!(env.ok(&["sync", "s3://rt-b/t", droot]).lines().count(), 3);
    for name in ["a.txt", "dir/b.bin", "dir/deeper/c.json"] {
        let time = |root: &std::path::Path| {
            std::fs::metadata(root.join(name))
                .unwrap()
                .modified()
                .unwrap()
        };
        assert_eq!(
            time(down.path()),
            time(src.path()),
            "{name}: the file's time came back"
        );
    }
    // Back up, down again, and with exact timestamps: nothing to do.
    assert_eq!(env.ok(&["sync", droot, "s3://rt-b/t"]), "");
    assert_eq!(env.ok(&["sync", "s3://rt-b/t", droot]), "");
    assert_eq!(
        env.ok(&["sync", "--exact-timestamps", droot, "s3://rt-b/t"]),
        ""
    );
    // A changed file of the same size is sent by default (newer) and by --exact-timestamps,
    // not by --size-only; --no-clobber never overwrites.
    std::fs::write(down.path().join("a.txt"), b"A.TXT").unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    support::set_mtime(&down.path().join("a.txt"), later);
    assert_eq!(env.ok(&["sync", "--size-only", droot, "s3://rt-b/t"]), "");
    assert_eq!(env.ok(&["sync", "--no-clobber", droot, "s3://rt-b/t"]), "");
    let sent = env.ok(&["sync", droot, "s3://rt-b/t"]);
    assert!(
        sent.starts_with("upload: ") && sent.lines().count() == 1,
        "{sent}"
    );
    assert_eq!(env.run(&["cat", "s3://rt-b/t/a.txt"]).stdout, b"A.TXT");
}

#[test]
fn a_single_file_keeps_its_time_through_cp_up_and_down() {
    let env = Env::new();
    env.ok(&["mb", "s3://one-b"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.txt");
    write(&file, b"written two days ago");
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400);
    support::set_mtime(&file, then);
    env.ok(&["cp", file.to_str().unwrap(), "s3://one-b/old.txt"]);
    let back = dir.path().join("back.txt");
    env.ok(&["cp", "s3://one-b/old.txt", back.to_str().unwrap()]);
    let time = |path: &std::path::Path| std::fs::metadata(path).unwrap().modified().unwrap();
    assert_eq!(time(&back), time(&file), "the file's time came back");
}

#[test]
fn filters_follow_the_aws_cli_order_on_cp_rm_and_sync() {
    let env = Env::new();
    env.ok(&["mb", "s3://flt-b"]);
    let src = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.jpg", "logs/c.txt", "logs/d.tmp"] {
        write(&src.path().join(name), name.as_bytes());
    }
    let root = src.path().to_str().unwrap();
    // The later filter wins: only .txt files, in any directory.
    let up = env.ok(&[
        "cp",
        "-r",
        "--exclude",
        "*",
        "--include",
        "*.txt",
        root,
        "s3://flt-b/x/",
    ]);
    assert_eq!(up.lines().count(), 2, "{up}");
    // The other order: the exclude comes last and takes everything.
    let none = env.run(&[
        "cp",
        "-r",
        "--include",
        "*.txt",
        "--exclude",
        "*",
        root,
        "s3://flt-b/y/",
    ]);
    assert!(none.status.success() && none.stdout.is_empty());
    env.ok(&["cp", "-r", root, "s3://flt-b/z/"]);
    let removed = env.ok(&["rm", "-r", "--exclude", "logs/*", "s3://flt-b/z"]);
    assert_eq!(removed.lines().count(), 2, "{removed}");
    let left = env.ok(&["ls", "-r", "s3://flt-b/z/"]);
    assert!(
        left.contains("z/logs/c.txt") && left.contains("z/logs/d.tmp"),
        "{left}"
    );
    // sync --delete leaves excluded destination entries alone.
    let synced = env.ok(&[
        "sync",
        "--delete",
        "--exclude",
        "logs/*",
        root,
        "s3://flt-b/z",
    ]);
    assert_eq!(synced.lines().count(), 2, "{synced}");
    assert_eq!(env.ok(&["ls", "-r", "s3://flt-b/z/"]).lines().count(), 4);
}

#[cfg(unix)]
#[test]
fn links_are_followed_loops_and_broken_links_reported_and_no_follow_skips_them() {
    let env = Env::new();
    env.ok(&["mb", "s3://lnk-b"]);
    let src = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(&src.path().join("real.txt"), b"real");
    write(&outside.path().join("shared/s.txt"), b"shared");
    std::os::unix::fs::symlink(outside.path().join("shared"), src.path().join("linked")).unwrap();
    std::os::unix::fs::symlink(src.path().join("real.txt"), src.path().join("alias.txt")).unwrap();
    std::os::unix::fs::symlink(src.path().join("gone"), src.path().join("broken")).unwrap();
    std::os::unix::fs::symlink(src.path(), src.path().join("linked-back")).unwrap();
    let root = src.path().to_str().unwrap();
    let out = env.run(&["--json", "cp", "-r", root, "s3://lnk-b/f/"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the broken link and the loop fail"
    );
    let lines = json_lines(&out.stdout);
    let stored: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "result")
        .map(|l| l["key"].as_str().unwrap())
        .collect();
    assert_eq!(stored.len(), 3, "{lines:?}");
    for key in ["f/alias.txt", "f/linked/s.txt", "f/real.txt"] {
        assert!(stored.contains(&key), "{key}: {lines:?}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("broken symbolic link"), "{stderr}");
    assert!(stderr.contains("symbolic link loop"), "{stderr}");
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    let skipped = env.ok(&["cp", "-r", "--no-follow-symlinks", root, "s3://lnk-b/n/"]);
    assert_eq!(
        skipped.trim().lines().count(),
        1,
        "only real.txt: {skipped}"
    );
}

#[test]
fn options_a_command_cannot_honour_are_refused_and_s3_to_s3_attributes_replace() {
    let env = Env::new();
    env.ok(&["mb", "s3://opt-b"]);
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("page.html"), b"<p>x</p>");
    let file = dir.path().join("page.html");
    env.ok(&[
        "cp",
        "--metadata",
        "old=1",
        file.to_str().unwrap(),
        "s3://opt-b/page.html",
    ]);
    // A download writes no object: attribute flags are usage errors.
    let refused = env.run(&[
        "cp",
        "--content-type",
        "text/plain",
        "s3://opt-b/page.html",
        dir.path().join("x").to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--content-type"));
    let refused = env.run(&[
        "cp",
        "--object-lock-legal-hold-status",
        "ON",
        "s3://opt-b/page.html",
        dir.path().join("x").to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--object-lock-legal-hold-status"));
    let refused = env.run(&[
        "cp",
        "--metadata-directive",
        "COPY",
        "--metadata",
        "a=b",
        "s3://opt-b/page.html",
        "s3://opt-b/copy.html",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    // S3→S3 with attributes: REPLACE, as the AWS CLI.
    env.ok(&[
        "cp",
        "--content-type",
        "text/plain",
        "--metadata",
        "a=b",
        "--cache-control",
        "no-cache",
        "s3://opt-b/page.html",
        "s3://opt-b/copy.html",
    ]);
    let stat: serde_json::Value =
        serde_json::from_str(env.ok(&["--json", "stat", "s3://opt-b/copy.html"]).trim()).unwrap();
    assert_eq!(stat["content_type"], "text/plain", "{stat}");
    assert_eq!(stat["metadata"]["a"], "b", "{stat}");
    assert!(
        stat["metadata"].get("old").is_none(),
        "REPLACE keeps no old metadata: {stat}"
    );
    // Without attributes the copy keeps the source's.
    env.ok(&["cp", "s3://opt-b/page.html", "s3://opt-b/kept.html"]);
    let stat: serde_json::Value =
        serde_json::from_str(env.ok(&["--json", "stat", "s3://opt-b/kept.html"]).trim()).unwrap();
    assert_eq!(stat["content_type"], "text/html", "{stat}");
    assert_eq!(stat["metadata"]["old"], "1", "{stat}");
    // A local typo: exit 2, nothing sent; a bad bucket name: said once.
    let typo = env.run(&[
        "cp",
        dir.path().join("nope.txt").to_str().unwrap(),
        "s3://opt-b/",
    ]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("No such file or directory"));
    let short = env.run(&["mb", "s3://ab"]);
    assert_eq!(short.status.code(), Some(2));
    let text = String::from_utf8_lossy(&short.stderr);
    assert_eq!(
        (text.lines().count(), text.matches("invalid").count()),
        (1, 1),
        "{text}"
    );
}

#[test]
fn completions_for_three_shells_and_a_man_page_come_from_the_definitions() {
    let env = Env::new();
    for (shell, marker) in [
        ("bash", "complete -F _s3w"),
        ("zsh", "#compdef s3w"),
        ("fish", "complete -c s3w"),
    ] {
        let script = env.ok(&["completions", shell]);
        assert!(script.contains(marker), "{shell}: {script}");
        for flag in ["--no-follow-symlinks", "--exact-timestamps", "--range-size"] {
            assert!(
                script.contains(flag.trim_start_matches('-')),
                "{shell}: {flag}"
            );
        }
    }
    let man = env.ok(&["man"]);
    assert!(man.contains(".TH s3w 1") && man.contains("sync"), "{man}");
}

#[test]
fn json_lines_of_every_command_parse_and_carry_a_type_failures_included() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("t/a.txt"), b"aaa");
    let root = dir.path().join("t");
    let root = root.to_str().unwrap();
    let file = dir.path().join("t/a.txt");
    let file = file.to_str().unwrap();
    let back = dir.path().join("back");
    let back = back.to_str().unwrap();
    let commands: Vec<(Vec<&str>, &str, bool)> = vec![
        (vec!["mb", "s3://js-b"], "bucket", true),
        (vec!["cp", file, "s3://js-b/a.txt"], "result", true),
        (
            vec!["cp", "--dryrun", file, "s3://js-b/a.txt"],
            "dryrun",
            true,
        ),
        (vec!["cp", "-r", root, "s3://js-b/r/"], "result", true),
        (
            vec!["sync", "--dryrun", root, "s3://js-b/s/"],
            "dryrun",
            true,
        ),
        (vec!["sync", root, "s3://js-b/s/"], "result", true),
        (vec!["cp", "s3://js-b/a.txt", back], "result", true),
        (vec!["ls"], "bucket", true),
        (vec!["ls", "s3://js-b/"], "prefix", true),
        (
            vec!["ls", "-r", "--summarize", "s3://js-b/"],
            "object",
            true,
        ),
        (vec!["du", "s3://js-b/r"], "summary", true),
        (vec!["stat", "s3://js-b/a.txt"], "head", true),
        (vec!["put", "s3://js-b/empty-stdin"], "result", true),
        (vec!["presign", "s3://js-b/a.txt"], "url", true),
        (
            vec!["mv", "s3://js-b/a.txt", "s3://js-b/b.txt"],
            "result",
            true,
        ),
        (vec!["rm", "--dryrun", "s3://js-b/b.txt"], "dryrun", true),
        (vec!["rm", "-r", "s3://js-b/r"], "result", true),
        // Failures: a usage error, a missing bucket, a missing key, an empty listing.
        (
            vec!["cp", "s3://js-b/none", "--content-type", "x/y", back],
            "error",
            false,
        ),
        (vec!["ls", "s3://no-such-js-bucket/"], "error", false),
        (vec!["stat", "s3://js-b/none"], "error", false),
        (vec!["ls", "s3://js-b/empty/"], "error", false),
        (vec!["cp", "-r", root, "s3://js-b/bad/"], "result", true),
        (vec!["rb", "--force", "s3://js-b"], "bucket", true),
    ];
    for (args, kind, ok) in commands {
        let out = env.run(&[&["--json"][..], &args].concat());
        assert_eq!(
            out.status.success(),
            ok,
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = json_lines(&out.stdout);
        assert!(!lines.is_empty(), "{args:?}: no JSON line");
        assert!(
            lines.iter().all(|l| l["type"].is_string()),
            "{args:?}: {lines:?}"
        );
        assert!(
            lines.iter().any(|l| l["type"] == kind),
            "{args:?}: no {kind}: {lines:?}"
        );
        if !ok {
            let error = lines.iter().find(|l| l["type"] == "error").unwrap();
            assert!(
                error["error"].as_str().is_some_and(|e| !e.is_empty()),
                "{error}"
            );
        }
        if kind == "result" {
            let result = lines.iter().find(|l| l["type"] == "result").unwrap();
            if result["operation"] != "delete" {
                assert!(result["verification"].is_string(), "{args:?}: {result}");
            }
        }
    }
}

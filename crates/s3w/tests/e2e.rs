//! End-to-end tests: the built `s3w` binary against an in-process local-s3 server.

use std::process::Command;

mod support;

use support::{Env, write};

const TREE: &[&str] = &[
    "a.txt",
    "with space/b c.bin",
    "unicodé/ü€.json",
    "plus+sign/x+y.txt",
    "per%cent/100%.txt",
    "deep/er/still/z.gz",
];

#[test]
fn mb_cp_ls_cat_stat_rm_rb_round_trip_a_tree_with_unusual_names() {
    let env = Env::new();
    env.ok(&["mb", "s3://tree"]);
    let src = tempfile::tempdir().unwrap();
    for (i, name) in TREE.iter().enumerate() {
        write(
            &src.path().join(name),
            format!("content {i} of {name}").repeat(i + 1).as_bytes(),
        );
    }
    let up = env.ok(&[
        "cp",
        "--recursive",
        src.path().to_str().unwrap(),
        "s3://tree/up/",
    ]);
    assert_eq!(up.lines().count(), TREE.len(), "{up}");

    let listing = env.ok(&["ls", "--recursive", "--summarize", "s3://tree/up/"]);
    for name in TREE {
        assert!(
            listing.contains(&format!("up/{name}")),
            "{name} missing from {listing}"
        );
    }
    assert!(
        listing.contains(&format!("Total Objects: {}", TREE.len())),
        "{listing}"
    );

    // One level: prefixes and objects.
    // One level: prefixes and objects, named relative to the prefix (as the AWS CLI).
    let level = env.ok(&["ls", "s3://tree/up/"]);
    assert!(level.contains(" PRE with space/\n"), "{level}");
    assert!(
        level.contains(" a.txt\n") && !level.contains("up/a.txt"),
        "{level}"
    );
    assert!(!level.contains("z.gz"), "{level}");

    let down = tempfile::tempdir().unwrap();
    env.ok(&[
        "cp",
        "--recursive",
        "s3://tree/up/",
        down.path().to_str().unwrap(),
    ]);
    for name in TREE {
        assert_eq!(
            std::fs::read(down.path().join(name)).unwrap(),
            std::fs::read(src.path().join(name)).unwrap(),
            "{name} differs after the round trip"
        );
    }

    let cat = env.run(&["cat", "s3://tree/up/plus+sign/x+y.txt"]);
    assert!(cat.status.success());
    assert_eq!(
        cat.stdout,
        std::fs::read(src.path().join("plus+sign/x+y.txt")).unwrap()
    );
    let ranged = env.run(&["cat", "--range", "2-5", "s3://tree/up/a.txt"]);
    assert_eq!(ranged.stdout, b"nten");

    let stat = env.ok(&["--json", "stat", "s3://tree/up/unicodé/ü€.json"]);
    let stat: serde_json::Value = serde_json::from_str(stat.trim()).unwrap();
    assert_eq!(
        stat["content_type"], "application/json",
        "guessed from the extension"
    );
    assert_eq!(
        stat["size"].as_u64().unwrap(),
        std::fs::metadata(src.path().join("unicodé/ü€.json"))
            .unwrap()
            .len()
    );

    // S3→S3 copy and mv.
    env.ok(&["cp", "s3://tree/up/a.txt", "s3://tree/copy/a.txt"]);
    env.ok(&["mv", "s3://tree/copy/a.txt", "s3://tree/moved/a.txt"]);
    let moved = env.run(&["cat", "s3://tree/moved/a.txt"]);
    assert_eq!(
        moved.stdout,
        std::fs::read(src.path().join("a.txt")).unwrap()
    );
    assert!(
        !env.ok(&["ls", "--recursive", "s3://tree/"])
            .contains("copy/a.txt")
    );

    let dry = env.ok(&["rm", "--recursive", "--dryrun", "s3://tree/up/"]);
    assert_eq!(dry.lines().count(), TREE.len(), "{dry}");
    assert!(
        env.ok(&["ls", "--recursive", "s3://tree/up/"])
            .contains("a.txt"),
        "dryrun deleted"
    );
    let rm = env.ok(&["rm", "--recursive", "s3://tree/up/"]);
    assert_eq!(rm.lines().count(), TREE.len(), "{rm}");
    assert!(!env.ok(&["ls", "--recursive", "s3://tree/"]).contains("up/"));

    env.ok(&["rb", "--force", "s3://tree"]);
    assert!(!env.ok(&["ls"]).contains("tree"));
}

#[test]
fn wildcards_select_matching_objects_only() {
    let env = Env::new();
    env.ok(&["mb", "s3://logs"]);
    let src = tempfile::tempdir().unwrap();
    for name in ["2026-01.gz", "2026-02.gz", "2025-12.gz", "2026-03.txt"] {
        write(&src.path().join("logs").join(name), name.as_bytes());
    }
    env.ok(&[
        "cp",
        "-r",
        src.path().join("logs").to_str().unwrap(),
        "s3://logs/logs/",
    ]);
    let dest = tempfile::tempdir().unwrap();
    let out = env.ok(&[
        "cp",
        "s3://logs/logs/2026-*.gz",
        dest.path().to_str().unwrap(),
    ]);
    assert_eq!(out.lines().count(), 2, "{out}");
    let mut got: Vec<_> = std::fs::read_dir(dest.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    got.sort();
    assert_eq!(got, ["2026-01.gz", "2026-02.gz"]);
}

#[test]
fn json_lines_parse_and_carry_key_size_etag() {
    let env = Env::new();
    env.ok(&["mb", "s3://json-b"]);
    let src = tempfile::tempdir().unwrap();
    write(&src.path().join("one.txt"), b"12345");
    let put = env.ok(&[
        "--json",
        "cp",
        src.path().join("one.txt").to_str().unwrap(),
        "s3://json-b/",
    ]);
    let put: serde_json::Value = serde_json::from_str(put.trim()).unwrap();
    assert_eq!(put["key"], "one.txt");
    assert_eq!(put["size"], 5);
    assert!(put["duration_ms"].is_u64());
    let ls = env.ok(&["--json", "ls", "s3://json-b/"]);
    let entry: serde_json::Value = serde_json::from_str(ls.trim()).unwrap();
    assert_eq!(entry["key"], "one.txt");
    assert_eq!(entry["size"], 5);
    assert!(entry.as_object().unwrap().contains_key("etag"), "{entry}");
}

#[test]
fn errors_are_one_line_with_exit_codes() {
    let env = Env::new();
    let missing = env.run(&["ls", "s3://no-such-bucket/"]);
    assert_eq!(missing.status.code(), Some(1));
    let text = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    assert!(
        text.contains("NoSuchBucket") && text.contains("s3w mb s3://no-such-bucket"),
        "{text}"
    );

    env.ok(&["mb", "s3://err-b"]);
    let no_key = env.run(&["cat", "s3://err-b/nothing"]);
    assert_eq!(no_key.status.code(), Some(1));
    let text = String::from_utf8_lossy(&no_key.stderr);
    assert!(
        text.contains("NoSuchKey") && text.trim().lines().count() == 1,
        "{text}"
    );

    let denied = env
        .cmd(&["ls", "s3://err-b/"])
        .env("AWS_SECRET_ACCESS_KEY", "wrong-secret")
        .output()
        .unwrap();
    assert_eq!(denied.status.code(), Some(1));
    let text = String::from_utf8_lossy(&denied.stderr);
    assert!(
        text.contains("access denied") && !text.contains("wrong-secret"),
        "{text}"
    );

    let bad = env.run(&["--endpoint-url", "http://127.0.0.1:1", "ls", "s3://err-b/"]);
    assert_eq!(bad.status.code(), Some(1));
    let text = String::from_utf8_lossy(&bad.stderr);
    assert!(
        text.contains("--endpoint-url") && text.trim().lines().count() == 1,
        "{text}"
    );

    let usage = env.run(&["cp", "only-one-arg"]);
    assert_eq!(usage.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&usage.stderr).contains("panicked"));
}

#[test]
fn presign_get_url_is_signed_and_debug_logs_requests_without_secrets() {
    let env = Env::new();
    env.ok(&["mb", "s3://pre-b"]);
    let url = env.ok(&["presign", "--expires-in", "600", "s3://pre-b/k.txt"]);
    assert!(
        url.starts_with(env.server.endpoint()) && url.contains("X-Amz-Expires=600"),
        "{url}"
    );
    assert!(url.contains("X-Amz-Signature="), "{url}");
    assert!(!url.contains(env.server.secret_key()));
    let put = env.ok(&["presign", "--method", "PUT", "s3://pre-b/k.txt"]);
    assert!(put.contains("X-Amz-Signature="), "{put}");

    let debug = env.run(&["--debug", "ls", "s3://pre-b/"]);
    // An empty listing exits 1, as `aws s3 ls` does.
    assert_eq!(debug.status.code(), Some(1));
    let text = String::from_utf8_lossy(&debug.stderr);
    assert!(
        text.contains("GET") && text.contains("/pre-b") && text.contains("200"),
        "{text}"
    );
    assert!(
        !text.contains(env.server.secret_key()),
        "secret printed: {text}"
    );
}

#[test]
fn sync_both_ways_twice_transfers_nothing_the_second_time_and_delete_prunes() {
    let env = Env::new();
    env.ok(&["mb", "s3://sync-b"]);
    let src = tempfile::tempdir().unwrap();
    for name in TREE {
        write(&src.path().join(name), name.as_bytes());
    }
    write(&src.path().join("skip.tmp"), b"excluded");
    let root = src.path().to_str().unwrap();
    let plan = env.ok(&[
        "sync",
        "--dryrun",
        "--exclude",
        "*.tmp",
        root,
        "s3://sync-b/s",
    ]);
    assert_eq!(plan.lines().count(), TREE.len(), "{plan}");
    let listed = env.run(&["ls", "-r", "s3://sync-b/"]);
    assert!(
        listed.stdout.is_empty() && listed.status.code() == Some(1),
        "dryrun uploaded"
    );
    let first = env.ok(&["sync", "--exclude", "*.tmp", root, "s3://sync-b/s"]);
    assert_eq!(first.lines().count(), TREE.len(), "{first}");
    let second = env.ok(&["sync", "--exclude", "*.tmp", root, "s3://sync-b/s"]);
    assert_eq!(second, "", "second sync transferred: {second}");
    assert!(!env.ok(&["ls", "-r", "s3://sync-b/"]).contains("skip.tmp"));

    // Down, twice, byte for byte.
    let down = tempfile::tempdir().unwrap();
    let droot = down.path().to_str().unwrap();
    let first = env.ok(&["sync", "s3://sync-b/s", droot]);
    assert_eq!(first.lines().count(), TREE.len(), "{first}");
    for name in TREE {
        assert_eq!(
            std::fs::read(down.path().join(name)).unwrap(),
            name.as_bytes()
        );
    }
    assert_eq!(env.ok(&["sync", "s3://sync-b/s", droot]), "");

    // --delete removes what the source no longer has.
    std::fs::remove_file(src.path().join("a.txt")).unwrap();
    let pruned = env.ok(&[
        "sync",
        "--delete",
        "--exclude",
        "*.tmp",
        root,
        "s3://sync-b/s",
    ]);
    assert_eq!(pruned.trim(), "delete: s3://sync-b/s/a.txt", "{pruned}");
    let pruned = env.ok(&["sync", "--delete", "s3://sync-b/s", droot]);
    assert!(
        pruned.contains("delete:") && !down.path().join("a.txt").exists(),
        "{pruned}"
    );

    let du = env.ok(&["--json", "du", "s3://sync-b/s/"]);
    let du: serde_json::Value = serde_json::from_str(du.trim()).unwrap();
    assert_eq!(du["objects"].as_u64(), Some(TREE.len() as u64 - 1));
    let expected: usize = TREE.iter().skip(1).map(|n| n.len()).sum();
    assert_eq!(du["size"].as_u64(), Some(expected as u64));
}

#[test]
fn one_failed_object_is_reported_the_others_finish_and_the_exit_code_is_1() {
    let env = Env::new();
    env.ok(&["mb", "s3://part-b"]);
    let src = tempfile::tempdir().unwrap();
    for name in ["ok1.txt", "ok2.txt", "ok3.txt"] {
        write(&src.path().join(name), name.as_bytes());
    }
    // A key over S3's 1,024-byte limit: refused for that object only.
    let long: std::path::PathBuf = (0..5).map(|_| "x".repeat(250)).collect();
    write(&src.path().join(long).join("bad.txt"), b"bad");
    let out = env.run(&[
        "--json",
        "cp",
        "-r",
        src.path().to_str().unwrap(),
        "s3://part-b/",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines.iter().filter(|l| l.get("error").is_some()).count(),
        1,
        "{lines:?}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    let listing = env.ok(&["ls", "s3://part-b/"]);
    for name in ["ok1.txt", "ok2.txt", "ok3.txt"] {
        assert!(listing.contains(name), "{listing}");
    }
}

#[test]
fn progress_bars_render_under_a_pseudo_terminal_and_stay_hidden_otherwise() {
    let env = Env::new();
    env.ok(&["mb", "s3://bar-b"]);
    let src = tempfile::tempdir().unwrap();
    let file = src.path().join("eight.bin");
    write(&file, &vec![7u8; 8 << 20]);
    let command = format!(
        "{} cp {} s3://bar-b/eight.bin",
        env!("CARGO_BIN_EXE_s3w"),
        file.display()
    );
    // `script` runs the command on a pseudo-terminal and copies what it draws to stdout.
    let base = env.cmd(&[]);
    let script = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .envs(
            base.get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .env("TERM", "xterm")
        .env("COLUMNS", "160")
        .output()
        .expect("run script (util-linux)");
    assert!(
        script.status.success(),
        "{}",
        String::from_utf8_lossy(&script.stdout)
    );
    let drawn = String::from_utf8_lossy(&script.stdout);
    assert!(
        drawn.contains("eight.bin  0 B/8.0 MiB"),
        "no progress line with the total drawn: {drawn:?}"
    );
    assert!(
        drawn.contains("eight.bin  8.0 MiB/8.0 MiB") && drawn.contains("done"),
        "the line never reached the size: {drawn:?}"
    );
    // Every position drawn (`<done>/8.0 MiB`) is within the size. (The rate beside it, such
    // as `119.0 MiB/s`, is not a position.)
    for position in drawn
        .split("/8.0 MiB")
        .map(|before| before.rsplit("  ").next().unwrap())
    {
        let mib = match position.split_once(' ') {
            Some((value, "B")) => value.parse::<f64>().unwrap() / (1 << 20) as f64,
            Some((value, "KiB")) => value.parse::<f64>().unwrap() / 1024.0,
            Some((value, "MiB")) => value.parse::<f64>().unwrap(),
            _ => continue, // the text after the last position
        };
        assert!(
            mib <= 8.0,
            "the line went past the size ({position}): {drawn:?}"
        );
    }

    // Not a terminal: no bar at all.
    let plain = env.run(&["cp", file.to_str().unwrap(), "s3://bar-b/again.bin"]);
    assert!(plain.status.success());
    assert!(!String::from_utf8_lossy(&plain.stderr).contains("MiB"));
}

#[test]
fn profile_flag_reads_the_named_profile_of_the_shared_files() {
    let env = Env::new();
    let credentials = env.home.path().join("credentials");
    std::fs::write(
        &credentials,
        format!(
            "[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n[work]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
            env.server.access_key(),
            env.server.secret_key()
        ),
    )
    .unwrap();
    let with = |profile: Option<&str>| {
        let mut args = vec!["mb", "s3://prof-b"];
        if let Some(p) = profile {
            args.splice(0..0, ["--profile", p]);
        }
        env.cmd(&args)
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY")
            .env("AWS_SHARED_CREDENTIALS_FILE", &credentials)
            .output()
            .unwrap()
    };
    let default = with(None);
    assert_eq!(
        default.status.code(),
        Some(1),
        "the default profile's keys are wrong"
    );
    let work = with(Some("work"));
    assert!(
        work.status.success(),
        "{}",
        String::from_utf8_lossy(&work.stderr)
    );
}

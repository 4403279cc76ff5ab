//! End-to-end tests of flags the other suites do not reach: upload attributes, `rm -r` over
//! more than one DeleteObjects batch, `abort-stale`, `--quiet`, usage errors (exit 2), `mv`
//! from a local file, S3→S3 recursive copies.

use std::process::Command;

mod support;

use support::{Env, set_mtime, write};

#[test]
fn upload_attributes_reach_the_object() {
    let env = Env::new();
    env.ok(&["mb", "s3://attr-b"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("page.html");
    write(&file, b"<p>hi</p>");
    let file = file.to_str().unwrap();
    // Guessed from the extension.
    env.ok(&["cp", file, "s3://attr-b/guessed.html"]);
    let stat: serde_json::Value = serde_json::from_str(
        env.ok(&["--json", "stat", "s3://attr-b/guessed.html"])
            .trim(),
    )
    .unwrap();
    assert_eq!(stat["content_type"], "text/html");
    let listed = env.ok(&["ls", "s3://attr-b/"]);
    let line = listed.lines().next().unwrap();
    // `YYYY-MM-DD HH:MM:SS        SIZE key`, as `aws s3 ls` prints it.
    assert!(
        line.len() > 20 && line.as_bytes()[4] == b'-' && line.as_bytes()[13] == b':',
        "{listed}"
    );
    assert!(line.ends_with(" 9 guessed.html"), "{listed}");
    let entry: serde_json::Value =
        serde_json::from_str(env.ok(&["--json", "ls", "s3://attr-b/"]).trim()).unwrap();
    assert!(
        entry["last_modified"].as_str().unwrap().ends_with('Z'),
        "{entry}"
    );
    // Given; metadata and a SHA256 checksum stored and read back with the head.
    env.ok(&[
        "cp",
        "--content-type",
        "application/x-test",
        "--metadata",
        "owner=me",
        "--metadata",
        "team=storage",
        "--checksum",
        "sha256",
        file,
        "s3://attr-b/given.bin",
    ]);
    let stat: serde_json::Value =
        serde_json::from_str(env.ok(&["--json", "stat", "s3://attr-b/given.bin"]).trim()).unwrap();
    assert_eq!(stat["content_type"], "application/x-test");
    assert_eq!(stat["metadata"]["owner"], "me", "{stat}");
    assert_eq!(stat["metadata"]["team"], "storage", "{stat}");
    assert_eq!(stat["size"], 9);
    assert!(
        stat["checksums"]["SHA256"]
            .as_str()
            .is_some_and(|v| v.len() == 44),
        "{stat}"
    );
    let text = env.ok(&["stat", "s3://attr-b/given.bin"]);
    assert!(text.contains("Checksums : SHA256="), "{text}");
    assert!(!text.contains("ResponseChecksums"), "a Debug dump: {text}");
    // local-s3 (s3s-fs) stores neither the storage class nor SSE; the request is
    // accepted, which is all this store can show.
    env.ok(&[
        "cp",
        "--storage-class",
        "STANDARD",
        "--sse",
        "AES256",
        file,
        "s3://attr-b/classy.html",
    ]);
    // Bad values are usage errors.
    let bad = env.run(&["cp", "--sse", "rot13", file, "s3://attr-b/x"]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = env.run(&["cp", "--checksum", "md4", file, "s3://attr-b/x"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn rm_recursive_deletes_more_than_one_batch_of_1000() {
    let env = Env::new();
    env.ok(&["mb", "s3://many-b"]);
    let dir = tempfile::tempdir().unwrap();
    for i in 0..1005 {
        write(&dir.path().join(format!("k{i:04}")), b"x");
    }
    env.ok(&[
        "--quiet",
        "--concurrency",
        "16",
        "cp",
        "-r",
        dir.path().to_str().unwrap(),
        "s3://many-b/p/",
    ]);
    let du: serde_json::Value =
        serde_json::from_str(env.ok(&["--json", "du", "s3://many-b/p/"]).trim()).unwrap();
    assert_eq!(du["objects"], 1005);
    assert_eq!(du["size"], 1005);
    let deleted = env.ok(&["--json", "rm", "-r", "s3://many-b/p/"]);
    assert_eq!(deleted.lines().count(), 1005);
    let empty = env.run(&["ls", "-r", "s3://many-b/"]);
    assert!(empty.stdout.is_empty() && empty.status.code() == Some(1));
    env.ok(&["rb", "s3://many-b"]);
}

#[test]
fn quiet_prints_nothing_and_usage_errors_exit_2() {
    let env = Env::new();
    env.ok(&["mb", "s3://q-b"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.txt");
    write(&file, b"quiet");
    assert_eq!(
        env.ok(&["--quiet", "cp", file.to_str().unwrap(), "s3://q-b/f.txt"]),
        ""
    );
    for args in [
        &["cp", "a", "b"][..],
        &["cat", "s3://q-b"][..],
        &["rm", "s3://q-b/"][..],
        &["cat", "--range", "x-y", "s3://q-b/f.txt"][..],
        &["presign", "--method", "DELETE", "s3://q-b/f.txt"][..],
        &["no-such-command"][..],
    ] {
        let out = env.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn mv_from_local_removes_the_file_and_s3_to_s3_recursive_copies_keep_names() {
    let env = Env::new();
    env.ok(&["mb", "s3://mv-b"]);
    env.ok(&["mb", "s3://mv-c"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("moving.txt");
    write(&file, b"moving");
    env.ok(&["mv", file.to_str().unwrap(), "s3://mv-b/in/"]);
    assert!(!file.exists(), "mv left the source");
    write(&dir.path().join("t/a b+c%.txt"), b"odd name");
    let dry = env.ok(&[
        "cp",
        "--dryrun",
        "-r",
        dir.path().to_str().unwrap(),
        "s3://mv-b/in/",
    ]);
    assert!(
        dry.starts_with("(dryrun) upload: ") && dry.contains("a b+c%.txt to s3://mv-b/in/t/"),
        "{dry}"
    );
    assert!(
        !env.ok(&["ls", "-r", "s3://mv-b/"]).contains("a b+c%"),
        "dryrun uploaded"
    );
    env.ok(&["cp", "-r", dir.path().to_str().unwrap(), "s3://mv-b/in/"]);
    env.ok(&["cp", "-r", "s3://mv-b/in/", "s3://mv-c/out/"]);
    let listing = env.ok(&["ls", "-r", "s3://mv-c/"]);
    assert!(listing.contains("out/moving.txt"), "{listing}");
    assert!(listing.contains("out/t/a b+c%.txt"), "{listing}");
    let cat = env.run(&["cat", "s3://mv-c/out/t/a b+c%.txt"]);
    assert_eq!(cat.stdout, b"odd name");
}

/// A scripted store for `abort-stale` (local-s3, s3s-fs 0.14, does not implement
/// ListMultipartUploads): lists an old and a future upload, answers aborts with 204, and
/// records the request lines.
fn uploads_server() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            let head = String::from_utf8_lossy(&buf).into_owned();
            let line = head.lines().next().unwrap_or_default().to_owned();
            log.lock().unwrap().push(line.clone());
            let (status, body) = if line.starts_with("GET") && line.contains("uploads") {
                (
                    "200 OK",
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListMultipartUploadsResult>\
                     <Bucket>mp-b</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker>\
                     <MaxUploads>1000</MaxUploads><IsTruncated>false</IsTruncated>\
                     <Upload><Key>old/abandoned.bin</Key><UploadId>UP-OLD</UploadId>\
                     <Initiated>2020-01-01T00:00:00.000Z</Initiated></Upload>\
                     <Upload><Key>old/running.bin</Key><UploadId>UP-NEW</UploadId>\
                     <Initiated>2099-01-01T00:00:00.000Z</Initiated></Upload>\
                     </ListMultipartUploadsResult>",
                )
            } else if line.starts_with("DELETE") {
                ("204 No Content", "")
            } else {
                ("501 Not Implemented", "")
            };
            let _ = stream.write_all(
                format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/xml\r\nx-amz-request-id: R1\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    (format!("http://{address}"), seen)
}

#[test]
fn abort_stale_aborts_old_uploads_and_keeps_young_ones() {
    let env = Env::new();
    let (endpoint, seen) = uploads_server();
    let out = env.ok(&[
        "--endpoint-url",
        &endpoint,
        "--json",
        "abort-stale",
        "--older-than-hours",
        "24",
        "s3://mp-b/old/",
    ]);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0]["key"], "old/abandoned.bin", "{out}");
    assert_eq!(lines[0]["upload_id"], "UP-OLD");
    assert_eq!(lines[1]["aborted"], 1);
    assert_eq!(lines[1]["kept"], 1);
    let seen = seen.lock().unwrap();
    assert!(
        seen[0].starts_with("GET") && seen[0].contains("prefix=old"),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|l| l.starts_with("DELETE") && l.contains("uploadId=UP-OLD")),
        "{seen:?}"
    );
    assert!(!seen.iter().any(|l| l.contains("UP-NEW")), "{seen:?}");
}

#[test]
fn sync_with_checksum_compares_content_not_times() {
    let env = Env::new();
    env.ok(&["mb", "s3://ck-b"]);
    let dir = tempfile::tempdir().unwrap();
    let (same, changed) = (dir.path().join("same.txt"), dir.path().join("changed.txt"));
    write(&same, b"same bytes");
    write(&changed, b"old bytes!");
    let root = dir.path().to_str().unwrap();
    let first = env.ok(&["sync", "--checksum", "crc32", root, "s3://ck-b/d"]);
    assert_eq!(first.lines().count(), 2, "{first}");
    // Same content, touched into the future: times say "changed", content says "same".
    let hour = std::time::Duration::from_secs(3600);
    set_mtime(&same, std::time::SystemTime::now() + hour);
    // Other content of the same size, dated into the past: times say "same".
    write(&changed, b"new bytes!");
    set_mtime(&changed, std::time::SystemTime::now() - 24 * hour);
    let by_time = env.ok(&["sync", "--dryrun", root, "s3://ck-b/d"]);
    assert!(
        by_time.contains("same.txt") && !by_time.contains("changed.txt"),
        "{by_time}"
    );
    let by_content = env.ok(&["sync", "--checksum", "CRC32", root, "s3://ck-b/d"]);
    assert!(
        by_content.contains("changed.txt") && !by_content.contains("same.txt"),
        "{by_content}"
    );
    let cat = env.run(&["cat", "s3://ck-b/d/changed.txt"]);
    assert_eq!(cat.stdout, b"new bytes!");
    assert_eq!(
        env.ok(&["sync", "--checksum", "crc32", root, "s3://ck-b/d"]),
        ""
    );
}

/// `text` without ANSI escape sequences (`ESC [ … letter`).
fn strip_ansi(text: &str) -> String {
    let mut plain = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

/// "12.0 MiB" → bytes (approximately: one decimal).
fn size_of(text: &str) -> f64 {
    let (number, unit) = text.trim().split_once(' ').unwrap_or((text, "B"));
    let scale = match unit {
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => 1.0,
    };
    number.parse::<f64>().unwrap() * scale
}

#[test]
fn progress_frames_at_60_and_120_columns_know_the_total_from_the_first_frame_and_never_pass_it() {
    let env = Env::new();
    env.ok(&["mb", "s3://tot-b"]);
    let dir = tempfile::tempdir().unwrap();
    for (name, mib) in [("one.bin", 1), ("two.bin", 2), ("three.bin", 3)] {
        write(
            &dir.path().join("a-rather-long-directory-name").join(name),
            &vec![1u8; mib << 20],
        );
        write(&dir.path().join(name), &vec![2u8; mib << 20]);
    }
    for columns in [60, 120] {
        let command = format!(
            "stty cols {columns} rows 40; {} --concurrency 2 cp -r {} s3://tot-b/t{columns}/",
            env!("CARGO_BIN_EXE_s3w"),
            dir.path().display()
        );
        let mut script = Command::new("script");
        env.isolate(script.args(["-qec", &command, "/dev/null"]))
            .env("TERM", "xterm");
        let out = script.output().expect("script (util-linux)");
        let drawn = strip_ansi(&String::from_utf8_lossy(&out.stdout));
        assert!(out.status.success(), "{drawn}");
        let frames: Vec<&str> = drawn
            .split(['\r', '\n'])
            .filter(|f| f.contains(" objects  "))
            .collect();
        assert!(frames.len() >= 2, "{drawn:?}");
        for frame in &frames {
            assert!(
                frame.trim_end().chars().count() <= columns,
                "wider than {columns} columns: {frame:?}"
            );
            // `[00:00:01] 3/6 objects  4.0 MiB/12.0 MiB  …`
            let counts = frame.split(" objects  ").next().unwrap();
            let counts = counts.rsplit(' ').next().unwrap();
            assert!(
                counts.ends_with("/6"),
                "the object total from the first frame: {frame:?}"
            );
            let bytes = frame.split(" objects  ").nth(1).unwrap();
            let (done, total) = bytes.split_once('/').unwrap();
            let total = total.split("  ").next().unwrap();
            assert_eq!(
                total, "12.0 MiB",
                "the byte total from the first frame: {frame:?}"
            );
            assert!(size_of(done) <= size_of(total), "past the total: {frame:?}");
        }
        let last = frames.last().unwrap();
        assert!(
            last.contains("6/6 objects  12.0 MiB/12.0 MiB") && last.contains("done"),
            "{last:?}"
        );
    }
}

#[test]
fn tuning_flags_shape_the_multipart_upload_and_download() {
    let env = Env::new();
    env.ok(&["mb", "s3://mp-b"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("twelve.bin");
    let bytes: Vec<u8> = (0..12u32 << 20).map(|i| (i % 251) as u8).collect();
    write(&file, &bytes);
    let sizes = ["--part-size", "5M", "--max-memory", "10M"];
    let up = [
        &sizes[..],
        &["--json", "cp", file.to_str().unwrap(), "s3://mp-b/t.bin"],
    ]
    .concat();
    let up: serde_json::Value = serde_json::from_str(env.ok(&up).trim()).unwrap();
    assert_eq!(up["size"], 12 << 20);
    // Three parts of at most 5 MiB: a multipart ETag ends with `-3`.
    assert!(
        up["etag"]
            .as_str()
            .unwrap()
            .trim_matches('"')
            .ends_with("-3"),
        "{up}"
    );
    let back = dir.path().join("back.bin");
    // Not synced file by file: the file still appears whole, with nothing beside it.
    let down = [
        &sizes[..],
        &["--no-sync", "cp", "s3://mp-b/t.bin", back.to_str().unwrap()],
    ]
    .concat();
    env.ok(&down);
    assert!(std::fs::read(&back).unwrap() == bytes, "bytes differ");
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["back.bin", "twelve.bin"]);
    let bad = env.run(&["--part-size", "5X", "ls"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// The value of header `name` in a recorded request head.
fn header_of<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().skip(1).find_map(|line| {
        let (n, value) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// Every attribute flag of an upload reaches the wire, seen by a recording proxy in front of
/// local-s3 (which stores few of them): content headers, `--expires`, `--acl`, SSE-KMS with
/// its key and encryption context, SSE-C with its key and the key's MD5; on a single PUT and
/// on every request of a multipart upload that carries them.
#[test]
fn every_attribute_flag_reaches_the_wire() {
    let env = Env::new();
    env.ok(&["mb", "s3://wire-b"]);
    let proxy =
        support::proxy::Proxy::start(env.server.endpoint(), |_| support::proxy::Verdict::Forward);
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.txt");
    write(&small, b"hello");
    let large = dir.path().join("large.bin");
    write(&large, &vec![7u8; 6 << 20]);
    let run = |args: &[&str]| {
        let mut all = vec!["--endpoint-url", proxy.endpoint.as_str()];
        all.extend(args);
        let out = env.run(&all);
        std::mem::take(&mut *proxy.heads.lock().unwrap())
            .into_iter()
            .map(|head| (out.status.success(), head))
            .collect::<Vec<_>>()
    };
    let content = [
        ("--content-encoding", "identity", "content-encoding"),
        (
            "--content-disposition",
            "attachment; filename=\"a.txt\"",
            "content-disposition",
        ),
        ("--content-language", "en-GB", "content-language"),
        ("--acl", "bucket-owner-full-control", "x-amz-acl"),
    ];
    let mut args = vec!["cp"];
    for (flag, value, _) in content {
        args.extend([flag, value]);
    }
    args.extend(["--expires", "2030-01-02T03:04:05Z"]);
    let kms = [
        "--sse",
        "aws:kms",
        "--sse-kms-key-id",
        "alias/wire",
        "--sse-kms-context",
        "{\"project\":\"alpha\"}",
    ];
    args.extend(kms);
    args.extend([small.to_str().unwrap(), "s3://wire-b/small.txt"]);
    let heads = run(&args);
    let put = heads
        .iter()
        .map(|(_, head)| head)
        .find(|head| head.starts_with("PUT /wire-b/small.txt"))
        .expect("the PUT went through the proxy");
    for (_, value, header) in content {
        assert_eq!(header_of(put, header), Some(value), "{put}");
    }
    assert_eq!(
        header_of(put, "expires"),
        Some("Wed, 02 Jan 2030 03:04:05 GMT")
    );
    assert_eq!(
        header_of(put, "x-amz-server-side-encryption"),
        Some("aws:kms")
    );
    assert_eq!(
        header_of(put, "x-amz-server-side-encryption-aws-kms-key-id"),
        Some("alias/wire")
    );
    // {"project":"alpha"} in base64.
    assert_eq!(
        header_of(put, "x-amz-server-side-encryption-context"),
        Some("eyJwcm9qZWN0IjoiYWxwaGEifQ==")
    );
    // A context S3 would refuse is a usage error that does not repeat it.
    let bad = env.run(&[
        "cp",
        "--sse",
        "aws:kms",
        "--sse-kms-context",
        "[\"SECRETISH\"]",
        small.to_str().unwrap(),
        "s3://wire-b/x",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("--sse-kms-context") && !stderr.contains("SECRETISH"),
        "{stderr}"
    );

    // SSE-C: a single PUT and every request of a multipart upload carry the key and its MD5.
    let key = "0123456789abcdef0123456789abcdef";
    let key_base64 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    let key_md5 = "hRasmdxgYDKV3nvbahU1MA==";
    for (file, object) in [(&small, "sse-c-small"), (&large, "sse-c-large")] {
        let target = format!("s3://wire-b/{object}");
        let heads = run(&[
            "--part-size",
            "5M",
            "cp",
            "--sse-c",
            "AES256",
            "--sse-c-key",
            key,
            file.to_str().unwrap(),
            &target,
        ]);
        let writes: Vec<&String> = heads
            .iter()
            .map(|(_, head)| head)
            .filter(|head| head.starts_with("PUT ") || head.starts_with("POST "))
            .collect();
        assert!(!writes.is_empty(), "{heads:?}");
        for head in writes {
            let line = head.lines().next().unwrap();
            assert_eq!(
                header_of(head, "x-amz-server-side-encryption-customer-algorithm"),
                Some("AES256"),
                "{line}"
            );
            assert_eq!(
                header_of(head, "x-amz-server-side-encryption-customer-key"),
                Some(key_base64),
                "{line}"
            );
            assert_eq!(
                header_of(head, "x-amz-server-side-encryption-customer-key-md5"),
                Some(key_md5),
                "{line}"
            );
        }
    }
}

/// `--bwlimit` holds the rate of a transfer at the limit: 1 MiB at 256 KiB/s takes about
/// four seconds, never less than 3.75 (the limiter lets at most two of its 32 KiB pieces
/// through at once).
#[test]
fn bwlimit_holds_the_rate_of_an_upload() {
    let env = Env::new();
    env.ok(&["mb", "s3://slow-b"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one-mib.bin");
    write(&file, &vec![3u8; 1 << 20]);
    let started = std::time::Instant::now();
    env.ok(&[
        "--bwlimit",
        "256K",
        "cp",
        file.to_str().unwrap(),
        "s3://slow-b/one-mib.bin",
    ]);
    let elapsed = started.elapsed().as_secs_f64();
    let rate = (1u64 << 20) as f64 / elapsed;
    assert!(
        rate <= 256.0 * 1024.0 * 1.15,
        "{rate:.0} B/s over {elapsed:.2} s: above --bwlimit 256K"
    );
}

/// `--provider` picks the store's profile where the host cannot tell it: Ceph's documents no
/// checksums, so none is sent (the default sends CRC32); Garage's takes them; an unknown
/// name is a usage error that lists the known ones.
#[test]
fn provider_picks_the_profile_that_adapts_the_requests() {
    let env = Env::new();
    env.ok(&["mb", "s3://prov-b"]);
    let proxy =
        support::proxy::Proxy::start(env.server.endpoint(), |_| support::proxy::Verdict::Forward);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.txt");
    write(&file, b"profiled");
    let put_with = |provider: Option<&str>| {
        let mut args = vec!["--endpoint-url", proxy.endpoint.as_str()];
        if let Some(provider) = provider {
            args.extend(["--provider", provider]);
        }
        args.extend(["cp", file.to_str().unwrap(), "s3://prov-b/f.txt"]);
        env.ok(&args);
        let heads = std::mem::take(&mut *proxy.heads.lock().unwrap());
        heads
            .into_iter()
            .find(|head| head.starts_with("PUT /prov-b/f.txt"))
            .expect("the PUT went through the proxy")
    };
    let default = put_with(None);
    assert!(
        header_of(&default, "x-amz-checksum-crc32").is_some(),
        "{default}"
    );
    let ceph = put_with(Some("ceph"));
    assert!(
        !ceph.to_ascii_lowercase().contains("x-amz-checksum-"),
        "{ceph}"
    );
    let garage = put_with(Some("Garage"));
    assert!(
        header_of(&garage, "x-amz-checksum-crc32").is_some(),
        "{garage}"
    );
    let unknown = env.run(&["--provider", "nonesuch", "ls"]);
    assert_eq!(unknown.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("unknown store `nonesuch`") && stderr.contains("garage"),
        "{stderr}"
    );
}

/// `attributes` of a multipart object whose parts come in two pages: every part printed
/// with its size and checksum, the second page asked for. The answers are S3's documents,
/// given by the proxy (neither local-s3 nor moto lists an object's parts).
#[test]
fn attributes_lists_every_part_across_pages() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let env = Env::new();
    let pages = std::sync::Arc::new(AtomicUsize::new(0));
    let served = pages.clone();
    let proxy = support::proxy::Proxy::start(env.server.endpoint(), move |line| {
        if !line.contains("?attributes") {
            return support::proxy::Verdict::Forward;
        }
        let page = served.fetch_add(1, Ordering::SeqCst);
        let (parts, truncated, next) = if page == 0 {
            (
                "<Part><PartNumber>1</PartNumber><Size>5242880</Size><ChecksumCRC32>AAAAAQ==</ChecksumCRC32></Part><Part><PartNumber>2</PartNumber><Size>5242880</Size><ChecksumCRC32>AAAAAg==</ChecksumCRC32></Part>",
                "true",
                2,
            )
        } else {
            (
                "<Part><PartNumber>3</PartNumber><Size>100</Size><ChecksumCRC32>AAAAAw==</ChecksumCRC32></Part>",
                "false",
                3,
            )
        };
        let body = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><GetObjectAttributesResponse \
             xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><ETag>abc-3</ETag><Checksum>\
             <ChecksumCRC32>AAAABA==-3</ChecksumCRC32><ChecksumType>COMPOSITE</ChecksumType>\
             </Checksum><ObjectParts><PartsCount>3</PartsCount><MaxParts>2</MaxParts>\
             <IsTruncated>{truncated}</IsTruncated><NextPartNumberMarker>{next}</NextPartNumberMarker>\
             {parts}</ObjectParts><StorageClass>STANDARD</StorageClass><ObjectSize>10485860\
             </ObjectSize></GetObjectAttributesResponse>"
        );
        support::proxy::Verdict::Answer(
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/xml\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{body}",
                body.len()
            )
            .into_bytes(),
        )
    });
    let args = [
        "--endpoint-url",
        proxy.endpoint.as_str(),
        "attributes",
        "s3://any-b/big.bin",
    ];
    let text = env.ok(&args);
    for line in [
        "Size          : 10485860",
        "Checksum      : CRC32=AAAABA==-3 (COMPOSITE)",
        "Parts         : 3",
        "Part     1    : 5242880 CRC32=AAAAAQ==",
        "Part     3    : 100 CRC32=AAAAAw==",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    assert_eq!(pages.load(Ordering::SeqCst), 2);
    let heads = proxy.heads.lock().unwrap().clone();
    assert!(
        heads[1]
            .to_ascii_lowercase()
            .contains("x-amz-part-number-marker: 2"),
        "{}",
        heads[1]
    );
    pages.store(0, Ordering::SeqCst);
    let mut json_args = vec!["--json"];
    json_args.extend(args);
    let value: serde_json::Value = serde_json::from_str(env.ok(&json_args).trim()).unwrap();
    assert_eq!(value["parts"].as_array().unwrap().len(), 3, "{value}");
    assert_eq!(
        value["parts"][2]["checksums"]["CRC32"], "AAAAAw==",
        "{value}"
    );
}

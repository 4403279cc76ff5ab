//! CI smoke run of the harness: tiny sizes, one repetition, s3-wire only, every server
//! (`null-tls`, `null`, `local-s3`), the one tiny task workload file.

use std::process::Command;

#[test]
fn harness_smoke_run() {
    let out = std::env::temp_dir().join(format!("perf-smoke-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_perf"))
        .args([
            "run",
            "--tiny",
            "--reps",
            "1",
            "--clients",
            "s3-wire",
            "--name",
            "smoke",
        ])
        .arg("--out")
        .arg(&out)
        .status()
        .expect("run the harness");
    assert!(status.success(), "{status}");
    let jsonl = std::fs::read_to_string(out.join("smoke.jsonl")).expect("jsonl");
    let md = std::fs::read_to_string(out.join("smoke.md")).expect("markdown");
    let lines: Vec<&str> = jsonl.lines().collect();
    assert!(lines[0].contains("\"meta\":true"), "{}", lines[0]);
    // Every workload on every server, no failures; the TLS table first.
    assert!(!jsonl.contains("\"error\""), "{jsonl}");
    let first_table = md.find("## Medians: ").map(|at| &md[at..]);
    assert!(
        first_table.is_some_and(|t| t.starts_with("## Medians: null-tls")),
        "{md}"
    );
    for server in ["null-tls", "null", "local-s3"] {
        for workload in [
            "put-1MiB",
            "get-1MiB",
            "upload-20MiB-8MiBx4",
            "download-20MiB",
            "list-1500",
            "tasks:mixed-tiny",
        ] {
            let row = format!("| {server} | {workload} | ");
            assert!(md.contains(&row), "no row {row}\n{md}");
        }
        for phase in ["put", "get", "head"] {
            let found = lines.iter().any(|line| {
                let record: serde_json::Value = serde_json::from_str(line).unwrap();
                record["server"] == server
                    && record["workload"] == "small-40x4KiB"
                    && record["phase"] == phase
                    && record["ops_per_s"].as_f64().is_some_and(|ops| ops > 0.0)
            });
            assert!(found, "no small-object {phase} on {server}:\n{jsonl}");
        }
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// The null server is a correct-enough S3 for boto3 / s3transfer too: every workload
/// (PUT, GET, multipart upload, ranged parallel download, the small-object PUT/GET/HEAD,
/// paginated ListObjectsV2, the tiny task file) succeeds and moves the expected byte counts
/// (peer.py asserts them). Makes the pinned venv on first use (PyPI, as the moto tests do).
#[test]
fn boto3_round_trip_on_null_server() {
    let out = std::env::temp_dir().join(format!("perf-boto3-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_perf"))
        .args([
            "run",
            "--tiny",
            "--reps",
            "1",
            "--clients",
            "boto3",
            "--servers",
            "null",
        ])
        .args(["--name", "boto3"])
        .arg("--out")
        .arg(&out)
        .status()
        .expect("run the harness");
    assert!(status.success(), "{status}");
    let jsonl = std::fs::read_to_string(out.join("boto3.jsonl")).expect("jsonl");
    assert!(!jsonl.contains("\"error\""), "{jsonl}");
    assert_eq!(jsonl.lines().count(), 1 + 11 + 2, "{jsonl}");
    std::fs::remove_dir_all(&out).unwrap();
}

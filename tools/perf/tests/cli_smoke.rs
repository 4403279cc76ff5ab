//! CI smoke run of `perf cli`: tiny sizes, one repetition, s3w only (rclone and the AWS CLI
//! are the measurement's peers, not CI's dependencies).

use std::process::Command;

#[test]
fn cli_harness_smoke_run_with_s3w() {
    let out = std::env::temp_dir().join(format!("perf-cli-smoke-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_perf"))
        .args([
            "cli",
            "--tiny",
            "--reps",
            "1",
            "--clients",
            "s3w",
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
    assert!(
        !jsonl.contains("\"error\"") && !jsonl.contains("check_failed"),
        "{jsonl}"
    );
    for workload in [
        "big-up",
        "big-down",
        "small-up",
        "small-down",
        "ls-r",
        "rm-r",
    ] {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {workload} |")))
            .unwrap_or_else(|| panic!("no row {workload}\n{md}"));
        assert!(!row.contains("failed") && !row.contains("| – |"), "{row}");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

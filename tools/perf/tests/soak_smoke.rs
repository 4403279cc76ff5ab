//! CI's short soak: a few thousand mixed operations on the null server, faults in the
//! middle, a pool idle timeout of one second; the run checks its own bounds (the last
//! sample, taken after the idle connections are gone, against the mid-run plateau; the run
//! longer than twice the idle timeout) and fails when one is exceeded. The full run, with
//! slopes judged, is `perf soak` (measurements/soak-<date>.md).

use std::process::Command;

#[test]
fn a_short_soak_stays_within_its_bounds() {
    let out = std::env::temp_dir().join(format!("perf-soak-smoke-{}", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_perf"))
        .args([
            "soak",
            "--ops",
            "4000",
            "--servers",
            "null",
            "--concurrency",
            "8",
            "--sample-ms",
            "200",
            "--idle-secs",
            "1",
            "--name",
            "soak-smoke",
        ])
        .arg("--out")
        .arg(&out)
        .status()
        .expect("run the soak");
    let md = std::fs::read_to_string(out.join("soak-smoke.md")).unwrap_or_default();
    assert!(status.success(), "{status}\n{md}");
    assert!(md.contains("- within: run length"), "{md}");
    for metric in ["rss_kib", "fds", "sockets", "threads", "tasks"] {
        assert!(
            md.contains(&format!("- within: {metric}:")),
            "{metric}\n{md}"
        );
    }
    assert!(!md.contains("EXCEEDED"), "{md}");
    let _ = std::fs::remove_dir_all(&out);
}

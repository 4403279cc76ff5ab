//! Where and how a run happened: load, CPU, tool versions, and the build weight.

use std::process::Command;

pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

pub fn tool_version(tool: &str, args: &[&str]) -> String {
    Command::new(tool)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|_| format!("{tool}: not found"))
}

pub fn git(args: &[&str]) -> String {
    tool_version("git", args)
}

pub fn now_utc() -> String {
    tool_version("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"])
}

pub fn today() -> String {
    tool_version("date", &["-u", "+%Y-%m-%d"])
}

/// The clean-build weight of the `comparisons/size` programs (s3-wire's HEAD program, the
/// same program on s3-wire 0.1.1, and the reqwest and hyper floors): the markdown table
/// `comparisons/size/measure.sh` prints. Each is a clean release build, minutes apiece.
pub fn build_weight() -> Result<String, String> {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../comparisons/size/measure.sh");
    eprintln!("perf: measuring the build weight ({})", script.display());
    let output = Command::new(&script)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

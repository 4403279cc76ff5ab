//! What a process reports about itself in /proc, and `/usr/bin/time -f` output.
//!
//! Peers cooperate: each reads its own VmHWM, VmRSS and utime/stime just before it exits
//! and prints them in its JSON result, so no parent has to reap with `wait4` (which needs
//! `unsafe` or a new dependency). Programs that do not (curl) run under
//! `/usr/bin/time -f "%M %U %S"`, parsed by [`parse_time_output`].

/// Peak and current resident set size, in KiB, from the text of `/proc/<pid>/status`.
pub fn parse_status(status: &str) -> (Option<u64>, Option<u64>) {
    let field = |name: &str| {
        status.lines().find_map(|line| {
            let rest = line.strip_prefix(name)?.strip_prefix(':')?;
            rest.split_whitespace().next()?.parse().ok()
        })
    };
    (field("VmHWM"), field("VmRSS"))
}

/// User and system CPU time in clock ticks from the text of `/proc/<pid>/stat`
/// (fields 14 and 15; the command name in parentheses may contain spaces).
pub fn parse_stat_ticks(stat: &str) -> Option<(u64, u64)> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3 of the file, index 0 here; utime is 14 → 11.
    Some((fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?))
}

/// Clock ticks per second: 100 on every Linux target Rust supports (USER_HZ).
pub const TICKS_PER_SECOND: f64 = 100.0;

/// A process's memory and CPU so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// Peak resident set size (VmHWM), KiB.
    pub hwm_kib: u64,
    /// Current resident set size (VmRSS), KiB.
    pub rss_kib: u64,
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub sys_s: f64,
}

/// This process's usage so far (zeros where /proc cannot be read).
pub fn self_usage() -> Usage {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let (hwm, rss) = parse_status(&status);
    let (user, system) = parse_stat_ticks(&stat).unwrap_or((0, 0));
    Usage {
        hwm_kib: hwm.unwrap_or(0),
        rss_kib: rss.unwrap_or(0),
        user_s: user as f64 / TICKS_PER_SECOND,
        sys_s: system as f64 / TICKS_PER_SECOND,
    }
}

/// On-CPU nanoseconds of this process's live threads, summed from the first field of
/// each `/proc/self/task/<tid>/schedstat` (`None` where the kernel has no schedstat).
/// Unlike `utime`/`stime`, which count 10 ms ticks, it resolves the CPU of an operation
/// that takes a few milliseconds; a thread that exits is no longer counted.
pub fn threads_cpu_ns() -> Option<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let Ok(task) = task else { continue };
        // A thread that ended since the directory was read has nothing to add.
        if let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) {
            total += parse_schedstat(&text)?;
        }
    }
    Some(total)
}

/// The on-CPU nanoseconds (first field) of a `schedstat` line.
pub fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// `(max RSS KiB, user s, system s)` from the last line of `/usr/bin/time -f "%M %U %S"`.
pub fn parse_time_output(stderr: &str) -> Option<(u64, f64, f64)> {
    let line = stderr.lines().rev().find(|line| !line.trim().is_empty())?;
    let mut parts = line.split_whitespace();
    let rss = parts.next()?.parse().ok()?;
    let user = parts.next()?.parse().ok()?;
    let system = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((rss, user, system))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields() {
        let status = "Name:\tperf\nVmPeak:\t  20000 kB\nVmHWM:\t    5120 kB\nVmRSS:\t    4096 kB\n";
        assert_eq!(parse_status(status), (Some(5120), Some(4096)));
        assert_eq!(parse_status("Name:\tx\n"), (None, None));
    }

    #[test]
    fn stat_ticks_with_spaces_in_name() {
        let stat = "1234 (a b) c) S 1 2 3 4 5 6 7 8 9 10 250 37 0 0 20 0 1 0";
        assert_eq!(parse_stat_ticks(stat), Some((250, 37)));
        assert_eq!(parse_stat_ticks("1234 (x) S 1"), None);
        let usage = self_usage();
        assert!(usage.hwm_kib >= usage.rss_kib && usage.rss_kib > 0);
        assert!(usage.user_s >= 0.0 && usage.sys_s >= 0.0);
    }

    #[test]
    fn schedstat_nanoseconds() {
        assert_eq!(parse_schedstat("1382459 0 1\n"), Some(1_382_459));
        assert_eq!(parse_schedstat(""), None);
        let before = threads_cpu_ns().expect("this kernel has schedstat");
        let mut x = 0u64;
        for i in 0..3_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(threads_cpu_ns().unwrap() > before);
    }

    #[test]
    fn time_output() {
        assert_eq!(
            parse_time_output("noise\n10240 0.12 0.03\n"),
            Some((10240, 0.12, 0.03))
        );
        assert_eq!(
            parse_time_output("Command exited with non-zero status 7\n"),
            None
        );
    }
}

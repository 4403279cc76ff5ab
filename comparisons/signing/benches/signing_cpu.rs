//! The same workloads as `signing.rs`, measured in CPU time of the
//! benchmarking thread (`CLOCK_THREAD_CPUTIME_ID`). On a shared machine
//! (other processes compiling) wall-clock figures inflate with the load and
//! drift between two benchmarks run seconds apart; thread CPU time does not
//! count the time the thread was descheduled, so the ratios stay meaningful.
//!
//! Run: `cargo bench --bench signing_cpu` in `comparisons/signing`.

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{Criterion, criterion_group, criterion_main};

/// Thread CPU time in nanoseconds.
pub struct ThreadCpuTime;

fn thread_cpu_nanos() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec; the clock id is a constant
    // supported by Linux.
    let result = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(result, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// Criterion's own nanosecond formatter.
static WALL_TIME: WallTime = WallTime;

impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_nanos()
    }
    fn end(&self, started: u64) -> u64 {
        thread_cpu_nanos() - started
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WALL_TIME.formatter()
    }
}

fn cpu_time() -> Criterion<ThreadCpuTime> {
    Criterion::default().with_measurement(ThreadCpuTime)
}

criterion_group! {
    name = benches;
    config = cpu_time();
    targets = signing_comparison::benches::header_signing, signing_comparison::benches::presigning
}
criterion_main!(benches);

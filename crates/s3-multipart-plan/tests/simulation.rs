//! Deterministic seeded simulation: thousands of uploads and downloads with
//! random part failures, out-of-order completion (any in-flight request may
//! finish next) and cancellations. Every run checks all invariants (see
//! `support`); a failing seed reproduces exactly.

mod support;

use s3_multipart_plan::{
    DownloadOptions, DownloadOutcome, FailureReason, MIB, MultipartOptions, Outcome, PartLimits,
};
use support::{Faults, Source, SplitMix64, run_download, run_upload};

const RUNS: u64 = 2_000;

/// Small limits so that runs have tens of parts, hit the part-count limit
/// and the object-size limit often, and stay fast.
fn small_limits() -> PartLimits {
    PartLimits::new(4, 64, 40, 1_500).unwrap()
}

fn random_options(rng: &mut SplitMix64) -> MultipartOptions {
    let (limits, part_size) = if rng.chance(500) {
        (small_limits(), 4 + rng.below(28))
    } else {
        (PartLimits::S3, 5 * MIB + rng.below(11 * MIB))
    };
    MultipartOptions::builder()
        .limits(limits)
        .part_size(part_size)
        .concurrency(1 + rng.below(6) as usize)
        .retries_per_part(rng.below(4) as u32)
        .build()
        .unwrap()
}

fn random_faults(rng: &mut SplitMix64) -> Faults {
    // A quarter of the runs are fault-free and must complete.
    if rng.chance(250) {
        return Faults::default();
    }
    Faults {
        create_fail: rng.below(60) as u32,
        part_retryable: rng.below(300) as u32,
        part_fatal: rng.below(15) as u32,
        read_fail: rng.below(10) as u32,
        complete_fail: rng.below(400) as u32,
        abort_fail: rng.below(300) as u32,
        cancel: rng.below(8) as u32,
    }
}

fn random_size(rng: &mut SplitMix64, options: &MultipartOptions) -> u64 {
    let maximum = options
        .limits()
        .max_object_size()
        .min(60 * options.part_size());
    match rng.below(10) {
        0 => 0,
        1 => 1,
        2 => options.part_size() * (1 + rng.below(10)),
        _ => rng.below(maximum + 1),
    }
}

#[derive(Default, Debug)]
struct Tally {
    completed: u32,
    aborted: u32,
    abort_failed: u32,
    not_started: u32,
    cancelled: u32,
    too_large: u32,
    retried: u32,
}

impl Tally {
    fn add(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Completed { .. } => self.completed += 1,
            Outcome::Aborted { reason } | Outcome::AbortFailed { reason } => {
                if matches!(outcome, Outcome::Aborted { .. }) {
                    self.aborted += 1;
                } else {
                    self.abort_failed += 1;
                }
                match reason {
                    FailureReason::Cancelled => self.cancelled += 1,
                    FailureReason::StreamTooLarge { .. } => self.too_large += 1,
                    _ => {}
                }
            }
            Outcome::NotStarted { .. } => self.not_started += 1,
            _ => {}
        }
    }

    /// Every kind of ending happened, so the invariants were checked on
    /// every path, not only the happy one.
    fn assert_all_paths(&self, runs: u64) {
        assert!(self.completed as u64 > runs / 4, "{self:?}");
        assert!(self.aborted > 20, "{self:?}");
        assert!(self.abort_failed > 5, "{self:?}");
        assert!(self.not_started > 5, "{self:?}");
        assert!(self.cancelled > 5, "{self:?}");
        assert!(self.retried > 20, "{self:?}");
    }
}

#[test]
fn known_size_uploads_under_random_faults() {
    let mut tally = Tally::default();
    for seed in 0..RUNS {
        let mut rng = SplitMix64::new(seed);
        let options = random_options(&mut rng);
        let size = random_size(&mut rng, &options);
        let faults = random_faults(&mut rng);
        let report = run_upload(&options, Source::Known(size), faults, &mut rng);
        if faults == Faults::default() {
            assert!(
                matches!(report.outcome, Outcome::Completed { .. }),
                "seed {seed}: a fault-free upload must complete: {report:?}"
            );
        }
        if report.retries > 0 {
            tally.retried += 1;
        }
        tally.add(&report.outcome);
    }
    tally.assert_all_paths(RUNS);
}

#[test]
fn stream_uploads_under_random_faults() {
    let mut tally = Tally::default();
    for seed in 0..RUNS {
        let mut rng = SplitMix64::new(seed ^ 0x5EED_0000);
        let options = random_options(&mut rng);
        let maximum = s3_multipart_plan::StreamPlan::new(&options).maximum_stream_size();
        // Mostly fitting streams; some just past the limit (small limits only,
        // where the limit is reachable quickly).
        let len = if options.limits().max_object_size() < MIB && rng.chance(200) {
            maximum + 1 + rng.below(100)
        } else {
            random_size(&mut rng, &options).min(maximum)
        };
        let faults = random_faults(&mut rng);
        let report = run_upload(&options, Source::Stream(len), faults, &mut rng);
        if faults == Faults::default() && len <= maximum {
            assert!(
                matches!(report.outcome, Outcome::Completed { .. }),
                "seed {seed}: a fault-free stream must complete: {report:?}"
            );
        }
        if report.retries > 0 {
            tally.retried += 1;
        }
        tally.add(&report.outcome);
    }
    tally.assert_all_paths(RUNS);
    assert!(tally.too_large > 5, "{tally:?}");
}

#[test]
fn ranged_downloads_under_random_faults() {
    let (mut completed, mut failed, mut cancelled) = (0, 0, 0);
    for seed in 0..RUNS {
        let mut rng = SplitMix64::new(seed ^ 0xD0_0000);
        let concurrency = 1 + rng.below(5) as usize;
        let options = DownloadOptions::builder()
            .range_size(1 + rng.below(64))
            .concurrency(concurrency)
            .window(concurrency + rng.below(4) as usize)
            .retries_per_range(rng.below(3) as u32)
            .build()
            .unwrap();
        let size = rng.below(2_000);
        let faults = random_faults(&mut rng);
        match run_download(size, &options, faults, &mut rng) {
            DownloadOutcome::Completed => completed += 1,
            DownloadOutcome::Failed { .. } => failed += 1,
            DownloadOutcome::Cancelled => cancelled += 1,
            other => panic!("unknown outcome {other:?}"),
        }
    }
    assert!(completed > RUNS / 4 && failed > 20 && cancelled > 20);
}

/// A few S3-scale runs: the 10,000-part limit, the grown part size and a
/// stream whose parts double up to 5 TiB.
#[test]
fn s3_scale_uploads() {
    let options = MultipartOptions::builder()
        .part_size(5 * MIB)
        .concurrency(8)
        .build()
        .unwrap();
    let faults = Faults {
        part_retryable: 20,
        ..Faults::default()
    };
    for (seed, size) in [
        (1, 5 << 40),
        (2, 10_000 * 5 * MIB),
        (3, 10_000 * 5 * MIB + 1),
    ] {
        let mut rng = SplitMix64::new(seed);
        let report = run_upload(&options, Source::Known(size), faults, &mut rng);
        assert!(
            matches!(report.outcome, Outcome::Completed { .. }),
            "{report:?}"
        );
    }
    let mut rng = SplitMix64::new(4);
    let report = run_upload(
        &options,
        Source::Stream(5 << 40),
        Faults::default(),
        &mut rng,
    );
    assert_eq!(
        report.outcome,
        Outcome::Completed {
            parts: report.parts_uploaded,
            size: 5 << 40
        }
    );
    assert!(report.parts_uploaded <= 10_000);
}

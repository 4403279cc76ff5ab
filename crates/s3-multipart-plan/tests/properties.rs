//! Property tests of the schedulers: proptest chooses the limits, options,
//! sizes, fault rates and the completion order; the simulated driver in
//! `support` asserts after every step that in-flight parts stay within the
//! concurrency, buffered bytes within `maximum_buffered_bytes()`, `Complete`
//! comes only after every part succeeded and lists parts 1..=n covering
//! every byte once, retries stay within the budget and a fatal failure or
//! cancellation ends in exactly one `Abort`.

mod support;

use proptest::prelude::*;
use s3_multipart_plan::{
    Action, DownloadOptions, DownloadOutcome, FailureReason, MultipartOptions, Outcome, PartLimits,
    StreamPlan, UploadPlan, UploadScheduler,
};
use support::{Faults, Source, SplitMix64, run_download, run_upload};

fn options_strategy() -> impl Strategy<Value = MultipartOptions> {
    (
        1u64..=16,
        0u64..=48,
        1u32..=30,
        1u64..=3_000,
        1usize..=6,
        0u32..=3,
        any::<u64>(),
    )
        .prop_map(|(min, extra, parts, object, concurrency, retries, pick)| {
            let limits = PartLimits::new(min, min + extra, parts, object).unwrap();
            MultipartOptions::builder()
                .limits(limits)
                .part_size(min + pick % (extra + 1))
                .concurrency(concurrency)
                .retries_per_part(retries)
                .build()
                .unwrap()
        })
}

fn faults_strategy() -> impl Strategy<Value = Faults> {
    (
        0u32..100,
        0u32..400,
        0u32..30,
        0u32..20,
        0u32..500,
        0u32..500,
        0u32..15,
    )
        .prop_map(
            |(
                create_fail,
                part_retryable,
                part_fatal,
                read_fail,
                complete_fail,
                abort_fail,
                cancel,
            )| {
                Faults {
                    create_fail,
                    part_retryable,
                    part_fatal,
                    read_fail,
                    complete_fail,
                    abort_fail,
                    cancel,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn known_size_upload_keeps_every_guarantee(
        options in options_strategy(),
        size_pick in any::<u64>(),
        faults in faults_strategy(),
        seed in any::<u64>(),
    ) {
        let size = size_pick % (options.limits().reachable_object_size() + 1);
        run_upload(&options, Source::Known(size), faults, &mut SplitMix64::new(seed));
    }

    #[test]
    fn stream_upload_keeps_every_guarantee(
        options in options_strategy(),
        len_pick in any::<u64>(),
        faults in faults_strategy(),
        seed in any::<u64>(),
    ) {
        // Up to a little past the largest stream the schedule allows.
        let maximum = StreamPlan::new(&options).maximum_stream_size();
        let len = len_pick % (maximum + 50);
        let report = run_upload(&options, Source::Stream(len), faults, &mut SplitMix64::new(seed));
        if len > maximum {
            let completed = matches!(report.outcome, Outcome::Completed { .. });
            prop_assert!(!completed, "a stream past the limit completed");
        }
    }

    #[test]
    fn fault_free_uploads_complete(
        options in options_strategy(),
        size_pick in any::<u64>(),
        seed in any::<u64>(),
        stream in any::<bool>(),
    ) {
        let size = size_pick % (options.limits().reachable_object_size() + 1);
        let size = if stream { size.min(StreamPlan::new(&options).maximum_stream_size()) } else { size };
        let source = if stream { Source::Stream(size) } else { Source::Known(size) };
        let report = run_upload(&options, source, Faults::default(), &mut SplitMix64::new(seed));
        let completed = matches!(report.outcome, Outcome::Completed { size: s, .. } if s == size);
        prop_assert!(completed, "not completed: {:?}", report);
        prop_assert_eq!(report.retries, 0);
        prop_assert_eq!(report.completes, 1);
        if !stream {
            // The scheduler uses all the concurrency the parts allow.
            let parts = UploadPlan::new(size, &options).unwrap().part_count() as usize;
            prop_assert_eq!(report.max_in_flight, parts.min(options.concurrency()));
        }
    }

    /// A fatal failure of part k after any number of successes ends in
    /// exactly one Abort naming part k.
    #[test]
    fn a_fatal_part_failure_is_exactly_one_abort(
        options in options_strategy(),
        size_pick in any::<u64>(),
        fail_pick in any::<u32>(),
        abort_ok in any::<bool>(),
    ) {
        let size = size_pick % (options.limits().reachable_object_size() + 1);
        let mut upload = UploadScheduler::new(size, &options).unwrap();
        let parts = upload.part_count().unwrap();
        let victim = 1 + fail_pick % parts;
        prop_assert_eq!(upload.poll_action(), Some(Action::Create));
        upload.handle_created("id").unwrap();
        let mut aborts = Vec::new();
        let mut in_flight = Vec::new();
        loop {
            while let Some(action) = upload.poll_action() {
                match action {
                    Action::UploadPart { number, .. } => in_flight.push(number),
                    Action::Abort { reason } => aborts.push(reason),
                    other => prop_assert!(false, "unexpected {:?}", other),
                }
            }
            if !aborts.is_empty() {
                break;
            }
            let number = in_flight.remove(0);
            if number == victim {
                upload.handle_part_failed(number, false).unwrap();
            } else {
                upload.handle_part_done(number, String::from("e")).unwrap();
            }
        }
        // Late results, a cancel and more polls add nothing.
        for number in in_flight {
            upload.handle_part_done(number, String::from("late")).unwrap();
        }
        upload.handle_cancel();
        prop_assert_eq!(upload.poll_action(), None);
        let reason = FailureReason::PartFailed { number: victim, attempts: 1, retryable: false };
        prop_assert_eq!(&aborts, std::slice::from_ref(&reason));
        if abort_ok {
            upload.handle_aborted().unwrap();
            prop_assert_eq!(upload.outcome(), Some(&Outcome::Aborted { reason }));
        } else {
            upload.handle_abort_failed().unwrap();
            prop_assert_eq!(upload.outcome(), Some(&Outcome::AbortFailed { reason }));
        }
    }

    #[test]
    fn ranged_download_delivers_in_order_within_the_window(
        size in 0u64..3_000,
        range_size in 1u64..200,
        concurrency in 1usize..6,
        extra_window in 0usize..5,
        retries in 0u32..3,
        faults in faults_strategy(),
        seed in any::<u64>(),
    ) {
        let options = DownloadOptions::builder()
            .range_size(range_size)
            .concurrency(concurrency)
            .window(concurrency + extra_window)
            .retries_per_range(retries)
            .build()
            .unwrap();
        let outcome = run_download(size, &options, faults, &mut SplitMix64::new(seed));
        if faults == Faults::default() {
            prop_assert_eq!(outcome, DownloadOutcome::Completed);
        }
    }
}

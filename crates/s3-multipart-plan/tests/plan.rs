//! Limits, options and part sizing: unit cases with hand-derived values and
//! property tests over arbitrary limits and sizes.

use proptest::prelude::*;
use s3_multipart_plan::{
    Error, LimitsError, MIB, MultipartOptions, OptionsError, PartLimits, StreamPlan, UploadPlan,
};

const GIB: u64 = 1024 * MIB;
const TIB: u64 = 1024 * GIB;

#[test]
fn s3_limits_are_the_documented_ones() {
    let s3 = PartLimits::default();
    assert_eq!(s3, PartLimits::S3);
    assert_eq!(s3.min_part_size(), 5 * 1_048_576);
    assert_eq!(s3.max_part_size(), 5 * 1_073_741_824);
    assert_eq!(s3.max_parts(), 10_000);
    assert_eq!(s3.max_object_size(), 5 * 1_099_511_627_776);
    assert_eq!(s3.reachable_object_size(), 5 * TIB);
}

#[test]
fn inconsistent_limits_are_rejected() {
    let cases = [
        ((0, 10, 10, 10), LimitsError::ZeroMinimumPartSize),
        (
            (11, 10, 10, 10),
            LimitsError::MinimumAboveMaximum {
                minimum: 11,
                maximum: 10,
            },
        ),
        ((1, 10, 0, 10), LimitsError::ZeroMaximumParts),
        ((1, 10, 10, 0), LimitsError::ZeroMaximumObjectSize),
    ];
    for ((min, max, parts, object), expected) in cases {
        assert_eq!(
            PartLimits::new(min, max, parts, object),
            Err(Error::InvalidLimits(expected))
        );
    }
    let limits = PartLimits::new(1, 100, 3, 250).unwrap();
    // 3 parts of at most 100 bytes carry 250 bytes at most: the smaller bound.
    assert_eq!(limits.reachable_object_size(), 250);
    assert_eq!(
        PartLimits::new(1, 10, 3, 250)
            .unwrap()
            .reachable_object_size(),
        30
    );
}

#[test]
fn options_are_validated_against_the_limits() {
    let defaults = MultipartOptions::default();
    assert_eq!(defaults.part_size(), 8 * MIB);
    assert_eq!(defaults.concurrency(), 4);
    assert_eq!(defaults.retries_per_part(), 3);
    assert_eq!(defaults.maximum_buffered_bytes(), 32 * MIB);
    assert_eq!(MultipartOptions::builder().build(), Ok(defaults));

    let too_small = MultipartOptions::builder().part_size(5 * MIB - 1).build();
    assert_eq!(
        too_small,
        Err(Error::InvalidOptions(OptionsError::PartSizeBelowMinimum {
            part_size: 5 * MIB - 1,
            minimum: 5 * MIB,
        }))
    );
    assert_eq!(
        too_small.unwrap_err().to_string(),
        "invalid transfer options: part size 5242879 is below the minimum part size 5242880"
    );
    assert_eq!(
        MultipartOptions::builder().part_size(5 * GIB + 1).build(),
        Err(Error::InvalidOptions(OptionsError::PartSizeAboveMaximum {
            part_size: 5 * GIB + 1,
            maximum: 5 * GIB,
        }))
    );
    assert_eq!(
        MultipartOptions::builder().concurrency(0).build(),
        Err(Error::InvalidOptions(OptionsError::ZeroConcurrency))
    );
    // Another store's limits allow what S3 does not.
    let small = PartLimits::new(1, 100, 50, 5_000).unwrap();
    let options = MultipartOptions::builder()
        .limits(small)
        .part_size(10)
        .concurrency(3)
        .build()
        .unwrap();
    assert_eq!(options.maximum_buffered_bytes(), 30);
    assert_eq!(options.limits(), &small);
}

#[test]
fn plan_keeps_the_requested_part_size_when_it_fits() {
    let options = MultipartOptions::default();
    let plan = UploadPlan::new(20 * MIB + 3, &options).unwrap();
    assert!(!plan.part_size_grew());
    assert_eq!(plan.part_size(), 8 * MIB);
    assert_eq!(plan.part_count(), 3);
    let parts: Vec<_> = plan.parts().collect();
    assert_eq!(
        parts,
        [
            (1, 0..8 * MIB),
            (2, 8 * MIB..16 * MIB),
            (3, 16 * MIB..20 * MIB + 3)
        ]
    );
    assert_eq!(plan.part_range(0), None);
    assert_eq!(plan.part_range(4), None);
}

#[test]
fn empty_object_is_one_empty_part() {
    let plan = UploadPlan::new(0, &MultipartOptions::default()).unwrap();
    assert_eq!(plan.part_count(), 1);
    assert_eq!(plan.part_range(1), Some(0..0));
}

#[test]
fn plan_grows_the_part_size_in_mebibytes_for_the_largest_object() {
    let options = MultipartOptions::builder()
        .part_size(5 * MIB)
        .build()
        .unwrap();
    // 5 TiB / 10,000 parts = 549,755,813.9 bytes = 524.29 MiB -> 525 MiB;
    // 5 TiB / 525 MiB = 5,242,880 / 525 = 9,986.4 -> 9,987 parts.
    let plan = UploadPlan::new(5 * TIB, &options).unwrap();
    assert!(plan.part_size_grew());
    assert_eq!(plan.requested_part_size(), 5 * MIB);
    assert_eq!(plan.part_size(), 525 * MIB);
    assert_eq!(plan.part_count(), 9_987);
    assert_eq!(plan.part_range(9_987), Some(9_986 * 525 * MIB..5 * TIB));

    // Exactly 10,000 parts of 5 MiB need no growth; one byte more does.
    let exact = UploadPlan::new(10_000 * 5 * MIB, &options).unwrap();
    assert!(!exact.part_size_grew());
    assert_eq!(exact.part_count(), 10_000);
    let one_more = UploadPlan::new(10_000 * 5 * MIB + 1, &options).unwrap();
    assert_eq!(one_more.part_size(), 6 * MIB);

    assert_eq!(
        UploadPlan::new(5 * TIB + 1, &options),
        Err(Error::ObjectTooLarge {
            size: 5 * TIB + 1,
            maximum: 5 * TIB
        })
    );
}

#[test]
fn growth_is_clamped_to_the_maximum_part_size() {
    // Parts of at most 3 MiB + 5 bytes: the 1 MiB-aligned growth (4 MiB)
    // would be too large, so the maximum itself is used.
    let limits = PartLimits::new(MIB, 3 * MIB + 5, 4, 100 * MIB).unwrap();
    let options = MultipartOptions::builder()
        .limits(limits)
        .part_size(MIB)
        .build()
        .unwrap();
    let plan = UploadPlan::new(12 * MIB + 20, &options).unwrap();
    assert_eq!(plan.part_size(), 3 * MIB + 5);
    assert_eq!(plan.part_count(), 4);
    assert_eq!(
        UploadPlan::new(12 * MIB + 21, &options),
        Err(Error::ObjectTooLarge {
            size: 12 * MIB + 21,
            maximum: 12 * MIB + 20
        })
    );
}

/// The stream capacity by summing every part size, independent of the
/// crate's closed form.
fn summed_capacity(plan: &StreamPlan) -> u64 {
    (1..=plan.limits().max_parts())
        .map(|n| plan.part_size(n))
        .fold(0u64, u64::saturating_add)
}

#[test]
fn stream_schedule_for_s3_reaches_five_tebibytes() {
    for (part_size, interval) in [(5 * MIB, 997), (8 * MIB, 1_089), (64 * MIB, 1_845)] {
        let options = MultipartOptions::builder()
            .part_size(part_size)
            .build()
            .unwrap();
        let plan = StreamPlan::new(&options);
        assert_eq!(plan.doubling_interval(), interval, "part size {part_size}");
        assert_eq!(plan.capacity(), summed_capacity(&plan));
        assert!(plan.capacity() >= 5 * TIB);
        assert_eq!(plan.maximum_stream_size(), 5 * TIB);
        assert_eq!(plan.part_size(1), part_size);
        assert_eq!(plan.part_size(interval), part_size);
        assert_eq!(plan.part_size(interval + 1), 2 * part_size);
        assert!(plan.part_size(10_000) <= 5 * GIB);
    }
}

/// Byte-scale limits (growth clamps to the maximum part) and MiB-scale
/// limits (growth in 1 MiB steps).
fn limits_strategy() -> impl Strategy<Value = PartLimits> {
    let bytes = (1u64..=64, 0u64..=4_000, 1u32..=200, 1u64..=1_000_000);
    let mebibytes = (
        1u64..=8 * MIB,
        0u64..=64 * MIB,
        1u32..=200,
        1u64..=20 * 1024 * MIB,
    );
    prop_oneof![bytes, mebibytes].prop_map(|(min, extra, parts, object)| {
        PartLimits::new(min, min + extra, parts, object).unwrap()
    })
}

fn options_strategy() -> impl Strategy<Value = MultipartOptions> {
    (limits_strategy(), any::<u64>(), 1usize..=16).prop_map(|(limits, pick, concurrency)| {
        let span = limits.max_part_size() - limits.min_part_size() + 1;
        MultipartOptions::builder()
            .limits(limits)
            .part_size(limits.min_part_size() + pick % span)
            .concurrency(concurrency)
            .build()
            .unwrap()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn known_plan_covers_every_byte_once(options in options_strategy(), pick in any::<u64>()) {
        let limits = *options.limits();
        // Sizes above the limit must be rejected; the rest planned.
        let size = pick % (limits.reachable_object_size() + 2);
        let plan = match UploadPlan::new(size, &options) {
            Ok(plan) => plan,
            Err(Error::ObjectTooLarge { size: s, maximum }) => {
                prop_assert_eq!(s, size);
                prop_assert!(size > maximum && maximum == limits.reachable_object_size());
                return Ok(());
            }
            Err(other) => return Err(TestCaseError::fail(format!("{other}"))),
        };
        prop_assert!(plan.part_count() >= 1 && plan.part_count() <= limits.max_parts());
        let mut next = 0;
        for (index, (number, range)) in plan.parts().enumerate() {
            prop_assert_eq!(number as usize, index + 1);
            prop_assert_eq!(range.start, next);
            let len = range.end - range.start;
            if number < plan.part_count() {
                prop_assert_eq!(len, plan.part_size());
                prop_assert!(len >= limits.min_part_size() && len <= limits.max_part_size());
            } else {
                prop_assert!(len <= plan.part_size());
                prop_assert!(len > 0 || size == 0);
            }
            next = range.end;
        }
        prop_assert_eq!(next, size);
        if plan.part_size_grew() {
            // Grown: a 1 MiB multiple (or the maximum), and minimal.
            prop_assert!(plan.part_size() > options.part_size());
            prop_assert!(plan.part_size() % MIB == 0 || plan.part_size() == limits.max_part_size());
            let smaller = plan.part_size().saturating_sub(MIB).max(options.part_size());
            prop_assert!(size.div_ceil(smaller) > u64::from(limits.max_parts()));
        } else {
            prop_assert_eq!(plan.part_size(), options.part_size());
        }
    }

    #[test]
    fn stream_schedule_grows_and_reaches_the_limit(options in options_strategy()) {
        let plan = StreamPlan::new(&options);
        let limits = *options.limits();
        let mut previous = options.part_size();
        for number in 1..=limits.max_parts() {
            let size = plan.part_size(number);
            prop_assert!(size >= previous && size <= limits.max_part_size());
            // Sizes only change at multiples of the interval.
            if (number - 1) % plan.doubling_interval() != 0 {
                prop_assert_eq!(size, previous);
            }
            previous = size;
        }
        prop_assert_eq!(plan.capacity(), summed_capacity(&plan));
        let target = limits.reachable_object_size();
        // The interval is the largest that still reaches the target.
        prop_assert!(plan.capacity() >= target || plan.doubling_interval() == 1);
        if plan.doubling_interval() < limits.max_parts() {
            // Deterministic: the same options give the same schedule.
            prop_assert_eq!(StreamPlan::new(&options), plan);
            let next: u64 = (1..=limits.max_parts())
                .map(|n| {
                    let doublings = (n - 1) / (plan.doubling_interval() + 1);
                    options.part_size().checked_shl(doublings).filter(|s| s >> doublings == options.part_size()).unwrap_or(u64::MAX).min(limits.max_part_size())
                })
                .fold(0, u64::saturating_add);
            prop_assert!(next < target);
        }
    }
}

//! The ranged download plan and scheduler, scenario by scenario.

use s3_multipart_plan::{
    Delivery, DownloadOptions, DownloadOutcome, DownloadPlan, DownloadScheduler, Error, EventError,
    OptionsError, RangeFetch,
};

fn options(range_size: u64, concurrency: usize, window: usize, retries: u32) -> DownloadOptions {
    DownloadOptions::builder()
        .range_size(range_size)
        .concurrency(concurrency)
        .window(window)
        .retries_per_range(retries)
        .build()
        .unwrap()
}

fn fetch(index: usize, start: u64, end: u64, attempt: u32) -> RangeFetch {
    RangeFetch {
        index,
        range: start..end,
        attempt,
    }
}

fn drain(download: &mut DownloadScheduler<&'static str>) -> Vec<RangeFetch> {
    std::iter::from_fn(|| download.poll_fetch()).collect()
}

#[test]
fn options_are_validated() {
    let defaults = DownloadOptions::default();
    assert_eq!(DownloadOptions::builder().build(), Ok(defaults));
    assert_eq!(defaults.window(), 8);
    assert_eq!(defaults.maximum_buffered_bytes(), 64 << 20);
    let invalid = |e| Err(Error::InvalidOptions(e));
    assert_eq!(
        DownloadOptions::builder().range_size(0).build(),
        invalid(OptionsError::ZeroRangeSize)
    );
    assert_eq!(
        DownloadOptions::builder().concurrency(0).build(),
        invalid(OptionsError::ZeroConcurrency)
    );
    assert_eq!(
        DownloadOptions::builder().concurrency(4).window(3).build(),
        invalid(OptionsError::WindowBelowConcurrency {
            window: 3,
            concurrency: 4
        })
    );
}

#[test]
fn plan_splits_the_object_into_ranges() {
    let plan = DownloadPlan::new(25, &options(10, 1, 1, 0));
    assert_eq!(plan.range_count(), 3);
    assert_eq!(plan.range(0), Some(0..10));
    assert_eq!(plan.range(2), Some(20..25));
    assert_eq!(plan.range(3), None);
    assert_eq!(DownloadPlan::new(0, &options(10, 1, 1, 0)).range_count(), 0);
    let empty: DownloadScheduler<()> = DownloadScheduler::new(0, &options(10, 1, 1, 0));
    assert_eq!(empty.outcome(), Some(&DownloadOutcome::Completed));
}

#[test]
fn the_window_holds_back_fetches_until_the_consumer_catches_up() {
    let mut download = DownloadScheduler::new(50, &options(10, 2, 3, 0));
    assert_eq!(
        drain(&mut download),
        [fetch(0, 0, 10, 1), fetch(1, 10, 20, 1)]
    );
    // Range 1 arrives first: it waits; range 2 starts (window 0..3).
    download.handle_fetched(1, "b").unwrap();
    assert_eq!(download.poll_deliver(), None);
    assert_eq!(drain(&mut download), [fetch(2, 20, 30, 1)]);
    download.handle_fetched(2, "c").unwrap();
    // Two slots are free but the window (ranges 0..3) is full.
    assert_eq!(drain(&mut download), []);
    assert_eq!(download.buffered_ranges(), 3);
    download.handle_fetched(0, "a").unwrap();
    let delivered: Vec<Delivery<&str>> = std::iter::from_fn(|| download.poll_deliver()).collect();
    assert_eq!(
        delivered,
        [
            Delivery {
                index: 0,
                range: 0..10,
                data: "a"
            },
            Delivery {
                index: 1,
                range: 10..20,
                data: "b"
            },
            Delivery {
                index: 2,
                range: 20..30,
                data: "c"
            },
        ]
    );
    assert_eq!(
        drain(&mut download),
        [fetch(3, 30, 40, 1), fetch(4, 40, 50, 1)]
    );
    download.handle_fetched(4, "e").unwrap();
    download.handle_fetched(3, "d").unwrap();
    assert_eq!(download.poll_deliver().map(|d| d.data), Some("d"));
    assert_eq!(download.outcome(), None);
    assert_eq!(download.poll_deliver().map(|d| d.data), Some("e"));
    assert_eq!(download.outcome(), Some(&DownloadOutcome::Completed));
}

#[test]
fn failures_are_retried_within_the_budget() {
    let mut download = DownloadScheduler::new(20, &options(10, 2, 2, 1));
    let _ = drain(&mut download);
    download.handle_fetch_failed(1, true).unwrap();
    assert_eq!(drain(&mut download), [fetch(1, 10, 20, 2)]);
    download.handle_fetch_failed(1, true).unwrap();
    assert_eq!(
        download.outcome(),
        Some(&DownloadOutcome::Failed {
            index: 1,
            attempts: 2,
            retryable: true
        })
    );
    assert_eq!(download.buffered_ranges(), 0, "buffers are dropped");
    // Range 0 was still in flight: its late result is dropped.
    download.handle_fetched(0, "late").unwrap();
    assert_eq!(download.poll_deliver(), None);
    assert_eq!(drain(&mut download), []);
}

#[test]
fn cancel_and_wrong_events() {
    let mut download = DownloadScheduler::new(20, &options(10, 1, 1, 0));
    assert_eq!(
        download.handle_fetched(0, "x"),
        Err(Error::UnexpectedEvent(EventError::RangeNotFetching {
            index: 0
        }))
    );
    let _ = drain(&mut download);
    assert_eq!(
        download.handle_fetch_failed(1, true),
        Err(Error::UnexpectedEvent(EventError::RangeNotFetching {
            index: 1
        }))
    );
    download.handle_fetched(0, "a").unwrap();
    assert_eq!(
        download.handle_fetched(0, "twice"),
        Err(Error::UnexpectedEvent(EventError::RangeNotFetching {
            index: 0
        }))
    );
    download.handle_cancel();
    assert_eq!(download.outcome(), Some(&DownloadOutcome::Cancelled));
    assert_eq!(download.poll_deliver(), None);
}

#[test]
fn a_resumed_download_fetches_and_delivers_only_the_missing_bytes() {
    let present = [90..100, 0..25, 40..45, 20..22];
    let mut download = DownloadScheduler::resume(100, &options(10, 8, 8, 0), present).unwrap();
    let fetches = drain(&mut download);
    let ranges: Vec<_> = fetches.iter().map(|f| f.range.clone()).collect();
    assert_eq!(
        ranges,
        [25..35, 35..40, 45..55, 55..65, 65..75, 75..85, 85..90]
    );
    let indices: Vec<_> = fetches.iter().map(|f| f.index).collect();
    assert_eq!(indices, (0..7).collect::<Vec<_>>(), "indices without gaps");
    for fetch in fetches.iter().rev() {
        download.handle_fetched(fetch.index, "bytes").unwrap();
    }
    let delivered: Vec<_> = std::iter::from_fn(|| download.poll_deliver())
        .map(|d| d.range)
        .collect();
    assert_eq!(delivered, ranges);
    assert_eq!(download.outcome(), Some(&DownloadOutcome::Completed));

    // Everything present: done before anything is fetched.
    let whole: DownloadScheduler<()> =
        DownloadScheduler::resume(30, &options(10, 1, 1, 0), std::iter::once(0..30)).unwrap();
    assert_eq!(whole.outcome(), Some(&DownloadOutcome::Completed));
    for bad in [5..5, 20..31] {
        assert_eq!(
            DownloadScheduler::<()>::resume(
                30,
                &options(10, 1, 1, 0),
                std::iter::once(bad.clone())
            )
            .unwrap_err(),
            Error::InvalidOptions(OptionsError::RangeOutsideObject {
                start: bad.start,
                end: bad.end,
                object_size: 30
            })
        );
    }
}

#[test]
fn a_new_range_size_applies_to_the_ranges_not_yet_cut() {
    let mut download = DownloadScheduler::new(100, &options(10, 2, 4, 1));
    assert_eq!(
        drain(&mut download),
        [fetch(0, 0, 10, 1), fetch(1, 10, 20, 1)]
    );
    download.set_range_size(30).unwrap();
    assert_eq!(download.range_size(), 30);
    // A retry keeps its bytes; the next new range has the new size.
    download.handle_fetch_failed(1, true).unwrap();
    download.handle_fetched(0, "a").unwrap();
    assert_eq!(
        drain(&mut download),
        [fetch(1, 10, 20, 2), fetch(2, 20, 50, 1)]
    );
    assert_eq!(
        download.set_range_size(0),
        Err(Error::InvalidOptions(OptionsError::ZeroRangeSize))
    );
    download.handle_fetched(1, "b").unwrap();
    download.handle_fetched(2, "c").unwrap();
    let delivered: Vec<_> = std::iter::from_fn(|| download.poll_deliver())
        .map(|d| d.range)
        .collect();
    assert_eq!(delivered, [0..10, 10..20, 20..50]);
    assert_eq!(
        drain(&mut download),
        [fetch(3, 50, 80, 1), fetch(4, 80, 100, 1)]
    );
    download.handle_fetched(3, "d").unwrap();
    download.handle_fetched(4, "e").unwrap();
    assert_eq!(std::iter::from_fn(|| download.poll_deliver()).count(), 2);
    assert_eq!(download.outcome(), Some(&DownloadOutcome::Completed));
}

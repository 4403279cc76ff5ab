//! The upload scheduler, scenario by scenario, with exact action sequences.

use s3_multipart_plan::{
    Action, CompletedPart, Error, EventError, FailureReason, MultipartOptions, Outcome, PartLimits,
    UploadScheduler,
};

/// A driver's record of a part: ETag and checksum. Deliberately neither
/// `Clone` nor a `PartReceipt`: polling and handling results need no bounds.
#[derive(Debug, PartialEq, Eq)]
struct Receipt {
    etag: String,
    checksum: String,
}

fn receipt(etag: &str) -> Receipt {
    Receipt {
        etag: etag.to_owned(),
        checksum: String::new(),
    }
}

type Upload = UploadScheduler<Receipt>;

/// Limits in bytes so sequences stay readable: parts 10..=100 bytes, at
/// most 5 parts, objects of at most 400 bytes.
fn options(part_size: u64, concurrency: usize, retries: u32) -> MultipartOptions {
    MultipartOptions::builder()
        .limits(PartLimits::new(10, 100, 5, 400).unwrap())
        .part_size(part_size)
        .concurrency(concurrency)
        .retries_per_part(retries)
        .build()
        .unwrap()
}

fn drain(upload: &mut Upload) -> Vec<Action<Receipt>> {
    std::iter::from_fn(|| upload.poll_action()).collect()
}

fn upload(number: u32, start: u64, end: u64, attempt: u32) -> Action<Receipt> {
    Action::UploadPart {
        number,
        range: start..end,
        attempt,
    }
}

fn done(number: u32, size: u64) -> CompletedPart<Receipt> {
    CompletedPart {
        number,
        size,
        receipt: Receipt {
            etag: format!("\"e{number}\""),
            checksum: format!("c{number}=="),
        },
    }
}

fn succeed(upload: &mut Upload, number: u32) {
    upload
        .handle_part_done(number, done(number, 0).receipt)
        .unwrap();
}

#[test]
fn known_size_upload_in_order_with_bounded_concurrency() {
    let mut up = UploadScheduler::new(35, &options(10, 2, 0)).unwrap();
    assert_eq!(drain(&mut up), [Action::Create]);
    // Nothing starts before the upload id.
    assert_eq!(drain(&mut up), []);
    up.handle_created("id-1").unwrap();
    assert_eq!(up.upload_id(), Some("id-1"));
    assert_eq!(drain(&mut up), [upload(1, 0, 10, 1), upload(2, 10, 20, 1)]);
    assert_eq!(up.in_flight(), 2);
    assert_eq!(up.buffered_bytes(), 20);
    assert_eq!(up.maximum_buffered_bytes(), 20);
    succeed(&mut up, 2);
    assert_eq!(drain(&mut up), [upload(3, 20, 30, 1)]);
    succeed(&mut up, 3);
    assert_eq!(drain(&mut up), [upload(4, 30, 35, 1)]);
    succeed(&mut up, 4);
    // Part 1 is still running: no Complete yet.
    assert_eq!(drain(&mut up), []);
    succeed(&mut up, 1);
    assert_eq!(
        drain(&mut up),
        [Action::Complete {
            parts: vec![done(1, 10), done(2, 10), done(3, 10), done(4, 5)].into()
        }]
    );
    assert!(!up.is_finished());
    up.handle_completed().unwrap();
    assert_eq!(
        up.outcome(),
        Some(&Outcome::Completed { parts: 4, size: 35 })
    );
    assert_eq!(drain(&mut up), []);
}

#[test]
fn retryable_failures_are_retried_within_the_budget() {
    let mut up = UploadScheduler::new(20, &options(10, 1, 2)).unwrap();
    assert_eq!(drain(&mut up), [Action::Create]);
    up.handle_created("id").unwrap();
    assert_eq!(drain(&mut up), [upload(1, 0, 10, 1)]);
    up.handle_part_failed(1, true).unwrap();
    // The retry keeps the slot: part 2 does not start meanwhile.
    assert_eq!(drain(&mut up), [upload(1, 0, 10, 2)]);
    up.handle_part_failed(1, true).unwrap();
    assert_eq!(drain(&mut up), [upload(1, 0, 10, 3)]);
    // 1 + 2 retries used up: the next failure is fatal.
    up.handle_part_failed(1, true).unwrap();
    let reason = FailureReason::PartFailed {
        number: 1,
        attempts: 3,
        retryable: true,
    };
    assert_eq!(
        drain(&mut up),
        [Action::Abort {
            reason: reason.clone()
        }]
    );
    assert_eq!(drain(&mut up), []);
    up.handle_aborted().unwrap();
    assert_eq!(up.outcome(), Some(&Outcome::Aborted { reason }));
}

#[test]
fn a_fatal_failure_aborts_once_and_ignores_late_results() {
    let mut up = UploadScheduler::new(30, &options(10, 3, 5)).unwrap();
    let _ = drain(&mut up);
    up.handle_created("id").unwrap();
    assert_eq!(drain(&mut up).len(), 3);
    up.handle_part_failed(2, false).unwrap();
    let reason = FailureReason::PartFailed {
        number: 2,
        attempts: 1,
        retryable: false,
    };
    assert_eq!(
        drain(&mut up),
        [Action::Abort {
            reason: reason.clone()
        }]
    );
    // Parts 1 and 3 were in flight; their results change nothing.
    succeed(&mut up, 1);
    up.handle_part_failed(3, true).unwrap();
    up.handle_cancel();
    assert_eq!(drain(&mut up), []);
    up.handle_abort_failed().unwrap();
    assert_eq!(up.outcome(), Some(&Outcome::AbortFailed { reason }));
    assert_eq!(
        up.upload_id(),
        Some("id"),
        "kept so the caller can clean up"
    );
}

#[test]
fn cancellation_at_every_stage() {
    // Before anything was polled: nothing exists, nothing to abort.
    let mut up = UploadScheduler::new(30, &options(10, 2, 1)).unwrap();
    up.handle_cancel();
    assert_eq!(drain(&mut up), []);
    assert_eq!(
        up.outcome(),
        Some(&Outcome::NotStarted {
            reason: FailureReason::Cancelled
        })
    );

    // While Create is in flight: the abort waits for the upload id.
    let mut up = UploadScheduler::new(30, &options(10, 2, 1)).unwrap();
    let _ = drain(&mut up);
    up.handle_cancel();
    assert_eq!(drain(&mut up), []);
    up.handle_created("id").unwrap();
    assert_eq!(
        drain(&mut up),
        [Action::Abort {
            reason: FailureReason::Cancelled
        }]
    );
    up.handle_aborted().unwrap();
    assert!(up.is_finished());

    // While Create is in flight and Create then fails: nothing to abort.
    let mut up = UploadScheduler::new(30, &options(10, 2, 1)).unwrap();
    let _ = drain(&mut up);
    up.handle_cancel();
    up.handle_create_failed().unwrap();
    assert_eq!(
        up.outcome(),
        Some(&Outcome::NotStarted {
            reason: FailureReason::Cancelled
        })
    );

    // While Complete is in flight: only a failing Complete lets it act.
    for complete_succeeds in [true, false] {
        let mut up = UploadScheduler::new(10, &options(10, 2, 1)).unwrap();
        let _ = drain(&mut up);
        up.handle_created("id").unwrap();
        let _ = drain(&mut up);
        succeed(&mut up, 1);
        assert!(matches!(drain(&mut up)[..], [Action::Complete { .. }]));
        up.handle_cancel();
        assert_eq!(drain(&mut up), []);
        if complete_succeeds {
            up.handle_completed().unwrap();
            assert!(matches!(up.outcome(), Some(Outcome::Completed { .. })));
        } else {
            up.handle_complete_failed(true).unwrap();
            assert_eq!(
                drain(&mut up),
                [Action::Abort {
                    reason: FailureReason::Cancelled
                }]
            );
        }
    }
}

#[test]
fn complete_is_retried_then_aborted() {
    let mut up = UploadScheduler::new(10, &options(10, 1, 1)).unwrap();
    let _ = drain(&mut up);
    up.handle_created("id").unwrap();
    let _ = drain(&mut up);
    succeed(&mut up, 1);
    let complete = Action::Complete {
        parts: vec![done(1, 10)].into(),
    };
    assert_eq!(drain(&mut up), std::slice::from_ref(&complete));
    up.handle_complete_failed(true).unwrap();
    assert_eq!(drain(&mut up), [complete]);
    up.handle_complete_failed(true).unwrap();
    assert_eq!(
        drain(&mut up),
        [Action::Abort {
            reason: FailureReason::CompleteFailed { attempts: 2 }
        }]
    );
}

#[test]
fn create_failure_ends_without_abort() {
    let mut up = UploadScheduler::new(10, &options(10, 1, 1)).unwrap();
    let _ = drain(&mut up);
    up.handle_create_failed().unwrap();
    assert_eq!(drain(&mut up), []);
    assert_eq!(
        up.outcome(),
        Some(&Outcome::NotStarted {
            reason: FailureReason::CreateFailed
        })
    );
}

#[test]
fn out_of_order_events_are_typed_errors() {
    let mut up = UploadScheduler::new(30, &options(10, 1, 1)).unwrap();
    let not_in_flight = |e| Err(Error::UnexpectedEvent(e));
    assert_eq!(
        up.handle_created("x"),
        not_in_flight(EventError::CreateNotInFlight)
    );
    let _ = drain(&mut up);
    up.handle_created("id").unwrap();
    assert_eq!(
        up.handle_created("again"),
        not_in_flight(EventError::CreateNotInFlight)
    );
    let _ = drain(&mut up);
    for number in [0, 2, 3, 4, u32::MAX] {
        assert_eq!(
            up.handle_part_done(number, receipt("e")),
            not_in_flight(EventError::PartNotUploading { number })
        );
        assert_eq!(
            up.handle_part_failed(number, true),
            not_in_flight(EventError::PartNotUploading { number })
        );
    }
    assert_eq!(
        up.handle_part_read(1, 5),
        not_in_flight(EventError::PartNotReading { number: 1 })
    );
    assert_eq!(
        up.handle_completed(),
        not_in_flight(EventError::CompleteNotInFlight)
    );
    assert_eq!(
        up.handle_aborted(),
        not_in_flight(EventError::AbortNotInFlight)
    );
    succeed(&mut up, 1);
    assert_eq!(
        up.handle_part_done(1, receipt("twice")),
        not_in_flight(EventError::PartNotUploading { number: 1 })
    );
    let message = up.handle_completed().unwrap_err().to_string();
    assert_eq!(
        message,
        "unexpected event: a complete result arrived but no Complete is in flight"
    );
}

fn read(number: u32, offset: u64, capacity: u64) -> Action<Receipt> {
    Action::ReadPart {
        number,
        offset,
        capacity,
    }
}

#[test]
fn stream_is_read_in_order_and_ends_on_a_short_read() {
    // Limits 10..=100 bytes, 5 parts, 400 bytes: 10-byte parts doubling
    // every 2 parts reach 10+10+20+20+40 = 100 < 400, every part 1 reaches
    // 10+20+40+80+100 = 250 < 400, so the interval is 1 (fastest growth).
    let opts = options(10, 4, 0);
    let mut up = UploadScheduler::new_stream(&opts);
    assert_eq!(up.stream_plan().unwrap().doubling_interval(), 1);
    // Reading may start while Create is in flight; one read at a time.
    assert_eq!(drain(&mut up), [Action::Create, read(1, 0, 10)]);
    up.handle_part_read(1, 10).unwrap();
    assert_eq!(drain(&mut up), [read(2, 10, 20)]);
    assert_eq!(up.buffered_bytes(), 30);
    up.handle_created("id").unwrap();
    assert_eq!(drain(&mut up), [upload(1, 0, 10, 1)]);
    up.handle_part_read(2, 20).unwrap();
    // Part 3 (40 bytes) would exceed the 4 × 10 byte budget: it waits.
    assert_eq!(drain(&mut up), [upload(2, 10, 30, 1)]);
    succeed(&mut up, 1);
    assert_eq!(drain(&mut up), []);
    succeed(&mut up, 2);
    assert_eq!(drain(&mut up), [read(3, 30, 40)]);
    // 7 bytes and the stream ends: part 3 is the last.
    up.handle_part_read(3, 7).unwrap();
    assert_eq!(up.part_count(), Some(3));
    assert_eq!(drain(&mut up), [upload(3, 30, 37, 1)]);
    succeed(&mut up, 3);
    assert_eq!(
        drain(&mut up),
        [Action::Complete {
            parts: vec![done(1, 10), done(2, 20), done(3, 7)].into()
        }]
    );
    up.handle_completed().unwrap();
    assert_eq!(
        up.outcome(),
        Some(&Outcome::Completed { parts: 3, size: 37 })
    );
}

#[test]
fn stream_ending_on_a_part_boundary_and_empty_stream() {
    let opts = options(10, 1, 0);
    let mut up = UploadScheduler::new_stream(&opts);
    let _ = drain(&mut up);
    up.handle_created("id").unwrap();
    up.handle_part_read(1, 10).unwrap();
    assert_eq!(drain(&mut up), [upload(1, 0, 10, 1)]);
    succeed(&mut up, 1);
    assert!(matches!(
        drain(&mut up)[..],
        [Action::ReadPart { number: 2, .. }]
    ));
    // The next read finds nothing: part 2 does not exist.
    up.handle_part_read(2, 0).unwrap();
    assert_eq!(
        drain(&mut up),
        [Action::Complete {
            parts: vec![done(1, 10)].into()
        }]
    );

    // An empty stream is one empty part.
    let mut up = UploadScheduler::new_stream(&opts);
    let _ = drain(&mut up);
    up.handle_created("id").unwrap();
    up.handle_part_read(1, 0).unwrap();
    assert_eq!(drain(&mut up), [upload(1, 0, 0, 1)]);
}

#[test]
fn stream_larger_than_the_limit_is_aborted() {
    // 10-byte parts doubling every part: 10+20+40+80+100 = 250 bytes fit.
    let opts = options(10, 1, 0);
    let mut up = UploadScheduler::new_stream(&opts);
    assert_eq!(up.stream_plan().unwrap().maximum_stream_size(), 250);
    assert_eq!(drain(&mut up), [Action::Create, read(1, 0, 10)]);
    up.handle_created("id").unwrap();
    let mut offset = 0;
    for (number, size) in [(1, 10), (2, 20), (3, 40), (4, 80)] {
        up.handle_part_read(number, size).unwrap();
        assert_eq!(drain(&mut up), [upload(number, offset, offset + size, 1)]);
        succeed(&mut up, number);
        offset += size;
        // Part 5 is the last possible one: it asks for one byte more than
        // it may hold (100), so a full read proves the stream too large.
        let (next, capacity) = if number < 4 {
            (number + 1, 2 * size)
        } else {
            (5, 101)
        };
        assert_eq!(drain(&mut up), [read(next, offset, capacity)]);
    }
    assert_eq!(
        up.handle_part_read(5, 102),
        Err(Error::UnexpectedEvent(EventError::ReadTooLong {
            number: 5,
            len: 102,
            capacity: 101
        }))
    );
    up.handle_part_read(5, 101).unwrap();
    assert_eq!(
        drain(&mut up),
        [Action::Abort {
            reason: FailureReason::StreamTooLarge { maximum: 250 }
        }]
    );
}

#[test]
fn stream_memory_stays_within_the_budget() {
    // Budget 2 × 10 bytes; parts grow past it and then run one at a time.
    let opts = options(10, 2, 0);
    let mut up = UploadScheduler::new_stream(&opts);
    let _ = drain(&mut up);
    up.handle_created("id").unwrap();
    up.handle_part_read(1, 10).unwrap();
    let _ = drain(&mut up);
    // Part 2 (20 bytes) would make 30 > 20 while part 1 is in flight.
    assert_eq!(up.in_flight(), 1);
    succeed(&mut up, 1);
    assert_eq!(
        drain(&mut up),
        [Action::ReadPart {
            number: 2,
            offset: 10,
            capacity: 20
        }]
    );
    assert_eq!(up.maximum_buffered_bytes(), 20);
    up.handle_part_read(2, 20).unwrap();
    let _ = drain(&mut up);
    assert_eq!(up.in_flight(), 1);
    succeed(&mut up, 2);
    let _ = drain(&mut up);
    assert_eq!(up.maximum_buffered_bytes(), 40);
    assert_eq!(
        opts.maximum_buffered_bytes(),
        20,
        "the options' bound is the budget"
    );
}

#[test]
fn schedulers_can_move_between_threads() {
    // A runtime adapter keeps schedulers in tasks that may migrate.
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<UploadScheduler<String>>();
    send_and_sync::<Action<String>>();
    send_and_sync::<s3_multipart_plan::DownloadScheduler<Vec<u8>>>();
    send_and_sync::<s3_multipart_plan::UploadSnapshot<String>>();
}

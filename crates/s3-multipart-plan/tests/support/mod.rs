//! A simulated driver shared by the property tests and the seeded
//! simulation: it performs the scheduler's actions against an in-memory
//! "server" with injected faults, out-of-order completion and cancellation,
//! and checks every guarantee of the crate docs independently at each step.

#![allow(dead_code)] // Each test binary uses a different subset.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use s3_multipart_plan::{
    Action, DownloadOptions, DownloadOutcome, DownloadScheduler, FailureReason, MultipartOptions,
    Outcome, UploadScheduler,
};

/// splitmix64: a tiny, well-known PRNG, so runs are reproducible by seed.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0); the modulo bias is irrelevant here.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `per_mille / 1000`.
    pub fn chance(&mut self, per_mille: u32) -> bool {
        self.below(1000) < u64::from(per_mille)
    }
}

/// Fault rates, each per mille per opportunity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    pub create_fail: u32,
    pub part_retryable: u32,
    pub part_fatal: u32,
    pub read_fail: u32,
    pub complete_fail: u32,
    pub abort_fail: u32,
    /// Chance of a cancellation before each performed action.
    pub cancel: u32,
}

/// What is uploaded.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    Known(u64),
    /// A stream of this many bytes, whose length the scheduler does not know.
    Stream(u64),
}

/// What happened in one run, for outcome checks by the caller.
#[derive(Debug)]
pub struct Report {
    pub outcome: Outcome,
    pub aborts: u32,
    pub completes: u32,
    pub max_in_flight: usize,
    /// Distinct parts that saw at least one UploadPart.
    pub parts_uploaded: u32,
    /// UploadPart attempts beyond the first, over all parts.
    pub retries: u32,
}

#[derive(Debug)]
struct Uploaded {
    range: Range<u64>,
    receipt: String,
}

/// Drives one upload to its end, asserting every invariant on the way.
pub fn run_upload(
    options: &MultipartOptions,
    source: Source,
    faults: Faults,
    rng: &mut SplitMix64,
) -> Report {
    let limits = *options.limits();
    let retries = options.retries_per_part();
    // The receipt of a part: its ETag and checksum, as one string.
    let (mut upload, expected_size, stream_len): (UploadScheduler<String>, _, _) = match source {
        Source::Known(size) => (
            UploadScheduler::new(size, options).expect("size within limits"),
            Some(size),
            None,
        ),
        Source::Stream(len) => (UploadScheduler::new_stream(options), None, Some(len)),
    };
    let maximum_buffered = upload.maximum_buffered_bytes();
    if let Some(plan) = upload.upload_plan() {
        assert_eq!(
            maximum_buffered,
            plan.part_size() * options.concurrency() as u64
        );
    }

    let mut outstanding: Vec<Action<String>> = Vec::new();
    let mut attempts: HashMap<u32, u32> = HashMap::new();
    let mut succeeded: BTreeMap<u32, Uploaded> = BTreeMap::new();
    // Stream parts read so far: number -> bytes.
    let mut read: BTreeMap<u32, Range<u64>> = BTreeMap::new();
    let mut stream_position = 0u64;
    let mut stream_ended = false;
    let mut created = false;
    let mut completed_ok = false;
    let mut cancel_requested = false;
    let mut abandon: Option<&'static str> = None;
    let (mut creates, mut aborts, mut completes) = (0, 0, 0);
    let mut max_in_flight = 0;

    loop {
        // The drain rule.
        while let Some(action) = upload.poll_action() {
            match &action {
                Action::Create => {
                    creates += 1;
                    assert_eq!(creates, 1, "Create emitted twice");
                }
                Action::ReadPart {
                    number,
                    offset,
                    capacity,
                } => {
                    assert!(stream_len.is_some(), "ReadPart for a known size");
                    assert!(!stream_ended, "ReadPart after the end of the stream");
                    assert_eq!(*offset, stream_position, "reads must be sequential");
                    assert_eq!(*number as usize, read.len() + 1, "read numbers contiguous");
                    assert!(*capacity >= 1 && *capacity <= limits.max_part_size() + 1);
                    assert!(
                        !outstanding
                            .iter()
                            .any(|a| matches!(a, Action::ReadPart { .. })),
                        "two reads outstanding"
                    );
                }
                Action::UploadPart {
                    number,
                    range,
                    attempt,
                } => {
                    assert!(created, "UploadPart before the upload id");
                    assert!(abandon.is_none(), "UploadPart after a fatal event");
                    assert!(
                        !succeeded.contains_key(number),
                        "part {number} uploaded twice"
                    );
                    assert!(
                        !outstanding.iter().any(
                            |a| matches!(a, Action::UploadPart { number: n, .. } if n == number)
                        ),
                        "part {number} has two uploads outstanding"
                    );
                    let previous = attempts.insert(*number, *attempt).unwrap_or(0);
                    assert_eq!(*attempt, previous + 1, "attempts count up by one");
                    assert!(*attempt <= retries + 1, "retry budget exceeded");
                    assert!(range.end - range.start <= limits.max_part_size());
                    if let Some(bytes) = read.get(number) {
                        assert_eq!(range, bytes, "stream part uploads what was read");
                    }
                }
                Action::Complete { parts } => {
                    completes += 1;
                    assert!(completes <= retries + 1, "Complete retried beyond budget");
                    assert_eq!(aborts, 0, "Complete after Abort");
                    assert!(
                        !outstanding.iter().any(|a| matches!(
                            a,
                            Action::UploadPart { .. } | Action::ReadPart { .. }
                        )),
                        "Complete while parts are in flight"
                    );
                    // Parts 1..=n, ascending, every one reported successful.
                    let numbers: Vec<u32> = parts.iter().map(|p| p.number).collect();
                    let expected: Vec<u32> = (1..=parts.len() as u32).collect();
                    assert_eq!(numbers, expected, "Complete lists parts 1..=n ascending");
                    assert_eq!(parts.len(), succeeded.len(), "Complete before all parts");
                    // Every byte exactly once: the ranges are contiguous from 0.
                    let mut end = 0;
                    for (index, part) in parts.iter().enumerate() {
                        let uploaded = &succeeded[&part.number];
                        assert_eq!(part.receipt, uploaded.receipt);
                        assert_eq!(
                            uploaded.range.start, end,
                            "gap or overlap at part {}",
                            part.number
                        );
                        assert_eq!(part.size, uploaded.range.end - uploaded.range.start);
                        end = uploaded.range.end;
                        let is_last = index + 1 == parts.len();
                        if !is_last {
                            assert!(part.size >= limits.min_part_size(), "small middle part");
                        }
                        assert!(part.size <= limits.max_part_size());
                    }
                    assert!(parts.len() as u32 <= limits.max_parts());
                    let total = expected_size.or(stream_len).unwrap_or(0);
                    assert_eq!(end, total, "the parts cover the whole object");
                }
                Action::Abort { .. } => {
                    aborts += 1;
                    assert_eq!(aborts, 1, "more than one Abort");
                    assert!(created, "Abort without an upload id");
                    assert!(abandon.is_some(), "Abort without a fatal event");
                }
                other => panic!("unknown action {other:?}"),
            }
            outstanding.push(action);
        }

        // Bounds, from the scheduler's and from the driver's own accounting.
        let requests = outstanding
            .iter()
            .filter(|a| matches!(a, Action::UploadPart { .. } | Action::ReadPart { .. }))
            .count();
        let driver_bytes: u64 = outstanding
            .iter()
            .map(|a| match a {
                Action::UploadPart { range, .. } => range.end - range.start,
                Action::ReadPart { capacity, .. } => *capacity,
                _ => 0,
            })
            .sum();
        assert!(upload.in_flight() <= options.concurrency());
        assert!(requests <= options.concurrency(), "concurrency exceeded");
        assert!(upload.buffered_bytes() <= upload.maximum_buffered_bytes());
        assert!(driver_bytes <= upload.maximum_buffered_bytes());
        assert!(
            upload.maximum_buffered_bytes() <= maximum_buffered.max(limits.max_part_size() + 1),
            "the memory bound grew past one maximum part"
        );
        max_in_flight = max_in_flight.max(requests);

        if upload.is_finished() {
            break;
        }
        assert!(
            !outstanding.is_empty(),
            "stalled: unfinished with nothing in flight"
        );

        if rng.chance(faults.cancel) {
            upload.handle_cancel();
            cancel_requested = true;
            // With Complete in flight, only its failure lets the cancel act.
            if !outstanding
                .iter()
                .any(|a| matches!(a, Action::Complete { .. }))
            {
                abandon.get_or_insert("cancelled");
            }
            continue;
        }

        let action = outstanding.swap_remove(rng.below(outstanding.len() as u64) as usize);
        match action {
            Action::Create => {
                if rng.chance(faults.create_fail) {
                    upload.handle_create_failed().unwrap();
                } else {
                    created = true;
                    upload.handle_created("sim-upload").unwrap();
                }
            }
            Action::ReadPart {
                number, capacity, ..
            } => {
                let len = stream_len.unwrap_or(0);
                if rng.chance(faults.read_fail) {
                    abandon.get_or_insert("read failed");
                    upload.handle_read_failed(number).unwrap();
                    continue;
                }
                let got = capacity.min(len - stream_position);
                let range = stream_position..stream_position + got;
                stream_position += got;
                if got < capacity {
                    stream_ended = true;
                }
                if got > 0 || number == 1 {
                    read.insert(number, range);
                }
                let maximum = upload.stream_plan().unwrap().maximum_stream_size();
                if stream_position > maximum {
                    abandon.get_or_insert("stream too large");
                }
                upload.handle_part_read(number, got).unwrap();
            }
            Action::UploadPart {
                number,
                range,
                attempt,
            } => {
                if rng.chance(faults.part_fatal) {
                    abandon.get_or_insert("fatal part failure");
                    upload.handle_part_failed(number, false).unwrap();
                } else if rng.chance(faults.part_retryable) {
                    if attempt > retries {
                        abandon.get_or_insert("retries exhausted");
                    }
                    upload.handle_part_failed(number, true).unwrap();
                } else {
                    let receipt = format!("\"{number}-{attempt}\" CRC32=c{number}");
                    if abandon.is_none() {
                        succeeded.insert(
                            number,
                            Uploaded {
                                range,
                                receipt: receipt.clone(),
                            },
                        );
                    }
                    upload.handle_part_done(number, receipt).unwrap();
                }
            }
            Action::Complete { .. } => {
                if rng.chance(faults.complete_fail) {
                    let retryable = rng.chance(500);
                    if !retryable || completes > retries || cancel_requested {
                        abandon.get_or_insert("complete failed");
                    }
                    upload.handle_complete_failed(retryable).unwrap();
                } else {
                    completed_ok = true;
                    upload.handle_completed().unwrap();
                }
            }
            Action::Abort { .. } => {
                if rng.chance(faults.abort_fail) {
                    upload.handle_abort_failed().unwrap();
                } else {
                    upload.handle_aborted().unwrap();
                }
            }
            other => panic!("unknown action {other:?}"),
        }
    }

    let outcome = upload.outcome().cloned().expect("finished");
    // Results still in flight after the end are accepted and ignored.
    for action in outstanding {
        match action {
            Action::UploadPart { number, .. } => {
                upload.handle_part_done(number, "late".into()).unwrap()
            }
            Action::ReadPart { number, .. } => upload.handle_part_read(number, 0).unwrap(),
            _ => {}
        }
        assert_eq!(upload.poll_action(), None, "actions after the end");
    }

    // The end matches what happened.
    match &outcome {
        Outcome::Completed { size, parts } => {
            assert!(completed_ok);
            assert_eq!(aborts, 0);
            assert_eq!(Some(*size), expected_size.or(stream_len));
            assert_eq!(*parts as usize, succeeded.len());
        }
        Outcome::Aborted { reason } | Outcome::AbortFailed { reason } => {
            assert!(!completed_ok);
            assert_eq!(aborts, 1, "exactly one Abort");
            assert!(abandon.is_some());
            if let FailureReason::StreamTooLarge { maximum } = reason {
                assert!(stream_len.unwrap() > *maximum);
            }
        }
        Outcome::NotStarted { .. } => {
            assert!(!created, "an upload id existed but was not aborted");
            assert_eq!(aborts, 0);
        }
        other => panic!("unknown outcome {other:?}"),
    }
    if created && abandon.is_some() && !completed_ok {
        assert_eq!(
            aborts, 1,
            "a fatal event must end in one Abort ({abandon:?})"
        );
    }
    Report {
        outcome,
        aborts,
        completes,
        max_in_flight,
        parts_uploaded: attempts.len() as u32,
        retries: attempts.values().map(|a| a - 1).sum(),
    }
}

/// Drives one ranged download to its end with random completion order,
/// failures, a random consumer pace and cancellations; checks every bound.
pub fn run_download(
    object_size: u64,
    options: &DownloadOptions,
    faults: Faults,
    rng: &mut SplitMix64,
) -> DownloadOutcome {
    let object: Vec<u8> = (0..object_size).map(|i| (i * 7 % 251) as u8).collect();
    let mut download: DownloadScheduler<Vec<u8>> = DownloadScheduler::new(object_size, options);
    let mut outstanding = Vec::new();
    let mut attempts: HashMap<usize, u32> = HashMap::new();
    let mut received = Vec::new();
    let mut failed = false;
    let mut cancelled = false;
    loop {
        while let Some(fetch) = download.poll_fetch() {
            let previous = attempts.insert(fetch.index, fetch.attempt).unwrap_or(0);
            assert_eq!(fetch.attempt, previous + 1);
            assert!(fetch.attempt <= options.retries_per_range() + 1);
            assert!(
                fetch.range.end <= received.len() as u64 + options.maximum_buffered_bytes(),
                "fetch beyond the reorder window"
            );
            outstanding.push(fetch);
        }
        assert!(outstanding.len() <= options.concurrency());
        assert!(download.in_flight() <= options.concurrency());
        assert!(download.buffered_ranges() <= options.window());
        if download.outcome().is_some() {
            break;
        }
        if rng.chance(faults.cancel) {
            download.handle_cancel();
            cancelled = true;
            continue;
        }
        // Either the consumer reads or a GET finishes.
        if outstanding.is_empty() || rng.chance(300) {
            if let Some(delivery) = download.poll_deliver() {
                assert_eq!(delivery.range.start, received.len() as u64, "out of order");
                assert_eq!(
                    delivery.data.len() as u64,
                    delivery.range.end - delivery.range.start
                );
                received.extend_from_slice(&delivery.data);
                continue;
            }
            assert!(!outstanding.is_empty(), "stalled download");
        }
        let fetch = outstanding.swap_remove(rng.below(outstanding.len() as u64) as usize);
        if rng.chance(faults.part_fatal) {
            failed = true;
            download.handle_fetch_failed(fetch.index, false).unwrap();
        } else if rng.chance(faults.part_retryable) {
            failed |= fetch.attempt > options.retries_per_range();
            download.handle_fetch_failed(fetch.index, true).unwrap();
        } else {
            let bytes = object[fetch.range.start as usize..fetch.range.end as usize].to_vec();
            download.handle_fetched(fetch.index, bytes).unwrap();
        }
    }
    let outcome = download.outcome().cloned().unwrap();
    for fetch in outstanding {
        download.handle_fetched(fetch.index, Vec::new()).unwrap();
    }
    assert_eq!(download.poll_fetch(), None);
    match &outcome {
        DownloadOutcome::Completed => {
            assert_eq!(received, object, "every byte once, in order");
        }
        DownloadOutcome::Failed { attempts, .. } => {
            assert!(failed);
            assert!(*attempts <= options.retries_per_range() + 1);
        }
        DownloadOutcome::Cancelled => assert!(cancelled),
        other => panic!("unknown outcome {other:?}"),
    }
    outcome
}

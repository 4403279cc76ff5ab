//! s3-multipart-plan workloads:
//! - `upload_10000_parts`: plan and schedule a 10,000-part upload end to end
//!   (50,000 MiB in 5 MiB parts, concurrency 16): every action polled, every
//!   result handled (`Create`, 10,000 `UploadPart` with a receipt of a 34-byte
//!   ETag and a CRC32 checksum each, `Complete` listing all parts), results
//!   arriving in request order. Target: <= 2 ms.
//! - `stream_10000_parts`: the same for a 5 TiB stream of unknown length
//!   (reads reported, growth schedule), concurrency 16.
//! - `download_10000_ranges`: a 10,000-range download, concurrency 16,
//!   window 32, every range fetched and delivered in order.
//! - `snapshot_10000_parts`: write and parse the text snapshot of an upload
//!   with 10,000 finished parts (the same ETag + checksum receipts).

use std::collections::VecDeque;
use std::hint::black_box;

use criterion::Criterion;
use s3_wire::multipart_plan::{
    Action, DownloadOptions, DownloadScheduler, MIB, MultipartOptions, Outcome, PartReceipt,
    UploadScheduler, UploadSnapshot,
};

const ETAG: &str = "\"9b2cf535f27731c974343645a3985328\"";
const CRC32: &str = "yZRlqg==";

/// What a real driver records per part: two owned strings, the ETag and the
/// CRC32 checksum (base64) the server returned.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Receipt {
    etag: String,
    crc32: String,
}

impl Receipt {
    fn new() -> Self {
        Self {
            etag: String::from(ETAG),
            crc32: String::from(CRC32),
        }
    }
}

impl PartReceipt for Receipt {
    /// `<etag>;CRC32=<base64>`: no byte the snapshot has to percent-encode,
    /// like the version 1 part line this bench measured before.
    fn to_snapshot_text(&self) -> String {
        format!("{};CRC32={}", self.etag, self.crc32)
    }

    fn from_snapshot_text(text: &str) -> Result<Self, String> {
        let (etag, crc32) = text
            .rsplit_once(";CRC32=")
            .ok_or_else(|| format!("expected `<etag>;CRC32=<value>`, found {text:?}"))?;
        Ok(Self {
            etag: etag.to_owned(),
            crc32: crc32.to_owned(),
        })
    }

    fn same_part(&self, listed: &Self) -> bool {
        self == listed
    }
}

/// Drives an upload to completion, answering requests in the order they were
/// issued; returns the outcome so the work cannot be optimised away.
fn drive(mut upload: UploadScheduler<Receipt>, stream_len: u64) -> Outcome {
    let mut in_flight = VecDeque::with_capacity(32);
    let mut stream_position = 0;
    while upload.outcome().is_none() {
        while let Some(action) = upload.poll_action() {
            in_flight.push_back(action);
        }
        match in_flight.pop_front().expect("work in flight") {
            Action::Create => upload.handle_created("upload-id").unwrap(),
            Action::ReadPart {
                number, capacity, ..
            } => {
                let len = capacity.min(stream_len - stream_position);
                stream_position += len;
                upload.handle_part_read(number, len).unwrap();
            }
            Action::UploadPart { number, .. } => {
                upload.handle_part_done(number, Receipt::new()).unwrap();
            }
            Action::Complete { parts } => {
                black_box(&parts);
                upload.handle_completed().unwrap();
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    upload.outcome().cloned().unwrap()
}

pub fn benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("multipart_plan");

    let options = MultipartOptions::builder()
        .part_size(5 * MIB)
        .concurrency(16)
        .build()
        .unwrap();
    let size = 10_000 * 5 * MIB;
    group.bench_function("upload_10000_parts", |b| {
        b.iter(|| {
            let upload = UploadScheduler::new(black_box(size), &options).unwrap();
            let outcome = drive(upload, 0);
            assert_eq!(
                outcome,
                Outcome::Completed {
                    parts: 10_000,
                    size
                }
            );
        })
    });

    let stream_len = 5 << 40;
    group.bench_function("stream_10000_parts", |b| {
        b.iter(|| {
            let upload = UploadScheduler::new_stream(&options);
            let outcome = drive(upload, black_box(stream_len));
            assert!(matches!(outcome, Outcome::Completed { size, .. } if size == stream_len));
        })
    });

    let download_options = DownloadOptions::builder()
        .range_size(8 * MIB)
        .concurrency(16)
        .window(32)
        .build()
        .unwrap();
    group.bench_function("download_10000_ranges", |b| {
        b.iter(|| {
            let mut download =
                DownloadScheduler::new(black_box(10_000 * 8 * MIB), &download_options);
            let mut in_flight = VecDeque::with_capacity(16);
            let mut delivered = 0u64;
            while download.outcome().is_none() {
                while let Some(fetch) = download.poll_fetch() {
                    in_flight.push_back(fetch);
                }
                // The newest GET finishes first: the window does real work.
                let fetch = in_flight.pop_back().expect("work in flight");
                download
                    .handle_fetched(fetch.index, fetch.range.end)
                    .unwrap();
                while let Some(delivery) = download.poll_deliver() {
                    delivered = delivery.data;
                }
            }
            assert_eq!(delivered, 10_000 * 8 * MIB);
        })
    });

    let mut upload = UploadScheduler::new(size, &options).unwrap();
    let _ = upload.poll_action();
    upload.handle_created("upload-id").unwrap();
    while let Some(Action::UploadPart { number, .. }) = upload.poll_action() {
        upload.handle_part_done(number, Receipt::new()).unwrap();
    }
    let snapshot = upload.snapshot().unwrap();
    assert_eq!(snapshot.parts().len(), 10_000);
    group.bench_function("snapshot_10000_parts", |b| {
        b.iter(|| {
            let text = black_box(&snapshot).to_text();
            let parsed = UploadSnapshot::<Receipt>::parse(&text).unwrap();
            assert_eq!(parsed.parts().len(), 10_000);
        })
    });

    group.finish();
}

//! Entry points for the fuzz targets and the benches (`fuzzing` feature).
//! Not a stable API.

use crate::{
    Action, DownloadOptions, DownloadScheduler, MultipartOptions, PartLimits, UploadScheduler,
    UploadSnapshot,
};

/// Parses arbitrary bytes as a snapshot with `String` (ETag) receipts;
/// whatever parses must re-serialize to an equal value and survive
/// reconciliation and resumption.
pub fn snapshot_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(snapshot) = UploadSnapshot::<String>::parse(&text) {
        assert_eq!(
            UploadSnapshot::parse(&snapshot.to_text()).as_ref(),
            Ok(&snapshot)
        );
        let _ = snapshot.reconcile(&[], &PartLimits::S3);
        let _ = snapshot.reconcile(snapshot.parts(), &PartLimits::S3);
        let _ = UploadScheduler::resume(&snapshot, &MultipartOptions::default());
    }
}

/// Reads small numbers from the fuzz input, 0 once it is used up.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        let (&first, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        first
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Feeds an arbitrary sequence of `handle_*` calls and polls to an upload
/// scheduler (known size or stream, small limits). Wrong calls must be
/// typed errors, never panics, and the bounds must hold throughout.
pub fn upload_events(data: &[u8]) {
    let mut input = Input(data);
    let Ok(limits) = PartLimits::new(4, 64, 12, 400) else {
        return;
    };
    let Ok(options) = MultipartOptions::builder()
        .limits(limits)
        .part_size(4 + u64::from(input.byte() % 60))
        .concurrency(1 + usize::from(input.byte() % 4))
        .retries_per_part(u32::from(input.byte() % 3))
        .build()
    else {
        return;
    };
    let mut upload: UploadScheduler<String> = if input.byte() % 2 == 0 {
        match UploadScheduler::new(u64::from(input.byte()) * 2, &options) {
            Ok(upload) => upload,
            Err(_) => return,
        }
    } else {
        UploadScheduler::new_stream(&options)
    };
    let mut aborts = 0;
    while !input.is_empty() {
        let number = u32::from(input.byte() % 16);
        let flag = input.byte() % 2 == 0;
        let _ = match input.byte() % 12 {
            0..=2 => {
                if let Some(Action::Abort { .. }) = upload.poll_action() {
                    aborts += 1;
                }
                Ok(())
            }
            3 => upload.handle_created("fuzz"),
            4 => upload.handle_create_failed(),
            5 => upload.handle_part_read(number, u64::from(input.byte())),
            6 => upload.handle_read_failed(number),
            7 => upload.handle_part_done(number, String::from("e")),
            8 => upload.handle_part_failed(number, flag),
            9 => upload.handle_completed(),
            10 => upload.handle_complete_failed(flag),
            _ => {
                upload.handle_cancel();
                upload.handle_aborted()
            }
        };
        assert!(aborts <= 1, "more than one Abort");
        assert!(upload.in_flight() <= options.concurrency());
        assert!(upload.buffered_bytes() <= upload.maximum_buffered_bytes());
        if upload.is_finished() {
            assert_eq!(upload.poll_action(), None);
        }
    }
}

/// Feeds an arbitrary sequence of calls to a download scheduler; checks
/// the concurrency and window bounds and in-order delivery.
pub fn download_events(data: &[u8]) {
    let mut input = Input(data);
    let concurrency = 1 + usize::from(input.byte() % 4);
    let Ok(options) = DownloadOptions::builder()
        .range_size(1 + u64::from(input.byte() % 16))
        .concurrency(concurrency)
        .window(concurrency + usize::from(input.byte() % 3))
        .retries_per_range(u32::from(input.byte() % 3))
        .build()
    else {
        return;
    };
    let mut download = DownloadScheduler::new(u64::from(input.byte()), &options);
    let mut next_delivery = 0;
    while !input.is_empty() {
        let index = usize::from(input.byte() % 32);
        let _ = match input.byte() % 6 {
            0 | 1 => {
                let _ = download.poll_fetch();
                Ok(())
            }
            2 => {
                if let Some(delivery) = download.poll_deliver() {
                    assert_eq!(delivery.index, next_delivery, "out of order");
                    next_delivery += 1;
                }
                Ok(())
            }
            3 => download.handle_fetched(index, ()),
            4 => download.handle_fetch_failed(index, input.byte() % 2 == 0),
            5 if input.byte() % 2 == 0 => download.set_range_size(u64::from(input.byte() % 16)),
            _ => {
                download.handle_cancel();
                Ok(())
            }
        };
        assert!(download.in_flight() <= options.concurrency());
        assert!(download.buffered_ranges() <= options.window());
    }
}

//! One download from start to end: the first request, the choice between one GET and
//! ranges (by range, by part, by listed part), resuming a kept file, verifying, finishing.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use s3_multipart_plan::{DownloadOptions, DownloadScheduler};
use s3_ops::ops::get_object::GetObject;
use s3_ops::ops::head_object::ObjectHead;
use tokio::io::AsyncWriteExt;

use super::file::TempFile;
use super::parts::{Announced, announced, listed_parts, uniform_part_size};
use super::ranged::{Driver, FileMemory, LARGEST_RANGE};
use super::verify::{checksum_ranges, verification};
use super::whole::receive_whole;
use super::{DownloadBuilder, DownloadOutput, Mode, Pinned, Sink};
use crate::error::{Cleanup, Error, ErrorKind, TransferErrorKind, TransferFailure};
use crate::file_writer::FileWriter;
use crate::memory::TooLarge;
use crate::progress::PartProgress;
use crate::transfer::TransferOptions;
use crate::transfer::download_resume::{Identity, WriteBehind};
use crate::transfer::handle::Control;
use crate::transfer::integrity;
use crate::transfer::wake::Waits;
use crate::verification::Verification;

pub(super) async fn run(
    builder: DownloadBuilder,
    control: Arc<Control>,
) -> Result<DownloadOutput, Error> {
    let DownloadBuilder {
        client,
        bucket,
        key,
        destination,
        options,
        version_id,
        sse_customer_key,
        verify,
        resume,
        adapt_range_size,
        listener: _,
    } = builder;
    let fail = |error: Error| error.with_transfer(TransferFailure::new(None, Cleanup::Nothing));
    let budget = client.inner.transfer_memory.clone();
    let limit = options
        .single_request_limit
        .unwrap_or(TransferOptions::DEFAULT_SINGLE_REQUEST_LIMIT);
    let mut sink = destination.0;
    // What the first response needs to be read: a write buffer for a file; a writer takes
    // the bytes as they come.
    let file_memory = FileMemory::new(options.part_size, budget.capacity());
    let first_memory = match sink {
        Sink::File(_) => file_memory.admitted,
        Sink::Writer(_) => 0,
    };
    let first_admission = budget
        .admit(first_memory)
        .await
        .map_err(|e| fail(budget_error(e)))?;
    let mut first = GetObject::new(bucket.clone(), key.clone()).checksum_mode(verify);
    if let Some(version) = &version_id {
        first = first.version_id(version.clone());
    }
    if let Some(key) = &sse_customer_key {
        first = first.sse_customer_key(key.clone());
    }
    if control.is_cancelled() {
        return Err(fail(Error::transfer_error(TransferErrorKind::Cancelled)));
    }
    let response = client.get_object(first).await.map_err(fail)?;
    let head = response.output.head;
    let body = response.body;
    let size = head.content_length;
    if let Some(size) = size {
        control.progress.set_total(size);
    }
    let strong_etag = head.etag.clone().filter(|etag| !etag.is_weak());
    let checksum = announced(&head.checksums);
    let parallel = match (size, &strong_etag) {
        (Some(size), Some(_)) => size > limit,
        _ => false,
    };
    if !parallel {
        // One GET: its body's own checks (length, full-object checksum) cover it.
        let verification = body.verification().clone();
        let progress = PartProgress::new(control.progress.clone());
        let received = receive_whole(
            &mut sink,
            body,
            &progress,
            &control,
            file_memory,
            options.sync_files,
        )
        .await
        .map_err(fail)?;
        // A body without Content-Length: its size is known now, before it is committed.
        control.progress.set_total(received);
        progress.commit(received);
        drop(first_admission);
        return Ok(DownloadOutput {
            size: received,
            etag: head.etag.clone(),
            version_id: head.version_id.clone(),
            head,
            requests: 1,
            verification,
            resumed_bytes: 0,
            restarted: None,
        });
    }
    let size = size.expect("parallel downloads know their size");
    let pinned = Arc::new(Pinned {
        client: client.clone(),
        bucket,
        key,
        etag: strong_etag.expect("parallel downloads have a strong ETag"),
        version_id: version_id.or_else(|| head.version_id.clone()),
        sse_customer_key,
    });
    // A composite checksum is checked part by part, when the parts are uniform. A writer
    // holds each range until its turn, so its ranges fit the budget.
    let mut range_size = match sink {
        Sink::File(_) => options.part_size.max(1),
        Sink::Writer(_) => options.part_size.clamp(1, budget.capacity().max(1)),
    };
    let mut mode = Mode::Ranges;
    let mut listed = None;
    if let Some(Announced::Composite {
        algorithm, parts, ..
    }) = &checksum
        && verify
    {
        // A writer holds a whole range until its turn: a part must fit the budget.
        let (to_file, capacity) = (matches!(sink, Sink::File(_)), budget.capacity());
        let fits = move |part_size: u64| to_file || part_size <= capacity;
        // Every part's checksum in one request where the store lists them; otherwise one
        // HEAD of part 1 for the part size, and the parts by number.
        match listed_parts(&pinned, size, *parts, *algorithm)
            .await
            .map_err(fail)?
        {
            Some((part_size, checksums)) if fits(part_size) => {
                range_size = part_size;
                mode = Mode::Listed {
                    algorithm: *algorithm,
                    part_size,
                };
                listed = Some(Arc::new(checksums));
            }
            Some(_) => {}
            None => match uniform_part_size(&pinned, size, *parts).await {
                Ok(Some(part_size)) if fits(part_size) => {
                    range_size = part_size;
                    mode = Mode::Parts {
                        algorithm: *algorithm,
                        part_size,
                    };
                }
                // A probe is not data: whatever it answers (a 412 from a store that gives a
                // part its own ETag, as moto does; no partNumber support), the download goes
                // on by plain ranges, each pinned to the ETag, and the result says that the
                // parts were not checked one by one (`CompositeNotByParts`). An object that
                // did change fails on its first range.
                Ok(_) | Err(_) => {}
            },
        }
    }
    let concurrency = options.concurrency.max(1);
    let window = match sink {
        // A file takes ranges in any order: the window only keeps a slow range from holding
        // up the plan forever.
        Sink::File(_) => concurrency.saturating_mul(64),
        Sink::Writer(_) => concurrency.saturating_mul(2),
    };
    let download = DownloadOptions::builder()
        .range_size(range_size)
        .concurrency(concurrency)
        .window(window)
        .retries_per_range(1)
        .build()
        .map_err(|e| fail(crate::transfer::plan_error(e)))?;
    // How far ranges may grow: to a file a range holds only its write buffer, so up to
    // LARGEST_RANGE, and never so large that fewer ranges than GETs in flight remain; a
    // writer holds its window of ranges, which must fit the budget.
    let largest_range = match &sink {
        _ if !adapt_range_size => range_size,
        Sink::File(_) => LARGEST_RANGE.min(size.div_ceil(concurrency as u64)),
        Sink::Writer(_) => (budget.capacity() / window as u64)
            .min(LARGEST_RANGE)
            .min(size.div_ceil(concurrency as u64)),
    }
    .max(range_size);
    // The object a resumable part file holds.
    let object = Identity {
        bucket: pinned.bucket.as_str().to_owned(),
        key: pinned.key.as_str().to_owned(),
        etag: pinned.etag.as_str().to_owned(),
        version_id: head.version_id.clone(),
        size,
    };
    let (file, present, restarted) = match &sink {
        Sink::File(path) if resume => {
            let resumed = TempFile::resumable(path, &object).await.map_err(fail)?;
            (Some(resumed.file), resumed.present, resumed.restarted)
        }
        Sink::File(path) => {
            let file = TempFile::create(path, size).await.map_err(fail)?;
            (Some(file), Vec::new(), None)
        }
        Sink::Writer(_) => (None, Vec::new(), None),
    };
    // Parts already on disk are parts only if they are whole parts.
    if let Some((_, part_size)) = mode.by_part()
        && !present
            .iter()
            .all(|r| r.start % part_size == 0 && (r.end % part_size == 0 || r.end == size))
    {
        mode = Mode::Ranges;
    }
    let resumed: u64 = present.iter().map(|r| r.end - r.start).sum();
    // The first response serves the first range (in range mode, when the file lacks it),
    // read only that far; a writer needs the range in memory until its turn (admitted
    // before any of it is read).
    let first_range = if matches!(mode, Mode::Ranges | Mode::Listed { .. })
        && !present.iter().any(|r| r.start == 0)
    {
        let admission = match sink {
            Sink::File(_) => first_admission,
            Sink::Writer(_) => {
                drop(first_admission);
                budget
                    .admit(range_size.min(size))
                    .await
                    .map_err(|e| fail(budget_error(e)))?
            }
        };
        Some((body, admission))
    } else {
        // Not needed: its connection and memory go now.
        drop((body, first_admission));
        None
    };
    // The range algorithm's checksums of the bytes already on disk (read back: the final
    // verification covers them too), part by part in part mode.
    let range_algorithm = match (&checksum, mode) {
        (_, Mode::Parts { algorithm, .. } | Mode::Listed { algorithm, .. }) => Some(algorithm),
        (Some(Announced::Full(full)), _) if integrity::combinable(full.algorithm()) => {
            Some(full.algorithm())
        }
        _ => None,
    };
    let range_checksums = match (&file, range_algorithm) {
        (Some(file), Some(algorithm)) if !present.is_empty() => {
            let pieces = split_at_parts(&present, mode);
            checksum_ranges(&file.file, pieces, algorithm)
                .await
                .map_err(fail)?
        }
        _ => BTreeMap::new(),
    };
    // A resumable file is synced as it is written for its journal; any other when files
    // are synced at all.
    let write_behind = file
        .as_ref()
        .filter(|file| file.journal.is_some() || options.sync_files)
        .map(|file| {
            WriteBehind::start(
                file.file.clone(),
                file.journal.clone(),
                present.clone(),
                object.clone(),
            )
        });
    // Bytes already on disk count as committed from the start, unless they are all of
    // them: the last bytes are committed with the verdict.
    let last = if resumed < size {
        control.progress.commit_existing(resumed);
        None
    } else {
        Some((PartProgress::new(control.progress.clone()), size))
    };
    let scheduler = DownloadScheduler::resume(size, &download, present)
        .map_err(|e| fail(crate::transfer::plan_error(e)))?;
    let (writer, writer_end) = file
        .as_ref()
        .map(|f| FileWriter::start_with_end(f.file.clone()))
        .unzip();
    let mut driver = Driver {
        pinned,
        control: control.clone(),
        scheduler,
        mode,
        file: writer,
        writer_end,
        file_memory,
        // Ranges are checksummed when their values combine (CRCs) or are the parts'.
        range_algorithm,
        listed,
        // A hash of the whole object needs the bytes in order: a writer gets them so.
        in_order: match (&checksum, &sink) {
            (Some(Announced::Full(full)), Sink::Writer(_))
                if verify && !integrity::combinable(full.algorithm()) =>
            {
                Some(s3_ops::Checksummer::new(full.algorithm()))
            }
            _ => None,
        },
        first: first_range,
        waits: Waits::new(&control),
        waiting: VecDeque::new(),
        range_checksums,
        requests: 0,
        failure: None,
        cancelled: control.watch(),
        unwritten: size - resumed,
        last,
        write_behind,
        largest_range,
    };
    let result = driver.run(&mut sink).await;
    driver.stop_writing().await;
    let last = driver.last.take();
    // The journal holds every range written before the verdict (a failure keeps it).
    if let Some(write_behind) = driver.write_behind.take() {
        let _ = write_behind.close().await;
    }
    let requests = driver.requests;
    let range_checksums = std::mem::take(&mut driver.range_checksums);
    let in_order = driver.in_order.take().map(s3_ops::Checksummer::finish);
    let checked_mode = driver.mode;
    drop(driver);
    let finished = match result {
        Ok(()) => {
            verification(
                checksum.as_ref(),
                verify,
                checked_mode,
                &range_checksums,
                in_order,
                file.as_ref(),
                size,
            )
            .await
        }
        Err(error) => Err(error),
    };
    let mut cleanup = Cleanup::Nothing;
    let finished = match (finished, file) {
        (Ok(verification), Some(file)) => {
            file.commit(options.sync_files).await.map(|()| verification)
        }
        (Ok(verification), None) => match &mut sink {
            Sink::Writer(writer) => writer
                .flush()
                .await
                .map_err(Error::io)
                .map(|()| verification),
            Sink::File(_) => Ok(verification),
        },
        // What a rerun can get past keeps the part file and its journal for it.
        (
            Err(error),
            Some(TempFile {
                journal: Some(journal),
                ..
            }),
        ) if worth_resuming(&error) => {
            cleanup = Cleanup::KeptForResume(journal);
            Err(error)
        }
        (Err(error), Some(file)) => {
            file.discard().await;
            Err(error)
        }
        (Err(error), None) => Err(error),
    };
    // The last range's bytes are committed with the verdict, so that a download that fails
    // its final checks never shows all its bytes committed.
    match finished {
        Ok(verification) => {
            if let Some((progress, len)) = last {
                progress.commit(len);
            }
            let mut output = output(head, size, requests, verification);
            output.resumed_bytes = resumed;
            output.restarted = restarted;
            Ok(output)
        }
        Err(error) => {
            if let Some((progress, _)) = last {
                progress.abandon();
            }
            Err(error.with_transfer(TransferFailure::new(None, cleanup)))
        }
    }
}

/// Whether a failed download's part file is worth keeping for a rerun: not when it was
/// cancelled, when the object changed, or when the bytes failed their checks.
fn worth_resuming(error: &Error) -> bool {
    !matches!(
        error.kind(),
        ErrorKind::Transfer(
            TransferErrorKind::Cancelled
                | TransferErrorKind::ObjectChanged
                | TransferErrorKind::Inconsistent(_)
        ) | ErrorKind::Operation(s3_ops::Error::ChecksumMismatch { .. })
    )
}

fn output(
    head: ObjectHead,
    size: u64,
    requests: u32,
    verification: Verification,
) -> DownloadOutput {
    DownloadOutput {
        size,
        etag: head.etag.clone(),
        version_id: head.version_id.clone(),
        head,
        requests,
        verification,
        resumed_bytes: 0,
        restarted: None,
    }
}

/// `present` as the pieces the range checksums are kept in: by part in part mode (the
/// ranges there are whole parts), as they are otherwise.
fn split_at_parts(present: &[std::ops::Range<u64>], mode: Mode) -> Vec<std::ops::Range<u64>> {
    match mode.by_part() {
        Some((_, part_size)) => present
            .iter()
            .flat_map(|range| {
                (range.start..range.end)
                    .step_by(part_size as usize)
                    .map(move |start| start..(start + part_size).min(range.end))
            })
            .collect(),
        None => present.to_vec(),
    }
}

/// A 412 on a pinned request: the object is not the one the first response described.
pub(super) fn changed(error: Error) -> Error {
    if error.is_precondition_failed() {
        Error::caused_by(ErrorKind::Transfer(TransferErrorKind::ObjectChanged), error)
    } else {
        error
    }
}

pub(super) fn budget_error(too_large: TooLarge) -> Error {
    Error::transfer_error(TransferErrorKind::MemoryBudget {
        needed: too_large.needed,
        capacity: too_large.capacity,
    })
}

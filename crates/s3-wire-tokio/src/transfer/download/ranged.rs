//! Ranged GETs in parallel, driven by the planner's `DownloadScheduler`: what a range
//! holds in memory, the driver loop, one range's request and its sink.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use s3_multipart_plan::{DownloadOutcome, DownloadScheduler, RangeFetch};
use s3_ops::{ByteRange, Checksum, ChecksumAlgorithm};
use tokio::io::AsyncWriteExt;

use super::run::{budget_error, changed};
use super::verify::mismatch;
use super::{Mode, Pinned, Sink};
use crate::error::{Error, ErrorKind, TransferErrorKind};
use crate::file_writer::{FileWriter, PositionedWriter, WriterEnd};
use crate::memory::Admission;
use crate::object_body::ObjectBody;
use crate::progress::PartProgress;
use crate::transfer::download_resume::WriteBehind;
use crate::transfer::handle::Control;
use crate::transfer::wake::{Waits, Wake};

/// The time to first byte below which a request is cheap whatever its body: ranges grow
/// only where answers take longer to begin (moto: hundreds of milliseconds).
const MIN_REQUEST_COST: Duration = Duration::from_millis(20);

/// The largest a range grows to where requests cost more than their bytes (a 1 GiB download
/// from moto took 134 s in 8 MiB ranges and 7.7 s in 128 MiB ones).
pub(super) const LARGEST_RANGE: u64 = 128 << 20;

/// The most a range in flight to a file holds: one batch of positioned writes in flight and
/// the next one being gathered ([`PositionedWriter`]; less with small parts or a small
/// budget).
const FILE_RANGE_MEMORY: u64 = 2 << 20;

/// What one range to a file is admitted for, and the bytes it gathers before a write.
#[derive(Clone, Copy, Debug)]
pub(super) struct FileMemory {
    pub(super) admitted: u64,
    pub(super) write_buffer: usize,
}

impl FileMemory {
    pub(super) fn new(part_size: u64, budget: u64) -> Self {
        let admitted = FILE_RANGE_MEMORY.min(part_size).min(budget).max(1);
        Self {
            admitted,
            write_buffer: ((admitted / 2) as usize).max(4096),
        }
    }
}

/// A writer's range held until its turn: its bytes, their memory, and its progress (the
/// range is committed once written).
pub(super) struct Held {
    data: Bytes,
    /// Given back when the range is dropped.
    _admission: Admission,
    progress: Arc<PartProgress>,
}

impl Drop for Held {
    fn drop(&mut self) {
        // A range dropped before its turn (the download failed) is no longer in flight;
        // after its commit this takes back nothing.
        self.progress.abandon();
    }
}

/// How long a range's request took to answer, and its body to arrive.
#[derive(Debug, Clone, Copy)]
struct RangeTiming {
    first_byte: Duration,
    body: Duration,
}

/// A range that arrived.
pub(super) struct Fetched {
    index: usize,
    /// The object's bytes it holds.
    range: std::ops::Range<u64>,
    /// The bytes, for a writer (delivered in order); `None` once written to the file.
    data: Option<(Bytes, Admission)>,
    /// The range's checksum with the object's algorithm (parts: checked against the
    /// store's value for the part).
    checksum: Option<Checksum>,
    progress: Arc<PartProgress>,
    len: u64,
    /// `None` for the range the first answer served.
    timing: Option<RangeTiming>,
}

/// A range that failed, with its progress to take back.
pub(super) struct Failed {
    index: usize,
    error: Error,
    progress: Arc<PartProgress>,
}

pub(super) struct Driver {
    pub(super) pinned: Arc<Pinned>,
    pub(super) control: Arc<Control>,
    /// Holds a writer's ranges until their turn (a file's are written on arrival).
    pub(super) scheduler: DownloadScheduler<Option<Held>>,
    pub(super) mode: Mode,
    /// The writer of the temporary file, for a download to a file.
    pub(super) file: Option<FileWriter>,
    /// That writer's end ([`Driver::stop_writing`]).
    pub(super) writer_end: Option<WriterEnd>,
    pub(super) file_memory: FileMemory,
    /// The algorithm each range is checksummed with, if any.
    pub(super) range_algorithm: Option<ChecksumAlgorithm>,
    /// [`Mode::Listed`]: each part's checksum, part 1 first.
    pub(super) listed: Option<Arc<Vec<Checksum>>>,
    /// The object's hash over the bytes delivered in order (a writer, a hash checksum).
    pub(super) in_order: Option<s3_ops::Checksummer>,
    /// The first response, serving range 0.
    pub(super) first: Option<(ObjectBody, Admission)>,
    /// The cancellation, the range waiting for memory, the ranges in flight.
    pub(super) waits: Waits<RangeFetch, Result<Fetched, Failed>>,
    pub(super) waiting: VecDeque<RangeFetch>,
    /// Per range, by its first byte: its checksum and length.
    pub(super) range_checksums: BTreeMap<u64, (Checksum, u64)>,
    pub(super) requests: u32,
    pub(super) failure: Option<Error>,
    /// The cancellation, for a write to the writer.
    pub(super) cancelled: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// Bytes still to be written to the file or the writer.
    pub(super) unwritten: u64,
    /// The last range written, not committed until the whole object checked out: `committed`
    /// reaches the total only when the download succeeds.
    pub(super) last: Option<(Arc<PartProgress>, u64)>,
    /// The file's background sync (and resume journal), when it has one.
    pub(super) write_behind: Option<WriteBehind>,
    /// The largest a range may grow to ([`Driver::adapt_range_size`]); the range size
    /// itself when ranges do not adapt.
    pub(super) largest_range: u64,
}

impl Driver {
    /// Grows the ranges still to be cut when the requests cost more than their bytes: a
    /// range of the current size whose answer took longer to start than its body took to
    /// arrive (a store that does much per request, moto for one) makes the next ones larger,
    /// by the ratio (2 to 16 times) up to [`Driver::largest_range`]. Only plain ranges adapt
    /// (parts are the object's).
    fn adapt_range_size(&mut self, len: u64, timing: Option<RangeTiming>) {
        let Some(RangeTiming { first_byte, body }) = timing else {
            return;
        };
        let current = self.scheduler.range_size();
        if self.mode != Mode::Ranges || len < current || current >= self.largest_range {
            return;
        }
        // A request that answers within MIN_REQUEST_COST costs too little to matter
        // (loopback, a LAN store), whatever its ratio to a small body.
        if first_byte <= body || first_byte < MIN_REQUEST_COST {
            return;
        }
        let ratio = first_byte.as_secs_f64() / body.as_secs_f64().max(1e-6);
        let factor = (ratio.ceil() as u64).next_power_of_two().clamp(2, 16);
        let grown = current.saturating_mul(factor).min(self.largest_range);
        let _ = self.scheduler.set_range_size(grown);
    }

    /// A range of `len` bytes reached the destination: committed, unless it is the last one,
    /// which waits for the object's verification ([`Driver::last`]).
    fn written_range(&mut self, progress: &Arc<PartProgress>, range: std::ops::Range<u64>) {
        let len = range.end - range.start;
        if let Some(write_behind) = &self.write_behind {
            write_behind.record(range);
        }
        self.unwritten = self.unwritten.saturating_sub(len);
        if self.unwritten == 0 {
            self.last = Some((progress.clone(), len));
        } else {
            progress.commit(len);
        }
    }

    /// Ends the ranges still in flight (a failed download leaves some) and waits until the
    /// file's writer has let go of the file: once the download returns, nothing of it
    /// writes there any more, and the part file's lock, which goes with the last handle to
    /// the file, is free for a rerun in the same process to continue it.
    pub(super) async fn stop_writing(&mut self) {
        self.waits.tasks.shutdown().await;
        self.file = None;
        if let Some(end) = self.writer_end.take() {
            end.wait().await;
        }
    }

    fn fail(&mut self, error: Error) {
        if self.failure.is_none() {
            self.failure = Some(error);
        }
    }

    fn memory_needed(&self, fetch: &RangeFetch) -> u64 {
        match self.file {
            Some(_) => self
                .file_memory
                .admitted
                .min(fetch.range.end - fetch.range.start),
            None => fetch.range.end - fetch.range.start,
        }
    }

    pub(super) async fn run(&mut self, sink: &mut Sink) -> Result<(), Error> {
        loop {
            while let Some(fetch) = self.scheduler.poll_fetch() {
                self.waiting.push_back(fetch);
            }
            // Deliveries in order: to the writer (a file was written as ranges came).
            while let Some(delivery) = self.scheduler.poll_deliver() {
                if let (Sink::Writer(writer), Some(held)) = (&mut *sink, delivery.data) {
                    let data = &held.data;
                    if let Some(hash) = &mut self.in_order {
                        hash.update(data);
                    }
                    let written = {
                        let mut write = std::pin::pin!(writer.write_all(data));
                        let cancelled = &mut self.cancelled;
                        std::future::poll_fn(|cx| {
                            if cancelled.as_mut().poll(cx).is_ready() {
                                return Poll::Ready(Err(Error::transfer_error(
                                    TransferErrorKind::Cancelled,
                                )));
                            }
                            write.as_mut().poll(cx).map_err(Error::io)
                        })
                        .await
                    };
                    match written {
                        Ok(()) => self.written_range(&held.progress, delivery.range.clone()),
                        Err(error) => {
                            self.fail(error);
                            self.scheduler.handle_cancel();
                        }
                    }
                    // Its memory and progress go with it.
                    drop(held);
                }
            }
            match self.scheduler.outcome() {
                Some(DownloadOutcome::Completed) => return Ok(()),
                Some(_) => {
                    return Err(self
                        .failure
                        .take()
                        .unwrap_or_else(|| Error::transfer_error(TransferErrorKind::Cancelled)));
                }
                None => {}
            }
            self.start_waiting();
            match std::future::poll_fn(|cx| self.waits.poll(cx)).await {
                Wake::Cancelled => {
                    self.fail(Error::transfer_error(TransferErrorKind::Cancelled));
                    self.scheduler.handle_cancel();
                }
                Wake::Admitted(fetch, Ok(admission)) => self.start(fetch, admission),
                Wake::Admitted(fetch, Err(too_large)) => {
                    self.fail(budget_error(too_large));
                    let _ = self.scheduler.handle_fetch_failed(fetch.index, false);
                }
                Wake::Finished(result) => self.handle(result),
            }
        }
    }

    /// Starts range 0 from the first response, and asks the budget for the memory of the
    /// next waiting range (one at a time, in order).
    fn start_waiting(&mut self) {
        while self.waits.admitting().is_none()
            && let Some(fetch) = self.waiting.pop_front()
        {
            // Range 0 comes from the first response, already admitted.
            if fetch.range.start == 0 && fetch.attempt == 1 && self.first.is_some() {
                let (body, admission) = self.first.take().expect("checked");
                self.spawn(fetch, admission, Some(body));
                continue;
            }
            let needed = self.memory_needed(&fetch);
            self.waits
                .admit(fetch, &self.pinned.client.inner.transfer_memory, needed);
        }
    }

    fn start(&mut self, fetch: RangeFetch, admission: Admission) {
        self.spawn(fetch, admission, None);
    }

    fn spawn(&mut self, fetch: RangeFetch, admission: Admission, body: Option<ObjectBody>) {
        if body.is_none() {
            self.requests += 1;
        } else {
            self.requests = self.requests.max(1);
        }
        let pinned = self.pinned.clone();
        let mode = self.mode;
        let file = self
            .file
            .clone()
            .map(|file| (file, self.file_memory.write_buffer));
        let algorithm = self.range_algorithm;
        let progress = PartProgress::new(self.control.progress.clone());
        let part = mode.part_number(fetch.range.start);
        let expected = match (&self.listed, part) {
            (Some(listed), Some(part)) => listed.get(part as usize - 1).cloned(),
            _ => None,
        };
        let queued = admission.queued();
        self.waits.tasks.spawn(async move {
            let (index, range) = (fetch.index, fetch.range.clone());
            let mut requests = 0;
            let fetched = crate::hooks::queued_for(
                queued,
                fetch_range(
                    &pinned,
                    fetch,
                    mode,
                    file,
                    (algorithm, expected),
                    admission,
                    body,
                    progress.clone(),
                    &mut requests,
                ),
            )
            .await;
            // An error found in the answer (a short or inconsistent one) rather than by the
            // request carries the attempts of the GET it came from.
            fetched.map_err(|error| {
                let error = match error.attempts() {
                    0 => error.with_attempts(requests),
                    _ => error,
                };
                Failed {
                    index,
                    error: error.in_part(part, range),
                    progress,
                }
            })
        });
    }

    fn handle(&mut self, result: Result<Fetched, Failed>) {
        let handled = match result {
            Ok(fetched) => {
                self.adapt_range_size(fetched.len, fetched.timing);
                if let Some(checksum) = fetched.checksum {
                    self.range_checksums
                        .insert(fetched.range.start, (checksum, fetched.len));
                }
                let held = match fetched.data {
                    Some((data, admission)) => Some(Held {
                        data,
                        _admission: admission,
                        progress: fetched.progress,
                    }),
                    // Written to the file: committed now.
                    None => {
                        self.written_range(&fetched.progress, fetched.range.clone());
                        None
                    }
                };
                self.scheduler.handle_fetched(fetched.index, held)
            }
            Err(Failed {
                index,
                error,
                progress,
            }) => {
                progress.abandon();
                let refused_part_number = matches!(self.mode, Mode::Parts { .. })
                    && matches!(
                        error.kind(),
                        ErrorKind::Transfer(
                            TransferErrorKind::Inconsistent(_) | TransferErrorKind::ObjectChanged
                        )
                    );
                if refused_part_number {
                    // The store does not honour partNumber (the whole object, or a 412 from a
                    // part's own ETag): fetch the same bytes by range (the boundaries are the
                    // same), pinned as before, so that only a changed object fails there; the
                    // parts can no longer be checked.
                    self.mode = Mode::Ranges;
                    self.range_algorithm = None;
                    self.scheduler.handle_fetch_failed(index, true)
                } else {
                    let retryable = error.retry_class().is_retryable();
                    self.fail(error);
                    self.scheduler.handle_fetch_failed(index, retryable)
                }
            }
        };
        handled.expect("the driver reports exactly the fetches it was given");
    }
}

/// Where a range's bytes go as they arrive.
enum RangeSink {
    File(PositionedWriter),
    Memory(BytesMut),
}

/// Fetches one range (or part) and writes it to the file or keeps it for the writer;
/// `requests` is set to the GET's attempts once it answered.
#[allow(clippy::too_many_arguments)]
async fn fetch_range(
    pinned: &Pinned,
    fetch: RangeFetch,
    mode: Mode,
    file: Option<(FileWriter, usize)>,
    (algorithm, expected): (Option<ChecksumAlgorithm>, Option<Checksum>),
    admission: Admission,
    first: Option<ObjectBody>,
    progress: Arc<PartProgress>,
    requests: &mut u32,
) -> Result<Fetched, Error> {
    let range = fetch.range.clone();
    let len = range.end - range.start;
    let inconsistent = |what: String| Error::transfer_error(TransferErrorKind::Inconsistent(what));
    let asked = tokio::time::Instant::now();
    // When its answer's head arrived (a range of the first answer has no request of its own).
    let mut answered = None;
    let (mut body, part_checksum) = match first {
        Some(body) => {
            *requests = body.requests();
            (body, expected.clone())
        }
        None => {
            let request = match mode {
                Mode::Ranges | Mode::Listed { .. } => pinned
                    .request(false)
                    .range(ByteRange::new(range.start, range.end - 1).map_err(Error::from)?),
                Mode::Parts { .. } => pinned
                    .request(true)
                    .part_number(mode.part_number(range.start).unwrap_or(0)),
            };
            let response = pinned.client.get_object(request).await.map_err(changed)?;
            answered = Some(tokio::time::Instant::now());
            *requests = response.body.requests();
            let head = &response.output.head;
            let answered = head
                .content_range
                .map(|r| r.first..r.last.saturating_add(1));
            if answered != Some(range.clone()) || head.content_length != Some(len) {
                return Err(inconsistent(format!(
                    "asked for bytes {}..{} ({}), the store answered {:?} with {:?} bytes",
                    range.start,
                    range.end,
                    match mode {
                        Mode::Ranges | Mode::Listed { .. } => "by range".to_owned(),
                        Mode::Parts { .. } => {
                            format!("as part {}", mode.part_number(range.start).unwrap_or(0))
                        }
                    },
                    head.content_range,
                    head.content_length
                )));
            }
            let part_checksum = match mode {
                Mode::Parts { algorithm, .. } => Some(
                    head.checksums
                        .get(algorithm)
                        .map(|value| Checksum::from_base64(algorithm, value))
                        .transpose()
                        .map_err(Error::from)?
                        .ok_or_else(|| {
                            inconsistent(format!(
                                "part {} came without its {algorithm} checksum",
                                mode.part_number(range.start).unwrap_or(0)
                            ))
                        })?,
                ),
                Mode::Ranges => None,
                Mode::Listed { .. } => expected.clone(),
            };
            (response.body, part_checksum)
        }
    };
    let mut checksummer = algorithm.map(s3_ops::Checksummer::new);
    let mut received = 0u64;
    // To a file: written by position as the chunks come; to a writer: held whole until its
    // turn.
    let mut sink = match file {
        Some((file, write_buffer)) => {
            RangeSink::File(PositionedWriter::new(file, range.start, write_buffer))
        }
        None => RangeSink::Memory(BytesMut::with_capacity(len as usize)),
    };
    while received < len {
        let Some(chunk) = body.next_chunk().await.transpose()? else {
            break;
        };
        // The first response runs to the end of the object: take only the range.
        let chunk = chunk.slice(..chunk.len().min((len - received) as usize));
        received += chunk.len() as u64;
        progress.moved(chunk.len() as u64);
        if let Some(checksummer) = &mut checksummer {
            checksummer.update(&chunk);
        }
        match &mut sink {
            RangeSink::File(writer) => writer.push(chunk).await?,
            RangeSink::Memory(gathered) => gathered.extend_from_slice(&chunk),
        }
    }
    if received != len {
        return Err(Error::new(ErrorKind::BodyLength {
            expected: len,
            received,
        }));
    }
    let checksum = checksummer.map(s3_ops::Checksummer::finish);
    if let (Some(expected), Some(computed)) = (&part_checksum, &checksum)
        && expected != computed
    {
        return Err(mismatch(
            expected.algorithm(),
            &expected.to_base64(),
            &computed.to_base64(),
        ));
    }
    let data = match sink {
        RangeSink::File(writer) => {
            writer.finish().await?;
            drop(admission);
            None
        }
        RangeSink::Memory(gathered) => Some((gathered.freeze(), admission)),
    };
    Ok(Fetched {
        index: fetch.index,
        range,
        data,
        checksum,
        progress,
        len,
        timing: answered.map(|head| RangeTiming {
            first_byte: head - asked,
            body: head.elapsed(),
        }),
    })
}

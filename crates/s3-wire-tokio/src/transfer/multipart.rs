//! The multipart driver shared by uploads and copies: the loop over the planner's
//! [`UploadScheduler`] that performs each action it polls — CreateMultipartUpload,
//! reading a stream part, UploadPart (or UploadPartCopy), CompleteMultipartUpload,
//! AbortMultipartUpload — within the client's memory budget, and reports each result back.
//! The planner decides; this only performs.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::ops::Range;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use s3_multipart_plan::{
    Action, CompletedParts, FailureReason, Outcome, UploadScheduler, UploadSnapshot,
};
use s3_ops::ops::abort_multipart_upload::AbortMultipartUpload;
use s3_ops::ops::complete_multipart_upload::CompleteMultipartUpload;
use s3_ops::ops::copy_source::CopySource;
use s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
use s3_ops::ops::list_multipart_uploads::ListMultipartUploads;
use s3_ops::ops::upload_part::UploadPart;
use s3_ops::ops::upload_part_copy::UploadPartCopy;
use s3_ops::{
    BucketName, ByteRange, Checksum, ChecksumAlgorithm, ChecksumType, ObjectAttributes, ObjectKey,
    SseCustomerKey,
};
use s3_xml::ETag;

use crate::body::{Body, FileRange, Pieces, ReadBuffers};
use crate::client::Client;
use crate::error::{Cleanup, Error, TransferErrorKind, TransferFailure};
use crate::memory::Admission;
use crate::progress::{PartProgress, ProgressState};
use crate::sign::{digest_bytes, read_whole_digested};
use crate::transfer::handle::Control;
use crate::transfer::integrity::{self, Expected};
use crate::transfer::journal::{self, Fingerprint, Header};
use crate::transfer::source::SequentialRead;
use crate::transfer::upload::{
    PossibleOrphan, UploadOutput, budget_error, check_unchanged, length_error, read_error,
    verify_echo,
};
use crate::transfer::wake::{Waits, Wake};
use crate::verification::{NotVerified, Verification};

/// Memory a part read from a file as it is sent holds: the body reads 1 MiB at a time by
/// position and frames it in 256 KiB chunks. (A part that is hashed ahead is read whole
/// into memory instead, when the budget has it free at once.)
const FILE_PART_MEMORY: u64 = 2 << 20;
/// How long a cancelled or failed upload lets its requests in flight settle before it
/// aborts (a part that lands after the abort would stay stored).
const SETTLE: Duration = Duration::from_secs(10);
/// The most an abort may take, retries included.
const ABORT_LIMIT: Duration = Duration::from_secs(30);

/// What the driver records for a part the store accepted: its ETag and, when the upload
/// uses one, the checksum computed here (which the store confirmed or did not contradict).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Receipt {
    pub(crate) etag: ETag,
    pub(crate) checksum: Option<Checksum>,
}

impl s3_multipart_plan::PartReceipt for Receipt {
    fn to_snapshot_text(&self) -> String {
        match &self.checksum {
            Some(checksum) => format!(
                "{} {}={}",
                self.etag.as_str(),
                checksum.algorithm(),
                checksum.to_base64()
            ),
            None => self.etag.as_str().to_owned(),
        }
    }

    fn from_snapshot_text(text: &str) -> Result<Self, String> {
        let (etag, checksum) = match text.split_once(' ') {
            Some((etag, checksum)) => (etag, Some(checksum)),
            None => (text, None),
        };
        let etag = ETag::parse(etag).map_err(|e| format!("{etag:?}: {e}"))?;
        let checksum = match checksum {
            None => None,
            Some(field) => {
                let (name, value) = field
                    .split_once('=')
                    .ok_or_else(|| format!("expected ALGORITHM=value, found {field:?}"))?;
                let algorithm: ChecksumAlgorithm = name.parse().map_err(|e| format!("{e}"))?;
                Some(Checksum::from_base64(algorithm, value).map_err(|e| format!("{e}"))?)
            }
        };
        Ok(Self { etag, checksum })
    }

    /// The same ETag (quotes aside), and the same checksum when the store lists one.
    fn same_part(&self, listed: &Self) -> bool {
        self.etag.unquoted() == listed.etag.unquoted()
            && listed
                .checksum
                .as_ref()
                .is_none_or(|theirs| self.checksum.as_ref() == Some(theirs))
    }
}

/// What every request of one upload (or copy) shares.
pub(crate) struct Target {
    pub(crate) client: Client,
    pub(crate) bucket: BucketName,
    pub(crate) key: ObjectKey,
    pub(crate) attributes: ObjectAttributes,
    pub(crate) create_only: bool,
    pub(crate) algorithm: Option<ChecksumAlgorithm>,
    /// The checksum of the object when it goes in one request (PutObject, CopyObject): the
    /// store may accept algorithms there that it does not for multipart uploads.
    pub(crate) single_request_algorithm: Option<ChecksumAlgorithm>,
    pub(crate) progress: Arc<ProgressState>,
}

impl Target {
    pub(crate) fn sse_customer_key(&self) -> Option<&SseCustomerKey> {
        self.attributes.sse_customer_key()
    }

    pub(crate) fn failed(
        &self,
        error: Error,
        upload_id: Option<String>,
        cleanup: Cleanup,
    ) -> Error {
        error.with_transfer(TransferFailure::new(upload_id, cleanup))
    }
}

/// Where the bytes of the parts come from.
pub(crate) enum Parts {
    /// Read by position from the open file.
    File {
        file: Arc<std::fs::File>,
        path: PathBuf,
        fingerprint: Fingerprint,
        /// The parts' read buffers, reused from part to part.
        buffers: Arc<ReadBuffers>,
    },
    /// Slices of the caller's bytes.
    Bytes(Pieces),
    /// Buffers read in order from a stream (`ReadPart`), admitted against the budget.
    Buffered { announced: Option<u64> },
    /// Ranges of an existing object, copied by the store (UploadPartCopy).
    Copy(CopySource),
}

/// The journal of an upload and its writes: one at a time, each with the latest snapshot,
/// so parts that complete during a write are recorded together by the next.
pub(crate) struct JournalWriter {
    path: PathBuf,
    header: Header,
    writing: Option<tokio::task::JoinHandle<Result<(), Error>>>,
    dirty: bool,
}

impl JournalWriter {
    pub(crate) fn new(path: PathBuf, header: Header) -> Self {
        Self {
            path,
            header,
            writing: None,
            dirty: false,
        }
    }

    /// Records the scheduler's state now, or as soon as the write in progress is done.
    fn update(&mut self, scheduler: &UploadScheduler<Receipt>) {
        if self.writing.is_some() {
            self.dirty = true;
            return;
        }
        self.dirty = false;
        if let Some(snapshot) = scheduler.snapshot() {
            let text = self.header.text(&snapshot);
            self.writing = Some(tokio::spawn(journal::write(self.path.clone(), text)));
        }
    }

    /// Waits for the write in progress, then writes `snapshot`: the journal's last version.
    async fn finish(&mut self, snapshot: &UploadSnapshot<Receipt>) -> Result<(), Error> {
        if let Some(writing) = self.writing.take() {
            let _ = writing.await;
        }
        journal::write(self.path.clone(), self.header.text(snapshot)).await
    }

    /// Waits for the write in progress, then removes the journal.
    async fn remove(&mut self) -> Result<(), Error> {
        if let Some(writing) = self.writing.take() {
            let _ = writing.await;
        }
        journal::remove(&self.path).await
    }
}

/// What the upload driver wakes up for.
enum Woke {
    Driver(Wake<Action<Receipt>, Event>),
    Journaled(Result<(), Error>),
    Settled,
}

/// A result for the driver loop.
enum Event {
    Created(Result<(String, Option<PossibleOrphan>), Error>),
    Read {
        number: u32,
        reader: Box<dyn SequentialRead>,
        result: std::io::Result<Bytes>,
        admission: Admission,
    },
    Part {
        number: u32,
        result: Result<Receipt, Error>,
    },
    Completed(Result<Completion, Error>),
    Aborted(Result<(), Error>),
}

/// The object a CompleteMultipartUpload stored.
struct Completion {
    etag: Option<ETag>,
    version_id: Option<String>,
    /// The full-object checksum the store reported, if any.
    echoed: Option<String>,
}

/// One multipart upload: the scheduler, the requests in flight and what they hold.
pub(crate) struct Driver {
    target: Arc<Target>,
    scheduler: UploadScheduler<Receipt>,
    parts: Parts,
    /// The stream, while no read is outstanding.
    reader: Option<Box<dyn SequentialRead>>,
    /// The memory of the stream's bytes read ahead (to choose between one request and a
    /// multipart upload) that no part took yet.
    read_ahead: Option<Admission>,
    /// Stream part buffers, read and not yet acknowledged.
    buffers: HashMap<u32, (Bytes, Admission)>,
    progress: HashMap<u32, Arc<PartProgress>>,
    /// The cancellation, the action waiting for memory, the requests in flight.
    waits: Waits<Action<Receipt>, Event>,
    /// Actions polled and not yet started.
    waiting: VecDeque<Action<Receipt>>,
    /// Runs while an abort waits for the requests in flight to settle.
    settle: Option<Pin<Box<tokio::time::Sleep>>>,
    settle_started: bool,
    journal: Option<JournalWriter>,
    failure: Option<Error>,
    abort_error: Option<String>,
    /// The journal's last snapshot, once the upload is kept for resumption.
    kept_for_resume: Option<UploadSnapshot<Receipt>>,
    /// Set when starting an action reported a result to the scheduler.
    reported: bool,
    completion: Option<Completion>,
    full_checksum: Option<Checksum>,
    /// The composite value (`base64-N`) of an upload with a hash algorithm.
    composite: Option<String>,
    pub(crate) resumed_parts: u32,
    /// An upload a lost CreateMultipartUpload answer may have left, not found to abort.
    possible_orphan: Option<PossibleOrphan>,
}

impl Driver {
    pub(crate) fn new(
        target: Arc<Target>,
        control: Arc<Control>,
        scheduler: UploadScheduler<Receipt>,
        parts: Parts,
        reader: Option<Box<dyn SequentialRead>>,
    ) -> Self {
        Self {
            target,
            scheduler,
            parts,
            reader,
            read_ahead: None,
            buffers: HashMap::new(),
            progress: HashMap::new(),
            waits: Waits::new(&control),
            waiting: VecDeque::new(),
            settle: None,
            settle_started: false,
            journal: None,
            failure: None,
            abort_error: None,
            kept_for_resume: None,
            reported: false,
            completion: None,
            full_checksum: None,
            composite: None,
            resumed_parts: 0,
            possible_orphan: None,
        }
    }

    /// The stream's first `admission.bytes()` bytes were read ahead into memory admitted so.
    pub(crate) fn with_read_ahead(mut self, admission: Admission) -> Self {
        self.read_ahead = Some(admission);
        self
    }

    pub(crate) fn with_journal(mut self, journal: JournalWriter) -> Self {
        self.journal = Some(journal);
        self
    }

    /// The first failure is the one reported.
    fn fail(&mut self, error: Error) {
        if self.failure.is_none() {
            self.failure = Some(error);
        }
    }

    /// The driver loop: poll every action (the drain rule), start what memory allows, and
    /// report each result, until the scheduler has an outcome.
    pub(crate) async fn run(mut self) -> Result<UploadOutput, Error> {
        loop {
            while let Some(action) = self.scheduler.poll_action() {
                self.waiting.push_back(action);
            }
            if self.scheduler.is_finished() {
                break;
            }
            if self.failure.is_some() {
                // The upload is abandoned: parts not yet started never will be.
                let is_part = |a: &Action<Receipt>| {
                    matches!(a, Action::ReadPart { .. } | Action::UploadPart { .. })
                };
                self.waiting.retain(|a| !is_part(a));
                if self.waits.admitting().is_some_and(is_part) {
                    self.waits.forget_admitting();
                }
            }
            self.start_waiting();
            if std::mem::take(&mut self.reported) {
                // Starting an action reported a result (a Complete refused before it was
                // sent, an upload kept for resumption): poll the scheduler again.
                continue;
            }
            match self.next_wake().await {
                Woke::Driver(Wake::Cancelled) => {
                    self.fail(Error::transfer_error(TransferErrorKind::Cancelled));
                    self.scheduler.handle_cancel();
                }
                Woke::Driver(Wake::Admitted(action, admitted)) => match admitted {
                    Ok(admission) => self.start(action, Some(admission)),
                    Err(too_large) => self.refuse(action, budget_error(too_large)),
                },
                Woke::Driver(Wake::Finished(event)) => self.handle(event),
                Woke::Journaled(result) => {
                    if let Some(journal) = &mut self.journal {
                        journal.writing = None;
                    }
                    if let Err(error) = result {
                        self.fail(error);
                        self.scheduler.handle_cancel();
                    } else if let Some(journal) = self.journal.as_mut().filter(|j| j.dirty) {
                        journal.update(&self.scheduler);
                    }
                }
                Woke::Settled => self.settle = None,
            }
        }
        self.finish().await
    }

    /// Waits for the next thing the driver must react to, in this order of priority: the
    /// cancellation, memory for the first waiting action, a finished request, a finished
    /// journal write, the end of the settle time.
    async fn next_wake(&mut self) -> Woke {
        std::future::poll_fn(|cx| {
            if let Poll::Ready(wake) = self.waits.poll(cx) {
                return Poll::Ready(Woke::Driver(wake));
            }
            if let Some(writing) = self.journal.as_mut().and_then(|j| j.writing.as_mut())
                && let Poll::Ready(written) = Pin::new(writing).poll(cx)
            {
                let written = written.unwrap_or_else(|e| {
                    Err(Error::transfer_error(TransferErrorKind::Journal(
                        e.to_string(),
                    )))
                });
                return Poll::Ready(Woke::Journaled(written));
            }
            if let Some(settle) = &mut self.settle
                && settle.as_mut().poll(cx).is_ready()
            {
                return Poll::Ready(Woke::Settled);
            }
            Poll::Pending
        })
        .await
    }

    /// Starts every waiting action that needs no memory, and asks the budget for the memory
    /// of the first that does (one at a time, in order). An action that needs none never
    /// waits behind one that does: the part whose upload frees memory may be behind the read
    /// that waits for it.
    fn start_waiting(&mut self) {
        let mut still_waiting = VecDeque::with_capacity(self.waiting.len());
        while let Some(action) = self.waiting.pop_front() {
            if matches!(action, Action::Abort { .. }) && !self.settled() {
                still_waiting.push_back(action);
                continue;
            }
            let needed = self.memory_needed(&action);
            if needed == 0 {
                self.start(action, None);
            } else if self.waits.admitting().is_none() {
                let budget = &self.target.client.inner.transfer_memory;
                // A file part hashed before it is sent is read whole, once, when the budget
                // has its memory free at once; otherwise it waits for what its reads hold.
                let whole = self
                    .whole_part_len(&action)
                    .and_then(|len| budget.try_admit(len));
                match whole {
                    Some(admission) => self.start(action, Some(admission)),
                    None => self.waits.admit(action, budget, needed),
                }
            } else {
                still_waiting.push_back(action);
            }
        }
        self.waiting = still_waiting;
    }

    /// Whether the requests in flight settled (or had their time) for an abort to go: the
    /// first call starts the settle time.
    fn settled(&mut self) -> bool {
        if self.waits.tasks.is_empty() || self.settle_expired() {
            return true;
        }
        if self.settle.is_none() {
            self.settle = Some(Box::pin(tokio::time::sleep(SETTLE)));
            self.settle_started = true;
        }
        false
    }

    /// True once a settle time was started and has ended.
    fn settle_expired(&self) -> bool {
        self.settle_started && self.settle.is_none()
    }

    fn memory_needed(&self, action: &Action<Receipt>) -> u64 {
        match (action, &self.parts) {
            (Action::ReadPart { capacity, .. }, _) => {
                let read_ahead = self.read_ahead.as_ref().map_or(0, Admission::bytes);
                capacity.saturating_sub(read_ahead)
            }
            (Action::UploadPart { range, .. }, Parts::File { .. }) => {
                (range.end - range.start).min(FILE_PART_MEMORY)
            }
            _ => 0,
        }
    }

    /// The length of a file part that its request hashes before sending it (so it would be
    /// read twice), to be read whole into memory once instead.
    fn whole_part_len(&self, action: &Action<Receipt>) -> Option<u64> {
        match (action, &self.parts) {
            (Action::UploadPart { range, .. }, Parts::File { .. }) if self.hashes_parts_ahead() => {
                Some(range.end - range.start)
            }
            _ => None,
        }
    }

    fn hashes_parts_ahead(&self) -> bool {
        let checksummed = self.target.algorithm.is_some();
        self.target.client.hashes_file_parts_ahead(checksummed)
    }

    fn upload_id(&self) -> String {
        self.scheduler
            .upload_id()
            .expect("parts, Complete and Abort come after the upload id")
            .to_owned()
    }

    /// Starts one action as a task.
    fn start(&mut self, action: Action<Receipt>, admission: Option<Admission>) {
        let target = self.target.clone();
        match action {
            Action::Create => {
                self.waits
                    .tasks
                    .spawn(async move { Event::Created(create(&target).await) });
            }
            Action::ReadPart {
                number, capacity, ..
            } => {
                let mut reader = self.reader.take().expect("one read at a time");
                // The bytes read ahead come first: their memory moves to this part.
                let admission = match (admission, self.read_ahead.as_mut()) {
                    (Some(mut admitted), Some(read_ahead)) => {
                        admitted.absorb(read_ahead.split_off(capacity));
                        admitted
                    }
                    (None, Some(read_ahead)) => read_ahead.split_off(capacity),
                    (admitted, None) => admitted.expect("reads are admitted"),
                };
                if self.read_ahead.as_ref().is_some_and(|a| a.bytes() == 0) {
                    self.read_ahead = None;
                }
                self.waits.tasks.spawn(async move {
                    let result = reader.read_part(capacity as usize).await;
                    Event::Read {
                        number,
                        reader,
                        result,
                        admission,
                    }
                });
            }
            Action::UploadPart { number, range, .. } => {
                let len = range.end - range.start;
                let body = match &self.parts {
                    Parts::File { file, buffers, .. } => PartBody::File {
                        range: FileRange {
                            file: file.clone(),
                            offset: range.start,
                            len,
                            buffers: buffers.clone(),
                        },
                        whole: self.hashes_parts_ahead()
                            && admission.as_ref().is_some_and(|a| a.bytes() >= len),
                    },
                    Parts::Copy(source) => PartBody::Copy(source.clone(), range.clone()),
                    Parts::Bytes(pieces) => PartBody::Bytes(pieces.slice(range.clone())),
                    Parts::Buffered { .. } => PartBody::Bytes(
                        self.buffers
                            .get(&number)
                            .expect("a read part")
                            .0
                            .clone()
                            .into(),
                    ),
                };
                let progress = self
                    .progress
                    .entry(number)
                    .or_insert_with(|| PartProgress::new(target.progress.clone()))
                    .clone();
                let upload_id = self.upload_id();
                // A buffered part's memory was admitted when it was read.
                let queued = admission
                    .as_ref()
                    .or_else(|| self.buffers.get(&number).map(|(_, admitted)| admitted))
                    .map(Admission::queued)
                    .unwrap_or_default();
                self.waits.tasks.spawn(async move {
                    let part = upload_part(&target, upload_id, number, body, progress);
                    let result = crate::hooks::queued_for(queued, part)
                        .await
                        .map_err(|error| error.in_part(Some(number), range));
                    drop(admission);
                    Event::Part { number, result }
                });
            }
            Action::Complete { parts } => self.start_complete(parts),
            Action::Abort { reason } => {
                // A journaled upload that failed on its way (not cancelled, and its file
                // unchanged) is kept for the next run to continue.
                let resumable = !matches!(reason, FailureReason::Cancelled)
                    && !self.failure.as_ref().is_some_and(|e| {
                        matches!(
                            e.kind(),
                            crate::error::ErrorKind::Transfer(
                                TransferErrorKind::SourceChanged(_) | TransferErrorKind::Cancelled
                            )
                        )
                    });
                if self.journal.is_some() && resumable {
                    // Kept open for the next run, with a journal of every part stored.
                    self.kept_for_resume = self.scheduler.snapshot();
                    let _ = self.scheduler.handle_abort_failed();
                    self.reported = true;
                    return;
                }
                let upload_id = self.upload_id();
                self.waits
                    .tasks
                    .spawn(async move { Event::Aborted(abort(&target, upload_id).await) });
            }
            _ => unreachable!("s3-multipart-plan 0.1 has no other actions"),
        }
    }

    /// An action that cannot get its memory fails its part.
    fn refuse(&mut self, action: Action<Receipt>, error: Error) {
        self.fail(error);
        let _ = match action {
            Action::ReadPart { number, .. } => self.scheduler.handle_read_failed(number),
            Action::UploadPart { number, .. } => self.scheduler.handle_part_failed(number, false),
            _ => Ok(()),
        };
    }

    fn start_complete(&mut self, parts: CompletedParts<Receipt>) {
        let target = self.target.clone();
        let size: u64 = parts.iter().map(|part| part.size).sum();
        self.target.progress.set_total(size);
        let unchanged = match &self.parts {
            Parts::Buffered {
                announced: Some(announced),
            } if *announced != size => Err(length_error(*announced, size)),
            Parts::File {
                file,
                path,
                fingerprint,
                ..
            } => {
                let (file, path, fingerprint) = (file.clone(), path.clone(), *fingerprint);
                Ok(Some((file, path, fingerprint)))
            }
            _ => Ok(None),
        };
        let file = match unchanged {
            Ok(file) => file,
            Err(error) => {
                self.fail(error);
                let _ = self.scheduler.handle_complete_failed(false);
                self.reported = true;
                return;
            }
        };
        let algorithm = self.target.algorithm;
        // Every part's checksum, or none (a copy's parts are checksummed by the store, which
        // may send none): a value combined from some of the parts would be nobody's.
        let checksums: Option<Vec<Checksum>> = parts
            .iter()
            .map(|part| part.receipt.checksum.clone())
            .collect();
        self.full_checksum = algorithm
            .filter(|a| integrity::checksum_type(*a) == ChecksumType::FullObject)
            .and(checksums.as_ref())
            .and_then(|checksums| {
                integrity::combine(checksums.iter().zip(parts.iter().map(|part| part.size)))
            });
        self.composite = checksums.as_deref().and_then(Checksum::composite);
        let full_checksum = self.full_checksum.clone();
        let upload_id = self.upload_id();
        self.waits.tasks.spawn(async move {
            if let Some((file, path, fingerprint)) = file
                && let Err(error) = check_unchanged(&file, &path, fingerprint).await
            {
                return Event::Completed(Err(error));
            }
            Event::Completed(complete(&target, upload_id, &parts, size, full_checksum).await)
        });
    }

    /// Reports one result to the scheduler.
    fn handle(&mut self, event: Event) {
        let handled = match event {
            Event::Created(Ok((upload_id, orphan))) => {
                self.possible_orphan = orphan;
                let handled = self.scheduler.handle_created(upload_id);
                if let Some(journal) = &mut self.journal {
                    journal.update(&self.scheduler);
                }
                handled
            }
            Event::Created(Err(error)) => {
                self.fail(error);
                self.scheduler.handle_create_failed()
            }
            Event::Read {
                number,
                reader,
                result,
                mut admission,
            } => {
                self.reader = Some(reader);
                match result {
                    Ok(data) => {
                        admission.shrink_to(data.len() as u64);
                        let len = data.len() as u64;
                        self.buffers.insert(number, (data, admission));
                        self.scheduler.handle_part_read(number, len)
                    }
                    Err(error) => {
                        self.fail(read_error(error));
                        self.scheduler.handle_read_failed(number)
                    }
                }
            }
            Event::Part { number, result } => {
                let buffer = self.buffers.remove(&number);
                let progress = self.progress.remove(&number);
                match result {
                    Ok(receipt) => {
                        let len = match self.scheduler.upload_plan() {
                            Some(plan) => plan.part_range(number).map_or(0, |r| r.end - r.start),
                            None => buffer.map_or(0, |(data, _)| data.len() as u64),
                        };
                        if let Some(progress) = progress {
                            progress.commit(len);
                        }
                        let handled = self.scheduler.handle_part_done(number, receipt);
                        if let Some(journal) = &mut self.journal {
                            journal.update(&self.scheduler);
                        }
                        handled
                    }
                    Err(error) => {
                        if let Some(progress) = progress {
                            progress.abandon();
                        }
                        let retryable = error.retry_class().is_retryable();
                        self.fail(error);
                        self.scheduler.handle_part_failed(number, retryable)
                    }
                }
            }
            Event::Completed(Ok(completion)) => {
                self.completion = Some(completion);
                self.scheduler.handle_completed()
            }
            Event::Completed(Err(error)) => {
                self.fail(error);
                self.scheduler.handle_complete_failed(false)
            }
            Event::Aborted(result) => match result {
                Ok(()) => self.scheduler.handle_aborted(),
                Err(error) => {
                    self.abort_error = Some(error.to_string());
                    self.scheduler.handle_abort_failed()
                }
            },
        };
        // Each result answers an action the scheduler handed out.
        handled.expect("the driver reports exactly the actions it was given");
    }

    async fn finish(mut self) -> Result<UploadOutput, Error> {
        // Whatever is still in flight is of no use any more.
        self.waits.tasks.abort_all();
        let upload_id = self.scheduler.upload_id().map(str::to_owned);
        let outcome = self.scheduler.outcome().cloned().expect("finished");
        let cleanup = match &outcome {
            Outcome::Completed { parts, size } => {
                if let Some(mut journal) = self.journal.take() {
                    journal.remove().await.ok();
                }
                let completion = self.completion.take().expect("a completed upload");
                let verification = match self.target.algorithm {
                    None => Verification::NotVerified(NotVerified::Disabled),
                    Some(algorithm)
                        if integrity::checksum_type(algorithm) == ChecksumType::Composite =>
                    {
                        // The store's checksum of the part checksums is the one computed
                        // here from the parts it confirmed: every part is as sent.
                        match (&completion.echoed, &self.composite) {
                            (Some(theirs), Some(ours)) if theirs == ours => Verification::PerPart {
                                algorithm,
                                parts: *parts,
                            },
                            (Some(theirs), Some(ours)) => {
                                let error = Error::transfer_error(TransferErrorKind::Inconsistent(
                                    format!(
                                        "the store reports {algorithm} {theirs} for the object, this client computed {ours}"
                                    ),
                                ));
                                return Err(self.target.failed(error, upload_id, Cleanup::Nothing));
                            }
                            _ => Verification::NotVerified(NotVerified::StoreSentNone),
                        }
                    }
                    // Checksums were on, but the store sent none for the parts (a copy):
                    // nothing to compare the object's value with.
                    Some(_) if self.full_checksum.is_none() => {
                        Verification::NotVerified(NotVerified::StoreSentNone)
                    }
                    Some(_) => {
                        verify_echo(self.full_checksum.as_ref(), completion.echoed.as_deref())
                            .map_err(|e| {
                                self.target.failed(e, upload_id.clone(), Cleanup::Nothing)
                            })?
                    }
                };
                return Ok(UploadOutput {
                    size: *size,
                    etag: completion.etag,
                    version_id: completion.version_id,
                    upload_id,
                    parts: Some(*parts),
                    resumed_parts: self.resumed_parts,
                    checksum: self.full_checksum.take(),
                    verification,
                    possible_orphan: self.possible_orphan.take(),
                });
            }
            Outcome::Aborted { .. } => Cleanup::Aborted,
            Outcome::AbortFailed { .. } if self.kept_for_resume.is_some() => {
                let snapshot = self.kept_for_resume.take().expect("checked");
                let mut journal = self.journal.take().expect("kept uploads have a journal");
                // The next run must find every part acknowledged, and no write may land
                // after this returns.
                if let Err(error) = journal.finish(&snapshot).await {
                    self.fail(error);
                }
                Cleanup::KeptForResume(journal.path)
            }
            Outcome::AbortFailed { .. } => {
                Cleanup::AbortFailed(self.abort_error.take().unwrap_or_default())
            }
            _ => Cleanup::Nothing,
        };
        if matches!(cleanup, Cleanup::Aborted)
            && let Some(mut journal) = self.journal.take()
        {
            journal.remove().await.ok();
        }
        let error = self
            .failure
            .take()
            .unwrap_or_else(|| Error::transfer_error(TransferErrorKind::Cancelled));
        Err(self.target.failed(error, upload_id, cleanup))
    }
}

/// CreateMultipartUpload, retried after a lost answer; with the upload id, the upload a lost
/// answer may have left that could not be aborted.
async fn create(target: &Target) -> Result<(String, Option<PossibleOrphan>), Error> {
    let mut create = CreateMultipartUpload::new(target.bucket.clone(), target.key.clone())
        .attributes(target.attributes.clone());
    if let Some(algorithm) = target.algorithm {
        create = create
            .checksum_algorithm(algorithm)
            .checksum_type(integrity::checksum_type(algorithm));
    }
    let started = tokio::time::Instant::now();
    let mut lost = false;
    let mut round = 1;
    loop {
        match target.client.send_telling(&create).await {
            Ok((created, lost_in_this_round)) => {
                let mut orphan = None;
                if lost || lost_in_this_round {
                    orphan = abort_lost_creates(target, &created.upload_id, started.elapsed())
                        .await
                        .err()
                        .map(|reason| PossibleOrphan {
                            bucket: target.bucket.as_str().to_owned(),
                            key: target.key.as_str().to_owned(),
                            reason,
                        });
                }
                return Ok((created.upload_id, orphan));
            }
            // A lost answer may have created an upload that only a successful create can
            // find (by its time next to the new one) and abort: try a few more rounds.
            Err(error)
                if error.outcome_unknown()
                    && round < CLEANUP_ROUNDS
                    && error.retry_class().is_retryable() =>
            {
                lost = true;
                round += 1;
                tokio::time::sleep(Duration::from_millis(100) * round).await;
            }
            Err(error) => return Err(error),
        }
    }
}

/// Aborts the uploads of this key that a lost CreateMultipartUpload answer may have left:
/// those the store initiated at most `within` (the time the retries took, plus a second of
/// timestamp rounding) before `ours`. Says why not when it could not look or abort: a store
/// that cannot list multipart uploads keeps such an upload until a lifecycle rule removes it.
async fn abort_lost_creates(target: &Target, ours: &str, within: Duration) -> Result<(), String> {
    target
        .client
        .provider_quirks()
        .check_list_multipart_uploads()
        .map_err(|e| e.to_string())?;
    let mut uploads = Vec::new();
    for round in 1..=CLEANUP_ROUNDS {
        let listing =
            ListMultipartUploads::new(target.bucket.clone()).prefix(target.key.as_str().to_owned());
        let mut pages = target.client.list_multipart_uploads_pages(listing);
        uploads.clear();
        let mut failed = None;
        while let Some(page) = pages.next_page().await {
            match page {
                Ok(page) => uploads.extend(
                    page.result
                        .uploads
                        .into_iter()
                        .filter(|upload| upload.key == target.key.as_str()),
                ),
                Err(error) => {
                    failed = Some(target.client.unlisted(error));
                    break;
                }
            }
        }
        match failed {
            None => break,
            // The store does not implement the listing: asking again changes nothing.
            Some(error) if round == CLEANUP_ROUNDS || !error.retry_class().is_retryable() => {
                return Err(error.to_string());
            }
            Some(_) => tokio::time::sleep(Duration::from_millis(100) * round).await,
        }
    }
    let initiated =
        |upload: &s3_xml::MultipartUpload| upload.initiated.and_then(|at| at.to_system_time());
    let not_found = || "the store's listing of the key's uploads does not show the one in use";
    let our_time = uploads
        .iter()
        .find(|upload| upload.upload_id == ours)
        .and_then(initiated)
        .ok_or_else(not_found)?;
    let earliest = our_time
        .checked_sub(within + Duration::from_secs(1))
        .ok_or_else(not_found)?;
    let mut result = Ok(());
    for upload in &uploads {
        let lost = upload.upload_id != ours
            && initiated(upload).is_some_and(|at| earliest <= at && at <= our_time);
        if lost {
            let abort = AbortMultipartUpload::new(
                target.bucket.clone(),
                target.key.clone(),
                upload.upload_id.clone(),
            );
            match target.client.abort_multipart_upload(abort).await {
                Ok(_) => {}
                Err(error)
                    if error
                        .service_error()
                        .is_some_and(|e| e.code == "NoSuchUpload") => {}
                Err(error) => {
                    result = Err(format!(
                        "aborting upload {} failed: {error}",
                        upload.upload_id
                    ));
                }
            }
        }
    }
    result
}

/// The bytes of one part.
enum PartBody {
    /// Read from the file as it is sent, or (`whole`, in memory admitted for it) read whole
    /// into memory first, hashed in the same pass, and sent from there.
    File {
        range: FileRange,
        whole: bool,
    },
    Bytes(Pieces),
    /// Copied by the store from this range of the source.
    Copy(CopySource, Range<u64>),
}

async fn upload_part(
    target: &Target,
    upload_id: String,
    number: u32,
    body: PartBody,
    progress: Arc<PartProgress>,
) -> Result<Receipt, Error> {
    if let PartBody::Copy(source, range) = body {
        return copy_part(target, upload_id, number, source, range, progress).await;
    }
    let mut request = UploadPart::new(target.bucket.clone(), target.key.clone(), upload_id, number);
    if let Some(key) = target.sse_customer_key() {
        request = request.sse_customer_key(key.clone());
    }
    let algorithm = target.algorithm;
    if algorithm.is_none() {
        request = request.no_checksum();
    }
    // An in-memory part gets its checksum and, where the payload is signed, its SHA-256 in
    // one pass, off the runtime's thread when it is large; every attempt reuses them.
    let digests = || target.client.upload_digests(algorithm);
    let (data, (sha256, checksum)) = match body {
        // The client computes the checksum as it sends the part (a trailer), or ahead
        // together with the SHA-256 over plain HTTP (a header), reading the file again to
        // send it when the part could not be held whole.
        PartBody::File {
            range,
            whole: false,
        } => {
            if let Some(algorithm) = algorithm {
                request = request.checksum_algorithm(algorithm);
            }
            let body = Body::file_region(range).with_progress(progress.clone());
            return send_part(target, request, body, algorithm, None, number, &progress).await;
        }
        PartBody::File { range, whole: true } => {
            let (bytes, digested) = read_whole_digested(&range, digests()).await?;
            (bytes.into(), digested)
        }
        PartBody::Bytes(pieces) => {
            let digested = digest_bytes(pieces.as_slice(), digests()).await?;
            (pieces, digested)
        }
        PartBody::Copy(..) => unreachable!("copied above"),
    };
    if let Some(checksum) = &checksum {
        request = request.checksum(checksum.clone());
    }
    let mut body = Body::from_pieces(data).with_progress(progress.clone());
    body.sha256 = sha256;
    send_part(
        target, request, body, algorithm, checksum, number, &progress,
    )
    .await
}

/// Sends one part's body and checks the store's answer: its ETag, and the checksum it
/// reports against the one computed here (`computed`, or the one the body's attempts sent).
async fn send_part(
    target: &Target,
    request: UploadPart,
    body: Body,
    algorithm: Option<ChecksumAlgorithm>,
    computed: Option<Checksum>,
    number: u32,
    progress: &PartProgress,
) -> Result<Receipt, Error> {
    let output = target.client.upload_part(request, body).await?;
    let inconsistent = |what: String| Error::transfer_error(TransferErrorKind::Inconsistent(what));
    let etag = output
        .etag
        .ok_or_else(|| inconsistent(format!("UploadPart {number} answered without an ETag")))?;
    let checksum = match algorithm {
        None => None,
        Some(algorithm) => {
            let ours = computed
                .or_else(|| progress.sent_checksum())
                .ok_or_else(|| {
                    inconsistent(format!(
                        "part {number} was sent without its {algorithm} checksum"
                    ))
                })?;
            if let Some(theirs) = output.checksums.get(algorithm)
                && theirs != ours.to_base64()
            {
                return Err(inconsistent(format!(
                    "the store reports {algorithm} {theirs} for part {number}, this client \
                     sent {}",
                    ours.to_base64()
                )));
            }
            Some(ours)
        }
    };
    Ok(Receipt { etag, checksum })
}

/// UploadPartCopy of `range` of the source (pinned by the caller's `If-Match`): the store
/// computes the part's checksum, which the receipt keeps for the full-object value.
async fn copy_part(
    target: &Target,
    upload_id: String,
    number: u32,
    source: CopySource,
    range: Range<u64>,
    progress: Arc<PartProgress>,
) -> Result<Receipt, Error> {
    let len = range.end - range.start;
    let mut request = UploadPartCopy::new(
        source,
        target.bucket.clone(),
        target.key.clone(),
        upload_id,
        number,
    )
    .source_range(ByteRange::new(range.start, range.end - 1).map_err(Error::from)?);
    if let Some(key) = target.sse_customer_key() {
        request = request.sse_customer_key(key.clone());
    }
    // The store moves the bytes: they are "in flight" for as long as the request is.
    progress.attempt_started();
    progress.moved(len);
    let output = target
        .client
        .upload_part_copy(request)
        .await
        .map_err(copy_source_changed)?;
    let inconsistent = |what: String| Error::transfer_error(TransferErrorKind::Inconsistent(what));
    let etag = output
        .result
        .etag
        .ok_or_else(|| inconsistent(format!("UploadPartCopy {number} answered without an ETag")))?;
    let checksum = match target.algorithm {
        None => None,
        Some(algorithm) => match Checksum::from_xml(&output.result.checksums, algorithm) {
            Some(parsed) => Some(parsed.map_err(Error::from)?),
            None => None,
        },
    };
    Ok(Receipt { etag, checksum })
}

/// A 412 on a copy pinned to the source's ETag: the source changed.
pub(crate) fn copy_source_changed(error: Error) -> Error {
    if error.is_precondition_failed() {
        Error::caused_by(
            crate::error::ErrorKind::Transfer(TransferErrorKind::ObjectChanged),
            error,
        )
    } else {
        error
    }
}

async fn complete(
    target: &Target,
    upload_id: String,
    parts: &CompletedParts<Receipt>,
    size: u64,
    full_checksum: Option<Checksum>,
) -> Result<Completion, Error> {
    let listed = parts
        .iter()
        .map(|part| {
            let mut listed = s3_xml::CompletedPart::new(part.number, part.receipt.etag.clone());
            if let Some(checksum) = &part.receipt.checksum {
                listed = listed.with_checksums(checksum.into());
            }
            listed
        })
        .collect();
    let mut request =
        CompleteMultipartUpload::new(target.bucket.clone(), target.key.clone(), upload_id, listed)
            .object_size(size);
    // The type only beside the value it describes: a store may refuse it alone (Garage
    // 2.5.0), and without a value it checks nothing (the type was given at Create).
    if let Some(checksum) = &full_checksum {
        request = request
            .checksum_type(ChecksumType::FullObject)
            .full_object_checksum(checksum.clone());
    }
    if target.create_only {
        request = request.if_none_match_any();
    }
    if let Some(key) = target.sse_customer_key() {
        request = request.sse_customer_key(key.clone());
    }
    match target.client.complete_multipart_upload(request).await {
        Ok(output) => {
            let echoed = target
                .algorithm
                .and_then(|a| a.value_in(&output.result.checksums).map(str::to_owned));
            Ok(Completion {
                etag: output.result.etag,
                version_id: output.version_id,
                echoed,
            })
        }
        Err(error) if integrity::may_have_taken_effect(&error) => {
            // The answer to an earlier attempt may have been lost after the store
            // completed: look at what the key holds before calling it a failure.
            let etags: Vec<ETag> = parts.iter().map(|p| p.receipt.etag.clone()).collect();
            let expected = Expected {
                bucket: &target.bucket,
                key: &target.key,
                size,
                etag: s3_ops::checksum::multipart_etag(&etags),
                parts: Some(parts.len() as u32),
                checksum: full_checksum.as_ref(),
                sse_customer_key: target.sse_customer_key(),
            };
            match integrity::stored_object_matches(&target.client, &expected).await {
                Ok(Some(head)) => {
                    let echoed = target
                        .algorithm
                        .and_then(|a| head.checksums.get(a).map(str::to_owned));
                    Ok(Completion {
                        etag: head.etag,
                        version_id: head.version_id,
                        echoed,
                    })
                }
                _ => Err(error),
            }
        }
        Err(error) => Err(error),
    }
}

/// Rounds of a cleanup request (each retried by the client's own policy) before it gives
/// up — an abort, the listing that finds an upload a lost answer created, the create that
/// lets it be found: leaving parts stored costs more than a few more requests.
const CLEANUP_ROUNDS: u32 = 4;

/// Aborts the upload: retried, and bounded in time; an upload the store no longer knows
/// holds nothing.
async fn abort(target: &Target, upload_id: String) -> Result<(), Error> {
    let rounds = async {
        let mut round = 1;
        loop {
            let request = AbortMultipartUpload::new(
                target.bucket.clone(),
                target.key.clone(),
                upload_id.clone(),
            );
            match target.client.abort_multipart_upload(request).await {
                Ok(_) => return Ok(()),
                Err(error)
                    if error
                        .service_error()
                        .is_some_and(|e| e.code == "NoSuchUpload") =>
                {
                    return Ok(());
                }
                Err(error) if round < CLEANUP_ROUNDS && error.retry_class().is_retryable() => {
                    tokio::time::sleep(Duration::from_millis(100) * round).await;
                    round += 1;
                }
                Err(error) => return Err(error),
            }
        }
    };
    match tokio::time::timeout(ABORT_LIMIT, rounds).await {
        Ok(result) => result,
        Err(_) => Err(Error::timeout(crate::error::TimeoutKind::Operation(
            ABORT_LIMIT,
        ))),
    }
}

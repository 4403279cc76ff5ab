//! The multipart upload scheduler state machine.

use std::collections::BTreeSet;
use std::ops::Range;

use crate::error::{Error, EventError};
use crate::options::MultipartOptions;
use crate::part::{CompletedPart, CompletedParts};
use crate::plan::{StreamPlan, UploadPlan};
use crate::snapshot::UploadSnapshot;

/// Something the driver must do, returned by [`UploadScheduler::poll_action`].
///
/// Each action is answered by the `handle_*` calls named below; the actions
/// that belong to one upload may run concurrently. `R` is the driver's
/// per-part receipt (see [`PartReceipt`](crate::PartReceipt)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "an action must be performed and its result reported"]
#[non_exhaustive]
pub enum Action<R> {
    /// Send `CreateMultipartUpload`; answer with
    /// [`handle_created`](UploadScheduler::handle_created) or
    /// [`handle_create_failed`](UploadScheduler::handle_create_failed).
    Create,
    /// Streams only: read the next bytes of the stream, up to `capacity`,
    /// into a buffer for part `number` (they start at stream offset `offset`).
    /// Fill the buffer completely unless the stream ends first, then answer
    /// with [`handle_part_read`](UploadScheduler::handle_part_read) (or
    /// [`handle_read_failed`](UploadScheduler::handle_read_failed)). At most
    /// one read is outstanding, so the stream is read in order.
    ReadPart {
        /// The part the bytes belong to.
        number: u32,
        /// The stream offset of the first byte.
        offset: u64,
        /// The most bytes to read.
        capacity: u64,
    },
    /// Send `UploadPart` for the bytes `range` of the object as part `number`;
    /// answer with [`handle_part_done`](UploadScheduler::handle_part_done) or
    /// [`handle_part_failed`](UploadScheduler::handle_part_failed).
    UploadPart {
        /// The part number, 1-based.
        number: u32,
        /// The object bytes of the part.
        range: Range<u64>,
        /// 1 for the first attempt, 2 for the first retry, ...; a driver
        /// backs off before attempts above 1.
        attempt: u32,
    },
    /// Send `CompleteMultipartUpload` with these parts (ascending), each with
    /// the receipt the driver reported for it; answer with
    /// [`handle_completed`](UploadScheduler::handle_completed) or
    /// [`handle_complete_failed`](UploadScheduler::handle_complete_failed).
    Complete {
        /// Every part of the object, ascending by number (shared, so a
        /// retried `Complete` costs no copy).
        parts: CompletedParts<R>,
    },
    /// Send `AbortMultipartUpload`; answer with
    /// [`handle_aborted`](UploadScheduler::handle_aborted) or
    /// [`handle_abort_failed`](UploadScheduler::handle_abort_failed).
    /// Emitted at most once per upload.
    Abort {
        /// Why the upload is abandoned.
        reason: FailureReason,
    },
}

/// Why an upload was abandoned.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureReason {
    /// [`UploadScheduler::handle_cancel`] was called.
    Cancelled,
    /// `CreateMultipartUpload` failed.
    CreateFailed,
    /// A part failed fatally or ran out of retries.
    PartFailed {
        /// The part number.
        number: u32,
        /// Attempts made, including the first.
        attempts: u32,
        /// Whether the last failure was retryable (then the budget ran out).
        retryable: bool,
    },
    /// Reading the stream failed.
    ReadFailed {
        /// The part being read.
        number: u32,
    },
    /// The stream is longer than the limits allow.
    StreamTooLarge {
        /// The largest stream the schedule can upload, in bytes.
        maximum: u64,
    },
    /// `CompleteMultipartUpload` failed fatally or ran out of retries.
    CompleteFailed {
        /// Attempts made, including the first.
        attempts: u32,
    },
}

/// How an upload ended, from [`UploadScheduler::outcome`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The object exists.
    Completed {
        /// The number of parts.
        parts: u32,
        /// The object size in bytes.
        size: u64,
    },
    /// The upload was abandoned and the abort was confirmed.
    Aborted {
        /// Why.
        reason: FailureReason,
    },
    /// The upload was abandoned but the abort request failed: the upload
    /// (its [`upload_id`](UploadScheduler::upload_id)) may still hold parts.
    AbortFailed {
        /// Why the upload was abandoned.
        reason: FailureReason,
    },
    /// The upload ended before any multipart upload existed on the server.
    NotStarted {
        /// Why.
        reason: FailureReason,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    NeedCreate,
    CreateInFlight,
    Running,
    CompleteInFlight,
    NeedAbort,
    AbortInFlight,
    Finished,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    /// Not started (known size only).
    Idle,
    /// Stream bytes are being read (the capacity is in the cursor).
    Reading,
    /// Holds a concurrency slot and waits for `UploadPart` to be emitted
    /// (read before the upload existed, or waiting for a retry).
    Queued,
    Uploading,
    Done,
    /// Abandoned after a failure or cancellation.
    Dropped,
}

/// One part's bookkeeping, kept small: 10,000 of them are walked per upload.
/// The part's range starts at the previous slot's `end` (0 for part 1).
#[derive(Debug, Clone, Copy)]
struct Slot {
    end: u64,
    attempts: u32,
    state: SlotState,
}

#[derive(Debug, Clone)]
enum Mode {
    Known(UploadPlan),
    Stream(StreamCursor),
}

#[derive(Debug, Clone)]
struct StreamCursor {
    plan: StreamPlan,
    /// Stream offset of the next read.
    offset: u64,
    /// The capacity of the outstanding `ReadPart`, if any.
    reading: Option<u64>,
    /// The last part number, once the end of the stream was seen.
    last_part: Option<u32>,
}

impl StreamCursor {
    /// The capacity of the read for part `number` at the current offset, and
    /// whether it is the last part that could exist. That part asks for one
    /// extra byte: a full read then proves the stream is too large.
    fn read_for(&self, number: u32) -> (u64, bool) {
        let limits = self.plan.limits();
        let remaining = limits.max_object_size().saturating_sub(self.offset);
        let scheduled = self.plan.part_size(number);
        let last_possible = number >= limits.max_parts() || scheduled >= remaining;
        (
            scheduled.min(remaining) + u64::from(last_possible),
            last_possible,
        )
    }
}

/// Schedules one multipart upload: which request to send next, with bounded
/// concurrency, memory and retries. See the [crate docs](crate) for the
/// driver loop and the drain rule.
///
/// `R` is what the driver records for each accepted part (its
/// [`PartReceipt`](crate::PartReceipt), e.g. the ETag and checksum): the
/// scheduler stores it and hands it back in [`Action::Complete`] and
/// [`snapshot`](Self::snapshot) without looking at it.
#[derive(Debug, Clone)]
#[must_use = "a scheduler does nothing until its actions are polled"]
pub struct UploadScheduler<R> {
    options: MultipartOptions,
    mode: Mode,
    phase: Phase,
    upload_id: Option<String>,
    /// Index `n - 1` holds part `n`.
    slots: Vec<Slot>,
    /// Known size: the lowest part number that may still be `Idle`.
    next_fresh: u32,
    /// Parts in `Queued`, emitted lowest first.
    queued: BTreeSet<u32>,
    in_flight: usize,
    buffered_bytes: u64,
    buffer_budget: u64,
    largest_buffer: u64,
    parts_done: u32,
    /// Finished parts in completion order; sorted when `Complete` is built.
    done: Vec<CompletedPart<R>>,
    /// The `Complete` list once built, shared with every (re-)emission.
    completing: Option<CompletedParts<R>>,
    complete_attempts: u32,
    failure: Option<FailureReason>,
    outcome: Option<Outcome>,
}

impl<R> UploadScheduler<R> {
    /// Schedules the upload of an object of `object_size` bytes.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectTooLarge`] when the object does not fit the limits.
    pub fn new(object_size: u64, options: &MultipartOptions) -> Result<Self, Error> {
        let plan = UploadPlan::new(object_size, options)?;
        Ok(Self::for_plan(plan, options, None, Vec::new()))
    }

    /// Schedules the upload of a stream of unknown length, with part sizes
    /// from [`StreamPlan`]. Memory stays within
    /// [`maximum_buffered_bytes`](Self::maximum_buffered_bytes): once parts
    /// outgrow `options.maximum_buffered_bytes()`, they run one at a time.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use std::io::Read;
    /// use s3_multipart_plan::{Action, MultipartOptions, Outcome, UploadScheduler};
    ///
    /// let data = vec![7u8; 12 << 20]; // 12 MiB, length unknown to the scheduler
    /// let mut stream = &data[..];
    /// let options = MultipartOptions::builder().part_size(5 << 20).build()?;
    /// let mut upload = UploadScheduler::new_stream(&options);
    /// let mut buffers: HashMap<u32, Vec<u8>> = HashMap::new();
    /// let mut pending = Vec::new();
    /// while upload.outcome().is_none() {
    ///     while let Some(action) = upload.poll_action() {
    ///         pending.push(action);
    ///     }
    ///     match pending.remove(0) {
    ///         Action::Create => upload.handle_created("id")?,
    ///         Action::ReadPart { number, capacity, .. } => {
    ///             // Fill the buffer unless the stream ends first.
    ///             let mut buffer = Vec::new();
    ///             (&mut stream).take(capacity).read_to_end(&mut buffer).unwrap();
    ///             upload.handle_part_read(number, buffer.len() as u64)?;
    ///             buffers.insert(number, buffer);
    ///         }
    ///         Action::UploadPart { number, .. } => {
    ///             // Send buffers[&number]; free it once the part is done.
    ///             buffers.remove(&number);
    ///             // The receipt: here the ETag the server returned.
    ///             upload.handle_part_done(number, format!("\"{number}\""))?;
    ///         }
    ///         Action::Complete { parts } => {
    ///             let sizes: Vec<u64> = parts.iter().map(|p| p.size).collect();
    ///             assert_eq!(sizes, [5 << 20, 5 << 20, 2 << 20]);
    ///             upload.handle_completed()?;
    ///         }
    ///         other => unreachable!("{other:?}"),
    ///     }
    /// }
    /// assert_eq!(upload.outcome(), Some(&Outcome::Completed { parts: 3, size: 12 << 20 }));
    /// # Ok::<(), s3_multipart_plan::Error>(())
    /// ```
    pub fn new_stream(options: &MultipartOptions) -> Self {
        let plan = StreamPlan::new(options);
        let cursor = StreamCursor {
            plan,
            offset: 0,
            reading: None,
            last_part: None,
        };
        Self::with_mode(
            Mode::Stream(cursor),
            options,
            options.maximum_buffered_bytes(),
            Vec::new(),
        )
    }

    fn for_plan(
        plan: UploadPlan,
        options: &MultipartOptions,
        upload_id: Option<String>,
        done: Vec<CompletedPart<R>>,
    ) -> Self {
        let slots = plan
            .parts()
            .map(|(_, range)| Slot {
                end: range.end,
                attempts: 0,
                state: SlotState::Idle,
            })
            .collect();
        let budget = plan
            .part_size()
            .saturating_mul(options.concurrency() as u64);
        let mut scheduler = Self::with_mode(Mode::Known(plan), options, budget, slots);
        scheduler.done.reserve_exact(scheduler.slots.len());
        for part in done {
            // `snapshot.plan` checked numbers and sizes against the plan.
            if let Some(slot) = scheduler.slot_mut(part.number) {
                slot.state = SlotState::Done;
                scheduler.parts_done += 1;
                scheduler.done.push(part);
            }
        }
        if upload_id.is_some() {
            scheduler.upload_id = upload_id;
            scheduler.phase = Phase::Running;
        }
        scheduler
    }

    fn with_mode(mode: Mode, options: &MultipartOptions, budget: u64, slots: Vec<Slot>) -> Self {
        Self {
            options: *options,
            mode,
            phase: Phase::NeedCreate,
            upload_id: None,
            slots,
            next_fresh: 1,
            queued: BTreeSet::new(),
            in_flight: 0,
            buffered_bytes: 0,
            buffer_budget: budget,
            largest_buffer: 0,
            parts_done: 0,
            done: Vec::new(),
            completing: None,
            complete_attempts: 0,
            failure: None,
            outcome: None,
        }
    }

    /// The next action to perform, or `None` when nothing can start until a
    /// result is reported (or the upload is finished). See the drain rule in
    /// the [crate docs](crate).
    #[must_use = "a polled action must be performed and its result reported"]
    pub fn poll_action(&mut self) -> Option<Action<R>> {
        match self.phase {
            Phase::NeedCreate => {
                self.phase = Phase::CreateInFlight;
                return Some(Action::Create);
            }
            Phase::NeedAbort => {
                self.phase = Phase::AbortInFlight;
                let reason = self.failure.clone().unwrap_or(FailureReason::Cancelled);
                return Some(Action::Abort { reason });
            }
            Phase::CreateInFlight | Phase::Running => {}
            Phase::CompleteInFlight | Phase::AbortInFlight | Phase::Finished => return None,
        }
        if self.failure.is_some() {
            // A failure while Create is in flight: wait for its upload id to abort.
            return None;
        }
        let running = self.phase == Phase::Running;
        if running && let Some(number) = self.queued.pop_first() {
            return Some(self.start_upload(number));
        }
        if let Some(action) = self.start_next_part(running) {
            return Some(action);
        }
        if running && self.all_parts_done() {
            self.phase = Phase::CompleteInFlight;
            self.complete_attempts += 1;
            let parts = self
                .completing
                .get_or_insert_with(|| {
                    let mut done = std::mem::take(&mut self.done);
                    done.sort_unstable_by_key(|part| part.number);
                    done.into()
                })
                .clone();
            return Some(Action::Complete { parts });
        }
        None
    }

    /// Starts a part that holds no slot yet, if concurrency and memory allow.
    fn start_next_part(&mut self, running: bool) -> Option<Action<R>> {
        if self.in_flight >= self.options.concurrency() {
            return None;
        }
        match &mut self.mode {
            Mode::Known(plan) => {
                let part_count = plan.part_count();
                if !running {
                    return None;
                }
                while let Some(slot) = self.slots.get((self.next_fresh - 1) as usize) {
                    if slot.state == SlotState::Idle {
                        break;
                    }
                    self.next_fresh += 1;
                }
                if self.next_fresh > part_count {
                    return None;
                }
                let number = self.next_fresh;
                self.next_fresh += 1;
                let range = self.range_of(number);
                self.take_buffer(range.end - range.start);
                Some(self.start_upload(number))
            }
            Mode::Stream(cursor) => {
                if cursor.reading.is_some() || cursor.last_part.is_some() {
                    return None;
                }
                let number = u32::try_from(self.slots.len()).ok()? + 1;
                let (capacity, _) = cursor.read_for(number);
                if self.in_flight > 0
                    && self.buffered_bytes.saturating_add(capacity) > self.buffer_budget
                {
                    return None;
                }
                cursor.reading = Some(capacity);
                let offset = cursor.offset;
                self.slots.push(Slot {
                    end: offset,
                    attempts: 0,
                    state: SlotState::Reading,
                });
                self.take_buffer(capacity);
                Some(Action::ReadPart {
                    number,
                    offset,
                    capacity,
                })
            }
        }
    }

    fn take_buffer(&mut self, bytes: u64) {
        self.in_flight += 1;
        self.buffered_bytes += bytes;
        self.largest_buffer = self.largest_buffer.max(bytes);
    }

    fn release_buffer(&mut self, bytes: u64) {
        self.in_flight -= 1;
        self.buffered_bytes -= bytes;
    }

    fn start_upload(&mut self, number: u32) -> Action<R> {
        let range = self.range_of(number);
        let slot = &mut self.slots[(number - 1) as usize];
        slot.attempts += 1;
        slot.state = SlotState::Uploading;
        Action::UploadPart {
            number,
            range,
            attempt: slot.attempts,
        }
    }

    /// The bytes of part `number` (a valid part number).
    fn range_of(&self, number: u32) -> Range<u64> {
        let index = (number - 1) as usize;
        let start = match index.checked_sub(1) {
            Some(previous) => self.slots[previous].end,
            None => 0,
        };
        start..self.slots[index].end
    }

    fn all_parts_done(&self) -> bool {
        match &self.mode {
            Mode::Known(plan) => self.parts_done == plan.part_count(),
            Mode::Stream(cursor) => cursor.last_part == Some(self.parts_done),
        }
    }

    fn slot_mut(&mut self, number: u32) -> Option<&mut Slot> {
        self.slots.get_mut(number.checked_sub(1)? as usize)
    }

    /// Records the first failure and moves towards the single `Abort`.
    fn fail(&mut self, reason: FailureReason) {
        if self.failure.is_some() {
            return;
        }
        match self.phase {
            Phase::NeedCreate => self.finish(Outcome::NotStarted {
                reason: reason.clone(),
            }),
            Phase::Running => self.phase = Phase::NeedAbort,
            // Create or Complete is in flight: its answer decides.
            _ => {}
        }
        self.failure = Some(reason);
    }

    fn finish(&mut self, outcome: Outcome) {
        self.phase = Phase::Finished;
        self.outcome = Some(outcome);
    }

    /// `CreateMultipartUpload` succeeded with this upload id.
    ///
    /// # Errors
    ///
    /// [`EventError::CreateNotInFlight`] when no `Create` was polled.
    pub fn handle_created(&mut self, upload_id: impl Into<String>) -> Result<(), Error> {
        if self.phase != Phase::CreateInFlight {
            return Err(EventError::CreateNotInFlight.into());
        }
        self.upload_id = Some(upload_id.into());
        self.phase = if self.failure.is_some() {
            Phase::NeedAbort
        } else {
            Phase::Running
        };
        Ok(())
    }

    /// `CreateMultipartUpload` failed: the upload ends as
    /// [`Outcome::NotStarted`] (a driver retries the request itself if it
    /// wants to).
    ///
    /// # Errors
    ///
    /// [`EventError::CreateNotInFlight`] when no `Create` was polled.
    pub fn handle_create_failed(&mut self) -> Result<(), Error> {
        if self.phase != Phase::CreateInFlight {
            return Err(EventError::CreateNotInFlight.into());
        }
        let reason = self
            .failure
            .get_or_insert(FailureReason::CreateFailed)
            .clone();
        self.finish(Outcome::NotStarted { reason });
        Ok(())
    }

    /// A `ReadPart` finished with `len` bytes in the buffer. A read shorter
    /// than the capacity marks the end of the stream; so does a read of 0
    /// bytes (then the part does not exist, unless it is part 1, which is
    /// uploaded empty).
    ///
    /// # Errors
    ///
    /// [`EventError::PartNotReading`] when no read is outstanding for the
    /// part, [`EventError::ReadTooLong`] when `len` exceeds the capacity.
    pub fn handle_part_read(&mut self, number: u32, len: u64) -> Result<(), Error> {
        let capacity = self.reading_capacity(number)?;
        if len > capacity {
            return Err(EventError::ReadTooLong {
                number,
                len,
                capacity,
            }
            .into());
        }
        let Mode::Stream(cursor) = &mut self.mode else {
            return Err(EventError::PartNotReading { number }.into());
        };
        cursor.reading = None;
        let maximum = cursor.plan.maximum_stream_size();
        let start = cursor.offset;
        let (_, last_possible) = cursor.read_for(number);
        if self.failure.is_some() {
            self.drop_slot(number, capacity);
            return Ok(());
        }
        if len == capacity && last_possible {
            self.drop_slot(number, capacity);
            self.fail(FailureReason::StreamTooLarge { maximum });
            return Ok(());
        }
        if len == 0 && number > 1 {
            cursor.last_part = Some(number - 1);
            self.slots.pop();
            self.release_buffer(capacity);
            return Ok(());
        }
        cursor.offset = start + len;
        if len < capacity {
            cursor.last_part = Some(number);
        }
        self.buffered_bytes -= capacity - len;
        let slot = &mut self.slots[(number - 1) as usize];
        slot.end = start + len;
        slot.state = SlotState::Queued;
        self.queued.insert(number);
        Ok(())
    }

    /// Reading the stream for part `number` failed: the upload is abandoned.
    ///
    /// # Errors
    ///
    /// [`EventError::PartNotReading`] when no read is outstanding for the part.
    pub fn handle_read_failed(&mut self, number: u32) -> Result<(), Error> {
        let capacity = self.reading_capacity(number)?;
        if let Mode::Stream(cursor) = &mut self.mode {
            cursor.reading = None;
        }
        self.drop_slot(number, capacity);
        self.fail(FailureReason::ReadFailed { number });
        Ok(())
    }

    fn reading_capacity(&self, number: u32) -> Result<u64, Error> {
        let reading = number
            .checked_sub(1)
            .and_then(|i| self.slots.get(i as usize))
            .is_some_and(|slot| slot.state == SlotState::Reading);
        match &self.mode {
            Mode::Stream(StreamCursor {
                reading: Some(capacity),
                ..
            }) if reading => Ok(*capacity),
            _ => Err(EventError::PartNotReading { number }.into()),
        }
    }

    fn drop_slot(&mut self, number: u32, buffered: u64) {
        if let Some(slot) = self.slot_mut(number) {
            slot.state = SlotState::Dropped;
        }
        self.release_buffer(buffered);
    }

    /// Returns the byte length of part `number` if it is uploading.
    fn uploading_len(&self, number: u32) -> Result<u64, Error> {
        let uploading = number
            .checked_sub(1)
            .and_then(|i| self.slots.get(i as usize))
            .is_some_and(|slot| slot.state == SlotState::Uploading);
        if !uploading {
            return Err(EventError::PartNotUploading { number }.into());
        }
        let range = self.range_of(number);
        Ok(range.end - range.start)
    }

    /// `UploadPart` for part `number` succeeded; `receipt` is what the driver
    /// records for it (typically the ETag and the checksum the server
    /// returned), handed back in [`Action::Complete`]. Results that arrive
    /// after the upload was abandoned are accepted and ignored.
    ///
    /// # Errors
    ///
    /// [`EventError::PartNotUploading`] when the part is not uploading.
    pub fn handle_part_done(&mut self, number: u32, receipt: R) -> Result<(), Error> {
        let len = self.uploading_len(number)?;
        if self.failure.is_some() {
            self.drop_slot(number, len);
            return Ok(());
        }
        self.release_buffer(len);
        self.parts_done += 1;
        self.slots[(number - 1) as usize].state = SlotState::Done;
        self.done.push(CompletedPart {
            number,
            size: len,
            receipt,
        });
        Ok(())
    }

    /// `UploadPart` for part `number` failed. A `retryable` failure is retried
    /// (the part keeps its slot and buffer) while the part has attempts left
    /// (`1 + retries_per_part` in all); otherwise the upload is abandoned.
    ///
    /// # Errors
    ///
    /// [`EventError::PartNotUploading`] when the part is not uploading.
    pub fn handle_part_failed(&mut self, number: u32, retryable: bool) -> Result<(), Error> {
        let len = self.uploading_len(number)?;
        let attempts = self.slots[(number - 1) as usize].attempts;
        if self.failure.is_none() && retryable && attempts <= self.options.retries_per_part() {
            self.slots[(number - 1) as usize].state = SlotState::Queued;
            self.queued.insert(number);
            return Ok(());
        }
        self.drop_slot(number, len);
        self.fail(FailureReason::PartFailed {
            number,
            attempts,
            retryable,
        });
        Ok(())
    }

    /// `CompleteMultipartUpload` succeeded: the upload is finished.
    ///
    /// # Errors
    ///
    /// [`EventError::CompleteNotInFlight`] when no `Complete` was polled.
    pub fn handle_completed(&mut self) -> Result<(), Error> {
        if self.phase != Phase::CompleteInFlight {
            return Err(EventError::CompleteNotInFlight.into());
        }
        // The parts are contiguous from 0, so the last one ends the object.
        let size = self.slots.last().map_or(0, |slot| slot.end);
        self.finish(Outcome::Completed {
            parts: self.parts_done,
            size,
        });
        Ok(())
    }

    /// `CompleteMultipartUpload` failed. A `retryable` failure is retried
    /// within the same budget as a part; otherwise (or after a cancellation)
    /// the upload is aborted.
    ///
    /// # Errors
    ///
    /// [`EventError::CompleteNotInFlight`] when no `Complete` was polled.
    pub fn handle_complete_failed(&mut self, retryable: bool) -> Result<(), Error> {
        if self.phase != Phase::CompleteInFlight {
            return Err(EventError::CompleteNotInFlight.into());
        }
        if self.failure.is_some() {
            self.phase = Phase::NeedAbort;
        } else if retryable && self.complete_attempts <= self.options.retries_per_part() {
            self.phase = Phase::Running;
        } else {
            self.phase = Phase::Running;
            self.fail(FailureReason::CompleteFailed {
                attempts: self.complete_attempts,
            });
        }
        Ok(())
    }

    /// `AbortMultipartUpload` succeeded: the upload is finished.
    ///
    /// # Errors
    ///
    /// [`EventError::AbortNotInFlight`] when no `Abort` was polled.
    pub fn handle_aborted(&mut self) -> Result<(), Error> {
        let reason = self.abort_reason()?;
        self.finish(Outcome::Aborted { reason });
        Ok(())
    }

    /// `AbortMultipartUpload` failed: the upload is finished as
    /// [`Outcome::AbortFailed`], and the upload id may still hold parts.
    ///
    /// # Errors
    ///
    /// [`EventError::AbortNotInFlight`] when no `Abort` was polled.
    pub fn handle_abort_failed(&mut self) -> Result<(), Error> {
        let reason = self.abort_reason()?;
        self.finish(Outcome::AbortFailed { reason });
        Ok(())
    }

    fn abort_reason(&self) -> Result<FailureReason, Error> {
        if self.phase != Phase::AbortInFlight {
            return Err(EventError::AbortNotInFlight.into());
        }
        Ok(self.failure.clone().unwrap_or(FailureReason::Cancelled))
    }

    /// Cancels the upload. Before `Create` was polled it simply ends; while
    /// `Create` is in flight the `Abort` follows its upload id; while
    /// `Complete` is in flight the cancellation only takes effect if
    /// `Complete` fails. Otherwise the next poll returns the single `Abort`.
    /// Calling it again, or after the end, does nothing.
    pub fn handle_cancel(&mut self) {
        if self.phase != Phase::Finished {
            self.fail(FailureReason::Cancelled);
        }
    }

    /// How the upload ended, once it has.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// Whether the upload has ended; `poll_action` then returns `None` forever.
    pub fn is_finished(&self) -> bool {
        self.outcome.is_some()
    }

    /// The upload id, once `Create` succeeded (or from the snapshot).
    pub fn upload_id(&self) -> Option<&str> {
        self.upload_id.as_deref()
    }

    /// Parts holding a concurrency slot (reading, uploading or waiting to).
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Bytes of part data the driver holds right now, by this scheduler's
    /// accounting (capacity while reading, part length afterwards).
    pub fn buffered_bytes(&self) -> u64 {
        self.buffered_bytes
    }

    /// The bound on [`buffered_bytes`](Self::buffered_bytes): for a known
    /// size, `plan part size × concurrency`; for a stream,
    /// `max(options.maximum_buffered_bytes(), largest part buffer so far)`
    /// (parts that outgrow the budget run one at a time).
    pub fn maximum_buffered_bytes(&self) -> u64 {
        self.buffer_budget.max(self.largest_buffer)
    }

    /// Parts uploaded successfully so far.
    pub fn parts_done(&self) -> u32 {
        self.parts_done
    }

    /// The number of parts, once known (immediately for a known size, at the
    /// end of the stream otherwise).
    pub fn part_count(&self) -> Option<u32> {
        match &self.mode {
            Mode::Known(plan) => Some(plan.part_count()),
            Mode::Stream(cursor) => cursor.last_part,
        }
    }

    /// The known-size plan (`None` for a stream).
    pub fn upload_plan(&self) -> Option<&UploadPlan> {
        match &self.mode {
            Mode::Known(plan) => Some(plan),
            Mode::Stream(_) => None,
        }
    }

    /// The stream part schedule (`None` for a known size).
    pub fn stream_plan(&self) -> Option<&StreamPlan> {
        match &self.mode {
            Mode::Known(_) => None,
            Mode::Stream(cursor) => Some(&cursor.plan),
        }
    }
}

impl<R: Clone> UploadScheduler<R> {
    /// Continues an interrupted known-size upload from a snapshot (usually
    /// the one [`UploadSnapshot::reconcile`] returned): no `Create`, and only
    /// the parts the snapshot does not hold are uploaded. The part size is
    /// the snapshot's; concurrency and retries come from `options`.
    ///
    /// # Errors
    ///
    /// [`Error::Snapshot`] when the snapshot's sizes do not fit the options'
    /// limits or a recorded part does not match the plan.
    pub fn resume(snapshot: &UploadSnapshot<R>, options: &MultipartOptions) -> Result<Self, Error> {
        let plan = snapshot.plan(options.limits())?;
        Ok(Self::for_plan(
            plan,
            options,
            Some(snapshot.upload_id().to_owned()),
            snapshot.parts().to_vec(),
        ))
    }

    /// The resumable state of a known-size upload: upload id, sizes and the
    /// parts done so far. `None` before the upload id is known, for streams
    /// (a stream cannot be re-read from an offset) and after the end.
    ///
    /// Building and writing a snapshot costs time proportional to the parts
    /// done (about a microsecond per part), so take one every few parts or
    /// seconds rather than after every part.
    pub fn snapshot(&self) -> Option<UploadSnapshot<R>> {
        let Mode::Known(plan) = &self.mode else {
            return None;
        };
        if self.is_finished() {
            return None;
        }
        let upload_id = self.upload_id.clone()?;
        let parts = match &self.completing {
            Some(parts) => parts.to_vec(),
            None => {
                let mut parts = self.done.clone();
                parts.sort_unstable_by_key(|part| part.number);
                parts
            }
        };
        Some(UploadSnapshot::new(
            upload_id,
            plan.object_size(),
            plan.part_size(),
            parts,
        ))
    }
}

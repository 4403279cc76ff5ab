//! The ranged download plan: concurrent ranged GETs delivered in order.

use std::collections::{BTreeSet, VecDeque};
use std::ops::Range;

use crate::error::{Error, EventError, OptionsError};
use crate::options::MIB;

/// Validated options for a ranged download: range size, concurrent GETs,
/// the reorder window and the retry budget per range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DownloadOptions {
    range_size: u64,
    concurrency: usize,
    window: usize,
    retries_per_range: u32,
}

impl DownloadOptions {
    /// The default range size: 8 MiB.
    pub const DEFAULT_RANGE_SIZE: u64 = 8 * MIB;
    /// The default number of GETs in flight: 4.
    pub const DEFAULT_CONCURRENCY: usize = 4;
    /// The default number of retries of one range after its first attempt: 3.
    pub const DEFAULT_RETRIES_PER_RANGE: u32 = 3;

    /// A builder starting from the defaults (the window defaults to twice
    /// the concurrency).
    pub fn builder() -> DownloadOptionsBuilder {
        DownloadOptionsBuilder {
            range_size: Self::DEFAULT_RANGE_SIZE,
            concurrency: Self::DEFAULT_CONCURRENCY,
            window: None,
            retries_per_range: Self::DEFAULT_RETRIES_PER_RANGE,
        }
    }

    /// The size of each range but the last, in bytes.
    pub fn range_size(&self) -> u64 {
        self.range_size
    }

    /// The largest number of GETs in flight.
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// The reorder window: ranges fetched or in flight ahead of the next
    /// range the consumer reads, at most.
    pub fn window(&self) -> usize {
        self.window
    }

    /// How often one range is retried after its first attempt.
    pub fn retries_per_range(&self) -> u32 {
        self.retries_per_range
    }

    /// The memory bound: `range_size × window` bytes held at once.
    pub fn maximum_buffered_bytes(&self) -> u64 {
        self.range_size.saturating_mul(self.window as u64)
    }
}

impl Default for DownloadOptions {
    fn default() -> Self {
        Self {
            range_size: Self::DEFAULT_RANGE_SIZE,
            concurrency: Self::DEFAULT_CONCURRENCY,
            window: 2 * Self::DEFAULT_CONCURRENCY,
            retries_per_range: Self::DEFAULT_RETRIES_PER_RANGE,
        }
    }
}

/// Builds [`DownloadOptions`]; see [`DownloadOptions::builder`].
#[derive(Debug, Clone, Copy)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct DownloadOptionsBuilder {
    range_size: u64,
    concurrency: usize,
    window: Option<usize>,
    retries_per_range: u32,
}

impl DownloadOptionsBuilder {
    /// Sets the range size in bytes.
    pub fn range_size(mut self, range_size: u64) -> Self {
        self.range_size = range_size;
        self
    }

    /// Sets the largest number of GETs in flight.
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// Sets the reorder window in ranges (at least the concurrency).
    pub fn window(mut self, window: usize) -> Self {
        self.window = Some(window);
        self
    }

    /// Sets how often a range is retried after its first attempt.
    pub fn retries_per_range(mut self, retries: u32) -> Self {
        self.retries_per_range = retries;
        self
    }

    /// Checks the options.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOptions`] for a zero range size or concurrency, or a
    /// window smaller than the concurrency.
    pub fn build(self) -> Result<DownloadOptions, Error> {
        if self.range_size == 0 {
            return Err(OptionsError::ZeroRangeSize.into());
        }
        if self.concurrency == 0 {
            return Err(OptionsError::ZeroConcurrency.into());
        }
        let window = self.window.unwrap_or(self.concurrency.saturating_mul(2));
        if window < self.concurrency {
            return Err(OptionsError::WindowBelowConcurrency {
                window,
                concurrency: self.concurrency,
            }
            .into());
        }
        Ok(DownloadOptions {
            range_size: self.range_size,
            concurrency: self.concurrency,
            window,
            retries_per_range: self.retries_per_range,
        })
    }
}

/// How an object of known size is split into ranges: range `i` (0-based)
/// covers bytes `i × range_size .. min((i + 1) × range_size, object_size)`.
/// An empty object has no ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DownloadPlan {
    object_size: u64,
    range_size: u64,
    range_count: usize,
}

impl DownloadPlan {
    /// Splits `object_size` bytes into ranges of `options.range_size()`.
    pub fn new(object_size: u64, options: &DownloadOptions) -> Self {
        let count = object_size.div_ceil(options.range_size());
        Self {
            object_size,
            range_size: options.range_size(),
            range_count: usize::try_from(count).unwrap_or(usize::MAX),
        }
    }

    /// The object size in bytes.
    pub fn object_size(&self) -> u64 {
        self.object_size
    }

    /// The number of ranges.
    pub fn range_count(&self) -> usize {
        self.range_count
    }

    /// The bytes of range `index`, or `None` past the end. Send them as the
    /// HTTP `Range: bytes=start-(end - 1)` header.
    pub fn range(&self, index: usize) -> Option<Range<u64>> {
        if index >= self.range_count {
            return None;
        }
        let start = (index as u64).saturating_mul(self.range_size);
        Some(start..start.saturating_add(self.range_size).min(self.object_size))
    }
}

/// A GET to perform, from [`DownloadScheduler::poll_fetch`]; answer with
/// [`handle_fetched`](DownloadScheduler::handle_fetched) or
/// [`handle_fetch_failed`](DownloadScheduler::handle_fetch_failed).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a fetch must be performed and its result reported"]
pub struct RangeFetch {
    /// The range index, 0-based.
    pub index: usize,
    /// The object bytes to request.
    pub range: Range<u64>,
    /// 1 for the first attempt, 2 for the first retry, ...
    pub attempt: u32,
}

/// The next bytes in object order, from [`DownloadScheduler::poll_deliver`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery<T> {
    /// The range index, 0-based; deliveries count up from 0 without gaps.
    pub index: usize,
    /// The object bytes this data holds.
    pub range: Range<u64>,
    /// The data the driver reported for the range.
    pub data: T,
}

/// How a download ended, from [`DownloadScheduler::outcome`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DownloadOutcome {
    /// Every range was delivered in order.
    Completed,
    /// A range failed fatally or ran out of retries.
    Failed {
        /// The range index.
        index: usize,
        /// Attempts made, including the first.
        attempts: u32,
        /// Whether the last failure was retryable (then the budget ran out).
        retryable: bool,
    },
    /// [`DownloadScheduler::handle_cancel`] was called.
    Cancelled,
}

#[derive(Debug)]
enum RangeSlot<T> {
    Fetching { attempts: u32 },
    WaitingRetry { attempts: u32 },
    Fetched(T),
}

/// Schedules a ranged download: up to `concurrency` GETs in flight, never
/// more than `window` ranges ahead of the consumer, bytes delivered in order.
///
/// `T` is whatever the driver stores per range (`bytes::Bytes`, `Vec<u8>`,
/// a file region); the scheduler only holds it until its turn comes. Memory
/// is bounded by `window` ranges of the range size
/// ([`DownloadOptions::maximum_buffered_bytes`] while the range size is the options'). The
/// driver should send every GET with `If-Match` set to the ETag of the object it planned
/// from, so all ranges come from one version.
///
/// Ranges are cut in object order as they are handed out, so the driver may change the
/// size of the ranges still to come ([`set_range_size`](Self::set_range_size), e.g. larger
/// when each request costs more than its bytes), and a download resumed after a crash
/// ([`resume`](Self::resume)) fetches only the bytes it does not have: ranges never cover
/// them, and deliveries are of fetched ranges only.
///
/// The drain rule: after creating the scheduler and after every
/// `handle_*` or delivered range, call [`poll_fetch`](Self::poll_fetch)
/// until it returns `None` and start each GET; call
/// [`poll_deliver`](Self::poll_deliver) whenever the consumer can take more
/// bytes. The download is over when [`outcome`](Self::outcome) is `Some`.
///
/// ```
/// use s3_multipart_plan::{DownloadOptions, DownloadOutcome, DownloadScheduler};
///
/// let object: Vec<u8> = (0..=255).collect();
/// let options = DownloadOptions::builder().range_size(10).concurrency(3).build()?;
/// let mut download = DownloadScheduler::new(object.len() as u64, &options);
/// let mut in_flight = Vec::new();
/// let mut received = Vec::new();
/// while download.outcome().is_none() {
///     while let Some(fetch) = download.poll_fetch() {
///         in_flight.push(fetch);
///     }
///     // Finish the newest GET first, so results arrive out of order.
///     if let Some(fetch) = in_flight.pop() {
///         let bytes = object[fetch.range.start as usize..fetch.range.end as usize].to_vec();
///         download.handle_fetched(fetch.index, bytes)?;
///     }
///     while let Some(delivery) = download.poll_deliver() {
///         received.extend_from_slice(&delivery.data);
///     }
/// }
/// assert_eq!(download.outcome(), Some(&DownloadOutcome::Completed));
/// assert_eq!(received, object);
/// # Ok::<(), s3_multipart_plan::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "a scheduler does nothing until its fetches are polled"]
pub struct DownloadScheduler<T> {
    object_size: u64,
    options: DownloadOptions,
    /// The size of the ranges cut from now on.
    range_size: u64,
    /// Bytes a resumed download already has, ascending and disjoint; the ranges cut skip
    /// them.
    present: VecDeque<Range<u64>>,
    /// Where the next range to cut starts.
    next_start: u64,
    /// The next index the consumer gets.
    next_deliver: usize,
    /// Slots for `next_deliver..next_deliver + window.len()`, with their bytes.
    window: VecDeque<(Range<u64>, RangeSlot<T>)>,
    /// Indices waiting to be fetched again, lowest first.
    retries: BTreeSet<usize>,
    in_flight: usize,
    outcome: Option<DownloadOutcome>,
}

impl<T> DownloadScheduler<T> {
    /// Schedules the download of an object of `object_size` bytes.
    pub fn new(object_size: u64, options: &DownloadOptions) -> Self {
        let mut scheduler = Self {
            object_size,
            options: *options,
            range_size: options.range_size(),
            present: VecDeque::new(),
            next_start: 0,
            next_deliver: 0,
            // A large window (a file written by position) grows as it fills.
            window: VecDeque::with_capacity(options.window().min(64)),
            retries: BTreeSet::new(),
            in_flight: 0,
            outcome: None,
        };
        scheduler.complete_if_done();
        scheduler
    }

    /// Schedules the rest of a download that already has the bytes of `present` (a download
    /// resumed after a crash): only the other bytes are fetched and delivered. The ranges
    /// may come in any order and overlap.
    ///
    /// # Errors
    ///
    /// [`OptionsError::RangeOutsideObject`] for an empty range or one past the object's end.
    pub fn resume(
        object_size: u64,
        options: &DownloadOptions,
        present: impl IntoIterator<Item = Range<u64>>,
    ) -> Result<Self, Error> {
        let mut ranges: Vec<Range<u64>> = present.into_iter().collect();
        if let Some(bad) = ranges
            .iter()
            .find(|range| range.start >= range.end || range.end > object_size)
        {
            return Err(OptionsError::RangeOutsideObject {
                start: bad.start,
                end: bad.end,
                object_size,
            }
            .into());
        }
        ranges.sort_by_key(|range| range.start);
        let mut merged: VecDeque<Range<u64>> = VecDeque::with_capacity(ranges.len());
        for range in ranges {
            match merged.back_mut() {
                Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
                _ => merged.push_back(range),
            }
        }
        let mut scheduler = Self::new(object_size, options);
        scheduler.present = merged;
        scheduler.skip_present();
        scheduler.complete_if_done();
        Ok(scheduler)
    }

    /// Cuts the ranges not yet handed out at `range_size` bytes from now on (ranges already
    /// handed out, and their retries, keep their bytes). The window still counts ranges, so
    /// a driver that holds ranges in memory must keep `window × range_size` within its
    /// budget.
    ///
    /// # Errors
    ///
    /// [`OptionsError::ZeroRangeSize`] for 0.
    pub fn set_range_size(&mut self, range_size: u64) -> Result<(), Error> {
        if range_size == 0 {
            return Err(OptionsError::ZeroRangeSize.into());
        }
        self.range_size = range_size;
        Ok(())
    }

    /// The size of the ranges cut from now on.
    pub fn range_size(&self) -> u64 {
        self.range_size
    }

    /// The object size in bytes.
    pub fn object_size(&self) -> u64 {
        self.object_size
    }

    /// Moves the cut past the bytes the download already has.
    fn skip_present(&mut self) {
        while let Some(present) = self.present.front() {
            if present.start > self.next_start {
                break;
            }
            self.next_start = self.next_start.max(present.end);
            self.present.pop_front();
        }
    }

    /// Whether every byte is cut and every cut range delivered.
    fn complete_if_done(&mut self) {
        if self.outcome.is_none() && self.next_start >= self.object_size && self.window.is_empty() {
            self.outcome = Some(DownloadOutcome::Completed);
        }
    }

    /// The next GET to start, or `None` when concurrency or the window is
    /// full, or nothing is left to fetch.
    #[must_use = "a polled fetch must be performed and its result reported"]
    pub fn poll_fetch(&mut self) -> Option<RangeFetch> {
        if self.outcome.is_some() {
            return None;
        }
        if let Some(index) = self.retries.pop_first() {
            let (range, slot) = self.window.get_mut(index - self.next_deliver)?;
            let RangeSlot::WaitingRetry { attempts } = *slot else {
                return None;
            };
            *slot = RangeSlot::Fetching {
                attempts: attempts + 1,
            };
            return Some(RangeFetch {
                index,
                range: range.clone(),
                attempt: attempts + 1,
            });
        }
        if self.in_flight >= self.options.concurrency()
            || self.window.len() >= self.options.window()
            || self.next_start >= self.object_size
        {
            return None;
        }
        let index = self.next_deliver + self.window.len();
        let start = self.next_start;
        let before_present = self.present.front().map_or(u64::MAX, |p| p.start);
        let end = start
            .saturating_add(self.range_size)
            .min(self.object_size)
            .min(before_present);
        self.next_start = end;
        self.skip_present();
        self.window
            .push_back((start..end, RangeSlot::Fetching { attempts: 1 }));
        self.in_flight += 1;
        Some(RangeFetch {
            index,
            range: start..end,
            attempt: 1,
        })
    }

    /// The next range in object order, if it has arrived. Delivering frees
    /// window space: drain [`poll_fetch`](Self::poll_fetch) afterwards.
    #[must_use = "a delivery holds the next bytes of the object"]
    pub fn poll_deliver(&mut self) -> Option<Delivery<T>> {
        if !matches!(self.window.front(), Some((_, RangeSlot::Fetched(_)))) {
            return None;
        }
        let (range, RangeSlot::Fetched(data)) = self.window.pop_front()? else {
            return None;
        };
        let index = self.next_deliver;
        self.next_deliver += 1;
        self.complete_if_done();
        Some(Delivery { index, range, data })
    }

    fn fetching_attempts(&mut self, index: usize) -> Result<(&mut RangeSlot<T>, u32), Error> {
        let slot = index
            .checked_sub(self.next_deliver)
            .and_then(|offset| self.window.get_mut(offset));
        match slot {
            Some((_, slot)) => match *slot {
                RangeSlot::Fetching { attempts } => Ok((slot, attempts)),
                _ => Err(EventError::RangeNotFetching { index }.into()),
            },
            None => Err(EventError::RangeNotFetching { index }.into()),
        }
    }

    /// The GET for range `index` returned its bytes as `data`. Results that
    /// arrive after the download failed or was cancelled are dropped.
    ///
    /// # Errors
    ///
    /// [`EventError::RangeNotFetching`] when the range is not being fetched.
    pub fn handle_fetched(&mut self, index: usize, data: T) -> Result<(), Error> {
        if self.ended_early() {
            return Ok(());
        }
        let (slot, _) = self.fetching_attempts(index)?;
        *slot = RangeSlot::Fetched(data);
        self.in_flight -= 1;
        Ok(())
    }

    /// The GET for range `index` failed. A `retryable` failure is fetched
    /// again while the range has attempts left; otherwise the download fails
    /// and every buffered range is dropped.
    ///
    /// # Errors
    ///
    /// [`EventError::RangeNotFetching`] when the range is not being fetched.
    pub fn handle_fetch_failed(&mut self, index: usize, retryable: bool) -> Result<(), Error> {
        if self.ended_early() {
            return Ok(());
        }
        let retries = self.options.retries_per_range();
        let (slot, attempts) = self.fetching_attempts(index)?;
        if retryable && attempts <= retries {
            *slot = RangeSlot::WaitingRetry { attempts };
            self.retries.insert(index);
        } else {
            self.end(DownloadOutcome::Failed {
                index,
                attempts,
                retryable,
            });
        }
        Ok(())
    }

    /// Cancels the download and drops every buffered range; does nothing
    /// after the end.
    pub fn handle_cancel(&mut self) {
        if self.outcome.is_none() {
            self.end(DownloadOutcome::Cancelled);
        }
    }

    fn ended_early(&self) -> bool {
        matches!(
            self.outcome,
            Some(DownloadOutcome::Failed { .. } | DownloadOutcome::Cancelled)
        )
    }

    fn end(&mut self, outcome: DownloadOutcome) {
        self.window.clear();
        self.retries.clear();
        self.in_flight = 0;
        self.outcome = Some(outcome);
    }

    /// How the download ended, once it has.
    pub fn outcome(&self) -> Option<&DownloadOutcome> {
        self.outcome.as_ref()
    }

    /// GETs in flight (including ranges waiting for a retry).
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Ranges in flight or held for in-order delivery; at most the window.
    pub fn buffered_ranges(&self) -> usize {
        self.window.len()
    }
}

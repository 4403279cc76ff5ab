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
/// is bounded by [`DownloadOptions::maximum_buffered_bytes`] (`window`
/// ranges). The driver should send every GET with `If-Match` set to the
/// ETag of the object it planned from, so all ranges come from one version.
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
    plan: DownloadPlan,
    options: DownloadOptions,
    /// The next index the consumer gets.
    next_deliver: usize,
    /// Slots for `next_deliver..next_deliver + window.len()`.
    window: VecDeque<RangeSlot<T>>,
    /// Indices waiting to be fetched again, lowest first.
    retries: BTreeSet<usize>,
    in_flight: usize,
    outcome: Option<DownloadOutcome>,
}

impl<T> DownloadScheduler<T> {
    /// Schedules the download of an object of `object_size` bytes.
    pub fn new(object_size: u64, options: &DownloadOptions) -> Self {
        let plan = DownloadPlan::new(object_size, options);
        Self {
            plan,
            options: *options,
            next_deliver: 0,
            // A large window (a file written by position) grows as it fills.
            window: VecDeque::with_capacity(options.window().min(64)),
            retries: BTreeSet::new(),
            in_flight: 0,
            outcome: (plan.range_count() == 0).then_some(DownloadOutcome::Completed),
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
            let slot = self.window.get_mut(index - self.next_deliver)?;
            let RangeSlot::WaitingRetry { attempts } = *slot else {
                return None;
            };
            *slot = RangeSlot::Fetching {
                attempts: attempts + 1,
            };
            return Some(self.fetch(index, attempts + 1));
        }
        let index = self.next_deliver + self.window.len();
        if self.in_flight >= self.options.concurrency()
            || self.window.len() >= self.options.window()
            || index >= self.plan.range_count()
        {
            return None;
        }
        self.window.push_back(RangeSlot::Fetching { attempts: 1 });
        self.in_flight += 1;
        Some(self.fetch(index, 1))
    }

    fn fetch(&self, index: usize, attempt: u32) -> RangeFetch {
        RangeFetch {
            index,
            range: self.plan.range(index).unwrap_or(0..0),
            attempt,
        }
    }

    /// The next range in object order, if it has arrived. Delivering frees
    /// window space: drain [`poll_fetch`](Self::poll_fetch) afterwards.
    #[must_use = "a delivery holds the next bytes of the object"]
    pub fn poll_deliver(&mut self) -> Option<Delivery<T>> {
        if !matches!(self.window.front(), Some(RangeSlot::Fetched(_))) {
            return None;
        }
        let RangeSlot::Fetched(data) = self.window.pop_front()? else {
            return None;
        };
        let index = self.next_deliver;
        self.next_deliver += 1;
        if self.next_deliver == self.plan.range_count() {
            self.outcome = Some(DownloadOutcome::Completed);
        }
        Some(Delivery {
            index,
            range: self.plan.range(index).unwrap_or(0..0),
            data,
        })
    }

    fn fetching_attempts(&mut self, index: usize) -> Result<(&mut RangeSlot<T>, u32), Error> {
        let slot = index
            .checked_sub(self.next_deliver)
            .and_then(|offset| self.window.get_mut(offset));
        match slot {
            Some(slot) => match *slot {
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

    /// The plan being downloaded.
    pub fn plan(&self) -> &DownloadPlan {
        &self.plan
    }
}

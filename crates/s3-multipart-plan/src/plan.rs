//! Part sizing: the known-size plan and the stream growth schedule.

use std::ops::Range;

use crate::error::{Error, OptionsError};
use crate::options::{MIB, MultipartOptions, PartLimits};

/// How an object of known size is cut into parts.
///
/// Part `n` (1-based) covers bytes `(n - 1) × part_size ..
/// min(n × part_size, object_size)`: every byte exactly once, every part but
/// the last exactly `part_size` bytes. An empty object is one empty part.
///
/// When the requested part size would need more parts than the limits allow,
/// the part size grows to the smallest multiple of 1 MiB that fits, and
/// [`part_size_grew`](Self::part_size_grew) says so.
///
/// ```
/// use s3_multipart_plan::{MultipartOptions, UploadPlan};
///
/// let options = MultipartOptions::builder().part_size(8 << 20).build()?;
/// // 100 GiB in 8 MiB parts would be 12,800 parts: too many for S3.
/// let plan = UploadPlan::new(100 << 30, &options)?;
/// assert!(plan.part_size_grew());
/// assert_eq!(plan.part_size(), 11 << 20);
/// assert_eq!(plan.part_count(), 9_310);
/// assert_eq!(plan.part_range(9_310), Some(107_373_133_824..107_374_182_400));
/// # Ok::<(), s3_multipart_plan::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UploadPlan {
    object_size: u64,
    part_size: u64,
    part_count: u32,
    requested_part_size: u64,
}

impl UploadPlan {
    /// Plans an upload of `object_size` bytes with the options' part size,
    /// growing it if needed.
    ///
    /// # Errors
    ///
    /// [`Error::ObjectTooLarge`] when the object is above the limits' maximum
    /// object size or cannot fit in the maximum number of maximum-size parts.
    pub fn new(object_size: u64, options: &MultipartOptions) -> Result<Self, Error> {
        let limits = options.limits();
        let requested = options.part_size();
        let maximum = limits.reachable_object_size();
        if object_size > maximum {
            return Err(Error::ObjectTooLarge {
                size: object_size,
                maximum,
            });
        }
        let max_parts = u64::from(limits.max_parts());
        let part_size = if object_size.div_ceil(requested) <= max_parts {
            requested
        } else {
            // Grow to the smallest 1 MiB multiple that fits; clamping to the
            // maximum part size still fits because `object_size` is reachable.
            let needed = object_size.div_ceil(max_parts);
            needed
                .div_ceil(MIB)
                .saturating_mul(MIB)
                .min(limits.max_part_size())
        };
        Ok(Self::with_part_size(object_size, part_size, requested))
    }

    /// A plan with an exact part size, as recorded in a snapshot: no growth.
    pub(crate) fn recorded(
        object_size: u64,
        part_size: u64,
        limits: &PartLimits,
    ) -> Result<Self, Error> {
        if part_size < limits.min_part_size() {
            return Err(OptionsError::PartSizeBelowMinimum {
                part_size,
                minimum: limits.min_part_size(),
            }
            .into());
        }
        if part_size > limits.max_part_size() {
            return Err(OptionsError::PartSizeAboveMaximum {
                part_size,
                maximum: limits.max_part_size(),
            }
            .into());
        }
        let maximum = limits
            .max_object_size()
            .min(part_size.saturating_mul(u64::from(limits.max_parts())));
        if object_size > maximum {
            return Err(Error::ObjectTooLarge {
                size: object_size,
                maximum,
            });
        }
        Ok(Self::with_part_size(object_size, part_size, part_size))
    }

    fn with_part_size(object_size: u64, part_size: u64, requested_part_size: u64) -> Self {
        // Callers guarantee the count fits in `max_parts: u32`.
        let count = object_size.div_ceil(part_size).max(1);
        Self {
            object_size,
            part_size,
            part_count: u32::try_from(count).unwrap_or(u32::MAX),
            requested_part_size,
        }
    }

    /// The object size in bytes.
    pub fn object_size(&self) -> u64 {
        self.object_size
    }

    /// The part size used, in bytes (every part but the last has this size).
    pub fn part_size(&self) -> u64 {
        self.part_size
    }

    /// The part size the options asked for.
    pub fn requested_part_size(&self) -> u64 {
        self.requested_part_size
    }

    /// Whether the part size had to grow to stay within the part count limit.
    pub fn part_size_grew(&self) -> bool {
        self.part_size != self.requested_part_size
    }

    /// The number of parts, at least 1.
    pub fn part_count(&self) -> u32 {
        self.part_count
    }

    /// The byte range of part `number`, or `None` outside `1..=part_count`.
    pub fn part_range(&self, number: u32) -> Option<Range<u64>> {
        if number == 0 || number > self.part_count {
            return None;
        }
        let start = u64::from(number - 1) * self.part_size;
        let end = start.saturating_add(self.part_size).min(self.object_size);
        Some(start..end)
    }

    /// Every part as `(number, range)`, ascending.
    pub fn parts(&self) -> impl Iterator<Item = (u32, Range<u64>)> + '_ {
        (1..=self.part_count).map(|n| (n, self.part_range(n).unwrap_or(0..0)))
    }
}

/// The part sizes for a stream of unknown length.
///
/// Part `n` (1-based) has size `min(first × 2^⌊(n − 1) / interval⌋,
/// max_part_size)`: the first `interval` parts use the options' part size,
/// the next `interval` twice that, and so on. The doubling interval is the
/// **largest** one for which `max_parts` parts still carry the largest
/// reachable object ([`PartLimits::reachable_object_size`]), so small streams
/// keep small parts as long as possible. The schedule depends only on the
/// options, so a retry or a resumed process computes the same parts.
///
/// With the S3 limits and the default 8 MiB parts, sizes double every 1,089
/// parts: parts 1..=1,089 are 8 MiB, 1,090..=2,178 are 16 MiB, ..., and the
/// 10,000 parts carry 5 TiB.
///
/// ```
/// use s3_multipart_plan::{MultipartOptions, StreamPlan};
///
/// let plan = StreamPlan::new(&MultipartOptions::default());
/// assert_eq!(plan.doubling_interval(), 1_089);
/// assert_eq!(plan.part_size(1), 8 << 20);
/// assert_eq!(plan.part_size(1_089), 8 << 20);
/// assert_eq!(plan.part_size(1_090), 16 << 20);
/// assert!(plan.capacity() >= 5 << 40);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamPlan {
    first_part_size: u64,
    doubling_interval: u32,
    limits: PartLimits,
}

impl StreamPlan {
    /// The schedule for the options' part size and limits.
    pub fn new(options: &MultipartOptions) -> Self {
        let limits = *options.limits();
        let first = options.part_size();
        let target = limits.reachable_object_size();
        // Capacity falls as the interval grows; find the largest interval
        // that still reaches the target (or 1, the fastest growth, if none).
        let (mut low, mut high) = (1u32, limits.max_parts());
        if capacity_with(first, high, &limits) >= target {
            low = high;
        }
        while low < high {
            let middle = low + (high - low).div_ceil(2);
            if capacity_with(first, middle, &limits) >= target {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        Self {
            first_part_size: first,
            doubling_interval: low,
            limits,
        }
    }

    /// The size of part `number` (1-based) in bytes; part 0 is treated as 1.
    pub fn part_size(&self, number: u32) -> u64 {
        let doublings = number.saturating_sub(1) / self.doubling_interval;
        let size = self
            .first_part_size
            .checked_shl(doublings)
            .filter(|s| s >> doublings == self.first_part_size)
            .unwrap_or(u64::MAX);
        size.min(self.limits.max_part_size())
    }

    /// How many parts share a size before it doubles.
    pub fn doubling_interval(&self) -> u32 {
        self.doubling_interval
    }

    /// The total number of bytes that `max_parts` parts of this schedule carry.
    pub fn capacity(&self) -> u64 {
        capacity_with(self.first_part_size, self.doubling_interval, &self.limits)
    }

    /// The largest stream this schedule uploads:
    /// `min(capacity, max_object_size)`.
    pub fn maximum_stream_size(&self) -> u64 {
        self.capacity().min(self.limits.max_object_size())
    }

    /// The limits the schedule was made for.
    pub fn limits(&self) -> &PartLimits {
        &self.limits
    }
}

/// Bytes carried by `max_parts` parts doubling every `interval` parts.
fn capacity_with(first: u64, interval: u32, limits: &PartLimits) -> u64 {
    let max_part = limits.max_part_size();
    let mut size = first.min(max_part);
    let mut remaining = u64::from(limits.max_parts());
    let mut total = 0u64;
    while remaining > 0 {
        if size == max_part {
            return total.saturating_add(size.saturating_mul(remaining));
        }
        let group = remaining.min(u64::from(interval));
        total = total.saturating_add(size.saturating_mul(group));
        remaining -= group;
        size = size.saturating_mul(2).min(max_part);
    }
    total
}

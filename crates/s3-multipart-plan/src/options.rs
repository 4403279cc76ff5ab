//! Store limits and validated transfer options.

use crate::error::{Error, LimitsError, OptionsError};

/// One mebibyte, the alignment used when a part size has to grow.
pub const MIB: u64 = 1024 * 1024;

/// What a store allows for multipart uploads.
///
/// [`PartLimits::S3`] (also the [`Default`]) holds Amazon S3's documented
/// limits; S3-compatible stores with other limits build their own with
/// [`PartLimits::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PartLimits {
    min_part_size: u64,
    max_part_size: u64,
    max_parts: u32,
    max_object_size: u64,
}

impl PartLimits {
    /// Amazon S3: parts of 5 MiB to 5 GiB (the last part may be smaller),
    /// at most 10,000 parts, objects of at most 5 TiB.
    pub const S3: Self = Self {
        min_part_size: 5 * MIB,
        max_part_size: 5 * 1024 * MIB,
        max_parts: 10_000,
        max_object_size: 5 * 1024 * 1024 * MIB,
    };

    /// Limits for another store.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidLimits`] when a value is zero or the minimum part size
    /// is above the maximum.
    pub fn new(
        min_part_size: u64,
        max_part_size: u64,
        max_parts: u32,
        max_object_size: u64,
    ) -> Result<Self, Error> {
        if min_part_size == 0 {
            return Err(LimitsError::ZeroMinimumPartSize.into());
        }
        if min_part_size > max_part_size {
            return Err(LimitsError::MinimumAboveMaximum {
                minimum: min_part_size,
                maximum: max_part_size,
            }
            .into());
        }
        if max_parts == 0 {
            return Err(LimitsError::ZeroMaximumParts.into());
        }
        if max_object_size == 0 {
            return Err(LimitsError::ZeroMaximumObjectSize.into());
        }
        Ok(Self {
            min_part_size,
            max_part_size,
            max_parts,
            max_object_size,
        })
    }

    /// The smallest size of every part but the last, in bytes.
    pub fn min_part_size(&self) -> u64 {
        self.min_part_size
    }

    /// The largest size of any part, in bytes.
    pub fn max_part_size(&self) -> u64 {
        self.max_part_size
    }

    /// The largest number of parts in one upload.
    pub fn max_parts(&self) -> u32 {
        self.max_parts
    }

    /// The largest object size, in bytes.
    pub fn max_object_size(&self) -> u64 {
        self.max_object_size
    }

    /// The largest object that can actually be uploaded: the smaller of the
    /// object size limit and `max_parts × max_part_size`.
    pub fn reachable_object_size(&self) -> u64 {
        self.max_object_size
            .min(self.max_part_size.saturating_mul(u64::from(self.max_parts)))
    }
}

impl Default for PartLimits {
    fn default() -> Self {
        Self::S3
    }
}

/// Validated options for a multipart upload: part size, concurrency and the
/// retry budget per part, checked against [`PartLimits`].
///
/// Build with [`MultipartOptions::builder`]; the values can only exist in a
/// valid combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MultipartOptions {
    part_size: u64,
    concurrency: usize,
    retries_per_part: u32,
    limits: PartLimits,
}

impl MultipartOptions {
    /// The default part size: 8 MiB.
    pub const DEFAULT_PART_SIZE: u64 = 8 * MIB;
    /// The default number of parts in flight: 4.
    pub const DEFAULT_CONCURRENCY: usize = 4;
    /// The default number of retries of one part after its first attempt: 3.
    pub const DEFAULT_RETRIES_PER_PART: u32 = 3;

    /// A builder starting from the defaults and [`PartLimits::S3`].
    pub fn builder() -> MultipartOptionsBuilder {
        MultipartOptionsBuilder {
            options: Self {
                part_size: Self::DEFAULT_PART_SIZE,
                concurrency: Self::DEFAULT_CONCURRENCY,
                retries_per_part: Self::DEFAULT_RETRIES_PER_PART,
                limits: PartLimits::S3,
            },
        }
    }

    /// The requested part size in bytes (a plan may grow it, see
    /// [`UploadPlan`](crate::UploadPlan)).
    pub fn part_size(&self) -> u64 {
        self.part_size
    }

    /// The largest number of parts in flight at once.
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// How often one part (or the Complete request) is retried after its
    /// first attempt.
    pub fn retries_per_part(&self) -> u32 {
        self.retries_per_part
    }

    /// The store limits these options were checked against.
    pub fn limits(&self) -> &PartLimits {
        &self.limits
    }

    /// The memory bound the driver must respect: `part_size × concurrency`
    /// bytes of part data held at once.
    ///
    /// A known-size plan whose part size grew holds up to
    /// `grown part size × concurrency`, and a stream whose parts grew past this
    /// bound holds at most one such part; the scheduler reports the exact bound
    /// in [`UploadScheduler::maximum_buffered_bytes`](crate::UploadScheduler::maximum_buffered_bytes).
    pub fn maximum_buffered_bytes(&self) -> u64 {
        self.part_size.saturating_mul(self.concurrency as u64)
    }
}

impl Default for MultipartOptions {
    fn default() -> Self {
        // The defaults are within the S3 limits, so no validation is needed.
        Self::builder().options
    }
}

/// Builds [`MultipartOptions`]; see [`MultipartOptions::builder`].
#[derive(Debug, Clone, Copy)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct MultipartOptionsBuilder {
    options: MultipartOptions,
}

impl MultipartOptionsBuilder {
    /// Sets the part size in bytes.
    pub fn part_size(mut self, part_size: u64) -> Self {
        self.options.part_size = part_size;
        self
    }

    /// Sets the largest number of parts in flight.
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.options.concurrency = concurrency;
        self
    }

    /// Sets how often a part is retried after its first attempt.
    pub fn retries_per_part(mut self, retries: u32) -> Self {
        self.options.retries_per_part = retries;
        self
    }

    /// Sets the store limits.
    pub fn limits(mut self, limits: PartLimits) -> Self {
        self.options.limits = limits;
        self
    }

    /// Checks the options against the limits.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidOptions`] when the part size is outside the limits or
    /// the concurrency is zero.
    pub fn build(self) -> Result<MultipartOptions, Error> {
        let o = self.options;
        if o.part_size < o.limits.min_part_size {
            return Err(OptionsError::PartSizeBelowMinimum {
                part_size: o.part_size,
                minimum: o.limits.min_part_size,
            }
            .into());
        }
        if o.part_size > o.limits.max_part_size {
            return Err(OptionsError::PartSizeAboveMaximum {
                part_size: o.part_size,
                maximum: o.limits.max_part_size,
            }
            .into());
        }
        if o.concurrency == 0 {
            return Err(OptionsError::ZeroConcurrency.into());
        }
        Ok(o)
    }
}

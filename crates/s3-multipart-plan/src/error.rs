//! The crate's error type: one enum with nested kinds.

use std::fmt;

/// Everything that can go wrong in this crate.
///
/// Every variant carries enough detail for a message that tells the caller
/// what was wrong; match on the nested kinds for programmatic handling.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A [`PartLimits`](crate::PartLimits) value is inconsistent.
    InvalidLimits(LimitsError),
    /// [`MultipartOptions`](crate::MultipartOptions) or
    /// [`DownloadOptions`](crate::DownloadOptions) do not fit the limits.
    InvalidOptions(OptionsError),
    /// The object cannot be uploaded within the limits.
    ObjectTooLarge {
        /// The object size in bytes.
        size: u64,
        /// The largest size the limits allow.
        maximum: u64,
    },
    /// A resumable snapshot could not be parsed or does not fit the options.
    Snapshot(SnapshotError),
    /// A `handle_*` call did not match the state machine (a driver bug).
    UnexpectedEvent(EventError),
}

/// Why a [`PartLimits`](crate::PartLimits) value was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitsError {
    /// The minimum part size is zero.
    ZeroMinimumPartSize,
    /// The minimum part size is above the maximum part size.
    MinimumAboveMaximum {
        /// The minimum part size.
        minimum: u64,
        /// The maximum part size.
        maximum: u64,
    },
    /// The maximum part count is zero.
    ZeroMaximumParts,
    /// The maximum object size is zero.
    ZeroMaximumObjectSize,
}

/// Why transfer options were rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionsError {
    /// The part size is below the store's minimum.
    PartSizeBelowMinimum {
        /// The requested part size.
        part_size: u64,
        /// The minimum the limits allow.
        minimum: u64,
    },
    /// The part size is above the store's maximum.
    PartSizeAboveMaximum {
        /// The requested part size.
        part_size: u64,
        /// The maximum the limits allow.
        maximum: u64,
    },
    /// The concurrency is zero.
    ZeroConcurrency,
    /// The download range size is zero.
    ZeroRangeSize,
    /// The download reorder window is smaller than the concurrency.
    WindowBelowConcurrency {
        /// The requested window, in ranges.
        window: usize,
        /// The requested concurrency.
        concurrency: usize,
    },
    /// A resumed download names bytes it has that are empty or lie past the object's end.
    RangeOutsideObject {
        /// The range's first byte.
        start: u64,
        /// The byte after the range's last.
        end: u64,
        /// The object's size.
        object_size: u64,
    },
}

/// Why a snapshot was rejected, with the 1-based line where it happened
/// (0 when the problem is not tied to one line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    /// 1-based line number, or 0 for whole-document problems.
    pub line: usize,
    /// What was wrong.
    pub kind: SnapshotErrorKind,
}

/// What was wrong with a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotErrorKind {
    /// The first line is not a snapshot header.
    MissingHeader,
    /// The header names a format version this crate does not read.
    UnsupportedVersion(String),
    /// A line starts with a key this version does not know.
    UnknownKey(String),
    /// A field appears twice.
    DuplicateField(&'static str),
    /// A required field is missing.
    MissingField(&'static str),
    /// A number could not be parsed.
    InvalidNumber(String),
    /// A percent-encoded value is malformed or not UTF-8.
    InvalidEncoding(String),
    /// A part line has the wrong number of fields.
    MalformedPart,
    /// [`PartReceipt::from_snapshot_text`](crate::PartReceipt::from_snapshot_text)
    /// rejected a part's receipt text; this is its reason.
    InvalidReceipt(String),
    /// Part numbers are not strictly ascending.
    PartsOutOfOrder {
        /// The offending part number.
        number: u32,
    },
    /// A part does not exist in the plan, or its size differs from the plan.
    PartOutsidePlan {
        /// The offending part number.
        number: u32,
    },
    /// The `end` line is missing: the snapshot was cut short.
    Truncated,
    /// Text follows the `end` line.
    TrailingData,
    /// The part size or object size does not fit the options' limits.
    Plan(Box<Error>),
}

/// A `handle_*` call that the state machine did not expect.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventError {
    /// A part result for a part that is not uploading.
    PartNotUploading {
        /// The part number reported.
        number: u32,
    },
    /// A read result for a part that was not being read.
    PartNotReading {
        /// The part number reported.
        number: u32,
    },
    /// A read result longer than the capacity that was asked for.
    ReadTooLong {
        /// The part number reported.
        number: u32,
        /// The reported length.
        len: u64,
        /// The capacity of the `ReadPart` action.
        capacity: u64,
    },
    /// A create result while no `Create` was in flight.
    CreateNotInFlight,
    /// A complete result while no `Complete` was in flight.
    CompleteNotInFlight,
    /// An abort result while no `Abort` was in flight.
    AbortNotInFlight,
    /// A download result for a range that is not being fetched.
    RangeNotFetching {
        /// The range index reported.
        index: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidLimits(e) => write!(f, "invalid part limits: {e}"),
            Self::InvalidOptions(e) => write!(f, "invalid transfer options: {e}"),
            Self::ObjectTooLarge { size, maximum } => write!(
                f,
                "object of {size} bytes is larger than the {maximum} bytes the part limits allow"
            ),
            Self::Snapshot(e) => write!(f, "invalid upload snapshot: {e}"),
            Self::UnexpectedEvent(e) => write!(f, "unexpected event: {e}"),
        }
    }
}

impl fmt::Display for LimitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroMinimumPartSize => f.write_str("the minimum part size must be at least 1"),
            Self::MinimumAboveMaximum { minimum, maximum } => write!(
                f,
                "the minimum part size {minimum} is above the maximum part size {maximum}"
            ),
            Self::ZeroMaximumParts => f.write_str("the maximum part count must be at least 1"),
            Self::ZeroMaximumObjectSize => {
                f.write_str("the maximum object size must be at least 1")
            }
        }
    }
}

impl fmt::Display for OptionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PartSizeBelowMinimum { part_size, minimum } => write!(
                f,
                "part size {part_size} is below the minimum part size {minimum}"
            ),
            Self::PartSizeAboveMaximum { part_size, maximum } => write!(
                f,
                "part size {part_size} is above the maximum part size {maximum}"
            ),
            Self::ZeroConcurrency => f.write_str("concurrency must be at least 1"),
            Self::ZeroRangeSize => f.write_str("the download range size must be at least 1"),
            Self::WindowBelowConcurrency {
                window,
                concurrency,
            } => write!(
                f,
                "the reorder window of {window} ranges is smaller than the concurrency {concurrency}"
            ),
            Self::RangeOutsideObject {
                start,
                end,
                object_size,
            } => write!(
                f,
                "bytes {start}..{end} are empty or lie beyond the object's {object_size} bytes"
            ),
        }
    }
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.kind)
        } else {
            self.kind.fmt(f)
        }
    }
}

impl fmt::Display for SnapshotErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingHeader => {
                f.write_str("the first line is not `s3-multipart-snapshot <version>`")
            }
            Self::UnsupportedVersion(v) => write!(
                f,
                "snapshot format version {v:?} is not supported (this crate reads version 2)"
            ),
            Self::UnknownKey(k) => write!(f, "unknown key {k:?}"),
            Self::DuplicateField(k) => write!(f, "field `{k}` appears more than once"),
            Self::MissingField(k) => write!(f, "required field `{k}` is missing"),
            Self::InvalidNumber(s) => write!(f, "{s:?} is not a valid number"),
            Self::InvalidEncoding(s) => write!(f, "{s:?} is not valid percent-encoded UTF-8"),
            Self::MalformedPart => {
                f.write_str("a part line needs exactly `part <number> <size> <receipt>`")
            }
            Self::InvalidReceipt(reason) => write!(f, "the part's receipt is invalid: {reason}"),
            Self::PartsOutOfOrder { number } => {
                write!(f, "part {number} is not above the previous part number")
            }
            Self::PartOutsidePlan { number } => write!(
                f,
                "part {number} does not match the upload plan (number or size)"
            ),
            Self::Truncated => f.write_str("the `end` line is missing; the snapshot was cut short"),
            Self::TrailingData => f.write_str("text follows the `end` line"),
            Self::Plan(e) => write!(f, "the recorded sizes do not fit the options: {e}"),
        }
    }
}

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PartNotUploading { number } => {
                write!(f, "part {number} was reported but is not uploading")
            }
            Self::PartNotReading { number } => {
                write!(
                    f,
                    "part {number} was reported as read but no read was asked for it"
                )
            }
            Self::ReadTooLong {
                number,
                len,
                capacity,
            } => write!(
                f,
                "part {number} was reported with {len} bytes but only {capacity} were asked for"
            ),
            Self::CreateNotInFlight => {
                f.write_str("a create result arrived but no Create is in flight")
            }
            Self::CompleteNotInFlight => {
                f.write_str("a complete result arrived but no Complete is in flight")
            }
            Self::AbortNotInFlight => {
                f.write_str("an abort result arrived but no Abort is in flight")
            }
            Self::RangeNotFetching { index } => {
                write!(f, "range {index} was reported but is not being fetched")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Snapshot(SnapshotError {
                kind: SnapshotErrorKind::Plan(inner),
                ..
            }) => Some(inner.as_ref()),
            _ => None,
        }
    }
}

impl From<LimitsError> for Error {
    fn from(e: LimitsError) -> Self {
        Self::InvalidLimits(e)
    }
}

impl From<OptionsError> for Error {
    fn from(e: OptionsError) -> Self {
        Self::InvalidOptions(e)
    }
}

impl From<SnapshotError> for Error {
    fn from(e: SnapshotError) -> Self {
        Self::Snapshot(e)
    }
}

impl From<EventError> for Error {
    fn from(e: EventError) -> Self {
        Self::UnexpectedEvent(e)
    }
}

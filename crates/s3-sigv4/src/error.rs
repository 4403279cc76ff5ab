//! The crate's error type: one `#[non_exhaustive]` enum with a nested kind per
//! area, so callers can match as coarsely or as finely as they need.

use std::fmt;
use std::time::Duration;

/// Everything that can go wrong while signing. Every variant is caused by the
/// input; none is transient, so retrying the same call gives the same error.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A header name or value cannot be signed or sent.
    InvalidHeader(InvalidHeader),
    /// The request URI (path, query or authority) is malformed.
    InvalidUri(InvalidUri),
    /// A presigned URL expiry outside 1 second ..= 7 days.
    InvalidExpiry(InvalidExpiry),
    /// A signing time that cannot be represented (before 1970 or after 9999).
    InvalidTime(InvalidTime),
    /// A credential, region or service string that cannot appear in a scope.
    InvalidParameter(InvalidParameter),
    /// The aws-chunked encoder was driven in a way that breaks its framing.
    Streaming(StreamingError),
}

/// Why a header was rejected.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidHeader {
    /// The value contains a carriage return or line feed (header injection).
    LineBreakInValue {
        /// Name of the offending header.
        name: String,
    },
    /// The value contains a control character other than horizontal tab.
    ControlCharacterInValue {
        /// Name of the offending header.
        name: String,
    },
    /// The name contains a byte that is not a lowercase-able ASCII token character.
    InvalidName {
        /// The rejected name, lossily converted for display.
        name: String,
    },
    /// A trailer named `x-amz-trailer-signature`: that line is the trailer's signature,
    /// written by the encoder; a second one would make the body undecodable.
    ReservedTrailerName,
}

/// Why a URI was rejected.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidUri {
    /// A `%` not followed by two hexadecimal digits.
    BadPercentEncoding {
        /// The component (`"path"` or `"query"`) that holds the bad escape.
        component: &'static str,
        /// Byte offset of the `%` inside that component.
        offset: usize,
    },
    /// The path does not start with `/`.
    RelativePath,
    /// Neither a `host` header nor a URI authority names the host to sign.
    MissingHost,
    /// The presigned URL could not be assembled into an `http::Uri`.
    Unrepresentable(String),
}

/// A presigned URL expiry outside the range S3 accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidExpiry {
    /// The expiry that was asked for.
    pub requested: Duration,
}

/// Why a signing time was rejected.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidTime {
    /// The time lies before the Unix epoch.
    BeforeUnixEpoch,
    /// The year is after 9999 and has no four-digit ISO 8601 form.
    YearOutOfRange,
    /// A calendar component (month, day, hour, minute, second) is out of range.
    InvalidComponent(&'static str),
    /// An `x-amz-date` string that is not `YYYYMMDD'T'HHMMSS'Z'`.
    Unparsable,
}

/// Why a scope parameter was rejected.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvalidParameter {
    /// The access key id is empty or contains `/`, whitespace or control bytes.
    AccessKeyId,
    /// The secret access key is empty.
    SecretAccessKey,
    /// The session token contains control characters or line breaks.
    SessionToken,
    /// The region is empty or contains `/`, whitespace or non-ASCII bytes; or
    /// a SigV4a region set is not `*` or a comma-separated list of lowercase
    /// regions (each may end in `*`).
    Region,
    /// The service is empty or contains `/`, whitespace or non-ASCII bytes.
    Service,
    /// The payload description cannot be used here (for example a streaming
    /// payload in a presigned URL).
    Payload(&'static str),
    /// The request method is not an uppercase token. HTTP methods are
    /// case-sensitive and S3 knows only uppercase ones: a `get` would be signed
    /// as `get` and refused by the server, so it is refused here.
    Method {
        /// The method as given.
        method: String,
    },
}

/// Misuse of the aws-chunked encoder.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamingError {
    /// The chunk size is below S3's 8 KiB minimum.
    ChunkSizeTooSmall {
        /// The chunk size that was asked for.
        chunk_size: usize,
    },
    /// A chunk other than the last one is not exactly `chunk_size` bytes long.
    ChunkLength {
        /// The configured chunk size.
        expected: usize,
        /// The length that was passed.
        actual: usize,
    },
    /// More payload bytes than the declared decoded length.
    TooMuchData {
        /// The declared decoded length.
        declared: u64,
    },
    /// The final chunk was requested before the declared length was written.
    MissingData {
        /// The declared decoded length.
        declared: u64,
        /// The number of bytes written so far.
        written: u64,
    },
    /// The output buffer is too small for what has to be written.
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// The trailer passed at the end does not match the declared trailer name
    /// or value length (the encoded length would be wrong).
    TrailerMismatch,
    /// The encoder already wrote its final chunk.
    Finished,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidHeader(e) => write!(f, "invalid header: {e}"),
            Self::InvalidUri(e) => write!(f, "invalid URI: {e}"),
            Self::InvalidExpiry(e) => write!(
                f,
                "invalid presigned URL expiry of {} s: must be between 1 s and 604800 s (7 days)",
                e.requested.as_secs_f64()
            ),
            Self::InvalidTime(e) => write!(f, "invalid signing time: {e}"),
            Self::InvalidParameter(e) => write!(f, "invalid signing parameter: {e}"),
            Self::Streaming(e) => write!(f, "aws-chunked encoding: {e}"),
        }
    }
}

impl fmt::Display for InvalidHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LineBreakInValue { name } => {
                write!(f, "value of `{name}` contains CR or LF")
            }
            Self::ControlCharacterInValue { name } => {
                write!(f, "value of `{name}` contains a control character")
            }
            Self::InvalidName { name } => {
                write!(f, "`{name}` is not a valid ASCII header name")
            }
            Self::ReservedTrailerName => f.write_str(
                "`x-amz-trailer-signature` cannot name a trailer: it is the line that signs \
                 the trailers",
            ),
        }
    }
}

impl fmt::Display for InvalidUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadPercentEncoding { component, offset } => write!(
                f,
                "`%` at byte {offset} of the {component} is not followed by two hex digits"
            ),
            Self::RelativePath => f.write_str("the path must start with `/`"),
            Self::MissingHost => {
                f.write_str("no `host` header and no URI authority to take the host from")
            }
            Self::Unrepresentable(reason) => write!(f, "cannot build the URI: {reason}"),
        }
    }
}

impl fmt::Display for InvalidTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BeforeUnixEpoch => f.write_str("time is before 1970-01-01T00:00:00Z"),
            Self::YearOutOfRange => f.write_str("year is after 9999"),
            Self::InvalidComponent(what) => write!(f, "{what} is out of range"),
            Self::Unparsable => f.write_str("expected the form YYYYMMDDTHHMMSSZ"),
        }
    }
}

impl fmt::Display for InvalidParameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AccessKeyId => f.write_str(
                "access key id must be non-empty and free of `/`, whitespace and control characters",
            ),
            Self::SecretAccessKey => f.write_str("secret access key must be non-empty"),
            Self::SessionToken => {
                f.write_str("session token must not contain control characters or line breaks")
            }
            Self::Region => f.write_str(
                "region must be non-empty printable ASCII without `/` or whitespace \
                 (a SigV4a region set: `*` or comma-separated lowercase regions)",
            ),
            Self::Service => f.write_str(
                "service must be non-empty printable ASCII without `/` or whitespace",
            ),
            Self::Payload(why) => f.write_str(why),
            Self::Method { method } => write!(
                f,
                "method {method:?} must be an uppercase token such as GET or PUT \
                 (methods are case-sensitive)"
            ),
        }
    }
}

impl fmt::Display for StreamingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ChunkSizeTooSmall { chunk_size } => {
                write!(f, "chunk size {chunk_size} is below the 8192-byte minimum")
            }
            Self::ChunkLength { expected, actual } => write!(
                f,
                "every chunk but the last must be {expected} bytes, got {actual}"
            ),
            Self::TooMuchData { declared } => {
                write!(
                    f,
                    "payload exceeds the declared decoded length of {declared} bytes"
                )
            }
            Self::MissingData { declared, written } => write!(
                f,
                "final chunk requested after {written} of {declared} declared bytes"
            ),
            Self::BufferTooSmall { needed, available } => {
                write!(f, "output buffer holds {available} bytes, {needed} needed")
            }
            Self::TrailerMismatch => {
                f.write_str("trailer name or value length differs from the declared trailer")
            }
            Self::Finished => f.write_str("the final chunk was already written"),
        }
    }
}

impl std::error::Error for Error {}

impl From<InvalidHeader> for Error {
    fn from(e: InvalidHeader) -> Self {
        Self::InvalidHeader(e)
    }
}
impl From<InvalidUri> for Error {
    fn from(e: InvalidUri) -> Self {
        Self::InvalidUri(e)
    }
}
impl From<InvalidTime> for Error {
    fn from(e: InvalidTime) -> Self {
        Self::InvalidTime(e)
    }
}
impl From<InvalidParameter> for Error {
    fn from(e: InvalidParameter) -> Self {
        Self::InvalidParameter(e)
    }
}
impl From<StreamingError> for Error {
    fn from(e: StreamingError) -> Self {
        Self::Streaming(e)
    }
}

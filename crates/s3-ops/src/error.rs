//! The crate's error type, the S3 service error and retry classification.

use std::fmt;
use std::time::SystemTime;

use http::StatusCode;

use crate::checksum::ChecksumAlgorithm;

/// Everything that can go wrong while encoding a request or decoding a response.
///
/// Local mistakes ([`Error::InvalidInput`]) are reported before anything is sent; the
/// service's own errors ([`Error::Service`]) carry the decoded S3 error document. Ask
/// [`Error::retry_class`] whether (and how) to retry instead of guessing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The request was rejected locally; nothing was (or should be) sent.
    InvalidInput(InvalidInput),
    /// S3 answered with an error (non-2xx status, or an error document inside a 200).
    Service(Box<S3Error>),
    /// The response could not be understood.
    MalformedResponse(MalformedResponse),
    /// A checksum returned by the server did not match the data received.
    ChecksumMismatch {
        /// The algorithm that was checked.
        algorithm: ChecksumAlgorithm,
        /// The base64 value the server announced.
        expected: String,
        /// The base64 value computed over the received bytes.
        computed: String,
    },
    /// Presigning failed in the signer (bad credentials, expiry out of range, ...).
    Presign(s3_sigv4::Error),
    /// The request must be signed with SigV4a (it addresses a Multi-Region Access Point),
    /// and this build has no SigV4a: the `sigv4a` feature of s3-ops (which s3-wire and
    /// s3-wire-tokio forward) is off.
    SigV4aDisabled,
}

impl Error {
    /// How a transport should react to this error.
    pub fn retry_class(&self) -> RetryClass {
        match self {
            Error::Service(error) => error.retry_class(),
            // A body that ends early means the connection broke mid-response.
            Error::MalformedResponse(MalformedResponse::Xml { error, .. })
                if matches!(
                    error.kind(),
                    s3_xml::ErrorKind::Malformed(s3_xml::Malformed::UnexpectedEof)
                ) =>
            {
                RetryClass::Transient
            }
            // Corruption in flight: the same request may well succeed next time.
            Error::ChecksumMismatch { .. } => RetryClass::Transient,
            _ => RetryClass::NotRetryable,
        }
    }

    /// True if a listing says `EncodingType=url` but holds values the server did not
    /// encode ([`s3_xml::ErrorKind::NotUrlEncoded`]): the same request without
    /// `url_encoding` reads it correctly.
    pub fn is_unencoded_listing(&self) -> bool {
        matches!(
            self,
            Error::MalformedResponse(MalformedResponse::Xml { error, .. })
                if matches!(error.kind(), s3_xml::ErrorKind::NotUrlEncoded { .. })
        )
    }

    /// True if a ListObjectsV2 answer was a ListObjects (version 1) page
    /// ([`MalformedResponse::ListedAsVersion1`]): the store serves only version 1.
    pub fn is_version_1_listing(&self) -> bool {
        matches!(
            self,
            Error::MalformedResponse(MalformedResponse::ListedAsVersion1)
        )
    }

    /// The S3 service error, if this is one.
    pub fn service_error(&self) -> Option<&S3Error> {
        match self {
            Error::Service(error) => Some(error),
            _ => None,
        }
    }

    pub(crate) fn malformed(what: impl Into<String>) -> Self {
        Error::MalformedResponse(MalformedResponse::Invalid(what.into()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidInput(input) => write!(f, "invalid request: {input}"),
            Error::Service(error) => write!(f, "{error}"),
            Error::MalformedResponse(malformed) => write!(f, "malformed S3 response: {malformed}"),
            Error::ChecksumMismatch {
                algorithm,
                expected,
                computed,
            } => write!(
                f,
                "{algorithm} checksum mismatch: server sent {expected}, received data hashes to {computed}"
            ),
            Error::Presign(error) => write!(f, "presigning failed: {error}"),
            Error::SigV4aDisabled => f.write_str(
                "Multi-Region Access Points need SigV4a: enable the `sigv4a` feature of \
                 s3-wire (or of s3-wire-tokio, s3-ops)",
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::MalformedResponse(MalformedResponse::Xml { error, .. }) => Some(error),
            Error::Presign(error) => Some(error),
            _ => None,
        }
    }
}

impl From<InvalidInput> for Error {
    fn from(input: InvalidInput) -> Self {
        Error::InvalidInput(input)
    }
}

impl From<S3Error> for Error {
    fn from(error: S3Error) -> Self {
        Error::Service(Box::new(error))
    }
}

/// A request that must not be sent, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidInput {
    /// The bucket name breaks S3's naming rules.
    BucketName {
        /// The rejected name.
        name: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// Object keys must not be empty.
    EmptyKey,
    /// Object keys are at most 1024 bytes of UTF-8.
    KeyTooLong {
        /// The key's length in bytes.
        len: usize,
    },
    /// A header value contains CR, LF or another control character.
    HeaderValue {
        /// The header the value was meant for.
        name: String,
    },
    /// A user-metadata name is not a valid HTTP header token.
    MetadataName {
        /// The rejected name.
        name: String,
    },
    /// User metadata (names + values, UTF-8 bytes) exceeds S3's 2 KB limit.
    MetadataTooLarge {
        /// The total size in bytes.
        size: usize,
    },
    /// DeleteObjects takes 1 to 1000 keys.
    DeleteBatchSize {
        /// The number of keys given.
        count: usize,
    },
    /// A byte range is empty or reversed.
    InvalidRange {
        /// Why.
        reason: String,
    },
    /// The endpoint URL or region is unusable.
    Endpoint {
        /// Why.
        reason: String,
    },
    /// A parameter is out of the range S3 accepts (part numbers, max-keys, expiry, ...).
    Parameter {
        /// The parameter's name as S3 documents it.
        name: &'static str,
        /// Why it was rejected.
        reason: String,
    },
    /// The store's provider profile says it would mishandle the request (ignore a
    /// conditional write, not honour a presigned URL that long, ...).
    Unsupported(crate::provider::Unsupported),
}

impl fmt::Display for InvalidInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidInput::BucketName { name, reason } => {
                write!(f, "bucket name {name:?} is invalid: {reason}")
            }
            InvalidInput::EmptyKey => f.write_str("object key is empty"),
            InvalidInput::KeyTooLong { len } => {
                write!(f, "object key is {len} bytes long; S3 allows at most 1024")
            }
            InvalidInput::HeaderValue { name } => write!(
                f,
                "value for header {name} contains CR, LF or another control character"
            ),
            InvalidInput::MetadataName { name } => {
                write!(f, "metadata name {name:?} is not a valid HTTP header name")
            }
            InvalidInput::MetadataTooLarge { size } => write!(
                f,
                "user metadata is {size} bytes; S3 allows at most 2048 (names + values)"
            ),
            InvalidInput::DeleteBatchSize { count } => {
                write!(f, "DeleteObjects takes 1 to 1000 keys, got {count}")
            }
            InvalidInput::InvalidRange { reason } => write!(f, "invalid byte range: {reason}"),
            InvalidInput::Endpoint { reason } => write!(f, "invalid endpoint: {reason}"),
            InvalidInput::Parameter { name, reason } => write!(f, "invalid {name}: {reason}"),
            InvalidInput::Unsupported(unsupported) => write!(f, "{unsupported}"),
        }
    }
}

/// Why a response could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MalformedResponse {
    /// The XML body could not be decoded (truncated, not well-formed, wrong document,
    /// over the size limit).
    Xml {
        /// The document that was expected (`ListBucketResult`, ...).
        document: &'static str,
        /// What the XML decoder found.
        error: s3_xml::Error,
    },
    /// A ListObjectsV2 answer that is a ListObjects (version 1) page: the store ignored
    /// `list-type=2` (a truncated page without `NextContinuationToken`, or keys before the
    /// `start-after` asked for). The same listing with ListObjects reads it.
    ListedAsVersion1,
    /// A header has an unexpected value.
    Invalid(String),
}

impl fmt::Display for MalformedResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MalformedResponse::Xml { document, error } => {
                write!(f, "cannot decode {document} document: {error}")
            }
            MalformedResponse::ListedAsVersion1 => f.write_str(
                "the store answered ListObjectsV2 as ListObjects (version 1), ignoring \
                 list-type=2: a truncated page without NextContinuationToken, or keys before \
                 start-after; list with ListObjects (s3-wire's Client switches by itself), or \
                 set list_objects_v2 to false in its provider profile",
            ),
            MalformedResponse::Invalid(what) => f.write_str(what),
        }
    }
}

/// An error returned by S3 (or an S3-compatible store).
///
/// `Debug` redacts the `CanonicalRequest` and `CanonicalRequestBytes` a
/// `SignatureDoesNotMatch` document echoes: they hold the request's session token and
/// SSE-C key (still in [`S3Error::extra`] for whoever needs them).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct S3Error {
    /// HTTP status of the response (200 for errors hidden in a 200 response).
    pub status: StatusCode,
    /// The S3 error code (`NoSuchKey`, `SlowDown`, ...). For bodiless responses (HEAD)
    /// a code is derived from the status (`NotFound`, `Forbidden`, ...).
    pub code: String,
    /// Human-readable message, if any.
    pub message: Option<String>,
    /// `x-amz-request-id` / `<RequestId>`.
    pub request_id: Option<String>,
    /// `x-amz-id-2` / `<HostId>`.
    pub host_id: Option<String>,
    /// The bucket's region, from `x-amz-bucket-region` or the error document's `<Region>`.
    pub region: Option<String>,
    /// `<Resource>`, if present.
    pub resource: Option<String>,
    /// Further elements of the error document (`Endpoint`, `Key`, `BucketName`, ...).
    pub extra: Vec<(String, String)>,
    /// The response's `Date` header: the server's clock, for correcting a skewed local
    /// clock after [`S3Error::is_clock_skew`] errors.
    pub server_time: Option<SystemTime>,
}

impl S3Error {
    /// A service error with just a status and code.
    pub fn new(status: StatusCode, code: impl Into<String>) -> Self {
        S3Error {
            status,
            code: code.into(),
            message: None,
            request_id: None,
            host_id: None,
            region: None,
            resource: None,
            extra: Vec::new(),
            server_time: None,
        }
    }

    /// Looks up a further element of the error document by name.
    pub fn extra(&self, name: &str) -> Option<&str> {
        self.extra
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// True for "the object/bucket/upload does not exist" errors (and bodiless 404s).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self.code.as_str(),
            "NoSuchKey" | "NoSuchBucket" | "NoSuchUpload" | "NoSuchVersion" | "NotFound"
        )
    }

    /// True when the object is archived (GLACIER, DEEP_ARCHIVE, or an archive tier of
    /// INTELLIGENT_TIERING) and must be restored before it can be read or copied:
    /// `InvalidObjectState` (403). The error's `Display` names the remedy.
    pub fn is_archived(&self) -> bool {
        self.code == "InvalidObjectState" && self.status == StatusCode::FORBIDDEN
    }

    /// True when a conditional request's precondition failed (412, or 304 Not Modified).
    pub fn is_precondition_failed(&self) -> bool {
        self.status == StatusCode::PRECONDITION_FAILED
            || self.status == StatusCode::NOT_MODIFIED
            || self.code == "PreconditionFailed"
    }

    /// True when the request was rejected because the local clock is off
    /// (`RequestTimeTooSkewed`, `RequestExpired`, `RequestInTheFuture`): re-sign with a
    /// time corrected by [`S3Error::server_time`] and retry.
    pub fn is_clock_skew(&self) -> bool {
        matches!(
            self.code.as_str(),
            "RequestTimeTooSkewed" | "RequestExpired" | "RequestInTheFuture"
        )
    }

    /// True when temporary credentials expired (`ExpiredToken`, `TokenRefreshRequired`):
    /// refresh them, re-sign and retry.
    pub fn is_expired_credentials(&self) -> bool {
        matches!(
            self.code.as_str(),
            "ExpiredToken" | "ExpiredTokenException" | "TokenRefreshRequired"
        )
    }

    /// How a transport should react to this error.
    pub fn retry_class(&self) -> RetryClass {
        const THROTTLING: &[&str] = &[
            "SlowDown",
            "Throttling",
            "ThrottlingException",
            "ThrottledException",
            "RequestThrottled",
            "RequestThrottledException",
            "RequestLimitExceeded",
            "TooManyRequestsException",
            "BandwidthLimitExceeded",
            "ProvisionedThroughputExceededException",
        ];
        // The temporary credentials the request was signed with have expired (or the store
        // wants them renewed): new ones from the provider will do.
        const EXPIRED_CREDENTIALS: &[&str] = &["ExpiredToken", "TokenRefreshRequired"];
        const TRANSIENT: &[&str] = &[
            "InternalError",
            "RequestTimeout",
            "RequestTimeoutException",
            "PriorRequestNotComplete",
            "ServiceUnavailable",
        ];
        let code = self.code.as_str();
        if EXPIRED_CREDENTIALS.contains(&code) {
            return RetryClass::RefreshCredentials;
        }
        if THROTTLING.contains(&code)
            || self.status == StatusCode::SERVICE_UNAVAILABLE
            || self.status == StatusCode::TOO_MANY_REQUESTS
        {
            return RetryClass::Throttling;
        }
        if TRANSIENT.contains(&code)
            || matches!(
                self.status,
                StatusCode::INTERNAL_SERVER_ERROR
                    | StatusCode::BAD_GATEWAY
                    | StatusCode::GATEWAY_TIMEOUT
            )
        {
            return RetryClass::Transient;
        }
        let redirect = self.status == StatusCode::MOVED_PERMANENTLY
            || self.status == StatusCode::TEMPORARY_REDIRECT
            || code == "PermanentRedirect"
            || code == "TemporaryRedirect"
            || (self.status == StatusCode::BAD_REQUEST && code == "AuthorizationHeaderMalformed");
        match (&self.region, redirect) {
            (Some(region), true) if !region.is_empty() => RetryClass::RedirectRegion {
                region: region.clone(),
            },
            _ => RetryClass::NotRetryable,
        }
    }
}

impl fmt::Debug for S3Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        /// Elements that echo the request's signed headers, secret ones included.
        const ECHOES: [&str; 2] = ["CanonicalRequest", "CanonicalRequestBytes"];
        let extra: Vec<(&str, &str)> = self
            .extra
            .iter()
            .map(|(name, value)| {
                let shown = if ECHOES.contains(&name.as_str()) {
                    "<redacted>"
                } else {
                    value.as_str()
                };
                (name.as_str(), shown)
            })
            .collect();
        f.debug_struct("S3Error")
            .field("status", &self.status)
            .field("code", &self.code)
            .field("message", &self.message)
            .field("request_id", &self.request_id)
            .field("host_id", &self.host_id)
            .field("region", &self.region)
            .field("resource", &self.resource)
            .field("extra", &extra)
            .field("server_time", &self.server_time)
            .finish()
    }
}

impl fmt::Display for S3Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S3 error {} (HTTP {})", self.code, self.status.as_u16())?;
        if let Some(message) = &self.message {
            write!(f, ": {message}")?;
        }
        if let Some(region) = &self.region {
            write!(f, " [bucket region {region}]")?;
        }
        if self.is_archived() {
            let class = self
                .extra("StorageClass")
                .unwrap_or("an archive storage class");
            write!(
                f,
                "; the object is archived ({class}): restore a temporary copy with \
                 RestoreObject (s3w restore), wait until HeadObject's x-amz-restore says \
                 ongoing-request=\"false\", then read it"
            )?;
        }
        if let Some(request_id) = &self.request_id {
            write!(f, " (request id {request_id})")?;
        }
        Ok(())
    }
}

/// What a transport should do after a failed attempt.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RetryClass {
    /// The service asked us to slow down: retry with (larger) backoff.
    Throttling,
    /// A transient server or network failure: retry with backoff.
    Transient,
    /// The bucket lives in another region: re-sign for `region` and retry at once.
    RedirectRegion {
        /// The bucket's region.
        region: String,
    },
    /// The request's temporary credentials have expired (`ExpiredToken`,
    /// `TokenRefreshRequired`): get new ones from the provider, re-sign and retry once.
    RefreshCredentials,
    /// Retrying will not help.
    NotRetryable,
}

impl RetryClass {
    /// True for every class except [`RetryClass::NotRetryable`].
    pub fn is_retryable(&self) -> bool {
        !matches!(self, RetryClass::NotRetryable)
    }

    /// Classifies a failure below HTTP (no response was received).
    pub fn for_transport_failure(failure: TransportFailure) -> Self {
        match failure {
            TransportFailure::Connect
            | TransportFailure::ConnectionDropped
            | TransportFailure::Timeout => RetryClass::Transient,
            TransportFailure::Tls => RetryClass::NotRetryable,
        }
    }
}

/// A failure that happened before a complete response arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportFailure {
    /// The connection could not be established (refused, DNS failure, ...).
    Connect,
    /// The connection was reset or closed before the response was complete.
    ConnectionDropped,
    /// No (complete) response within the deadline.
    Timeout,
    /// The TLS handshake failed (bad certificate, protocol mismatch): not transient.
    Tls,
}

//! The client's error type.

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use s3_ops::{RetryClass, S3Error, TransportFailure};

type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// Everything an operation of the [`Client`](crate::Client) can fail with.
///
/// Besides *what* went wrong ([`Error::kind`]) it records how the operation
/// ended: how many attempts were made ([`Error::attempts`], [`Error::retried`]),
/// the request id of the last response ([`Error::request_id`]), and the
/// underlying cause ([`std::error::Error::source`]).
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: ErrorKind,
    attempts: u32,
    request_id: Option<String>,
    budget_exhausted: bool,
    source: Option<BoxError>,
    transfer: Option<TransferFailure>,
    outcome_unknown: bool,
    /// What the caller may do about it, when the error alone does not say.
    hint: Option<&'static str>,
    /// The part and bytes of a transfer the failed request carried, until the transfer's
    /// cleanup is known ([`Error::with_transfer`]).
    location: Option<(Option<u32>, std::ops::Range<u64>)>,
}

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// S3 answered with an error document (or an error status).
    Service(S3Error),
    /// The request could not be encoded or the response decoded (`s3-ops`):
    /// invalid input, a malformed response, a checksum mismatch.
    Operation(s3_ops::Error),
    /// No connection could be made, or it broke before the response was
    /// complete.
    Transport(TransportErrorKind),
    /// A time limit was exceeded.
    Timeout(TimeoutKind),
    /// A response body was shorter or longer than its `Content-Length`.
    BodyLength {
        /// Bytes announced by `Content-Length`.
        expected: u64,
        /// Bytes received before the error was detected.
        received: u64,
    },
    /// A request body supplied by the caller failed (file I/O, a stream error)
    /// or delivered a different number of bytes than it announced.
    RequestBody(String),
    /// Local I/O failed (opening or reading an upload's file, writing a
    /// download).
    Io,
    /// The credentials provider could not supply credentials.
    Credentials,
    /// The client configuration is unusable.
    Config(String),
    /// Signing the request failed.
    Signing,
    /// A managed transfer (upload, download, copy) failed for a reason of its own; failures
    /// of its requests keep their own kind. Either way [`Error::transfer`] says what was
    /// cleaned up.
    Transfer(TransferErrorKind),
}

/// Why a managed transfer failed, when no single request did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransferErrorKind {
    /// The caller cancelled it (`cancel()`, or dropped its handle).
    Cancelled,
    /// The source file changed while it was uploaded (its size or modification time differ
    /// from when the upload started), or since a resume journal was written: completing
    /// would store a mix of old and new bytes.
    SourceChanged(String),
    /// A stream's length differs from the length it was announced with.
    SourceLength {
        /// The announced length.
        announced: u64,
        /// The bytes the stream yielded (at least, when it was longer).
        actual: u64,
    },
    /// One part needs more memory than the client's whole transfer budget
    /// (`ClientBuilder::transfer_memory`).
    MemoryBudget {
        /// Bytes the part needs.
        needed: u64,
        /// The budget.
        capacity: u64,
    },
    /// The object is larger than the part limits allow (10,000 parts of the largest part
    /// size, or the maximum object size); for a stream of unknown length, also within the
    /// memory budget, which bounds its part size.
    TooLarge {
        /// The largest object that fits, in bytes.
        maximum: u64,
    },
    /// A resume journal cannot be used (unreadable, another format, another object).
    Journal(String),
    /// The multipart upload a journal names no longer exists (completed, aborted or
    /// expired): start a new upload.
    UploadGone,
    /// The object changed while it was downloaded or copied (a later request found another
    /// ETag or version): nothing of it was kept.
    ObjectChanged,
    /// The store's answers contradict what was sent or each other (a part checksum that is
    /// not the one computed here, a missing ETag, a range of the wrong length).
    Inconsistent(String),
}

/// What a failed managed transfer left behind, and where it failed, from [`Error::transfer`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransferFailure {
    /// The multipart upload, if one was created.
    pub upload_id: Option<String>,
    /// What was done about it.
    pub cleanup: Cleanup,
    /// The part whose request failed (an upload's or a copy's part, or a download by part
    /// numbers), numbered from 1.
    pub part: Option<u32>,
    /// The bytes of the object the failed request carried (a part, a download's range).
    pub range: Option<std::ops::Range<u64>>,
}

impl TransferFailure {
    /// What a transfer left behind: `upload_id` and its `cleanup`; where it failed is filled
    /// in from the error.
    pub(crate) fn new(upload_id: Option<String>, cleanup: Cleanup) -> Self {
        Self {
            upload_id,
            cleanup,
            part: None,
            range: None,
        }
    }
}

/// How a failed or cancelled transfer cleaned up.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Cleanup {
    /// Nothing was left behind: no multipart upload existed, or no temporary file.
    Nothing,
    /// The multipart upload was aborted: the store holds none of its parts.
    Aborted,
    /// Aborting the multipart upload failed (the message says why): its parts stay stored
    /// until it is aborted (`Client::abort_stale_uploads`) or a lifecycle rule expires it.
    AbortFailed(String),
    /// The upload was left open on purpose with its resume journal at this path: the same
    /// upload with the same journal (`UploadBuilder::journal`) continues it. For a download
    /// to a file, its partial file and journal stay beside the target, and the same download
    /// continues it (`DownloadBuilder::resume`).
    KeptForResume(std::path::PathBuf),
}

/// How the transport failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// The connection could not be established.
    Connect,
    /// The connection was reset or closed mid-exchange.
    ConnectionDropped,
    /// The TLS handshake failed (untrusted certificate, protocol mismatch):
    /// not retried.
    Tls,
    /// The server answered with something that is not valid HTTP, or a
    /// redirect this client does not follow.
    Protocol,
    /// The HTTP proxy refused the tunnel with `407 Proxy Authentication Required`: its
    /// user and password are missing or wrong. Not retried.
    ProxyAuthentication,
}

/// Which time limit was exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeoutKind {
    /// Establishing the connection (TCP + TLS) took too long.
    Connect(Duration),
    /// No byte moved in either direction for this long.
    Stalled(Duration),
    /// The whole operation, retries included, took longer than this.
    Operation(Duration),
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Self {
            inner: Box::new(Inner {
                kind,
                attempts: 0,
                request_id: None,
                budget_exhausted: false,
                source: None,
                transfer: None,
                outcome_unknown: false,
                hint: None,
                location: None,
            }),
        }
    }

    pub(crate) fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.inner.source = Some(source.into());
        self
    }

    pub(crate) fn config(reason: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config(reason.into()))
    }

    pub(crate) fn io(err: std::io::Error) -> Self {
        Self::new(ErrorKind::Io).with_source(err)
    }

    pub(crate) fn request_body(reason: impl Into<String>) -> Self {
        Self::new(ErrorKind::RequestBody(reason.into()))
    }

    pub(crate) fn timeout(kind: TimeoutKind) -> Self {
        Self::new(ErrorKind::Timeout(kind))
    }

    pub(crate) fn set_attempts(&mut self, attempts: u32) {
        self.inner.attempts = attempts;
    }

    pub(crate) fn with_attempts(mut self, attempts: u32) -> Self {
        self.set_attempts(attempts);
        self
    }

    pub(crate) fn transfer_error(kind: TransferErrorKind) -> Self {
        Self::new(ErrorKind::Transfer(kind))
    }

    /// Records what the transfer this error ended left behind (and where it failed, as
    /// [`Error::in_part`] recorded it).
    pub(crate) fn with_transfer(mut self, mut failure: TransferFailure) -> Self {
        if let Some((part, range)) = self.inner.location.take() {
            failure.part = failure.part.or(part);
            failure.range = failure.range.or(Some(range));
        }
        self.inner.transfer = Some(failure);
        self
    }

    /// Records the part (if numbered) and the bytes of the transfer that the failed request
    /// carried; the first place recorded stays.
    pub(crate) fn in_part(mut self, part: Option<u32>, range: std::ops::Range<u64>) -> Self {
        if self.inner.location.is_none() && self.inner.transfer.is_none() {
            self.inner.location = Some((part, range));
        }
        self
    }

    /// `kind`, caused by `source`: with its attempts and request id, which are the failed
    /// request's.
    pub(crate) fn caused_by(kind: ErrorKind, source: Error) -> Self {
        let mut error = Self::new(kind);
        error.inner.attempts = source.inner.attempts;
        error.inner.request_id = source.request_id().map(str::to_owned);
        error.with_source(source)
    }

    pub(crate) fn set_outcome_unknown(&mut self, unknown: bool) {
        self.inner.outcome_unknown = unknown;
    }

    /// What the caller can do about this error, when the client knows more than the
    /// store said (an `AccessDenied` to an anonymous request, or one that may come from a
    /// Requester Pays bucket). Also part of the `Display` text.
    pub fn hint(&self) -> Option<&'static str> {
        self.inner.hint
    }

    pub(crate) fn set_hint(&mut self, hint: &'static str) {
        self.inner.hint = Some(hint);
    }

    pub(crate) fn set_budget_exhausted(&mut self) {
        self.inner.budget_exhausted = true;
    }

    pub(crate) fn set_request_id(&mut self, request_id: Option<String>) {
        if self.inner.request_id.is_none() {
            self.inner.request_id = request_id;
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    /// The S3 error document, if the service answered with one.
    pub fn service_error(&self) -> Option<&S3Error> {
        match &self.inner.kind {
            ErrorKind::Service(error) => Some(error),
            ErrorKind::Operation(error) => error.service_error(),
            _ => None,
        }
    }

    /// True if the service said the bucket, object, version or upload does not
    /// exist (including a bodiless 404 to HEAD).
    pub fn is_not_found(&self) -> bool {
        self.service_error().is_some_and(S3Error::is_not_found)
    }

    /// True if a conditional request's precondition failed (412 / 304).
    pub fn is_precondition_failed(&self) -> bool {
        self.service_error()
            .is_some_and(S3Error::is_precondition_failed)
    }

    /// True for a timeout of any kind.
    pub fn is_timeout(&self) -> bool {
        matches!(self.inner.kind, ErrorKind::Timeout(_))
    }

    /// The `x-amz-request-id` of the last response, if one arrived; quote it
    /// when asking the storage provider about a failure.
    pub fn request_id(&self) -> Option<&str> {
        self.inner
            .request_id
            .as_deref()
            .or_else(|| self.service_error()?.request_id.as_deref())
    }

    /// How many attempts were made (0 if the request never left the client).
    pub fn attempts(&self) -> u32 {
        self.inner.attempts
    }

    /// For an error that ended a managed transfer: the multipart upload it used and whether
    /// it was aborted, left for resumption, or could not be cleaned up.
    pub fn transfer(&self) -> Option<&TransferFailure> {
        self.inner.transfer.as_ref()
    }

    /// True if a managed transfer ended because it was cancelled.
    pub fn is_cancelled(&self) -> bool {
        matches!(
            self.inner.kind,
            ErrorKind::Transfer(TransferErrorKind::Cancelled)
        )
    }

    /// True if an attempt's answer was lost (the connection broke or stalled, or the
    /// operation timed out) after the request may have reached the store: the operation
    /// may have taken effect although this error ends it. Managed transfers look at the
    /// store before they report such a completion as failed.
    pub fn outcome_unknown(&self) -> bool {
        self.inner.outcome_unknown
    }

    /// True if a listing says `EncodingType=url` but holds values the server did not
    /// encode: the server ignores `encoding-type` (s3s-fs does), and the same request with
    /// `url_encoding(false)` reads it correctly. The paginators do that on their own.
    pub fn is_unencoded_listing(&self) -> bool {
        matches!(&self.inner.kind, ErrorKind::Operation(error) if error.is_unencoded_listing())
    }

    /// True if the store answered ListObjectsV2 as ListObjects (version 1)
    /// ([`s3_ops::MalformedResponse::ListedAsVersion1`]): it serves only version 1.
    /// [`Client::list_objects_v2`](crate::Client::list_objects_v2) switches on its own.
    pub fn is_version_1_listing(&self) -> bool {
        matches!(&self.inner.kind, ErrorKind::Operation(error) if error.is_version_1_listing())
    }

    /// True if the store refused the request as an operation it does not implement
    /// (`501`, or the code `NotImplemented`).
    pub(crate) fn is_not_implemented(&self) -> bool {
        self.service_error().is_some_and(|e| {
            e.status == http::StatusCode::NOT_IMPLEMENTED || e.code == "NotImplemented"
        })
    }

    /// True if the operation was attempted more than once.
    pub fn retried(&self) -> bool {
        self.inner.attempts > 1
    }

    /// True if a retry was possible but the client-wide retry budget was
    /// exhausted (the service has been failing for many requests).
    pub fn retry_budget_exhausted(&self) -> bool {
        self.inner.budget_exhausted
    }

    /// How a transport should react to this failure on its own (before
    /// accounting for body replayability, attempts and budgets).
    pub(crate) fn retry_class(&self) -> RetryClass {
        let failure = match &self.inner.kind {
            ErrorKind::Service(error) => return error.retry_class(),
            ErrorKind::Operation(error) => return error.retry_class(),
            ErrorKind::Transport(TransportErrorKind::Connect) => TransportFailure::Connect,
            ErrorKind::Transport(TransportErrorKind::Tls) => TransportFailure::Tls,
            ErrorKind::Transport(TransportErrorKind::ConnectionDropped)
            | ErrorKind::BodyLength { .. } => TransportFailure::ConnectionDropped,
            ErrorKind::Timeout(TimeoutKind::Connect(_) | TimeoutKind::Stalled(_)) => {
                TransportFailure::Timeout
            }
            _ => return RetryClass::NotRetryable,
        };
        RetryClass::for_transport_failure(failure)
    }
}

impl From<s3_wire_credentials::transport::BuildError> for Error {
    fn from(error: s3_wire_credentials::transport::BuildError) -> Self {
        let message = error.message().to_owned();
        match std::error::Error::source(&error) {
            // The transport's own cause (reqwest's) stays the source.
            Some(_) => Error::config(message).with_source(error),
            None => Error::config(message),
        }
    }
}

impl From<s3_ops::Error> for Error {
    fn from(error: s3_ops::Error) -> Self {
        match error {
            s3_ops::Error::Service(service) => {
                let request_id = service.request_id.clone();
                let mut error = Error::new(ErrorKind::Service(*service));
                error.set_request_id(request_id);
                error
            }
            other => Error::new(ErrorKind::Operation(other)),
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Service(error) => write!(f, "{error}"),
            ErrorKind::Operation(error) => write!(f, "{error}"),
            ErrorKind::Transport(TransportErrorKind::Connect) => {
                f.write_str("could not connect to the endpoint")
            }
            ErrorKind::Transport(TransportErrorKind::ConnectionDropped) => {
                f.write_str("the connection was closed before the exchange completed")
            }
            ErrorKind::Transport(TransportErrorKind::Protocol) => {
                f.write_str("the server's answer is not usable HTTP for this request")
            }
            ErrorKind::Transport(TransportErrorKind::Tls) => {
                f.write_str("the TLS handshake with the endpoint failed")
            }
            ErrorKind::Transport(TransportErrorKind::ProxyAuthentication) => f.write_str(
                "the proxy refused the connection: proxy authentication required (407); give \
                 its user and password in the proxy URL or with \
                 ClientBuilder::proxy_credentials",
            ),
            ErrorKind::Timeout(TimeoutKind::Connect(limit)) => {
                write!(f, "connecting took longer than {limit:?}")
            }
            ErrorKind::Timeout(TimeoutKind::Stalled(limit)) => {
                write!(f, "the transfer made no progress for {limit:?}")
            }
            ErrorKind::Timeout(TimeoutKind::Operation(limit)) => {
                write!(f, "the operation did not finish within {limit:?}")
            }
            ErrorKind::BodyLength { expected, received } if received < expected => write!(
                f,
                "response body truncated: Content-Length is {expected} bytes, the connection ended after {received}"
            ),
            ErrorKind::BodyLength { expected, received } => write!(
                f,
                "response body is longer than its Content-Length of {expected} bytes (at least {received})"
            ),
            ErrorKind::RequestBody(reason) => write!(f, "request body failed: {reason}"),
            ErrorKind::Io => f.write_str("local I/O failed"),
            ErrorKind::Credentials => f.write_str("no usable credentials"),
            ErrorKind::Config(reason) => write!(f, "invalid client configuration: {reason}"),
            ErrorKind::Signing => f.write_str("signing the request failed"),
            ErrorKind::Transfer(kind) => kind.fmt(f),
        }
    }
}

impl fmt::Display for TransferErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cancelled => f.write_str("the transfer was cancelled"),
            Self::SourceChanged(what) => write!(f, "the source changed during the upload: {what}"),
            Self::SourceLength { announced, actual } if actual < announced => write!(
                f,
                "the source ended after {actual} bytes but was announced as {announced} bytes"
            ),
            Self::SourceLength { announced, actual } => write!(
                f,
                "the source yielded at least {actual} bytes but was announced as {announced} bytes"
            ),
            Self::MemoryBudget { needed, capacity } => write!(
                f,
                "a part needs {needed} bytes of memory but the client's transfer budget is \
                 {capacity} bytes (ClientBuilder::transfer_memory)"
            ),
            Self::TooLarge { maximum } => write!(
                f,
                "the object is larger than the {maximum} bytes its parts can carry within the \
                 part limits (and, for a stream, the memory budget: raise transfer_memory or \
                 the part size)"
            ),
            Self::Journal(why) => write!(f, "the resume journal cannot be used: {why}"),
            Self::UploadGone => f.write_str(
                "the multipart upload of the journal no longer exists (completed, aborted or \
                 expired); start a new upload",
            ),
            Self::ObjectChanged => f.write_str(
                "the object changed while it was transferred (another ETag or version answered)",
            ),
            Self::Inconsistent(what) => write!(f, "the store answered inconsistently: {what}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.inner.kind)?;
        if self.inner.attempts > 1 {
            write!(f, " (after {} attempts", self.inner.attempts)?;
            if self.inner.budget_exhausted {
                f.write_str("; retry budget exhausted")?;
            }
            f.write_str(")")?;
        } else if self.inner.budget_exhausted {
            f.write_str(" (not retried: retry budget exhausted)")?;
        }
        if !matches!(self.inner.kind, ErrorKind::Service(_))
            && let Some(id) = &self.inner.request_id
        {
            write!(f, " (request id {id})")?;
        }
        if let Some(hint) = self.inner.hint {
            write!(f, "; {hint}")?;
        }
        if let Some(transfer) = &self.inner.transfer {
            match (transfer.part, &transfer.range) {
                (Some(part), Some(range)) => {
                    write!(f, "; in part {part} (bytes {}..{})", range.start, range.end)?
                }
                (Some(part), None) => write!(f, "; in part {part}")?,
                (None, Some(range)) => write!(f, "; in bytes {}..{}", range.start, range.end)?,
                (None, None) => {}
            }
            match &transfer.cleanup {
                Cleanup::Nothing => {}
                Cleanup::Aborted => f.write_str("; the multipart upload was aborted")?,
                Cleanup::AbortFailed(why) => write!(
                    f,
                    "; aborting multipart upload {} failed ({why}): its parts stay stored",
                    transfer.upload_id.as_deref().unwrap_or("?")
                )?,
                Cleanup::KeptForResume(journal) => write!(
                    f,
                    "; kept to be continued by the same transfer, with its journal {}",
                    journal.display()
                )?,
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.inner.kind)
            .field("attempts", &self.inner.attempts)
            .field("request_id", &self.inner.request_id)
            .field("budget_exhausted", &self.inner.budget_exhausted)
            .field("source", &self.inner.source)
            .field("transfer", &self.inner.transfer)
            .field("outcome_unknown", &self.inner.outcome_unknown)
            .finish()
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        if let Some(source) = &self.inner.source {
            return Some(source.as_ref());
        }
        match &self.inner.kind {
            ErrorKind::Operation(error) => Some(error),
            _ => None,
        }
    }
}

impl From<Error> for std::io::Error {
    fn from(error: Error) -> Self {
        let kind = match error.kind() {
            ErrorKind::Timeout(_) => std::io::ErrorKind::TimedOut,
            ErrorKind::BodyLength { .. } => std::io::ErrorKind::UnexpectedEof,
            _ => std::io::ErrorKind::Other,
        };
        std::io::Error::new(kind, error)
    }
}

/// The request id S3 gave an answer (`x-amz-request-id`), which errors and hooks report.
pub(crate) fn request_id(headers: &http::HeaderMap) -> Option<String> {
    headers
        .get("x-amz-request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    #[test]
    fn service_error_keeps_request_id_and_attempts() {
        let mut service = S3Error::new(StatusCode::SERVICE_UNAVAILABLE, "SlowDown");
        service.request_id = Some("REQ123".into());
        let mut error = Error::from(s3_ops::Error::from(service));
        error.set_attempts(3);
        assert_eq!(error.request_id(), Some("REQ123"));
        assert!(error.retried());
        assert_eq!(
            error.service_error().map(|e| e.code.as_str()),
            Some("SlowDown")
        );
        let text = error.to_string();
        assert!(
            text.contains("SlowDown") && text.contains("after 3 attempts"),
            "{text}"
        );
    }

    #[test]
    fn truncation_message_states_both_lengths() {
        let error = Error::new(ErrorKind::BodyLength {
            expected: 100,
            received: 42,
        });
        assert_eq!(
            error.to_string(),
            "response body truncated: Content-Length is 100 bytes, the connection ended after 42"
        );
        assert_eq!(error.retry_class(), RetryClass::Transient);
    }
}

//! How s3-wire's errors become `object_store` errors, keeping what callers match on.

use std::fmt;

use http::StatusCode;
use s3_wire_tokio::Error as WireError;

/// The store's name in `object_store::Error::Generic`.
pub(crate) const STORE: &str = "S3Wire";

/// Failures of the adapter itself, as the source of an `object_store` error (the client's
/// failures keep their [`s3_wire_tokio::Error`] as the source instead).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdapterError {
    /// DeleteObjects reported this key as not deleted.
    DeleteFailed {
        /// The key.
        key: String,
        /// The S3 error code of the entry.
        code: Option<String>,
        /// Its message.
        message: Option<String>,
    },
    /// DeleteObjects answered without a word about this key (neither deleted nor failed).
    DeleteUnanswered {
        /// The key.
        key: String,
    },
    /// `PutMode::Update` needs the ETag of the version to replace (S3 conditions on ETags,
    /// not on version ids).
    UpdateWithoutETag,
    /// The store answered a ranged GET with other bytes than were asked for.
    UnexpectedRange {
        /// The range asked for, clamped to the object's size.
        expected: std::ops::Range<u64>,
        /// The range the store sent.
        actual: std::ops::Range<u64>,
    },
    /// A response lacks what the operation needs (an ETag of a part, a size).
    Incomplete(&'static str),
    /// A `PartId` that this store's `put_part` did not make.
    InvalidPartId(String),
    /// A multipart upload or a part was used after it was completed or aborted, or after
    /// one of its parts failed (the message says which).
    UploadEnded(String),
    /// The operation needs a Tokio runtime and was called outside one.
    NoRuntime,
    /// A presigned URL for this method is not offered (GET, PUT, HEAD, DELETE are).
    UnsupportedMethod(http::Method),
    /// The presigned request needs headers, which a bare URL cannot carry.
    PresignNeedsHeaders(Vec<String>),
}

impl fmt::Display for AdapterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DeleteFailed { key, code, message } => write!(
                f,
                "DeleteObjects did not delete {key}: {} {}",
                code.as_deref().unwrap_or("(no code)"),
                message.as_deref().unwrap_or("")
            ),
            Self::DeleteUnanswered { key } => {
                write!(f, "DeleteObjects answered nothing about {key}")
            }
            Self::UpdateWithoutETag => {
                f.write_str("PutMode::Update needs an ETag: S3 conditions writes on ETags")
            }
            Self::UnexpectedRange { expected, actual } => {
                write!(f, "asked for bytes {expected:?}, the store sent {actual:?}")
            }
            Self::Incomplete(what) => write!(f, "the store's answer lacks {what}"),
            Self::InvalidPartId(id) => write!(f, "not a part id of this store: {id:?}"),
            Self::UploadEnded(why) => write!(f, "the multipart upload ended: {why}"),
            Self::NoRuntime => f.write_str("called outside a Tokio runtime"),
            Self::UnsupportedMethod(method) => {
                write!(
                    f,
                    "no presigned URL for {method} (GET, PUT, HEAD, DELETE are)"
                )
            }
            Self::PresignNeedsHeaders(names) => write!(
                f,
                "the presigned request must carry headers a URL cannot: {}",
                names.join(", ")
            ),
        }
    }
}

impl std::error::Error for AdapterError {}

/// `error` as a `Generic` error of this store.
pub(crate) fn generic(
    error: impl std::error::Error + Send + Sync + 'static,
) -> object_store::Error {
    object_store::Error::Generic {
        store: STORE,
        source: Box::new(error),
    }
}

/// Maps a failure of `operation` (an S3 action name) on `path` to the `object_store` error
/// callers match on; the s3-wire error (S3 code, request id, attempts) is the source of
/// every variant that has one.
pub(crate) fn map(error: WireError, operation: &'static str, path: &str) -> object_store::Error {
    let path = path.to_owned();
    let Some(service) = error.service_error() else {
        return generic(error);
    };
    let (status, code) = (service.status, service.code.as_str());
    if service.is_not_found() {
        return object_store::Error::NotFound {
            path,
            source: Box::new(error),
        };
    }
    if status == StatusCode::NOT_MODIFIED {
        return object_store::Error::NotModified {
            path,
            source: Box::new(error),
        };
    }
    if status == StatusCode::PRECONDITION_FAILED || code == "PreconditionFailed" {
        return object_store::Error::Precondition {
            path,
            source: Box::new(error),
        };
    }
    if status == StatusCode::NOT_IMPLEMENTED || code == "NotImplemented" {
        // The variant carries strings only: the store's message goes into `operation`.
        let message = service.message.clone().unwrap_or_default();
        return object_store::Error::NotImplemented {
            operation: format!("{operation} ({code}: {message})"),
            implementer: format!("the S3 store behind {STORE}"),
        };
    }
    if matches!(
        code,
        "InvalidAccessKeyId" | "SignatureDoesNotMatch" | "ExpiredToken" | "InvalidToken"
    ) || status == StatusCode::UNAUTHORIZED
    {
        return object_store::Error::Unauthenticated {
            path,
            source: Box::new(error),
        };
    }
    if status == StatusCode::FORBIDDEN {
        return object_store::Error::PermissionDenied {
            path,
            source: Box::new(error),
        };
    }
    generic(error)
}

/// For `PutMode::Create` and create-only copies: a failed precondition (or a concurrent
/// conditional write, `409 ConditionalRequestConflict`) means another object is there.
pub(crate) fn map_create(
    error: WireError,
    operation: &'static str,
    path: &str,
) -> object_store::Error {
    if is_conditional_conflict(&error) {
        return object_store::Error::AlreadyExists {
            path: path.to_owned(),
            source: Box::new(error),
        };
    }
    match map(error, operation, path) {
        object_store::Error::Precondition { path, source }
        | object_store::Error::NotModified { path, source } => {
            object_store::Error::AlreadyExists { path, source }
        }
        other => other,
    }
}

/// For `PutMode::Update`: a missing object (S3 answers 404) and a concurrent conditional
/// write (409) are failed preconditions too, as `object_store` defines them.
pub(crate) fn map_update(
    error: WireError,
    operation: &'static str,
    path: &str,
) -> object_store::Error {
    if is_conditional_conflict(&error) {
        return object_store::Error::Precondition {
            path: path.to_owned(),
            source: Box::new(error),
        };
    }
    match map(error, operation, path) {
        object_store::Error::NotFound { path, source } => {
            object_store::Error::Precondition { path, source }
        }
        other => other,
    }
}

fn is_conditional_conflict(error: &WireError) -> bool {
    error.service_error().is_some_and(|service| {
        service.status == StatusCode::CONFLICT && service.code == "ConditionalRequestConflict"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_failed() {
        let error = AdapterError::DeleteFailed {
            key: "a/b".into(),
            code: Some("AccessDenied".into()),
            message: Some("no".into()),
        };
        assert_eq!(
            error.to_string(),
            "DeleteObjects did not delete a/b: AccessDenied no"
        );
        assert!(
            AdapterError::UnsupportedMethod(http::Method::POST)
                .to_string()
                .contains("POST")
        );
    }
}

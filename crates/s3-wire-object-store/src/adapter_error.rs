//! What the adapter itself refuses or finds wrong, whichever object_store version it serves.

use std::fmt;

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

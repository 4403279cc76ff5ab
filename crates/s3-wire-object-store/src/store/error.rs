//! How s3-wire's errors become `object_store` errors, keeping what callers match on.

use http::StatusCode;
use s3_wire_tokio::Error as WireError;

use super::object_store;

/// The store's name in `object_store::Error::Generic`.
pub(crate) const STORE: &str = "S3Wire";

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
    if let Some(unsupported) = unsupported(&error) {
        // The provider profile says the store would mishandle the request (a conditional
        // write it would ignore): refused before sending, never emulated.
        return object_store::Error::NotImplemented {
            operation: format!("{operation} on {path}: {unsupported}"),
            implementer: format!("{STORE} on {}", unsupported.provider),
        };
    }
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

/// What the client refused because the store's provider profile does not support it.
fn unsupported(error: &WireError) -> Option<&s3_wire_tokio::s3_ops::provider::Unsupported> {
    match error.kind() {
        s3_wire_tokio::ErrorKind::Operation(s3_wire_tokio::s3_ops::Error::InvalidInput(
            s3_wire_tokio::s3_ops::InvalidInput::Unsupported(unsupported),
        )) => Some(unsupported),
        _ => None,
    }
}

fn is_conditional_conflict(error: &WireError) -> bool {
    error.service_error().is_some_and(|service| {
        service.status == StatusCode::CONFLICT && service.code == "ConditionalRequestConflict"
    })
}

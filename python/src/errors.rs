//! s3-wire's errors as Python exceptions (the classes are in `s3wire/exceptions.py`), and
//! the argument errors that name their argument.

use pyo3::exceptions::{PyFileNotFoundError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use s3_wire_tokio::{Error, ErrorKind};

/// The exception class for a store's error code (and HTTP status, for answers without a
/// code such as HEAD's): the codes a program most often handles have a class of their own.
fn class_for(code: &str, status: u16) -> &'static str {
    match code {
        "NoSuchKey" => "NoSuchKey",
        "NoSuchBucket" => "NoSuchBucket",
        "AccessDenied" | "Forbidden" => "AccessDenied",
        "PreconditionFailed" => "PreconditionFailed",
        _ => match status {
            403 => "AccessDenied",
            412 => "PreconditionFailed",
            _ => "S3WireError",
        },
    }
}

/// The error's message and those of its sources, as one line.
fn message(error: &Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// `error` as an instance of its `s3wire.exceptions` class, carrying the code, HTTP status,
/// request id and hint. `not_found_class` is the class a bodiless 404 (a HEAD's, whose
/// code is only `NotFound`) stands for: `NoSuchKey` for an object, `NoSuchBucket` for a
/// bucket.
pub(crate) fn to_py(py: Python<'_>, error: Error, not_found_class: &'static str) -> PyErr {
    let (class, code, status, request_id) = match error.service_error() {
        Some(service) => {
            let status = service.status.as_u16();
            let class = if status == 404 && service.code == "NotFound" {
                not_found_class
            } else {
                class_for(&service.code, status)
            };
            (
                class,
                Some(service.code.clone()),
                Some(status),
                service.request_id.clone(),
            )
        }
        None => (
            "S3WireError",
            None,
            None,
            error.request_id().map(str::to_owned),
        ),
    };
    if matches!(error.kind(), ErrorKind::Io) && error_is_not_found(&error) {
        return PyFileNotFoundError::new_err(message(&error));
    }
    let details = Details {
        code,
        status,
        request_id,
        hint: error.hint(),
    };
    exception(py, class, message(&error), details)
}

/// What an exception carries besides its message.
#[derive(Default)]
struct Details {
    code: Option<String>,
    status: Option<u16>,
    request_id: Option<String>,
    hint: Option<&'static str>,
}

/// An instance of the `s3wire.exceptions` class `class`.
fn exception(py: Python<'_>, class: &str, text: String, details: Details) -> PyErr {
    let Details {
        code,
        status,
        request_id,
        hint,
    } = details;
    let made = py
        .import("s3wire.exceptions")
        .and_then(|module| module.getattr(class))
        .and_then(|class| class.call1((text.clone(), code, status, request_id, hint)));
    match made {
        Ok(instance) => PyErr::from_value(instance),
        // The package's Python half is missing (the native module imported alone).
        Err(_) => pyo3::exceptions::PyRuntimeError::new_err(text),
    }
}

fn error_is_not_found(error: &Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return io.kind() == std::io::ErrorKind::NotFound;
        }
        source = cause.source();
    }
    false
}

/// An `S3WireError` with `text` alone (no code, status or request id): a failure on this
/// side of the wire.
pub(crate) fn local(py: Python<'_>, text: String) -> PyErr {
    exception(py, "S3WireError", text, Details::default())
}

/// A `ValueError` naming the argument it is about.
pub(crate) fn bad_value(argument: &str, problem: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("argument '{argument}': {problem}"))
}

/// A `TypeError` naming the argument it is about.
pub(crate) fn bad_type(argument: &str, expected: &str, got: &Bound<'_, PyAny>) -> PyErr {
    let got = got
        .get_type()
        .name()
        .map(|name| name.to_string())
        .unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!(
        "argument '{argument}': expected {expected}, got {got}"
    ))
}

/// An error of building a client: a configuration it cannot use (a malformed proxy URL, an
/// unreadable CA bundle, an endpoint it refuses) is a `ValueError`; anything else (the
/// credentials' files) the matching `S3WireError`.
pub(crate) fn build_error(py: Python<'_>, error: Error) -> PyErr {
    match error.kind() {
        ErrorKind::Config(_) => {
            PyValueError::new_err(format!("invalid client configuration: {}", message(&error)))
        }
        _ => to_py(py, error, "S3WireError"),
    }
}

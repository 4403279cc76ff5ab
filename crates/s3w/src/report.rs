//! What a person or a script sees: result lines, JSON lines, progress bars, and one-line
//! errors that say what failed and what to try.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use s3_wire::{Cleanup, Error, ErrorKind, TransportErrorKind};
use serde_json::{Value, json};

/// A failure reported to the user as one line; with the S3 error code and request id
/// where the store answered with an error (they go into `--json` output).
#[derive(Debug)]
pub(crate) struct Failure {
    /// The line (without the `s3w: ` prefix).
    pub message: String,
    /// The S3 error code.
    pub code: Option<String>,
    /// The request id of the failed request.
    pub request_id: Option<String>,
    /// The exit status, if not the usual (1; 2 for usage errors).
    pub exit_code: Option<i32>,
}

impl Failure {
    /// A failure with no S3 error behind it.
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: None,
            request_id: None,
            exit_code: None,
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::new(message)
    }
}

/// [`describe`] with the S3 error code and request id kept.
pub(crate) fn failure_of(what: &str, bucket_name: &str, error: &Error) -> Failure {
    let s3 = error.service_error();
    Failure {
        message: describe(what, bucket_name, error),
        code: s3.map(|s| s.code.clone()),
        request_id: s3.and_then(|s| s.request_id.clone()),
        exit_code: None,
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub(crate) type Result<T, E = Failure> = std::result::Result<T, E>;

/// The prefix that marks a usage error (exit code 2).
pub(crate) const USAGE: &str = "usage: ";

pub(crate) fn usage(message: impl Into<String>) -> Failure {
    Failure::new(format!("{USAGE}{}", message.into()))
}

/// One line for a library error: what failed, the S3 code and request id, what to try.
pub(crate) fn describe(what: &str, bucket_name: &str, error: &Error) -> String {
    if let Some(s3) = error.service_error() {
        let id = s3
            .request_id
            .as_deref()
            .map(|id| format!(", request id {id}"))
            .unwrap_or_default();
        let hint = match s3.code.as_str() {
            "NoSuchBucket" => format!(
                "bucket `{bucket_name}` does not exist ({}{id}); create it with `s3w mb s3://{bucket_name}`",
                s3.code
            ),
            "NoSuchKey" | "NotFound" => format!(
                "{what}: no such object ({}{id}); list the bucket with `s3w ls s3://{bucket_name}/`",
                s3.code
            ),
            "AccessDenied" | "InvalidAccessKeyId" | "SignatureDoesNotMatch" => format!(
                "{what}: access denied ({}{id}); check the credentials (--profile, \
                 AWS_ACCESS_KEY_ID) and the bucket policy{}",
                s3.code,
                // The client's knowledge: an unsigned request, or a possible Requester Pays
                // bucket.
                error
                    .hint()
                    .map(|hint| format!("; {hint}"))
                    .unwrap_or_default()
            ),
            "InvalidObjectState" => format!(
                "{what}: the object is archived ({}, {}{id}); restore a copy first with \
                 `s3w restore s3://{bucket_name}/KEY --days N` and retry once `s3w stat` shows \
                 the restore done",
                s3.extra("StorageClass")
                    .unwrap_or("an archive storage class"),
                s3.code
            ),
            "BucketNotEmpty" => format!(
                "{what}: bucket `{bucket_name}` is not empty ({}{id}); use `s3w rb --force`",
                s3.code
            ),
            _ => format!(
                "{what}: {} ({}{id})",
                s3.message
                    .as_deref()
                    .unwrap_or("the store refused the request"),
                s3.code
            ),
        };
        return hint;
    }
    if error.is_cancelled() {
        return format!("{what}: cancelled{}", cleanup_note(error));
    }
    if error.is_not_found() {
        return format!("{what}: not found (404); check the bucket and key");
    }
    match error.kind() {
        ErrorKind::Transport(TransportErrorKind::Tls) => format!(
            "{what}: {}; if the store's certificate comes from a private or corporate CA, trust \
             it with --ca-bundle FILE (or AWS_CA_BUNDLE)",
            one_line(&error_chain(error))
        ),
        ErrorKind::Transport(_) | ErrorKind::Timeout(_) => format!(
            "{what}: {error}; check --endpoint-url / AWS_ENDPOINT_URL and that the store is reachable"
        ),
        ErrorKind::Credentials => format!(
            "{what}: {error}; set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or choose a --profile"
        ),
        // A local failure's words are in its source (the path and the OS error).
        ErrorKind::Io => match std::error::Error::source(error) {
            Some(cause) => format!("{what}: {}", one_line(&cause.to_string())),
            None => format!("{what}: {}", one_line(&error.to_string())),
        },
        _ => format!("{what}: {}", one_line(&error.to_string())),
    }
}

/// What a failed or cancelled transfer left behind, as a note: `" (its multipart upload
/// was aborted)"`, or how to remove what it could not.
pub(crate) fn cleanup_note(error: &Error) -> String {
    match error.transfer().map(|failure| &failure.cleanup) {
        Some(Cleanup::Aborted) => " (its multipart upload was aborted)".to_owned(),
        Some(Cleanup::AbortFailed(why)) => format!(
            " (aborting its multipart upload failed: {}; `s3w abort-stale` removes it later)",
            one_line(why)
        ),
        Some(Cleanup::KeptForResume(journal)) => format!(
            " (its multipart upload is kept for a resume, journal {})",
            journal.display()
        ),
        _ => String::new(),
    }
}

pub(crate) fn one_line(text: &str) -> String {
    text.replace('\n', " ")
}

/// An error and its causes, `: `-separated (a TLS failure's reason is in its sources:
/// `invalid peer certificate: UnknownIssuer`).
fn error_chain(error: &Error) -> String {
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(next) = cause {
        let next_text = next.to_string();
        if !text.contains(&next_text) {
            text = format!("{text}: {next_text}");
        }
        cause = next.source();
    }
    text
}

/// Output: plain lines or JSON lines on stdout; errors on stderr.
#[derive(Debug, Clone)]
pub(crate) struct Out {
    pub(crate) json: bool,
    pub(crate) quiet: bool,
    pub(crate) failed: Arc<AtomicBool>,
    /// Live progress on stderr (a terminal, and neither --no-progress, --quiet nor --json).
    pub(crate) bars: Option<indicatif::MultiProgress>,
}

impl Out {
    /// A result line, or its JSON object (which carries a `type`).
    pub(crate) fn line(&self, text: impl AsRef<str>, value: Value) {
        if self.json {
            println!("{value}");
        } else if !self.quiet {
            match &self.bars {
                Some(bars) => bars.suspend(|| println!("{}", text.as_ref())),
                None => println!("{}", text.as_ref()),
            }
        }
    }

    /// A progress display for this command, on a terminal.
    pub(crate) fn meter(&self, single: Option<String>) -> Option<Arc<crate::progress::Meter>> {
        Some(Arc::new(crate::progress::Meter::new(
            self.bars.as_ref()?,
            single,
        )))
    }

    /// A failure: one line on stderr, and with --json an object of `type` `error` on stdout
    /// (with the fields of `value`, the S3 error code and the request id).
    pub(crate) fn error(&self, failure: impl Into<Failure>, value: Value) {
        let failure = failure.into();
        self.failed.store(true, Ordering::SeqCst);
        if self.json {
            println!("{}", error_value(&failure, value));
        }
        match &self.bars {
            Some(bars) => bars.suspend(|| eprintln!("s3w: {}", failure.message)),
            None => eprintln!("s3w: {}", failure.message),
        }
    }
}

/// The JSON object of a failure.
pub(crate) fn error_value(failure: &Failure, value: Value) -> Value {
    let mut value = if value.is_object() { value } else { json!({}) };
    value["type"] = json!("error");
    value["error"] = json!(failure.message);
    value["code"] = json!(failure.code);
    value["request_id"] = json!(failure.request_id);
    value
}

/// A time as `2026-12-01T10:00:00Z`: UTC, whole seconds, fixed width.
pub(crate) fn timestamp(time: Option<std::time::SystemTime>) -> String {
    time.and_then(s3_wire::xml::Timestamp::from_system_time)
        .map(|t| {
            let text = t.to_string();
            format!("{}Z", text.get(..19).unwrap_or(&text))
        })
        .unwrap_or_else(|| "-".repeat(20))
}

pub(crate) fn human(size: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = size as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{size} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

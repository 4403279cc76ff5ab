//! What the client tells [`tracing`] subscribers, with the feature `tracing`: a span per
//! operation and an event per attempt, both with target `s3_wire`. Without the feature
//! every item here is empty and compiles away.
//!
//! - span `s3.operation` (DEBUG), field `operation` (the S3 action, `PutObject`). Every
//!   attempt, retry and backoff of the operation runs inside it.
//! - event `s3.attempt` (DEBUG), fields `method`, `host`, `path` (path and query as sent),
//!   `attempt` (1 for the first), `status` (when an answer came), `request_id`, `error`
//!   (the error's one-line message, when the attempt failed) and `elapsed_ms`.
//!
//! Nothing secret is recorded: no header is read, the query of a header-signed request
//! holds no credentials, and the client's errors never show one (`tests/redaction.rs`).

use std::future::Future;

use tokio::time::Instant;

use crate::error::Error;

/// Runs `operation` inside its `s3.operation` span.
pub(crate) fn in_operation_span<F: Future>(
    name: &'static str,
    operation: F,
) -> impl Future<Output = F::Output> {
    #[cfg(feature = "tracing")]
    {
        use tracing::Instrument;
        operation
            .instrument(tracing::debug_span!(target: "s3_wire", "s3.operation", operation = name))
    }
    #[cfg(not(feature = "tracing"))]
    {
        let _ = name;
        operation
    }
}

/// What one attempt sent, kept for its `s3.attempt` event.
#[derive(Default)]
pub(crate) struct Sent {
    #[cfg(feature = "tracing")]
    request: Option<(http::Method, String, String)>,
    #[cfg(feature = "tracing")]
    answer: Option<(http::StatusCode, Option<String>)>,
}

impl Sent {
    /// Notes the request as it is about to be sent.
    #[inline]
    pub(crate) fn record(&mut self, parts: &http::request::Parts) {
        #[cfg(feature = "tracing")]
        if tracing::enabled!(target: "s3_wire", tracing::Level::DEBUG) {
            let uri = &parts.uri;
            let path = uri
                .path_and_query()
                .map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned());
            self.request = Some((
                parts.method.clone(),
                uri.host().unwrap_or_default().to_owned(),
                path,
            ));
        }
        #[cfg(not(feature = "tracing"))]
        let _ = parts;
    }

    /// Notes the answer's status and request id.
    #[inline]
    pub(crate) fn answered(&mut self, head: &http::response::Parts) {
        #[cfg(feature = "tracing")]
        if self.request.is_some() {
            let request_id = crate::error::request_id(&head.headers);
            self.answer = Some((head.status, request_id));
        }
        #[cfg(not(feature = "tracing"))]
        let _ = head;
    }

    /// Emits the `s3.attempt` event of attempt number `attempt`, begun at `started`, which
    /// failed with `error` if it failed.
    #[inline]
    pub(crate) fn finished(&self, attempt: u32, started: Instant, error: Option<&Error>) {
        #[cfg(feature = "tracing")]
        {
            let status = self.answer.as_ref().map(|(status, _)| status.as_u16());
            let request_id = self
                .answer
                .as_ref()
                .and_then(|(_, id)| id.as_deref())
                .or_else(|| error.and_then(Error::request_id));
            let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
            let (method, host, path) = match &self.request {
                Some((method, host, path)) => (method.as_str(), host.as_str(), path.as_str()),
                // Failed before anything was sent (invalid input, no credentials).
                None => ("-", "-", "-"),
            };
            tracing::debug!(
                target: "s3_wire",
                method = %method,
                host,
                path,
                attempt,
                status,
                request_id,
                error = error.map(tracing::field::display),
                elapsed_ms = format_args!("{elapsed_ms:.1}"),
                "s3.attempt"
            );
        }
        #[cfg(not(feature = "tracing"))]
        let _ = (attempt, started, error);
    }
}

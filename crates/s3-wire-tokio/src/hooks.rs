//! Request hooks: one call per attempt, for operators' own metrics (Prometheus,
//! OpenTelemetry, …) without `tracing`. See [`RequestHook`].
//!
//! With no hook set nothing here runs: no record is made, no body is wrapped.

use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Buf;
use http_body::{Frame, SizeHint};
use tokio::time::Instant;

use crate::error::ErrorKind;

/// Observes every attempt of every request a [`Client`](crate::Client) sends
/// ([`ClientBuilder::request_hook`](crate::ClientBuilder::request_hook)).
///
/// [`RequestHook::on_attempt`] is called once per attempt: when its response body was read
/// (for operations that read it whole: listings, uploads, errors) or handed on and then read
/// to its end, failed or dropped (GetObject: the record then counts the bytes the caller
/// read), or when the attempt failed without an answer. It runs on the task that finished
/// the attempt: keep it quick (update counters, send to a channel).
///
/// Records carry no secret: no header, no signature, no credentials, no query string.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use s3_wire_tokio::{AttemptRecord, Client, RequestHook};
///
/// #[derive(Default)]
/// struct Metrics {
///     attempts: AtomicU64,
///     retries: AtomicU64,
///     bytes_received: AtomicU64,
/// }
///
/// impl RequestHook for Metrics {
///     fn on_attempt(&self, attempt: &AttemptRecord<'_>) {
///         self.attempts.fetch_add(1, Ordering::Relaxed);
///         if attempt.attempt > 1 {
///             self.retries.fetch_add(1, Ordering::Relaxed);
///         }
///         self.bytes_received.fetch_add(attempt.bytes_received, Ordering::Relaxed);
///     }
/// }
///
/// let client = Client::builder()
///     .region("eu-west-1")
///     .static_credentials("AKID", "secret", None)
///     .request_hook(Metrics::default())
///     .build()?;
/// # Ok::<(), s3_wire_tokio::Error>(())
/// ```
pub trait RequestHook: Send + Sync + 'static {
    /// One attempt ended.
    fn on_attempt(&self, attempt: &AttemptRecord<'_>);
}

/// What one attempt did, given to [`RequestHook::on_attempt`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AttemptRecord<'a> {
    /// The S3 action (`GetObject`, `UploadPart`, …).
    pub operation: &'static str,
    /// 1 for the first attempt of the operation, 2 for its first retry, …
    pub attempt: u32,
    /// The HTTP method (`-` if the attempt failed before a request was built).
    pub method: &'a str,
    /// The host the request went to (`-` if none was).
    pub host: &'a str,
    /// The response's status, when one arrived.
    pub status: Option<u16>,
    /// Why the attempt failed without an answer (transport, timeout, credentials, …); an
    /// answer's own failure is its `status`.
    pub error: Option<&'a ErrorKind>,
    /// The response's `x-amz-request-id`.
    pub request_id: Option<&'a str>,
    /// Request body bytes sent (aws-chunked framing included).
    pub bytes_sent: u64,
    /// Response body bytes received (for a streamed body: those the caller read).
    pub bytes_received: u64,
    /// How long the request waited for the client's transfer memory budget before it was
    /// sent (parts and ranges of managed transfers; zero for everything else).
    pub queued: Duration,
    /// From the start of the attempt to the response head.
    pub time_to_first_byte: Option<Duration>,
    /// From the start of the attempt to its end (the body read or dropped).
    pub duration: Duration,
    /// Whether the response body was read to its end.
    pub body_complete: bool,
}

tokio::task_local! {
    /// How long the request about to be sent on this task waited for transfer memory.
    static QUEUED: Duration;
}

/// Runs `request` with `waited` as the memory-budget wait of the attempts it makes.
pub(crate) async fn queued_for<F: std::future::Future>(waited: Duration, request: F) -> F::Output {
    QUEUED.scope(waited, request).await
}

/// The hook and the one record an attempt makes.
pub(crate) struct Recorder {
    hook: Arc<dyn RequestHook>,
    state: Mutex<State>,
    sent: AtomicU64,
    received: AtomicU64,
}

struct State {
    operation: &'static str,
    attempt: u32,
    method: String,
    host: String,
    status: Option<u16>,
    request_id: Option<String>,
    queued: Duration,
    started: Instant,
    first_byte: Option<Duration>,
    complete: bool,
    reported: bool,
}

impl Recorder {
    /// The record of attempt `attempt` of `operation`, begun at `started`.
    pub(crate) fn start(
        hook: &Arc<dyn RequestHook>,
        operation: &'static str,
        attempt: u32,
        started: Instant,
    ) -> Arc<Self> {
        Arc::new(Self {
            hook: hook.clone(),
            state: Mutex::new(State {
                operation,
                attempt,
                method: "-".to_owned(),
                host: "-".to_owned(),
                status: None,
                request_id: None,
                queued: QUEUED.try_with(|queued| *queued).unwrap_or_default(),
                started,
                first_byte: None,
                complete: false,
                reported: false,
            }),
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The request as it is about to be sent.
    pub(crate) fn request(&self, parts: &http::request::Parts) {
        let mut state = self.state();
        state.method = parts.method.as_str().to_owned();
        state.host = parts.uri.host().unwrap_or("-").to_owned();
    }

    /// The response head arrived (`bodiless`: a HEAD, 204 or 304, whose body is complete
    /// as it is).
    pub(crate) fn answered(&self, head: &http::response::Parts, bodiless: bool) {
        let mut state = self.state();
        state.complete = bodiless;
        state.status = Some(head.status.as_u16());
        state.request_id = crate::error::request_id(&head.headers);
        state.first_byte = Some(state.started.elapsed());
    }

    /// Reports the attempt (once), failed with `error` if it failed without an answer.
    pub(crate) fn finish(&self, error: Option<&ErrorKind>) {
        let mut state = self.state();
        if state.reported {
            return;
        }
        state.reported = true;
        let error = if state.status.is_some() { None } else { error };
        let record = AttemptRecord {
            operation: state.operation,
            attempt: state.attempt,
            method: &state.method,
            host: &state.host,
            status: state.status,
            error,
            request_id: state.request_id.as_deref(),
            bytes_sent: self.sent.load(Ordering::Relaxed),
            bytes_received: self.received.load(Ordering::Relaxed),
            queued: state.queued,
            time_to_first_byte: state.first_byte,
            duration: state.started.elapsed(),
            body_complete: state.complete,
        };
        self.hook.on_attempt(&record);
    }
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Recorder")
    }
}

/// Which way a [`Counted`] body's bytes go.
#[derive(Clone, Copy)]
pub(crate) enum Direction {
    Sent,
    Received,
}

/// A body whose bytes are counted into an attempt's record. A received body reports the
/// attempt when it ends or is dropped, whichever comes first.
pub(crate) struct Counted<B> {
    inner: B,
    recorder: Arc<Recorder>,
    direction: Direction,
}

impl<B> Counted<B> {
    pub(crate) fn new(inner: B, recorder: Arc<Recorder>, direction: Direction) -> Self {
        Self {
            inner,
            recorder,
            direction,
        }
    }
}

impl<B> http_body::Body for Counted<B>
where
    B: http_body::Body + Unpin,
    B::Data: Buf,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.get_mut();
        let frame = std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx));
        match (&frame, this.direction) {
            (Some(Ok(frame)), direction) => {
                let len = frame.data_ref().map_or(0, |data| data.remaining() as u64);
                let counter = match direction {
                    Direction::Sent => &this.recorder.sent,
                    Direction::Received => &this.recorder.received,
                };
                counter.fetch_add(len, Ordering::Relaxed);
            }
            (None, Direction::Received) => {
                this.recorder.state().complete = true;
                this.recorder.finish(None);
            }
            _ => {}
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for Counted<B> {
    fn drop(&mut self) {
        if matches!(self.direction, Direction::Received) {
            self.recorder.finish(None);
        }
    }
}

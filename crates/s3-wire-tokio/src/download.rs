//! Response bodies: a pull-based stream of chunks with length, stall, deadline
//! and checksum checks, an `AsyncRead` adapter and `write_to`.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use http_body::Body as _;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::time::{Instant, Sleep};

use s3_ops::checksum::ChecksumValidator;

use crate::error::{Error, ErrorKind, TimeoutKind, TransportErrorKind};

/// Time limits that apply while a body is being received.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyLimits {
    /// No data for this long while the consumer is waiting is a stall.
    pub(crate) stall: Duration,
    /// The operation's overall deadline, if any, with its configured length
    /// (for the error message).
    pub(crate) deadline: Option<(Instant, Duration)>,
}

/// The body of a `GetObject` response, streamed from the connection.
///
/// It is a [`Stream`] of [`Bytes`] chunks with backpressure: data is read
/// from the socket only as fast as the consumer polls (nothing is buffered
/// beyond the transport's socket buffers). It fails with
/// [`ErrorKind::BodyLength`] if the body is shorter or longer than its
/// `Content-Length`, with a checksum mismatch if a full-object checksum that
/// the server returned does not match, and with a timeout if no data arrives
/// for the stall limit while the consumer waits.
///
/// Use [`ObjectBody::into_async_read`] for an [`AsyncRead`],
/// [`ObjectBody::write_to`] to copy into a writer and
/// [`ObjectBody::collect`] to buffer it in memory.
pub struct ObjectBody {
    body: reqwest::Body,
    content_length: Option<u64>,
    received: u64,
    checksum: Option<ChecksumValidator>,
    limits: BodyLimits,
    timer: Pin<Box<Sleep>>,
    timer_armed: bool,
    finished: bool,
}

impl ObjectBody {
    pub(crate) fn new(
        body: reqwest::Body,
        content_length: Option<u64>,
        limits: BodyLimits,
    ) -> Self {
        Self {
            body,
            content_length,
            received: 0,
            checksum: None,
            limits,
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            timer_armed: false,
            finished: false,
        }
    }

    /// An empty body (for responses that have none).
    pub(crate) fn empty() -> Self {
        let limits = BodyLimits {
            stall: Duration::from_secs(1),
            deadline: None,
        };
        Self::new(reqwest::Body::from(Bytes::new()), Some(0), limits)
    }

    /// Verifies the body against `validator` when it ends.
    pub(crate) fn verify_with(&mut self, validator: ChecksumValidator) {
        self.checksum = Some(validator);
    }

    /// True if a full-object checksum announced by the server will be
    /// verified when the body ends.
    pub fn verifies_checksum(&self) -> bool {
        self.checksum.is_some()
    }

    /// The `Content-Length` the server announced, if any.
    pub fn content_length(&self) -> Option<u64> {
        self.content_length
    }

    /// Bytes received so far.
    pub fn bytes_received(&self) -> u64 {
        self.received
    }

    /// The next chunk, `None` at the (verified) end of the body.
    pub async fn next_chunk(&mut self) -> Option<Result<Bytes, Error>> {
        poll_fn(|cx| Pin::new(&mut *self).poll_next(cx)).await
    }

    /// Reads the whole body into memory.
    pub async fn collect(self) -> Result<Bytes, Error> {
        self.collect_limited(u64::MAX).await
    }

    /// Reads the whole body into memory, failing once it exceeds `limit`
    /// bytes.
    pub(crate) async fn collect_limited(mut self, limit: u64) -> Result<Bytes, Error> {
        let mut first: Option<Bytes> = None;
        let mut buffer = BytesMut::new();
        while let Some(chunk) = self.next_chunk().await {
            let chunk = chunk?;
            if self.received > limit {
                return Err(Error::from(s3_ops::Error::MalformedResponse(
                    s3_ops::MalformedResponse::Invalid(format!(
                        "response body exceeds the {limit}-byte limit"
                    )),
                )));
            }
            if let Some(previous) = first.take() {
                // A second chunk: from here on, gather into one buffer.
                let expected = self.content_length.unwrap_or(0).min(limit) as usize;
                buffer.reserve(expected.max(previous.len() + chunk.len()));
                buffer.extend_from_slice(&previous);
                buffer.extend_from_slice(&chunk);
            } else if buffer.is_empty() {
                // A body of one chunk is returned without a copy.
                first = Some(chunk);
            } else {
                buffer.extend_from_slice(&chunk);
            }
        }
        Ok(first.unwrap_or_else(|| buffer.freeze()))
    }

    /// Copies the body into `writer` and flushes it; returns the byte count.
    /// The body's checks (length, checksum) have passed when this returns
    /// `Ok`.
    pub async fn write_to<W>(mut self, writer: &mut W) -> Result<u64, Error>
    where
        W: AsyncWrite + Unpin + ?Sized,
    {
        while let Some(chunk) = self.next_chunk().await {
            writer.write_all(&chunk?).await.map_err(Error::io)?;
        }
        writer.flush().await.map_err(Error::io)?;
        Ok(self.received)
    }

    /// Writes the body to a new file at `path` (truncating an existing one);
    /// returns the byte count. On error the partial file is left in place.
    pub async fn write_to_file(self, path: impl AsRef<Path>) -> Result<u64, Error> {
        let mut file = tokio::fs::File::create(path.as_ref())
            .await
            .map_err(Error::io)?;
        let written = self.write_to(&mut file).await?;
        file.sync_all().await.map_err(Error::io)?;
        Ok(written)
    }

    /// An [`AsyncRead`] over the body; errors surface as [`io::Error`]s
    /// wrapping the client [`Error`].
    pub fn into_async_read(self) -> ObjectReader {
        ObjectReader {
            body: self,
            pending: Bytes::new(),
        }
    }

    fn fail(&mut self, error: Error) -> Poll<Option<Result<Bytes, Error>>> {
        self.finished = true;
        Poll::Ready(Some(Err(error)))
    }

    fn length_error(&self) -> Error {
        Error::new(ErrorKind::BodyLength {
            expected: self.content_length.unwrap_or(0),
            received: self.received,
        })
    }

    /// Called at the end of the body: the length and checksum must match.
    fn finish(&mut self) -> Option<Error> {
        self.finished = true;
        if let Some(expected) = self.content_length
            && self.received != expected
        {
            return Some(self.length_error());
        }
        let checksum = self.checksum.take()?;
        checksum.finish().err().map(Error::from)
    }

    fn arm_timer(&mut self) {
        let mut deadline = Instant::now() + self.limits.stall;
        if let Some((operation_deadline, _)) = self.limits.deadline {
            deadline = deadline.min(operation_deadline);
        }
        self.timer.as_mut().reset(deadline);
        self.timer_armed = true;
    }

    fn timeout_error(&self) -> Error {
        match self.limits.deadline {
            Some((deadline, limit)) if Instant::now() >= deadline => {
                Error::timeout(TimeoutKind::Operation(limit))
            }
            _ => Error::timeout(TimeoutKind::Stalled(self.limits.stall)),
        }
    }
}

impl Stream for ObjectBody {
    type Item = Result<Bytes, Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.finished {
            return Poll::Ready(None);
        }
        // The stall clock runs only while the consumer is waiting for data: a
        // consumer that pauses between chunks is backpressure, not a stall.
        if !this.timer_armed {
            this.arm_timer();
        }
        loop {
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Pending => {
                    if this.timer.as_mut().poll(cx).is_ready() {
                        let error = this.timeout_error();
                        return this.fail(error);
                    }
                    return Poll::Pending;
                }
                Poll::Ready(None) => {
                    return match this.finish() {
                        Some(error) => Poll::Ready(Some(Err(error))),
                        None => Poll::Ready(None),
                    };
                }
                Poll::Ready(Some(Err(cause))) => {
                    let error = match this.content_length {
                        Some(_) => this.length_error(),
                        None => {
                            Error::new(ErrorKind::Transport(TransportErrorKind::ConnectionDropped))
                        }
                    };
                    return this.fail(error.with_source(cause));
                }
                Poll::Ready(Some(Ok(frame))) => {
                    let Ok(data) = frame.into_data() else {
                        continue; // trailers carry nothing we check
                    };
                    if data.is_empty() {
                        continue;
                    }
                    this.received += data.len() as u64;
                    if this.content_length.is_some_and(|len| this.received > len) {
                        let error = this.length_error();
                        return this.fail(error);
                    }
                    if let Some(checksum) = &mut this.checksum {
                        checksum.update(&data);
                    }
                    this.timer_armed = false;
                    return Poll::Ready(Some(Ok(data)));
                }
            }
        }
    }
}

impl fmt::Debug for ObjectBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectBody")
            .field("content_length", &self.content_length)
            .field("received", &self.received)
            .field("verifies_checksum", &self.checksum.is_some())
            .finish()
    }
}

/// An [`AsyncRead`] over an [`ObjectBody`], made by
/// [`ObjectBody::into_async_read`].
#[derive(Debug)]
pub struct ObjectReader {
    body: ObjectBody,
    pending: Bytes,
}

impl AsyncRead for ObjectReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while this.pending.is_empty() {
            match Pin::new(&mut this.body).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Err(error.into())),
                Poll::Ready(Some(Ok(chunk))) => this.pending = chunk,
            }
        }
        let n = this.pending.len().min(buf.remaining());
        buf.put_slice(&this.pending.split_to(n));
        Poll::Ready(Ok(()))
    }
}

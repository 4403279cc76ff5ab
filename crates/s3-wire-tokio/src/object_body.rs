//! Response bodies: a pull-based stream of chunks with length, stall, deadline
//! and checksum checks, an `AsyncRead` adapter and `write_to`.

use std::fmt;
use std::future::{Future, poll_fn};
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use http_body::Body as _;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::time::{Instant, Sleep};

use s3_ops::checksum::ChecksumValidator;
use s3_ops::ops::head_object::ObjectHead;

use crate::error::{Error, ErrorKind, TimeoutKind, TransportErrorKind};
use crate::file_writer::{FileWriter, PositionedWriter};
use crate::task_hop::{self, ReadAhead};
use crate::verification::{NotVerified, Verification};

/// Bytes [`ObjectBody::write_to_file`] gathers for one batch of positioned writes (it holds
/// at most two: one being written, one being gathered).
const FILE_WRITE_BATCH: usize = 1 << 20;

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
/// A `GetObject` body whose connection breaks (or stalls) is resumed where it
/// stopped, as object_store and boto3 do: a ranged `GetObject` for the missing
/// bytes, pinned to the same object by `If-Match` on its ETag; the checks above
/// then cover the joined body. Every request for the body counts against
/// `RetryConfig::max_attempts` (the first GET's tries included: with 5 attempts, a
/// body makes at most 5 requests in all), each continuation takes from the client's
/// retry budget, and all stay within the operation deadline. A body that fails
/// reports every request made for it in [`Error::attempts`]. Bodies without a strong
/// ETag are not resumed.
///
/// Use [`ObjectBody::into_async_read`] for an [`AsyncRead`],
/// [`ObjectBody::write_to`] to copy into a writer and
/// [`ObjectBody::collect`] to buffer it in memory.
///
/// Each chunk is handed from the connection's task to the one reading the body. On a
/// multi-thread runtime, reading a large body chunk by chunk from the thread that blocks on
/// the runtime (the body of a `#[tokio::main]` function) takes about twice the CPU of the
/// same reading in a spawned task, or on a current-thread runtime, where no chunk changes
/// threads (the reading alone, before whatever the caller does with the chunks; measured in
/// the project's `docs/performance.md`, single GET).
pub struct ObjectBody {
    body: reqwest::Body,
    content_length: Option<u64>,
    received: u64,
    checksum: Option<ChecksumValidator>,
    limits: BodyLimits,
    timer: Pin<Box<Sleep>>,
    timer_armed: bool,
    finished: bool,
    resume: Option<Resume>,
    /// Requests made for this body so far (the first GET's tries, continuations).
    requests: u32,
    verification: Verification,
}

/// How a broken-off `GetObject` body continues: what starts a continuation request, and
/// the one in flight.
struct Resume {
    start: Resumer,
    /// In a `Mutex` only so that `ObjectBody` stays `Sync`; it is reached through
    /// `&mut self` and never locked.
    pending: Option<Mutex<Continuation>>,
}

/// A continuation request: the body that replaces the broken one, and the requests made
/// for the body in all.
type Continuation = Pin<Box<dyn Future<Output = Result<(reqwest::Body, u32), Error>> + Send>>;

/// Whether a broken-off body continues.
pub(crate) enum Resumption {
    /// A continuation request is on its way.
    Started(Continuation),
    /// No retry budget is left for one.
    BudgetSpent,
    /// Not resumed: attempts used up, deadline passed, or nothing was missing.
    Refused,
}

/// Starts the request for the body bytes after the first `received` (within the operation
/// `deadline`, after `requests` requests for the body), or says why not. Behind `dyn` so
/// that only programs that call [`Client::get_object`](crate::Client::get_object) link the continuation code; every
/// response body has this field.
pub(crate) type Resumer =
    Box<dyn FnMut(u64, Option<(Instant, Duration)>, u32) -> Resumption + Send + Sync>;

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
            resume: None,
            requests: 0,
            verification: Verification::NotVerified(NotVerified::Disabled),
        }
    }

    /// Lets the body resume (see the type's docs) after a broken connection.
    pub(crate) fn resume_with(&mut self, start: Resumer) {
        self.resume = Some(Resume {
            start,
            pending: None,
        });
    }

    /// An empty body (for responses that have none).
    pub(crate) fn empty() -> Self {
        let limits = BodyLimits {
            stall: Duration::from_secs(1),
            deadline: None,
        };
        Self::new(reqwest::Body::from(Bytes::new()), Some(0), limits)
    }

    /// Decides what the body verifies: the full-object checksum in `head` if there is
    /// one (asked for with checksum mode or not), otherwise why nothing.
    pub(crate) fn verify_as(&mut self, asked: bool, head: &ObjectHead) {
        let why_not = if !asked {
            NotVerified::Disabled
        } else if head
            .content_range
            .is_some_and(|range| !range.is_whole_object())
        {
            NotVerified::PartOfObject
        } else if head.checksums.is_composite() {
            NotVerified::CompositeNotByParts
        } else {
            NotVerified::StoreSentNone
        };
        self.verification = match head.checksum_validator() {
            Some(validator) => {
                let expected = validator.expected().clone();
                self.checksum = Some(validator);
                Verification::FullObject(expected)
            }
            None => Verification::NotVerified(why_not),
        };
    }

    /// The transport's body under the checks: what a continuation of another body reads.
    pub(crate) fn into_transport_body(self) -> reqwest::Body {
        self.body
    }

    /// Counts the `requests` the body's first response took.
    pub(crate) fn set_requests(&mut self, requests: u32) {
        self.requests = requests;
    }

    /// What the body is checked against as it is read:
    /// [`Verification::FullObject`] if the store sent the whole object's checksum (the
    /// body then fails with a checksum mismatch unless every byte matches it; the check
    /// has passed when the body ends without an error), otherwise why nothing can be
    /// checked: checksum mode off, a range or part of the object, a composite multipart
    /// value, or no checksum stored.
    pub fn verification(&self) -> &Verification {
        &self.verification
    }

    /// The requests made for this body so far: the first GET's tries and the
    /// continuations after broken connections.
    pub fn requests(&self) -> u32 {
        self.requests
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

    /// Reads the whole body into memory. Called outside every task of a multi-thread
    /// runtime (from `block_on`, the body of `#[tokio::main]`), a body not all received yet
    /// is read by a task that hands over only the result.
    pub async fn collect(self) -> Result<Bytes, Error> {
        task_hop::in_task(self.collect_limited(u64::MAX)).await
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
    /// `Ok`. Called outside every task of a multi-thread runtime, the body is read ahead by
    /// a task and handed over in batches.
    pub async fn write_to<W>(mut self, writer: &mut W) -> Result<u64, Error>
    where
        W: AsyncWrite + Unpin + ?Sized,
    {
        if task_hop::outside_task_on_multi_thread() {
            let mut batches = ReadAhead::start(self, &tokio::runtime::Handle::current());
            let mut written = 0;
            while let Some(batch) = batches.next().await {
                for chunk in batch? {
                    writer.write_all(&chunk).await.map_err(Error::io)?;
                    written += chunk.len() as u64;
                }
            }
            writer.flush().await.map_err(Error::io)?;
            return Ok(written);
        }
        while let Some(chunk) = self.next_chunk().await {
            writer.write_all(&chunk?).await.map_err(Error::io)?;
        }
        writer.flush().await.map_err(Error::io)?;
        Ok(self.received)
    }

    /// Writes the body to a new file at `path` (truncating an existing one);
    /// returns the byte count. On error the partial file is left in place.
    ///
    /// The chunks go to the file as they arrived, by position, in batches written on the
    /// blocking pool while the next batch is received. Called outside every task of a
    /// multi-thread runtime, this runs as a task that hands over only the result.
    pub async fn write_to_file(self, path: impl AsRef<Path>) -> Result<u64, Error> {
        task_hop::in_task(self.write_to_file_here(path.as_ref().to_path_buf())).await
    }

    async fn write_to_file_here(mut self, path: std::path::PathBuf) -> Result<u64, Error> {
        let file = tokio::task::spawn_blocking(move || std::fs::File::create(path))
            .await
            .map_err(|e| Error::io(io::Error::other(e)))?
            .map_err(Error::io)?;
        let file = std::sync::Arc::new(file);
        let mut writer =
            PositionedWriter::new(FileWriter::start(file.clone()), 0, FILE_WRITE_BATCH);
        while let Some(chunk) = self.next_chunk().await {
            writer.push(chunk?).await?;
        }
        writer.finish().await?;
        tokio::task::spawn_blocking(move || file.sync_all())
            .await
            .map_err(|e| Error::io(io::Error::other(e)))?
            .map_err(Error::io)?;
        Ok(self.received)
    }

    /// An [`AsyncRead`] over the body; errors surface as [`io::Error`]s
    /// wrapping the client [`Error`].
    pub fn into_async_read(self) -> ObjectReader {
        ObjectReader {
            body: self,
            pending: Bytes::new(),
        }
    }

    /// Ends the body with `error`, which counts every request made for the body.
    fn fail(&mut self, error: Error) -> Poll<Option<Result<Bytes, Error>>> {
        self.finished = true;
        let attempts = error.attempts().max(self.requests);
        Poll::Ready(Some(Err(error.with_attempts(attempts))))
    }

    /// The connection broke or stalled with `error`: starts resuming (`None`) if
    /// possible, otherwise fails the body with `error`.
    fn resume_or_fail(&mut self, mut error: Error) -> Option<Poll<Option<Result<Bytes, Error>>>> {
        let (received, deadline, requests) = (self.received, self.limits.deadline, self.requests);
        let Some(resume) = &mut self.resume else {
            return Some(self.fail(error));
        };
        match (resume.start)(received, deadline, requests) {
            Resumption::Started(continuation) => {
                resume.pending = Some(Mutex::new(continuation));
                None
            }
            Resumption::BudgetSpent => {
                error.set_budget_exhausted();
                Some(self.fail(error))
            }
            Resumption::Refused => Some(self.fail(error)),
        }
    }

    /// Polls a continuation request in flight: `Ready(Ok)` once its body replaced the
    /// broken one, `Ready(Err)` if it failed.
    fn poll_continuation(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let Some(resume) = &mut self.resume else {
            return Poll::Ready(Ok(()));
        };
        let Some(pending) = &mut resume.pending else {
            return Poll::Ready(Ok(()));
        };
        let pending = pending.get_mut().unwrap_or_else(|e| e.into_inner());
        let result = std::task::ready!(pending.as_mut().poll(cx));
        resume.pending = None;
        let (body, requests) = result?;
        self.body = body;
        self.requests = requests;
        self.timer_armed = false;
        Poll::Ready(Ok(()))
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
        loop {
            // A continuation request (with its own timeouts) replaces a broken body.
            match this.poll_continuation(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(error)) => return this.fail(error),
                Poll::Ready(Ok(())) => {}
            }
            // The stall clock runs only while the consumer is waiting for data: a
            // consumer that pauses between chunks is backpressure, not a stall.
            if !this.timer_armed {
                this.arm_timer();
            }
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Pending => {
                    if this.timer.as_mut().poll(cx).is_ready() {
                        let error = this.timeout_error();
                        // A stall may be a dead connection: resume. The operation
                        // deadline is final.
                        if !matches!(error.kind(), ErrorKind::Timeout(TimeoutKind::Stalled(_))) {
                            return this.fail(error);
                        }
                        if let Some(failed) = this.resume_or_fail(error) {
                            return failed;
                        }
                        continue;
                    }
                    return Poll::Pending;
                }
                Poll::Ready(None) => {
                    return match this.finish() {
                        Some(error) => this.fail(error),
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
                    if let Some(failed) = this.resume_or_fail(error.with_source(cause)) {
                        return failed;
                    }
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
            .field("requests", &self.requests)
            .field("verification", &self.verification)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use tokio::io::AsyncReadExt;

    #[test]
    fn bodies_are_send_and_sync() {
        fn is<T: Send + Sync>() {}
        is::<ObjectBody>();
        is::<ObjectReader>();
        is::<crate::GetObjectResponse>();
    }

    /// A scripted response body: each step yields data, fails, or stays
    /// pending forever.
    enum Step {
        Data(&'static [u8]),
        Fail,
        Hang,
    }

    struct Scripted(VecDeque<Step>);

    impl http_body::Body for Scripted {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
            let this = self.get_mut();
            match this.0.front() {
                None => Poll::Ready(None),
                Some(Step::Hang) => Poll::Pending,
                Some(Step::Fail) => {
                    this.0.pop_front();
                    Poll::Ready(Some(Err(std::io::Error::other("connection reset"))))
                }
                Some(Step::Data(_)) => {
                    let Some(Step::Data(data)) = this.0.pop_front() else {
                        unreachable!()
                    };
                    Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from_static(data)))))
                }
            }
        }
    }

    fn body(steps: Vec<Step>, content_length: Option<u64>) -> ObjectBody {
        let limits = BodyLimits {
            stall: Duration::from_secs(5),
            deadline: None,
        };
        ObjectBody::new(
            reqwest::Body::wrap(Scripted(steps.into())),
            content_length,
            limits,
        )
    }

    #[tokio::test]
    async fn complete_body_is_collected() {
        let object = body(vec![Step::Data(b"hello "), Step::Data(b"world")], Some(11));
        assert_eq!(&object.collect().await.unwrap()[..], b"hello world");
    }

    #[tokio::test]
    async fn short_and_long_bodies_are_length_errors() {
        let short = body(vec![Step::Data(b"hello")], Some(11));
        match short.collect().await.unwrap_err().kind() {
            ErrorKind::BodyLength { expected, received } => {
                assert_eq!((*expected, *received), (11, 5))
            }
            other => panic!("{other:?}"),
        }
        let cut = body(vec![Step::Data(b"hello"), Step::Fail], Some(11));
        let error = cut.collect().await.unwrap_err();
        assert!(matches!(
            error.kind(),
            ErrorKind::BodyLength {
                expected: 11,
                received: 5
            }
        ));
        assert!(
            std::error::Error::source(&error).is_some(),
            "keeps the transport cause"
        );
        let long = body(vec![Step::Data(b"hello world!")], Some(11));
        assert!(matches!(
            long.collect().await.unwrap_err().kind(),
            ErrorKind::BodyLength {
                expected: 11,
                received: 12
            }
        ));
    }

    /// The head of a 200 GetObject response with `headers`.
    fn head(headers: &[(&str, &str)]) -> ObjectHead {
        let mut response = http::Response::builder().status(200);
        for (name, value) in headers {
            response = response.header(*name, *value);
        }
        let (parts, ()) = response.body(()).unwrap().into_parts();
        let get = s3_ops::ops::get_object::GetObject::new(
            s3_ops::BucketName::new("bucket").unwrap(),
            s3_ops::ObjectKey::new("key").unwrap(),
        );
        get.response_head(&parts).unwrap().head
    }

    #[tokio::test]
    async fn a_full_object_checksum_is_verified_at_the_end() {
        use s3_ops::{Checksum, ChecksumAlgorithm};
        // CRC-32 of "123456789" is 0xCBF43926.
        let crc = [
            ("content-length", "9"),
            ("x-amz-checksum-crc32", "y/Q5Jg=="),
        ];
        let mut object = body(vec![Step::Data(b"1234"), Step::Data(b"56789")], Some(9));
        object.verify_as(true, &head(&crc));
        let good = Checksum::from_base64(ChecksumAlgorithm::Crc32, "y/Q5Jg==").unwrap();
        assert_eq!(object.verification(), &Verification::FullObject(good));
        assert_eq!(&object.collect().await.unwrap()[..], b"123456789");

        // Also when the store sends a checksum unasked.
        let mut corrupted = body(vec![Step::Data(b"1234"), Step::Data(b"5678X")], Some(9));
        corrupted.verify_as(false, &head(&crc));
        corrupted.set_requests(2);
        let error = corrupted.collect().await.unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Operation(s3_ops::Error::ChecksumMismatch { .. })
            ),
            "{error:?}"
        );
        assert_eq!(error.attempts(), 2, "the body's requests are the error's");
    }

    #[tokio::test]
    async fn a_body_without_a_full_object_checksum_says_why() {
        let why = |asked: bool, headers: &[(&str, &str)]| {
            let mut object = body(Vec::new(), Some(9));
            object.verify_as(asked, &head(headers));
            assert!(object.checksum.is_none());
            object.verification().clone()
        };
        let not = Verification::NotVerified;
        assert_eq!(why(false, &[]), not(NotVerified::Disabled));
        assert_eq!(why(true, &[]), not(NotVerified::StoreSentNone));
        let range = [
            ("content-range", "bytes 0-8/20"),
            ("x-amz-checksum-crc32", "y/Q5Jg=="),
        ];
        assert_eq!(why(true, &range), not(NotVerified::PartOfObject));
        let composite = [(
            "x-amz-checksum-sha256",
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=-3",
        )];
        assert_eq!(why(true, &composite), not(NotVerified::CompositeNotByParts));
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_consumer_sees_a_stall_but_a_pausing_consumer_does_not() {
        let mut object = body(vec![Step::Data(b"ab"), Step::Data(b"cd"), Step::Hang], None);
        assert_eq!(&object.next_chunk().await.unwrap().unwrap()[..], b"ab");
        // The consumer pauses far longer than the stall limit: backpressure.
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert_eq!(&object.next_chunk().await.unwrap().unwrap()[..], b"cd");
        let started = Instant::now();
        let error = object.next_chunk().await.unwrap().unwrap_err();
        assert!(matches!(
            error.kind(),
            ErrorKind::Timeout(TimeoutKind::Stalled(_))
        ));
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        assert!(object.next_chunk().await.is_none(), "ends after an error");
    }

    #[tokio::test]
    async fn async_read_and_write_to_deliver_the_bytes() {
        let mut reader =
            body(vec![Step::Data(b"abc"), Step::Data(b"def")], Some(6)).into_async_read();
        let mut text = String::new();
        reader.read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "abcdef");

        let mut sink = Vec::new();
        let written = body(vec![Step::Data(b"xyz")], Some(3))
            .write_to(&mut sink)
            .await
            .unwrap();
        assert_eq!((written, &sink[..]), (3, &b"xyz"[..]));

        let mut reader = body(vec![Step::Data(b"abc")], Some(6)).into_async_read();
        let error = reader.read_to_end(&mut Vec::new()).await.unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::UnexpectedEof);
    }
}

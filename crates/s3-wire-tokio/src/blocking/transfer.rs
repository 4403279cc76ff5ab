//! Managed transfers for blocking code: started from the async client's builders, waited
//! for, watched and cancelled from any thread; `std::io` readers and writers as sources and
//! destinations.

use std::future::{Future, IntoFuture};
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use tokio::io::AsyncWrite;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::Client;
use crate::error::{Error, TransferErrorKind};
use crate::transfer::{Destination, DirectoryHandle, DirectoryProgress, Progress, UploadSource};

/// A managed transfer to be started: the async client's builder (set its options with
/// [`Transfer::configure`]) and the blocking client that runs it.
#[must_use = "a transfer does nothing until it is run or started"]
pub struct Transfer<B> {
    builder: B,
    client: Client,
}

impl<B> Transfer<B>
where
    B: IntoFuture,
    B::IntoFuture: Controlled,
{
    pub(super) fn new(builder: B, client: Client) -> Self {
        Self { builder, client }
    }

    /// Sets the transfer's options on the async builder:
    /// `.configure(|upload| upload.part_size(16 << 20).concurrency(4))`.
    pub fn configure(mut self, set: impl FnOnce(B) -> B) -> Self {
        self.builder = set(self.builder);
        self
    }

    /// Starts the transfer as a task on the client's runtime, for a [`Handle`] with its
    /// progress and cancellation.
    ///
    /// # Panics
    ///
    /// Inside a Tokio runtime (see the [module docs](super)).
    pub fn start(self) -> Handle<B::IntoFuture> {
        let running = {
            let _entered = self.client.runtime.get().enter();
            self.builder.into_future()
        };
        Handle::new(running, self.client)
    }

    /// Runs the transfer to its end: [`Transfer::start`], then [`Handle::wait`].
    pub fn run(self) -> <B::IntoFuture as Future>::Output {
        self.start().wait()
    }
}

/// What a running managed transfer of the async client offers: its progress, its
/// cancellation, whether it ended ([`crate::TransferHandle`], [`crate::DirectoryHandle`]).
pub trait Controlled: Future + Unpin + Send + 'static {
    /// What its progress is told in.
    type Progress;
    /// The progress now.
    fn progress(&self) -> Self::Progress;
    /// Asks the transfer to stop (see [`crate::TransferHandle::cancel`]).
    fn cancel(&self);
    /// True once the transfer has ended.
    fn is_finished(&self) -> bool;
}

impl<T: Send + 'static> Controlled for crate::TransferHandle<T> {
    type Progress = Progress;
    fn progress(&self) -> Progress {
        crate::TransferHandle::progress(self)
    }
    fn cancel(&self) {
        crate::TransferHandle::cancel(self)
    }
    fn is_finished(&self) -> bool {
        crate::TransferHandle::is_finished(self)
    }
}

impl Controlled for DirectoryHandle {
    type Progress = DirectoryProgress;
    fn progress(&self) -> DirectoryProgress {
        DirectoryHandle::progress(self)
    }
    fn cancel(&self) {
        DirectoryHandle::cancel(self)
    }
    fn is_finished(&self) -> bool {
        DirectoryHandle::is_finished(self)
    }
}

/// Any async work started by [`Client::spawn`]: cancelling it stops it where it waits.
pub struct Task<T>(pub(super) JoinHandle<Result<T, Error>>);

impl<T> Future for Task<T> {
    type Output = Result<T, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Poll::Ready(match ready!(Pin::new(&mut self.0).poll(cx)) {
            Ok(result) => result,
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            Err(_) => Err(Error::transfer_error(TransferErrorKind::Cancelled)),
        })
    }
}

impl<T: Send + 'static> Controlled for Task<T> {
    type Progress = ();
    fn progress(&self) {}
    fn cancel(&self) {
        self.0.abort();
    }
    fn is_finished(&self) -> bool {
        self.0.is_finished()
    }
}

/// A managed transfer running on the blocking client's runtime. Dropping it before it ended
/// cancels the transfer, as dropping the async handle does.
#[must_use = "dropping a transfer handle cancels the transfer"]
pub struct Handle<H: Controlled> {
    running: H,
    /// The outcome was taken (by [`Handle::wait_timeout`]).
    taken: bool,
    client: Client,
}

impl<H: Controlled> Handle<H> {
    pub(super) fn new(running: H, client: Client) -> Self {
        Self {
            running,
            taken: false,
            client,
        }
    }

    /// The transfer's progress now (its last, once it ended).
    pub fn progress(&self) -> H::Progress {
        self.running.progress()
    }

    /// Asks the transfer to stop; [`Handle::wait`] then gives the outcome, after the
    /// cleanup (a multipart upload aborted, a partial download removed).
    pub fn cancel(&self) {
        if !self.taken {
            self.running.cancel();
        }
    }

    /// True once the transfer has ended ([`Handle::wait`] returns at once).
    pub fn is_finished(&self) -> bool {
        self.taken || self.running.is_finished()
    }

    /// Blocks until the transfer ends; its outcome.
    ///
    /// # Panics
    ///
    /// Inside a Tokio runtime, and after [`Handle::wait_timeout`] returned the outcome.
    pub fn wait(mut self) -> H::Output {
        assert!(!self.taken, "the outcome was taken already");
        self.client.runtime.get().block_on(&mut self.running)
    }

    /// Blocks until the transfer ends or `timeout` passes: the outcome, or `None` if it is
    /// still running (a caller that must do something between checks, such as a binding
    /// that looks for a signal, waits in steps with this).
    ///
    /// # Panics
    ///
    /// Inside a Tokio runtime, and after it returned the outcome once.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<H::Output> {
        assert!(!self.taken, "the outcome was taken already");
        let running = &mut self.running;
        let outcome = self
            .client
            .runtime
            .get()
            .block_on(async { tokio::time::timeout(timeout, running).await.ok() });
        self.taken = outcome.is_some();
        outcome
    }
}

impl<H: Controlled> std::fmt::Debug for Handle<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::Handle")
            .field("finished", &self.is_finished())
            .finish_non_exhaustive()
    }
}

/// Bytes read from a [`Read`] source, or written to a [`Write`] destination, at a time.
const IO_BATCH: usize = 1 << 20;

/// An upload source that reads `reader` on the runtime's blocking pool, 1 MiB at a time,
/// at most two reads ahead of the upload; `len` is its length if known (a multipart upload
/// of unknown length otherwise). A read error fails the upload.
pub fn read_source(reader: impl Read + Send + 'static, len: Option<u64>) -> UploadSource {
    UploadSource::stream(
        BlockingReads {
            reader: Some(Box::new(reader)),
            receiver: None,
        },
        len,
    )
}

struct BlockingReads {
    /// The reader until the first poll, which starts the reading job.
    reader: Option<Box<dyn Read + Send>>,
    receiver: Option<mpsc::Receiver<io::Result<Bytes>>>,
}

impl Stream for BlockingReads {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(reader) = self.reader.take() {
            let (sender, receiver) = mpsc::channel(2);
            tokio::task::spawn_blocking(move || read_all(reader, sender));
            self.receiver = Some(receiver);
        }
        match &mut self.receiver {
            Some(receiver) => receiver.poll_recv(cx),
            None => Poll::Ready(None),
        }
    }
}

/// The reading job of [`read_source`]: reads until the end, an error, or the upload stops
/// taking what it reads.
fn read_all(mut reader: Box<dyn Read + Send>, sender: mpsc::Sender<io::Result<Bytes>>) {
    loop {
        let mut buffer = BytesMut::zeroed(IO_BATCH);
        let mut filled = 0;
        let result = loop {
            match reader.read(&mut buffer[filled..]) {
                Ok(0) => break Ok(()),
                Ok(n) => {
                    filled += n;
                    if filled == buffer.len() {
                        break Ok(());
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => break Err(error),
            }
        };
        let at_end = filled < buffer.len();
        buffer.truncate(filled);
        if filled > 0 && sender.blocking_send(Ok(buffer.freeze())).is_err() {
            return;
        }
        if let Err(error) = result {
            let _ = sender.blocking_send(Err(error));
            return;
        }
        if at_end {
            return;
        }
    }
}

/// A download destination that writes in order to `writer` on the runtime's blocking pool,
/// 1 MiB at a time, one write behind the download (see [`Destination::writer`]); the
/// download fails with the writer's error.
pub fn write_destination(writer: impl Write + Send + 'static) -> Destination {
    Destination::writer(BlockingWrites::new(Box::new(writer), None))
}

/// [`write_destination`], except that a body of at most one batch (1 MiB) is not written:
/// the download leaves it in `kept`, for the caller to write on its own thread once the
/// download succeeded (and to flush the writer then). For a writer that costs more to call
/// from the blocking pool than from the thread that started the download: a Python file
/// object, whose every call from another thread first waits for the GIL.
pub fn write_destination_keeping_small(
    writer: impl Write + Send + 'static,
    kept: Kept,
) -> Destination {
    Destination::writer(BlockingWrites::new(Box::new(writer), Some(kept)))
}

/// The body a [`write_destination_keeping_small`] download left unwritten, if it was that
/// small. Clones share it.
#[derive(Clone, Debug, Default)]
pub struct Kept(Arc<Mutex<Option<Bytes>>>);

impl Kept {
    /// An empty one, to give to the download and keep a clone of.
    pub fn new() -> Self {
        Self::default()
    }

    /// The body left unwritten; `None` when the download wrote it, or before it ended.
    pub fn take(&self) -> Option<Bytes> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

struct BlockingWrites {
    state: WriterState,
    /// Bytes gathered for the next write.
    gathered: BytesMut,
    /// Bytes were written since the writer was last flushed.
    unflushed: bool,
    /// Where a body that never needed a write is left instead of being written.
    keep: Option<Kept>,
}

enum WriterState {
    Idle(Box<dyn Write + Send>),
    /// A write (and flush, when asked) on the blocking pool, which gives the writer back.
    Writing(JoinHandle<(Box<dyn Write + Send>, io::Result<()>)>),
    Failed,
}

impl BlockingWrites {
    fn new(writer: Box<dyn Write + Send>, keep: Option<Kept>) -> Self {
        Self {
            state: WriterState::Idle(writer),
            gathered: BytesMut::new(),
            unflushed: false,
            keep,
        }
    }

    /// Waits for the write in flight, if any; the writer, ready for the next.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let WriterState::Writing(job) = &mut self.state {
            let outcome = ready!(Pin::new(job).poll(cx));
            match outcome {
                Ok((writer, Ok(()))) => self.state = WriterState::Idle(writer),
                Ok((_, Err(error))) => {
                    self.state = WriterState::Failed;
                    return Poll::Ready(Err(error));
                }
                Err(join) => {
                    self.state = WriterState::Failed;
                    return Poll::Ready(Err(io::Error::other(join)));
                }
            }
        }
        match self.state {
            WriterState::Failed => Poll::Ready(Err(io::Error::other(
                "an earlier write to the destination failed",
            ))),
            _ => Poll::Ready(Ok(())),
        }
    }

    /// Hands what was gathered to a write job (and a flush, if `flush`); from then on every
    /// byte is written here, none kept.
    fn start_write(&mut self, flush: bool) {
        self.keep = None;
        let WriterState::Idle(mut writer) = std::mem::replace(&mut self.state, WriterState::Failed)
        else {
            unreachable!("a write starts only when the writer is idle");
        };
        let batch = self.gathered.split().freeze();
        self.state = WriterState::Writing(tokio::task::spawn_blocking(move || {
            let mut result = writer.write_all(&batch);
            if flush && result.is_ok() {
                result = writer.flush();
            }
            (writer, result)
        }));
    }
}

impl AsyncWrite for BlockingWrites {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        // Bytes after a flush that kept the body: it was not the end after all.
        if let Some(kept) = this.keep.as_ref().and_then(Kept::take) {
            this.gathered.extend_from_slice(&kept);
        }
        if this.gathered.len() >= IO_BATCH {
            ready!(this.poll_idle(cx))?;
            this.start_write(false);
        }
        let n = buf.len().min(IO_BATCH - this.gathered.len());
        this.gathered.extend_from_slice(&buf[..n]);
        this.unflushed |= n > 0;
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_idle(cx))?;
        if !this.unflushed {
            return Poll::Ready(Ok(()));
        }
        this.unflushed = false;
        if let Some(keep) = &this.keep {
            let body = this.gathered.split().freeze();
            *keep.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(body);
            return Poll::Ready(Ok(()));
        }
        this.start_write(true);
        this.poll_idle(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

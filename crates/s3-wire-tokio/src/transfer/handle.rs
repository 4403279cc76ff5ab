//! The handle of a running transfer: its progress, its cancellation, its result.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::error::{Error, TransferErrorKind};
use crate::progress::{Listener, Progress, ProgressState};

/// What the handle and the driver share.
#[derive(Debug)]
pub(crate) struct Control {
    pub(crate) progress: Arc<ProgressState>,
    cancelled: AtomicBool,
    notify: Notify,
}

impl Control {
    pub(crate) fn new(progress: Arc<ProgressState>) -> Arc<Self> {
        Arc::new(Self {
            progress,
            cancelled: AtomicBool::new(false),
            notify: Notify::new(),
        })
    }

    fn cancel(&self) {
        if !self.cancelled.swap(true, Ordering::AcqRel) {
            // `notify_one` keeps a permit if the driver is not waiting right now.
            self.notify.notify_one();
        }
    }

    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Resolves once the transfer is cancelled.
    pub(crate) async fn cancelled(&self) {
        while !self.is_cancelled() {
            self.notify.notified().await;
        }
    }

    /// [`Control::cancelled`] as a future of its own, to keep and poll from a driver loop.
    pub(crate) fn watch(self: &Arc<Self>) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        let control = self.clone();
        Box::pin(async move { control.cancelled().await })
    }
}

/// A managed transfer running in the background (a Tokio task): read its [`Progress`] at
/// any time, [`cancel`](Self::cancel) it, and `.await` it for the result.
///
/// The transfer makes progress whether or not the handle is polled. Dropping the handle
/// cancels the transfer: it stops starting parts, lets the requests in flight settle for a
/// bounded time and aborts its multipart upload in the background (bounded and retried) —
/// a process that exits right away may leave an upload behind, which
/// [`Client::abort_stale_uploads`](crate::Client::abort_stale_uploads) sweeps.
#[must_use = "dropping a transfer handle cancels the transfer"]
pub struct TransferHandle<T> {
    control: Arc<Control>,
    task: JoinHandle<Result<T, Error>>,
    finished: bool,
}

impl<T: Send + 'static> TransferHandle<T> {
    /// Runs the driver that `drive` makes for the transfer's control (its progress, of
    /// `total` bytes if known, reported to `listener`) as a task. Must be called within a
    /// Tokio runtime.
    pub(crate) fn start<F>(
        total: Option<u64>,
        listener: Option<Listener>,
        drive: impl FnOnce(Arc<Control>) -> F,
    ) -> Self
    where
        F: Future<Output = Result<T, Error>> + Send + 'static,
    {
        let control = Control::new(ProgressState::new(total, listener));
        let progress = control.progress.clone();
        let driven = drive(control.clone());
        Self {
            task: tokio::spawn(async move {
                let result = driven.await;
                if result.is_ok() {
                    progress.completed();
                }
                result
            }),
            control,
            finished: false,
        }
    }
}

impl<T> TransferHandle<T> {
    /// The transfer's progress now.
    pub fn progress(&self) -> Progress {
        self.control.progress.get()
    }

    /// Asks the transfer to stop: no new parts start, the ones in flight settle, a multipart
    /// upload is aborted (unless it was already completing). Awaiting the handle then gives
    /// the outcome: an error that [`is_cancelled`](Error::is_cancelled), whose
    /// [`transfer`](Error::transfer) says whether the abort succeeded — or the result, if
    /// the transfer finished first.
    pub fn cancel(&self) {
        self.control.cancel();
    }

    /// True once the transfer has ended (awaiting the handle returns at once).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

impl<T> Future for TransferHandle<T> {
    type Output = Result<T, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let result = std::task::ready!(Pin::new(&mut self.task).poll(cx));
        self.finished = true;
        Poll::Ready(match result {
            Ok(result) => result,
            // A panic in the driver is a bug: surface it where the caller waits.
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            // The runtime is shutting down and took the task with it.
            Err(_) => Err(Error::transfer_error(TransferErrorKind::Cancelled)),
        })
    }
}

impl<T> Drop for TransferHandle<T> {
    fn drop(&mut self) {
        if !self.finished {
            // The task keeps running to clean up, detached.
            self.control.cancel();
        }
    }
}

impl<T> fmt::Debug for TransferHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransferHandle")
            .field("progress", &self.progress())
            .field("cancelled", &self.control.is_cancelled())
            .field("finished", &self.task.is_finished())
            .finish()
    }
}

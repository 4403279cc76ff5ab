//! Runs a whole-body loop as a task when its caller blocks on a multi-thread runtime.
//!
//! A body read chunk by chunk from the thread that blocks on a multi-thread runtime (the
//! body of `#[tokio::main]`, `Runtime::block_on`) has every chunk handed from the
//! connection's task on a worker to that thread, and the runtime's threads woken as data
//! arrives: about twice the CPU of the same loop in a task (`docs/performance.md`, single
//! GET). The loops that consume a whole body (collect it, write it to a file) therefore run
//! as a task there once the body is not all there at their first poll, and hand over only
//! their result; a body consumed by the caller itself
//! (into a writer of its own, or a blocking `Read`) is read ahead by a task that hands it
//! over in batches ([`ReadAhead`]).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use bytes::Bytes;
use futures_core::Stream;
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::mpsc;

use crate::error::Error;

/// Whether the caller is outside every task of a multi-thread runtime it is blocking on:
/// then a loop over a body is cheaper as a task of its own.
pub(crate) fn outside_task_on_multi_thread() -> bool {
    tokio::task::try_id().is_none()
        && Handle::try_current()
            .is_ok_and(|handle| handle.runtime_flavor() == RuntimeFlavor::MultiThread)
}

/// `work` awaited as a task of the current runtime when the caller is outside every task of
/// a multi-thread runtime, or in place otherwise (already in a task, or on a current-thread
/// runtime, where no chunk changes threads). Outside a task it is first polled once in
/// place: a body that arrived whole with its headers (a small object) ends there, with no
/// task to start and no thread to wake for its result.
pub(crate) async fn in_task<T, F>(work: F) -> Result<T, Error>
where
    F: Future<Output = Result<T, Error>> + Send + 'static,
    T: Send + 'static,
{
    if !outside_task_on_multi_thread() {
        return work.await;
    }
    let mut work = Box::pin(work);
    if let Poll::Ready(result) =
        std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await
    {
        return result;
    }
    match tokio::spawn(work).await {
        Ok(result) => result,
        Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
        // The runtime is shutting down and took the task with it.
        Err(join) => Err(Error::io(std::io::Error::other(join))),
    }
}

/// At most this many bytes of chunks the body had ready go over in one batch.
const BATCH_BYTES: usize = 1 << 20;

/// Batches in the channel ahead of the reader: with [`BATCH_BYTES`], at most about 3 MiB
/// read ahead of the caller (two queued, one being gathered).
const BATCHES_AHEAD: usize = 2;

/// What the reading task hands over.
enum Message {
    /// Chunks in order, together at most about [`BATCH_BYTES`].
    Chunks(Vec<Bytes>),
    /// The body ended and passed its checks.
    End,
    /// The body failed; nothing follows.
    Failed(Error),
}

/// A body read ahead by a task of its own: the chunks it had ready at once go over
/// together, so the thread that waits for them is woken once per batch rather than once per
/// chunk, and the connection's task and the reading run on the same worker.
pub(crate) struct ReadAhead {
    receiver: mpsc::Receiver<Message>,
    ended: bool,
}

impl ReadAhead {
    /// Starts reading `body` in a task on `runtime`.
    pub(crate) fn start<S>(body: S, runtime: &Handle) -> Self
    where
        S: Stream<Item = Result<Bytes, Error>> + Send + Unpin + 'static,
    {
        let (sender, receiver) = mpsc::channel(BATCHES_AHEAD);
        runtime.spawn(read_batches(body, sender));
        Self {
            receiver,
            ended: false,
        }
    }

    /// The next batch, `None` at the (checked) end of the body.
    pub(crate) async fn next(&mut self) -> Option<Result<Vec<Bytes>, Error>> {
        let message = self.receiver.recv().await;
        self.take(message)
    }

    /// [`ReadAhead::next`] for a thread outside the runtime (it blocks).
    #[cfg(feature = "blocking")]
    pub(crate) fn blocking_next(&mut self) -> Option<Result<Vec<Bytes>, Error>> {
        let message = self.receiver.blocking_recv();
        self.take(message)
    }

    fn take(&mut self, message: Option<Message>) -> Option<Result<Vec<Bytes>, Error>> {
        if self.ended {
            return None;
        }
        match message {
            Some(Message::Chunks(chunks)) => Some(Ok(chunks)),
            Some(Message::End) => {
                self.ended = true;
                None
            }
            Some(Message::Failed(error)) => {
                self.ended = true;
                Some(Err(error))
            }
            // The task ended without saying how the body did: its runtime shut down. A
            // body cut short must not read as complete.
            None => {
                self.ended = true;
                Some(Err(Error::io(std::io::Error::other(
                    "the runtime reading the body shut down before the body ended",
                ))))
            }
        }
    }
}

/// The reading task: waits for a chunk, adds what the body has ready at once (up to
/// [`BATCH_BYTES`]), hands the batch over; stops when the reader is dropped.
async fn read_batches<S>(mut body: S, sender: mpsc::Sender<Message>)
where
    S: Stream<Item = Result<Bytes, Error>> + Unpin,
{
    loop {
        let mut batch = Vec::new();
        let mut bytes = 0;
        let mut last = None;
        while bytes < BATCH_BYTES {
            let next = if batch.is_empty() {
                std::future::poll_fn(|cx| Pin::new(&mut body).poll_next(cx)).await
            } else {
                match std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut body).poll_next(cx)))
                    .await
                {
                    Poll::Ready(next) => next,
                    Poll::Pending => break,
                }
            };
            match next {
                Some(Ok(chunk)) => {
                    bytes += chunk.len();
                    batch.push(chunk);
                }
                Some(Err(error)) => {
                    last = Some(Message::Failed(error));
                    break;
                }
                None => {
                    last = Some(Message::End);
                    break;
                }
            }
        }
        if !batch.is_empty() && sender.send(Message::Chunks(batch)).await.is_err() {
            return;
        }
        if let Some(last) = last {
            let _ = sender.send(last).await;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn multi_thread() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap()
    }

    #[test]
    fn work_ready_at_its_first_poll_ends_in_place_and_other_work_in_a_task() {
        let runtime = multi_thread();
        let ready = runtime.block_on(in_task(async { Ok(tokio::task::try_id()) }));
        assert_eq!(ready.unwrap(), None, "ready at once: no task started");
        let waiting = runtime.block_on(in_task(async {
            tokio::task::yield_now().await;
            Ok(tokio::task::try_id())
        }));
        assert!(
            waiting.unwrap().is_some(),
            "still waiting: finished as a task"
        );
    }

    #[test]
    fn inside_a_task_work_runs_in_that_task() {
        let runtime = multi_thread();
        let (outer, inner) = runtime
            .block_on(runtime.spawn(async {
                let inner = in_task(async {
                    tokio::task::yield_now().await;
                    Ok(tokio::task::try_id())
                })
                .await
                .unwrap();
                (tokio::task::id(), inner)
            }))
            .unwrap();
        assert_eq!(inner, Some(outer));
    }
}

//! What every driver loop waits on, in this order of priority: its cancellation, the
//! memory of the one action waiting for it, its requests in flight.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::task::JoinSet;

use crate::memory::{Admission, MemoryBudget, TooLarge};
use crate::transfer::handle::Control;

type AdmissionFuture = Pin<Box<dyn Future<Output = Result<Admission, TooLarge>> + Send>>;

/// A driver's cancellation, its action `A` waiting for memory, and its tasks (each ending
/// with a `T`).
pub(crate) struct Waits<A, T> {
    cancelled: Pin<Box<dyn Future<Output = ()> + Send>>,
    cancel_seen: bool,
    admitting: Option<(A, AdmissionFuture)>,
    pub(crate) tasks: JoinSet<T>,
}

/// What woke a driver up.
pub(crate) enum Wake<A, T> {
    /// The transfer was cancelled (reported once).
    Cancelled,
    /// The waiting action got its memory, or can never get it.
    Admitted(A, Result<Admission, TooLarge>),
    /// A task ended.
    Finished(T),
}

impl<A, T: Send + 'static> Waits<A, T> {
    pub(crate) fn new(control: &Arc<Control>) -> Self {
        Self {
            cancelled: control.watch(),
            cancel_seen: false,
            admitting: None,
            tasks: JoinSet::new(),
        }
    }

    /// Whether an action waits for memory (one at a time, in order).
    pub(crate) fn admitting(&self) -> Option<&A> {
        self.admitting.as_ref().map(|(action, _)| action)
    }

    /// `action` waits for `bytes` of `budget`.
    pub(crate) fn admit(&mut self, action: A, budget: &Arc<MemoryBudget>, bytes: u64) {
        let budget = budget.clone();
        let admit = Box::pin(async move { budget.admit(bytes).await });
        self.admitting = Some((action, admit));
    }

    /// Forgets the action waiting for memory.
    pub(crate) fn forget_admitting(&mut self) {
        self.admitting = None;
    }

    pub(crate) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Wake<A, T>> {
        if !self.cancel_seen && self.cancelled.as_mut().poll(cx).is_ready() {
            self.cancel_seen = true;
            return Poll::Ready(Wake::Cancelled);
        }
        if let Some((_, admitting)) = &mut self.admitting
            && let Poll::Ready(admitted) = admitting.as_mut().poll(cx)
        {
            let (action, _) = self.admitting.take().expect("polled just now");
            return Poll::Ready(Wake::Admitted(action, admitted));
        }
        if let Poll::Ready(Some(joined)) = self.tasks.poll_join_next(cx) {
            // A panic in a task is a bug: surface it where the caller waits.
            let ended = joined.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
            return Poll::Ready(Wake::Finished(ended));
        }
        Poll::Pending
    }
}

//! Stall detection: "no byte moved in either direction for N seconds".
//!
//! Request bodies [`touch`](Activity::touch) the shared [`Activity`] whenever
//! the connection takes a chunk from them; [`Activity::stalled`] resolves once
//! no touch has happened for the stall limit. Response bodies have their own
//! per-poll timer (see `object_body.rs`), because a consumer that stops reading
//! is backpressure, not a stall. (A transfer's user-facing progress is
//! `transfer::progress`.)

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// The time of the last activity of one attempt, shared between the request
/// body (which records it) and the watchdog (which reads it).
#[derive(Clone, Debug)]
pub(crate) struct Activity {
    origin: Instant,
    last_millis: Arc<AtomicU64>,
}

impl Activity {
    pub(crate) fn new() -> Self {
        Self {
            origin: Instant::now(),
            last_millis: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Records that bytes moved now.
    pub(crate) fn touch(&self) {
        let elapsed = self.origin.elapsed().as_millis() as u64;
        self.last_millis.fetch_max(elapsed, Ordering::Relaxed);
    }

    fn last(&self) -> Instant {
        self.origin + Duration::from_millis(self.last_millis.load(Ordering::Relaxed))
    }

    /// Resolves when no activity has been recorded for `limit`.
    pub(crate) async fn stalled(&self, limit: Duration) {
        loop {
            let deadline = self.last() + limit;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

/// A request body whose every frame counts as activity of its attempt. It wraps a body
/// that a bandwidth limit doles out in pieces: each piece that leaves is progress, although
/// the frame it came from was taken long before.
pub(crate) struct Active<B> {
    inner: B,
    activity: Activity,
}

impl<B> Active<B> {
    pub(crate) fn new(inner: B, activity: Activity) -> Self {
        Self { inner, activity }
    }
}

impl<B: http_body::Body + Unpin> http_body::Body for Active<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<B::Data>, B::Error>>> {
        let this = self.get_mut();
        let frame = std::task::ready!(std::pin::Pin::new(&mut this.inner).poll_frame(cx));
        if matches!(frame, Some(Ok(_))) {
            this.activity.touch();
        }
        std::task::Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn stall_fires_only_after_a_quiet_period() {
        let activity = Activity::new();
        let watcher = activity.clone();
        let start = Instant::now();
        let stall = tokio::spawn(async move {
            watcher.stalled(Duration::from_secs(5)).await;
            start.elapsed()
        });
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_secs(3)).await;
            activity.touch();
        }
        // Last touch at 12 s: the stall is reported 5 s later.
        let fired_after = stall.await.unwrap();
        assert_eq!(fired_after.as_secs(), 17);
    }
}

//! The progress of a managed transfer, owned by its driver: bytes the store acknowledged
//! (`committed`) and bytes moving but not yet acknowledged (`in_flight`). Listeners get
//! snapshots of it; nothing is ever derived the other way round.
//!
//! Each part (or download range) has a [`PartProgress`]: the bytes its current attempt moved.
//! A retry takes that attempt's bytes back out of `in_flight` before it sends again, and a
//! success moves exactly them into `committed`, so nothing is counted twice and `committed`
//! only grows.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use s3_ops::Checksum;

/// A snapshot of a transfer's progress.
///
/// `committed` never decreases and never exceeds `total`; it equals `total` exactly when the
/// transfer succeeded: the bytes that would make it reach the total wait for the end. An
/// upload or copy whose every part was acknowledged but whose object was never stored (a
/// refused CompleteMultipartUpload) ends below `total`, as does a download that fails its
/// final checks (a writer may still have received every byte). A download commits each range
/// once it is written to its destination. `in_flight` counts bytes sent (or received) for
/// parts that are not yet acknowledged (or not yet written); a part that fails and is retried
/// gives its bytes back before it starts again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Progress {
    /// The transfer's size in bytes; `None` for a stream of unknown length until it ends.
    pub total: Option<u64>,
    /// Bytes the store acknowledged (uploads, copies) or that were received, checked for
    /// length and written to the destination (downloads).
    pub committed: u64,
    /// Bytes of parts in progress: sent but not acknowledged, or received but not written.
    pub in_flight: u64,
}

/// Called with every new [`Progress`] (see `on_progress` of the transfer builders).
pub(crate) type Listener = Arc<dyn Fn(Progress) + Send + Sync>;

/// The driver's progress record.
pub(crate) struct ProgressState {
    state: Mutex<State>,
    listener: Option<Listener>,
    /// The sequence number of the last snapshot handed to the listener: snapshots taken
    /// concurrently reach it in order, older ones are skipped.
    delivered: Mutex<u64>,
}

/// The snapshot, its sequence number, and what waits for the transfer's end.
#[derive(Default)]
struct State {
    progress: Progress,
    sequence: u64,
    /// Acknowledged bytes not committed yet: those that would make `committed` reach
    /// `total`, or, while the total is unknown (a stream), the last acknowledgment (which
    /// may turn out to be the last).
    held: u64,
}

impl State {
    /// `bytes` more acknowledged: committed, unless they could complete the total.
    fn commit(&mut self, bytes: u64) {
        match self.progress.total {
            Some(total) if self.progress.committed + bytes >= total => self.held += bytes,
            Some(_) => self.progress.committed += bytes,
            None => self.progress.committed += std::mem::replace(&mut self.held, bytes),
        }
    }
}

impl ProgressState {
    pub(crate) fn new(total: Option<u64>, listener: Option<Listener>) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                progress: Progress {
                    total,
                    ..Progress::default()
                },
                ..State::default()
            }),
            listener,
            delivered: Mutex::new(0),
        })
    }

    /// The current snapshot.
    pub(crate) fn get(&self) -> Progress {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .progress
    }

    fn update(&self, change: impl FnOnce(&mut State)) {
        let (snapshot, sequence) = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            change(&mut state);
            state.sequence += 1;
            (state.progress, state.sequence)
        };
        if let Some(listener) = &self.listener {
            // Not under the state lock: the listener may read the progress itself.
            let mut delivered = self.delivered.lock().unwrap_or_else(|e| e.into_inner());
            if sequence > *delivered {
                *delivered = sequence;
                listener(snapshot);
            }
        }
    }

    /// The length of a stream became known at its end.
    pub(crate) fn set_total(&self, total: u64) {
        self.update(|s| {
            s.progress.total = Some(total);
            if s.progress.committed + s.held < total {
                s.progress.committed += std::mem::take(&mut s.held);
            }
        });
    }

    /// Parts known to be stored already (a resumed upload) count as committed from the start.
    pub(crate) fn commit_existing(&self, bytes: u64) {
        self.update(|s| s.commit(bytes));
    }

    /// The transfer succeeded: what waited for its end is committed.
    pub(crate) fn completed(&self) {
        self.update(|s| s.progress.committed += std::mem::take(&mut s.held));
    }

    fn moved(&self, bytes: u64) {
        self.update(|s| s.progress.in_flight += bytes);
    }

    fn take_back(&self, bytes: u64) {
        self.update(|s| s.progress.in_flight = s.progress.in_flight.saturating_sub(bytes));
    }

    fn commit(&self, bytes: u64, in_flight: u64) {
        self.update(|s| {
            s.progress.in_flight = s.progress.in_flight.saturating_sub(in_flight);
            s.commit(bytes);
        });
    }
}

impl fmt::Debug for ProgressState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressState")
            .field("progress", &self.get())
            .finish_non_exhaustive()
    }
}

/// One part's share of the progress, and the checksum its upload body was sent with when
/// the client computed it (a part read from a file: an aws-chunked trailer computed as it
/// went, or a header computed ahead).
#[derive(Debug)]
pub(crate) struct PartProgress {
    progress: Arc<ProgressState>,
    /// Bytes the current attempt moved.
    moved: AtomicU64,
    sent_checksum: Mutex<Option<Checksum>>,
}

impl PartProgress {
    pub(crate) fn new(progress: Arc<ProgressState>) -> Arc<Self> {
        Arc::new(Self {
            progress,
            moved: AtomicU64::new(0),
            sent_checksum: Mutex::new(None),
        })
    }

    /// A new attempt starts: what the last one moved was not acknowledged.
    pub(crate) fn attempt_started(&self) {
        let moved = self.moved.swap(0, Ordering::AcqRel);
        if moved > 0 {
            self.progress.take_back(moved);
        }
    }

    /// The connection took (or delivered) `bytes` more of the part.
    pub(crate) fn moved(&self, bytes: u64) {
        self.moved.fetch_add(bytes, Ordering::AcqRel);
        self.progress.moved(bytes);
    }

    /// The store acknowledged the part (or the range was written): its `len` bytes are
    /// committed.
    pub(crate) fn commit(&self, len: u64) {
        let moved = self.moved.swap(0, Ordering::AcqRel);
        self.progress.commit(len, moved);
    }

    /// The part failed for good: its bytes leave `in_flight`.
    pub(crate) fn abandon(&self) {
        self.attempt_started();
    }

    /// Records the checksum the client computed for the payload sent.
    pub(crate) fn set_sent_checksum(&self, checksum: Checksum) {
        *self.sent_checksum.lock().unwrap_or_else(|e| e.into_inner()) = Some(checksum);
    }

    /// The checksum the client computed for the last attempt's payload, if it computed one.
    pub(crate) fn sent_checksum(&self) -> Option<Checksum> {
        self.sent_checksum
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retried_part_gives_its_bytes_back_and_commits_once() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let state = ProgressState::new(
            Some(100),
            Some(Arc::new(move |p| {
                record.lock().unwrap().push(p);
            })),
        );
        let part = PartProgress::new(state.clone());
        part.attempt_started();
        part.moved(30);
        part.moved(20);
        assert_eq!((state.get().committed, state.get().in_flight), (0, 50));
        // The connection broke: the retry starts from the beginning of the part.
        part.attempt_started();
        assert_eq!(state.get().in_flight, 0);
        part.moved(60);
        part.commit(60);
        assert_eq!(
            state.get(),
            Progress {
                total: Some(100),
                committed: 60,
                in_flight: 0
            }
        );
        let committed: Vec<u64> = seen.lock().unwrap().iter().map(|p| p.committed).collect();
        assert!(committed.windows(2).all(|w| w[0] <= w[1]), "{committed:?}");
        assert_eq!(seen.lock().unwrap().len(), 5, "one snapshot per change");
    }

    #[test]
    fn the_last_bytes_are_committed_only_when_the_transfer_succeeded() {
        let state = ProgressState::new(Some(100), None);
        let (first, last) = (
            PartProgress::new(state.clone()),
            PartProgress::new(state.clone()),
        );
        first.moved(60);
        first.commit(60);
        last.moved(40);
        last.commit(40);
        // Every part acknowledged, the object not yet stored.
        assert_eq!((state.get().committed, state.get().in_flight), (60, 0));
        state.completed();
        assert_eq!(state.get().committed, 100);
        // A stream: its last acknowledgment waits, it may be the last.
        let stream = ProgressState::new(None, None);
        stream.commit_existing(30);
        stream.commit_existing(20);
        assert_eq!(stream.get().committed, 30);
        stream.set_total(50);
        assert_eq!((stream.get().total, stream.get().committed), (Some(50), 30));
        stream.completed();
        assert_eq!(stream.get().committed, 50);
        // Its length learnt with a part still to come.
        let longer = ProgressState::new(None, None);
        longer.commit_existing(30);
        longer.set_total(50);
        assert_eq!(longer.get().committed, 30);
    }

    #[test]
    fn concurrent_updates_reach_the_listener_in_order() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let state = ProgressState::new(
            None,
            Some(Arc::new(move |p| {
                record.lock().unwrap().push(p.committed);
            })),
        );
        std::thread::scope(|scope| {
            for _ in 0..4 {
                let part = PartProgress::new(state.clone());
                scope.spawn(move || {
                    for _ in 0..500 {
                        part.moved(3);
                        part.commit(3);
                    }
                });
            }
        });
        // The total is unknown: the last acknowledgment waits for the end.
        assert_eq!(state.get().committed, 5_997);
        state.completed();
        let seen = seen.lock().unwrap();
        assert!(seen.windows(2).all(|w| w[0] <= w[1]), "committed went down");
        assert_eq!(state.get().committed, 6_000);
        assert_eq!(state.get().in_flight, 0);
    }
}

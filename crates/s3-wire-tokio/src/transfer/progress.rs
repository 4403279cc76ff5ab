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
/// transfer succeeded. A download commits each range once it is written to its destination,
/// and the last one only with the verdict on the whole object: one that fails its final
/// checks ends below `total` (a writer may still have received every byte). `in_flight` counts bytes sent (or received) for parts that are not yet
/// acknowledged (or not yet written); a part that fails and is retried gives its bytes back
/// before it starts again.
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
    state: Mutex<(Progress, u64)>,
    listener: Option<Listener>,
    /// The sequence number of the last snapshot handed to the listener: snapshots taken
    /// concurrently reach it in order, older ones are skipped.
    delivered: Mutex<u64>,
}

impl ProgressState {
    pub(crate) fn new(total: Option<u64>, listener: Option<Listener>) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new((
                Progress {
                    total,
                    ..Progress::default()
                },
                0,
            )),
            listener,
            delivered: Mutex::new(0),
        })
    }

    /// The current snapshot.
    pub(crate) fn get(&self) -> Progress {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    fn update(&self, change: impl FnOnce(&mut Progress)) {
        let (snapshot, sequence) = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            change(&mut state.0);
            state.1 += 1;
            *state
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
        self.update(|p| p.total = Some(total));
    }

    /// Parts known to be stored already (a resumed upload) count as committed from the start.
    pub(crate) fn commit_existing(&self, bytes: u64) {
        self.update(|p| p.committed += bytes);
    }

    fn moved(&self, bytes: u64) {
        self.update(|p| p.in_flight += bytes);
    }

    fn take_back(&self, bytes: u64) {
        self.update(|p| p.in_flight = p.in_flight.saturating_sub(bytes));
    }

    fn commit(&self, bytes: u64, in_flight: u64) {
        self.update(|p| {
            p.in_flight = p.in_flight.saturating_sub(in_flight);
            p.committed += bytes;
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
        let seen = seen.lock().unwrap();
        assert!(seen.windows(2).all(|w| w[0] <= w[1]), "committed went down");
        assert_eq!(state.get().committed, 6_000);
        assert_eq!(state.get().in_flight, 0);
    }
}

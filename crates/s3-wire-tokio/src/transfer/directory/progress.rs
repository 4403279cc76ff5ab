//! The aggregate progress of a directory transfer, summed from each object transfer's own.

use std::sync::{Arc, Mutex};

use super::outcome::DirectoryProgress;
use super::{ObjectProgressFn, ProgressFn};
use crate::progress::Progress;

/// The aggregate progress and its listener (snapshots delivered in order, as
/// `ProgressState` does for one transfer).
pub(super) struct Aggregate {
    state: Mutex<(DirectoryProgress, u64)>,
    delivered: Mutex<u64>,
    listener: Option<ProgressFn>,
}

impl Aggregate {
    pub(super) fn new(listener: Option<ProgressFn>) -> Self {
        Self {
            state: Mutex::new((DirectoryProgress::default(), 0)),
            delivered: Mutex::new(0),
            listener,
        }
    }

    pub(super) fn get(&self) -> DirectoryProgress {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    pub(super) fn update(&self, change: impl FnOnce(&mut DirectoryProgress)) {
        let (snapshot, sequence) = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            change(&mut state.0);
            state.1 += 1;
            *state
        };
        if let Some(listener) = &self.listener {
            let mut delivered = self.delivered.lock().unwrap_or_else(|e| e.into_inner());
            if sequence > *delivered {
                *delivered = sequence;
                listener(snapshot);
            }
        }
    }
}

/// One object's share of the aggregate: the last [`Progress`] its transfer reported.
pub(super) struct Share {
    aggregate: Arc<Aggregate>,
    /// The entry's size as counted in `bytes_found`.
    counted: u64,
    pub(super) last: Mutex<Progress>,
    /// The entry's relative path and the per-object listener.
    listener: Option<(String, ObjectProgressFn)>,
}

impl Share {
    pub(super) fn new(
        aggregate: Arc<Aggregate>,
        counted: u64,
        listener: Option<(String, ObjectProgressFn)>,
    ) -> Arc<Self> {
        Arc::new(Self {
            aggregate,
            counted,
            last: Mutex::new(Progress::default()),
            listener,
        })
    }

    /// The transfer reported `now`: the differences go into the aggregate (under this
    /// share's lock, so that one transfer's reports apply in order).
    pub(super) fn report(&self, now: Progress) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let before = *last;
        *last = now;
        let counted = self.counted;
        self.aggregate.update(|p| {
            p.committed += now.committed.saturating_sub(before.committed);
            p.in_flight = (p.in_flight + now.in_flight).saturating_sub(before.in_flight);
            // The object's real size, once known, replaces the size it was counted with.
            let size_before = before.total.unwrap_or(counted);
            let size_now = now.total.unwrap_or(size_before);
            p.bytes_found = (p.bytes_found + size_now).saturating_sub(size_before);
        });
        if let Some((relative, listener)) = &self.listener {
            listener(relative, now);
        }
    }

    /// The transfer ended: its bytes leave `in_flight`, and a failed one's uncommitted
    /// bytes are counted as failed.
    pub(super) fn finish(&self, succeeded: bool) {
        let last = *self.last.lock().unwrap_or_else(|e| e.into_inner());
        let size = last.total.unwrap_or(self.counted);
        self.aggregate.update(|p| {
            p.in_flight = p.in_flight.saturating_sub(last.in_flight);
            if succeeded {
                p.objects_transferred += 1;
            } else {
                p.objects_failed += 1;
                p.bytes_failed += size.saturating_sub(last.committed);
            }
        });
    }
}

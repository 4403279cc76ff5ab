//! What a client finds out about its store at run time, beyond the store's provider
//! profile: a store that answers ListObjectsV2 as version 1. Shared by the client's clones;
//! once learnt, kept for the client's life.

use std::sync::atomic::{AtomicBool, Ordering};

/// The store's quirks found at run time.
#[derive(Debug, Default)]
pub(crate) struct Learnt {
    /// The store answered ListObjectsV2 as ListObjects (version 1).
    lists_version_1_only: AtomicBool,
}

impl Learnt {
    pub(crate) fn lists_version_1_only(&self) -> bool {
        self.lists_version_1_only.load(Ordering::Relaxed)
    }

    pub(crate) fn set_lists_version_1_only(&self) {
        self.lists_version_1_only.store(true, Ordering::Relaxed);
    }
}

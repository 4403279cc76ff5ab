//! What a client finds out about its store at run time, beyond the store's provider
//! profile: a store that answers ListObjectsV2 as version 1, a store that refuses signed
//! checksum trailers. Shared by the client's clones; once learnt, kept for the client's
//! life.

use std::sync::atomic::{AtomicBool, Ordering};

use s3_ops::ProviderQuirks;

/// The store's quirks found at run time.
#[derive(Debug, Default)]
pub(crate) struct Learnt {
    /// The store answered ListObjectsV2 as ListObjects (version 1).
    lists_version_1_only: AtomicBool,
    /// The store refused a signed aws-chunked trailer.
    refuses_signed_trailers: AtomicBool,
}

impl Learnt {
    pub(crate) fn lists_version_1_only(&self) -> bool {
        self.lists_version_1_only.load(Ordering::Relaxed)
    }

    pub(crate) fn set_lists_version_1_only(&self) {
        self.lists_version_1_only.store(true, Ordering::Relaxed);
    }

    pub(crate) fn refuses_signed_trailers(&self) -> bool {
        self.refuses_signed_trailers.load(Ordering::Relaxed)
    }

    pub(crate) fn set_refuses_signed_trailers(&self) {
        self.refuses_signed_trailers.store(true, Ordering::Relaxed);
    }

    /// `quirks` with what was learnt applied.
    pub(crate) fn apply(&self, quirks: &ProviderQuirks) -> ProviderQuirks {
        let mut quirks = *quirks;
        if self.refuses_signed_trailers() {
            quirks.signed_trailers = false;
        }
        quirks
    }
}

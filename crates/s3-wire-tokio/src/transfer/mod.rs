//! Managed transfers: multipart uploads, parallel downloads and copies, driven over the
//! sans-IO planner of `s3-multipart-plan`. The planner decides what runs next; the driver
//! here performs it (one driver loop per transfer, no second scheduler), within the client's
//! memory budget, and owns the transfer's progress.
//!
//! - [`upload`](crate::Client::upload) (`upload.rs`, sources in `source.rs`, the resume
//!   journal in `journal.rs`), [`download`](crate::Client::download) (`download/`) and
//!   [`copy`](crate::Client::copy) (`copy.rs`), each returning a [`TransferHandle`]
//!   (`handle.rs`): progress, cancellation, the result;
//! - [`upload_directory`](crate::Client::upload_directory),
//!   [`download_directory`](crate::Client::download_directory) and
//!   [`copy_directory`](crate::Client::copy_directory) (`directory/`): many objects at once
//!   over those, the listing streamed, with filters, sync comparisons and an aggregate
//!   progress;
//! - `multipart.rs`: the driver loop of multipart uploads and copies;
//! - `reservation.rs`: memory a caller holds in the client's budget beside the transfers
//!   (the budget that part data is admitted against before its request is dispatched is
//!   `memory.rs`, progress exact across retries `progress.rs`, the positioned file writer
//!   `file_writer.rs`: one layer down, as the client and bodies use them too);
//! - `integrity.rs`: what was verified end to end, and how ambiguous completions are
//!   resolved;
//! - `sweep.rs`: aborting multipart uploads that crashed processes left behind.

mod copy;
mod directory;
mod download;
mod download_resume;
mod handle;
mod integrity;
mod journal;
mod multipart;
mod reservation;
mod source;
mod sweep;
#[cfg(target_os = "linux")]
mod unnamed_file;
mod upload;
mod wake;

pub use copy::{CopyBuilder, CopyOutput};
pub use directory::{
    Action, Compare, Completed, DirectoryBuilder, DirectoryEntry, DirectoryHandle, DirectoryOutput,
    DirectoryProgress, FailurePolicy, LocalIssue, MTIME_METADATA, ObjectOutcome, Place, SkipReason,
    format_mtime, object_mtime,
};
pub use download::{Destination, DownloadBuilder, DownloadOutput};
pub use handle::TransferHandle;
pub use reservation::TransferMemory;
pub use source::UploadSource;
pub use sweep::{DiscardedUpload, StaleUpload, StaleUploads};
pub use upload::{PossibleOrphan, UploadBuilder, UploadOutput};

pub use crate::memory::MemoryUsage;
pub use crate::progress::Progress;
pub use crate::settings::TransferOptions;

/// Generates the [`TransferOptions`] setters on a builder with an `options` field.
macro_rules! transfer_option_setters {
    () => {
        /// Bytes per part (see [`TransferOptions::part_size`]).
        pub fn part_size(mut self, bytes: u64) -> Self {
            self.options.part_size = bytes;
            self
        }

        /// Parts in flight at once (see [`TransferOptions::concurrency`]).
        pub fn concurrency(mut self, parts: usize) -> Self {
            self.options.concurrency = parts;
            self
        }

        /// Objects up to this size go in one request (see
        /// [`TransferOptions::single_request_limit`]).
        pub fn single_request_limit(mut self, bytes: u64) -> Self {
            self.options.single_request_limit = Some(bytes);
            self
        }

        /// The store's multipart limits (see [`TransferOptions::limits`]).
        pub fn part_limits(mut self, limits: s3_multipart_plan::PartLimits) -> Self {
            self.options.limits = limits;
            self
        }

        /// All the options at once.
        pub fn options(mut self, options: crate::transfer::TransferOptions) -> Self {
            self.options = options;
            self
        }

        /// Calls `listener` with every change of the transfer's [`Progress`](crate::Progress)
        /// (crate::transfer::Progress), in order, from the threads that drive it: keep it
        /// short.
        pub fn on_progress(
            mut self,
            listener: impl Fn(crate::transfer::Progress) + Send + Sync + 'static,
        ) -> Self {
            self.listener = Some(std::sync::Arc::new(listener));
            self
        }
    };
}
pub(crate) use transfer_option_setters;

/// Awaiting a transfer builder starts the transfer and waits for its result.
macro_rules! await_starts {
    ($builder:ty => $output:ty) => {
        impl std::future::IntoFuture for $builder {
            type Output = Result<$output, crate::Error>;
            type IntoFuture = crate::transfer::TransferHandle<$output>;

            fn into_future(self) -> Self::IntoFuture {
                self.start()
            }
        }
    };
}
pub(crate) use await_starts;

/// The planner's options for these transfer options. Part retries are the client's: each
/// request already retries within the client's `RetryConfig`, so the planner adds none.
pub(crate) fn multipart_options(
    options: &TransferOptions,
) -> Result<s3_multipart_plan::MultipartOptions, crate::Error> {
    s3_multipart_plan::MultipartOptions::builder()
        .part_size(options.part_size)
        .concurrency(options.concurrency)
        .retries_per_part(0)
        .limits(options.limits)
        .build()
        .map_err(plan_error)
}

/// A planner error about the caller's options or object (not a driver bug).
pub(crate) fn plan_error(error: s3_multipart_plan::Error) -> crate::Error {
    match error {
        s3_multipart_plan::Error::ObjectTooLarge { maximum, .. } => {
            crate::Error::transfer_error(crate::error::TransferErrorKind::TooLarge { maximum })
        }
        other => crate::Error::config(format!("transfer options: {other}")),
    }
}

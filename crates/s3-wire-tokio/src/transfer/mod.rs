//! Managed transfers: multipart uploads, parallel downloads and copies, driven over the
//! sans-IO planner of `s3-multipart-plan`. The planner decides what runs next; the driver
//! here performs it (one driver loop per transfer, no second scheduler), within the client's
//! memory budget, and owns the transfer's progress.
//!
//! - [`upload`](crate::Client::upload) (`upload.rs`, sources in `source.rs`, the resume
//!   journal in `journal.rs`), [`download`](crate::Client::download) (`download.rs`) and
//!   [`copy`](crate::Client::copy) (`copy.rs`), each returning a [`TransferHandle`]
//!   (`handle.rs`): progress, cancellation, the result;
//! - [`upload_directory`](crate::Client::upload_directory),
//!   [`download_directory`](crate::Client::download_directory) and
//!   [`copy_directory`](crate::Client::copy_directory) (`directory.rs`): many objects at once
//!   over those, the listing streamed, with filters, sync comparisons and an aggregate
//!   progress;
//! - `multipart.rs`: the driver loop of multipart uploads and copies;
//! - `budget.rs`: the one byte budget per client that part data is admitted against before
//!   its request is dispatched;
//! - `progress.rs`: committed and in-flight bytes, exact across retries;
//! - `integrity.rs`: what was verified end to end, and how ambiguous completions are
//!   resolved;
//! - `sweep.rs`: aborting multipart uploads that crashed processes left behind.

mod budget;
mod copy;
mod directory;
mod download;
mod download_resume;
mod file_writer;
mod handle;
mod integrity;
mod journal;
mod multipart;
mod progress;
mod source;
mod sweep;
#[cfg(target_os = "linux")]
mod unnamed_file;
mod upload;
mod wake;

pub(crate) use budget::MemoryBudget;
pub use budget::{MemoryUsage, TransferMemory};
pub use copy::{CopyBuilder, CopyOutput};
pub use directory::{
    Action, Compare, Completed, DirectoryBuilder, DirectoryEntry, DirectoryHandle, DirectoryOutput,
    DirectoryProgress, FailurePolicy, LocalIssue, MTIME_METADATA, ObjectOutcome, Place, SkipReason,
    format_mtime, object_mtime,
};
pub use download::{Destination, DownloadBuilder, DownloadOutput};
pub(crate) use file_writer::{FileWriter, PositionedWriter};
pub use handle::TransferHandle;
pub(crate) use progress::PartProgress;
pub use progress::Progress;
pub use source::UploadSource;
pub use sweep::{DiscardedUpload, StaleUpload, StaleUploads};
pub use upload::{PossibleOrphan, UploadBuilder, UploadOutput};

use s3_multipart_plan::{MIB, PartLimits};

/// How a managed transfer cuts its object and how many requests it keeps in flight.
///
/// The defaults: 8 MiB parts, 8 parts in flight, one request for objects up to 16 MiB
/// (uploads and downloads; copies use CopyObject up to 5 GiB), Amazon S3's part limits.
/// `docs/performance.md` says how they were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransferOptions {
    /// Bytes per part (uploads, copies) or per ranged GET (downloads). A plan grows it when
    /// an object would need more parts than the limits allow; a download's ranges also grow
    /// from it where each request costs more than its bytes
    /// ([`DownloadBuilder::adapt_range_size`](crate::transfer::DownloadBuilder::adapt_range_size)).
    pub part_size: u64,
    /// Parts (or ranges) in flight at once, per transfer.
    pub concurrency: usize,
    /// Objects up to this size go in one request (PutObject, GetObject, CopyObject);
    /// `None`: the transfer's own default.
    pub single_request_limit: Option<u64>,
    /// The store's multipart limits (S3's by default; lower them for other stores, or in
    /// tests to exercise boundaries with little data).
    pub limits: PartLimits,
    /// Whether a download to a file is synced to storage before it reports success
    /// (default: yes): the file's data, then, after its rename over the target (or its
    /// link under the target's name), the directory. Off, the download ends when the bytes
    /// are in the page cache: much faster for many small files (two `fsync` calls per file
    /// are most of their cost on disk, `docs/performance.md`), as the AWS CLI and
    /// object_store write, but a crash of the machine soon after may lose the file or leave
    /// it short, under the target's name. The file still appears only whole and checked
    /// while the machine runs, and the resume journal of a parallel download still syncs
    /// what it records.
    pub sync_files: bool,
}

impl TransferOptions {
    /// The default part size: 8 MiB.
    pub const DEFAULT_PART_SIZE: u64 = 8 * MIB;
    /// The default number of parts in flight: 8.
    pub const DEFAULT_CONCURRENCY: usize = 8;
    /// Uploads and downloads up to 16 MiB go in one request by default.
    pub const DEFAULT_SINGLE_REQUEST_LIMIT: u64 = 16 * MIB;
    /// Copies up to 5 GiB (CopyObject's limit) go in one request by default.
    pub const DEFAULT_COPY_OBJECT_LIMIT: u64 = 5 * 1024 * MIB;

    /// The memory a client's transfers may hold by default: `part_size × concurrency`.
    pub const DEFAULT_MEMORY: u64 = Self::DEFAULT_PART_SIZE * Self::DEFAULT_CONCURRENCY as u64;
}

impl Default for TransferOptions {
    fn default() -> Self {
        Self {
            part_size: Self::DEFAULT_PART_SIZE,
            concurrency: Self::DEFAULT_CONCURRENCY,
            single_request_limit: None,
            limits: PartLimits::S3,
            sync_files: true,
        }
    }
}

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

/// `options` within the store's multipart limits: S3's limits (the default) become the
/// store's, and the part size is brought into the store's range. Limits the caller set are
/// the caller's, and so is a part size outside them (the planner refuses it, as before).
pub(crate) fn fit_to_store(
    mut options: TransferOptions,
    quirks: &s3_ops::ProviderQuirks,
) -> Result<TransferOptions, crate::Error> {
    let store = PartLimits::new(
        quirks.min_part_size,
        quirks.max_part_size,
        quirks.max_parts,
        quirks.max_object_size,
    )
    .map_err(|e| crate::Error::config(format!("provider profile part limits: {e}")))?;
    if options.limits == PartLimits::S3 && store != PartLimits::S3 {
        options.limits = store;
        options.part_size = options
            .part_size
            .clamp(store.min_part_size(), store.max_part_size());
    }
    Ok(options)
}

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

//! The values a client keeps from its configuration: its time limits and the defaults of its
//! managed transfers, resolved by [`ClientBuilder`](crate::ClientBuilder).

use std::time::Duration;

use s3_multipart_plan::{MIB, PartLimits};

use crate::error::Error;

/// Time limits of a [`Client`](crate::Client).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// Establishing a connection (TCP and TLS). Default 10 s.
    pub connect: Duration,
    /// No byte moving in either direction for this long fails the attempt
    /// (a waiting consumer of a download counts; a paused one does not).
    /// Default 30 s.
    pub stall: Duration,
    /// The whole operation, retries and backoff included (for a streaming
    /// download: until its body is fully read). Default: none.
    pub operation: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            stall: Duration::from_secs(30),
            operation: None,
        }
    }
}

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

/// How a client's managed transfers run: their default options, the memory they may hold
/// together, and the bandwidth limit of all its requests.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TransferSettings {
    pub(crate) options: TransferOptions,
    pub(crate) memory: Option<u64>,
    pub(crate) bandwidth: Option<u64>,
}

/// `options` within the store's multipart limits: S3's limits (the default) become the
/// store's, and the part size is brought into the store's range. Limits the caller set are
/// the caller's, and so is a part size outside them (the planner refuses it, as before).
pub(crate) fn fit_to_store(
    mut options: TransferOptions,
    quirks: &s3_ops::ProviderQuirks,
) -> Result<TransferOptions, Error> {
    let store = PartLimits::new(
        quirks.min_part_size,
        quirks.max_part_size,
        quirks.max_parts,
        quirks.max_object_size,
    )
    .map_err(|e| Error::config(format!("provider profile part limits: {e}")))?;
    if options.limits == PartLimits::S3 && store != PartLimits::S3 {
        options.limits = store;
        options.part_size = options
            .part_size
            .clamp(store.min_part_size(), store.max_part_size());
    }
    Ok(options)
}

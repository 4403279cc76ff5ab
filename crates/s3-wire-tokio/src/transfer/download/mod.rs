//! Managed downloads: one GET for small objects, otherwise ranged GETs in parallel driven by
//! the planner's [`DownloadScheduler`], every one pinned by `If-Match` (and the version) to
//! the object the first response described, so two generations can never mix.
//!
//! To a file, ranges are written by position into a temporary file beside the target as
//! they arrive; the file is synced and renamed over the target only once everything
//! arrived and checked out, so a failed download never leaves a half-written target (on
//! Linux a body small enough for one write batch goes into an unnamed file linked under
//! the target's name instead: `unnamed_file.rs`). To a writer, ranges are delivered in
//! order through the planner's reorder window, inside the client's memory budget.
//!
//! Here: the destination, the builder and the object every range is pinned to. One download
//! from start to end `run.rs`; a body in one GET `whole.rs`; ranges in parallel `ranged.rs`;
//! the object's part layout `parts.rs`; the file being written `file.rs`; what was verified
//! `verify.rs`.

mod file;
mod parts;
mod ranged;
mod run;
mod verify;
mod whole;

use std::path::{Path, PathBuf};

use s3_ops::ops::get_object::GetObject;
use s3_ops::ops::head_object::ObjectHead;
use s3_ops::{BucketName, ChecksumAlgorithm, ObjectKey, SseCustomerKey};
use s3_xml::ETag;
use tokio::io::AsyncWrite;

use self::run::run;
use crate::client::Client;
use crate::progress::Listener;
use crate::transfer::handle::TransferHandle;
use crate::transfer::{TransferOptions, await_starts, transfer_option_setters};
use crate::verification::Verification;

/// Where a download goes; see [`Client::download`].
pub struct Destination(Sink);

pub(super) enum Sink {
    File(PathBuf),
    Writer(Box<dyn AsyncWrite + Send + Unpin>),
}

impl Destination {
    /// A file, created or replaced atomically once the whole object arrived and checked out.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self(Sink::File(path.into()))
    }

    /// A writer that gets the object's bytes in order (flushed at the end). On failure it
    /// may have received part of the object: the error says so by its kind.
    pub fn writer(writer: impl AsyncWrite + Send + Unpin + 'static) -> Self {
        Self(Sink::Writer(Box::new(writer)))
    }
}

impl From<PathBuf> for Destination {
    fn from(path: PathBuf) -> Self {
        Self::file(path)
    }
}

impl From<&Path> for Destination {
    fn from(path: &Path) -> Self {
        Self::file(path)
    }
}

impl std::fmt::Debug for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Sink::File(path) => f.debug_tuple("File").field(path).finish(),
            Sink::Writer(_) => f.write_str("Writer"),
        }
    }
}

/// A managed download to be started; made by [`Client::download`].
#[must_use = "a download does nothing until it is started or awaited"]
pub struct DownloadBuilder {
    client: Client,
    bucket: BucketName,
    key: ObjectKey,
    destination: Destination,
    options: TransferOptions,
    version_id: Option<String>,
    sse_customer_key: Option<SseCustomerKey>,
    verify: bool,
    resume: bool,
    adapt_range_size: bool,
    listener: Option<Listener>,
}

/// What a successful download received.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DownloadOutput {
    /// The object's size in bytes.
    pub size: u64,
    /// The object's ETag (every range was pinned to it).
    pub etag: Option<ETag>,
    /// The version downloaded, if the store names versions.
    pub version_id: Option<String>,
    /// The object's metadata, from the first response.
    pub head: ObjectHead,
    /// GET requests that carried the object's bytes (1 for a small object).
    pub requests: u32,
    /// What was verified, and how.
    pub verification: Verification,
    /// Bytes an interrupted run of the same download had written to its partial file, and
    /// that were not fetched again (see [`DownloadBuilder::resume`]).
    pub resumed_bytes: u64,
    /// Why a partial file found beside the target was not continued (the object changed
    /// since, or its journal is unusable): the download started over.
    pub restarted: Option<String>,
}

impl Client {
    /// A managed download of `key` in `bucket` to `destination` (a file path or
    /// [`Destination::writer`]): build it further, then `.await` it, or
    /// [`start`](DownloadBuilder::start) it for a handle with progress and cancellation.
    ///
    /// ```no_run
    /// use s3_wire_tokio::{Client, bucket, key};
    ///
    /// # async fn demo(client: Client) -> Result<(), s3_wire_tokio::Error> {
    /// let got = client
    ///     .download(bucket("backups")?, key("2024/disk.img")?, std::path::Path::new("disk.img"))
    ///     .concurrency(16)
    ///     .await?;
    /// println!("{} bytes in {} GETs, {:?}", got.size, got.requests, got.verification);
    /// # Ok(()) }
    /// ```
    pub fn download(
        &self,
        bucket: BucketName,
        key: ObjectKey,
        destination: impl Into<Destination>,
    ) -> DownloadBuilder {
        DownloadBuilder {
            client: self.clone(),
            bucket,
            key,
            destination: destination.into(),
            options: self.inner.transfer_options,
            version_id: None,
            sse_customer_key: None,
            verify: self.inner.integrity.checksum_mode,
            resume: true,
            adapt_range_size: true,
            listener: None,
        }
    }
}

impl DownloadBuilder {
    transfer_option_setters!();

    /// Downloads this version.
    pub fn version_id(mut self, version_id: impl Into<String>) -> Self {
        self.version_id = Some(version_id.into());
        self
    }

    /// The object is encrypted with this SSE-C key.
    pub fn sse_customer_key(mut self, key: SseCustomerKey) -> Self {
        self.sse_customer_key = Some(key);
        self
    }

    /// Whether the file is synced to storage before the download reports success (see
    /// [`TransferOptions::sync_files`]; default: yes).
    pub fn sync_files(mut self, enabled: bool) -> Self {
        self.options.sync_files = enabled;
        self
    }

    /// Whether to ask for the store's checksums and verify the bytes against them (default:
    /// the client's [`verify_downloads`](crate::ClientBuilder::verify_downloads), on unless
    /// changed).
    pub fn verify(mut self, enabled: bool) -> Self {
        self.verify = enabled;
        self
    }

    /// Whether a parallel download to a file can be resumed after a crash (default: on). Its
    /// temporary file then has a fixed name beside the target, `.NAME.s3w-download.part`,
    /// with a journal beside it, `.NAME.s3w-download.journal`, which records the object
    /// (bucket, key, ETag, version, size) and the byte ranges written and synced. Run the
    /// same download again after the process was killed and only the missing ranges are
    /// fetched, pinned to the journal's ETag; if the object changed since, the download
    /// starts over and [`DownloadOutput::restarted`] says why. A download that fails for a
    /// reason a rerun can get past (the network, the store) keeps both files
    /// ([`Cleanup::KeptForResume`](crate::Cleanup::KeptForResume)); a cancelled one, or one whose object changed or whose
    /// bytes failed their checks, removes them. While a download writes a part file it holds
    /// a lock on it: a second download to the same target at the same time uses a temporary
    /// file of its own, as with `false`.
    pub fn resume(mut self, enabled: bool) -> Self {
        self.resume = enabled;
        self
    }

    /// Whether the range size grows where each request costs more than its bytes (default:
    /// on). The ranges start at `part_size`; when a range's answer takes longer to begin
    /// than its body takes to arrive, and at least 20 ms (a store that does much work per
    /// request), the ranges still to come grow by that ratio (2 to 16 times), up to 128 MiB
    /// and to one range per GET in flight; to a writer, which holds whole ranges, only as
    /// far as the window of them fits the client's transfer memory. They never shrink below
    /// `part_size`. A download by part numbers (a composite checksum checked part by part)
    /// keeps the parts' size.
    pub fn adapt_range_size(mut self, enabled: bool) -> Self {
        self.adapt_range_size = enabled;
        self
    }

    /// Starts the download as a task; must be called within a Tokio runtime.
    pub fn start(self) -> TransferHandle<DownloadOutput> {
        let listener = self.listener.clone();
        TransferHandle::start(None, listener, |control| run(self, control))
    }
}

await_starts!(DownloadBuilder => DownloadOutput);

/// The object every range must come from.
pub(super) struct Pinned {
    client: Client,
    bucket: BucketName,
    key: ObjectKey,
    etag: ETag,
    version_id: Option<String>,
    sse_customer_key: Option<SseCustomerKey>,
}

impl Pinned {
    fn request(&self, checksum_mode: bool) -> GetObject {
        let mut get = GetObject::new(self.bucket.clone(), self.key.clone())
            .if_match(self.etag.as_str())
            .checksum_mode(checksum_mode);
        if let Some(version) = &self.version_id {
            get = get.version_id(version.clone());
        }
        if let Some(key) = &self.sse_customer_key {
            get = get.sse_customer_key(key.clone());
        }
        get
    }
}

/// How the ranges are requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// `Range` headers of the planner's range size.
    Ranges,
    /// `partNumber` requests, one per part of a multipart object with uniform parts of
    /// `part_size` bytes: each answer carries that part's checksum.
    Parts {
        algorithm: ChecksumAlgorithm,
        part_size: u64,
    },
    /// `Range` requests on the part boundaries of a multipart object with uniform parts of
    /// `part_size` bytes, each checked against its part's checksum as GetObjectAttributes
    /// listed it ([`Driver::listed`]); the first response serves part 1.
    Listed {
        algorithm: ChecksumAlgorithm,
        part_size: u64,
    },
}

impl Mode {
    /// The part algorithm and size, where ranges are whole parts checked one by one.
    fn by_part(self) -> Option<(ChecksumAlgorithm, u64)> {
        match self {
            Mode::Parts {
                algorithm,
                part_size,
            }
            | Mode::Listed {
                algorithm,
                part_size,
            } => Some((algorithm, part_size)),
            Mode::Ranges => None,
        }
    }

    /// The part number of the range starting at `start` (ranges that are parts), or `None`.
    fn part_number(self, start: u64) -> Option<u32> {
        let (_, part_size) = self.by_part()?;
        u32::try_from(start / part_size + 1).ok()
    }
}

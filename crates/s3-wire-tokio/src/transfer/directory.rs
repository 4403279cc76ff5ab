//! Directory transfers: a local directory to a prefix ([`Client::upload_directory`]), a
//! prefix to a local directory ([`Client::download_directory`]) or a prefix to another
//! ([`Client::copy_directory`]), object by object through the managed transfers, many at
//! once, within the client's one memory budget.
//!
//! How it runs: the source is walked lazily in key order — a local tree directory by
//! directory (each directory's names sorted, a subdirectory `d` ordered as `d/`, so the
//! order is the byte order of the relative paths, as S3 lists keys), a prefix page by page
//! of ListObjectsV2 — and each entry becomes one object transfer when a slot is free. To
//! compare (sync) or to delete what the source lacks, the destination is walked the same
//! way and the two walks are merged. Nothing holds a whole listing: memory is bounded by a
//! page (or, locally, the directories on the current path), the objects in flight and the
//! client's transfer budget, whatever the size of the bucket.
//!
//! The aggregate [`DirectoryProgress`] is built from each object transfer's [`Progress`]
//! (exact across retries); every object's result, and every entry skipped or refused, is
//! reported to [`DirectoryBuilder::on_object`] as it happens.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use s3_ops::ops::copy_source::CopySource;
use s3_ops::ops::delete_object::DeleteObject;
use s3_ops::ops::head_object::HeadObject;
use s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_ops::{BucketName, ChecksumAlgorithm, ChecksumType, ObjectAttributes, ObjectKey};
use s3_xml::ETag;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::client::Client;
use crate::error::{Error, TransferErrorKind};
use crate::progress::Progress;
use crate::transfer::handle::{Control, TransferHandle};
use crate::transfer::{Destination, PossibleOrphan, TransferOptions, UploadSource};
use crate::verification::Verification;

/// The user-metadata name of a file's modification time, as rclone stores it
/// (`x-amz-meta-mtime`: Unix seconds with up to nine decimals).
pub const MTIME_METADATA: &str = "mtime";

/// Entries a walk may run ahead of the transfers.
const WALK_AHEAD: usize = 256;

/// Failures a [`DirectoryOutput`] keeps (all of them reach `on_object`).
const KEPT_FAILURES: usize = 100;

/// One side of a directory transfer.
#[derive(Debug, Clone)]
enum Side {
    Local(PathBuf),
    Bucket { bucket: BucketName, prefix: String },
}

/// A file or an object a directory transfer found, as filters and comparisons see it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DirectoryEntry {
    /// The path under the directory or prefix, `/`-separated (`photos/2024/cat.jpg`).
    pub relative: String,
    /// Its size in bytes.
    pub size: u64,
    /// The file's modification time, or the object's LastModified.
    pub modified: Option<SystemTime>,
    /// The object's ETag (objects only, when the store lists it).
    pub etag: Option<ETag>,
}

/// Where an object of a directory transfer is read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Place {
    /// A local file.
    File(PathBuf),
    /// An object.
    Object {
        /// The bucket.
        bucket: String,
        /// The key.
        key: String,
    },
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::File(path) => write!(f, "{}", path.display()),
            Place::Object { bucket, key } => write!(f, "s3://{bucket}/{key}"),
        }
    }
}

/// What a directory transfer did (or, in a dry run, would do) with one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// A file uploaded to an object.
    Upload,
    /// An object downloaded to a file.
    Download,
    /// An object copied to another (server side).
    Copy,
    /// A destination file or object the source lacks, deleted
    /// ([`DirectoryBuilder::delete_extraneous`]).
    Delete,
    /// Nothing: the reason says why.
    Skip(SkipReason),
}

/// Why an entry was not transferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// The destination is the same by the [`Compare`] rule.
    Unchanged,
    /// The destination exists ([`Compare::Missing`]).
    Exists,
    /// A symbolic link, and links are not followed.
    SymlinkNotFollowed,
    /// Not a regular file (a FIFO, a socket, a device).
    SpecialFile,
    /// A key ending in `/` (a "folder" made by a console): no file to write.
    DirectoryMarker,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SkipReason::Unchanged => "unchanged",
            SkipReason::Exists => "exists at the destination",
            SkipReason::SymlinkNotFollowed => "a symbolic link (not followed)",
            SkipReason::SpecialFile => "not a regular file",
            SkipReason::DirectoryMarker => "a directory marker",
        })
    }
}

/// A problem with a local entry or with where a key would be written; an object transfer's
/// error of kind [`ErrorKind::Io`](crate::ErrorKind::Io) carries it as its source (see
/// [`LocalIssue::of`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocalIssue {
    /// A symbolic link whose target does not exist.
    BrokenLink {
        /// What the link points to.
        target: PathBuf,
    },
    /// A symbolic link to a directory that contains it (following it would never end).
    LinkLoop {
        /// What the link points to.
        target: PathBuf,
    },
    /// A file name that is not Unicode: it cannot be a key.
    NotUnicode,
    /// A key that cannot name a file under the target directory (an empty, `.` or `..`
    /// component): it is never written outside the directory.
    UnsafeKey {
        /// The key.
        key: String,
    },
}

impl LocalIssue {
    /// The issue behind `error`, if it is one.
    pub fn of(error: &Error) -> Option<&LocalIssue> {
        let io = std::error::Error::source(error)?.downcast_ref::<io::Error>()?;
        io.get_ref()?.downcast_ref::<LocalIssue>()
    }

    fn into_error(self) -> Error {
        let kind = match self {
            LocalIssue::BrokenLink { .. } => io::ErrorKind::NotFound,
            _ => io::ErrorKind::InvalidInput,
        };
        Error::io(io::Error::new(kind, self))
    }
}

impl fmt::Display for LocalIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalIssue::BrokenLink { target } => {
                write!(f, "broken symbolic link (to {})", target.display())
            }
            LocalIssue::LinkLoop { target } => write!(
                f,
                "symbolic link loop: it points to {}, which contains it",
                target.display()
            ),
            LocalIssue::NotUnicode => f.write_str("the name is not Unicode, so it cannot be a key"),
            LocalIssue::UnsafeKey { key } => write!(
                f,
                "key `{key}` has an empty, `.` or `..` path component: it names no file under the target directory"
            ),
        }
    }
}

impl std::error::Error for LocalIssue {}

/// The result of one entry of a directory transfer, given to
/// [`DirectoryBuilder::on_object`].
#[derive(Debug)]
#[non_exhaustive]
pub struct ObjectOutcome {
    /// The entry's relative path.
    pub relative: String,
    /// What was done (or planned, in a dry run).
    pub action: Action,
    /// Where it was read (`None` for a delete).
    pub source: Option<Place>,
    /// Where it was written or deleted.
    pub destination: Option<Place>,
    /// The entry's size in bytes (as transferred, when it was).
    pub size: u64,
    /// How long its comparison and transfer (or deletion) took.
    pub elapsed: Duration,
    /// Whether it worked.
    pub result: Result<Completed, Error>,
}

/// What a successful entry did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Completed {
    /// The stored object's ETag (uploads, copies) or the downloaded one's.
    pub etag: Option<ETag>,
    /// The version written or read, if the store names versions.
    pub version_id: Option<String>,
    /// What was verified end to end (transfers only).
    pub verification: Option<Verification>,
    /// Bytes an interrupted earlier run had already brought over and that were not fetched
    /// again: a download resumed from its partial file (directory uploads keep no journal).
    pub resumed_bytes: u64,
    /// An upload or copy whose CreateMultipartUpload answer was lost may have left an empty
    /// multipart upload the store cannot list (see [`UploadOutput::possible_orphan`]).
    ///
    /// [`UploadOutput::possible_orphan`]: crate::transfer::UploadOutput::possible_orphan
    pub possible_orphan: Option<PossibleOrphan>,
    /// The source was removed after the transfer ([`DirectoryBuilder::remove_source`]).
    pub source_removed: bool,
    /// Nothing was changed: a dry run.
    pub dry_run: bool,
}

/// The aggregate progress of a directory transfer.
///
/// The byte counts come from each object transfer's [`Progress`]: `committed` never
/// decreases and stays exact across retries. `bytes_found` grows as the walk finds entries
/// (a local source is counted before the first transfer starts, so it is complete from the
/// first snapshot); [`bytes_to_transfer`](Self::bytes_to_transfer) is never less than
/// `committed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct DirectoryProgress {
    /// Entries to transfer found so far (after filters).
    pub objects_found: u64,
    /// Their bytes.
    pub bytes_found: u64,
    /// The walk of the source ended: `objects_found` and `bytes_found` are final (up to
    /// files that change size before they are read).
    pub walk_complete: bool,
    /// Entries transferred.
    pub objects_transferred: u64,
    /// Entries found but not transferred (unchanged, or existing with `Compare::Missing`).
    pub objects_skipped: u64,
    /// Their bytes.
    pub bytes_skipped: u64,
    /// Entries that failed.
    pub objects_failed: u64,
    /// Bytes of failed entries that were never committed.
    pub bytes_failed: u64,
    /// Destination entries deleted.
    pub objects_deleted: u64,
    /// Bytes the store acknowledged (uploads, copies) or written (downloads).
    pub committed: u64,
    /// Bytes moving but not yet acknowledged.
    pub in_flight: u64,
}

impl DirectoryProgress {
    /// Bytes to move as far as known: found, less skipped and failed.
    pub fn bytes_to_transfer(&self) -> u64 {
        self.bytes_found
            .saturating_sub(self.bytes_skipped)
            .saturating_sub(self.bytes_failed)
    }

    /// Entries to transfer as far as known: found, less skipped.
    pub fn objects_to_transfer(&self) -> u64 {
        self.objects_found.saturating_sub(self.objects_skipped)
    }

    /// Entries finished: transferred, skipped or failed.
    pub fn objects_finished(&self) -> u64 {
        self.objects_transferred + self.objects_skipped + self.objects_failed
    }
}

/// What a directory transfer did, when it ran to the end.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct DirectoryOutput {
    /// The final progress: counts of transferred, skipped, failed and deleted entries.
    pub progress: DirectoryProgress,
    /// The first failures (up to 100; every one was given to `on_object`).
    pub failures: Vec<ObjectOutcome>,
}

impl DirectoryOutput {
    /// True if every entry succeeded (or was skipped).
    pub fn is_success(&self) -> bool {
        self.progress.objects_failed == 0
    }
}

/// Which entries a sync transfers when the destination already has them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Compare {
    /// Every entry, whatever the destination holds (a copy).
    #[default]
    Always,
    /// Only entries the destination lacks: an existing one is never overwritten.
    Missing,
    /// Entries whose size differs, or whose source is newer than the destination (the AWS
    /// CLI's rule). An object's time is its `mtime` metadata when it has one (asked for
    /// with a HeadObject only where LastModified cannot decide), else its LastModified,
    /// compared to the whole second.
    SizeAndTime,
    /// Entries whose size differs.
    SizeOnly,
    /// Entries whose size or modification time differs at all (HeadObject on every
    /// object of equal size, for its `mtime` metadata).
    ExactTime,
    /// Entries whose size differs, or whose content differs by the object's stored
    /// full-object checksum of this algorithm (a HeadObject each, and the local file read
    /// once); an object without such a checksum counts as different.
    Checksum(ChecksumAlgorithm),
}

/// What a directory transfer does after an entry failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FailurePolicy {
    /// Go on with the other entries; the output counts the failures.
    #[default]
    Continue,
    /// Start nothing more, cancel the transfers running (aborting their uploads) and fail
    /// with the first error.
    Stop,
}

type EntryFn<T> = Arc<dyn Fn(&DirectoryEntry) -> T + Send + Sync>;
type ProgressFn = Arc<dyn Fn(DirectoryProgress) + Send + Sync>;
type OutcomeFn = Arc<dyn Fn(&ObjectOutcome) + Send + Sync>;
type ObjectProgressFn = Arc<dyn Fn(&str, Progress) + Send + Sync>;

/// A directory transfer to be started; made by [`Client::upload_directory`],
/// [`Client::download_directory`] or [`Client::copy_directory`].
#[must_use = "a directory transfer does nothing until it is started or awaited"]
pub struct DirectoryBuilder {
    client: Client,
    source: Side,
    destination: Side,
    options: TransferOptions,
    objects: usize,
    filter: Option<EntryFn<bool>>,
    attributes: Option<EntryFn<ObjectAttributes>>,
    checksum: Option<Option<ChecksumAlgorithm>>,
    compare: Compare,
    delete_extraneous: bool,
    follow_symlinks: bool,
    keep_mtime: bool,
    remove_source: bool,
    dry_run: bool,
    failure_policy: FailurePolicy,
    sse_customer_key: Option<s3_ops::SseCustomerKey>,
    listener: Option<ProgressFn>,
    object_listener: Option<ObjectProgressFn>,
    on_object: Option<OutcomeFn>,
}

impl Client {
    /// Uploads every file under `directory` to `prefix` in `bucket`: `directory/a/b.txt`
    /// becomes the object `prefix/a/b.txt` (a `/` is put after a prefix that lacks one).
    ///
    /// ```no_run
    /// use s3_wire_tokio::transfer::{DirectoryProgress, FailurePolicy};
    /// use s3_wire_tokio::{Client, bucket};
    ///
    /// # async fn demo(client: Client) -> Result<(), s3_wire_tokio::Error> {
    /// let done = client
    ///     .upload_directory("site", bucket("www")?, "2024/")
    ///     .filter(|entry| !entry.relative.ends_with(".tmp"))
    ///     .objects_at_once(16)
    ///     .failure_policy(FailurePolicy::Continue)
    ///     .on_progress(|p: DirectoryProgress| {
    ///         eprint!("\r{}/{} bytes", p.committed, p.bytes_to_transfer())
    ///     })
    ///     .on_object(|outcome| {
    ///         if let Err(error) = &outcome.result {
    ///             eprintln!("{}: {error}", outcome.relative)
    ///         }
    ///     })
    ///     .await?;
    /// println!("{} files, {} failed", done.progress.objects_transferred, done.progress.objects_failed);
    /// # Ok(()) }
    /// ```
    pub fn upload_directory(
        &self,
        directory: impl Into<PathBuf>,
        bucket: BucketName,
        prefix: impl Into<String>,
    ) -> DirectoryBuilder {
        self.directory_transfer(
            Side::Local(directory.into()),
            Side::Bucket {
                bucket,
                prefix: directory_prefix(&prefix.into()),
            },
        )
    }

    /// Downloads every object under `prefix` in `bucket` into `directory` (created if
    /// missing): the object `prefix/a/b.txt` becomes `directory/a/b.txt`. Each file is
    /// written whole or not at all (see [`Client::download`]); a key that would name a file
    /// outside `directory` is refused ([`LocalIssue::UnsafeKey`]).
    pub fn download_directory(
        &self,
        bucket: BucketName,
        prefix: impl Into<String>,
        directory: impl Into<PathBuf>,
    ) -> DirectoryBuilder {
        self.directory_transfer(
            Side::Bucket {
                bucket,
                prefix: directory_prefix(&prefix.into()),
            },
            Side::Local(directory.into()),
        )
    }

    /// Copies every object under `prefix` in `bucket` to the same relative keys under
    /// `to_prefix` in `to_bucket`, server side (see [`Client::copy`]).
    pub fn copy_directory(
        &self,
        bucket: BucketName,
        prefix: impl Into<String>,
        to_bucket: BucketName,
        to_prefix: impl Into<String>,
    ) -> DirectoryBuilder {
        self.directory_transfer(
            Side::Bucket {
                bucket,
                prefix: directory_prefix(&prefix.into()),
            },
            Side::Bucket {
                bucket: to_bucket,
                prefix: directory_prefix(&to_prefix.into()),
            },
        )
    }

    fn directory_transfer(&self, source: Side, destination: Side) -> DirectoryBuilder {
        DirectoryBuilder {
            client: self.clone(),
            source,
            destination,
            options: self.inner.transfer_options,
            objects: DirectoryBuilder::DEFAULT_OBJECTS_AT_ONCE,
            filter: None,
            attributes: None,
            checksum: None,
            compare: Compare::Always,
            delete_extraneous: false,
            follow_symlinks: true,
            keep_mtime: true,
            remove_source: false,
            dry_run: false,
            failure_policy: FailurePolicy::Continue,
            sse_customer_key: None,
            listener: None,
            object_listener: None,
            on_object: None,
        }
    }
}

/// A prefix that names a directory: `data` is `data/` (so `data2/…` is never part of it);
/// the empty prefix is the whole bucket.
fn directory_prefix(prefix: &str) -> String {
    if prefix.is_empty() || prefix.ends_with('/') {
        prefix.to_owned()
    } else {
        format!("{prefix}/")
    }
}

impl DirectoryBuilder {
    /// Objects transferred at once by default.
    pub const DEFAULT_OBJECTS_AT_ONCE: usize = 8;

    /// Objects transferred at once (default 8). Each object's own parts in flight are
    /// [`concurrency`](Self::concurrency); all of them share the client's memory budget.
    pub fn objects_at_once(mut self, objects: usize) -> Self {
        self.objects = objects.max(1);
        self
    }

    /// Bytes per part of each object (see [`TransferOptions::part_size`]).
    pub fn part_size(mut self, bytes: u64) -> Self {
        self.options.part_size = bytes;
        self
    }

    /// Parts in flight per object (see [`TransferOptions::concurrency`]).
    pub fn concurrency(mut self, parts: usize) -> Self {
        self.options.concurrency = parts;
        self
    }

    /// Every object transfer's options.
    pub fn options(mut self, options: TransferOptions) -> Self {
        self.options = options;
        self
    }

    /// Only entries for which `keep` is true are transferred (and, with
    /// [`delete_extraneous`](Self::delete_extraneous), only such destination entries are
    /// deleted). It sees each source and destination entry once.
    pub fn filter(
        mut self,
        keep: impl Fn(&DirectoryEntry) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.filter = Some(Arc::new(keep));
        self
    }

    /// The attributes of each uploaded object (content type, metadata, …). For copies,
    /// setting this replaces the source's attributes (`REPLACE`) with these; otherwise a
    /// copy keeps them.
    pub fn attributes(
        mut self,
        attributes: impl Fn(&DirectoryEntry) -> ObjectAttributes + Send + Sync + 'static,
    ) -> Self {
        self.attributes = Some(Arc::new(attributes));
        self
    }

    /// The checksum of uploaded and copied objects (see [`UploadBuilder::checksum`](crate::transfer::UploadBuilder::checksum)
    /// (crate::transfer::UploadBuilder::checksum)).
    pub fn checksum(mut self, algorithm: Option<ChecksumAlgorithm>) -> Self {
        self.checksum = Some(algorithm);
        self
    }

    /// Which entries to transfer when the destination has them already (default
    /// [`Compare::Always`]). Anything but `Always` walks the destination too.
    pub fn compare(mut self, compare: Compare) -> Self {
        self.compare = compare;
        self
    }

    /// Deletes destination files or objects the source lacks (a sync with `--delete`).
    pub fn delete_extraneous(mut self, delete: bool) -> Self {
        self.delete_extraneous = delete;
        self
    }

    /// Whether symbolic links in a local source are followed (default: yes; a link to a
    /// directory that contains it is reported as [`LocalIssue::LinkLoop`], a broken one as
    /// [`LocalIssue::BrokenLink`]). Not followed, links are skipped.
    pub fn follow_symlinks(mut self, follow: bool) -> Self {
        self.follow_symlinks = follow;
        self
    }

    /// Whether each downloaded file is synced to storage before it counts as transferred
    /// (see [`TransferOptions::sync_files`]; default: yes).
    pub fn sync_files(mut self, enabled: bool) -> Self {
        self.options.sync_files = enabled;
        self
    }

    /// Keeps modification times (default: on): an upload stores the file's time as
    /// [`MTIME_METADATA`], a download sets the file's time to it (or to LastModified).
    pub fn keep_mtime(mut self, keep: bool) -> Self {
        self.keep_mtime = keep;
        self
    }

    /// Removes each source file or object once its transfer succeeded (a move).
    pub fn remove_source(mut self, remove: bool) -> Self {
        self.remove_source = remove;
        self
    }

    /// Walks, compares and reports, but transfers, deletes and removes nothing.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// What to do after a failed entry (default [`FailurePolicy::Continue`]).
    pub fn failure_policy(mut self, policy: FailurePolicy) -> Self {
        self.failure_policy = policy;
        self
    }

    /// The SSE-C key of the objects read (downloads).
    pub fn sse_customer_key(mut self, key: s3_ops::SseCustomerKey) -> Self {
        self.sse_customer_key = Some(key);
        self
    }

    /// Calls `listener` with every change of the aggregate progress, in order. Keep it
    /// short: it runs on the threads that drive the transfers.
    pub fn on_progress(
        mut self,
        listener: impl Fn(DirectoryProgress) + Send + Sync + 'static,
    ) -> Self {
        self.listener = Some(Arc::new(listener));
        self
    }

    /// Calls `listener` with each object transfer's own [`Progress`] and its relative path
    /// (to show a bar per large object, say), in order per object.
    pub fn on_object_progress(
        mut self,
        listener: impl Fn(&str, Progress) + Send + Sync + 'static,
    ) -> Self {
        self.object_listener = Some(Arc::new(listener));
        self
    }

    /// Calls `report` with each entry's outcome as it finishes: transferred, skipped,
    /// deleted or failed.
    pub fn on_object(mut self, report: impl Fn(&ObjectOutcome) + Send + Sync + 'static) -> Self {
        self.on_object = Some(Arc::new(report));
        self
    }

    /// Starts the transfer as a task; must be called within a Tokio runtime.
    pub fn start(self) -> DirectoryHandle {
        let aggregate = Arc::new(Aggregate::new(self.listener.clone()));
        let shared = aggregate.clone();
        DirectoryHandle {
            inner: TransferHandle::start(None, None, move |control| run(self, control, shared)),
            aggregate,
        }
    }
}

impl std::future::IntoFuture for DirectoryBuilder {
    type Output = Result<DirectoryOutput, Error>;
    type IntoFuture = DirectoryHandle;

    fn into_future(self) -> Self::IntoFuture {
        self.start()
    }
}

/// A directory transfer running in the background: its [`DirectoryProgress`], its
/// cancellation, its result. Dropping it cancels the transfer (each running object
/// transfer is cancelled, as [`TransferHandle`] describes).
#[must_use = "dropping a directory handle cancels the transfer"]
pub struct DirectoryHandle {
    inner: TransferHandle<DirectoryOutput>,
    aggregate: Arc<Aggregate>,
}

impl DirectoryHandle {
    /// The aggregate progress now.
    pub fn progress(&self) -> DirectoryProgress {
        self.aggregate.get()
    }

    /// Starts nothing more and cancels the object transfers running (their multipart
    /// uploads are aborted, partial downloads removed); awaiting the handle then fails
    /// with an error that [`is_cancelled`](Error::is_cancelled).
    pub fn cancel(&self) {
        self.inner.cancel();
    }

    /// True once the transfer has ended.
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
}

impl Future for DirectoryHandle {
    type Output = Result<DirectoryOutput, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.inner).poll(cx)
    }
}

impl fmt::Debug for DirectoryHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectoryHandle")
            .field("progress", &self.progress())
            .finish_non_exhaustive()
    }
}

// -------------------------------------------------------------------------------------
// The aggregate progress
// -------------------------------------------------------------------------------------

/// The aggregate progress and its listener (snapshots delivered in order, as
/// `ProgressState` does for one transfer).
struct Aggregate {
    state: Mutex<(DirectoryProgress, u64)>,
    delivered: Mutex<u64>,
    listener: Option<ProgressFn>,
}

impl Aggregate {
    fn new(listener: Option<ProgressFn>) -> Self {
        Self {
            state: Mutex::new((DirectoryProgress::default(), 0)),
            delivered: Mutex::new(0),
            listener,
        }
    }

    fn get(&self) -> DirectoryProgress {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    fn update(&self, change: impl FnOnce(&mut DirectoryProgress)) {
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
struct Share {
    aggregate: Arc<Aggregate>,
    /// The entry's size as counted in `bytes_found`.
    counted: u64,
    last: Mutex<Progress>,
    /// The entry's relative path and the per-object listener.
    listener: Option<(String, ObjectProgressFn)>,
}

impl Share {
    fn new(
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
    fn report(&self, now: Progress) {
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
    fn finish(&self, succeeded: bool) {
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

// -------------------------------------------------------------------------------------
// Walking the two sides
// -------------------------------------------------------------------------------------

/// What a walk yields, in order of relative path.
enum Found {
    Entry(DirectoryEntry),
    /// An entry that cannot be transferred; reported, never fatal.
    Refused {
        relative: String,
        place: Place,
        issue: Result<SkipReason, Error>,
    },
}

impl Found {
    fn relative(&self) -> &str {
        match self {
            Found::Entry(entry) => &entry.relative,
            Found::Refused { relative, .. } => relative,
        }
    }
}

/// A walk running in its own task (or thread): entries in key order, an error ends it.
type Walk = mpsc::Receiver<Result<Found, Error>>;

/// Walks one side; `destination`: a directory that does not exist yet holds nothing.
/// `in_order`: the entries must come in key order (a merge); a bucket that does not list in
/// key order (a directory bucket) is then walked directory by directory, each directory's
/// listing sorted before its first entry (see [`walk_by_directory`]).
fn walk(
    client: &Client,
    side: &Side,
    follow_symlinks: bool,
    destination: bool,
    in_order: bool,
) -> Walk {
    let (sender, receiver) = mpsc::channel(WALK_AHEAD);
    match side {
        Side::Local(root) if destination && !root.exists() => {}
        Side::Local(root) => {
            let mut walker = LocalWalk::new(root.clone(), follow_symlinks);
            tokio::task::spawn_blocking(move || {
                while let Some(found) = walker.next() {
                    if sender.blocking_send(found).is_err() {
                        return;
                    }
                }
            });
        }
        Side::Bucket { bucket, prefix } => {
            let by_directory = in_order && !client.lists_in_key_order(bucket);
            let (client, bucket, prefix) = (client.clone(), bucket.clone(), prefix.clone());
            tokio::spawn(async move {
                if by_directory {
                    walk_by_directory(&client, &bucket, &prefix, &sender).await;
                    return;
                }
                let mut request = ListObjectsV2::new(bucket.clone());
                if !prefix.is_empty() {
                    request = request.prefix(prefix.clone());
                }
                let mut pages = client.list_objects_v2_pages(request);
                while let Some(page) = pages.next_page().await {
                    let page = match page {
                        Ok(page) => page,
                        Err(error) => {
                            let _ = sender.send(Err(error)).await;
                            return;
                        }
                    };
                    for object in page.result.contents {
                        let Some(found) = found_object(&bucket, &prefix, object) else {
                            continue;
                        };
                        if sender.send(Ok(found)).await.is_err() {
                            return;
                        }
                    }
                }
            });
        }
    }
    receiver
}

/// What an object of a listing under `prefix` is to a directory transfer (`None`: not
/// under the prefix).
fn found_object(bucket: &BucketName, prefix: &str, object: s3_xml::Object) -> Option<Found> {
    let relative = object.key.strip_prefix(prefix)?;
    Some(if relative.is_empty() || relative.ends_with('/') {
        Found::Refused {
            relative: relative.to_owned(),
            place: Place::Object {
                bucket: bucket.as_str().to_owned(),
                key: object.key.clone(),
            },
            issue: Ok(SkipReason::DirectoryMarker),
        }
    } else {
        Found::Entry(DirectoryEntry {
            relative: relative.to_owned(),
            size: object.size,
            modified: object.last_modified.to_system_time(),
            etag: object.etag,
        })
    })
}

/// One item of a directory's listing in [`walk_by_directory`].
enum Listed {
    Object(Found),
    /// A subdirectory: its key prefix (ending in `/`).
    Directory(String),
}

impl Listed {
    /// Its place in key order: an object's key, a directory's prefix (every key under it
    /// sorts there against the directory's other keys).
    fn order_key<'a>(&'a self, prefix: &str) -> std::borrow::Cow<'a, str> {
        match self {
            Listed::Object(found) => {
                std::borrow::Cow::Owned(format!("{prefix}{}", found.relative()))
            }
            Listed::Directory(directory) => std::borrow::Cow::Borrowed(directory),
        }
    }
}

/// The keys under `prefix` of a bucket that does not list in key order (S3 Express One
/// Zone's directory buckets), in key order all the same: one directory at a time (a
/// listing with the delimiter `/`, which such a bucket serves), its objects and
/// subdirectories sorted, the subdirectories walked where they sort, depth first. Memory
/// holds the listings of the directories on the current path, not the bucket's: a flat
/// directory of N keys holds N entries, a tree holds its largest directories' at most.
async fn walk_by_directory(
    client: &Client,
    bucket: &BucketName,
    prefix: &str,
    sender: &mpsc::Sender<Result<Found, Error>>,
) {
    let mut path: Vec<Vec<Listed>> = Vec::new();
    let mut next = Some(prefix.to_owned());
    loop {
        if let Some(directory) = next.take() {
            match list_directory(client, bucket, prefix, &directory).await {
                Ok(listed) => path.push(listed),
                Err(error) => {
                    let _ = sender.send(Err(error)).await;
                    return;
                }
            }
        }
        let Some(level) = path.last_mut() else {
            return;
        };
        match level.pop() {
            None => {
                path.pop();
            }
            Some(Listed::Directory(directory)) => next = Some(directory),
            Some(Listed::Object(found)) => {
                if sender.send(Ok(found)).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// One directory's objects and subdirectories (every page), in reverse key order (the next
/// one last).
async fn list_directory(
    client: &Client,
    bucket: &BucketName,
    prefix: &str,
    directory: &str,
) -> Result<Vec<Listed>, Error> {
    let mut request = ListObjectsV2::new(bucket.clone()).delimiter("/");
    if !directory.is_empty() {
        request = request.prefix(directory.to_owned());
    }
    let mut listed = Vec::new();
    let mut pages = client.list_objects_v2_pages(request);
    while let Some(page) = pages.next_page().await {
        let page = page?.result;
        listed.extend(
            page.contents
                .into_iter()
                .filter_map(|object| found_object(bucket, prefix, object))
                .map(Listed::Object),
        );
        listed.extend(page.common_prefixes.into_iter().map(Listed::Directory));
    }
    listed.sort_by_cached_key(|item| std::cmp::Reverse(item.order_key(prefix).into_owned()));
    Ok(listed)
}

/// A depth-first walk of a local tree in the byte order of relative paths, one directory's
/// sorted names per level of the current path.
struct LocalWalk {
    root: PathBuf,
    follow_symlinks: bool,
    /// The directories on the current path, the root first.
    levels: Vec<Level>,
    started: bool,
}

/// One directory of a [`LocalWalk`]'s current path.
struct Level {
    /// Its relative path with a trailing `/` (empty for the root).
    prefix: String,
    /// Its canonical path, for loop detection.
    canonical: PathBuf,
    /// Its entries still to visit, by sort name, last first.
    entries: Vec<(String, PathBuf)>,
}

impl LocalWalk {
    fn new(root: PathBuf, follow_symlinks: bool) -> Self {
        Self {
            root,
            follow_symlinks,
            levels: Vec::new(),
            started: false,
        }
    }

    fn next(&mut self) -> Option<Result<Found, Error>> {
        if !self.started {
            self.started = true;
            let root = self.root.clone();
            // The root itself is always followed (as `cp -r link/` would).
            match std::fs::metadata(&root) {
                Ok(meta) if meta.is_dir() => {
                    if let Err(error) = self.enter(String::new(), &root) {
                        return Some(Err(error));
                    }
                }
                Ok(_) => {
                    return Some(Err(Error::io(io::Error::new(
                        io::ErrorKind::NotADirectory,
                        format!("{} is not a directory", root.display()),
                    ))));
                }
                Err(error) => {
                    return Some(Err(Error::io(io::Error::new(
                        error.kind(),
                        format!("{}: {error}", root.display()),
                    ))));
                }
            }
        }
        loop {
            let level = self.levels.last_mut()?;
            let Some((name, path)) = level.entries.pop() else {
                self.levels.pop();
                continue;
            };
            let relative = format!("{}{}", level.prefix, name.trim_end_matches('/'));
            if let Some(found) = self.visit(relative, path) {
                return Some(Ok(found));
            }
        }
    }

    /// Reads a directory's names into a new level (sorted: a subdirectory `d` as `d/`).
    fn enter(&mut self, relative: String, path: &Path) -> Result<(), Error> {
        let canonical = std::fs::canonicalize(path).map_err(|e| located(path, e))?;
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| located(path, e))? {
            let entry = entry.map_err(|e| located(path, e))?;
            let name = entry.file_name();
            let sort_name = match name.to_str() {
                Some(name) => {
                    // A directory sorts as `name/` (S3 order of the keys under it).
                    let is_dir = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
                    if is_dir {
                        format!("{name}/")
                    } else {
                        name.to_owned()
                    }
                }
                // Reported where it stands in the order of its lossy name.
                None => format!("{}\u{0}", name.to_string_lossy()),
            };
            entries.push((sort_name, entry.path()));
        }
        entries.sort_by(|a, b| b.0.cmp(&a.0));
        let prefix = if relative.is_empty() {
            String::new()
        } else {
            format!("{relative}/")
        };
        self.levels.push(Level {
            prefix,
            canonical,
            entries,
        });
        Ok(())
    }

    fn visit(&mut self, relative: String, path: PathBuf) -> Option<Found> {
        let refused = |relative: String, issue| Found::Refused {
            relative,
            place: Place::File(path.clone()),
            issue,
        };
        if relative.ends_with('\u{0}') {
            let relative = relative.trim_end_matches('\u{0}').to_owned();
            return Some(refused(relative, Err(LocalIssue::NotUnicode.into_error())));
        }
        let link = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta.file_type().is_symlink(),
            Err(error) => return Some(refused(relative, Err(located(&path, error)))),
        };
        if link && !self.follow_symlinks {
            return Some(refused(relative, Ok(SkipReason::SymlinkNotFollowed)));
        }
        let meta = match std::fs::metadata(&path) {
            Ok(meta) => meta,
            Err(error) if link && error.kind() == io::ErrorKind::NotFound => {
                let target = std::fs::read_link(&path).unwrap_or_default();
                return Some(refused(
                    relative,
                    Err(LocalIssue::BrokenLink { target }.into_error()),
                ));
            }
            Err(error) => return Some(refused(relative, Err(located(&path, error)))),
        };
        if meta.is_dir() {
            if link {
                let target = std::fs::canonicalize(&path).unwrap_or_default();
                if self.levels.iter().any(|level| level.canonical == target) {
                    return Some(refused(
                        relative,
                        Err(LocalIssue::LinkLoop { target }.into_error()),
                    ));
                }
            }
            return match self.enter(relative.clone(), &path) {
                Ok(()) => None,
                Err(error) => Some(refused(relative, Err(error))),
            };
        }
        if !meta.is_file() {
            return Some(refused(relative, Ok(SkipReason::SpecialFile)));
        }
        Some(Found::Entry(DirectoryEntry {
            relative,
            size: meta.len(),
            modified: meta.modified().ok(),
            etag: None,
        }))
    }
}

fn located(path: &Path, error: io::Error) -> Error {
    Error::io(io::Error::new(
        error.kind(),
        format!("{}: {error}", path.display()),
    ))
}

/// The file a relative path names under `root`, refusing any path that would leave it.
fn local_path(root: &Path, relative: &str) -> Result<PathBuf, LocalIssue> {
    let mut path = root.to_path_buf();
    for component in relative.split('/') {
        let unsafe_component = component.is_empty()
            || component == "."
            || component == ".."
            || (cfg!(windows) && (component.contains('\\') || component.contains(':')));
        if unsafe_component {
            return Err(LocalIssue::UnsafeKey {
                key: relative.to_owned(),
            });
        }
        path.push(component);
    }
    Ok(path)
}

// -------------------------------------------------------------------------------------
// Planning: the source walk, merged with the destination walk when needed
// -------------------------------------------------------------------------------------

/// One unit of work for the engine.
enum Planned {
    Transfer {
        source: DirectoryEntry,
        existing: Option<DirectoryEntry>,
    },
    Delete(DirectoryEntry),
    Report(ObjectOutcome),
}

/// The source walk, filtered, merged with the destination walk (when comparing or
/// deleting), into a channel of work; ends with the first fatal error.
fn plan(
    client: &Client,
    builder: &DirectoryBuilder,
    aggregate: Arc<Aggregate>,
    counted_ahead: bool,
) -> mpsc::Receiver<Result<Planned, Error>> {
    let (sender, receiver) = mpsc::channel(1);
    let merging = builder.compare != Compare::Always || builder.delete_extraneous;
    let mut source = walk(
        client,
        &builder.source,
        builder.follow_symlinks,
        false,
        merging,
    );
    // The destination's links are not followed: a link is compared as what it is, and a
    // missing destination directory is empty.
    let mut destination = merging.then(|| walk(client, &builder.destination, false, true, true));
    let filter = builder.filter.clone();
    let delete = builder.delete_extraneous;
    let (source_side, destination_side) = (builder.source.clone(), builder.destination.clone());
    tokio::spawn(async move {
        let keep = |found: &Found| match (found, &filter) {
            (Found::Entry(entry), Some(filter)) => filter(entry),
            _ => true,
        };
        let mut next_source = Ordered::new(merging);
        let mut next_destination = Ordered::new(merging);
        let mut source_item = next_source.next(&mut source, &keep).await;
        let mut destination_item = match &mut destination {
            Some(walk) => next_destination.next(walk, &keep).await,
            None => Ok(None),
        };
        loop {
            let (s, d) = match (&source_item, &destination_item) {
                (Err(_), _) | (_, Err(_)) => {
                    let error = match (source_item, destination_item) {
                        (Err(error), _) | (_, Err(error)) => error,
                        _ => unreachable!("one of them is an error"),
                    };
                    let _ = sender.send(Err(error)).await;
                    return;
                }
                (Ok(s), Ok(d)) => (s.as_ref(), d.as_ref()),
            };
            let order = match (s, d) {
                (None, None) => break,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(s), Some(d)) => s.relative().cmp(d.relative()),
            };
            let planned = match order {
                std::cmp::Ordering::Less | std::cmp::Ordering::Equal => {
                    let Ok(Some(found)) = std::mem::replace(
                        &mut source_item,
                        next_source.next(&mut source, &keep).await,
                    ) else {
                        unreachable!("a source entry was there")
                    };
                    let existing = if order == std::cmp::Ordering::Equal {
                        let Some(walk) = &mut destination else {
                            unreachable!("merging")
                        };
                        match std::mem::replace(
                            &mut destination_item,
                            next_destination.next(walk, &keep).await,
                        ) {
                            Ok(Some(Found::Entry(entry))) => Some(entry),
                            _ => None,
                        }
                    } else {
                        None
                    };
                    match found {
                        Found::Entry(source) => {
                            if !counted_ahead {
                                aggregate.update(|p| {
                                    p.objects_found += 1;
                                    p.bytes_found += source.size;
                                });
                            }
                            Some(Planned::Transfer { source, existing })
                        }
                        Found::Refused {
                            relative,
                            place,
                            issue,
                        } => Some(Planned::Report(refused_outcome(
                            (!counted_ahead).then_some(&aggregate),
                            &source_side,
                            &destination_side,
                            relative,
                            place,
                            issue,
                        ))),
                    }
                }
                std::cmp::Ordering::Greater => {
                    let Some(walk) = &mut destination else {
                        unreachable!("merging")
                    };
                    match std::mem::replace(
                        &mut destination_item,
                        next_destination.next(walk, &keep).await,
                    ) {
                        Ok(Some(Found::Entry(entry))) if delete => Some(Planned::Delete(entry)),
                        _ => None,
                    }
                }
            };
            if let Some(planned) = planned
                && sender.send(Ok(planned)).await.is_err()
            {
                return;
            }
        }
        aggregate.update(|p| p.walk_complete = true);
    });
    receiver
}

/// Reads a walk's next kept entry; when merging, checks that the order holds (a listing
/// out of order would make a sync transfer, or delete, the wrong entries).
struct Ordered {
    check: bool,
    last: Option<String>,
}

impl Ordered {
    fn new(check: bool) -> Self {
        Self { check, last: None }
    }

    async fn next(
        &mut self,
        walk: &mut Walk,
        keep: &impl Fn(&Found) -> bool,
    ) -> Result<Option<Found>, Error> {
        loop {
            let Some(found) = walk.recv().await.transpose()? else {
                return Ok(None);
            };
            if self.check && matches!(found, Found::Entry(_)) {
                if let Some(last) = &self.last
                    && found.relative() <= last.as_str()
                {
                    return Err(Error::transfer_error(TransferErrorKind::Inconsistent(
                        format!(
                            "the entries are not in key order (`{}` after `{last}`): refusing to compare or delete by them",
                            found.relative()
                        ),
                    )));
                }
                self.last = Some(found.relative().to_owned());
            }
            if keep(&found) {
                return Ok(Some(found));
            }
        }
    }
}

/// Where `relative` is on a side, for the requests.
#[derive(Debug, Clone)]
enum Spot {
    File(PathBuf),
    Object(BucketName, ObjectKey),
}

impl Spot {
    fn of(side: &Side, relative: &str) -> Result<Spot, Error> {
        Ok(match side {
            Side::Local(root) => {
                Spot::File(local_path(root, relative).map_err(LocalIssue::into_error)?)
            }
            Side::Bucket { bucket, prefix } => Spot::Object(
                bucket.clone(),
                ObjectKey::new(format!("{prefix}{relative}"))?,
            ),
        })
    }
}

/// Where `relative` is on a side, as reported (also when it cannot be reached).
fn place(side: &Side, relative: &str) -> Option<Place> {
    match side {
        Side::Local(root) => local_path(root, relative).ok().map(Place::File),
        Side::Bucket { bucket, prefix } => Some(Place::Object {
            bucket: bucket.as_str().to_owned(),
            key: format!("{prefix}{relative}"),
        }),
    }
}

fn action(source: &Side, destination: &Side) -> Action {
    match (source, destination) {
        (Side::Local(_), _) => Action::Upload,
        (Side::Bucket { .. }, Side::Local(_)) => Action::Download,
        (Side::Bucket { .. }, Side::Bucket { .. }) => Action::Copy,
    }
}

/// The outcome of an entry refused by the walk; a failure counts as found and failed
/// (`count`: unless the walk was counted ahead, which counted it).
fn refused_outcome(
    count: Option<&Arc<Aggregate>>,
    source: &Side,
    destination: &Side,
    relative: String,
    from: Place,
    issue: Result<SkipReason, Error>,
) -> ObjectOutcome {
    let (action, result) = match issue {
        Ok(reason) => (Action::Skip(reason), Ok(Completed::default())),
        Err(error) => {
            if let Some(aggregate) = count {
                aggregate.update(|p| p.objects_found += 1);
            }
            (self::action(source, destination), Err(error))
        }
    };
    ObjectOutcome {
        destination: place(destination, &relative),
        relative,
        action,
        source: Some(from),
        size: 0,
        elapsed: Duration::ZERO,
        result,
    }
}

// -------------------------------------------------------------------------------------
// The engine
// -------------------------------------------------------------------------------------

/// What every entry's task shares.
struct Shared {
    client: Client,
    source: Side,
    destination: Side,
    options: TransferOptions,
    attributes: Option<EntryFn<ObjectAttributes>>,
    checksum: Option<Option<ChecksumAlgorithm>>,
    compare: Compare,
    keep_mtime: bool,
    remove_source: bool,
    dry_run: bool,
    sse_customer_key: Option<s3_ops::SseCustomerKey>,
    aggregate: Arc<Aggregate>,
    object_listener: Option<ObjectProgressFn>,
    /// Becomes true when the running transfers must be cancelled.
    halt: watch::Receiver<bool>,
}

async fn run(
    builder: DirectoryBuilder,
    control: Arc<Control>,
    aggregate: Arc<Aggregate>,
) -> Result<DirectoryOutput, Error> {
    // A local source is counted first, so the totals are known from the first snapshot.
    let counted_ahead = if let Side::Local(root) = &builder.source {
        let mut walker = LocalWalk::new(root.clone(), builder.follow_symlinks);
        let filter = builder.filter.clone();
        let (objects, bytes) = tokio::task::spawn_blocking(move || {
            let (mut objects, mut bytes) = (0u64, 0u64);
            while let Some(found) = walker.next() {
                match found {
                    Ok(Found::Entry(entry)) if filter.as_ref().is_none_or(|keep| keep(&entry)) => {
                        objects += 1;
                        bytes += entry.size;
                    }
                    // Refused entries that fail are found (and fail at once).
                    Ok(Found::Refused { issue: Err(_), .. }) => objects += 1,
                    _ => {}
                }
            }
            (objects, bytes)
        })
        .await
        .map_err(|e| Error::io(io::Error::other(e)))?;
        aggregate.update(|p| {
            p.objects_found = objects;
            p.bytes_found = bytes;
            p.walk_complete = true;
        });
        true
    } else {
        false
    };
    let mut planned = plan(&builder.client, &builder, aggregate.clone(), counted_ahead);
    let (halt_sender, halt) = watch::channel(false);
    let context = Arc::new(Shared {
        client: builder.client.clone(),
        source: builder.source.clone(),
        destination: builder.destination.clone(),
        options: builder.options,
        attributes: builder.attributes.clone(),
        checksum: builder.checksum,
        compare: builder.compare,
        keep_mtime: builder.keep_mtime,
        remove_source: builder.remove_source,
        dry_run: builder.dry_run,
        sse_customer_key: builder.sse_customer_key.clone(),
        aggregate: aggregate.clone(),
        object_listener: builder.object_listener.clone(),
        halt,
    });
    let report = |outcome: &ObjectOutcome| {
        if let Some(on_object) = &builder.on_object {
            on_object(outcome);
        }
    };
    let mut output = DirectoryOutput::default();
    let mut first_failure: Option<Error> = None;
    let mut fatal: Option<Error> = None;
    let mut tasks: JoinSet<ObjectOutcome> = JoinSet::new();
    let mut pending: VecDeque<ObjectOutcome> = VecDeque::new();
    let mut cancelled = control.watch();
    let (mut planning, mut stopping) = (true, false);
    let stop_on_failure = builder.failure_policy == FailurePolicy::Stop;
    enum Event {
        Cancelled,
        Finished(ObjectOutcome),
        Planned(Option<Result<Planned, Error>>),
        Done,
    }
    loop {
        if let Some(outcome) = pending.pop_front() {
            report(&outcome);
            if outcome.result.is_err() {
                if stop_on_failure && first_failure.is_none() {
                    first_failure = outcome.result.err();
                } else if output.failures.len() < KEPT_FAILURES {
                    output.failures.push(outcome);
                }
            }
            continue;
        }
        if first_failure.is_some() && !stopping {
            stopping = true;
            let _ = halt_sender.send(true);
        }
        let event = std::future::poll_fn(|cx| {
            if !stopping && cancelled.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Event::Cancelled);
            }
            if let Poll::Ready(Some(done)) = tasks.poll_join_next(cx) {
                return Poll::Ready(match done {
                    Ok(outcome) => Event::Finished(outcome),
                    Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
                    Err(_) => Event::Cancelled,
                });
            }
            if planning
                && !stopping
                && tasks.len() < builder.objects
                && let Poll::Ready(item) = planned.poll_recv(cx)
            {
                return Poll::Ready(Event::Planned(item));
            }
            if tasks.is_empty() && (stopping || !planning) {
                return Poll::Ready(Event::Done);
            }
            Poll::Pending
        })
        .await;
        match event {
            Event::Cancelled => {
                stopping = true;
                let _ = halt_sender.send(true);
                fatal.get_or_insert_with(|| Error::transfer_error(TransferErrorKind::Cancelled));
            }
            Event::Finished(outcome) => pending.push_back(outcome),
            Event::Planned(None) => planning = false,
            Event::Planned(Some(Err(error))) => {
                stopping = true;
                let _ = halt_sender.send(true);
                fatal.get_or_insert(error);
            }
            Event::Planned(Some(Ok(Planned::Report(outcome)))) => {
                if outcome.result.is_err() {
                    aggregate.update(|p| p.objects_failed += 1);
                }
                pending.push_back(outcome);
            }
            Event::Planned(Some(Ok(Planned::Transfer { source, existing }))) => {
                tasks.spawn(transfer(context.clone(), source, existing));
            }
            Event::Planned(Some(Ok(Planned::Delete(entry)))) => {
                tasks.spawn(delete(context.clone(), entry));
            }
            Event::Done => break,
        }
    }
    drop(planned);
    output.progress = aggregate.get();
    if let Some(error) = fatal {
        return Err(error);
    }
    if let Some(error) = first_failure {
        return Err(error);
    }
    Ok(output)
}

/// Waits for a transfer, cancelling it if the directory transfer halts meanwhile.
async fn finish<T>(
    mut handle: TransferHandle<T>,
    halt: &watch::Receiver<bool>,
) -> Result<T, Error> {
    let mut halt = halt.clone();
    let mut halted = Box::pin(async move {
        let _ = halt.wait_for(|halted| *halted).await;
    });
    let mut cancelled = false;
    std::future::poll_fn(|cx| {
        if !cancelled && halted.as_mut().poll(cx).is_ready() {
            handle.cancel();
            cancelled = true;
        }
        Pin::new(&mut handle).poll(cx)
    })
    .await
}

/// One source entry: compared with the destination's (when there is one), transferred.
async fn transfer(
    shared: Arc<Shared>,
    source: DirectoryEntry,
    existing: Option<DirectoryEntry>,
) -> ObjectOutcome {
    let started = std::time::Instant::now();
    let mut outcome = ObjectOutcome {
        relative: source.relative.clone(),
        action: action(&shared.source, &shared.destination),
        source: place(&shared.source, &source.relative),
        destination: place(&shared.destination, &source.relative),
        size: source.size,
        elapsed: Duration::ZERO,
        result: Ok(Completed::default()),
    };
    let share = Share::new(
        shared.aggregate.clone(),
        source.size,
        shared
            .object_listener
            .clone()
            .map(|listener| (source.relative.clone(), listener)),
    );
    match transfer_entry(&shared, &source, existing.as_ref(), &share).await {
        Ok(Done::Skipped(reason)) => {
            shared.aggregate.update(|p| {
                p.objects_skipped += 1;
                p.bytes_skipped += source.size;
            });
            outcome.action = Action::Skip(reason);
        }
        Ok(Done::Completed(completed)) => {
            let last = *share.last.lock().unwrap_or_else(|e| e.into_inner());
            outcome.size = last.total.unwrap_or(source.size);
            share.finish(true);
            outcome.result = Ok(completed);
        }
        Err(error) => {
            share.finish(false);
            outcome.result = Err(error);
        }
    }
    outcome.elapsed = started.elapsed();
    outcome
}

enum Done {
    Skipped(SkipReason),
    Completed(Completed),
}

async fn transfer_entry(
    shared: &Shared,
    source: &DirectoryEntry,
    existing: Option<&DirectoryEntry>,
    share: &Arc<Share>,
) -> Result<Done, Error> {
    let from = Spot::of(&shared.source, &source.relative)?;
    let to = Spot::of(&shared.destination, &source.relative)?;
    if let Some(existing) = existing
        && let Some(reason) = unchanged(shared, source, existing, &from, &to).await?
    {
        return Ok(Done::Skipped(reason));
    }
    if *shared.halt.borrow() {
        return Err(Error::transfer_error(TransferErrorKind::Cancelled));
    }
    if shared.dry_run {
        return Ok(Done::Completed(Completed {
            dry_run: true,
            ..Completed::default()
        }));
    }
    let listener = share.clone();
    let on_progress = move |p| listener.report(p);
    let mut completed = match (&from, &to) {
        (Spot::File(path), Spot::Object(bucket, key)) => {
            let mut attributes = shared
                .attributes
                .as_ref()
                .map(|attributes| attributes(source))
                .unwrap_or_default();
            if shared.keep_mtime
                && let Some(modified) = source.modified
            {
                attributes = attributes.metadata(MTIME_METADATA, format_mtime(modified));
            }
            let mut upload = shared
                .client
                .upload(bucket.clone(), key.clone(), UploadSource::file(path))
                .options(shared.options)
                .attributes(attributes)
                .on_progress(on_progress);
            if let Some(checksum) = shared.checksum {
                upload = upload.checksum(checksum);
            }
            let stored = finish(upload.start(), &shared.halt).await?;
            Completed {
                etag: stored.etag,
                version_id: stored.version_id,
                verification: Some(stored.verification),
                possible_orphan: stored.possible_orphan,
                ..Completed::default()
            }
        }
        (Spot::Object(bucket, key), Spot::File(path)) => {
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent)
                    .await
                    .map_err(|e| located(parent, e))?;
            }
            let mut download = shared
                .client
                .download(bucket.clone(), key.clone(), Destination::file(path))
                .options(shared.options)
                .on_progress(on_progress);
            if let Some(key) = &shared.sse_customer_key {
                download = download.sse_customer_key(key.clone());
            }
            let got = finish(download.start(), &shared.halt).await?;
            if shared.keep_mtime
                && let Some(time) = object_mtime(&got.head.metadata).or(got.head.last_modified)
            {
                set_mtime(path.clone(), time).await?;
            }
            Completed {
                etag: got.etag,
                version_id: got.version_id,
                verification: Some(got.verification),
                resumed_bytes: got.resumed_bytes,
                ..Completed::default()
            }
        }
        (Spot::Object(bucket, key), Spot::Object(to_bucket, to_key)) => {
            let mut copy = shared
                .client
                .copy(
                    CopySource::new(bucket.clone(), key.clone()),
                    to_bucket.clone(),
                    to_key.clone(),
                )
                .options(shared.options)
                .on_progress(on_progress);
            if let Some(attributes) = &shared.attributes {
                copy = copy.attributes(attributes(source));
            }
            if let Some(checksum) = shared.checksum {
                copy = copy.checksum(checksum);
            }
            let stored = finish(copy.start(), &shared.halt).await?;
            Completed {
                etag: stored.etag,
                version_id: stored.version_id,
                verification: Some(stored.verification),
                possible_orphan: stored.possible_orphan,
                ..Completed::default()
            }
        }
        (Spot::File(_), Spot::File(_)) => unreachable!("one side is a bucket"),
    };
    if shared.remove_source {
        remove(&shared.client, &from).await?;
        completed.source_removed = true;
    }
    Ok(Done::Completed(completed))
}

async fn set_mtime(path: PathBuf, time: SystemTime) -> Result<(), Error> {
    tokio::task::spawn_blocking(move || {
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_modified(time))
            .map_err(|e| located(&path, e))
    })
    .await
    .map_err(|e| Error::io(io::Error::other(e)))?
}

async fn remove(client: &Client, spot: &Spot) -> Result<(), Error> {
    match spot {
        Spot::File(path) => tokio::fs::remove_file(path)
            .await
            .map_err(|e| located(path, e)),
        Spot::Object(bucket, key) => client
            .delete_object(DeleteObject::new(bucket.clone(), key.clone()))
            .await
            .map(|_| ()),
    }
}

/// A destination entry the source lacks: deleted (or, in a dry run, reported).
async fn delete(shared: Arc<Shared>, entry: DirectoryEntry) -> ObjectOutcome {
    let started = std::time::Instant::now();
    let result = match Spot::of(&shared.destination, &entry.relative) {
        Err(error) => Err(error),
        Ok(_) if shared.dry_run => Ok(Completed {
            dry_run: true,
            ..Completed::default()
        }),
        Ok(target) => remove(&shared.client, &target)
            .await
            .map(|()| Completed::default()),
    };
    match &result {
        Ok(_) => shared.aggregate.update(|p| p.objects_deleted += 1),
        Err(_) => shared.aggregate.update(|p| p.objects_failed += 1),
    }
    ObjectOutcome {
        destination: place(&shared.destination, &entry.relative),
        relative: entry.relative,
        action: Action::Delete,
        source: None,
        size: entry.size,
        elapsed: started.elapsed(),
        result,
    }
}

// -------------------------------------------------------------------------------------
// Comparing an entry with the destination's
// -------------------------------------------------------------------------------------

/// `Some(reason)` if the destination is the same by the rule (skip the entry), `None` if
/// the entry must be transferred.
async fn unchanged(
    shared: &Shared,
    source: &DirectoryEntry,
    existing: &DirectoryEntry,
    from: &Spot,
    to: &Spot,
) -> Result<Option<SkipReason>, Error> {
    let same_size = source.size == existing.size;
    let unchanged = |same: bool| same.then_some(SkipReason::Unchanged);
    Ok(match shared.compare {
        Compare::Always => None,
        Compare::Missing => Some(SkipReason::Exists),
        Compare::SizeOnly => unchanged(same_size),
        _ if !same_size => None,
        Compare::SizeAndTime => {
            let newer = newer_by_seconds(source.modified, existing.modified);
            match (from, to) {
                // An object newer than the file by LastModified may still carry the file's
                // own time in its metadata (the file was downloaded from it).
                (Spot::Object(..), Spot::File(_)) if newer => {
                    let head = head(shared, from).await?;
                    unchanged(
                        object_mtime(&head.metadata).is_some_and(|mtime| {
                            existing.modified.is_some_and(|file| mtime <= file)
                        }),
                    )
                }
                // An object's LastModified is at least its `mtime` metadata: a file not
                // newer than LastModified is not newer than the object.
                _ => unchanged(!newer),
            }
        }
        Compare::ExactTime => {
            let (source_time, existing_time) = match (from, to) {
                (Spot::File(_), Spot::Object(..)) => {
                    (source.modified, exact_time(shared, to, existing).await?)
                }
                (Spot::Object(..), Spot::File(_)) => {
                    (exact_time(shared, from, source).await?, existing.modified)
                }
                _ => (source.modified, existing.modified),
            };
            unchanged(same_time(source_time, existing_time))
        }
        Compare::Checksum(algorithm) => {
            let (a, b) = (
                content_checksum(shared, from, algorithm).await?,
                content_checksum(shared, to, algorithm).await?,
            );
            unchanged(matches!((a, b), (Some(a), Some(b)) if a == b))
        }
    })
}

/// Whether `a` is later than `b` by at least a whole second (object times have whole
/// seconds; an unknown time is never newer).
fn newer_by_seconds(a: Option<SystemTime>, b: Option<SystemTime>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => unix_seconds(a) > unix_seconds(b),
        (Some(_), None) => true,
        _ => false,
    }
}

/// Equal to the nanosecond when both have sub-second parts, else to the second.
fn same_time(a: Option<SystemTime>, b: Option<SystemTime>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            let whole = |t: SystemTime| {
                t.duration_since(UNIX_EPOCH)
                    .is_ok_and(|d| d.subsec_nanos() == 0)
            };
            if whole(a) || whole(b) {
                unix_seconds(a) == unix_seconds(b)
            } else {
                a == b
            }
        }
        _ => false,
    }
}

fn unix_seconds(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_secs() as i64,
        Err(before) => -(before.duration().as_secs_f64().ceil() as i64),
    }
}

async fn head(
    shared: &Shared,
    object: &Spot,
) -> Result<s3_ops::ops::head_object::ObjectHead, Error> {
    let Spot::Object(bucket, key) = object else {
        unreachable!("called for objects only")
    };
    let mut request = HeadObject::new(bucket.clone(), key.clone()).checksum_mode(true);
    if let Some(key) = &shared.sse_customer_key {
        request = request.sse_customer_key(key.clone());
    }
    shared.client.head_object(request).await
}

/// An object's modification time: its `mtime` metadata, else its LastModified.
async fn exact_time(
    shared: &Shared,
    object: &Spot,
    listed: &DirectoryEntry,
) -> Result<Option<SystemTime>, Error> {
    let head = head(shared, object).await?;
    Ok(object_mtime(&head.metadata).or(listed.modified))
}

/// A file's checksum of `algorithm` (the file read once), or an object's stored
/// full-object one (`None` if it has none, or a composite one).
async fn content_checksum(
    shared: &Shared,
    spot: &Spot,
    algorithm: ChecksumAlgorithm,
) -> Result<Option<String>, Error> {
    match spot {
        Spot::File(path) => {
            let path = path.clone();
            tokio::task::spawn_blocking(move || {
                use std::io::Read;
                let mut file = std::fs::File::open(&path).map_err(|e| located(&path, e))?;
                let mut summer = s3_ops::Checksummer::new(algorithm);
                let mut buffer = vec![0u8; 1 << 20];
                loop {
                    let n = file.read(&mut buffer).map_err(|e| located(&path, e))?;
                    if n == 0 {
                        return Ok(Some(summer.finish().to_base64()));
                    }
                    summer.update(&buffer[..n]);
                }
            })
            .await
            .map_err(|e| Error::io(io::Error::other(e)))?
        }
        Spot::Object(..) => {
            let head = head(shared, spot).await?;
            if head.checksums.checksum_type == Some(ChecksumType::Composite) {
                return Ok(None);
            }
            Ok(head
                .checksums
                .values
                .iter()
                .find(|(a, _)| *a == algorithm)
                .map(|(_, value)| value.clone()))
        }
    }
}

/// `mtime` metadata as rclone writes it: Unix seconds, optionally with up to nine decimals.
pub fn format_mtime(time: SystemTime) -> String {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => format!("{}.{:09}", after.as_secs(), after.subsec_nanos()),
        Err(_) => "0".to_owned(),
    }
}

/// The `mtime` metadata of an object, if it has a valid one.
pub fn object_mtime(metadata: &std::collections::BTreeMap<String, String>) -> Option<SystemTime> {
    parse_mtime(metadata.get(MTIME_METADATA)?)
}

fn parse_mtime(text: &str) -> Option<SystemTime> {
    let (seconds, fraction) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    let seconds: u64 = seconds.parse().ok()?;
    if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        // More digits than nanoseconds (a float printed in full): keep nine.
        let digits: String = fraction
            .chars()
            .take_while(char::is_ascii_digit)
            .take(9)
            .collect();
        return parse_mtime(&format!("{seconds}.{digits}"));
    }
    let nanos = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<9}").parse::<u32>().ok()?
    };
    UNIX_EPOCH.checked_add(Duration::new(seconds, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mtime_metadata_round_trips_to_the_nanosecond_and_reads_rclone_floats() {
        let time = UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789);
        assert_eq!(format_mtime(time), "1700000000.123456789");
        assert_eq!(parse_mtime(&format_mtime(time)), Some(time));
        assert_eq!(
            parse_mtime("1700000000"),
            Some(UNIX_EPOCH + Duration::from_secs(1_700_000_000))
        );
        assert_eq!(
            parse_mtime("1700000000.5"),
            Some(UNIX_EPOCH + Duration::new(1_700_000_000, 500_000_000))
        );
        assert_eq!(
            parse_mtime("1700000000.1234567891234"),
            Some(UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789))
        );
        assert_eq!(parse_mtime("soon"), None);
        assert_eq!(parse_mtime("-5"), None);
    }

    #[tokio::test]
    async fn a_merge_refuses_a_walk_out_of_key_order() {
        let (sender, mut walk) = mpsc::channel(4);
        for relative in ["a", "c", "b"] {
            let entry = DirectoryEntry {
                relative: relative.to_owned(),
                size: 0,
                modified: None,
                etag: None,
            };
            sender.send(Ok(Found::Entry(entry))).await.unwrap();
        }
        drop(sender);
        let mut ordered = Ordered::new(true);
        let keep = |_: &Found| true;
        assert!(ordered.next(&mut walk, &keep).await.unwrap().is_some());
        assert!(ordered.next(&mut walk, &keep).await.unwrap().is_some());
        let Err(error) = ordered.next(&mut walk, &keep).await else {
            panic!("an entry out of order was accepted");
        };
        assert!(error.to_string().contains("not in key order"), "{error}");
    }

    #[test]
    fn keys_never_name_a_file_outside_the_directory() {
        let root = Path::new("/target");
        assert_eq!(
            local_path(root, "a/b.txt").unwrap(),
            Path::new("/target/a/b.txt")
        );
        for key in ["../up", "a/../../up", "a//b", "/abs", "a/./b", "..", "a/"] {
            assert_eq!(
                local_path(root, key),
                Err(LocalIssue::UnsafeKey {
                    key: key.to_owned()
                }),
                "{key}"
            );
        }
    }

    #[test]
    fn times_compare_to_the_second_unless_both_have_nanoseconds() {
        let at = |s, n| Some(UNIX_EPOCH + Duration::new(s, n));
        assert!(same_time(at(10, 0), at(10, 700)));
        assert!(!same_time(at(10, 5), at(10, 6)));
        assert!(same_time(at(10, 5), at(10, 5)));
        assert!(!same_time(at(10, 0), None));
        assert!(newer_by_seconds(at(11, 0), at(10, 999)));
        assert!(!newer_by_seconds(at(10, 999), at(10, 0)));
        assert!(!newer_by_seconds(None, at(10, 0)));
    }

    #[test]
    fn a_local_walk_is_in_key_order_and_reports_links() {
        let dir = std::env::temp_dir().join(format!("s3w-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for file in ["a/b", "a!x", "a0", "a/c/d", "z", "a.txt"] {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, file).unwrap();
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.join("a"), dir.join("a/c/up")).unwrap();
            std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("broken")).unwrap();
            std::os::unix::fs::symlink(dir.join("z"), dir.join("y")).unwrap();
        }
        let mut walk = LocalWalk::new(dir.clone(), true);
        let mut seen = Vec::new();
        while let Some(found) = walk.next() {
            let found = found.unwrap();
            let what = match &found {
                Found::Entry(_) => "file".to_owned(),
                Found::Refused {
                    issue: Ok(reason), ..
                } => reason.to_string(),
                Found::Refused {
                    issue: Err(error), ..
                } => {
                    format!("{:?}", LocalIssue::of(error).map(std::mem::discriminant))
                }
            };
            seen.push((found.relative().to_owned(), what));
        }
        let names: Vec<&str> = seen.iter().map(|(n, _)| n.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "byte order of relative paths");
        #[cfg(unix)]
        {
            assert_eq!(
                names,
                [
                    "a!x", "a.txt", "a/b", "a/c/d", "a/c/up", "a0", "broken", "y", "z"
                ]
            );
            let issue = |name: &str| seen.iter().find(|(n, _)| n == name).unwrap().1.clone();
            let loop_ = format!(
                "{:?}",
                Some(std::mem::discriminant(&LocalIssue::LinkLoop {
                    target: PathBuf::new()
                }))
            );
            let broken = format!(
                "{:?}",
                Some(std::mem::discriminant(&LocalIssue::BrokenLink {
                    target: PathBuf::new()
                }))
            );
            assert_eq!(issue("a/c/up"), loop_);
            assert_eq!(issue("broken"), broken);
            assert_eq!(issue("y"), "file", "a link to a file is followed");
            let mut walk = LocalWalk::new(dir.clone(), false);
            let mut skipped = Vec::new();
            while let Some(found) = walk.next() {
                if let Ok(Found::Refused {
                    relative,
                    issue: Ok(SkipReason::SymlinkNotFollowed),
                    ..
                }) = found
                {
                    skipped.push(relative);
                }
            }
            assert_eq!(skipped, ["a/c/up", "broken", "y"]);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

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
//!
//! Here: the builder, its options and the handle. Walking each side `walk.rs`, merging the
//! walks into units of work `plan.rs`, running them `run.rs`, comparing an entry with the
//! destination's `compare.rs`, the aggregate progress `progress.rs`, what is reported
//! `outcome.rs`.

mod compare;
mod outcome;
mod plan;
mod progress;
mod run;
mod walk;

pub use compare::{format_mtime, object_mtime};
pub use outcome::{
    Action, Completed, DirectoryEntry, DirectoryOutput, DirectoryProgress, LocalIssue,
    ObjectOutcome, Place, SkipReason,
};

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use s3_ops::{BucketName, ChecksumAlgorithm, ObjectAttributes};

use crate::client::Client;
use crate::error::Error;
use crate::progress::Progress;
use crate::transfer::TransferOptions;
use crate::transfer::handle::TransferHandle;

use self::progress::Aggregate;
use self::run::run;

/// The user-metadata name of a file's modification time, as rclone stores it
/// (`x-amz-meta-mtime`: Unix seconds with up to nine decimals).
pub const MTIME_METADATA: &str = "mtime";

/// Entries a walk may run ahead of the transfers.
pub(super) const WALK_AHEAD: usize = 256;

/// Failures a [`DirectoryOutput`] keeps (all of them reach `on_object`).
pub(super) const KEPT_FAILURES: usize = 100;

/// One side of a directory transfer.
#[derive(Debug, Clone)]
pub(super) enum Side {
    Local(PathBuf),
    Bucket { bucket: BucketName, prefix: String },
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

pub(super) type EntryFn<T> = Arc<dyn Fn(&DirectoryEntry) -> T + Send + Sync>;
pub(super) type ProgressFn = Arc<dyn Fn(DirectoryProgress) + Send + Sync>;
type OutcomeFn = Arc<dyn Fn(&ObjectOutcome) + Send + Sync>;
pub(super) type ObjectProgressFn = Arc<dyn Fn(&str, Progress) + Send + Sync>;

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

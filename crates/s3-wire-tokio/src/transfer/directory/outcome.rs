//! What a directory transfer reports: the entries it found, what it did with each, its
//! aggregate progress and its output.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use s3_xml::ETag;

use crate::error::Error;
use crate::transfer::PossibleOrphan;
use crate::verification::Verification;

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
    /// ([`DirectoryBuilder::delete_extraneous`](crate::transfer::DirectoryBuilder::delete_extraneous)).
    Delete,
    /// Nothing: the reason says why.
    Skip(SkipReason),
}

/// Why an entry was not transferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// The destination is the same by the [`Compare`](crate::transfer::Compare) rule.
    Unchanged,
    /// The destination exists ([`Compare::Missing`](crate::transfer::Compare::Missing)).
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

    pub(super) fn into_error(self) -> Error {
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
/// [`DirectoryBuilder::on_object`](crate::transfer::DirectoryBuilder::on_object).
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
    /// The source was removed after the transfer ([`DirectoryBuilder::remove_source`](crate::transfer::DirectoryBuilder::remove_source)).
    pub source_removed: bool,
    /// Nothing was changed: a dry run.
    pub dry_run: bool,
}

/// The aggregate progress of a directory transfer.
///
/// The byte counts come from each object transfer's [`Progress`](crate::Progress): `committed` never
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

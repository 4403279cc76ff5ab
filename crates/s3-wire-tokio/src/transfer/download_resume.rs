//! Resuming a download to a file after a crash. The temporary file has a fixed name beside
//! the target (`.NAME.s3w-download.part`) and is locked while a download writes it; a
//! journal beside it (`.NAME.s3w-download.journal`) names the object it holds and the byte
//! ranges already written and synced. Rerunning the same download finds both: while the
//! object is the one the journal names (same ETag, version and size) only the missing bytes
//! are fetched, pinned to that ETag as always; otherwise it starts over and says why.
//!
//! The journal is rewritten atomically (see `journal.rs`) after the part file's data is
//! synced, so it never names bytes a crash could lose; writes are coalesced (one at a time,
//! each with the latest ranges).
//!
//! ```text
//! s3-wire-download-journal 1
//! bucket <name>
//! key <percent-encoded key>
//! etag <ETag as the store sent it>
//! version <version id | ->
//! size <bytes>
//! done <start>-<end> <start>-<end> ...   (ascending, disjoint; may be empty)
//! end
//! ```

use std::ffi::OsString;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::{Error, TransferErrorKind};
use crate::transfer::journal::{self, directory_of};

const HEADER: &str = "s3-wire-download-journal 1";

/// The object a partial file holds bytes of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity {
    pub(crate) bucket: String,
    pub(crate) key: String,
    pub(crate) etag: String,
    pub(crate) version_id: Option<String>,
    pub(crate) size: u64,
}

impl Identity {
    fn text(&self, done: &[Range<u64>]) -> String {
        let done: Vec<String> = done
            .iter()
            .map(|r| format!("{}-{}", r.start, r.end))
            .collect();
        format!(
            "{HEADER}\nbucket {}\nkey {}\netag {}\nversion {}\nsize {}\ndone {}\nend\n",
            self.bucket,
            s3_sigv4::uri_encode(&self.key, true),
            self.etag,
            self.version_id.as_deref().unwrap_or("-"),
            self.size,
            done.join(" "),
        )
    }

    /// What differs between the object a journal names (`self`) and the one the store
    /// holds now, in words, or `None`.
    fn difference(&self, now: &Identity) -> Option<String> {
        if self.etag != now.etag {
            Some(format!("its ETag is {} now, was {}", now.etag, self.etag))
        } else if self.version_id != now.version_id {
            Some("its version changed".to_owned())
        } else if self.size != now.size {
            Some(format!("its size is {} now, was {}", now.size, self.size))
        } else {
            None
        }
    }
}

fn parse(text: &str) -> Result<(Identity, Vec<Range<u64>>), String> {
    let mut lines = text.lines();
    let mut field = |name: &str| -> Result<&str, String> {
        let line = lines.next().ok_or("the journal ends early")?;
        line.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(' ').or((rest.is_empty()).then_some("")))
            .ok_or_else(|| format!("expected `{name} ...`, found {line:?}"))
    };
    if !field(HEADER)?.is_empty() {
        return Err(format!("the first line is not {HEADER:?}"));
    }
    let bucket = field("bucket")?.to_owned();
    let key = journal::percent_decode(field("key")?)?;
    let etag = field("etag")?.to_owned();
    let version_id = match field("version")? {
        "-" => None,
        version => Some(version.to_owned()),
    };
    let size: u64 = field("size")?.parse().map_err(|_| "size is not a number")?;
    let mut done = Vec::new();
    for range in field("done")?.split_whitespace() {
        let parsed = range
            .split_once('-')
            .and_then(|(start, end)| Some(start.parse().ok()?..end.parse().ok()?))
            .filter(|r: &Range<u64>| r.start < r.end && r.end <= size)
            .ok_or_else(|| format!("bad range {range:?}"))?;
        done.push(parsed);
    }
    if !field("end")?.is_empty() {
        return Err("the journal does not end with `end`".to_owned());
    }
    let identity = Identity {
        bucket,
        key,
        etag,
        version_id,
        size,
    };
    Ok((identity, done))
}

/// Adds `range` to the ascending, disjoint `done`, merging neighbours.
fn merge(done: &mut Vec<Range<u64>>, range: Range<u64>) {
    let at = done.partition_point(|r| r.end < range.start);
    let mut merged = range;
    while at < done.len() && done[at].start <= merged.end {
        let next = done.remove(at);
        merged = merged.start.min(next.start)..merged.end.max(next.end);
    }
    done.insert(at, merged);
}

/// The part file and journal of downloads to `target`.
fn paths(target: &Path) -> io::Result<(PathBuf, PathBuf)> {
    let directory = directory_of(target);
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the target has no file name")
    })?;
    let with = |suffix: &str| {
        let mut file = OsString::from(".");
        file.push(name);
        file.push(suffix);
        directory.join(file)
    };
    Ok((with(".s3w-download.part"), with(".s3w-download.journal")))
}

/// The resumable part file of a download, locked for it.
pub(crate) struct PartFile {
    pub(crate) file: Arc<std::fs::File>,
    pub(crate) path: PathBuf,
    pub(crate) journal: PathBuf,
    /// Bytes of the object the file already holds (a resumed download).
    pub(crate) present: Vec<Range<u64>>,
    /// Why a journal found was not continued.
    pub(crate) restarted: Option<String>,
}

/// Opens (or creates) the part file of a download of `object` to `target` and reads its
/// journal: `None` when the file cannot be ours alone — another download holds it, the
/// directory is writable by everyone (anyone could have planted it), or the name is not a
/// plain file (a symlink is never followed) — and the caller then downloads into a
/// temporary file of its own, without a journal.
pub(crate) async fn open(target: &Path, object: &Identity) -> Result<Option<PartFile>, Error> {
    let (path, journal_path) = paths(target).map_err(Error::io)?;
    let directory = directory_of(target);
    let opened = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || {
            if writable_by_everyone(&directory)? {
                return Ok(None);
            }
            let mut options = std::fs::OpenOptions::new();
            options.read(true).write(true);
            let file = match std::fs::symlink_metadata(&path) {
                Ok(found) if !found.file_type().is_file() => return Ok(None),
                Ok(_) => options.open(&path)?,
                // Created exclusively: a symlink planted meanwhile makes this fail.
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    match options.create_new(true).open(&path) {
                        Ok(file) => file,
                        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                            return Ok(None);
                        }
                        Err(error) => return Err(error),
                    }
                }
                Err(error) => return Err(error),
            };
            // Nothing is written to it before it proves to be the plain file at that name.
            if !is_the_file_at(&file, &path)? {
                return Ok(None);
            }
            match file.try_lock() {
                Ok(()) => Ok(Some(file)),
                Err(std::fs::TryLockError::WouldBlock) => Ok(None),
                Err(std::fs::TryLockError::Error(error)) => Err(error),
            }
        })
        .await
        .map_err(|e| Error::io(io::Error::other(e)))?
        .map_err(Error::io)?
    };
    let Some(file) = opened else {
        return Ok(None);
    };
    let recorded = match tokio::fs::read_to_string(&journal_path).await {
        Ok(text) => Some(parse(&text).map_err(|why| format!("its journal is unusable ({why})"))),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) => return Err(journal_error(&journal_path, error)),
    };
    let (present, restarted) = match recorded {
        None => (Vec::new(), None),
        Some(Err(why)) => (Vec::new(), Some(why)),
        Some(Ok((recorded, _)))
            if recorded.bucket != object.bucket || recorded.key != object.key =>
        {
            (
                Vec::new(),
                Some(format!(
                    "it held s3://{}/{}, not this object",
                    recorded.bucket, recorded.key
                )),
            )
        }
        Some(Ok((recorded, done))) => match recorded.difference(object) {
            None => (done, None),
            Some(what) => (
                Vec::new(),
                Some(format!("the object changed since: {what}")),
            ),
        },
    };
    let restarted = restarted.map(|why| {
        format!(
            "the partial download {} was not continued ({why}); downloading from the start",
            path.display()
        )
    });
    let file = Arc::new(file);
    let keep = !present.is_empty();
    let size = object.size;
    let handle = file.clone();
    tokio::task::spawn_blocking(move || {
        // A new or restarted download starts from an empty file of the object's size.
        if !keep {
            handle.set_len(0)?;
        }
        handle.set_len(size)
    })
    .await
    .map_err(|e| Error::io(io::Error::other(e)))?
    .map_err(Error::io)?;
    Ok(Some(PartFile {
        file,
        path,
        journal: journal_path,
        present,
        restarted,
    }))
}

/// Whether everyone may create files in `directory` (`/tmp`): a part file found there may
/// be anybody's.
fn writable_by_everyone(directory: &Path) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Ok(std::fs::metadata(directory)?.permissions().mode() & 0o002 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = directory;
        Ok(false)
    }
}

/// Whether `file`, just opened at `path`, is the plain file there (not one a symlink at
/// `path` pointed to).
fn is_the_file_at(file: &std::fs::File, path: &Path) -> io::Result<bool> {
    let at_path = std::fs::symlink_metadata(path)?;
    if !at_path.file_type().is_file() {
        return Ok(false);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let opened = file.metadata()?;
        Ok(opened.dev() == at_path.dev() && opened.ino() == at_path.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(true)
    }
}

fn journal_error(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::transfer_error(TransferErrorKind::Journal(format!(
        "{}: {why}",
        path.display()
    )))
}

/// Syncs a download's temporary file in the background as ranges are written, one sync at
/// a time with the latest ranges, so that the data reaches the disk while the rest arrives
/// and the final sync before the rename finds little left to write (waited for whole at
/// the end, it held the Python package's 1 GiB download at 0.71× Rust's, which synced as
/// it went for its journal: measurements/perf-2026-12-07-python.md). For a resumable file
/// it then rewrites the journal with the ranges that sync covered.
pub(crate) struct WriteBehind {
    done: watch::Sender<Vec<Range<u64>>>,
    task: JoinHandle<Result<(), Error>>,
}

impl WriteBehind {
    /// Starts syncing `file`, which already holds `present`; with a `journal` path, the
    /// download of `object` is journaled there, the journal written once at once.
    pub(crate) fn start(
        file: Arc<std::fs::File>,
        journal: Option<PathBuf>,
        present: Vec<Range<u64>>,
        object: Identity,
    ) -> Self {
        let (done, mut changes) = watch::channel(present);
        if journal.is_some() {
            changes.mark_changed();
        }
        let task = tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                let done = changes.borrow_and_update().clone();
                let file = file.clone();
                let synced = tokio::task::spawn_blocking(move || file.sync_data()).await;
                match (&journal, synced) {
                    // The journal never names bytes a crash could still lose.
                    (Some(path), synced) => {
                        synced.map_err(|e| journal_error(path, e))?.map_err(|e| {
                            journal_error(path, format!("syncing the part file: {e}"))
                        })?;
                        journal::write(path.clone(), object.text(&done)).await?;
                    }
                    (None, Ok(Ok(()))) => {}
                    // Without a journal a failed sync only ends the write-behind: the final
                    // sync before the rename reports it.
                    (None, _) => return Ok(()),
                }
            }
            Ok(())
        });
        Self { done, task }
    }

    /// Records that `range` is written to the file.
    pub(crate) fn record(&self, range: Range<u64>) {
        self.done.send_modify(|done| merge(done, range));
    }

    /// Waits until every range recorded is synced (and journaled).
    pub(crate) async fn close(self) -> Result<(), Error> {
        drop(self.done);
        self.task
            .await
            .map_err(|e| Error::transfer_error(TransferErrorKind::Journal(e.to_string())))?
    }
}

/// Removes the part file and the journal of a download (absent ones are fine).
pub(crate) async fn remove(part: &Path, journal_path: &Path) {
    let _ = tokio::fs::remove_file(part).await;
    let _ = journal::remove(journal_path).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> Identity {
        Identity {
            bucket: "photos".into(),
            key: "2024/a b%c\nd.jpg".into(),
            etag: "\"0cc175b9c0f1b6a831c399e269772661-3\"".into(),
            version_id: Some("v 1".into()),
            size: 100,
        }
    }

    #[test]
    fn a_journal_round_trips_and_damage_is_refused() {
        let done = vec![0..10, 20..35];
        let text = identity().text(&done);
        assert_eq!(parse(&text), Ok((identity(), done)));
        let none = identity().text(&[]);
        assert_eq!(parse(&none), Ok((identity(), Vec::new())));
        assert!(parse(&text[..text.len() - 4]).is_err(), "a cut journal");
        assert!(parse(&text.replace("20-35", "35-20")).is_err());
        assert!(parse(&text.replace("20-35", "20-101")).is_err());
        assert!(parse(&text.replacen("1\n", "2\n", 1)).is_err());
    }

    #[test]
    fn ranges_merge_in_order() {
        let mut done = Vec::new();
        for range in [40..50, 0..10, 10..20, 60..70, 45..62, 30..31] {
            merge(&mut done, range);
        }
        assert_eq!(done, [0..20, 30..31, 40..70]);
    }

    #[test]
    fn a_change_of_the_object_is_named() {
        let before = identity();
        let mut after = identity();
        assert_eq!(before.difference(&after), None);
        after.etag = "\"other\"".into();
        assert!(before.difference(&after).unwrap().contains("ETag"));
        let mut longer = identity();
        longer.size = 101;
        assert!(before.difference(&longer).unwrap().contains("size"));
    }
}

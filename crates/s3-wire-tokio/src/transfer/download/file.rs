//! The file a download to a path writes into: a temporary file beside the target (or, on
//! Linux, an unnamed one), synced and renamed or linked over the target once everything
//! arrived and checked out; kept with its journal when a resumable download fails.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use crate::error::Error;
use crate::file_writer::write_chunks_at;
use crate::transfer::download_resume::{self, Identity};
use crate::transfer::journal;
#[cfg(target_os = "linux")]
use crate::transfer::unnamed_file::{self, Linked};

/// The temporary file a download to a path writes into.
pub(super) struct TempFile {
    path: PathBuf,
    target: PathBuf,
    pub(super) file: Arc<std::fs::File>,
    /// The resume journal beside it (`download_resume.rs`), for a resumable part file.
    pub(super) journal: Option<PathBuf>,
}

/// A resumable temporary file: what it already holds, and why a journal found was not
/// continued.
pub(super) struct Resumed {
    pub(super) file: TempFile,
    pub(super) present: Vec<std::ops::Range<u64>>,
    pub(super) restarted: Option<String>,
}

impl TempFile {
    /// The resumable part file of `object` beside `target` (see `download_resume.rs`), or,
    /// when another download holds it, a temporary file of this download's own.
    pub(super) async fn resumable(target: &Path, object: &Identity) -> Result<Resumed, Error> {
        match download_resume::open(target, object).await? {
            Some(part) => Ok(Resumed {
                file: TempFile {
                    path: part.path,
                    target: target.to_path_buf(),
                    file: part.file,
                    journal: Some(part.journal),
                },
                present: part.present,
                restarted: part.restarted,
            }),
            None => Ok(Resumed {
                file: TempFile::create(target, object.size).await?,
                present: Vec::new(),
                restarted: None,
            }),
        }
    }

    pub(super) async fn create(target: &Path, len: u64) -> Result<Self, Error> {
        let target = target.to_path_buf();
        tokio::task::spawn_blocking(move || Self::create_now(target, len))
            .await
            .map_err(|e| Error::io(io::Error::other(e)))?
            .map_err(Error::io)
    }

    /// [`TempFile::create`] on the calling thread.
    fn create_now(target: PathBuf, len: u64) -> io::Result<Self> {
        // Readable too: a full-object hash (SHA) is checked by reading the file back.
        let (path, file) = Self::beside(&target, |path| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(path)
        })?;
        if len > 0 {
            file.set_len(len)?;
        }
        Ok(Self {
            path,
            target,
            file: Arc::new(file),
            journal: None,
        })
    }

    /// Makes an entry under a free temporary name beside `target` with `create`, which
    /// fails with `AlreadyExists` where the name is taken; returns the name and what
    /// `create` made.
    fn beside<T>(
        target: &Path,
        mut create: impl FnMut(&Path) -> io::Result<T>,
    ) -> io::Result<(PathBuf, T)> {
        let name = target.file_name().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "the target has no file name")
        })?;
        let directory = journal::directory_of(target);
        let mut attempt = 0u32;
        loop {
            let mut temporary = std::ffi::OsString::from(".");
            temporary.push(name);
            temporary.push(format!(".s3w-{}-{attempt}.part", std::process::id()));
            let path = directory.join(temporary);
            match create(&path) {
                Ok(made) => return Ok((path, made)),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Writes `chunks` as `target`'s new contents, in one job on the blocking pool: for a
    /// body small enough to be gathered first, one trip to the pool instead of four
    /// (create, write, trim, commit), which with many small downloads in flight cost more
    /// than the writes. On an error nothing is left beside `target`.
    pub(super) async fn write_whole(
        target: &Path,
        chunks: Vec<Bytes>,
        sync: bool,
    ) -> Result<(), Error> {
        let target = target.to_path_buf();
        tokio::task::spawn_blocking(move || Self::write_whole_now(&target, &chunks, sync))
            .await
            .map_err(|e| Error::io(io::Error::other(e)))?
            .map_err(Error::io)
    }

    /// [`TempFile::write_whole`] on the calling thread: on Linux into an unnamed file linked
    /// under `target`'s name when complete ([`unnamed_file`]), elsewhere (or where the file
    /// system cannot) into a named temporary file renamed over it.
    fn write_whole_now(target: &Path, chunks: &[Bytes], sync: bool) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        match unnamed_file::write_and_link(&journal::directory_of(target), target, chunks, sync)? {
            Linked::Done => return Self::sync_directory(target, sync),
            Linked::TargetExists(file) => {
                // Replacing a file takes a rename: linked under a temporary name first.
                let (temporary, ()) = Self::beside(target, |path| {
                    unnamed_file::link(&file, path).map_err(io::Error::from)
                })?;
                if let Err(error) = std::fs::rename(&temporary, target) {
                    let _ = std::fs::remove_file(&temporary);
                    return Err(error);
                }
                return Self::sync_directory(target, sync);
            }
            Linked::Unsupported => {}
        }
        Self::write_named(target, chunks, sync)
    }

    /// [`TempFile::write_whole_now`] through a named temporary file.
    fn write_named(target: &Path, chunks: &[Bytes], sync: bool) -> io::Result<()> {
        let file = Self::create_now(target.to_path_buf(), 0)?;
        write_chunks_at(&file.file, chunks, 0)
            .and_then(|()| file.commit_now(sync))
            .inspect_err(|_| {
                let _ = std::fs::remove_file(&file.path);
            })
    }

    /// Renames the file over the target, with `sync` after syncing its data and then
    /// syncing the directory; its journal goes.
    pub(super) async fn commit(mut self, sync: bool) -> Result<(), Error> {
        let journal = self.journal.take();
        tokio::task::spawn_blocking(move || self.commit_now(sync))
            .await
            .map_err(|e| Error::io(io::Error::other(e)))?
            .map_err(Error::io)?;
        if let Some(journal) = journal {
            journal::remove(&journal).await?;
        }
        Ok(())
    }

    /// [`TempFile::commit`] on the calling thread, without the journal.
    fn commit_now(&self, sync: bool) -> io::Result<()> {
        if sync {
            self.file.sync_all()?;
        }
        std::fs::rename(&self.path, &self.target)?;
        Self::sync_directory(&self.target, sync)
    }

    /// With `sync`, makes `target`'s entry in its directory durable (on Unix: elsewhere a
    /// directory cannot be opened to be synced).
    fn sync_directory(target: &Path, sync: bool) -> io::Result<()> {
        #[cfg(unix)]
        if sync {
            std::fs::File::open(journal::directory_of(target))?.sync_all()?;
        }
        #[cfg(not(unix))]
        let _ = (target, sync);
        Ok(())
    }

    pub(super) async fn discard(self) {
        match &self.journal {
            Some(journal) => download_resume::remove(&self.path, journal).await,
            None => {
                let _ = tokio::fs::remove_file(&self.path).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(directory: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A body written whole becomes the target's contents, new or replacing a file, synced
    /// or not, by either way of writing it, and nothing else is left in the directory.
    #[test]
    fn a_body_written_whole_is_the_target_and_nothing_else() {
        let chunks = [
            Bytes::from_static(b"first chunk, "),
            Bytes::from(vec![7u8; 70_000]),
        ];
        let expected: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        type Write = fn(&Path, &[Bytes], bool) -> io::Result<()>;
        let ways: [(&str, Write); 2] = [
            ("whole", TempFile::write_whole_now),
            ("named", TempFile::write_named),
        ];
        for (way, write) in ways {
            for sync in [false, true] {
                let directory = tempfile::tempdir().unwrap();
                let target = directory.path().join("object.bin");
                write(&target, &chunks, sync).unwrap();
                assert_eq!(
                    std::fs::read(&target).unwrap(),
                    expected,
                    "{way}, sync {sync}"
                );
                write(&target, &chunks[..1], sync).unwrap();
                assert_eq!(
                    std::fs::read(&target).unwrap(),
                    b"first chunk, ",
                    "{way}, replaced"
                );
                assert_eq!(
                    entries(directory.path()),
                    ["object.bin"],
                    "{way}, sync {sync}"
                );
            }
        }
        // A directory that does not exist: the error, and nothing made.
        let directory = tempfile::tempdir().unwrap();
        let target = directory.path().join("missing").join("object.bin");
        let error = TempFile::write_whole_now(&target, &chunks, true).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        assert!(entries(directory.path()).is_empty());
    }

    /// On Linux the body goes through an unnamed file: linked when the name is free, handed
    /// back when it is taken, the file untouched until then.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_unnamed_file_is_linked_only_where_the_name_is_free() {
        let directory = tempfile::tempdir().unwrap();
        let target = directory.path().join("object.bin");
        let chunks = [Bytes::from_static(b"new")];
        let linked = unnamed_file::write_and_link(directory.path(), &target, &chunks, true);
        assert!(matches!(linked, Ok(Linked::Done)), "{linked:?}");
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        std::fs::write(&target, b"old").unwrap();
        let linked = unnamed_file::write_and_link(directory.path(), &target, &chunks, false);
        assert!(matches!(linked, Ok(Linked::TargetExists(_))), "{linked:?}");
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        drop(linked);
        assert_eq!(entries(directory.path()), ["object.bin"]);
    }
}

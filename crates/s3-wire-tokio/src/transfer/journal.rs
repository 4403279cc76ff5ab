//! The resume journal of a file upload: which object, which source (its size and
//! modification time), which checksum, and the planner's snapshot (the upload id and every
//! part the store acknowledged, with its ETag and checksum). It is rewritten atomically —
//! temporary file, fsync, rename, fsync of the directory — after the upload is created and
//! as parts complete, so a crash at any moment leaves the previous or the next version,
//! never a torn one.
//!
//! ```text
//! s3-wire-upload-journal 1
//! bucket <name>
//! key <percent-encoded key>
//! source-size <bytes>
//! source-modified <nanoseconds since the Unix epoch>
//! checksum <ALGORITHM | none>
//! s3-multipart-snapshot 2
//! ...                      (the snapshot's own lines, see s3-multipart-plan)
//! end
//! ```

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use s3_multipart_plan::UploadSnapshot;
use s3_ops::ChecksumAlgorithm;

use crate::error::{Error, TransferErrorKind};
use crate::transfer::multipart::Receipt;

const HEADER: &str = "s3-wire-upload-journal 1";

/// The size and modification time of an upload's source file: if either differs, the file
/// is not the one the parts were read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fingerprint {
    pub(crate) len: u64,
    pub(crate) modified: SystemTime,
}

impl Fingerprint {
    pub(crate) fn of(metadata: &std::fs::Metadata) -> io::Result<Self> {
        Ok(Self {
            len: metadata.len(),
            modified: metadata.modified()?,
        })
    }

    fn modified_nanos(&self) -> u128 {
        self.modified
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos())
    }

    /// What differs from `now`, in words, or `None`.
    pub(crate) fn difference(&self, now: &Fingerprint) -> Option<String> {
        if self.len != now.len {
            return Some(format!(
                "its size went from {} to {} bytes",
                self.len, now.len
            ));
        }
        (self.modified_nanos() != now.modified_nanos())
            .then(|| "its modification time changed".to_owned())
    }
}

/// What a journal describes besides the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) bucket: String,
    pub(crate) key: String,
    pub(crate) source: Fingerprint,
    pub(crate) algorithm: Option<ChecksumAlgorithm>,
}

impl Header {
    /// The journal text for `snapshot`.
    pub(crate) fn text(&self, snapshot: &UploadSnapshot<Receipt>) -> String {
        let algorithm = self.algorithm.map_or("none", ChecksumAlgorithm::as_str);
        format!(
            "{HEADER}\nbucket {}\nkey {}\nsource-size {}\nsource-modified {}\nchecksum {algorithm}\n{}",
            self.bucket,
            s3_sigv4::uri_encode(&self.key, true),
            self.source.len,
            self.source.modified_nanos(),
            snapshot.to_text(),
        )
    }
}

fn journal_error(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::transfer_error(TransferErrorKind::Journal(format!(
        "{}: {why}",
        path.display()
    )))
}

/// Reads the journal at `path`: `None` if there is none.
pub(crate) async fn load(path: &Path) -> Result<Option<(Header, UploadSnapshot<Receipt>)>, Error> {
    let text = match tokio::fs::read_to_string(path).await {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(journal_error(path, error)),
    };
    parse(&text)
        .map(Some)
        .map_err(|why| journal_error(path, why))
}

fn parse(text: &str) -> Result<(Header, UploadSnapshot<Receipt>), String> {
    let mut lines = text.splitn(7, '\n');
    let mut next = |name: &str| -> Result<&str, String> {
        let line = lines.next().ok_or("the journal ends early")?;
        if name.is_empty() {
            return Ok(line);
        }
        line.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(' '))
            .ok_or_else(|| format!("expected `{name} ...`, found {line:?}"))
    };
    if next("")? != HEADER {
        return Err(format!(
            "not an s3-wire upload journal (first line is not {HEADER:?})"
        ));
    }
    let bucket = next("bucket")?.to_owned();
    let key = percent_decode(next("key")?)?;
    let len = next("source-size")?
        .parse()
        .map_err(|_| "source-size is not a number")?;
    let nanos: u128 = next("source-modified")?
        .parse()
        .map_err(|_| "source-modified is not a number")?;
    let modified = SystemTime::UNIX_EPOCH
        + Duration::new(
            u64::try_from(nanos / 1_000_000_000).map_err(|_| "source-modified is too large")?,
            (nanos % 1_000_000_000) as u32,
        );
    let algorithm = match next("checksum")? {
        "none" => None,
        name => Some(
            name.parse()
                .map_err(|_| format!("unknown checksum {name:?}"))?,
        ),
    };
    let snapshot = UploadSnapshot::parse(next("")?).map_err(|e| e.to_string())?;
    let header = Header {
        bucket,
        key,
        source: Fingerprint { len, modified },
        algorithm,
    };
    Ok((header, snapshot))
}

pub(crate) fn percent_decode(text: &str) -> Result<String, String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let hex = tail
                .get(..2)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent-encoding in {text:?}"))?;
            bytes.push(hex);
            rest = &tail[2..];
        } else {
            bytes.push(byte);
            rest = tail;
        }
    }
    String::from_utf8(bytes).map_err(|_| format!("{text:?} is not UTF-8"))
}

/// Replaces the journal at `path` with `text` atomically and durably.
pub(crate) async fn write(path: PathBuf, text: String) -> Result<(), Error> {
    tokio::task::spawn_blocking(move || write_blocking(&path, &text).map_err(|e| (path, e)))
        .await
        .map_err(|e| Error::transfer_error(TransferErrorKind::Journal(e.to_string())))?
        .map_err(|(path, error)| journal_error(&path, format!("writing it failed: {error}")))
}

/// The directory holding `path` (`.` for a bare file name): where a journal's, a part
/// file's or a download's temporary entries go, and what is synced after they change.
pub(crate) fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn write_blocking(path: &Path, text: &str) -> io::Result<()> {
    let directory = directory_of(path);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the journal path has no file name",
        )
    })?;
    let mut temporary = name.to_os_string();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = directory.join(temporary);
    let mut file = match create_private(&temporary) {
        // Left by a crashed process with the same id (or planted): removing the name never
        // touches what a symlink points to.
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(&temporary)?;
            create_private(&temporary)?
        }
        result => result?,
    };
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all());
    drop(file);
    if let Err(error) = written.and_then(|()| std::fs::rename(&temporary, path)) {
        let _ = std::fs::remove_file(&temporary);
        return Err(error);
    }
    // The rename itself must survive a crash.
    #[cfg(unix)]
    std::fs::File::open(&directory)?.sync_all()?;
    Ok(())
}

/// Creates `path`, which must not exist (so a symlink planted at a predictable name is
/// never followed), readable and writable by the owner only: a journal names the bucket,
/// key and upload id of someone's transfer.
fn create_private(path: &Path) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Removes the journal of a finished upload (an absent one is fine).
pub(crate) async fn remove(path: &Path) -> Result<(), Error> {
    match tokio::fs::remove_file(path).await {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(journal_error(path, format!("removing it failed: {error}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use s3_multipart_plan::CompletedPart;

    fn header() -> Header {
        Header {
            bucket: "photos".into(),
            key: "2024/a b%c\nd.jpg".into(),
            source: Fingerprint {
                len: 12 << 20,
                modified: SystemTime::UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789),
            },
            algorithm: Some(ChecksumAlgorithm::Crc64Nvme),
        }
    }

    fn snapshot() -> UploadSnapshot<Receipt> {
        let receipt = Receipt {
            etag: s3_xml::ETag::parse("\"0cc175b9c0f1b6a831c399e269772661\"").unwrap(),
            checksum: Some(ChecksumAlgorithm::Crc64Nvme.checksum(b"part one")),
        };
        let parts = vec![CompletedPart {
            number: 1,
            size: 8 << 20,
            receipt,
        }];
        UploadSnapshot::new("upload/id 1".into(), 12 << 20, 8 << 20, parts)
    }

    #[test]
    fn a_journal_round_trips() {
        let text = header().text(&snapshot());
        assert!(
            text.starts_with("s3-wire-upload-journal 1\nbucket photos\n"),
            "{text}"
        );
        assert_eq!(parse(&text), Ok((header(), snapshot())));
    }

    #[test]
    fn damaged_journals_are_refused_with_a_reason() {
        let text = header().text(&snapshot());
        let cut = &text[..text.len() - 5];
        assert!(parse(cut).is_err(), "a cut journal");
        let other = text.replacen("s3-wire-upload-journal 1", "s3-wire-upload-journal 9", 1);
        assert!(
            parse(&other)
                .unwrap_err()
                .contains("not an s3-wire upload journal")
        );
        let garbled = text.replacen("source-size 12582912", "source-size twelve", 1);
        assert!(parse(&garbled).unwrap_err().contains("source-size"));
    }

    #[test]
    fn fingerprints_name_what_changed() {
        let before = header().source;
        let longer = Fingerprint {
            len: before.len + 1,
            ..before
        };
        assert!(before.difference(&longer).unwrap().contains("size"));
        let touched = Fingerprint {
            modified: before.modified + Duration::from_nanos(1),
            ..before
        };
        assert!(
            before
                .difference(&touched)
                .unwrap()
                .contains("modification")
        );
        assert_eq!(before.difference(&before), None);
    }

    #[tokio::test]
    async fn writes_replace_the_journal_atomically_and_leave_no_temporary_file() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("upload.journal");
        assert_eq!(load(&path).await.unwrap(), None);
        write(path.clone(), header().text(&snapshot()))
            .await
            .unwrap();
        write(path.clone(), header().text(&snapshot()))
            .await
            .unwrap();
        assert_eq!(load(&path).await.unwrap(), Some((header(), snapshot())));
        let names: Vec<_> = std::fs::read_dir(directory.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["upload.journal"]);
        remove(&path).await.unwrap();
        remove(&path).await.unwrap();
        assert_eq!(load(&path).await.unwrap(), None);
    }

    /// A journal is private to its owner, and a symlink planted at the predictable
    /// temporary name is replaced, never followed.
    #[cfg(unix)]
    #[tokio::test]
    async fn journals_are_private_and_a_planted_symlink_is_not_followed() {
        use std::os::unix::fs::PermissionsExt;
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("upload.journal");
        let victim = directory.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let temporary = directory
            .path()
            .join(format!("upload.journal.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &temporary).unwrap();

        write(path.clone(), header().text(&snapshot()))
            .await
            .unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!temporary.exists() && std::fs::symlink_metadata(&temporary).is_err());
        assert_eq!(load(&path).await.unwrap(), Some((header(), snapshot())));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
}

//! Walking one side of a directory transfer in key order: a prefix page by page (or
//! directory by directory where the bucket does not list in key order), a local tree
//! directory by directory.

use std::io;
use std::path::{Path, PathBuf};

use s3_ops::BucketName;
use s3_ops::ops::list_objects_v2::ListObjectsV2;
use tokio::sync::mpsc;

use super::outcome::{DirectoryEntry, LocalIssue, Place, SkipReason};
use super::{Side, WALK_AHEAD};
use crate::client::Client;
use crate::error::Error;

/// What a walk yields, in order of relative path.
pub(super) enum Found {
    Entry(DirectoryEntry),
    /// An entry that cannot be transferred; reported, never fatal.
    Refused {
        relative: String,
        place: Place,
        issue: Result<SkipReason, Error>,
    },
}

impl Found {
    pub(super) fn relative(&self) -> &str {
        match self {
            Found::Entry(entry) => &entry.relative,
            Found::Refused { relative, .. } => relative,
        }
    }
}

/// A walk running in its own task (or thread): entries in key order, an error ends it.
pub(super) type Walk = mpsc::Receiver<Result<Found, Error>>;

/// Walks one side; `destination`: a directory that does not exist yet holds nothing.
/// `in_order`: the entries must come in key order (a merge); a bucket that does not list in
/// key order (a directory bucket) is then walked directory by directory, each directory's
/// listing sorted before its first entry (see [`walk_by_directory`]).
pub(super) fn walk(
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
pub(super) struct LocalWalk {
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
    pub(super) fn new(root: PathBuf, follow_symlinks: bool) -> Self {
        Self {
            root,
            follow_symlinks,
            levels: Vec::new(),
            started: false,
        }
    }

    pub(super) fn next(&mut self) -> Option<Result<Found, Error>> {
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

pub(super) fn located(path: &Path, error: io::Error) -> Error {
    Error::io(io::Error::new(
        error.kind(),
        format!("{}: {error}", path.display()),
    ))
}

/// The file a relative path names under `root`, refusing any path that would leave it.
pub(super) fn local_path(root: &Path, relative: &str) -> Result<PathBuf, LocalIssue> {
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

#[cfg(test)]
mod tests {
    use super::*;

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

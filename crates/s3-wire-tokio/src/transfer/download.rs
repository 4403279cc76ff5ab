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

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use s3_multipart_plan::{DownloadOptions, DownloadOutcome, DownloadScheduler, RangeFetch};
use s3_ops::ops::get_object::GetObject;
use s3_ops::ops::get_object_attributes::{GetObjectAttributes, ObjectAttributeKind};
use s3_ops::ops::head_object::{HeadObject, ObjectHead};
use s3_ops::{
    BucketName, ByteRange, Checksum, ChecksumAlgorithm, ChecksumType, ObjectKey, SseCustomerKey,
};
use s3_xml::ETag;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::client::Client;
use crate::error::{Cleanup, Error, ErrorKind, TransferErrorKind, TransferFailure};
use crate::file_writer::{FileWriter, PositionedWriter, WriterEnd, write_chunks_at};
use crate::memory::{Admission, TooLarge};
use crate::object_body::ObjectBody;
use crate::progress::{Listener, PartProgress};
use crate::transfer::download_resume::{self, Identity, Journal};
use crate::transfer::handle::{Control, TransferHandle};
use crate::transfer::integrity;
use crate::transfer::journal;
#[cfg(target_os = "linux")]
use crate::transfer::unnamed_file::{self, Linked};
use crate::transfer::wake::{Waits, Wake};
use crate::transfer::{TransferOptions, await_starts, transfer_option_setters};
use crate::verification::{NotVerified, Verification};
use futures_core::Stream as _;

/// The time to first byte below which a request is cheap whatever its body: ranges grow
/// only where answers take longer to begin (moto: hundreds of milliseconds).
const MIN_REQUEST_COST: Duration = Duration::from_millis(20);

/// The largest a range grows to where requests cost more than their bytes (a 1 GiB download
/// from moto took 134 s in 8 MiB ranges and 7.7 s in 128 MiB ones).
const LARGEST_RANGE: u64 = 128 << 20;

/// The most a range in flight to a file holds: one batch of positioned writes in flight and
/// the next one being gathered ([`PositionedWriter`]; less with small parts or a small
/// budget).
const FILE_RANGE_MEMORY: u64 = 2 << 20;

/// What one range to a file is admitted for, and the bytes it gathers before a write.
#[derive(Clone, Copy, Debug)]
struct FileMemory {
    admitted: u64,
    write_buffer: usize,
}

impl FileMemory {
    fn new(part_size: u64, budget: u64) -> Self {
        let admitted = FILE_RANGE_MEMORY.min(part_size).min(budget).max(1);
        Self {
            admitted,
            write_buffer: ((admitted / 2) as usize).max(4096),
        }
    }
}

/// Where a download goes; see [`Client::download`].
pub struct Destination(Sink);

enum Sink {
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
    /// ([`Cleanup::KeptForResume`]); a cancelled one, or one whose object changed or whose
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
struct Pinned {
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
enum Mode {
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

/// The temporary file a download to a path writes into.
struct TempFile {
    path: PathBuf,
    target: PathBuf,
    file: Arc<std::fs::File>,
    /// The resume journal beside it (`download_resume.rs`), for a resumable part file.
    journal: Option<PathBuf>,
}

/// A resumable temporary file: what it already holds, and why a journal found was not
/// continued.
struct Resumed {
    file: TempFile,
    present: Vec<std::ops::Range<u64>>,
    restarted: Option<String>,
}

impl TempFile {
    /// The resumable part file of `object` beside `target` (see `download_resume.rs`), or,
    /// when another download holds it, a temporary file of this download's own.
    async fn resumable(target: &Path, object: &Identity) -> Result<Resumed, Error> {
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

    async fn create(target: &Path, len: u64) -> Result<Self, Error> {
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
    async fn write_whole(target: &Path, chunks: Vec<Bytes>, sync: bool) -> Result<(), Error> {
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
    async fn commit(mut self, sync: bool) -> Result<(), Error> {
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

    async fn discard(self) {
        match &self.journal {
            Some(journal) => download_resume::remove(&self.path, journal).await,
            None => {
                let _ = tokio::fs::remove_file(&self.path).await;
            }
        }
    }
}

async fn run(builder: DownloadBuilder, control: Arc<Control>) -> Result<DownloadOutput, Error> {
    let DownloadBuilder {
        client,
        bucket,
        key,
        destination,
        options,
        version_id,
        sse_customer_key,
        verify,
        resume,
        adapt_range_size,
        listener: _,
    } = builder;
    let fail = |error: Error| error.with_transfer(TransferFailure::new(None, Cleanup::Nothing));
    let budget = client.inner.transfer_memory.clone();
    let limit = options
        .single_request_limit
        .unwrap_or(TransferOptions::DEFAULT_SINGLE_REQUEST_LIMIT);
    let mut sink = destination.0;
    // What the first response needs to be read: a write buffer for a file; a writer takes
    // the bytes as they come.
    let file_memory = FileMemory::new(options.part_size, budget.capacity());
    let first_memory = match sink {
        Sink::File(_) => file_memory.admitted,
        Sink::Writer(_) => 0,
    };
    let first_admission = budget
        .admit(first_memory)
        .await
        .map_err(|e| fail(budget_error(e)))?;
    let mut first = GetObject::new(bucket.clone(), key.clone()).checksum_mode(verify);
    if let Some(version) = &version_id {
        first = first.version_id(version.clone());
    }
    if let Some(key) = &sse_customer_key {
        first = first.sse_customer_key(key.clone());
    }
    if control.is_cancelled() {
        return Err(fail(Error::transfer_error(TransferErrorKind::Cancelled)));
    }
    let response = client.get_object(first).await.map_err(fail)?;
    let head = response.output.head;
    let body = response.body;
    let size = head.content_length;
    if let Some(size) = size {
        control.progress.set_total(size);
    }
    let strong_etag = head.etag.clone().filter(|etag| !etag.is_weak());
    let checksum = announced(&head.checksums);
    let parallel = match (size, &strong_etag) {
        (Some(size), Some(_)) => size > limit,
        _ => false,
    };
    if !parallel {
        // One GET: its body's own checks (length, full-object checksum) cover it.
        let verification = body.verification().clone();
        let progress = PartProgress::new(control.progress.clone());
        let received = receive_whole(
            &mut sink,
            body,
            &progress,
            &control,
            file_memory,
            options.sync_files,
        )
        .await
        .map_err(fail)?;
        // A body without Content-Length: its size is known now, before it is committed.
        control.progress.set_total(received);
        progress.commit(received);
        drop(first_admission);
        return Ok(DownloadOutput {
            size: received,
            etag: head.etag.clone(),
            version_id: head.version_id.clone(),
            head,
            requests: 1,
            verification,
            resumed_bytes: 0,
            restarted: None,
        });
    }
    let size = size.expect("parallel downloads know their size");
    let pinned = Arc::new(Pinned {
        client: client.clone(),
        bucket,
        key,
        etag: strong_etag.expect("parallel downloads have a strong ETag"),
        version_id: version_id.or_else(|| head.version_id.clone()),
        sse_customer_key,
    });
    // A composite checksum is checked part by part, when the parts are uniform. A writer
    // holds each range until its turn, so its ranges fit the budget.
    let mut range_size = match sink {
        Sink::File(_) => options.part_size.max(1),
        Sink::Writer(_) => options.part_size.clamp(1, budget.capacity().max(1)),
    };
    let mut mode = Mode::Ranges;
    let mut listed = None;
    if let Some(Announced::Composite {
        algorithm, parts, ..
    }) = &checksum
        && verify
    {
        // A writer holds a whole range until its turn: a part must fit the budget.
        let (to_file, capacity) = (matches!(sink, Sink::File(_)), budget.capacity());
        let fits = move |part_size: u64| to_file || part_size <= capacity;
        // Every part's checksum in one request where the store lists them; otherwise one
        // HEAD of part 1 for the part size, and the parts by number.
        match listed_parts(&pinned, size, *parts, *algorithm)
            .await
            .map_err(fail)?
        {
            Some((part_size, checksums)) if fits(part_size) => {
                range_size = part_size;
                mode = Mode::Listed {
                    algorithm: *algorithm,
                    part_size,
                };
                listed = Some(Arc::new(checksums));
            }
            Some(_) => {}
            None => match uniform_part_size(&pinned, size, *parts).await {
                Ok(Some(part_size)) if fits(part_size) => {
                    range_size = part_size;
                    mode = Mode::Parts {
                        algorithm: *algorithm,
                        part_size,
                    };
                }
                // A probe is not data: whatever it answers (a 412 from a store that gives a
                // part its own ETag, as moto does; no partNumber support), the download goes
                // on by plain ranges, each pinned to the ETag, and the result says that the
                // parts were not checked one by one (`CompositeNotByParts`). An object that
                // did change fails on its first range.
                Ok(_) | Err(_) => {}
            },
        }
    }
    let concurrency = options.concurrency.max(1);
    let window = match sink {
        // A file takes ranges in any order: the window only keeps a slow range from holding
        // up the plan forever.
        Sink::File(_) => concurrency.saturating_mul(64),
        Sink::Writer(_) => concurrency.saturating_mul(2),
    };
    let download = DownloadOptions::builder()
        .range_size(range_size)
        .concurrency(concurrency)
        .window(window)
        .retries_per_range(1)
        .build()
        .map_err(|e| fail(crate::transfer::plan_error(e)))?;
    // How far ranges may grow: to a file a range holds only its write buffer, so up to
    // LARGEST_RANGE, and never so large that fewer ranges than GETs in flight remain; a
    // writer holds its window of ranges, which must fit the budget.
    let largest_range = match &sink {
        _ if !adapt_range_size => range_size,
        Sink::File(_) => LARGEST_RANGE.min(size.div_ceil(concurrency as u64)),
        Sink::Writer(_) => (budget.capacity() / window as u64)
            .min(LARGEST_RANGE)
            .min(size.div_ceil(concurrency as u64)),
    }
    .max(range_size);
    // The object a resumable part file holds.
    let object = Identity {
        bucket: pinned.bucket.as_str().to_owned(),
        key: pinned.key.as_str().to_owned(),
        etag: pinned.etag.as_str().to_owned(),
        version_id: head.version_id.clone(),
        size,
    };
    let (file, present, restarted) = match &sink {
        Sink::File(path) if resume => {
            let resumed = TempFile::resumable(path, &object).await.map_err(fail)?;
            (Some(resumed.file), resumed.present, resumed.restarted)
        }
        Sink::File(path) => {
            let file = TempFile::create(path, size).await.map_err(fail)?;
            (Some(file), Vec::new(), None)
        }
        Sink::Writer(_) => (None, Vec::new(), None),
    };
    // Parts already on disk are parts only if they are whole parts.
    if let Some((_, part_size)) = mode.by_part()
        && !present
            .iter()
            .all(|r| r.start % part_size == 0 && (r.end % part_size == 0 || r.end == size))
    {
        mode = Mode::Ranges;
    }
    let resumed: u64 = present.iter().map(|r| r.end - r.start).sum();
    // The first response serves the first range (in range mode, when the file lacks it),
    // read only that far; a writer needs the range in memory until its turn (admitted
    // before any of it is read).
    let first_range = if matches!(mode, Mode::Ranges | Mode::Listed { .. })
        && !present.iter().any(|r| r.start == 0)
    {
        let admission = match sink {
            Sink::File(_) => first_admission,
            Sink::Writer(_) => {
                drop(first_admission);
                budget
                    .admit(range_size.min(size))
                    .await
                    .map_err(|e| fail(budget_error(e)))?
            }
        };
        Some((body, admission))
    } else {
        // Not needed: its connection and memory go now.
        drop((body, first_admission));
        None
    };
    // The range algorithm's checksums of the bytes already on disk (read back: the final
    // verification covers them too), part by part in part mode.
    let range_algorithm = match (&checksum, mode) {
        (_, Mode::Parts { algorithm, .. } | Mode::Listed { algorithm, .. }) => Some(algorithm),
        (Some(Announced::Full(full)), _) if integrity::combinable(full.algorithm()) => {
            Some(full.algorithm())
        }
        _ => None,
    };
    let range_checksums = match (&file, range_algorithm) {
        (Some(file), Some(algorithm)) if !present.is_empty() => {
            let pieces = split_at_parts(&present, mode);
            checksum_ranges(&file.file, pieces, algorithm)
                .await
                .map_err(fail)?
        }
        _ => BTreeMap::new(),
    };
    let journal = file.as_ref().and_then(|file| {
        let path = file.journal.clone()?;
        Some(Journal::start(
            file.file.clone(),
            path,
            present.clone(),
            object.clone(),
        ))
    });
    // Bytes already on disk count as committed from the start, unless they are all of
    // them: the last bytes are committed with the verdict.
    let last = if resumed < size {
        control.progress.commit_existing(resumed);
        None
    } else {
        Some((PartProgress::new(control.progress.clone()), size))
    };
    let scheduler = DownloadScheduler::resume(size, &download, present)
        .map_err(|e| fail(crate::transfer::plan_error(e)))?;
    let (writer, writer_end) = file
        .as_ref()
        .map(|f| FileWriter::start_with_end(f.file.clone()))
        .unzip();
    let mut driver = Driver {
        pinned,
        control: control.clone(),
        scheduler,
        mode,
        file: writer,
        writer_end,
        file_memory,
        // Ranges are checksummed when their values combine (CRCs) or are the parts'.
        range_algorithm,
        listed,
        // A hash of the whole object needs the bytes in order: a writer gets them so.
        in_order: match (&checksum, &sink) {
            (Some(Announced::Full(full)), Sink::Writer(_))
                if verify && !integrity::combinable(full.algorithm()) =>
            {
                Some(s3_ops::Checksummer::new(full.algorithm()))
            }
            _ => None,
        },
        first: first_range,
        waits: Waits::new(&control),
        waiting: VecDeque::new(),
        range_checksums,
        requests: 0,
        failure: None,
        cancelled: control.watch(),
        unwritten: size - resumed,
        last,
        journal,
        largest_range,
    };
    let result = driver.run(&mut sink).await;
    driver.stop_writing().await;
    let last = driver.last.take();
    // The journal holds every range written before the verdict (a failure keeps it).
    if let Some(journal) = driver.journal.take() {
        let _ = journal.close().await;
    }
    let requests = driver.requests;
    let range_checksums = std::mem::take(&mut driver.range_checksums);
    let in_order = driver.in_order.take().map(s3_ops::Checksummer::finish);
    let checked_mode = driver.mode;
    drop(driver);
    let finished = match result {
        Ok(()) => {
            verification(
                checksum.as_ref(),
                verify,
                checked_mode,
                &range_checksums,
                in_order,
                file.as_ref(),
                size,
            )
            .await
        }
        Err(error) => Err(error),
    };
    let mut cleanup = Cleanup::Nothing;
    let finished = match (finished, file) {
        (Ok(verification), Some(file)) => {
            file.commit(options.sync_files).await.map(|()| verification)
        }
        (Ok(verification), None) => match &mut sink {
            Sink::Writer(writer) => writer
                .flush()
                .await
                .map_err(Error::io)
                .map(|()| verification),
            Sink::File(_) => Ok(verification),
        },
        // What a rerun can get past keeps the part file and its journal for it.
        (
            Err(error),
            Some(TempFile {
                journal: Some(journal),
                ..
            }),
        ) if worth_resuming(&error) => {
            cleanup = Cleanup::KeptForResume(journal);
            Err(error)
        }
        (Err(error), Some(file)) => {
            file.discard().await;
            Err(error)
        }
        (Err(error), None) => Err(error),
    };
    // The last range's bytes are committed with the verdict, so that a download that fails
    // its final checks never shows all its bytes committed.
    match finished {
        Ok(verification) => {
            if let Some((progress, len)) = last {
                progress.commit(len);
            }
            let mut output = output(head, size, requests, verification);
            output.resumed_bytes = resumed;
            output.restarted = restarted;
            Ok(output)
        }
        Err(error) => {
            if let Some((progress, _)) = last {
                progress.abandon();
            }
            Err(error.with_transfer(TransferFailure::new(None, cleanup)))
        }
    }
}

/// Whether a failed download's part file is worth keeping for a rerun: not when it was
/// cancelled, when the object changed, or when the bytes failed their checks.
fn worth_resuming(error: &Error) -> bool {
    !matches!(
        error.kind(),
        ErrorKind::Transfer(
            TransferErrorKind::Cancelled
                | TransferErrorKind::ObjectChanged
                | TransferErrorKind::Inconsistent(_)
        ) | ErrorKind::Operation(s3_ops::Error::ChecksumMismatch { .. })
    )
}

fn output(
    head: ObjectHead,
    size: u64,
    requests: u32,
    verification: Verification,
) -> DownloadOutput {
    DownloadOutput {
        size,
        etag: head.etag.clone(),
        version_id: head.version_id.clone(),
        head,
        requests,
        verification,
        resumed_bytes: 0,
        restarted: None,
    }
}

/// `present` as the pieces the range checksums are kept in: by part in part mode (the
/// ranges there are whole parts), as they are otherwise.
fn split_at_parts(present: &[std::ops::Range<u64>], mode: Mode) -> Vec<std::ops::Range<u64>> {
    match mode.by_part() {
        Some((_, part_size)) => present
            .iter()
            .flat_map(|range| {
                (range.start..range.end)
                    .step_by(part_size as usize)
                    .map(move |start| start..(start + part_size).min(range.end))
            })
            .collect(),
        None => present.to_vec(),
    }
}

/// The `algorithm` checksum of each of `ranges` of `file`, read back on a blocking thread.
async fn checksum_ranges(
    file: &Arc<std::fs::File>,
    ranges: Vec<std::ops::Range<u64>>,
    algorithm: ChecksumAlgorithm,
) -> Result<BTreeMap<u64, (Checksum, u64)>, Error> {
    let file = file.clone();
    tokio::task::spawn_blocking(move || {
        let mut buffer = vec![0u8; 1 << 20];
        let mut checksums = BTreeMap::new();
        for range in ranges {
            let checksum = crate::body::checksum_at(&file, range.clone(), algorithm, &mut buffer)?;
            checksums.insert(range.start, (checksum, range.end - range.start));
        }
        Ok(checksums)
    })
    .await
    .map_err(|e| Error::io(io::Error::other(e)))?
    .map_err(Error::io)
}

/// What the store said the whole object's checksum is.
pub(crate) enum Announced {
    /// A checksum of the object's bytes.
    Full(Checksum),
    /// A checksum of the part checksums of an object of `parts` parts.
    Composite {
        algorithm: ChecksumAlgorithm,
        parts: u32,
        value: String,
    },
}

/// The checksum a response announced for the whole object, if any (the algorithms in
/// s3-ops' order of preference).
fn announced(checksums: &s3_ops::checksum::ResponseChecksums) -> Option<Announced> {
    ChecksumAlgorithm::ALL.into_iter().find_map(|algorithm| {
        let value = checksums.get(algorithm)?;
        match value.rsplit_once('-') {
            // `<base64>-<parts>`: a checksum of the part checksums.
            Some((_, parts)) => Some(Announced::Composite {
                algorithm,
                parts: parts.parse().ok()?,
                value: value.to_owned(),
            }),
            None if checksums.checksum_type == Some(ChecksumType::Composite) => None,
            None => Checksum::from_base64(algorithm, value)
                .ok()
                .map(Announced::Full),
        }
    })
}

/// The part size of a multipart object of `parts` parts if all but the last have one size
/// (asked with a HEAD of part 1, pinned like the ranges); `None` if they do not. An error
/// means the probe cannot be trusted, not that the object changed.
async fn uniform_part_size(pinned: &Pinned, size: u64, parts: u32) -> Result<Option<u64>, Error> {
    let mut head = HeadObject::new(pinned.bucket.clone(), pinned.key.clone())
        .part_number(1)
        .if_match(pinned.etag.as_str());
    if let Some(version) = &pinned.version_id {
        head = head.version_id(version.clone());
    }
    if let Some(key) = &pinned.sse_customer_key {
        head = head.sse_customer_key(key.clone());
    }
    let part = pinned.client.head_object(head).await?;
    let Some(first) = part.content_length.filter(|&len| len > 0) else {
        return Ok(None);
    };
    // Checked: `parts` and the sizes come from the store.
    let last = parts
        .checked_sub(1)
        .and_then(|before| first.checked_mul(u64::from(before)))
        .and_then(|before| size.checked_sub(before));
    let uniform = part.parts_count == Some(parts)
        && size.div_ceil(first) == u64::from(parts)
        && last.is_some_and(|last| last > 0 && last <= first);
    Ok(uniform.then_some(first))
}

/// The part size and each part's `algorithm` checksum of a multipart object of `parts`
/// uniform parts, from GetObjectAttributes (one request per 1,000 parts), pinned to the
/// first response's ETag and version; `None` where the store does not answer it
/// (local-s3: 501), lists no parts or checksums (moto), or the parts are not uniform: the
/// caller then asks part by part.
async fn listed_parts(
    pinned: &Pinned,
    size: u64,
    parts: u32,
    algorithm: ChecksumAlgorithm,
) -> Result<Option<(u64, Vec<Checksum>)>, Error> {
    let mut op = GetObjectAttributes::new(pinned.bucket.clone(), pinned.key.clone())
        .attributes([ObjectAttributeKind::ETag, ObjectAttributeKind::ObjectParts]);
    if let Some(version) = &pinned.version_id {
        op = op.version_id(version.clone());
    }
    if let Some(key) = &pinned.sse_customer_key {
        op = op.sse_customer_key(key.clone());
    }
    let mut listed = Vec::new();
    loop {
        let Ok(page) = pinned.client.get_object_attributes(op.clone()).await else {
            return Ok(None);
        };
        // No `If-Match` here: the ETag in the answer pins it. An answer about another ETag
        // is not trusted, and not a failure either (a probe never fails a download): the
        // parts are found another way, and if the object did change, the data requests,
        // pinned by `If-Match`, fail as `ObjectChanged`.
        if page
            .result
            .etag
            .as_ref()
            .is_some_and(|etag| etag != &pinned.etag)
        {
            return Ok(None);
        }
        let Some(object_parts) = &page.result.object_parts else {
            return Ok(None);
        };
        listed.extend(object_parts.parts.iter().cloned());
        match op.next_page(&page) {
            Some(next) if listed.len() < parts as usize => op = next,
            _ => break,
        }
    }
    // Parts 1..=N in order, each with a size and a checksum; all but the last of one size.
    let numbered = listed
        .iter()
        .enumerate()
        .all(|(index, part)| part.part_number as usize == index + 1);
    let sizes: Option<Vec<u64>> = listed.iter().map(|part| part.size).collect();
    let checksums: Option<Vec<Checksum>> = listed
        .iter()
        .map(|part| {
            let value = match algorithm {
                ChecksumAlgorithm::Crc32 => part.checksums.crc32.as_deref(),
                ChecksumAlgorithm::Crc32c => part.checksums.crc32c.as_deref(),
                ChecksumAlgorithm::Crc64Nvme => part.checksums.crc64nvme.as_deref(),
                ChecksumAlgorithm::Sha1 => part.checksums.sha1.as_deref(),
                ChecksumAlgorithm::Sha256 => part.checksums.sha256.as_deref(),
            };
            Checksum::from_base64(algorithm, value?).ok()
        })
        .collect();
    let (Some(sizes), Some(checksums)) = (sizes, checksums) else {
        return Ok(None);
    };
    let first = sizes.first().copied().unwrap_or(0);
    let uniform = numbered
        && sizes.len() == parts as usize
        && first > 0
        && sizes[..sizes.len() - 1].iter().all(|&s| s == first)
        && sizes.last().is_some_and(|&last| last > 0 && last <= first)
        && sizes.iter().sum::<u64>() == size;
    Ok(uniform.then_some((first, checksums)))
}

/// A 412 on a pinned request: the object is not the one the first response described.
fn changed(error: Error) -> Error {
    if error.is_precondition_failed() {
        Error::caused_by(ErrorKind::Transfer(TransferErrorKind::ObjectChanged), error)
    } else {
        error
    }
}

fn budget_error(too_large: TooLarge) -> Error {
    Error::transfer_error(TransferErrorKind::MemoryBudget {
        needed: too_large.needed,
        capacity: too_large.capacity,
    })
}

/// Streams a whole body into the sink (a small object, or one that cannot be split).
async fn receive_whole(
    sink: &mut Sink,
    mut body: ObjectBody,
    progress: &PartProgress,
    control: &Control,
    memory: FileMemory,
    sync: bool,
) -> Result<u64, Error> {
    let mut received = 0u64;
    match sink {
        Sink::Writer(writer) => {
            while let Some(chunk) = next_chunk(&mut body, control).await? {
                writer.write_all(&chunk).await.map_err(Error::io)?;
                progress.moved(chunk.len() as u64);
                received += chunk.len() as u64;
            }
            writer.flush().await.map_err(Error::io)?;
        }
        Sink::File(path)
            if body
                .content_length()
                .is_some_and(|len| len <= memory.write_buffer as u64) =>
        {
            let mut chunks = Vec::new();
            while let Some(chunk) = next_chunk(&mut body, control).await? {
                progress.moved(chunk.len() as u64);
                received += chunk.len() as u64;
                chunks.push(chunk);
            }
            TempFile::write_whole(path, chunks, sync).await?;
        }
        Sink::File(path) => {
            let file = TempFile::create(path, body.content_length().unwrap_or(0)).await?;
            let written = async {
                let mut writer = PositionedWriter::new(
                    FileWriter::start(file.file.clone()),
                    0,
                    memory.write_buffer,
                );
                while let Some(chunk) = next_chunk(&mut body, control).await? {
                    progress.moved(chunk.len() as u64);
                    received += chunk.len() as u64;
                    writer.push(chunk).await?;
                }
                writer.finish().await?;
                // A body without Content-Length may be shorter than the preallocation.
                let handle = file.file.clone();
                tokio::task::spawn_blocking(move || handle.set_len(received))
                    .await
                    .map_err(|e| Error::io(io::Error::other(e)))?
                    .map_err(Error::io)?;
                Ok::<_, Error>(())
            }
            .await;
            match written {
                Ok(()) => file.commit(sync).await?,
                Err(error) => {
                    file.discard().await;
                    return Err(error);
                }
            }
        }
    }
    Ok(received)
}

/// The next chunk of a body, or the cancellation.
async fn next_chunk(body: &mut ObjectBody, control: &Control) -> Result<Option<Bytes>, Error> {
    let mut cancelled = std::pin::pin!(control.cancelled());
    std::future::poll_fn(|cx| {
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(Error::transfer_error(TransferErrorKind::Cancelled)));
        }
        Pin::new(&mut *body).poll_next(cx).map(Option::transpose)
    })
    .await
}

/// The verification of a finished parallel download.
async fn verification(
    announced: Option<&Announced>,
    verify: bool,
    mode: Mode,
    range_checksums: &BTreeMap<u64, (Checksum, u64)>,
    in_order: Option<Checksum>,
    file: Option<&TempFile>,
    size: u64,
) -> Result<Verification, Error> {
    if !verify {
        return Ok(Verification::NotVerified(NotVerified::Disabled));
    }
    match (announced, mode) {
        (None, _) => Ok(Verification::NotVerified(NotVerified::StoreSentNone)),
        (
            Some(Announced::Composite {
                algorithm,
                parts,
                value,
            }),
            Mode::Parts { .. } | Mode::Listed { .. },
        ) => {
            // Each part matched its own checksum (checked as it arrived); the store's
            // composite value must be the checksum of exactly those.
            let digests: Option<Vec<Checksum>> = covering(range_checksums, size)
                .map(|pieces| pieces.into_iter().map(|(c, _)| c.clone()).collect());
            match digests.as_deref().and_then(Checksum::composite) {
                Some(ours) if &ours == value => Ok(Verification::PerPart {
                    algorithm: *algorithm,
                    parts: *parts,
                }),
                Some(ours) => Err(mismatch(*algorithm, value, &ours)),
                None => Ok(Verification::NotVerified(NotVerified::CompositeNotByParts)),
            }
        }
        (Some(Announced::Composite { .. }), Mode::Ranges) => {
            Ok(Verification::NotVerified(NotVerified::CompositeNotByParts))
        }
        (Some(Announced::Full(expected)), _) => {
            let computed = if integrity::combinable(expected.algorithm()) {
                // The CRCs of the ranges combine into the object's.
                covering(range_checksums, size)
                    .and_then(|pieces| integrity::combine(pieces.into_iter()))
            } else {
                // A hash needs the bytes in order: a writer got them so, a file is read
                // once more.
                match (in_order, file) {
                    (Some(hash), _) => Some(hash),
                    (None, Some(file)) => {
                        Some(hash_file(&file.file, size, expected.algorithm()).await?)
                    }
                    (None, None) => None,
                }
            };
            match computed {
                Some(computed) if &computed == expected => {
                    Ok(Verification::FullObject(expected.clone()))
                }
                Some(computed) => Err(mismatch(
                    expected.algorithm(),
                    &expected.to_base64(),
                    &computed.to_base64(),
                )),
                None => Ok(Verification::NotVerified(NotVerified::StoreSentNone)),
            }
        }
    }
}

/// The ranges' checksums in object order, if they cover the whole object one after another.
fn covering(
    checksums: &BTreeMap<u64, (Checksum, u64)>,
    size: u64,
) -> Option<Vec<(&Checksum, u64)>> {
    let mut next = 0;
    let mut pieces = Vec::with_capacity(checksums.len());
    for (&start, (checksum, len)) in checksums {
        if start != next {
            return None;
        }
        next += len;
        pieces.push((checksum, *len));
    }
    (next == size).then_some(pieces)
}

fn mismatch(algorithm: ChecksumAlgorithm, expected: &str, computed: &str) -> Error {
    Error::from(s3_ops::Error::ChecksumMismatch {
        algorithm,
        expected: expected.to_owned(),
        computed: computed.to_owned(),
    })
}

async fn hash_file(
    file: &Arc<std::fs::File>,
    size: u64,
    algorithm: ChecksumAlgorithm,
) -> Result<Checksum, Error> {
    let file = file.clone();
    tokio::task::spawn_blocking(move || {
        let mut buffer = vec![0u8; size.clamp(1, 1 << 20) as usize];
        crate::body::checksum_at(&file, 0..size, algorithm, &mut buffer)
    })
    .await
    .map_err(|e| Error::io(io::Error::other(e)))?
    .map_err(Error::io)
}

/// A writer's range held until its turn: its bytes, their memory, and its progress (the
/// range is committed once written).
struct Held {
    data: Bytes,
    /// Given back when the range is dropped.
    _admission: Admission,
    progress: Arc<PartProgress>,
}

impl Drop for Held {
    fn drop(&mut self) {
        // A range dropped before its turn (the download failed) is no longer in flight;
        // after its commit this takes back nothing.
        self.progress.abandon();
    }
}

/// How long a range's request took to answer, and its body to arrive.
#[derive(Debug, Clone, Copy)]
struct RangeTiming {
    first_byte: Duration,
    body: Duration,
}

/// A range that arrived.
struct Fetched {
    index: usize,
    /// The object's bytes it holds.
    range: std::ops::Range<u64>,
    /// The bytes, for a writer (delivered in order); `None` once written to the file.
    data: Option<(Bytes, Admission)>,
    /// The range's checksum with the object's algorithm (parts: checked against the
    /// store's value for the part).
    checksum: Option<Checksum>,
    progress: Arc<PartProgress>,
    len: u64,
    /// `None` for the range the first answer served.
    timing: Option<RangeTiming>,
}

/// A range that failed, with its progress to take back.
struct Failed {
    index: usize,
    error: Error,
    progress: Arc<PartProgress>,
}

struct Driver {
    pinned: Arc<Pinned>,
    control: Arc<Control>,
    /// Holds a writer's ranges until their turn (a file's are written on arrival).
    scheduler: DownloadScheduler<Option<Held>>,
    mode: Mode,
    /// The writer of the temporary file, for a download to a file.
    file: Option<FileWriter>,
    /// That writer's end ([`Driver::stop_writing`]).
    writer_end: Option<WriterEnd>,
    file_memory: FileMemory,
    /// The algorithm each range is checksummed with, if any.
    range_algorithm: Option<ChecksumAlgorithm>,
    /// [`Mode::Listed`]: each part's checksum, part 1 first.
    listed: Option<Arc<Vec<Checksum>>>,
    /// The object's hash over the bytes delivered in order (a writer, a hash checksum).
    in_order: Option<s3_ops::Checksummer>,
    /// The first response, serving range 0.
    first: Option<(ObjectBody, Admission)>,
    /// The cancellation, the range waiting for memory, the ranges in flight.
    waits: Waits<RangeFetch, Result<Fetched, Failed>>,
    waiting: VecDeque<RangeFetch>,
    /// Per range, by its first byte: its checksum and length.
    range_checksums: BTreeMap<u64, (Checksum, u64)>,
    requests: u32,
    failure: Option<Error>,
    /// The cancellation, for a write to the writer.
    cancelled: Pin<Box<dyn Future<Output = ()> + Send>>,
    /// Bytes still to be written to the file or the writer.
    unwritten: u64,
    /// The last range written, not committed until the whole object checked out: `committed`
    /// reaches the total only when the download succeeds.
    last: Option<(Arc<PartProgress>, u64)>,
    /// The resume journal of the part file, if it has one.
    journal: Option<Journal>,
    /// The largest a range may grow to ([`Driver::adapt_range_size`]); the range size
    /// itself when ranges do not adapt.
    largest_range: u64,
}

impl Driver {
    /// Grows the ranges still to be cut when the requests cost more than their bytes: a
    /// range of the current size whose answer took longer to start than its body took to
    /// arrive (a store that does much per request, moto for one) makes the next ones larger,
    /// by the ratio (2 to 16 times) up to [`Driver::largest_range`]. Only plain ranges adapt
    /// (parts are the object's).
    fn adapt_range_size(&mut self, len: u64, timing: Option<RangeTiming>) {
        let Some(RangeTiming { first_byte, body }) = timing else {
            return;
        };
        let current = self.scheduler.range_size();
        if self.mode != Mode::Ranges || len < current || current >= self.largest_range {
            return;
        }
        // A request that answers within MIN_REQUEST_COST costs too little to matter
        // (loopback, a LAN store), whatever its ratio to a small body.
        if first_byte <= body || first_byte < MIN_REQUEST_COST {
            return;
        }
        let ratio = first_byte.as_secs_f64() / body.as_secs_f64().max(1e-6);
        let factor = (ratio.ceil() as u64).next_power_of_two().clamp(2, 16);
        let grown = current.saturating_mul(factor).min(self.largest_range);
        let _ = self.scheduler.set_range_size(grown);
    }

    /// A range of `len` bytes reached the destination: committed, unless it is the last one,
    /// which waits for the object's verification ([`Driver::last`]).
    fn written_range(&mut self, progress: &Arc<PartProgress>, range: std::ops::Range<u64>) {
        let len = range.end - range.start;
        if let Some(journal) = &self.journal {
            journal.record(range);
        }
        self.unwritten = self.unwritten.saturating_sub(len);
        if self.unwritten == 0 {
            self.last = Some((progress.clone(), len));
        } else {
            progress.commit(len);
        }
    }

    /// Ends the ranges still in flight (a failed download leaves some) and waits until the
    /// file's writer has let go of the file: once the download returns, nothing of it
    /// writes there any more, and the part file's lock, which goes with the last handle to
    /// the file, is free for a rerun in the same process to continue it.
    async fn stop_writing(&mut self) {
        self.waits.tasks.shutdown().await;
        self.file = None;
        if let Some(end) = self.writer_end.take() {
            end.wait().await;
        }
    }

    fn fail(&mut self, error: Error) {
        if self.failure.is_none() {
            self.failure = Some(error);
        }
    }

    fn memory_needed(&self, fetch: &RangeFetch) -> u64 {
        match self.file {
            Some(_) => self
                .file_memory
                .admitted
                .min(fetch.range.end - fetch.range.start),
            None => fetch.range.end - fetch.range.start,
        }
    }

    async fn run(&mut self, sink: &mut Sink) -> Result<(), Error> {
        loop {
            while let Some(fetch) = self.scheduler.poll_fetch() {
                self.waiting.push_back(fetch);
            }
            // Deliveries in order: to the writer (a file was written as ranges came).
            while let Some(delivery) = self.scheduler.poll_deliver() {
                if let (Sink::Writer(writer), Some(held)) = (&mut *sink, delivery.data) {
                    let data = &held.data;
                    if let Some(hash) = &mut self.in_order {
                        hash.update(data);
                    }
                    let written = {
                        let mut write = std::pin::pin!(writer.write_all(data));
                        let cancelled = &mut self.cancelled;
                        std::future::poll_fn(|cx| {
                            if cancelled.as_mut().poll(cx).is_ready() {
                                return Poll::Ready(Err(Error::transfer_error(
                                    TransferErrorKind::Cancelled,
                                )));
                            }
                            write.as_mut().poll(cx).map_err(Error::io)
                        })
                        .await
                    };
                    match written {
                        Ok(()) => self.written_range(&held.progress, delivery.range.clone()),
                        Err(error) => {
                            self.fail(error);
                            self.scheduler.handle_cancel();
                        }
                    }
                    // Its memory and progress go with it.
                    drop(held);
                }
            }
            match self.scheduler.outcome() {
                Some(DownloadOutcome::Completed) => return Ok(()),
                Some(_) => {
                    return Err(self
                        .failure
                        .take()
                        .unwrap_or_else(|| Error::transfer_error(TransferErrorKind::Cancelled)));
                }
                None => {}
            }
            self.start_waiting();
            match std::future::poll_fn(|cx| self.waits.poll(cx)).await {
                Wake::Cancelled => {
                    self.fail(Error::transfer_error(TransferErrorKind::Cancelled));
                    self.scheduler.handle_cancel();
                }
                Wake::Admitted(fetch, Ok(admission)) => self.start(fetch, admission),
                Wake::Admitted(fetch, Err(too_large)) => {
                    self.fail(budget_error(too_large));
                    let _ = self.scheduler.handle_fetch_failed(fetch.index, false);
                }
                Wake::Finished(result) => self.handle(result),
            }
        }
    }

    /// Starts range 0 from the first response, and asks the budget for the memory of the
    /// next waiting range (one at a time, in order).
    fn start_waiting(&mut self) {
        while self.waits.admitting().is_none()
            && let Some(fetch) = self.waiting.pop_front()
        {
            // Range 0 comes from the first response, already admitted.
            if fetch.range.start == 0 && fetch.attempt == 1 && self.first.is_some() {
                let (body, admission) = self.first.take().expect("checked");
                self.spawn(fetch, admission, Some(body));
                continue;
            }
            let needed = self.memory_needed(&fetch);
            self.waits
                .admit(fetch, &self.pinned.client.inner.transfer_memory, needed);
        }
    }

    fn start(&mut self, fetch: RangeFetch, admission: Admission) {
        self.spawn(fetch, admission, None);
    }

    fn spawn(&mut self, fetch: RangeFetch, admission: Admission, body: Option<ObjectBody>) {
        if body.is_none() {
            self.requests += 1;
        } else {
            self.requests = self.requests.max(1);
        }
        let pinned = self.pinned.clone();
        let mode = self.mode;
        let file = self
            .file
            .clone()
            .map(|file| (file, self.file_memory.write_buffer));
        let algorithm = self.range_algorithm;
        let progress = PartProgress::new(self.control.progress.clone());
        let part = mode.part_number(fetch.range.start);
        let expected = match (&self.listed, part) {
            (Some(listed), Some(part)) => listed.get(part as usize - 1).cloned(),
            _ => None,
        };
        let queued = admission.queued();
        self.waits.tasks.spawn(async move {
            let (index, range) = (fetch.index, fetch.range.clone());
            let mut requests = 0;
            let fetched = crate::hooks::queued_for(
                queued,
                fetch_range(
                    &pinned,
                    fetch,
                    mode,
                    file,
                    (algorithm, expected),
                    admission,
                    body,
                    progress.clone(),
                    &mut requests,
                ),
            )
            .await;
            // An error found in the answer (a short or inconsistent one) rather than by the
            // request carries the attempts of the GET it came from.
            fetched.map_err(|error| {
                let error = match error.attempts() {
                    0 => error.with_attempts(requests),
                    _ => error,
                };
                Failed {
                    index,
                    error: error.in_part(part, range),
                    progress,
                }
            })
        });
    }

    fn handle(&mut self, result: Result<Fetched, Failed>) {
        let handled = match result {
            Ok(fetched) => {
                self.adapt_range_size(fetched.len, fetched.timing);
                if let Some(checksum) = fetched.checksum {
                    self.range_checksums
                        .insert(fetched.range.start, (checksum, fetched.len));
                }
                let held = match fetched.data {
                    Some((data, admission)) => Some(Held {
                        data,
                        _admission: admission,
                        progress: fetched.progress,
                    }),
                    // Written to the file: committed now.
                    None => {
                        self.written_range(&fetched.progress, fetched.range.clone());
                        None
                    }
                };
                self.scheduler.handle_fetched(fetched.index, held)
            }
            Err(Failed {
                index,
                error,
                progress,
            }) => {
                progress.abandon();
                let refused_part_number = matches!(self.mode, Mode::Parts { .. })
                    && matches!(
                        error.kind(),
                        ErrorKind::Transfer(
                            TransferErrorKind::Inconsistent(_) | TransferErrorKind::ObjectChanged
                        )
                    );
                if refused_part_number {
                    // The store does not honour partNumber (the whole object, or a 412 from a
                    // part's own ETag): fetch the same bytes by range (the boundaries are the
                    // same), pinned as before, so that only a changed object fails there; the
                    // parts can no longer be checked.
                    self.mode = Mode::Ranges;
                    self.range_algorithm = None;
                    self.scheduler.handle_fetch_failed(index, true)
                } else {
                    let retryable = error.retry_class().is_retryable();
                    self.fail(error);
                    self.scheduler.handle_fetch_failed(index, retryable)
                }
            }
        };
        handled.expect("the driver reports exactly the fetches it was given");
    }
}

/// Where a range's bytes go as they arrive.
enum RangeSink {
    File(PositionedWriter),
    Memory(BytesMut),
}

/// Fetches one range (or part) and writes it to the file or keeps it for the writer;
/// `requests` is set to the GET's attempts once it answered.
#[allow(clippy::too_many_arguments)]
async fn fetch_range(
    pinned: &Pinned,
    fetch: RangeFetch,
    mode: Mode,
    file: Option<(FileWriter, usize)>,
    (algorithm, expected): (Option<ChecksumAlgorithm>, Option<Checksum>),
    admission: Admission,
    first: Option<ObjectBody>,
    progress: Arc<PartProgress>,
    requests: &mut u32,
) -> Result<Fetched, Error> {
    let range = fetch.range.clone();
    let len = range.end - range.start;
    let inconsistent = |what: String| Error::transfer_error(TransferErrorKind::Inconsistent(what));
    let asked = tokio::time::Instant::now();
    // When its answer's head arrived (a range of the first answer has no request of its own).
    let mut answered = None;
    let (mut body, part_checksum) = match first {
        Some(body) => {
            *requests = body.requests();
            (body, expected.clone())
        }
        None => {
            let request = match mode {
                Mode::Ranges | Mode::Listed { .. } => pinned
                    .request(false)
                    .range(ByteRange::new(range.start, range.end - 1).map_err(Error::from)?),
                Mode::Parts { .. } => pinned
                    .request(true)
                    .part_number(mode.part_number(range.start).unwrap_or(0)),
            };
            let response = pinned.client.get_object(request).await.map_err(changed)?;
            answered = Some(tokio::time::Instant::now());
            *requests = response.body.requests();
            let head = &response.output.head;
            let answered = head
                .content_range
                .map(|r| r.first..r.last.saturating_add(1));
            if answered != Some(range.clone()) || head.content_length != Some(len) {
                return Err(inconsistent(format!(
                    "asked for bytes {}..{} ({}), the store answered {:?} with {:?} bytes",
                    range.start,
                    range.end,
                    match mode {
                        Mode::Ranges | Mode::Listed { .. } => "by range".to_owned(),
                        Mode::Parts { .. } => {
                            format!("as part {}", mode.part_number(range.start).unwrap_or(0))
                        }
                    },
                    head.content_range,
                    head.content_length
                )));
            }
            let part_checksum = match mode {
                Mode::Parts { algorithm, .. } => Some(
                    head.checksums
                        .get(algorithm)
                        .map(|value| Checksum::from_base64(algorithm, value))
                        .transpose()
                        .map_err(Error::from)?
                        .ok_or_else(|| {
                            inconsistent(format!(
                                "part {} came without its {algorithm} checksum",
                                mode.part_number(range.start).unwrap_or(0)
                            ))
                        })?,
                ),
                Mode::Ranges => None,
                Mode::Listed { .. } => expected.clone(),
            };
            (response.body, part_checksum)
        }
    };
    let mut checksummer = algorithm.map(s3_ops::Checksummer::new);
    let mut received = 0u64;
    // To a file: written by position as the chunks come; to a writer: held whole until its
    // turn.
    let mut sink = match file {
        Some((file, write_buffer)) => {
            RangeSink::File(PositionedWriter::new(file, range.start, write_buffer))
        }
        None => RangeSink::Memory(BytesMut::with_capacity(len as usize)),
    };
    while received < len {
        let Some(chunk) = body.next_chunk().await.transpose()? else {
            break;
        };
        // The first response runs to the end of the object: take only the range.
        let chunk = chunk.slice(..chunk.len().min((len - received) as usize));
        received += chunk.len() as u64;
        progress.moved(chunk.len() as u64);
        if let Some(checksummer) = &mut checksummer {
            checksummer.update(&chunk);
        }
        match &mut sink {
            RangeSink::File(writer) => writer.push(chunk).await?,
            RangeSink::Memory(gathered) => gathered.extend_from_slice(&chunk),
        }
    }
    if received != len {
        return Err(Error::new(ErrorKind::BodyLength {
            expected: len,
            received,
        }));
    }
    let checksum = checksummer.map(s3_ops::Checksummer::finish);
    if let (Some(expected), Some(computed)) = (&part_checksum, &checksum)
        && expected != computed
    {
        return Err(mismatch(
            expected.algorithm(),
            &expected.to_base64(),
            &computed.to_base64(),
        ));
    }
    let data = match sink {
        RangeSink::File(writer) => {
            writer.finish().await?;
            drop(admission);
            None
        }
        RangeSink::Memory(gathered) => Some((gathered.freeze(), admission)),
    };
    Ok(Fetched {
        index: fetch.index,
        range,
        data,
        checksum,
        progress,
        len,
        timing: answered.map(|head| RangeTiming {
            first_byte: head - asked,
            body: head.elapsed(),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> s3_ops::checksum::ResponseChecksums {
        let mut map = http::HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        s3_ops::checksum::ResponseChecksums::from_headers(&map)
    }

    #[test]
    fn announced_checksums_are_full_or_composite() {
        let crc = ChecksumAlgorithm::Crc64Nvme.checksum(b"object");
        let full = announced(&headers(&[
            ("x-amz-checksum-crc64nvme", &crc.to_base64()),
            ("x-amz-checksum-type", "FULL_OBJECT"),
        ]));
        assert!(matches!(full, Some(Announced::Full(c)) if c == crc));
        let composite = announced(&headers(&[
            (
                "x-amz-checksum-sha256",
                "ZcfzJvHWAX9vO7fPKA9XUU5dtZ+mmrAFxgKDQljlC2k=-2",
            ),
            ("x-amz-checksum-type", "COMPOSITE"),
        ]));
        assert!(matches!(
            composite,
            Some(Announced::Composite {
                algorithm: ChecksumAlgorithm::Sha256,
                parts: 2,
                ..
            })
        ));
        // A composite type without its part count (moto's HEAD) cannot be checked.
        let unsuffixed = announced(&headers(&[
            (
                "x-amz-checksum-sha256",
                "ZcfzJvHWAX9vO7fPKA9XUU5dtZ+mmrAFxgKDQljlC2k=",
            ),
            ("x-amz-checksum-type", "COMPOSITE"),
        ]));
        assert!(unsuffixed.is_none());
        assert!(announced(&headers(&[])).is_none());
    }

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

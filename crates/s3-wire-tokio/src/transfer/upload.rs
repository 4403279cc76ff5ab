//! Managed uploads: one PutObject (from memory) up to the single-request limit, a
//! multipart upload (`multipart.rs`) above it, and the continuation of a journaled upload
//! after a crash.

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use s3_multipart_plan::{
    CompletedPart, MultipartOptions, PartLimits, UploadPlan, UploadScheduler, UploadSnapshot,
};
use s3_ops::ops::list_parts::ListParts;
use s3_ops::ops::put_object::PutObject;
use s3_ops::{BucketName, Checksum, ChecksumAlgorithm, ObjectAttributes, ObjectKey};
use s3_xml::ETag;

use crate::body::{Body, Pieces};
use crate::client::Client;
use crate::error::{Cleanup, Error, TransferErrorKind};
use crate::memory::{Admission, TooLarge};
use crate::progress::{Listener, PartProgress};
use crate::sign::digest_bytes;
use crate::transfer::handle::{Control, TransferHandle};
use crate::transfer::integrity::{self, Expected};
use crate::transfer::journal::{self, Fingerprint, Header};
use crate::transfer::multipart::{Driver, JournalWriter, Parts, Receipt, Target};
use crate::transfer::source::{Prefixed, SequentialRead, SourceKind, UploadSource};
use crate::transfer::{
    TransferOptions, await_starts, multipart_options, plan_error, transfer_option_setters,
};
use crate::verification::{NotVerified, Verification};

/// A managed upload to be started; made by [`Client::upload`].
///
/// Objects up to the single-request limit (16 MiB by default) go in one PutObject; larger
/// ones in a multipart upload of `part_size` parts, `concurrency` at a time. Either way the
/// object carries a checksum computed here (CRC32 by default; for multipart uploads the
/// client combines the part CRCs into the full-object value, which the store checks against
/// the assembled object), and the output says what the store confirmed.
#[must_use = "an upload does nothing until it is started or awaited"]
pub struct UploadBuilder {
    client: Client,
    bucket: BucketName,
    key: ObjectKey,
    source: UploadSource,
    options: TransferOptions,
    attributes: ObjectAttributes,
    create_only: bool,
    checksum: Option<ChecksumAlgorithm>,
    journal: Option<PathBuf>,
    listener: Option<Listener>,
}

/// What a successful upload stored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UploadOutput {
    /// The object's size in bytes.
    pub size: u64,
    /// The object's ETag.
    pub etag: Option<ETag>,
    /// `x-amz-version-id` (versioned buckets).
    pub version_id: Option<String>,
    /// The multipart upload id; `None` for a single PutObject.
    pub upload_id: Option<String>,
    /// The number of parts; `None` for a single PutObject.
    pub parts: Option<u32>,
    /// Parts a resumed upload found already stored (verified against the source), and did
    /// not send again.
    pub resumed_parts: u32,
    /// The object's checksum as computed here (a CRC combined from the parts, or the
    /// checksum of a single PutObject); `None` with checksums off or a composite hash.
    pub checksum: Option<Checksum>,
    /// What the store confirmed.
    pub verification: Verification,
    /// Set when a CreateMultipartUpload answer was lost, so the store may have created an
    /// upload besides the one used, and it could not be found to abort (the store cannot
    /// list multipart uploads, s3s-fs for one). Such an upload holds no parts but stays
    /// until a lifecycle rule (AbortIncompleteMultipartUpload) removes it. Where the store
    /// lists uploads the extra one is aborted and this is `None`.
    pub possible_orphan: Option<PossibleOrphan>,
}

/// A multipart upload a lost answer may have left behind, which could not be aborted; see
/// [`UploadOutput::possible_orphan`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PossibleOrphan {
    /// The bucket.
    pub bucket: String,
    /// The key (the upload's own).
    pub key: String,
    /// Why it could not be found and aborted.
    pub reason: String,
}

impl Client {
    /// A managed upload of `source` to `key` in `bucket`: build it further, then `.await`
    /// it, or [`start`](UploadBuilder::start) it for a handle with progress and
    /// cancellation.
    ///
    /// ```no_run
    /// use s3_wire_tokio::s3_ops::ObjectAttributes;
    /// use s3_wire_tokio::{Client, UploadSource, bucket, key};
    ///
    /// # async fn demo(client: Client) -> Result<(), s3_wire_tokio::Error> {
    /// let upload = client
    ///     .upload(bucket("backups")?, key("2024/disk.img")?, UploadSource::file("disk.img"))
    ///     .attributes(ObjectAttributes::new().content_type("application/octet-stream"))
    ///     .journal("disk.img.upload-journal") // resumable after a crash
    ///     .start();
    /// println!("{:?}", upload.progress());
    /// let stored = upload.await?;
    /// println!("{} bytes, {:?}", stored.size, stored.verification);
    /// # Ok(()) }
    /// ```
    pub fn upload(
        &self,
        bucket: BucketName,
        key: ObjectKey,
        source: impl Into<UploadSource>,
    ) -> UploadBuilder {
        UploadBuilder {
            client: self.clone(),
            bucket,
            key,
            source: source.into(),
            options: self.inner.transfer_options,
            attributes: ObjectAttributes::default(),
            create_only: false,
            checksum: self.inner.integrity.upload_checksum,
            journal: None,
            listener: None,
        }
    }
}

impl UploadBuilder {
    transfer_option_setters!();

    /// What describes the object: content headers, metadata, storage class, tags,
    /// server-side encryption (see [`ObjectAttributes`]).
    pub fn attributes(mut self, attributes: ObjectAttributes) -> Self {
        self.attributes = attributes;
        self
    }

    /// Store the object only if none exists under the key (`If-None-Match: *`); otherwise
    /// the upload fails with a precondition error and stores nothing.
    pub fn create_only(mut self) -> Self {
        self.create_only = true;
        self
    }

    /// The checksum the object carries (default: the client's
    /// [`upload_checksum`](crate::ClientBuilder::upload_checksum), CRC32 unless changed).
    /// The CRCs give a full-object checksum for multipart uploads too; SHA-1 and SHA-256
    /// give a composite one (a checksum of the part checksums). `None` sends no checksum
    /// (for stores that reject them).
    pub fn checksum(mut self, algorithm: Option<ChecksumAlgorithm>) -> Self {
        self.checksum = algorithm;
        self
    }

    /// Keeps a resume journal at `path` (file sources only; see the `journal` module docs
    /// for its format). It is written atomically after the multipart upload is created and
    /// as parts complete, and removed when the upload completes or is aborted.
    ///
    /// If `path` already holds the journal of an unfinished upload of this file to this
    /// key, the upload continues it: the parts the store lists are checked against the
    /// journal and re-read from the file to verify their checksums, and only the missing
    /// (or mismatching) parts are sent. A journal whose file changed since (size or
    /// modification time) is refused with [`TransferErrorKind::SourceChanged`]; remove it
    /// to start over. With a journal, a failed upload (other than a cancelled one) is kept
    /// open for that, not aborted.
    pub fn journal(mut self, path: impl Into<PathBuf>) -> Self {
        self.journal = Some(path.into());
        self
    }

    /// Starts the upload as a task; must be called within a Tokio runtime.
    pub fn start(self) -> TransferHandle<UploadOutput> {
        let (total, listener) = (self.source.known_len(), self.listener.clone());
        TransferHandle::start(total, listener, |control| run(self, control))
    }
}

await_starts!(UploadBuilder => UploadOutput);

async fn run(builder: UploadBuilder, control: Arc<Control>) -> Result<UploadOutput, Error> {
    let UploadBuilder {
        client,
        bucket,
        key,
        source,
        options,
        attributes,
        create_only,
        checksum,
        journal,
        listener: _,
    } = builder;
    let quirks = *client.provider_quirks();
    let target = Arc::new(Target {
        client,
        bucket,
        key,
        attributes,
        create_only,
        // One choice for the whole upload (create, parts, completion): a combination of
        // algorithm and checksum type the store accepts, else none.
        algorithm: quirks.multipart_checksum(checksum, integrity::checksum_type),
        single_request_algorithm: quirks.upload_checksum(checksum),
        progress: control.progress.clone(),
    });
    let fail = |error: Error| target.failed(error, None, Cleanup::Nothing);
    if create_only {
        // Refused before anything is sent: a store that ignores the condition would
        // overwrite what the caller wanted kept.
        quirks
            .check_create_only(false)
            .map_err(|e| fail(e.into()))?;
    }
    let limit = options
        .single_request_limit
        .unwrap_or(TransferOptions::DEFAULT_SINGLE_REQUEST_LIMIT);
    if journal.is_some() && !matches!(source.0, SourceKind::File(_)) {
        return Err(fail(Error::config(
            "a resume journal needs a file source (a stream cannot be read again)",
        )));
    }
    let budget = target.client.inner.transfer_memory.clone();
    // What one request may hold in memory: never more than the whole budget.
    let in_memory_limit = limit.min(budget.capacity().saturating_sub(1));
    match source.0 {
        SourceKind::Bytes(pieces) if pieces.len() <= limit => {
            put_whole(&target, pieces, &control).await
        }
        SourceKind::Bytes(pieces) => {
            let len = pieces.len();
            let options = multipart_options(&options).map_err(fail)?;
            let scheduler = UploadScheduler::new(len, &options).map_err(|e| fail(plan_error(e)))?;
            Driver::new(target, control, scheduler, Parts::Bytes(pieces), None)
                .run()
                .await
        }
        SourceKind::File(path) => {
            // A file small enough for one PutObject is read whole, in the job that opens it
            // when its memory is free at once.
            let whole_limit = journal.is_none().then_some(in_memory_limit);
            let Opened {
                file,
                fingerprint,
                whole,
            } = open(&path, &budget, whole_limit).await.map_err(fail)?;
            target.progress.set_total(fingerprint.len);
            if read_whole(fingerprint.len, whole_limit) {
                let whole = match whole {
                    Some(whole) => whole,
                    None => read_whole_later(&budget, &file, fingerprint.len)
                        .await
                        .map_err(fail)?,
                };
                let (data, admission) = whole.snapshot(&path, fingerprint).map_err(fail)?;
                let put = put_whole(&target, data.into(), &control).await;
                drop(admission);
                return put;
            }
            let parts = Parts::File {
                file,
                path,
                fingerprint,
                buffers: Arc::default(),
            };
            match journal {
                Some(journal) => resume_or_start(target, control, parts, &options, journal).await,
                None => {
                    let options = multipart_options(&options).map_err(fail)?;
                    let scheduler = UploadScheduler::new(fingerprint.len, &options)
                        .map_err(|e| fail(plan_error(e)))?;
                    Driver::new(target, control, scheduler, parts, None)
                        .run()
                        .await
                }
            }
        }
        SourceKind::Sequential { mut reader, len } => {
            // Read what one request may carry (and a byte more): a short source is one
            // PutObject from memory, a longer one a multipart upload that starts with it.
            let probe = match len {
                Some(len) if len <= in_memory_limit => len + 1,
                Some(_) => 0,
                None => in_memory_limit + 1,
            };
            let admission = budget
                .admit(probe)
                .await
                .map_err(|e| fail(budget_error(e)))?;
            let prefix = reader
                .read_part(probe as usize)
                .await
                .map_err(|e| fail(read_error(e)))?;
            if (prefix.len() as u64) < probe {
                if let Some(announced) = len
                    && announced != prefix.len() as u64
                {
                    return Err(fail(length_error(announced, prefix.len() as u64)));
                }
                let put = put_whole(&target, prefix.into(), &control).await;
                drop(admission);
                return put;
            }
            if let Some(announced) = len
                && probe > 0
            {
                // The announced length fits one request but the source is longer.
                return Err(fail(length_error(announced, prefix.len() as u64)));
            }
            let options = stream_options(&options, len, budget.capacity()).map_err(fail)?;
            let scheduler = UploadScheduler::new_stream(&options);
            let reader: Box<dyn SequentialRead> = Box::new(Prefixed {
                prefix,
                rest: reader,
            });
            let parts = Parts::Buffered { announced: len };
            Driver::new(target, control, scheduler, parts, Some(reader))
                .with_read_ahead(admission)
                .run()
                .await
        }
    }
}

/// The planner's options for a stream. Its parts never outgrow the memory budget and grow
/// as late as they can: the largest stream of unknown length is 90% of what 10,000
/// budget-sized parts carry (562 GiB with the default 64 MiB; S3's 5 TiB from about 600 MiB).
/// A stream of announced length is planned for exactly that length: uniform parts, and a
/// longer stream is detected as too large.
fn stream_options(
    options: &TransferOptions,
    announced: Option<u64>,
    budget: u64,
) -> Result<MultipartOptions, Error> {
    let limits = options.limits;
    // The planner reads one byte more than the last possible part to tell a stream that
    // fits from one that is too long: that byte must fit the budget too.
    let largest_part = limits
        .max_part_size()
        .min(budget.saturating_sub(1))
        .max(limits.min_part_size());
    let (part_size, max_object) = match announced {
        Some(len) => {
            let exact = PartLimits::new(
                limits.min_part_size(),
                largest_part,
                limits.max_parts(),
                len.clamp(1, limits.max_object_size()),
            )
            .map_err(plan_error)?;
            let fixed = TransferOptions {
                limits: exact,
                ..*options
            };
            let part_size = UploadPlan::new(len, &multipart_options(&fixed)?)
                .map_err(plan_error)?
                .part_size();
            (part_size, exact.max_object_size())
        }
        // Aim at 90% of what 10,000 budget-sized parts carry: the planner then grows the
        // parts as late as that allows (all at the cap could never start small).
        None => {
            let full = largest_part.saturating_mul(u64::from(limits.max_parts()));
            (
                options.part_size,
                (full / 10 * 9).min(limits.max_object_size()),
            )
        }
    };
    let largest_read = part_size.saturating_add(1);
    if largest_read > budget {
        return Err(budget_error(TooLarge {
            needed: largest_read,
            capacity: budget,
        }));
    }
    let bounded = PartLimits::new(
        limits.min_part_size(),
        largest_part,
        limits.max_parts(),
        max_object,
    )
    .map_err(plan_error)?;
    multipart_options(&TransferOptions {
        part_size,
        limits: bounded,
        ..*options
    })
}

pub(crate) fn budget_error(too_large: TooLarge) -> Error {
    Error::transfer_error(TransferErrorKind::MemoryBudget {
        needed: too_large.needed,
        capacity: too_large.capacity,
    })
}

pub(crate) fn read_error(error: std::io::Error) -> Error {
    Error::request_body("reading the upload's source failed").with_source(error)
}

pub(crate) fn length_error(announced: u64, actual: u64) -> Error {
    Error::transfer_error(TransferErrorKind::SourceLength { announced, actual })
}

/// Whether a file of `len` bytes is read whole for one PutObject (`whole_limit` is the most
/// such a file may hold, `None` when the upload must go in parts).
fn read_whole(len: u64, whole_limit: Option<u64>) -> bool {
    whole_limit.is_some_and(|limit| len <= limit)
}

/// A source file opened for an upload, with the whole of it when [`open`] read it too.
struct Opened {
    file: Arc<std::fs::File>,
    fingerprint: Fingerprint,
    whole: Option<Whole>,
}

/// Opens the source file. One of at most `whole_limit` bytes is also read whole in the same
/// job on the blocking pool, if the budget admits its size without waiting; otherwise
/// [`read_whole_later`] reads it once the memory is free.
async fn open(
    path: &std::path::Path,
    budget: &Arc<crate::memory::MemoryBudget>,
    whole_limit: Option<u64>,
) -> Result<Opened, Error> {
    let owned = path.to_path_buf();
    let budget = budget.clone();
    let opened = tokio::task::spawn_blocking(move || {
        let file = std::fs::File::open(&owned)?;
        let fingerprint = Fingerprint::of(&file.metadata()?)?;
        let whole = if read_whole(fingerprint.len, whole_limit) {
            budget
                .try_admit(fingerprint.len)
                .map(|admission| Whole::read(&file, fingerprint.len, admission))
        } else {
            None
        };
        Ok::<_, std::io::Error>((file, fingerprint, whole))
    })
    .await
    .map_err(|e| Error::request_body(format!("file open task failed: {e}")))?;
    let (file, fingerprint, whole) = opened.map_err(|e| {
        Error::request_body(format!("cannot open {}", path.display())).with_source(e)
    })?;
    Ok(Opened {
        file: Arc::new(file),
        fingerprint,
        whole: whole.transpose().map_err(read_error)?,
    })
}

/// The file's fingerprint now, or why the file is not the one the upload started with.
pub(crate) async fn check_unchanged(
    file: &Arc<std::fs::File>,
    path: &std::path::Path,
    started: Fingerprint,
) -> Result<(), Error> {
    let file = file.clone();
    let now = tokio::task::spawn_blocking(move || Fingerprint::of(&file.metadata()?))
        .await
        .map_err(|e| Error::request_body(format!("file metadata task failed: {e}")))?
        .map_err(Error::io)?;
    unchanged(path, started, &now)
}

/// Whether the file's fingerprint `now` is still the one the upload `started` with.
fn unchanged(path: &std::path::Path, started: Fingerprint, now: &Fingerprint) -> Result<(), Error> {
    match started.difference(now) {
        None => Ok(()),
        Some(what) => Err(Error::transfer_error(TransferErrorKind::SourceChanged(
            format!("{} changed while it was uploaded: {what}", path.display()),
        ))),
    }
}

/// The whole of a small file read into memory admitted for it, with the file's fingerprint
/// after the read.
struct Whole {
    data: Bytes,
    after: Fingerprint,
    admission: Admission,
}

impl Whole {
    /// Reads the first `len` bytes of `file` (on the blocking pool), then its fingerprint.
    fn read(file: &std::fs::File, len: u64, admission: Admission) -> std::io::Result<Whole> {
        let data = crate::body::read_at(file, 0, len as usize)?;
        let after = Fingerprint::of(&file.metadata()?)?;
        Ok(Whole {
            data,
            after,
            admission,
        })
    }

    /// The bytes, if they are a consistent snapshot of the file as it was opened: it did not
    /// change meanwhile and was not shorter, so one PutObject can never store mixed bytes.
    fn snapshot(
        self,
        path: &std::path::Path,
        opened: Fingerprint,
    ) -> Result<(Bytes, Admission), Error> {
        unchanged(path, opened, &self.after)?;
        if self.data.len() as u64 != opened.len {
            return Err(Error::transfer_error(TransferErrorKind::SourceChanged(
                format!("{} is shorter than when it was opened", path.display()),
            )));
        }
        Ok((self.data, self.admission))
    }
}

/// The whole (small) file, read once the budget admits its `len` bytes.
async fn read_whole_later(
    budget: &Arc<crate::memory::MemoryBudget>,
    file: &Arc<std::fs::File>,
    len: u64,
) -> Result<Whole, Error> {
    let admission = budget.admit(len).await.map_err(budget_error)?;
    let file = file.clone();
    tokio::task::spawn_blocking(move || Whole::read(&file, len, admission))
        .await
        .map_err(|e| Error::request_body(format!("file read task failed: {e}")))?
        .map_err(read_error)
}

/// One PutObject of `data` (in memory, so it is replayable, and checksummed and hashed once,
/// in one pass, off the runtime's thread when it is large).
async fn put_whole(
    target: &Target,
    data: Pieces,
    control: &Control,
) -> Result<UploadOutput, Error> {
    let len = data.len();
    target.progress.set_total(len);
    let fail = |error: Error| target.failed(error, None, Cleanup::Nothing);
    if control.is_cancelled() {
        return Err(fail(Error::transfer_error(TransferErrorKind::Cancelled)));
    }
    let digests = target
        .client
        .upload_digests(target.single_request_algorithm);
    let (sha256, checksum) = digest_bytes(data.as_slice(), digests).await.map_err(fail)?;
    let mut put = PutObject::new(target.bucket.clone(), target.key.clone())
        .attributes(target.attributes.clone());
    if target.create_only {
        put = put.if_none_match_any();
    }
    put = match &checksum {
        Some(checksum) => put.checksum(checksum.clone()),
        None => put.no_checksum(),
    };
    let part = PartProgress::new(target.progress.clone());
    let mut body = Body::from_pieces(data).with_progress(part.clone());
    body.sha256 = sha256;
    let stored = match target.client.put_object(put, body).await {
        Ok(output) => {
            let echoed = checksum
                .as_ref()
                .and_then(|c| output.checksums.get(c.algorithm()).map(str::to_owned));
            (output.etag, output.version_id, echoed)
        }
        Err(error)
            if target.create_only
                && error.is_precondition_failed()
                && integrity::may_have_taken_effect(&error) =>
        {
            // A retry after a lost answer found "an object exists": maybe ours.
            let expected = Expected {
                bucket: &target.bucket,
                key: &target.key,
                size: len,
                etag: None,
                parts: None,
                checksum: checksum.as_ref(),
                sse_customer_key: target.sse_customer_key(),
            };
            match integrity::stored_object_matches(&target.client, &expected).await {
                Ok(Some(head)) => {
                    let echoed = checksum
                        .as_ref()
                        .and_then(|c| head.checksums.get(c.algorithm()).map(str::to_owned));
                    (head.etag, head.version_id, echoed)
                }
                _ => {
                    part.abandon();
                    return Err(fail(error));
                }
            }
        }
        Err(error) => {
            part.abandon();
            return Err(fail(error));
        }
    };
    part.commit(len);
    let (etag, version_id, echoed) = stored;
    let verification = verify_echo(checksum.as_ref(), echoed.as_deref()).map_err(fail)?;
    Ok(UploadOutput {
        size: len,
        etag,
        version_id,
        upload_id: None,
        parts: None,
        resumed_parts: 0,
        checksum,
        verification,
        possible_orphan: None,
    })
}

/// What the store's answer says about the checksum sent.
pub(crate) fn verify_echo(
    sent: Option<&Checksum>,
    echoed: Option<&str>,
) -> Result<Verification, Error> {
    match (sent, echoed) {
        (None, _) => Ok(Verification::NotVerified(NotVerified::Disabled)),
        (Some(_), None) => Ok(Verification::NotVerified(NotVerified::StoreSentNone)),
        (Some(sent), Some(echoed)) if echoed == sent.to_base64() => {
            Ok(Verification::FullObject(sent.clone()))
        }
        (Some(sent), Some(echoed)) => Err(Error::transfer_error(TransferErrorKind::Inconsistent(
            format!(
                "the store reports {} {echoed} for the object, this client sent {}",
                sent.algorithm(),
                sent.to_base64()
            ),
        ))),
    }
}

/// Continues the upload of `journal` if it holds one of this file to this key, else starts
/// a new one that keeps the journal.
async fn resume_or_start(
    target: Arc<Target>,
    control: Arc<Control>,
    parts: Parts,
    options: &TransferOptions,
    path: PathBuf,
) -> Result<UploadOutput, Error> {
    let Parts::File {
        file, fingerprint, ..
    } = &parts
    else {
        unreachable!("journals are for file sources")
    };
    let (file, fingerprint) = (file.clone(), *fingerprint);
    let fail = |error: Error| target.failed(error, None, Cleanup::Nothing);
    let header = Header {
        bucket: target.bucket.as_str().to_owned(),
        key: target.key.as_str().to_owned(),
        source: fingerprint,
        algorithm: target.algorithm,
    };
    let multipart = multipart_options(options).map_err(fail)?;
    let journal = JournalWriter::new(path.clone(), header.clone());
    let Some((recorded, snapshot)) = journal::load(&path).await.map_err(fail)? else {
        let scheduler =
            UploadScheduler::new(fingerprint.len, &multipart).map_err(|e| fail(plan_error(e)))?;
        return Driver::new(target, control, scheduler, parts, None)
            .with_journal(journal)
            .run()
            .await;
    };
    let object = format!("s3://{}/{}", recorded.bucket, recorded.key);
    if recorded.bucket != header.bucket || recorded.key != header.key {
        return Err(fail(Error::transfer_error(TransferErrorKind::Journal(
            format!("{} is the journal of an upload to {object}", path.display()),
        ))));
    }
    if let Some(what) = recorded.source.difference(&fingerprint) {
        return Err(fail(Error::transfer_error(
            TransferErrorKind::SourceChanged(format!(
                "the file changed since the journal {} was written ({what}); remove the \
                 journal to upload it from the start",
                path.display()
            )),
        )));
    }
    if recorded.algorithm != target.algorithm {
        return Err(fail(Error::transfer_error(TransferErrorKind::Journal(
            "the journal's upload uses another checksum algorithm".to_owned(),
        ))));
    }
    let upload_id = snapshot.upload_id().to_owned();
    let listed = match list_parts(&target, &upload_id, recorded.algorithm).await {
        Ok(listed) => listed,
        Err(error)
            if error
                .service_error()
                .is_some_and(|e| e.code == "NoSuchUpload") =>
        {
            // Nothing left to continue: upload from the start, with a fresh journal.
            journal::remove(&path).await.map_err(fail)?;
            let scheduler = UploadScheduler::new(fingerprint.len, &multipart)
                .map_err(|e| fail(plan_error(e)))?;
            return Driver::new(target, control, scheduler, parts, None)
                .with_journal(journal)
                .run()
                .await;
        }
        Err(error) => return Err(target.failed(error, Some(upload_id), Cleanup::Nothing)),
    };
    let reconciled = snapshot
        .reconcile(&listed, multipart.limits())
        .map_err(|e| {
            fail(Error::transfer_error(TransferErrorKind::Journal(
                e.to_string(),
            )))
        })?;
    // Keep only the parts whose bytes in the file still have the checksum the store has.
    let snapshot = reconciled.snapshot;
    let mut verified = Vec::with_capacity(snapshot.parts().len());
    for part in snapshot.parts() {
        if part_matches_file(&file, &snapshot, part, recorded.algorithm).await? {
            verified.push(part.clone());
        }
    }
    let resumed_bytes: u64 = verified.iter().map(|part| part.size).sum();
    let resumed_parts = verified.len() as u32;
    let snapshot = UploadSnapshot::new(
        upload_id,
        snapshot.object_size(),
        snapshot.part_size(),
        verified,
    );
    let scheduler =
        UploadScheduler::resume(&snapshot, &multipart).map_err(|e| fail(plan_error(e)))?;
    target.progress.commit_existing(resumed_bytes);
    let mut driver = Driver::new(target, control, scheduler, parts, None).with_journal(journal);
    driver.resumed_parts = resumed_parts;
    driver.run().await
}

/// Every part the store lists for `upload_id`, as receipts.
async fn list_parts(
    target: &Target,
    upload_id: &str,
    algorithm: Option<ChecksumAlgorithm>,
) -> Result<Vec<CompletedPart<Receipt>>, Error> {
    let mut request = ListParts::new(target.bucket.clone(), target.key.clone(), upload_id);
    if let Some(key) = target.sse_customer_key() {
        request = request.sse_customer_key(key.clone());
    }
    let mut pages = target.client.list_parts_pages(request);
    let mut listed = Vec::new();
    while let Some(page) = pages.next_page().await {
        for part in page?.result.parts {
            let checksum = match algorithm.and_then(|a| Checksum::from_xml(&part.checksums, a)) {
                Some(parsed) => Some(parsed.map_err(Error::from)?),
                None => None,
            };
            listed.push(CompletedPart {
                number: part.part_number,
                size: part.size,
                receipt: Receipt {
                    etag: part.etag,
                    checksum,
                },
            });
        }
    }
    Ok(listed)
}

/// Whether the file's bytes of `part` still have the part's recorded checksum. Without a
/// checksum (checksums off) the part is trusted on the file's unchanged fingerprint.
async fn part_matches_file(
    file: &Arc<std::fs::File>,
    snapshot: &UploadSnapshot<Receipt>,
    part: &CompletedPart<Receipt>,
    algorithm: Option<ChecksumAlgorithm>,
) -> Result<bool, Error> {
    let Some(algorithm) = algorithm else {
        return Ok(true);
    };
    let Some(recorded) = part.receipt.checksum.clone() else {
        return Ok(false);
    };
    let offset = u64::from(part.number - 1) * snapshot.part_size();
    let (file, len) = (file.clone(), part.size);
    let computed = tokio::task::spawn_blocking(move || {
        let mut buffer = vec![0u8; len.clamp(1, 1 << 20) as usize];
        match crate::body::checksum_at(&file, offset..offset + len, algorithm, &mut buffer) {
            // A file now shorter than the part does not hold it.
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            result => result.map(Some),
        }
    })
    .await
    .map_err(|e| Error::request_body(format!("file read task failed: {e}")))?
    .map_err(|e| Error::request_body("reading the file failed").with_source(e))?;
    Ok(computed == Some(recorded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use s3_multipart_plan::{MIB, StreamPlan};

    const GIB: u64 = 1 << 30;
    const TIB: u64 = 1 << 40;

    fn largest_stream(budget: u64) -> u64 {
        let options = stream_options(&TransferOptions::default(), None, budget).unwrap();
        StreamPlan::new(&options).maximum_stream_size()
    }

    #[test]
    fn a_stream_of_unknown_length_grows_its_parts_late_and_never_past_the_budget() {
        let options = stream_options(&TransferOptions::default(), None, 64 * MIB).unwrap();
        let plan = StreamPlan::new(&options);
        assert_eq!(plan.part_size(1), 8 * MIB);
        // The first 3.7 GiB go in 8 MiB parts...
        assert!(plan.doubling_interval() >= 470, "{plan:?}");
        // ... and no part outgrows the budget (one byte under it: the last read asks one more).
        assert!(plan.part_size(10_000) < 64 * MIB);
        // No fixed ceiling: the budget sets it (90% of 10,000 parts at the budget).
        assert!((560 * GIB..565 * GIB).contains(&largest_stream(64 * MIB)));
        assert_eq!(largest_stream(600 * MIB), 5 * TIB);
        assert_eq!(largest_stream(6 * GIB), 5 * TIB);
    }

    #[test]
    fn a_stream_of_announced_length_gets_uniform_parts_or_a_clear_refusal() {
        let options =
            stream_options(&TransferOptions::default(), Some(18 * MIB), 64 * MIB).unwrap();
        let plan = StreamPlan::new(&options);
        assert_eq!((plan.part_size(1), plan.part_size(3)), (8 * MIB, 8 * MIB));
        assert_eq!(
            plan.maximum_stream_size(),
            18 * MIB,
            "one byte more is too long"
        );
        // 1 TiB in 10,000 parts needs 105 MiB parts: more than a 64 MiB budget allows.
        let error = stream_options(&TransferOptions::default(), Some(TIB), 64 * MIB).unwrap_err();
        assert!(
            matches!(
                error.kind(),
                crate::ErrorKind::Transfer(TransferErrorKind::TooLarge { .. })
            ),
            "{error:?}"
        );
        let roomy = stream_options(&TransferOptions::default(), Some(TIB), GIB).unwrap();
        assert_eq!(roomy.part_size(), 105 * MIB);
        // A part size above the budget is refused before anything is read.
        let big_parts = TransferOptions {
            part_size: 64 * MIB,
            ..TransferOptions::default()
        };
        let error = stream_options(&big_parts, None, 64 * MIB).unwrap_err();
        assert!(
            matches!(
                error.kind(),
                crate::ErrorKind::Transfer(TransferErrorKind::MemoryBudget { .. })
            ),
            "{error:?}"
        );
    }
}

//! Multipart uploads: [`S3WireUpload`] (`ObjectStore::put_multipart_opts`) and the pieces
//! `MultipartStore` shares with it.
//!
//! Every part carries the upload's CRC (CRC32 by default) and the completion the CRC of the
//! whole object, combined here from the parts, which the store checks against the assembled
//! object: the same integrity as s3-wire's managed uploads. A part's bytes are admitted
//! against the client's memory budget (`ClientBuilder::transfer_memory`) before its request
//! is sent, in turn with the client's managed transfers.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::object_store;

use object_store::path::Path;
use object_store::{MultipartUpload, PutPayload, PutResult, UploadPart as UploadPartFuture};
use s3_wire_tokio::s3_ops::ops::abort_multipart_upload::AbortMultipartUpload;
use s3_wire_tokio::s3_ops::ops::complete_multipart_upload::CompleteMultipartUpload;
use s3_wire_tokio::s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
use s3_wire_tokio::s3_ops::ops::upload_part::UploadPart;
use s3_wire_tokio::s3_ops::{
    BucketName, Checksum, ChecksumAlgorithm, ChecksumType, Checksummer, CompletedPart, ETag,
    ObjectAttributes, ObjectKey,
};
use s3_wire_tokio::{Body, Client};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use super::error::{self, generic};
use super::put_result;
use crate::AdapterError;

/// One multipart upload's target: where it goes and with which checksum.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) client: Client,
    pub(crate) bucket: BucketName,
    pub(crate) key: ObjectKey,
    pub(crate) location: Path,
    pub(crate) upload_id: String,
    pub(crate) algorithm: Option<ChecksumAlgorithm>,
}

/// What a stored part is known by: enough to complete the upload and to combine its checksum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Receipt {
    pub(crate) number: u32,
    pub(crate) etag: ETag,
    pub(crate) checksum: Option<Checksum>,
    pub(crate) size: u64,
}

/// The checksum type of an upload with `algorithm`: full-object for the CRCs (their part
/// values combine), composite for the hashes.
fn checksum_type(algorithm: ChecksumAlgorithm) -> ChecksumType {
    match algorithm {
        ChecksumAlgorithm::Sha1 | ChecksumAlgorithm::Sha256 => ChecksumType::Composite,
        _ => ChecksumType::FullObject,
    }
}

/// CreateMultipartUpload for `location` with `attributes`; returns the upload id.
pub(crate) async fn create(
    client: &Client,
    bucket: &BucketName,
    key: &ObjectKey,
    location: &Path,
    attributes: ObjectAttributes,
    algorithm: Option<ChecksumAlgorithm>,
) -> Result<String, object_store::Error> {
    let mut create = CreateMultipartUpload::new(bucket.clone(), key.clone()).attributes(attributes);
    if let Some(algorithm) = algorithm {
        create = create
            .checksum_algorithm(algorithm)
            .checksum_type(checksum_type(algorithm));
    }
    let created = client
        .create_multipart_upload(create)
        .await
        .map_err(|e| error::map(e, "CreateMultipartUpload", location.as_ref()))?;
    Ok(created.upload_id)
}

/// Uploads `payload` as part `number`, its bytes admitted against the client's memory budget
/// while the request runs. A part larger than the whole budget waits until it has the whole
/// budget to itself (refusing it would make such parts impossible, not smaller).
pub(crate) async fn upload_part(
    target: &Target,
    number: u32,
    payload: PutPayload,
) -> Result<Receipt, object_store::Error> {
    let size = payload.content_length() as u64;
    let capacity = target.client.transfer_memory().capacity;
    let _held = target
        .client
        .reserve_transfer_memory(size.min(capacity))
        .await
        .map_err(generic)?;
    // Sent in the pieces it came in: joining them would copy every byte once more.
    let mut request = UploadPart::new(
        target.bucket.clone(),
        target.key.clone(),
        target.upload_id.clone(),
        number,
    );
    let checksum = target.algorithm.map(|algorithm| {
        let mut checksummer = Checksummer::new(algorithm);
        payload.iter().for_each(|piece| checksummer.update(piece));
        checksummer.finish()
    });
    request = match &checksum {
        Some(checksum) => request.checksum(checksum.clone()),
        None => request.no_checksum(),
    };
    let output = target
        .client
        .upload_part(request, Body::from_chunks(payload))
        .await
        .map_err(|e| error::map(e, "UploadPart", target.location.as_ref()))?;
    let etag = output
        .etag
        .ok_or_else(|| generic(AdapterError::Incomplete("the part's ETag")))?;
    Ok(Receipt {
        number,
        etag,
        checksum,
        size,
    })
}

/// CompleteMultipartUpload with `receipts` (any order); an upload without parts gets one
/// empty part first, as S3 completes none without.
pub(crate) async fn complete(
    target: &Target,
    mut receipts: Vec<Receipt>,
) -> Result<PutResult, object_store::Error> {
    if receipts.is_empty() {
        receipts.push(upload_part(target, 1, PutPayload::new()).await?);
    }
    receipts.sort_by_key(|receipt| receipt.number);
    let size = receipts.iter().map(|receipt| receipt.size).sum();
    let listed = receipts
        .iter()
        .map(|receipt| {
            let part = CompletedPart::new(receipt.number, receipt.etag.clone());
            match &receipt.checksum {
                Some(checksum) => part.with_checksums(checksum.into()),
                None => part,
            }
        })
        .collect();
    let mut request = CompleteMultipartUpload::new(
        target.bucket.clone(),
        target.key.clone(),
        target.upload_id.clone(),
        listed,
    )
    .object_size(size);
    if let Some(algorithm) = target.algorithm {
        let kind = checksum_type(algorithm);
        request = request.checksum_type(kind);
        if kind == ChecksumType::FullObject
            && let Some(whole) = combined(&receipts)
        {
            request = request.full_object_checksum(whole);
        }
    }
    let output = target
        .client
        .complete_multipart_upload(request)
        .await
        .map_err(|e| error::map(e, "CompleteMultipartUpload", target.location.as_ref()))?;
    Ok(put_result(
        output.result.etag.map(|etag| etag.as_str().to_owned()),
        output.version_id,
    ))
}

/// The CRC of the whole object from its parts' CRCs (in part order), if every part has one.
fn combined(receipts: &[Receipt]) -> Option<Checksum> {
    let mut parts = receipts.iter();
    let first = parts.next()?.checksum.clone()?;
    parts.try_fold(first, |whole, part| {
        whole.combine(part.checksum.as_ref()?, part.size)
    })
}

/// AbortMultipartUpload; an upload the store no longer knows is gone already.
pub(crate) async fn abort(target: &Target) -> Result<(), object_store::Error> {
    let request = AbortMultipartUpload::new(
        target.bucket.clone(),
        target.key.clone(),
        target.upload_id.clone(),
    );
    match target.client.abort_multipart_upload(request).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(error::map(
            e,
            "AbortMultipartUpload",
            target.location.as_ref(),
        )),
    }
}

/// A `MultipartId`'s `PartId` content: `<number> <size> <etag> [<checksum algorithm> <value>]`,
/// everything CompleteMultipartUpload and the checksum combination need.
pub(crate) fn encode_part_id(receipt: &Receipt) -> String {
    let mut id = format!(
        "{} {} {}",
        receipt.number,
        receipt.size,
        receipt.etag.as_str()
    );
    if let Some(checksum) = &receipt.checksum {
        id.push_str(&format!(
            " {} {}",
            checksum.algorithm(),
            checksum.to_base64()
        ));
    }
    id
}

pub(crate) fn decode_part_id(id: &str) -> Result<Receipt, object_store::Error> {
    let invalid = || generic(AdapterError::InvalidPartId(id.to_owned()));
    let fields: Vec<&str> = id.split(' ').collect();
    let (number, size, etag, checksum) = match fields.as_slice() {
        [number, size, etag] => (number, size, etag, None),
        [number, size, etag, algorithm, value] => (number, size, etag, Some((algorithm, value))),
        _ => return Err(invalid()),
    };
    let checksum = match checksum {
        Some((algorithm, value)) => {
            let algorithm: ChecksumAlgorithm = algorithm.parse().map_err(|_| invalid())?;
            Some(Checksum::from_base64(algorithm, value).map_err(|_| invalid())?)
        }
        None => None,
    };
    Ok(Receipt {
        number: number.parse().map_err(|_| invalid())?,
        size: size.parse().map_err(|_| invalid())?,
        etag: ETag::parse(etag).map_err(|_| invalid())?,
        checksum,
    })
}

/// How a part of an [`S3WireUpload`] ended, for the `put_part` future that waits for it.
type PartOutcome = Result<(), String>;

/// What the part tasks of an upload share with it.
#[derive(Debug, Default)]
struct Stored {
    receipts: BTreeMap<u32, Receipt>,
    /// The first failure (by part number), kept for `complete`.
    failed: Option<(u32, object_store::Error)>,
}

/// The `MultipartUpload` of [`S3WireStore`](crate::S3WireStore)'s `put_multipart_opts`.
///
/// Each `put_part` takes the next part number at once (parts keep the order of the calls,
/// whichever future is awaited first) and starts the part's upload as a task of its own, so
/// parts upload in parallel whether or not their futures are polled; the bytes in flight over
/// all parts and uploads of the client stay within its memory budget. `complete` waits for
/// every part started and completes the upload with the whole object's CRC; `abort` stops the
/// parts in flight and aborts the upload. Dropped before either, the upload is aborted in the
/// background (its parts in flight are stopped first).
#[derive(Debug)]
pub struct S3WireUpload {
    target: Arc<Target>,
    next_part: u32,
    parts: JoinSet<()>,
    stored: Arc<Mutex<Stored>>,
    /// Completed or aborted: nothing to clean up on drop.
    ended: bool,
}

impl S3WireUpload {
    pub(crate) fn new(target: Target) -> Self {
        Self {
            target: Arc::new(target),
            next_part: 1,
            parts: JoinSet::new(),
            stored: Arc::default(),
            ended: false,
        }
    }

    /// The multipart upload's id at the store.
    pub fn upload_id(&self) -> &str {
        &self.target.upload_id
    }

    /// Waits for every part started so far.
    async fn settle(&mut self) {
        while let Some(joined) = self.parts.join_next().await {
            if let Err(join) = joined
                && join.is_panic()
            {
                std::panic::resume_unwind(join.into_panic());
            }
        }
    }
}

#[async_trait]
impl MultipartUpload for S3WireUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPartFuture {
        if self.ended {
            let ended = AdapterError::UploadEnded("put_part after complete or abort".into());
            return Box::pin(async move { Err(generic(ended)) });
        }
        let number = self.next_part;
        self.next_part += 1;
        let (tell, told) = oneshot::channel::<PartOutcome>();
        let (target, stored) = (self.target.clone(), self.stored.clone());
        let task = async move {
            let outcome = match upload_part(&target, number, data).await {
                Ok(receipt) => {
                    lock(&stored).receipts.insert(number, receipt);
                    Ok(())
                }
                Err(error) => {
                    let message = error.to_string();
                    let mut stored = lock(&stored);
                    if stored.failed.as_ref().is_none_or(|(n, _)| number < *n) {
                        stored.failed = Some((number, error));
                    }
                    Err(message)
                }
            };
            let _ = tell.send(outcome);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                self.parts.spawn_on(task, &runtime);
            }
            Err(_) => return Box::pin(async { Err(generic(AdapterError::NoRuntime)) }),
        }
        Box::pin(async move {
            match told.await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(message)) => Err(generic(AdapterError::UploadEnded(format!(
                    "part {number} failed ({message}); complete() returns its error"
                )))),
                Err(_) => Err(generic(AdapterError::UploadEnded(format!(
                    "part {number} was stopped by abort() or by dropping the upload"
                )))),
            }
        })
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        if self.ended {
            return Err(generic(AdapterError::UploadEnded(
                "completed or aborted already".into(),
            )));
        }
        self.settle().await;
        let receipts = {
            let mut stored = lock(&self.stored);
            if let Some((_, error)) = stored.failed.take() {
                // The upload stays open: abort() (or dropping it) cleans it up.
                return Err(error);
            }
            stored.receipts.values().cloned().collect()
        };
        let result = complete(&self.target, receipts).await?;
        self.ended = true;
        Ok(result)
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        if self.ended {
            return Ok(());
        }
        // Stop the parts first, so none is stored after the abort.
        self.parts.abort_all();
        self.settle().await;
        abort(&self.target).await?;
        self.ended = true;
        Ok(())
    }
}

impl Drop for S3WireUpload {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        self.parts.abort_all();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // Nothing can send the abort: the upload stays until a lifecycle rule (or
            // s3-wire's `Client::abort_stale_uploads`) removes it.
            return;
        };
        let target = self.target.clone();
        let mut parts = std::mem::take(&mut self.parts);
        runtime.spawn(async move {
            // The aborted part tasks end at their next await; then no part can land after
            // the abort.
            while parts.join_next().await.is_some() {}
            let _ = abort(&target).await;
        });
    }
}

fn lock(stored: &Mutex<Stored>) -> std::sync::MutexGuard<'_, Stored> {
    stored
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_ids_round_trip() {
        let receipt = Receipt {
            number: 7,
            etag: ETag::parse("\"abc-1\"").unwrap(),
            checksum: Some(ChecksumAlgorithm::Crc32.checksum(b"part")),
            size: 4,
        };
        assert_eq!(decode_part_id(&encode_part_id(&receipt)).unwrap(), receipt);
        let plain = Receipt {
            checksum: None,
            ..receipt
        };
        assert_eq!(decode_part_id(&encode_part_id(&plain)).unwrap(), plain);
        assert!(decode_part_id("not a part").is_err());
    }

    #[test]
    fn the_whole_crc_is_combined_from_the_parts() {
        let (a, b) = (b"hello ".as_slice(), b"world".as_slice());
        let receipt = |number, data: &[u8]| Receipt {
            number,
            etag: ETag::parse("\"e\"").unwrap(),
            checksum: Some(ChecksumAlgorithm::Crc32.checksum(data)),
            size: data.len() as u64,
        };
        assert_eq!(
            combined(&[receipt(1, a), receipt(2, b)]),
            Some(ChecksumAlgorithm::Crc32.checksum(b"hello world"))
        );
    }
}

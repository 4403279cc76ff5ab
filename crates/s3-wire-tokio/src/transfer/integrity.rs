//! End-to-end integrity of managed transfers: what was verified and how, the full-object
//! checksum of a multipart object from its parts, and how an ambiguous completion is
//! resolved (the answer was lost; did the object get stored?).

use s3_ops::ops::head_object::{HeadObject, ObjectHead};
use s3_ops::{BucketName, Checksum, ChecksumAlgorithm, ChecksumType, ObjectKey, SseCustomerKey};
use s3_xml::ETag;

use crate::client::Client;
use crate::error::Error;

/// The checksum type of a multipart upload with `algorithm`: full-object for the CRCs (the
/// client combines the part values, and the store checks the whole object against it),
/// composite for the hashes (which cannot be combined).
pub(crate) fn checksum_type(algorithm: ChecksumAlgorithm) -> ChecksumType {
    match algorithm {
        ChecksumAlgorithm::Sha1 | ChecksumAlgorithm::Sha256 => ChecksumType::Composite,
        _ => ChecksumType::FullObject,
    }
}

/// Whether checksums of pieces of `algorithm` combine into the checksum of the whole (the
/// CRCs; not the hashes).
pub(crate) fn combinable(algorithm: ChecksumAlgorithm) -> bool {
    checksum_type(algorithm) == ChecksumType::FullObject
}

/// The object's checksum from its parts' checksums and sizes, in part order: the combined
/// CRC (full object), or `None` for the hashes.
pub(crate) fn combine<'a>(
    mut parts: impl Iterator<Item = (&'a Checksum, u64)>,
) -> Option<Checksum> {
    let (first, _) = parts.next()?;
    parts.try_fold(first.clone(), |whole, (next, len)| whole.combine(next, len))
}

/// What is known about a multipart object a lost answer may or may not have completed.
pub(crate) struct Expected<'a> {
    pub(crate) bucket: &'a BucketName,
    pub(crate) key: &'a ObjectKey,
    pub(crate) size: u64,
    /// ETag the store would give it (S3's rule for MD5 part ETags), when predictable.
    pub(crate) etag: Option<ETag>,
    /// ETag suffix `-N` for a multipart object; `None` for a single PutObject.
    pub(crate) parts: Option<u32>,
    pub(crate) checksum: Option<&'a Checksum>,
    pub(crate) sse_customer_key: Option<&'a SseCustomerKey>,
}

/// True if a failed completion (CompleteMultipartUpload, a create-only PutObject, a
/// CopyObject) may have taken effect: an attempt's answer was lost, or the store no longer
/// knows the upload (`NoSuchUpload`; s3s-fs answers `AccessDenied`), which is what a retry
/// after a lost success answers.
pub(crate) fn may_have_taken_effect(error: &Error) -> bool {
    error.outcome_unknown()
        || error
            .service_error()
            .is_some_and(|service| matches!(service.code.as_str(), "NoSuchUpload" | "AccessDenied"))
}

/// Whether the object under the key is the one this transfer wrote: HEAD it (checksum mode)
/// and compare the size, the ETag (exactly when it is predictable, else its `-N` suffix) and
/// the full-object checksum. A checksum match is required when one was sent; without one,
/// only a predicted ETag is proof enough. Returns the head when it matches.
pub(crate) async fn stored_object_matches(
    client: &Client,
    expected: &Expected<'_>,
) -> Result<Option<ObjectHead>, Error> {
    let mut head =
        HeadObject::new(expected.bucket.clone(), expected.key.clone()).checksum_mode(true);
    if let Some(key) = expected.sse_customer_key {
        head = head.sse_customer_key(key.clone());
    }
    let head = match client.head_object(head).await {
        Ok(head) => head,
        Err(error) if error.is_not_found() => return Ok(None),
        Err(error) => return Err(error),
    };
    if head.content_length != Some(expected.size) {
        return Ok(None);
    }
    let Some(etag) = &head.etag else {
        return Ok(None);
    };
    let suffix_matches = match expected.parts {
        Some(parts) => etag.unquoted().ends_with(&format!("-{parts}")),
        None => !etag.unquoted().contains('-'),
    };
    if !suffix_matches {
        return Ok(None);
    }
    let etag_proves = expected
        .etag
        .as_ref()
        .is_some_and(|predicted| predicted.unquoted() == etag.unquoted());
    let matches = match expected.checksum {
        Some(checksum) => {
            let stored = head.checksums.get(checksum.algorithm());
            match stored {
                Some(value) => value == checksum.to_base64(),
                // The store keeps no checksum: the predicted ETag must prove it.
                None => etag_proves,
            }
        }
        None => etag_proves,
    };
    Ok(matches.then_some(head))
}

//! End-to-end integrity of managed transfers: what was verified and how, the full-object
//! checksum of a multipart object from its parts, and how an ambiguous completion is
//! resolved (the answer was lost; did the object get stored?).

use std::fmt;

use s3_ops::ops::head_object::{HeadObject, ObjectHead};
use s3_ops::{BucketName, Checksum, ChecksumAlgorithm, ChecksumType, ObjectKey, SseCustomerKey};
use s3_xml::ETag;

use crate::client::Client;
use crate::error::Error;

/// How the bytes of a transfer were checked end to end, in its output.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verification {
    /// The whole object's checksum was computed here and the other side agreed: for an
    /// upload or copy, the store accepted it and reported the same value; for a download,
    /// the bytes that arrived have the store's full-object checksum.
    FullObject(Checksum),
    /// Each part's checksum was checked against the store's value for that part (a
    /// multipart object with a composite checksum), and the composite value too.
    PerPart {
        /// The algorithm.
        algorithm: ChecksumAlgorithm,
        /// The parts checked.
        parts: u32,
    },
    /// Nothing end to end; the reason says why.
    NotVerified(NotVerified),
}

/// Why a transfer could not be verified end to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotVerified {
    /// Checksums were turned off for this transfer.
    Disabled,
    /// The store returned no checksum to compare with (for an upload: it did not confirm the
    /// value sent, although it may have checked it).
    StoreSentNone,
    /// The object has a composite (checksum-of-checksums) value, and its parts could not be
    /// fetched one by one to check them (non-uniform parts, or the store ignores
    /// `partNumber`).
    CompositeNotByParts,
    /// The store's checksum uses another algorithm than the one computed here.
    OtherAlgorithm,
}

impl fmt::Display for Verification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FullObject(checksum) => write!(
                f,
                "verified: full-object {} {}",
                checksum.algorithm(),
                checksum.to_base64()
            ),
            Self::PerPart { algorithm, parts } => {
                write!(f, "verified: {algorithm} of each of {parts} parts")
            }
            Self::NotVerified(why) => write!(f, "not verified: {why}"),
        }
    }
}

impl fmt::Display for NotVerified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Disabled => "checksums are off for this transfer",
            Self::StoreSentNone => "the store returned no checksum to compare with",
            Self::CompositeNotByParts => {
                "the object's composite checksum could not be checked part by part"
            }
            Self::OtherAlgorithm => "the store's checksum uses another algorithm",
        })
    }
}

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

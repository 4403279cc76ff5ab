//! The object's part layout, where its checksums are per part: what the first answer
//! announced, uniform part sizes, the parts GetObjectAttributes lists.

use s3_ops::ops::get_object_attributes::{GetObjectAttributes, ObjectAttributeKind};
use s3_ops::ops::head_object::HeadObject;
use s3_ops::{Checksum, ChecksumAlgorithm, ChecksumType};

use super::Pinned;
use crate::error::Error;

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
pub(super) fn announced(checksums: &s3_ops::checksum::ResponseChecksums) -> Option<Announced> {
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
pub(super) async fn uniform_part_size(
    pinned: &Pinned,
    size: u64,
    parts: u32,
) -> Result<Option<u64>, Error> {
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
pub(super) async fn listed_parts(
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
}

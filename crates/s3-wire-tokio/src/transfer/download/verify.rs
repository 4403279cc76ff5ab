//! What a finished download verified: each range or part against the store's checksum,
//! or the whole file hashed again.

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

use s3_ops::{Checksum, ChecksumAlgorithm};

use super::Mode;
use super::file::TempFile;
use super::parts::Announced;
use crate::error::Error;
use crate::transfer::integrity;
use crate::verification::{NotVerified, Verification};

/// The `algorithm` checksum of each of `ranges` of `file`, read back on a blocking thread.
pub(super) async fn checksum_ranges(
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

/// The verification of a finished parallel download.
pub(super) async fn verification(
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

pub(super) fn mismatch(algorithm: ChecksumAlgorithm, expected: &str, computed: &str) -> Error {
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

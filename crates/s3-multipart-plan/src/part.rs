//! Records of uploaded parts: ETags and checksums.

use std::ops::Deref;
use std::sync::Arc;

/// A checksum algorithm S3 accepts for parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ChecksumAlgorithm {
    /// CRC-32 (IEEE).
    Crc32,
    /// CRC-32C (Castagnoli).
    Crc32c,
    /// CRC-64/NVME.
    Crc64Nvme,
    /// SHA-1.
    Sha1,
    /// SHA-256.
    Sha256,
}

impl ChecksumAlgorithm {
    /// Every algorithm, in a stable order.
    pub const ALL: [Self; 5] = [
        Self::Crc32,
        Self::Crc32c,
        Self::Crc64Nvme,
        Self::Sha1,
        Self::Sha256,
    ];

    /// The S3 name (`CRC32`, `CRC32C`, `CRC64NVME`, `SHA1`, `SHA256`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Crc32 => "CRC32",
            Self::Crc32c => "CRC32C",
            Self::Crc64Nvme => "CRC64NVME",
            Self::Sha1 => "SHA1",
            Self::Sha256 => "SHA256",
        }
    }

    /// Parses an S3 name, ignoring ASCII case.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(name))
    }
}

/// One checksum of a part, as S3 reports it (base64 of the digest).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Checksum {
    /// The algorithm.
    pub algorithm: ChecksumAlgorithm,
    /// The base64 value exactly as S3 returned it.
    pub value: String,
}

/// A part that the server has accepted: what `CompleteMultipartUpload` lists.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompletedPart {
    /// The part number, 1-based.
    pub number: u32,
    /// The part's size in bytes.
    pub size: u64,
    /// The ETag the server returned, as returned (usually quoted).
    pub etag: String,
    /// The checksum the server returned for the part, if the upload uses
    /// one (a multipart upload has a single checksum algorithm).
    pub checksum: Option<Checksum>,
}

/// The parts listed by `Complete`, ascending by number: a cheaply cloned,
/// shared list that reads as a slice (`parts.iter()`, `parts.len()`,
/// `&parts[..]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CompletedParts(Arc<Vec<CompletedPart>>);

impl CompletedParts {
    /// The parts as a slice.
    pub fn as_slice(&self) -> &[CompletedPart] {
        &self.0
    }
}

impl Deref for CompletedParts {
    type Target = [CompletedPart];

    fn deref(&self) -> &[CompletedPart] {
        &self.0
    }
}

impl From<Vec<CompletedPart>> for CompletedParts {
    /// Wraps parts that are already ascending by number.
    fn from(parts: Vec<CompletedPart>) -> Self {
        Self(Arc::new(parts))
    }
}

impl<'a> IntoIterator for &'a CompletedParts {
    type Item = &'a CompletedPart;
    type IntoIter = std::slice::Iter<'a, CompletedPart>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// One entry of a `ListParts` answer, used to reconcile a snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ListedPart {
    /// The part number.
    pub number: u32,
    /// The part's size in bytes.
    pub size: u64,
    /// The ETag the server lists.
    pub etag: String,
    /// The checksum the server lists for the part, if any.
    pub checksum: Option<Checksum>,
}

/// Compares ETags the way S3 formats them: surrounding quotes are optional
/// (headers and XML differ in practice), the rest must match exactly.
pub(crate) fn same_etag(a: &str, b: &str) -> bool {
    fn bare(s: &str) -> &str {
        s.strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(s)
    }
    bare(a) == bare(b)
}

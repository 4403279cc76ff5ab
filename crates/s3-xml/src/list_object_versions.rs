//! ListObjectVersions: `<ListVersionsResult>`.

use crate::common::{DecodeBody, UrlDecoded, UrlDecoding, decode_common_prefix, required};
use crate::reader::XmlReader;
use crate::{ETag, Error, Owner, Timestamp};

/// One entry of a version listing, in document order: S3 interleaves
/// versions and delete markers by key, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionEntry {
    /// A `<Version>`: a stored object version.
    Version(ObjectVersion),
    /// A `<DeleteMarker>`.
    DeleteMarker(DeleteMarkerEntry),
}

impl VersionEntry {
    /// The entry's key.
    pub fn key(&self) -> &str {
        match self {
            Self::Version(v) => &v.key,
            Self::DeleteMarker(d) => &d.key,
        }
    }

    /// The entry's version id.
    pub fn version_id(&self) -> &str {
        match self {
            Self::Version(v) => &v.version_id,
            Self::DeleteMarker(d) => &d.version_id,
        }
    }
}

/// A `<Version>` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectVersion {
    /// `Key`.
    pub key: String,
    /// `VersionId` (`null` for an object stored while versioning was off).
    pub version_id: String,
    /// `IsLatest`.
    pub is_latest: bool,
    /// `LastModified`.
    pub last_modified: Timestamp,
    /// `ETag`.
    pub etag: Option<ETag>,
    /// `Size` in bytes.
    pub size: u64,
    /// `StorageClass`.
    pub storage_class: Option<String>,
    /// `Owner`.
    pub owner: Option<Owner>,
    /// `ChecksumAlgorithm` entries.
    pub checksum_algorithms: Vec<String>,
    /// `ChecksumType`.
    pub checksum_type: Option<String>,
}

/// A `<DeleteMarker>` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteMarkerEntry {
    /// `Key`.
    pub key: String,
    /// `VersionId` of the marker.
    pub version_id: String,
    /// `IsLatest`.
    pub is_latest: bool,
    /// `LastModified`.
    pub last_modified: Timestamp,
    /// `Owner`.
    pub owner: Option<Owner>,
}

/// The result of ListObjectVersions (`GET /?versions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListObjectVersionsResult {
    /// `Name`: the bucket.
    pub name: String,
    /// `Prefix` echoed from the request.
    pub prefix: Option<String>,
    /// `Delimiter` echoed from the request.
    pub delimiter: Option<String>,
    /// `KeyMarker` echoed from the request.
    pub key_marker: Option<String>,
    /// `VersionIdMarker` echoed from the request.
    pub version_id_marker: Option<String>,
    /// `NextKeyMarker`: `key-marker` for the next page.
    pub next_key_marker: Option<String>,
    /// `NextVersionIdMarker`: `version-id-marker` for the next page.
    pub next_version_id_marker: Option<String>,
    /// `MaxKeys`.
    pub max_keys: Option<u64>,
    /// `IsTruncated`: more results follow.
    pub is_truncated: bool,
    /// `EncodingType` echoed from the request (`url`).
    pub encoding_type: Option<String>,
    /// Which fields were url-decoded.
    pub url_decoded: UrlDecoded,
    /// Versions and delete markers, in document order.
    pub entries: Vec<VersionEntry>,
    /// `CommonPrefixes/Prefix` values, in document order.
    pub common_prefixes: Vec<String>,
}

fn decode_entry(r: &mut XmlReader<'_>, delete_marker: bool) -> Result<VersionEntry, Error> {
    r.count_entry()?;
    let parent = if delete_marker {
        "DeleteMarker"
    } else {
        "Version"
    };
    let (mut key, mut version_id, mut is_latest, mut last_modified) = (None, None, None, None);
    let (mut etag, mut size, mut storage_class, mut owner, mut checksum_type) =
        (None, None, None, None, None);
    let mut checksum_algorithms = Vec::new();
    while let Some(name) = r.next_child()? {
        match name {
            "Key" => r.put(&mut key, "Key", XmlReader::string)?,
            "VersionId" => r.put(&mut version_id, "VersionId", XmlReader::string)?,
            "IsLatest" => r.put(&mut is_latest, "IsLatest", XmlReader::bool_value)?,
            "LastModified" => r.put(
                &mut last_modified,
                "LastModified",
                XmlReader::timestamp_value,
            )?,
            "Owner" => r.put(&mut owner, "Owner", |r, _| Owner::decode(r))?,
            "ETag" if !delete_marker => r.put(&mut etag, "ETag", XmlReader::etag_value)?,
            "Size" if !delete_marker => r.put(&mut size, "Size", XmlReader::u64_value)?,
            "StorageClass" if !delete_marker => {
                r.put(&mut storage_class, "StorageClass", XmlReader::string)?
            }
            "ChecksumAlgorithm" if !delete_marker => {
                checksum_algorithms.push(r.string("ChecksumAlgorithm")?)
            }
            "ChecksumType" if !delete_marker => {
                r.put(&mut checksum_type, "ChecksumType", XmlReader::string)?
            }
            _ => r.skip()?,
        }
    }
    let key = required(key, r, parent, "Key")?;
    let version_id = required(version_id, r, parent, "VersionId")?;
    let is_latest = required(is_latest, r, parent, "IsLatest")?;
    let last_modified = required(last_modified, r, parent, "LastModified")?;
    if delete_marker {
        return Ok(VersionEntry::DeleteMarker(DeleteMarkerEntry {
            key,
            version_id,
            is_latest,
            last_modified,
            owner,
        }));
    }
    Ok(VersionEntry::Version(ObjectVersion {
        key,
        version_id,
        is_latest,
        last_modified,
        etag,
        size: required(size, r, parent, "Size")?,
        storage_class,
        owner,
        checksum_algorithms,
        checksum_type,
    }))
}

impl DecodeBody for ListObjectVersionsResult {
    const ROOT: &'static str = "ListVersionsResult";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        let (mut name, mut is_truncated, mut encoding_position) = (None, None, 0);
        while let Some(child) = r.next_child()? {
            match child {
                "Version" => out.entries.push(decode_entry(r, false)?),
                "DeleteMarker" => out.entries.push(decode_entry(r, true)?),
                "CommonPrefixes" => out.common_prefixes.push(decode_common_prefix(r)?),
                "Name" => r.put(&mut name, "Name", XmlReader::string)?,
                "Prefix" => r.put(&mut out.prefix, "Prefix", XmlReader::string)?,
                "Delimiter" => r.put(&mut out.delimiter, "Delimiter", XmlReader::string)?,
                "KeyMarker" => r.put(&mut out.key_marker, "KeyMarker", XmlReader::string)?,
                "VersionIdMarker" => r.put(
                    &mut out.version_id_marker,
                    "VersionIdMarker",
                    XmlReader::string,
                )?,
                "NextKeyMarker" => {
                    r.put(&mut out.next_key_marker, "NextKeyMarker", XmlReader::string)?
                }
                "NextVersionIdMarker" => {
                    r.put(
                        &mut out.next_version_id_marker,
                        "NextVersionIdMarker",
                        XmlReader::string,
                    )?;
                }
                "MaxKeys" => r.put(&mut out.max_keys, "MaxKeys", XmlReader::u64_value)?,
                "IsTruncated" => r.put(&mut is_truncated, "IsTruncated", XmlReader::bool_value)?,
                "EncodingType" => {
                    r.put(&mut out.encoding_type, "EncodingType", XmlReader::string)?;
                    encoding_position = r.value_position();
                }
                _ => r.skip()?,
            }
        }
        out.name = required(name, r, "ListVersionsResult", "Name")?;
        out.is_truncated = is_truncated.unwrap_or(false);
        if let Some(decoding) = UrlDecoding::new(out.encoding_type.as_deref(), encoding_position) {
            let d = &mut out.url_decoded;
            d.prefix = decoding.field(&mut out.prefix, "Prefix")?;
            d.delimiter = decoding.field(&mut out.delimiter, "Delimiter")?;
            d.key_marker = decoding.field(&mut out.key_marker, "KeyMarker")?;
            d.next_key_marker = decoding.field(&mut out.next_key_marker, "NextKeyMarker")?;
            let keys = out.entries.iter_mut().map(|e| match e {
                VersionEntry::Version(v) => &mut v.key,
                VersionEntry::DeleteMarker(m) => &mut m.key,
            });
            d.keys = decoding.all(keys, "Key")?;
            d.common_prefixes = decoding.all(out.common_prefixes.iter_mut(), "Prefix")?;
        }
        Ok(out)
    }
}

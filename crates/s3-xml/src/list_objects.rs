//! ListObjectsV2 and ListObjects (v1): `<ListBucketResult>`.

use crate::common::{
    DecodeBody, UrlDecoded, UrlDecoding, decode_common_prefix, required, reserve_page,
};
use crate::reader::XmlReader;
use crate::{ETag, Error, Owner, Timestamp};

/// One object of a listing (`<Contents>`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Object {
    /// `Key`, exactly as stored (whitespace kept; url-decoded if the listing
    /// was `encoding-type=url`).
    pub key: String,
    /// `LastModified`.
    pub last_modified: Timestamp,
    /// `ETag` (absent from some S3-compatible servers' listings).
    pub etag: Option<ETag>,
    /// `Size` in bytes.
    pub size: u64,
    /// `StorageClass`, e.g. `STANDARD`.
    pub storage_class: Option<String>,
    /// `Owner`, present when the request asked for `fetch-owner` (V2) or always (V1).
    pub owner: Option<Owner>,
    /// `ChecksumAlgorithm` entries (the algorithms used when the object was uploaded).
    pub checksum_algorithms: Vec<String>,
    /// `ChecksumType`: `COMPOSITE` or `FULL_OBJECT`.
    pub checksum_type: Option<String>,
}

impl Object {
    fn decode(r: &mut XmlReader<'_>) -> Result<Self, Error> {
        r.count_entry()?;
        let (mut key, mut last_modified, mut etag, mut size) = (None, None, None, None);
        let (mut storage_class, mut owner, mut checksum_type) = (None, None, None);
        let mut checksum_algorithms = Vec::new();
        while let Some(name) = r.next_child()? {
            match name {
                "Key" => r.put(&mut key, "Key", XmlReader::string)?,
                "LastModified" => r.put(
                    &mut last_modified,
                    "LastModified",
                    XmlReader::timestamp_value,
                )?,
                "ETag" => r.put(&mut etag, "ETag", XmlReader::etag_value)?,
                "Size" => r.put(&mut size, "Size", XmlReader::u64_value)?,
                "StorageClass" => r.put(&mut storage_class, "StorageClass", XmlReader::string)?,
                "Owner" => r.put(&mut owner, "Owner", |r, _| Owner::decode(r))?,
                "ChecksumAlgorithm" => checksum_algorithms.push(r.string("ChecksumAlgorithm")?),
                "ChecksumType" => r.put(&mut checksum_type, "ChecksumType", XmlReader::string)?,
                _ => r.skip()?,
            }
        }
        Ok(Self {
            key: required(key, r, "Contents", "Key")?,
            last_modified: required(last_modified, r, "Contents", "LastModified")?,
            etag,
            size: required(size, r, "Contents", "Size")?,
            storage_class,
            owner,
            checksum_algorithms,
            checksum_type,
        })
    }
}

/// The result of ListObjectsV2 (`GET /?list-type=2`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListObjectsV2Result {
    /// `Name`: the bucket.
    pub name: String,
    /// `Prefix` echoed from the request.
    pub prefix: Option<String>,
    /// `Delimiter` echoed from the request.
    pub delimiter: Option<String>,
    /// `StartAfter` echoed from the request.
    pub start_after: Option<String>,
    /// `ContinuationToken` echoed from the request.
    pub continuation_token: Option<String>,
    /// `NextContinuationToken`: pass it as `continuation-token` for the next page.
    pub next_continuation_token: Option<String>,
    /// `KeyCount`: keys and common prefixes in this page.
    pub key_count: Option<u64>,
    /// `MaxKeys`.
    pub max_keys: Option<u64>,
    /// `IsTruncated`: more results follow.
    pub is_truncated: bool,
    /// `EncodingType` echoed from the request (`url`).
    pub encoding_type: Option<String>,
    /// Which fields were url-decoded.
    pub url_decoded: UrlDecoded,
    /// The objects (`Contents`), in document order.
    pub contents: Vec<Object>,
    /// `CommonPrefixes/Prefix` values, in document order.
    pub common_prefixes: Vec<String>,
}

impl DecodeBody for ListObjectsV2Result {
    const ROOT: &'static str = "ListBucketResult";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        let (mut name, mut is_truncated, mut encoding_position) = (None, None, 0);
        while let Some(child) = r.next_child()? {
            match child {
                "Contents" => out.contents.push(Object::decode(r)?),
                "CommonPrefixes" => out.common_prefixes.push(decode_common_prefix(r)?),
                "Name" => r.put(&mut name, "Name", XmlReader::string)?,
                "Prefix" => r.put(&mut out.prefix, "Prefix", XmlReader::string)?,
                "Delimiter" => r.put(&mut out.delimiter, "Delimiter", XmlReader::string)?,
                "StartAfter" => r.put(&mut out.start_after, "StartAfter", XmlReader::string)?,
                "ContinuationToken" => {
                    r.put(
                        &mut out.continuation_token,
                        "ContinuationToken",
                        XmlReader::string,
                    )?;
                }
                "NextContinuationToken" => {
                    r.put(
                        &mut out.next_continuation_token,
                        "NextContinuationToken",
                        XmlReader::string,
                    )?;
                }
                "KeyCount" => {
                    r.put(&mut out.key_count, "KeyCount", XmlReader::u64_value)?;
                    reserve_page(&mut out.contents, out.key_count);
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
        out.name = required(name, r, "ListBucketResult", "Name")?;
        out.is_truncated = is_truncated.unwrap_or(false);
        if let Some(decoding) = UrlDecoding::new(out.encoding_type.as_deref(), encoding_position) {
            let d = &mut out.url_decoded;
            d.prefix = decoding.field(&mut out.prefix, "Prefix")?;
            d.delimiter = decoding.field(&mut out.delimiter, "Delimiter")?;
            d.start_after = decoding.field(&mut out.start_after, "StartAfter")?;
            d.keys = decoding.all(out.contents.iter_mut().map(|o| &mut o.key), "Key")?;
            d.common_prefixes = decoding.all(out.common_prefixes.iter_mut(), "Prefix")?;
        }
        Ok(out)
    }
}

/// The result of ListObjects, version 1 (`GET /`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListObjectsResult {
    /// `Name`: the bucket.
    pub name: String,
    /// `Prefix` echoed from the request.
    pub prefix: Option<String>,
    /// `Delimiter` echoed from the request.
    pub delimiter: Option<String>,
    /// `Marker` echoed from the request.
    pub marker: Option<String>,
    /// `NextMarker`: sent only with a delimiter; otherwise continue after the
    /// last key of `contents`.
    pub next_marker: Option<String>,
    /// `MaxKeys`.
    pub max_keys: Option<u64>,
    /// `IsTruncated`: more results follow.
    pub is_truncated: bool,
    /// `EncodingType` echoed from the request (`url`).
    pub encoding_type: Option<String>,
    /// Which fields were url-decoded.
    pub url_decoded: UrlDecoded,
    /// The objects (`Contents`), in document order.
    pub contents: Vec<Object>,
    /// `CommonPrefixes/Prefix` values, in document order.
    pub common_prefixes: Vec<String>,
}

impl ListObjectsResult {
    /// The marker for the next page of a truncated page: `NextMarker`, or else the later of
    /// the last key and the last common prefix (S3 sends `NextMarker` only with a delimiter;
    /// some stores omit it even then). `None` on the last page.
    pub fn next_page_marker(&self) -> Option<&str> {
        if !self.is_truncated {
            return None;
        }
        let last_key = self.contents.last().map(|o| o.key.as_str());
        let last_prefix = self.common_prefixes.last().map(String::as_str);
        self.next_marker
            .as_deref()
            .or_else(|| last_key.max(last_prefix))
    }
}

impl DecodeBody for ListObjectsResult {
    const ROOT: &'static str = "ListBucketResult";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        let (mut name, mut is_truncated, mut encoding_position) = (None, None, 0);
        while let Some(child) = r.next_child()? {
            match child {
                "Contents" => out.contents.push(Object::decode(r)?),
                "CommonPrefixes" => out.common_prefixes.push(decode_common_prefix(r)?),
                "Name" => r.put(&mut name, "Name", XmlReader::string)?,
                "Prefix" => r.put(&mut out.prefix, "Prefix", XmlReader::string)?,
                "Delimiter" => r.put(&mut out.delimiter, "Delimiter", XmlReader::string)?,
                "Marker" => r.put(&mut out.marker, "Marker", XmlReader::string)?,
                "NextMarker" => r.put(&mut out.next_marker, "NextMarker", XmlReader::string)?,
                "MaxKeys" => r.put(&mut out.max_keys, "MaxKeys", XmlReader::u64_value)?,
                "IsTruncated" => r.put(&mut is_truncated, "IsTruncated", XmlReader::bool_value)?,
                "EncodingType" => {
                    r.put(&mut out.encoding_type, "EncodingType", XmlReader::string)?;
                    encoding_position = r.value_position();
                }
                _ => r.skip()?,
            }
        }
        out.name = required(name, r, "ListBucketResult", "Name")?;
        out.is_truncated = is_truncated.unwrap_or(false);
        if let Some(decoding) = UrlDecoding::new(out.encoding_type.as_deref(), encoding_position) {
            let d = &mut out.url_decoded;
            d.prefix = decoding.field(&mut out.prefix, "Prefix")?;
            d.delimiter = decoding.field(&mut out.delimiter, "Delimiter")?;
            d.marker = decoding.field(&mut out.marker, "Marker")?;
            d.next_marker = decoding.field(&mut out.next_marker, "NextMarker")?;
            d.keys = decoding.all(out.contents.iter_mut().map(|o| &mut o.key), "Key")?;
            d.common_prefixes = decoding.all(out.common_prefixes.iter_mut(), "Prefix")?;
        }
        Ok(out)
    }
}

//! Multipart upload documents.

use crate::common::{
    Checksums, DecodeBody, UrlDecoded, UrlDecoding, decode_common_prefix, required,
};
use crate::reader::XmlReader;
use crate::writer::XmlWriter;
use crate::{ETag, Error, Owner, Timestamp};

/// The result of CreateMultipartUpload: `<InitiateMultipartUploadResult>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InitiateMultipartUploadResult {
    /// `Bucket`.
    pub bucket: Option<String>,
    /// `Key`.
    pub key: Option<String>,
    /// `UploadId`: names the upload in UploadPart, Complete and Abort.
    pub upload_id: String,
}

impl DecodeBody for InitiateMultipartUploadResult {
    const ROOT: &'static str = "InitiateMultipartUploadResult";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let (mut bucket, mut key, mut upload_id) = (None, None, None);
        while let Some(child) = r.next_child()? {
            match child {
                "Bucket" => r.put(&mut bucket, "Bucket", XmlReader::string)?,
                "Key" => r.put(&mut key, "Key", XmlReader::string)?,
                "UploadId" => r.put(&mut upload_id, "UploadId", XmlReader::string)?,
                _ => r.skip()?,
            }
        }
        let upload_id = required(upload_id, r, "InitiateMultipartUploadResult", "UploadId")?;
        if upload_id.is_empty() {
            return Err(r.value_error("UploadId", crate::ValueProblem::Empty));
        }
        Ok(Self {
            bucket,
            key,
            upload_id,
        })
    }
}

/// The result of CompleteMultipartUpload: `<CompleteMultipartUploadResult>`.
///
/// S3 may answer 200 with an `<Error>` document instead; decode with
/// [`decode_or_error`](crate::decode_or_error).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompleteMultipartUploadResult {
    /// `Location`: the object's URL.
    pub location: Option<String>,
    /// `Bucket`.
    pub bucket: Option<String>,
    /// `Key`.
    pub key: Option<String>,
    /// `ETag` of the assembled object.
    pub etag: Option<ETag>,
    /// Checksums of the assembled object.
    pub checksums: Checksums,
}

impl DecodeBody for CompleteMultipartUploadResult {
    const ROOT: &'static str = "CompleteMultipartUploadResult";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "Location" => r.put(&mut out.location, "Location", XmlReader::string)?,
                "Bucket" => r.put(&mut out.bucket, "Bucket", XmlReader::string)?,
                "Key" => r.put(&mut out.key, "Key", XmlReader::string)?,
                "ETag" => r.put(&mut out.etag, "ETag", XmlReader::etag_value)?,
                other => match Checksums::element(other) {
                    Some(element) => out.checksums.read(r, element)?,
                    None => r.skip()?,
                },
            }
        }
        Ok(out)
    }
}

/// One part of a CompleteMultipartUpload request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompletedPart {
    /// `PartNumber`, 1 to 10,000.
    pub part_number: u32,
    /// `ETag` returned by UploadPart.
    pub etag: ETag,
    /// Checksums returned by UploadPart, sent back when the upload uses them
    /// (`checksum_type` is not part of a part and is not encoded).
    pub checksums: Checksums,
}

impl CompletedPart {
    /// A part without checksums.
    pub fn new(part_number: u32, etag: ETag) -> Self {
        Self {
            part_number,
            etag,
            checksums: Checksums::default(),
        }
    }

    /// The same part with these checksums.
    #[must_use]
    pub fn with_checksums(mut self, checksums: Checksums) -> Self {
        self.checksums = checksums;
        self
    }
}

/// The body of CompleteMultipartUpload: `<CompleteMultipartUpload>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompleteMultipartUpload {
    /// The parts, in ascending part-number order as S3 requires.
    pub parts: Vec<CompletedPart>,
}

impl CompleteMultipartUpload {
    /// A request body listing `parts`.
    pub fn new(parts: Vec<CompletedPart>) -> Self {
        Self { parts }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("CompleteMultipartUpload");
        for part in &self.parts {
            w.open("Part");
            // The element order of S3's request syntax.
            for (element, value) in part.checksums.digests() {
                if let Some(value) = value {
                    w.leaf(element, value)?;
                }
            }
            w.leaf("ETag", part.etag.as_str())?;
            w.leaf("PartNumber", &part.part_number.to_string())?;
            w.close("Part");
        }
        Ok(w.finish())
    }
}

impl DecodeBody for CompleteMultipartUpload {
    const ROOT: &'static str = "CompleteMultipartUpload";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "Part" => {
                    r.count_entry()?;
                    let (mut part_number, mut etag, mut checksums) =
                        (None, None, Checksums::default());
                    while let Some(name) = r.next_child()? {
                        match name {
                            "PartNumber" => {
                                r.put(&mut part_number, "PartNumber", XmlReader::u32_value)?
                            }
                            "ETag" => r.put(&mut etag, "ETag", XmlReader::etag_value)?,
                            other => match Checksums::element(other) {
                                Some(element) => checksums.read(r, element)?,
                                None => r.skip()?,
                            },
                        }
                    }
                    out.parts.push(CompletedPart {
                        part_number: required(part_number, r, "Part", "PartNumber")?,
                        etag: required(etag, r, "Part", "ETag")?,
                        checksums,
                    });
                }
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

/// One part of a ListParts result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Part {
    /// `PartNumber`.
    pub part_number: u32,
    /// `LastModified`.
    pub last_modified: Option<Timestamp>,
    /// `ETag`.
    pub etag: ETag,
    /// `Size` in bytes.
    pub size: u64,
    /// The part's checksums.
    pub checksums: Checksums,
}

/// The result of ListParts: `<ListPartsResult>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListPartsResult {
    /// `Bucket`.
    pub bucket: Option<String>,
    /// `Key`.
    pub key: Option<String>,
    /// `UploadId`.
    pub upload_id: Option<String>,
    /// `PartNumberMarker` echoed from the request.
    pub part_number_marker: Option<u32>,
    /// `NextPartNumberMarker`: `part-number-marker` for the next page.
    pub next_part_number_marker: Option<u32>,
    /// `MaxParts`.
    pub max_parts: Option<u32>,
    /// `IsTruncated`: more parts follow.
    pub is_truncated: bool,
    /// `Initiator`.
    pub initiator: Option<Owner>,
    /// `Owner`.
    pub owner: Option<Owner>,
    /// `StorageClass`.
    pub storage_class: Option<String>,
    /// `ChecksumAlgorithm` of the upload.
    pub checksum_algorithm: Option<String>,
    /// `ChecksumType` of the upload.
    pub checksum_type: Option<String>,
    /// The parts, in document order.
    pub parts: Vec<Part>,
}

impl DecodeBody for ListPartsResult {
    const ROOT: &'static str = "ListPartsResult";

    /// moto answers `<ListPartsResponse>` with the same content (boto3 ignores the root's
    /// name): accepting it loses nothing.
    fn accepts_root(root: &str) -> bool {
        root == Self::ROOT || root == "ListPartsResponse"
    }

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        let mut is_truncated = None;
        while let Some(child) = r.next_child()? {
            match child {
                "Part" => out.parts.push(decode_part(r)?),
                "Bucket" => r.put(&mut out.bucket, "Bucket", XmlReader::string)?,
                "Key" => r.put(&mut out.key, "Key", XmlReader::string)?,
                "UploadId" => r.put(&mut out.upload_id, "UploadId", XmlReader::string)?,
                "PartNumberMarker" => {
                    r.put(
                        &mut out.part_number_marker,
                        "PartNumberMarker",
                        XmlReader::u32_value,
                    )?;
                }
                "NextPartNumberMarker" => {
                    r.put(
                        &mut out.next_part_number_marker,
                        "NextPartNumberMarker",
                        XmlReader::u32_value,
                    )?;
                }
                "MaxParts" => r.put(&mut out.max_parts, "MaxParts", XmlReader::u32_value)?,
                "IsTruncated" => r.put(&mut is_truncated, "IsTruncated", XmlReader::bool_value)?,
                "Initiator" => r.put(&mut out.initiator, "Initiator", |r, _| Owner::decode(r))?,
                "Owner" => r.put(&mut out.owner, "Owner", |r, _| Owner::decode(r))?,
                "StorageClass" => {
                    r.put(&mut out.storage_class, "StorageClass", XmlReader::string)?
                }
                "ChecksumAlgorithm" => {
                    r.put(
                        &mut out.checksum_algorithm,
                        "ChecksumAlgorithm",
                        XmlReader::string,
                    )?;
                }
                "ChecksumType" => {
                    r.put(&mut out.checksum_type, "ChecksumType", XmlReader::string)?
                }
                _ => r.skip()?,
            }
        }
        out.is_truncated = is_truncated.unwrap_or(false);
        Ok(out)
    }
}

fn decode_part(r: &mut XmlReader<'_>) -> Result<Part, Error> {
    r.count_entry()?;
    let (mut part_number, mut last_modified, mut etag, mut size) = (None, None, None, None);
    let mut checksums = Checksums::default();
    while let Some(name) = r.next_child()? {
        match name {
            "PartNumber" => r.put(&mut part_number, "PartNumber", XmlReader::u32_value)?,
            "LastModified" => r.put(
                &mut last_modified,
                "LastModified",
                XmlReader::timestamp_value,
            )?,
            "ETag" => r.put(&mut etag, "ETag", XmlReader::etag_value)?,
            "Size" => r.put(&mut size, "Size", XmlReader::u64_value)?,
            other => match Checksums::element(other) {
                Some(element) => checksums.read(r, element)?,
                None => r.skip()?,
            },
        }
    }
    Ok(Part {
        part_number: required(part_number, r, "Part", "PartNumber")?,
        last_modified,
        etag: required(etag, r, "Part", "ETag")?,
        size: required(size, r, "Part", "Size")?,
        checksums,
    })
}

/// One in-progress upload of a ListMultipartUploads result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MultipartUpload {
    /// `Key`.
    pub key: String,
    /// `UploadId`.
    pub upload_id: String,
    /// `Initiated`.
    pub initiated: Option<Timestamp>,
    /// `Initiator`.
    pub initiator: Option<Owner>,
    /// `Owner`.
    pub owner: Option<Owner>,
    /// `StorageClass`.
    pub storage_class: Option<String>,
    /// `ChecksumAlgorithm`.
    pub checksum_algorithm: Option<String>,
    /// `ChecksumType`.
    pub checksum_type: Option<String>,
}

/// The result of ListMultipartUploads: `<ListMultipartUploadsResult>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListMultipartUploadsResult {
    /// `Bucket`.
    pub bucket: Option<String>,
    /// `KeyMarker` echoed from the request.
    pub key_marker: Option<String>,
    /// `UploadIdMarker` echoed from the request.
    pub upload_id_marker: Option<String>,
    /// `NextKeyMarker`: `key-marker` for the next page.
    pub next_key_marker: Option<String>,
    /// `NextUploadIdMarker`: `upload-id-marker` for the next page.
    pub next_upload_id_marker: Option<String>,
    /// `Prefix` echoed from the request.
    pub prefix: Option<String>,
    /// `Delimiter` echoed from the request.
    pub delimiter: Option<String>,
    /// `MaxUploads`.
    pub max_uploads: Option<u32>,
    /// `IsTruncated`: more uploads follow.
    pub is_truncated: bool,
    /// `EncodingType` echoed from the request (`url`).
    pub encoding_type: Option<String>,
    /// Which fields were url-decoded.
    pub url_decoded: UrlDecoded,
    /// The uploads, in document order.
    pub uploads: Vec<MultipartUpload>,
    /// `CommonPrefixes/Prefix` values, in document order.
    pub common_prefixes: Vec<String>,
}

impl DecodeBody for ListMultipartUploadsResult {
    const ROOT: &'static str = "ListMultipartUploadsResult";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        let (mut is_truncated, mut encoding_position) = (None, 0);
        while let Some(child) = r.next_child()? {
            match child {
                "Upload" => out.uploads.push(decode_upload(r)?),
                "CommonPrefixes" => out.common_prefixes.push(decode_common_prefix(r)?),
                "Bucket" => r.put(&mut out.bucket, "Bucket", XmlReader::string)?,
                "KeyMarker" => r.put(&mut out.key_marker, "KeyMarker", XmlReader::string)?,
                "UploadIdMarker" => r.put(
                    &mut out.upload_id_marker,
                    "UploadIdMarker",
                    XmlReader::string,
                )?,
                "NextKeyMarker" => {
                    r.put(&mut out.next_key_marker, "NextKeyMarker", XmlReader::string)?
                }
                "NextUploadIdMarker" => {
                    r.put(
                        &mut out.next_upload_id_marker,
                        "NextUploadIdMarker",
                        XmlReader::string,
                    )?;
                }
                "Prefix" => r.put(&mut out.prefix, "Prefix", XmlReader::string)?,
                "Delimiter" => r.put(&mut out.delimiter, "Delimiter", XmlReader::string)?,
                "MaxUploads" => r.put(&mut out.max_uploads, "MaxUploads", XmlReader::u32_value)?,
                "IsTruncated" => r.put(&mut is_truncated, "IsTruncated", XmlReader::bool_value)?,
                "EncodingType" => {
                    r.put(&mut out.encoding_type, "EncodingType", XmlReader::string)?;
                    encoding_position = r.value_position();
                }
                _ => r.skip()?,
            }
        }
        out.is_truncated = is_truncated.unwrap_or(false);
        if let Some(decoding) = UrlDecoding::new(out.encoding_type.as_deref(), encoding_position) {
            let d = &mut out.url_decoded;
            d.prefix = decoding.field(&mut out.prefix, "Prefix")?;
            d.delimiter = decoding.field(&mut out.delimiter, "Delimiter")?;
            d.key_marker = decoding.field(&mut out.key_marker, "KeyMarker")?;
            d.next_key_marker = decoding.field(&mut out.next_key_marker, "NextKeyMarker")?;
            d.keys = decoding.all(out.uploads.iter_mut().map(|u| &mut u.key), "Key")?;
            d.common_prefixes = decoding.all(out.common_prefixes.iter_mut(), "Prefix")?;
        }
        Ok(out)
    }
}

fn decode_upload(r: &mut XmlReader<'_>) -> Result<MultipartUpload, Error> {
    r.count_entry()?;
    let (mut key, mut upload_id, mut initiated, mut initiator, mut owner) =
        (None, None, None, None, None);
    let (mut storage_class, mut checksum_algorithm, mut checksum_type) = (None, None, None);
    while let Some(name) = r.next_child()? {
        match name {
            "Key" => r.put(&mut key, "Key", XmlReader::string)?,
            "UploadId" => r.put(&mut upload_id, "UploadId", XmlReader::string)?,
            "Initiated" => r.put(&mut initiated, "Initiated", XmlReader::timestamp_value)?,
            "Initiator" => r.put(&mut initiator, "Initiator", |r, _| Owner::decode(r))?,
            "Owner" => r.put(&mut owner, "Owner", |r, _| Owner::decode(r))?,
            "StorageClass" => r.put(&mut storage_class, "StorageClass", XmlReader::string)?,
            "ChecksumAlgorithm" => r.put(
                &mut checksum_algorithm,
                "ChecksumAlgorithm",
                XmlReader::string,
            )?,
            "ChecksumType" => r.put(&mut checksum_type, "ChecksumType", XmlReader::string)?,
            _ => r.skip()?,
        }
    }
    Ok(MultipartUpload {
        key: required(key, r, "Upload", "Key")?,
        upload_id: required(upload_id, r, "Upload", "UploadId")?,
        initiated,
        initiator,
        owner,
        storage_class,
        checksum_algorithm,
        checksum_type,
    })
}

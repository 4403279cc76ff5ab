//! GetObjectAttributes: `<GetObjectAttributesResponse>`.

use crate::common::{Checksums, DecodeBody, required};
use crate::reader::XmlReader;
use crate::{ETag, Error};

/// One part of a multipart object (`ObjectParts/Part`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectPart {
    /// `PartNumber`.
    pub part_number: u32,
    /// `Size` in bytes.
    pub size: Option<u64>,
    /// The part's checksums (S3 lists parts only for objects uploaded with a checksum).
    pub checksums: Checksums,
}

/// `ObjectParts`: the parts of a multipart object, a page at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectParts {
    /// `PartsCount`: how many parts the object has.
    pub total_parts_count: Option<u32>,
    /// `PartNumberMarker` echoed from the request.
    pub part_number_marker: Option<u32>,
    /// `NextPartNumberMarker`: `x-amz-part-number-marker` for the next page.
    pub next_part_number_marker: Option<u32>,
    /// `MaxParts`.
    pub max_parts: Option<u32>,
    /// `IsTruncated`: more parts follow.
    pub is_truncated: bool,
    /// The parts (`Part`), in document order.
    pub parts: Vec<ObjectPart>,
}

/// The result of GetObjectAttributes: only the attributes asked for are present.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GetObjectAttributesResult {
    /// `ETag` (S3 sends it without quotes; it is stored quoted, like every [`ETag`]).
    pub etag: Option<ETag>,
    /// `Checksum`: the object's checksum and its type.
    pub checksums: Checksums,
    /// `ObjectParts`.
    pub object_parts: Option<ObjectParts>,
    /// `StorageClass`.
    pub storage_class: Option<String>,
    /// `ObjectSize` in bytes.
    pub object_size: Option<u64>,
}

impl DecodeBody for GetObjectAttributesResult {
    const ROOT: &'static str = "GetObjectAttributesResponse";

    /// moto names the root `GetObjectAttributesOutput` (the model's shape name); the content
    /// is S3's.
    fn accepts_root(root: &str) -> bool {
        root == Self::ROOT || root == "GetObjectAttributesOutput"
    }

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "ETag" => r.put(&mut out.etag, "ETag", XmlReader::etag_value)?,
                "Checksum" => {
                    while let Some(name) = r.next_child()? {
                        match Checksums::element(name) {
                            Some(element) => out.checksums.read(r, element)?,
                            None => r.skip()?,
                        }
                    }
                }
                "ObjectParts" => {
                    r.put(&mut out.object_parts, "ObjectParts", |r, _| decode_parts(r))?
                }
                "StorageClass" => {
                    r.put(&mut out.storage_class, "StorageClass", XmlReader::string)?
                }
                "ObjectSize" => r.put(&mut out.object_size, "ObjectSize", XmlReader::u64_value)?,
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

fn decode_parts(r: &mut XmlReader<'_>) -> Result<ObjectParts, Error> {
    let mut out = ObjectParts::default();
    let mut is_truncated = None;
    while let Some(name) = r.next_child()? {
        match name {
            "PartsCount" => r.put(
                &mut out.total_parts_count,
                "PartsCount",
                XmlReader::u32_value,
            )?,
            "PartNumberMarker" => r.put(
                &mut out.part_number_marker,
                "PartNumberMarker",
                XmlReader::u32_value,
            )?,
            "NextPartNumberMarker" => r.put(
                &mut out.next_part_number_marker,
                "NextPartNumberMarker",
                XmlReader::u32_value,
            )?,
            "MaxParts" => r.put(&mut out.max_parts, "MaxParts", XmlReader::u32_value)?,
            "IsTruncated" => r.put(&mut is_truncated, "IsTruncated", XmlReader::bool_value)?,
            "Part" => out.parts.push(decode_part(r)?),
            _ => r.skip()?,
        }
    }
    out.is_truncated = is_truncated.unwrap_or(false);
    Ok(out)
}

fn decode_part(r: &mut XmlReader<'_>) -> Result<ObjectPart, Error> {
    r.count_entry()?;
    let (mut part_number, mut size, mut checksums) = (None, None, Checksums::default());
    while let Some(name) = r.next_child()? {
        match name {
            "PartNumber" => r.put(&mut part_number, "PartNumber", XmlReader::u32_value)?,
            "Size" => r.put(&mut size, "Size", XmlReader::u64_value)?,
            other => match Checksums::element(other) {
                Some(element) => checksums.read(r, element)?,
                None => r.skip()?,
            },
        }
    }
    Ok(ObjectPart {
        part_number: required(part_number, r, "Part", "PartNumber")?,
        size,
        checksums,
    })
}

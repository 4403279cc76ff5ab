//! CopyObject and UploadPartCopy results.

use crate::common::{Checksums, DecodeBody};
use crate::reader::XmlReader;
use crate::{ETag, Error, Timestamp};

/// Fields shared by `<CopyObjectResult>` and `<CopyPartResult>`.
fn decode_copy(
    r: &mut XmlReader<'_>,
) -> Result<(Option<ETag>, Option<Timestamp>, Checksums), Error> {
    let (mut etag, mut last_modified, mut checksums) = (None, None, Checksums::default());
    while let Some(child) = r.next_child()? {
        match child {
            "ETag" => r.put(&mut etag, "ETag", XmlReader::etag_value)?,
            "LastModified" => r.put(
                &mut last_modified,
                "LastModified",
                XmlReader::timestamp_value,
            )?,
            other => match Checksums::element(other) {
                Some(element) => checksums.read(r, element)?,
                None => r.skip()?,
            },
        }
    }
    Ok((etag, last_modified, checksums))
}

/// The result of CopyObject: `<CopyObjectResult>`.
///
/// S3 may answer 200 with an `<Error>` document instead; decode with
/// [`decode_or_error`](crate::decode_or_error).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CopyObjectResult {
    /// `ETag` of the new object.
    pub etag: Option<ETag>,
    /// `LastModified` of the new object.
    pub last_modified: Option<Timestamp>,
    /// Checksums of the new object.
    pub checksums: Checksums,
}

impl DecodeBody for CopyObjectResult {
    const ROOT: &'static str = "CopyObjectResult";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let (etag, last_modified, checksums) = decode_copy(r)?;
        Ok(Self {
            etag,
            last_modified,
            checksums,
        })
    }
}

/// The result of UploadPartCopy: `<CopyPartResult>`.
///
/// S3 may answer 200 with an `<Error>` document instead; decode with
/// [`decode_or_error`](crate::decode_or_error).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CopyPartResult {
    /// `ETag` of the new part (send it in CompleteMultipartUpload).
    pub etag: Option<ETag>,
    /// `LastModified` of the new part.
    pub last_modified: Option<Timestamp>,
    /// Checksums of the new part.
    pub checksums: Checksums,
}

impl DecodeBody for CopyPartResult {
    const ROOT: &'static str = "CopyPartResult";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let (etag, last_modified, checksums) = decode_copy(r)?;
        Ok(Self {
            etag,
            last_modified,
            checksums,
        })
    }
}

//! UploadPartCopy: fill a part of a multipart upload from (a range of) another object.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::CopyPartResult;

use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::{BucketName, ObjectKey};
use crate::ops::copy_source::CopySource;
use crate::ops::option_setters;
use crate::ops::{validate_part_number, validate_upload_id};
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{EncryptionInfo, Head, RequestIds, decode};
use crate::types::{ByteRange, SseCustomerKey};

/// `PUT /{Key}?partNumber={n}&uploadId={id}` with `x-amz-copy-source` (and
/// `x-amz-copy-source-range`).
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPartCopy.html>. Like
/// CopyObject, a 200 may carry an `<Error>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadPartCopy {
    source: CopySource,
    bucket: BucketName,
    key: ObjectKey,
    upload_id: String,
    part_number: u32,
    source_range: Option<ByteRange>,
    sse_customer_key: Option<SseCustomerKey>,
    expected_bucket_owner: Option<String>,
}

/// What UploadPartCopy returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UploadPartCopyOutput {
    /// The result document: the part's ETag (for CompleteMultipartUpload) and checksums.
    pub result: CopyPartResult,
    /// `x-amz-copy-source-version-id`.
    pub copy_source_version_id: Option<String>,
    /// Server-side encryption applied.
    pub encryption: EncryptionInfo,
    /// Request ids.
    pub ids: RequestIds,
}

impl UploadPartCopy {
    /// Copies `source` into part `part_number` of `upload_id` of `key`.
    pub fn new(
        source: CopySource,
        bucket: BucketName,
        key: ObjectKey,
        upload_id: impl Into<String>,
        part_number: u32,
    ) -> Self {
        UploadPartCopy {
            source,
            bucket,
            key,
            upload_id: upload_id.into(),
            part_number,
            source_range: None,
            sse_customer_key: None,
            expected_bucket_owner: None,
        }
    }

    option_setters! {
        /// Only these bytes of the source (`x-amz-copy-source-range: bytes=first-last`;
        /// S3 takes closed ranges only).
        source_range: ByteRange,
        /// The destination upload uses this SSE-C key.
        sse_customer_key: SseCustomerKey,
        /// `x-amz-expected-bucket-owner`.
        expected_bucket_owner: impl Into<String>,
    }
}

impl Operation for UploadPartCopy {
    type Output = UploadPartCopyOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let range_check = match self.source_range {
            None => Ok(()),
            Some(range @ ByteRange::Closed { .. }) => range.validate(),
            Some(_) => Err(InvalidInput::InvalidRange {
                reason: "x-amz-copy-source-range takes bytes=first-last only".to_owned(),
            }
            .into()),
        };
        let builder = RequestBuilder::new(endpoint, Method::PUT)
            .bucket(&self.bucket)
            .key(&self.key)
            .check(validate_part_number(self.part_number))
            .check(validate_upload_id(&self.upload_id))
            .check(range_check)
            .query("partNumber", self.part_number)
            .query("uploadId", &self.upload_id)
            .header_opt("x-amz-copy-source-range", self.source_range)
            .sse_customer_key(self.sse_customer_key.as_ref(), false)
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            );
        self.source.apply(builder).build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<UploadPartCopyOutput, Error> {
        decode(response, |parts, body| {
            let head = Head::new(&parts.headers);
            Ok(UploadPartCopyOutput {
                result: crate::xml::document_or_error(parts.status, &body, "CopyPartResult")?,
                copy_source_version_id: head.string("x-amz-copy-source-version-id"),
                encryption: head.encryption(),
                ids: head.request_ids(),
            })
        })
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "UploadPartCopy"
    }
}

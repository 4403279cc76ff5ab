//! CompleteMultipartUpload: assemble the uploaded parts into the object.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::{CompleteMultipartUploadResult, CompletedPart};

use crate::checksum::{Checksum, ChecksumType};
use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::{BucketName, ObjectKey};
use crate::ops::option_setters;
use crate::ops::{validate_part_number, validate_upload_id};
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{EncryptionInfo, Head, RequestIds, decode};
use crate::types::SseCustomerKey;

/// `POST /{Key}?uploadId={id}` with the part list.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_CompleteMultipartUpload.html>.
/// S3 may answer 200 and still fail (it sends the status before it knows): the decoder
/// reports an `<Error>` body as [`Error::Service`] with status 200, which is retryable
/// when its code is (`InternalError`, `SlowDown`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompleteMultipartUpload {
    bucket: BucketName,
    key: ObjectKey,
    upload_id: String,
    parts: Vec<CompletedPart>,
    full_object_checksum: Option<Checksum>,
    checksum_type: Option<ChecksumType>,
    object_size: Option<u64>,
    if_match: Option<String>,
    if_none_match_any: bool,
    sse_customer_key: Option<SseCustomerKey>,
    expected_bucket_owner: Option<String>,
}

/// What CompleteMultipartUpload returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompleteMultipartUploadOutput {
    /// The result document (location, bucket, key, ETag, checksums).
    pub result: CompleteMultipartUploadResult,
    /// `x-amz-version-id`.
    pub version_id: Option<String>,
    /// `x-amz-expiration`.
    pub expiration: Option<String>,
    /// Server-side encryption applied.
    pub encryption: EncryptionInfo,
    /// Request ids.
    pub ids: RequestIds,
}

impl CompleteMultipartUpload {
    /// Completes `upload_id` with `parts` (ascending part numbers, each with the ETag and
    /// checksums UploadPart returned).
    pub fn new(
        bucket: BucketName,
        key: ObjectKey,
        upload_id: impl Into<String>,
        parts: Vec<CompletedPart>,
    ) -> Self {
        CompleteMultipartUpload {
            bucket,
            key,
            upload_id: upload_id.into(),
            parts,
            full_object_checksum: None,
            checksum_type: None,
            object_size: None,
            if_match: None,
            if_none_match_any: false,
            sse_customer_key: None,
            expected_bucket_owner: None,
        }
    }

    option_setters! {
        /// The checksum of the whole object (`x-amz-checksum-*`), checked by S3 against the
        /// assembled object (full-object CRCs; see [`Checksum::combine`]).
        full_object_checksum: Checksum,
        /// `x-amz-checksum-type`, which must match CreateMultipartUpload's.
        checksum_type: ChecksumType,
        /// `x-amz-mp-object-size`: S3 checks the assembled size against it.
        object_size: u64,
        /// `If-Match`: complete only if the current object has this ETag.
        if_match: impl Into<String>,
    }

    /// `If-None-Match: *`: complete only if no object exists under the key.
    pub fn if_none_match_any(mut self) -> Self {
        self.if_none_match_any = true;
        self
    }

    option_setters! {
        /// The upload was created with this SSE-C key.
        sse_customer_key: SseCustomerKey,
        /// `x-amz-expected-bucket-owner`.
        expected_bucket_owner: impl Into<String>,
    }

    fn validate_parts(&self) -> Result<(), Error> {
        if self.parts.is_empty() {
            return Err(InvalidInput::Parameter {
                name: "Part",
                reason: "at least one part is required".to_owned(),
            }
            .into());
        }
        let mut previous = 0;
        for part in &self.parts {
            validate_part_number(part.part_number)?;
            if part.part_number <= previous {
                return Err(InvalidInput::Parameter {
                    name: "PartNumber",
                    reason: format!(
                        "parts must be in strictly ascending order ({} after {previous})",
                        part.part_number
                    ),
                }
                .into());
            }
            previous = part.part_number;
        }
        Ok(())
    }
}

impl Operation for CompleteMultipartUpload {
    type Output = CompleteMultipartUploadOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        self.validate_parts()?;
        let document = s3_xml::CompleteMultipartUpload::new(self.parts.clone());
        let body = crate::xml::request_body(
            s3_xml::encode_complete_multipart_upload(&document),
            "CompleteMultipartUpload",
        )?;
        let checksum = self.full_object_checksum.as_ref();
        RequestBuilder::new(endpoint, Method::POST)
            .bucket(&self.bucket)
            .key(&self.key)
            .check(validate_upload_id(&self.upload_id))
            .query("uploadId", &self.upload_id)
            .header_opt(
                "x-amz-checksum-type",
                self.checksum_type.map(ChecksumType::as_str),
            )
            .header_opt("x-amz-mp-object-size", self.object_size)
            .header_opt("if-match", self.if_match.as_ref())
            .header_opt("if-none-match", self.if_none_match_any.then_some("*"))
            .sse_customer_key(self.sse_customer_key.as_ref(), false)
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
            .checksum_header(checksum)
            .completion_body(body)
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<CompleteMultipartUploadOutput, Error> {
        decode(response, |parts, body| {
            let result = crate::xml::document_or_error(
                parts.status,
                &body,
                "CompleteMultipartUploadResult",
            )?;
            let head = Head::new(&parts.headers);
            Ok(CompleteMultipartUploadOutput {
                result,
                version_id: head.version_id(),
                expiration: head.string("x-amz-expiration"),
                encryption: head.encryption(),
                ids: head.request_ids(),
            })
        })
    }

    /// Completing the same upload again with the same parts returns the same object (S3
    /// answers a retry after success with 200 or `NoSuchUpload`).
    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "CompleteMultipartUpload"
    }
}

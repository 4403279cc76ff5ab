//! UploadPart: upload one part of a multipart upload.

use bytes::Bytes;
use http::{Method, Response};

use crate::checksum::ResponseChecksums;
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::option_setters;
use crate::ops::{Payload, payload_setters, validate_part_number};
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{EncryptionInfo, Head, RequestIds, decode};
use crate::types::SseCustomerKey;

/// `PUT /{Key}?partNumber={n}&uploadId={id}`: one part (5 MiB to 5 GiB; the last may be
/// smaller).
///
/// A part carries the checksum algorithm its upload was created with
/// (`CreateMultipartUpload::checksum_algorithm`), set here with `checksum_algorithm` or
/// `checksum`; transports add none by default (see
/// [`Operation::with_integrity_defaults`]).
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_UploadPart.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadPart {
    bucket: BucketName,
    key: ObjectKey,
    upload_id: String,
    part_number: u32,
    pub(crate) payload: Payload,
    sse_customer_key: Option<SseCustomerKey>,
    expected_bucket_owner: Option<String>,
}

/// What UploadPart returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UploadPartOutput {
    /// The part's `ETag`, needed by CompleteMultipartUpload.
    pub etag: Option<s3_xml::ETag>,
    /// Checksums S3 computed for the part (needed by CompleteMultipartUpload when the
    /// upload was created with a checksum algorithm).
    pub checksums: ResponseChecksums,
    /// Server-side encryption applied.
    pub encryption: EncryptionInfo,
    /// Request ids.
    pub ids: RequestIds,
}

impl UploadPart {
    /// Part `part_number` (1–10000) of upload `upload_id`.
    pub fn new(
        bucket: BucketName,
        key: ObjectKey,
        upload_id: impl Into<String>,
        part_number: u32,
    ) -> Self {
        UploadPart {
            bucket,
            key,
            upload_id: upload_id.into(),
            part_number,
            payload: Payload::default(),
            sse_customer_key: None,
            expected_bucket_owner: None,
        }
    }

    payload_setters!();

    option_setters! {
        /// The upload was created with this SSE-C key.
        sse_customer_key: SseCustomerKey,
        /// `x-amz-expected-bucket-owner`.
        expected_bucket_owner: impl Into<String>,
    }
}

impl Operation for UploadPart {
    type Output = UploadPartOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let builder = RequestBuilder::new(endpoint, Method::PUT)
            .bucket(&self.bucket)
            .key(&self.key)
            .check(validate_part_number(self.part_number))
            .check(crate::ops::validate_upload_id(&self.upload_id))
            .query("partNumber", self.part_number)
            .query("uploadId", &self.upload_id)
            .sse_customer_key(self.sse_customer_key.as_ref(), false)
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            );
        self.payload.apply(builder).build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<UploadPartOutput, Error> {
        decode(response, |parts, _| {
            let head = Head::new(&parts.headers);
            Ok(UploadPartOutput {
                etag: head.etag()?,
                checksums: head.checksums(),
                encryption: head.encryption(),
                ids: head.request_ids(),
            })
        })
    }

    /// Re-uploading a part replaces it with the same bytes.
    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "UploadPart"
    }
}

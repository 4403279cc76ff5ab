//! CreateMultipartUpload: start a multipart upload.

use std::time::SystemTime;

use bytes::Bytes;
use http::{Method, Response};

use crate::checksum::{ChecksumAlgorithm, ChecksumType};
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::option_setters;
use crate::ops::{ObjectAttributes, object_attribute_setters};
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{EncryptionInfo, Head, RequestIds, decode};

/// `POST /{Key}?uploads`: returns the upload id that UploadPart, CompleteMultipartUpload
/// and AbortMultipartUpload take. Object attributes (content type, metadata, encryption,
/// ...) are given here, not on completion.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateMultipartUpload.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateMultipartUpload {
    bucket: BucketName,
    key: ObjectKey,
    pub(crate) attributes: ObjectAttributes,
    checksum_algorithm: Option<ChecksumAlgorithm>,
    checksum_type: Option<ChecksumType>,
}

/// What CreateMultipartUpload returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CreateMultipartUploadOutput {
    /// The upload id.
    pub upload_id: String,
    /// `x-amz-abort-date`: when a lifecycle rule will abort the upload.
    pub abort_date: Option<SystemTime>,
    /// `x-amz-abort-rule-id`.
    pub abort_rule_id: Option<String>,
    /// `x-amz-checksum-algorithm` the parts must use.
    pub checksum_algorithm: Option<String>,
    /// `x-amz-checksum-type`.
    pub checksum_type: Option<String>,
    /// Server-side encryption that will be applied.
    pub encryption: EncryptionInfo,
    /// Request ids.
    pub ids: RequestIds,
}

impl CreateMultipartUpload {
    /// Starts an upload to `key` in `bucket`.
    pub fn new(bucket: BucketName, key: ObjectKey) -> Self {
        CreateMultipartUpload {
            bucket,
            key,
            attributes: ObjectAttributes::default(),
            checksum_algorithm: None,
            checksum_type: None,
        }
    }

    object_attribute_setters!(attributes);

    /// Replaces every object attribute at once (see [`ObjectAttributes`]).
    pub fn attributes(mut self, attributes: ObjectAttributes) -> Self {
        self.attributes = attributes;
        self
    }

    option_setters! {
        /// `x-amz-checksum-algorithm`: every part will carry this checksum.
        checksum_algorithm: ChecksumAlgorithm,
        /// `x-amz-checksum-type`: composite (checksum of part checksums) or full-object
        /// (CRCs only).
        checksum_type: ChecksumType,
    }
}

impl Operation for CreateMultipartUpload {
    type Output = CreateMultipartUploadOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let builder = RequestBuilder::new(endpoint, Method::POST)
            .bucket(&self.bucket)
            .key(&self.key)
            .subresource("uploads")
            .header_opt("x-amz-checksum-algorithm", self.checksum_algorithm)
            .header_opt(
                "x-amz-checksum-type",
                self.checksum_type.map(ChecksumType::as_str),
            );
        self.attributes.apply(builder).build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<CreateMultipartUploadOutput, Error> {
        decode(response, |parts, body| {
            let result = crate::xml::document(
                &body,
                s3_xml::decode_initiate_multipart_upload,
                "InitiateMultipartUploadResult",
            )?;
            let head = Head::new(&parts.headers);
            Ok(CreateMultipartUploadOutput {
                upload_id: result.upload_id,
                abort_date: head.date("x-amz-abort-date")?,
                abort_rule_id: head.string("x-amz-abort-rule-id"),
                checksum_algorithm: head.string("x-amz-checksum-algorithm"),
                checksum_type: head.string("x-amz-checksum-type"),
                encryption: head.encryption(),
                ids: head.request_ids(),
            })
        })
    }

    /// Each call starts a new upload, so a retry after a lost answer leaves the first upload
    /// id unknown to the caller. That costs nothing lasting (an empty upload, aborted by a
    /// sweep of stale uploads or by a lifecycle rule) while failing the transfer would cost
    /// the caller's time: transports retry it like any idempotent request.
    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "CreateMultipartUpload"
    }
}

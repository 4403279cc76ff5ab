//! AbortMultipartUpload: discard an upload and its parts.

use bytes::Bytes;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::option_setters;
use crate::ops::validate_upload_id;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{RequestIds, decode_request_ids};

/// `DELETE /{Key}?uploadId={id}`.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_AbortMultipartUpload.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbortMultipartUpload {
    bucket: BucketName,
    key: ObjectKey,
    upload_id: String,
    expected_bucket_owner: Option<String>,
}

impl AbortMultipartUpload {
    /// Aborts `upload_id` of `key`.
    pub fn new(bucket: BucketName, key: ObjectKey, upload_id: impl Into<String>) -> Self {
        AbortMultipartUpload {
            bucket,
            key,
            upload_id: upload_id.into(),
            expected_bucket_owner: None,
        }
    }

    option_setters! {
        /// `x-amz-expected-bucket-owner`.
        expected_bucket_owner: impl Into<String>,
    }
}

impl Operation for AbortMultipartUpload {
    /// Only the request ids: success is the answer.
    type Output = RequestIds;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        RequestBuilder::new(endpoint, Method::DELETE)
            .bucket(&self.bucket)
            .key(&self.key)
            .check(validate_upload_id(&self.upload_id))
            .query("uploadId", &self.upload_id)
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<RequestIds, Error> {
        decode_request_ids(response)
    }

    /// A retry after success answers `NoSuchUpload`, which callers treat as done.
    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "AbortMultipartUpload"
    }
}

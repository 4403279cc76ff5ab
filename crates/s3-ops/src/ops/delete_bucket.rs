//! DeleteBucket: delete an empty bucket.

use bytes::Bytes;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::option_setters;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{RequestIds, decode_request_ids};

/// `DELETE /` on the bucket (which must be empty).
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucket.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteBucket {
    bucket: BucketName,
    expected_bucket_owner: Option<String>,
}

impl DeleteBucket {
    /// Deletes `bucket`.
    pub fn new(bucket: BucketName) -> Self {
        DeleteBucket {
            bucket,
            expected_bucket_owner: None,
        }
    }

    option_setters! {
        /// `x-amz-expected-bucket-owner`.
        expected_bucket_owner: impl Into<String>,
    }
}

impl Operation for DeleteBucket {
    /// Only the request ids: success is the answer.
    type Output = RequestIds;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        RequestBuilder::new(endpoint, Method::DELETE)
            .control_plane()
            .bucket(&self.bucket)
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<RequestIds, Error> {
        decode_request_ids(response)
    }

    /// A retry after success answers `NoSuchBucket`.
    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "DeleteBucket"
    }
}

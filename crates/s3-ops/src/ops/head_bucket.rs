//! HeadBucket: does the bucket exist, may we access it, and where is it.

use bytes::Bytes;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::option_setters;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{Head, RequestIds, decode};

/// `HEAD /` on the bucket. A 404 decodes as `NotFound`, a 403 as `Forbidden`, a 301 as
/// `PermanentRedirect` with the bucket's region (see [`crate::Error::retry_class`]).
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadBucket {
    bucket: BucketName,
    expected_bucket_owner: Option<String>,
}

/// What HeadBucket returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeadBucketOutput {
    /// `x-amz-bucket-region`.
    pub region: Option<String>,
    /// `x-amz-access-point-alias`.
    pub access_point_alias: Option<bool>,
    /// Request ids.
    pub ids: RequestIds,
}

impl HeadBucket {
    /// Checks `bucket`.
    pub fn new(bucket: BucketName) -> Self {
        HeadBucket {
            bucket,
            expected_bucket_owner: None,
        }
    }

    option_setters! {
        /// `x-amz-expected-bucket-owner`.
        expected_bucket_owner: impl Into<String>,
    }
}

impl Operation for HeadBucket {
    type Output = HeadBucketOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        RequestBuilder::new(endpoint, Method::HEAD)
            .iam_auth()
            .bucket(&self.bucket)
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<HeadBucketOutput, Error> {
        decode(response, |parts, _| {
            let head = Head::new(&parts.headers);
            Ok(HeadBucketOutput {
                region: head.string("x-amz-bucket-region"),
                access_point_alias: head.bool("x-amz-access-point-alias")?,
                ids: head.request_ids(),
            })
        })
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "HeadBucket"
    }
}

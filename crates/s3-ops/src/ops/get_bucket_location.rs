//! GetBucketLocation: the region a bucket lives in.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::BucketLocation;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::option_setters;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{DocumentOutput, decode_document};

/// `GET /?location` on the bucket. [`BucketLocation::region`] maps the legacy empty
/// (`us-east-1`) and `EU` (`eu-west-1`) answers to region names.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketLocation.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetBucketLocation {
    bucket: BucketName,
    expected_bucket_owner: Option<String>,
}

/// What GetBucketLocation returns.
pub type GetBucketLocationOutput = DocumentOutput<BucketLocation>;

impl GetBucketLocation {
    /// Asks where `bucket` is.
    pub fn new(bucket: BucketName) -> Self {
        GetBucketLocation {
            bucket,
            expected_bucket_owner: None,
        }
    }

    option_setters! {
        /// `x-amz-expected-bucket-owner`.
        expected_bucket_owner: impl Into<String>,
    }
}

impl Operation for GetBucketLocation {
    type Output = GetBucketLocationOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        RequestBuilder::new(endpoint, Method::GET)
            .control_plane()
            .bucket(&self.bucket)
            .subresource("location")
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<GetBucketLocationOutput, Error> {
        decode_document(
            response,
            s3_xml::decode_bucket_location,
            "LocationConstraint",
        )
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "GetBucketLocation"
    }
}

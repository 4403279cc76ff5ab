//! CreateBucket: create a bucket, optionally in a given region.

use bytes::Bytes;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::option_setters;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{Head, RequestIds, decode};
use crate::types::CannedAcl;

/// `PUT /` on the bucket, with a `CreateBucketConfiguration` body naming the region.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateBucket.html>.
/// On AWS endpoints outside `us-east-1` the location constraint defaults to the
/// endpoint's region (S3 rejects the request without it); `us-east-1` takes no body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateBucket {
    bucket: BucketName,
    location: Option<String>,
    acl: Option<CannedAcl>,
    object_ownership: Option<String>,
    object_lock_enabled: bool,
}

/// What CreateBucket returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CreateBucketOutput {
    /// `Location` header (`/bucket` or the bucket URL).
    pub location: Option<String>,
    /// Request ids.
    pub ids: RequestIds,
}

impl CreateBucket {
    /// Creates `bucket`.
    pub fn new(bucket: BucketName) -> Self {
        CreateBucket {
            bucket,
            location: None,
            acl: None,
            object_ownership: None,
            object_lock_enabled: false,
        }
    }

    option_setters! {
        /// `<LocationConstraint>`: the region to create the bucket in.
        location: impl Into<String>,
        /// `x-amz-acl`.
        acl: CannedAcl,
        /// `x-amz-object-ownership` (`BucketOwnerEnforced`, `BucketOwnerPreferred`,
        /// `ObjectWriter`).
        object_ownership: impl Into<String>,
    }

    /// `x-amz-bucket-object-lock-enabled: true`.
    pub fn object_lock_enabled(mut self, enabled: bool) -> Self {
        self.object_lock_enabled = enabled;
        self
    }
}

impl Operation for CreateBucket {
    type Output = CreateBucketOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let location = match &self.location {
            Some(location) => Some(location.clone()),
            None if endpoint.is_aws() && endpoint.region() != "us-east-1" => {
                Some(endpoint.region().to_owned())
            }
            None => None,
        };
        let builder = RequestBuilder::new(endpoint, Method::PUT)
            .control_plane()
            .check(self.bucket.require_bucket())
            .bucket(&self.bucket)
            .header_opt("x-amz-acl", self.acl)
            .header_opt("x-amz-object-ownership", self.object_ownership.as_ref())
            .header_opt(
                "x-amz-bucket-object-lock-enabled",
                self.object_lock_enabled.then_some("true"),
            );
        let builder = match location {
            None => builder,
            Some(location) => {
                let mut configuration = s3_xml::CreateBucketConfiguration::default();
                configuration.location_constraint = Some(location);
                let body = crate::xml::request_body(
                    s3_xml::encode_create_bucket_configuration(&configuration),
                    "CreateBucketConfiguration",
                )?;
                builder.xml_body(body)
            }
        };
        builder.build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<CreateBucketOutput, Error> {
        decode(response, |parts, _| {
            let head = Head::new(&parts.headers);
            Ok(CreateBucketOutput {
                location: head.string("location"),
                ids: head.request_ids(),
            })
        })
    }

    /// A retry after success answers `BucketAlreadyOwnedByYou` (409, outside us-east-1).
    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "CreateBucket"
    }
}

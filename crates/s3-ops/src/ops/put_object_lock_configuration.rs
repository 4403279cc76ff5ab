//! PutObjectLockConfiguration: a bucket's Object Lock state and default retention.

use bytes::Bytes;
use http::Response;
use s3_xml::ObjectLockConfiguration;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::option_setters;
use crate::ops::subresource::{BucketSubresource, bucket_subresource_setters, invalid};
use crate::request::{Operation, OperationRequest};
use crate::response::{RequestIds, decode_request_ids};

/// `PUT /?object-lock` with an `<ObjectLockConfiguration>`: enables Object Lock on a
/// versioned bucket (S3 turns it on, never off) and sets or clears the default retention of
/// new object versions.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObjectLockConfiguration.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutObjectLockConfiguration {
    target: BucketSubresource,
    configuration: ObjectLockConfiguration,
    token: Option<String>,
}

impl PutObjectLockConfiguration {
    /// Sets the Object Lock configuration of `bucket`.
    pub fn new(bucket: BucketName, configuration: ObjectLockConfiguration) -> Self {
        PutObjectLockConfiguration {
            target: BucketSubresource::new(bucket),
            configuration,
            token: None,
        }
    }

    bucket_subresource_setters!();

    option_setters! {
        /// `x-amz-bucket-object-lock-token`: the token AWS Support gives to enable Object
        /// Lock on an existing bucket.
        token: impl Into<String>,
    }
}

impl Operation for PutObjectLockConfiguration {
    /// Only the request ids: success is the answer.
    type Output = RequestIds;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        if !self.configuration.enabled {
            return Err(invalid(
                "ObjectLockEnabled",
                "S3 takes an Object Lock configuration only with ObjectLockEnabled (it cannot \
                 be turned off); use ObjectLockConfiguration::enabled",
            ));
        }
        let encoded = s3_xml::encode_object_lock_configuration(&self.configuration);
        self.target
            .put_xml(endpoint, "object-lock", encoded, "ObjectLockConfiguration")
            .header_opt("x-amz-bucket-object-lock-token", self.token.as_ref())
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<RequestIds, Error> {
        decode_request_ids(response)
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "PutObjectLockConfiguration"
    }
}

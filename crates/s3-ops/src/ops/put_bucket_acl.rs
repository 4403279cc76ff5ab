//! PutBucketAcl: replace a bucket's access control list.

use bytes::Bytes;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::put_object_acl::AclSource;
use crate::ops::subresource::{BucketSubresource, bucket_subresource_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{RequestIds, decode_request_ids};

/// `PUT /?acl`: replaces the ACL of a bucket (canned ACLs `private`, `public-read`,
/// `public-read-write`, `authenticated-read`, explicit grants, or a whole policy).
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketAcl.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutBucketAcl {
    target: BucketSubresource,
    acl: AclSource,
}

impl PutBucketAcl {
    /// Sets the ACL of `bucket` from `acl`.
    pub fn new(bucket: BucketName, acl: AclSource) -> Self {
        PutBucketAcl {
            target: BucketSubresource::new(bucket),
            acl,
        }
    }

    bucket_subresource_setters!();
}

impl Operation for PutBucketAcl {
    /// Only the request ids: success is the answer.
    type Output = RequestIds;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let builder = self.target.builder(endpoint, Method::PUT, "acl");
        self.acl.apply(false, builder).build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<RequestIds, Error> {
        decode_request_ids(response)
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "PutBucketAcl"
    }
}

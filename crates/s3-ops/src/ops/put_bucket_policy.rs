//! PutBucketPolicy: replace a bucket's policy.

use bytes::Bytes;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::subresource::{BucketSubresource, bucket_subresource_setters, invalid, md5_body};
use crate::request::{Operation, OperationRequest};
use crate::response::{RequestIds, decode_request_ids};

/// The largest bucket policy S3 stores, in bytes.
pub const MAX_POLICY_BYTES: usize = 20 * 1024;

/// `PUT /?policy` with the policy's JSON, sent verbatim (not parsed here: S3 checks it and
/// answers `MalformedPolicy`), up to [`MAX_POLICY_BYTES`].
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketPolicy.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutBucketPolicy {
    target: BucketSubresource,
    policy: String,
    confirm_remove_self_bucket_access: bool,
}

impl PutBucketPolicy {
    /// Sets the policy of `bucket` to the JSON document `policy`.
    pub fn new(bucket: BucketName, policy: impl Into<String>) -> Self {
        PutBucketPolicy {
            target: BucketSubresource::new(bucket),
            policy: policy.into(),
            confirm_remove_self_bucket_access: false,
        }
    }

    bucket_subresource_setters!();

    /// `x-amz-confirm-remove-self-bucket-access: true`: accept a policy that locks the
    /// caller's own account out of changing it again.
    pub fn confirm_remove_self_bucket_access(mut self, confirm: bool) -> Self {
        self.confirm_remove_self_bucket_access = confirm;
        self
    }
}

impl Operation for PutBucketPolicy {
    /// Only the request ids: success is the answer.
    type Output = RequestIds;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let len = self.policy.len();
        if len > MAX_POLICY_BYTES {
            return Err(invalid(
                "Policy",
                format!("{len} bytes; S3 stores bucket policies up to {MAX_POLICY_BYTES}"),
            ));
        }
        if self.policy.trim().is_empty() {
            return Err(invalid(
                "Policy",
                "empty; remove a policy with DeleteBucketPolicy",
            ));
        }
        let builder = self
            .target
            .builder(endpoint, Method::PUT, "policy")
            .header_opt(
                "x-amz-confirm-remove-self-bucket-access",
                self.confirm_remove_self_bucket_access.then_some("true"),
            );
        md5_body(
            builder,
            self.policy.clone().into_bytes(),
            Some("application/json"),
        )
        .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<RequestIds, Error> {
        decode_request_ids(response)
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "PutBucketPolicy"
    }
}

//! GetBucketPolicy: a bucket's policy.

use bytes::Bytes;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::put_bucket_policy::MAX_POLICY_BYTES;
use crate::ops::subresource::{BucketSubresource, bucket_subresource_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{Head, RequestIds, decode};

/// `GET /?policy`: the bucket policy's JSON, as S3 stores it (`NoSuchBucketPolicy`, 404,
/// when there is none). The answer is bounded by S3's policy size limit with room for the
/// whitespace another store may add.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketPolicy.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetBucketPolicy {
    target: BucketSubresource,
}

/// What GetBucketPolicy returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GetBucketPolicyOutput {
    /// The policy document (JSON), verbatim.
    pub policy: String,
    /// Request ids.
    pub ids: RequestIds,
}

impl GetBucketPolicy {
    /// Reads the policy of `bucket`.
    pub fn new(bucket: BucketName) -> Self {
        GetBucketPolicy {
            target: BucketSubresource::new(bucket),
        }
    }

    bucket_subresource_setters!();
}

impl Operation for GetBucketPolicy {
    type Output = GetBucketPolicyOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        self.target.builder(endpoint, Method::GET, "policy").build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<GetBucketPolicyOutput, Error> {
        let limit = self.response_body_limit();
        decode(response, |parts, body| {
            if body.len() > limit {
                return Err(Error::malformed(format!(
                    "a bucket policy of {} bytes exceeds the {limit} bytes accepted",
                    body.len()
                )));
            }
            let policy = String::from_utf8(body.to_vec())
                .map_err(|_| Error::malformed("the bucket policy is not UTF-8 text"))?;
            Ok(GetBucketPolicyOutput {
                policy,
                ids: Head::new(&parts.headers).request_ids(),
            })
        })
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "GetBucketPolicy"
    }

    fn response_body_limit(&self) -> usize {
        4 * MAX_POLICY_BYTES
    }
}

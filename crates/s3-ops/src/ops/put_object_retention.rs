//! PutObjectRetention: set an object version's Object Lock retention.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::Retention;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::subresource::{ObjectSubresource, invalid, object_subresource_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{RequestIds, decode_request_ids};

/// `PUT /{Key}?retention` with a `<Retention>` (and the `Content-MD5` S3 requires). A
/// compliance retention can only be extended; a governance one can be shortened or removed
/// (an empty [`Retention`]) with [`PutObjectRetention::bypass_governance_retention`].
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObjectRetention.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutObjectRetention {
    target: ObjectSubresource,
    retention: Retention,
    bypass_governance_retention: bool,
}

impl PutObjectRetention {
    /// Sets the retention of `key`.
    pub fn new(bucket: BucketName, key: ObjectKey, retention: Retention) -> Self {
        PutObjectRetention {
            target: ObjectSubresource::new(bucket, key),
            retention,
            bypass_governance_retention: false,
        }
    }

    object_subresource_setters!();

    /// `x-amz-bypass-governance-retention: true`: shorten or remove a governance retention
    /// (needs the `s3:BypassGovernanceRetention` permission).
    pub fn bypass_governance_retention(mut self, bypass: bool) -> Self {
        self.bypass_governance_retention = bypass;
        self
    }
}

impl Operation for PutObjectRetention {
    /// Only the request ids: success is the answer.
    type Output = RequestIds;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        if self.retention.mode.is_some() != self.retention.retain_until_date.is_some() {
            return Err(invalid(
                "Retention",
                "a retention needs both a mode and a retain-until date (or neither, with the \
                 governance bypass, to remove one)",
            ));
        }
        let body =
            crate::xml::request_body(s3_xml::encode_retention(&self.retention), "Retention")?;
        self.target
            .builder(endpoint, Method::PUT, "retention")
            .header_opt(
                "x-amz-bypass-governance-retention",
                self.bypass_governance_retention.then_some("true"),
            )
            .xml_body(body)
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<RequestIds, Error> {
        decode_request_ids(response)
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "PutObjectRetention"
    }
}

//! DeleteObject: remove one object (or one version).

use bytes::Bytes;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::option_setters;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{Head, RequestIds, decode};

/// `DELETE /{Key}`: delete an object, or a specific version of it.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteObject {
    bucket: BucketName,
    key: ObjectKey,
    version_id: Option<String>,
    if_match: Option<String>,
    expected_bucket_owner: Option<String>,
    bypass_governance_retention: bool,
}

/// What DeleteObject returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteObjectOutput {
    /// `x-amz-delete-marker`: a delete marker was created (or the deleted version was one).
    pub delete_marker: bool,
    /// `x-amz-version-id`: the version deleted, or the delete marker created.
    pub version_id: Option<String>,
    /// Request ids.
    pub ids: RequestIds,
}

impl DeleteObject {
    /// Deletes `key` from `bucket`.
    pub fn new(bucket: BucketName, key: ObjectKey) -> Self {
        DeleteObject {
            bucket,
            key,
            version_id: None,
            if_match: None,
            expected_bucket_owner: None,
            bypass_governance_retention: false,
        }
    }

    /// `x-amz-bypass-governance-retention: true`: delete a version under a governance-mode
    /// retention (needs the `s3:BypassGovernanceRetention` permission).
    pub fn bypass_governance_retention(mut self, bypass: bool) -> Self {
        self.bypass_governance_retention = bypass;
        self
    }

    option_setters! {
        /// Deletes this version permanently.
        version_id: impl Into<String>,
        /// `If-Match`: delete only if the ETag matches (412 otherwise).
        if_match: impl Into<String>,
        /// `x-amz-expected-bucket-owner`.
        expected_bucket_owner: impl Into<String>,
    }

    pub(crate) fn builder<'a>(&'a self, endpoint: &'a Endpoint) -> RequestBuilder<'a> {
        RequestBuilder::new(endpoint, Method::DELETE)
            .bucket(&self.bucket)
            .key(&self.key)
            .query_opt("versionId", self.version_id.as_ref())
            .header_opt("if-match", self.if_match.as_ref())
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
            .header_opt(
                "x-amz-bypass-governance-retention",
                self.bypass_governance_retention.then_some("true"),
            )
    }
}

impl Operation for DeleteObject {
    type Output = DeleteObjectOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        self.builder(endpoint).build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<DeleteObjectOutput, Error> {
        decode(response, |parts, _| {
            let head = Head::new(&parts.headers);
            Ok(DeleteObjectOutput {
                delete_marker: head.bool("x-amz-delete-marker")?.unwrap_or(false),
                version_id: head.version_id(),
                ids: head.request_ids(),
            })
        })
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "DeleteObject"
    }
}

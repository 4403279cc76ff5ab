//! DeleteObjects: delete up to 1000 objects in one request.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::{Delete, DeleteResult, ObjectIdentifier};

use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::{BucketName, ObjectKey};
use crate::ops::option_setters;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{DocumentOutput, decode_document};

/// `POST /?delete` with a `<Delete>` body and its `Content-MD5` (S3 requires an
/// integrity header on this operation; MD5 is the one every S3-compatible store accepts).
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html>.
/// Per-key failures come back in [`DeleteResult::errors`] with status 200; with
/// [`DeleteObjects::quiet`] only failures are listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteObjects {
    bucket: BucketName,
    objects: Vec<(ObjectKey, Option<String>)>,
    quiet: bool,
    expected_bucket_owner: Option<String>,
    bypass_governance_retention: bool,
}

/// What DeleteObjects returns.
pub type DeleteObjectsOutput = DocumentOutput<DeleteResult>;

impl DeleteObjects {
    /// The most keys one request may name.
    pub const MAX_KEYS: usize = 1000;

    /// Deletes `keys` (1 to 1000) from `bucket`.
    pub fn new(bucket: BucketName, keys: impl IntoIterator<Item = ObjectKey>) -> Self {
        DeleteObjects {
            bucket,
            objects: keys.into_iter().map(|key| (key, None)).collect(),
            quiet: false,
            expected_bucket_owner: None,
            bypass_governance_retention: false,
        }
    }

    /// `x-amz-bypass-governance-retention: true`: delete versions under a governance-mode
    /// retention (needs the `s3:BypassGovernanceRetention` permission).
    pub fn bypass_governance_retention(mut self, bypass: bool) -> Self {
        self.bypass_governance_retention = bypass;
        self
    }

    /// Also deletes this specific version.
    pub fn version(mut self, key: ObjectKey, version_id: impl Into<String>) -> Self {
        self.objects.push((key, Some(version_id.into())));
        self
    }

    /// `<Quiet>true</Quiet>`: report only the failures.
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    option_setters! {
        /// `x-amz-expected-bucket-owner`.
        expected_bucket_owner: impl Into<String>,
    }
}

impl Operation for DeleteObjects {
    type Output = DeleteObjectsOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let count = self.objects.len();
        if count == 0 || count > Self::MAX_KEYS {
            return Err(InvalidInput::DeleteBatchSize { count }.into());
        }
        let objects = self
            .objects
            .iter()
            .map(|(key, version)| match version {
                Some(version) => ObjectIdentifier::with_version(key.as_str(), version.as_str()),
                None => ObjectIdentifier::new(key.as_str()),
            })
            .collect();
        let document = Delete::new(objects).quiet(self.quiet);
        let body = crate::xml::request_body(s3_xml::encode_delete(&document), "Delete")?;
        RequestBuilder::new(endpoint, Method::POST)
            .bucket(&self.bucket)
            .subresource("delete")
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
            .header_opt(
                "x-amz-bypass-governance-retention",
                self.bypass_governance_retention.then_some("true"),
            )
            .xml_body(body)
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<DeleteObjectsOutput, Error> {
        decode_document(response, s3_xml::decode_delete_result, "DeleteResult")
    }

    /// Deleting what is already gone succeeds again.
    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "DeleteObjects"
    }
}

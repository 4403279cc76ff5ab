//! GetObjectTagging: an object's tag set.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::Tagging;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::subresource::{ObjectSubresource, object_subresource_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{Head, RequestIds, decode};

/// `GET /{Key}?tagging`.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectTagging.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetObjectTagging {
    target: ObjectSubresource,
}

/// What GetObjectTagging returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GetObjectTaggingOutput {
    /// The tag set.
    pub tagging: Tagging,
    /// `x-amz-version-id` of the version whose tags these are.
    pub version_id: Option<String>,
    /// Request ids.
    pub ids: RequestIds,
}

impl GetObjectTagging {
    /// Reads the tags of `key`.
    pub fn new(bucket: BucketName, key: ObjectKey) -> Self {
        GetObjectTagging {
            target: ObjectSubresource::new(bucket, key),
        }
    }

    object_subresource_setters!();
}

impl Operation for GetObjectTagging {
    type Output = GetObjectTaggingOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        self.target
            .builder(endpoint, Method::GET, "tagging")
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<GetObjectTaggingOutput, Error> {
        decode(response, |parts, body| {
            let head = Head::new(&parts.headers);
            Ok(GetObjectTaggingOutput {
                tagging: crate::xml::document(&body, s3_xml::decode_tagging, "Tagging")?,
                version_id: head.version_id(),
                ids: head.request_ids(),
            })
        })
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "GetObjectTagging"
    }
}

//! PutObjectTagging: replace an object's tag set.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::{Tag, Tagging};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::object_tagging::{MAX_OBJECT_TAGS, validate_tags};
use crate::ops::subresource::{ObjectSubresource, object_subresource_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{Head, RequestIds, decode};

/// `PUT /{Key}?tagging` with a `<Tagging>` body (and the `Content-MD5` S3 requires).
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObjectTagging.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutObjectTagging {
    target: ObjectSubresource,
    tags: Vec<(String, String)>,
}

/// What PutObjectTagging (and DeleteObjectTagging) return.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectTaggingOutput {
    /// `x-amz-version-id` of the version whose tags changed.
    pub version_id: Option<String>,
    /// Request ids.
    pub ids: RequestIds,
}

impl ObjectTaggingOutput {
    pub(crate) fn decode(response: Response<Bytes>) -> Result<Self, Error> {
        decode(response, |parts, _| {
            let head = Head::new(&parts.headers);
            Ok(ObjectTaggingOutput {
                version_id: head.version_id(),
                ids: head.request_ids(),
            })
        })
    }
}

impl PutObjectTagging {
    /// Replaces the tags of `key` with `tags` (at most 10; an empty set removes all).
    pub fn new(
        bucket: BucketName,
        key: ObjectKey,
        tags: impl IntoIterator<Item = (String, String)>,
    ) -> Self {
        PutObjectTagging {
            target: ObjectSubresource::new(bucket, key),
            tags: tags.into_iter().collect(),
        }
    }

    object_subresource_setters!();
}

impl Operation for PutObjectTagging {
    type Output = ObjectTaggingOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        validate_tags(
            self.tags.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            MAX_OBJECT_TAGS,
        )?;
        let tagging = Tagging::new(
            self.tags
                .iter()
                .map(|(key, value)| Tag::new(key.clone(), value.clone()))
                .collect(),
        );
        let body = crate::xml::request_body(s3_xml::encode_tagging(&tagging), "Tagging")?;
        self.target
            .builder(endpoint, Method::PUT, "tagging")
            .xml_body(body)
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<ObjectTaggingOutput, Error> {
        ObjectTaggingOutput::decode(response)
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "PutObjectTagging"
    }
}

//! DeleteObjectTagging: remove an object's tags.

use bytes::Bytes;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::put_object_tagging::ObjectTaggingOutput;
use crate::ops::subresource::{ObjectSubresource, object_subresource_setters};
use crate::request::{Operation, OperationRequest};

/// `DELETE /{Key}?tagging`.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjectTagging.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteObjectTagging {
    target: ObjectSubresource,
}

impl DeleteObjectTagging {
    /// Removes the tags of `key`.
    pub fn new(bucket: BucketName, key: ObjectKey) -> Self {
        DeleteObjectTagging {
            target: ObjectSubresource::new(bucket, key),
        }
    }

    object_subresource_setters!();
}

impl Operation for DeleteObjectTagging {
    type Output = ObjectTaggingOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        self.target
            .builder(endpoint, Method::DELETE, "tagging")
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<ObjectTaggingOutput, Error> {
        ObjectTaggingOutput::decode(response)
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "DeleteObjectTagging"
    }
}

//! PutObjectLegalHold: put an object version under a legal hold, or lift it.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::{LegalHold, LegalHoldStatus};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::subresource::{ObjectSubresource, object_subresource_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{RequestIds, decode_request_ids};

/// `PUT /{Key}?legal-hold` with a `<LegalHold>` (and the `Content-MD5` S3 requires).
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObjectLegalHold.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutObjectLegalHold {
    target: ObjectSubresource,
    status: LegalHoldStatus,
}

impl PutObjectLegalHold {
    /// Sets the legal hold of `key` to `status`.
    pub fn new(bucket: BucketName, key: ObjectKey, status: LegalHoldStatus) -> Self {
        PutObjectLegalHold {
            target: ObjectSubresource::new(bucket, key),
            status,
        }
    }

    object_subresource_setters!();
}

impl Operation for PutObjectLegalHold {
    /// Only the request ids: success is the answer.
    type Output = RequestIds;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let encoded = s3_xml::encode_legal_hold(&LegalHold::new(self.status));
        let body = crate::xml::request_body(encoded, "LegalHold")?;
        self.target
            .builder(endpoint, Method::PUT, "legal-hold")
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
        "PutObjectLegalHold"
    }
}

//! RestoreObject: restore a temporary copy of an archived object.

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use s3_xml::RestoreRequest;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::subresource::{ObjectSubresource, invalid, object_subresource_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{Head, RequestIds, decode};

/// `POST /{Key}?restore` with a `<RestoreRequest>`: makes an object of the GLACIER or
/// DEEP_ARCHIVE class (or an archive tier of INTELLIGENT_TIERING) readable again for a number
/// of days. S3 answers 202 when the restore starts and 200 when a restored copy already
/// exists (its days are reset); a restore still running is `RestoreAlreadyInProgress` (409).
/// HeadObject's `x-amz-restore` ([`ObjectHead::restore`](crate::ops::head_object::ObjectHead))
/// says when the copy is ready.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_RestoreObject.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreObject {
    target: ObjectSubresource,
    request: RestoreRequest,
}

/// What RestoreObject returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestoreObjectOutput {
    /// 200: a restored copy already existed (its expiry was moved); `false` for 202, a
    /// restore started.
    pub already_restored: bool,
    /// `x-amz-restore-output-path`.
    pub output_path: Option<String>,
    /// Request ids.
    pub ids: RequestIds,
}

impl RestoreObject {
    /// Restores `key` as `request` says (days, tier).
    pub fn new(bucket: BucketName, key: ObjectKey, request: RestoreRequest) -> Self {
        RestoreObject {
            target: ObjectSubresource::new(bucket, key),
            request,
        }
    }

    object_subresource_setters!();
}

impl Operation for RestoreObject {
    type Output = RestoreObjectOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        if self.request.days == Some(0) {
            return Err(invalid("Days", "a restored copy lasts at least 1 day"));
        }
        let encoded = s3_xml::encode_restore_request(&self.request);
        let body = crate::xml::request_body(encoded, "RestoreRequest")?;
        self.target
            .builder(endpoint, Method::POST, "restore")
            .xml_body(body)
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<RestoreObjectOutput, Error> {
        decode(response, |parts, _| {
            let head = Head::new(&parts.headers);
            Ok(RestoreObjectOutput {
                already_restored: parts.status == StatusCode::OK,
                output_path: head.string("x-amz-restore-output-path"),
                ids: head.request_ids(),
            })
        })
    }

    /// A second request resets the days of the same copy (or answers
    /// `RestoreAlreadyInProgress`).
    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "RestoreObject"
    }
}

//! GetObject: read an object (or a range / part of it).

use bytes::Bytes;
use http::response::Parts;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::head_object::{ObjectHead, ObjectSelector, object_selector_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::decode;

/// `GET /{Key}`: an object's bytes and metadata.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html>.
///
/// Transports that stream the body call [`GetObject::response_head`] on a successful
/// response head and read the body themselves (validating it with
/// [`ObjectHead::checksum_validator`] when checksum mode is on); for error statuses they
/// buffer the body and call [`Operation::response`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetObject {
    selector: ObjectSelector,
    overrides: ResponseHeaderOverrides,
}

/// `response-*` query parameters: headers S3 should send back instead of the stored ones
/// (signed requests / presigned URLs only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseHeaderOverrides {
    /// `response-cache-control`.
    pub cache_control: Option<String>,
    /// `response-content-disposition`.
    pub content_disposition: Option<String>,
    /// `response-content-encoding`.
    pub content_encoding: Option<String>,
    /// `response-content-language`.
    pub content_language: Option<String>,
    /// `response-content-type`.
    pub content_type: Option<String>,
    /// `response-expires` (an HTTP date, verbatim).
    pub expires: Option<String>,
}

/// What GetObject returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GetObjectOutput {
    /// Status and headers.
    pub head: ObjectHead,
    /// The body; empty when decoded with [`GetObject::response_head`].
    pub body: Bytes,
}

impl GetObject {
    /// Reads `key` from `bucket`.
    pub fn new(bucket: BucketName, key: ObjectKey) -> Self {
        GetObject {
            selector: ObjectSelector::new(bucket, key),
            overrides: ResponseHeaderOverrides::default(),
        }
    }

    object_selector_setters!();

    /// Overrides response headers (`response-content-type`, ...).
    pub fn response_headers(mut self, overrides: ResponseHeaderOverrides) -> Self {
        self.overrides = overrides;
        self
    }

    /// Decodes a successful response head (2xx); the transport streams the body.
    /// Non-2xx heads are rejected with a bodiless [`S3Error`](crate::S3Error): buffer the body and use
    /// [`Operation::response`] to get the full error document instead.
    pub fn response_head(&self, parts: &Parts) -> Result<GetObjectOutput, Error> {
        if !parts.status.is_success() {
            return Err(crate::response::service_error(parts, &[]).into());
        }
        Ok(GetObjectOutput {
            head: ObjectHead::from_parts(parts)?,
            body: Bytes::new(),
        })
    }
}

impl Operation for GetObject {
    type Output = GetObjectOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let overrides = &self.overrides;
        self.selector
            .builder(endpoint, Method::GET)
            .query_opt("response-cache-control", overrides.cache_control.as_ref())
            .query_opt(
                "response-content-disposition",
                overrides.content_disposition.as_ref(),
            )
            .query_opt(
                "response-content-encoding",
                overrides.content_encoding.as_ref(),
            )
            .query_opt(
                "response-content-language",
                overrides.content_language.as_ref(),
            )
            .query_opt("response-content-type", overrides.content_type.as_ref())
            .query_opt("response-expires", overrides.expires.as_ref())
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<GetObjectOutput, Error> {
        decode(response, |parts, body| {
            Ok(GetObjectOutput {
                head: ObjectHead::from_parts(parts)?,
                body,
            })
        })
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "GetObject"
    }
}

//! GetObject: read an object (or a range / part of it).

use bytes::Bytes;
use http::response::Parts;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::head_object::{ObjectHead, ObjectSelector, object_selector_setters};
use crate::request::{IntegrityDefaults, Operation, OperationRequest};
use crate::response::decode;
use crate::types::{ByteRange, Conditions};
use s3_xml::ETag;

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

    /// Whether the request asks for the stored checksums (`x-amz-checksum-mode: ENABLED`).
    pub fn asks_for_checksums(&self) -> bool {
        self.selector.checksum_mode()
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

/// How to fetch the rest of a streamed `GetObject` body that broke off: the same object
/// (`If-Match` its ETag, the same version and encryption key) from the first missing byte to
/// the last byte the first response announced. Made by [`GetObject::resumable`] from the first
/// response's head, before any of its body was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resumable {
    request: GetObject,
    /// Absolute offsets (in the object) of the first response's first and last body byte.
    first: u64,
    last: u64,
    etag: ETag,
}

impl GetObject {
    /// Whether a response with `head` can be resumed after its body broke off, and how:
    /// `None` without a strong ETag (the object could change between the requests unseen),
    /// without a `Content-Length`, for an empty body, or when `Content-Range` disagrees with
    /// the length.
    pub fn resumable(&self, head: &ObjectHead) -> Option<Resumable> {
        let etag = head.etag.clone().filter(|etag| !etag.is_weak())?;
        let length = head.content_length.filter(|&length| length > 0)?;
        let first = match head.content_range {
            Some(range) if range.last.checked_sub(range.first)?.checked_add(1)? == length => {
                range.first
            }
            Some(_) => return None,
            None => 0,
        };
        let mut request = self.clone();
        // An absolute range replaces a part number (which cannot be combined with one),
        // and the only condition left is the one that pins the object.
        request.selector.part_number = None;
        request.selector.conditions = Conditions {
            if_match: Some(etag.as_str().to_owned()),
            ..Conditions::default()
        };
        Some(Resumable {
            request,
            first,
            last: first + length - 1,
            etag,
        })
    }
}

impl Resumable {
    /// The request for the body bytes after the first `received`; `None` once nothing is
    /// missing.
    pub fn request_after(&self, received: u64) -> Option<GetObject> {
        let first = self
            .first
            .checked_add(received)
            .filter(|&f| f <= self.last)?;
        let mut request = self.request.clone();
        request.selector.range = Some(ByteRange::Closed {
            first,
            last: self.last,
        });
        Some(request)
    }

    /// Checks the head of the response to [`Resumable::request_after`]`(received)`: the
    /// same ETag and exactly the missing bytes (`206` with a matching `Content-Range` and
    /// length). A server that ignores `Range` and sends the whole object fails here.
    pub fn check(&self, received: u64, head: &ObjectHead) -> Result<(), Error> {
        let first = self.first.saturating_add(received);
        if head.etag.as_ref() != Some(&self.etag) {
            return Err(Error::malformed(format!(
                "resumed GetObject returned ETag {:?}, expected {}",
                head.etag.as_ref().map(ETag::as_str),
                self.etag
            )));
        }
        let range_matches = head
            .content_range
            .is_some_and(|range| range.first == first && range.last == self.last);
        let missing = self
            .last
            .checked_add(1)
            .and_then(|end| end.checked_sub(first));
        if !range_matches || missing.is_none() || head.content_length != missing {
            return Err(Error::malformed(format!(
                "resumed GetObject returned Content-Range {:?} and Content-Length {:?}, \
                 expected bytes {first}-{}",
                head.content_range, head.content_length, self.last
            )));
        }
        Ok(())
    }
}

impl Operation for GetObject {
    type Output = GetObjectOutput;

    fn with_integrity_defaults(mut self, defaults: IntegrityDefaults) -> Self {
        self.selector.apply_default(defaults);
        self
    }

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

    /// Decodes a buffered response; a body with a full-object checksum in its head must
    /// match it (a mismatch is [`Error::ChecksumMismatch`], retryable).
    fn response(&self, response: Response<Bytes>) -> Result<GetObjectOutput, Error> {
        decode(response, |parts, body| {
            let head = ObjectHead::from_parts(parts)?;
            if let Some(mut validator) = head.checksum_validator() {
                validator.update(&body);
                validator.finish()?;
            }
            Ok(GetObjectOutput { head, body })
        })
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "GetObject"
    }
}

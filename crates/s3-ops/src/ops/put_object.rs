//! PutObject: upload an object in one request.

use bytes::Bytes;
use http::{Method, Response};

use crate::checksum::ResponseChecksums;
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::option_setters;
use crate::ops::{ObjectAttributes, Payload, object_attribute_setters, payload_setters};
use crate::request::{IntegrityDefaults, Operation, OperationRequest, RequestBuilder};
use crate::response::{EncryptionInfo, Head, RequestIds, decode};

/// `PUT /{Key}`: store an object (up to 5 GiB; larger ones need a multipart upload).
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutObject {
    bucket: BucketName,
    key: ObjectKey,
    pub(crate) attributes: ObjectAttributes,
    pub(crate) payload: Payload,
    if_match: Option<String>,
    if_none_match_any: bool,
}

/// What PutObject returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PutObjectOutput {
    /// `ETag` of the stored object.
    pub etag: Option<s3_xml::ETag>,
    /// `x-amz-version-id` (versioned buckets).
    pub version_id: Option<String>,
    /// Checksums S3 computed and stored.
    pub checksums: ResponseChecksums,
    /// Server-side encryption applied.
    pub encryption: EncryptionInfo,
    /// `x-amz-expiration` (lifecycle expiry).
    pub expiration: Option<String>,
    /// `x-amz-object-size` (sent by some stores).
    pub size: Option<u64>,
    /// Request ids.
    pub ids: RequestIds,
}

impl PutObjectOutput {
    pub(crate) fn from_head(head: &Head<'_>) -> Result<Self, Error> {
        Ok(PutObjectOutput {
            etag: head.etag()?,
            version_id: head.version_id(),
            checksums: head.checksums(),
            encryption: head.encryption(),
            expiration: head.string("x-amz-expiration"),
            size: head.u64("x-amz-object-size")?,
            ids: head.request_ids(),
        })
    }
}

impl PutObject {
    /// Uploads to `key` in `bucket`; set the body with [`PutObject::body`] or
    /// [`PutObject::streaming_body`] (the default is an empty object).
    pub fn new(bucket: BucketName, key: ObjectKey) -> Self {
        PutObject {
            bucket,
            key,
            attributes: ObjectAttributes::default(),
            payload: Payload::default(),
            if_match: None,
            if_none_match_any: false,
        }
    }

    object_attribute_setters!(attributes);

    /// Replaces every object attribute at once (see [`ObjectAttributes`]).
    pub fn attributes(mut self, attributes: ObjectAttributes) -> Self {
        self.attributes = attributes;
        self
    }
    payload_setters!();

    /// `If-None-Match: *`: write only if no object exists under the key (412 otherwise).
    pub fn if_none_match_any(mut self) -> Self {
        self.if_none_match_any = true;
        self
    }

    option_setters! {
        /// `If-Match`: overwrite only if the current object has this ETag (412 otherwise).
        if_match: impl Into<String>,
    }

    pub(crate) fn builder<'a>(&'a self, endpoint: &'a Endpoint) -> RequestBuilder<'a> {
        let builder = RequestBuilder::new(endpoint, Method::PUT)
            .bucket(&self.bucket)
            .key(&self.key)
            .header_opt("if-match", self.if_match.as_ref())
            .header_opt("if-none-match", self.if_none_match_any.then_some("*"))
            .check(self.check_object_lock_integrity());
        // Every checksum, a value known in advance too, names its algorithm in
        // `x-amz-sdk-checksum-algorithm` (`Payload::apply`): moto keeps no checksum without
        // it and checks a locked upload's integrity header by that name.
        self.payload.apply(self.attributes.apply(builder))
    }

    /// S3 refuses an upload with a retention or legal hold that carries neither
    /// Content-MD5 nor a checksum: say so before sending it.
    fn check_object_lock_integrity(&self) -> Result<(), Error> {
        let unprotected = matches!(
            self.payload.checksum,
            crate::ops::ChecksumChoice::Unchosen | crate::ops::ChecksumChoice::None
        ) && !self.payload.content_md5;
        if self.attributes.uses_object_lock() && unprotected {
            return Err(crate::error::InvalidInput::Parameter {
                name: "x-amz-object-lock-mode",
                reason: "S3 requires Content-MD5 or an x-amz-checksum-* header on an upload \
                         with an Object Lock retention or legal hold: choose a checksum \
                         (checksum_algorithm) or content_md5(true)"
                    .to_owned(),
            }
            .into());
        }
        Ok(())
    }
}

impl Operation for PutObject {
    type Output = PutObjectOutput;

    fn with_integrity_defaults(mut self, defaults: IntegrityDefaults) -> Self {
        self.payload.apply_default(defaults);
        self
    }

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        self.builder(endpoint).build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<PutObjectOutput, Error> {
        decode(response, |parts, _| {
            PutObjectOutput::from_head(&Head::new(&parts.headers))
        })
    }

    /// Rewriting the same bytes is harmless. With `If-None-Match: *` a retry after a lost
    /// response answers 412 although the first attempt stored the object.
    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "PutObject"
    }
}

//! CopyObject: copy an object (up to 5 GiB) server-side.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::CopyObjectResult;

use crate::checksum::ChecksumAlgorithm;
use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::{BucketName, ObjectKey};
use crate::ops::copy_source::CopySource;
use crate::ops::option_setters;
use crate::ops::{ObjectAttributes, object_attribute_setters};
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{EncryptionInfo, Head, RequestIds, decode};

/// Whether the copy keeps the source's metadata or takes the request's
/// (`x-amz-metadata-directive`; likewise `x-amz-tagging-directive` for tags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Directive {
    /// `COPY`: keep the source's (S3's default).
    #[default]
    Copy,
    /// `REPLACE`: use the ones given in this request.
    Replace,
}

impl Directive {
    fn as_str(self) -> &'static str {
        match self {
            Directive::Copy => "COPY",
            Directive::Replace => "REPLACE",
        }
    }
}

/// `PUT /{Key}` with `x-amz-copy-source`.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html>.
/// S3 may answer 200 and fail later in the body; the decoder reports that `<Error>` as
/// [`Error::Service`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyObject {
    source: CopySource,
    bucket: BucketName,
    key: ObjectKey,
    pub(crate) attributes: ObjectAttributes,
    metadata_directive: Option<Directive>,
    tagging_directive: Option<Directive>,
    checksum_algorithm: Option<ChecksumAlgorithm>,
    if_match: Option<String>,
    if_none_match_any: bool,
}

/// What CopyObject returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CopyObjectOutput {
    /// The result document (ETag, last-modified, checksums of the new object).
    pub result: CopyObjectResult,
    /// `x-amz-version-id` of the new object.
    pub version_id: Option<String>,
    /// `x-amz-copy-source-version-id`: the version that was copied.
    pub copy_source_version_id: Option<String>,
    /// `x-amz-expiration`.
    pub expiration: Option<String>,
    /// Server-side encryption applied to the new object.
    pub encryption: EncryptionInfo,
    /// Request ids.
    pub ids: RequestIds,
}

impl CopyObject {
    /// Copies `source` to `key` in `bucket`.
    pub fn new(source: CopySource, bucket: BucketName, key: ObjectKey) -> Self {
        CopyObject {
            source,
            bucket,
            key,
            attributes: ObjectAttributes::default(),
            metadata_directive: None,
            tagging_directive: None,
            checksum_algorithm: None,
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

    option_setters! {
        /// `x-amz-metadata-directive`. Content headers and user metadata given on this
        /// request require [`Directive::Replace`] (S3 would silently ignore them otherwise).
        metadata_directive: Directive,
        /// `x-amz-tagging-directive`. Tags given on this request require
        /// [`Directive::Replace`].
        tagging_directive: Directive,
        /// `x-amz-checksum-algorithm` for the new object.
        checksum_algorithm: ChecksumAlgorithm,
        /// `If-Match` on the destination.
        if_match: impl Into<String>,
    }

    /// `If-None-Match: *`: copy only if the destination does not exist.
    pub fn if_none_match_any(mut self) -> Self {
        self.if_none_match_any = true;
        self
    }

    fn check_directives(&self) -> Result<(), Error> {
        let attributes = &self.attributes;
        let replaces_metadata = !attributes.metadata.is_empty()
            || attributes.content_type.is_some()
            || attributes.cache_control.is_some()
            || attributes.content_disposition.is_some()
            || attributes.content_encoding.is_some()
            || attributes.content_language.is_some()
            || attributes.expires.is_some();
        let directive_error = |name: &'static str, what: &str| -> Error {
            InvalidInput::Parameter {
                name,
                reason: format!("{what} given without the REPLACE directive; S3 would ignore them"),
            }
            .into()
        };
        if replaces_metadata && self.metadata_directive != Some(Directive::Replace) {
            return Err(directive_error(
                "x-amz-metadata-directive",
                "content headers or user metadata",
            ));
        }
        if !attributes.tagging.is_empty() && self.tagging_directive != Some(Directive::Replace) {
            return Err(directive_error("x-amz-tagging-directive", "tags"));
        }
        Ok(())
    }
}

impl Operation for CopyObject {
    type Output = CopyObjectOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let builder = RequestBuilder::new(endpoint, Method::PUT)
            .iam_auth()
            .bucket(&self.bucket)
            .key(&self.key)
            .check(self.check_directives())
            .header_opt(
                "x-amz-metadata-directive",
                self.metadata_directive.map(Directive::as_str),
            )
            .header_opt(
                "x-amz-tagging-directive",
                self.tagging_directive.map(Directive::as_str),
            )
            .header_opt("x-amz-checksum-algorithm", self.checksum_algorithm)
            .header_opt("if-match", self.if_match.as_ref())
            .header_opt("if-none-match", self.if_none_match_any.then_some("*"));
        let builder = self.source.apply(builder);
        self.attributes.apply(builder).build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<CopyObjectOutput, Error> {
        decode(response, |parts, body| {
            let head = Head::new(&parts.headers);
            Ok(CopyObjectOutput {
                result: crate::xml::document_or_error(parts.status, &body, "CopyObjectResult")?,
                version_id: head.version_id(),
                copy_source_version_id: head.string("x-amz-copy-source-version-id"),
                expiration: head.string("x-amz-expiration"),
                encryption: head.encryption(),
                ids: head.request_ids(),
            })
        })
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "CopyObject"
    }
}

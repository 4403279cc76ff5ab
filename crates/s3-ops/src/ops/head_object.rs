//! HeadObject: an object's metadata without its body.

use std::collections::BTreeMap;
use std::time::SystemTime;

use bytes::Bytes;
use http::response::Parts;
use http::{Method, Response};

use crate::checksum::{ChecksumValidator, ResponseChecksums};
use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::{BucketName, ObjectKey};
use crate::request::{IntegrityDefaults, Operation, OperationRequest, RequestBuilder};
use crate::response::{EncryptionInfo, Head, RequestIds, decode};
use crate::types::{ByteRange, Conditions, ContentRange, SseCustomerKey, StorageClass};

/// What identifies an object version and how to read it; shared by HeadObject and
/// GetObject (both take the same selectors and conditions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObjectSelector {
    pub(crate) bucket: BucketName,
    pub(crate) key: ObjectKey,
    pub(crate) version_id: Option<String>,
    pub(crate) range: Option<ByteRange>,
    pub(crate) part_number: Option<u32>,
    pub(crate) conditions: Conditions,
    pub(crate) sse_customer_key: Option<SseCustomerKey>,
    /// `None`: not chosen (a transport may apply its default; s3-ops alone sends none).
    pub(crate) checksum_mode: Option<bool>,
    pub(crate) expected_bucket_owner: Option<String>,
}

impl ObjectSelector {
    /// The transport's default checksum mode, if the caller chose none.
    pub(crate) fn apply_default(&mut self, defaults: IntegrityDefaults) {
        self.checksum_mode.get_or_insert(defaults.checksum_mode);
    }

    /// Whether the request asks for the stored checksums.
    pub(crate) fn checksum_mode(&self) -> bool {
        self.checksum_mode == Some(true)
    }

    pub(crate) fn new(bucket: BucketName, key: ObjectKey) -> Self {
        ObjectSelector {
            bucket,
            key,
            version_id: None,
            range: None,
            part_number: None,
            conditions: Conditions::default(),
            sse_customer_key: None,
            checksum_mode: None,
            expected_bucket_owner: None,
        }
    }

    pub(crate) fn builder<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        method: Method,
    ) -> RequestBuilder<'a> {
        let range_check = match (self.range, self.part_number) {
            (Some(_), Some(_)) => Err(InvalidInput::InvalidRange {
                reason: "Range and partNumber cannot be combined".to_owned(),
            }
            .into()),
            (Some(range), None) => range.validate(),
            (None, Some(part)) => crate::ops::validate_part_number(part),
            (None, None) => Ok(()),
        };
        RequestBuilder::new(endpoint, method)
            .bucket(&self.bucket)
            .key(&self.key)
            .check(range_check)
            .query_opt("versionId", self.version_id.as_ref())
            .query_opt("partNumber", self.part_number)
            .header_opt("range", self.range)
            .conditions(&self.conditions, false)
            .sse_customer_key(self.sse_customer_key.as_ref(), false)
            .header_opt(
                "x-amz-checksum-mode",
                self.checksum_mode().then_some("ENABLED"),
            )
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
    }
}

/// Generates the builder setters shared by HeadObject and GetObject.
macro_rules! object_selector_setters {
    () => {
        /// Reads a specific version.
        pub fn version_id(mut self, version_id: impl Into<String>) -> Self {
            self.selector.version_id = Some(version_id.into());
            self
        }

        /// Only these bytes (`Range`). Cannot be combined with [`Self::part_number`].
        pub fn range(mut self, range: crate::types::ByteRange) -> Self {
            self.selector.range = Some(range);
            self
        }

        /// Only this part (1–10000) of a multipart object.
        pub fn part_number(mut self, part_number: u32) -> Self {
            self.selector.part_number = Some(part_number);
            self
        }

        /// `If-Match`: fail with 412 unless the ETag matches.
        pub fn if_match(mut self, etag: impl Into<String>) -> Self {
            self.selector.conditions.if_match = Some(etag.into());
            self
        }

        /// `If-None-Match`: answer 304 if the ETag matches.
        pub fn if_none_match(mut self, etag: impl Into<String>) -> Self {
            self.selector.conditions.if_none_match = Some(etag.into());
            self
        }

        /// `If-Modified-Since`.
        pub fn if_modified_since(mut self, time: std::time::SystemTime) -> Self {
            self.selector.conditions.if_modified_since = Some(time);
            self
        }

        /// `If-Unmodified-Since`.
        pub fn if_unmodified_since(mut self, time: std::time::SystemTime) -> Self {
            self.selector.conditions.if_unmodified_since = Some(time);
            self
        }

        /// The object was written with this SSE-C key.
        pub fn sse_customer_key(mut self, key: crate::types::SseCustomerKey) -> Self {
            self.selector.sse_customer_key = Some(key);
            self
        }

        /// `x-amz-checksum-mode: ENABLED`: ask S3 to return the stored checksums.
        pub fn checksum_mode(mut self, enabled: bool) -> Self {
            self.selector.checksum_mode = Some(enabled);
            self
        }

        /// `x-amz-expected-bucket-owner`: fail unless the bucket belongs to this account.
        pub fn expected_bucket_owner(mut self, account_id: impl Into<String>) -> Self {
            self.selector.expected_bucket_owner = Some(account_id.into());
            self
        }
    };
}
pub(crate) use object_selector_setters;

/// `HEAD /{Key}`: an object's metadata.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadObject {
    pub(crate) selector: ObjectSelector,
}

impl HeadObject {
    /// Metadata of `key` in `bucket`.
    pub fn new(bucket: BucketName, key: ObjectKey) -> Self {
        HeadObject {
            selector: ObjectSelector::new(bucket, key),
        }
    }

    object_selector_setters!();
}

/// An object's metadata as returned by HeadObject and GetObject.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectHead {
    /// `Content-Length`: bytes in this response's body (the range, for ranged reads).
    pub content_length: Option<u64>,
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// `Cache-Control`.
    pub cache_control: Option<String>,
    /// `Content-Disposition`.
    pub content_disposition: Option<String>,
    /// `Content-Encoding`.
    pub content_encoding: Option<String>,
    /// `Content-Language`.
    pub content_language: Option<String>,
    /// `Expires`, verbatim (S3 returns whatever was stored).
    pub expires: Option<String>,
    /// `ETag`.
    pub etag: Option<s3_xml::ETag>,
    /// `Last-Modified`.
    pub last_modified: Option<SystemTime>,
    /// `x-amz-version-id`.
    pub version_id: Option<String>,
    /// `x-amz-delete-marker: true`.
    pub delete_marker: bool,
    /// `x-amz-storage-class` (absent means `STANDARD`).
    pub storage_class: Option<StorageClass>,
    /// User metadata (`x-amz-meta-*`, names without the prefix).
    pub metadata: BTreeMap<String, String>,
    /// `x-amz-missing-meta`: metadata entries that could not be returned as headers.
    pub missing_meta: Option<u32>,
    /// `x-amz-checksum-*` (sent when checksum mode is enabled).
    pub checksums: ResponseChecksums,
    /// Server-side encryption in effect.
    pub encryption: EncryptionInfo,
    /// `x-amz-mp-parts-count`: parts of a multipart object (with `partNumber` reads).
    pub parts_count: Option<u32>,
    /// `x-amz-tagging-count`.
    pub tag_count: Option<u32>,
    /// `Content-Range` of a 206 response.
    pub content_range: Option<ContentRange>,
    /// `x-amz-expiration` (lifecycle expiry).
    pub expiration: Option<String>,
    /// `x-amz-restore` (archive restore status).
    pub restore: Option<String>,
    /// `x-amz-replication-status`.
    pub replication_status: Option<String>,
    /// `x-amz-website-redirect-location`.
    pub website_redirect_location: Option<String>,
    /// `x-amz-object-lock-mode`.
    pub object_lock_mode: Option<String>,
    /// `x-amz-object-lock-retain-until-date`, verbatim.
    pub object_lock_retain_until: Option<String>,
    /// `x-amz-object-lock-legal-hold`.
    pub object_lock_legal_hold: Option<String>,
    /// Request ids.
    pub ids: RequestIds,
}

impl ObjectHead {
    /// A validator for the body of this response, if S3 sent a checksum that covers it:
    /// not for composite multipart values (`...-N`), and not for partial (206) bodies
    /// unless the range is the whole object.
    pub fn checksum_validator(&self) -> Option<ChecksumValidator> {
        if self
            .content_range
            .is_some_and(|range| !range.is_whole_object())
        {
            return None;
        }
        self.checksums.validator()
    }

    pub(crate) fn from_parts(parts: &Parts) -> Result<Self, Error> {
        let head = Head::new(&parts.headers);
        let content_length = head.u64("content-length")?;
        let content_range = match head.string("content-range") {
            None => None,
            Some(value) => match ContentRange::parse(&value) {
                Some(range) => Some(range),
                // An empty object is an empty body, whatever its range says: Garage answers
                // a suffix range on one with `bytes 0-18446744073709551615/0`.
                None if value.starts_with("bytes ")
                    && value.ends_with("/0")
                    && content_length.is_none_or(|len| len == 0) =>
                {
                    None
                }
                None => {
                    return Err(Error::malformed(format!("invalid Content-Range {value:?}")));
                }
            },
        };
        Ok(ObjectHead {
            content_length,
            content_type: head.string("content-type"),
            cache_control: head.string("cache-control"),
            content_disposition: head.string("content-disposition"),
            content_encoding: head.string("content-encoding"),
            content_language: head.string("content-language"),
            expires: head.string("expires"),
            etag: head.etag()?,
            last_modified: head.date("last-modified")?,
            version_id: head.version_id(),
            delete_marker: head.bool("x-amz-delete-marker")?.unwrap_or(false),
            storage_class: head.storage_class(),
            metadata: head.metadata(),
            missing_meta: head.u32("x-amz-missing-meta")?,
            checksums: head.checksums(),
            encryption: head.encryption(),
            parts_count: head.u32("x-amz-mp-parts-count")?,
            tag_count: head.u32("x-amz-tagging-count")?,
            content_range,
            expiration: head.string("x-amz-expiration"),
            restore: head.string("x-amz-restore"),
            replication_status: head.string("x-amz-replication-status"),
            website_redirect_location: head.string("x-amz-website-redirect-location"),
            object_lock_mode: head.string("x-amz-object-lock-mode"),
            object_lock_retain_until: head.string("x-amz-object-lock-retain-until-date"),
            object_lock_legal_hold: head.string("x-amz-object-lock-legal-hold"),
            ids: head.request_ids(),
        })
    }
}

impl Operation for HeadObject {
    type Output = ObjectHead;

    fn with_integrity_defaults(mut self, defaults: IntegrityDefaults) -> Self {
        self.selector.apply_default(defaults);
        self
    }

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        self.selector.builder(endpoint, Method::HEAD).build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<ObjectHead, Error> {
        decode(response, |parts, _| ObjectHead::from_parts(parts))
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "HeadObject"
    }
}

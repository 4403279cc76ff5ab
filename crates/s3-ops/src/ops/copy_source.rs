//! The source of a server-side copy (CopyObject, UploadPartCopy).

use std::time::SystemTime;

use crate::error::InvalidInput;
use crate::names::{BucketKind, BucketName, ObjectKey};
use crate::ops::head_object::HeadObject;
use crate::ops::option_setters;
use crate::request::RequestBuilder;
use crate::types::{Conditions, SseCustomerKey};

/// Which object (version) to copy from, under which conditions.
///
/// Sent as `x-amz-copy-source: <bucket>/<key percent-encoded>[?versionId=<id>]` plus the
/// `x-amz-copy-source-if-*` and source SSE-C headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopySource {
    bucket: BucketName,
    key: ObjectKey,
    version_id: Option<String>,
    conditions: Conditions,
    sse_customer_key: Option<SseCustomerKey>,
}

impl CopySource {
    /// Copies from `key` in `bucket`.
    pub fn new(bucket: BucketName, key: ObjectKey) -> Self {
        CopySource {
            bucket,
            key,
            version_id: None,
            conditions: Conditions::default(),
            sse_customer_key: None,
        }
    }

    option_setters! {
        /// From this version.
        version_id: impl Into<String>,
    }

    /// `x-amz-copy-source-if-match`.
    pub fn if_match(mut self, etag: impl Into<String>) -> Self {
        self.conditions.if_match = Some(etag.into());
        self
    }

    /// `x-amz-copy-source-if-none-match`.
    pub fn if_none_match(mut self, etag: impl Into<String>) -> Self {
        self.conditions.if_none_match = Some(etag.into());
        self
    }

    /// `x-amz-copy-source-if-modified-since`.
    pub fn if_modified_since(mut self, time: SystemTime) -> Self {
        self.conditions.if_modified_since = Some(time);
        self
    }

    /// `x-amz-copy-source-if-unmodified-since`.
    pub fn if_unmodified_since(mut self, time: SystemTime) -> Self {
        self.conditions.if_unmodified_since = Some(time);
        self
    }

    option_setters! {
        /// The source is encrypted with this SSE-C key.
        sse_customer_key: SseCustomerKey,
    }

    /// The bucket copied from.
    pub fn bucket(&self) -> &BucketName {
        &self.bucket
    }

    /// The key copied from.
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// A HeadObject of the source: the same version, encryption key and conditions (as
    /// `If-*` headers). A managed copy reads the source's size, ETag and checksum with it.
    pub fn head_object(&self) -> HeadObject {
        let mut head = HeadObject::new(self.bucket.clone(), self.key.clone());
        head.selector.version_id = self.version_id.clone();
        head.selector.conditions = self.conditions.clone();
        head.selector.sse_customer_key = self.sse_customer_key.clone();
        head
    }

    /// The `x-amz-copy-source` header value: `<bucket>/<key>`, or for an access point ARN
    /// `<arn>/object/<key>` as S3 documents it. Multi-Region and Object Lambda access points
    /// cannot be a copy source: CopyObject and UploadPartCopy fail before sending one.
    pub fn header_value(&self) -> String {
        let mut value = match self.bucket.kind() {
            BucketKind::AccessPoint(_) => format!("{}/object/", self.bucket),
            _ => format!("{}/", self.bucket),
        };
        crate::encoding::push_path_encoded(&mut value, self.key.as_str());
        if let Some(version_id) = &self.version_id {
            value.push_str("?versionId=");
            crate::encoding::push_query_encoded(&mut value, version_id);
        }
        value
    }

    pub(crate) fn apply<'a>(&'a self, builder: RequestBuilder<'a>) -> RequestBuilder<'a> {
        builder
            .check(match self.bucket.kind() {
                BucketKind::MultiRegionAccessPoint { .. } => Err(InvalidInput::BucketName {
                    name: self.bucket.to_string(),
                    reason: "a Multi-Region Access Point cannot be a copy source (only a copy \
                             destination)",
                }
                .into()),
                BucketKind::ObjectLambdaAccessPoint(_) => Err(InvalidInput::BucketName {
                    name: self.bucket.to_string(),
                    reason: "an Object Lambda access point cannot be a copy source",
                }
                .into()),
                _ => Ok(()),
            })
            .header("x-amz-copy-source", self.header_value())
            .conditions(&self.conditions, true)
            .sse_customer_key(self.sse_customer_key.as_ref(), true)
    }
}

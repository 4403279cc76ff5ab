//! GetObjectAttributes: an object's ETag, checksum, parts, storage class and size in one
//! request.

use std::time::SystemTime;

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::GetObjectAttributesResult;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::{BucketName, ObjectKey};
use crate::ops::option_setters;
use crate::ops::subresource::{ObjectSubresource, invalid, object_subresource_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{Head, RequestIds, decode};
use crate::types::SseCustomerKey;

/// An attribute GetObjectAttributes can return (`x-amz-object-attributes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ObjectAttributeKind {
    /// `ETag`.
    ETag,
    /// `Checksum`: the object's checksum and its type.
    Checksum,
    /// `ObjectParts`: the parts of a multipart object, with their checksums when the object
    /// was uploaded with one.
    ObjectParts,
    /// `StorageClass`.
    StorageClass,
    /// `ObjectSize`.
    ObjectSize,
}

impl ObjectAttributeKind {
    /// Every attribute.
    pub const ALL: [ObjectAttributeKind; 5] = [
        ObjectAttributeKind::ETag,
        ObjectAttributeKind::Checksum,
        ObjectAttributeKind::ObjectParts,
        ObjectAttributeKind::StorageClass,
        ObjectAttributeKind::ObjectSize,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectAttributeKind::ETag => "ETag",
            ObjectAttributeKind::Checksum => "Checksum",
            ObjectAttributeKind::ObjectParts => "ObjectParts",
            ObjectAttributeKind::StorageClass => "StorageClass",
            ObjectAttributeKind::ObjectSize => "ObjectSize",
        }
    }
}

/// `GET /{Key}?attributes`: what HeadObject and ListParts would tell, in one request; the
/// parts come a page at a time (up to 1,000, [`GetObjectAttributes::next_page`]).
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectAttributes.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetObjectAttributes {
    target: ObjectSubresource,
    attributes: Vec<ObjectAttributeKind>,
    max_parts: Option<u32>,
    part_number_marker: Option<u32>,
    sse_customer_key: Option<SseCustomerKey>,
}

/// What GetObjectAttributes returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GetObjectAttributesOutput {
    /// The attributes asked for.
    pub result: GetObjectAttributesResult,
    /// `x-amz-version-id`.
    pub version_id: Option<String>,
    /// `x-amz-delete-marker`.
    pub delete_marker: bool,
    /// `Last-Modified`.
    pub last_modified: Option<SystemTime>,
    /// Request ids.
    pub ids: RequestIds,
}

impl GetObjectAttributes {
    /// Asks for every attribute of `key`.
    pub fn new(bucket: BucketName, key: ObjectKey) -> Self {
        GetObjectAttributes {
            target: ObjectSubresource::new(bucket, key),
            attributes: ObjectAttributeKind::ALL.to_vec(),
            max_parts: None,
            part_number_marker: None,
            sse_customer_key: None,
        }
    }

    object_subresource_setters!();

    /// Asks only for these attributes.
    pub fn attributes(mut self, attributes: impl IntoIterator<Item = ObjectAttributeKind>) -> Self {
        self.attributes = attributes.into_iter().collect();
        self
    }

    option_setters! {
        /// `x-amz-max-parts`: at most this many parts (1–1000; S3's default is 1000).
        max_parts: u32,
        /// `x-amz-part-number-marker`: the parts after this one.
        part_number_marker: u32,
        /// The SSE-C key of an object encrypted with a customer key.
        sse_customer_key: SseCustomerKey,
    }

    /// The request for the next page of parts after `output`, or `None` if it listed the
    /// last one.
    pub fn next_page(&self, output: &GetObjectAttributesOutput) -> Option<Self> {
        let parts = output.result.object_parts.as_ref()?;
        let marker = parts
            .next_part_number_marker
            .filter(|_| parts.is_truncated)?;
        (Some(marker) != self.part_number_marker).then(|| {
            let mut next = self.clone();
            next.part_number_marker = Some(marker);
            next
        })
    }
}

impl Operation for GetObjectAttributes {
    type Output = GetObjectAttributesOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        if self.attributes.is_empty() {
            return Err(invalid(
                "x-amz-object-attributes",
                "ask for at least one attribute",
            ));
        }
        if self.max_parts.is_some_and(|max| !(1..=1000).contains(&max)) {
            return Err(invalid("x-amz-max-parts", "must be 1 to 1000"));
        }
        let attributes: Vec<&str> = self.attributes.iter().map(|a| a.as_str()).collect();
        self.target
            .builder(endpoint, Method::GET, "attributes")
            .header("x-amz-object-attributes", attributes.join(","))
            .header_opt("x-amz-max-parts", self.max_parts)
            .header_opt("x-amz-part-number-marker", self.part_number_marker)
            .sse_customer_key(self.sse_customer_key.as_ref(), false)
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<GetObjectAttributesOutput, Error> {
        decode(response, |parts, body| {
            let head = Head::new(&parts.headers);
            Ok(GetObjectAttributesOutput {
                result: crate::xml::document(
                    &body,
                    s3_xml::decode_get_object_attributes,
                    "GetObjectAttributesResponse",
                )?,
                version_id: head.version_id(),
                delete_marker: head.bool("x-amz-delete-marker")?.unwrap_or(false),
                last_modified: head.date("last-modified")?,
                ids: head.request_ids(),
            })
        })
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "GetObjectAttributes"
    }
}

//! ListParts: the parts uploaded so far (to resume or complete an upload).

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::ListPartsResult;

use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::{BucketName, ObjectKey};
use crate::ops::option_setters;
use crate::ops::validate_upload_id;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{DocumentOutput, decode_document};
use crate::types::SseCustomerKey;

/// `GET /{Key}?uploadId={id}`: up to 1000 parts per page.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListParts.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListParts {
    bucket: BucketName,
    key: ObjectKey,
    upload_id: String,
    max_parts: Option<u32>,
    part_number_marker: Option<u32>,
    sse_customer_key: Option<SseCustomerKey>,
    expected_bucket_owner: Option<String>,
}

/// What ListParts returns: one page.
pub type ListPartsOutput = DocumentOutput<ListPartsResult>;

impl ListParts {
    /// Lists the parts of `upload_id`.
    pub fn new(bucket: BucketName, key: ObjectKey, upload_id: impl Into<String>) -> Self {
        ListParts {
            bucket,
            key,
            upload_id: upload_id.into(),
            max_parts: None,
            part_number_marker: None,
            sse_customer_key: None,
            expected_bucket_owner: None,
        }
    }

    option_setters! {
        /// At most this many parts (1–1000).
        max_parts: u32,
        /// Starts after this part number.
        part_number_marker: u32,
        /// The upload uses SSE-C (needed to read part checksums).
        sse_customer_key: SseCustomerKey,
        /// `x-amz-expected-bucket-owner`.
        expected_bucket_owner: impl Into<String>,
    }

    /// The request for the page after `output`, or `None` if it was the last one.
    pub fn next_page(&self, output: &ListPartsOutput) -> Option<Self> {
        let result = &output.result;
        let marker = result
            .next_part_number_marker
            .filter(|_| result.is_truncated)?;
        Some(self.clone().part_number_marker(marker))
    }
}

impl Operation for ListParts {
    type Output = ListPartsOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let marker_check = match self.part_number_marker {
            Some(marker) if marker > 10_000 => Err(InvalidInput::Parameter {
                name: "part-number-marker",
                reason: format!("{marker} is above 10000"),
            }
            .into()),
            _ => Ok(()),
        };
        RequestBuilder::new(endpoint, Method::GET)
            .bucket(&self.bucket)
            .key(&self.key)
            .check(validate_upload_id(&self.upload_id))
            .check(crate::ops::validate_max_keys("max-parts", self.max_parts))
            .check(marker_check)
            .query("uploadId", &self.upload_id)
            .query_opt("max-parts", self.max_parts)
            .query_opt("part-number-marker", self.part_number_marker)
            .sse_customer_key(self.sse_customer_key.as_ref(), false)
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<ListPartsOutput, Error> {
        decode_document(response, s3_xml::decode_list_parts, "ListPartsResult")
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "ListParts"
    }
}

//! ListMultipartUploads: uploads started but not completed or aborted.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::ListMultipartUploadsResult;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{DocumentOutput, decode_document};

/// `GET /?uploads`: up to 1000 in-progress uploads per page.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListMultipartUploads.html>.
/// `encoding-type=url` is requested by default; keys come back decoded either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListMultipartUploads {
    bucket: BucketName,
    prefix: Option<String>,
    delimiter: Option<String>,
    key_marker: Option<String>,
    upload_id_marker: Option<String>,
    max_uploads: Option<u32>,
    url_encoding: bool,
    expected_bucket_owner: Option<String>,
}

/// What ListMultipartUploads returns: one page.
pub type ListMultipartUploadsOutput = DocumentOutput<ListMultipartUploadsResult>;

impl ListMultipartUploads {
    /// Lists the uploads in progress in `bucket`.
    pub fn new(bucket: BucketName) -> Self {
        ListMultipartUploads {
            bucket,
            prefix: None,
            delimiter: None,
            key_marker: None,
            upload_id_marker: None,
            max_uploads: None,
            url_encoding: true,
            expected_bucket_owner: None,
        }
    }

    /// Only keys starting with `prefix`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Groups keys sharing a prefix up to `delimiter`.
    pub fn delimiter(mut self, delimiter: impl Into<String>) -> Self {
        self.delimiter = Some(delimiter.into());
        self
    }

    /// Starts after this key (and, with [`Self::upload_id_marker`], after that upload).
    pub fn key_marker(mut self, key: impl Into<String>) -> Self {
        self.key_marker = Some(key.into());
        self
    }

    /// Starts after this upload of the key marker.
    pub fn upload_id_marker(mut self, upload_id: impl Into<String>) -> Self {
        self.upload_id_marker = Some(upload_id.into());
        self
    }

    /// At most this many uploads (1–1000).
    pub fn max_uploads(mut self, max_uploads: u32) -> Self {
        self.max_uploads = Some(max_uploads);
        self
    }

    /// `encoding-type=url` (on by default).
    pub fn url_encoding(mut self, enabled: bool) -> Self {
        self.url_encoding = enabled;
        self
    }

    /// `x-amz-expected-bucket-owner`.
    pub fn expected_bucket_owner(mut self, account_id: impl Into<String>) -> Self {
        self.expected_bucket_owner = Some(account_id.into());
        self
    }

    /// The request for the page after `output`, or `None` if it was the last one.
    pub fn next_page(&self, output: &ListMultipartUploadsOutput) -> Option<Self> {
        let result = &output.result;
        if !result.is_truncated {
            return None;
        }
        let mut next = self.clone();
        next.key_marker = Some(result.next_key_marker.clone()?);
        next.upload_id_marker = result.next_upload_id_marker.clone();
        Some(next)
    }
}

impl Operation for ListMultipartUploads {
    type Output = ListMultipartUploadsOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        RequestBuilder::new(endpoint, Method::GET)
            .bucket(&self.bucket)
            .check(crate::ops::validate_max_keys(
                "max-uploads",
                self.max_uploads,
            ))
            .subresource("uploads")
            .query_opt("prefix", self.prefix.as_ref())
            .query_opt("delimiter", self.delimiter.as_ref())
            .query_opt("key-marker", self.key_marker.as_ref())
            .query_opt("upload-id-marker", self.upload_id_marker.as_ref())
            .query_opt("max-uploads", self.max_uploads)
            .query_opt("encoding-type", self.url_encoding.then_some("url"))
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<ListMultipartUploadsOutput, Error> {
        decode_document(
            response,
            s3_xml::decode_list_multipart_uploads,
            "ListMultipartUploadsResult",
        )
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "ListMultipartUploads"
    }
}

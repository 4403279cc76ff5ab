//! ListObjectVersions: every version and delete marker, a page at a time.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::ListObjectVersionsResult;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::validate_max_keys;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{DocumentOutput, decode_document};

/// `GET /?versions`: up to 1000 versions and delete markers per page, keys in order,
/// newest version first.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html>.
/// `encoding-type=url` is requested by default; keys come back decoded either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListObjectVersions {
    bucket: BucketName,
    prefix: Option<String>,
    delimiter: Option<String>,
    key_marker: Option<String>,
    version_id_marker: Option<String>,
    max_keys: Option<u32>,
    url_encoding: bool,
    expected_bucket_owner: Option<String>,
}

/// What ListObjectVersions returns: one page.
pub type ListObjectVersionsOutput = DocumentOutput<ListObjectVersionsResult>;

impl ListObjectVersions {
    /// Lists the versions in `bucket`.
    pub fn new(bucket: BucketName) -> Self {
        ListObjectVersions {
            bucket,
            prefix: None,
            delimiter: None,
            key_marker: None,
            version_id_marker: None,
            max_keys: None,
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

    /// Starts after this key (and, with [`Self::version_id_marker`], after that version).
    pub fn key_marker(mut self, key: impl Into<String>) -> Self {
        self.key_marker = Some(key.into());
        self
    }

    /// Starts after this version of the key marker.
    pub fn version_id_marker(mut self, version_id: impl Into<String>) -> Self {
        self.version_id_marker = Some(version_id.into());
        self
    }

    /// At most this many entries (1–1000).
    pub fn max_keys(mut self, max_keys: u32) -> Self {
        self.max_keys = Some(max_keys);
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
    pub fn next_page(&self, output: &ListObjectVersionsOutput) -> Option<Self> {
        let result = &output.result;
        if !result.is_truncated {
            return None;
        }
        let mut next = self.clone();
        next.key_marker = Some(result.next_key_marker.clone()?);
        next.version_id_marker = result.next_version_id_marker.clone();
        Some(next)
    }
}

impl Operation for ListObjectVersions {
    type Output = ListObjectVersionsOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        RequestBuilder::new(endpoint, Method::GET)
            .bucket(&self.bucket)
            .check(validate_max_keys("max-keys", self.max_keys))
            .subresource("versions")
            .query_opt("prefix", self.prefix.as_ref())
            .query_opt("delimiter", self.delimiter.as_ref())
            .query_opt("key-marker", self.key_marker.as_ref())
            .query_opt("version-id-marker", self.version_id_marker.as_ref())
            .query_opt("max-keys", self.max_keys)
            .query_opt("encoding-type", self.url_encoding.then_some("url"))
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<ListObjectVersionsOutput, Error> {
        decode_document(
            response,
            s3_xml::decode_list_object_versions,
            "ListVersionsResult",
        )
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "ListObjectVersions"
    }
}

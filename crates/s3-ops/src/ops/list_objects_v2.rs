//! ListObjectsV2: list a bucket's objects, a page at a time.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::ListObjectsV2Result;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::validate_max_keys;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{DocumentOutput, decode_document};

/// `GET /?list-type=2`: up to 1000 keys per page, in UTF-8 binary order.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html>.
/// Keys are requested with `encoding-type=url` by default (keys may hold characters XML
/// 1.0 cannot carry); the decoder returns them decoded either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListObjectsV2 {
    bucket: BucketName,
    prefix: Option<String>,
    delimiter: Option<String>,
    start_after: Option<String>,
    continuation_token: Option<String>,
    max_keys: Option<u32>,
    url_encoding: bool,
    fetch_owner: bool,
    expected_bucket_owner: Option<String>,
}

/// What ListObjectsV2 returns: one page.
pub type ListObjectsV2Output = DocumentOutput<ListObjectsV2Result>;

impl ListObjectsV2 {
    /// Lists `bucket`.
    pub fn new(bucket: BucketName) -> Self {
        ListObjectsV2 {
            bucket,
            prefix: None,
            delimiter: None,
            start_after: None,
            continuation_token: None,
            max_keys: None,
            url_encoding: true,
            fetch_owner: false,
            expected_bucket_owner: None,
        }
    }

    /// Only keys starting with `prefix`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Groups keys sharing a prefix up to `delimiter` into common prefixes.
    pub fn delimiter(mut self, delimiter: impl Into<String>) -> Self {
        self.delimiter = Some(delimiter.into());
        self
    }

    /// Starts after this key.
    pub fn start_after(mut self, key: impl Into<String>) -> Self {
        self.start_after = Some(key.into());
        self
    }

    /// Continues a truncated listing.
    pub fn continuation_token(mut self, token: impl Into<String>) -> Self {
        self.continuation_token = Some(token.into());
        self
    }

    /// At most this many keys (1–1000; S3's default is 1000).
    pub fn max_keys(mut self, max_keys: u32) -> Self {
        self.max_keys = Some(max_keys);
        self
    }

    /// `encoding-type=url` (on by default).
    pub fn url_encoding(mut self, enabled: bool) -> Self {
        self.url_encoding = enabled;
        self
    }

    /// `fetch-owner=true`: include each object's owner.
    pub fn fetch_owner(mut self, enabled: bool) -> Self {
        self.fetch_owner = enabled;
        self
    }

    /// `x-amz-expected-bucket-owner`.
    pub fn expected_bucket_owner(mut self, account_id: impl Into<String>) -> Self {
        self.expected_bucket_owner = Some(account_id.into());
        self
    }

    /// The request for the page after `output`, or `None` if it was the last one.
    pub fn next_page(&self, output: &ListObjectsV2Output) -> Option<Self> {
        let token = output.result.next_continuation_token.as_ref();
        token
            .filter(|_| output.result.is_truncated)
            .map(|token| self.clone().continuation_token(token.clone()))
    }
}

impl Operation for ListObjectsV2 {
    type Output = ListObjectsV2Output;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        RequestBuilder::new(endpoint, Method::GET)
            .bucket(&self.bucket)
            .check(validate_max_keys("max-keys", self.max_keys))
            .query("list-type", 2)
            .query_opt("prefix", self.prefix.as_ref())
            .query_opt("delimiter", self.delimiter.as_ref())
            .query_opt("start-after", self.start_after.as_ref())
            .query_opt("continuation-token", self.continuation_token.as_ref())
            .query_opt("max-keys", self.max_keys)
            .query_opt("encoding-type", self.url_encoding.then_some("url"))
            .query_opt("fetch-owner", self.fetch_owner.then_some("true"))
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<ListObjectsV2Output, Error> {
        decode_document(response, s3_xml::decode_list_objects_v2, "ListBucketResult")
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "ListObjectsV2"
    }
}

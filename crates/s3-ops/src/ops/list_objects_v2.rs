//! ListObjectsV2: list a bucket's objects, a page at a time.

use bytes::Bytes;
use http::Response;
use s3_xml::ListObjectsV2Result;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::{ListingScope, listing_setters, option_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{DocumentOutput, decode_document};

/// `GET /?list-type=2`: up to 1000 keys per page, in UTF-8 binary order.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html>.
/// Keys are requested with `encoding-type=url` by default (keys may hold characters XML
/// 1.0 cannot carry); the decoder returns them decoded either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListObjectsV2 {
    scope: ListingScope,
    start_after: Option<String>,
    continuation_token: Option<String>,
    fetch_owner: bool,
}

/// What ListObjectsV2 returns: one page.
pub type ListObjectsV2Output = DocumentOutput<ListObjectsV2Result>;

impl ListObjectsV2 {
    /// Lists `bucket`.
    pub fn new(bucket: BucketName) -> Self {
        ListObjectsV2 {
            scope: ListingScope::new(bucket),
            start_after: None,
            continuation_token: None,
            fetch_owner: false,
        }
    }

    listing_setters!(max_keys);

    option_setters! {
        /// Starts after this key.
        start_after: impl Into<String>,
        /// Continues a truncated listing.
        continuation_token: impl Into<String>,
    }

    /// `fetch-owner=true`: include each object's owner.
    pub fn fetch_owner(mut self, enabled: bool) -> Self {
        self.fetch_owner = enabled;
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
        self.scope
            .builder(endpoint, "max-keys")
            .query("list-type", 2)
            .query_opt("start-after", self.start_after.as_ref())
            .query_opt("continuation-token", self.continuation_token.as_ref())
            .query_opt("fetch-owner", self.fetch_owner.then_some("true"))
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<ListObjectsV2Output, Error> {
        let output = decode_document(response, s3_xml::decode_list_objects_v2, "ListBucketResult")?;
        if output.result.is_truncated && output.result.next_continuation_token.is_none() {
            // What a store that serves only ListObjects (v1) answers: it ignores
            // `list-type=2`. Stopping here would return a listing silently cut short.
            return Err(Error::malformed(
                "a truncated ListObjectsV2 page has no NextContinuationToken: the store \
                 answers as to ListObjects (version 1), ignoring list-type=2; list with \
                 ListObjects (Client::list_objects_pages), or set list_objects_v2 to false in \
                 its provider profile",
            ));
        }
        Ok(output)
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "ListObjectsV2"
    }
}

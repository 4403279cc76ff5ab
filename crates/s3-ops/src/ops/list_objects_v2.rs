//! ListObjectsV2: list a bucket's objects, a page at a time.

use bytes::Bytes;
use http::Response;
use s3_xml::{ListObjectsResult, ListObjectsV2Result};

use crate::endpoint::Endpoint;
use crate::error::{Error, MalformedResponse};
use crate::names::BucketName;
use crate::ops::list_objects::{ListObjects, ListObjectsOutput};
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

    /// The same page asked of ListObjects (version 1), for a store that serves only that
    /// ([`ProviderQuirks::list_objects_v2`](crate::ProviderQuirks::list_objects_v2)): the
    /// continuation token (a page made by [`ListObjectsV2::page_from_version_1`] carries a
    /// marker as its token) or else the start-after key becomes the marker; fetch-owner has
    /// no counterpart (version 1 names the owner unasked, where the store does).
    pub fn as_version_1(&self) -> ListObjects {
        let marker = self
            .continuation_token
            .as_ref()
            .or(self.start_after.as_ref());
        ListObjects::from_scope(self.scope.clone(), marker.cloned())
    }

    /// A page of [`ListObjectsV2::as_version_1`] as this listing's page: the marker to
    /// continue after becomes the continuation token, so [`ListObjectsV2::next_page`] and
    /// every consumer of version 2 pages read it unchanged.
    pub fn page_from_version_1(&self, page: ListObjectsOutput) -> ListObjectsV2Output {
        let next = page.result.next_page_marker().map(str::to_owned);
        let ListObjectsResult {
            name,
            prefix,
            delimiter,
            marker: _,
            next_marker: _,
            max_keys,
            is_truncated,
            encoding_type,
            url_decoded,
            contents,
            common_prefixes,
            ..
        } = page.result;
        let mut result = ListObjectsV2Result::default();
        result.key_count = Some((contents.len() + common_prefixes.len()) as u64);
        result.name = name;
        result.prefix = prefix;
        result.delimiter = delimiter;
        result.start_after = self.start_after.clone();
        result.continuation_token = self.continuation_token.clone();
        result.next_continuation_token = next;
        result.max_keys = max_keys;
        result.is_truncated = is_truncated;
        result.encoding_type = encoding_type;
        result.url_decoded.prefix = url_decoded.prefix;
        result.url_decoded.delimiter = url_decoded.delimiter;
        result.url_decoded.keys = url_decoded.keys;
        result.url_decoded.common_prefixes = url_decoded.common_prefixes;
        result.contents = contents;
        result.common_prefixes = common_prefixes;
        ListObjectsV2Output {
            result,
            ids: page.ids,
        }
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
        // What a store that serves only ListObjects (v1) answers: it ignores `list-type=2`
        // and with it `start-after` and `continuation-token`. A truncated page without a
        // token would end the listing silently cut short; keys at or before `start-after`
        // are the listing's start again.
        let result = &output.result;
        let no_token = result.is_truncated && result.next_continuation_token.is_none();
        let restarted = self.start_after.as_deref().is_some_and(|after| {
            result
                .contents
                .iter()
                .any(|object| object.key.as_str() <= after)
        });
        if no_token || restarted {
            return Err(Error::MalformedResponse(
                MalformedResponse::ListedAsVersion1,
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

//! ListObjects (version 1): list a bucket's objects, a page at a time, for stores that do
//! not serve ListObjectsV2.

use bytes::Bytes;
use http::Response;
use s3_xml::ListObjectsResult;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::{ListingScope, listing_setters, option_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{DocumentOutput, decode_document};

/// `GET /` on the bucket: up to 1000 keys per page in UTF-8 binary order, continued with
/// `marker` (the page's `NextMarker`, or its last key or common prefix, as S3 documents).
/// Prefer [`ListObjectsV2`](crate::ListObjectsV2) wherever the store serves it; a store's
/// provider profile says whether it does
/// ([`ProviderQuirks::list_objects_v2`](crate::ProviderQuirks::list_objects_v2)).
///
/// Keys are asked for with `encoding-type=url` and come back decoded, as with ListObjectsV2.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjects.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListObjects {
    scope: ListingScope,
    marker: Option<String>,
}

/// What ListObjects returns: one page.
pub type ListObjectsOutput = DocumentOutput<ListObjectsResult>;

impl ListObjects {
    /// Lists `bucket`.
    pub fn new(bucket: BucketName) -> Self {
        ListObjects {
            scope: ListingScope::new(bucket),
            marker: None,
        }
    }

    /// The listing of `scope` continued after `marker` (ListObjectsV2 asked of a store that
    /// serves only version 1).
    pub(crate) fn from_scope(scope: ListingScope, marker: Option<String>) -> Self {
        ListObjects { scope, marker }
    }

    listing_setters!(max_keys);

    option_setters! {
        /// Starts after this key.
        marker: impl Into<String>,
    }

    /// The request for the page after `output`, or `None` if it was the last one.
    pub fn next_page(&self, output: &ListObjectsOutput) -> Option<Self> {
        let marker = output.result.next_page_marker()?;
        Some(self.clone().marker(marker))
    }
}

impl Operation for ListObjects {
    type Output = ListObjectsOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        self.scope
            .builder(endpoint, "max-keys")
            .query_opt("marker", self.marker.as_ref())
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<ListObjectsOutput, Error> {
        let output = decode_document(response, s3_xml::decode_list_objects, "ListBucketResult")?;
        if output.result.is_truncated && output.result.next_page_marker().is_none() {
            return Err(Error::malformed(
                "a truncated ListObjects page names no NextMarker, key or common prefix to \
                 continue after; the listing cannot go on",
            ));
        }
        Ok(output)
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "ListObjects"
    }
}

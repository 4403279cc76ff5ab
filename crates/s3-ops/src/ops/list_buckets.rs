//! ListBuckets: the buckets the caller owns.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::ListBucketsResult;

use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::ops::option_setters;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{DocumentOutput, decode_document};

/// `GET /` on the service endpoint.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListBuckets.html>.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListBuckets {
    prefix: Option<String>,
    continuation_token: Option<String>,
    max_buckets: Option<u32>,
    bucket_region: Option<String>,
}

/// What ListBuckets returns.
pub type ListBucketsOutput = DocumentOutput<ListBucketsResult>;

impl ListBuckets {
    /// Lists all buckets (S3 pages only when `max_buckets` is set).
    pub fn new() -> Self {
        ListBuckets::default()
    }

    option_setters! {
        /// Only buckets whose name starts with `prefix`.
        prefix: impl Into<String>,
        /// Continues a paged listing.
        continuation_token: impl Into<String>,
        /// At most this many buckets per page (1–10000).
        max_buckets: u32,
        /// Only buckets in this region.
        bucket_region: impl Into<String>,
    }

    /// The request for the page after `output`, or `None` if it was the last one.
    pub fn next_page(&self, output: &ListBucketsOutput) -> Option<Self> {
        let token = output.result.continuation_token.as_ref()?;
        Some(self.clone().continuation_token(token.clone()))
    }
}

impl Operation for ListBuckets {
    type Output = ListBucketsOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let max_buckets_check = match self.max_buckets {
            Some(n) if !(1..=10_000).contains(&n) => Err(InvalidInput::Parameter {
                name: "max-buckets",
                reason: format!("{n} is outside 1..=10000"),
            }
            .into()),
            _ => Ok(()),
        };
        RequestBuilder::new(endpoint, Method::GET)
            .check(max_buckets_check)
            .query_opt("prefix", self.prefix.as_ref())
            .query_opt("continuation-token", self.continuation_token.as_ref())
            .query_opt("max-buckets", self.max_buckets)
            .query_opt("bucket-region", self.bucket_region.as_ref())
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<ListBucketsOutput, Error> {
        decode_document(
            response,
            s3_xml::decode_list_buckets,
            "ListAllMyBucketsResult",
        )
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "ListBuckets"
    }
}

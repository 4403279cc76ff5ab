//! ListDirectoryBuckets: the caller's S3 Express One Zone directory buckets in the region.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::ListDirectoryBucketsResult;

use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::ops::option_setters;
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{DocumentOutput, decode_document};

/// `GET /` on the region's S3 Express control endpoint
/// (`s3express-control.<region>.amazonaws.com`).
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListDirectoryBuckets.html>.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListDirectoryBuckets {
    continuation_token: Option<String>,
    max_directory_buckets: Option<u32>,
}

/// What ListDirectoryBuckets returns.
pub type ListDirectoryBucketsOutput = DocumentOutput<ListDirectoryBucketsResult>;

impl ListDirectoryBuckets {
    /// The first page.
    pub fn new() -> Self {
        Self::default()
    }

    option_setters! {
        /// Continues a paged listing.
        continuation_token: impl Into<String>,
        /// At most this many buckets per page (1–1000).
        max_directory_buckets: u32,
    }

    /// The request for the page after `output`, or `None` if it was the last one.
    pub fn next_page(&self, output: &ListDirectoryBucketsOutput) -> Option<Self> {
        let token = output.result.continuation_token.as_ref()?;
        Some(self.clone().continuation_token(token.clone()))
    }
}

impl Operation for ListDirectoryBuckets {
    type Output = ListDirectoryBucketsOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let check = match self.max_directory_buckets {
            Some(n) if !(1..=1000).contains(&n) => Err(InvalidInput::Parameter {
                name: "max-directory-buckets",
                reason: format!("{n} is outside 1..=1000"),
            }
            .into()),
            _ => Ok(()),
        };
        RequestBuilder::new(endpoint, Method::GET)
            .check(check)
            .directory_control()
            .query_opt("continuation-token", self.continuation_token.as_ref())
            .query_opt("max-directory-buckets", self.max_directory_buckets)
            .build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<ListDirectoryBucketsOutput, Error> {
        decode_document(
            response,
            s3_xml::decode_list_directory_buckets,
            "ListAllMyDirectoryBucketsResult",
        )
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "ListDirectoryBuckets"
    }
}

//! ListObjectVersions: every version and delete marker, a page at a time.

use bytes::Bytes;
use http::Response;
use s3_xml::ListObjectVersionsResult;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::{ListingScope, listing_setters, option_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{DocumentOutput, decode_document};

/// `GET /?versions`: up to 1000 versions and delete markers per page, keys in order,
/// newest version first.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectVersions.html>.
/// `encoding-type=url` is requested by default; keys come back decoded either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListObjectVersions {
    scope: ListingScope,
    key_marker: Option<String>,
    version_id_marker: Option<String>,
}

/// What ListObjectVersions returns: one page.
pub type ListObjectVersionsOutput = DocumentOutput<ListObjectVersionsResult>;

impl ListObjectVersions {
    /// Lists the versions in `bucket`.
    pub fn new(bucket: BucketName) -> Self {
        ListObjectVersions {
            scope: ListingScope::new(bucket),
            key_marker: None,
            version_id_marker: None,
        }
    }

    listing_setters!(max_keys);

    option_setters! {
        /// Starts after this key (and, with [`Self::version_id_marker`], after that version).
        key_marker: impl Into<String>,
        /// Starts after this version of the key marker.
        version_id_marker: impl Into<String>,
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
        self.scope
            .builder(endpoint, "max-keys")
            .subresource("versions")
            .query_opt("key-marker", self.key_marker.as_ref())
            .query_opt("version-id-marker", self.version_id_marker.as_ref())
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

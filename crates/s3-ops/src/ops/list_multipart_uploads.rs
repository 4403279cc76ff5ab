//! ListMultipartUploads: uploads started but not completed or aborted.

use bytes::Bytes;
use http::Response;
use s3_xml::ListMultipartUploadsResult;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::names::BucketName;
use crate::ops::{ListingScope, listing_setters, option_setters};
use crate::request::{Operation, OperationRequest};
use crate::response::{DocumentOutput, decode_document};

/// `GET /?uploads`: up to 1000 in-progress uploads per page.
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListMultipartUploads.html>.
/// `encoding-type=url` is requested by default; keys come back decoded either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListMultipartUploads {
    scope: ListingScope,
    key_marker: Option<String>,
    upload_id_marker: Option<String>,
}

/// What ListMultipartUploads returns: one page.
pub type ListMultipartUploadsOutput = DocumentOutput<ListMultipartUploadsResult>;

impl ListMultipartUploads {
    /// Lists the uploads in progress in `bucket`.
    pub fn new(bucket: BucketName) -> Self {
        ListMultipartUploads {
            scope: ListingScope::new(bucket),
            key_marker: None,
            upload_id_marker: None,
        }
    }

    listing_setters!(max_uploads);

    option_setters! {
        /// Starts after this key (and, with [`Self::upload_id_marker`], after that upload).
        key_marker: impl Into<String>,
        /// Starts after this upload of the key marker.
        upload_id_marker: impl Into<String>,
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
        self.scope
            .builder(endpoint, "max-uploads")
            .subresource("uploads")
            .query_opt("key-marker", self.key_marker.as_ref())
            .query_opt("upload-id-marker", self.upload_id_marker.as_ref())
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

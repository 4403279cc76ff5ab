//! WriteGetObjectResponse: an S3 Object Lambda function's answer to the GetObject it was
//! invoked for.

use std::collections::BTreeMap;

use bytes::Bytes;
use http::{Method, Response};

use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::is_valid_host_label;
use crate::ops::{Payload, payload_setters};
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{Head, RequestIds, decode};

/// `POST /WriteGetObjectResponse` on `<request-route>.s3-object-lambda.<region>.amazonaws.com`:
/// the object (or error) an Object Lambda function returns to the caller of GetObject,
/// streamed, with the headers S3 is to forward to that caller (`x-amz-fwd-*`).
///
/// The route and token come from the function's event (`getObjectContext.outputRoute`,
/// `outputToken`). The request is signed for `s3-object-lambda`. It takes no default
/// checksum: the answer's integrity is the `x-amz-checksum-*` it forwards
/// ([`WriteGetObjectResponse::checksum_crc32`], ...); a request checksum only where one is
/// chosen (`checksum_algorithm`).
///
/// S3 documents it at
/// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_WriteGetObjectResponse.html>.
///
/// ```
/// use s3_ops::{Endpoint, Operation, WriteGetObjectResponse};
///
/// let answer = WriteGetObjectResponse::new("io-use1-001", "token-from-the-event")
///     .status_code(200)
///     .content_type("text/plain")
///     .body(&b"transformed"[..]);
/// let request = answer.request(&Endpoint::aws("us-east-1")?)?;
/// assert_eq!(
///     request.request.uri(),
///     "https://io-use1-001.s3-object-lambda.us-east-1.amazonaws.com/WriteGetObjectResponse"
/// );
/// assert_eq!(request.request.headers()["x-amz-fwd-header-content-type"], "text/plain");
/// assert_eq!(request.signing().service(), "s3-object-lambda");
/// # Ok::<(), s3_ops::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteGetObjectResponse {
    route: String,
    token: String,
    status_code: Option<u16>,
    forwarded: BTreeMap<&'static str, String>,
    metadata: BTreeMap<String, String>,
    pub(crate) payload: Payload,
}

/// What WriteGetObjectResponse returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteGetObjectResponseOutput {
    /// Request ids.
    pub ids: RequestIds,
}

/// One setter per header S3 forwards to the GetObject caller.
macro_rules! forwarded_headers {
    ($($(#[$doc:meta])* $name:ident => $header:literal,)*) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, value: impl Into<String>) -> Self {
                self.forwarded.insert($header, value.into());
                self
            }
        )*
    };
}

impl WriteGetObjectResponse {
    /// The answer to the GetObject whose Object Lambda event carried `route`
    /// (`outputRoute`, a host label) and `token` (`outputToken`).
    pub fn new(route: impl Into<String>, token: impl Into<String>) -> Self {
        WriteGetObjectResponse {
            route: route.into(),
            token: token.into(),
            status_code: None,
            forwarded: BTreeMap::new(),
            metadata: BTreeMap::new(),
            payload: Payload::default(),
        }
    }

    payload_setters!();

    /// `x-amz-fwd-status`: the HTTP status the caller receives (200 by default).
    pub fn status_code(mut self, status: u16) -> Self {
        self.status_code = Some(status);
        self
    }

    /// Adds user metadata the caller receives (`x-amz-meta-<name>`).
    pub fn metadata(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata
            .insert(name.into().to_ascii_lowercase(), value.into());
        self
    }

    forwarded_headers! {
        /// `x-amz-fwd-error-code`: the S3 error code the caller receives (with a 4xx or 5xx
        /// status).
        error_code => "x-amz-fwd-error-code",
        /// `x-amz-fwd-error-message`.
        error_message => "x-amz-fwd-error-message",
        /// `Accept-Ranges`.
        accept_ranges => "x-amz-fwd-header-accept-ranges",
        /// `Cache-Control`.
        cache_control => "x-amz-fwd-header-cache-control",
        /// `Content-Disposition`.
        content_disposition => "x-amz-fwd-header-content-disposition",
        /// `Content-Encoding`.
        content_encoding => "x-amz-fwd-header-content-encoding",
        /// `Content-Language`.
        content_language => "x-amz-fwd-header-content-language",
        /// `Content-Range` (for a ranged GetObject).
        content_range => "x-amz-fwd-header-content-range",
        /// `Content-Type`.
        content_type => "x-amz-fwd-header-content-type",
        /// `x-amz-checksum-crc32` of the returned body.
        checksum_crc32 => "x-amz-fwd-header-x-amz-checksum-crc32",
        /// `x-amz-checksum-crc32c`.
        checksum_crc32c => "x-amz-fwd-header-x-amz-checksum-crc32c",
        /// `x-amz-checksum-crc64nvme`.
        checksum_crc64nvme => "x-amz-fwd-header-x-amz-checksum-crc64nvme",
        /// `x-amz-checksum-sha1`.
        checksum_sha1 => "x-amz-fwd-header-x-amz-checksum-sha1",
        /// `x-amz-checksum-sha256`.
        checksum_sha256 => "x-amz-fwd-header-x-amz-checksum-sha256",
        /// `x-amz-delete-marker`.
        delete_marker => "x-amz-fwd-header-x-amz-delete-marker",
        /// `ETag`.
        etag => "x-amz-fwd-header-etag",
        /// `Expires` (an HTTP date).
        expires => "x-amz-fwd-header-expires",
        /// `x-amz-expiration`.
        expiration => "x-amz-fwd-header-x-amz-expiration",
        /// `Last-Modified` (an HTTP date).
        last_modified => "x-amz-fwd-header-last-modified",
        /// `x-amz-missing-meta`.
        missing_meta => "x-amz-fwd-header-x-amz-missing-meta",
        /// `x-amz-object-lock-mode`.
        object_lock_mode => "x-amz-fwd-header-x-amz-object-lock-mode",
        /// `x-amz-object-lock-legal-hold`.
        object_lock_legal_hold => "x-amz-fwd-header-x-amz-object-lock-legal-hold",
        /// `x-amz-object-lock-retain-until-date`.
        object_lock_retain_until_date => "x-amz-fwd-header-x-amz-object-lock-retain-until-date",
        /// `x-amz-mp-parts-count`.
        parts_count => "x-amz-fwd-header-x-amz-mp-parts-count",
        /// `x-amz-replication-status`.
        replication_status => "x-amz-fwd-header-x-amz-replication-status",
        /// `x-amz-request-charged`.
        request_charged => "x-amz-fwd-header-x-amz-request-charged",
        /// `x-amz-restore`.
        restore => "x-amz-fwd-header-x-amz-restore",
        /// `x-amz-server-side-encryption`.
        server_side_encryption => "x-amz-fwd-header-x-amz-server-side-encryption",
        /// `x-amz-server-side-encryption-customer-algorithm`.
        sse_customer_algorithm =>
            "x-amz-fwd-header-x-amz-server-side-encryption-customer-algorithm",
        /// `x-amz-server-side-encryption-customer-key-MD5`.
        sse_customer_key_md5 => "x-amz-fwd-header-x-amz-server-side-encryption-customer-key-md5",
        /// `x-amz-server-side-encryption-aws-kms-key-id`.
        sse_kms_key_id => "x-amz-fwd-header-x-amz-server-side-encryption-aws-kms-key-id",
        /// `x-amz-server-side-encryption-bucket-key-enabled`.
        bucket_key_enabled => "x-amz-fwd-header-x-amz-server-side-encryption-bucket-key-enabled",
        /// `x-amz-storage-class`.
        storage_class => "x-amz-fwd-header-x-amz-storage-class",
        /// `x-amz-tagging-count`.
        tag_count => "x-amz-fwd-header-x-amz-tagging-count",
        /// `x-amz-version-id`.
        version_id => "x-amz-fwd-header-x-amz-version-id",
    }

    fn check(&self) -> Result<(), Error> {
        let invalid = |name: &'static str, reason: &str| {
            Err(InvalidInput::Parameter {
                name,
                reason: reason.to_owned(),
            }
            .into())
        };
        if !is_valid_host_label(&self.route, false) {
            return invalid(
                "RequestRoute",
                "must be the outputRoute of the Object Lambda event: one host label of \
                 letters, digits and '-'",
            );
        }
        if self.token.is_empty() {
            return invalid(
                "RequestToken",
                "must be the outputToken of the Object Lambda event (it is empty)",
            );
        }
        if self.status_code.is_some_and(|s| !(100..=599).contains(&s)) {
            return invalid("StatusCode", "must be an HTTP status from 100 to 599");
        }
        Ok(())
    }
}

impl Operation for WriteGetObjectResponse {
    type Output = WriteGetObjectResponseOutput;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let mut builder = RequestBuilder::new(endpoint, Method::POST)
            .check(self.check())
            .object_lambda()
            .host_prefix(&self.route)
            .path("WriteGetObjectResponse")
            .header("x-amz-request-route", &self.route)
            .header("x-amz-request-token", &self.token)
            .header_opt("x-amz-fwd-status", self.status_code)
            .metadata(&self.metadata);
        for (name, value) in &self.forwarded {
            builder = builder.header(name, value);
        }
        self.payload.apply(builder).build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<WriteGetObjectResponseOutput, Error> {
        decode(response, |parts, _| {
            Ok(WriteGetObjectResponseOutput {
                ids: Head::new(&parts.headers).request_ids(),
            })
        })
    }

    /// The token answers one GetObject once: a second answer is refused, so a retry after
    /// a lost response cannot help.
    fn is_idempotent(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "WriteGetObjectResponse"
    }
}

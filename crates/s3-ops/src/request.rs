//! The [`Operation`] trait, the request description it produces, and the one builder every
//! operation module uses to assemble method, URI, query and headers.

use std::collections::BTreeMap;
use std::fmt::{self, Display};

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, HeaderName, HeaderValue};
use http::{HeaderMap, Method, Request, Response};

use crate::checksum::{Checksum, ChecksumAlgorithm, ContentMd5};
use crate::encoding::push_query_encoded;
use crate::endpoint::{Endpoint, Route};
use crate::error::{Error, InvalidInput};
use crate::names::{BucketName, ObjectKey};
use crate::signing::SigningScope;
use crate::types::{Conditions, ServerSideEncryption, SseCustomerKey};

/// One S3 operation: how to encode its request and decode its response.
pub trait Operation {
    /// The decoded successful response.
    type Output;

    /// Builds the unsigned request (method, fully encoded URI, headers) and describes its
    /// body. Invalid input is rejected here, before anything is sent.
    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error>;

    /// Decodes a complete response into the output or an error (S3 errors included, also
    /// those hidden in a 200 response).
    fn response(&self, response: Response<Bytes>) -> Result<Self::Output, Error>;

    /// True if sending the request twice has the same effect as sending it once, so a
    /// transport may retry it after an ambiguous failure.
    fn is_idempotent(&self) -> bool;

    /// The S3 action name (`GetObject`, ...), for logs and metrics.
    fn name(&self) -> &'static str;

    /// The most response-body bytes the transport should buffer for
    /// [`Operation::response`]. Larger bodies should be treated as malformed.
    fn response_body_limit(&self) -> usize {
        RESPONSE_BODY_LIMIT
    }

    /// This operation with a transport's `defaults` applied where its caller chose nothing:
    /// the checksum of a PutObject, the checksum mode of a read (GetObject, HeadObject). A
    /// transport calls it before sending; other operations come back unchanged.
    ///
    /// `UploadPart` has no default: a part must carry the algorithm its multipart upload
    /// was created with, which only the caller knows. S3 refuses a part checksum on an
    /// upload created without one, or accepts it and then fails the completion that does
    /// not list it (what the AWS SDKs' default part checksum runs into:
    /// aws-sdk-java-v2#6518, aws-sdk-go-v2#3005).
    fn with_integrity_defaults(self, defaults: IntegrityDefaults) -> Self
    where
        Self: Sized,
    {
        let _ = defaults;
        self
    }
}

/// What a transport checks unless an operation says otherwise: the checksum uploads carry,
/// and whether reads ask for the stored checksums (`x-amz-checksum-mode: ENABLED`) to verify
/// bodies against them. See [`Operation::with_integrity_defaults`]. s3-ops alone applies
/// none (an operation nobody chose a checksum for sends none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct IntegrityDefaults {
    /// The checksum of uploads that chose none; `None` leaves them without one.
    pub upload_checksum: Option<ChecksumAlgorithm>,
    /// Checksum mode for reads that did not set it.
    pub checksum_mode: bool,
}

impl IntegrityDefaults {
    /// Uploads carry `upload_checksum`; reads ask for checksums if `checksum_mode`.
    pub fn new(upload_checksum: Option<ChecksumAlgorithm>, checksum_mode: bool) -> Self {
        Self {
            upload_checksum,
            checksum_mode,
        }
    }
}

/// Default bound on buffered response bodies (a 1000-key listing of 1024-byte keys with
/// owners fits comfortably).
pub const RESPONSE_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// The request body an operation needs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Body {
    /// No body.
    Empty,
    /// An in-memory body (XML documents, small objects).
    Bytes(Bytes),
    /// A body the transport streams from elsewhere (file, stream).
    External {
        /// Exact payload length in bytes (before any aws-chunked encoding).
        content_length: u64,
        /// If set, the transport sends the payload aws-chunked with this checksum as a
        /// trailer (`x-amz-trailer: x-amz-checksum-*`), computed while streaming.
        trailing_checksum: Option<ChecksumAlgorithm>,
    },
}

impl Body {
    /// The bytes of an in-memory body (`Empty` is zero bytes); `None` for external ones.
    pub fn in_memory(&self) -> Option<&[u8]> {
        match self {
            Body::Empty => Some(&[]),
            Body::Bytes(bytes) => Some(bytes),
            Body::External { .. } => None,
        }
    }

    /// The payload length in bytes.
    pub fn content_length(&self) -> u64 {
        match self {
            Body::Empty => 0,
            Body::Bytes(bytes) => bytes.len() as u64,
            Body::External { content_length, .. } => *content_length,
        }
    }
}

/// An encoded request: everything except the signature and the streamed body bytes.
///
/// `Content-Length` is set to the payload length; a transport that switches to aws-chunked
/// encoding replaces it with the encoded length and sets `x-amz-decoded-content-length`.
/// `Debug` redacts secrets carried in headers (SSE-C keys, credentials).
///
/// Sign it as its [`OperationRequest::signing`] scope says ([`SigningScope::params`]): SigV4
/// for the endpoint's region, an access point ARN's region or another service, SigV4a for
/// the region set of a Multi-Region Access Point, S3 Express session credentials for a
/// directory bucket.
pub struct OperationRequest {
    /// Method, URI (path and query already percent-encoded as SigV4 canonicalizes them for
    /// S3) and headers. `Host` is left to the transport (it is the URI's authority).
    pub request: Request<()>,
    /// The body to send.
    pub body: Body,
    signing: SigningScope,
}

impl OperationRequest {
    /// How the request must be signed: region (or region set), service, and whether with a
    /// directory bucket's session credentials. Addressing decides it: see [`SigningScope`].
    pub fn signing(&self) -> &SigningScope {
        &self.signing
    }

    /// The SigV4a region set the request must be signed for, or `None` when it is signed
    /// with SigV4 for one region. `Some("*")` for a request to a Multi-Region Access Point
    /// ([`BucketName::multi_region_access_point`]): it has no single region, and S3 rejects
    /// anything but SigV4a for it.
    pub fn region_set(&self) -> Option<&str> {
        self.signing.region_set()
    }
}

impl fmt::Debug for OperationRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SECRET_HEADERS: [&str; 5] = [
            "authorization",
            "x-amz-security-token",
            "x-amz-server-side-encryption-customer-key",
            "x-amz-copy-source-server-side-encryption-customer-key",
            "x-amz-server-side-encryption-context",
        ];
        let headers: Vec<(&str, &str)> = self
            .request
            .headers()
            .iter()
            .map(|(name, value)| {
                let shown = if SECRET_HEADERS.contains(&name.as_str()) {
                    "<redacted>"
                } else {
                    value.to_str().unwrap_or("<binary>")
                };
                (name.as_str(), shown)
            })
            .collect();
        f.debug_struct("OperationRequest")
            .field("method", self.request.method())
            .field("uri", self.request.uri())
            .field("headers", &headers)
            .field("body", &self.body)
            .field("signing", &self.signing)
            .finish()
    }
}

/// Assembles a request. Setters record the first error and `build` returns it, so operation
/// modules chain calls without checking each one.
pub(crate) struct RequestBuilder<'a> {
    endpoint: &'a Endpoint,
    method: Method,
    bucket: Option<&'a BucketName>,
    key: Option<&'a ObjectKey>,
    /// Encoded `(name, value)`; `None` for a value-less sub-resource (`?uploads`).
    query: Vec<(String, Option<String>)>,
    headers: HeaderMap,
    body: Body,
    error: Option<Error>,
    route: Route,
    iam_auth: bool,
    /// A fixed path where an operation has no key (`/WriteGetObjectResponse`).
    path: Option<&'a str>,
    host_prefix: Option<&'a str>,
}

impl<'a> RequestBuilder<'a> {
    pub(crate) fn new(endpoint: &'a Endpoint, method: Method) -> Self {
        RequestBuilder {
            endpoint,
            method,
            bucket: None,
            key: None,
            query: Vec::new(),
            headers: HeaderMap::new(),
            body: Body::Empty,
            error: None,
            route: Route::Data,
            iam_auth: false,
            path: None,
            host_prefix: None,
        }
    }

    /// A fixed path (one segment, no bucket, no key).
    pub(crate) fn path(mut self, path: &'a str) -> Self {
        self.path = Some(path);
        self
    }

    /// A label put in front of the host (WriteGetObjectResponse's request route).
    pub(crate) fn host_prefix(mut self, prefix: &'a str) -> Self {
        self.host_prefix = Some(prefix);
        self
    }

    /// A bucket-level (control plane) operation: a directory bucket's goes to its region's
    /// S3 Express control endpoint, and Transfer Acceleration does not apply.
    pub(crate) fn control_plane(mut self) -> Self {
        self.route = Route::BucketControl;
        self
    }

    /// An operation of the S3 Express control endpoint without a bucket
    /// (ListDirectoryBuckets).
    pub(crate) fn directory_control(mut self) -> Self {
        self.route = Route::DirectoryControl;
        self
    }

    /// An operation of S3 Object Lambda's endpoint without a bucket (WriteGetObjectResponse).
    pub(crate) fn object_lambda(mut self) -> Self {
        self.route = Route::ObjectLambda;
        self
    }

    /// Signed with the caller's credentials even on a directory bucket's zonal endpoint
    /// (CreateSession, CopyObject, HeadBucket: S3 authorizes them with IAM, not a session).
    pub(crate) fn iam_auth(mut self) -> Self {
        self.iam_auth = true;
        self
    }

    pub(crate) fn bucket(mut self, bucket: &'a BucketName) -> Self {
        self.bucket = Some(bucket);
        self
    }

    pub(crate) fn key(mut self, key: &'a ObjectKey) -> Self {
        self.key = Some(key);
        self
    }

    /// A query parameter; name and value are percent-encoded.
    pub(crate) fn query(mut self, name: &str, value: impl Display) -> Self {
        let mut encoded_value = String::new();
        push_query_encoded(&mut encoded_value, &value.to_string());
        self.push_query(name, Some(encoded_value));
        self
    }

    fn push_query(&mut self, name: &str, encoded_value: Option<String>) {
        let mut encoded_name = String::new();
        push_query_encoded(&mut encoded_name, name);
        self.query.push((encoded_name, encoded_value));
    }

    pub(crate) fn query_opt(self, name: &str, value: Option<impl Display>) -> Self {
        match value {
            Some(value) => self.query(name, value),
            None => self,
        }
    }

    /// A value-less sub-resource such as `?uploads` or `?tagging`.
    pub(crate) fn subresource(mut self, name: &str) -> Self {
        self.push_query(name, None);
        self
    }

    pub(crate) fn header(self, name: &'static str, value: impl Display) -> Self {
        self.header_named(HeaderName::from_static(name), value)
    }

    pub(crate) fn header_named(mut self, name: HeaderName, value: impl Display) -> Self {
        self.insert_header(name, &value.to_string());
        self
    }

    /// `x-amz-checksum-<algorithm>: <base64>` for a known checksum.
    pub(crate) fn checksum_header(self, checksum: Option<&Checksum>) -> Self {
        match checksum {
            Some(checksum) => {
                self.header_named(checksum.algorithm().header_name(), checksum.to_base64())
            }
            None => self,
        }
    }

    pub(crate) fn header_opt(self, name: &'static str, value: Option<impl Display>) -> Self {
        match value {
            Some(value) => self.header(name, value),
            None => self,
        }
    }

    /// An HTTP-date header (`If-Modified-Since`, `Expires`, ...).
    pub(crate) fn date_header_opt(
        self,
        name: &'static str,
        value: Option<std::time::SystemTime>,
    ) -> Self {
        self.header_opt(name, value.map(httpdate::fmt_http_date))
    }

    fn insert_header(&mut self, name: HeaderName, value: &str) {
        // HeaderValue accepts obs-text but rejects CR, LF, NUL and other controls.
        match HeaderValue::from_str(value) {
            Ok(mut value) => {
                // SSE-C keys and KMS encryption contexts: hidden by `http`'s `Debug`, never
                // indexed by HTTP/2 (HPACK).
                if matches!(
                    name.as_str(),
                    "x-amz-server-side-encryption-customer-key"
                        | "x-amz-copy-source-server-side-encryption-customer-key"
                        | "x-amz-server-side-encryption-context"
                ) {
                    value.set_sensitive(true);
                }
                self.headers.append(name, value);
            }
            Err(_) => self.fail(InvalidInput::HeaderValue {
                name: name.as_str().to_owned(),
            }),
        }
    }

    fn fail(&mut self, input: InvalidInput) {
        if self.error.is_none() {
            self.error = Some(input.into());
        }
    }

    /// Records an error found by the operation itself (limits, ranges, ...).
    pub(crate) fn check(mut self, result: Result<(), Error>) -> Self {
        if let (Err(error), None) = (result, &self.error) {
            self.error = Some(error);
        }
        self
    }

    /// `x-amz-meta-*` headers; names are lower-cased, the 2 KB limit is enforced.
    pub(crate) fn metadata(mut self, metadata: &BTreeMap<String, String>) -> Self {
        const LIMIT: usize = 2048;
        let size: usize = metadata.iter().map(|(n, v)| n.len() + v.len()).sum();
        if size > LIMIT {
            self.fail(InvalidInput::MetadataTooLarge { size });
            return self;
        }
        for (name, value) in metadata {
            match HeaderName::from_bytes(format!("x-amz-meta-{name}").as_bytes()) {
                Ok(header) if !name.is_empty() => self.insert_header(header, value),
                _ => self.fail(InvalidInput::MetadataName { name: name.clone() }),
            }
        }
        self
    }

    /// Conditional headers, either plain (`If-Match`, ...) or for a copy source
    /// (`x-amz-copy-source-if-match`, ...).
    pub(crate) fn conditions(self, conditions: &Conditions, copy_source: bool) -> Self {
        let names = if copy_source {
            [
                "x-amz-copy-source-if-match",
                "x-amz-copy-source-if-none-match",
                "x-amz-copy-source-if-modified-since",
                "x-amz-copy-source-if-unmodified-since",
            ]
        } else {
            [
                "if-match",
                "if-none-match",
                "if-modified-since",
                "if-unmodified-since",
            ]
        };
        self.header_opt(names[0], conditions.if_match.as_ref())
            .header_opt(names[1], conditions.if_none_match.as_ref())
            .date_header_opt(names[2], conditions.if_modified_since)
            .date_header_opt(names[3], conditions.if_unmodified_since)
    }

    /// Encryption headers for a write.
    pub(crate) fn server_side_encryption(self, sse: Option<&ServerSideEncryption>) -> Self {
        match sse {
            None => self,
            Some(ServerSideEncryption::S3) => self.header("x-amz-server-side-encryption", "AES256"),
            Some(ServerSideEncryption::Kms {
                key_id,
                context,
                bucket_key,
            }) => self
                .header("x-amz-server-side-encryption", "aws:kms")
                .header_opt(
                    "x-amz-server-side-encryption-aws-kms-key-id",
                    key_id.as_ref(),
                )
                .check(context.as_deref().map_or(Ok(()), validate_kms_context))
                .header_opt("x-amz-server-side-encryption-context", context.as_ref())
                .header_opt(
                    "x-amz-server-side-encryption-bucket-key-enabled",
                    *bucket_key,
                ),
            Some(ServerSideEncryption::Customer(key)) => self.sse_customer_key(Some(key), false),
        }
    }

    /// SSE-C key headers, for the object itself or for a copy source.
    pub(crate) fn sse_customer_key(self, key: Option<&SseCustomerKey>, copy_source: bool) -> Self {
        let Some(key) = key else { return self };
        let [algorithm, encoded, md5] = key.header_values();
        if copy_source {
            self.header(
                "x-amz-copy-source-server-side-encryption-customer-algorithm",
                algorithm,
            )
            .header(
                "x-amz-copy-source-server-side-encryption-customer-key",
                encoded,
            )
            .header(
                "x-amz-copy-source-server-side-encryption-customer-key-md5",
                md5,
            )
        } else {
            self.header("x-amz-server-side-encryption-customer-algorithm", algorithm)
                .header("x-amz-server-side-encryption-customer-key", encoded)
                .header("x-amz-server-side-encryption-customer-key-md5", md5)
        }
    }

    /// An XML document body with its `Content-MD5` (S3 requires an integrity header on
    /// several configuration and batch operations; MD5 is the one every store accepts), or
    /// its CRC32 for a directory bucket, which refuses MD5.
    pub(crate) fn xml_body(self, document: Vec<u8>) -> Self {
        let builder = self.header("content-type", "application/xml");
        let builder = if builder.bucket.is_some_and(BucketName::is_s3_express) {
            let crc32 = ChecksumAlgorithm::Crc32.checksum(&document);
            builder
                .header("x-amz-sdk-checksum-algorithm", ChecksumAlgorithm::Crc32)
                .checksum_header(Some(&crc32))
        } else {
            builder.header("content-md5", ContentMd5::of(&document))
        };
        builder.body(Body::Bytes(Bytes::from(document)))
    }

    /// The XML document of CompleteMultipartUpload: its `Content-MD5`, but on a directory
    /// bucket (which refuses MD5) no integrity header at all. Never an `x-amz-checksum-*`
    /// header: on CompleteMultipartUpload that header is the whole object's checksum, and the
    /// document's own would be taken for it (and sit beside the object's value).
    pub(crate) fn completion_body(self, document: Vec<u8>) -> Self {
        let builder = self.header("content-type", "application/xml");
        let builder = if builder.bucket.is_some_and(BucketName::is_s3_express) {
            builder
        } else {
            builder.header("content-md5", ContentMd5::of(&document))
        };
        builder.body(Body::Bytes(Bytes::from(document)))
    }

    /// Whether the request addresses an S3 Express One Zone directory bucket or access point.
    pub(crate) fn is_s3_express(&self) -> bool {
        self.bucket.is_some_and(BucketName::is_s3_express)
    }

    pub(crate) fn body(mut self, body: Body) -> Self {
        self.body = body;
        self
    }

    pub(crate) fn build(mut self) -> Result<OperationRequest, Error> {
        if let Some(error) = self.error {
            return Err(error);
        }
        // Sorted like the SigV4 canonical query, so what is sent is what is signed.
        self.query.sort_unstable();
        let mut query = String::new();
        for (name, value) in &self.query {
            if !query.is_empty() {
                query.push('&');
            }
            query.push_str(name);
            if let Some(value) = value {
                query.push('=');
                query.push_str(value);
            }
        }
        let key = self.key.map(ObjectKey::as_str).or(self.path);
        let address = self.endpoint.address(
            self.bucket,
            key,
            &query,
            self.route,
            self.iam_auth,
            self.host_prefix,
        )?;
        let sends_body =
            !matches!(self.body, Body::Empty) || matches!(self.method, Method::PUT | Method::POST);
        if sends_body {
            self.headers.insert(
                CONTENT_LENGTH,
                HeaderValue::from(self.body.content_length()),
            );
        }
        let mut request = Request::new(());
        *request.method_mut() = self.method;
        *request.uri_mut() = address.uri;
        *request.headers_mut() = self.headers;
        Ok(OperationRequest {
            request,
            body: self.body,
            signing: address.signing,
        })
    }
}

/// The largest KMS encryption context S3 takes, decoded (KMS's limit).
pub(crate) const MAX_KMS_CONTEXT: usize = 8 * 1024;

/// An SSE-KMS encryption context as S3 takes it: the base64 of a JSON object whose values are
/// strings, at most [`MAX_KMS_CONTEXT`] bytes decoded. The refusal never repeats the value.
pub(crate) fn validate_kms_context(context: &str) -> Result<(), Error> {
    let reason = match crate::encoding::base64_decode(context) {
        None => "must be standard base64 (of a JSON object)",
        Some(json) if json.len() > MAX_KMS_CONTEXT => "must be at most 8 KiB of JSON, decoded",
        Some(json) if !std::str::from_utf8(&json).is_ok_and(is_json_string_map) => {
            "must be the base64 of a JSON object whose values are strings, such as \
             {\"project\":\"alpha\"}"
        }
        Some(_) => return Ok(()),
    };
    Err(InvalidInput::Parameter {
        name: "x-amz-server-side-encryption-context",
        reason: reason.to_owned(),
    }
    .into())
}

/// Whether `text` is a JSON object of string keys and string values (RFC 8259 strings and
/// whitespace; nothing else).
fn is_json_string_map(text: &str) -> bool {
    let mut chars = text.chars().peekable();
    let skip_space = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
        while chars
            .next_if(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
            .is_some()
        {}
    };
    let string = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| -> bool {
        if chars.next() != Some('"') {
            return false;
        }
        loop {
            match chars.next() {
                Some('"') => return true,
                Some('\\') => match chars.next() {
                    Some('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') => {}
                    Some('u') => {
                        if !(0..4).all(|_| chars.next().is_some_and(|c| c.is_ascii_hexdigit())) {
                            return false;
                        }
                    }
                    _ => return false,
                },
                Some(c) if (c as u32) < 0x20 => return false,
                Some(_) => {}
                None => return false,
            }
        }
    };
    skip_space(&mut chars);
    if chars.next() != Some('{') {
        return false;
    }
    skip_space(&mut chars);
    if chars.next_if_eq(&'}').is_none() {
        loop {
            skip_space(&mut chars);
            if !string(&mut chars) {
                return false;
            }
            skip_space(&mut chars);
            if chars.next() != Some(':') {
                return false;
            }
            skip_space(&mut chars);
            if !string(&mut chars) {
                return false;
            }
            skip_space(&mut chars);
            match chars.next() {
                Some(',') => continue,
                Some('}') => break,
                _ => return false,
            }
        }
    }
    skip_space(&mut chars);
    chars.next().is_none()
}

#[cfg(test)]
mod kms_context_tests {
    use super::*;

    #[test]
    fn a_kms_context_is_the_base64_of_a_json_object_of_strings() {
        let encode = |json: &str| crate::encoding::base64_encode(json.as_bytes());
        for ok in [
            "{}",
            " { \"project\" : \"alpha\" } ",
            "{\"a\":\"1\",\"b\":\"caf\\u00e9 \\\"x\\\"\"}",
        ] {
            assert!(validate_kms_context(&encode(ok)).is_ok(), "{ok}");
        }
        let secret = "{\"project\":\"UNIQUE-SECRET-VALUE\"";
        for (bad, fragment) in [
            ("not base64!".to_owned(), "standard base64"),
            (encode(secret), "JSON object"),
            (encode("[\"a\"]"), "JSON object"),
            (encode("{\"a\":1}"), "JSON object"),
            (encode("{\"a\":\"b\",}"), "JSON object"),
            (encode("{\"a\":\"b\"} x"), "JSON object"),
            (
                encode(&format!("{{\"a\":\"{}\"}}", "x".repeat(MAX_KMS_CONTEXT))),
                "8 KiB",
            ),
        ] {
            let error = validate_kms_context(&bad).unwrap_err().to_string();
            assert!(error.contains(fragment), "{bad}: {error}");
            assert!(
                !error.contains("UNIQUE-SECRET-VALUE") && !error.contains(&bad),
                "{error}"
            );
        }
    }

    #[test]
    fn a_kms_context_from_pairs_is_encoded_as_s3_takes_it() {
        let sse = ServerSideEncryption::kms_with_context(
            Some("key-1".to_owned()),
            [("project", "alpha"), ("quote\"back\\slash", "line\nbreak")],
        );
        let ServerSideEncryption::Kms {
            context: Some(context),
            ..
        } = &sse
        else {
            panic!("{sse:?}");
        };
        validate_kms_context(context).unwrap();
        let json = crate::encoding::base64_decode(context).unwrap();
        assert_eq!(
            String::from_utf8(json).unwrap(),
            "{\"project\":\"alpha\",\"quote\\\"back\\\\slash\":\"line\\u000abreak\"}"
        );
    }
}

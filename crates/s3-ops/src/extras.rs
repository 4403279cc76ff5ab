//! What a caller adds to requests the library builds ([`RequestExtras`]: headers, query
//! parameters, requester pays), and the requests it does not build at all
//! ([`RawRequest`]). Both pass through one validation ([`check_header_name`],
//! [`check_query_name`]), so a header the signer or the integrity logic owns can never be
//! set by accident.

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::{Method, Response, Uri};

use crate::checksum::{ChecksumAlgorithm, ContentMd5};
use crate::encoding::push_query_encoded;
use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::{BucketName, ObjectKey};
use crate::request::{Body, Operation, OperationRequest, RequestBuilder};
use crate::response::decode;

/// Headers the transport and the signer own: framing, authentication, the payload hash and
/// integrity. A caller can never set them through extras or a raw request.
const RESERVED_HEADERS: [&str; 19] = [
    "host",
    "authorization",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "upgrade",
    "expect",
    "proxy-authorization",
    "proxy-connection",
    "x-amz-date",
    "x-amz-content-sha256",
    "x-amz-security-token",
    "x-amz-s3session-token",
    "x-amz-decoded-content-length",
    "x-amz-trailer",
    "x-amz-region-set",
    "x-amz-sdk-checksum-algorithm",
];

/// Why `name` cannot be set by a caller, if it cannot.
fn header_refusal(name: &HeaderName) -> Option<&'static str> {
    let name = name.as_str();
    if RESERVED_HEADERS.contains(&name) {
        Some("is set by the transport or the signer")
    } else if name == "content-md5" || name.starts_with("x-amz-checksum-") {
        Some(
            "carries the integrity checks: use the operation's checksum setters \
             (checksum_algorithm, checksum, content_md5)",
        )
    } else {
        None
    }
}

/// Validates a caller's header: a valid name and value, not one the library owns.
fn check_header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), Error> {
    let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| InvalidInput::Parameter {
        name: "header",
        reason: format!("{name:?} is not a valid HTTP header name"),
    })?;
    if let Some(why) = header_refusal(&header) {
        return Err(InvalidInput::Parameter {
            name: "header",
            reason: format!("{header} cannot be set by the caller: it {why}"),
        }
        .into());
    }
    let value = HeaderValue::from_str(value).map_err(|_| InvalidInput::HeaderValue {
        name: header.to_string(),
    })?;
    Ok((header, value))
}

/// Validates a caller's query parameter and encodes it: not empty, not a SigV4 presigning
/// parameter (`X-Amz-*`).
fn check_query(name: &str, value: Option<&str>) -> Result<(String, Option<String>), Error> {
    if name.is_empty()
        || name
            .get(..6)
            .is_some_and(|p| p.eq_ignore_ascii_case("x-amz-"))
    {
        return Err(InvalidInput::Parameter {
            name: "query",
            reason: format!(
                "{name:?} cannot be set by the caller (empty, or a presigning parameter X-Amz-*)"
            ),
        }
        .into());
    }
    let encode = |text: &str| {
        let mut out = String::with_capacity(text.len());
        push_query_encoded(&mut out, text);
        out
    };
    Ok((encode(name), value.map(encode)))
}

/// Whether an extra adds to what the operation set, or may replace it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Add,
    Replace,
}

/// Headers and query parameters added to every request they are applied to, and requester
/// pays. A client applies its defaults ([`ClientBuilder::request_payer`]) and those of a
/// view ([`Client::with_request_extras`]) to every request, managed transfers included;
/// a custom transport calls [`RequestExtras::apply`].
///
/// Nothing the library signs or computes can be set here: `host`, `authorization`,
/// `x-amz-date`, `x-amz-content-sha256`, session tokens, framing headers and every
/// checksum header are refused (checksums have their own setters on the operations).
/// A header or query parameter the operation itself sets is refused too, unless it is
/// given with [`RequestExtras::replace_header`] / [`RequestExtras::replace_query`].
/// Errors are reported when the extras are applied, before anything is sent.
///
/// ```
/// use s3_ops::{BucketName, Endpoint, GetObject, ObjectKey, Operation, RequestExtras};
///
/// let extras = RequestExtras::new()
///     .request_payer(true)
///     .header("x-amz-expected-bucket-owner", "123456789012")
///     .query("x-id", Some("GetObject"));
/// let get = GetObject::new(BucketName::new("landsat-pds")?, ObjectKey::new("scene.tif")?);
/// let mut request = get.request(&Endpoint::aws("us-west-2")?)?;
/// extras.apply(&mut request)?;
/// assert_eq!(request.request.headers()["x-amz-request-payer"], "requester");
/// assert_eq!(request.request.uri().query(), Some("x-id=GetObject"));
///
/// let refused = RequestExtras::new().header("x-amz-content-sha256", "UNSIGNED-PAYLOAD");
/// assert!(refused.apply(&mut get.request(&Endpoint::aws("us-west-2")?)?).is_err());
/// # Ok::<(), s3_ops::Error>(())
/// ```
///
/// [`ClientBuilder::request_payer`]: https://docs.rs/s3-wire-tokio
/// [`Client::with_request_extras`]: https://docs.rs/s3-wire-tokio
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestExtras {
    headers: Vec<(HeaderName, HeaderValue, Mode)>,
    /// Encoded name and value.
    query: Vec<(String, Option<String>, Mode)>,
    request_payer: bool,
    error: Option<Error>,
}

impl RequestExtras {
    /// No extras.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends `x-amz-request-payer: requester`: the caller pays for the request and the
    /// data it moves, which a Requester Pays bucket demands (without it, S3 answers 403).
    pub fn request_payer(mut self, enabled: bool) -> Self {
        self.request_payer = enabled;
        self
    }

    /// Whether `x-amz-request-payer: requester` is sent.
    pub fn is_request_payer(&self) -> bool {
        self.request_payer
    }

    /// Adds a header the operation does not set.
    pub fn header(self, name: &str, value: &str) -> Self {
        self.push_header(name, value, Mode::Add)
    }

    /// Sets a header, replacing the operation's own value if it has one (`content-type`,
    /// `cache-control`, ...). Headers the library owns are still refused.
    pub fn replace_header(self, name: &str, value: &str) -> Self {
        self.push_header(name, value, Mode::Replace)
    }

    /// Adds a query parameter the operation does not set (`None`: a value-less one,
    /// `?name`).
    pub fn query(self, name: &str, value: Option<&str>) -> Self {
        self.push_query(name, value, Mode::Add)
    }

    /// Sets a query parameter, replacing the operation's own value if it has one.
    pub fn replace_query(self, name: &str, value: Option<&str>) -> Self {
        self.push_query(name, value, Mode::Replace)
    }

    /// True if applying these changes nothing.
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty()
            && self.query.is_empty()
            && !self.request_payer
            && self.error.is_none()
    }

    /// These extras with `other`'s on top: `other`'s headers and parameters replace
    /// same-named ones of `self`, and requester pays is on if either has it.
    pub fn merged(&self, other: &RequestExtras) -> RequestExtras {
        let mut merged = self.clone();
        merged
            .headers
            .retain(|(name, ..)| !other.headers.iter().any(|(o, ..)| o == name));
        merged.headers.extend(other.headers.iter().cloned());
        merged
            .query
            .retain(|(name, ..)| !other.query.iter().any(|(o, ..)| o == name));
        merged.query.extend(other.query.iter().cloned());
        merged.request_payer |= other.request_payer;
        if merged.error.is_none() {
            merged.error = other.error.clone();
        }
        merged
    }

    /// Adds these extras to an encoded request (before it is signed).
    pub fn apply(&self, request: &mut OperationRequest) -> Result<(), Error> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let headers = request.request.headers_mut();
        for (name, value, mode) in &self.headers {
            if *mode == Mode::Add && headers.contains_key(name) {
                return Err(InvalidInput::Parameter {
                    name: "header",
                    reason: format!(
                        "{name} is set by the operation; use replace_header to override it"
                    ),
                }
                .into());
            }
            headers.insert(name.clone(), value.clone());
        }
        if self.request_payer {
            headers.insert(
                HeaderName::from_static("x-amz-request-payer"),
                HeaderValue::from_static("requester"),
            );
        }
        if !self.query.is_empty() {
            let uri = request.request.uri();
            let mut pairs = split_query(uri.query().unwrap_or(""));
            for (name, value, mode) in &self.query {
                let present = pairs.iter().any(|(n, _)| n == name);
                if present && *mode == Mode::Add {
                    return Err(InvalidInput::Parameter {
                        name: "query",
                        reason: format!(
                            "{name} is set by the operation; use replace_query to override it"
                        ),
                    }
                    .into());
                }
                pairs.retain(|(n, _)| n != name);
                pairs.push((name.clone(), value.clone()));
            }
            *request.request.uri_mut() = with_query(uri, &mut pairs)?;
        }
        Ok(())
    }

    fn push_header(mut self, name: &str, value: &str, mode: Mode) -> Self {
        match check_header(name, value) {
            Ok((name, value)) => self.headers.push((name, value, mode)),
            Err(error) => self.fail(error),
        }
        self
    }

    fn push_query(mut self, name: &str, value: Option<&str>, mode: Mode) -> Self {
        match check_query(name, value) {
            Ok((name, value)) => self.query.push((name, value, mode)),
            Err(error) => self.fail(error),
        }
        self
    }

    fn fail(&mut self, error: Error) {
        if self.error.is_none() {
            self.error = Some(error);
        }
    }
}

/// An encoded query string as `(name, value)` pairs (`None` for `?name`).
fn split_query(query: &str) -> Vec<(String, Option<String>)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
            None => (pair.to_owned(), None),
        })
        .collect()
}

/// `uri` with its query replaced by `pairs`, sorted as SigV4 canonicalizes them (so what
/// is sent is what is signed).
fn with_query(uri: &Uri, pairs: &mut [(String, Option<String>)]) -> Result<Uri, Error> {
    pairs.sort_unstable();
    let mut text = format!(
        "{}://{}{}",
        uri.scheme_str().unwrap_or("https"),
        uri.authority().map_or("", |a| a.as_str()),
        uri.path()
    );
    for (index, (name, value)) in pairs.iter().enumerate() {
        text.push(if index == 0 { '?' } else { '&' });
        text.push_str(name);
        if let Some(value) = value {
            text.push('=');
            text.push_str(value);
        }
    }
    Uri::try_from(text).map_err(|e| {
        InvalidInput::Endpoint {
            reason: format!("cannot build request URI: {e}"),
        }
        .into()
    })
}

/// Any S3 request the library does not model, built from its parts and sent like every
/// other operation: addressed for the bucket (access points, directory buckets and
/// endpoint variants included), signed, retried if the caller declares it idempotent, its
/// errors decoded into [`S3Error`](crate::S3Error)s. A successful response comes back raw.
///
/// ```
/// use bytes::Bytes;
/// use http::Method;
/// use s3_ops::{BucketName, Endpoint, Operation, RawRequest};
///
/// // PutBucketVersioning, which S3 requires an integrity header on.
/// let versioning = RawRequest::new("PutBucketVersioning", Method::PUT)
///     .bucket(BucketName::new("photos")?)
///     .query("versioning", None)
///     .header("content-type", "application/xml")
///     .body(Bytes::from_static(
///         b"<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>",
///     ))
///     .content_md5()
///     .idempotent(true);
/// let request = versioning.request(&Endpoint::aws("eu-west-1")?)?;
/// assert_eq!(
///     request.request.uri(),
///     "https://photos.s3.eu-west-1.amazonaws.com/?versioning"
/// );
/// assert!(request.request.headers().contains_key("content-md5"));
/// # Ok::<(), s3_ops::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRequest {
    name: &'static str,
    method: Method,
    bucket: Option<BucketName>,
    key: Option<ObjectKey>,
    extras: RequestExtras,
    body: Bytes,
    content_md5: bool,
    checksum: Option<ChecksumAlgorithm>,
    idempotent: bool,
    control_plane: bool,
    response_limit: usize,
}

impl RawRequest {
    /// A request named `name` (the S3 action, for logs and errors) with `method`, not
    /// idempotent (never retried after an ambiguous failure) until said otherwise.
    pub fn new(name: &'static str, method: Method) -> Self {
        RawRequest {
            name,
            method,
            bucket: None,
            key: None,
            extras: RequestExtras::new(),
            body: Bytes::new(),
            content_md5: false,
            checksum: None,
            idempotent: false,
            control_plane: false,
            response_limit: crate::request::RESPONSE_BODY_LIMIT,
        }
    }

    /// The bucket (any [`BucketName`] form).
    pub fn bucket(mut self, bucket: BucketName) -> Self {
        self.bucket = Some(bucket);
        self
    }

    /// The object key.
    pub fn key(mut self, key: ObjectKey) -> Self {
        self.key = Some(key);
        self
    }

    /// A query parameter (`None`: `?name`, a sub-resource such as `?versioning`).
    pub fn query(mut self, name: &str, value: Option<&str>) -> Self {
        self.extras = self.extras.query(name, value);
        self
    }

    /// A header (validated as [`RequestExtras::header`]).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.extras = self.extras.header(name, value);
        self
    }

    /// `x-amz-request-payer: requester`.
    pub fn request_payer(mut self, enabled: bool) -> Self {
        self.extras = self.extras.request_payer(enabled);
        self
    }

    /// The body (signed by its SHA-256, or sent `UNSIGNED-PAYLOAD` over TLS when large).
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// Sends the body's `Content-MD5` (what S3 requires on many configuration requests).
    pub fn content_md5(mut self) -> Self {
        self.content_md5 = true;
        self
    }

    /// Sends the body's checksum in `x-amz-checksum-<algorithm>` (with
    /// `x-amz-sdk-checksum-algorithm`, as the AWS SDKs do).
    pub fn checksum_algorithm(mut self, algorithm: ChecksumAlgorithm) -> Self {
        self.checksum = Some(algorithm);
        self
    }

    /// Whether sending the request twice has the effect of sending it once, which allows
    /// retrying it after a dropped connection (default: no).
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// A bucket-level (control plane) operation: a directory bucket's goes to its region's
    /// S3 Express control endpoint, and Transfer Acceleration does not apply.
    pub fn control_plane(mut self, enabled: bool) -> Self {
        self.control_plane = enabled;
        self
    }

    /// The most response-body bytes to accept (default 16 MiB).
    pub fn response_limit(mut self, bytes: usize) -> Self {
        self.response_limit = bytes;
        self
    }
}

impl Operation for RawRequest {
    /// The response of a successful (2xx) request, as it came.
    type Output = Response<Bytes>;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let mut builder = RequestBuilder::new(endpoint, self.method.clone());
        if let Some(bucket) = &self.bucket {
            builder = builder.bucket(bucket);
        }
        if let Some(key) = &self.key {
            builder = builder.key(key);
        }
        if self.control_plane {
            builder = builder.control_plane();
        }
        if self.content_md5 {
            builder = builder.header("content-md5", ContentMd5::of(&self.body));
        }
        if let Some(algorithm) = self.checksum {
            builder = builder
                .header("x-amz-sdk-checksum-algorithm", algorithm)
                .checksum_header(Some(&algorithm.checksum(&self.body)));
        }
        let body = if self.body.is_empty() {
            Body::Empty
        } else {
            Body::Bytes(self.body.clone())
        };
        let mut request = builder.body(body).build()?;
        self.extras.apply(&mut request)?;
        Ok(request)
    }

    fn response(&self, response: Response<Bytes>) -> Result<Response<Bytes>, Error> {
        decode(response, |parts, body| {
            let mut raw = Response::new(body);
            *raw.status_mut() = parts.status;
            *raw.headers_mut() = parts.headers.clone();
            Ok(raw)
        })
    }

    fn is_idempotent(&self) -> bool {
        self.idempotent
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn response_body_limit(&self) -> usize {
        self.response_limit
    }
}

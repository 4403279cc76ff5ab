//! The signer: header signing, presigning and the shared signing core.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, HOST};
use http::{HeaderMap, HeaderName, HeaderValue};

use crate::canonical::{canonical_headers_into, canonical_query_into, canonical_uri_into};
use crate::chunked::{ChunkEncoder, ChunkedLayout};
use crate::credentials::Credentials;
use crate::encoding::{hex32, push_hex, uri_encode_into};
use crate::error::{Error, InvalidExpiry, InvalidHeader, InvalidParameter, InvalidUri};
use crate::key::{KeyCache, ScopeKey};
use crate::params::{SessionTokenPlacement, SigningAlgorithm, SigningParams};
use crate::request::{SignableRequest, host_from_authority};
use crate::sha256::{HmacKey, sha256};
use crate::time::SigningTime;

const X_AMZ_DATE: HeaderName = HeaderName::from_static("x-amz-date");
const X_AMZ_CONTENT_SHA256: HeaderName = HeaderName::from_static("x-amz-content-sha256");
const X_AMZ_SECURITY_TOKEN: HeaderName = HeaderName::from_static("x-amz-security-token");
#[cfg(feature = "sigv4a")]
const X_AMZ_REGION_SET: HeaderName = HeaderName::from_static("x-amz-region-set");

/// The longest expiry S3 accepts for a presigned URL: 7 days.
pub const MAX_PRESIGN_EXPIRY: Duration = Duration::from_secs(7 * 24 * 3600);

/// The longest signature: a DER-encoded ECDSA P-256 signature (SigV4a).
const MAX_SIGNATURE_LEN: usize = 72;

/// A signature: 32 bytes of HMAC-SHA256 (SigV4), or a DER-encoded ECDSA
/// P-256 signature of up to 72 bytes (SigV4a). Shown as lowercase hex on the wire.
///
/// `Debug` redacts it: a signature in a presigned URL is a bearer credential.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Signature {
    bytes: [u8; MAX_SIGNATURE_LEN],
    len: u8,
}

impl Signature {
    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// The lowercase hex form used in headers, URLs and chunks.
    pub fn to_hex(&self) -> String {
        let mut hex = Vec::with_capacity(self.hex_len());
        self.write_hex(&mut hex);
        String::from_utf8_lossy(&hex).into_owned()
    }

    /// Length of the hex form.
    pub(crate) fn hex_len(&self) -> usize {
        2 * usize::from(self.len)
    }

    /// Appends the lowercase hex form.
    pub(crate) fn write_hex(&self, out: &mut Vec<u8>) {
        push_hex(self.as_bytes(), out);
    }

    pub(crate) fn from_hmac(mac: [u8; 32]) -> Self {
        let mut bytes = [0u8; MAX_SIGNATURE_LEN];
        bytes[..32].copy_from_slice(&mac);
        Self { bytes, len: 32 }
    }

    #[cfg(feature = "sigv4a")]
    pub(crate) fn from_der(der: &[u8]) -> Self {
        let mut bytes = [0u8; MAX_SIGNATURE_LEN];
        // A DER P-256 signature is at most 72 bytes.
        let len = der.len().min(MAX_SIGNATURE_LEN);
        bytes[..len].copy_from_slice(&der[..len]);
        Self {
            bytes,
            len: len as u8,
        }
    }
}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Signature(<redacted>)")
    }
}

/// Signs requests. One signer is meant to be shared by a whole client: its
/// methods take `&self`, it is `Send + Sync`, and it caches derived signing
/// keys so the four-HMAC derivation runs once per scope and day.
///
/// ```
/// use s3_sigv4::{Credentials, PayloadHash, Signer, SigningParams, SigningTime};
///
/// let signer = Signer::new();
/// let credentials = Credentials::new("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", None);
/// let time = SigningTime::from_parts(2013, 5, 24, 0, 0, 0)?;
/// let mut request = http::Request::get("https://examplebucket.s3.amazonaws.com/test.txt")
///     .header("range", "bytes=0-9")
///     .body(())?;
/// let params = SigningParams::new("us-east-1", "s3", time, PayloadHash::Empty);
/// let signature = signer.sign_headers(&mut request, &credentials, &params)?;
/// assert_eq!(signature.to_hex(), "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
/// assert!(request.headers()["authorization"].to_str()?.starts_with("AWS4-HMAC-SHA256 Credential="));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Default)]
pub struct Signer {
    keys: KeyCache,
    #[cfg(feature = "sigv4a")]
    v4a_keys: crate::v4a::KeyCache,
}

impl fmt::Debug for Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signer").finish_non_exhaustive()
    }
}

/// The intermediate strings of one signature, to compare with what a server
/// reports in a `SignatureDoesNotMatch` error. `Debug` redacts the session token
/// and SSE-C keys (signed headers of the canonical request) and the signature.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningReport {
    /// The canonical request.
    pub canonical_request: String,
    /// The string to sign.
    pub string_to_sign: String,
    /// The signature.
    pub signature: Signature,
    /// The `Authorization` header value (empty for presigned requests).
    pub authorization: String,
}

impl fmt::Debug for SigningReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted: String = self
            .canonical_request
            .lines()
            .map(|line| {
                // Secret header values, as the canonical request lists them (`name:value`).
                const SECRET_HEADERS: [&str; 4] = [
                    "x-amz-security-token:",
                    "x-amz-server-side-encryption-customer-key:",
                    "x-amz-copy-source-server-side-encryption-customer-key:",
                    "x-amz-server-side-encryption-context:",
                ];
                if let Some(name) = SECRET_HEADERS.iter().find(|name| line.starts_with(**name)) {
                    return format!("{name}<redacted>");
                }
                // A presigned request's canonical query carries the token.
                const TOKEN_PARAMETER: &str = "X-Amz-Security-Token=";
                match line.split_once(TOKEN_PARAMETER) {
                    Some((before, after)) => {
                        let rest = after.find('&').map_or("", |end| &after[end..]);
                        format!("{before}{TOKEN_PARAMETER}<redacted>{rest}")
                    }
                    None => line.to_owned(),
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        f.debug_struct("SigningReport")
            .field("canonical_request", &redacted)
            .field("string_to_sign", &self.string_to_sign)
            .field("signature", &self.signature)
            .finish_non_exhaustive()
    }
}

/// A presigned request: the URL plus the headers that were signed besides
/// `host` and therefore must be sent with it. `Debug` redacts the signature,
/// credential and session token in the URL.
#[derive(Clone)]
pub struct PresignedRequest {
    method: http::Method,
    url: String,
    headers: HeaderMap,
    signature: Signature,
}

impl PresignedRequest {
    /// The method the URL is valid for.
    pub fn method(&self) -> &http::Method {
        &self.method
    }
    /// The full URL (`scheme://authority/path?query`, or `/path?query` when the
    /// request carried no authority).
    pub fn url(&self) -> &str {
        &self.url
    }
    /// The URL as an `http::Uri`.
    pub fn uri(&self) -> Result<http::Uri, Error> {
        self.url
            .parse()
            .map_err(|e: http::uri::InvalidUri| InvalidUri::Unrepresentable(e.to_string()).into())
    }
    /// Signed headers (other than `host`) the client must send unchanged.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }
    /// The signature in the URL.
    pub fn signature(&self) -> Signature {
        self.signature
    }
    /// Splits into method, URL and headers.
    pub fn into_parts(self) -> (http::Method, String, HeaderMap) {
        (self.method, self.url, self.headers)
    }
}

impl fmt::Debug for PresignedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (base, query) = self.url.split_once('?').unwrap_or((&self.url, ""));
        let query: Vec<&str> = query
            .split('&')
            .map(|pair| {
                let name = pair.split('=').next().unwrap_or("");
                match name {
                    "X-Amz-Signature" => "X-Amz-Signature=<redacted>",
                    "X-Amz-Security-Token" => "X-Amz-Security-Token=<redacted>",
                    "X-Amz-Credential" => "X-Amz-Credential=<redacted>",
                    _ => pair,
                }
            })
            .collect();
        f.debug_struct("PresignedRequest")
            .field("method", &self.method)
            .field("url", &format_args!("{base}?{}", query.join("&")))
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

/// Where the signing core writes and what it returns.
struct Computed {
    signature: Signature,
    /// Range of the signed header names inside the buffer.
    signed_headers: std::ops::Range<usize>,
    /// Range of the canonical request inside the buffer.
    canonical_request: std::ops::Range<usize>,
    /// Range of the string to sign inside the buffer.
    string_to_sign: std::ops::Range<usize>,
}

impl Signer {
    /// A signer with an empty key cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Signs `request` in its headers: sets `x-amz-date`, `x-amz-content-sha256`
    /// (S3 rules), `x-amz-security-token` (temporary credentials) and
    /// `authorization`, replacing earlier values. Returns the signature, which
    /// is the seed signature of an aws-chunked body.
    pub fn sign_headers<R: SignableRequest + ?Sized>(
        &self,
        request: &mut R,
        credentials: &Credentials,
        params: &SigningParams<'_>,
    ) -> Result<Signature, Error> {
        with_scratch(|buf| {
            self.sign_headers_into(request, credentials, params, buf)
                .map(|computed| computed.signature)
        })
    }

    /// Like [`Signer::sign_headers`], and also returns the canonical request
    /// and string to sign.
    pub fn sign_headers_with_report<R: SignableRequest + ?Sized>(
        &self,
        request: &mut R,
        credentials: &Credentials,
        params: &SigningParams<'_>,
    ) -> Result<SigningReport, Error> {
        let mut buf = Vec::with_capacity(512);
        let computed = self.sign_headers_into(request, credentials, params, &mut buf)?;
        let authorization = request
            .headers()
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        Ok(report(&buf, &computed, authorization))
    }

    fn sign_headers_into<R: SignableRequest + ?Sized>(
        &self,
        request: &mut R,
        credentials: &Credentials,
        params: &SigningParams<'_>,
        buf: &mut Vec<u8>,
    ) -> Result<Computed, Error> {
        credentials.validate()?;
        params.validate()?;
        checked_method(request.method())?;
        let settings = params.settings();
        let time = params.time();
        let mut payload_buf = [0u8; 64];
        let payload = params.payload().write_value(&mut payload_buf);

        let headers = request.headers_mut();
        // Room for date, content hash, token and authorization in one growth.
        headers.reserve(4);
        // `authorization` itself is never signed; the insert below replaces it.
        headers.insert(
            X_AMZ_DATE,
            header_value(&X_AMZ_DATE, time.amz_date_bytes())?,
        );
        if settings.adds_content_sha256() {
            let value = match params.payload().constant_header_value() {
                Some(constant) => constant,
                None => header_value(&X_AMZ_CONTENT_SHA256, payload)?,
            };
            headers.insert(X_AMZ_CONTENT_SHA256, value);
        }
        match (credentials.token_header(), settings.token_placement()) {
            (Some(token), SessionTokenPlacement::Signed) => {
                headers.insert(X_AMZ_SECURITY_TOKEN, token.clone());
            }
            (_, SessionTokenPlacement::AppendedAfterSigning) => {
                headers.remove(X_AMZ_SECURITY_TOKEN);
            }
            (None, SessionTokenPlacement::Signed) => {}
        }
        #[cfg(feature = "sigv4a")]
        if params.algorithm() == crate::params::SigningAlgorithm::V4a {
            headers.insert(
                X_AMZ_REGION_SET,
                header_value(&X_AMZ_REGION_SET, params.region().as_bytes())?,
            );
        }

        let computed = self.compute(&*request, None, credentials, params, payload, buf)?;

        // Exact capacity: `Bytes::from(Vec)` then takes the buffer as is.
        let algorithm = params.algorithm().name();
        let mut authorization = Vec::with_capacity(
            algorithm.len()
                + " Credential=/".len()
                + credentials.access_key_id().len()
                + params.scope_len()
                + ", SignedHeaders=".len()
                + computed.signed_headers.len()
                + ", Signature=".len()
                + computed.signature.hex_len(),
        );
        authorization.extend_from_slice(algorithm.as_bytes());
        authorization.extend_from_slice(b" Credential=");
        authorization.extend_from_slice(credentials.access_key_id().as_bytes());
        authorization.push(b'/');
        params.write_scope(&mut authorization);
        authorization.extend_from_slice(b", SignedHeaders=");
        authorization.extend_from_slice(&buf[computed.signed_headers.clone()]);
        authorization.extend_from_slice(b", Signature=");
        computed.signature.write_hex(&mut authorization);
        let mut authorization = HeaderValue::from_maybe_shared(Bytes::from(authorization))
            .map_err(|_| InvalidParameter::AccessKeyId)?;
        // A signature is a credential for the request it signs: hidden by `http`'s `Debug`,
        // never indexed by HTTP/2 (HPACK).
        authorization.set_sensitive(true);
        let headers = request.headers_mut();
        headers.insert(AUTHORIZATION, authorization);
        if let (Some(token), SessionTokenPlacement::AppendedAfterSigning) =
            (credentials.token_header(), settings.token_placement())
        {
            headers.insert(X_AMZ_SECURITY_TOKEN, token.clone());
        }
        Ok(computed)
    }

    /// Presigns `request` (query signing) for `expires_in`, which must be
    /// between 1 second and 7 days. The payload of `params` must not be a
    /// streaming mode; S3 expects [`PayloadHash::Unsigned`](crate::PayloadHash::Unsigned) unless the client
    /// sends a matching `x-amz-content-sha256` header. Headers present on
    /// `request` are signed by the usual selection and returned in
    /// [`PresignedRequest::headers`]. The request itself is not modified.
    pub fn presign<R: SignableRequest + ?Sized>(
        &self,
        request: &R,
        credentials: &Credentials,
        params: &SigningParams<'_>,
        expires_in: Duration,
    ) -> Result<PresignedRequest, Error> {
        with_scratch(|buf| {
            self.presign_into(request, credentials, params, expires_in, buf)
                .map(|(presigned, _)| presigned)
        })
    }

    /// Like [`Signer::presign`], and also returns the canonical request and
    /// string to sign.
    pub fn presign_with_report<R: SignableRequest + ?Sized>(
        &self,
        request: &R,
        credentials: &Credentials,
        params: &SigningParams<'_>,
        expires_in: Duration,
    ) -> Result<(PresignedRequest, SigningReport), Error> {
        let mut buf = Vec::with_capacity(1024);
        let (presigned, computed) =
            self.presign_into(request, credentials, params, expires_in, &mut buf)?;
        let report = report(&buf, &computed, String::new());
        Ok((presigned, report))
    }

    fn presign_into<R: SignableRequest + ?Sized>(
        &self,
        request: &R,
        credentials: &Credentials,
        params: &SigningParams<'_>,
        expires_in: Duration,
        buf: &mut Vec<u8>,
    ) -> Result<(PresignedRequest, Computed), Error> {
        credentials.validate()?;
        params.validate()?;
        if expires_in < Duration::from_secs(1) || expires_in > MAX_PRESIGN_EXPIRY {
            return Err(Error::InvalidExpiry(InvalidExpiry {
                requested: expires_in,
            }));
        }
        if params.payload().is_streaming() {
            return Err(InvalidParameter::Payload(
                "a presigned URL cannot use an aws-chunked streaming payload",
            )
            .into());
        }
        let method = checked_method(request.method())?;
        let time = params.time();
        let settings = params.settings();

        // The signed header names go into the query, so canonicalize the
        // headers first, at the start of the scratch buffer.
        let host = signing_host(request)?;
        let header_block_start = buf.len();
        let signed = canonical_headers_into(
            request.headers(),
            host.as_deref(),
            settings.header_selection(),
            buf,
        );
        let header_block = header_block_start..buf.len();

        // The URL is built in place; its query part is what gets canonicalized.
        let path = request.path();
        let mut url = Vec::with_capacity(path.len() + 512);
        if let (Some(scheme), Some(authority)) = (request.scheme(), request.authority()) {
            url.extend_from_slice(scheme.as_bytes());
            url.extend_from_slice(b"://");
            url.extend_from_slice(authority.as_bytes());
        }
        url.extend_from_slice(if path.is_empty() {
            b"/"
        } else {
            path.as_bytes()
        });
        url.push(b'?');
        let query_start = url.len();
        if let Some(existing) = request.query().filter(|q| !q.is_empty()) {
            url.extend_from_slice(existing.as_bytes());
            url.push(b'&');
        }
        url.extend_from_slice(b"X-Amz-Algorithm=");
        url.extend_from_slice(params.algorithm().name().as_bytes());
        url.extend_from_slice(b"&X-Amz-Credential=");
        uri_encode_into(credentials.access_key_id().as_bytes(), true, &mut url);
        url.extend_from_slice(b"%2F");
        let mut scope = Vec::with_capacity(64);
        params.write_scope(&mut scope);
        uri_encode_into(&scope, true, &mut url);
        url.extend_from_slice(b"&X-Amz-Date=");
        url.extend_from_slice(time.amz_date_bytes());
        url.extend_from_slice(b"&X-Amz-Expires=");
        push_decimal(&mut url, expires_in.as_secs());
        if !params.algorithm().scopes_region() {
            url.extend_from_slice(b"&X-Amz-Region-Set=");
            uri_encode_into(params.region().as_bytes(), true, &mut url);
        }
        let token = credentials.session_token();
        let token_signed = settings.token_placement() == SessionTokenPlacement::Signed;
        if let (Some(token), true) = (token, token_signed) {
            url.extend_from_slice(b"&X-Amz-Security-Token=");
            uri_encode_into(token.as_bytes(), true, &mut url);
        }
        url.extend_from_slice(b"&X-Amz-SignedHeaders=");
        uri_encode_into(&buf[signed.clone()], true, &mut url);
        let query = std::str::from_utf8(&url[query_start..])
            .map_err(|_| InvalidUri::Unrepresentable("query is not UTF-8".into()))?;

        let mut payload_buf = [0u8; 64];
        let payload = params.payload().write_value(&mut payload_buf);
        let computed = self.compute(
            request,
            Some(PrecomputedParts {
                query,
                header_block,
                signed,
            }),
            credentials,
            params,
            payload,
            buf,
        )?;

        if let (Some(token), false) = (token, token_signed) {
            url.extend_from_slice(b"&X-Amz-Security-Token=");
            uri_encode_into(token.as_bytes(), true, &mut url);
        }
        url.extend_from_slice(b"&X-Amz-Signature=");
        computed.signature.write_hex(&mut url);
        let url = String::from_utf8(url)
            .map_err(|_| InvalidUri::Unrepresentable("URL is not UTF-8".into()))?;

        let mut headers = HeaderMap::new();
        let selection = settings.header_selection();
        for (name, value) in request.headers() {
            if name != HOST && selection.signs(name.as_str(), value.as_bytes()) {
                headers.append(name.clone(), value.clone());
            }
        }
        let presigned = PresignedRequest {
            method,
            url,
            headers,
            signature: computed.signature,
        };
        Ok((presigned, computed))
    }

    /// Prepares and signs an aws-chunked upload in one step: applies the
    /// layout's headers ([`ChunkedLayout::apply_headers`]), signs the headers
    /// with the layout's streaming payload value (overriding the payload of
    /// `params`) and returns the encoder for the body, seeded with the signature.
    pub fn sign_streaming<R: SignableRequest + ?Sized>(
        &self,
        request: &mut R,
        credentials: &Credentials,
        params: &SigningParams<'_>,
        layout: ChunkedLayout,
    ) -> Result<ChunkEncoder, Error> {
        let params = params.with_payload(layout.mode().payload_hash());
        let layout = layout.with_algorithm(params.algorithm());
        layout.apply_headers(request.headers_mut());
        let seed = self.sign_headers(request, credentials, &params)?;
        self.chunk_encoder(credentials, &params, seed, layout)
    }

    /// An encoder for a request already signed with [`Signer::sign_headers`]
    /// (whose returned signature is `seed`). `params` must be the ones used to
    /// sign the headers; their payload must be the layout's streaming mode.
    pub fn chunk_encoder(
        &self,
        credentials: &Credentials,
        params: &SigningParams<'_>,
        seed: Signature,
        layout: ChunkedLayout,
    ) -> Result<ChunkEncoder, Error> {
        credentials.validate()?;
        params.validate()?;
        ChunkEncoder::new(layout, self.scope_key(credentials, params)?, params, seed)
    }

    /// What signs for these credentials and params (cached).
    pub(crate) fn scope_key(
        &self,
        credentials: &Credentials,
        params: &SigningParams<'_>,
    ) -> Result<ScopeKey, Error> {
        Ok(match params.algorithm() {
            SigningAlgorithm::V4 => ScopeKey::Hmac(self.signing_key(credentials, params)),
            #[cfg(feature = "sigv4a")]
            SigningAlgorithm::V4a => ScopeKey::Ecdsa(
                self.v4a_keys
                    .key(credentials.access_key_id(), credentials.secret_access_key())?,
            ),
        })
    }

    /// The HMAC key of a SigV4 scope (cached).
    pub(crate) fn signing_key(
        &self,
        credentials: &Credentials,
        params: &SigningParams<'_>,
    ) -> HmacKey {
        self.keys.signing_key(
            credentials.secret_access_key(),
            params.time().date_bytes(),
            params.region(),
            params.service(),
        )
    }

    /// Builds the canonical request and string to sign into `buf` and signs.
    fn compute<R: SignableRequest + ?Sized>(
        &self,
        request: &R,
        presign: Option<PrecomputedParts<'_>>,
        credentials: &Credentials,
        params: &SigningParams<'_>,
        payload: &[u8],
        buf: &mut Vec<u8>,
    ) -> Result<Computed, Error> {
        let settings = params.settings();
        let creq_start = buf.len();
        buf.extend_from_slice(request.method().as_bytes());
        buf.push(b'\n');
        canonical_uri_into(request.path(), settings.get_uri_rules(), buf)?;
        buf.push(b'\n');
        let signed_headers = match presign {
            Some(parts) => {
                canonical_query_into(parts.query, buf)?;
                buf.push(b'\n');
                let start = buf.len();
                buf.extend_from_within(parts.header_block.clone());
                let shift = start - parts.header_block.start;
                parts.signed.start + shift..parts.signed.end + shift
            }
            None => {
                if let Some(query) = request.query() {
                    canonical_query_into(query, buf)?;
                }
                buf.push(b'\n');
                let host = signing_host(request)?;
                canonical_headers_into(
                    request.headers(),
                    host.as_deref(),
                    settings.header_selection(),
                    buf,
                )
            }
        };
        buf.push(b'\n');
        buf.extend_from_slice(payload);
        let creq_end = buf.len();
        let creq_hash = sha256(&buf[creq_start..creq_end]);

        let time = params.time();
        let sts_start = buf.len();
        buf.extend_from_slice(params.algorithm().name().as_bytes());
        buf.push(b'\n');
        buf.extend_from_slice(time.amz_date_bytes());
        buf.push(b'\n');
        params.write_scope(buf);
        buf.push(b'\n');
        buf.extend_from_slice(&hex32(&creq_hash));
        let sts_end = buf.len();

        let signature = self
            .scope_key(credentials, params)?
            .sign(&buf[sts_start..sts_end]);
        Ok(Computed {
            signature,
            signed_headers,
            canonical_request: creq_start..creq_end,
            string_to_sign: sts_start..sts_end,
        })
    }
}

/// Runs `f` with this thread's reusable scratch buffer (empty on entry), so
/// signing does not allocate a canonical-request buffer per call.
fn with_scratch<T>(f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    /// Buffers that grew beyond this are not kept.
    const KEEP_AT_MOST: usize = 16 * 1024;
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            let result = f(&mut buf);
            if buf.capacity() > KEEP_AT_MOST {
                *buf = Vec::new();
            }
            result
        }
        // Re-entered (cannot happen through this crate's own calls): use a fresh buffer.
        Err(_) => f(&mut Vec::with_capacity(512)),
    })
}

struct PrecomputedParts<'a> {
    query: &'a str,
    /// The canonical headers block, already in the scratch buffer.
    header_block: std::ops::Range<usize>,
    /// The signed header names inside the buffer.
    signed: std::ops::Range<usize>,
}

/// Appends `value` in decimal.
fn push_decimal(out: &mut Vec<u8>, value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

fn report(buf: &[u8], computed: &Computed, authorization: String) -> SigningReport {
    SigningReport {
        canonical_request: String::from_utf8_lossy(&buf[computed.canonical_request.clone()])
            .into_owned(),
        string_to_sign: String::from_utf8_lossy(&buf[computed.string_to_sign.clone()]).into_owned(),
        signature: computed.signature,
        authorization,
    }
}

/// `date/region/service/aws4_request` (SigV4 scopes outside a request: POST policies).
pub(crate) fn write_scope(out: &mut Vec<u8>, time: &SigningTime, region: &str, service: &str) {
    out.extend_from_slice(time.date_bytes());
    out.push(b'/');
    out.extend_from_slice(region.as_bytes());
    out.push(b'/');
    out.extend_from_slice(service.as_bytes());
    out.extend_from_slice(b"/aws4_request");
}

/// The host to add to the signed headers: `None` when a `host` header exists.
/// A host taken from the URI is lowercased: HTTP stacks send it lowercased
/// (host names are case-insensitive), so signing it as written would fail.
fn signing_host<R: SignableRequest + ?Sized>(
    request: &R,
) -> Result<Option<Cow<'_, [u8]>>, InvalidUri> {
    if request.headers().contains_key(HOST) {
        return Ok(None);
    }
    let authority = request.authority().ok_or(InvalidUri::MissingHost)?;
    let host = host_from_authority(request.scheme(), authority).as_bytes();
    Ok(Some(if host.iter().any(u8::is_ascii_uppercase) {
        Cow::Owned(host.to_ascii_lowercase())
    } else {
        Cow::Borrowed(host)
    }))
}

/// The method, refused unless it is an uppercase token: HTTP methods are
/// case-sensitive, and a lowercase one would be signed as is and refused by S3.
fn checked_method(method: &str) -> Result<http::Method, Error> {
    let invalid = || InvalidParameter::Method {
        method: method.to_owned(),
    };
    if method.bytes().any(|b| b.is_ascii_lowercase()) {
        return Err(invalid().into());
    }
    http::Method::from_bytes(method.as_bytes()).map_err(|_| invalid().into())
}

/// A header value built from bytes this crate generated (always ASCII).
fn header_value(name: &HeaderName, bytes: &[u8]) -> Result<HeaderValue, Error> {
    HeaderValue::from_bytes(bytes).map_err(|_| {
        InvalidHeader::ControlCharacterInValue {
            name: name.to_string(),
        }
        .into()
    })
}

//! What to sign and how: payload description, URI rules, header selection.

use http::HeaderName;
use sha2::{Digest, Sha256};

use crate::encoding::{hex32, parse_hex32};
use crate::error::{Error, InvalidParameter};
use crate::time::SigningTime;

/// The payload hash that goes into the canonical request (and, with S3 rules,
/// into `x-amz-content-sha256`).
#[derive(Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PayloadHash {
    /// The SHA-256 of the complete body.
    Sha256([u8; 32]),
    /// `UNSIGNED-PAYLOAD`: the body is not covered (use over TLS, optionally
    /// with a trailing checksum).
    Unsigned,
    /// An empty body (the SHA-256 of zero bytes).
    Empty,
    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`: aws-chunked with chained chunk signatures.
    StreamingSigned,
    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`: signed chunks plus a signed trailer.
    StreamingSignedTrailer,
    /// `STREAMING-UNSIGNED-PAYLOAD-TRAILER`: unsigned chunks plus an unsigned trailer.
    StreamingUnsignedTrailer,
}

/// Hex SHA-256 of the empty string.
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

impl PayloadHash {
    /// Hashes a complete in-memory body.
    pub fn of(body: impl AsRef<[u8]>) -> Self {
        Self::Sha256(Sha256::digest(body.as_ref()).into())
    }

    /// From 64 hex digits, e.g. a value computed elsewhere.
    pub fn from_hex(hex: &str) -> Result<Self, Error> {
        parse_hex32(hex)
            .map(Self::Sha256)
            .ok_or(Error::InvalidParameter(InvalidParameter::Payload(
                "payload hash must be 64 hex digits",
            )))
    }

    /// Whether this describes an aws-chunked body.
    pub fn is_streaming(&self) -> bool {
        matches!(
            self,
            Self::StreamingSigned | Self::StreamingSignedTrailer | Self::StreamingUnsignedTrailer
        )
    }

    /// The fixed value of every variant but [`PayloadHash::Sha256`].
    fn constant(&self) -> Option<&'static str> {
        Some(match self {
            Self::Sha256(_) => return None,
            Self::Unsigned => "UNSIGNED-PAYLOAD",
            Self::Empty => EMPTY_SHA256,
            Self::StreamingSigned => "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
            Self::StreamingSignedTrailer => "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
            Self::StreamingUnsignedTrailer => "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        })
    }

    /// Writes the value used on the last line of the canonical request and in
    /// `x-amz-content-sha256` into `buf`, returning the written prefix.
    pub(crate) fn write_value<'a>(&self, buf: &'a mut [u8; 64]) -> &'a [u8] {
        match (self, self.constant()) {
            (_, Some(text)) => {
                buf[..text.len()].copy_from_slice(text.as_bytes());
                &buf[..text.len()]
            }
            (Self::Sha256(digest), None) => {
                *buf = hex32(digest);
                &buf[..]
            }
            (_, None) => &buf[..0],
        }
    }

    /// The `x-amz-content-sha256` header value when it is a constant (built
    /// at compile time: no allocation, no validation); `None` for
    /// [`PayloadHash::Sha256`].
    pub(crate) fn constant_header_value(&self) -> Option<http::HeaderValue> {
        use http::HeaderValue;
        const UNSIGNED: HeaderValue = HeaderValue::from_static("UNSIGNED-PAYLOAD");
        const EMPTY: HeaderValue = HeaderValue::from_static(EMPTY_SHA256);
        const STREAMING: HeaderValue =
            HeaderValue::from_static("STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
        const STREAMING_TRAILER: HeaderValue =
            HeaderValue::from_static("STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER");
        const UNSIGNED_TRAILER: HeaderValue =
            HeaderValue::from_static("STREAMING-UNSIGNED-PAYLOAD-TRAILER");
        Some(match self {
            Self::Sha256(_) => return None,
            Self::Unsigned => UNSIGNED,
            Self::Empty => EMPTY,
            Self::StreamingSigned => STREAMING,
            Self::StreamingSignedTrailer => STREAMING_TRAILER,
            Self::StreamingUnsignedTrailer => UNSIGNED_TRAILER,
        })
    }

    /// The value as a `String`.
    pub fn to_value_string(&self) -> String {
        let mut buf = [0u8; 64];
        String::from_utf8_lossy(self.write_value(&mut buf)).into_owned()
    }
}

impl std::fmt::Debug for PayloadHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PayloadHash({})", self.to_value_string())
    }
}

/// How the canonical URI is derived from the request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum UriRules {
    /// Amazon S3: no path normalization (`//`, `.` and `..` are kept) and a
    /// single encoding. The path is taken as sent: existing `%XX` escapes are
    /// kept (uppercased; escapes of unreserved bytes decoded) and every other
    /// byte outside `A-Z a-z 0-9 - _ . ~ /` is encoded.
    #[default]
    S3,
    /// Every other AWS service: `.`/`..` segments resolved, repeated slashes
    /// collapsed, then the path is encoded again (a `%` becomes `%25`).
    Generic,
}

/// Where the session token of temporary credentials goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SessionTokenPlacement {
    /// `x-amz-security-token` is added before signing and is signed (S3).
    #[default]
    Signed,
    /// `x-amz-security-token` is added after the signature is computed
    /// (a few services require this).
    AppendedAfterSigning,
}

/// Which request headers are signed.
///
/// `host`, `content-md5`, `content-type` and every `x-amz-*` header are always
/// signed when present: S3 requires it. Everything else is signed unless it is
/// excluded. Excluded by default: headers proxies and HTTP stacks rewrite
/// (`user-agent`, `accept-encoding`, `connection`, `expect`, `transfer-encoding`,
/// `te`, `upgrade`, `keep-alive`, `proxy-*`, `x-amzn-trace-id`,
/// `authorization`) and a `content-length` of `0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderSelection {
    only_required: bool,
    sign_zero_content_length: bool,
    sign_accept_encoding: bool,
    excluded: Vec<HeaderName>,
}

impl Default for HeaderSelection {
    fn default() -> Self {
        Self::new()
    }
}

impl HeaderSelection {
    /// The default selection described on the type.
    pub const fn new() -> Self {
        Self {
            only_required: false,
            sign_zero_content_length: false,
            sign_accept_encoding: false,
            excluded: Vec::new(),
        }
    }

    /// Sign only the headers S3 requires (`host`, `content-md5`,
    /// `content-type`, `x-amz-*`).
    pub fn only_required(mut self, only_required: bool) -> Self {
        self.only_required = only_required;
        self
    }

    /// Also sign `content-length: 0` (off by default: some stores drop it).
    pub fn sign_zero_content_length(mut self, sign: bool) -> Self {
        self.sign_zero_content_length = sign;
        self
    }

    /// Sign `accept-encoding` (off by default: some stores and proxies rewrite it).
    pub fn sign_accept_encoding(mut self, sign: bool) -> Self {
        self.sign_accept_encoding = sign;
        self
    }

    /// Never sign `name` (unless S3 requires it, see the type docs).
    pub fn exclude(mut self, name: HeaderName) -> Self {
        if !self.excluded.contains(&name) {
            self.excluded.push(name);
        }
        self
    }

    /// Whether a header with this (lowercase) name and value is signed.
    #[inline]
    pub(crate) fn signs(&self, name: &str, value: &[u8]) -> bool {
        let bytes = name.as_bytes();
        if bytes.starts_with(b"x-amz-") {
            return true;
        }
        match name {
            "host" | "content-md5" | "content-type" => return true,
            "authorization"
            | "user-agent"
            | "connection"
            | "expect"
            | "transfer-encoding"
            | "te"
            | "upgrade"
            | "keep-alive"
            | "proxy-authorization"
            | "proxy-connection"
            | "x-amzn-trace-id" => return false,
            _ => {}
        }
        if self.only_required {
            return false;
        }
        if name == "accept-encoding" && !self.sign_accept_encoding {
            return false;
        }
        if name == "content-length" && value == b"0" && !self.sign_zero_content_length {
            return false;
        }
        !self
            .excluded
            .iter()
            .any(|excluded| excluded.as_str() == name)
    }
}

/// Signing rules that usually stay the same for every request to one endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningSettings {
    uri_rules: UriRules,
    headers: HeaderSelection,
    content_sha256_header: bool,
    session_token: SessionTokenPlacement,
}

static DEFAULT_S3_SETTINGS: SigningSettings = SigningSettings::s3();

impl Default for SigningSettings {
    fn default() -> Self {
        Self::s3()
    }
}

impl SigningSettings {
    /// Amazon S3 rules: [`UriRules::S3`], `x-amz-content-sha256` added, session
    /// token signed, default [`HeaderSelection`].
    pub const fn s3() -> Self {
        Self {
            uri_rules: UriRules::S3,
            headers: HeaderSelection::new(),
            content_sha256_header: true,
            session_token: SessionTokenPlacement::Signed,
        }
    }

    /// Generic AWS service rules: [`UriRules::Generic`], no
    /// `x-amz-content-sha256` header, session token signed.
    pub const fn generic() -> Self {
        Self {
            uri_rules: UriRules::Generic,
            headers: HeaderSelection::new(),
            content_sha256_header: false,
            session_token: SessionTokenPlacement::Signed,
        }
    }

    /// Sets the URI rules.
    pub fn uri_rules(mut self, rules: UriRules) -> Self {
        self.uri_rules = rules;
        self
    }

    /// Sets which headers are signed.
    pub fn headers(mut self, selection: HeaderSelection) -> Self {
        self.headers = selection;
        self
    }

    /// Whether header signing adds `x-amz-content-sha256` (S3 requires it).
    pub fn content_sha256_header(mut self, add: bool) -> Self {
        self.content_sha256_header = add;
        self
    }

    /// Where the session token goes.
    pub fn session_token(mut self, placement: SessionTokenPlacement) -> Self {
        self.session_token = placement;
        self
    }

    pub(crate) fn get_uri_rules(&self) -> UriRules {
        self.uri_rules
    }
    pub(crate) fn header_selection(&self) -> &HeaderSelection {
        &self.headers
    }
    pub(crate) fn adds_content_sha256(&self) -> bool {
        self.content_sha256_header
    }
    pub(crate) fn token_placement(&self) -> SessionTokenPlacement {
        self.session_token
    }
}

/// Per-request signing inputs: the credential scope (region, service, time),
/// the payload description and the rules.
///
/// ```
/// use s3_sigv4::{PayloadHash, SigningParams, SigningTime};
/// let time = SigningTime::from_unix(1_369_353_600).unwrap();
/// let params = SigningParams::new("us-east-1", "s3", time, PayloadHash::Empty);
/// assert_eq!(params.region(), "us-east-1");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SigningParams<'a> {
    region: &'a str,
    service: &'a str,
    time: SigningTime,
    payload: PayloadHash,
    settings: &'a SigningSettings,
}

impl<'a> SigningParams<'a> {
    /// Params with the default [`SigningSettings::s3`] rules.
    pub fn new(region: &'a str, service: &'a str, time: SigningTime, payload: PayloadHash) -> Self {
        Self {
            region,
            service,
            time,
            payload,
            settings: &DEFAULT_S3_SETTINGS,
        }
    }

    /// Uses other rules.
    pub fn with_settings(mut self, settings: &'a SigningSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Replaces the payload description.
    pub fn with_payload(mut self, payload: PayloadHash) -> Self {
        self.payload = payload;
        self
    }

    /// Replaces the signing time.
    pub fn with_time(mut self, time: SigningTime) -> Self {
        self.time = time;
        self
    }

    /// The region of the credential scope.
    pub fn region(&self) -> &'a str {
        self.region
    }
    /// The service of the credential scope (`s3` for S3).
    pub fn service(&self) -> &'a str {
        self.service
    }
    /// The signing time.
    pub fn time(&self) -> SigningTime {
        self.time
    }
    /// The payload description.
    pub fn payload(&self) -> PayloadHash {
        self.payload
    }
    /// The rules.
    pub fn settings(&self) -> &'a SigningSettings {
        self.settings
    }

    pub(crate) fn validate(&self) -> Result<(), InvalidParameter> {
        fn scope_part_ok(part: &str) -> bool {
            !part.is_empty() && part.bytes().all(|b| b.is_ascii_graphic() && b != b'/')
        }
        if !scope_part_ok(self.region) {
            return Err(InvalidParameter::Region);
        }
        if !scope_part_ok(self.service) {
            return Err(InvalidParameter::Service);
        }
        Ok(())
    }
}

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

/// How the canonical URI is derived from the request path: two independent
/// choices, as the SigV4 specification has them.
///
/// - **Normalization**: resolve `.` and `..` segments and collapse repeated
///   slashes before signing. S3 keeps the path as sent (`a//b` and `a/./b` are
///   distinct keys); most other services normalize.
/// - **Double encoding**: encode the path again as it is sent, so an existing
///   `%` becomes `%25`. S3 signs the path with a single encoding: existing
///   `%XX` escapes are kept (uppercased; escapes of unreserved bytes decoded)
///   and every other byte outside `A-Z a-z 0-9 - _ . ~ /` is encoded.
///
/// ```
/// use s3_sigv4::UriRules;
/// assert_eq!(UriRules::S3, UriRules::new(false, false));
/// assert_eq!(UriRules::GENERIC, UriRules::new(true, true));
/// // Kept as sent, but every byte encoded once more (the aws-c-auth
/// // "unnormalized" test cases).
/// let raw = UriRules::GENERIC.with_normalization(false);
/// assert!(raw.double_encodes() && !raw.normalizes());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UriRules {
    normalize: bool,
    double_encode: bool,
}

impl Default for UriRules {
    fn default() -> Self {
        Self::S3
    }
}

impl UriRules {
    /// Amazon S3: no normalization, single encoding.
    pub const S3: Self = Self::new(false, false);
    /// Every other AWS service: normalization and double encoding.
    pub const GENERIC: Self = Self::new(true, true);

    /// Rules from their two choices.
    pub const fn new(normalize: bool, double_encode: bool) -> Self {
        Self {
            normalize,
            double_encode,
        }
    }

    /// The same rules with normalization on or off.
    pub const fn with_normalization(mut self, normalize: bool) -> Self {
        self.normalize = normalize;
        self
    }

    /// The same rules with double encoding on or off.
    pub const fn with_double_encoding(mut self, double_encode: bool) -> Self {
        self.double_encode = double_encode;
        self
    }

    /// Whether `.`/`..` segments are resolved and repeated slashes collapsed.
    pub const fn normalizes(&self) -> bool {
        self.normalize
    }

    /// Whether the path is encoded again (`%` becomes `%25`).
    pub const fn double_encodes(&self) -> bool {
        self.double_encode
    }
}

/// Which signature a request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// SigV4, `AWS4-HMAC-SHA256`: valid in the one region of its scope.
    #[default]
    V4,
    /// SigV4a, `AWS4-ECDSA-P256-SHA256` (feature `sigv4a`): an ECDSA P-256
    /// signature valid in every region of a region set (`*`, or a
    /// comma-separated list such as `us-east-1,eu-west-1`), which the scope
    /// leaves out and `X-Amz-Region-Set` carries. Multi-Region Access Points
    /// require it.
    #[cfg(feature = "sigv4a")]
    V4a,
}

impl SigningAlgorithm {
    /// The algorithm name of the `Authorization` header and `X-Amz-Algorithm`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::V4 => "AWS4-HMAC-SHA256",
            #[cfg(feature = "sigv4a")]
            Self::V4a => "AWS4-ECDSA-P256-SHA256",
        }
    }

    /// The algorithm line of an aws-chunked chunk's string to sign.
    pub(crate) const fn chunk_name(self) -> &'static [u8] {
        match self {
            Self::V4 => b"AWS4-HMAC-SHA256-PAYLOAD",
            #[cfg(feature = "sigv4a")]
            Self::V4a => b"AWS4-ECDSA-P256-SHA256-PAYLOAD",
        }
    }

    /// The algorithm line of an aws-chunked trailer's string to sign.
    pub(crate) const fn trailer_name(self) -> &'static [u8] {
        match self {
            Self::V4 => b"AWS4-HMAC-SHA256-TRAILER",
            #[cfg(feature = "sigv4a")]
            Self::V4a => b"AWS4-ECDSA-P256-SHA256-TRAILER",
        }
    }

    /// Whether the scope names a region (SigV4) or the region set travels
    /// in `X-Amz-Region-Set` (SigV4a).
    pub(crate) const fn scopes_region(self) -> bool {
        match self {
            Self::V4 => true,
            #[cfg(feature = "sigv4a")]
            Self::V4a => false,
        }
    }
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

    /// Generic AWS service rules: [`UriRules::GENERIC`], no
    /// `x-amz-content-sha256` header, session token signed.
    pub const fn generic() -> Self {
        Self {
            uri_rules: UriRules::GENERIC,
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
/// the payload description, the rules and the algorithm.
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
    algorithm: SigningAlgorithm,
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
            algorithm: SigningAlgorithm::V4,
        }
    }

    /// SigV4a params (feature `sigv4a`): `region_set` is `*` or a
    /// comma-separated list of regions (each may end in `*`, as `us-*`).
    ///
    /// ```
    /// use s3_sigv4::{PayloadHash, SigningAlgorithm, SigningParams, SigningTime};
    /// let time = SigningTime::from_unix(1_369_353_600).unwrap();
    /// let params = SigningParams::v4a("*", "s3", time, PayloadHash::Empty);
    /// assert_eq!(params.algorithm(), SigningAlgorithm::V4a);
    /// assert_eq!(params.region(), "*");
    /// ```
    #[cfg(feature = "sigv4a")]
    pub fn v4a(
        region_set: &'a str,
        service: &'a str,
        time: SigningTime,
        payload: PayloadHash,
    ) -> Self {
        Self::new(region_set, service, time, payload).with_algorithm(SigningAlgorithm::V4a)
    }

    /// Uses another algorithm. With [`SigningAlgorithm::V4a`] the region is a
    /// region set.
    pub fn with_algorithm(mut self, algorithm: SigningAlgorithm) -> Self {
        self.algorithm = algorithm;
        self
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

    /// The region of the credential scope (SigV4), or the region set (SigV4a).
    pub fn region(&self) -> &'a str {
        self.region
    }
    /// The algorithm.
    pub fn algorithm(&self) -> SigningAlgorithm {
        self.algorithm
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

    /// Appends the credential scope: `date/region/service/aws4_request`, or
    /// `date/service/aws4_request` for SigV4a.
    pub(crate) fn write_scope(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.time.date_bytes());
        out.push(b'/');
        if self.algorithm.scopes_region() {
            out.extend_from_slice(self.region.as_bytes());
            out.push(b'/');
        }
        out.extend_from_slice(self.service.as_bytes());
        out.extend_from_slice(b"/aws4_request");
    }

    /// Length of what [`SigningParams::write_scope`] writes.
    pub(crate) fn scope_len(&self) -> usize {
        let region = if self.algorithm.scopes_region() {
            self.region.len() + 1
        } else {
            0
        };
        "YYYYMMDD/".len() + region + self.service.len() + "/aws4_request".len()
    }

    pub(crate) fn validate(&self) -> Result<(), InvalidParameter> {
        fn scope_part_ok(part: &str) -> bool {
            !part.is_empty() && part.bytes().all(|b| b.is_ascii_graphic() && b != b'/')
        }
        let region_ok = if self.algorithm.scopes_region() {
            scope_part_ok(self.region)
        } else {
            // A region set: `*`, or regions (optionally ending in `*`) separated by commas.
            self.region.split(',').all(|region| {
                let name = region.strip_suffix('*').unwrap_or(region);
                (!name.is_empty() || region == "*")
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            })
        };
        if !region_ok {
            return Err(InvalidParameter::Region);
        }
        if !scope_part_ok(self.service) {
            return Err(InvalidParameter::Service);
        }
        Ok(())
    }
}

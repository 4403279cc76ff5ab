//! Request parameter types shared by several operations.

use std::fmt;
use std::time::SystemTime;

use crate::checksum::ContentMd5;
use crate::encoding::base64_encode;
use crate::error::{Error, InvalidInput};

/// A byte range for `Range` / `x-amz-copy-source-range` (inclusive bounds, as HTTP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteRange {
    /// `bytes=first-last`.
    Closed {
        /// First byte offset.
        first: u64,
        /// Last byte offset (inclusive).
        last: u64,
    },
    /// `bytes=first-`: from `first` to the end.
    From(u64),
    /// `bytes=-n`: the last `n` bytes.
    Suffix(u64),
}

impl ByteRange {
    /// `first..=last`; fails if `last < first`.
    pub fn new(first: u64, last: u64) -> Result<Self, Error> {
        let range = ByteRange::Closed { first, last };
        range.validate()?;
        Ok(range)
    }

    /// The range covering `len` bytes starting at `offset`; fails if `len` is 0.
    pub fn with_len(offset: u64, len: u64) -> Result<Self, Error> {
        let last = len
            .checked_sub(1)
            .and_then(|n| offset.checked_add(n))
            .ok_or_else(|| invalid_range("length must be at least 1 and end below 2^64"))?;
        Ok(ByteRange::Closed {
            first: offset,
            last,
        })
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        match *self {
            ByteRange::Closed { first, last } if last < first => Err(invalid_range(&format!(
                "last byte {last} is before first byte {first}"
            ))),
            ByteRange::Suffix(0) => Err(invalid_range("a suffix range must cover at least 1 byte")),
            _ => Ok(()),
        }
    }
}

fn invalid_range(reason: &str) -> Error {
    InvalidInput::InvalidRange {
        reason: reason.to_owned(),
    }
    .into()
}

impl fmt::Display for ByteRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ByteRange::Closed { first, last } => write!(f, "bytes={first}-{last}"),
            ByteRange::From(first) => write!(f, "bytes={first}-"),
            ByteRange::Suffix(len) => write!(f, "bytes=-{len}"),
        }
    }
}

/// A parsed `Content-Range: bytes first-last/total` response header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentRange {
    /// First byte offset.
    pub first: u64,
    /// Last byte offset (inclusive).
    pub last: u64,
    /// Full object size, unless the server sent `*`.
    pub total: Option<u64>,
}

impl ContentRange {
    /// Parses `bytes first-last/total` (or `/*`); `None` if malformed or inconsistent.
    pub fn parse(value: &str) -> Option<Self> {
        let (range, total) = value.strip_prefix("bytes ")?.split_once('/')?;
        let (first, last) = range.split_once('-')?;
        let first = first.parse().ok()?;
        let last: u64 = last.parse().ok()?;
        let total = match total {
            "*" => None,
            total => Some(total.parse().ok()?),
        };
        (first <= last && total.is_none_or(|t| last < t)).then_some(ContentRange {
            first,
            last,
            total,
        })
    }

    /// Reads the `Content-Range` header, if any; a garbled one is a malformed response.
    pub fn from_headers(headers: &http::HeaderMap) -> Result<Option<Self>, Error> {
        let Some(value) = headers.get(http::header::CONTENT_RANGE) else {
            return Ok(None);
        };
        value
            .to_str()
            .ok()
            .and_then(ContentRange::parse)
            .map(Some)
            .ok_or_else(|| Error::malformed(format!("invalid Content-Range {value:?}")))
    }

    /// True if the range is the whole object (`bytes 0-(n-1)/n`).
    pub fn is_whole_object(&self) -> bool {
        self.first == 0 && self.total == Some(self.last.saturating_add(1))
    }
}

/// Conditional request headers (`If-Match`, `If-None-Match`, `If-Modified-Since`,
/// `If-Unmodified-Since`), or their `x-amz-copy-source-if-*` twins for copy sources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conditions {
    /// Proceed only if the ETag matches (quoted or unquoted, as S3 accepts both).
    pub if_match: Option<String>,
    /// Proceed only if the ETag differs (`*` = only if the object does not exist).
    pub if_none_match: Option<String>,
    /// Proceed only if modified after this time.
    pub if_modified_since: Option<SystemTime>,
    /// Proceed only if not modified after this time.
    pub if_unmodified_since: Option<SystemTime>,
}

/// Where object data is encrypted at rest (`x-amz-server-side-encryption*`).
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerSideEncryption {
    /// SSE-S3 (`AES256`).
    S3,
    /// SSE-KMS (`aws:kms`), optionally with a key id, an encryption context (base64 JSON
    /// as S3 expects it) and the S3 Bucket Key switch.
    Kms {
        /// KMS key id or ARN; the account's default key when `None`.
        key_id: Option<String>,
        /// Base64-encoded JSON encryption context.
        context: Option<String>,
        /// `x-amz-server-side-encryption-bucket-key-enabled`.
        bucket_key: Option<bool>,
    },
    /// SSE-C: a customer-provided key.
    Customer(SseCustomerKey),
}

impl ServerSideEncryption {
    /// Fails, saying why without repeating it, if an SSE-KMS encryption context is not what
    /// S3 takes: the base64 of a JSON object of string values, at most 8 KiB decoded. Every
    /// request that carries one checks it before anything is sent.
    pub fn check(&self) -> Result<(), Error> {
        match self {
            ServerSideEncryption::Kms {
                context: Some(context),
                ..
            } => crate::request::validate_kms_context(context),
            _ => Ok(()),
        }
    }

    /// SSE-KMS with `key_id` (the account's default key when `None`) and the encryption
    /// context of `pairs`, encoded as S3 takes it (the base64 of a JSON object).
    pub fn kms_with_context<'a>(
        key_id: Option<String>,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        let mut json = String::from("{");
        for (index, (name, value)) in pairs.into_iter().enumerate() {
            if index > 0 {
                json.push(',');
            }
            push_json_string(&mut json, name);
            json.push(':');
            push_json_string(&mut json, value);
        }
        json.push('}');
        ServerSideEncryption::Kms {
            key_id,
            context: Some(base64_encode(json.as_bytes())),
            bucket_key: None,
        }
    }
}

/// `text` as a JSON string.
fn push_json_string(json: &mut String, text: &str) {
    json.push('"');
    for c in text.chars() {
        match c {
            '"' => json.push_str("\\\""),
            '\\' => json.push_str("\\\\"),
            c if (c as u32) < 0x20 => json.push_str(&format!("\\u{:04x}", c as u32)),
            c => json.push(c),
        }
    }
    json.push('"');
}

impl fmt::Debug for ServerSideEncryption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerSideEncryption::S3 => f.write_str("S3"),
            ServerSideEncryption::Kms {
                key_id,
                context,
                bucket_key,
            } => f
                .debug_struct("Kms")
                .field("key_id", key_id)
                .field("context", &context.as_ref().map(|_| "<redacted>"))
                .field("bucket_key", bucket_key)
                .finish(),
            ServerSideEncryption::Customer(key) => fmt::Debug::fmt(key, f),
        }
    }
}

/// A 256-bit SSE-C key. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct SseCustomerKey {
    key: [u8; 32],
}

impl SseCustomerKey {
    /// Wraps a raw AES-256 key.
    pub fn new(key: [u8; 32]) -> Self {
        SseCustomerKey { key }
    }

    /// Parses a base64 key as the AWS CLI takes it.
    pub fn from_base64(key: &str) -> Result<Self, Error> {
        let bytes = crate::encoding::base64_decode(key).unwrap_or_default();
        let key: [u8; 32] = bytes.try_into().map_err(|_| InvalidInput::Parameter {
            name: "SSECustomerKey",
            reason: "must be 32 bytes, base64-encoded".to_owned(),
        })?;
        Ok(SseCustomerKey { key })
    }

    /// `(algorithm, base64 key, base64 key MD5)` header values.
    pub(crate) fn header_values(&self) -> [String; 3] {
        [
            "AES256".to_owned(),
            base64_encode(&self.key),
            ContentMd5::of(&self.key),
        ]
    }
}

impl fmt::Debug for SseCustomerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SseCustomerKey(<redacted>)")
    }
}

/// `x-amz-storage-class` values. Other strings pass through [`StorageClass::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StorageClass {
    /// `STANDARD`.
    Standard,
    /// `REDUCED_REDUNDANCY`.
    ReducedRedundancy,
    /// `STANDARD_IA`.
    StandardIa,
    /// `ONEZONE_IA`.
    OnezoneIa,
    /// `INTELLIGENT_TIERING`.
    IntelligentTiering,
    /// `GLACIER`.
    Glacier,
    /// `DEEP_ARCHIVE`.
    DeepArchive,
    /// `GLACIER_IR`.
    GlacierIr,
    /// `EXPRESS_ONEZONE`.
    ExpressOnezone,
    /// Anything else a store reports.
    Other(String),
}

impl StorageClass {
    const KNOWN: [(StorageClass, &'static str); 9] = [
        (StorageClass::Standard, "STANDARD"),
        (StorageClass::ReducedRedundancy, "REDUCED_REDUNDANCY"),
        (StorageClass::StandardIa, "STANDARD_IA"),
        (StorageClass::OnezoneIa, "ONEZONE_IA"),
        (StorageClass::IntelligentTiering, "INTELLIGENT_TIERING"),
        (StorageClass::Glacier, "GLACIER"),
        (StorageClass::DeepArchive, "DEEP_ARCHIVE"),
        (StorageClass::GlacierIr, "GLACIER_IR"),
        (StorageClass::ExpressOnezone, "EXPRESS_ONEZONE"),
    ];

    /// The wire name.
    pub fn as_str(&self) -> &str {
        match self {
            StorageClass::Other(name) => name,
            known => Self::KNOWN
                .iter()
                .find(|(class, _)| class == known)
                .map_or("", |(_, name)| name),
        }
    }

    /// Parses a wire name (never fails: unknown names become [`StorageClass::Other`]).
    pub fn parse(name: &str) -> Self {
        Self::KNOWN
            .iter()
            .find(|(_, known)| *known == name)
            .map_or_else(
                || StorageClass::Other(name.to_owned()),
                |(class, _)| class.clone(),
            )
    }
}

impl fmt::Display for StorageClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A canned ACL (`x-amz-acl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CannedAcl {
    /// `private`.
    Private,
    /// `public-read`.
    PublicRead,
    /// `public-read-write`.
    PublicReadWrite,
    /// `authenticated-read`.
    AuthenticatedRead,
    /// `bucket-owner-read`.
    BucketOwnerRead,
    /// `bucket-owner-full-control`.
    BucketOwnerFullControl,
}

impl CannedAcl {
    /// Every canned ACL.
    pub const ALL: [CannedAcl; 6] = [
        CannedAcl::Private,
        CannedAcl::PublicRead,
        CannedAcl::PublicReadWrite,
        CannedAcl::AuthenticatedRead,
        CannedAcl::BucketOwnerRead,
        CannedAcl::BucketOwnerFullControl,
    ];

    /// The canned ACL of a wire name (`public-read`), `None` for another name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|acl| acl.as_str() == name)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            CannedAcl::Private => "private",
            CannedAcl::PublicRead => "public-read",
            CannedAcl::PublicReadWrite => "public-read-write",
            CannedAcl::AuthenticatedRead => "authenticated-read",
            CannedAcl::BucketOwnerRead => "bucket-owner-read",
            CannedAcl::BucketOwnerFullControl => "bucket-owner-full-control",
        }
    }
}

impl fmt::Display for CannedAcl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canned_acls_parse_from_their_wire_names_only() {
        for acl in CannedAcl::ALL {
            assert_eq!(CannedAcl::parse(acl.as_str()), Some(acl));
        }
        assert_eq!(CannedAcl::parse("Public-Read"), None);
        assert_eq!(CannedAcl::parse("log-delivery-write"), None);
    }

    #[test]
    fn ranges_format_as_http_and_reject_nonsense() {
        assert_eq!(ByteRange::new(0, 99).unwrap().to_string(), "bytes=0-99");
        assert_eq!(
            ByteRange::with_len(100, 50).unwrap().to_string(),
            "bytes=100-149"
        );
        assert_eq!(ByteRange::From(5).to_string(), "bytes=5-");
        assert_eq!(ByteRange::Suffix(10).to_string(), "bytes=-10");
        assert!(ByteRange::new(10, 9).is_err());
        assert!(ByteRange::with_len(0, 0).is_err());
        assert!(ByteRange::with_len(u64::MAX, 2).is_err());
        assert!(ByteRange::Suffix(0).validate().is_err());
    }

    #[test]
    fn sse_c_key_headers_and_redaction() {
        let key = SseCustomerKey::new([7u8; 32]);
        let [algorithm, encoded, md5] = key.header_values();
        assert_eq!(algorithm, "AES256");
        assert_eq!(encoded, "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=");
        assert_eq!(md5, ContentMd5::of(&[7u8; 32]));
        assert_eq!(SseCustomerKey::from_base64(&encoded).unwrap(), key);
        assert!(SseCustomerKey::from_base64("c2hvcnQ=").is_err());
        let debug = format!("{:?}", ServerSideEncryption::Customer(key));
        assert!(!debug.contains(&encoded), "{debug}");
    }

    #[test]
    fn storage_class_round_trip() {
        assert_eq!(StorageClass::parse("GLACIER_IR"), StorageClass::GlacierIr);
        assert_eq!(StorageClass::GlacierIr.as_str(), "GLACIER_IR");
        assert_eq!(StorageClass::parse("COLD").as_str(), "COLD");
    }
}

//! Shared response decoding: status handling, S3 error documents (also inside 200
//! responses), and typed header readers.

use std::collections::BTreeMap;
use std::time::SystemTime;

use bytes::Bytes;
use http::response::Parts;
use http::{HeaderMap, HeaderValue, Response, StatusCode};

use crate::checksum::ResponseChecksums;
use crate::error::{Error, S3Error};
use crate::types::StorageClass;

/// Request identifiers S3 returns with every response; quote them in support cases.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestIds {
    /// `x-amz-request-id`.
    pub request_id: Option<String>,
    /// `x-amz-id-2` (the extended request id / host id).
    pub extended_request_id: Option<String>,
}

impl RequestIds {
    /// Reads the ids from response headers.
    pub fn from_headers(headers: &HeaderMap) -> Self {
        Head::new(headers).request_ids()
    }
}

/// Splits a response into error or success; `success` decodes the latter. (Operations
/// whose 200 may still carry an `<Error>` decode their body with
/// `xml::document_or_error`.)
pub(crate) fn decode<T>(
    response: Response<Bytes>,
    success: impl FnOnce(&Parts, Bytes) -> Result<T, Error>,
) -> Result<T, Error> {
    let (parts, body) = response.into_parts();
    if !parts.status.is_success() {
        return Err(service_error(&parts, &body).into());
    }
    success(&parts, body)
}

/// Decodes a response whose success carries nothing but the request ids.
pub(crate) fn decode_request_ids(response: Response<Bytes>) -> Result<RequestIds, Error> {
    decode(response, |parts, _| {
        Ok(RequestIds::from_headers(&parts.headers))
    })
}

/// The output of an operation whose result is an XML document (listings, locations, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DocumentOutput<T> {
    /// The decoded document (listing keys and prefixes already URL-decoded).
    pub result: T,
    /// Request ids.
    pub ids: RequestIds,
}

/// Decodes a response whose success body is one XML document.
pub(crate) fn decode_document<T>(
    response: Response<Bytes>,
    decoder: fn(&[u8], &s3_xml::Limits) -> Result<T, s3_xml::Error>,
    name: &'static str,
) -> Result<DocumentOutput<T>, Error> {
    decode(response, |parts, body| {
        Ok(DocumentOutput {
            result: crate::xml::document(&body, decoder, name)?,
            ids: RequestIds::from_headers(&parts.headers),
        })
    })
}

/// Decodes the S3 error carried by a response head and (possibly empty) body.
///
/// Bodiless errors (HEAD, some proxies) get a code derived from the status, as the AWS
/// SDKs do: `NotFound`, `Forbidden`, `NotModified`, `PreconditionFailed`, ...
pub fn service_error(parts: &Parts, body: &[u8]) -> S3Error {
    let head = Head::new(&parts.headers);
    let mut error = crate::xml::decode_error_document(parts.status, body)
        .unwrap_or_else(|| S3Error::new(parts.status, status_code_name(parts.status)));
    if error.request_id.is_none() {
        error.request_id = head.string("x-amz-request-id");
    }
    if error.host_id.is_none() {
        error.host_id = head.string("x-amz-id-2");
    }
    error.server_time = head.date("date").ok().flatten();
    // The header is authoritative for the bucket's region; the body's <Region> is the
    // fallback (AuthorizationHeaderMalformed carries it there).
    if let Some(region) = head.string("x-amz-bucket-region") {
        error.region = Some(region);
    }
    error
}

fn status_code_name(status: StatusCode) -> String {
    match status {
        StatusCode::MOVED_PERMANENTLY => "PermanentRedirect".to_owned(),
        StatusCode::TEMPORARY_REDIRECT => "TemporaryRedirect".to_owned(),
        StatusCode::NOT_MODIFIED => "NotModified".to_owned(),
        StatusCode::BAD_REQUEST => "BadRequest".to_owned(),
        StatusCode::FORBIDDEN => "Forbidden".to_owned(),
        StatusCode::NOT_FOUND => "NotFound".to_owned(),
        StatusCode::CONFLICT => "Conflict".to_owned(),
        StatusCode::PRECONDITION_FAILED => "PreconditionFailed".to_owned(),
        StatusCode::RANGE_NOT_SATISFIABLE => "InvalidRange".to_owned(),
        StatusCode::INTERNAL_SERVER_ERROR => "InternalError".to_owned(),
        StatusCode::SERVICE_UNAVAILABLE => "ServiceUnavailable".to_owned(),
        other => format!("Http{}", other.as_u16()),
    }
}

/// How many distinct header names a response head may have to be read through
/// [`Head`]'s index; a larger head (an object with many metadata entries) is read
/// through the map's own lookups.
const INDEXED_NAMES: usize = 32;

/// Typed readers over response headers. Absent headers are `None`; present but garbled
/// ones are a [`Error::MalformedResponse`].
///
/// A decoder asks for dozens of names, most of them absent. `HeaderMap::get(&str)`
/// parses and hashes the name on every call; the index (each name's first value, made
/// in one pass) answers with a scan over a dozen names, comparing lengths first.
pub(crate) struct Head<'a> {
    map: &'a HeaderMap,
    index: Option<Index<'a>>,
}

struct Index<'a> {
    entries: [(&'a str, &'a HeaderValue); INDEXED_NAMES],
    len: usize,
}

impl<'a> Head<'a> {
    pub(crate) fn new(map: &'a HeaderMap) -> Self {
        static NONE: HeaderValue = HeaderValue::from_static("");
        if map.keys_len() > INDEXED_NAMES {
            return Self { map, index: None };
        }
        let mut index = Index {
            entries: [("", &NONE); INDEXED_NAMES],
            len: 0,
        };
        let mut previous: &str = "";
        for (name, value) in map {
            let name = name.as_str();
            // Every value of one name comes in a row, with the very same name slice:
            // only the first is kept (what `HeaderMap::get` answers).
            if std::ptr::eq(name, previous) {
                continue;
            }
            previous = name;
            index.entries[index.len] = (name, value);
            index.len += 1;
        }
        Self {
            map,
            index: Some(index),
        }
    }

    /// The first value of `name` (lowercase, as every name this crate reads).
    fn value(&self, name: &str) -> Option<&'a HeaderValue> {
        debug_assert!(!name.bytes().any(|b| b.is_ascii_uppercase()), "{name}");
        match &self.index {
            Some(index) => index.entries[..index.len]
                .iter()
                .find(|(indexed, _)| *indexed == name)
                .map(|(_, value)| *value),
            None => self.map.get(name),
        }
    }

    pub(crate) fn string(&self, name: &str) -> Option<String> {
        self.str(name).map(str::to_owned)
    }

    fn str(&self, name: &str) -> Option<&'a str> {
        self.value(name).and_then(|v| v.to_str().ok())
    }

    pub(crate) fn u64(&self, name: &str) -> Result<Option<u64>, Error> {
        self.parsed(name, |v| v.parse::<u64>().ok())
    }

    pub(crate) fn u32(&self, name: &str) -> Result<Option<u32>, Error> {
        self.parsed(name, |v| v.parse::<u32>().ok())
    }

    pub(crate) fn bool(&self, name: &str) -> Result<Option<bool>, Error> {
        self.parsed(name, |v| match v {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        })
    }

    pub(crate) fn date(&self, name: &str) -> Result<Option<SystemTime>, Error> {
        self.parsed(name, |v| httpdate::parse_http_date(v).ok())
    }

    pub(crate) fn etag(&self) -> Result<Option<s3_xml::ETag>, Error> {
        self.parsed("etag", |v| s3_xml::ETag::parse(v).ok())
    }

    pub(crate) fn storage_class(&self) -> Option<StorageClass> {
        self.str("x-amz-storage-class").map(StorageClass::parse)
    }

    pub(crate) fn version_id(&self) -> Option<String> {
        self.string("x-amz-version-id")
    }

    pub(crate) fn checksums(&self) -> ResponseChecksums {
        ResponseChecksums::from_head(self)
    }

    pub(crate) fn request_ids(&self) -> RequestIds {
        RequestIds {
            request_id: self.string("x-amz-request-id"),
            extended_request_id: self.string("x-amz-id-2"),
        }
    }

    /// `x-amz-meta-*` headers, names without the prefix (S3 returns them lower-case).
    pub(crate) fn metadata(&self) -> BTreeMap<String, String> {
        self.map
            .iter()
            .filter_map(|(name, value)| {
                let name = name.as_str().strip_prefix("x-amz-meta-")?;
                Some((
                    name.to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                ))
            })
            .collect()
    }

    pub(crate) fn encryption(&self) -> EncryptionInfo {
        EncryptionInfo {
            algorithm: self.string("x-amz-server-side-encryption"),
            kms_key_id: self.string("x-amz-server-side-encryption-aws-kms-key-id"),
            bucket_key_enabled: self
                .str("x-amz-server-side-encryption-bucket-key-enabled")
                .map(|v| v == "true"),
            customer_algorithm: self.string("x-amz-server-side-encryption-customer-algorithm"),
            customer_key_md5: self.string("x-amz-server-side-encryption-customer-key-md5"),
        }
    }

    fn parsed<T>(
        &self,
        name: &str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<Option<T>, Error> {
        match self.value(name) {
            None => Ok(None),
            Some(value) => value
                .to_str()
                .ok()
                .and_then(parse)
                .map(Some)
                .ok_or_else(|| {
                    Error::malformed(format!("header {name} has an invalid value {value:?}"))
                }),
        }
    }
}

/// How S3 says an object is encrypted at rest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncryptionInfo {
    /// `x-amz-server-side-encryption` (`AES256`, `aws:kms`, `aws:kms:dsse`).
    pub algorithm: Option<String>,
    /// `x-amz-server-side-encryption-aws-kms-key-id`.
    pub kms_key_id: Option<String>,
    /// `x-amz-server-side-encryption-bucket-key-enabled`.
    pub bucket_key_enabled: Option<bool>,
    /// `x-amz-server-side-encryption-customer-algorithm` (SSE-C).
    pub customer_algorithm: Option<String>,
    /// `x-amz-server-side-encryption-customer-key-MD5` (SSE-C).
    pub customer_key_md5: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    /// The index answers what the map answers: the first value of a name, `None` for an
    /// absent one, whatever the case the server wrote the name in; and a head with more
    /// names than the index holds is read from the map.
    #[test]
    fn head_reads_like_the_map() {
        let small = map(&[
            ("ETag", "\"abc\""),
            ("x-amz-meta-a", "1"),
            ("x-amz-meta-a", "2"),
            ("Content-Length", "12"),
            ("x-amz-request-id", "R"),
        ]);
        let mut pairs: Vec<(String, String)> = (0..INDEXED_NAMES + 5)
            .map(|i| (format!("x-amz-meta-k{i}"), i.to_string()))
            .collect();
        pairs.push(("content-length".into(), "12".into()));
        pairs.push(("x-amz-meta-k3".into(), "again".into()));
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let large = map(&pairs);
        for headers in [&small, &large] {
            let head = Head::new(headers);
            assert_eq!(head.index.is_some(), headers.keys_len() <= INDEXED_NAMES);
            for name in [
                "etag",
                "x-amz-meta-a",
                "x-amz-meta-k3",
                "x-amz-meta-k36",
                "content-length",
                "x-amz-request-id",
                "absent",
            ] {
                assert_eq!(
                    head.str(name),
                    headers.get(name).map(|v| v.to_str().unwrap())
                );
            }
            assert_eq!(head.u64("content-length").unwrap(), Some(12));
        }
        assert!(Head::new(&small).index.is_some());
        assert!(Head::new(&large).index.is_none());
        assert_eq!(Head::new(&small).str("x-amz-meta-a"), Some("1"));
        assert_eq!(
            RequestIds::from_headers(&small).request_id.as_deref(),
            Some("R")
        );
    }
}

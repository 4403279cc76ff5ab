//! Building headers from untrusted strings with this crate's typed errors.

use http::{HeaderName, HeaderValue};

use crate::error::{Error, InvalidHeader};

/// Validates a header name (ASCII token characters, stored lowercase) and
/// value (no CR, LF or other control characters but tab) and builds them.
///
/// Use it for user-supplied headers (object metadata, extra presigned
/// headers): a value with a line break would otherwise inject headers.
///
/// ```
/// use s3_sigv4::{Error, InvalidHeader, checked_header};
/// let (name, value) = checked_header("X-Amz-Meta-Owner", "ada")?;
/// assert_eq!((name.as_str(), value.to_str().unwrap()), ("x-amz-meta-owner", "ada"));
/// assert_eq!(
///     checked_header("x-amz-meta-a", "1\r\nx-evil: 1"),
///     Err(Error::InvalidHeader(InvalidHeader::LineBreakInValue { name: "x-amz-meta-a".into() }))
/// );
/// assert!(matches!(
///     checked_header("x-amz-meta-é", "1"),
///     Err(Error::InvalidHeader(InvalidHeader::InvalidName { .. }))
/// ));
/// # Ok::<(), Error>(())
/// ```
pub fn checked_header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), Error> {
    let name = checked_name(name)?;
    let value = checked_value(&name, value)?;
    Ok((name, value))
}

/// A header name of ASCII token characters (RFC 9110 `tchar`), lowercased.
pub(crate) fn checked_name(name: &str) -> Result<HeaderName, InvalidHeader> {
    let is_token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    let invalid = || InvalidHeader::InvalidName {
        name: name.to_owned(),
    };
    if name.is_empty() || !name.bytes().all(is_token) {
        return Err(invalid());
    }
    HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())
}

/// A header value without line breaks or control characters other than tab.
pub(crate) fn checked_value(name: &HeaderName, value: &str) -> Result<HeaderValue, InvalidHeader> {
    if value.bytes().any(|b| b == b'\r' || b == b'\n') {
        return Err(InvalidHeader::LineBreakInValue {
            name: name.to_string(),
        });
    }
    HeaderValue::from_str(value).map_err(|_| InvalidHeader::ControlCharacterInValue {
        name: name.to_string(),
    })
}

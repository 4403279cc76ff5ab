//! Entity tags.

use std::fmt;
use std::str::FromStr;

/// An entity tag, stored in its quoted wire form: `"fba9dede5f27731c9771645a39863328"`.
///
/// That is the form S3 puts in `ETag` headers and XML, the form `If-Match` /
/// `If-None-Match` take, and the form CompleteMultipartUpload expects, so
/// [`ETag::as_str`] can be sent back unchanged. [`ETag::unquoted`] gives the
/// opaque value between the quotes (an MD5 hex digest for single-part uploads,
/// `<md5>-<parts>` for multipart ones, but treat it as opaque).
///
/// Parsing accepts `"opaque"` (in XML this arrives literally or as
/// `&quot;opaque&quot;`; the XML layer has already unescaped it), a weak
/// `W/"opaque"`, and a bare `opaque` without quotes, which some S3-compatible
/// servers send and which is stored with quotes added. The opaque part must be
/// non-empty printable characters other than `"` and space (RFC 9110 `etagc`,
/// plus non-ASCII).
///
/// ```
/// let etag: s3_xml::ETag = "\"9b2cf535f27731c974343645a3985328\"".parse().unwrap();
/// assert_eq!(etag.as_str(), "\"9b2cf535f27731c974343645a3985328\"");
/// assert_eq!(etag.unquoted(), "9b2cf535f27731c974343645a3985328");
/// assert_eq!(s3_xml::ETag::parse("abc-2").unwrap().as_str(), "\"abc-2\"");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ETag(String);

/// Why a string is not an accepted entity tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ETagError {
    /// Empty, or `""`.
    Empty,
    /// A quote that does not open or close the tag.
    UnbalancedQuote,
    /// A space, control character or `"` inside the tag.
    InvalidCharacter,
}

impl fmt::Display for ETagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "empty entity tag",
            Self::UnbalancedQuote => "entity tag has an unbalanced quote",
            Self::InvalidCharacter => "entity tag contains a space, control character or quote",
        })
    }
}

impl std::error::Error for ETagError {}

impl ETag {
    /// Validates and stores an entity tag (see the type's documentation).
    pub fn parse(text: &str) -> Result<Self, ETagError> {
        let (weak, rest) = match text.strip_prefix("W/") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let opaque = if let Some(inner) = rest.strip_prefix('"') {
            inner.strip_suffix('"').ok_or(ETagError::UnbalancedQuote)?
        } else if weak || rest.ends_with('"') {
            return Err(ETagError::UnbalancedQuote);
        } else {
            rest
        };
        if opaque.is_empty() {
            return Err(ETagError::Empty);
        }
        if opaque.bytes().any(|b| b <= b' ' || b == b'"' || b == 0x7f) {
            return Err(ETagError::InvalidCharacter);
        }
        if weak || rest.starts_with('"') {
            Ok(Self(text.to_owned()))
        } else {
            Ok(Self(format!("\"{opaque}\"")))
        }
    }

    /// The quoted form, e.g. `"abc"` or `W/"abc"`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The opaque value without quotes or `W/`.
    pub fn unquoted(&self) -> &str {
        let s = self.0.strip_prefix("W/").unwrap_or(&self.0);
        s.get(1..s.len() - 1).unwrap_or(s)
    }

    /// Whether this is a weak tag (`W/"..."`). S3 itself never sends those.
    pub fn is_weak(&self) -> bool {
        self.0.starts_with("W/")
    }
}

impl FromStr for ETag {
    type Err = ETagError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for ETag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ETag {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_quoted_weak_and_bare() {
        let e = ETag::parse("\"abc-12\"").unwrap();
        assert_eq!(
            (e.as_str(), e.unquoted(), e.is_weak()),
            ("\"abc-12\"", "abc-12", false)
        );
        let e = ETag::parse("W/\"abc\"").unwrap();
        assert_eq!(
            (e.as_str(), e.unquoted(), e.is_weak()),
            ("W/\"abc\"", "abc", true)
        );
        let e = ETag::parse("abc").unwrap();
        assert_eq!((e.as_str(), e.unquoted()), ("\"abc\"", "abc"));
    }

    #[test]
    fn rejects_malformed() {
        assert_eq!(ETag::parse(""), Err(ETagError::Empty));
        assert_eq!(ETag::parse("\"\""), Err(ETagError::Empty));
        assert_eq!(ETag::parse("\""), Err(ETagError::UnbalancedQuote));
        assert_eq!(ETag::parse("\"abc"), Err(ETagError::UnbalancedQuote));
        assert_eq!(ETag::parse("abc\""), Err(ETagError::UnbalancedQuote));
        assert_eq!(ETag::parse("W/abc"), Err(ETagError::UnbalancedQuote));
        assert_eq!(ETag::parse("\"a\"b\""), Err(ETagError::InvalidCharacter));
        assert_eq!(ETag::parse("\"a b\""), Err(ETagError::InvalidCharacter));
        assert_eq!(ETag::parse(" \"ab\""), Err(ETagError::UnbalancedQuote));
        assert_eq!(ETag::parse("a\tb"), Err(ETagError::InvalidCharacter));
    }
}

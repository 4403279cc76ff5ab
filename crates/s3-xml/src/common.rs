//! Pieces shared by several documents: owners, checksums, url-decoding, and
//! the decode driver.

use crate::error::{Error, ErrorKind, ValueProblem};
use crate::reader::XmlReader;
use crate::{ErrorDocument, Limits};

/// The owner of a bucket, object or upload, or the initiator of an upload.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Owner {
    /// `ID`: the canonical user id (or an ARN for initiators).
    pub id: Option<String>,
    /// `DisplayName`, which S3 is phasing out.
    pub display_name: Option<String>,
}

impl Owner {
    /// An owner named by canonical user id.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: Some(id.into()),
            display_name: None,
        }
    }

    pub(crate) fn decode(r: &mut XmlReader<'_>) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(name) = r.next_child()? {
            match name {
                "ID" => r.put(&mut out.id, "ID", XmlReader::string)?,
                "DisplayName" => r.put(&mut out.display_name, "DisplayName", XmlReader::string)?,
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

/// Checksum fields as S3 sends them: base64 digests (kept as text, not
/// checked, since S3-compatible servers vary) and the checksum type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Checksums {
    /// `ChecksumCRC32`.
    pub crc32: Option<String>,
    /// `ChecksumCRC32C`.
    pub crc32c: Option<String>,
    /// `ChecksumCRC64NVME`.
    pub crc64nvme: Option<String>,
    /// `ChecksumSHA1`.
    pub sha1: Option<String>,
    /// `ChecksumSHA256`.
    pub sha256: Option<String>,
    /// `ChecksumType`: `COMPOSITE` or `FULL_OBJECT`.
    pub checksum_type: Option<String>,
}

impl Checksums {
    /// The element name, if `name` is a checksum field.
    pub(crate) fn element(name: &str) -> Option<&'static str> {
        const ELEMENTS: [&str; 6] = [
            "ChecksumCRC32",
            "ChecksumCRC32C",
            "ChecksumCRC64NVME",
            "ChecksumSHA1",
            "ChecksumSHA256",
            "ChecksumType",
        ];
        ELEMENTS.into_iter().find(|e| *e == name)
    }

    /// Reads the checksum field `element` (a name from [`Checksums::element`]).
    pub(crate) fn read(
        &mut self,
        r: &mut XmlReader<'_>,
        element: &'static str,
    ) -> Result<(), Error> {
        let slot = match element {
            "ChecksumCRC32" => &mut self.crc32,
            "ChecksumCRC32C" => &mut self.crc32c,
            "ChecksumCRC64NVME" => &mut self.crc64nvme,
            "ChecksumSHA1" => &mut self.sha1,
            "ChecksumSHA256" => &mut self.sha256,
            _ => &mut self.checksum_type,
        };
        r.put(slot, element, XmlReader::string)
    }

    /// The digest fields with their element names, in S3's order.
    pub(crate) fn digests(&self) -> [(&'static str, Option<&str>); 5] {
        [
            ("ChecksumCRC32", self.crc32.as_deref()),
            ("ChecksumCRC32C", self.crc32c.as_deref()),
            ("ChecksumCRC64NVME", self.crc64nvme.as_deref()),
            ("ChecksumSHA1", self.sha1.as_deref()),
            ("ChecksumSHA256", self.sha256.as_deref()),
        ]
    }
}

/// Which fields of a listing were percent-decoded because the response said
/// `<EncodingType>url</EncodingType>` (the request asked for
/// `encoding-type=url`). A flag is true only if the field was present and
/// decoded; the values in the result are always the decoded ones.
///
/// S3 encodes, per listing: V2 — `Key`, `Prefix`, `Delimiter`, `StartAfter`,
/// common prefixes; V1 — `Key`, `Prefix`, `Delimiter`, `Marker`,
/// `NextMarker`, common prefixes; versions and multipart uploads — `Key`,
/// `Prefix`, `Delimiter`, `KeyMarker`, `NextKeyMarker`, common prefixes.
/// Decoding follows `application/x-www-form-urlencoded` (`+` is a space), as
/// S3 and the AWS SDKs do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct UrlDecoded {
    /// Entry keys (`Key` of every entry).
    pub keys: bool,
    /// `Prefix`.
    pub prefix: bool,
    /// `Delimiter`.
    pub delimiter: bool,
    /// `StartAfter` (V2).
    pub start_after: bool,
    /// `Marker` (V1).
    pub marker: bool,
    /// `NextMarker` (V1).
    pub next_marker: bool,
    /// `KeyMarker` (versions, multipart uploads).
    pub key_marker: bool,
    /// `NextKeyMarker` (versions, multipart uploads).
    pub next_key_marker: bool,
    /// `Prefix` of each `CommonPrefixes` entry.
    pub common_prefixes: bool,
}

/// Percent-decodes listing fields when the document's `EncodingType` is `url`.
/// Errors are reported at the `EncodingType` element, since the encoding is
/// only known once the whole document has been read.
pub(crate) struct UrlDecoding {
    position: u64,
}

impl UrlDecoding {
    /// `Some` if `encoding_type` is `url`.
    pub(crate) fn new(encoding_type: Option<&str>, position: u64) -> Option<Self> {
        (encoding_type == Some("url")).then_some(Self { position })
    }

    /// Decodes one optional field; returns whether it was present.
    pub(crate) fn field(
        &self,
        value: &mut Option<String>,
        element: &'static str,
    ) -> Result<bool, Error> {
        match value {
            Some(v) => self.value(v, element).map(|()| true),
            None => Ok(false),
        }
    }

    /// Decodes every value in `values`; returns whether there was any.
    pub(crate) fn all<'v>(
        &self,
        values: impl Iterator<Item = &'v mut String>,
        element: &'static str,
    ) -> Result<bool, Error> {
        let mut any = false;
        for v in values {
            self.value(v, element)?;
            any = true;
        }
        Ok(any)
    }

    fn value(&self, value: &mut String, element: &'static str) -> Result<(), Error> {
        if !looks_url_encoded(value) {
            return Err(Error::new(
                ErrorKind::NotUrlEncoded { element },
                self.position,
            ));
        }
        percent_decode_form(value).map_err(|problem| {
            let kind = match problem {
                // S3 encodes UTF-8 values: escapes that decode to anything else were sent
                // raw (a key such as `a%ff` from a server that ignores `encoding-type`).
                ValueProblem::PercentDecodedNotUtf8 => ErrorKind::NotUrlEncoded { element },
                problem => ErrorKind::InvalidValue { element, problem },
            };
            Error::new(kind, self.position)
        })
    }
}

/// Whether `value` can be the output of S3's URL encoding: no space (encoded `+`), no
/// non-ASCII or control character (encoded `%XX`), and every `%` starts an escape. A value
/// that fails this was sent raw by a server that ignores `encoding-type`. (A raw value
/// without such characters passes, and decodes to itself unless it holds `+` or `%XX`:
/// that residue cannot be told from an encoded value.)
fn looks_url_encoded(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.iter().enumerate().all(|(index, &byte)| match byte {
        b' ' | 0x00..=0x1f | 0x7f..=0xff => false,
        b'%' => {
            bytes.get(index + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(index + 2).is_some_and(u8::is_ascii_hexdigit)
        }
        _ => true,
    })
}

/// Decodes `%XX` and `+` in place.
pub(crate) fn percent_decode_form(value: &mut String) -> Result<(), ValueProblem> {
    if !value.bytes().any(|b| b == b'%' || b == b'+') {
        return Ok(());
    }
    let mut out = Vec::with_capacity(value.len());
    let mut bytes = value.bytes();
    while let Some(b) = bytes.next() {
        out.push(match b {
            b'+' => b' ',
            b'%' => {
                let hi = bytes.next().and_then(hex_value);
                let lo = bytes.next().and_then(hex_value);
                match (hi, lo) {
                    (Some(hi), Some(lo)) => hi << 4 | lo,
                    _ => return Err(ValueProblem::BadPercentEncoding),
                }
            }
            other => other,
        });
    }
    *value = String::from_utf8(out).map_err(|_| ValueProblem::PercentDecodedNotUtf8)?;
    Ok(())
}

fn hex_value(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Reserves room for a listing page announced as `count` entries (V2's
/// `KeyCount`; `MaxKeys` is only an upper bound and would over-reserve small
/// pages), capped at S3's largest page (1,000) so that a hostile count cannot
/// reserve memory.
pub(crate) fn reserve_page<T>(entries: &mut Vec<T>, count: Option<u64>) {
    let wanted = count.map_or(0, |c| c.min(1000) as usize);
    entries.reserve(wanted.saturating_sub(entries.len()));
}

/// An element whose text is one of a closed set of values (a status, a mode, a tier):
/// anything else is [`ValueProblem::NotOneOf`]. Implemented by [`keyword!`].
pub(crate) trait Keyword: Sized + Copy + 'static {
    /// The values and their wire spellings.
    const VALUES: &'static [(Self, &'static str)];
    /// The spellings separated by `|`, for errors.
    const EXPECTED: &'static str;
}

impl XmlReader<'_> {
    /// The text of the element just opened as a [`Keyword`] (surrounding whitespace
    /// allowed, as for the other typed values).
    pub(crate) fn keyword<K: Keyword>(&mut self, element: &'static str) -> Result<K, Error> {
        let text = self.text(element)?;
        let text = text.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
        match K::VALUES.iter().find(|(_, name)| *name == text) {
            Some((value, _)) => Ok(*value),
            None => Err(self.value_error(
                element,
                ValueProblem::NotOneOf {
                    expected: K::EXPECTED,
                },
            )),
        }
    }
}

/// Defines a [`Keyword`] enum: its variants with their wire spellings, `as_str`, `parse`
/// and `Display`.
macro_rules! keyword {
    (
        $(#[$doc:meta])*
        pub enum $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal,)+ }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
        }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The value spelled `text` on the wire, if any.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl crate::common::Keyword for $name {
            const VALUES: &'static [(Self, &'static str)] = &[$(($name::$variant, $text)),+];
            const EXPECTED: &'static str = crate::common::keyword!(@join $($text),+);
        }
    };
    (@join $first:literal $(, $rest:literal)*) => { concat!($first $(, "|", $rest)*) };
}
pub(crate) use keyword;

/// A value required by S3's schema.
pub(crate) fn required<T>(
    value: Option<T>,
    r: &XmlReader<'_>,
    parent: &'static str,
    element: &'static str,
) -> Result<T, Error> {
    value.ok_or_else(|| r.error_here(ErrorKind::MissingElement { parent, element }))
}

/// Reads a `CommonPrefixes` entry (`<CommonPrefixes><Prefix>p</Prefix></CommonPrefixes>`).
pub(crate) fn decode_common_prefix(r: &mut XmlReader<'_>) -> Result<String, Error> {
    r.count_entry()?;
    let mut prefix = None;
    while let Some(name) = r.next_child()? {
        match name {
            "Prefix" => r.put(&mut prefix, "Prefix", XmlReader::string)?,
            _ => r.skip()?,
        }
    }
    required(prefix, r, "CommonPrefixes", "Prefix")
}

/// A document type this crate decodes.
pub(crate) trait DecodeBody: Sized {
    /// The root element's local name.
    const ROOT: &'static str;

    /// Whether `root` opens this document (some documents have two forms).
    fn accepts_root(root: &str) -> bool {
        root == Self::ROOT
    }

    /// Reads the children of the root element, through its end tag.
    fn decode_body(r: &mut XmlReader<'_>, root: &str) -> Result<Self, Error>;
}

/// A decoded document, or the S3 `<Error>` document found in its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome<T> {
    /// The document that was expected.
    Success(T),
    /// An `<Error>` document, sent with status 200 (CompleteMultipartUpload,
    /// CopyObject and UploadPartCopy do this when they fail after the status
    /// line has been sent).
    Error(Box<ErrorDocument>),
}

/// Decodes a whole document of type `T`.
pub(crate) fn decode_document<T: DecodeBody>(xml: &[u8], limits: &Limits) -> Result<T, Error> {
    let (mut r, root) = XmlReader::open(xml, limits)?;
    if !T::accepts_root(root.0) {
        let kind = ErrorKind::UnexpectedRoot {
            expected: T::ROOT,
            found: root.0.to_owned(),
        };
        return Err(r.error_here(kind));
    }
    // The result is returned as it is, not unwrapped and rewrapped: each
    // `?`/`Ok` would copy the whole document struct (hundreds of bytes).
    let decoded = T::decode_body(&mut r, root.0);
    if decoded.is_ok() {
        r.finish()?;
    }
    decoded
}

/// Decodes a document of type `T` or an S3 `<Error>` document.
pub(crate) fn decode_outcome<T: DecodeBody>(
    xml: &[u8],
    limits: &Limits,
) -> Result<Outcome<T>, Error> {
    let (mut r, root) = XmlReader::open(xml, limits)?;
    let outcome = if T::accepts_root(root.0) {
        Outcome::Success(T::decode_body(&mut r, root.0)?)
    } else if ErrorDocument::accepts_root(root.0) {
        Outcome::Error(Box::new(ErrorDocument::decode_body(&mut r, root.0)?))
    } else {
        let kind = ErrorKind::UnexpectedRoot {
            expected: T::ROOT,
            found: root.0.to_owned(),
        };
        return Err(r.error_here(kind));
    };
    r.finish()?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_decoding() {
        let mut s = "a%2Fb+c%20d%E2%82%AC".to_owned();
        percent_decode_form(&mut s).unwrap();
        assert_eq!(s, "a/b c d€");
        for bad in ["%", "%4", "%zz", "%4g"] {
            let mut s = bad.to_owned();
            assert_eq!(
                percent_decode_form(&mut s),
                Err(ValueProblem::BadPercentEncoding),
                "{bad}"
            );
        }
        let mut s = "%FF".to_owned();
        assert_eq!(
            percent_decode_form(&mut s),
            Err(ValueProblem::PercentDecodedNotUtf8)
        );
    }
}

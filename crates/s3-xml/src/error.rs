//! The crate's one error type.

use std::fmt;

/// Why a document could not be decoded or encoded, and where.
///
/// For decoding, [`Error::position`] is the byte offset into the input at
/// which the problem was found (the start of the offending element's text for
/// a bad value). For encoding, it is the byte offset of the offending
/// character inside the value named by the error.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Error {
    // Boxed: keeps every `Result<_, Error>` of the decoding path small.
    inner: Box<Inner>,
}

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    position: u64,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, position: u64) -> Self {
        Self {
            inner: Box::new(Inner { kind, position }),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    /// Byte offset where it went wrong (see the type's documentation).
    pub fn position(&self) -> u64 {
        self.inner.position
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", self.kind())
            .field("position", &self.position())
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.kind(), self.position())
    }
}

impl std::error::Error for Error {}

/// The kinds of [`Error`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The document is longer than [`Limits::max_bytes`](crate::Limits::max_bytes).
    TooLarge {
        /// The configured limit.
        limit: usize,
        /// The document's length.
        len: usize,
    },
    /// Elements are nested deeper than [`Limits::max_depth`](crate::Limits::max_depth).
    TooDeep {
        /// The configured limit.
        limit: usize,
    },
    /// More list entries than [`Limits::max_entries`](crate::Limits::max_entries).
    TooManyEntries {
        /// The configured limit.
        limit: usize,
    },
    /// The input is not well-formed XML.
    Malformed(Malformed),
    /// The document has a `<!DOCTYPE ...>`; DTDs and entity declarations are
    /// refused so that no entity can ever be expanded.
    DoctypeRejected,
    /// A reference to an entity other than the five predefined ones
    /// (`&lt;` `&gt;` `&amp;` `&apos;` `&quot;`) or a valid character reference.
    UnknownEntity(String),
    /// The XML declaration names an encoding other than UTF-8.
    UnsupportedEncoding(String),
    /// The root element is not the one this decoder reads.
    UnexpectedRoot {
        /// The root element(s) accepted, separated by `|`.
        expected: &'static str,
        /// The root element found.
        found: String,
    },
    /// A required child element is absent.
    MissingElement {
        /// The element that should contain it.
        parent: &'static str,
        /// The missing element.
        element: &'static str,
    },
    /// Two elements S3 allows only one of appear together (`<Days>` and `<Years>` of a
    /// default retention, `<Days>` and `<Date>` of an expiration, ...).
    Exclusive {
        /// The element holding them.
        parent: &'static str,
        /// The elements, `|`-separated.
        elements: &'static str,
    },
    /// A single-valued element appears twice in the same parent.
    DuplicateElement {
        /// The repeated element.
        element: &'static str,
    },
    /// A text-only element contains a child element.
    UnexpectedChild {
        /// The text-only element.
        element: &'static str,
        /// The child found inside it.
        child: String,
    },
    /// An element's text is not a valid value of its type.
    InvalidValue {
        /// The element (or field) holding the value.
        element: &'static str,
        /// What is wrong with it.
        problem: ValueProblem,
    },
    /// The document says `EncodingType=url`, but `element` holds a character that URL
    /// encoding never leaves raw (a space, a non-ASCII or control character, a `%` that
    /// starts no escape): the server ignores `encoding-type` and sent the value as it is,
    /// so decoding it could change it. The remedy is to list without `encoding-type`
    /// (s3-ops' `url_encoding(false)`, which the s3-wire client's paginator falls back to).
    NotUrlEncoded {
        /// The element holding the raw value.
        element: &'static str,
    },
    /// Encoding: a value contains a character that XML 1.0 cannot carry
    /// (U+0000–U+0008, U+000B, U+000C, U+000E–U+001F, U+FFFE, U+FFFF), not
    /// even as a character reference.
    Unencodable {
        /// The field holding the value.
        field: &'static str,
        /// The character.
        character: char,
    },
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { limit, len } => {
                write!(
                    f,
                    "XML document of {len} bytes exceeds the limit of {limit} bytes"
                )
            }
            Self::TooDeep { limit } => write!(f, "XML elements nested deeper than {limit} levels"),
            Self::TooManyEntries { limit } => {
                write!(f, "XML document has more than {limit} list entries")
            }
            Self::Malformed(m) => write!(f, "malformed XML: {m}"),
            Self::DoctypeRejected => {
                f.write_str("XML document type declarations (DTD) are not accepted")
            }
            Self::UnknownEntity(name) => write!(f, "unknown XML entity reference `&{name};`"),
            Self::UnsupportedEncoding(e) => {
                write!(
                    f,
                    "XML declaration names encoding `{e}`; only UTF-8 is supported"
                )
            }
            Self::UnexpectedRoot { expected, found } => {
                write!(f, "expected root element <{expected}>, found <{found}>")
            }
            Self::MissingElement { parent, element } => {
                write!(f, "<{parent}> has no required <{element}> element")
            }
            Self::DuplicateElement { element } => write!(f, "element <{element}> appears twice"),
            Self::Exclusive { parent, elements } => {
                write!(f, "<{parent}> may hold only one of {elements}")
            }
            Self::UnexpectedChild { element, child } => {
                write!(
                    f,
                    "element <{element}> holds text, but contains element <{child}>"
                )
            }
            Self::InvalidValue { element, problem } => write!(f, "invalid <{element}>: {problem}"),
            Self::NotUrlEncoded { element } => write!(
                f,
                "<{element}> is not URL-encoded although the listing says EncodingType=url: the \
                 server ignores encoding-type (s3s-fs and some other S3-compatible servers do); \
                 list without it (url_encoding(false))"
            ),
            Self::Unencodable { field, character } => write!(
                f,
                "{field} contains character U+{:04X}, which XML 1.0 cannot represent",
                u32::from(*character)
            ),
        }
    }
}

/// Ways the XML syntax itself can be broken.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Malformed {
    /// The input is not valid UTF-8.
    InvalidUtf8,
    /// The input ended inside the document (or had no root element).
    UnexpectedEof,
    /// An end tag does not match the open element.
    MismatchedEndTag {
        /// The element that is open.
        expected: String,
        /// The end tag found.
        found: String,
    },
    /// Non-whitespace text or a second element after the root element.
    ContentAfterRoot,
    /// Non-whitespace text before the root element.
    TextBeforeRoot,
    /// Any other syntax error, described in words.
    Syntax(String),
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidUtf8 => f.write_str("input is not valid UTF-8"),
            Self::UnexpectedEof => f.write_str("document ends before the root element is closed"),
            Self::MismatchedEndTag { expected, found } => {
                write!(
                    f,
                    "end tag </{found}> does not match open element <{expected}>"
                )
            }
            Self::ContentAfterRoot => f.write_str("content after the root element"),
            Self::TextBeforeRoot => f.write_str("text before the root element"),
            Self::Syntax(s) => f.write_str(s),
        }
    }
}

/// What is wrong with a value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueProblem {
    /// Not a decimal unsigned integer.
    NotAnInteger,
    /// A decimal integer too large for its field.
    IntegerOutOfRange,
    /// Not `true`, `false`, `1` or `0`.
    NotABoolean,
    /// Not an RFC 3339 timestamp.
    Timestamp(crate::TimestampError),
    /// Not a valid entity tag.
    ETag(crate::ETagError),
    /// A `%` not followed by two hex digits, in a field decoded because of
    /// `EncodingType=url`.
    BadPercentEncoding,
    /// Percent-decoding gave bytes that are not UTF-8.
    PercentDecodedNotUtf8,
    /// A value that must not be empty is empty.
    Empty,
    /// Not one of the values S3 defines for the element (`Enabled`, `GOVERNANCE`, ...).
    NotOneOf {
        /// The accepted values, separated by `|`.
        expected: &'static str,
    },
}

impl fmt::Display for ValueProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAnInteger => f.write_str("not a decimal unsigned integer"),
            Self::IntegerOutOfRange => f.write_str("integer out of range"),
            Self::NotABoolean => f.write_str("not a boolean (true/false)"),
            Self::Timestamp(e) => write!(f, "{e}"),
            Self::ETag(e) => write!(f, "{e}"),
            Self::BadPercentEncoding => f.write_str("invalid percent-encoding"),
            Self::PercentDecodedNotUtf8 => f.write_str("percent-decoded value is not UTF-8"),
            Self::Empty => f.write_str("empty value"),
            Self::NotOneOf { expected } => write!(f, "not one of {expected}"),
        }
    }
}

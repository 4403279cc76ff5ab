//! A bounded pull reader over the [`Lexer`]. Decoders walk a document with [`XmlReader::next_child`],
//! read leaves with the `*_value` methods and [`XmlReader::skip`] the rest.
//!
//! Protocol: every `Some(name)` from `next_child` opens an element that the
//! caller must consume exactly once: with a text read, with `skip`, or by
//! looping `next_child` until it returns `None` (its end tag).

use crate::error::{Error, ErrorKind, Malformed, ValueProblem};
use crate::lexer::{Lexer, Token};
use crate::{ETag, Limits, Timestamp};

pub(crate) struct XmlReader<'a> {
    lexer: Lexer<'a>,
    /// Bytes trimmed from the front (leading whitespace), added to positions.
    base: u64,
    limits: Limits,
    depth: usize,
    entries: usize,
    /// The element just opened was `<x/>`: it has no content and no end event.
    pending_empty: bool,
    /// Local name of the element just opened, borrowed from the input.
    name: &'a str,
    /// The last text read: one piece borrowed from the input, or several
    /// pieces assembled in `scratch` (reused buffer).
    text: Option<&'a str>,
    scratch: String,
    /// Where the current text value started, for value errors.
    value_position: u64,
    /// Where the last event started, for structural errors.
    event_start: u64,
}

/// What opened the document: the root element's local name.
pub(crate) struct Root<'a>(pub(crate) &'a str);

impl<'a> XmlReader<'a> {
    /// Checks the byte limit, skips a UTF-8 byte order mark and leading
    /// whitespace (S3 pads slow CompleteMultipartUpload answers with it),
    /// validates UTF-8 and reads up to the root
    /// element, which is returned.
    pub(crate) fn open(xml: &'a [u8], limits: &Limits) -> Result<(Self, Root<'a>), Error> {
        if xml.len() > limits.max_bytes() {
            return Err(Error::new(
                ErrorKind::TooLarge {
                    limit: limits.max_bytes(),
                    len: xml.len(),
                },
                limits.max_bytes() as u64,
            ));
        }
        let bom = if xml.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        };
        let trimmed = bom
            + xml[bom..]
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
                .count();
        let input = std::str::from_utf8(&xml[trimmed..]).map_err(|e| {
            let position = (trimmed + e.valid_up_to()) as u64;
            Error::new(ErrorKind::Malformed(Malformed::InvalidUtf8), position)
        })?;
        let mut this = Self {
            lexer: Lexer::new(input),
            base: trimmed as u64,
            limits: *limits,
            depth: 0,
            entries: 0,
            pending_empty: false,
            name: "",
            text: None,
            scratch: String::new(),
            value_position: 0,
            event_start: trimmed as u64,
        };
        loop {
            match this.event()? {
                Token::Declaration { encoding } => {
                    if let Some(encoding) = encoding
                        && !encoding.eq_ignore_ascii_case("utf-8")
                        && !encoding.eq_ignore_ascii_case("utf8")
                    {
                        let kind = ErrorKind::UnsupportedEncoding(encoding.to_owned());
                        return Err(this.error_here(kind));
                    }
                }
                Token::Start { local, empty } => {
                    this.enter(local, empty)?;
                    return Ok((this, Root(local)));
                }
                Token::Text(text) | Token::TextWithCr(text) if is_xml_whitespace(text) => {}
                Token::Ignorable => {}
                Token::Eof => return Err(this.malformed(Malformed::UnexpectedEof)),
                Token::End
                | Token::Text(_)
                | Token::TextWithCr(_)
                | Token::CData(_)
                | Token::Reference(_) => {
                    return Err(this.malformed(Malformed::TextBeforeRoot));
                }
                Token::Doctype => return Err(this.error_here(ErrorKind::DoctypeRejected)),
            }
        }
    }

    /// After the root element has been consumed: only whitespace, comments and
    /// processing instructions may follow.
    pub(crate) fn finish(mut self) -> Result<(), Error> {
        loop {
            match self.event()? {
                Token::Eof => return Ok(()),
                Token::Text(text) | Token::TextWithCr(text) if is_xml_whitespace(text) => {}
                Token::Ignorable => {}
                Token::Doctype => return Err(self.error_here(ErrorKind::DoctypeRejected)),
                _ => return Err(self.malformed(Malformed::ContentAfterRoot)),
            }
        }
    }

    /// The next child element of the open element, or `None` at its end tag.
    /// Text between child elements is ignored (S3 documents have none that
    /// matters), as is every comment and processing instruction.
    pub(crate) fn next_child(&mut self) -> Result<Option<&'a str>, Error> {
        if self.pending_empty {
            self.pending_empty = false;
            self.depth = self.depth.saturating_sub(1);
            return Ok(None);
        }
        self.event_start = self.base + self.lexer.position() as u64;
        if let Some(local) = self.lexer.simple_start() {
            self.enter(local, false)?;
            return Ok(Some(self.name));
        }
        loop {
            match self.event()? {
                Token::Start { local, empty } => {
                    self.enter(local, empty)?;
                    return Ok(Some(self.name));
                }
                Token::End => {
                    self.depth = self.depth.saturating_sub(1);
                    return Ok(None);
                }
                Token::Reference(reference) => {
                    resolve_reference(reference).map_err(|kind| self.error_here(kind))?;
                }
                Token::Text(_) | Token::TextWithCr(_) | Token::CData(_) | Token::Ignorable => {}
                Token::Eof => return Err(self.malformed(Malformed::UnexpectedEof)),
                Token::Declaration { .. } => {
                    let detail = "XML declaration inside the document".to_owned();
                    return Err(self.malformed(Malformed::Syntax(detail)));
                }
                Token::Doctype => return Err(self.error_here(ErrorKind::DoctypeRejected)),
            }
        }
    }

    /// Skips the element just opened, with everything inside it.
    pub(crate) fn skip(&mut self) -> Result<(), Error> {
        // `next_child` moves `depth` one level in or out per element edge.
        let target = self.depth.saturating_sub(1);
        while self.depth > target {
            self.next_child()?;
        }
        Ok(())
    }

    /// Counts one list entry against [`Limits::max_entries`].
    pub(crate) fn count_entry(&mut self) -> Result<(), Error> {
        self.entries += 1;
        if self.entries > self.limits.max_entries() {
            return Err(self.error_here(ErrorKind::TooManyEntries {
                limit: self.limits.max_entries(),
            }));
        }
        Ok(())
    }

    /// The text of the element just opened (a leaf): entity and character
    /// references resolved, CDATA included, line ends normalized as XML 1.0
    /// requires, all other whitespace kept exactly.
    #[inline]
    pub(crate) fn text(&mut self, element: &'static str) -> Result<&str, Error> {
        match self.text_or_children()? {
            Some(()) => Ok(self.current_text()),
            None => {
                let child = self.name.to_owned();
                Err(self.error_here(ErrorKind::UnexpectedChild { element, child }))
            }
        }
    }

    /// Like [`XmlReader::text`], but an element with child elements is
    /// skipped and gives `None`.
    pub(crate) fn text_if_leaf(&mut self) -> Result<Option<String>, Error> {
        match self.text_or_children()? {
            Some(()) => Ok(Some(self.current_text().to_owned())),
            None => {
                self.skip()?;
                self.skip()?;
                Ok(None)
            }
        }
    }

    /// Reads a single-valued element into `slot`; a second occurrence is an error.
    // `#[inline]` here and on `text`, `text_or_children` and the lexer's
    // fast paths: the per-leaf call chain cost ~6 % of a small document.
    #[inline]
    pub(crate) fn put<T>(
        &mut self,
        slot: &mut Option<T>,
        element: &'static str,
        read: impl FnOnce(&mut Self, &'static str) -> Result<T, Error>,
    ) -> Result<(), Error> {
        let value = read(self, element)?;
        if slot.is_some() {
            return Err(Error::new(
                ErrorKind::DuplicateElement { element },
                self.value_position,
            ));
        }
        *slot = Some(value);
        Ok(())
    }

    /// The element's text as an owned string.
    pub(crate) fn string(&mut self, element: &'static str) -> Result<String, Error> {
        self.text(element).map(str::to_owned)
    }

    /// A decimal unsigned integer (surrounding whitespace allowed).
    pub(crate) fn u64_value(&mut self, element: &'static str) -> Result<u64, Error> {
        let text = trim_xml_whitespace(self.text(element)?);
        let parsed = parse_u64(text);
        parsed.map_err(|problem| self.value_error(element, problem))
    }

    /// A decimal integer that must fit in `u32`.
    pub(crate) fn u32_value(&mut self, element: &'static str) -> Result<u32, Error> {
        let value = self.u64_value(element)?;
        u32::try_from(value).map_err(|_| self.value_error(element, ValueProblem::IntegerOutOfRange))
    }

    /// `true`/`false` (or the XML Schema spellings `1`/`0`).
    pub(crate) fn bool_value(&mut self, element: &'static str) -> Result<bool, Error> {
        match trim_xml_whitespace(self.text(element)?) {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            _ => Err(self.value_error(element, ValueProblem::NotABoolean)),
        }
    }

    /// An RFC 3339 timestamp.
    pub(crate) fn timestamp_value(&mut self, element: &'static str) -> Result<Timestamp, Error> {
        let parsed = Timestamp::parse(trim_xml_whitespace(self.text(element)?));
        parsed.map_err(|e| self.value_error(element, ValueProblem::Timestamp(e)))
    }

    /// An entity tag (quotes may arrive as `&quot;`).
    pub(crate) fn etag_value(&mut self, element: &'static str) -> Result<ETag, Error> {
        let parsed = ETag::parse(trim_xml_whitespace(self.text(element)?));
        parsed.map_err(|e| self.value_error(element, ValueProblem::ETag(e)))
    }

    /// A value error located at the start of the last text read.
    pub(crate) fn value_error(&self, element: &'static str, problem: ValueProblem) -> Error {
        Error::new(
            ErrorKind::InvalidValue { element, problem },
            self.value_position,
        )
    }

    /// An error located at the start of the last event read (the offending
    /// tag, reference or text; for a missing element, the parent's end tag).
    pub(crate) fn error_here(&self, kind: ErrorKind) -> Error {
        Error::new(kind, self.event_start)
    }

    /// Where the last text value started.
    pub(crate) fn value_position(&self) -> u64 {
        self.value_position
    }

    fn malformed(&self, m: Malformed) -> Error {
        self.error_here(ErrorKind::Malformed(m))
    }

    /// Reads the text of the element just opened into `self.scratch` (or
    /// remembers a single borrowed piece there). Returns `None`, with the
    /// child opened, if a child element is found instead.
    #[inline]
    fn text_or_children(&mut self) -> Result<Option<()>, Error> {
        self.scratch.clear();
        self.text = Some("");
        self.value_position = self.base + self.lexer.position() as u64;
        if self.pending_empty {
            self.pending_empty = false;
            self.depth = self.depth.saturating_sub(1);
            return Ok(Some(()));
        }
        if let Some(text) = self.lexer.simple_leaf() {
            self.text = Some(text);
            self.depth = self.depth.saturating_sub(1);
            return Ok(Some(()));
        }
        loop {
            match self.event()? {
                Token::Text(text) => self.push_piece(text),
                Token::TextWithCr(text) => {
                    self.spill();
                    push_normalized(&mut self.scratch, text);
                }
                Token::CData(text) => {
                    if memchr::memchr(b'\r', text.as_bytes()).is_some() {
                        self.spill();
                        push_normalized(&mut self.scratch, text);
                    } else {
                        self.push_piece(text);
                    }
                }
                Token::Reference(reference) => {
                    let c = resolve_reference(reference).map_err(|kind| self.error_here(kind))?;
                    self.spill();
                    self.scratch.push(c);
                }
                Token::End => {
                    self.depth = self.depth.saturating_sub(1);
                    return Ok(Some(()));
                }
                Token::Start { local, empty } => {
                    self.enter(local, empty)?;
                    return Ok(None);
                }
                Token::Ignorable => {}
                Token::Eof => return Err(self.malformed(Malformed::UnexpectedEof)),
                Token::Declaration { .. } => {
                    let detail = "XML declaration inside the document".to_owned();
                    return Err(self.malformed(Malformed::Syntax(detail)));
                }
                Token::Doctype => return Err(self.error_here(ErrorKind::DoctypeRejected)),
            }
        }
    }

    fn current_text(&self) -> &str {
        self.text.unwrap_or(&self.scratch)
    }

    /// Adds a piece of text without `\r`: kept borrowed if it is the first,
    /// else appended to `scratch`.
    fn push_piece(&mut self, piece: &'a str) {
        if self.text == Some("") {
            self.text = Some(piece);
        } else {
            self.spill();
            self.scratch.push_str(piece);
        }
    }

    /// Moves a borrowed first piece into `scratch` before appending more.
    fn spill(&mut self) {
        // Room for a typical escaped value (a quoted ETag is 34 bytes, with a
        // multipart suffix ~40) in one allocation per document: growing from
        // empty would take three (8, 33, 66 bytes for an ETag).
        if self.scratch.capacity() == 0 {
            self.scratch.reserve(64);
        }
        if let Some(first) = self.text.take() {
            self.scratch.push_str(first);
        }
    }

    fn enter(&mut self, local: &'a str, empty: bool) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > self.limits.max_depth() {
            let limit = self.limits.max_depth();
            return Err(self.error_here(ErrorKind::TooDeep { limit }));
        }
        self.name = local;
        self.pending_empty = empty;
        Ok(())
    }

    /// The next token; lexing errors become [`ErrorKind::Malformed`].
    fn event(&mut self) -> Result<Token<'a>, Error> {
        self.event_start = self.base + self.lexer.position() as u64;
        self.lexer.next_token().map_err(|e| {
            let (malformed, at) = *e;
            Error::new(ErrorKind::Malformed(malformed), self.base + at as u64)
        })
    }
}

/// Resolves `&name;` (the five predefined entities) or `&#N;` / `&#xN;`.
fn resolve_reference(reference: &str) -> Result<char, ErrorKind> {
    let c = match reference {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "apos" => '\'',
        "quot" => '"',
        _ => {
            let code = if let Some(hex) = reference.strip_prefix("#x") {
                u32::from_str_radix(hex, 16)
                    .ok()
                    .filter(|_| hex.bytes().all(|b| b.is_ascii_hexdigit()))
            } else if let Some(dec) = reference.strip_prefix('#') {
                dec.parse::<u32>()
                    .ok()
                    .filter(|_| dec.bytes().all(|b| b.is_ascii_digit()))
            } else {
                None
            };
            match code.and_then(char::from_u32) {
                Some(c) if c != '\0' => c,
                _ => {
                    return Err(ErrorKind::UnknownEntity(
                        reference.chars().take(64).collect(),
                    ));
                }
            }
        }
    };
    Ok(c)
}

/// Appends `piece`, turning `\r\n` and lone `\r` into `\n` (XML 1.0 §2.11).
fn push_normalized(out: &mut String, piece: &str) {
    if memchr::memchr(b'\r', piece.as_bytes()).is_none() {
        out.push_str(piece);
        return;
    }
    let mut rest = piece;
    while let Some(i) = rest.find('\r') {
        out.push_str(&rest[..i]);
        out.push('\n');
        rest = &rest[i + 1..];
        if let Some(after) = rest.strip_prefix('\n') {
            rest = after;
        }
    }
    out.push_str(rest);
}

fn is_xml_whitespace(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

fn trim_xml_whitespace(s: &str) -> &str {
    s.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'))
}

fn parse_u64(text: &str) -> Result<u64, ValueProblem> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ValueProblem::NotAnInteger);
    }
    text.bytes().try_fold(0u64, |acc, d| {
        acc.checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
            .ok_or(ValueProblem::IntegerOutOfRange)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_u64("0"), Ok(0));
        assert_eq!(parse_u64("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_u64("18446744073709551616"),
            Err(ValueProblem::IntegerOutOfRange)
        );
        for bad in ["", "-1", "+1", "1.0", "1e3", "0x10", "１"] {
            assert_eq!(parse_u64(bad), Err(ValueProblem::NotAnInteger), "{bad:?}");
        }
    }

    #[test]
    fn references() {
        assert_eq!(resolve_reference("quot"), Ok('"'));
        assert_eq!(resolve_reference("#13"), Ok('\r'));
        assert_eq!(resolve_reference("#x1F600"), Ok('😀'));
        for bad in [
            "nbsp", "#0", "#x0", "#xD800", "#x110000", "#", "#x", "#-1", "#x+1", "#+1",
        ] {
            assert!(
                matches!(resolve_reference(bad), Err(ErrorKind::UnknownEntity(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn line_end_normalization() {
        let mut s = String::new();
        push_normalized(&mut s, "a\r\nb\rc\n\r\r\nd");
        assert_eq!(s, "a\nb\nc\n\n\nd");
    }
}

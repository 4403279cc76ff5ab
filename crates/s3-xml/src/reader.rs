//! A bounded pull reader over quick-xml: the one place that sees quick-xml's
//! events and errors. Decoders walk a document with [`XmlReader::next_child`],
//! read leaves with the `*_value` methods and [`XmlReader::skip`] the rest.
//!
//! Protocol: every `Some(name)` from `next_child` opens an element that the
//! caller must consume exactly once: with a text read, with `skip`, or by
//! looping `next_child` until it returns `None` (its end tag).

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::error::{Error, ErrorKind, Malformed, ValueProblem};
use crate::{ETag, Limits, Timestamp};

pub(crate) struct XmlReader<'a> {
    reader: Reader<&'a [u8]>,
    /// Bytes trimmed from the front (leading whitespace), added to positions.
    base: u64,
    limits: Limits,
    depth: usize,
    entries: usize,
    /// The element just opened was `<x/>`: it has no content and no end event.
    pending_empty: bool,
    /// Local name of the element just opened (reused buffer).
    name: String,
    /// Text assembled from several pieces (reused buffer).
    scratch: String,
    /// Where the current text value started, for value errors.
    value_position: u64,
    /// Where the last event started, for structural errors.
    event_start: u64,
}

/// What opened the document: the root element's local name.
pub(crate) struct Root(pub(crate) String);

impl<'a> XmlReader<'a> {
    /// Checks the byte limit, skips leading whitespace (S3 pads slow
    /// CompleteMultipartUpload answers with it) and reads up to the root
    /// element, which is returned.
    pub(crate) fn open(xml: &'a [u8], limits: &Limits) -> Result<(Self, Root), Error> {
        if xml.len() > limits.max_bytes() {
            return Err(Error::new(
                ErrorKind::TooLarge {
                    limit: limits.max_bytes(),
                    len: xml.len(),
                },
                limits.max_bytes() as u64,
            ));
        }
        let trimmed = xml.iter().take_while(|b| b.is_ascii_whitespace()).count();
        let mut reader = Reader::from_reader(&xml[trimmed..]);
        let config = reader.config_mut();
        config.check_end_names = true;
        config.expand_empty_elements = false;
        config.trim_text(false);
        let mut this = Self {
            reader,
            base: trimmed as u64,
            limits: *limits,
            depth: 0,
            entries: 0,
            pending_empty: false,
            name: String::new(),
            scratch: String::new(),
            value_position: 0,
            event_start: trimmed as u64,
        };
        loop {
            match this.event()? {
                Event::Decl(decl) => {
                    if let Some(Ok(encoding)) = decl.encoding()
                        && !encoding.eq_ignore_ascii_case("utf-8")
                        && !encoding.eq_ignore_ascii_case("utf8")
                    {
                        let kind = ErrorKind::UnsupportedEncoding(encoding.into_owned());
                        return Err(this.error_here(kind));
                    }
                }
                Event::Start(start) => {
                    this.enter(&start, false)?;
                    let name = this.name.clone();
                    return Ok((this, Root(name)));
                }
                Event::Empty(start) => {
                    this.enter(&start, true)?;
                    let name = this.name.clone();
                    return Ok((this, Root(name)));
                }
                Event::Text(text) if is_xml_whitespace(&text) => {}
                Event::Comment(_) | Event::PI(_) => {}
                Event::Eof => return Err(this.malformed(Malformed::UnexpectedEof)),
                Event::End(_) | Event::Text(_) | Event::CData(_) | Event::GeneralRef(_) => {
                    return Err(this.malformed(Malformed::TextBeforeRoot));
                }
                Event::DocType(_) => return Err(this.error_here(ErrorKind::DoctypeRejected)),
            }
        }
    }

    /// After the root element has been consumed: only whitespace, comments and
    /// processing instructions may follow.
    pub(crate) fn finish(mut self) -> Result<(), Error> {
        loop {
            match self.event()? {
                Event::Eof => return Ok(()),
                Event::Text(text) if is_xml_whitespace(&text) => {}
                Event::Comment(_) | Event::PI(_) => {}
                Event::DocType(_) => return Err(self.error_here(ErrorKind::DoctypeRejected)),
                _ => return Err(self.malformed(Malformed::ContentAfterRoot)),
            }
        }
    }

    /// The next child element of the open element, or `None` at its end tag.
    /// Text between child elements is ignored (S3 documents have none that
    /// matters), as is every comment and processing instruction.
    pub(crate) fn next_child(&mut self) -> Result<Option<&str>, Error> {
        if self.pending_empty {
            self.pending_empty = false;
            self.depth = self.depth.saturating_sub(1);
            return Ok(None);
        }
        loop {
            match self.event()? {
                Event::Start(start) => {
                    self.enter(&start, false)?;
                    return Ok(Some(&self.name));
                }
                Event::Empty(start) => {
                    self.enter(&start, true)?;
                    return Ok(Some(&self.name));
                }
                Event::End(_) => {
                    self.depth = self.depth.saturating_sub(1);
                    return Ok(None);
                }
                Event::GeneralRef(reference) => {
                    resolve_reference(&reference).map_err(|kind| self.error_here(kind))?;
                }
                Event::Text(_) | Event::CData(_) | Event::Comment(_) | Event::PI(_) => {}
                Event::Decl(_) => {
                    return Err(self.malformed(Malformed::Syntax(
                        "XML declaration inside the document".into(),
                    )));
                }
                Event::Eof => return Err(self.malformed(Malformed::UnexpectedEof)),
                Event::DocType(_) => return Err(self.error_here(ErrorKind::DoctypeRejected)),
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
    pub(crate) fn text(&mut self, element: &'static str) -> Result<&str, Error> {
        match self.text_or_children()? {
            Some(()) => Ok(self.current_text()),
            None => {
                let child = self.name.clone();
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
    fn text_or_children(&mut self) -> Result<Option<()>, Error> {
        self.scratch.clear();
        self.value_position = self.base + self.reader.buffer_position();
        if self.pending_empty {
            self.pending_empty = false;
            self.depth = self.depth.saturating_sub(1);
            return Ok(Some(()));
        }
        loop {
            match self.event()? {
                Event::Text(text) => push_normalized(&mut self.scratch, &text),
                Event::CData(cdata) => push_normalized(&mut self.scratch, &cdata),
                Event::GeneralRef(reference) => {
                    let c = resolve_reference(&reference).map_err(|kind| self.error_here(kind))?;
                    self.scratch.push(c);
                }
                Event::End(_) => {
                    self.depth = self.depth.saturating_sub(1);
                    return Ok(Some(()));
                }
                Event::Start(start) => {
                    self.enter(&start, false)?;
                    return Ok(None);
                }
                Event::Empty(start) => {
                    self.enter(&start, true)?;
                    return Ok(None);
                }
                Event::Comment(_) | Event::PI(_) => {}
                Event::Decl(_) => {
                    return Err(self.malformed(Malformed::Syntax(
                        "XML declaration inside the document".into(),
                    )));
                }
                Event::Eof => return Err(self.malformed(Malformed::UnexpectedEof)),
                Event::DocType(_) => return Err(self.error_here(ErrorKind::DoctypeRejected)),
            }
        }
    }

    fn current_text(&self) -> &str {
        &self.scratch
    }

    fn enter(
        &mut self,
        start: &quick_xml::events::BytesStart<'_>,
        empty: bool,
    ) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > self.limits.max_depth() {
            return Err(self.error_here(ErrorKind::TooDeep {
                limit: self.limits.max_depth(),
            }));
        }
        self.name.clear();
        self.name.push_str(start.name().local_name().as_ref());
        self.pending_empty = empty;
        Ok(())
    }

    /// The next event, with quick-xml's errors translated.
    fn event(&mut self) -> Result<Event<'a>, Error> {
        self.event_start = self.base + self.reader.buffer_position();
        match self.reader.read_event() {
            Ok(event) => Ok(event),
            Err(e) => {
                let position = self.base + self.reader.error_position();
                Err(Error::new(ErrorKind::Malformed(translate(e)), position))
            }
        }
    }
}

fn translate(e: quick_xml::Error) -> Malformed {
    use quick_xml::errors::IllFormedError;
    match e {
        quick_xml::Error::Encoding(_) => Malformed::InvalidUtf8,
        quick_xml::Error::IllFormed(IllFormedError::MismatchedEndTag { expected, found }) => {
            Malformed::MismatchedEndTag { expected, found }
        }
        quick_xml::Error::IllFormed(IllFormedError::MissingEndTag(_)) => Malformed::UnexpectedEof,
        other => Malformed::Syntax(other.to_string()),
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

//! A small XML 1.0 tokenizer for S3 documents, over input already validated
//! as UTF-8. It checks well-formedness (names, matching end tags, quoting,
//! comments, CDATA, references) and borrows every token from the input;
//! it never allocates except for the stack of open element names.
//!
//! A general-purpose event reader costs about twice as much per document;
//! tests/differential.rs checks this tokenizer against quick-xml.

use crate::error::Malformed;

/// One token. Text never contains `<` or `&`; references are separate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token<'a> {
    /// `<name ...>` or `<name .../>` (`empty`), with the name's local part
    /// (after any `prefix:`). Attributes are checked and skipped.
    Start { local: &'a str, empty: bool },
    /// `</name>`, already matched against the open element.
    End,
    /// Character data between markup, without `\r`.
    Text(&'a str),
    /// Character data between markup that contains `\r` (its line ends
    /// must be normalized).
    TextWithCr(&'a str),
    /// `&name;` or `&#...;`: the part between `&` and `;`.
    Reference(&'a str),
    /// The content of `<![CDATA[...]]>`.
    CData(&'a str),
    /// `<?xml ...?>` at the very start: the value of its `encoding`, if any.
    Declaration { encoding: Option<&'a str> },
    /// A comment or a processing instruction.
    Ignorable,
    /// `<!DOCTYPE`: the caller refuses it; the lexer does not read further.
    Doctype,
    /// End of input.
    Eof,
}

pub(crate) struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    open: NameStack<'a>,
}

/// The names of the open elements: the first levels inline, so that a
/// typical document needs no allocation for them.
struct NameStack<'a> {
    inline: [&'a str; 16],
    len: usize,
    deeper: Vec<&'a str>,
}

impl<'a> NameStack<'a> {
    fn push(&mut self, name: &'a str) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = name,
            None => self.deeper.push(name),
        }
        self.len += 1;
    }

    fn pop(&mut self) -> Option<&'a str> {
        self.len = self.len.checked_sub(1)?;
        match self.inline.get(self.len) {
            Some(name) => Some(*name),
            None => self.deeper.pop(),
        }
    }

    fn peek(&self) -> Option<&'a str> {
        let top = self.len.checked_sub(1)?;
        match self.inline.get(top) {
            Some(name) => Some(*name),
            None => self.deeper.last().copied(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A lexing error and the byte offset where it was found.
/// Boxed so that `Result<Token, LexError>` stays small on the hot path.
pub(crate) type LexError = Box<(Malformed, usize)>;

fn lex_error(malformed: Malformed, at: usize) -> LexError {
    Box::new((malformed, at))
}

fn syntax(what: &str, at: usize) -> LexError {
    lex_error(Malformed::Syntax(what.to_owned()), at)
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(input: &'a str) -> Self {
        Self {
            input,
            pos: 0,
            open: NameStack {
                inline: [""; 16],
                len: 0,
                deeper: Vec::new(),
            },
        }
    }

    /// Offset of the next token.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    fn bytes(&self) -> &'a [u8] {
        self.input.as_bytes()
    }

    pub(crate) fn next_token(&mut self) -> Result<Token<'a>, LexError> {
        let bytes = self.bytes();
        let start = self.pos;
        match bytes.get(start) {
            None => {
                if self.open.is_empty() {
                    Ok(Token::Eof)
                } else {
                    Err(lex_error(Malformed::UnexpectedEof, start))
                }
            }
            Some(b'<') => self.markup(start),
            Some(b'&') => {
                // `&name;`, `&#digits;` or `&#xhex;`; the reader resolves it.
                let rest = &bytes[start + 1..];
                let len = rest
                    .iter()
                    .take_while(|&&b| b == b'#' || NAME_CHARS[usize::from(b)] != 0)
                    .count();
                if len == 0 || rest.get(len) != Some(&b';') {
                    return Err(syntax("malformed entity or character reference", start));
                }
                self.pos = start + 1 + len + 1;
                Ok(Token::Reference(&self.input[start + 1..start + 1 + len]))
            }
            Some(_) => {
                // One pass finds the end and whether line ends need normalizing.
                let rest = &bytes[start..];
                let stop = memchr::memchr3(b'<', b'&', b'\r', rest).unwrap_or(rest.len());
                if rest.get(stop) == Some(&b'\r') {
                    let end =
                        memchr::memchr2(b'<', b'&', &rest[stop..]).map_or(rest.len(), |i| stop + i);
                    self.pos = start + end;
                    return Ok(Token::TextWithCr(&self.input[start..start + end]));
                }
                self.pos = start + stop;
                Ok(Token::Text(&self.input[start..start + stop]))
            }
        }
    }

    /// Fast path for the commonest start tag, `<name>` (no prefix, no
    /// attributes): pushes and returns the name. `None` leaves the lexer
    /// untouched for the general path of [`Lexer::next_token`], which
    /// accepts exactly the same tags; this one skips its token dispatch and
    /// error plumbing, a sizeable share of a small document's decode.
    #[inline]
    pub(crate) fn simple_start(&mut self) -> Option<&'a str> {
        let bytes = self.bytes();
        let start = self.pos;
        if bytes.get(start) != Some(&b'<') {
            return None;
        }
        let first = *bytes.get(start + 1)?;
        if NAME_CHARS[usize::from(first)] != START {
            return None;
        }
        let tail = bytes.get(start + 2..)?;
        // `START` and `INNER` have the low bit set; `COLON` and 0 do not.
        let len = tail
            .iter()
            .position(|&b| NAME_CHARS[usize::from(b)] & 1 == 0)?;
        let end = start + 2 + len;
        if bytes.get(end) != Some(&b'>') {
            return None;
        }
        let name = &self.input[start + 1..end];
        self.open.push(name);
        self.pos = end + 1;
        Some(name)
    }

    /// Fast path for the commonest shape, `text</name>` right after the
    /// start tag of `name` (text without markup, references or `\r`):
    /// returns the text and consumes the end tag. `None` leaves the lexer
    /// untouched for the general path.
    #[inline]
    pub(crate) fn simple_leaf(&mut self) -> Option<&'a str> {
        let bytes = self.bytes();
        let start = self.pos;
        let tag = start + memchr::memchr3(b'<', b'&', b'\r', &bytes[start..])?;
        let expected = self.open.peek()?;
        let close = tag + 2 + expected.len();
        let matches = bytes[tag] == b'<'
            && bytes.get(tag + 1) == Some(&b'/')
            && bytes.get(tag + 2..close) == Some(expected.as_bytes())
            && bytes.get(close) == Some(&b'>');
        if !matches {
            return None;
        }
        self.open.pop();
        self.pos = close + 1;
        Some(&self.input[start..tag])
    }

    fn markup(&mut self, start: usize) -> Result<Token<'a>, LexError> {
        let bytes = self.bytes();
        match bytes.get(start + 1) {
            Some(b'/') => self.end_tag(start),
            Some(b'?') => self.processing_instruction(start),
            Some(b'!') => {
                let rest = &bytes[start + 2..];
                if rest.starts_with(b"--") {
                    let end = find_pair(&rest[2..], b'-', b'-')
                        .ok_or_else(|| syntax("unterminated comment", start))?;
                    if rest.get(2 + end + 2) != Some(&b'>') {
                        return Err(syntax("`--` inside a comment", start + 4 + end));
                    }
                    self.pos = start + 4 + end + 3;
                    Ok(Token::Ignorable)
                } else if rest.starts_with(b"[CDATA[") {
                    let body = start + 9;
                    let end = find_cdata_end(&bytes[body..])
                        .ok_or_else(|| syntax("unterminated CDATA section", start))?;
                    if self.open.is_empty() {
                        return Err(syntax("CDATA outside the root element", start));
                    }
                    self.pos = body + end + 3;
                    Ok(Token::CData(&self.input[body..body + end]))
                } else if rest.starts_with(b"DOCTYPE") {
                    Ok(Token::Doctype)
                } else {
                    Err(syntax("unknown `<!` markup", start))
                }
            }
            _ => self.start_tag(start),
        }
    }

    fn start_tag(&mut self, start: usize) -> Result<Token<'a>, LexError> {
        let bytes = self.bytes();
        let (name_end, local_start) = self.name_end(start + 1)?;
        let name = &self.input[start + 1..name_end];
        let local = &self.input[local_start..name_end];
        let mut i = name_end;
        loop {
            let after_space = skip_whitespace(bytes, i);
            match bytes.get(after_space) {
                Some(b'>') => {
                    self.pos = after_space + 1;
                    self.open.push(name);
                    return Ok(Token::Start {
                        local,
                        empty: false,
                    });
                }
                Some(b'/') if bytes.get(after_space + 1) == Some(&b'>') => {
                    self.pos = after_space + 2;
                    return Ok(Token::Start { local, empty: true });
                }
                None => return Err(lex_error(Malformed::UnexpectedEof, start)),
                Some(_) if after_space == i => return Err(syntax("malformed start tag", i)),
                Some(_) => i = self.attribute(after_space)?,
            }
        }
    }

    /// Skips `name = "value"`; returns the offset after it.
    fn attribute(&self, at: usize) -> Result<usize, LexError> {
        let bytes = self.bytes();
        let (name_end, _) = self.name_end(at)?;
        let eq = skip_whitespace(bytes, name_end);
        if bytes.get(eq) != Some(&b'=') {
            return Err(syntax("attribute without `=`", eq));
        }
        let quote_at = skip_whitespace(bytes, eq + 1);
        let quote = match bytes.get(quote_at) {
            Some(q @ (b'"' | b'\'')) => *q,
            _ => return Err(syntax("unquoted attribute value", quote_at)),
        };
        let value = &bytes[quote_at + 1..];
        let len = memchr::memchr(quote, value)
            .ok_or_else(|| syntax("unterminated attribute value", quote_at))?;
        if memchr::memchr(b'<', &value[..len]).is_some() {
            return Err(syntax("`<` in an attribute value", quote_at));
        }
        Ok(quote_at + 1 + len + 1)
    }

    fn end_tag(&mut self, start: usize) -> Result<Token<'a>, LexError> {
        let bytes = self.bytes();
        // Fast path: `</expected>` exactly.
        if let Some(expected) = self.open.peek() {
            let close = start + 2 + expected.len();
            if bytes.get(start + 2..close) == Some(expected.as_bytes())
                && bytes.get(close) == Some(&b'>')
            {
                self.open.pop();
                self.pos = close + 1;
                return Ok(Token::End);
            }
        }
        let (name_end, _) = self.name_end(start + 2)?;
        let found = &self.input[start + 2..name_end];
        let close = skip_whitespace(bytes, name_end);
        match bytes.get(close) {
            Some(b'>') => {}
            None => return Err(lex_error(Malformed::UnexpectedEof, start)),
            Some(_) => return Err(syntax("malformed end tag", close)),
        }
        match self.open.pop() {
            Some(expected) if expected == found => {
                self.pos = close + 1;
                Ok(Token::End)
            }
            Some(expected) => Err(lex_error(
                Malformed::MismatchedEndTag {
                    expected: expected.to_owned(),
                    found: found.to_owned(),
                },
                start,
            )),
            None => Err(syntax("end tag without a start tag", start)),
        }
    }

    fn processing_instruction(&mut self, start: usize) -> Result<Token<'a>, LexError> {
        let bytes = self.bytes();
        let end = find_pair(&bytes[start + 2..], b'?', b'>')
            .ok_or_else(|| syntax("unterminated processing instruction", start))?;
        let content = &self.input[start + 2..start + 2 + end];
        self.pos = start + 2 + end + 2;
        let target_len = content
            .find([' ', '\t', '\r', '\n'])
            .unwrap_or(content.len());
        let (target, attributes) = content.split_at(target_len);
        if target.is_empty() {
            return Err(syntax("processing instruction without a target", start));
        }
        // XML 1.0 [16]: the target is a name, directly followed by whitespace or `?>`.
        let target_start = start + 2;
        let target_is_name = self
            .name_end(target_start)
            .is_ok_and(|(end, _)| end == target_start + target_len);
        if !target_is_name {
            let detail = "processing instruction target is not a name";
            return Err(syntax(detail, target_start));
        }
        if !target.eq_ignore_ascii_case("xml") {
            return Ok(Token::Ignorable);
        }
        if start != 0 {
            return Err(syntax(
                "XML declaration not at the start of the document",
                start,
            ));
        }
        Ok(Token::Declaration {
            encoding: declared_encoding(attributes),
        })
    }

    /// The end of the XML name starting at `at` (which must start one), and
    /// the start of its local part (after the last `:`).
    fn name_end(&self, at: usize) -> Result<(usize, usize), LexError> {
        let bytes = self.bytes();
        match bytes.get(at) {
            Some(b) if NAME_CHARS[usize::from(*b)] == START => {}
            None => return Err(lex_error(Malformed::UnexpectedEof, at)),
            Some(_) => return Err(syntax("invalid name", at)),
        }
        let mut local = at;
        let mut i = at + 1;
        while let Some(&b) = bytes.get(i) {
            match NAME_CHARS[usize::from(b)] {
                0 => break,
                // Namespaces in XML: at most one `:`, between two non-empty parts.
                COLON if local != at => return Err(syntax("name with two `:`", i)),
                COLON => local = i + 1,
                _ => {}
            }
            i += 1;
        }
        if local == i {
            return Err(syntax("name ends with `:`", i));
        }
        Ok((i, local))
    }
}

/// Name characters, simplified: ASCII letters, digits, `_ : - .` and every
/// non-ASCII byte (multi-byte UTF-8 sequences are whole characters here
/// because the input is valid UTF-8 and ASCII bytes end them). Classes:
/// 0 = not a name character, `START` = may start a name, `COLON`, `INNER` =
/// only after the first character.
const START: u8 = 1;
const COLON: u8 = 2;
const INNER: u8 = 3;
// `simple_start` relies on this to tell unprefixed name characters apart.
const _: () = assert!(START & 1 == 1 && INNER & 1 == 1 && COLON & 1 == 0);
static NAME_CHARS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = if c == b':' {
            COLON
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            START
        } else if c.is_ascii_digit() || c == b'-' || c == b'.' {
            INNER
        } else {
            0
        };
        b += 1;
    }
    table
};

/// The offset of the first `first` immediately followed by `second`.
fn find_pair(bytes: &[u8], first: u8, second: u8) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = memchr::memchr(first, &bytes[from..]) {
        let at = from + i;
        if bytes.get(at + 1) == Some(&second) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The offset of the first `]]>`.
fn find_cdata_end(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = find_pair(&bytes[from..], b']', b']').map(|i| from + i) {
        if bytes.get(at + 2) == Some(&b'>') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

fn skip_whitespace(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        i += 1;
    }
    i
}

/// The `encoding="..."` value of an XML declaration.
fn declared_encoding(attributes: &str) -> Option<&str> {
    // A plain window scan: declarations are a few dozen bytes.
    let at = attributes
        .as_bytes()
        .windows(8)
        .position(|w| w == b"encoding")?;
    let after = &attributes[at + "encoding".len()..];
    let after = after.trim_start().strip_prefix('=')?.trim_start();
    let quote = after.chars().next().filter(|q| *q == '"' || *q == '\'')?;
    let value = &after[1..];
    value.find(quote).map(|end| &value[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: &str) -> Result<Vec<Token<'_>>, LexError> {
        let mut lexer = Lexer::new(input);
        let mut out = Vec::new();
        loop {
            let t = lexer.next_token()?;
            if t == Token::Eof || t == Token::Doctype {
                out.push(t);
                return Ok(out);
            }
            out.push(t);
        }
    }

    /// The `<name>` fast path agrees with the general path: same name, same
    /// position and open element afterwards, or it declines and leaves the
    /// lexer untouched.
    #[test]
    fn simple_start_agrees_with_next_token() {
        let shapes = [
            "<Key>",
            "<a>",
            "<Key >",
            "<Key/>",
            "<Key />",
            "<s3:Key>",
            "<:Key>",
            "<Key:>",
            "<a:b:c>",
            "<1Key>",
            "<-a>",
            "<K-1.x_y>",
            "<Kéy>",
            "<Key",
            "<K",
            "<",
            "",
            "Key>",
            "<Key a='1'>",
            "<Key\t>",
            "</Key>",
            "<!-- c -->",
            "<?pi?>",
            "<![CDATA[x]]>",
            "<Key\n>",
            "< Key>",
            "<Key=>",
            "<Key>>",
        ];
        for shape in shapes {
            let input = format!("<r>{shape}</Key></r>");
            let mut fast = Lexer::new(&input);
            let mut general = Lexer::new(&input);
            assert!(matches!(fast.next_token(), Ok(Token::Start { .. })));
            assert!(matches!(general.next_token(), Ok(Token::Start { .. })));
            match fast.simple_start() {
                Some(name) => {
                    let token = general.next_token().map_err(|e| e.0.clone());
                    let expected = Ok(Token::Start {
                        local: name,
                        empty: false,
                    });
                    assert_eq!(token, expected, "{shape:?}");
                    assert_eq!(fast.position(), general.position(), "{shape:?}");
                    assert_eq!(fast.open.peek(), general.open.peek(), "{shape:?}");
                    assert_eq!(fast.open.len, general.open.len, "{shape:?}");
                }
                None => {
                    assert_eq!(fast.position(), 3, "{shape:?}");
                    assert_eq!(fast.open.len, 1, "{shape:?}");
                }
            }
        }
        // The shapes S3 sends do take the fast path.
        let mut lexer = Lexer::new("<r><Key>");
        lexer.next_token().unwrap();
        assert_eq!(lexer.simple_start(), Some("Key"));
    }

    #[test]
    fn tokenizes_s3_shapes() {
        use Token::*;
        let t = tokens("<?xml version=\"1.0\" encoding='UTF-8'?>\n<a xmlns=\"x\" b = 'y>'><k>v&amp;w</k><e/><f\n/><!-- c --><![CDATA[<x>]]><?pi z?></a >")
            .unwrap();
        assert_eq!(
            t,
            [
                Declaration {
                    encoding: Some("UTF-8")
                },
                Text("\n"),
                Start {
                    local: "a",
                    empty: false
                },
                Start {
                    local: "k",
                    empty: false
                },
                Text("v"),
                Reference("amp"),
                Text("w"),
                End,
                Start {
                    local: "e",
                    empty: true
                },
                Start {
                    local: "f",
                    empty: true
                },
                Ignorable,
                CData("<x>"),
                Ignorable,
                End,
                Eof
            ]
        );
    }

    #[test]
    fn rejects_malformed_markup() {
        for (input, at) in [
            ("<a></b>", 3),
            ("<a>", 3),
            ("<a", 0),
            ("<a b>", 4),
            ("<a b=c>", 5),
            ("<a b=\"c>", 5),
            ("<a b=\"<\">", 5),
            ("<1a/>", 1),
            ("</a>", 0),
            ("<a>&amp</a>", 3),
            ("<a>&<;</a>", 3),
            ("<a>&;</a>", 3),
            ("<a::b/>", 3),
            ("<a:/>", 3),
            ("<a><!-- x -- y --></a>", 10),
            ("<a><!-- x</a>", 3),
            ("<a><![CDATA[x</a>", 3),
            ("<a><!ELEMENT x></a>", 3),
            ("<a/><?xml version=\"1.0\"?>", 4),
            ("<a>< b/></a>", 4),
            ("<a></a b>", 7),
            // Found by fuzzing against quick-xml: a PI target must be a name.
            ("<?>x?><a/>", 2),
            ("<a><?a>b?></a>", 5),
            ("<a><?1a?></a>", 5),
            ("<a><?a\x0cb?></a>", 5),
        ] {
            let err = tokens(input).unwrap_err();
            assert_eq!(err.1, at, "{input:?}: {err:?}");
        }
        assert_eq!(
            tokens("<a></b>").unwrap_err().0,
            Malformed::MismatchedEndTag {
                expected: "a".into(),
                found: "b".into()
            }
        );
        assert_eq!(
            tokens("<!DOCTYPE a [<!ENTITY x 'y'>]><a/>").unwrap(),
            [Token::Doctype]
        );
    }

    #[test]
    fn deep_nesting_beyond_the_inline_stack() {
        let names: Vec<String> = (0..40).map(|i| format!("e{i}")).collect();
        let open: String = names.iter().map(|n| format!("<{n}>")).collect();
        let close: String = names.iter().rev().map(|n| format!("</{n}>")).collect();
        let doc = format!("{open}{close}");
        assert_eq!(tokens(&doc).unwrap().len(), 81);
        let mut wrong = format!("{open}{close}");
        let len = wrong.len();
        wrong.replace_range(len - 15.., "</e1></e2></e0>");
        let err = tokens(&wrong).unwrap_err();
        assert_eq!(
            err.0,
            Malformed::MismatchedEndTag {
                expected: "e2".into(),
                found: "e1".into()
            }
        );
    }

    #[test]
    fn declaration_encoding() {
        assert_eq!(
            declared_encoding(" version=\"1.0\" encoding = \"latin1\""),
            Some("latin1")
        );
        assert_eq!(declared_encoding(" version=\"1.0\""), None);
        assert_eq!(declared_encoding(" encoding=\"x"), None);
    }
}

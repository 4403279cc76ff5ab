//! A minimal writer for the request bodies this crate encodes.

use crate::error::{Error, ErrorKind};

const XMLNS: &str = "http://s3.amazonaws.com/doc/2006-03-01/";

pub(crate) struct XmlWriter {
    out: String,
    root: &'static str,
}

impl XmlWriter {
    /// Starts a document with the S3 namespace on `root`.
    pub(crate) fn new(root: &'static str) -> Self {
        let mut out = String::with_capacity(256);
        out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
        out.push('<');
        out.push_str(root);
        out.push_str(" xmlns=\"");
        out.push_str(XMLNS);
        out.push_str("\">");
        Self { out, root }
    }

    pub(crate) fn open(&mut self, name: &str) {
        self.out.push('<');
        self.out.push_str(name);
        self.out.push('>');
    }

    /// `<name attributes>`: `attributes` is written as given (fixed text of the encoder,
    /// never caller data).
    pub(crate) fn open_with(&mut self, name: &str, attributes: &'static str) {
        self.out.push('<');
        self.out.push_str(name);
        self.out.push(' ');
        self.out.push_str(attributes);
        self.out.push('>');
    }

    pub(crate) fn close(&mut self, name: &str) {
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push('>');
    }

    /// `<name>value</name>`, with `value` escaped.
    pub(crate) fn leaf(&mut self, name: &'static str, value: &str) -> Result<(), Error> {
        self.open(name);
        escape_text(&mut self.out, value, name)?;
        self.close(name);
        Ok(())
    }

    /// `<name>value</name>` if `value` is `Some`.
    pub(crate) fn leaf_opt(
        &mut self,
        name: &'static str,
        value: Option<impl std::fmt::Display>,
    ) -> Result<(), Error> {
        match value {
            Some(value) => self.leaf(name, &value.to_string()),
            None => Ok(()),
        }
    }

    pub(crate) fn finish(mut self) -> String {
        let root = self.root;
        self.close(root);
        self.out
    }
}

/// Appends `value` as XML 1.0 character data. `&`, `<`, `>` become entity
/// references and `\r` becomes `&#13;` (a literal CR would be turned into
/// `\n` by the reader's line-end normalization); characters XML 1.0 cannot
/// represent at all are refused.
pub(crate) fn escape_text(out: &mut String, value: &str, field: &'static str) -> Result<(), Error> {
    let mut clean_from = 0;
    for (i, c) in value.char_indices() {
        let replacement = match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            '\r' => "&#13;",
            '\t' | '\n' => continue,
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => {
                return Err(Error::new(
                    ErrorKind::Unencodable {
                        field,
                        character: c,
                    },
                    i as u64,
                ));
            }
            _ => continue,
        };
        out.push_str(&value[clean_from..i]);
        out.push_str(replacement);
        clean_from = i + c.len_utf8();
    }
    out.push_str(&value[clean_from..]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_cr_and_refuses_controls() {
        let mut out = String::new();
        escape_text(&mut out, "a&b<c>d\"e'f\r\n\tg€", "Key").unwrap();
        assert_eq!(out, "a&amp;b&lt;c&gt;d\"e'f&#13;\n\tg€");
        let err = escape_text(&mut String::new(), "ab\u{1}", "Key").unwrap_err();
        assert_eq!(
            err.kind(),
            &ErrorKind::Unencodable {
                field: "Key",
                character: '\u{1}'
            }
        );
        assert_eq!(err.position(), 2);
        assert!(escape_text(&mut String::new(), "\u{fffe}", "Key").is_err());
        assert!(escape_text(&mut String::new(), "\u{0}", "Key").is_err());
        assert!(escape_text(&mut String::new(), "\u{fffd}\u{10ffff}\u{7f}", "Key").is_ok());
    }
}

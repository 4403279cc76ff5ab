//! A strict `aws-chunked` decoder, the receiving side of [`crate::ChunkEncoder`]: one
//! implementation for everything that reads such bodies back (the round-trip fuzz logic
//! here, the loopback servers of s3-wire-tokio's tests, the perf harness's null server).
//! It is incremental and never holds payload, so a server can count gigabytes through it.
//!
//! The grammar, from AWS's "signature calculations for streaming uploads":
//!
//! ```text
//! hex-size [";chunk-signature=" signature] CRLF data CRLF    each data chunk
//! "0" [";chunk-signature=" signature] CRLF                   the final chunk
//! *(name ":" value CRLF)                                      trailers, the signature last
//! CRLF
//! ```
//!
//! Refused, each with a message that says where: a size that is not 1 to 16 lowercase hex
//! digits or has a leading zero (uppercase too with [`Decoder::accepting_uppercase_hex`]:
//! aws-sdk-s3 writes `{:X}`); a line not ended by CRLF, or longer than 4 KiB; an extension
//! other than `chunk-signature`; a signature that is neither SigV4's 64 lowercase hex digits
//! nor SigV4a's DER in hex padded with `*` to 144; signed and unsigned chunks, or signatures
//! of both lengths, in one body; data not followed by CRLF; a trailer line without `:`, with
//! a name that is not a lowercase token, or repeated; `x-amz-trailer-signature` in an
//! unsigned body, anywhere but last, or missing after the trailers of a signed one; and
//! anything after the closing CRLF.

use std::fmt;

/// The trailer that signs the others in a signed body.
pub const TRAILER_SIGNATURE: &str = "x-amz-trailer-signature";

/// The longest size or trailer line accepted, CRLF included.
const MAX_LINE: usize = 4096;

/// What [`Decoder::feed`] reports, in the order of the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part<'a> {
    /// A chunk's size line: the size, the line's length with its CRLF, and the
    /// `chunk-signature` if the body is signed. The final chunk has size 0.
    Chunk {
        /// Payload bytes in the chunk.
        size: u64,
        /// Bytes of the size line, CRLF included.
        header_length: usize,
        /// The `chunk-signature` value, as sent.
        signature: Option<&'a str>,
    },
    /// Payload bytes of the current chunk, in order (a chunk may come in several pieces).
    Data(&'a [u8]),
    /// A trailer line, `x-amz-trailer-signature` included, as sent.
    Trailer {
        /// The trailer's name.
        name: &'a str,
        /// Its value.
        value: &'a str,
    },
}

/// Why a body is not valid `aws-chunked`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    SizeLine,
    Data(u64),
    DataCr,
    DataLf,
    TrailerLine,
    Done,
    Failed,
}

/// An incremental strict decoder: [`Decoder::feed`] the body as it arrives, then
/// [`Decoder::finish`].
#[derive(Debug, Clone)]
pub struct Decoder {
    state: State,
    line: Vec<u8>,
    uppercase_hex: bool,
    /// Whether the body's chunks are signed (the first chunk decides), and the length of
    /// its signatures.
    signed: Option<Option<usize>>,
    trailer_names: Vec<String>,
    signature_seen: bool,
    payload: u64,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder that accepts only lowercase hex sizes, as AWS's documentation writes them.
    pub fn new() -> Self {
        Decoder {
            state: State::SizeLine,
            line: Vec::new(),
            uppercase_hex: false,
            signed: None,
            trailer_names: Vec::new(),
            signature_seen: false,
            payload: 0,
        }
    }

    /// Also accepts uppercase hex digits in sizes (aws-sdk-s3 writes `{:X}`); the other
    /// rules stay.
    pub fn accepting_uppercase_hex(mut self) -> Self {
        self.uppercase_hex = true;
        self
    }

    /// Decodes the next bytes of the body, reporting each part to `on`. After an error the
    /// decoder refuses everything.
    pub fn feed(
        &mut self,
        mut input: &[u8],
        mut on: impl FnMut(Part<'_>),
    ) -> Result<(), DecodeError> {
        while !input.is_empty() {
            match self.state {
                State::Failed => return Err(DecodeError("the body was already refused".into())),
                State::Done => {
                    self.state = State::Failed;
                    return Err(DecodeError(format!(
                        "{} bytes after the end of the encoding",
                        input.len()
                    )));
                }
                State::Data(left) => {
                    let take = left.min(input.len() as u64) as usize;
                    on(Part::Data(&input[..take]));
                    self.payload += take as u64;
                    input = &input[take..];
                    self.state = match left - take as u64 {
                        0 => State::DataCr,
                        left => State::Data(left),
                    };
                }
                State::DataCr | State::DataLf => {
                    let expected = if self.state == State::DataCr {
                        b'\r'
                    } else {
                        b'\n'
                    };
                    if input[0] != expected {
                        return self.fail("chunk data not followed by CRLF".into());
                    }
                    input = &input[1..];
                    self.state = if self.state == State::DataCr {
                        State::DataLf
                    } else {
                        State::SizeLine
                    };
                }
                State::SizeLine | State::TrailerLine => {
                    let (end, complete) = match input.iter().position(|&b| b == b'\n') {
                        Some(at) => (at + 1, true),
                        None => (input.len(), false),
                    };
                    if self.line.len() + end > MAX_LINE {
                        return self.fail(format!("a line longer than {MAX_LINE} bytes"));
                    }
                    self.line.extend_from_slice(&input[..end]);
                    input = &input[end..];
                    if complete {
                        let line = std::mem::take(&mut self.line);
                        let result = self.line_done(&line, &mut on);
                        self.line = line;
                        self.line.clear();
                        result?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The payload length, if the body ended where an `aws-chunked` body ends.
    pub fn finish(&self) -> Result<u64, DecodeError> {
        match self.state {
            State::Done => Ok(self.payload),
            State::Failed => Err(DecodeError("the body was refused".into())),
            state => Err(DecodeError(format!(
                "the body ended early ({})",
                match state {
                    State::SizeLine => "in a chunk's size line",
                    State::Data(_) | State::DataCr | State::DataLf => "in a chunk's data",
                    _ => "in the trailers",
                }
            ))),
        }
    }

    fn fail<T>(&mut self, message: String) -> Result<T, DecodeError> {
        self.state = State::Failed;
        Err(DecodeError(message))
    }

    /// A whole line, CRLF included.
    fn line_done(&mut self, line: &[u8], on: &mut impl FnMut(Part<'_>)) -> Result<(), DecodeError> {
        let Some(content) = line.strip_suffix(b"\r\n").filter(|c| !c.contains(&b'\r')) else {
            return self.fail(format!(
                "a line not ended by CRLF: {:?}",
                String::from_utf8_lossy(line)
            ));
        };
        let Ok(content) = std::str::from_utf8(content) else {
            return self.fail("a line that is not UTF-8".into());
        };
        if self.state == State::SizeLine {
            self.size_line(content, line.len(), on)
        } else {
            self.trailer_line(content, on)
        }
    }

    fn size_line(
        &mut self,
        content: &str,
        header_length: usize,
        on: &mut impl FnMut(Part<'_>),
    ) -> Result<(), DecodeError> {
        let (size_text, extension) = match content.split_once(';') {
            Some((size, extension)) => (size, Some(extension)),
            None => (content, None),
        };
        let digit_ok = |b: u8| {
            b.is_ascii_digit()
                || (b'a'..=b'f').contains(&b)
                || (self.uppercase_hex && (b'A'..=b'F').contains(&b))
        };
        let size = (!size_text.is_empty()
            && size_text.len() <= 16
            && size_text.bytes().all(digit_ok)
            && (size_text == "0" || !size_text.starts_with('0')))
        .then(|| u64::from_str_radix(size_text, 16).ok())
        .flatten();
        let Some(size) = size else {
            return self.fail(format!("bad chunk size {size_text:?}"));
        };
        let signature = match extension {
            None => None,
            Some(extension) => match extension.strip_prefix("chunk-signature=") {
                Some(signature) if signature_form(signature) => Some(signature),
                _ => return self.fail(format!("bad chunk extension {extension:?}")),
            },
        };
        let this = signature.map(str::len);
        match self.signed {
            None => self.signed = Some(this),
            Some(first) if first == this => {}
            Some(_) => {
                return self.fail(
                    "chunks signed and unsigned, or with signatures of both lengths, in one body"
                        .into(),
                );
            }
        }
        on(Part::Chunk {
            size,
            header_length,
            signature,
        });
        self.state = if size == 0 {
            State::TrailerLine
        } else {
            State::Data(size)
        };
        Ok(())
    }

    fn trailer_line(
        &mut self,
        content: &str,
        on: &mut impl FnMut(Part<'_>),
    ) -> Result<(), DecodeError> {
        let signed = matches!(self.signed, Some(Some(_)));
        if content.is_empty() {
            if signed && !self.trailer_names.is_empty() && !self.signature_seen {
                return self.fail(format!(
                    "trailers of a signed body without {TRAILER_SIGNATURE}"
                ));
            }
            self.state = State::Done;
            return Ok(());
        }
        let Some((name, value)) = content.split_once(':') else {
            return self.fail(format!("a trailer line without ':': {content:?}"));
        };
        let token =
            |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b"!#$%&'*+-.^_`|~".contains(&b);
        if name.is_empty() || !name.bytes().all(token) {
            return self.fail(format!("bad trailer name {name:?}"));
        }
        if self.signature_seen {
            return self.fail(format!("{name} after {TRAILER_SIGNATURE}"));
        }
        if name == TRAILER_SIGNATURE {
            let length = match self.signed {
                Some(Some(length)) => length,
                _ => return self.fail(format!("{TRAILER_SIGNATURE} in an unsigned body")),
            };
            if value.len() != length || !signature_form(value) {
                return self.fail(format!("bad {TRAILER_SIGNATURE} {value:?}"));
            }
            self.signature_seen = true;
        } else if self.trailer_names.iter().any(|seen| seen == name) {
            return self.fail(format!("trailer {name} sent twice"));
        } else {
            self.trailer_names.push(name.to_owned());
        }
        on(Part::Trailer { name, value });
        Ok(())
    }
}

/// SigV4's 64 lowercase hex digits, or SigV4a's DER signature in lowercase hex padded with
/// `*` to 144 characters.
fn signature_form(signature: &str) -> bool {
    let hex = |h: &str| {
        !h.is_empty()
            && h.len().is_multiple_of(2)
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    match signature.len() {
        64 => hex(signature),
        144 => hex(signature.trim_end_matches('*')),
        _ => false,
    }
}

/// A whole `aws-chunked` body, decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decoded {
    /// The payload: the chunks' data, concatenated.
    pub data: Vec<u8>,
    /// Each chunk's size, the final empty one included.
    pub chunk_lengths: Vec<usize>,
    /// Each chunk's `chunk-signature`, as sent (none for an unsigned body).
    pub chunk_signatures: Vec<String>,
    /// The encoded length of each data chunk: size line, data and CRLF.
    pub frame_lengths: Vec<usize>,
    /// The encoded length of everything from the final chunk's size line on.
    pub tail_length: usize,
    /// The trailers other than `x-amz-trailer-signature`, as sent.
    pub trailers: Vec<(String, String)>,
    /// `x-amz-trailer-signature`, if sent.
    pub trailer_signature: Option<String>,
}

/// Decodes a whole body with a [`Decoder::new`] (lowercase hex only).
pub fn decode(body: &[u8]) -> Result<Decoded, DecodeError> {
    let mut decoded = Decoded::default();
    let mut decoder = Decoder::new();
    decoder.feed(body, |part| match part {
        Part::Chunk {
            size,
            header_length,
            signature,
        } => {
            let size = usize::try_from(size).unwrap_or(usize::MAX);
            decoded.chunk_lengths.push(size);
            decoded
                .chunk_signatures
                .extend(signature.map(str::to_owned));
            if size > 0 {
                decoded
                    .frame_lengths
                    .push(header_length.saturating_add(size).saturating_add(2));
            }
        }
        Part::Data(bytes) => decoded.data.extend_from_slice(bytes),
        Part::Trailer { name, value } if name == TRAILER_SIGNATURE => {
            decoded.trailer_signature = Some(value.to_owned());
        }
        Part::Trailer { name, value } => {
            decoded.trailers.push((name.to_owned(), value.to_owned()));
        }
    })?;
    decoder.finish()?;
    decoded.tail_length = body.len() - decoded.frame_lengths.iter().sum::<usize>();
    Ok(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIG_A: &str = "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648";
    const SIG_B: &str = "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497";
    const SIG_C: &str = "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9";

    fn signed_body() -> String {
        format!(
            "10;chunk-signature={SIG_A}\r\n{}\r\n3;chunk-signature={SIG_B}\r\nabc\r\n\
             0;chunk-signature={SIG_C}\r\nx-amz-checksum-crc32:AAAAAA==\r\n\
             {TRAILER_SIGNATURE}:{SIG_A}\r\n\r\n",
            "x".repeat(16)
        )
    }

    #[test]
    fn a_signed_body_with_a_trailer_decodes_whole() {
        let body = signed_body();
        let decoded = decode(body.as_bytes()).unwrap();
        assert_eq!(decoded.data, [&[b'x'; 16][..], b"abc"].concat());
        assert_eq!(decoded.chunk_lengths, [16, 3, 0]);
        assert_eq!(decoded.chunk_signatures, [SIG_A, SIG_B, SIG_C]);
        assert_eq!(decoded.frame_lengths, [85 + 16 + 2, 84 + 3 + 2]);
        assert_eq!(
            decoded.tail_length,
            body.len() - decoded.frame_lengths.iter().sum::<usize>()
        );
        assert_eq!(
            decoded.trailers,
            [("x-amz-checksum-crc32".to_owned(), "AAAAAA==".to_owned())]
        );
        assert_eq!(decoded.trailer_signature.as_deref(), Some(SIG_A));
        let unsigned = "4\r\nabcd\r\n0\r\nx-amz-checksum-crc32c:sOO8/Q==\r\n\r\n";
        let decoded = decode(unsigned.as_bytes()).unwrap();
        assert_eq!(
            (decoded.data.as_slice(), decoded.tail_length),
            (&b"abcd"[..], 37)
        );
        assert!(decoded.chunk_signatures.is_empty());
    }

    #[test]
    fn pieces_split_anywhere_decode_as_the_whole() {
        let body = signed_body();
        let body = body.as_bytes();
        let whole = decode(body).unwrap();
        for split in 0..=body.len() {
            let mut decoder = Decoder::new();
            let mut parts = Vec::new();
            let mut record = |part: Part<'_>| {
                parts.push(match part {
                    Part::Data(bytes) => format!("data {}", String::from_utf8_lossy(bytes)),
                    other => format!("{other:?}"),
                })
            };
            decoder.feed(&body[..split], &mut record).unwrap();
            decoder.feed(&body[split..], &mut record).unwrap();
            assert_eq!(
                decoder.finish(),
                Ok(whole.data.len() as u64),
                "split {split}"
            );
            let data: String = parts
                .iter()
                .filter_map(|p| p.strip_prefix("data "))
                .collect();
            assert_eq!(data.as_bytes(), whole.data, "split {split}");
            assert_eq!(parts.iter().filter(|p| p.starts_with("Chunk")).count(), 3);
            assert_eq!(parts.iter().filter(|p| p.starts_with("Trailer")).count(), 2);
        }
    }

    #[test]
    fn every_departure_from_the_grammar_is_refused() {
        let text = signed_body();
        let sig = format!("chunk-signature={SIG_A}");
        let bad = [
            text.replacen("10;", "010;", 1),
            text.replacen("10;", "10 ;", 1),
            text.replacen("3;chunk", "A;chunk", 1),
            text.replacen("10;", "1G;", 1),
            text.replacen("10;", ";", 1),
            text.replacen(&sig, "chunk-signature=x", 1),
            text.replacen(
                &sig,
                &format!("chunk-signature={}", SIG_A.to_uppercase()),
                1,
            ),
            text.replacen(&sig, &format!("chunk-extension={SIG_A}"), 1),
            text.replacen(&format!(";chunk-signature={SIG_B}"), "", 1),
            text.replacen("\r\nabc\r\n", "\r\nabc\n", 1),
            text.replacen("\r\nabc\r\n", "\r\nabcd\r\n", 1),
            text.replacen("crc32:", "crc32 ", 1),
            text.replacen("x-amz-checksum-crc32:", "X-Amz-Checksum-Crc32:", 1),
            text.replacen(TRAILER_SIGNATURE, "x-amz-trailer-signatur", 1),
            text.replacen(
                &format!("{TRAILER_SIGNATURE}:{SIG_A}"),
                &format!("{TRAILER_SIGNATURE}:{}", &SIG_A[..63]),
                1,
            ),
            text.replacen(
                "x-amz-checksum-crc32:AAAAAA==\r\n",
                "x-amz-checksum-crc32:AAAAAA==\r\nx-amz-checksum-crc32:AAAAAA==\r\n",
                1,
            ),
            text.replacen(
                &format!("{TRAILER_SIGNATURE}:{SIG_A}\r\n"),
                &format!("{TRAILER_SIGNATURE}:{SIG_A}\r\nx-amz-meta:late\r\n"),
                1,
            ),
            format!("{text}x"),
            text[..text.len() - 2].to_owned(),
            format!("{}\r\n\r\n", "1".repeat(17)),
            format!("1;{}\r\n", "s".repeat(MAX_LINE)),
            "0\r\nx-amz-trailer-signature:".to_owned() + SIG_A + "\r\n\r\n",
        ];
        for bad in bad {
            assert!(decode(bad.as_bytes()).is_err(), "{bad:?}");
        }
        // A SigV4a signature: DER hex padded with `*`, the same length throughout.
        let v4a = format!("{}{}", "3045".repeat(18), "*".repeat(72));
        let body = format!("1;chunk-signature={v4a}\r\na\r\n0;chunk-signature={v4a}\r\n\r\n");
        assert_eq!(decode(body.as_bytes()).unwrap().data, b"a");
        let mixed = format!("1;chunk-signature={v4a}\r\na\r\n0;chunk-signature={SIG_A}\r\n\r\n");
        assert!(decode(mixed.as_bytes()).is_err());
    }

    #[test]
    fn uppercase_sizes_only_when_asked_for() {
        let body = b"1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n";
        assert!(decode(body).is_err());
        let mut decoder = Decoder::new().accepting_uppercase_hex();
        decoder.feed(body, |_| {}).unwrap();
        assert_eq!(decoder.finish(), Ok(26));
        let mut decoder = Decoder::new().accepting_uppercase_hex();
        assert!(decoder.feed(b"01A\r\n", |_| {}).is_err());
    }

    #[test]
    fn a_body_cut_short_or_refused_does_not_finish() {
        for cut in [
            "",
            "10",
            "10\r\n",
            "10\r\nabc",
            "3\r\nabc\r\n0\r\n",
            "3\r\nabc\r\n0\r\na:b\r\n",
        ] {
            let mut decoder = Decoder::new();
            decoder.feed(cut.as_bytes(), |_| {}).unwrap();
            assert!(decoder.finish().is_err(), "{cut:?}");
        }
        let mut decoder = Decoder::new();
        assert!(decoder.feed(b"zz\r\n", |_| {}).is_err());
        assert!(
            decoder.feed(b"0\r\n\r\n", |_| {}).is_err(),
            "refused for good"
        );
        assert!(decoder.finish().is_err());
    }
}

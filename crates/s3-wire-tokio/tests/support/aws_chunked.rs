//! Decodes `aws-chunked` request bodies received by the fault server and checks their chunk
//! and trailer signatures independently (from the AWS "signature calculations for
//! streaming uploads" documentation).

use sha2::{Digest, Sha256};

use super::sigv4::{Signed, hex, hmac, signing_key};

/// A decoded `aws-chunked` body.
#[derive(Debug, Default)]
pub struct Decoded {
    /// The payload, chunks concatenated.
    pub data: Vec<u8>,
    /// Length of each chunk, the final empty one included.
    pub chunk_lengths: Vec<usize>,
    /// `chunk-signature` of each chunk (empty for unsigned encoding).
    pub chunk_signatures: Vec<String>,
    /// Trailing headers other than `x-amz-trailer-signature`, as sent.
    pub trailers: Vec<(String, String)>,
    /// `x-amz-trailer-signature`, if sent.
    pub trailer_signature: Option<String>,
}

fn take_line<'a>(body: &'a [u8], at: &mut usize) -> Result<&'a [u8], String> {
    let rest = body.get(*at..).ok_or("body ended early")?;
    let end = rest
        .windows(2)
        .position(|w| w == b"\r\n")
        .ok_or("line without CRLF")?;
    *at += end + 2;
    Ok(&rest[..end])
}

/// Parses an `aws-chunked` body.
pub fn decode(body: &[u8]) -> Result<Decoded, String> {
    let mut decoded = Decoded::default();
    let mut at = 0;
    loop {
        let line = std::str::from_utf8(take_line(body, &mut at)?)
            .map_err(|_| "chunk header is not UTF-8")?
            .to_owned();
        let (size, extension) = line.split_once(';').unwrap_or((&line, ""));
        let size =
            usize::from_str_radix(size, 16).map_err(|_| format!("bad chunk size {size:?}"))?;
        if let Some(signature) = extension.strip_prefix("chunk-signature=") {
            decoded.chunk_signatures.push(signature.to_owned());
        } else if !extension.is_empty() {
            return Err(format!("unexpected chunk extension {extension:?}"));
        }
        decoded.chunk_lengths.push(size);
        if size == 0 {
            break;
        }
        let data = body.get(at..at + size).ok_or("chunk data cut short")?;
        decoded.data.extend_from_slice(data);
        at += size;
        if body.get(at..at + 2) != Some(b"\r\n") {
            return Err("chunk data not followed by CRLF".into());
        }
        at += 2;
    }
    // Trailers until an empty line (or the end, for a body without trailers).
    while at < body.len() {
        let line = std::str::from_utf8(take_line(body, &mut at)?)
            .map_err(|_| "trailer is not UTF-8")?
            .to_owned();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').ok_or("trailer without ':'")?;
        if name == "x-amz-trailer-signature" {
            decoded.trailer_signature = Some(value.to_owned());
        } else {
            decoded.trailers.push((name.to_owned(), value.to_owned()));
        }
    }
    if at != body.len() {
        return Err(format!(
            "{} bytes after the end of the encoding",
            body.len() - at
        ));
    }
    Ok(decoded)
}

/// Checks the chain of chunk signatures (seeded by the header signature) and, if present, the
/// trailer signature.
pub fn verify_signatures(decoded: &Decoded, seed: &Signed, secret_key: &str) -> Result<(), String> {
    let key = signing_key(secret_key, &seed.scope);
    let empty_hash = hex(&Sha256::digest(b""));
    let mut previous = seed.signature.clone();
    let mut offset = 0;
    if decoded.chunk_signatures.len() != decoded.chunk_lengths.len() {
        return Err("not every chunk is signed".into());
    }
    for (index, (&len, signature)) in decoded
        .chunk_lengths
        .iter()
        .zip(&decoded.chunk_signatures)
        .enumerate()
    {
        let data = &decoded.data[offset..offset + len];
        offset += len;
        let string_to_sign = format!(
            "AWS4-HMAC-SHA256-PAYLOAD\n{}\n{}\n{previous}\n{empty_hash}\n{}",
            seed.amz_date,
            seed.scope,
            hex(&Sha256::digest(data))
        );
        let expected = hex(&hmac(&key, string_to_sign.as_bytes()));
        if *signature != expected {
            return Err(format!(
                "chunk {index}: signature {signature}, expected {expected}"
            ));
        }
        previous = expected;
    }
    if let Some(signature) = &decoded.trailer_signature {
        let mut trailer_text = String::new();
        for (name, value) in &decoded.trailers {
            trailer_text.push_str(&format!("{name}:{value}\n"));
        }
        let string_to_sign = format!(
            "AWS4-HMAC-SHA256-TRAILER\n{}\n{}\n{previous}\n{}",
            seed.amz_date,
            seed.scope,
            hex(&Sha256::digest(trailer_text.as_bytes()))
        );
        let expected = hex(&hmac(&key, string_to_sign.as_bytes()));
        if *signature != expected {
            return Err(format!(
                "trailer signature {signature}, expected {expected}"
            ));
        }
    }
    Ok(())
}

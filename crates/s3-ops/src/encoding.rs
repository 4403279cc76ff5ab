//! Percent-encoding shared by paths and queries, and base64 as S3 uses it.
//!
//! The URI encoding is s3-sigv4's own (unreserved `A-Za-z0-9-_.~` kept, everything else
//! `%XX` upper-case), so the path and query that are sent are byte for byte the canonical
//! ones.

/// Appends `key` percent-encoded for a path: `/` is kept, everything else SigV4-encoded.
pub(crate) fn push_path_encoded(out: &mut String, key: &str) {
    out.push_str(&s3_sigv4::uri_encode(key, false));
}

/// Appends `value` percent-encoded for a query name or value (`/` encoded too).
pub(crate) fn push_query_encoded(out: &mut String, value: &str) {
    out.push_str(&s3_sigv4::uri_encode(value, true));
}

const BASE64_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (what S3 uses for checksums, Content-MD5 and SSE-C keys):
/// the signer's encoder, so there is one.
pub(crate) use s3_sigv4::base64_encode;

/// Decodes standard padded base64; `None` for anything else.
pub(crate) fn base64_decode(input: &str) -> Option<Vec<u8>> {
    let bytes = input.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let quads = bytes.chunks(4);
    let count = quads.len();
    for (index, quad) in quads.enumerate() {
        let padding = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 || (padding > 0 && index + 1 != count) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quad[..4 - padding] {
            let value = BASE64_ALPHABET.iter().position(|&a| a == c)?;
            n = n << 6 | value as u32;
        }
        n <<= 6 * padding as u32;
        let decoded = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&decoded[..3 - padding]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in vectors {
            assert_eq!(base64_encode(plain.as_bytes()), encoded);
            assert_eq!(base64_decode(encoded).unwrap(), plain.as_bytes());
        }
        assert_eq!(base64_encode(&[0xfb, 0xff]), "+/8=");
        assert_eq!(base64_decode("Zm9v!A=="), None);
        assert_eq!(base64_decode("Zg="), None);
        assert_eq!(base64_decode("Zg==Zg=="), None);
    }

    #[test]
    fn path_encoding_keeps_slash_and_unreserved() {
        let mut out = String::new();
        push_path_encoded(&mut out, "a b/+%?#~é\n");
        assert_eq!(out, "a%20b/%2B%25%3F%23~%C3%A9%0A");
        let mut query = String::new();
        push_query_encoded(&mut query, "a/b c");
        assert_eq!(query, "a%2Fb%20c");
    }
}

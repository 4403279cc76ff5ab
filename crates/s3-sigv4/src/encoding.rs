//! Percent-encoding (the AWS flavour), hex and base64 helpers.
//!
//! AWS encodes every byte except the unreserved set `A-Z a-z 0-9 - _ . ~` as
//! `%XX` with uppercase hex digits. The path additionally keeps `/`.

use crate::error::InvalidUri;

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";
const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

/// `true` for the bytes AWS leaves unencoded: `A-Z a-z 0-9 - _ . ~`.
const UNRESERVED: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.' || b == b'~';
        byte += 1;
    }
    table
};

/// Whether AWS leaves `byte` unencoded.
#[inline]
pub(crate) const fn is_unreserved(byte: u8) -> bool {
    UNRESERVED[byte as usize]
}

/// Percent-encodes `input` with the AWS rules and returns the result.
///
/// Every byte outside `A-Z a-z 0-9 - _ . ~` becomes `%XX` (uppercase hex); `/`
/// is kept when `encode_slash` is `false`, which is what object keys in a path
/// need. Use the same function to build the URI that is sent, so the path on the
/// wire is byte-for-byte the canonical one.
///
/// ```
/// use s3_sigv4::uri_encode;
/// assert_eq!(uri_encode("photos/2024/a b+é.jpg", false), "photos/2024/a%20b%2B%C3%A9.jpg");
/// assert_eq!(uri_encode("a/b", true), "a%2Fb");
/// ```
pub fn uri_encode(input: impl AsRef<[u8]>, encode_slash: bool) -> String {
    let input = input.as_ref();
    let mut out = Vec::with_capacity(input.len() + input.len() / 4);
    uri_encode_into(input, encode_slash, &mut out);
    // Only ASCII is ever written.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends the AWS percent-encoding of `input` to `out` (see [`uri_encode`]).
pub fn uri_encode_into(input: &[u8], encode_slash: bool, out: &mut Vec<u8>) {
    let mut run_start = 0;
    for (index, &byte) in input.iter().enumerate() {
        if UNRESERVED[usize::from(byte)] || (byte == b'/' && !encode_slash) {
            continue;
        }
        out.extend_from_slice(&input[run_start..index]);
        push_percent(out, byte);
        run_start = index + 1;
    }
    out.extend_from_slice(&input[run_start..]);
}

/// Decodes `%XX` escapes; other bytes are taken literally (`+` stays `+`).
///
/// Returns `None` when a `%` is not followed by two hex digits.
///
/// ```
/// use s3_sigv4::uri_decode;
/// assert_eq!(uri_decode("a%20b%2B%C3%A9").unwrap(), "a b+é".as_bytes());
/// ```
pub fn uri_decode(input: impl AsRef<[u8]>) -> Option<Vec<u8>> {
    let input = input.as_ref();
    let mut out = Vec::with_capacity(input.len());
    let mut index = 0;
    while let Some(&byte) = input.get(index) {
        if byte == b'%' {
            out.push(decode_escape(input, index)?);
            index += 3;
        } else {
            out.push(byte);
            index += 1;
        }
    }
    Some(out)
}

/// Length of the longest prefix of `input` that is already in canonical form:
/// unreserved bytes, `/` when `keep_slash`, and `%XX` escapes with uppercase
/// hex digits of bytes that are not unreserved.
#[inline]
pub(crate) fn canonical_prefix_len(input: &[u8], keep_slash: bool) -> usize {
    let mut index = 0;
    while let Some(&byte) = input.get(index) {
        if UNRESERVED[usize::from(byte)] || (byte == b'/' && keep_slash) {
            index += 1;
        } else if byte == b'%' && is_canonical_escape(input, index) {
            index += 3;
        } else {
            break;
        }
    }
    index
}

#[inline]
fn is_canonical_escape(input: &[u8], percent_at: usize) -> bool {
    match (input.get(percent_at + 1), input.get(percent_at + 2)) {
        (Some(&high), Some(&low)) => is_canonical_escape_digits(high, low),
        _ => false,
    }
}

/// Whether `%` + `high` `low` is a canonical escape: uppercase hex digits of
/// a byte that is not unreserved.
#[inline]
pub(crate) fn is_canonical_escape_digits(high: u8, low: u8) -> bool {
    let (high, low) = (
        UPPER_HEX_VALUE[usize::from(high)],
        UPPER_HEX_VALUE[usize::from(low)],
    );
    (high | low) < 16 && !UNRESERVED[usize::from(high << 4 | low)]
}

/// The value of an uppercase hex digit, `0xFF` for every other byte.
const UPPER_HEX_VALUE: [u8; 256] = {
    let mut table = [0xFF; 256];
    let mut digit = 0;
    while digit < 16 {
        table[HEX_UPPER[digit] as usize] = digit as u8;
        digit += 1;
    }
    table
};

/// Writes the canonical (single) encoding of an already percent-encoded
/// component: escapes of unreserved bytes are decoded, other escapes are kept
/// with uppercase hex, and raw bytes outside the unreserved set are encoded.
/// `/` is kept (raw or escaped, as given) when `keep_slash` is set.
///
/// The result is the same whether the input was encoded by us, by another
/// encoder with a different reserved set, or not at all. Canonical input is
/// copied in one piece.
pub(crate) fn normalize_encoded_into(
    input: &[u8],
    keep_slash: bool,
    component: &'static str,
    out: &mut Vec<u8>,
) -> Result<(), InvalidUri> {
    let mut index = 0;
    loop {
        let canonical = canonical_prefix_len(&input[index..], keep_slash);
        out.extend_from_slice(&input[index..index + canonical]);
        index += canonical;
        let Some(&byte) = input.get(index) else {
            return Ok(());
        };
        if byte == b'%' {
            let decoded = decode_escape(input, index).ok_or(InvalidUri::BadPercentEncoding {
                component,
                offset: index,
            })?;
            if UNRESERVED[usize::from(decoded)] {
                out.push(decoded);
            } else {
                push_percent(out, decoded);
            }
            index += 3;
        } else {
            push_percent(out, byte);
            index += 1;
        }
    }
}

fn decode_escape(input: &[u8], percent_at: usize) -> Option<u8> {
    let high = hex_value(*input.get(percent_at + 1)?)?;
    let low = hex_value(*input.get(percent_at + 2)?)?;
    Some(high << 4 | low)
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

#[inline]
fn push_percent(out: &mut Vec<u8>, byte: u8) {
    out.extend_from_slice(&[
        b'%',
        HEX_UPPER[usize::from(byte >> 4)],
        HEX_UPPER[usize::from(byte & 0xF)],
    ]);
}

/// Two lowercase hex digits for every byte value.
const HEX_PAIRS: [[u8; 2]; 256] = {
    let mut table = [[0u8; 2]; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = [HEX_LOWER[byte >> 4], HEX_LOWER[byte & 0xF]];
        byte += 1;
    }
    table
};

/// Lowercase hex of a 32-byte digest.
#[inline]
pub(crate) fn hex32(bytes: &[u8; 32]) -> [u8; 64] {
    let mut out = [0u8; 64];
    for (pair, &byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair.copy_from_slice(&HEX_PAIRS[usize::from(byte)]);
    }
    out
}

/// Appends the lowercase hex form of `bytes` (one resize, then plain stores:
/// no capacity check per byte).
pub(crate) fn push_hex(bytes: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + 2 * bytes.len(), 0);
    for (pair, &byte) in out[start..].chunks_exact_mut(2).zip(bytes) {
        pair.copy_from_slice(&HEX_PAIRS[usize::from(byte)]);
    }
}

/// Parses 64 hex digits (either case) into 32 bytes.
pub(crate) fn parse_hex32(text: &str) -> Option<[u8; 32]> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        *slot = hex_value(pair[0])? << 4 | hex_value(pair[1])?;
    }
    Some(out)
}

/// Appends the lowercase hex form of `value` (no leading zeros; `0` for zero).
pub(crate) fn push_hex_usize(out: &mut Vec<u8>, value: usize) {
    let digits = hex_len(value as u64);
    for shift in (0..digits).rev() {
        out.push(HEX_LOWER[(value >> (shift * 4)) & 0xF]);
    }
}

/// Number of hex digits [`push_hex_usize`] writes for `value`.
pub(crate) fn hex_len(value: u64) -> usize {
    if value == 0 {
        1
    } else {
        (64 - value.leading_zeros() as usize).div_ceil(4)
    }
}

/// Standard base64 with padding (RFC 4648 §4): what POST policies, S3 checksum
/// headers, `Content-MD5` and SSE-C keys use. Public so that crates building on the
/// signer (s3-ops) share this one encoder.
pub fn base64_encode(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for group in input.chunks(3) {
        let b0 = group[0];
        let b1 = group.get(1).copied().unwrap_or(0);
        let b2 = group.get(2).copied().unwrap_or(0);
        let triple = u32::from(b0) << 16 | u32::from(b1) << 8 | u32::from(b2);
        for position in 0..4 {
            if position <= group.len() {
                let index = (triple >> (18 - 6 * position)) & 0x3F;
                out.push(char::from(ALPHABET[index as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encodes_reserved_and_unicode() {
        assert_eq!(uri_encode("test$file.text", false), "test%24file.text");
        assert_eq!(uri_encode("-._~AZaz09", true), "-._~AZaz09");
        assert_eq!(uri_encode("ሴ", true), "%E1%88%B4");
        assert_eq!(uri_encode("a/b c", false), "a/b%20c");
    }

    #[test]
    fn normalizes_existing_escapes() {
        let mut out = Vec::new();
        normalize_encoded_into(b"/a%7e%2f%c3%a9$ b", true, "path", &mut out).unwrap();
        assert_eq!(out, b"/a~%2F%C3%A9%24%20b");
        let err = normalize_encoded_into(b"ab%4", true, "path", &mut Vec::new());
        assert_eq!(
            err,
            Err(InvalidUri::BadPercentEncoding {
                component: "path",
                offset: 2
            })
        );
    }

    #[test]
    fn hex_and_base64() {
        assert_eq!(&hex32(&[0xAB; 32])[..4], b"abab");
        assert_eq!(
            parse_hex32(std::str::from_utf8(&hex32(&[7; 32])).unwrap()),
            Some([7; 32])
        );
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"f"), "Zg==");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
        let mut out = Vec::new();
        push_hex_usize(&mut out, 65536);
        assert_eq!(out, b"10000");
        assert_eq!(hex_len(0), 1);
        assert_eq!(hex_len(0x400), 3);
    }

    proptest! {
        #[test]
        fn encoding_round_trips_for_any_utf8(key in "\\PC*", encode_slash in any::<bool>()) {
            let encoded = uri_encode(&key, encode_slash);
            prop_assert!(encoded.bytes().all(|b| UNRESERVED[usize::from(b)] || b == b'%' || b == b'/'));
            prop_assert_eq!(uri_decode(&encoded).unwrap(), key.as_bytes());
            // Already-canonical input is a fixed point of normalization.
            let mut normalized = Vec::new();
            normalize_encoded_into(encoded.as_bytes(), !encode_slash, "path", &mut normalized).unwrap();
            prop_assert_eq!(normalized, encoded.as_bytes());
        }
    }
}

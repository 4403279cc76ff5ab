//! Canonicalization: the pieces of the canonical request.
//!
//! Everything writes into one caller-owned `Vec<u8>` so a signature costs a
//! single buffer, reused for the canonical request and the string to sign.

use std::ops::Range;

use http::HeaderMap;

use crate::encoding::{
    is_canonical_escape_digits, is_unreserved, normalize_encoded_into, uri_encode_into,
};
use crate::error::InvalidUri;
use crate::params::{HeaderSelection, UriRules};

/// Appends the canonical URI of `path` under `rules`.
pub(crate) fn canonical_uri_into(
    path: &str,
    rules: UriRules,
    out: &mut Vec<u8>,
) -> Result<(), InvalidUri> {
    let path = path.as_bytes();
    if path.is_empty() {
        out.push(b'/');
        return Ok(());
    }
    if path[0] != b'/' {
        return Err(InvalidUri::RelativePath);
    }
    let encode = |bytes: &[u8], out: &mut Vec<u8>| {
        if rules.double_encodes() {
            // Encoded again as sent: `%` becomes `%25`.
            uri_encode_into(bytes, false, out);
            Ok(())
        } else {
            normalize_encoded_into(bytes, true, "path", out)
        }
    };
    if rules.normalizes() {
        write_normalized_path(path, out, encode)
    } else {
        encode(path, out)
    }
}

/// Resolves `.` and `..` and collapses repeated slashes, then encodes each
/// remaining segment with `encode`.
fn write_normalized_path(
    path: &[u8],
    out: &mut Vec<u8>,
    encode: impl Fn(&[u8], &mut Vec<u8>) -> Result<(), InvalidUri>,
) -> Result<(), InvalidUri> {
    let mut segments: Vec<&[u8]> = Vec::new();
    let mut ends_with_slash = false;
    for segment in path.split(|&b| b == b'/') {
        ends_with_slash = false;
        match segment {
            b"" => ends_with_slash = true,
            b"." => ends_with_slash = true,
            b".." => {
                segments.pop();
                ends_with_slash = true;
            }
            _ => segments.push(segment),
        }
    }
    for segment in &segments {
        out.push(b'/');
        encode(segment, out)?;
    }
    if segments.is_empty() || ends_with_slash {
        out.push(b'/');
    }
    Ok(())
}

/// Appends the canonical query string: each name and value normalized to the
/// AWS encoding, pairs sorted by encoded name then encoded value, a missing
/// `=` treated as an empty value, empty pairs (`&&`) skipped.
pub(crate) fn canonical_query_into(query: &str, out: &mut Vec<u8>) -> Result<(), InvalidUri> {
    let query = query.as_bytes();
    if query.is_empty() {
        return Ok(());
    }
    // Queries built with `uri_encode` are already canonical: then only the
    // order changes and every pair is copied once. Otherwise normalize first.
    match canonical_pairs(query) {
        Some(pairs) => {
            write_sorted_pairs(pairs, query.len(), out);
            Ok(())
        }
        None => {
            let normalized = normalize_query(query)?;
            let pairs = canonical_pairs(&normalized).unwrap_or_default();
            write_sorted_pairs(pairs, normalized.len(), out);
            Ok(())
        }
    }
}

/// One `name[=value]` pair of a query already in canonical encoding.
struct QueryPair<'a> {
    /// [`sort_prefix`] of the name.
    prefix: u64,
    name: &'a [u8],
    value: &'a [u8],
    /// The whole pair as written, when it has an `=`.
    whole: Option<&'a [u8]>,
}

/// Splits a query into pairs if every name and value is already canonical
/// (one pass over the bytes; `None` at the first byte that needs rewriting).
fn canonical_pairs(query: &[u8]) -> Option<Vec<QueryPair<'_>>> {
    let mut pairs = Vec::with_capacity(query.len() / 12 + 1);
    let mut pair_start = 0;
    let mut equals: Option<usize> = None;
    let mut index = 0;
    loop {
        index += plain_run_len(query.get(index..).unwrap_or_default());
        match query.get(index) {
            Some(b'=') if equals.is_none() => {
                equals = Some(index - pair_start);
                index += 1;
            }
            Some(b'%') => match (query.get(index + 1), query.get(index + 2)) {
                (Some(&high), Some(&low)) if is_canonical_escape_digits(high, low) => index += 3,
                _ => return None,
            },
            Some(b'&') | None => {
                if index > pair_start {
                    pairs.push(QueryPair::new(&query[pair_start..index], equals));
                }
                if index >= query.len() {
                    return Some(pairs);
                }
                index += 1;
                pair_start = index;
                equals = None;
            }
            // A second `=` or a byte that must be encoded.
            Some(_) => return None,
        }
    }
}

/// Length of the leading run of unreserved bytes. Checks eight bytes per
/// step without branching on each one: query components are short runs
/// separated by `=`, `&` and escapes, so per-byte branches mispredict a lot.
#[inline]
fn plain_run_len(bytes: &[u8]) -> usize {
    let mut index = 0;
    for block in bytes.chunks_exact(8) {
        let all_plain = block.iter().fold(true, |all, &b| all & is_unreserved(b));
        if !all_plain {
            break;
        }
        index += 8;
    }
    while bytes.get(index).is_some_and(|&b| is_unreserved(b)) {
        index += 1;
    }
    index
}

impl<'a> QueryPair<'a> {
    fn new(pair: &'a [u8], equals: Option<usize>) -> Self {
        let (name, value, whole) = match equals {
            Some(eq) => (&pair[..eq], &pair[eq + 1..], Some(pair)),
            None => (pair, &b""[..], None),
        };
        Self {
            prefix: sort_prefix(name),
            name,
            value,
            whole,
        }
    }
}

/// The first 8 bytes of `name`, big-endian and zero-padded: orders like the
/// name itself when names hold no zero byte (canonical query names and header
/// names do not), so most comparisons of a sort are one integer compare.
#[inline]
fn sort_prefix(name: &[u8]) -> u64 {
    let mut prefix = [0u8; 8];
    let head = name.len().min(8);
    prefix[..head].copy_from_slice(&name[..head]);
    u64::from_be_bytes(prefix)
}

fn write_sorted_pairs(mut pairs: Vec<QueryPair<'_>>, size_hint: usize, out: &mut Vec<u8>) {
    pairs.sort_unstable_by(|a, b| {
        a.prefix
            .cmp(&b.prefix)
            .then_with(|| a.name.cmp(b.name))
            .then_with(|| a.value.cmp(b.value))
    });
    out.reserve(size_hint + pairs.len());
    for (index, pair) in pairs.iter().enumerate() {
        if index > 0 {
            out.push(b'&');
        }
        match pair.whole {
            Some(whole) => out.extend_from_slice(whole),
            None => {
                out.extend_from_slice(pair.name);
                out.push(b'=');
            }
        }
    }
}

/// Rewrites a query with every name and value in canonical encoding (pair
/// order kept, empty pairs dropped, `=` added to valueless names).
fn normalize_query(query: &[u8]) -> Result<Vec<u8>, InvalidUri> {
    let mut normalized = Vec::with_capacity(query.len() + query.len() / 2);
    let mut offset = 0;
    for pair in query.split(|&b| b == b'&') {
        let pair_offset = offset;
        offset += pair.len() + 1;
        if pair.is_empty() {
            continue;
        }
        let (name, value) = match pair.iter().position(|&b| b == b'=') {
            Some(eq) => (&pair[..eq], &pair[eq + 1..]),
            None => (pair, &b""[..]),
        };
        if !normalized.is_empty() {
            normalized.push(b'&');
        }
        normalize_encoded_into(name, false, "query", &mut normalized)
            .map_err(|e| shift_offset(e, pair_offset))?;
        normalized.push(b'=');
        normalize_encoded_into(value, false, "query", &mut normalized)
            .map_err(|e| shift_offset(e, pair_offset + name.len() + 1))?;
    }
    Ok(normalized)
}

fn shift_offset(error: InvalidUri, by: usize) -> InvalidUri {
    match error {
        InvalidUri::BadPercentEncoding { component, offset } => InvalidUri::BadPercentEncoding {
            component,
            offset: offset + by,
        },
        other => other,
    }
}

/// A signed header value with its name.
#[derive(Clone, Copy)]
struct HeaderEntry<'a> {
    /// [`sort_prefix`] of the name.
    prefix: u64,
    name: &'a str,
    /// Which distinct name (map entry) this value belongs to.
    group: usize,
    /// Position in iteration order: keeps repeated values in order.
    order: usize,
    value: &'a [u8],
}

const EMPTY_ENTRY: HeaderEntry<'static> = HeaderEntry {
    prefix: 0,
    name: "",
    group: 0,
    order: 0,
    value: &[],
};

/// Appends `name:value\n` for every signed header (sorted by name, repeated
/// headers joined with `,` in order, values trimmed and inner runs of spaces
/// and tabs folded to one space), then `\n`, then the `;`-separated signed
/// header names. Returns the range of the signed header names in `out`.
///
/// `host` is the value to sign when `headers` has no `host` entry.
pub(crate) fn canonical_headers_into(
    headers: &HeaderMap,
    host: Option<&[u8]>,
    selection: &HeaderSelection,
    out: &mut Vec<u8>,
) -> Range<usize> {
    // Typical requests have a handful of headers: sort references to them on
    // the stack and only allocate for unusually many.
    const ON_STACK: usize = 16;
    let needed = headers.len() + 1;
    let mut stack = [EMPTY_ENTRY; ON_STACK];
    let mut heap: Vec<HeaderEntry<'_>> = Vec::new();
    let storage: &mut [HeaderEntry<'_>] = if needed <= ON_STACK {
        &mut stack[..]
    } else {
        heap.resize(needed, EMPTY_ENTRY);
        &mut heap[..]
    };
    let mut count = 0;
    let mut group = 0;
    let mut previous_name: &str = "";
    for (order, (name, value)) in headers.iter().enumerate() {
        let name = name.as_str();
        // The map yields every value of one entry in a row, all with the
        // very same name slice: a pointer check finds the groups without
        // comparing names.
        if !std::ptr::eq(name, previous_name) {
            group += 1;
            previous_name = name;
        }
        let value = value.as_bytes();
        if selection.signs(name, value) {
            storage[count] = HeaderEntry {
                prefix: sort_prefix(name.as_bytes()),
                name,
                group,
                order,
                value,
            };
            count += 1;
        }
    }
    if let Some(host) = host {
        storage[count] = HeaderEntry {
            prefix: sort_prefix(b"host"),
            name: "host",
            group: group + 1,
            order: usize::MAX,
            value: host,
        };
        count += 1;
    }
    let entries = &mut storage[..count];
    entries.sort_unstable_by(|a, b| {
        a.prefix
            .cmp(&b.prefix)
            .then_with(|| a.name.cmp(b.name))
            .then(a.order.cmp(&b.order))
    });

    let mut previous_group = None;
    for entry in entries.iter() {
        if previous_group == Some(entry.group) {
            out.push(b',');
        } else {
            if previous_group.is_some() {
                out.push(b'\n');
            }
            out.extend_from_slice(entry.name.as_bytes());
            out.push(b':');
        }
        write_trimmed_value(entry.value, out);
        previous_group = Some(entry.group);
    }
    if previous_group.is_some() {
        out.push(b'\n');
    }
    out.push(b'\n');
    let signed_start = out.len();
    previous_group = None;
    for entry in entries.iter() {
        if previous_group == Some(entry.group) {
            continue;
        }
        if previous_group.is_some() {
            out.push(b';');
        }
        out.extend_from_slice(entry.name.as_bytes());
        previous_group = Some(entry.group);
    }
    signed_start..out.len()
}

#[inline]
fn is_blank(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

/// Trims spaces and tabs at both ends and folds inner runs into one space.
#[inline]
fn write_trimmed_value(value: &[u8], out: &mut Vec<u8>) {
    let start = value
        .iter()
        .position(|&b| !is_blank(b))
        .unwrap_or(value.len());
    let end = value
        .iter()
        .rposition(|&b| !is_blank(b))
        .map_or(start, |i| i + 1);
    let value = &value[start..end];
    // Most values (hashes, dates, hosts) have no blank at all, and most of
    // the rest no tab and no double space: copy them whole. The blank test is
    // a branch-free reduction the compiler vectorizes.
    // Space and tab are the only bytes <= 0x20 a header value may hold.
    let any_blank = value.iter().fold(u8::MAX, |lowest, &b| lowest.min(b)) <= b' ';
    let needs_folding = any_blank
        && value
            .windows(2)
            .any(|pair| pair[0] == b'\t' || (is_blank(pair[0]) && is_blank(pair[1])));
    if !needs_folding {
        out.extend_from_slice(value);
        return;
    }
    // Branch-free: every byte is written (blanks as a space) and the cursor
    // only advances past a blank that does not follow another blank.
    let start = out.len();
    out.resize(start + value.len(), 0);
    let written = {
        let target = &mut out[start..];
        let mut cursor = 0;
        let mut previous_blank = false;
        for &byte in value {
            let blank = is_blank(byte);
            // `cursor` never passes the number of bytes read so far.
            target[cursor] = if blank { b' ' } else { byte };
            cursor += usize::from(!(blank && previous_blank));
            previous_blank = blank;
        }
        cursor
    };
    out.truncate(start + written);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(path: &str, rules: UriRules) -> String {
        let mut out = Vec::new();
        canonical_uri_into(path, rules, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn query(q: &str) -> String {
        let mut out = b"prefix".to_vec();
        canonical_query_into(q, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn s3_paths_are_kept_and_encoded_once() {
        assert_eq!(uri("/test$file.text", UriRules::S3), "/test%24file.text");
        assert_eq!(uri("/a//b/./c/../d", UriRules::S3), "/a//b/./c/../d");
        assert_eq!(uri("/k%20ey%2a", UriRules::S3), "/k%20ey%2A");
        assert_eq!(uri("", UriRules::S3), "/");
    }

    #[test]
    fn normalization_and_double_encoding_combine_freely() {
        let kept_double = UriRules::new(false, true);
        assert_eq!(uri("/a//b/./c/../d", kept_double), "/a//b/./c/../d");
        assert_eq!(uri("/a%20b c", kept_double), "/a%2520b%20c");
        let normalized_single = UriRules::new(true, false);
        assert_eq!(uri("/a//b/./c/../d", normalized_single), "/a/b/d");
        assert_eq!(uri("/x/%2a%7e b/..", normalized_single), "/x/");
        assert_eq!(uri("/x/%2a%7e b", normalized_single), "/x/%2A~%20b");
        let mut out = Vec::new();
        assert!(canonical_uri_into("/a/%zz", normalized_single, &mut out).is_err());
    }

    #[test]
    fn generic_paths_are_normalized_and_encoded_twice() {
        assert_eq!(uri("/example/..", UriRules::GENERIC), "/");
        assert_eq!(uri("//example//", UriRules::GENERIC), "/example/");
        assert_eq!(uri("/./example", UriRules::GENERIC), "/example");
        assert_eq!(uri("/a/b/.", UriRules::GENERIC), "/a/b/");
        assert_eq!(uri("/a%20b", UriRules::GENERIC), "/a%2520b");
    }

    #[test]
    fn query_sorted_by_name_then_value() {
        assert_eq!(query("b=2&a=2&a=1&c"), "prefixa=1&a=2&b=2&c=");
        assert_eq!(query("a-b=1&a=2"), "prefixa=2&a-b=1");
        assert_eq!(query("x=a+b%7e&&y=%e1%88%b4"), "prefixx=a%2Bb~&y=%E1%88%B4");
        assert_eq!(query("k=a=b"), "prefixk=a%3Db");
        let mut out = Vec::new();
        assert_eq!(
            canonical_query_into("ok=1&bad=%zz", &mut out),
            Err(InvalidUri::BadPercentEncoding {
                component: "query",
                offset: 9
            })
        );
    }

    proptest::proptest! {
        /// However a query is encoded (raw bytes, lowercase escapes, escaped
        /// unreserved bytes), it canonicalizes like its `uri_encode` form.
        #[test]
        fn every_encoding_of_a_query_canonicalizes_alike(
            pairs in proptest::collection::vec(("\\PC{0,6}", "\\PC{0,6}"), 1..8),
            style in 0u8..3,
        ) {
            let encode = |text: &str| -> String {
                match style {
                    0 => crate::uri_encode(text, true),
                    // Lowercase hex digits in the escapes only.
                    1 => {
                        let encoded = crate::uri_encode(text, true);
                        let mut pieces = encoded.split('%');
                        let mut out = pieces.next().unwrap_or_default().to_owned();
                        for piece in pieces {
                            let (hex, rest) = piece.split_at(2);
                            out.push('%');
                            out.push_str(&hex.to_lowercase());
                            out.push_str(rest);
                        }
                        out
                    }
                    _ => text
                        .bytes()
                        .map(|b| format!("%{b:02x}"))
                        .collect(),
                }
            };
            let reference: Vec<String> = pairs
                .iter()
                .map(|(n, v)| format!("{}={}", crate::uri_encode(n, true), crate::uri_encode(v, true)))
                .collect();
            let variant: Vec<String> =
                pairs.iter().map(|(n, v)| format!("{}={}", encode(n), encode(v))).collect();
            let canonical = |q: &str| {
                let mut out = Vec::new();
                canonical_query_into(q, &mut out).map(|()| out)
            };
            proptest::prop_assert_eq!(
                canonical(&variant.join("&")).unwrap(),
                canonical(&reference.join("&")).unwrap()
            );
        }
    }

    #[test]
    fn header_values_trimmed_and_folded() {
        let mut out = Vec::new();
        write_trimmed_value(b" a\t b  c ", &mut out);
        assert_eq!(out, b"a b c");
        out.clear();
        write_trimmed_value(b"   ", &mut out);
        assert_eq!(out, b"");
        out.clear();
        write_trimmed_value(b"x y", &mut out);
        assert_eq!(out, b"x y");
    }
}

//! Canonicalization: the pieces of the canonical request.
//!
//! Everything writes into one caller-owned `Vec<u8>` so a signature costs a
//! single buffer, reused for the canonical request and the string to sign.

use std::ops::Range;

use http::HeaderMap;

use crate::encoding::{normalize_encoded_into, uri_encode_into};
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
    match rules {
        UriRules::S3 => normalize_encoded_into(path, true, "path", out),
        UriRules::Generic => {
            write_normalized_path(path, out);
            Ok(())
        }
    }
}

/// Resolves `.` and `..`, collapses repeated slashes, then encodes the result
/// (again: `%` becomes `%25`).
fn write_normalized_path(path: &[u8], out: &mut Vec<u8>) {
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
        uri_encode_into(segment, true, out);
    }
    if segments.is_empty() || ends_with_slash {
        out.push(b'/');
    }
}

/// Appends the canonical query string: each name and value normalized to the
/// AWS encoding, pairs sorted by encoded name then encoded value, a missing
/// `=` treated as an empty value, empty pairs (`&&`) skipped.
pub(crate) fn canonical_query_into(query: &str, out: &mut Vec<u8>) -> Result<(), InvalidUri> {
    let query = query.as_bytes();
    if query.is_empty() {
        return Ok(());
    }
    // Normalize every pair into scratch space at the end of `out`, sort the
    // pair ranges, then append the pairs in order and drop the scratch space.
    let scratch_start = out.len();
    let mut pairs: Vec<QueryPair> = Vec::with_capacity(query.len() / 8 + 1);
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
        let name_start = out.len();
        normalize_encoded_into(name, false, "query", out)
            .map_err(|e| shift_offset(e, pair_offset))?;
        let value_start = out.len();
        normalize_encoded_into(value, false, "query", out)
            .map_err(|e| shift_offset(e, pair_offset + name.len() + 1))?;
        pairs.push(QueryPair {
            name: name_start..value_start,
            value: value_start..out.len(),
        });
    }
    let scratch_end = out.len();
    {
        let scratch = &out[..];
        pairs.sort_unstable_by(|a, b| {
            scratch[a.name.clone()]
                .cmp(&scratch[b.name.clone()])
                .then_with(|| scratch[a.value.clone()].cmp(&scratch[b.value.clone()]))
        });
    }
    out.reserve(scratch_end - scratch_start + pairs.len() * 2);
    for (index, pair) in pairs.iter().enumerate() {
        if index > 0 {
            out.push(b'&');
        }
        out.extend_from_within(pair.name.clone());
        out.push(b'=');
        out.extend_from_within(pair.value.clone());
    }
    out.drain(scratch_start..scratch_end);
    Ok(())
}

struct QueryPair {
    name: Range<usize>,
    value: Range<usize>,
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
    let mut entries: Vec<(&str, usize, &[u8])> = Vec::with_capacity(headers.len() + 1);
    for (index, (name, value)) in headers.iter().enumerate() {
        let name = name.as_str();
        let value = value.as_bytes();
        if selection.signs(name, value) {
            entries.push((name, index, value));
        }
    }
    if let Some(host) = host {
        entries.push(("host", usize::MAX, host));
    }
    // The index keeps repeated headers in their original order.
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));

    let mut previous: Option<&str> = None;
    for &(name, _, value) in &entries {
        if previous == Some(name) {
            out.push(b',');
        } else {
            if previous.is_some() {
                out.push(b'\n');
            }
            out.extend_from_slice(name.as_bytes());
            out.push(b':');
        }
        write_trimmed_value(value, out);
        previous = Some(name);
    }
    if previous.is_some() {
        out.push(b'\n');
    }
    out.push(b'\n');
    let signed_start = out.len();
    previous = None;
    for &(name, _, _) in &entries {
        if previous == Some(name) {
            continue;
        }
        if previous.is_some() {
            out.push(b';');
        }
        out.extend_from_slice(name.as_bytes());
        previous = Some(name);
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
    let mut run_start = 0;
    let mut index = 0;
    while index < value.len() {
        if !is_blank(value[index]) {
            index += 1;
            continue;
        }
        // `value[index]` starts a blank run; a lone space needs no rewrite.
        let run_end = value[index..]
            .iter()
            .position(|&b| !is_blank(b))
            .map_or(value.len(), |n| index + n);
        if run_end - index == 1 && value[index] == b' ' {
            index = run_end;
            continue;
        }
        out.extend_from_slice(&value[run_start..index]);
        out.push(b' ');
        run_start = run_end;
        index = run_end;
    }
    out.extend_from_slice(&value[run_start..]);
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
    fn generic_paths_are_normalized_and_encoded_twice() {
        assert_eq!(uri("/example/..", UriRules::Generic), "/");
        assert_eq!(uri("//example//", UriRules::Generic), "/example/");
        assert_eq!(uri("/./example", UriRules::Generic), "/example");
        assert_eq!(uri("/a/b/.", UriRules::Generic), "/a/b/");
        assert_eq!(uri("/a%20b", UriRules::Generic), "/a%2520b");
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

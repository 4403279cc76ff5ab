//! The string-level half of the rules-engine standard library (and of the AWS
//! extension functions): pure functions over `&str` that return positions
//! rather than copies, so the evaluator can keep results borrowed from the
//! caller's parameters.
//!
//! Semantics follow the Smithy rules-engine specification ("Rules engine
//! standard library" and "AWS rules engine library functions"); where the
//! specification is silent the choice is documented on the function.

use std::borrow::Cow;
use std::net::Ipv6Addr;
use std::ops::Range;

/// `isValidHostLabel(value, allowSubDomains)`: an RFC 1123 host label is 1 to
/// 63 ASCII letters, digits or hyphens, neither starting nor ending with a
/// hyphen. With `allow_sub_domains` every `.`-separated part must be one
/// (so empty parts, as in `a..b` or `a.`, are rejected).
pub fn is_valid_host_label(value: &str, allow_sub_domains: bool) -> bool {
    if allow_sub_domains {
        value.split('.').all(is_single_host_label)
    } else {
        is_single_host_label(value)
    }
}

fn is_single_host_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// `aws.isVirtualHostableS3Bucket(value, allowSubDomains)`: the value can be
/// used as the left-most label(s) of a virtual-hosted-style S3 host name. It
/// must be a valid host label (or dotted labels, with `allow_sub_domains`),
/// 3 to 63 characters long, contain no upper-case letters, and not look like
/// an IPv4 address.
pub fn is_virtual_hostable_s3_bucket(value: &str, allow_sub_domains: bool) -> bool {
    (3..=63).contains(&value.len())
        && !value.bytes().any(|b| b.is_ascii_uppercase())
        && !looks_like_ipv4(value)
        && is_valid_host_label(value, allow_sub_domains)
}

/// Four dot-separated groups of one to three decimal digits (the shape S3
/// and botocore use to refuse IP-like bucket names and to flag IP hosts).
pub fn looks_like_ipv4(value: &str) -> bool {
    let mut groups = 0;
    for group in value.split('.') {
        groups += 1;
        if groups > 4
            || !(1..=3).contains(&group.len())
            || !group.bytes().all(|b| b.is_ascii_digit())
        {
            return false;
        }
    }
    groups == 4
}

/// `substring(input, start, stop, reverse)`: byte range of the result, or
/// `None` (the empty optional) when `start >= stop`, the input is shorter
/// than `stop`, or the input contains any non-ASCII character. With
/// `reverse` the indices count from the end of the string.
pub fn substring(input: &str, start: usize, stop: usize, reverse: bool) -> Option<Range<usize>> {
    if start >= stop || input.len() < stop || !input.is_ascii() {
        return None;
    }
    Some(if reverse {
        input.len() - stop..input.len() - start
    } else {
        start..stop
    })
}

/// `uriEncode(value)`: RFC 3986 percent-encoding of the UTF-8 bytes of every
/// character except the unreserved ones (`A-Z a-z 0-9 - _ . ~`), with
/// upper-case hex digits. Borrows the input when nothing needs encoding.
pub fn uri_encode(value: &str) -> Cow<'_, str> {
    fn unreserved(b: u8) -> bool {
        b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~')
    }
    if value.bytes().all(unreserved) {
        return Cow::Borrowed(value);
    }
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(value.len() + 8);
    for b in value.bytes() {
        if unreserved(b) {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xf)] as char);
        }
    }
    Cow::Owned(out)
}

/// Positions of the parts of a URL accepted by [`parse_url`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts {
    /// `http` or `https` as written (matched case-insensitively).
    pub scheme: Range<usize>,
    /// Host plus optional `:port`, exactly as written.
    pub authority: Range<usize>,
    /// The path as written; empty when the URL has none.
    pub path: Range<usize>,
    /// Host is an IPv4 address (dotted quad) or a bracketed IPv6 address.
    pub is_ip: bool,
}

/// `parseURL(value)`. Accepts `http(s)://authority[/path]`.
///
/// Rejected (the empty optional): other schemes, a query (the spec requires
/// this), a fragment, userinfo (the spec forbids it in `authority`; refusing
/// is simpler than silently dropping credentials), an empty host, a
/// non-numeric or out-of-range port, a malformed bracketed IPv6 host, and
/// host characters outside RFC 3986's reg-name set.
///
/// Kept as written: the authority including any port — even a default one,
/// as in the spec's own `http://example.com:80/foo/bar` example — and the
/// path, which is empty when absent (the rules concatenate
/// `{url#authority}{url#path}`, so `https://example.com` must not gain a
/// `/`). The normalized path is derived by [`normalized_path`].
pub fn parse_url(value: &str) -> Option<UrlParts> {
    let (scheme, rest) = value.split_once("://")?;
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return None;
    }
    if rest.contains(['?', '#']) {
        return None;
    }
    let authority_start = scheme.len() + 3;
    let authority_len = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    if authority.contains('@') {
        return None;
    }
    let (host, port) = if let Some(after_bracket) = authority.strip_prefix('[') {
        let (inner, tail) = after_bracket.split_once(']')?;
        // An optional zone id ("%25eth0" or "%eth0") may follow the address.
        let address = inner.split_once('%').map_or(inner, |(addr, _zone)| addr);
        address.parse::<Ipv6Addr>().ok()?;
        let port = match tail {
            "" => None,
            _ => Some(tail.strip_prefix(':')?),
        };
        (None, port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(authority), None),
        }
    };
    if let Some(port) = port
        && (port.is_empty()
            || !port.bytes().all(|b| b.is_ascii_digit())
            || port.parse::<u16>().is_err())
    {
        return None;
    }
    let is_ip = match host {
        None => true, // bracketed IPv6, validated above
        Some(host) => {
            let reg_name_byte =
                |b: u8| b.is_ascii_alphanumeric() || b"-._~%!$&'()*+,;=".contains(&b);
            if host.is_empty() || !host.bytes().all(reg_name_byte) {
                return None;
            }
            looks_like_ipv4(host)
        }
    };
    let path_start = authority_start + authority_len;
    Some(UrlParts {
        scheme: 0..scheme.len(),
        authority: authority_start..path_start,
        path: path_start..value.len(),
        is_ip,
    })
}

/// `normalizedPath` of a parsed URL: the path, guaranteed to start and end
/// with `/` (`/` for an empty path). No dot-segment removal or re-encoding
/// is done; the spec asks for neither.
pub fn normalized_path(path: &str) -> Cow<'_, str> {
    if path.is_empty() {
        Cow::Borrowed("/")
    } else if path.ends_with('/') {
        Cow::Borrowed(path)
    } else {
        Cow::Owned(format!("{path}/"))
    }
}

/// Positions of the parts of an ARN accepted by [`parse_arn`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArnParts {
    /// The partition.
    pub partition: Range<usize>,
    /// The service.
    pub service: Range<usize>,
    /// The region (may be empty).
    pub region: Range<usize>,
    /// The account id (may be empty).
    pub account_id: Range<usize>,
    /// The resource part split on both `:` and `/`.
    pub resource_id: Vec<Range<usize>>,
}

/// `aws.parseArn(value)`: `arn:partition:service:region:account:resource`,
/// where partition, service and resource must be non-empty (region and
/// account may be empty, as in `arn:aws:s3:::bucket_name`). The resource is
/// everything after the fifth `:`, so it may itself contain `:`.
pub fn parse_arn(value: &str) -> Option<ArnParts> {
    if !value.starts_with("arn:") {
        return None;
    }
    let mut fields = [0..0, 0..0, 0..0, 0..0];
    let mut pos = 4;
    for field in &mut fields {
        let len = value[pos..].find(':')?;
        *field = pos..pos + len;
        pos += len + 1;
    }
    let [partition, service, region, account_id] = fields;
    if partition.is_empty() || service.is_empty() || pos >= value.len() {
        return None;
    }
    let mut resource_id = Vec::with_capacity(4);
    let mut start = pos;
    for (i, b) in value.bytes().enumerate().skip(pos) {
        if b == b':' || b == b'/' {
            resource_id.push(start..i);
            start = i + 1;
        }
    }
    resource_id.push(start..value.len());
    Some(ArnParts {
        partition,
        service,
        region,
        account_id,
        resource_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_labels() {
        assert!(is_valid_host_label("us-west-2", false));
        assert!(!is_valid_host_label("a b", false));
        assert!(!is_valid_host_label("-a", false));
        assert!(!is_valid_host_label("a-", false));
        assert!(!is_valid_host_label("a.b", false));
        assert!(is_valid_host_label("a.b", true));
        assert!(!is_valid_host_label("a..b", true));
        assert!(!is_valid_host_label("", false));
        assert!(is_valid_host_label(&"a".repeat(63), false));
        assert!(!is_valid_host_label(&"a".repeat(64), false));
    }

    #[test]
    fn virtual_hostable() {
        assert!(is_virtual_hostable_s3_bucket("my-bucket", false));
        assert!(!is_virtual_hostable_s3_bucket("bucket.name", false));
        assert!(is_virtual_hostable_s3_bucket("bucket.name", true));
        assert!(!is_virtual_hostable_s3_bucket("ab", false));
        assert!(!is_virtual_hostable_s3_bucket("Bucket", false));
        assert!(!is_virtual_hostable_s3_bucket("192.168.5.4", true));
        assert!(!is_virtual_hostable_s3_bucket("99_ab", false));
        assert!(is_virtual_hostable_s3_bucket(
            "mybucket--usw2-az1--x-s3",
            false
        ));
    }

    #[test]
    fn substrings() {
        assert_eq!(substring("abcdef", 0, 4, false), Some(0..4));
        assert_eq!(substring("abcdef", 0, 4, true), Some(2..6));
        assert_eq!(substring("abc", 0, 4, false), None);
        assert_eq!(substring("abcdef", 2, 2, false), None);
        assert_eq!(substring("abcdé", 0, 2, false), None);
    }

    #[test]
    fn uri_encoding() {
        assert!(matches!(uri_encode("plain-Name_1.~"), Cow::Borrowed(_)));
        assert_eq!(uri_encode("bucket!"), "bucket%21");
        assert_eq!(uri_encode("a b/c"), "a%20b%2Fc");
        assert_eq!(uri_encode("é"), "%C3%A9");
    }

    fn url(value: &str) -> Option<(&str, &str, &str, bool)> {
        parse_url(value).map(|u| {
            (
                &value[u.scheme],
                &value[u.authority],
                &value[u.path],
                u.is_ip,
            )
        })
    }

    #[test]
    fn urls_from_the_spec() {
        assert_eq!(
            url("https://example.com"),
            Some(("https", "example.com", "", false))
        );
        assert_eq!(url("https://example.com:8443?foo=bar&faz=baz"), None);
        assert_eq!(
            url("http://example.com:80/foo/bar"),
            Some(("http", "example.com:80", "/foo/bar", false))
        );
        assert_eq!(
            url("https://127.0.0.1"),
            Some(("https", "127.0.0.1", "", true))
        );
        assert_eq!(
            url("https://[fe80::1]"),
            Some(("https", "[fe80::1]", "", true))
        );
        assert_eq!(normalized_path(""), "/");
        assert_eq!(normalized_path("/foo/bar"), "/foo/bar/");
    }

    #[test]
    fn urls_rejected() {
        assert_eq!(url("abcde://nota#url"), None);
        assert_eq!(url("https://host#frag"), None);
        assert_eq!(url("https://user@host"), None);
        assert_eq!(url("https://"), None);
        assert_eq!(url("https://host:99999"), None);
        assert_eq!(url("https://host:"), None);
        assert_eq!(url("https://[zz::1]"), None);
        assert_eq!(url("https://a b"), None);
        assert_eq!(
            url("https://10.0.1.12:433"),
            Some(("https", "10.0.1.12:433", "", true))
        );
    }

    fn arn(value: &str) -> Option<Vec<&str>> {
        parse_arn(value).map(|a| {
            let mut v = vec![
                &value[a.partition],
                &value[a.service],
                &value[a.region],
                &value[a.account_id],
            ];
            v.extend(a.resource_id.iter().map(|r| &value[r.clone()]));
            v
        })
    }

    #[test]
    fn arns_from_the_spec() {
        assert_eq!(
            arn("arn:aws:sns:us-west-2:012345678910:example-sns-topic-name"),
            Some(vec![
                "aws",
                "sns",
                "us-west-2",
                "012345678910",
                "example-sns-topic-name"
            ])
        );
        assert_eq!(arn("11111111-2222-3333-4444-555555555555"), None);
        assert_eq!(
            arn("arn:aws:ec2:us-east-1:012345678910:vpc/vpc-0e9801d129EXAMPLE"),
            Some(vec![
                "aws",
                "ec2",
                "us-east-1",
                "012345678910",
                "vpc",
                "vpc-0e9801d129EXAMPLE"
            ])
        );
        assert_eq!(
            arn("arn:aws:iam::012345678910:user/johndoe"),
            Some(vec!["aws", "iam", "", "012345678910", "user", "johndoe"])
        );
        assert_eq!(
            arn("arn:aws:s3:::bucket_name"),
            Some(vec!["aws", "s3", "", "", "bucket_name"])
        );
        assert_eq!(
            arn("arn:aws:s3:us-west-2:123456789012:accesspoint:my:end"),
            Some(vec![
                "aws",
                "s3",
                "us-west-2",
                "123456789012",
                "accesspoint",
                "my",
                "end"
            ])
        );
        assert_eq!(arn("arn:aws:s3:us-west-2:123456789012:"), None);
        assert_eq!(arn("arn::s3:us-west-2:123456789012:x"), None);
        assert_eq!(arn("arn:aws:s3:us-west-2"), None);
    }
}

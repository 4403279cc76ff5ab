//! Validated bucket names and object keys.

use std::fmt;

use crate::error::{Error, InvalidInput};

/// A bucket name that S3 accepts.
///
/// [`BucketName::new`] applies the rules for general-purpose buckets: 3–63 characters of
/// lowercase letters, digits, `.` and `-`, starting and ending with a letter or digit, no
/// `..`, not shaped like an IPv4 address, and none of the reserved prefixes/suffixes.
/// [`BucketName::new_relaxed`] accepts the looser names some S3-compatible stores allow
/// (upper case, `_`, up to 255 characters); those are always addressed path-style.
///
/// Both also take the ARN of an S3 Multi-Region Access Point,
/// `arn:aws:s3::<account-id>:accesspoint/<alias>` (see
/// [`BucketName::multi_region_access_point`]); other ARNs (single-region access points,
/// Outposts, Object Lambda) are rejected.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BucketName {
    name: String,
    dns_compatible: bool,
    /// For a Multi-Region Access Point ARN: where its alias starts in `name`.
    alias_start: Option<usize>,
}

impl BucketName {
    /// Validates a general-purpose S3 bucket name, or a Multi-Region Access Point ARN.
    pub fn new(name: impl Into<String>) -> Result<Self, Error> {
        let name = name.into();
        if name.starts_with("arn:") {
            return Self::multi_region_access_point_arn(name);
        }
        match strict_bucket_rule_violation(&name) {
            None => Ok(BucketName {
                name,
                dns_compatible: true,
                alias_start: None,
            }),
            Some(reason) => Err(InvalidInput::BucketName { name, reason }.into()),
        }
    }

    /// Validates a name under the looser rules of legacy / S3-compatible stores:
    /// 1–255 characters of ASCII letters, digits, `.`, `-` and `_`; or a Multi-Region
    /// Access Point ARN.
    pub fn new_relaxed(name: impl Into<String>) -> Result<Self, Error> {
        let name = name.into();
        if name.starts_with("arn:") {
            return Self::multi_region_access_point_arn(name);
        }
        let reason = if name.is_empty() || name.len() > 255 {
            Some("must be 1 to 255 characters long")
        } else if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        {
            Some("may contain only ASCII letters, digits, '.', '-' and '_'")
        } else {
            None
        };
        match reason {
            Some(reason) => Err(InvalidInput::BucketName { name, reason }.into()),
            None => {
                let dns_compatible = strict_bucket_rule_violation(&name).is_none();
                Ok(BucketName {
                    name,
                    dns_compatible,
                    alias_start: None,
                })
            }
        }
    }

    fn multi_region_access_point_arn(arn: String) -> Result<Self, Error> {
        match multi_region_access_point_alias(&arn) {
            Ok(alias) => Ok(BucketName {
                alias_start: Some(arn.len() - alias.len()),
                name: arn,
                dns_compatible: false,
            }),
            Err(reason) => Err(InvalidInput::BucketName { name: arn, reason }.into()),
        }
    }

    /// The name (the whole ARN for a Multi-Region Access Point).
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// True if the name can be used as a DNS label prefix (virtual-hosted addressing).
    /// False for a Multi-Region Access Point ARN: its alias, not the ARN, is in the host.
    pub fn is_dns_compatible(&self) -> bool {
        self.dns_compatible
    }

    /// The alias (`<name>.mrap`) if this is a Multi-Region Access Point ARN.
    ///
    /// Requests to it go to `https://<alias>.accesspoint.s3-global.amazonaws.com`, which
    /// routes each one to a bucket in one of the access point's regions; they are signed
    /// with SigV4a for every region (see [`OperationRequest::region_set`]).
    ///
    /// [`OperationRequest::region_set`]: crate::OperationRequest::region_set
    pub fn multi_region_access_point(&self) -> Option<&str> {
        self.alias_start.map(|start| &self.name[start..])
    }

    /// Fails for a Multi-Region Access Point, which `reason` says cannot be used here.
    pub(crate) fn reject_multi_region_access_point(
        &self,
        reason: &'static str,
    ) -> Result<(), Error> {
        match self.alias_start {
            None => Ok(()),
            Some(_) => Err(InvalidInput::BucketName {
                name: self.name.clone(),
                reason,
            }
            .into()),
        }
    }
}

/// The longest Multi-Region Access Point alias that still makes a valid host name
/// (253 characters with `.accesspoint.s3-global.amazonaws.com`).
const MAX_ALIAS_LEN: usize = 253 - ".accesspoint.s3-global.amazonaws.com".len();

/// The alias of a Multi-Region Access Point ARN,
/// `arn:aws:s3::<12-digit account id>:accesspoint/<alias>.mrap`, or why `arn` is not one.
fn multi_region_access_point_alias(arn: &str) -> Result<&str, &'static str> {
    let mut parts = arn.splitn(6, ':');
    let (Some("arn"), Some(partition), Some(service), Some(region), Some(account), Some(resource)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err("an ARN must be arn:<partition>:<service>:<region>:<account-id>:<resource>");
    };
    match service {
        "s3" => {}
        "s3-outposts" => return Err("S3 on Outposts ARNs are not supported"),
        "s3-object-lambda" => return Err("Object Lambda access point ARNs are not supported"),
        _ => return Err("an ARN must be of an S3 Multi-Region Access Point (service s3)"),
    }
    let Some(alias) = resource.strip_prefix("accesspoint/") else {
        return Err("only Multi-Region Access Point ARNs (accesspoint/<alias>) are supported");
    };
    if !region.is_empty() {
        return Err(
            "single-region access point ARNs are not supported (only Multi-Region Access \
             Points, whose ARNs have no region)",
        );
    }
    if partition != "aws" {
        return Err("Multi-Region Access Points exist only in the aws partition");
    }
    if account.len() != 12 || !account.bytes().all(|b| b.is_ascii_digit()) {
        return Err("the ARN's account id must be 12 digits");
    }
    if !alias.ends_with(".mrap") {
        return Err("a Multi-Region Access Point alias must end in .mrap");
    }
    let label_ok = |label: &str| {
        let bytes = label.as_bytes();
        (1..=63).contains(&bytes.len())
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
            && bytes.first() != Some(&b'-')
            && bytes.last() != Some(&b'-')
    };
    if alias.len() > MAX_ALIAS_LEN || !alias.split('.').all(label_ok) {
        return Err(
            "a Multi-Region Access Point alias must be a host name: labels of 1 to 63 \
             lowercase letters, digits and '-' (not first or last), joined by '.'",
        );
    }
    Ok(alias)
}

fn strict_bucket_rule_violation(name: &str) -> Option<&'static str> {
    const RESERVED_PREFIXES: &[&str] = &["xn--", "sthree-", "amzn-s3-demo-"];
    const RESERVED_SUFFIXES: &[&str] = &["-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"];
    let bytes = name.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if !(3..=63).contains(&bytes.len()) {
        Some("must be 3 to 63 characters long")
    } else if !bytes.iter().all(|b| alnum(b) || *b == b'.' || *b == b'-') {
        Some("may contain only lowercase letters, digits, '.' and '-'")
    } else if !bytes.first().is_some_and(alnum) || !bytes.last().is_some_and(alnum) {
        Some("must start and end with a lowercase letter or digit")
    } else if name.contains("..") {
        Some("must not contain two adjacent periods")
    } else if name.contains(".-") || name.contains("-.") {
        Some("must not have a period next to a hyphen")
    } else if name.parse::<std::net::Ipv4Addr>().is_ok() {
        Some("must not be formatted as an IP address")
    } else if RESERVED_PREFIXES.iter().any(|p| name.starts_with(p)) {
        Some("uses a reserved prefix (xn--, sthree-, amzn-s3-demo-)")
    } else if RESERVED_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        Some("uses a reserved suffix (-s3alias, --ol-s3, .mrap, --x-s3, --table-s3)")
    } else {
        None
    }
}

impl fmt::Display for BucketName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl fmt::Debug for BucketName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.name, f)
    }
}

impl std::str::FromStr for BucketName {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        BucketName::new(s)
    }
}

impl TryFrom<&str> for BucketName {
    type Error = Error;
    fn try_from(s: &str) -> Result<Self, Error> {
        BucketName::new(s)
    }
}

impl TryFrom<String> for BucketName {
    type Error = Error;
    fn try_from(s: String) -> Result<Self, Error> {
        BucketName::new(s)
    }
}

/// An object key: 1 to 1024 bytes of UTF-8, with no filesystem meaning.
///
/// Repeated slashes, `.`/`..` segments, spaces, `+`, `%`, `?`, `#`, Unicode and control
/// characters are all kept: the key is percent-encoded byte for byte when it is put into a
/// request path, so the key S3 stores is exactly the key given.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(String);

impl ObjectKey {
    /// The longest key S3 accepts, in bytes.
    pub const MAX_LEN: usize = 1024;

    /// Validates a key (non-empty, at most 1024 bytes).
    pub fn new(key: impl Into<String>) -> Result<Self, Error> {
        let key = key.into();
        if key.is_empty() {
            return Err(InvalidInput::EmptyKey.into());
        }
        if key.len() > Self::MAX_LEN {
            return Err(InvalidInput::KeyTooLong { len: key.len() }.into());
        }
        Ok(ObjectKey(key))
    }

    /// The key.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl TryFrom<&str> for ObjectKey {
    type Error = Error;
    fn try_from(s: &str) -> Result<Self, Error> {
        ObjectKey::new(s)
    }
}

impl TryFrom<String> for ObjectKey {
    type Error = Error;
    fn try_from(s: String) -> Result<Self, Error> {
        ObjectKey::new(s)
    }
}

impl std::str::FromStr for ObjectKey {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        ObjectKey::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket_reason(name: &str) -> Option<&'static str> {
        match BucketName::new(name) {
            Ok(_) => None,
            Err(Error::InvalidInput(InvalidInput::BucketName { reason, .. })) => Some(reason),
            Err(other) => panic!("unexpected error {other:?}"),
        }
    }

    #[test]
    fn accepts_valid_bucket_names() {
        for name in [
            "abc",
            "my-bucket",
            "my.bucket.name",
            "a1b2c3",
            &"a".repeat(63),
        ] {
            assert!(BucketName::new(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn rejects_invalid_bucket_names_with_reason() {
        let cases = [
            ("ab", "3 to 63"),
            ("My-Bucket", "only lowercase"),
            ("my_bucket", "only lowercase"),
            ("-bucket", "start and end"),
            ("bucket.", "start and end"),
            ("my..bucket", "adjacent periods"),
            ("my.-bucket", "period next to a hyphen"),
            ("192.168.5.4", "IP address"),
            ("xn--bucket", "reserved prefix"),
            ("bucket-s3alias", "reserved suffix"),
        ];
        for (name, fragment) in cases {
            let reason = bucket_reason(name).unwrap_or_else(|| panic!("{name} accepted"));
            assert!(reason.contains(fragment), "{name}: {reason}");
        }
        assert_eq!(
            bucket_reason(&"a".repeat(64)),
            Some("must be 3 to 63 characters long")
        );
    }

    #[test]
    fn relaxed_names_are_not_dns_compatible() {
        let legacy = BucketName::new_relaxed("Legacy_Bucket").unwrap();
        assert!(!legacy.is_dns_compatible());
        assert!(
            BucketName::new_relaxed("ok-bucket")
                .unwrap()
                .is_dns_compatible()
        );
        assert!(BucketName::new_relaxed("bad/name").is_err());
    }

    const MRAP_ARN: &str = "arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap";

    #[test]
    fn accepts_multi_region_access_point_arns() {
        for parse in [BucketName::new, BucketName::new_relaxed] {
            let bucket = parse(MRAP_ARN.to_owned()).unwrap();
            assert_eq!(bucket.as_str(), MRAP_ARN);
            assert_eq!(bucket.to_string(), MRAP_ARN);
            assert_eq!(
                bucket.multi_region_access_point(),
                Some("mfzwi23gnjvgw.mrap")
            );
            assert!(!bucket.is_dns_compatible());
        }
        let dotted = BucketName::new("arn:aws:s3::000000000000:accesspoint/a-1.b2.mrap").unwrap();
        assert_eq!(dotted.multi_region_access_point(), Some("a-1.b2.mrap"));
        assert_eq!(
            BucketName::new("my-bucket")
                .unwrap()
                .multi_region_access_point(),
            None
        );
    }

    #[test]
    fn rejects_other_arns_with_reason() {
        let long_alias = format!(
            "arn:aws:s3::123456789012:accesspoint/{}.mrap",
            vec!["a".repeat(60); 4].join(".")
        );
        let cases = [
            ("arn:aws:s3::123456789012", "arn:<partition>"),
            ("arn:", "arn:<partition>"),
            (
                "arn:aws-cn:s3::123456789012:accesspoint/x.mrap",
                "aws partition",
            ),
            (
                "arn:aws-us-gov:s3::123456789012:accesspoint/x.mrap",
                "aws partition",
            ),
            (
                "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01234567890123456/accesspoint/ap",
                "Outposts",
            ),
            (
                "arn:aws:s3-object-lambda:us-west-2:123456789012:accesspoint/olap",
                "Object Lambda",
            ),
            ("arn:aws:sqs::123456789012:accesspoint/x.mrap", "service s3"),
            (
                "arn:aws:s3:us-west-2:123456789012:accesspoint/my-ap",
                "single-region",
            ),
            (
                "arn:aws:s3:us-west-2:123456789012:accesspoint/x.mrap",
                "single-region",
            ),
            ("arn:aws:s3:::my-bucket", "accesspoint/<alias>"),
            (
                "arn:aws:s3::123456789012:bucket/x.mrap",
                "accesspoint/<alias>",
            ),
            (
                "arn:aws:s3::123456789012:accesspoint:x.mrap",
                "accesspoint/<alias>",
            ),
            ("arn:aws:s3::12345678901:accesspoint/x.mrap", "12 digits"),
            ("arn:aws:s3::1234567890123:accesspoint/x.mrap", "12 digits"),
            ("arn:aws:s3::12345678901a:accesspoint/x.mrap", "12 digits"),
            (
                "arn:aws:s3::123456789012:accesspoint/myalias",
                "end in .mrap",
            ),
            ("arn:aws:s3::123456789012:accesspoint/", "end in .mrap"),
            (
                "arn:aws:s3::123456789012:accesspoint/Alias.mrap",
                "host name",
            ),
            ("arn:aws:s3::123456789012:accesspoint/.mrap", "host name"),
            ("arn:aws:s3::123456789012:accesspoint/a..mrap", "host name"),
            ("arn:aws:s3::123456789012:accesspoint/-a.mrap", "host name"),
            ("arn:aws:s3::123456789012:accesspoint/a-.mrap", "host name"),
            ("arn:aws:s3::123456789012:accesspoint/a_b.mrap", "host name"),
            ("arn:aws:s3::123456789012:accesspoint/a/b.mrap", "host name"),
            ("arn:aws:s3::123456789012:accesspoint/a:b.mrap", "host name"),
            (long_alias.as_str(), "host name"),
        ];
        for (name, fragment) in cases {
            for parse in [BucketName::new, BucketName::new_relaxed] {
                match parse(name.to_owned()) {
                    Err(Error::InvalidInput(InvalidInput::BucketName { name: got, reason })) => {
                        assert_eq!(got, name);
                        assert!(reason.contains(fragment), "{name}: {reason}");
                    }
                    other => panic!("{name}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn keys_are_bounded() {
        assert_eq!(ObjectKey::new(""), Err(InvalidInput::EmptyKey.into()));
        assert!(ObjectKey::new("k".repeat(1024)).is_ok());
        assert_eq!(
            ObjectKey::new("é".repeat(513)),
            Err(InvalidInput::KeyTooLong { len: 1026 }.into())
        );
        assert_eq!(ObjectKey::new("../a//b").unwrap().as_str(), "../a//b");
    }
}

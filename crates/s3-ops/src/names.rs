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
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BucketName {
    name: String,
    dns_compatible: bool,
}

impl BucketName {
    /// Validates a general-purpose S3 bucket name.
    pub fn new(name: impl Into<String>) -> Result<Self, Error> {
        let name = name.into();
        match strict_bucket_rule_violation(&name) {
            None => Ok(BucketName {
                name,
                dns_compatible: true,
            }),
            Some(reason) => Err(InvalidInput::BucketName { name, reason }.into()),
        }
    }

    /// Validates a name under the looser rules of legacy / S3-compatible stores:
    /// 1–255 characters of ASCII letters, digits, `.`, `-` and `_`.
    pub fn new_relaxed(name: impl Into<String>) -> Result<Self, Error> {
        let name = name.into();
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
                })
            }
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// True if the name can be used as a DNS label prefix (virtual-hosted addressing).
    pub fn is_dns_compatible(&self) -> bool {
        self.dns_compatible
    }
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

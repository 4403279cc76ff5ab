//! Validated bucket names and object keys.

use std::fmt;

use crate::error::{Error, InvalidInput};

/// A bucket name that S3 accepts, or another way AWS lets a request name a bucket.
///
/// [`BucketName::new`] applies the rules for general-purpose buckets: 3–63 characters of
/// lowercase letters, digits, `.` and `-`, starting and ending with a letter or digit, no
/// `..`, not shaped like an IPv4 address, and none of the reserved prefixes/suffixes.
/// [`BucketName::new_relaxed`] accepts the looser names some S3-compatible stores allow
/// (upper case, `_`, up to 255 characters); those are always addressed path-style.
///
/// Both also take (see [`BucketName::kind`]):
/// - an access point alias (`…-s3alias`) or Object Lambda access point alias (`…--ol-s3`),
///   used like a bucket name but always addressed virtual-hosted;
/// - an S3 Express One Zone directory bucket, `<base>--<zone-id>--x-s3`, addressed at its
///   zone's endpoint and signed with session credentials;
/// - a single-region access point ARN, `arn:<partition>:s3:<region>:<account-id>:accesspoint/<name>`;
/// - an Object Lambda access point ARN, `arn:<partition>:s3-object-lambda:<region>:<account-id>:accesspoint/<name>`;
/// - a Multi-Region Access Point ARN, `arn:aws:s3::<account-id>:accesspoint/<alias>.mrap`.
///
/// S3 on Outposts ARNs and bucket ARNs are refused with the reason.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BucketName {
    name: String,
    kind: Kind,
}

/// What a [`BucketName`] names, with byte ranges into the name for the parts an address or
/// a signature needs (no copies).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    GeneralPurpose {
        dns_compatible: bool,
    },
    AccessPointAlias,
    Directory {
        zone: Span,
    },
    AccessPoint {
        object_lambda: bool,
        arn: Box<ArnSpans>,
    },
    MultiRegion {
        alias_start: usize,
    },
}

type Span = (usize, usize);

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct ArnSpans {
    partition: Span,
    region: Span,
    account: Span,
    name: Span,
}

/// What a [`BucketName`] names, from [`BucketName::kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BucketKind<'a> {
    /// A bucket name (general-purpose, or a relaxed name of an S3-compatible store).
    GeneralPurpose,
    /// An access point alias (`…-s3alias`) or Object Lambda access point alias
    /// (`…--ol-s3`): a bucket name that AWS routes to the access point.
    AccessPointAlias,
    /// An S3 Express One Zone directory bucket in the zone `zone_id` (`usw2-az1`, ...).
    Directory {
        /// The Availability Zone or Local Zone id from the name.
        zone_id: &'a str,
    },
    /// A single-region access point ARN.
    AccessPoint(AccessPointArn<'a>),
    /// An Object Lambda access point ARN (requests are signed for `s3-object-lambda`).
    ObjectLambdaAccessPoint(AccessPointArn<'a>),
    /// A Multi-Region Access Point ARN with its alias (`<name>.mrap`).
    MultiRegionAccessPoint {
        /// The alias, which ends in `.mrap`.
        alias: &'a str,
    },
}

/// The parts of a single-region (or Object Lambda) access point ARN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AccessPointArn<'a> {
    /// `aws`, `aws-cn`, `aws-us-gov`, ...
    pub partition: &'a str,
    /// The access point's region: requests are signed for it.
    pub region: &'a str,
    /// The 12-digit account id.
    pub account_id: &'a str,
    /// The access point's name.
    pub name: &'a str,
}

impl BucketName {
    /// Validates a general-purpose S3 bucket name, an access point alias, a directory bucket
    /// name, or an access point ARN (see the type's docs).
    pub fn new(name: impl Into<String>) -> Result<Self, Error> {
        let name = name.into();
        if name.starts_with("arn:") {
            return Self::arn(name);
        }
        match classify_strict(&name) {
            Ok(kind) => Ok(BucketName { name, kind }),
            Err(reason) => Err(InvalidInput::BucketName { name, reason }.into()),
        }
    }

    /// Validates a name under the looser rules of legacy / S3-compatible stores:
    /// 1–255 characters of ASCII letters, digits, `.`, `-` and `_`; or anything
    /// [`BucketName::new`] accepts.
    pub fn new_relaxed(name: impl Into<String>) -> Result<Self, Error> {
        let name = name.into();
        if name.starts_with("arn:") {
            return Self::arn(name);
        }
        if let Ok(kind) = classify_strict(&name) {
            return Ok(BucketName { name, kind });
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
            None => Ok(BucketName {
                name,
                kind: Kind::GeneralPurpose {
                    dns_compatible: false,
                },
            }),
        }
    }

    fn arn(arn: String) -> Result<Self, Error> {
        match classify_arn(&arn) {
            Ok(kind) => Ok(BucketName { name: arn, kind }),
            Err(reason) => Err(InvalidInput::BucketName { name: arn, reason }.into()),
        }
    }

    /// The name (the whole ARN for an access point).
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// What the name names.
    pub fn kind(&self) -> BucketKind<'_> {
        let part = |(start, end): Span| &self.name[start..end];
        match &self.kind {
            Kind::GeneralPurpose { .. } => BucketKind::GeneralPurpose,
            Kind::AccessPointAlias => BucketKind::AccessPointAlias,
            Kind::Directory { zone } => BucketKind::Directory {
                zone_id: part(*zone),
            },
            Kind::AccessPoint { object_lambda, arn } => {
                let arn = AccessPointArn {
                    partition: part(arn.partition),
                    region: part(arn.region),
                    account_id: part(arn.account),
                    name: part(arn.name),
                };
                if *object_lambda {
                    BucketKind::ObjectLambdaAccessPoint(arn)
                } else {
                    BucketKind::AccessPoint(arn)
                }
            }
            Kind::MultiRegion { alias_start } => BucketKind::MultiRegionAccessPoint {
                alias: &self.name[*alias_start..],
            },
        }
    }

    /// True if the name itself can be the first label of a host name (virtual-hosted
    /// addressing). False for ARNs (a host is made from their parts) and relaxed names.
    pub fn is_dns_compatible(&self) -> bool {
        match self.kind {
            Kind::GeneralPurpose { dns_compatible } => dns_compatible,
            Kind::AccessPointAlias | Kind::Directory { .. } => true,
            Kind::AccessPoint { .. } | Kind::MultiRegion { .. } => false,
        }
    }

    /// The alias (`<name>.mrap`) if this is a Multi-Region Access Point ARN.
    ///
    /// Requests to it go to `https://<alias>.accesspoint.s3-global.amazonaws.com`, which
    /// routes each one to a bucket in one of the access point's regions; they are signed
    /// with SigV4a for every region (see [`OperationRequest::region_set`]).
    ///
    /// [`OperationRequest::region_set`]: crate::OperationRequest::region_set
    pub fn multi_region_access_point(&self) -> Option<&str> {
        match self.kind() {
            BucketKind::MultiRegionAccessPoint { alias } => Some(alias),
            _ => None,
        }
    }

    /// True for an S3 Express One Zone directory bucket.
    pub fn is_directory_bucket(&self) -> bool {
        matches!(self.kind, Kind::Directory { .. })
    }

    /// Fails unless this names a bucket itself (not an access point of any kind): what
    /// bucket-level operations such as CreateBucket need.
    pub(crate) fn require_bucket(&self) -> Result<(), Error> {
        let reason = match self.kind {
            Kind::GeneralPurpose { .. } | Kind::Directory { .. } => return Ok(()),
            Kind::AccessPointAlias => {
                "is an access point alias; CreateBucket and other bucket-level operations need \
                 the bucket's own name"
            }
            Kind::AccessPoint { .. } => {
                "is an access point ARN; CreateBucket and other bucket-level operations need \
                 the bucket's own name"
            }
            Kind::MultiRegion { .. } => {
                "is a Multi-Region Access Point; CreateBucket and other bucket-level operations \
                 need the bucket's own name"
            }
        };
        Err(InvalidInput::BucketName {
            name: self.name.clone(),
            reason,
        }
        .into())
    }
}

/// The longest Multi-Region Access Point alias that still makes a valid host name
/// (253 characters with `.accesspoint.s3-global.amazonaws.com`).
const MAX_ALIAS_LEN: usize = 253 - ".accesspoint.s3-global.amazonaws.com".len();

/// The kind of an ARN given as a bucket, or why it cannot be one. ARNs are
/// `arn:<partition>:<service>:<region>:<account-id>:<resource>`.
fn classify_arn(arn: &str) -> Result<Kind, &'static str> {
    let fields: Vec<(usize, &str)> = {
        let mut at = 0;
        arn.splitn(6, ':')
            .map(|field| {
                let start = at;
                at += field.len() + 1;
                (start, field)
            })
            .collect()
    };
    let [
        (_, "arn"),
        (p_at, partition),
        (_, service),
        (r_at, region),
        (a_at, account),
        (res_at, resource),
    ] = fields[..]
    else {
        return Err("an ARN must be arn:<partition>:<service>:<region>:<account-id>:<resource>");
    };
    let object_lambda = match service {
        "s3" => false,
        "s3-object-lambda" => true,
        "s3-outposts" => {
            return Err(
                "S3 on Outposts ARNs are not supported (Outposts has its own endpoints and \
                 signing name); use the Outposts access point alias instead",
            );
        }
        _ => return Err("an ARN must be of an S3 access point (service s3 or s3-object-lambda)"),
    };
    let Some(name) = resource
        .strip_prefix("accesspoint/")
        .or_else(|| resource.strip_prefix("accesspoint:"))
    else {
        return Err(
            "only access point ARNs (…:accesspoint/<name>) are supported; for a bucket ARN \
             give the bucket's name",
        );
    };
    if account.len() != 12 || !account.bytes().all(|b| b.is_ascii_digit()) {
        return Err("the ARN's account id must be 12 digits");
    }
    let span = |at: usize, text: &str| (at, at + text.len());
    if region.is_empty() {
        if object_lambda {
            return Err("an Object Lambda access point ARN must name its region");
        }
        validate_multi_region_alias(partition, name)?;
        return Ok(Kind::MultiRegion {
            alias_start: arn.len() - name.len(),
        });
    }
    let Some(known) = crate::partition::named(partition) else {
        return Err("the ARN's partition is not an AWS partition (aws, aws-cn, aws-us-gov, …)");
    };
    if !is_host_label(region) {
        return Err("the ARN's region must be lowercase letters, digits and '-'");
    }
    if crate::partition::of_region(region) != known {
        return Err("the ARN's region is not in the ARN's partition");
    }
    if name.contains(['/', ':']) {
        return Err("an access point ARN takes one name after accesspoint/, nothing more");
    }
    if !(3..=50).contains(&name.len()) || !is_host_label(name) {
        return Err(
            "an access point name must be 3 to 50 lowercase letters, digits and '-' (not \
             first or last)",
        );
    }
    Ok(Kind::AccessPoint {
        object_lambda,
        arn: Box::new(ArnSpans {
            partition: span(p_at, partition),
            region: span(r_at, region),
            account: span(a_at, account),
            name: span(res_at + resource.len() - name.len(), name),
        }),
    })
}

/// Why `alias` cannot be the alias of a Multi-Region Access Point ARN in `partition`.
fn validate_multi_region_alias(partition: &str, alias: &str) -> Result<(), &'static str> {
    if partition != "aws" {
        return Err("Multi-Region Access Points exist only in the aws partition");
    }
    if !alias.ends_with(".mrap") {
        return Err(
            "an access point ARN without a region must be of a Multi-Region Access Point, \
             whose alias ends in .mrap",
        );
    }
    if alias.len() > MAX_ALIAS_LEN || !alias.split('.').all(is_host_label) {
        return Err(
            "a Multi-Region Access Point alias must be a host name: labels of 1 to 63 \
             lowercase letters, digits and '-' (not first or last), joined by '.'",
        );
    }
    Ok(())
}

/// 1 to 63 lowercase letters, digits and `-`, not starting or ending with `-`.
fn is_host_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first() != Some(&b'-')
        && bytes.last() != Some(&b'-')
}

/// Suffixes AWS reserves for names that are not general-purpose buckets.
const ACCESS_POINT_ALIAS_SUFFIXES: [&str; 2] = ["-s3alias", "--ol-s3"];
const DIRECTORY_BUCKET_SUFFIX: &str = "--x-s3";

/// The kind of a (non-ARN) name under the strict rules, or the rule it breaks.
fn classify_strict(name: &str) -> Result<Kind, &'static str> {
    const RESERVED_PREFIXES: &[&str] = &["xn--", "sthree-", "amzn-s3-demo-"];
    const RESERVED_SUFFIXES: &[&str] = &[".mrap", "--table-s3"];
    let bytes = name.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if !(3..=63).contains(&bytes.len()) {
        Err("must be 3 to 63 characters long")
    } else if !bytes.iter().all(|b| alnum(b) || *b == b'.' || *b == b'-') {
        Err("may contain only lowercase letters, digits, '.' and '-'")
    } else if !bytes.first().is_some_and(alnum) || !bytes.last().is_some_and(alnum) {
        Err("must start and end with a lowercase letter or digit")
    } else if name.contains("..") {
        Err("must not contain two adjacent periods")
    } else if name.contains(".-") || name.contains("-.") {
        Err("must not have a period next to a hyphen")
    } else if name.parse::<std::net::Ipv4Addr>().is_ok() {
        Err("must not be formatted as an IP address")
    } else if RESERVED_PREFIXES.iter().any(|p| name.starts_with(p)) {
        Err("uses a reserved prefix (xn--, sthree-, amzn-s3-demo-)")
    } else if RESERVED_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        Err("uses a reserved suffix (.mrap, --table-s3)")
    } else if let Some(rest) = name.strip_suffix(DIRECTORY_BUCKET_SUFFIX) {
        directory_zone(name, rest).map(|zone| Kind::Directory { zone })
    } else if ACCESS_POINT_ALIAS_SUFFIXES
        .iter()
        .any(|s| name.ends_with(s))
    {
        if name.contains('.') {
            Err("an access point alias has no '.'")
        } else {
            Ok(Kind::AccessPointAlias)
        }
    } else {
        Ok(Kind::GeneralPurpose {
            dns_compatible: true,
        })
    }
}

/// The zone id's span in a directory bucket `name` (`rest` is the name without `--x-s3`):
/// `<base>--<zone-id>`, the zone id being labels of lowercase letters and digits joined by
/// single `-` (`usw2-az1`, `use1-lax1-az1`).
fn directory_zone(name: &str, rest: &str) -> Result<Span, &'static str> {
    const FORMAT: &str =
        "a directory bucket name must be <base-name>--<zone-id>--x-s3, e.g. logs--usw2-az1--x-s3";
    let Some((base, zone)) = rest.rsplit_once("--") else {
        return Err(FORMAT);
    };
    let zone_ok = !zone.is_empty()
        && zone.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        });
    if base.is_empty() || base.ends_with('-') || base.contains("--") || !zone_ok {
        return Err(FORMAT);
    }
    if name.contains('.') {
        return Err("a directory bucket name has no '.'");
    }
    let start = base.len() + 2;
    Ok((start, start + zone.len()))
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
            ("bucket.mrap", "reserved suffix"),
            ("tables--table-s3", "reserved suffix"),
            ("my.ap-abc-s3alias", "alias has no '.'"),
            ("logs--x-s3", "<base-name>--<zone-id>--x-s3"),
            ("logs--usw2_az1--x-s3", "only lowercase"),
            ("logs---usw2-az1--x-s3", "<base-name>--<zone-id>--x-s3"),
            ("logs--usw2--az1--x-s3", "<base-name>--<zone-id>--x-s3"),
            ("lo.gs--usw2-az1--x-s3", "has no '.'"),
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
    fn aliases_and_directory_buckets_are_names_of_their_own_kind() {
        for alias in [
            "my-ap-hrzrlukc5m36ft7okagglf3gmwluquse1b-s3alias",
            "my-olap-abc123--ol-s3",
        ] {
            let bucket = BucketName::new(alias).unwrap();
            assert_eq!(bucket.kind(), BucketKind::AccessPointAlias, "{alias}");
            assert!(bucket.is_dns_compatible());
            assert_eq!(BucketName::new_relaxed(alias).unwrap(), bucket);
        }
        for (name, zone) in [
            ("logs--usw2-az1--x-s3", "usw2-az1"),
            ("my-data-2024--use1-az10--x-s3", "use1-az10"),
            ("b--usw2-lax1-az1--x-s3", "usw2-lax1-az1"),
        ] {
            let bucket = BucketName::new(name).unwrap();
            assert_eq!(
                bucket.kind(),
                BucketKind::Directory { zone_id: zone },
                "{name}"
            );
            assert!(bucket.is_directory_bucket());
        }
        assert_eq!(
            BucketName::new("photos").unwrap().kind(),
            BucketKind::GeneralPurpose
        );
    }

    #[test]
    fn access_point_arns_give_their_parts() {
        for (arn, object_lambda) in [
            ("arn:aws:s3:us-west-2:123456789012:accesspoint/my-ap", false),
            ("arn:aws:s3:us-west-2:123456789012:accesspoint:my-ap", false),
            (
                "arn:aws:s3-object-lambda:us-west-2:123456789012:accesspoint/my-ap",
                true,
            ),
        ] {
            for parse in [BucketName::new, BucketName::new_relaxed] {
                let bucket = parse(arn.to_owned()).unwrap();
                let expected = AccessPointArn {
                    partition: "aws",
                    region: "us-west-2",
                    account_id: "123456789012",
                    name: "my-ap",
                };
                let kind = bucket.kind();
                match (object_lambda, kind) {
                    (false, BucketKind::AccessPoint(parts))
                    | (true, BucketKind::ObjectLambdaAccessPoint(parts)) => {
                        assert_eq!(parts, expected, "{arn}")
                    }
                    _ => panic!("{arn}: {kind:?}"),
                }
                assert!(!bucket.is_dns_compatible());
                assert_eq!(bucket.as_str(), arn);
            }
        }
        let gov = BucketName::new("arn:aws-us-gov:s3:us-gov-west-1:123456789012:accesspoint/ap1")
            .unwrap();
        assert!(matches!(
            gov.kind(),
            BucketKind::AccessPoint(AccessPointArn {
                partition: "aws-us-gov",
                ..
            })
        ));
        let china =
            BucketName::new("arn:aws-cn:s3:cn-north-1:123456789012:accesspoint/ap1").unwrap();
        assert!(matches!(
            china.kind(),
            BucketKind::AccessPoint(AccessPointArn {
                region: "cn-north-1",
                ..
            })
        ));
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
                "arn:aws:s3-object-lambda::123456789012:accesspoint/olap",
                "Object Lambda access point ARN must name its region",
            ),
            ("arn:aws:sqs::123456789012:accesspoint/x.mrap", "service s3"),
            (
                "arn:aws:s3:us-west-2:123456789012:accesspoint/x.mrap",
                "3 to 50 lowercase",
            ),
            (
                "arn:aws:s3:us-west-2:123456789012:accesspoint/My-AP",
                "3 to 50 lowercase",
            ),
            (
                "arn:aws:s3:us-west-2:123456789012:accesspoint/ab",
                "3 to 50 lowercase",
            ),
            (
                "arn:aws:s3:us-west-2:123456789012:accesspoint/ap/object/key",
                "one name after accesspoint/",
            ),
            (
                "arn:aws:s3:us-west-2:123456789012:accesspoint:ap:extra",
                "one name after accesspoint/",
            ),
            (
                "arn:aws:s3:US-WEST-2:123456789012:accesspoint/ap1",
                "region must be lowercase",
            ),
            (
                "arn:aws:s3:cn-north-1:123456789012:accesspoint/ap1",
                "not in the ARN's partition",
            ),
            (
                "arn:aws-mars:s3:mars-1:123456789012:accesspoint/ap1",
                "not an AWS partition",
            ),
            ("arn:aws:s3:::my-bucket", "bucket ARN"),
            (
                "arn:aws:s3::123456789012:bucket/x.mrap",
                "only access point ARNs",
            ),
            ("arn:aws:s3::12345678901:accesspoint/x.mrap", "12 digits"),
            ("arn:aws:s3::1234567890123:accesspoint/x.mrap", "12 digits"),
            ("arn:aws:s3::12345678901a:accesspoint/x.mrap", "12 digits"),
            (
                "arn:aws:s3::123456789012:accesspoint/myalias",
                "ends in .mrap",
            ),
            ("arn:aws:s3::123456789012:accesspoint/", "ends in .mrap"),
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

//! Validated bucket names and object keys.

use std::fmt;

use crate::error::{Error, InvalidInput};

/// A bucket name that S3 accepts, or another way AWS lets a request name a bucket.
///
/// [`BucketName::new`] applies the rules for general-purpose buckets: 3–63 characters of
/// lowercase letters, digits, `.` and `-`, starting and ending with a letter or digit, no
/// `..`, not shaped like an IPv4 address, and none of the reserved prefixes/suffixes.
/// [`BucketName::new_relaxed`] accepts the looser names some S3-compatible stores allow
/// (upper case, `_`, other punctuation, up to 255 bytes; never `/` or control characters);
/// those are addressed path-style, percent-encoded, unless they can be a host label.
///
/// Both also take (see [`BucketName::kind`]), parsed as the AWS SDKs' S3 endpoint rules
/// parse them:
/// - an access point alias (`…-s3alias`) or Object Lambda access point alias (`…--ol-s3`),
///   used like a bucket name but always addressed virtual-hosted;
/// - an S3 Express One Zone directory bucket, `<base>--<zone-id>--x-s3`, or an access point
///   of one, `<name>--<zone-id>--xa-s3`: addressed at the zone's endpoint and signed with
///   session credentials;
/// - an S3 on Outposts access point alias (`…--op-s3`, 50 to 63 characters);
/// - a single-region access point ARN, `arn:<partition>:s3:<region>:<account-id>:accesspoint/<name>`;
/// - an Object Lambda access point ARN, `arn:<partition>:s3-object-lambda:<region>:<account-id>:accesspoint/<name>`;
/// - an S3 on Outposts access point ARN,
///   `arn:<partition>:s3-outposts:<region>:<account-id>:outpost/<outpost-id>/accesspoint/<name>`;
/// - a Multi-Region Access Point ARN, `arn:<partition>:s3::<account-id>:accesspoint/<alias>`.
///
/// Bucket ARNs and other ARNs are refused with the reason.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BucketName {
    name: String,
    kind: Kind,
}

/// What a [`BucketName`] names, with byte ranges into the name for the parts an address or
/// a signature needs (no copies).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    GeneralPurpose,
    AccessPointAlias,
    Express {
        /// Empty where the name has no zone id of a length the rules know: such a name can
        /// only be sent to a custom endpoint (the zone makes the AWS host).
        zone: Span,
        access_point: bool,
    },
    OutpostsAlias {
        outpost: Span,
        ec2: bool,
    },
    AccessPoint {
        object_lambda: bool,
        arn: Box<ArnSpans>,
    },
    Outposts {
        arn: Box<ArnSpans>,
    },
    MultiRegion {
        /// The partition starts after `arn:`.
        partition_end: usize,
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
    /// An Outposts ARN's Outpost id (empty for the others).
    outpost: Span,
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
        /// The Availability Zone or Local Zone id from the name; empty where the name has
        /// none the AWS SDKs recognize, which only a custom endpoint can serve.
        zone_id: &'a str,
    },
    /// An access point of an S3 Express One Zone directory bucket
    /// (`<name>--<zone-id>--xa-s3`), addressed and signed like a directory bucket.
    DirectoryAccessPoint {
        /// The Availability Zone or Local Zone id from the name (empty as for
        /// [`BucketKind::Directory`]).
        zone_id: &'a str,
    },
    /// An S3 on Outposts access point alias (`…--op-s3`): requests go to the Outpost's
    /// `s3-outposts` endpoint, signed for `s3-outposts`.
    OutpostsAccessPointAlias {
        /// The Outpost's id (`op-…`), or `None` for an Outposts server (EC2 hardware).
        outpost_id: Option<&'a str>,
    },
    /// A single-region access point ARN.
    AccessPoint(AccessPointArn<'a>),
    /// An Object Lambda access point ARN (requests are signed for `s3-object-lambda`).
    ObjectLambdaAccessPoint(AccessPointArn<'a>),
    /// An S3 on Outposts access point ARN.
    OutpostsAccessPoint {
        /// The access point's partition, region, account and name.
        arn: AccessPointArn<'a>,
        /// The Outpost's id (`op-…`).
        outpost_id: &'a str,
    },
    /// A Multi-Region Access Point ARN with its alias (`<name>.mrap`).
    MultiRegionAccessPoint {
        /// The alias, which ends in `.mrap`.
        alias: &'a str,
    },
}

/// The parts of a single-region (or Object Lambda, or Outposts) access point ARN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AccessPointArn<'a> {
    /// `aws`, `aws-cn`, `aws-us-gov`, ...
    pub partition: &'a str,
    /// The access point's region: requests are signed for it.
    pub region: &'a str,
    /// The account id.
    pub account_id: &'a str,
    /// The access point's name.
    pub name: &'a str,
}

impl BucketName {
    /// Validates a general-purpose S3 bucket name, an access point alias, a directory bucket
    /// name, or an access point ARN (see the type's docs).
    pub fn new(name: impl Into<String>) -> Result<Self, Error> {
        let name = name.into();
        let kind = match classify_special(&name) {
            Some(special) => special,
            None => classify_general_purpose(&name),
        };
        match kind {
            Ok(kind) => Ok(BucketName { name, kind }),
            Err(reason) => Err(InvalidInput::BucketName { name, reason }.into()),
        }
    }

    /// Validates a name under the looser rules of legacy / S3-compatible stores: 1 to 255
    /// bytes without `/` or control characters (sent percent-encoded in the path); or
    /// anything [`BucketName::new`] accepts.
    pub fn new_relaxed(name: impl Into<String>) -> Result<Self, Error> {
        let name = name.into();
        let kind = match classify_special(&name) {
            Some(special) => special,
            None => classify_general_purpose(&name).or_else(|_| {
                if name.is_empty() || name.len() > 255 {
                    Err("must be 1 to 255 bytes long")
                } else if name.contains('/') || name.chars().any(char::is_control) {
                    Err("must not contain '/' or control characters")
                } else {
                    Ok(Kind::GeneralPurpose)
                }
            }),
        };
        match kind {
            Ok(kind) => Ok(BucketName { name, kind }),
            Err(reason) => Err(InvalidInput::BucketName { name, reason }.into()),
        }
    }

    /// The name (the whole ARN for an access point).
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// What the name names.
    pub fn kind(&self) -> BucketKind<'_> {
        let part = |(start, end): Span| &self.name[start..end];
        let arn_parts = |arn: &ArnSpans| AccessPointArn {
            partition: part(arn.partition),
            region: part(arn.region),
            account_id: part(arn.account),
            name: part(arn.name),
        };
        match &self.kind {
            Kind::GeneralPurpose => BucketKind::GeneralPurpose,
            Kind::AccessPointAlias => BucketKind::AccessPointAlias,
            Kind::Express {
                zone,
                access_point: false,
            } => BucketKind::Directory {
                zone_id: part(*zone),
            },
            Kind::Express {
                zone,
                access_point: true,
            } => BucketKind::DirectoryAccessPoint {
                zone_id: part(*zone),
            },
            Kind::OutpostsAlias { outpost, ec2 } => BucketKind::OutpostsAccessPointAlias {
                outpost_id: (!ec2).then(|| part(*outpost)),
            },
            Kind::AccessPoint { object_lambda, arn } => {
                if *object_lambda {
                    BucketKind::ObjectLambdaAccessPoint(arn_parts(arn))
                } else {
                    BucketKind::AccessPoint(arn_parts(arn))
                }
            }
            Kind::Outposts { arn } => BucketKind::OutpostsAccessPoint {
                arn: arn_parts(arn),
                outpost_id: part(arn.outpost),
            },
            Kind::MultiRegion { alias_start, .. } => BucketKind::MultiRegionAccessPoint {
                alias: &self.name[*alias_start..],
            },
        }
    }

    /// The partition named in a Multi-Region Access Point ARN.
    pub(crate) fn multi_region_partition(&self) -> Option<&str> {
        match self.kind {
            Kind::MultiRegion { partition_end, .. } => Some(&self.name[4..partition_end]),
            _ => None,
        }
    }

    /// True if the name can be put into a host name (virtual-hosted addressing) as a
    /// single label: what the AWS SDKs call a virtual-hostable bucket. False for ARNs (a
    /// host is made from their parts), names with `.` and relaxed names.
    pub fn is_dns_compatible(&self) -> bool {
        self.is_virtual_hostable(false)
    }

    /// The SDKs' `isVirtualHostableS3Bucket`: at least 3 characters, no upper case, not an
    /// IPv4 address, and host labels (with `allow_dots`, several joined by `.`).
    pub(crate) fn is_virtual_hostable(&self, allow_dots: bool) -> bool {
        !matches!(
            self.kind,
            Kind::AccessPoint { .. } | Kind::Outposts { .. } | Kind::MultiRegion { .. }
        ) && is_virtual_hostable(&self.name, allow_dots)
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

    /// True for an S3 Express One Zone directory bucket (not an access point of one).
    pub fn is_directory_bucket(&self) -> bool {
        matches!(
            self.kind,
            Kind::Express {
                access_point: false,
                ..
            }
        )
    }

    /// True for an S3 Express One Zone directory bucket or an access point of one: both are
    /// served by the zone's endpoint, with session credentials (CreateSession), CRC32 where
    /// others take Content-MD5, listings by directory and not in key order.
    pub fn is_s3_express(&self) -> bool {
        matches!(self.kind, Kind::Express { .. })
    }

    /// Fails unless this names a bucket itself (not an access point of any kind): what
    /// bucket-level operations such as CreateBucket need (the SDKs' `DisableAccessPoints`).
    pub(crate) fn require_bucket(&self) -> Result<(), Error> {
        let reason = match self.kind {
            Kind::GeneralPurpose
            | Kind::Express {
                access_point: false,
                ..
            } => return Ok(()),
            _ => {
                "names an access point; access points are not supported for CreateBucket and \
                  other bucket-level operations, which need the bucket's own name"
            }
        };
        Err(InvalidInput::BucketName {
            name: self.name.clone(),
            reason,
        }
        .into())
    }
}

/// The SDKs' `isVirtualHostableS3Bucket` over a name.
fn is_virtual_hostable(name: &str, allow_dots: bool) -> bool {
    name.len() >= 3
        && !name.bytes().any(|b| b.is_ascii_uppercase())
        && !is_ipv4_shaped(name)
        && is_valid_host_label(name, allow_dots)
}

/// `^(\d+\.){3}\d+$`.
fn is_ipv4_shaped(name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The SDKs' `isValidHostLabel`: 1 to 63 letters, digits and `-`, not starting or ending
/// with `-`; with `allow_dots`, several such labels joined by `.`.
pub(crate) fn is_valid_host_label(label: &str, allow_dots: bool) -> bool {
    if allow_dots {
        return label
            .split('.')
            .all(|part| is_valid_host_label(part, false));
    }
    let bytes = label.as_bytes();
    (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        && bytes.first() != Some(&b'-')
        && bytes.last() != Some(&b'-')
}

/// The byte range `[len - end, len - start)` of `name`: the SDKs' reversed `substring`,
/// counting from the end; `None` if the name is shorter or the range splits a character.
fn from_end(name: &str, start: usize, end: usize) -> Option<Span> {
    let len = name.len();
    (len >= end && name.is_char_boundary(len - end) && name.is_char_boundary(len - start))
        .then(|| (len - end, len - start))
}

/// Suffixes AWS reserves for names that are not general-purpose buckets.
const ACCESS_POINT_ALIAS_SUFFIXES: [&str; 2] = ["-s3alias", "--ol-s3"];
const DIRECTORY_BUCKET_SUFFIX: &str = "--x-s3";
const DIRECTORY_ACCESS_POINT_SUFFIX: &str = "--xa-s3";
const OUTPOSTS_ALIAS_SUFFIX: &str = "--op-s3";

/// The kind of a name the SDKs' endpoint rules treat specially (an ARN, an S3 Express name,
/// an Outposts access point alias), or why it cannot be one; `None` for other names.
fn classify_special(name: &str) -> Option<Result<Kind, &'static str>> {
    if name.starts_with("arn:") {
        Some(classify_arn(name))
    } else if name.ends_with(DIRECTORY_BUCKET_SUFFIX) {
        Some(
            express_zone(name, DIRECTORY_BUCKET_SUFFIX.len()).map(|zone| Kind::Express {
                zone,
                access_point: false,
            }),
        )
    } else if name.ends_with(DIRECTORY_ACCESS_POINT_SUFFIX) {
        Some(
            express_zone(name, DIRECTORY_ACCESS_POINT_SUFFIX.len()).map(|zone| Kind::Express {
                zone,
                access_point: true,
            }),
        )
    } else if name.ends_with(OUTPOSTS_ALIAS_SUFFIX) && name.len() >= 50 {
        Some(outposts_alias(name))
    } else {
        None
    }
}

/// The zone id of an S3 Express name (`suffix` bytes of `--x-s3` or `--xa-s3` at its end):
/// as the SDKs' rules find it, a zone id of 8, 9, 13, 14 or 20 characters (`usw2-az1`,
/// `use1-az10`, `usw2-lax1-az1`, ...) between `--` and the suffix, the first length that
/// fits; the name as a whole a virtual-hostable label. The base name may contain `--`.
fn express_zone(name: &str, suffix: usize) -> Result<Span, &'static str> {
    if !is_virtual_hostable(name, false) {
        return Err(
            "an S3 Express name must be a valid host label (3 to 63 lowercase letters, \
             digits and '-', no '.'), as <base-name>--<zone-id>--x-s3",
        );
    }
    Ok([8, 9, 13, 14, 20]
        .into_iter()
        .find_map(|zone_len| {
            let zone = from_end(name, suffix, suffix + zone_len)?;
            let delimiter = from_end(name, suffix + zone_len, suffix + zone_len + 2)?;
            (&name[delimiter.0..delimiter.1] == "--").then_some(zone)
        })
        .unwrap_or((0, 0)))
}

/// Why an S3 Express name has no zone id an AWS host can be made of.
pub(crate) const UNRECOGNIZED_EXPRESS_NAME: &str = "unrecognized S3 Express name format: expected <base-name>--<zone-id>--x-s3 (or --xa-s3 \
     for an access point) with a zone id such as usw2-az1";

/// An Outposts access point alias, as the SDKs' rules read it: the hardware type (`o` an
/// Outpost rack, `e` an Outposts server) 50 characters from the end, the Outpost id in the
/// 17 characters after it.
fn outposts_alias(name: &str) -> Result<Kind, &'static str> {
    let (Some(hardware), Some(outpost)) = (from_end(name, 49, 50), from_end(name, 32, 49)) else {
        return Err("not an S3 on Outposts access point alias");
    };
    if !is_valid_host_label(&name[outpost.0..outpost.1], false) {
        return Err(
            "invalid Outposts access point alias: the Outpost id in it may only contain a-z, \
             A-Z, 0-9 and '-'",
        );
    }
    if !is_virtual_hostable(name, false) {
        return Err("invalid Outposts access point alias: it must be a valid bucket name");
    }
    match &name[hardware.0..hardware.1] {
        "o" => Ok(Kind::OutpostsAlias {
            outpost,
            ec2: false,
        }),
        "e" => Ok(Kind::OutpostsAlias { outpost, ec2: true }),
        _ => Err(
            "unrecognized Outposts hardware type in the access point alias (expected o for \
             an Outpost or e for an Outposts server)",
        ),
    }
}

/// True if the alias 8 to 12 characters from the end of an Outposts alias says `beta`: a
/// pre-production Outpost, reached only through an explicit endpoint.
pub(crate) fn is_beta_outposts_alias(name: &str) -> bool {
    from_end(name, 8, 12).is_some_and(|(start, end)| &name[start..end] == "beta")
}

/// The kind of an ARN given as a bucket, or why it cannot be one, checked in the order of
/// the SDKs' endpoint rules. ARNs are `arn:<partition>:<service>:<region>:<account-id>:<resource>`,
/// the resource's parts separated by `:` or `/`.
fn classify_arn(arn: &str) -> Result<Kind, &'static str> {
    let mut fields = Vec::with_capacity(6);
    let mut at = 0;
    for field in arn.splitn(6, ':') {
        fields.push((at, field));
        at += field.len() + 1;
    }
    let [
        (_, "arn"),
        (p_at, partition),
        (_, service),
        (r_at, region),
        (a_at, account),
        (res_at, resource),
    ] = fields[..]
    else {
        return Err(
            "not a valid ARN: expected arn:<partition>:<service>:<region>:<account-id>:<resource>",
        );
    };
    if partition.is_empty() || service.is_empty() || resource.is_empty() {
        return Err(
            "not a valid ARN: the partition, service and resource must not be empty \
             (arn:<partition>:<service>:<region>:<account-id>:<resource>)",
        );
    }
    let mut ids = Vec::new();
    let mut start = res_at;
    for part in resource.split([':', '/']) {
        ids.push((start, start + part.len()));
        start += part.len() + 1;
    }
    let id = |i: usize| ids.get(i).map(|&(s, e)| &arn[s..e]);
    let span = |at: usize, text: &str| (at, at + text.len());
    let spans = |name: Span, outpost: Span| ArnSpans {
        partition: span(p_at, partition),
        region: span(r_at, region),
        account: span(a_at, account),
        name,
        outpost,
    };
    let arn_type = id(0).unwrap_or("");
    if arn_type.is_empty() {
        return Err("invalid ARN: no resource type (such as accesspoint) is specified");
    }
    if service == "s3-object-lambda" {
        if arn_type != "accesspoint" {
            return Err("invalid ARN: Object Lambda ARNs only support the accesspoint type");
        }
        if id(1).is_none_or(str::is_empty) {
            return Err(
                "invalid ARN: expected a resource of the format accesspoint:<name>, but no name \
                 was given",
            );
        }
        if region.is_empty() {
            return Err("invalid ARN: an Object Lambda access point ARN must name its region");
        }
        return access_point(arn, region, account, &ids, true).map(|name| Kind::AccessPoint {
            object_lambda: true,
            arn: Box::new(spans(name, (0, 0))),
        });
    }
    if arn_type == "accesspoint" {
        let Some(name) = id(1).filter(|name| !name.is_empty()) else {
            return Err(
                "invalid ARN: expected a resource of the format accesspoint:<name>, but no name \
                 was given",
            );
        };
        if region.is_empty() {
            if !is_valid_host_label(name, true) {
                return Err(
                    "invalid Multi-Region Access Point ARN: its alias must be a host name (labels \
                     of letters, digits and '-' joined by '.')",
                );
            }
            if ids.len() > 2 {
                return Err(
                    "invalid ARN: the ARN may only contain a single resource component after \
                     accesspoint",
                );
            }
            return Ok(Kind::MultiRegion {
                partition_end: p_at + partition.len(),
                alias_start: ids[1].0,
            });
        }
        if service != "s3" {
            // The SDKs check the region, account and name first; the service decides.
            access_point(arn, region, account, &ids, false)?;
            return Err("invalid ARN: an access point ARN must be for the s3 service");
        }
        return access_point(arn, region, account, &ids, false).map(|name| Kind::AccessPoint {
            object_lambda: false,
            arn: Box::new(spans(name, (0, 0))),
        });
    }
    if service == "s3-outposts" {
        if ids.len() > 4 {
            return Err("invalid Outposts ARN: the access point ARN contains sub-resources");
        }
        let Some(outpost) = id(1) else {
            return Err("invalid Outposts ARN: the Outpost id is not set");
        };
        if !is_valid_host_label(outpost, false) {
            return Err(
                "invalid Outposts ARN: the Outpost id may only contain a-z, A-Z, 0-9 and '-'",
            );
        }
        if !is_valid_host_label(region, true) {
            return Err("invalid ARN: its region is not a valid DNS name");
        }
        if !is_valid_host_label(account, false) {
            return Err("invalid ARN: the account id may only contain a-z, A-Z, 0-9 and '-'");
        }
        let (Some(outpost_type), Some(name)) = (id(2), id(3)) else {
            return Err(if id(2).is_none() {
                "invalid Outposts ARN: expected a 4-component resource \
                 (outpost/<outpost-id>/accesspoint/<name>)"
            } else {
                "invalid Outposts ARN: expected an access point name"
            });
        };
        if outpost_type != "accesspoint" {
            return Err("invalid Outposts ARN: expected the outpost type accesspoint");
        }
        if !is_valid_host_label(name, false) {
            return Err(
                "invalid ARN: the access point name may only contain a-z, A-Z, 0-9 and '-'",
            );
        }
        return Ok(Kind::Outposts {
            arn: Box::new(spans(ids[3], ids[1])),
        });
    }
    if service == "s3" && arn_type != "accesspoint" && region.is_empty() {
        return Err(
            "bucket ARNs are not supported: give the bucket's name (or an access point ARN)",
        );
    }
    Err("unrecognized ARN format: only S3 access point ARNs (accesspoint/<name>) name a bucket")
}

/// The name's span of an access point ARN whose resource is `ids` (type and name checked
/// by the caller), once region, account and name are valid.
fn access_point(
    arn: &str,
    region: &str,
    account: &str,
    ids: &[Span],
    object_lambda: bool,
) -> Result<Span, &'static str> {
    if ids.len() > 2 {
        return Err(
            "invalid ARN: the ARN may only contain a single resource component after accesspoint",
        );
    }
    if !is_valid_host_label(region, true) {
        return Err("invalid ARN: its region is not a valid DNS name");
    }
    if object_lambda && account.is_empty() {
        return Err("invalid ARN: the account id is missing");
    }
    if !is_valid_host_label(account, false) {
        return Err("invalid ARN: the account id may only contain a-z, A-Z, 0-9 and '-'");
    }
    let name = ids[1];
    if !is_valid_host_label(&arn[name.0..name.1], false) {
        return Err("invalid ARN: the access point name may only contain a-z, A-Z, 0-9 and '-'");
    }
    Ok(name)
}

/// The kind of a (non-ARN, non-special) name under the strict rules, or the rule it breaks.
fn classify_general_purpose(name: &str) -> Result<Kind, &'static str> {
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
        Ok(Kind::GeneralPurpose)
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
            ("bucket.mrap", "reserved suffix"),
            ("tables--table-s3", "reserved suffix"),
            ("my.ap-abc-s3alias", "alias has no '.'"),
            ("logs--usw2_az1--x-s3", "valid host label"),
            ("lo.gs--usw2-az1--x-s3", "valid host label"),
            ("Logs--usw2-az1--x-s3", "valid host label"),
            (
                "test-accessp-h0000075431d83bebde8xz5w8ijx1qzlbp3i3kuse10--op-s3",
                "hardware type",
            ),
            (
                "test-accessp-o00000754%1d83bebde8xz5w8ijx1qzlbp3i3kuse10--op-s3",
                "Outpost id",
            ),
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
        let cases = [
            ("arn:aws:s3::123456789012", "not a valid ARN"),
            ("arn:", "not a valid ARN"),
            ("arn:aws:s3:us-west-2:123456789012:", "must not be empty"),
            (
                "arn:aws:s3-object-lambda::123456789012:accesspoint/olap",
                "Object Lambda access point ARN must name its region",
            ),
            (
                "arn:aws:s3-object-lambda:us-west-2:123456789012:bucket_name:b",
                "only support the accesspoint type",
            ),
            (
                "arn:aws:sqs:us-west-2:123456789012:queue",
                "unrecognized ARN",
            ),
            (
                "arn:aws:sqs:us-west-2:123456789012:accesspoint/x",
                "for the s3 service",
            ),
            (
                "arn:aws:s3:us-west-2:123456789012:accesspoint/ap_1",
                "access point name",
            ),
            (
                "arn:aws:s3:us-west-2:123456789012:accesspoint/",
                "no name was given",
            ),
            (
                "arn:aws:s3:us-west-2:123456789012:accesspoint/ap/object/key",
                "single resource component",
            ),
            (
                "arn:aws:s3:us-west-2:123456789012:accesspoint:ap:extra",
                "single resource component",
            ),
            (
                "arn:aws:s3:us-west_2:123456789012:accesspoint/ap1",
                "region is not a valid DNS name",
            ),
            (
                "arn:aws:s3:us-west-2:1234_56789012:accesspoint/ap1",
                "account id",
            ),
            ("arn:aws:s3:::my-bucket", "bucket ARNs are not supported"),
            ("arn:aws:s3:us-west-2:123456789012::ap", "no resource type"),
            (
                "arn:aws:s3::123456789012:accesspoint/a_b.mrap",
                "Multi-Region Access Point ARN",
            ),
            (
                "arn:aws:s3::123456789012:accesspoint/a..mrap",
                "Multi-Region Access Point ARN",
            ),
            (
                "arn:aws:s3-outposts:us-west-2:123456789012:outpost",
                "Outpost id is not set",
            ),
            (
                "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op_1/accesspoint/ap",
                "Outpost id may only contain",
            ),
            (
                "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-1",
                "4-component resource",
            ),
            (
                "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-1/accesspoint",
                "expected an access point name",
            ),
            (
                "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-1/bucket/b",
                "outpost type accesspoint",
            ),
            (
                "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-1/accesspoint/ap/x",
                "sub-resources",
            ),
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
    fn s3_express_names_without_a_known_zone_are_for_custom_endpoints_only() {
        for name in ["logs--x-s3", "mybucket--usaz1--x-s3", "ap--usaz1--xa-s3"] {
            let bucket = BucketName::new(name).unwrap();
            assert!(bucket.is_s3_express(), "{name}");
            let refusal = crate::Endpoint::aws("us-east-1")
                .unwrap()
                .uri(Some(&bucket), None, "")
                .unwrap_err()
                .to_string();
            assert!(
                refusal.contains("unrecognized S3 Express name format"),
                "{refusal}"
            );
            let custom = crate::Endpoint::custom("https://express.example.com", "us-east-1")
                .unwrap()
                .uri(Some(&bucket), None, "")
                .unwrap();
            assert_eq!(
                custom,
                format!("https://{name}.express.example.com/").as_str()
            );
        }
    }

    #[test]
    fn outposts_arns_and_aliases_give_their_parts() {
        let arn = BucketName::new(
            "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01234567890123456/accesspoint/reports",
        )
        .unwrap();
        assert_eq!(
            arn.kind(),
            BucketKind::OutpostsAccessPoint {
                arn: AccessPointArn {
                    partition: "aws",
                    region: "us-west-2",
                    account_id: "123456789012",
                    name: "reports",
                },
                outpost_id: "op-01234567890123456",
            }
        );
        let rack =
            BucketName::new("test-accessp-o0b1d075431d83bebde8xz5w8ijx1qzlbp3i3kuse10--op-s3")
                .unwrap();
        assert_eq!(
            rack.kind(),
            BucketKind::OutpostsAccessPointAlias {
                outpost_id: Some("0b1d075431d83bebd")
            }
        );
        let server =
            BucketName::new("test-accessp-e0000075431d83bebde8xz5w8ijx1qzlbp3i3kuse10--op-s3")
                .unwrap();
        assert_eq!(
            server.kind(),
            BucketKind::OutpostsAccessPointAlias { outpost_id: None }
        );
        // Shorter than an alias: a bucket name like any other.
        assert_eq!(
            BucketName::new("short--op-s3").unwrap().kind(),
            BucketKind::GeneralPurpose
        );
    }

    #[test]
    fn relaxed_names_take_any_path_segment_but_never_a_slash() {
        for name in [
            "bucket!",
            "bucket name",
            "example.com#",
            "99_ab",
            "BucketName",
        ] {
            let bucket = BucketName::new_relaxed(name).unwrap();
            assert_eq!(bucket.kind(), BucketKind::GeneralPurpose);
            assert!(!bucket.is_dns_compatible(), "{name}");
            assert!(BucketName::new(name).is_err(), "{name}");
        }
        for name in ["a/b", "a\nb", "", &"a".repeat(256)] {
            assert!(BucketName::new_relaxed(name).is_err(), "{name:?}");
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

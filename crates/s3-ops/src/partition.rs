//! AWS partitions: which partition a region belongs to, and its DNS suffix.
//!
//! The facts are those of the AWS SDKs' `partitions.json` (botocore, smithy), as the S3
//! endpoint rules' `aws.partition` function uses them: a region named in a partition's list
//! of pseudo-regions (`aws-global`, `aws-cn-global`, ...) belongs to it; otherwise the first
//! partition whose region pattern `^<prefix>-<word>-<digits>$` matches; otherwise `aws` (a
//! region AWS has not announced yet resolves like a commercial one).

/// An AWS partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Partition {
    /// `aws`, `aws-cn`, `aws-us-gov`, ...
    pub(crate) name: &'static str,
    /// The domain of its service hosts.
    pub(crate) dns_suffix: &'static str,
}

struct Entry {
    partition: Partition,
    /// The first part of its regions' names (`us`, `us-gov`, ...).
    prefixes: &'static [&'static str],
    /// Pseudo-regions of the partition.
    global_regions: &'static [&'static str],
}

/// In the order `partitions.json` lists them: the first matching pattern wins.
const PARTITIONS: [Entry; 8] = [
    entry(
        "aws",
        "amazonaws.com",
        &["us", "eu", "ap", "sa", "ca", "me", "af", "il", "mx"],
        &["aws-global"],
    ),
    entry("aws-cn", "amazonaws.com.cn", &["cn"], &["aws-cn-global"]),
    entry(
        "aws-us-gov",
        "amazonaws.com",
        &["us-gov"],
        &["aws-us-gov-global"],
    ),
    entry("aws-iso", "c2s.ic.gov", &["us-iso"], &["aws-iso-global"]),
    entry(
        "aws-iso-b",
        "sc2s.sgov.gov",
        &["us-isob"],
        &["aws-iso-b-global"],
    ),
    entry(
        "aws-iso-e",
        "cloud.adc-e.uk",
        &["eu-isoe"],
        &["aws-iso-e-global"],
    ),
    entry(
        "aws-iso-f",
        "csp.hci.ic.gov",
        &["us-isof"],
        &["aws-iso-f-global"],
    ),
    entry("aws-eusc", "amazonaws.eu", &["eusc-de"], &[]),
];

const fn entry(
    name: &'static str,
    dns_suffix: &'static str,
    prefixes: &'static [&'static str],
    global_regions: &'static [&'static str],
) -> Entry {
    Entry {
        partition: Partition { name, dns_suffix },
        prefixes,
        global_regions,
    }
}

/// The partition of `region`.
pub(crate) fn of_region(region: &str) -> Partition {
    PARTITIONS
        .iter()
        .find(|entry| entry.global_regions.contains(&region))
        .or_else(|| {
            PARTITIONS.iter().find(|entry| {
                entry
                    .prefixes
                    .iter()
                    .any(|prefix| matches_pattern(region, prefix))
            })
        })
        .unwrap_or(&PARTITIONS[0])
        .partition
}

/// `^<prefix>\-\w+\-\d+$`.
fn matches_pattern(region: &str, prefix: &str) -> bool {
    let Some(rest) = region
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('-'))
    else {
        return false;
    };
    let Some((word, digits)) = rest.rsplit_once('-') else {
        return false;
    };
    !word.is_empty()
        && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_belong_to_their_partitions() {
        for (region, name, suffix) in [
            ("us-east-1", "aws", "amazonaws.com"),
            ("eu-central-2", "aws", "amazonaws.com"),
            ("aws-global", "aws", "amazonaws.com"),
            ("cn-northwest-1", "aws-cn", "amazonaws.com.cn"),
            ("aws-cn-global", "aws-cn", "amazonaws.com.cn"),
            ("us-gov-west-1", "aws-us-gov", "amazonaws.com"),
            ("us-iso-east-1", "aws-iso", "c2s.ic.gov"),
            ("us-isob-east-1", "aws-iso-b", "sc2s.sgov.gov"),
            ("us-isof-south-1", "aws-iso-f", "csp.hci.ic.gov"),
            ("eu-isoe-west-1", "aws-iso-e", "cloud.adc-e.uk"),
            ("eusc-de-east-1", "aws-eusc", "amazonaws.eu"),
            // No pattern matches: the commercial partition, as the SDKs resolve it.
            ("us-east.special", "aws", "amazonaws.com"),
            ("cn-north", "aws", "amazonaws.com"),
            ("mars-east-1", "aws", "amazonaws.com"),
        ] {
            let partition = of_region(region);
            assert_eq!(
                (partition.name, partition.dns_suffix),
                (name, suffix),
                "{region}"
            );
        }
    }
}

//! AWS partitions: which regions belong to which, their DNS suffixes, and which S3 endpoint
//! variants exist in them.
//!
//! The facts come from the AWS SDKs' endpoint data (`partitions.json` and the S3 endpoint
//! variants of `endpoints.json` in botocore / smithy): a region's partition is given by its
//! prefix, and the S3 FIPS hosts exist only in the regions listed in [`S3_FIPS_REGIONS`].

/// An AWS partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Partition {
    /// `aws`, `aws-cn`, `aws-us-gov`, ...
    pub(crate) name: &'static str,
    /// The domain of its service hosts.
    pub(crate) dns_suffix: &'static str,
    /// Whether it has dual-stack (IPv6) S3 hosts.
    pub(crate) dual_stack: bool,
}

/// Every partition, the commercial one last (it takes every region no prefix claims).
const PARTITIONS: [(&str, Partition); 8] = [
    ("cn-", partition("aws-cn", "amazonaws.com.cn", true)),
    ("us-gov-", partition("aws-us-gov", "amazonaws.com", true)),
    ("us-isob-", partition("aws-iso-b", "sc2s.sgov.gov", false)),
    ("us-isof-", partition("aws-iso-f", "csp.hci.ic.gov", false)),
    ("us-iso-", partition("aws-iso", "c2s.ic.gov", false)),
    ("eu-isoe-", partition("aws-iso-e", "cloud.adc-e.uk", false)),
    ("eusc-", partition("aws-eusc", "amazonaws.eu", false)),
    ("", partition("aws", "amazonaws.com", true)),
];

const fn partition(name: &'static str, dns_suffix: &'static str, dual_stack: bool) -> Partition {
    Partition {
        name,
        dns_suffix,
        dual_stack,
    }
}

/// The regions with an S3 FIPS 140 endpoint (`s3-fips.<region>`): FIPS elsewhere names a
/// host that does not exist, so it is refused before anything is sent.
pub(crate) const S3_FIPS_REGIONS: [&str; 11] = [
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
    "ca-central-1",
    "ca-west-1",
    "us-gov-east-1",
    "us-gov-west-1",
    "us-iso-east-1",
    "us-iso-west-1",
    "us-isob-east-1",
];

/// The partition of `region`.
pub(crate) fn of_region(region: &str) -> Partition {
    PARTITIONS
        .iter()
        .find(|(prefix, _)| region.starts_with(prefix))
        .map(|(_, partition)| *partition)
        .unwrap_or(PARTITIONS[PARTITIONS.len() - 1].1)
}

/// The partition named `name`, if AWS has one.
pub(crate) fn named(name: &str) -> Option<Partition> {
    PARTITIONS
        .iter()
        .map(|(_, partition)| *partition)
        .find(|partition| partition.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_belong_to_their_partitions() {
        for (region, name, suffix) in [
            ("us-east-1", "aws", "amazonaws.com"),
            ("eu-central-2", "aws", "amazonaws.com"),
            ("cn-northwest-1", "aws-cn", "amazonaws.com.cn"),
            ("us-gov-west-1", "aws-us-gov", "amazonaws.com"),
            ("us-iso-east-1", "aws-iso", "c2s.ic.gov"),
            ("us-isob-east-1", "aws-iso-b", "sc2s.sgov.gov"),
            ("us-isof-south-1", "aws-iso-f", "csp.hci.ic.gov"),
            ("eu-isoe-west-1", "aws-iso-e", "cloud.adc-e.uk"),
            ("eusc-de-east-1", "aws-eusc", "amazonaws.eu"),
        ] {
            let partition = of_region(region);
            assert_eq!(
                (partition.name, partition.dns_suffix),
                (name, suffix),
                "{region}"
            );
            assert_eq!(named(name), Some(partition));
        }
        assert_eq!(named("aws-mars"), None);
        for region in S3_FIPS_REGIONS {
            assert!(of_region(region).name != "aws-cn", "{region}");
        }
    }
}

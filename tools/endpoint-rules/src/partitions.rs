//! Partition table behind the `aws.partition` function.
//!
//! Facts taken from botocore's `botocore/data/partitions.json` (format version
//! 1.1) at boto/botocore commit 0e6e2404b85dc336dd2889814e089bde7d1a4c55
//! (2026-08-07), Apache-2.0 — the same snapshot the S3 rule set and its tests
//! were copied from. None of the listed regions there overrides its
//! partition's outputs, so only the partition-level outputs are kept.
//!
//! Lookup order follows the Smithy AWS rules-engine semantics: an explicitly
//! listed region wins in any partition, then the first partition whose
//! `regionRegex` matches, and an unknown region falls back to the `aws`
//! partition's outputs (the region string itself is left as given: rules use
//! `{Region}`, not the partition, to build host names).

/// One AWS partition: its identity, how regions are recognised, and the
/// outputs that `aws.partition` exposes to the rules.
#[derive(Debug, PartialEq, Eq)]
pub struct Partition {
    /// Partition id; also the `name` attribute seen by the rules.
    /// `aws`, `aws-cn`, ...
    pub id: &'static str,
    /// The `regionRegex` as written in partitions.json (documentation only).
    pub region_regex: &'static str,
    /// The regex above in structural form: every regex in the table is
    /// `^PREFIX\-\w+\-\d+$` with PREFIX one of these literal alternatives.
    region_prefixes: &'static [&'static str],
    /// Regions listed explicitly (including the `*-global` pseudo-regions).
    pub regions: &'static [&'static str],
    /// The domain of its service hosts.
    pub dns_suffix: &'static str,
    /// The domain of its dual-stack hosts.
    pub dual_stack_dns_suffix: &'static str,
    /// Whether it has FIPS endpoints.
    pub supports_fips: bool,
    /// Whether it has dual-stack endpoints.
    pub supports_dual_stack: bool,
    /// The region its global services sign for.
    pub implicit_global_region: &'static str,
}

impl Partition {
    /// Whether `region` matches this partition's `regionRegex`, i.e.
    /// `^PREFIX-\w+-\d+$`. `\w` cannot match `-`, so the remainder after
    /// `PREFIX-` must be exactly one word, one `-`, and one run of digits.
    fn regex_matches(&self, region: &str) -> bool {
        self.region_prefixes.iter().any(|prefix| {
            let Some(rest) = region
                .strip_prefix(prefix)
                .and_then(|r| r.strip_prefix('-'))
            else {
                return false;
            };
            let Some((word, digits)) = rest.split_once('-') else {
                return false;
            };
            !word.is_empty()
                && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
        })
    }
}

/// All partitions, `aws` first (it is the fallback).
#[rustfmt::skip]
pub static PARTITIONS: &[Partition] = &[
    Partition {
        id: "aws",
        region_regex: r"^(us|eu|ap|sa|ca|me|af|il|mx)\-\w+\-\d+$",
        region_prefixes: &["us", "eu", "ap", "sa", "ca", "me", "af", "il", "mx"],
        regions: &[
            "af-south-1", "ap-east-1", "ap-east-2", "ap-northeast-1", "ap-northeast-2",
            "ap-northeast-3", "ap-south-1", "ap-south-2", "ap-southeast-1", "ap-southeast-2",
            "ap-southeast-3", "ap-southeast-4", "ap-southeast-5", "ap-southeast-6",
            "ap-southeast-7", "aws-global", "ca-central-1", "ca-west-1", "eu-central-1",
            "eu-central-2", "eu-north-1", "eu-south-1", "eu-south-2", "eu-west-1", "eu-west-2",
            "eu-west-3", "il-central-1", "me-central-1", "me-south-1", "mx-central-1",
            "sa-east-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2",
        ],
        dns_suffix: "amazonaws.com",
        dual_stack_dns_suffix: "api.aws",
        supports_fips: true,
        supports_dual_stack: true,
        implicit_global_region: "us-east-1",
    },
    Partition {
        id: "aws-cn",
        region_regex: r"^cn\-\w+\-\d+$",
        region_prefixes: &["cn"],
        regions: &["aws-cn-global", "cn-north-1", "cn-northwest-1"],
        dns_suffix: "amazonaws.com.cn",
        dual_stack_dns_suffix: "api.amazonwebservices.com.cn",
        supports_fips: true,
        supports_dual_stack: true,
        implicit_global_region: "cn-northwest-1",
    },
    Partition {
        id: "aws-eusc",
        region_regex: r"^eusc\-(de)\-\w+\-\d+$",
        region_prefixes: &["eusc-de"],
        regions: &["eusc-de-east-1"],
        dns_suffix: "amazonaws.eu",
        dual_stack_dns_suffix: "api.amazonwebservices.eu",
        supports_fips: true,
        supports_dual_stack: true,
        implicit_global_region: "eusc-de-east-1",
    },
    Partition {
        id: "aws-iso",
        region_regex: r"^us\-iso\-\w+\-\d+$",
        region_prefixes: &["us-iso"],
        regions: &["aws-iso-global", "us-iso-east-1", "us-iso-west-1"],
        dns_suffix: "c2s.ic.gov",
        dual_stack_dns_suffix: "api.aws.ic.gov",
        supports_fips: true,
        supports_dual_stack: true,
        implicit_global_region: "us-iso-east-1",
    },
    Partition {
        id: "aws-iso-b",
        region_regex: r"^us\-isob\-\w+\-\d+$",
        region_prefixes: &["us-isob"],
        regions: &["aws-iso-b-global", "us-isob-east-1", "us-isob-west-1"],
        dns_suffix: "sc2s.sgov.gov",
        dual_stack_dns_suffix: "api.aws.scloud",
        supports_fips: true,
        supports_dual_stack: true,
        implicit_global_region: "us-isob-east-1",
    },
    Partition {
        id: "aws-iso-e",
        region_regex: r"^eu\-isoe\-\w+\-\d+$",
        region_prefixes: &["eu-isoe"],
        regions: &["aws-iso-e-global", "eu-isoe-west-1"],
        dns_suffix: "cloud.adc-e.uk",
        dual_stack_dns_suffix: "api.cloud-aws.adc-e.uk",
        supports_fips: true,
        supports_dual_stack: true,
        implicit_global_region: "eu-isoe-west-1",
    },
    Partition {
        id: "aws-iso-f",
        region_regex: r"^us\-isof\-\w+\-\d+$",
        region_prefixes: &["us-isof"],
        regions: &["aws-iso-f-global", "us-isof-east-1", "us-isof-south-1"],
        dns_suffix: "csp.hci.ic.gov",
        dual_stack_dns_suffix: "api.aws.hci.ic.gov",
        supports_fips: true,
        supports_dual_stack: true,
        implicit_global_region: "us-isof-south-1",
    },
    Partition {
        id: "aws-us-gov",
        region_regex: r"^us\-gov\-\w+\-\d+$",
        region_prefixes: &["us-gov"],
        regions: &["aws-us-gov-global", "us-gov-east-1", "us-gov-west-1"],
        dns_suffix: "amazonaws.com",
        dual_stack_dns_suffix: "api.aws",
        supports_fips: true,
        supports_dual_stack: true,
        implicit_global_region: "us-gov-west-1",
    },
];

/// The partition `region` belongs to (never fails: unknown regions get `aws`).
pub fn partition_for(region: &str) -> &'static Partition {
    PARTITIONS
        .iter()
        .find(|p| p.regions.contains(&region))
        .or_else(|| PARTITIONS.iter().find(|p| p.regex_matches(region)))
        .unwrap_or(&PARTITIONS[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(region: &str) -> &'static str {
        partition_for(region).id
    }

    #[test]
    fn explicit_regions() {
        assert_eq!(id("aws-global"), "aws");
        assert_eq!(id("us-west-2"), "aws");
        assert_eq!(id("cn-north-1"), "aws-cn");
        assert_eq!(id("aws-us-gov-global"), "aws-us-gov");
        assert_eq!(id("us-isof-south-1"), "aws-iso-f");
    }

    #[test]
    fn regex_regions() {
        assert_eq!(id("us-gov-central-7"), "aws-us-gov");
        assert_eq!(id("us-iso-north-9"), "aws-iso");
        assert_eq!(id("us-isob-north-9"), "aws-iso-b");
        assert_eq!(id("eu-isoe-north-2"), "aws-iso-e");
        assert_eq!(id("eusc-de-west-3"), "aws-eusc");
        assert_eq!(id("cn-south-12"), "aws-cn");
        assert_eq!(id("mx-west-4"), "aws");
    }

    #[test]
    fn regex_is_anchored_and_strict() {
        let aws = &PARTITIONS[0];
        assert!(aws.regex_matches("us-east-1"));
        assert!(!aws.regex_matches("us-gov-west-1")); // \w does not match '-'
        assert!(!aws.regex_matches("us-east-1a"));
        assert!(!aws.regex_matches("xus-east-1"));
        assert!(!aws.regex_matches("us-east-"));
        assert!(!aws.regex_matches("us--1"));
    }

    #[test]
    fn unknown_regions_fall_back_to_aws() {
        assert_eq!(id("snow"), "aws");
        assert_eq!(id("us-east.special"), "aws");
        assert_eq!(id(""), "aws");
    }
}

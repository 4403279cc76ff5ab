//! Per-resolution cost probe: parses the S3 rule set once, then resolves
//! `N` endpoints (N from argv, default 1000), cycling through four inputs,
//! and prints a checksum of the URLs so the work cannot be skipped.
//!
//! Usage: `resolve_loop [N [INPUT]]`; INPUT (1-4) uses only that input
//! instead of cycling, to split the cost by kind of request.
//!
//! The four inputs (all in us-west-2):
//! 1. a plain bucket, `my-bucket`;
//! 2. the same bucket with FIPS and dual-stack;
//! 3. an access point ARN, `arn:aws:s3:us-west-2:123456789012:accesspoint:myendpoint`;
//! 4. a directory bucket, `mybucket--usw2-az1--x-s3`.
//!
//! Run with 0 to measure the parse alone (minus `print_args`, the floor).

use endpoint_rules::{Params, RuleSet};

/// The rule set, embedded (botocore's copy, see testdata/SOURCE.txt).
static RULE_SET_JSON: &str = include_str!("../testdata/endpoint-rule-set-1.json");

fn main() {
    const USAGE: &str = "usage: resolve_loop [N [INPUT 1-4]]";
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(1000, |arg| arg.parse().expect(USAGE));
    let only: Option<usize> = args.next().map(|arg| {
        arg.parse()
            .ok()
            .filter(|i| (1..=4).contains(i))
            .expect(USAGE)
    });
    let rules = RuleSet::from_json(RULE_SET_JSON).expect("embedded rule set parses");

    let region = "us-west-2";
    let inputs = [
        Params::new()
            .with("Region", region)
            .with("Bucket", "my-bucket"),
        Params::new()
            .with("Region", region)
            .with("Bucket", "my-bucket")
            .with("UseFIPS", true)
            .with("UseDualStack", true),
        Params::new().with("Region", region).with(
            "Bucket",
            "arn:aws:s3:us-west-2:123456789012:accesspoint:myendpoint",
        ),
        Params::new()
            .with("Region", region)
            .with("Bucket", "mybucket--usw2-az1--x-s3"),
    ];

    // FNV-1a over every URL, so each resolution's output is used.
    let mut checksum: u64 = 0xcbf2_9ce4_8422_2325;
    for i in 0..n {
        let index = only.map_or((i % 4) as usize, |k| k - 1);
        let endpoint = rules
            .resolve(&inputs[index])
            .unwrap_or_else(|e| panic!("input {}: {e}", index + 1));
        for byte in endpoint.url.bytes() {
            checksum = (checksum ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    println!("resolved {n} endpoints, checksum {checksum:016x}");
}

//! Binary-size probe: embeds the S3 rule set, parses it, resolves one
//! endpoint and prints its URL.
//!
//! Usage: `resolve_once [BUCKET [REGION]]` (defaults: `my-bucket`,
//! `us-west-2`; every other parameter takes its default). The inputs come
//! from argv so the compiler cannot fold the resolution away.
//!
//! Compare its stripped size with `examples/print_args.rs` (the floor): the
//! difference is what run-time rule-set evaluation costs in binary size.

use endpoint_rules::{Params, RuleSet};

/// The rule set, embedded (botocore's copy, see testdata/SOURCE.txt).
static RULE_SET_JSON: &str = include_str!("../testdata/endpoint-rule-set-1.json");

fn main() {
    let mut args = std::env::args().skip(1);
    let bucket = args.next().unwrap_or_else(|| "my-bucket".to_owned());
    let region = args.next().unwrap_or_else(|| "us-west-2".to_owned());

    let rules = RuleSet::from_json(RULE_SET_JSON).expect("embedded rule set parses");
    let params = Params::new().with("Bucket", bucket).with("Region", region);
    match rules.resolve(&params) {
        Ok(endpoint) => println!("{}", endpoint.url),
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(1);
        }
    }
}

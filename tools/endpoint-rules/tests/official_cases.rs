//! Runs all official S3 endpoint test cases from botocore
//! (`tests/functional/endpoint-rules/s3/endpoint-tests-1.json`) against the
//! interpreter and requires every one to match exactly: the URL, the whole
//! `properties` object (every authScheme field), the headers, or the error
//! message.

use std::collections::BTreeMap;

use endpoint_rules::{Params, RuleSet};
use serde_json::Value as Json;

/// The inputs (Apache-2.0, copied from botocore; see testdata/SOURCE.txt).
const DATA_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata");

fn read(name: &str) -> String {
    let path = format!("{DATA_DIR}/{name}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn params_of(case: &Json) -> Params {
    let mut params = Params::new();
    for (name, value) in case["params"].as_object().expect("params object") {
        match value {
            Json::String(s) => params.set(name.as_str(), s.as_str()),
            Json::Bool(b) => params.set(name.as_str(), *b),
            other => panic!("unsupported parameter value {other}"),
        };
    }
    params
}

/// Compares one case; `Err` describes the mismatch.
fn check(rules: &RuleSet, case: &Json) -> Result<(), String> {
    let got = rules.resolve(&params_of(case));
    let expect = &case["expect"];
    match (expect.get("error"), expect.get("endpoint"), got) {
        (Some(want), _, Err(message)) if want.as_str() == Some(message.as_str()) => Ok(()),
        (Some(want), _, got) => Err(format!("want error {want}, got {got:?}")),
        (None, Some(want), Ok(endpoint)) => {
            let want_props = want
                .get("properties")
                .cloned()
                .unwrap_or_else(|| Json::Object(Default::default()));
            let want_headers: BTreeMap<String, Vec<String>> = match want.get("headers") {
                Some(h) => serde_json::from_value(h.clone())
                    .map_err(|e| format!("bad expected headers: {e}"))?,
                None => BTreeMap::new(),
            };
            let mut problems = Vec::new();
            if want["url"].as_str() != Some(endpoint.url.as_str()) {
                problems.push(format!("url: want {}, got {}", want["url"], endpoint.url));
            }
            if want_props != endpoint.properties {
                problems.push(format!(
                    "properties: want {want_props}, got {}",
                    endpoint.properties
                ));
            }
            if want_headers != endpoint.headers {
                problems.push(format!(
                    "headers: want {want_headers:?}, got {:?}",
                    endpoint.headers
                ));
            }
            if problems.is_empty() {
                Ok(())
            } else {
                Err(problems.join("; "))
            }
        }
        (None, Some(_), Err(message)) => Err(format!("want an endpoint, got error {message:?}")),
        (None, None, _) => Err("case expects neither an endpoint nor an error".into()),
    }
}

#[test]
fn all_official_s3_endpoint_cases_pass() {
    let rules = RuleSet::from_json(&read("endpoint-rule-set-1.json")).expect("rule set parses");
    let tests: Json = serde_json::from_str(&read("endpoint-tests-1.json")).expect("tests parse");
    let cases = tests["testCases"].as_array().expect("testCases array");
    assert_eq!(cases.len(), 393, "the snapshot has 393 cases");

    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        if let Err(problem) = check(&rules, case) {
            failures.push(format!(
                "#{i} {}: {}\n    params: {}",
                case["documentation"], problem, case["params"]
            ));
        }
    }
    let passed = cases.len() - failures.len();
    println!(
        "official S3 endpoint cases: {passed}/{} passed",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The four inputs of `examples/resolve_loop.rs`, pinned so the probe
/// measures what it claims to.
#[test]
fn probe_inputs_resolve_as_expected() {
    let rules = RuleSet::from_json(&read("endpoint-rule-set-1.json")).expect("rule set parses");
    let base = || Params::new().with("Region", "us-west-2");
    let cases = [
        (
            base().with("Bucket", "my-bucket"),
            "https://my-bucket.s3.us-west-2.amazonaws.com",
        ),
        (
            base()
                .with("Bucket", "my-bucket")
                .with("UseFIPS", true)
                .with("UseDualStack", true),
            "https://my-bucket.s3-fips.dualstack.us-west-2.amazonaws.com",
        ),
        (
            base().with(
                "Bucket",
                "arn:aws:s3:us-west-2:123456789012:accesspoint:myendpoint",
            ),
            "https://myendpoint-123456789012.s3-accesspoint.us-west-2.amazonaws.com",
        ),
        (
            base().with("Bucket", "mybucket--usw2-az1--x-s3"),
            "https://mybucket--usw2-az1--x-s3.s3express-usw2-az1.us-west-2.amazonaws.com",
        ),
    ];
    for (params, url) in cases {
        assert_eq!(
            rules.resolve(&params).map(|e| e.url),
            Ok(url.to_owned()),
            "{params:?}"
        );
    }
}

#[test]
fn unknown_and_mistyped_parameters_are_rejected() {
    let rules = RuleSet::from_json(&read("endpoint-rule-set-1.json")).expect("rule set parses");
    let typo = Params::new()
        .with("Region", "us-west-2")
        .with("Buckett", "b");
    assert_eq!(
        rules.resolve(&typo),
        Err("unknown parameter(s): Buckett".to_owned())
    );
    let mistyped = Params::new()
        .with("Region", "us-west-2")
        .with("UseFIPS", "true");
    assert!(
        rules
            .resolve(&mistyped)
            .unwrap_err()
            .contains("UseFIPS must be Boolean")
    );
}

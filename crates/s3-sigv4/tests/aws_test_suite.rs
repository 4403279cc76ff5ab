//! Every case of the AWS SigV4 test suite (botocore's copy) under the generic
//! rules: canonical request, string to sign and authorization header must equal
//! the expected files.

mod common;

use std::path::{Path, PathBuf};

use common::{parse_request, read_text, testdata};
use s3_sigv4::{
    Credentials, PayloadHash, RawRequest, SessionTokenPlacement, Signer, SigningParams,
    SigningSettings, SigningTime,
};

const ACCESS_KEY: &str = "AKIDEXAMPLE";
const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
/// The token the suite's `get-vanilla-with-session-token` case expects.
const VANILLA_TOKEN: &str = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267";

/// Every directory holding a `<dir-name>.req` file, at any depth.
fn cases(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                let name = path.file_name().unwrap().to_str().unwrap().to_owned();
                if path.join(format!("{name}.req")).is_file() {
                    found.push(path.clone());
                }
                pending.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The session token and its placement the suite intends for a case.
fn session_token(name: &str, request: &RawRequest) -> (Option<String>, SessionTokenPlacement) {
    let in_request = request
        .headers
        .get("x-amz-security-token")
        .map(|v| v.to_str().unwrap().to_owned());
    match name {
        "get-vanilla-with-session-token" => (
            Some(VANILLA_TOKEN.to_owned()),
            SessionTokenPlacement::Signed,
        ),
        // Same token as the "before" case, added after signing (see the suite's readme).
        "post-sts-header-after" => {
            let sreq = read_text(&testdata(
                "aws-sig-v4-test-suite/post-sts-token/post-sts-header-after/post-sts-header-after.sreq",
            ));
            let token = parse_request(&sreq)
                .0
                .headers
                .get("x-amz-security-token")
                .map(|v| v.to_str().unwrap().to_owned());
            (token, SessionTokenPlacement::AppendedAfterSigning)
        }
        _ => (in_request, SessionTokenPlacement::Signed),
    }
}

#[test]
fn every_case_matches() {
    let root = testdata("aws-sig-v4-test-suite");
    let cases = cases(&root);
    // 24 top-level cases + normalize-path (8) + post-sts-token (2): all 34
    // `.req` files of the suite.
    assert_eq!(cases.len(), 34, "cases found: {cases:?}");
    let signer = Signer::new();
    let time = SigningTime::parse_amz_date("20150830T123600Z").unwrap();
    let mut failures = Vec::new();
    for dir in &cases {
        let name = dir.file_name().unwrap().to_str().unwrap();
        let file = |ext: &str| read_text(&dir.join(format!("{name}.{ext}")));
        let (mut request, body) = parse_request(&file("req"));
        let (token, placement) = session_token(name, &request);
        let credentials = Credentials::new(ACCESS_KEY, SECRET_KEY, token.clone());
        let settings = SigningSettings::generic().session_token(placement);
        let params = SigningParams::new("us-east-1", "service", time, PayloadHash::of(&body))
            .with_settings(&settings);
        let report = signer
            .sign_headers_with_report(&mut request, &credentials, &params)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let checks = [
            ("creq", report.canonical_request.clone(), file("creq")),
            ("sts", report.string_to_sign.clone(), file("sts")),
            ("authz", report.authorization.clone(), file("authz")),
        ];
        for (what, actual, expected) in checks {
            if actual != expected {
                failures.push(format!(
                    "{name}.{what}:\n--- actual\n{actual}\n--- expected\n{expected}"
                ));
            }
        }
        let sent_token = request
            .headers
            .get("x-amz-security-token")
            .map(|v| v.to_str().unwrap());
        assert_eq!(sent_token, token.as_deref(), "{name}: token header");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

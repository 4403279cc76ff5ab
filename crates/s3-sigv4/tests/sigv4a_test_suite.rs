//! Every case of the aws-c-auth SigV4a test suite (`testdata/aws-c-auth-sigv4a`),
//! for header and query signing: the canonical request and string to sign must
//! equal the expected files exactly; the signature we produce must verify with
//! the case's public key; and the case's own signature must verify with the
//! key we derive, which proves the key derivation. ECDSA signatures differ
//! between implementations (nonces), so signatures are verified, not compared.
//! Two cases (`get-vanilla-query-order-key`, `-value`) ship only their request:
//! they are signed both ways and verified with the suite's key (every case
//! uses the same credentials).

mod common;

use std::time::Duration;

use common::{parse_request, read_text, testdata};
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{DerSignature, VerifyingKey};
use s3_sigv4::{
    Credentials, PayloadHash, SessionTokenPlacement, Signer, SigningParams, SigningSettings,
    SigningTime, UriRules,
};
use serde_json::Value;

struct Case {
    name: String,
    context: Value,
    dir: std::path::PathBuf,
}

impl Case {
    fn file(&self, name: &str) -> String {
        read_text(&self.dir.join(name))
    }
    fn flag(&self, name: &str) -> bool {
        self.context[name].as_bool().unwrap_or(false)
    }
    fn text(&self, name: &str) -> &str {
        self.context[name]
            .as_str()
            .unwrap_or_else(|| panic!("{}: {name}", self.name))
    }
    fn credentials(&self) -> Credentials {
        let credentials = &self.context["credentials"];
        Credentials::new(
            credentials["access_key_id"].as_str().unwrap(),
            credentials["secret_access_key"].as_str().unwrap(),
            credentials["token"].as_str().map(str::to_owned),
        )
    }
    fn settings(&self) -> SigningSettings {
        // aws-c-auth double-encodes every non-S3 path; normalization is per case.
        let placement = if self.flag("omit_session_token") {
            SessionTokenPlacement::AppendedAfterSigning
        } else {
            SessionTokenPlacement::Signed
        };
        SigningSettings::generic()
            .uri_rules(UriRules::GENERIC.with_normalization(self.flag("normalize")))
            .content_sha256_header(self.flag("sign_body"))
            .session_token(placement)
    }
    fn has_expectations(&self) -> bool {
        self.dir.join("public-key.json").is_file()
    }
    fn public_key(&self) -> VerifyingKey {
        let json: Value = serde_json::from_str(&self.file("public-key.json")).unwrap();
        let mut sec1 = vec![4u8];
        for coordinate in ["X", "Y"] {
            sec1.extend(hex(json[coordinate].as_str().unwrap()));
        }
        VerifyingKey::from_sec1_bytes(&sec1).unwrap()
    }
}

fn cases() -> Vec<Case> {
    let root = testdata("aws-c-auth-sigv4a");
    let mut cases: Vec<Case> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("context.json").is_file())
        .map(|dir| Case {
            name: dir.file_name().unwrap().to_str().unwrap().to_owned(),
            context: serde_json::from_str(&read_text(&dir.join("context.json"))).unwrap(),
            dir,
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

fn hex(text: &str) -> Vec<u8> {
    let text = text.trim();
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn verifies(key: &VerifyingKey, string_to_sign: &str, signature_hex: &str) -> bool {
    let Ok(signature) = DerSignature::from_bytes(&hex(signature_hex)) else {
        return false;
    };
    key.verify(string_to_sign.as_bytes(), &signature).is_ok()
}

fn time(case: &Case) -> SigningTime {
    let stamp = case.text("timestamp").replace(['-', ':'], "");
    SigningTime::parse_amz_date(&stamp).unwrap()
}

/// The value of `name=` in a signed request's `Authorization` header or URL.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).map(|i| i + start.len()).unwrap();
    let rest = &text[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

#[test]
fn every_case_matches_for_header_and_query_signing() {
    let cases = cases();
    assert_eq!(cases.len(), 40, "cases found");
    let complete = cases.iter().filter(|case| case.has_expectations()).count();
    assert_eq!(complete, 38, "cases with expected files");
    let suite_key = cases
        .iter()
        .find(|case| case.has_expectations())
        .unwrap()
        .public_key();
    let signer = Signer::new();
    let mut failures = Vec::new();
    for case in &cases {
        let name = &case.name;
        let (request, body) = parse_request(&case.file("request.txt"));
        let credentials = case.credentials();
        let settings = case.settings();
        let params = SigningParams::v4a(
            case.text("region"),
            case.text("service"),
            time(case),
            PayloadHash::of(&body),
        )
        .with_settings(&settings);
        let derived =
            VerifyingKey::from_sec1_bytes(&credentials.sigv4a_public_key().unwrap()).unwrap();
        if !case.has_expectations() {
            let mut signed = request.clone();
            let report = signer
                .sign_headers_with_report(&mut signed, &credentials, &params)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let sts = &report.string_to_sign;
            assert!(
                verifies(&suite_key, sts, &report.signature.to_hex()),
                "{name}"
            );
            let (_, report) = signer
                .presign_with_report(&request, &credentials, &params, Duration::from_secs(3600))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let sts = &report.string_to_sign;
            assert!(
                verifies(&suite_key, sts, &report.signature.to_hex()),
                "{name}"
            );
            continue;
        }
        let expected_key = case.public_key();
        assert_eq!(derived, expected_key, "{name}: derived public key");

        // Header signing.
        let mut signed = request.clone();
        let report = signer
            .sign_headers_with_report(&mut signed, &credentials, &params)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected_creq = case.file("header-canonical-request.txt");
        let expected_sts = case.file("header-string-to-sign.txt");
        if report.canonical_request != expected_creq {
            failures.push(format!(
                "{name} header creq:\n{}\n--- expected\n{expected_creq}",
                report.canonical_request
            ));
        }
        if report.string_to_sign != expected_sts {
            failures.push(format!(
                "{name} header sts:\n{}\n--- expected\n{expected_sts}",
                report.string_to_sign
            ));
        }
        let ours = report.signature.to_hex();
        assert!(
            verifies(&expected_key, &expected_sts, &ours),
            "{name}: our header signature must verify with the case's key"
        );
        assert!(
            verifies(&derived, &expected_sts, &case.file("header-signature.txt")),
            "{name}: the case's header signature must verify with our key"
        );
        let expected_authorization = between(
            &case.file("header-signed-request.txt"),
            "Authorization:",
            "Signature=",
        )
        .to_owned();
        assert_eq!(
            between(&report.authorization, "", "Signature="),
            expected_authorization,
            "{name}: authorization header"
        );
        assert_eq!(
            signed.headers["x-amz-region-set"],
            case.text("region"),
            "{name}"
        );

        // Query signing.
        let expires = Duration::from_secs(case.context["expiration_in_seconds"].as_u64().unwrap());
        let (presigned, report) = signer
            .presign_with_report(&request, &credentials, &params, expires)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected_creq = case.file("query-canonical-request.txt");
        let expected_sts = case.file("query-string-to-sign.txt");
        if report.canonical_request != expected_creq {
            failures.push(format!(
                "{name} query creq:\n{}\n--- expected\n{expected_creq}",
                report.canonical_request
            ));
        }
        if report.string_to_sign != expected_sts {
            failures.push(format!(
                "{name} query sts:\n{}\n--- expected\n{expected_sts}",
                report.string_to_sign
            ));
        }
        let in_url = between(presigned.url(), "X-Amz-Signature=", "&");
        assert!(
            verifies(&expected_key, &expected_sts, in_url),
            "{name}: our URL signature must verify with the case's key"
        );
        assert!(
            verifies(&derived, &expected_sts, &case.file("query-signature.txt")),
            "{name}: the case's query signature must verify with our key"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_changed_string_to_sign_does_not_verify() {
    // The verification above is not vacuous: one flipped byte fails it.
    let case = cases().into_iter().next().unwrap();
    let sts = case.file("header-string-to-sign.txt");
    let signature = case.file("header-signature.txt");
    let key = case.public_key();
    assert!(verifies(&key, &sts, &signature));
    let mut tampered = sts.into_bytes();
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    assert!(!verifies(
        &key,
        std::str::from_utf8(&tampered).unwrap(),
        &signature
    ));
}

//! SigV4a through the public API: chunked layouts, region sets, properties of
//! the key derivation and of signing, and the signer's safety rules that hold
//! for both algorithms. SigV4a aws-chunked bodies are decoded and verified chunk
//! by chunk in `src/fuzzing.rs` (its tests and the `sigv4_chunked_roundtrip`
//! target), with the independent decoder there.

use std::time::Duration;

use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{DerSignature, VerifyingKey};
use proptest::prelude::*;
use s3_sigv4::{
    ChunkedLayout, Credentials, Error, InvalidParameter, PayloadHash, RawRequest, Signer,
    SigningAlgorithm, SigningParams, SigningTime,
};

const ACCESS_KEY: &str = "AKIDEXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

fn time() -> SigningTime {
    SigningTime::from_parts(2026, 12, 1, 12, 0, 0).unwrap()
}

fn key_of(credentials: &Credentials) -> VerifyingKey {
    VerifyingKey::from_sec1_bytes(&credentials.sigv4a_public_key().unwrap()).unwrap()
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

fn verifies(key: &VerifyingKey, string_to_sign: &str, signature_hex: &str) -> bool {
    match DerSignature::from_bytes(&hex(signature_hex)) {
        Ok(signature) => key.verify(string_to_sign.as_bytes(), &signature).is_ok(),
        Err(_) => false,
    }
}

#[test]
fn a_layout_for_the_other_algorithm_is_refused_by_chunk_encoder() {
    let signer = Signer::new();
    let credentials = Credentials::new(ACCESS_KEY, SECRET, None);
    let params = SigningParams::v4a("*", "s3", time(), PayloadHash::StreamingSigned);
    let seed = {
        let mut request = http::Request::put("https://h.example/k").body(()).unwrap();
        signer
            .sign_headers(&mut request, &credentials, &params)
            .unwrap()
    };
    let v4_layout = ChunkedLayout::signed(100, 8192).unwrap();
    assert!(matches!(
        signer.chunk_encoder(&credentials, &params, seed, v4_layout.clone()),
        Err(Error::InvalidParameter(InvalidParameter::Payload(_)))
    ));
    let v4a_layout = v4_layout.with_algorithm(SigningAlgorithm::V4a);
    // Each SigV4a signature takes 144 bytes on the wire instead of 64.
    assert_eq!(
        v4a_layout.encoded_length(),
        ChunkedLayout::signed(100, 8192).unwrap().encoded_length() + 2 * 80
    );
    assert!(
        signer
            .chunk_encoder(&credentials, &params, seed, v4a_layout)
            .is_ok()
    );
}

#[test]
fn region_sets_are_validated() {
    let signer = Signer::new();
    let credentials = Credentials::new(ACCESS_KEY, SECRET, None);
    for good in ["*", "us-east-1", "us-east-1,eu-west-1", "us-*"] {
        let mut request = http::Request::get("https://h.example/k").body(()).unwrap();
        let params = SigningParams::v4a(good, "s3", time(), PayloadHash::Empty);
        signer
            .sign_headers(&mut request, &credentials, &params)
            .unwrap_or_else(|e| panic!("{good}: {e}"));
        assert_eq!(request.headers()["x-amz-region-set"], good);
    }
    for bad in [
        "",
        ",",
        "us-east-1,",
        "US-EAST-1",
        "us east",
        "us/east",
        "**",
    ] {
        let mut request = http::Request::get("https://h.example/k").body(()).unwrap();
        let params = SigningParams::v4a(bad, "s3", time(), PayloadHash::Empty);
        assert_eq!(
            signer.sign_headers(&mut request, &credentials, &params),
            Err(Error::InvalidParameter(InvalidParameter::Region)),
            "{bad:?}"
        );
    }
}

#[test]
fn a_host_from_the_uri_is_signed_lowercased_for_both_algorithms() {
    let signer = Signer::new();
    let credentials = Credentials::new(ACCESS_KEY, SECRET, None);
    for params in [
        SigningParams::new("us-east-1", "s3", time(), PayloadHash::Empty),
        SigningParams::v4a("*", "s3", time(), PayloadHash::Empty),
    ] {
        let mut request = http::Request::get("https://Bucket.S3.Example.COM/Key")
            .body(())
            .unwrap();
        let report = signer
            .sign_headers_with_report(&mut request, &credentials, &params)
            .unwrap();
        assert!(
            report
                .canonical_request
                .contains("\nhost:bucket.s3.example.com\n"),
            "{}",
            report.canonical_request
        );
        // The path keeps its case: keys are case-sensitive.
        assert!(report.canonical_request.starts_with("GET\n/Key\n"));
        let (_, report) = signer
            .presign_with_report(&request, &credentials, &params, Duration::from_secs(60))
            .unwrap();
        assert!(
            report
                .canonical_request
                .contains("\nhost:bucket.s3.example.com\n")
        );
    }
}

#[test]
fn a_lowercase_method_is_refused_clearly() {
    let signer = Signer::new();
    let credentials = Credentials::new(ACCESS_KEY, SECRET, None);
    let params = SigningParams::new("us-east-1", "s3", time(), PayloadHash::Empty);
    let mut request = RawRequest::new("get", "https://h.example/k");
    let error = signer
        .sign_headers(&mut request, &credentials, &params)
        .unwrap_err();
    assert_eq!(
        error,
        Error::InvalidParameter(InvalidParameter::Method {
            method: "get".into()
        })
    );
    assert!(error.to_string().contains("\"get\""), "{error}");
    let presigned = signer.presign(&request, &credentials, &params, Duration::from_secs(60));
    assert!(matches!(
        presigned,
        Err(Error::InvalidParameter(InvalidParameter::Method { .. }))
    ));
    assert!(request.headers.get("authorization").is_none());
}

#[test]
fn post_policies_refuse_sigv4a() {
    let signer = Signer::new();
    let credentials = Credentials::new(ACCESS_KEY, SECRET, None);
    let params = SigningParams::v4a("*", "s3", time(), PayloadHash::Empty);
    assert!(matches!(
        signer.sign_post_policy_document("{}", &credentials, &params),
        Err(Error::InvalidParameter(InvalidParameter::Payload(_)))
    ));
}

#[derive(Debug, Clone)]
struct Case {
    key: String,
    meta: String,
    region_set: &'static str,
    secret: String,
    access_key: String,
    body: Vec<u8>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        "[a-zA-Z0-9/._-]{1,24}",
        "[!-~]{1,16}",
        prop::sample::select(vec!["*", "us-east-1", "us-east-1,eu-west-1", "eu-*"]),
        "[!-~]{1,40}",
        "[A-Z0-9]{16,20}",
        prop::collection::vec(any::<u8>(), 0..32),
    )
        .prop_map(|(key, meta, region_set, secret, access_key, body)| Case {
            key,
            meta,
            region_set,
            secret,
            access_key,
            body,
        })
}

fn signed(signer: &Signer, case: &Case) -> (http::Request<()>, s3_sigv4::SigningReport) {
    let credentials = Credentials::new(&case.access_key, &case.secret, None);
    let params = SigningParams::v4a(case.region_set, "s3", time(), PayloadHash::of(&case.body));
    let mut request = http::Request::put(format!("https://b.example/{}", case.key))
        .header("x-amz-meta-m", case.meta.as_str())
        .body(())
        .unwrap();
    let report = signer
        .sign_headers_with_report(&mut request, &credentials, &params)
        .unwrap();
    (request, report)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The same credentials always derive the same key; others another.
    #[test]
    fn derivation_is_deterministic(access_key in "[A-Z0-9]{16,20}", secret in "[!-~]{1,40}") {
        let one = Credentials::new(&access_key, &secret, None).sigv4a_public_key().unwrap();
        let again = Credentials::new(&access_key, &secret, None).sigv4a_public_key().unwrap();
        prop_assert_eq!(one, again);
        let other = Credentials::new(&access_key, format!("{secret}x"), None)
            .sigv4a_public_key()
            .unwrap();
        prop_assert_ne!(one, other);
        let other = Credentials::new(format!("{access_key}X"), &secret, None)
            .sigv4a_public_key()
            .unwrap();
        prop_assert_ne!(one, other);
    }

    /// Every signature verifies with the derived key; a request changed in any
    /// signed component (key, header, body, region set) does not.
    #[test]
    fn signatures_verify_and_tampering_fails(case in case(), which in 0..4usize) {
        let signer = Signer::new();
        let (_, report) = signed(&signer, &case);
        let key = key_of(&Credentials::new(&case.access_key, &case.secret, None));
        prop_assert!(verifies(&key, &report.string_to_sign, &report.signature.to_hex()));

        let mut tampered = case.clone();
        match which {
            0 => tampered.key.push('x'),
            1 => tampered.meta.push('x'),
            2 => tampered.body.push(0),
            _ => tampered.region_set = if case.region_set == "*" { "us-east-1" } else { "*" },
        }
        let (_, other) = signed(&signer, &tampered);
        prop_assert_ne!(&other.string_to_sign, &report.string_to_sign);
        // The original signature does not cover the changed request.
        prop_assert!(!verifies(&key, &other.string_to_sign, &report.signature.to_hex()));
    }
}

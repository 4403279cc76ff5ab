//! Property tests: every valid key survives encoding into a request path under both
//! addressing styles, and the path sent is byte for byte the SigV4 canonical path.

mod common;

use common::*;
use proptest::prelude::*;
use s3_ops::ops::get_object::GetObject;
use s3_ops::{AddressingStyle, Endpoint, ObjectKey, Operation};
use s3_sigv4::{Credentials, PayloadHash, Signer, SigningParams, SigningTime};

/// Keys biased towards the characters that break naive encoders.
fn key_strategy() -> impl Strategy<Value = String> {
    let special = prop_oneof![
        Just('/'),
        Just('.'),
        Just('%'),
        Just('+'),
        Just(' '),
        Just('?'),
        Just('#'),
        Just('&'),
        Just('='),
        Just('~'),
        Just('\u{0}'),
        Just('\n'),
        Just('\r'),
        Just('\u{7f}'),
        Just('é'),
        Just('🐱'),
        Just('\u{feff}'),
    ];
    let any_char =
        prop_oneof![3 => special, 2 => proptest::char::range('!', '~'), 1 => any::<char>()];
    proptest::collection::vec(any_char, 1..120)
        .prop_map(|chars| chars.into_iter().collect::<String>())
        .prop_filter("S3 keys are at most 1024 bytes", |key| key.len() <= 1024)
}

fn endpoints() -> [(Endpoint, &'static str); 4] {
    [
        // Virtual-hosted: the path is "/" + key.
        (aws(), "/"),
        (
            Endpoint::aws("eu-west-1")
                .unwrap()
                .with_addressing_style(AddressingStyle::Path),
            "/examplebucket/",
        ),
        (minio(), "/examplebucket/"),
        (
            Endpoint::custom("https://gw.example.com/s3/v1", "auto").unwrap(),
            "/s3/v1/examplebucket/",
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn keys_round_trip_through_the_request_path(key_text in key_strategy()) {
        let key = ObjectKey::new(key_text.clone()).unwrap();
        for (endpoint, prefix) in endpoints() {
            let request = GetObject::new(bucket(), key.clone()).request(&endpoint).unwrap();
            let path = request.request.uri().path();
            let encoded = path.strip_prefix(prefix).unwrap_or_else(|| panic!("{path} lacks {prefix}"));
            // Only unreserved characters and '/' appear unencoded.
            prop_assert!(encoded.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.~/%".contains(&b)), "{encoded}");
            let decoded = s3_sigv4::uri_decode(encoded).unwrap();
            prop_assert_eq!(decoded, key_text.as_bytes());
        }
    }

    #[test]
    fn sent_path_and_query_are_the_canonical_ones(key_text in key_strategy(), version in key_strategy()) {
        let key = ObjectKey::new(key_text).unwrap();
        let signer = Signer::new();
        let credentials = Credentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None);
        let time = SigningTime::from_unix(1_700_000_000).unwrap();
        for (endpoint, _) in endpoints() {
            let mut request = GetObject::new(bucket(), key.clone())
                .version_id(version.clone())
                .request(&endpoint)
                .unwrap()
                .request;
            let params = SigningParams::new(endpoint.region(), "s3", time, PayloadHash::Empty);
            let report = signer.sign_headers_with_report(&mut request, &credentials, &params).unwrap();
            let mut lines = report.canonical_request.split('\n');
            prop_assert_eq!(lines.next(), Some("GET"));
            prop_assert_eq!(lines.next(), Some(request.uri().path()));
            prop_assert_eq!(lines.next(), request.uri().query());
        }
    }
}

#[test]
fn every_byte_value_round_trips() {
    // All of U+0001..U+00FF plus the NUL character, in one key.
    let key_text: String = (0u32..=255).filter_map(char::from_u32).collect();
    let key = ObjectKey::new(key_text.clone()).unwrap();
    for (endpoint, prefix) in endpoints() {
        let request = GetObject::new(bucket(), key.clone())
            .request(&endpoint)
            .unwrap();
        let encoded = request
            .request
            .uri()
            .path()
            .strip_prefix(prefix)
            .unwrap()
            .to_owned();
        assert_eq!(s3_sigv4::uri_decode(&encoded).unwrap(), key_text.as_bytes());
    }
}

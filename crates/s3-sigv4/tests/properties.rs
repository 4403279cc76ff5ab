//! Property tests of the signer through its public API.

use std::time::Duration;

use http::{HeaderName, HeaderValue};
use proptest::prelude::*;
use s3_sigv4::{
    Credentials, PayloadHash, Signature, Signer, SigningParams, SigningTime, uri_encode,
};

#[derive(Debug, Clone)]
struct Input {
    method: &'static str,
    key: String,
    query: Vec<(String, String)>,
    meta: Vec<(String, String)>,
    region: &'static str,
    unix_seconds: u64,
    body: Vec<u8>,
    secret: String,
}

fn input() -> impl Strategy<Value = Input> {
    (
        prop::sample::select(vec!["GET", "PUT", "HEAD", "DELETE", "POST"]),
        "\\PC{1,24}",
        prop::collection::vec(("[a-zA-Z0-9 +/=&%é-]{1,8}", "\\PC{0,8}"), 0..6),
        prop::collection::btree_map("[a-z0-9-]{1,10}", "[!-~]{1,12}", 0..5),
        prop::sample::select(vec!["us-east-1", "eu-west-3", "auto"]),
        1_000_000_000u64..2_000_000_000,
        prop::collection::vec(any::<u8>(), 0..32),
        "[!-~]{1,40}",
    )
        .prop_map(
            |(method, key, query, meta, region, unix_seconds, body, secret)| Input {
                method,
                key,
                query,
                meta: meta.into_iter().collect(),
                region,
                unix_seconds,
                body,
                secret,
            },
        )
}

fn build(input: &Input) -> http::Request<()> {
    let mut uri = format!(
        "https://bucket.s3.amazonaws.com/{}",
        uri_encode(&input.key, false)
    );
    for (index, (name, value)) in input.query.iter().enumerate() {
        uri.push(if index == 0 { '?' } else { '&' });
        uri.push_str(&uri_encode(name, true));
        uri.push('=');
        uri.push_str(&uri_encode(value, true));
    }
    let mut request = http::Request::builder()
        .method(input.method)
        .uri(uri)
        .body(())
        .unwrap();
    for (name, value) in &input.meta {
        request.headers_mut().append(
            HeaderName::from_bytes(format!("x-amz-meta-{name}").as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    request
}

fn sign(input: &Input, request: &mut http::Request<()>) -> Signature {
    let credentials = Credentials::new("AKIDEXAMPLE", input.secret.clone(), None);
    let time = SigningTime::from_unix(input.unix_seconds).unwrap();
    let params = SigningParams::new(input.region, "s3", time, PayloadHash::of(&input.body));
    Signer::new()
        .sign_headers(request, &credentials, &params)
        .unwrap()
}

/// One change to a signed component, chosen by `which`.
fn mutate(input: &Input, which: usize) -> Input {
    let mut changed = input.clone();
    match which % 9 {
        0 => changed.method = if input.method == "GET" { "PUT" } else { "GET" },
        1 => changed.key.push('x'),
        2 => changed.query.push(("added".into(), "1".into())),
        3 => match changed.query.first_mut() {
            Some((_, value)) => value.push('v'),
            None => changed.query.push(("q".into(), String::new())),
        },
        4 => match changed.meta.first_mut() {
            Some((_, value)) => value.push('m'),
            None => changed.meta.push(("m".into(), "1".into())),
        },
        5 => {
            changed.region = if input.region == "auto" {
                "us-east-1"
            } else {
                "auto"
            }
        }
        6 => changed.unix_seconds += 1,
        7 => changed.body.push(0),
        _ => changed.secret.push('s'),
    }
    changed
}

/// Example credentials and a fixed scope for properties that vary the request.
fn fixed_scope(payload: PayloadHash) -> (Credentials, SigningParams<'static>) {
    let time = SigningTime::from_unix(1_369_353_600).unwrap();
    (
        Credentials::new("AKID", "secret", None),
        SigningParams::new("us-east-1", "s3", time, payload),
    )
}

proptest! {
    #[test]
    fn changing_a_signed_component_changes_the_signature(input in input(), which in 0usize..9) {
        let original = sign(&input, &mut build(&input));
        let changed = mutate(&input, which);
        let resigned = sign(&changed, &mut build(&changed));
        prop_assert_ne!(original, resigned, "mutation {} did not change the signature", which % 9);
    }

    #[test]
    fn unsigned_headers_do_not_change_the_signature(
        input in input(),
        agent in "[!-~]{1,20}",
        trace in "[!-~]{1,20}",
    ) {
        let original = sign(&input, &mut build(&input));
        let mut request = build(&input);
        let headers = request.headers_mut();
        headers.insert("user-agent", HeaderValue::from_str(&agent).unwrap());
        headers.insert("x-amzn-trace-id", HeaderValue::from_str(&trace).unwrap());
        headers.insert("accept-encoding", HeaderValue::from_static("gzip"));
        headers.insert("content-length", HeaderValue::from_static("0"));
        headers.insert("expect", HeaderValue::from_static("100-continue"));
        prop_assert_eq!(sign(&input, &mut request), original);
        let signed_headers = request.headers()["authorization"].to_str().unwrap().to_owned();
        prop_assert!(!signed_headers.contains("user-agent"));
    }

    #[test]
    fn query_order_does_not_matter(input in input(), seed in any::<u64>()) {
        let original = sign(&input, &mut build(&input));
        let mut shuffled = input.clone();
        // A deterministic permutation derived from the seed.
        let len = shuffled.query.len();
        if len > 1 {
            for index in (1..len).rev() {
                let other = (seed.rotate_left(index as u32) as usize) % (index + 1);
                shuffled.query.swap(index, other);
            }
        }
        prop_assert_eq!(sign(&shuffled, &mut build(&shuffled)), original);
    }

    #[test]
    fn encoded_key_is_the_canonical_path(key in "\\PC{1,40}") {
        // What a client sends (`uri_encode(key)`) is byte-for-byte the canonical URI.
        let path = format!("/bucket/{}", uri_encode(&key, false));
        let mut request = http::Request::get(format!("https://s3.amazonaws.com{path}")).body(()).unwrap();
        let (credentials, params) = fixed_scope(PayloadHash::Empty);
        let report = Signer::new().sign_headers_with_report(&mut request, &credentials, &params).unwrap();
        let canonical_path = report.canonical_request.lines().nth(1).unwrap().to_owned();
        prop_assert_eq!(canonical_path, path);
    }

    #[test]
    fn presign_accepts_exactly_one_second_to_seven_days(seconds in 0u64..700_000) {
        let request = http::Request::put("https://bucket.s3.amazonaws.com/key").body(()).unwrap();
        let (credentials, params) = fixed_scope(PayloadHash::Unsigned);
        let result = Signer::new().presign(&request, &credentials, &params, Duration::from_secs(seconds));
        prop_assert_eq!(result.is_ok(), (1..=604_800).contains(&seconds));
        if let Ok(presigned) = result {
            let expected = format!("X-Amz-Expires={seconds}&");
            prop_assert!(presigned.url().contains(&expected));
        }
    }
}

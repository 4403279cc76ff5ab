//! The AWS S3 documentation examples under S3 rules: header-signed GET with
//! Range, PUT, GET `?lifecycle`, list objects, presigned GET, and both chunked
//! uploads (seed, every chunk signature and the exact encoded body).

mod common;

use std::time::Duration;

use common::{parse_request, read_text, testdata, to_http};
use http::header::CONTENT_LENGTH;
use s3_sigv4::{
    CHUNK_TERMINATOR, ChunkedLayout, Credentials, HeaderSelection, PayloadHash, Signer,
    SigningParams, SigningSettings, SigningTime,
};

const ACCESS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

fn credentials() -> Credentials {
    Credentials::new(ACCESS_KEY, SECRET_KEY, None)
}

fn time() -> SigningTime {
    SigningTime::from_parts(2013, 5, 24, 0, 0, 0).unwrap()
}

fn example(case: &str, file: &str) -> String {
    read_text(&testdata(&format!("s3-sigv4-examples/v4/{case}/{file}")))
}

/// The `Authorization` line of a `*-signed-request.txt` file.
fn expected_authorization(case: &str) -> String {
    let signed = example(case, "header-signed-request.txt");
    let line = signed
        .lines()
        .find_map(|l| l.strip_prefix("Authorization:"))
        .expect("authorization line");
    line.trim().to_owned()
}

/// Signs `request.txt` of `case` with `payload` and compares every artifact.
fn check_header_case(case: &str, payload: PayloadHash) {
    let mut request = to_http(&parse_request(&example(case, "request.txt")).0);
    let params = SigningParams::new("us-east-1", "s3", time(), payload);
    let report = Signer::new()
        .sign_headers_with_report(&mut request, &credentials(), &params)
        .unwrap();
    assert_eq!(
        report.canonical_request,
        example(case, "header-canonical-request.txt"),
        "{case}"
    );
    assert_eq!(
        report.string_to_sign,
        example(case, "header-string-to-sign.txt"),
        "{case}"
    );
    assert_eq!(
        report.signature.to_hex(),
        example(case, "header-signature.txt"),
        "{case}"
    );
    assert_eq!(
        request.headers()["authorization"],
        expected_authorization(case).as_str()
    );
}

#[test]
fn get_object_with_range() {
    check_header_case("get-object", PayloadHash::Empty);
}

#[test]
fn put_object() {
    let (_, body) = parse_request(&example("put-object", "request.txt"));
    assert_eq!(body, b"Welcome to Amazon S3.");
    check_header_case("put-object", PayloadHash::of(&body));
}

#[test]
fn get_bucket_lifecycle() {
    check_header_case("get-bucket-lifecycle", PayloadHash::Empty);
}

#[test]
fn list_objects() {
    check_header_case("list-objects", PayloadHash::Empty);
}

#[test]
fn presigned_get_object() {
    let case = "presigned-get-object";
    let (raw, _) = parse_request(&example(case, "request.txt"));
    let request = http::Request::get("https://examplebucket.s3.amazonaws.com/test.txt")
        .body(())
        .unwrap();
    assert_eq!(raw.headers["host"], "examplebucket.s3.amazonaws.com");
    let params = SigningParams::new("us-east-1", "s3", time(), PayloadHash::Unsigned);
    let (presigned, report) = Signer::new()
        .presign_with_report(
            &request,
            &credentials(),
            &params,
            Duration::from_secs(86_400),
        )
        .unwrap();
    assert_eq!(
        report.canonical_request,
        example(case, "query-canonical-request.txt")
    );
    assert_eq!(
        report.string_to_sign,
        example(case, "query-string-to-sign.txt")
    );
    assert_eq!(
        report.signature.to_hex(),
        example(case, "query-signature.txt")
    );
    assert_eq!(presigned.url(), example(case, "presigned-url.txt"));
    assert!(presigned.headers().is_empty());
    let shown = format!("{presigned:?}");
    assert!(!shown.contains(&report.signature.to_hex()), "{shown}");
}

/// `"signature": "..."` values of `chunks.json`, in file order (the chunk
/// signatures, then the trailer signature if any).
fn expected_chunk_signatures(case: &str) -> Vec<String> {
    let json = example(case, "chunks.json");
    json.split("\"signature\": \"")
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap().to_owned())
        .collect()
}

fn check_chunked_case(
    case: &str,
    layout: ChunkedLayout,
    trailer: Option<&str>,
    settings: &SigningSettings,
) {
    let encoded_expected = std::fs::read(testdata(&format!(
        "s3-sigv4-examples/v4/{case}/encoded-body.bin"
    )))
    .unwrap();
    let (raw, _) = parse_request(&example(case, "request.txt"));
    let mut request = http::Request::put(raw.path.as_str()).body(()).unwrap();
    for name in ["host", "x-amz-storage-class"] {
        request
            .headers_mut()
            .insert(name, raw.headers[name].clone());
    }
    assert_eq!(layout.encoded_length(), encoded_expected.len() as u64);

    let signer = Signer::new();
    let params = SigningParams::new("us-east-1", "s3", time(), PayloadHash::Unsigned)
        .with_settings(settings);
    let mut encoder = signer
        .sign_streaming(&mut request, &credentials(), &params, layout.clone())
        .unwrap();
    // The headers `sign_streaming` set are the documented ones.
    for (name, value) in raw.headers.iter() {
        if name != "x-amz-date" {
            assert_eq!(
                request.headers().get(name),
                Some(value),
                "{case}: header {name}"
            );
        }
    }
    assert_eq!(
        request.headers()["authorization"],
        expected_authorization(case).as_str()
    );

    let payload = vec![b'a'; 66_560];
    let mut body = vec![0u8; layout.encoded_length() as usize];
    let mut position = 0;
    for chunk in payload.chunks(layout.chunk_size()) {
        position += encoder.encode_chunk(chunk, &mut body[position..]).unwrap();
    }
    position += encoder.finish(trailer, &mut body[position..]).unwrap();
    assert_eq!(position, body.len());
    assert!(body == encoded_expected, "{case}: encoded body differs");

    // Every signature of chunks.json (seed first) appears in order in the body.
    let signatures = expected_chunk_signatures(case);
    let seed = example(case, "header-signature.txt");
    let mut search_from = 0;
    for signature in std::iter::once(&seed).chain(&signatures[..]) {
        if *signature == seed {
            assert!(expected_authorization(case).ends_with(signature.as_str()));
            continue;
        }
        let found = body[search_from..]
            .windows(64)
            .position(|w| w == signature.as_bytes())
            .unwrap_or_else(|| panic!("{case}: signature {signature} missing"));
        search_from += found + 64;
    }

    // The zero-copy path produces the same bytes.
    let mut params_again = params;
    params_again = params_again.with_payload(layout.mode().payload_hash());
    let mut request = http::Request::put(raw.path.as_str()).body(()).unwrap();
    for name in ["host", "x-amz-storage-class"] {
        request
            .headers_mut()
            .insert(name, raw.headers[name].clone());
    }
    layout.apply_headers(request.headers_mut());
    let seed = signer
        .sign_headers(&mut request, &credentials(), &params_again)
        .unwrap();
    let mut encoder = signer
        .chunk_encoder(&credentials(), &params_again, seed, layout.clone())
        .unwrap();
    let mut vectored = Vec::new();
    for chunk in payload.chunks(layout.chunk_size()) {
        vectored.extend_from_slice(encoder.chunk_header(chunk).unwrap().as_ref());
        vectored.extend_from_slice(chunk);
        vectored.extend_from_slice(CHUNK_TERMINATOR);
    }
    let mut tail = vec![0u8; layout.final_length()];
    let written = encoder.finish(trailer, &mut tail).unwrap();
    vectored.extend_from_slice(&tail[..written]);
    assert!(
        vectored == encoded_expected,
        "{case}: vectored body differs"
    );
}

#[test]
fn chunked_upload() {
    let layout = ChunkedLayout::signed(66_560, 65_536).unwrap();
    check_chunked_case(
        "streaming-chunked-put-object",
        layout,
        None,
        &SigningSettings::s3(),
    );
}

#[test]
fn chunked_upload_with_trailer() {
    let layout =
        ChunkedLayout::signed_with_trailer(66_560, 65_536, "x-amz-checksum-crc32c", 8).unwrap();
    // The documented request does not sign `content-length`.
    let settings = SigningSettings::s3().headers(HeaderSelection::new().exclude(CONTENT_LENGTH));
    check_chunked_case(
        "streaming-chunked-put-object-trailer",
        layout,
        Some("sOO8/Q=="),
        &settings,
    );
}

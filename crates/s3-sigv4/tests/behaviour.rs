//! Presigning for every method, header selection, typed errors and the
//! unsigned-trailer streaming mode, against hand-derived expected values.

use std::time::Duration;

use proptest::prelude::*;
use s3_sigv4::{
    ChunkEncoder, ChunkedLayout, Credentials, Error, HeaderSelection, InvalidExpiry, InvalidHeader,
    InvalidParameter, InvalidUri, PayloadHash, Signer, SigningParams, SigningSettings, SigningTime,
    StreamingError,
};

fn credentials() -> Credentials {
    Credentials::new(
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        None,
    )
}

fn time() -> SigningTime {
    SigningTime::parse_amz_date("20130524T000000Z").unwrap()
}

fn params(payload: PayloadHash) -> SigningParams<'static> {
    SigningParams::new("us-east-1", "s3", time(), payload)
}

/// A PUT signed for `layout`, and its encoder.
fn start_streaming(signer: &Signer, layout: &ChunkedLayout) -> (http::Request<()>, ChunkEncoder) {
    let mut request = http::Request::put("https://b.s3.amazonaws.com/k")
        .body(())
        .unwrap();
    let encoder = signer
        .sign_streaming(
            &mut request,
            &credentials(),
            &params(PayloadHash::Unsigned),
            layout.clone(),
        )
        .unwrap();
    (request, encoder)
}

#[test]
fn presign_expiry_bounds() {
    let request = http::Request::get("https://b.s3.amazonaws.com/k")
        .body(())
        .unwrap();
    let signer = Signer::new();
    let p = params(PayloadHash::Unsigned);
    for ok in [1, 60, 604_800] {
        assert!(
            signer
                .presign(&request, &credentials(), &p, Duration::from_secs(ok))
                .is_ok()
        );
    }
    for bad in [
        Duration::ZERO,
        Duration::from_millis(999),
        Duration::from_secs(604_801),
    ] {
        let err = signer
            .presign(&request, &credentials(), &p, bad)
            .unwrap_err();
        assert_eq!(err, Error::InvalidExpiry(InvalidExpiry { requested: bad }));
        assert!(err.to_string().contains("604800"), "{err}");
    }
}

#[test]
fn presign_upload_part_with_token_and_extra_header() {
    let request =
        http::Request::put("https://b.s3.amazonaws.com/my%20key?partNumber=2&uploadId=u-1")
            .header("content-type", "application/octet-stream")
            .header("user-agent", "not-signed")
            .body(())
            .unwrap();
    let creds = Credentials::new("AKIDEXAMPLE", "secret", Some("tok/en+=".into()));
    let (presigned, report) = Signer::new()
        .presign_with_report(
            &request,
            &creds,
            &params(PayloadHash::Unsigned),
            Duration::from_secs(900),
        )
        .unwrap();
    let expected_canonical = "PUT\n/my%20key\n\
        X-Amz-Algorithm=AWS4-HMAC-SHA256\
        &X-Amz-Credential=AKIDEXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request\
        &X-Amz-Date=20130524T000000Z&X-Amz-Expires=900\
        &X-Amz-Security-Token=tok%2Fen%2B%3D\
        &X-Amz-SignedHeaders=content-type%3Bhost\
        &partNumber=2&uploadId=u-1\n\
        content-type:application/octet-stream\nhost:b.s3.amazonaws.com\n\n\
        content-type;host\nUNSIGNED-PAYLOAD";
    assert_eq!(report.canonical_request, expected_canonical);
    assert!(presigned.url().starts_with(
        "https://b.s3.amazonaws.com/my%20key?partNumber=2&uploadId=u-1&X-Amz-Algorithm="
    ));
    assert!(
        presigned
            .url()
            .ends_with(&format!("&X-Amz-Signature={}", report.signature.to_hex()))
    );
    assert_eq!(presigned.method(), http::Method::PUT);
    assert_eq!(presigned.headers().len(), 1);
    assert_eq!(
        presigned.headers()["content-type"],
        "application/octet-stream"
    );
    assert!(presigned.uri().is_ok());
    let shown = format!("{presigned:?}");
    assert!(
        !shown.contains("tok%2F") && !shown.contains(&report.signature.to_hex()),
        "{shown}"
    );
}

#[test]
fn presign_every_method_and_reject_streaming() {
    let signer = Signer::new();
    for method in ["GET", "PUT", "HEAD", "DELETE"] {
        let request = http::Request::builder()
            .method(method)
            .uri("https://b.s3.amazonaws.com/k")
            .body(())
            .unwrap();
        let (_, report) = signer
            .presign_with_report(
                &request,
                &credentials(),
                &params(PayloadHash::Unsigned),
                Duration::from_secs(5),
            )
            .unwrap();
        assert!(
            report
                .canonical_request
                .starts_with(&format!("{method}\n/k\n"))
        );
    }
    let request = http::Request::put("https://b.s3.amazonaws.com/k")
        .body(())
        .unwrap();
    let err = signer
        .presign(
            &request,
            &credentials(),
            &params(PayloadHash::StreamingSigned),
            Duration::from_secs(5),
        )
        .unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidParameter(InvalidParameter::Payload(_))
    ));
}

fn signed_header_names(request: &http::Request<()>) -> String {
    let authorization = request.headers()["authorization"].to_str().unwrap();
    let start = authorization.find("SignedHeaders=").unwrap() + "SignedHeaders=".len();
    authorization[start..].split(',').next().unwrap().to_owned()
}

#[test]
fn header_selection() {
    let build = || {
        http::Request::put("https://b.s3.amazonaws.com/k")
            .header("content-length", "0")
            .header("accept-encoding", "gzip")
            .header("content-type", "text/plain")
            .header("cache-control", "no-cache")
            .header("x-amz-meta-a", "1")
            .body(())
            .unwrap()
    };
    let signer = Signer::new();
    let sign_with = |settings: &SigningSettings| {
        let mut request = build();
        let p = params(PayloadHash::Empty).with_settings(settings);
        signer
            .sign_headers(&mut request, &credentials(), &p)
            .unwrap();
        signed_header_names(&request)
    };
    assert_eq!(
        sign_with(&SigningSettings::s3()),
        "cache-control;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-a"
    );
    assert_eq!(
        sign_with(&SigningSettings::s3().headers(HeaderSelection::new().only_required(true))),
        "content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-a"
    );
    assert_eq!(
        sign_with(
            &SigningSettings::s3().headers(
                HeaderSelection::new()
                    .sign_zero_content_length(true)
                    .sign_accept_encoding(true)
                    .exclude(http::header::CACHE_CONTROL)
                    // Required headers stay signed even when excluded.
                    .exclude(http::header::CONTENT_TYPE)
            )
        ),
        "accept-encoding;content-length;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-a"
    );
}

#[test]
fn signing_twice_replaces_previous_signature() {
    let mut request = http::Request::get("https://b.s3.amazonaws.com/k")
        .body(())
        .unwrap();
    let signer = Signer::new();
    let creds = Credentials::new("AKIDEXAMPLE", "secret", Some("token".into()));
    let first = signer
        .sign_headers(&mut request, &creds, &params(PayloadHash::Empty))
        .unwrap();
    let headers_after_first = request.headers().clone();
    let second = signer
        .sign_headers(&mut request, &creds, &params(PayloadHash::Empty))
        .unwrap();
    assert_eq!(first, second);
    assert_eq!(request.headers(), &headers_after_first);
    assert_eq!(request.headers().get_all("authorization").iter().count(), 1);
    assert_eq!(request.headers()["x-amz-security-token"], "token");
}

#[test]
fn typed_errors_for_bad_input() {
    let signer = Signer::new();
    let sign = |uri: &str, creds: &Credentials| {
        let mut request = http::Request::get(uri).body(()).unwrap();
        signer.sign_headers(&mut request, creds, &params(PayloadHash::Empty))
    };
    let creds = credentials();
    assert_eq!(
        sign("https://b.s3.amazonaws.com/a%zzb", &creds),
        Err(Error::InvalidUri(InvalidUri::BadPercentEncoding {
            component: "path",
            offset: 2
        }))
    );
    assert_eq!(
        sign("https://b.s3.amazonaws.com/a?x=%4", &creds),
        Err(Error::InvalidUri(InvalidUri::BadPercentEncoding {
            component: "query",
            offset: 2
        }))
    );
    assert_eq!(
        sign("/no-host", &creds),
        Err(Error::InvalidUri(InvalidUri::MissingHost))
    );
    let bad_token = Credentials::new("AKID", "s", Some("line\r\nbreak".into()));
    assert_eq!(
        sign("https://b.s3.amazonaws.com/k", &bad_token),
        Err(Error::InvalidParameter(InvalidParameter::SessionToken))
    );
    let mut request = http::Request::get("https://b.s3.amazonaws.com/k")
        .body(())
        .unwrap();
    let bad_region = SigningParams::new("us east", "s3", time(), PayloadHash::Empty);
    assert_eq!(
        signer.sign_headers(&mut request, &creds, &bad_region),
        Err(Error::InvalidParameter(InvalidParameter::Region))
    );
    assert_eq!(
        ChunkedLayout::signed_with_trailer(10, 8192, "x-amz-checksum-é", 8),
        Err(Error::InvalidHeader(InvalidHeader::InvalidName {
            name: "x-amz-checksum-é".into()
        }))
    );
    // The signature line's own name names no trailer (the body would hold it twice).
    for layout in [
        ChunkedLayout::signed_with_trailer(10, 8192, "x-amz-trailer-signature", 8),
        ChunkedLayout::unsigned_with_trailer(10, 8192, "x-amz-trailer-signature", 8),
    ] {
        assert_eq!(
            layout,
            Err(Error::InvalidHeader(InvalidHeader::ReservedTrailerName))
        );
    }
    assert_eq!(
        ChunkedLayout::signed(10, 1024),
        Err(Error::Streaming(StreamingError::ChunkSizeTooSmall {
            chunk_size: 1024
        }))
    );
    assert!(matches!(
        PayloadHash::from_hex("abc"),
        Err(Error::InvalidParameter(InvalidParameter::Payload(_)))
    ));
}

#[test]
fn unsigned_trailer_body_is_exact() {
    let layout =
        ChunkedLayout::unsigned_with_trailer(10_000, 8192, "x-amz-checksum-crc32", 8).unwrap();
    let (request, mut encoder) = start_streaming(&Signer::new(), &layout);
    let headers = request.headers();
    assert_eq!(
        headers["x-amz-content-sha256"],
        "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
    );
    assert_eq!(headers["content-encoding"], "aws-chunked");
    assert_eq!(headers["x-amz-decoded-content-length"], "10000");
    assert_eq!(headers["x-amz-trailer"], "x-amz-checksum-crc32");

    let payload: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    let mut body = vec![0u8; layout.encoded_length() as usize];
    let mut at = 0;
    for chunk in payload.chunks(8192) {
        at += encoder.encode_chunk(chunk, &mut body[at..]).unwrap();
    }
    at += encoder.finish(Some("AAAAAA=="), &mut body[at..]).unwrap();
    let mut expected = b"2000\r\n".to_vec();
    expected.extend_from_slice(&payload[..8192]);
    expected.extend_from_slice(b"\r\n710\r\n");
    expected.extend_from_slice(&payload[8192..]);
    expected.extend_from_slice(b"\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n");
    assert_eq!(at, expected.len());
    assert!(body == expected);
    assert_eq!(
        headers["content-length"],
        expected.len().to_string().as_str()
    );
}

#[test]
fn encoder_rejects_misuse() {
    let layout =
        ChunkedLayout::signed_with_trailer(20_000, 8192, "x-amz-checksum-crc32", 8).unwrap();
    let signer = Signer::new();
    let (mut request, mut encoder) = start_streaming(&signer, &layout);
    let streaming = |e: Error| match e {
        Error::Streaming(kind) => kind,
        other => panic!("unexpected {other:?}"),
    };
    let mut out = vec![0u8; 10_000];
    assert_eq!(
        streaming(encoder.encode_chunk(&[0; 100], &mut out).unwrap_err()),
        StreamingError::ChunkLength {
            expected: 8192,
            actual: 100
        }
    );
    assert_eq!(
        streaming(
            encoder
                .encode_chunk(&[0; 8192], &mut out[..50])
                .unwrap_err()
        ),
        StreamingError::BufferTooSmall {
            needed: layout.encoded_chunk_length(8192),
            available: 50
        }
    );
    assert_eq!(
        streaming(encoder.finish(Some("AAAAAA=="), &mut out).unwrap_err()),
        StreamingError::MissingData {
            declared: 20_000,
            written: 0
        }
    );
    encoder.encode_chunk(&[0; 8192], &mut out).unwrap();
    encoder.encode_chunk(&[0; 8192], &mut out).unwrap();
    assert_eq!(
        streaming(encoder.encode_chunk(&[0; 8192], &mut out).unwrap_err()),
        StreamingError::TooMuchData { declared: 20_000 }
    );
    encoder.encode_chunk(&[0; 3616], &mut out).unwrap();
    assert_eq!(
        streaming(encoder.finish(Some("short"), &mut out).unwrap_err()),
        StreamingError::TrailerMismatch
    );
    assert_eq!(
        encoder.finish(Some("AA\r\nAA=="), &mut out).unwrap_err(),
        Error::InvalidHeader(InvalidHeader::LineBreakInValue {
            name: "x-amz-checksum-crc32".into()
        })
    );
    assert!(encoder.finish(Some("AAAAAA=="), &mut out).is_ok());
    assert_eq!(
        streaming(encoder.finish(Some("AAAAAA=="), &mut out).unwrap_err()),
        StreamingError::Finished
    );
    // An encoder whose params disagree with the layout is refused.
    let seed = signer
        .sign_headers(&mut request, &credentials(), &params(PayloadHash::Empty))
        .unwrap();
    assert!(
        signer
            .chunk_encoder(&credentials(), &params(PayloadHash::Empty), seed, layout)
            .is_err()
    );
}

proptest! {
    #[test]
    fn encoded_length_matches_encoder_output(
        decoded in 0u64..70_000,
        chunk_size in 8192usize..20_000,
        mode in 0u8..3,
    ) {
        let layout = match mode {
            0 => ChunkedLayout::signed(decoded, chunk_size),
            1 => ChunkedLayout::signed_with_trailer(decoded, chunk_size, "x-amz-checksum-sha256", 44),
            _ => ChunkedLayout::unsigned_with_trailer(decoded, chunk_size, "x-amz-checksum-crc64nvme", 12),
        }
        .unwrap();
        let trailer = match mode {
            0 => None,
            1 => Some("A".repeat(44)),
            _ => Some("B".repeat(12)),
        };
        let (request, mut encoder) = start_streaming(&Signer::new(), &layout);
        let payload = vec![7u8; decoded as usize];
        let mut total = 0usize;
        let mut buffer = vec![0u8; layout.encoded_chunk_length(chunk_size)];
        for chunk in payload.chunks(chunk_size) {
            total += encoder.encode_chunk(chunk, &mut buffer).unwrap();
        }
        let mut tail = vec![0u8; layout.final_length()];
        total += encoder.finish(trailer.as_deref(), &mut tail).unwrap();
        prop_assert_eq!(total as u64, layout.encoded_length());
        prop_assert_eq!(
            request.headers()["content-length"].to_str().unwrap(),
            layout.encoded_length().to_string()
        );
    }
}

//! The client end to end over HTTP/2 (TLS with ALPN `h2`, the `http2` feature) against the
//! loopback fault server: exact bodies both ways, valid signatures, a streamed download of
//! several MiB, and the same typed errors as over HTTP/1.1 for a stalled body, a reset stream
//! and a dropped connection. Every test checks that the server really spoke HTTP/2.
//!
//! Runs with `cargo test -p s3-wire-tokio --features http2 --test http2`; without the
//! feature the client speaks only HTTP/1.1 and this file compiles to nothing.
#![cfg(feature = "http2")]

mod support;

use std::time::Duration;

use bytes::Bytes;
use s3_wire_tokio::s3_ops::ChecksumAlgorithm;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::{Client, ClientBuilder, Error, ErrorKind, TimeoutKind, TransportErrorKind};
use support::fault::{FaultServer, Recorded, Reply, generated_byte};
use support::pki::{DEFAULT_VERSIONS, TestCa, server_config};
use support::{aws_chunked, base64, crc32, data, one_shot, sigv4};

const ACCESS_KEY: &str = "AKIDHTTP2";
const SECRET_KEY: &str = "http2-secret-key";

/// A TLS fault server offering `h2` and `http/1.1` (ALPN, in that order of preference), and
/// the CA that issued its certificate.
fn h2_server(script: impl IntoIterator<Item = Reply>) -> (FaultServer, TestCa) {
    let ca = TestCa::new("s3-wire http2 test CA");
    let leaf = ca.issue(&["localhost"]);
    let config = server_config(&leaf, DEFAULT_VERSIONS, &[b"h2", b"http/1.1"]);
    (FaultServer::start_tls_with(script, config), ca)
}

/// A client of `server` trusting `ca`; HTTP/2 is on by default with the feature.
fn builder(server: &FaultServer, ca: &TestCa) -> ClientBuilder {
    Client::builder()
        .resolve("localhost", server.addr())
        .endpoint(format!("https://localhost:{}", server.addr().port()))
        .proxy_from_env(false)
        .add_root_certificate_der(ca.der())
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .retry(support::retry(1))
}

fn bucket() -> s3_wire_tokio::s3_ops::BucketName {
    s3_wire_tokio::bucket("bucket").unwrap()
}

fn get(key: &str) -> GetObject {
    GetObject::new(bucket(), s3_wire_tokio::key(key).unwrap())
}

/// Checks the signature of a request that arrived over HTTP/2, where the signed `host` is
/// the `:authority` pseudo-header (hyper puts it into the URI; no `Host` header is sent), as
/// S3 reads it.
fn verify_h2(request: &Recorded) -> sigv4::Signed {
    assert_eq!(request.version, http::Version::HTTP_2, "{request:?}");
    let mut request = request.clone();
    if !request.headers.contains_key("host") {
        let authority = request.uri.authority().expect(":authority").to_string();
        request
            .headers
            .insert("host", http::HeaderValue::from_str(&authority).unwrap());
    }
    support::fault::verify_recorded(&request, SECRET_KEY).unwrap_or_else(|err| panic!("{err}"))
}

/// The server's only TLS session negotiated `alpn`.
fn assert_negotiated(server: &FaultServer, alpn: &[u8]) {
    let sessions = server.tls_sessions();
    assert!(!sessions.is_empty());
    for session in sessions {
        assert_eq!(session.alpn.as_deref(), Some(alpn), "{session:?}");
    }
}

#[tokio::test]
async fn http2_is_negotiated_and_a_get_returns_the_exact_body() {
    let object = data(300_000, 1);
    let (server, ca) = h2_server([Reply::ok(object.clone())]);
    let client = builder(&server, &ca).build().unwrap();
    let response = client.get_object(get("k")).await.unwrap();
    assert_eq!(response.body.content_length(), Some(300_000));
    assert_eq!(response.body.collect().await.unwrap(), object);

    assert_negotiated(&server, b"h2");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].uri.path(), "/bucket/k");
    verify_h2(&requests[0]);
}

#[tokio::test]
async fn puts_over_http2_deliver_the_exact_bytes_validly_signed() {
    let bytes = data(500_000, 2);
    let streamed = data(200_000, 3);
    let (server, ca) = h2_server([
        Reply::empty().with_header("etag", "\"a\""),
        Reply::empty().with_header("etag", "\"b\""),
    ]);
    let client = builder(&server, &ca).build().unwrap();
    let put = |key: &str| {
        PutObject::new(bucket(), s3_wire_tokio::key(key).unwrap())
            .checksum_algorithm(ChecksumAlgorithm::Crc32)
    };
    client
        .put_object(put("bytes"), bytes.clone())
        .await
        .unwrap();
    client
        .put_object(put("stream"), one_shot(&streamed, 16_384))
        .await
        .unwrap();

    assert_negotiated(&server, b"h2");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // Bytes: sent as they are, UNSIGNED-PAYLOAD over TLS, with a CRC32 header (signed) the
    // store checks the bytes against.
    let signed = verify_h2(&requests[0]);
    assert_eq!(signed.payload, "UNSIGNED-PAYLOAD");
    assert!(
        signed
            .signed_headers
            .iter()
            .any(|h| h == "x-amz-checksum-crc32")
    );
    assert_eq!(requests[0].body, bytes);
    assert!(requests[0].body_complete);
    assert_eq!(
        requests[0].header("x-amz-checksum-crc32"),
        Some(base64(&crc32(&bytes).to_be_bytes()).as_str())
    );
    // A one-shot stream: aws-chunked with a CRC32 trailer, over HTTP/2's own framing.
    let signed = verify_h2(&requests[1]);
    assert_eq!(signed.payload, "STREAMING-UNSIGNED-PAYLOAD-TRAILER");
    let decoded = aws_chunked::decode(&requests[1].body).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(decoded.data, streamed);
    assert_eq!(
        decoded.trailers,
        [(
            "x-amz-checksum-crc32".to_owned(),
            base64(&crc32(&streamed).to_be_bytes())
        )]
    );
}

#[tokio::test]
async fn a_download_of_several_mib_streams_over_http2() {
    const LEN: u64 = 6 * 1024 * 1024;
    let (server, ca) = h2_server([Reply::Generated { len: LEN }]);
    let client = builder(&server, &ca).build().unwrap();
    let mut body = client.get_object(get("big")).await.unwrap().body;
    assert_eq!(body.content_length(), Some(LEN));
    let mut offset = 0u64;
    let mut chunks = 0;
    while let Some(chunk) = body.next_chunk().await {
        let chunk = chunk.unwrap();
        for (i, &byte) in chunk.iter().enumerate() {
            assert_eq!(
                byte,
                generated_byte(offset + i as u64),
                "byte {}",
                offset + i as u64
            );
        }
        offset += chunk.len() as u64;
        chunks += 1;
    }
    assert_eq!(offset, LEN);
    assert_eq!(body.bytes_received(), LEN);
    assert!(chunks > 1, "streamed in pieces, not buffered whole");
    assert_eq!(server.bytes_produced(), LEN);
    assert_negotiated(&server, b"h2");
    verify_h2(&server.requests()[0]);
}

/// Runs `script` once over HTTP/2 and once over HTTP/1.1 (the same server, the client with
/// HTTP/2 turned off), returning each error of the body (or of the request).
async fn fail_both_ways(
    script: impl Fn() -> Vec<Reply>,
    configure: impl Fn(ClientBuilder) -> ClientBuilder,
) -> [(Error, u32); 2] {
    let mut errors = Vec::new();
    for (http2, alpn) in [(true, &b"h2"[..]), (false, &b"http/1.1"[..])] {
        let (server, ca) = h2_server(script());
        let client = configure(builder(&server, &ca).http2(http2))
            .build()
            .unwrap();
        let error = match client.get_object(get("k")).await {
            Ok(response) => response
                .body
                .collect()
                .await
                .expect_err("the body must fail"),
            Err(error) => error,
        };
        assert_negotiated(&server, alpn);
        let version = if http2 {
            http::Version::HTTP_2
        } else {
            http::Version::HTTP_11
        };
        let requests = server.requests();
        assert!(
            requests.iter().all(|r| r.version == version),
            "{requests:?}"
        );
        errors.push((error, requests.len() as u32));
    }
    errors.try_into().unwrap()
}

#[tokio::test]
async fn a_stall_mid_body_is_the_same_timeout_over_http2_as_over_http1() {
    let object = data(10_000, 4);
    let stall = Duration::from_millis(300);
    let [h2, h1] = fail_both_ways(
        || vec![Reply::stalled(&object, 3_000)],
        |builder| builder.stall_timeout(stall),
    )
    .await;
    for (protocol, (error, requests)) in [("HTTP/2", &h2), ("HTTP/1.1", &h1)] {
        assert!(
            matches!(error.kind(), ErrorKind::Timeout(TimeoutKind::Stalled(limit)) if *limit == stall),
            "{protocol}: {error:?}"
        );
        assert_eq!(*requests, 1, "{protocol}");
    }
}

#[tokio::test]
async fn a_reset_stream_mid_body_is_the_same_error_over_http2_as_over_http1() {
    // The body fails after 4,000 of 10,000 bytes: hyper resets the stream (RST_STREAM) over
    // HTTP/2 and aborts the connection over HTTP/1.1.
    let object = data(10_000, 5);
    let [h2, h1] = fail_both_ways(|| vec![Reply::truncated(&object, 4_000)], |b| b).await;
    for (protocol, (error, _)) in [("HTTP/2", &h2), ("HTTP/1.1", &h1)] {
        assert!(
            matches!(
                error.kind(),
                ErrorKind::BodyLength {
                    expected: 10_000,
                    received: 4_000
                }
            ),
            "{protocol}: {error:?}"
        );
    }
}

#[tokio::test]
async fn a_dropped_connection_is_the_same_error_over_http2_as_over_http1_and_is_retried() {
    let [h2, h1] = fail_both_ways(|| vec![Reply::Reset], |b| b).await;
    for (protocol, (error, requests)) in [("HTTP/2", &h2), ("HTTP/1.1", &h1)] {
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Transport(TransportErrorKind::ConnectionDropped)
            ),
            "{protocol}: {error:?}"
        );
        assert_eq!(*requests, 1, "{protocol}");
    }

    // Retried like over HTTP/1.1: a new connection, the request signed anew.
    let (server, ca) = h2_server([Reply::Reset, Reply::ok("after the reset")]);
    let client = builder(&server, &ca)
        .retry(support::retry(2))
        .build()
        .unwrap();
    let object = client.get_object(get("k")).await.unwrap();
    assert_eq!(object.body.collect().await.unwrap(), "after the reset");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_ne!(requests[0].connection, requests[1].connection);
    for request in &requests {
        verify_h2(request);
    }
    assert_negotiated(&server, b"h2");
}

#[tokio::test]
async fn a_body_longer_than_its_content_length_over_http2_is_a_length_error() {
    // HTTP/2 frames bodies itself: DATA beyond the announced content-length is a protocol
    // error of the stream (RFC 9113 §8.1.1), never extra bytes of the object.
    let (server, ca) = h2_server([
        Reply::ok(Bytes::from(vec![b'x'; 10_000])).with_header("content-length", "1000")
    ]);
    let client = builder(&server, &ca).build().unwrap();
    let error = match client.get_object(get("k")).await {
        Ok(response) => response.body.collect().await.expect_err("too long"),
        Err(error) => error,
    };
    // The h2 client resets the stream (PROTOCOL_ERROR) on the first DATA frame that
    // overruns: not one byte of it is delivered.
    assert!(
        matches!(
            error.kind(),
            ErrorKind::BodyLength {
                expected: 1000,
                received: 0
            }
        ),
        "{error:?}"
    );
    assert_negotiated(&server, b"h2");
}

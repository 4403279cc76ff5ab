//! Tests of the test support itself: the independent SigV4 checker against the AWS worked
//! examples, and each fault-server behaviour as seen by a plain HTTP client.

mod support;

use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};
use support::fault::{FaultServer, Reply};
use support::sigv4;

const EXAMPLE_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

/// Parses a `header-signed-request.txt`: request line, `Name:value` lines, blank line, body.
fn load_example(name: &str) -> (String, String, HeaderMap, Vec<u8>) {
    let path = format!(
        "{}/tests/testdata/sigv4/{name}/header-signed-request.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("example file");
    let (head, body) = text.split_once("\n\n").unwrap_or((text.as_str(), ""));
    let mut lines = head.lines();
    let request_line = lines.next().expect("request line");
    let mut parts = request_line.split(' ');
    let method = parts.next().expect("method").to_owned();
    let target = parts.next().expect("target").to_owned();
    let mut headers = HeaderMap::new();
    for line in lines {
        let (name, value) = line.split_once(':').expect("header line");
        headers.append(
            HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    (method, target, headers, body.as_bytes().to_vec())
}

#[test]
fn sigv4_checker_accepts_the_aws_examples() {
    for (name, signature) in [
        (
            "get-object",
            "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
        ),
        (
            "list-objects",
            "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
        ),
        (
            "put-object",
            "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
        ),
    ] {
        let (method, target, headers, body) = load_example(name);
        let signed = sigv4::verify(&method, &target, &headers, Some(&body), EXAMPLE_SECRET)
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(signed.signature, signature, "{name}");
        assert_eq!(signed.amz_date, "20130524T000000Z");
        assert_eq!(signed.region, "us-east-1");
    }
}

#[test]
fn sigv4_checker_rejects_tampering() {
    let (method, target, headers, body) = load_example("get-object");
    let mut changed_range = headers.clone();
    changed_range.insert("range", HeaderValue::from_static("bytes=0-10"));
    assert!(
        sigv4::verify(
            &method,
            &target,
            &changed_range,
            Some(&body),
            EXAMPLE_SECRET
        )
        .is_err()
    );
    assert!(sigv4::verify(&method, "/test2.txt", &headers, Some(&body), EXAMPLE_SECRET).is_err());
    assert!(sigv4::verify(&method, &target, &headers, Some(&body), "wrong-secret").is_err());

    // A body that does not match x-amz-content-sha256 is caught even if the signature holds.
    let (method, target, headers, _) = load_example("put-object");
    let err = sigv4::verify(
        &method,
        &target,
        &headers,
        Some(b"other body"),
        EXAMPLE_SECRET,
    )
    .unwrap_err();
    assert!(err.contains("not the SHA-256 of the body"), "{err}");
}

#[tokio::test]
async fn fault_server_replies_with_s3_errors_in_order_and_records_requests() {
    let server = FaultServer::start([
        Reply::slow_down(),
        Reply::request_timeout(),
        Reply::internal_error(),
        Reply::error_in_200("InternalError", "inside a 200"),
        Reply::permanent_redirect("eu-west-3"),
        Reply::ok("hello").with_header("etag", "\"abc\""),
    ]);
    let client = support::http_client();
    let base = server.endpoint();
    let mut seen = Vec::new();
    for index in 0..6 {
        let response = client
            .put(format!("{base}/bucket/key-{index}?x=1"))
            .body(vec![b'a'; index * 10])
            .send()
            .await
            .expect("response");
        let status = response.status().as_u16();
        let request_id = response
            .headers()
            .get("x-amz-request-id")
            .map(|v| v.to_str().unwrap().to_owned());
        let region = response
            .headers()
            .get("x-amz-bucket-region")
            .map(|v| v.to_str().unwrap().to_owned());
        let body = response.text().await.expect("body");
        seen.push((status, request_id, region, body));
    }
    let statuses: Vec<u16> = seen.iter().map(|s| s.0).collect();
    assert_eq!(statuses, [503, 400, 500, 200, 301, 200]);
    assert!(seen[0].3.contains("<Code>SlowDown</Code>"));
    assert!(seen[0].3.contains("<RequestId>fault-req-0</RequestId>"));
    assert_eq!(seen[1].1.as_deref(), Some("fault-req-1"));
    assert!(seen[1].3.contains("<Code>RequestTimeout</Code>"));
    assert!(seen[3].3.trim_start().starts_with("<?xml") && seen[3].3.contains("<Error>"));
    assert_eq!(seen[4].2.as_deref(), Some("eu-west-3"));
    assert_eq!(seen[5].3, "hello");

    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    for (index, request) in requests.iter().enumerate() {
        assert_eq!(request.method, http::Method::PUT);
        assert_eq!(request.uri.path(), format!("/bucket/key-{index}"));
        assert_eq!(request.uri.query(), Some("x=1"));
        assert_eq!(request.body.len(), index * 10);
        assert!(request.body_complete);
    }
    // Past the script: a 500 that says so.
    let response = client.get(format!("{base}/x")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 500);
    assert!(response.text().await.unwrap().contains("script exhausted"));
}

#[tokio::test]
async fn fault_server_reset_truncate_and_stall() {
    let object: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
    let server = FaultServer::start([
        Reply::Reset,
        Reply::truncated(&object, 300),
        Reply::stalled(&object, 200),
    ]);
    let client = support::http_client();
    let url = format!("{}/bucket/object", server.endpoint());

    assert!(
        client.get(&url).send().await.is_err(),
        "reset must not yield a response"
    );

    let mut response = client.get(&url).send().await.expect("headers arrive");
    assert_eq!(response.content_length(), Some(1000));
    let mut received = Vec::new();
    let outcome = loop {
        match response.chunk().await {
            Ok(Some(chunk)) => received.extend_from_slice(&chunk),
            Ok(None) => break Ok(()),
            Err(err) => break Err(err),
        }
    };
    assert!(outcome.is_err(), "a truncated body must end in an error");
    assert_eq!(received, object[..300]);

    let mut response = client.get(&url).send().await.expect("headers arrive");
    let mut received = Vec::new();
    let stalled = tokio::time::timeout(Duration::from_millis(500), async {
        while let Some(chunk) = response.chunk().await.expect("no error while stalled") {
            received.extend_from_slice(&chunk);
        }
    })
    .await;
    assert!(stalled.is_err(), "a stalled body must never end");
    assert_eq!(received, object[..200]);
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn fault_server_delays_replies() {
    let server = FaultServer::start([Reply::empty().after(Duration::from_millis(300))]);
    let client = support::http_client();
    let started = std::time::Instant::now();
    let response = client.get(server.endpoint()).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[test]
fn aws_chunked_checker_accepts_the_aws_streaming_examples() {
    use support::aws_chunked;
    for (name, trailer) in [
        ("streaming-chunked-put-object", None),
        (
            "streaming-chunked-put-object-trailer",
            Some(("x-amz-checksum-crc32c", "sOO8/Q==")),
        ),
    ] {
        let (method, target, headers, _) = load_example(name);
        let seed = sigv4::verify(&method, &target, &headers, None, EXAMPLE_SECRET)
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        let encoded = std::fs::read(format!(
            "{}/tests/testdata/sigv4/{name}/encoded-body.bin",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let decoded = aws_chunked::decode(&encoded).unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(decoded.data, vec![b'a'; 66560], "{name}");
        assert_eq!(decoded.chunk_lengths, [65536, 1024, 0], "{name}");
        let trailers: Vec<(&str, &str)> = decoded
            .trailers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(trailers, trailer.into_iter().collect::<Vec<_>>(), "{name}");
        aws_chunked::verify_signatures(&decoded, &seed, EXAMPLE_SECRET)
            .unwrap_or_else(|err| panic!("{name}: {err}"));

        let mut tampered = decoded;
        tampered.data[70] = b'b';
        assert!(aws_chunked::verify_signatures(&tampered, &seed, EXAMPLE_SECRET).is_err());
    }
}

#[tokio::test]
async fn fault_server_reset_is_a_tcp_rst() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = FaultServer::start([Reply::Reset]);
    let address = server.endpoint().trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    stream
        .write_all(b"GET /bucket/k HTTP/1.1\r\nhost: fault\r\ncontent-length: 0\r\n\r\n")
        .await
        .unwrap();
    let mut received = Vec::new();
    let error = stream
        .read_to_end(&mut received)
        .await
        .expect_err("an abortive close, not an orderly end of stream");
    assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset, "{error}");
    assert!(received.is_empty(), "no response before the reset");
    assert_eq!(server.request_count(), 1);
}

#[test]
fn the_independent_checksums_match_their_published_check_values() {
    // The "check" values of the CRC catalogue for the bytes "123456789".
    assert_eq!(support::crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(support::crc64nvme(b"123456789"), 0xAE8B_1486_0A79_9888);
    assert_eq!(
        support::base64(&0xAE8B_1486_0A79_9888u64.to_be_bytes()),
        "rosUhgp5mIg="
    );
}

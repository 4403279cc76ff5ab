//! The client against the loopback fault server: it retries exactly what it should, gives
//! up with a clear typed error where it should, re-signs every attempt, and never reports
//! success for a truncated, stalled or corrupted body.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use s3_wire_tokio::credentials::{Credentials, CredentialsFuture, CredentialsProvider, MapEnv};
use s3_wire_tokio::s3_ops::ops::copy_object::CopyObject;
use s3_wire_tokio::s3_ops::ops::copy_source::CopySource;
use s3_wire_tokio::s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::list_buckets::ListBuckets;
use s3_wire_tokio::s3_ops::ops::list_multipart_uploads::ListMultipartUploads;
use s3_wire_tokio::s3_ops::ops::list_object_versions::ListObjectVersions;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::list_parts::ListParts;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::{ByteRange, ChecksumAlgorithm};
use s3_wire_tokio::{
    Body, Client, ClientBuilder, ErrorKind, RetryConfig, TimeoutKind, TransportErrorKind,
    Verification,
};
use support::fault::{FaultServer, Recorded, Reply, generated_byte};
use support::{Chunks, aws_chunked, base64, crc32, one_shot, sigv4};

const ACCESS_KEY: &str = "AKIDFAULTSERVER";
const SECRET_KEY: &str = "fault-server-secret-key";

/// Retries with millisecond backoff so tests stay fast.
fn retry(max_attempts: u32) -> RetryConfig {
    let mut retry = RetryConfig::default();
    retry.max_attempts = max_attempts;
    retry.base_delay = Duration::from_millis(1);
    retry.max_delay = Duration::from_millis(20);
    retry
}

fn builder(server: &FaultServer) -> s3_wire_tokio::ClientBuilder {
    Client::builder()
        .endpoint(server.endpoint())
        .region("us-east-1")
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .retry(retry(3))
}

fn client(server: &FaultServer) -> Client {
    builder(server).build().expect("client")
}

fn get(key: &str) -> GetObject {
    GetObject::new(
        s3_wire_tokio::bucket("bucket").unwrap(),
        s3_wire_tokio::key(key).unwrap(),
    )
}

fn head(key: &str) -> HeadObject {
    HeadObject::new(
        s3_wire_tokio::bucket("bucket").unwrap(),
        s3_wire_tokio::key(key).unwrap(),
    )
}

fn put(key: &str) -> PutObject {
    PutObject::new(
        s3_wire_tokio::bucket("bucket").unwrap(),
        s3_wire_tokio::key(key).unwrap(),
    )
}

/// Every recorded attempt carries a valid signature; returns them.
fn assert_all_signed(requests: &[Recorded]) -> Vec<sigv4::Signed> {
    requests
        .iter()
        .enumerate()
        .map(|(index, request)| {
            support::fault::verify_recorded(request, SECRET_KEY)
                .unwrap_or_else(|err| panic!("attempt {index}: {err}"))
        })
        .collect()
}

fn object_bytes(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

// ---------------------------------------------------------------------------------------------
// Retried: throttling and transient errors
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn throttling_and_transient_errors_are_retried_then_succeed() {
    for (name, failure) in [
        ("503 SlowDown", Reply::slow_down()),
        ("500 InternalError", Reply::internal_error()),
        ("400 RequestTimeout", Reply::request_timeout()),
    ] {
        let server = FaultServer::start([failure.clone(), failure, Reply::ok("payload")]);
        let response = client(&server)
            .get_object(get("k"))
            .await
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        let body = response.body.collect().await.unwrap();
        assert_eq!(body, "payload", "{name}");
        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{name}: two failures then success");
        assert!(
            requests.iter().all(|r| r.uri.path() == "/bucket/k"),
            "{name}"
        );
        assert_all_signed(&requests);
    }
}

#[tokio::test]
async fn every_attempt_is_signed_anew_and_retry_after_is_honoured() {
    // Retry-After: 1 puts the second attempt in a later second, so a re-signed request must
    // carry a new x-amz-date and therefore a different signature.
    let server = FaultServer::start([
        Reply::slow_down().with_header("retry-after", "1"),
        Reply::ok("fresh"),
    ]);
    // The policy gives up on a Retry-After beyond `max_delay` (without a deadline): allow 2 s.
    let mut config = retry(3);
    config.max_delay = Duration::from_secs(2);
    let client = builder(&server).retry(config).build().unwrap();
    let started = Instant::now();
    let response = client.get_object(get("k")).await.unwrap();
    assert_eq!(response.body.collect().await.unwrap(), "fresh");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After of 1 s not honoured: retried after {:?}",
        started.elapsed()
    );
    let signed = assert_all_signed(&server.requests());
    assert_eq!(signed.len(), 2);
    assert_ne!(signed[0].amz_date, signed[1].amz_date);
    assert_ne!(signed[0].signature, signed[1].signature);
}

#[tokio::test]
async fn a_reset_connection_is_retried_for_idempotent_requests() {
    let server = FaultServer::start([Reply::Reset, Reply::ok("after reset")]);
    let response = client(&server).get_object(get("k")).await.unwrap();
    assert_eq!(response.body.collect().await.unwrap(), "after reset");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_all_signed(&requests);
}

#[tokio::test]
async fn a_reset_connection_is_retried_for_create_multipart_upload() {
    // The lost answer may have created an upload; a second one costs nothing lasting (it is
    // swept), while failing the transfer would.
    let initiated = "<InitiateMultipartUploadResult><Bucket>bucket</Bucket><Key>k</Key>\
                     <UploadId>upload-2</UploadId></InitiateMultipartUploadResult>";
    let server = FaultServer::start([Reply::Reset, Reply::ok(initiated)]);
    let create = CreateMultipartUpload::new(
        s3_wire_tokio::bucket("bucket").unwrap(),
        s3_wire_tokio::key("k").unwrap(),
    );
    let created = client(&server).send(create).await.unwrap();
    assert_eq!(created.upload_id, "upload-2");
    assert_eq!(server.request_count(), 2);
    assert_all_signed(&server.requests());
}

/// An application's own operation that must not be repeated after an ambiguous failure.
#[derive(Debug)]
struct NotIdempotent(HeadObject);

impl s3_wire_tokio::s3_ops::Operation for NotIdempotent {
    type Output = <HeadObject as s3_wire_tokio::s3_ops::Operation>::Output;

    fn request(
        &self,
        endpoint: &s3_wire_tokio::s3_ops::Endpoint,
    ) -> Result<s3_wire_tokio::s3_ops::OperationRequest, s3_wire_tokio::s3_ops::Error> {
        self.0.request(endpoint)
    }

    fn response(
        &self,
        response: http::Response<bytes::Bytes>,
    ) -> Result<Self::Output, s3_wire_tokio::s3_ops::Error> {
        self.0.response(response)
    }

    fn is_idempotent(&self) -> bool {
        false
    }

    fn name(&self) -> &'static str {
        "NotIdempotent"
    }
}

#[tokio::test]
async fn a_reset_connection_is_not_retried_for_a_non_idempotent_request() {
    let server = FaultServer::start([Reply::Reset, Reply::empty()]);
    let err = client(&server)
        .send(NotIdempotent(head("k")))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Transport(TransportErrorKind::ConnectionDropped)
        ),
        "{err:?}"
    );
    assert_eq!(err.attempts(), 1);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn replayable_bodies_are_resent_whole_on_retry() {
    // Below 128 KiB the checksum and the SHA-256 are computed as each request is built;
    // above, once ahead for every attempt.
    for len in [100_000, 200_000] {
        let data = object_bytes(len);
        let server = FaultServer::start([
            Reply::internal_error(),
            Reply::empty().with_header("etag", "\"e1\""),
        ]);
        let output = client(&server)
            .put_object(put("bytes"), Bytes::from(data.clone()))
            .await
            .unwrap();
        assert_eq!(output.etag.unwrap().as_str(), "\"e1\"");
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        // Both attempts carry the full body, its checksum, and its SHA-256 as the signed one.
        let crc = base64(&crc32(&data).to_be_bytes());
        for request in &requests {
            assert_eq!(request.body, data, "{len} bytes");
            assert_eq!(
                request.header("x-amz-checksum-crc32"),
                Some(crc.as_str()),
                "{len} bytes"
            );
        }
        assert_all_signed(&requests);
    }
}

#[tokio::test]
async fn a_file_body_is_reread_on_retry() {
    let data = object_bytes(300_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("upload.bin");
    std::fs::write(&path, &data).unwrap();
    let server = FaultServer::start([
        Reply::slow_down(),
        Reply::empty().with_header("etag", "\"file\""),
    ]);
    let body = Body::from_file(&path).await.unwrap();
    client(&server).put_object(put("file"), body).await.unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for (index, request) in requests.iter().enumerate() {
        let seed = support::fault::verify_recorded(request, SECRET_KEY)
            .unwrap_or_else(|err| panic!("attempt {index}: {err}"));
        assert_eq!(
            received_payload(request, &seed),
            data,
            "attempt {index} sent the whole file"
        );
    }
}

/// The payload of a recorded upload: decoded (and its chunk signatures checked) if it was
/// sent `aws-chunked`, as is otherwise (its SHA-256 was checked with the header signature).
fn received_payload(request: &Recorded, seed: &sigv4::Signed) -> Vec<u8> {
    let chunked = request
        .header("content-encoding")
        .is_some_and(|v| v.split(',').any(|e| e.trim() == "aws-chunked"));
    if !chunked {
        return request.body.to_vec();
    }
    let decoded = aws_chunked::decode(&request.body).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(
        request.header("x-amz-decoded-content-length"),
        Some(decoded.data.len().to_string().as_str())
    );
    if seed
        .payload
        .starts_with("STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
    {
        aws_chunked::verify_signatures(&decoded, seed, SECRET_KEY)
            .unwrap_or_else(|err| panic!("{err}"));
    }
    decoded.data
}

// ---------------------------------------------------------------------------------------------
// Not retried, or retried until a limit: a clear typed error
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn non_retryable_errors_fail_after_one_attempt() {
    let server = FaultServer::start([Reply::access_denied(), Reply::ok("unused")]);
    let err = client(&server).get_object(get("k")).await.unwrap_err();
    let service = err.service_error().expect("a service error");
    assert_eq!(service.code, "AccessDenied");
    assert_eq!(service.status.as_u16(), 403);
    assert_eq!(err.request_id(), Some("fault-req-0"));
    assert_eq!(err.attempts(), 1);
    assert!(!err.retried());
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn retries_stop_at_max_attempts_with_the_last_error() {
    let server = FaultServer::start_with_fallback([], Reply::slow_down());
    let err = builder(&server)
        .retry(retry(4))
        .build()
        .unwrap()
        .get_object(get("k"))
        .await
        .unwrap_err();
    assert_eq!(server.request_count(), 4);
    assert_eq!(err.attempts(), 4);
    assert!(err.retried());
    assert!(!err.retry_budget_exhausted());
    assert_eq!(err.service_error().map(|e| e.status.as_u16()), Some(503));
    assert_eq!(
        err.request_id(),
        Some("fault-req-3"),
        "the last attempt's id"
    );
    assert!(err.to_string().contains("after 4 attempts"), "{err}");
    assert_all_signed(&server.requests());
}

#[tokio::test]
async fn the_retry_budget_is_shared_by_clones_and_stops_retries() {
    let server = FaultServer::start_with_fallback([], Reply::internal_error());
    let mut config = retry(10);
    config.budget_capacity = 10;
    config.retry_cost = 5;
    let client = builder(&server).retry(config).build().unwrap();

    // Two retries drain the 10 tokens; the third failure is final.
    let err = client.get_object(get("a")).await.unwrap_err();
    assert_eq!(err.attempts(), 3);
    assert!(err.retry_budget_exhausted(), "{err:?}");
    assert!(err.to_string().contains("retry budget exhausted"), "{err}");

    // A clone shares the (empty) budget: no retry at all.
    let clone = client.clone();
    let err = clone.get_object(get("b")).await.unwrap_err();
    assert_eq!(err.attempts(), 1);
    assert!(err.retry_budget_exhausted());
    assert_eq!(server.request_count(), 4);
}

#[tokio::test]
async fn a_one_shot_stream_is_not_retried_once_sent() {
    let data = object_bytes(50_000);
    let server = FaultServer::start([Reply::internal_error(), Reply::empty()]);
    let err = client(&server)
        .put_object(put("stream"), one_shot(&data, 8192))
        .await
        .unwrap_err();
    assert_eq!(
        err.service_error().map(|e| e.code.as_str()),
        Some("InternalError")
    );
    assert_eq!(err.attempts(), 1);
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        1,
        "the consumed stream must not be sent again"
    );
    // What was sent is the whole stream, correctly framed and signed.
    let seed = support::fault::verify_recorded(&requests[0], SECRET_KEY).unwrap();
    assert_eq!(received_payload(&requests[0], &seed), data);
}

#[tokio::test]
async fn a_stream_shorter_than_announced_fails_the_upload() {
    let data = object_bytes(10_000);
    let body = Body::from_stream(Chunks(std::iter::once(Bytes::from(data)).collect()), 20_000);
    let server = FaultServer::start_with_fallback([], Reply::empty());
    let err = client(&server)
        .put_object(put("short"), body)
        .await
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::RequestBody(_)), "{err:?}");
    // The server never saw a complete request it could store.
    assert!(
        server
            .requests()
            .iter()
            .all(|r| !r.body_complete || r.body.len() < 20_000)
    );
}

#[tokio::test]
async fn a_permanent_redirect_from_a_custom_endpoint_is_reported_with_its_region() {
    let server = FaultServer::start([Reply::permanent_redirect("eu-west-3"), Reply::ok("x")]);
    let err = client(&server).get_object(get("k")).await.unwrap_err();
    let service = err.service_error().expect("service error");
    assert_eq!(service.code, "PermanentRedirect");
    assert_eq!(service.status.as_u16(), 301);
    assert_eq!(service.region.as_deref(), Some("eu-west-3"));
    // Only AWS endpoints are re-addressed; a custom endpoint is not retried.
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn an_error_inside_a_200_is_an_error_and_retried_when_transient() {
    let copy = || {
        CopyObject::new(
            CopySource::new(
                s3_wire_tokio::bucket("src").unwrap(),
                s3_wire_tokio::key("a").unwrap(),
            ),
            s3_wire_tokio::bucket("bucket").unwrap(),
            s3_wire_tokio::key("b").unwrap(),
        )
    };
    let copied = Reply::ok(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CopyObjectResult>\
         <LastModified>2024-01-02T03:04:05.000Z</LastModified>\
         <ETag>\"9b2cf535f27731c974343645a3985328\"</ETag></CopyObjectResult>",
    );
    let server = FaultServer::start([
        Reply::error_in_200("InternalError", "We encountered an internal error."),
        copied,
    ]);
    let output = client(&server).send(copy()).await.unwrap();
    assert_eq!(
        output.result.etag.unwrap().as_str(),
        "\"9b2cf535f27731c974343645a3985328\""
    );
    assert_eq!(server.request_count(), 2);

    let server = FaultServer::start([
        Reply::error_in_200("AccessDenied", "Access Denied"),
        Reply::ok("unused"),
    ]);
    let err = client(&server).send(copy()).await.unwrap_err();
    assert_eq!(
        err.service_error().map(|e| e.code.as_str()),
        Some("AccessDenied")
    );
    assert_eq!(err.attempts(), 1);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn head_errors_keep_their_status_and_code() {
    // A HEAD answer has no body whatever its Content-Length says; S3 sends none.
    let server = FaultServer::start([
        Reply::s3_error(404, "NoSuchKey", "The specified key does not exist."),
        Reply::slow_down(),
        Reply::slow_down(),
    ]);
    let client = builder(&server).retry(retry(2)).build().unwrap();
    let err = client.send(head("missing")).await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(err.attempts(), 1);
    let err = client.send(head("throttled")).await.unwrap_err();
    assert_eq!(
        err.service_error().map(|e| e.status.as_u16()),
        Some(503),
        "{err:?}"
    );
    assert_eq!(err.attempts(), 2);
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn conditional_reads_send_their_headers_and_map_304_and_412() {
    let etag = "\"0123456789abcdef0123456789abcdef\"";
    let server = FaultServer::start([
        Reply::s3_error(
            412,
            "PreconditionFailed",
            "At least one of the pre-conditions you specified did not hold",
        ),
        Reply::Respond {
            status: 304,
            headers: vec![("etag".into(), etag.into())],
            body: Bytes::new(),
        },
        Reply::ok("matched").with_header("etag", etag),
    ]);
    let client = client(&server);
    let err = client
        .get_object(get("k").if_match(etag))
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err:?}");
    assert_eq!(err.attempts(), 1);
    let err = client
        .get_object(get("k").if_none_match(etag))
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "304 Not Modified: {err:?}");
    assert_eq!(err.attempts(), 1);
    let response = client.get_object(get("k").if_match(etag)).await.unwrap();
    assert_eq!(response.body.collect().await.unwrap(), "matched");

    let requests = server.requests();
    assert_eq!(requests[0].header("if-match"), Some(etag));
    assert_eq!(requests[1].header("if-none-match"), Some(etag));
    assert_eq!(requests[2].header("if-match"), Some(etag));
    // The condition headers are signed: a proxy cannot strip them unnoticed.
    for signed in assert_all_signed(&requests) {
        assert!(
            signed
                .signed_headers
                .iter()
                .any(|h| h == "if-match" || h == "if-none-match"),
            "{:?}",
            signed.signed_headers
        );
    }
}

/// Percent-decodes a recorded request path.
fn decoded_path(request: &Recorded) -> Vec<u8> {
    let raw = request.uri.path().as_bytes();
    let mut out = Vec::new();
    let mut index = 0;
    while index < raw.len() {
        if raw[index] == b'%' && index + 2 < raw.len() {
            let hex = std::str::from_utf8(&raw[index + 1..index + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            index += 3;
        } else {
            out.push(raw[index]);
            index += 1;
        }
    }
    out
}

/// Sends a GetObject for each key and checks that the server saw exactly that key, signed.
async fn assert_keys_arrive_verbatim(keys: &[&str]) {
    let server = FaultServer::start_with_fallback([], Reply::ok("x"));
    let client = client(&server);
    for key in keys {
        client
            .get_object(get(key))
            .await
            .unwrap_or_else(|err| panic!("{key:?}: {err}"));
    }
    let requests = server.requests();
    assert_eq!(requests.len(), keys.len());
    for (key, request) in keys.iter().zip(&requests) {
        // No dot-segment resolution or slash merging on the way (S3 keys are opaque).
        assert_eq!(
            String::from_utf8(decoded_path(request)).unwrap(),
            format!("/bucket/{key}"),
            "sent as {}",
            request.uri
        );
        support::fault::verify_recorded(request, SECRET_KEY)
            .unwrap_or_else(|err| panic!("{key:?}: {err}"));
    }
}

#[tokio::test]
async fn keys_reach_the_server_exactly_as_given_and_validly_signed() {
    // 1024 bytes, the S3 maximum, mixing multi-byte characters and characters that need
    // encoding (local-s3 cannot store keys this long: its metadata file names embed the key).
    let mut long_key = String::from("long/");
    while long_key.len() + "日".len() <= 1024 - 3 {
        long_key.push_str(if long_key.len() % 7 == 0 { "日" } else { "a " });
    }
    while long_key.len() < 1024 {
        long_key.push('+');
    }
    assert_eq!(long_key.len(), 1024);
    assert_keys_arrive_verbatim(&[
        "double//slash",
        "//leading-slashes",
        "with space+plus%percent",
        "unicode/日本語/ümlaut-é/🚀",
        "a?b#c&d=e;f:g@h$i,j",
        "tilde~caret^back`tick{brace}|pipe\"quote<angle>\\backslash",
        &long_key,
    ])
    .await;
}

#[tokio::test]
async fn keys_with_dot_segments_are_refused_before_anything_is_sent() {
    // The URL parser under reqwest resolves `.`/`..` segments (even as `%2E`), which would
    // address another object; such keys are refused instead.
    let server = FaultServer::start_with_fallback([], Reply::ok("x"));
    let client = client(&server);
    for key in [
        "dots/../not-a-parent",
        "./leading-dot",
        "trailing/..",
        "x/./y",
    ] {
        let err = client.get_object(get(key)).await.unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Operation(_)),
            "{key:?}: {err:?}"
        );
        assert!(err.to_string().contains("Key"), "{key:?}: {err}");
        assert_eq!(err.attempts(), 1, "{key:?}");
        // A PUT would overwrite another object (`dots/../not-a-parent` is `not-a-parent`).
        let err = client
            .put_object(put(key), Bytes::from_static(b"would overwrite another key"))
            .await
            .unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Operation(_)),
            "PUT {key:?}: {err:?}"
        );
    }
    // Nothing was sent, so nothing was touched.
    assert_eq!(server.request_count(), 0);
    // Dots that are not whole segments are ordinary key bytes.
    assert_keys_arrive_verbatim(&["a..b", ".hidden/..x", "x./.y", "..."]).await;
}

// ---------------------------------------------------------------------------------------------
// Bodies: never a success for truncated, stalled or corrupted data
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_truncated_body_is_an_error_in_every_consumer() {
    let object = object_bytes(10_000);
    let server = FaultServer::start_with_fallback([], Reply::truncated(&object, 4_000));
    let client = client(&server);

    let response = client.get_object(get("k")).await.unwrap();
    assert_eq!(response.body.content_length(), Some(10_000));
    let err = response.body.collect().await.unwrap_err();
    match err.kind() {
        ErrorKind::BodyLength { expected, received } => {
            assert_eq!((*expected, *received), (10_000, 4_000));
        }
        ErrorKind::Transport(_) => {}
        other => panic!("unexpected error kind {other:?}"),
    }

    let response = client.get_object(get("k")).await.unwrap();
    let mut sink = Vec::new();
    assert!(response.body.write_to(&mut sink).await.is_err());
    assert!(sink.len() <= 4_000);

    let response = client.get_object(get("k")).await.unwrap();
    let mut reader = response.body.into_async_read();
    let mut sink = Vec::new();
    let err = tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut sink)
        .await
        .unwrap_err();
    assert_ne!(err.kind(), std::io::ErrorKind::Other, "{err}");
    assert!(sink.len() <= 4_000);
}

// ---------------------------------------------------------------------------------------------
// Resuming a body that broke off: the same object, only the missing bytes
// ---------------------------------------------------------------------------------------------

const ETAG: &str = "\"5d41402abc4b2a76b9719d911017c592\"";

/// A `206` answer for bytes `first..` of `object`, of which only `sent` are delivered before
/// the connection is aborted (`sent == None`: all of them, complete).
fn continuation(object: &[u8], first: usize, sent: Option<usize>, etag: &str) -> Reply {
    let range = format!("bytes {first}-{}/{}", object.len() - 1, object.len());
    let rest = &object[first..];
    let headers = vec![
        ("content-range".to_owned(), range),
        ("etag".to_owned(), etag.to_owned()),
    ];
    match sent {
        None => Reply::Respond {
            status: 206,
            headers,
            body: Bytes::copy_from_slice(rest),
        },
        Some(sent) => Reply::Truncated {
            status: 206,
            headers,
            declared: rest.len() as u64,
            sent: Bytes::copy_from_slice(&rest[..sent]),
        },
    }
}

#[tokio::test]
async fn a_body_that_breaks_off_is_resumed_for_the_missing_bytes_of_the_same_object() {
    let object = object_bytes(10_000);
    let checksum = base64(&crc32(&object).to_be_bytes());
    let server = FaultServer::start([
        Reply::truncated(&object, 3_000)
            .with_header("etag", ETAG)
            .with_header("x-amz-checksum-crc32", &checksum)
            .with_header("x-amz-checksum-type", "FULL_OBJECT"),
        continuation(&object, 3_000, None, ETAG),
    ]);
    let response = client(&server)
        .get_object(get("k").version_id("v7").checksum_mode(true))
        .await
        .unwrap();
    assert!(matches!(
        response.body.verification(),
        Verification::FullObject(_)
    ));
    // The whole object, and the full-object CRC32 verified over the joined body.
    assert_eq!(response.body.collect().await.unwrap(), object);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_all_signed(&requests);
    let resumed = &requests[1];
    assert_eq!(resumed.header("range"), Some("bytes=3000-9999"));
    assert_eq!(resumed.header("if-match"), Some(ETAG));
    assert_eq!(resumed.uri.query(), Some("versionId=v7"));
}

#[tokio::test]
async fn a_stalled_body_is_resumed_and_every_consumer_gets_the_whole_object() {
    let object = object_bytes(10_000);
    let stalled = Reply::stalled(&object, 2_500).with_header("etag", ETAG);
    let server = FaultServer::start([
        stalled.clone(),
        continuation(&object, 2_500, None, ETAG),
        stalled,
        continuation(&object, 2_500, None, ETAG),
    ]);
    let client = builder(&server)
        .stall_timeout(Duration::from_millis(200))
        .build()
        .unwrap();

    let response = client.get_object(get("k")).await.unwrap();
    let mut sink = Vec::new();
    assert_eq!(response.body.write_to(&mut sink).await.unwrap(), 10_000);
    assert_eq!(sink, object);

    let response = client.get_object(get("k")).await.unwrap();
    let mut reader = response.body.into_async_read();
    let mut sink = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut sink)
        .await
        .unwrap();
    assert_eq!(sink, object);
    assert_eq!(server.request_count(), 4);
}

#[tokio::test]
async fn a_resume_never_mixes_objects_or_accepts_the_wrong_bytes() {
    let object = object_bytes(10_000);
    let first = || Reply::truncated(&object, 3_000).with_header("etag", ETAG);
    for (name, answer) in [
        (
            "the object changed (412)",
            Reply::s3_error(
                412,
                "PreconditionFailed",
                "At least one of the pre-conditions you specified did not hold",
            ),
        ),
        (
            "another ETag",
            continuation(&object, 3_000, None, "\"0000000000000000000000000000000a\""),
        ),
        (
            "Range ignored: the whole object again",
            Reply::ok(Bytes::copy_from_slice(&object)).with_header("etag", ETAG),
        ),
    ] {
        let server = FaultServer::start([first(), answer]);
        let response = client(&server).get_object(get("k")).await.unwrap();
        let err = match response.body.collect().await {
            Ok(bytes) => panic!("{name}: reported success with {} bytes", bytes.len()),
            Err(err) => err,
        };
        assert_eq!(server.request_count(), 2, "{name}: {err:?}");
        if name.contains("412") {
            assert_eq!(
                err.service_error().map(|e| e.status.as_u16()),
                Some(412),
                "{err:?}"
            );
        }
    }
}

#[tokio::test]
async fn resuming_stops_at_max_attempts_and_without_an_etag() {
    let object = object_bytes(10_000);
    // Every continuation breaks off too: three tries in all (retry(3)), then the error.
    let server = FaultServer::start([
        Reply::truncated(&object, 3_000).with_header("etag", ETAG),
        continuation(&object, 3_000, Some(2_000), ETAG),
        continuation(&object, 5_000, Some(1_000), ETAG),
        continuation(&object, 6_000, None, ETAG),
    ]);
    let response = client(&server).get_object(get("k")).await.unwrap();
    let err = response.body.collect().await.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::BodyLength {
                expected: 10_000,
                received: 6_000
            }
        ),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 3);
    assert_eq!(err.attempts(), 3, "every request of the body counts");

    // Without an ETag nothing pins the object between requests: no resume.
    let server = FaultServer::start([Reply::truncated(&object, 3_000), Reply::empty()]);
    let response = client(&server).get_object(get("k")).await.unwrap();
    assert!(response.body.collect().await.is_err());
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn a_body_makes_at_most_max_attempts_requests_in_all_and_reports_them() {
    let object = object_bytes(10_000);
    for max_attempts in [2, 5] {
        // The body breaks off, and every continuation is refused with a retryable error:
        // the continuations' own retries count against the same max_attempts.
        let server = FaultServer::start_with_fallback(
            [Reply::truncated(&object, 3_000).with_header("etag", ETAG)],
            Reply::s3_error(503, "SlowDown", "Please reduce your request rate."),
        );
        let client = builder(&server).retry(retry(max_attempts)).build().unwrap();
        let response = client.get_object(get("k")).await.unwrap();
        assert_eq!(response.body.requests(), 1);
        let err = response.body.collect().await.unwrap_err();
        assert_eq!(server.request_count(), max_attempts as usize, "{err:?}");
        assert_eq!(err.attempts(), max_attempts, "{err:?}");
    }

    // A retry budget too small for one resumption (a resumption costs a timeout's 10
    // tokens): the body fails at once, and says why.
    let server = FaultServer::start([
        Reply::truncated(&object, 3_000).with_header("etag", ETAG),
        continuation(&object, 3_000, None, ETAG),
    ]);
    let poor = builder(&server)
        .retry(retry(5).with_budget_capacity(9))
        .build()
        .unwrap();
    let err = poor
        .get_object(get("k"))
        .await
        .unwrap()
        .body
        .collect()
        .await
        .unwrap_err();
    assert!(err.retry_budget_exhausted(), "{err:?}");
    assert_eq!((server.request_count(), err.attempts()), (1, 1), "{err:?}");

    // Retries of the first GET count too: 1 refused + 1 broken + 1 continuation = 3.
    let server = FaultServer::start([
        Reply::s3_error(500, "InternalError", "We encountered an internal error."),
        Reply::truncated(&object, 3_000).with_header("etag", ETAG),
        continuation(&object, 3_000, Some(1_000), ETAG),
        continuation(&object, 4_000, None, ETAG),
    ]);
    let response = client(&server).get_object(get("k")).await.unwrap();
    assert_eq!(response.body.requests(), 2);
    let err = response.body.collect().await.unwrap_err();
    assert_eq!(server.request_count(), 3, "{err:?}");
    assert_eq!(err.attempts(), 3, "{err:?}");
}

#[tokio::test]
async fn a_resume_stays_within_the_operation_deadline() {
    let object = object_bytes(10_000);
    // The body stalls at 300 ms and is resumed; every continuation answer is too late, so
    // the continuation, retrying its own stalls (300, 600, 900 ms after it started), is still
    // running at the 1 s deadline, which ends it: a timeout of the operation, not a stall.
    let late = continuation(&object, 2_500, None, ETAG).after(Duration::from_secs(3));
    let server = FaultServer::start_with_fallback(
        [Reply::stalled(&object, 2_500).with_header("etag", ETAG)],
        late,
    );
    let client = builder(&server)
        .retry(retry(10))
        .stall_timeout(Duration::from_millis(300))
        .operation_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let started = Instant::now();
    let response = client.get_object(get("k")).await.unwrap();
    let err = response.body.collect().await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Timeout(TimeoutKind::Operation(limit)) if *limit == Duration::from_secs(1)),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(server.request_count() >= 2, "the body was resumed");
}

#[tokio::test]
async fn a_stalled_body_times_out() {
    let object = object_bytes(10_000);
    let server = FaultServer::start_with_fallback([], Reply::stalled(&object, 3_000));
    let client = builder(&server)
        .stall_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let started = Instant::now();
    let response = client.get_object(get("k")).await.unwrap();
    let err = response.body.collect().await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Timeout(TimeoutKind::Stalled(limit)) if *limit == Duration::from_millis(300)),
        "{err:?}"
    );
    assert!(err.is_timeout());
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_stall_before_the_response_head_is_a_retried_timeout() {
    let server =
        FaultServer::start_with_fallback([], Reply::ok("late").after(Duration::from_secs(3)));
    let client = builder(&server)
        .stall_timeout(Duration::from_millis(200))
        .retry(retry(2))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.send(head("k")).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Timeout(TimeoutKind::Stalled(_))),
        "{err:?}"
    );
    assert_eq!(err.attempts(), 2);
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_stalled_upload_times_out_and_a_replayable_body_is_retried() {
    // The server reads nothing: once the socket buffers are full the upload makes no progress.
    let server = FaultServer::start([Reply::IgnoreBody, Reply::IgnoreBody]);
    let client = builder(&server)
        .stall_timeout(Duration::from_millis(300))
        .retry(retry(2))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client
        .put_object(put("big"), Bytes::from(vec![7u8; 16 * 1024 * 1024]))
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Timeout(TimeoutKind::Stalled(_))),
        "{err:?}"
    );
    assert_eq!(err.attempts(), 2);
    assert_eq!(server.request_count(), 2);
    // Bounded by the stall limit, not by the (never-ending) transfer; generous for debug builds.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_refused_connection_is_a_retried_connect_error() {
    // Bind and drop a listener: its port is closed, so connecting is refused at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = Client::builder()
        .endpoint(format!("http://127.0.0.1:{port}"))
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .retry(retry(3))
        .build()
        .unwrap();
    let err = client.get_object(get("k")).await.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Transport(TransportErrorKind::Connect)
        ),
        "{err:?}"
    );
    assert_eq!(err.attempts(), 3);
    assert!(err.request_id().is_none());

    // A one-shot stream of which nothing was taken may be retried too.
    let err = client
        .put_object(put("stream"), one_shot(&object_bytes(10_000), 1000))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Transport(TransportErrorKind::Connect)
        ),
        "{err:?}"
    );
    assert_eq!(err.attempts(), 3);
}

#[tokio::test]
async fn the_operation_timeout_bounds_retries_and_waiting() {
    let server =
        FaultServer::start_with_fallback([], Reply::slow_down().with_header("retry-after", "30"));
    let client = builder(&server)
        .operation_timeout(Duration::from_millis(500))
        .retry(retry(10))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.get_object(get("k")).await.unwrap_err();
    // A Retry-After beyond the deadline ends the operation at once with the service error.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(err.service_error().map(|e| e.status.as_u16()), Some(503));
    assert_eq!(server.request_count(), 1);

    let server = FaultServer::start_with_fallback([], Reply::empty().after(Duration::from_secs(5)));
    let client = builder(&server)
        .operation_timeout(Duration::from_millis(400))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.send(head("k")).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Timeout(TimeoutKind::Operation(_))),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn independent_crc32_matches_the_published_check_value() {
    // The CRC-32/ISO-HDLC check value of "123456789".
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(base64(&0xCBF4_3926u32.to_be_bytes()), "y/Q5Jg==");
}

#[tokio::test]
async fn a_full_object_checksum_is_verified_and_a_corrupted_body_rejected() {
    let object = object_bytes(5_000);
    let checksum = base64(&crc32(&object).to_be_bytes());
    let mut corrupted = object.clone();
    corrupted[1234] ^= 0x01;
    let reply = |body: &[u8]| {
        Reply::ok(Bytes::copy_from_slice(body))
            .with_header("x-amz-checksum-crc32", &checksum)
            .with_header("x-amz-checksum-type", "FULL_OBJECT")
    };
    let server = FaultServer::start([reply(&object), reply(&corrupted)]);
    let client = client(&server);

    let response = client
        .get_object(get("k").checksum_mode(true))
        .await
        .unwrap();
    assert_eq!(response.body.collect().await.unwrap(), object);

    let response = client
        .get_object(get("k").checksum_mode(true))
        .await
        .unwrap();
    let err = response.body.collect().await.unwrap_err();
    assert!(
        err.to_string().to_ascii_lowercase().contains("checksum"),
        "a corrupted body must fail its checksum: {err}"
    );
    // The request asked for the checksum.
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.header("x-amz-checksum-mode") == Some("ENABLED"))
    );
}

#[tokio::test]
async fn a_ranged_body_is_checked_only_when_the_range_is_the_whole_object() {
    let object = object_bytes(5_000);
    let checksum = base64(&crc32(&object).to_be_bytes());
    let mut corrupted = object.clone();
    corrupted[4321] ^= 0x01;
    let partial = |body: &[u8], content_range: &str| {
        Reply::Respond {
            status: 206,
            headers: Vec::new(),
            body: Bytes::copy_from_slice(body),
        }
        .with_header("content-range", content_range)
        .with_header("x-amz-checksum-crc32", &checksum)
        .with_header("x-amz-checksum-type", "FULL_OBJECT")
    };
    let server = FaultServer::start([
        // The first 1,000 bytes: the full-object checksum does not cover them.
        partial(&object[..1000], "bytes 0-999/5000"),
        // A 206 whose range is the whole object: the checksum covers it.
        partial(&corrupted, "bytes 0-4999/5000"),
    ]);
    let client = client(&server);

    let response = client
        .get_object(
            get("k")
                .range(ByteRange::new(0, 999).unwrap())
                .checksum_mode(true),
        )
        .await
        .unwrap();
    assert_eq!(response.body.collect().await.unwrap(), &object[..1000]);

    let response = client
        .get_object(
            get("k")
                .range(ByteRange::new(0, 4999).unwrap())
                .checksum_mode(true),
        )
        .await
        .unwrap();
    let err = response.body.collect().await.unwrap_err();
    assert!(
        err.to_string().to_ascii_lowercase().contains("checksum"),
        "a whole-object 206 with a corrupted body must fail its checksum: {err}"
    );
}

#[tokio::test]
async fn upload_checksums_match_an_independent_crc32_for_every_body_kind() {
    let data = object_bytes(200_000);
    let expected = base64(&crc32(&data).to_be_bytes());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("body.bin");
    std::fs::write(&path, &data).unwrap();
    let server = FaultServer::start_with_fallback([], Reply::empty().with_header("etag", "\"e\""));
    let client = client(&server);
    let put = || put("sum").checksum_algorithm(ChecksumAlgorithm::Crc32);
    client
        .put_object(put(), Bytes::from(data.clone()))
        .await
        .unwrap();
    client
        .put_object(put(), Body::from_file(&path).await.unwrap())
        .await
        .unwrap();
    client
        .put_object(put(), one_shot(&data, 30_000))
        .await
        .unwrap();

    for (kind, request) in ["bytes", "file", "stream"].iter().zip(server.requests()) {
        let seed = support::fault::verify_recorded(&request, SECRET_KEY)
            .unwrap_or_else(|err| panic!("{kind}: {err}"));
        assert_eq!(received_payload(&request, &seed), data, "{kind}");
        // Sent either as a header or as an aws-chunked trailer.
        let trailer = request
            .header("content-encoding")
            .is_some_and(|v| v.contains("aws-chunked"))
            .then(|| aws_chunked::decode(&request.body).unwrap())
            .and_then(|decoded| {
                decoded
                    .trailers
                    .into_iter()
                    .find(|(name, _)| name == "x-amz-checksum-crc32")
                    .map(|(_, value)| value)
            });
        let sent = request
            .header("x-amz-checksum-crc32")
            .map(str::to_owned)
            .or(trailer);
        assert_eq!(sent.as_deref(), Some(expected.as_str()), "{kind}");
        if sent.is_some() && request.header("x-amz-checksum-crc32").is_none() {
            assert_eq!(
                request.header("x-amz-trailer"),
                Some("x-amz-checksum-crc32"),
                "{kind}"
            );
        }
    }
}

#[tokio::test]
async fn a_streaming_get_applies_backpressure() {
    const GIB: u64 = 1024 * 1024 * 1024;
    let server = FaultServer::start([Reply::Generated { len: GIB }]);
    let client = client(&server);
    let mut response = client.get_object(get("huge")).await.unwrap();
    assert_eq!(response.body.content_length(), Some(GIB));
    let mut received: u64 = 0;
    while received < 8 * 1024 * 1024 {
        let chunk = response.body.next_chunk().await.unwrap().unwrap();
        for (index, byte) in chunk.iter().enumerate() {
            assert_eq!(*byte, generated_byte(received + index as u64));
        }
        received += chunk.len() as u64;
    }
    // The consumer stops pulling: the server can only get as far as the buffers on the way
    // (socket buffers, hyper's), not through the whole gibibyte.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let produced = server.bytes_produced();
    assert!(
        produced < received + 64 * 1024 * 1024,
        "server produced {produced} bytes while the consumer took {received}"
    );
    // Pulling again resumes the transfer.
    let mut more = 0;
    while more < 16 * 1024 * 1024 {
        more += response.body.next_chunk().await.unwrap().unwrap().len() as u64;
    }
    assert!(server.bytes_produced() >= received + more);
}

#[tokio::test]
async fn a_paused_consumer_is_not_a_stall_but_the_operation_deadline_still_holds() {
    let object = object_bytes(4 * 1024 * 1024);
    let server = FaultServer::start([Reply::ok(object.clone()), Reply::stalled(&object, 1000)]);
    let client = builder(&server)
        .stall_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let mut response = client.get_object(get("k")).await.unwrap();
    let first = response.body.next_chunk().await.unwrap().unwrap();
    // The consumer pauses for longer than the stall limit: not the transfer's fault.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let mut received = first.to_vec();
    while let Some(chunk) = response.body.next_chunk().await {
        received.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(received, object);

    // The whole-operation limit covers reading the body.
    let client = builder(&server)
        .stall_timeout(Duration::from_secs(30))
        .operation_timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let started = Instant::now();
    let response = client.get_object(get("k")).await.unwrap();
    let err = response.body.collect().await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Timeout(TimeoutKind::Operation(_))),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

// ---------------------------------------------------------------------------------------------
// Pagination
// ---------------------------------------------------------------------------------------------

fn listing_page(keys: &[&str], next_token: Option<&str>) -> Reply {
    let contents: String = keys
        .iter()
        .map(|key| {
            format!(
                "<Contents><Key>{key}</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified>\
                 <ETag>&quot;0123456789abcdef0123456789abcdef&quot;</ETag><Size>1</Size>\
                 <StorageClass>STANDARD</StorageClass></Contents>"
            )
        })
        .collect();
    let continuation = next_token
        .map(|token| format!("<NextContinuationToken>{token}</NextContinuationToken>"))
        .unwrap_or_default();
    Reply::ok(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult \
         xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bucket</Name><Prefix></Prefix>\
         <KeyCount>{}</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>{}</IsTruncated>{continuation}\
         {contents}</ListBucketResult>",
        keys.len(),
        next_token.is_some()
    ))
    .with_header("content-type", "application/xml")
}

#[tokio::test]
async fn pages_are_fetched_lazily_and_a_repeated_token_ends_the_listing() {
    let server = FaultServer::start([
        listing_page(&["a", "b"], Some("token-1")),
        // A buggy server hands back the token it was just given.
        listing_page(&["c", "d"], Some("token-1")),
        listing_page(&["never", "fetched"], None),
    ]);
    let client = client(&server);
    let mut pages =
        client.list_objects_v2_pages(ListObjectsV2::new(s3_wire_tokio::bucket("bucket").unwrap()));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        server.request_count(),
        0,
        "nothing is sent before the first poll"
    );

    let first = pages.next_page().await.unwrap().unwrap();
    let keys: Vec<&str> = first
        .result
        .contents
        .iter()
        .map(|o| o.key.as_str())
        .collect();
    assert_eq!(keys, ["a", "b"]);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        server.request_count(),
        1,
        "the next page waits for the consumer"
    );

    let second = pages.next_page().await.unwrap().unwrap();
    let keys: Vec<&str> = second
        .result
        .contents
        .iter()
        .map(|o| o.key.as_str())
        .collect();
    assert_eq!(keys, ["c", "d"]);
    assert!(
        pages.next_page().await.is_none(),
        "the repeated token must end the stream"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let query = |index: usize| requests[index].uri.query().unwrap_or_default().to_owned();
    assert!(query(0).contains("list-type=2"), "{}", query(0));
    assert!(!query(0).contains("continuation-token"), "{}", query(0));
    assert!(
        query(1).contains("continuation-token=token-1"),
        "{}",
        query(1)
    );
}

#[tokio::test]
async fn a_failed_page_is_yielded_and_ends_the_stream() {
    let server = FaultServer::start([
        listing_page(&["a"], Some("t1")),
        Reply::access_denied(),
        listing_page(&["b"], None),
    ]);
    let client = client(&server);
    let mut pages =
        client.list_objects_v2_pages(ListObjectsV2::new(s3_wire_tokio::bucket("bucket").unwrap()));
    assert!(pages.next_page().await.unwrap().is_ok());
    let err = pages.next_page().await.unwrap().unwrap_err();
    assert_eq!(
        err.service_error().map(|e| e.code.as_str()),
        Some("AccessDenied")
    );
    assert!(pages.next_page().await.is_none());
    assert_eq!(server.request_count(), 2);
}

// ---------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------

#[test]
fn plain_http_is_refused_for_non_loopback_endpoints_unless_opted_in() {
    let build = |endpoint: &str, allow_http: bool| {
        Client::builder()
            .endpoint(endpoint)
            .static_credentials(ACCESS_KEY, SECRET_KEY, None)
            .allow_http(allow_http)
            .build()
    };
    let err = build("http://storage.example.com", false).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Config(_)), "{err:?}");
    assert!(err.to_string().contains("http://"), "{err}");
    assert!(build("http://storage.example.com", true).is_ok());
    for loopback in [
        "http://127.0.0.1:9000",
        "http://localhost:9000",
        "http://[::1]:9000",
    ] {
        assert!(build(loopback, false).is_ok(), "{loopback}");
    }
    assert!(build("https://storage.example.com", false).is_ok());
}

#[tokio::test]
async fn missing_credentials_fail_before_anything_is_sent() {
    let server = FaultServer::start_with_fallback([], Reply::ok("unused"));
    let home = tempfile::tempdir().unwrap();
    let env = MapEnv::new()
        .with_home(home.path())
        .with_var("AWS_ENDPOINT_URL", server.endpoint());
    let client = ClientBuilder::from_env_with(Arc::new(env)).build().unwrap();
    let err = client.get_object(get("k")).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Credentials), "{err:?}");
    let source = std::error::Error::source(&err).expect("the credentials error as source");
    assert!(
        source.to_string().contains("no credentials found"),
        "{source}"
    );
    assert_eq!(server.request_count(), 0);
}

#[test]
fn a_malformed_config_file_fails_the_build_with_its_location() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".aws")).unwrap();
    std::fs::write(
        home.path().join(".aws").join("config"),
        "[default]\nregion = eu-west-1\nthis line is not a property\n",
    )
    .unwrap();
    let env = MapEnv::new().with_home(home.path());
    let err = ClientBuilder::from_env_with(Arc::new(env))
        .build()
        .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Credentials), "{err:?}");
    let source = std::error::Error::source(&err).expect("source").to_string();
    assert!(source.contains("config, line 3"), "{source}");
}

#[tokio::test]
async fn region_and_endpoint_come_from_the_environment_and_requests_are_signed_for_them() {
    let server = FaultServer::start_with_fallback([], Reply::ok("x"));
    let env = MapEnv::new()
        .with_var("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .with_var("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        .with_var("AWS_SESSION_TOKEN", "session-token-value")
        .with_var("AWS_DEFAULT_REGION", "eu-north-1")
        .with_var("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
        .with_var("AWS_ENDPOINT_URL_S3", server.endpoint());
    let client = ClientBuilder::from_env_with(Arc::new(env)).build().unwrap();
    assert_eq!(client.region(), "eu-north-1");
    client.get_object(get("k")).await.unwrap();
    let requests = server.requests();
    let signed = support::fault::verify_recorded(&requests[0], SECRET_KEY).unwrap();
    assert_eq!(signed.region, "eu-north-1");
    assert_eq!(
        requests[0].header("x-amz-security-token"),
        Some("session-token-value")
    );
    assert!(
        signed
            .signed_headers
            .iter()
            .any(|h| h == "x-amz-security-token")
    );
}

fn parts_page(parts: &[(u32, u64)], next_marker: Option<u32>) -> Reply {
    let body: String = parts
        .iter()
        .map(|(number, size)| {
            format!(
                "<Part><PartNumber>{number}</PartNumber>\
                 <LastModified>2024-01-01T00:00:00.000Z</LastModified>\
                 <ETag>&quot;etag-{number}&quot;</ETag><Size>{size}</Size></Part>"
            )
        })
        .collect();
    let marker = next_marker
        .map(|m| format!("<NextPartNumberMarker>{m}</NextPartNumberMarker>"))
        .unwrap_or_default();
    Reply::ok(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListPartsResult \
         xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>bucket</Bucket><Key>k</Key>\
         <UploadId>upload-1</UploadId><MaxParts>2</MaxParts>{marker}\
         <IsTruncated>{}</IsTruncated>{body}</ListPartsResult>",
        next_marker.is_some()
    ))
}

#[tokio::test]
async fn list_parts_pages_follow_the_part_number_marker() {
    let server = FaultServer::start([
        parts_page(&[(1, 5_242_880), (2, 5_242_880)], Some(2)),
        parts_page(&[(3, 17)], None),
    ]);
    let client = client(&server);
    let mut pages = client.list_parts_pages(
        ListParts::new(
            s3_wire_tokio::bucket("bucket").unwrap(),
            s3_wire_tokio::key("k").unwrap(),
            "upload-1",
        )
        .max_parts(2),
    );
    let mut parts = Vec::new();
    while let Some(page) = pages.next_page().await {
        for part in page.unwrap().result.parts {
            parts.push((part.part_number, part.size, part.etag.as_str().to_owned()));
        }
    }
    assert_eq!(
        parts,
        [
            (1, 5_242_880, "\"etag-1\"".to_owned()),
            (2, 5_242_880, "\"etag-2\"".to_owned()),
            (3, 17, "\"etag-3\"".to_owned()),
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let query = |index: usize| requests[index].uri.query().unwrap_or_default().to_owned();
    assert!(query(0).contains("uploadId=upload-1") && query(0).contains("max-parts=2"));
    assert!(query(1).contains("part-number-marker=2"), "{}", query(1));
}

/// Hands out a new key pair on every call (like a provider refreshing short-lived keys).
#[derive(Debug, Default)]
struct Rotating {
    calls: std::sync::atomic::AtomicUsize,
}

impl CredentialsProvider for Rotating {
    fn credentials(&self) -> CredentialsFuture<'_> {
        let call = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move {
            Ok(Credentials::new(
                format!("AKIDROTATING{call}"),
                format!("{SECRET_KEY}-{call}"),
                None,
            ))
        })
    }
}

#[derive(Debug)]
struct Failing;

impl CredentialsProvider for Failing {
    fn credentials(&self) -> CredentialsFuture<'_> {
        Box::pin(async {
            Err(s3_wire_tokio::credentials::Error::provider(
                "vault unreachable",
            ))
        })
    }
}

#[tokio::test]
async fn each_attempt_asks_the_provider_and_signs_with_what_it_returns() {
    let server = FaultServer::start([Reply::internal_error(), Reply::ok("done")]);
    let client = Client::builder()
        .endpoint(server.endpoint())
        .credentials(Rotating::default())
        .retry(retry(3))
        .build()
        .unwrap();
    client.get_object(get("k")).await.unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for (call, request) in requests.iter().enumerate() {
        let authorization = request.header("authorization").unwrap();
        assert!(
            authorization.contains(&format!("Credential=AKIDROTATING{call}/")),
            "{authorization}"
        );
        support::fault::verify_recorded(request, &format!("{SECRET_KEY}-{call}")).unwrap();
    }
}

#[tokio::test]
async fn a_failing_provider_is_a_credentials_error_with_its_cause() {
    let server = FaultServer::start_with_fallback([], Reply::ok("unused"));
    let client = Client::builder()
        .endpoint(server.endpoint())
        .credentials(Failing)
        .build()
        .unwrap();
    let err = client.get_object(get("k")).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Credentials), "{err:?}");
    let mut chain = Vec::new();
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        chain.push(cause.to_string());
        source = cause.source();
    }
    assert!(
        chain.iter().any(|c| c.contains("vault unreachable")),
        "{chain:?}"
    );
    assert_eq!(server.request_count(), 0);
}

const XMLNS: &str = "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"";
const DATE: &str = "2024-01-01T00:00:00.000Z";

/// The query parameters of request `index` of `server`.
fn query_of(server: &FaultServer, index: usize) -> String {
    server.requests()[index]
        .uri
        .query()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn list_object_versions_pages_follow_key_and_version_markers() {
    let version = |key: &str, id: &str| {
        format!(
            "<Version><Key>{key}</Key><VersionId>{id}</VersionId><IsLatest>true</IsLatest>\
             <LastModified>{DATE}</LastModified><ETag>&quot;e&quot;</ETag><Size>1</Size>\
             <StorageClass>STANDARD</StorageClass></Version>"
        )
    };
    let first = format!(
        "<ListVersionsResult {XMLNS}><Name>bucket</Name><Prefix></Prefix><MaxKeys>2</MaxKeys>\
         <IsTruncated>true</IsTruncated><NextKeyMarker>b</NextKeyMarker>\
         <NextVersionIdMarker>v-b1</NextVersionIdMarker>{}<DeleteMarker><Key>b</Key>\
         <VersionId>v-b1</VersionId><IsLatest>true</IsLatest><LastModified>{DATE}</LastModified>\
         </DeleteMarker></ListVersionsResult>",
        version("a", "v-a1")
    );
    let second = format!(
        "<ListVersionsResult {XMLNS}><Name>bucket</Name><Prefix></Prefix><MaxKeys>2</MaxKeys>\
         <IsTruncated>false</IsTruncated>{}</ListVersionsResult>",
        version("c", "v-c1")
    );
    let server = FaultServer::start([Reply::ok(first), Reply::ok(second)]);
    let mut pages = client(&server).list_object_versions_pages(ListObjectVersions::new(
        s3_wire_tokio::bucket("bucket").unwrap(),
    ));
    let mut keys = Vec::new();
    while let Some(page) = pages.next_page().await {
        keys.extend(
            page.unwrap()
                .result
                .entries
                .iter()
                .map(|e| e.key().to_owned()),
        );
    }
    assert_eq!(keys, ["a", "b", "c"]);
    let second_query = query_of(&server, 1);
    assert!(
        second_query.contains("key-marker=b") && second_query.contains("version-id-marker=v-b1"),
        "{second_query}"
    );
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn list_multipart_uploads_pages_follow_key_and_upload_markers() {
    let upload = |key: &str, id: &str| {
        format!(
            "<Upload><Key>{key}</Key><UploadId>{id}</UploadId><Initiated>{DATE}</Initiated></Upload>"
        )
    };
    let first = format!(
        "<ListMultipartUploadsResult {XMLNS}><Bucket>bucket</Bucket><MaxUploads>2</MaxUploads>\
         <IsTruncated>true</IsTruncated><NextKeyMarker>k2</NextKeyMarker>\
         <NextUploadIdMarker>u2</NextUploadIdMarker>{}{}</ListMultipartUploadsResult>",
        upload("k1", "u1"),
        upload("k2", "u2")
    );
    let second = format!(
        "<ListMultipartUploadsResult {XMLNS}><Bucket>bucket</Bucket><MaxUploads>2</MaxUploads>\
         <IsTruncated>false</IsTruncated>{}</ListMultipartUploadsResult>",
        upload("k3", "u3")
    );
    let server = FaultServer::start([Reply::ok(first), Reply::ok(second)]);
    let mut pages = client(&server).list_multipart_uploads_pages(
        ListMultipartUploads::new(s3_wire_tokio::bucket("bucket").unwrap()).max_uploads(2),
    );
    let mut uploads = Vec::new();
    while let Some(page) = pages.next_page().await {
        for upload in page.unwrap().result.uploads {
            uploads.push((upload.key, upload.upload_id));
        }
    }
    let uploads: Vec<(&str, &str)> = uploads
        .iter()
        .map(|(k, u)| (k.as_str(), u.as_str()))
        .collect();
    assert_eq!(uploads, [("k1", "u1"), ("k2", "u2"), ("k3", "u3")]);
    let first_query = query_of(&server, 0);
    assert!(
        first_query.contains("uploads") && first_query.contains("max-uploads=2"),
        "{first_query}"
    );
    let second_query = query_of(&server, 1);
    assert!(
        second_query.contains("key-marker=k2") && second_query.contains("upload-id-marker=u2"),
        "{second_query}"
    );
}

#[tokio::test]
async fn list_buckets_pages_follow_the_continuation_token() {
    let page = |names: &[&str], token: Option<&str>| {
        let buckets: String = names
            .iter()
            .map(|n| {
                format!("<Bucket><Name>{n}</Name><CreationDate>{DATE}</CreationDate></Bucket>")
            })
            .collect();
        let token = token
            .map(|t| format!("<ContinuationToken>{t}</ContinuationToken>"))
            .unwrap_or_default();
        Reply::ok(format!(
            "<ListAllMyBucketsResult {XMLNS}><Owner><ID>owner</ID></Owner>\
             <Buckets>{buckets}</Buckets>{token}</ListAllMyBucketsResult>"
        ))
    };
    let server = FaultServer::start([page(&["a", "b"], Some("next/page+1")), page(&["c"], None)]);
    let mut pages = client(&server).list_buckets_pages(ListBuckets::new().max_buckets(2));
    let mut names = Vec::new();
    while let Some(page) = pages.next_page().await {
        names.extend(page.unwrap().result.buckets.into_iter().map(|b| b.name));
    }
    assert_eq!(names, ["a", "b", "c"]);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].uri.path(), "/");
    // The token is sent back percent-encoded and validly signed.
    let second_query = query_of(&server, 1);
    assert!(
        second_query.contains("continuation-token=next%2Fpage%2B1"),
        "{second_query}"
    );
    assert_all_signed(&requests);
}

#[tokio::test]
async fn clones_share_one_connection_pool() {
    let server = FaultServer::start_with_fallback([], Reply::ok("pooled"));
    let client = client(&server);
    let clone = client.clone();
    for (index, client) in [&client, &clone, &client.clone()].into_iter().enumerate() {
        let response = client.get_object(get("k")).await.unwrap();
        assert_eq!(
            response.body.collect().await.unwrap(),
            "pooled",
            "request {index}"
        );
    }
    let connections: Vec<usize> = server.requests().iter().map(|r| r.connection).collect();
    assert_eq!(
        connections,
        [0, 0, 0],
        "sequential requests reuse one kept-alive connection"
    );
}

/// A ListObjectsV2 page as s3s-fs answers it (recorded from local-s3): it echoes
/// `EncodingType=url` when asked, but the keys are raw either way.
fn s3s_fs_listing_page(keys: &[&str], encoding_echoed: bool, next: Option<&str>) -> Reply {
    let contents: String = keys
        .iter()
        .map(|key| {
            format!(
                "<Contents><Key>{key}</Key><LastModified>2026-12-01T19:59:01.135Z</LastModified>\
                 <Size>1</Size></Contents>"
            )
        })
        .collect();
    let truncation = match next {
        Some(token) => format!(
            "<IsTruncated>true</IsTruncated><NextContinuationToken>{token}</NextContinuationToken>"
        ),
        None => "<IsTruncated>false</IsTruncated>".to_owned(),
    };
    let encoding = if encoding_echoed {
        "<EncodingType>url</EncodingType>"
    } else {
        ""
    };
    Reply::ok(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult \
         xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bucket</Name><MaxKeys>2</MaxKeys>\
         {truncation}{contents}{encoding}</ListBucketResult>"
    ))
}

#[tokio::test]
async fn a_listing_whose_server_ignores_encoding_type_is_asked_again_without_it() {
    let server = FaultServer::start([
        // Page 1 asked with encoding-type=url: raw keys under the echo.
        s3s_fs_listing_page(&["100% done.txt", "a b"], true, Some("t2")),
        // Page 1 again, without it.
        s3s_fs_listing_page(&["100% done.txt", "a b"], false, Some("t2")),
        // Page 2, asked without it from the start.
        s3s_fs_listing_page(&["a+b", "plain"], false, None),
    ]);
    let client = client(&server);
    let mut pages =
        client.list_objects_v2_pages(ListObjectsV2::new(s3_wire_tokio::bucket("bucket").unwrap()));
    let mut keys = Vec::new();
    while let Some(page) = pages.next_page().await {
        let page = page.expect("the fallback reads every page");
        keys.extend(page.result.contents.into_iter().map(|o| o.key));
    }
    // `a+b` would have become `a b` had the raw page been decoded.
    assert_eq!(keys, ["100% done.txt", "a b", "a+b", "plain"]);
    let queries: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.uri.query().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(queries.len(), 3);
    assert!(queries[0].contains("encoding-type=url"), "{queries:?}");
    assert!(!queries[1].contains("encoding-type"), "{queries:?}");
    assert!(
        !queries[2].contains("encoding-type") && queries[2].contains("continuation-token=t2"),
        "{queries:?}"
    );

    // A single request says what is wrong and what to do.
    let server = FaultServer::start([s3s_fs_listing_page(&["100% done.txt"], true, None)]);
    let error = crate::client(&server)
        .send(ListObjectsV2::new(s3_wire_tokio::bucket("bucket").unwrap()))
        .await
        .unwrap_err();
    assert!(error.is_unencoded_listing(), "{error:?}");
    let shown = error.to_string();
    assert!(
        shown.contains("encoding-type") && shown.contains("url_encoding(false)"),
        "{shown}"
    );
}

/// A `RawRequest` (the escape hatch for operations the library does not model) is retried
/// after a dropped connection only when declared idempotent: one that is not may have taken
/// effect, so it fails with the outcome unknown. A refusal that took no effect (503) is
/// retried either way.
#[tokio::test]
async fn a_raw_request_is_retried_after_a_dropped_connection_only_when_idempotent() {
    use s3_wire_tokio::s3_ops::RawRequest;
    let raw = |idempotent: bool| {
        RawRequest::new("PutBucketVersioning", http::Method::PUT)
            .bucket(s3_wire_tokio::bucket("bucket").unwrap())
            .query("versioning", None)
            .body("<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>")
            .content_md5()
            .idempotent(idempotent)
    };
    let server = FaultServer::start([Reply::Reset, Reply::empty()]);
    let client = client(&server);
    client.send(raw(true)).await.unwrap();
    assert_eq!(server.request_count(), 2);

    server.clear_requests();
    server.push([Reply::Reset]);
    let error = client.send(raw(false)).await.unwrap_err();
    assert_eq!(server.request_count(), 1, "not retried: {error:?}");
    assert!(error.outcome_unknown(), "{error:?}");
    assert!(matches!(error.kind(), ErrorKind::Transport(_)), "{error:?}");

    server.clear_requests();
    server.push([Reply::slow_down(), Reply::empty()]);
    client.send(raw(false)).await.unwrap();
    assert_eq!(server.request_count(), 2);
    // Every attempt carried the body and its Content-MD5, signed.
    let requests = server.requests();
    assert!(requests.iter().all(|r| r.header("content-md5").is_some()));
    assert_all_signed(&requests);
}

/// `ClientBuilder::request_extras` reach every request, signed: custom headers and query
/// parameters, requester pays; a view adds its own on top (`with_request_extras`) and may
/// replace a header the operation sets; a header the library owns is refused before
/// anything is sent.
#[tokio::test]
async fn request_extras_are_sent_and_signed_on_every_request() {
    use s3_wire_tokio::s3_ops::RequestExtras;
    let server = FaultServer::start_with_fallback([], Reply::empty());
    let client = builder(&server)
        .request_extras(
            RequestExtras::new()
                .header("x-custom-trace", "t-1")
                .query("tenant", Some("7"))
                .request_payer(true),
        )
        .build()
        .unwrap();
    client
        .put_object(put("a"), Body::from_bytes(Bytes::from_static(b"hello")))
        .await
        .unwrap();
    client.head_object(head("a")).await.unwrap();
    let view = client.with_request_extras(
        RequestExtras::new()
            .header("x-custom-view", "v")
            .replace_header("content-type", "text/x-replaced"),
    );
    view.put_object(put("b"), Body::from_bytes(Bytes::from_static(b"hi")))
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(request.header("x-custom-trace"), Some("t-1"), "{request:?}");
        assert_eq!(request.header("x-amz-request-payer"), Some("requester"));
        assert!(
            request.uri.query().is_some_and(|q| q.contains("tenant=7")),
            "{request:?}"
        );
        let signed = request.header("authorization").unwrap();
        assert!(
            signed.contains("x-amz-request-payer") && signed.contains("x-custom-trace"),
            "{signed}"
        );
        assert!(
            support::fault::verify_recorded(request, SECRET_KEY).is_ok(),
            "{request:?}"
        );
    }
    assert_eq!(requests[2].header("x-custom-view"), Some("v"));
    assert_eq!(requests[2].header("content-type"), Some("text/x-replaced"));
    assert_eq!(requests[0].header("x-custom-view"), None);
    // A header the library owns is refused, before any request.
    let owned = builder(&server)
        .request_extras(RequestExtras::new().header("authorization", "mine"))
        .build()
        .unwrap();
    let error = owned.head_object(head("a")).await.unwrap_err();
    assert!(error.to_string().contains("authorization"), "{error}");
    assert_eq!(server.request_count(), 3);
}

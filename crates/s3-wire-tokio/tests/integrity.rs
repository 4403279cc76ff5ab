//! Integrity by default, against the scripted fault server over plain HTTP and over TLS:
//! every default upload carries a CRC32 checksum (a header for bytes, and for files over plain
//! HTTP, computed ahead with the SHA-256 the signature needs; an aws-chunked trailer for
//! streams, and for files over TLS) whose value is checked here independently, every GetObject
//! and HeadObject asks for the stored checksums, a body with one corrupted byte fails with a
//! typed checksum error, and each opt-out (per request, per client, managed transfers) sends
//! nothing of the kind.

mod support;

use std::time::Duration;

use bytes::Bytes;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::{BucketName, ObjectKey};
use s3_wire_tokio::{
    Body, Client, ClientBuilder, ErrorKind, NotVerified, PayloadSigning, RetryConfig, Verification,
};
use support::fault::{FaultServer, Recorded, Reply};
use support::{aws_chunked, base64, crc32, crc64nvme, data, one_shot};

const ACCESS_KEY: &str = "AKIDFAULTSERVER";
const SECRET_KEY: &str = "fault-server-secret-key";
const ETAG: &str = "\"0123456789abcdef0123456789abcdef\"";
/// Above the 64 KiB under which in-memory bodies are signed by their SHA-256 over TLS too.
const LEN: u64 = 150_000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Bytes,
    File,
    Stream,
}

const KINDS: [Kind; 3] = [Kind::Bytes, Kind::File, Kind::Stream];

/// An upload body of `kind` holding `data` (a file lives in `directory`).
async fn body(kind: Kind, data: &Bytes, directory: &tempfile::TempDir) -> Body {
    match kind {
        Kind::Bytes => Body::from_bytes(data.clone()),
        Kind::File => {
            let path = directory.path().join("upload");
            std::fs::write(&path, data).unwrap();
            Body::from_file(&path).await.unwrap()
        }
        Kind::Stream => one_shot(data, 16_384),
    }
}

fn server(tls: bool, script: impl IntoIterator<Item = Reply>) -> FaultServer {
    if tls {
        FaultServer::start_tls(script, &["localhost"])
    } else {
        FaultServer::start(script)
    }
}

fn builder(server: &FaultServer, tls: bool) -> ClientBuilder {
    let builder = Client::builder()
        .region("us-east-1")
        .proxy_from_env(false)
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .retry(
            RetryConfig::default()
                .with_max_attempts(2)
                .with_delays(Duration::from_millis(1), Duration::from_millis(5)),
        );
    if tls {
        builder
            .endpoint(format!("https://localhost:{}", server.addr().port()))
            .resolve("localhost", server.addr())
            .add_root_certificate_der(server.certificate_der())
    } else {
        builder.endpoint(server.endpoint())
    }
}

fn bucket() -> BucketName {
    s3_wire_tokio::bucket("bucket").unwrap()
}

fn key() -> ObjectKey {
    s3_wire_tokio::key("object").unwrap()
}

/// The checksum headers and trailers a recorded upload carried, after checking its
/// signature: `(name, value)` pairs of `x-amz-checksum-*`, and whether any checksum
/// announcement (`x-amz-sdk-checksum-algorithm`, `x-amz-trailer`) was sent.
fn sent_checksums(request: &Recorded, data: &[u8]) -> (Vec<(String, String)>, bool) {
    support::fault::verify_recorded(request, SECRET_KEY)
        .unwrap_or_else(|e| panic!("signature: {e}"));
    let mut checksums: Vec<(String, String)> = request
        .headers
        .iter()
        .filter(|(name, _)| name.as_str().starts_with("x-amz-checksum-"))
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
        .collect();
    let chunked = request
        .header("content-encoding")
        .is_some_and(|v| v.split(',').any(|e| e.trim() == "aws-chunked"));
    if chunked {
        let decoded = aws_chunked::decode(&request.body).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(decoded.data, data, "the payload inside the chunks");
        checksums.extend(decoded.trailers);
    } else {
        assert_eq!(&request.body[..], data, "the payload as sent");
    }
    let announced = request.header("x-amz-sdk-checksum-algorithm").is_some()
        || request.header("x-amz-trailer").is_some();
    (checksums, announced)
}

/// A GetObject answer with the stored CRC32 `crc` and `body` (perhaps corrupted).
fn stored(body: &[u8], crc: &str) -> Reply {
    stored_as("x-amz-checksum-crc32", body, crc)
}

/// A GetObject answer with the stored checksum `header: value` and `body`.
fn stored_as(header: &str, body: &[u8], value: &str) -> Reply {
    Reply::ok(Bytes::copy_from_slice(body))
        .with_header("etag", ETAG)
        .with_header(header, value)
        .with_header("x-amz-checksum-type", "FULL_OBJECT")
}

fn checksum_mode(request: &Recorded) -> Option<&str> {
    request.header("x-amz-checksum-mode")
}

#[tokio::test]
async fn default_uploads_carry_a_crc32_and_a_corrupted_byte_is_detected_on_download() {
    let data = data(LEN, 19);
    let crc = base64(&crc32(&data).to_be_bytes());
    let mut corrupted = data.to_vec();
    corrupted[(LEN / 2) as usize] ^= 0x01;
    for tls in [false, true] {
        for kind in KINDS {
            let case = format!("tls {tls}, {kind:?}");
            let server = server(tls, [Reply::empty().with_header("etag", ETAG)]);
            let client = builder(&server, tls).build().unwrap();
            let directory = tempfile::tempdir().unwrap();
            client
                .put_object(
                    PutObject::new(bucket(), key()),
                    body(kind, &data, &directory).await,
                )
                .await
                .unwrap_or_else(|e| panic!("{case}: {e:?}"));
            let put = &server.requests()[0];
            let (checksums, _) = sent_checksums(put, &data);
            assert_eq!(
                checksums,
                [("x-amz-checksum-crc32".to_owned(), crc.clone())],
                "{case}"
            );
            assert_eq!(
                put.header("x-amz-sdk-checksum-algorithm"),
                Some("CRC32"),
                "{case}"
            );
            match (kind, tls) {
                // Known before the body is sent: a header. Over plain HTTP a file is read
                // once ahead for its SHA-256 and its checksum together, and sent signed.
                (Kind::Bytes, _) | (Kind::File, false) => {
                    assert_eq!(put.header("x-amz-trailer"), None, "{case}");
                    let payload = put.header("x-amz-content-sha256").unwrap();
                    assert!(tls || payload.len() == 64, "{case}: {payload}");
                }
                // Computed while it streams: the trailer the chunked encoding announces.
                (Kind::File, true) | (Kind::Stream, _) => assert_eq!(
                    put.header("x-amz-trailer"),
                    Some("x-amz-checksum-crc32"),
                    "{case}"
                ),
            }

            // The stored object comes back with its checksum, one byte flipped at rest or
            // on the way: a typed checksum error, not corrupted bytes.
            server.push([stored(&corrupted, &crc), stored(&data, &crc)]);
            let got = client
                .get_object(GetObject::new(bucket(), key()))
                .await
                .unwrap();
            assert!(
                matches!(got.body.verification(), Verification::FullObject(c) if c.to_base64() == crc),
                "{case}: {:?}",
                got.body.verification()
            );
            let error = got.body.collect().await.expect_err("a corrupted body");
            assert!(
                matches!(
                    error.kind(),
                    ErrorKind::Operation(s3_wire_tokio::s3_ops::Error::ChecksumMismatch { .. })
                ),
                "{case}: {error:?}"
            );
            let intact = client
                .get_object(GetObject::new(bucket(), key()))
                .await
                .unwrap();
            assert!(
                matches!(intact.body.verification(), Verification::FullObject(c) if c.to_base64() == crc),
                "{case}: {:?}",
                intact.body.verification()
            );
            assert_eq!(intact.body.collect().await.unwrap(), data, "{case}");
            for get in &server.requests()[1..] {
                assert_eq!(checksum_mode(get), Some("ENABLED"), "{case}: {get:?}");
            }
        }
    }
}

#[tokio::test]
async fn head_object_asks_for_the_stored_checksums_by_default() {
    let server = server(false, [Reply::empty(), Reply::empty()]);
    let client = builder(&server, false).build().unwrap();
    client
        .head_object(HeadObject::new(bucket(), key()))
        .await
        .unwrap();
    client
        .head_object(HeadObject::new(bucket(), key()).checksum_mode(false))
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(checksum_mode(&requests[0]), Some("ENABLED"));
    assert_eq!(
        checksum_mode(&requests[1]),
        None,
        "the request turned it off"
    );
}

#[tokio::test]
async fn opting_out_per_request_or_per_client_sends_no_checksum_and_asks_for_none() {
    let data = data(LEN, 23);
    // S3 itself stores a CRC64NVME for objects uploaded without a checksum.
    let crc = base64(&crc64nvme(&data).to_be_bytes());
    let mut corrupted = data.to_vec();
    corrupted[7] ^= 0x80;
    for tls in [false, true] {
        for per_client in [false, true] {
            for kind in KINDS {
                let case = format!("tls {tls}, per client {per_client}, {kind:?}");
                let server = server(tls, [Reply::empty().with_header("etag", ETAG)]);
                let mut builder = builder(&server, tls);
                let mut put = PutObject::new(bucket(), key());
                let mut get = GetObject::new(bucket(), key());
                if per_client {
                    builder = builder.upload_checksum(None).verify_downloads(false);
                } else {
                    put = put.no_checksum();
                    get = get.checksum_mode(false);
                }
                let client = builder.build().unwrap();
                let directory = tempfile::tempdir().unwrap();
                client
                    .put_object(put, body(kind, &data, &directory).await)
                    .await
                    .unwrap_or_else(|e| panic!("{case}: {e:?}"));
                let upload = &server.requests()[0];
                let (checksums, announced) = sent_checksums(upload, &data);
                assert!(checksums.is_empty() && !announced, "{case}: {upload:?}");
                let expected_payload = match (kind, tls) {
                    // Nothing beyond SigV4: a stream's chunks are signed over plain HTTP...
                    (Kind::Stream, false) => "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
                    // ...and it is sent as it is over TLS, like a file.
                    (Kind::Stream | Kind::File, true) => "UNSIGNED-PAYLOAD",
                    (Kind::Bytes, true) => "UNSIGNED-PAYLOAD",
                    (Kind::Bytes | Kind::File, false) => "sha256",
                };
                let payload = upload.header("x-amz-content-sha256").unwrap();
                if expected_payload == "sha256" {
                    assert_eq!(payload.len(), 64, "{case}: {payload}");
                } else {
                    assert_eq!(payload, expected_payload, "{case}");
                }

                // A download that did not ask for checksums, from a store that sends none:
                // nothing to verify, and the body says so.
                server.push([Reply::ok(Bytes::from(corrupted.clone())).with_header("etag", ETAG)]);
                let got = client.get_object(get).await.unwrap();
                assert_eq!(checksum_mode(&server.requests()[1]), None, "{case}");
                assert_eq!(
                    got.body.verification(),
                    &Verification::NotVerified(NotVerified::Disabled),
                    "{case}"
                );
                assert_eq!(got.body.collect().await.unwrap(), corrupted, "{case}");
                // A store that sends its checksum anyway is still checked.
                server.push([stored_as("x-amz-checksum-crc64nvme", &corrupted, &crc)]);
                let get = GetObject::new(bucket(), key());
                let get = if per_client {
                    get
                } else {
                    get.checksum_mode(false)
                };
                let unasked = client.get_object(get).await.unwrap();
                assert!(unasked.body.collect().await.is_err(), "{case}");
            }
        }
    }
}

#[tokio::test]
async fn managed_transfers_follow_the_client_defaults() {
    let data = data(20_000, 29);
    let crc = base64(&crc32(&data).to_be_bytes());
    for defaults in [true, false] {
        let server = server(
            false,
            [
                Reply::empty()
                    .with_header("etag", ETAG)
                    .with_header("x-amz-checksum-crc32", &crc),
                stored(&data, &crc),
            ],
        );
        let mut builder = builder(&server, false);
        if !defaults {
            builder = builder.upload_checksum(None).verify_downloads(false);
        }
        let client = builder.build().unwrap();
        let uploaded = client.upload(bucket(), key(), data.clone()).await.unwrap();
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("downloaded");
        let got = client
            .download(bucket(), key(), path.as_path())
            .await
            .unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), data);
        let requests = server.requests();
        let (checksums, announced) = sent_checksums(&requests[0], &data);
        if defaults {
            assert_eq!(
                checksums,
                [("x-amz-checksum-crc32".to_owned(), crc.clone())]
            );
            assert!(
                matches!(&uploaded.verification, Verification::FullObject(c) if c.to_base64() == crc),
                "{uploaded:?}"
            );
            assert_eq!(checksum_mode(&requests[1]), Some("ENABLED"));
            assert!(
                matches!(&got.verification, Verification::FullObject(_)),
                "{got:?}"
            );
        } else {
            assert!(checksums.is_empty() && !announced, "{:?}", requests[0]);
            assert_eq!(
                uploaded.verification,
                Verification::NotVerified(NotVerified::Disabled)
            );
            assert_eq!(checksum_mode(&requests[1]), None);
        }
    }
}

#[tokio::test]
async fn a_buffered_get_object_is_checked_too_and_a_mismatch_is_retried() {
    let data = data(1_000, 37);
    let crc = base64(&crc32(&data).to_be_bytes());
    let mut corrupted = data.to_vec();
    corrupted[999] ^= 0x10;
    // `send` buffers the body: the same check, and a mismatch is worth another try.
    let server = server(false, [stored(&corrupted, &crc), stored(&data, &crc)]);
    let client = builder(&server, false).build().unwrap();
    let output = client.send(GetObject::new(bucket(), key())).await.unwrap();
    assert_eq!(output.body, data);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| checksum_mode(r) == Some("ENABLED")));

    let always = self::server(false, [stored(&corrupted, &crc), stored(&corrupted, &crc)]);
    let client = builder(&always, false).build().unwrap();
    let error = client
        .send(GetObject::new(bucket(), key()))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Operation(s3_wire_tokio::s3_ops::Error::ChecksumMismatch { .. })
        ),
        "{error:?}"
    );
    assert_eq!(error.attempts(), 2);
}

/// The plain-HTTP opt-in: every body kind with a checksum goes unsigned, as over TLS, with
/// its CRC32 (header or trailer) checked here; the same request without a checksum is
/// signed as by default.
#[tokio::test]
async fn unsigned_payloads_with_checksums_are_an_explicit_plain_http_opt_in() {
    let data = data(LEN, 41);
    let crc = base64(&crc32(&data).to_be_bytes());
    for kind in KINDS {
        let directory = tempfile::tempdir().unwrap();
        let stored = || Reply::empty().with_header("etag", ETAG);
        let server = server(false, [stored(), stored()]);
        let client = builder(&server, false)
            .payload_signing(PayloadSigning::UnsignedWithChecksum)
            .build()
            .unwrap();
        for checksum in [true, false] {
            let case = format!("{kind:?}, checksum {checksum}");
            let put = PutObject::new(bucket(), key());
            let put = if checksum { put } else { put.no_checksum() };
            client
                .put_object(put, body(kind, &data, &directory).await)
                .await
                .unwrap_or_else(|e| panic!("{case}: {e:?}"));
            let sent = server.requests().pop().unwrap();
            let (checksums, _) = sent_checksums(&sent, &data);
            let payload = sent.header("x-amz-content-sha256").unwrap();
            match (checksum, kind) {
                (true, Kind::Bytes) => assert_eq!(payload, "UNSIGNED-PAYLOAD", "{case}"),
                (true, _) => assert_eq!(payload, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", "{case}"),
                (false, Kind::Stream) => {
                    assert_eq!(payload, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "{case}")
                }
                (false, _) => assert_eq!(payload.len(), 64, "{case}: {payload}"),
            }
            let expected = if checksum {
                vec![("x-amz-checksum-crc32".to_owned(), crc.clone())]
            } else {
                Vec::new()
            };
            assert_eq!(checksums, expected, "{case}");
        }
    }
}

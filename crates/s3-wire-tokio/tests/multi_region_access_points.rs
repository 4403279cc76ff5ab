//! Requests to an S3 Multi-Region Access Point end to end over TLS against the loopback
//! fault server, to which `ClientBuilder::resolve` routes the access point's global host:
//! SigV4a headers (checked against a canonical request rebuilt here from what was
//! received), an aws-chunked upload, a presigned URL, and no region redirect followed.
//!
//! The crate's dev-dependencies turn its `sigv4a` feature on for its tests; what a build
//! without it does is tested in s3-ops, which decides it (`Error::SigV4aDisabled`).
#![cfg(feature = "sigv4a")]

mod support;

use std::time::Duration;

use s3_wire_tokio::s3_ops::ChecksumAlgorithm;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::{Client, RetryConfig};
use support::fault::{FaultServer, Recorded, Reply};
use support::{aws_chunked, base64, crc32, one_shot};

const ACCESS_KEY: &str = "AKIDFAULTSERVER";
const SECRET_KEY: &str = "fault-server-secret-key";
const ARN: &str = "arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap";
const HOST: &str = "mfzwi23gnjvgw.mrap.accesspoint.s3-global.amazonaws.com";
/// Where a region redirect would lead, were it followed.
const REGIONAL_HOSTS: [&str; 2] = ["s3.us-east-1.amazonaws.com", "s3.us-west-2.amazonaws.com"];

/// An AWS client for `us-east-1` whose access-point and regional hosts all lead to `server`.
fn client(server: &FaultServer) -> Client {
    let mut retry = RetryConfig::default();
    retry.max_attempts = 3;
    retry.base_delay = Duration::from_millis(1);
    retry.max_delay = Duration::from_millis(20);
    std::iter::once(HOST)
        .chain(REGIONAL_HOSTS)
        .fold(Client::builder(), |builder, host| {
            builder.resolve(host, server.addr())
        })
        .proxy_from_env(false)
        .add_root_certificate_der(server.certificate_der())
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .region("us-east-1")
        .retry(retry)
        .build()
        .unwrap()
}

fn server(script: impl IntoIterator<Item = Reply>) -> FaultServer {
    let mut names = vec![HOST];
    names.extend(REGIONAL_HOSTS);
    FaultServer::start_tls(script, &names)
}

fn mrap() -> s3_wire_tokio::s3_ops::BucketName {
    s3_wire_tokio::bucket(ARN).unwrap()
}

/// Checks the SigV4a `Authorization` of a received request (the independent verifier of
/// the test support) for `s3` in every region, and returns the signed header names.
fn verify_sigv4a(request: &Recorded) -> Vec<String> {
    let target = request.uri.path_and_query().map_or("/", |p| p.as_str());
    let signed = support::sigv4::verify_sigv4a(
        request.method.as_str(),
        target,
        &request.headers,
        ACCESS_KEY,
        SECRET_KEY,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (signed.service.as_str(), signed.region_set.as_str()),
        ("s3", "*")
    );
    signed.signed_headers
}

#[tokio::test]
async fn a_get_goes_to_the_global_host_signed_with_sigv4a_for_every_region() {
    let server = server([Reply::ok("hello")]);
    let get = GetObject::new(mrap(), s3_wire_tokio::key("reports/a b.txt").unwrap());
    let object = client(&server).get_object(get).await.unwrap();
    assert_eq!(object.body.collect().await.unwrap(), "hello");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.header("host"), Some(HOST));
    assert_eq!(request.uri.path(), "/reports/a%20b.txt");
    assert_eq!(request.header("x-amz-region-set"), Some("*"));
    let signed = verify_sigv4a(request);
    for name in [
        "host",
        "x-amz-date",
        "x-amz-region-set",
        "x-amz-content-sha256",
    ] {
        assert!(
            signed.iter().any(|s| s == name),
            "{name} unsigned: {signed:?}"
        );
    }
}

#[tokio::test]
async fn a_one_shot_stream_is_aws_chunked_with_a_sigv4a_seed_signature() {
    let server = server([Reply::empty().with_header("etag", "\"e\"")]);
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let put = PutObject::new(mrap(), s3_wire_tokio::key("stream").unwrap())
        .checksum_algorithm(ChecksumAlgorithm::Crc32);
    client(&server)
        .put_object(put, one_shot(&data, 16_384))
        .await
        .unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.header("host"), Some(HOST));
    assert_eq!(
        request.header("x-amz-content-sha256"),
        Some("STREAMING-UNSIGNED-PAYLOAD-TRAILER")
    );
    assert_eq!(request.header("x-amz-region-set"), Some("*"));
    verify_sigv4a(request);
    let decoded = aws_chunked::decode(&request.body).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(decoded.data, data);
    assert_eq!(
        decoded.trailers,
        [(
            "x-amz-checksum-crc32".to_owned(),
            base64(&crc32(&data).to_be_bytes())
        )]
    );
}

#[tokio::test]
async fn a_region_redirect_is_not_followed_for_a_multi_region_access_point() {
    let server = server([
        Reply::permanent_redirect("us-west-2"),
        Reply::ok("never sent"),
    ]);
    let get = GetObject::new(mrap(), s3_wire_tokio::key("k").unwrap());
    let error = client(&server).get_object(get).await.unwrap_err();
    let service = error.service_error().expect("a service error");
    assert_eq!(service.code, "PermanentRedirect");
    assert_eq!(error.attempts(), 1);
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "the redirect was not followed");
    assert_eq!(requests[0].header("host"), Some(HOST));
}

#[tokio::test]
async fn a_presigned_url_is_signed_with_sigv4a_for_every_region() {
    let server = server(std::iter::empty());
    let get = GetObject::new(mrap(), s3_wire_tokio::key("shared.txt").unwrap());
    let presigned = client(&server)
        .presign(&get, Duration::from_secs(600))
        .await
        .unwrap();
    let url = presigned.url();
    assert!(
        url.starts_with(&format!(
            "https://{HOST}/shared.txt?X-Amz-Algorithm=AWS4-ECDSA-P256-SHA256\
             &X-Amz-Credential={ACCESS_KEY}%2F"
        )),
        "{url}"
    );
    assert!(url.contains("%2Fs3%2Faws4_request&"), "{url}");
    assert!(url.contains("&X-Amz-Region-Set=%2A&"), "{url}");
    assert_eq!(server.request_count(), 0);
}

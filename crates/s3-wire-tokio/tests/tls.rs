//! The client end to end over TLS against the loopback fault server: the one-shot stream
//! upload (UNSIGNED-PAYLOAD with a trailing checksum, only used over https) and the region
//! redirect of AWS endpoints, whose host names `ClientBuilder::resolve` routes to 127.0.0.1.

mod support;

use std::time::Duration;

use s3_wire_tokio::s3_ops::ChecksumAlgorithm;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::{Client, ClientBuilder, RetryConfig};
use support::fault::{FaultServer, Recorded, Reply};
use support::{aws_chunked, base64, crc32, one_shot};

const ACCESS_KEY: &str = "AKIDFAULTSERVER";
const SECRET_KEY: &str = "fault-server-secret-key";

/// Every host name the AWS tests may address: both regions, path-style and virtual-hosted.
const AWS_HOSTS: [&str; 4] = [
    "s3.us-east-1.amazonaws.com",
    "bucket.s3.us-east-1.amazonaws.com",
    "s3.us-west-2.amazonaws.com",
    "bucket.s3.us-west-2.amazonaws.com",
];

fn retry() -> RetryConfig {
    let mut retry = RetryConfig::default();
    retry.max_attempts = 3;
    retry.base_delay = Duration::from_millis(1);
    retry.max_delay = Duration::from_millis(20);
    retry
}

/// A client trusting the server's certificate, with every name in `hosts` routed to it (and
/// not to a proxy of the developer's environment).
fn tls_builder(server: &FaultServer, hosts: &[&str]) -> ClientBuilder {
    hosts
        .iter()
        .fold(Client::builder(), |builder, host| {
            // Upper case: host names are case-insensitive.
            builder.resolve(&host.to_ascii_uppercase(), server.addr())
        })
        .proxy_from_env(false)
        .add_root_certificate_der(server.certificate_der())
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .retry(retry())
}

fn object_bytes(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 256) as u8).collect()
}

fn bucket() -> s3_wire_tokio::s3_ops::BucketName {
    s3_wire_tokio::bucket("bucket").unwrap()
}

fn host(request: &Recorded) -> &str {
    request.header("host").expect("a Host header")
}

#[tokio::test]
async fn a_one_shot_stream_over_tls_is_aws_chunked_unsigned_with_a_crc32_trailer() {
    let server = FaultServer::start_tls(
        [Reply::empty().with_header("etag", "\"e\"")],
        &["localhost"],
    );
    let client = tls_builder(&server, &["localhost"])
        .endpoint(format!("https://localhost:{}", server.addr().port()))
        .region("us-east-1")
        .build()
        .unwrap();
    let data = object_bytes(150_000);
    let put = PutObject::new(bucket(), s3_wire_tokio::key("stream").unwrap())
        .checksum_algorithm(ChecksumAlgorithm::Crc32);
    client
        .put_object(put, one_shot(&data, 16_384))
        .await
        .unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    let seed = support::fault::verify_recorded(request, SECRET_KEY).unwrap();
    assert_eq!(seed.payload, "STREAMING-UNSIGNED-PAYLOAD-TRAILER");
    assert_eq!(
        request.header("x-amz-content-sha256"),
        Some("STREAMING-UNSIGNED-PAYLOAD-TRAILER")
    );
    assert!(
        request
            .header("content-encoding")
            .is_some_and(|v| v.split(',').any(|e| e.trim() == "aws-chunked")),
        "{:?}",
        request.headers
    );
    assert_eq!(
        request.header("x-amz-trailer"),
        Some("x-amz-checksum-crc32")
    );
    let decoded = aws_chunked::decode(&request.body).unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(
        request.header("x-amz-decoded-content-length"),
        Some(data.len().to_string().as_str())
    );
    assert_eq!(decoded.data, data);
    assert!(decoded.chunk_signatures.is_empty(), "unsigned chunks");
    assert_eq!(decoded.trailer_signature, None);
    assert_eq!(
        decoded.trailers,
        [(
            "x-amz-checksum-crc32".to_owned(),
            base64(&crc32(&data).to_be_bytes())
        )]
    );
}

#[tokio::test]
async fn an_untrusted_certificate_is_a_tls_error() {
    let server = FaultServer::start_tls([Reply::empty()], &["localhost"]);
    let client = Client::builder()
        .resolve("localhost", server.addr())
        .endpoint(format!("https://localhost:{}", server.addr().port()))
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .retry(retry())
        .build()
        .unwrap();
    let get = GetObject::new(bucket(), s3_wire_tokio::key("k").unwrap());
    let err = client.get_object(get).await.unwrap_err();
    assert!(
        matches!(
            err.kind(),
            s3_wire_tokio::ErrorKind::Transport(s3_wire_tokio::TransportErrorKind::Tls)
        ),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 0);
}

/// An AWS client for `us-east-1` whose hosts all lead to `server`.
fn aws_client(server: &FaultServer) -> Client {
    tls_builder(server, &AWS_HOSTS)
        .region("us-east-1")
        .build()
        .unwrap()
}

/// Checks that `redirected` went to the us-west-2 host, signed anew for us-west-2, and that
/// nothing signed for the first host travelled with it.
fn assert_resigned_for_us_west_2(first: &Recorded, redirected: &Recorded) {
    let first_signed = support::fault::verify_recorded(first, SECRET_KEY).unwrap();
    let signed = support::fault::verify_recorded(redirected, SECRET_KEY).unwrap();
    assert_eq!(first_signed.region, "us-east-1");
    assert!(
        host(first).contains("s3.us-east-1.amazonaws.com"),
        "{}",
        host(first)
    );
    assert_eq!(signed.region, "us-west-2");
    assert!(signed.scope.contains("/us-west-2/s3/"), "{}", signed.scope);
    assert_eq!(
        host(redirected),
        host(first).replace("us-east-1", "us-west-2")
    );
    assert_ne!(signed.signature, first_signed.signature);
    for (name, value) in &redirected.headers {
        let value = value.to_str().unwrap_or_default();
        assert!(
            !value.contains("us-east-1") && !value.contains(&first_signed.signature),
            "{name}: {value} was signed for the first host"
        );
    }
}

#[tokio::test]
async fn an_aws_permanent_redirect_is_followed_once_and_re_signed_for_the_new_region() {
    let server = FaultServer::start_tls(
        [Reply::permanent_redirect("us-west-2"), Reply::ok("hello")],
        &AWS_HOSTS,
    );
    let get = GetObject::new(bucket(), s3_wire_tokio::key("k").unwrap());
    let object = aws_client(&server).get_object(get).await.unwrap();
    assert_eq!(object.body.collect().await.unwrap(), "hello");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_resigned_for_us_west_2(&requests[0], &requests[1]);
}

#[tokio::test]
async fn authorization_header_malformed_with_a_region_is_followed_like_a_redirect() {
    let malformed = Reply::Respond {
        status: 400,
        headers: vec![("content-type".into(), "application/xml".into())],
        body: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>\
               <Code>AuthorizationHeaderMalformed</Code><Message>the region 'us-east-1' is \
               wrong; expecting 'us-west-2'</Message><Region>us-west-2</Region>\
               <RequestId>r</RequestId><HostId>h</HostId></Error>"
            .into(),
    };
    let server = FaultServer::start_tls([malformed, Reply::ok("hello")], &AWS_HOSTS);
    let get = GetObject::new(bucket(), s3_wire_tokio::key("k").unwrap());
    let object = aws_client(&server).get_object(get).await.unwrap();
    assert_eq!(object.body.collect().await.unwrap(), "hello");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_resigned_for_us_west_2(&requests[0], &requests[1]);
}

#[tokio::test]
async fn a_second_region_redirect_is_not_followed() {
    let server = FaultServer::start_tls(
        [
            Reply::permanent_redirect("us-west-2"),
            Reply::permanent_redirect("eu-west-3"),
            Reply::ok("never sent"),
        ],
        &AWS_HOSTS,
    );
    let get = GetObject::new(bucket(), s3_wire_tokio::key("k").unwrap());
    let err = aws_client(&server).get_object(get).await.unwrap_err();
    let service = err.service_error().expect("a service error");
    assert_eq!(service.code, "PermanentRedirect");
    assert_eq!(service.status.as_u16(), 301);
    assert_eq!(service.region.as_deref(), Some("eu-west-3"));

    let requests = server.requests();
    assert_eq!(requests.len(), 2, "only one redirect is followed");
    assert_resigned_for_us_west_2(&requests[0], &requests[1]);
}

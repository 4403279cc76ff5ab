//! What configures the access modes, and the escape hatch for what the library does not
//! model: FIPS, dual-stack, acceleration, addressing style and the combinations AWS does not
//! offer, from code, the environment and the profile (each refusal before any request); raw
//! requests sent to moto, which implements them. The modes themselves, end to end over TLS,
//! are in `tests/transfers/access_modes.rs`.

mod support;

use bytes::Bytes;
use s3_wire_tokio::s3_ops::{CreateBucket, RawRequest};
use s3_wire_tokio::{Client, ClientBuilder, bucket};

#[test]
fn endpoint_variants_come_from_the_environment_and_profile_and_bad_ones_are_refused() {
    use s3_wire_tokio::credentials::MapEnv;
    let home = tempfile::tempdir().unwrap();
    let env = |vars: &[(&str, &str)], config: &str| {
        std::fs::write(home.path().join("config"), config).unwrap();
        let mut env = MapEnv::new()
            .with_home(home.path())
            .with_var(
                "AWS_CONFIG_FILE",
                home.path().join("config").to_str().unwrap(),
            )
            .with_var(
                "AWS_SHARED_CREDENTIALS_FILE",
                home.path().join("none").to_str().unwrap(),
            )
            .with_var("AWS_ACCESS_KEY_ID", "AKID")
            .with_var("AWS_SECRET_ACCESS_KEY", "secret")
            .with_var("AWS_EC2_METADATA_DISABLED", "true");
        for (name, value) in vars {
            env = env.with_var(*name, *value);
        }
        ClientBuilder::from_env_with(std::sync::Arc::new(env))
    };
    let client = env(
        &[
            ("AWS_REGION", "us-west-2"),
            ("AWS_USE_FIPS_ENDPOINT", "true"),
            ("AWS_USE_DUALSTACK_ENDPOINT", "TRUE"),
        ],
        "",
    )
    .build()
    .unwrap();
    assert_eq!(
        client.endpoint().host(),
        "s3-fips.dualstack.us-west-2.amazonaws.com"
    );
    let profile = "[default]\nregion = eu-west-1\nuse_dualstack_endpoint = true\ns3 =\n  use_accelerate_endpoint = true\n  addressing_style = virtual\n";
    let client = env(&[], profile).build().unwrap();
    assert_eq!(client.endpoint().variants(), (false, true, true));
    assert_eq!(
        client.endpoint().addressing_style(),
        s3_wire_tokio::s3_ops::AddressingStyle::VirtualHosted
    );
    // The environment wins over the profile.
    let client = env(&[("AWS_USE_DUALSTACK_ENDPOINT", "false")], profile)
        .build()
        .unwrap();
    assert_eq!(client.endpoint().variants(), (false, false, true));

    let refusals = [
        (
            env(&[("AWS_USE_FIPS_ENDPOINT", "yes")], ""),
            "AWS_USE_FIPS_ENDPOINT: must be true or false",
        ),
        (
            env(&[], "[default]\nuse_fips_endpoint = maybe\n"),
            "use_fips_endpoint: must be true or false",
        ),
        (
            env(&[], "[default]\ns3 =\n  addressing_style = sideways\n"),
            "path, virtual or auto",
        ),
        (
            env(
                &[
                    ("AWS_REGION", "cn-north-1"),
                    ("AWS_USE_FIPS_ENDPOINT", "true"),
                ],
                "",
            ),
            "does not support FIPS",
        ),
        (
            env(
                &[("AWS_USE_FIPS_ENDPOINT", "true")],
                "[default]\ns3 =\n  use_accelerate_endpoint = true\n",
            ),
            "cannot be used with FIPS",
        ),
        (
            env(&[("AWS_S3_US_EAST_1_REGIONAL_ENDPOINT", "global")], ""),
            "AWS_S3_US_EAST_1_REGIONAL_ENDPOINT: must be legacy or regional",
        ),
        (
            env(&[], "[default]\ns3_us_east_1_regional_endpoint = yes\n"),
            "s3_us_east_1_regional_endpoint: must be legacy or regional",
        ),
        (
            env(&[("AWS_S3_DISABLE_MULTIREGION_ACCESS_POINTS", "1")], ""),
            "AWS_S3_DISABLE_MULTIREGION_ACCESS_POINTS: must be true or false",
        ),
        (
            env(&[], "[default]\ns3_disable_express_session_auth = on\n"),
            "s3_disable_express_session_auth: must be true or false",
        ),
        (
            env(
                &[
                    ("AWS_ENDPOINT_URL", "https://minio.example.com"),
                    ("AWS_USE_DUALSTACK_ENDPOINT", "true"),
                ],
                "",
            ),
            "cannot be combined with dual-stack",
        ),
        (
            Client::builder()
                .endpoint("https://minio.example.com")
                .fips(true)
                .static_credentials("a", "b", None),
            "cannot be combined with FIPS",
        ),
        (
            Client::builder().region("us-east-1"),
            "ClientBuilder::anonymous",
        ),
    ];
    for (builder, fragment) in refusals {
        let error = builder.build().unwrap_err();
        assert!(error.to_string().contains(fragment), "{fragment}: {error}");
    }
}

/// The escape hatch against a server that implements what it sends: PutBucketVersioning
/// and GetBucketVersioning, which the library does not model as such, on moto.
#[tokio::test]
async fn the_escape_hatch_sends_what_the_library_does_not_model() {
    let moto = support::moto::moto().await;
    let client = moto.client();
    let photos = bucket("versioned-photos").unwrap();
    client
        .create_bucket(CreateBucket::new(photos.clone()))
        .await
        .unwrap();
    let enable = RawRequest::new("PutBucketVersioning", http::Method::PUT)
        .bucket(photos.clone())
        .query("versioning", None)
        .header("content-type", "application/xml")
        .body(Bytes::from_static(
            b"<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
              <Status>Enabled</Status></VersioningConfiguration>",
        ))
        .content_md5()
        .idempotent(true);
    let answer = client.send(enable).await.unwrap();
    assert_eq!(answer.status(), 200);
    let read = RawRequest::new("GetBucketVersioning", http::Method::GET)
        .bucket(photos.clone())
        .query("versioning", None)
        .idempotent(true);
    let answer = client.send(read).await.unwrap();
    let text = String::from_utf8(answer.body().to_vec()).unwrap();
    assert!(text.contains("<Status>Enabled</Status>"), "{text}");
    // Its errors are typed like every other operation's.
    let missing = RawRequest::new("GetBucketVersioning", http::Method::GET)
        .bucket(bucket("no-such-bucket-here").unwrap())
        .query("versioning", None);
    let error = client.send(missing).await.unwrap_err();
    assert_eq!(
        error.service_error().unwrap().code,
        "NoSuchBucket",
        "{error}"
    );
}

/// Over plain HTTP an anonymous upload has no signature to cover its payload either: bytes
/// carry their checksum in a header, a one-shot stream in an unsigned aws-chunked trailer.
#[tokio::test]
async fn anonymous_uploads_over_plain_http_keep_their_checksums_unsigned() {
    use s3_wire_tokio::s3_ops::PutObject;
    use support::fault::{FaultServer, Reply};
    let server = FaultServer::start([
        Reply::empty().with_header("etag", "\"a\""),
        Reply::empty().with_header("etag", "\"b\""),
    ]);
    let client = Client::builder()
        .endpoint(server.endpoint())
        .anonymous()
        .build()
        .unwrap();
    let b = || bucket("public-uploads").unwrap();
    let data = support::data(100_000, 5);
    client
        .put_object(
            PutObject::new(b(), s3_wire_tokio::key("bytes").unwrap()),
            s3_wire_tokio::Body::from_bytes(data.clone()),
        )
        .await
        .unwrap();
    client
        .put_object(
            PutObject::new(b(), s3_wire_tokio::key("stream").unwrap()),
            support::one_shot(&data, 10_000),
        )
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert!(request.header("authorization").is_none(), "{request:?}");
        assert!(request.header("x-amz-security-token").is_none());
    }
    let crc = support::base64(&support::crc32(&data).to_be_bytes());
    assert_eq!(
        requests[0].header("x-amz-checksum-crc32"),
        Some(crc.as_str())
    );
    assert_eq!(
        requests[1].header("x-amz-content-sha256"),
        Some("STREAMING-UNSIGNED-PAYLOAD-TRAILER")
    );
    assert_eq!(
        requests[1].header("x-amz-trailer"),
        Some("x-amz-checksum-crc32")
    );
    let body = String::from_utf8_lossy(&requests[1].body);
    assert!(
        body.contains(&format!("x-amz-checksum-crc32:{crc}")),
        "the trailer carries the CRC32"
    );
}

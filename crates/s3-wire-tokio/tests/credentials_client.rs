//! The credential chain (s3-wire-credentials) through the client: the builder falls back
//! to instance metadata for credentials and region; a round trip against local-s3 with
//! credentials a fake STS issued; an `ExpiredToken` answer forces one refresh and one
//! re-signed retry. The sources themselves are tested in s3-wire-credentials.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use s3_wire_tokio::credentials::{CacheSettings, Clock, CredentialsProvider, DefaultChain};
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::{Body, Client, ClientBuilder, bucket, key};
use support::endpoint::{Answer, Endpoint, Request};
use support::fault::{FaultServer, Reply};
use support::imds::{ACCESS_KEY, ImdsFake, SECRET_KEY};
use support::sts::{Home, SECRET_BASE, base_credentials, httpdate_iso, sts};

#[tokio::test]
async fn the_default_chain_and_the_builder_fall_back_to_instance_metadata() {
    let fake = ImdsFake::start();
    let env = Arc::new(fake.env());
    let chain = s3_wire_tokio::credentials::DefaultChain::with_env(env.clone());
    let credentials = chain.credentials().await.unwrap();
    assert_eq!(credentials.access_key_id(), ACCESS_KEY);
    assert_eq!(credentials.secret_access_key(), SECRET_KEY);
    assert_eq!(chain.region().await.unwrap().as_deref(), Some("eu-west-3"));

    let client = s3_wire_tokio::ClientBuilder::load_from_env_with(env)
        .await
        .build()
        .unwrap();
    assert_eq!(client.region(), "eu-west-3");

    // A configured endpoint (a MinIO, say) is not in an AWS region: no question to IMDS.
    let asked = fake.requests().len();
    let elsewhere = Arc::new(
        fake.env()
            .with_var("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
    );
    let client = s3_wire_tokio::ClientBuilder::load_from_env_with(elsewhere)
        .await
        .build()
        .unwrap();
    assert_eq!(client.region(), s3_wire_tokio::DEFAULT_REGION);
    assert_eq!(fake.requests().len(), asked);
}

/// A real round trip: local-s3 accepts the keys the fake STS hands out for a role.
#[tokio::test]
async fn objects_round_trip_through_local_s3_with_credentials_from_sts() {
    let (_, server) = support::local_s3().await;
    let (access_key, secret_key) = (
        server.access_key().to_owned(),
        server.secret_key().to_owned(),
    );
    let issued = Arc::new(Mutex::new(0u32));
    let counter = issued.clone();
    let sts = Endpoint::start(move |request: &Request| {
        if support::sigv4::verify_for(
            "sts",
            request.method.as_str(),
            &request.target,
            &request.headers,
            Some(&request.body),
            SECRET_BASE,
        )
        .is_err()
        {
            return Answer::new(
                403,
                "<ErrorResponse><Error><Code>SignatureDoesNotMatch</Code></Error></ErrorResponse>",
            );
        }
        *counter.lock().unwrap() += 1;
        let expiration = httpdate_iso(SystemTime::now() + Duration::from_secs(3600));
        Answer::ok(format!(
            "<AssumeRoleResponse><AssumeRoleResult><Credentials><AccessKeyId>{access_key}</AccessKeyId>\
             <SecretAccessKey>{secret_key}</SecretAccessKey><SessionToken>session-token-1</SessionToken>\
             <Expiration>{expiration}</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>"
        ))
    });
    let home = Home::new(
        "[profile app]\nrole_arn = arn:aws:iam::111:role/app\nsource_profile = base\n",
        &base_credentials(),
    );
    let env = home
        .env(&sts)
        .with_var("AWS_PROFILE", "app")
        .with_var("AWS_ENDPOINT_URL_S3", server.endpoint())
        .with_var("AWS_REGION", server.region());
    let client = ClientBuilder::from_env_with(Arc::new(env)).build().unwrap();
    client
        .send(CreateBucket::new(bucket("role-bucket").unwrap()))
        .await
        .expect("create bucket");
    let body = Bytes::from_static(b"written with role credentials");
    client
        .put_object(
            PutObject::new(bucket("role-bucket").unwrap(), key("k").unwrap()),
            Body::from(body.clone()),
        )
        .await
        .expect("put");
    let got = client
        .get_object(GetObject::new(
            bucket("role-bucket").unwrap(),
            key("k").unwrap(),
        ))
        .await
        .expect("get")
        .body
        .collect()
        .await
        .unwrap();
    assert_eq!(got, body);
    assert_eq!(
        *issued.lock().unwrap(),
        1,
        "one AssumeRole for all requests"
    );
}

/// Wall-clock time that follows tokio's (paused) clock.
#[derive(Debug)]
struct TokioClock {
    start: tokio::time::Instant,
}

impl Clock for TokioClock {
    fn now(&self) -> SystemTime {
        SystemTime::now() + self.start.elapsed()
    }
}

#[tokio::test]
async fn expired_token_from_s3_forces_one_refresh_and_one_resigned_retry() {
    let sts = sts("unused");
    let home = Home::new(
        "[profile app]\nrole_arn = arn:aws:iam::111:role/app\nsource_profile = base\n",
        &base_credentials(),
    );
    let server = FaultServer::start([
        Reply::s3_error(400, "ExpiredToken", "The provided token has expired."),
        Reply::ok("payload"),
        Reply::s3_error(400, "ExpiredToken", "The provided token has expired."),
        Reply::s3_error(400, "ExpiredToken", "The provided token has expired."),
    ]);
    let env = home.env(&sts).with_var("AWS_PROFILE", "app");
    let chain = DefaultChain::with_clock(
        Arc::new(env),
        CacheSettings::default(),
        Arc::new(TokioClock {
            start: tokio::time::Instant::now(),
        }),
    );
    let client = Client::builder()
        .endpoint(server.endpoint())
        .region("eu-west-1")
        .credentials(chain)
        .retry(support::retry(1))
        .build()
        .unwrap();
    let body = client
        .get_object(GetObject::new(bucket("bucket").unwrap(), key("k").unwrap()))
        .await
        .expect("the retry with new credentials succeeds")
        .body
        .collect()
        .await
        .unwrap();
    assert_eq!(body, "payload");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0]
            .header("authorization")
            .unwrap()
            .contains("Credential=ASIA1/")
    );
    assert_eq!(requests[0].header("x-amz-security-token"), Some("token-1"));
    assert!(
        requests[1]
            .header("authorization")
            .unwrap()
            .contains("Credential=ASIA2/")
    );
    assert_eq!(requests[1].header("x-amz-security-token"), Some("token-2"));
    assert_eq!(sts.requests().len(), 2, "one refresh");

    // Refused twice in a row: one refresh only, then the typed error.
    let error = client
        .get_object(GetObject::new(bucket("bucket").unwrap(), key("k").unwrap()))
        .await
        .unwrap_err();
    assert_eq!(
        error.service_error().map(|e| e.code.as_str()),
        Some("ExpiredToken")
    );
    assert_eq!(server.requests().len(), 4);
    assert_eq!(sts.requests().len(), 3);
}

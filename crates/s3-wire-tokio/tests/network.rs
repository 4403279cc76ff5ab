//! Enterprise networks: CA bundles (builder, `AWS_CA_BUNDLE`, the profile; with and without
//! the platform's roots), explicit proxies with credentials and TLS of their own, client
//! certificates (mTLS), a caller's own `reqwest::Client`, and request hooks. Loopback only:
//! the private CA, the proxies and the mTLS server are made here.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use s3_wire_tokio::credentials::MapEnv;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::{
    AttemptRecord, Client, ClientBuilder, ErrorKind, RequestHook, TransportErrorKind,
};
use support::connect_proxy::{ConnectProxy, ProxyOptions};
use support::fault::{FaultServer, Reply};
use support::pki::{DEFAULT_VERSIONS, TestCa, server_config};

const HOST: &str = "s3.private.test";
const ACCESS_KEY: &str = "AKIDNETWORK";
const SECRET_KEY: &str = "network-secret-key";

/// A TLS origin for `HOST` whose certificate a private CA issued, answering `script`.
fn private_origin(ca: &TestCa, script: impl IntoIterator<Item = Reply>) -> FaultServer {
    let leaf = ca.issue(&[HOST]);
    FaultServer::start_tls_with(
        script,
        server_config(&leaf, DEFAULT_VERSIONS, &[b"http/1.1"]),
    )
}

fn builder(origin: &FaultServer) -> ClientBuilder {
    Client::builder()
        .endpoint(format!("https://{HOST}"))
        .region("us-east-1")
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .resolve(HOST, origin.addr())
        .proxy_from_env(false)
        .retry(support::retry(2))
}

async fn get(client: &Client) -> Result<Bytes, s3_wire_tokio::Error> {
    let get = GetObject::new(
        s3_wire_tokio::bucket("bucket").unwrap(),
        s3_wire_tokio::key("k").unwrap(),
    );
    client.get_object(get).await?.body.collect().await
}

fn is_tls_failure(error: &s3_wire_tokio::Error) -> bool {
    matches!(error.kind(), ErrorKind::Transport(TransportErrorKind::Tls))
}

#[tokio::test]
async fn ca_bundles_from_the_builder_the_environment_and_the_profile() {
    let ca = TestCa::new("private CA");
    let unrelated = TestCa::new("unrelated CA");
    let origin = private_origin(&ca, std::iter::repeat_n(Reply::ok("trusted"), 16));
    let directory = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = directory.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    // A bundle: every certificate in it is trusted, not just the first.
    let bundle = write("bundle.pem", &format!("{}{}", unrelated.pem(), ca.pem()));
    let wrong = write("wrong.pem", &unrelated.pem());

    // Untrusted by default (the platform does not know the private CA): a TLS failure,
    // not retried.
    let error = get(&builder(&origin).build().unwrap()).await.unwrap_err();
    assert!(is_tls_failure(&error) && error.attempts() == 1, "{error:?}");
    // From the builder: a file, bytes, or with the platform's roots off.
    for client in [
        builder(&origin).ca_bundle(&bundle),
        builder(&origin).add_root_certificates_pem(ca.pem()),
        builder(&origin).ca_bundle(&bundle).platform_roots(false),
    ] {
        assert_eq!(get(&client.build().unwrap()).await.unwrap(), "trusted");
    }
    let error = get(&builder(&origin).ca_bundle(&wrong).build().unwrap())
        .await
        .unwrap_err();
    assert!(is_tls_failure(&error), "{error:?}");

    // From the environment and the profile, with AWS_CA_BUNDLE first (as the AWS CLI).
    let home = tempfile::tempdir().unwrap();
    let from_env = |vars: &[(&str, &std::path::Path)], profile_bundle: Option<&std::path::Path>| {
        let config = home.path().join("config");
        let profile =
            profile_bundle.map_or(String::new(), |p| format!("ca_bundle = {}\n", p.display()));
        std::fs::write(&config, format!("[default]\nregion = us-east-1\n{profile}")).unwrap();
        let mut env = MapEnv::new()
            .with_home(home.path())
            .with_var("AWS_CONFIG_FILE", config.to_str().unwrap())
            .with_var(
                "AWS_SHARED_CREDENTIALS_FILE",
                home.path().join("none").to_str().unwrap(),
            )
            .with_var("AWS_ACCESS_KEY_ID", ACCESS_KEY)
            .with_var("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
            .with_var("AWS_ENDPOINT_URL", format!("https://{HOST}"))
            .with_var("AWS_EC2_METADATA_DISABLED", "true");
        for (name, path) in vars {
            env = env.with_var(*name, path.to_str().unwrap());
        }
        ClientBuilder::from_env_with(Arc::new(env))
            .resolve(HOST, origin.addr())
            .proxy_from_env(false)
            .retry(support::retry(1))
    };
    assert_eq!(
        get(&from_env(&[("AWS_CA_BUNDLE", &bundle)], None)
            .build()
            .unwrap())
        .await
        .unwrap(),
        "trusted"
    );
    assert_eq!(
        get(&from_env(&[], Some(&bundle)).build().unwrap())
            .await
            .unwrap(),
        "trusted"
    );
    let env_wins = from_env(&[("AWS_CA_BUNDLE", &wrong)], Some(&bundle))
        .build()
        .unwrap();
    assert!(is_tls_failure(&get(&env_wins).await.unwrap_err()));
    // The builder's own bundle replaces the environment's.
    let builder_wins = from_env(&[("AWS_CA_BUNDLE", &wrong)], None)
        .ca_bundle(&bundle)
        .build()
        .unwrap();
    assert_eq!(get(&builder_wins).await.unwrap(), "trusted");

    // Bad bundles are refused before any request, naming the file.
    let empty = write("empty.pem", "");
    let garbage = write(
        "garbage.pem",
        "-----BEGIN CERTIFICATE-----\n%%%\n-----END CERTIFICATE-----\n",
    );
    let missing = directory.path().join("missing.pem");
    for (client, fragment) in [
        (
            builder(&origin).ca_bundle(&empty),
            "empty.pem holds no certificate",
        ),
        (
            builder(&origin).ca_bundle(&garbage),
            "garbage.pem is not a PEM certificate bundle",
        ),
        (
            builder(&origin).ca_bundle(&missing),
            "missing.pem cannot be read",
        ),
        (
            from_env(&[("AWS_CA_BUNDLE", &empty)], None),
            "(from AWS_CA_BUNDLE)",
        ),
        (
            builder(&origin).add_root_certificates_pem(b"no pem here".to_vec()),
            "add_root_certificates_pem holds no certificate",
        ),
        (
            builder(&origin).platform_roots(false),
            "no other root certificate is given",
        ),
    ] {
        let error = client.build().unwrap_err();
        assert!(error.to_string().contains(fragment), "{fragment}: {error}");
    }
    // Asked for by name: anything goes (what s3w --no-verify-ssl turns on).
    let reckless = builder(&origin)
        .danger_accept_invalid_certificates(true)
        .build()
        .unwrap();
    assert_eq!(get(&reckless).await.unwrap(), "trusted");
}

#[tokio::test]
async fn explicit_proxies_with_credentials_tls_and_a_no_proxy_list() {
    let ca = TestCa::new("private CA");
    let origin = private_origin(&ca, std::iter::repeat_n(Reply::ok("tunnelled"), 16));
    let with_password = ProxyOptions {
        credentials: Some(("proxy-user".into(), "p@ss:word".into())),
        ..ProxyOptions::default()
    };
    let proxy = ConnectProxy::start(origin.addr(), with_password);
    // The origin's host name resolves nowhere: only the tunnel reaches it.
    let through = |builder: ClientBuilder| {
        builder
            .endpoint(format!("https://{HOST}"))
            .region("us-east-1")
            .static_credentials(ACCESS_KEY, SECRET_KEY, None)
            .add_root_certificates_pem(ca.pem())
            .retry(support::retry(1))
    };
    // Without credentials, or with a wrong password: 407, an error that says what to fix,
    // not retried, the password nowhere in it.
    let anonymous_proxy = through(Client::builder().proxy(&format!("http://{}", proxy.addr)))
        .build()
        .unwrap();
    let wrong_password = through(
        Client::builder()
            .proxy(&format!("http://{}", proxy.addr))
            .proxy_credentials("proxy-user", "wr0ng-pr0xy-pa55"),
    )
    .build()
    .unwrap();
    for client in [&anonymous_proxy, &wrong_password] {
        let error = get(client).await.unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Transport(TransportErrorKind::ProxyAuthentication)
            ),
            "{error:?}"
        );
        assert_eq!(error.attempts(), 1, "{error:?}");
        let shown = format!("{error} {error:?} {client:?}");
        assert!(shown.contains("proxy authentication"), "{shown}");
        assert!(!shown.contains("wr0ng-pr0xy-pa55"), "{shown}");
    }
    // With them in the URL (percent-encoded) or set apart: through, and never shown.
    let in_url = through(
        Client::builder().proxy(&format!("http://proxy-user:p%40ss%3Aword@{}", proxy.addr)),
    );
    let debug = format!("{in_url:?}");
    assert!(
        !debug.contains("p@ss") && !debug.contains("p%40ss"),
        "{debug}"
    );
    assert_eq!(get(&in_url.build().unwrap()).await.unwrap(), "tunnelled");
    let apart = through(
        Client::builder()
            .proxy(&format!("http://{}", proxy.addr))
            .proxy_credentials("proxy-user", "p@ss:word"),
    );
    assert_eq!(get(&apart.build().unwrap()).await.unwrap(), "tunnelled");
    let requests = proxy.requests();
    assert_eq!(requests.len(), 4, "{requests:?}");
    assert_eq!(requests[0].authorization, None);
    let requests = &requests[1..];
    let expected = format!("Basic {}", support::base64(b"proxy-user:p@ss:word"));
    for request in &requests[1..] {
        assert_eq!(request.target, format!("CONNECT {HOST}:443"));
        assert_eq!(request.authorization.as_deref(), Some(expected.as_str()));
    }

    // An HTTPS proxy whose own certificate a private CA issued: trusted through the bundle.
    let proxy_ca = TestCa::new("proxy CA");
    let proxy_leaf = proxy_ca.issue(&["proxy.corp.test"]);
    let tls_proxy = ConnectProxy::start(
        origin.addr(),
        ProxyOptions {
            tls: Some(server_config(&proxy_leaf, DEFAULT_VERSIONS, &[b"http/1.1"])),
            ..ProxyOptions::default()
        },
    );
    let via_tls = |trust_proxy: bool| {
        let builder = through(Client::builder())
            .proxy(&format!(
                "https://proxy.corp.test:{}",
                tls_proxy.addr.port()
            ))
            .resolve("proxy.corp.test", tls_proxy.addr);
        if trust_proxy {
            builder.add_root_certificates_pem(proxy_ca.pem())
        } else {
            builder
        }
    };
    assert!(is_tls_failure(
        &get(&via_tls(false).build().unwrap()).await.unwrap_err()
    ));
    assert_eq!(
        get(&via_tls(true).build().unwrap()).await.unwrap(),
        "tunnelled"
    );
    assert_eq!(
        tls_proxy.requests().len(),
        1,
        "the untrusted proxy got no CONNECT"
    );

    // A host on the no-proxy list goes direct (the proxy sees nothing more).
    let direct = through(
        Client::builder()
            .proxy(&format!("http://{}", proxy.addr))
            .no_proxy(HOST),
    )
    .resolve(HOST, origin.addr())
    .build()
    .unwrap();
    assert_eq!(get(&direct).await.unwrap(), "tunnelled");
    assert_eq!(proxy.requests().len(), 4);

    for (url, fragment) in [
        (
            "socks5://127.0.0.1:1080",
            "http://host:port or https://host:port",
        ),
        ("not a url", "is not a URL"),
    ] {
        let error = through(Client::builder().proxy(url)).build().unwrap_err();
        assert!(error.to_string().contains(fragment), "{url}: {error}");
    }
}

fn testdata(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/testdata/mtls/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[tokio::test]
async fn client_certificates_for_servers_that_demand_one() {
    let ca = TestCa::new("private CA");
    let leaf = ca.issue(&[HOST]);
    let mut client_roots = rustls::RootCertStore::empty();
    let client_ca = rustls::pki_types::pem::PemObject::from_pem_slice(&testdata("ca.pem")).unwrap();
    client_roots.add(client_ca).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(client_roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(leaf.chain.clone(), leaf.key.clone_key())
        .unwrap();
    let origin = FaultServer::start_tls_with(std::iter::repeat_n(Reply::ok("mutual"), 8), config);
    let trusted = || builder(&origin).add_root_certificates_pem(ca.pem());

    let error = get(&trusted().build().unwrap()).await.unwrap_err();
    assert!(is_tls_failure(&error), "no client certificate: {error:?}");
    // RSA (PKCS#1), EC (SEC1) and the same EC key in PKCS#8.
    for (certificate, key) in [
        ("rsa-client.pem", "rsa-client.key"),
        ("ec-client.pem", "ec-client.key"),
        ("ec-client.pem", "ec-client-pkcs8.key"),
    ] {
        let client = trusted()
            .identity_pem(testdata(certificate), testdata(key))
            .build()
            .unwrap();
        assert_eq!(get(&client).await.unwrap(), "mutual", "{certificate}");
    }
    let pkcs8 = ca.issue(&["pkcs8 client"]);
    let key_pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        support::base64(pkcs8.key.secret_der())
    );
    let unknown_issuer = trusted()
        .identity_pem(ca.pem().into_bytes(), key_pem.into_bytes())
        .build()
        .unwrap_err();
    assert!(
        unknown_issuer
            .to_string()
            .contains("cannot be used together"),
        "{unknown_issuer}"
    );
    let bad_key = trusted()
        .identity_pem(testdata("ec-client.pem"), b"not a key".to_vec())
        .build()
        .unwrap_err();
    assert!(
        bad_key
            .to_string()
            .contains("client key is not a PEM private key"),
        "{bad_key}"
    );
}

#[tokio::test]
async fn a_callers_own_http_client_keeps_signing_retries_and_checksums() {
    let (local, server) = support::local_s3().await;
    drop(local);
    // s3-wire builds reqwest without a default crypto provider: a caller's client needs one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let own = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap();
    let client = Client::builder()
        .endpoint(server.endpoint())
        .region(server.region())
        .static_credentials(server.access_key(), server.secret_key(), None)
        .http_client(own.clone())
        .build()
        .unwrap();
    let bucket = s3_wire_tokio::bucket("own-http").unwrap();
    client
        .create_bucket(s3_wire_tokio::s3_ops::CreateBucket::new(bucket.clone()))
        .await
        .unwrap();
    let data = support::data(300_000, 7);
    client
        .put_object(
            PutObject::new(bucket.clone(), s3_wire_tokio::key("k").unwrap()),
            s3_wire_tokio::Body::from_bytes(data.clone()),
        )
        .await
        .unwrap();
    let head = client
        .head_object(
            HeadObject::new(bucket.clone(), s3_wire_tokio::key("k").unwrap()).checksum_mode(true),
        )
        .await
        .unwrap();
    assert!(
        !head.checksums.values.is_empty(),
        "the upload carried its checksum"
    );
    let object = client
        .get_object(GetObject::new(bucket, s3_wire_tokio::key("k").unwrap()))
        .await
        .unwrap();
    assert_eq!(object.body.collect().await.unwrap(), data);

    // Retries are the client's: a 500, then the answer.
    let flaky = FaultServer::start([Reply::internal_error(), Reply::ok("second")]);
    let client = Client::builder()
        .endpoint(flaky.endpoint())
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .retry(support::retry(3))
        .http_client(own.clone())
        .build()
        .unwrap();
    assert_eq!(get(&client).await.unwrap(), "second");
    assert_eq!(flaky.request_count(), 2);
    for request in flaky.requests() {
        support::fault::verify_recorded(&request, SECRET_KEY).expect("signed");
    }
    // A client that follows redirects is caught: the signed request must not go elsewhere.
    let elsewhere = FaultServer::start([Reply::ok("elsewhere")]);
    let redirecting = FaultServer::start([Reply::Respond {
        status: 307,
        headers: vec![(
            "location".into(),
            format!("{}/bucket/k", elsewhere.endpoint()),
        )],
        body: Bytes::new(),
    }]);
    let follows = reqwest::Client::builder().no_proxy().build().unwrap();
    let client = Client::builder()
        .endpoint(redirecting.endpoint())
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .retry(support::retry(1))
        .http_client(follows)
        .build()
        .unwrap();
    let error = get(&client).await.unwrap_err();
    assert!(
        format!("{error:?}").contains("followed a redirect"),
        "{error:?}"
    );
    // The builder's transport settings would be silently ignored: refused instead.
    let error = Client::builder()
        .endpoint(flaky.endpoint())
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .http_client(own)
        .add_root_certificates_pem(TestCa::new("x").pem())
        .resolve(HOST, flaky.addr())
        .build()
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("root certificates, resolve must be set on that client"),
        "{error}"
    );
}

/// Collects every record as owned text.
#[derive(Default, Clone)]
struct Collect(Arc<Mutex<Vec<String>>>);

impl RequestHook for Collect {
    fn on_attempt(&self, a: &AttemptRecord<'_>) {
        self.0.lock().unwrap().push(format!(
            "{} #{} {} {} status={:?} error={} id={:?} sent={} received={} ttfb={} complete={}",
            a.operation,
            a.attempt,
            a.method,
            a.host,
            a.status,
            a.error.map_or("-".to_owned(), |kind| format!("{kind:?}")
                .split('(')
                .next()
                .unwrap()
                .to_owned()),
            a.request_id,
            a.bytes_sent,
            a.bytes_received,
            a.time_to_first_byte.is_some(),
            a.body_complete,
        ));
        assert!(a.duration >= a.time_to_first_byte.unwrap_or_default());
    }
}

#[tokio::test]
async fn request_hooks_see_one_record_per_attempt() {
    let server = FaultServer::start([
        Reply::internal_error(),
        Reply::ok("late").after(Duration::from_secs(2)),
        Reply::Reset,
        Reply::ok("hello").with_header("x-amz-request-id", "REQ-4"),
        Reply::empty().with_header("etag", "\"e\""),
    ]);
    let hook = Collect::default();
    let client = Client::builder()
        .endpoint(server.endpoint())
        .static_credentials(ACCESS_KEY, SECRET_KEY, Some("session-token-value".into()))
        .retry(support::retry(4))
        .stall_timeout(Duration::from_millis(300))
        .request_hook(hook.clone())
        .build()
        .unwrap();
    assert_eq!(get(&client).await.unwrap(), "hello");
    client
        .put_object(
            PutObject::new(
                s3_wire_tokio::bucket("bucket").unwrap(),
                s3_wire_tokio::key("up").unwrap(),
            ),
            s3_wire_tokio::Body::from_bytes(Bytes::from_static(b"0123456789")),
        )
        .await
        .unwrap();
    let records = hook.0.lock().unwrap().clone();
    let host = server.addr().ip().to_string();
    assert_eq!(records.len(), 5, "{records:#?}");
    assert!(
        records[0].starts_with(&format!(
            "GetObject #1 GET {host} status=Some(500) error=- "
        )),
        "{records:#?}"
    );
    assert!(
        records[1].starts_with(&format!(
            "GetObject #2 GET {host} status=None error=Timeout "
        )),
        "{records:#?}"
    );
    assert!(
        records[2].starts_with(&format!(
            "GetObject #3 GET {host} status=None error=Transport "
        )),
        "{records:#?}"
    );
    assert!(
        records[3].starts_with(&format!("GetObject #4 GET {host} status=Some(200) error=- id=Some(\"REQ-4\") sent=0 received=5 ttfb=true complete=true")),
        "{records:#?}"
    );
    assert!(
        records[4].starts_with(&format!(
            "PutObject #1 PUT {host} status=Some(200) error=- "
        )),
        "{records:#?}"
    );
    assert!(records[4].contains("sent=10 "), "{records:#?}");
    for record in &records {
        for secret in [SECRET_KEY, "session-token-value", "Signature"] {
            assert!(!record.contains(secret), "{record}");
        }
    }
}

/// The memory-budget wait of managed-transfer parts reaches the records: four buffered parts
/// of 64 KiB with memory for one at a time, each part's answer held back a little.
#[tokio::test]
async fn request_hooks_report_the_memory_budget_wait_of_transfer_parts() {
    let part = 64 * 1024u64;
    let created = Reply::ok(
        "<InitiateMultipartUploadResult><Bucket>bucket</Bucket><Key>big</Key>\
         <UploadId>UP1</UploadId></InitiateMultipartUploadResult>",
    );
    let part_reply = || {
        Reply::empty()
            .with_header("etag", "\"p\"")
            .after(Duration::from_millis(50))
    };
    let completed = Reply::ok(
        "<CompleteMultipartUploadResult><Bucket>bucket</Bucket><Key>big</Key>\
         <ETag>\"e-4\"</ETag></CompleteMultipartUploadResult>",
    );
    let server = FaultServer::start(
        std::iter::once(created)
            .chain(std::iter::repeat_with(part_reply).take(4))
            .chain(std::iter::once(completed)),
    );
    let hook = Queued::default();
    let mut options = s3_wire_tokio::TransferOptions::default();
    options.part_size = part;
    options.single_request_limit = Some(part);
    options.limits =
        s3_wire_tokio::s3_multipart_plan::PartLimits::new(part, 5 << 30, 10_000, 5 << 40).unwrap();
    let client = Client::builder()
        .endpoint(server.endpoint())
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .upload_checksum(None)
        .transfer_options(options)
        .transfer_memory(part + 1)
        .request_hook(hook.clone())
        .build()
        .unwrap();
    client
        .upload(
            s3_wire_tokio::bucket("bucket").unwrap(),
            s3_wire_tokio::key("big").unwrap(),
            // A stream's parts are buffered, so each is admitted against the budget.
            s3_wire_tokio::UploadSource::reader(
                std::io::Cursor::new(support::data(4 * part, 3)),
                Some(4 * part),
            ),
        )
        .await
        .unwrap();
    let waits = hook.0.lock().unwrap().clone();
    let parts: Vec<_> = waits.iter().filter(|(op, _)| *op == "UploadPart").collect();
    assert_eq!(parts.len(), 4, "{waits:?}");
    assert!(
        parts
            .iter()
            .filter(|(_, queued)| *queued >= Duration::from_millis(20))
            .count()
            >= 2,
        "parts behind the first waited for memory: {waits:?}"
    );
    assert!(
        waits
            .iter()
            .filter(|(op, _)| *op != "UploadPart")
            .all(|(_, queued)| queued.is_zero()),
        "{waits:?}"
    );
}

#[derive(Default, Clone)]
struct Queued(Arc<Mutex<Vec<(&'static str, Duration)>>>);

impl RequestHook for Queued {
    fn on_attempt(&self, attempt: &AttemptRecord<'_>) {
        self.0
            .lock()
            .unwrap()
            .push((attempt.operation, attempt.queued));
    }
}

/// Credential sources that call AWS go through the client's proxy and trust its CA bundle:
/// web identity's STS call (TLS, a private CA) through the proxy, S3 directly (no-proxy).
#[tokio::test]
async fn sts_goes_through_the_clients_proxy_and_trusts_its_bundle() {
    let ca = TestCa::new("private CA");
    let sts_leaf = ca.issue(&["sts.corp.test"]);
    let expiration = s3_wire_tokio::s3_xml::Timestamp::from_system_time(
        std::time::SystemTime::now() + Duration::from_secs(3600),
    )
    .unwrap();
    let sts = FaultServer::start_tls_with(
        [Reply::ok(format!(
            "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>\
             <AccessKeyId>ASIASTS1</AccessKeyId><SecretAccessKey>sts-secret</SecretAccessKey>\
             <SessionToken>sts-token</SessionToken><Expiration>{expiration}</Expiration>\
             </Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>"
        ))],
        server_config(&sts_leaf, DEFAULT_VERSIONS, &[b"http/1.1"]),
    );
    let proxy = ConnectProxy::start(sts.addr(), ProxyOptions::default());
    let origin = private_origin(&ca, [Reply::ok("signed by sts keys")]);
    let home = tempfile::tempdir().unwrap();
    let token = home.path().join("token");
    std::fs::write(&token, "web-identity-token").unwrap();
    let bundle = home.path().join("bundle.pem");
    std::fs::write(&bundle, ca.pem()).unwrap();
    let env = MapEnv::new()
        .with_home(home.path())
        .with_var(
            "AWS_CONFIG_FILE",
            home.path().join("none").to_str().unwrap(),
        )
        .with_var(
            "AWS_SHARED_CREDENTIALS_FILE",
            home.path().join("none").to_str().unwrap(),
        )
        .with_var("AWS_REGION", "us-east-1")
        .with_var("AWS_WEB_IDENTITY_TOKEN_FILE", token.to_str().unwrap())
        .with_var("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/reader")
        .with_var("AWS_ENDPOINT_URL_STS", "https://sts.corp.test")
        .with_var("AWS_CA_BUNDLE", bundle.to_str().unwrap())
        .with_var("AWS_EC2_METADATA_DISABLED", "true");
    let client = ClientBuilder::from_env_with(Arc::new(env))
        .endpoint(format!("https://{HOST}"))
        .resolve(HOST, origin.addr())
        .proxy(&format!("http://{}", proxy.addr))
        .no_proxy(HOST)
        .build()
        .unwrap();
    assert_eq!(get(&client).await.unwrap(), "signed by sts keys");
    let targets: Vec<String> = proxy.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, ["CONNECT sts.corp.test:443"]);
    assert_eq!(sts.request_count(), 1);
    let request = &origin.requests()[0];
    assert!(
        request
            .header("authorization")
            .unwrap()
            .contains("Credential=ASIASTS1/")
    );
    support::fault::verify_recorded(request, "sts-secret").expect("signed with the STS keys");
}

/// An HTTPS proxy that asks the client for a certificate (mutual TLS to the proxy, as some
/// corporate proxies do): the client's identity is presented to it as to any server; without
/// one the proxy's handshake fails.
#[tokio::test]
async fn a_proxy_that_demands_a_client_certificate_gets_the_clients() {
    let ca = TestCa::new("private CA");
    let origin = private_origin(&ca, std::iter::repeat_n(Reply::ok("through mtls"), 4));
    let proxy_leaf = ca.issue(&["proxy.corp.test"]);
    let mut client_roots = rustls::RootCertStore::empty();
    client_roots
        .add(rustls::pki_types::pem::PemObject::from_pem_slice(&testdata("ca.pem")).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(client_roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(proxy_leaf.chain.clone(), proxy_leaf.key.clone_key())
        .unwrap();
    let proxy = ConnectProxy::start(
        origin.addr(),
        ProxyOptions {
            tls: Some(config),
            ..ProxyOptions::default()
        },
    );
    let builder = || {
        Client::builder()
            .endpoint(format!("https://{HOST}"))
            .region("us-east-1")
            .static_credentials(ACCESS_KEY, SECRET_KEY, None)
            .add_root_certificates_pem(ca.pem())
            .proxy(&format!("https://proxy.corp.test:{}", proxy.addr.port()))
            .resolve("proxy.corp.test", proxy.addr)
            .retry(support::retry(1))
    };
    let error = get(&builder().build().unwrap()).await.unwrap_err();
    assert!(is_tls_failure(&error), "no client certificate: {error:?}");
    assert!(
        proxy.requests().is_empty(),
        "no CONNECT before the handshake"
    );
    let with_identity = builder()
        .identity_pem(testdata("ec-client.pem"), testdata("ec-client-pkcs8.key"))
        .build()
        .unwrap();
    assert_eq!(get(&with_identity).await.unwrap(), "through mtls");
    let targets: Vec<String> = proxy.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, [format!("CONNECT {HOST}:443")]);
}

/// The credential sources and the client's explicit proxy: the SSO portal, an AWS service,
/// is reached through it (as STS is, above); instance metadata and the container endpoint,
/// link-local or loopback, never are, even with a proxy that would take them.
#[tokio::test]
async fn sso_goes_through_the_proxy_and_metadata_endpoints_never_do() {
    use support::fault::Recorded;
    let ca = TestCa::new("private CA");
    let portal_host = "portal.sso.eu-west-1.amazonaws.com";
    let portal_leaf = ca.issue(&[portal_host]);
    let portal = FaultServer::start_tls_with(
        [Reply::ok(
            r#"{"roleCredentials": {"accessKeyId": "ASIASSO", "secretAccessKey": "sso-secret",
                "sessionToken": "sso-token", "expiration": 1893456000000}}"#,
        )],
        server_config(&portal_leaf, DEFAULT_VERSIONS, &[b"http/1.1"]),
    );
    let proxy = ConnectProxy::start(portal.addr(), ProxyOptions::default());
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".aws/sso/cache")).unwrap();
    std::fs::write(
        home.path().join(".aws/config"),
        "[profile dev]\nsso_session = corp\nsso_account_id = 111122223333\n\
         sso_role_name = Reader\nregion = eu-west-1\n\
         [sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\n\
         sso_region = eu-west-1\n",
    )
    .unwrap();
    let expires = s3_wire_tokio::s3_xml::Timestamp::from_system_time(
        std::time::SystemTime::now() + Duration::from_secs(3600),
    )
    .unwrap();
    // The cache file of session `corp`: the SHA-1 of its name.
    std::fs::write(
        home.path()
            .join(".aws/sso/cache/ee0bfd2552fbd840c02cc48b6e823320543c450f.json"),
        format!(
            r#"{{"startUrl": "https://corp.awsapps.com/start", "region": "eu-west-1",
                "accessToken": "cached-token", "expiresAt": "{expires}"}}"#
        ),
    )
    .unwrap();
    let origin = private_origin(&ca, std::iter::repeat_n(Reply::ok("signed"), 4));
    let base = MapEnv::new()
        .with_home(home.path())
        .with_var(
            "AWS_SHARED_CREDENTIALS_FILE",
            home.path().join("none").to_str().unwrap(),
        )
        .with_var("AWS_REGION", "eu-west-1");
    let client_with = |env: MapEnv, proxy: &ConnectProxy| {
        ClientBuilder::from_env_with(Arc::new(env))
            .endpoint(format!("https://{HOST}"))
            .resolve(HOST, origin.addr())
            .add_root_certificates_pem(ca.pem())
            .proxy(&format!("http://{}", proxy.addr))
            .no_proxy(HOST)
            .build()
            .unwrap()
    };
    let signed_with =
        |request: &Recorded, secret: &str| support::fault::verify_recorded(request, secret).is_ok();
    let sso = client_with(
        base.clone()
            .with_var("AWS_PROFILE", "dev")
            .with_var("AWS_EC2_METADATA_DISABLED", "true"),
        &proxy,
    );
    assert_eq!(get(&sso).await.unwrap(), "signed");
    let targets: Vec<String> = proxy.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, [format!("CONNECT {portal_host}:443")]);
    assert!(signed_with(&origin.requests()[0], "sso-secret"));

    // The container endpoint (loopback) and instance metadata: straight, with a proxy set.
    let container = FaultServer::start([Reply::ok(
        r#"{"AccessKeyId": "ASIACONTAINER", "SecretAccessKey": "container-secret",
            "Token": "container-token", "Expiration": "2099-01-01T00:00:00Z"}"#,
    )]);
    let untouched = ConnectProxy::start(container.addr(), ProxyOptions::default());
    let in_container = client_with(
        base.clone()
            .with_var(
                "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                format!("{}/credentials", container.endpoint()),
            )
            .with_var("AWS_EC2_METADATA_DISABLED", "true"),
        &untouched,
    );
    assert_eq!(get(&in_container).await.unwrap(), "signed");
    assert_eq!(container.request_count(), 1);
    assert!(signed_with(&origin.requests()[1], "container-secret"));
    let imds = FaultServer::start([
        Reply::ok("imds-token"),
        Reply::ok("reader-role"),
        Reply::ok(
            r#"{"Code": "Success", "AccessKeyId": "ASIAIMDS", "SecretAccessKey": "imds-secret",
                "Token": "imds-token-2", "Expiration": "2099-01-01T00:00:00Z"}"#,
        ),
    ]);
    let on_ec2 = client_with(
        base.with_var("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.endpoint()),
        &untouched,
    );
    assert_eq!(get(&on_ec2).await.unwrap(), "signed");
    assert_eq!(imds.request_count(), 3, "{:?}", imds.requests());
    assert!(signed_with(&origin.requests()[2], "imds-secret"));
    assert!(
        untouched.requests().is_empty(),
        "metadata went through the proxy: {:?}",
        untouched.requests()
    );
}

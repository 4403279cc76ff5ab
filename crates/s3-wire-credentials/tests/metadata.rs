//! The instance metadata (IMDSv2) and container endpoint credential sources against
//! loopback fakes. Every source is configured through a `MapEnv`, never the process
//! environment.

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use http::Method;
use s3_wire_credentials::{
    CachingProvider, ContainerProvider, CredentialsProvider, Error, ExpiringSource, ImdsClient,
    ImdsProvider, MapEnv, Origin, SourceErrorKind,
};
use support::endpoint::{Answer, Endpoint};
use support::imds::*;

/// Fails unless neither the `Display` nor the `Debug` of `error` shows a secret.
fn assert_no_secret(error: &Error) {
    let shown = format!("{error} | {error:?} | {error:#?}");
    for secret in [SECRET_KEY, SESSION_TOKEN, IMDS_TOKEN, AUTH_TOKEN] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
}

fn assert_credentials(credentials: &s3_wire_credentials::ExpiringCredentials) {
    let keys = credentials.credentials();
    assert_eq!(keys.access_key_id(), ACCESS_KEY);
    assert_eq!(keys.secret_access_key(), SECRET_KEY);
    assert_eq!(keys.session_token(), Some(SESSION_TOKEN));
    assert_eq!(
        credentials.expiration(),
        Some(UNIX_EPOCH + Duration::from_secs(EXPIRATION_SECS))
    );
}

fn source_kind(error: &Error) -> (&Origin, &SourceErrorKind) {
    match error {
        Error::Source { origin, kind } => (origin, kind),
        other => panic!("expected a source error, got {other:?}"),
    }
}

#[tokio::test]
async fn imds_credentials_with_a_session_token_reused_across_fetches() {
    let fake = ImdsFake::start();
    let provider = fake.provider();
    assert!(!provider.is_disabled());

    assert_credentials(&provider.fetch().await.unwrap());
    assert_credentials(&provider.fetch().await.unwrap());

    let role_path = format!("GET /latest/meta-data/iam/security-credentials/{ROLE}");
    let list_path = "GET /latest/meta-data/iam/security-credentials/";
    assert_eq!(
        fake.log(),
        [
            "PUT /latest/api/token",
            list_path,
            &role_path,
            list_path,
            &role_path
        ]
    );
    // Every GET carried the one token issued.
    let issued = format!("{IMDS_TOKEN}-1");
    for request in fake.requests().iter().filter(|r| r.method == Method::GET) {
        assert_eq!(
            request.header("x-aws-ec2-metadata-token"),
            Some(issued.as_str())
        );
    }

    // The region shares the token.
    assert_eq!(provider.client().region().await.unwrap(), "eu-west-3");
    assert_eq!(fake.puts(), 1);
    let last = fake.requests().pop().unwrap();
    assert_eq!(last.path(), "/latest/meta-data/placement/region");
    assert_eq!(
        last.header("x-aws-ec2-metadata-token"),
        Some(issued.as_str())
    );
}

#[tokio::test]
async fn imds_region_lookup() {
    let fake = ImdsFake::start();
    let client = ImdsClient::with_env(Arc::new(fake.env()));
    assert_eq!(client.region().await.unwrap(), "eu-west-3");
    assert_eq!(
        fake.log(),
        [
            "PUT /latest/api/token",
            "GET /latest/meta-data/placement/region"
        ]
    );
}

#[tokio::test]
async fn imds_401_gets_a_new_token_and_retries_once() {
    let fake = ImdsFake::start();
    let provider = fake.provider();
    assert_credentials(&provider.fetch().await.unwrap());
    fake.revoke_tokens();
    assert_credentials(&provider.fetch().await.unwrap());
    assert_eq!(fake.puts(), 2);
    let log = fake.log();
    assert_eq!(
        log[3..],
        [
            "GET /latest/meta-data/iam/security-credentials/",
            "PUT /latest/api/token",
            "GET /latest/meta-data/iam/security-credentials/",
            &format!("GET /latest/meta-data/iam/security-credentials/{ROLE}"),
        ]
    );
    let last = fake.requests().pop().unwrap();
    let second = format!("{IMDS_TOKEN}-2");
    assert_eq!(
        last.header("x-aws-ec2-metadata-token"),
        Some(second.as_str())
    );

    // A service that refuses every token: one renewal, then the 401 is the error.
    let fake = ImdsFake::start();
    fake.state.always_unauthorized.store(true, Ordering::SeqCst);
    let error = fake.provider().fetch().await.unwrap_err();
    assert_no_secret(&error);
    let (origin, kind) = source_kind(&error);
    assert_eq!(origin, &Origin::InstanceMetadata);
    assert!(
        matches!(kind, SourceErrorKind::Status { status: 401, .. }),
        "{kind:?}"
    );
    assert!(!error.is_transient());
    assert_eq!(
        fake.log(),
        [
            "PUT /latest/api/token",
            "GET /latest/meta-data/iam/security-credentials/",
            "PUT /latest/api/token",
            "GET /latest/meta-data/iam/security-credentials/",
        ]
    );
}

#[tokio::test]
async fn imds_outage_is_retried_once_and_transient() {
    let role_gets = |fake: &ImdsFake| {
        fake.requests()
            .iter()
            .filter(|r| r.path().ends_with(ROLE))
            .count()
    };

    let fake = ImdsFake::start();
    fake.state.failures.store(1, Ordering::SeqCst);
    assert_credentials(&fake.provider().fetch().await.unwrap());
    assert_eq!(role_gets(&fake), 2);

    let fake = ImdsFake::start();
    fake.state.failures.store(2, Ordering::SeqCst);
    let error = fake.provider().fetch().await.unwrap_err();
    assert_no_secret(&error);
    assert!(
        matches!(
            source_kind(&error).1,
            SourceErrorKind::Status { status: 500, .. }
        ),
        "{error:?}"
    );
    assert!(error.is_transient());
    assert_eq!(role_gets(&fake), 2);
    assert_eq!(fake.puts(), 1);
}

#[tokio::test]
async fn imds_without_a_role_says_so() {
    let fake = ImdsFake::start();
    fake.state.no_role.store(true, Ordering::SeqCst);
    let error = fake.provider().fetch().await.unwrap_err();
    assert_no_secret(&error);
    assert!(!error.is_transient());
    let text = error.to_string();
    assert!(text.contains("no IAM role is attached"), "{text}");
    assert!(text.contains("instance profile"), "{text}");
    assert!(
        matches!(
            source_kind(&error),
            (
                Origin::InstanceMetadata,
                SourceErrorKind::Status { status: 404, .. }
            )
        ),
        "{error:?}"
    );
    // No credentials were asked for.
    assert_eq!(
        fake.log(),
        [
            "PUT /latest/api/token",
            "GET /latest/meta-data/iam/security-credentials/"
        ]
    );
}

#[tokio::test]
async fn imds_stalled_endpoint_times_out_within_the_limit() {
    let fake = ImdsFake::start();
    fake.state.stall_ms.store(5_000, Ordering::SeqCst);
    let provider = ImdsProvider::with_env(Arc::new(fake.env()))
        .with_timeout(Duration::from_millis(300))
        .with_attempts(2);
    let started = Instant::now();
    let error = provider.fetch().await.unwrap_err();
    let elapsed = started.elapsed();
    assert_no_secret(&error);
    assert!(
        matches!(
            source_kind(&error).1,
            SourceErrorKind::Timeout(limit) if *limit == Duration::from_millis(300)
        ),
        "{error:?}"
    );
    assert!(error.is_transient());
    // Two attempts of 300 ms each, not the 5 s the endpoint stalls for.
    assert!(elapsed >= Duration::from_millis(600), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    assert_eq!(
        fake.log(),
        ["PUT /latest/api/token", "PUT /latest/api/token"]
    );
}

#[tokio::test]
async fn imds_disabled_or_refused_endpoint_sends_nothing() {
    let fake = ImdsFake::start();
    for value in ["true", "TRUE"] {
        let env = fake.env().with_var("AWS_EC2_METADATA_DISABLED", value);
        let provider = ImdsProvider::with_env(Arc::new(env));
        assert!(provider.is_disabled());
        for error in [
            provider.fetch().await.unwrap_err(),
            provider.client().region().await.unwrap_err(),
        ] {
            assert!(
                matches!(
                    source_kind(&error),
                    (
                        Origin::InstanceMetadata,
                        SourceErrorKind::Disabled {
                            variable: "AWS_EC2_METADATA_DISABLED"
                        }
                    )
                ),
                "{error:?}"
            );
        }
    }
    // 0.0.0.0 reaches this machine, but is not a loopback address: refused before sending.
    let env = MapEnv::new().with_var(
        "AWS_EC2_METADATA_SERVICE_ENDPOINT",
        format!("http://0.0.0.0:{}", fake.endpoint.addr.port()),
    );
    let error = ImdsProvider::with_env(Arc::new(env))
        .fetch()
        .await
        .unwrap_err();
    assert!(
        matches!(
            source_kind(&error).1,
            SourceErrorKind::ForbiddenEndpoint { .. }
        ),
        "{error:?}"
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.log());
}

// ---------------------------------------------------------------------------------------------
// Container endpoint
// ---------------------------------------------------------------------------------------------

const CREDENTIALS_PATH: &str = "/v1/credentials";

struct ContainerFake {
    endpoint: Endpoint,
    /// The `Authorization` value the fake accepts.
    expected: Arc<Mutex<String>>,
    /// Answer this many of the next requests with 503.
    failures: Arc<AtomicU32>,
}

impl ContainerFake {
    fn start(expected: &str) -> Self {
        let expected = Arc::new(Mutex::new(expected.to_owned()));
        let failures = Arc::new(AtomicU32::new(0));
        let (accept, failing) = (expected.clone(), failures.clone());
        let endpoint = Endpoint::start(move |request| {
            if request.method != Method::GET || request.path() != CREDENTIALS_PATH {
                return Answer::new(404, "");
            }
            if failing
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                return Answer::new(503, "");
            }
            match request.header("authorization") {
                None => Answer::new(
                    401,
                    r#"{"code":"Unauthorized","message":"no authorization token"}"#,
                ),
                Some(token) if token != *accept.lock().unwrap() => Answer::new(
                    403,
                    r#"{"code":"AccessDenied","message":"the authorization token is not valid"}"#,
                ),
                Some(_) => Answer::ok(credentials_document(None)),
            }
        });
        Self {
            endpoint,
            expected,
            failures,
        }
    }

    fn env(&self) -> MapEnv {
        MapEnv::new().with_var(
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            format!("{}{CREDENTIALS_PATH}", self.endpoint.url()),
        )
    }

    fn authorizations(&self) -> Vec<Option<String>> {
        self.endpoint
            .requests()
            .iter()
            .map(|r| r.header("authorization").map(str::to_owned))
            .collect()
    }
}

fn container(env: MapEnv) -> ContainerProvider {
    ContainerProvider::with_env(Arc::new(env))
        .with_timeout(Duration::from_millis(500))
        .with_attempts(2)
}

#[tokio::test]
async fn container_token_from_the_file_wins_and_is_reread() {
    let fake = ContainerFake::start(AUTH_TOKEN);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("eks-pod-identity-token");
    std::fs::write(&file, format!("{AUTH_TOKEN}\n")).unwrap();
    let env = fake
        .env()
        .with_var(
            "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
            file.to_str().unwrap(),
        )
        .with_var("AWS_CONTAINER_AUTHORIZATION_TOKEN", "variable-token-loses");
    let provider = container(env);
    assert!(provider.is_configured());
    assert_credentials(&provider.fetch().await.unwrap());
    assert_eq!(fake.authorizations(), [Some(AUTH_TOKEN.to_owned())]);

    // EKS rotates the file: the next fetch sends the new content.
    let rotated = format!("{AUTH_TOKEN}-rotated");
    std::fs::write(&file, &rotated).unwrap();
    *fake.expected.lock().unwrap() = rotated.clone();
    assert_credentials(&provider.fetch().await.unwrap());
    assert_eq!(fake.authorizations()[1].as_deref(), Some(rotated.as_str()));
}

#[tokio::test]
async fn container_token_from_the_variable() {
    let fake = ContainerFake::start(AUTH_TOKEN);
    let provider = container(
        fake.env()
            .with_var("AWS_CONTAINER_AUTHORIZATION_TOKEN", AUTH_TOKEN),
    );
    assert_credentials(&provider.fetch().await.unwrap());
    assert_eq!(fake.authorizations(), [Some(AUTH_TOKEN.to_owned())]);
}

#[tokio::test]
async fn container_wrong_or_missing_token_is_a_status_error() {
    let fake = ContainerFake::start("the-right-token");
    let provider = container(
        fake.env()
            .with_var("AWS_CONTAINER_AUTHORIZATION_TOKEN", AUTH_TOKEN),
    );
    let error = provider.fetch().await.unwrap_err();
    assert_no_secret(&error);
    assert!(!error.is_transient());
    match source_kind(&error) {
        (Origin::Container, SourceErrorKind::Status { status, code, .. }) => {
            assert_eq!((*status, code.as_deref()), (403, Some("AccessDenied")));
        }
        other => panic!("{other:?}"),
    }
    // Not retried: a refusal is not transient.
    assert_eq!(fake.authorizations().len(), 1);

    let error = container(fake.env()).fetch().await.unwrap_err();
    assert_no_secret(&error);
    assert!(
        matches!(
            source_kind(&error).1,
            SourceErrorKind::Status { status: 401, .. }
        ),
        "{error:?}"
    );
    assert_eq!(fake.authorizations()[1], None);
}

#[tokio::test]
async fn container_invalid_token_or_file_sends_nothing() {
    let fake = ContainerFake::start(AUTH_TOKEN);
    let injected = format!("{AUTH_TOKEN}\r\nX-Injected: yes");
    let error = container(
        fake.env()
            .with_var("AWS_CONTAINER_AUTHORIZATION_TOKEN", injected.as_str()),
    )
    .fetch()
    .await
    .unwrap_err();
    assert_no_secret(&error);
    assert!(
        matches!(
            source_kind(&error).1,
            SourceErrorKind::Misconfigured { setting, .. } if setting == "AWS_CONTAINER_AUTHORIZATION_TOKEN"
        ),
        "{error:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("absent-token");
    let error = container(fake.env().with_var(
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
        missing.to_str().unwrap(),
    ))
    .fetch()
    .await
    .unwrap_err();
    assert!(
        matches!(source_kind(&error).1, SourceErrorKind::File { path, .. } if *path == missing),
        "{error:?}"
    );
    assert!(fake.endpoint.requests().is_empty());
}

#[tokio::test]
async fn container_refused_full_uri_host_sends_nothing() {
    let fake = ContainerFake::start(AUTH_TOKEN);
    let port = fake.endpoint.addr.port();
    // Both reach this machine's loopback listener, but neither is a loopback address.
    for uri in [
        format!("http://0.0.0.0:{port}{CREDENTIALS_PATH}"),
        format!("http://[::ffff:127.0.0.1]:{port}{CREDENTIALS_PATH}"),
    ] {
        let env = MapEnv::new()
            .with_var("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri.as_str())
            .with_var("AWS_CONTAINER_AUTHORIZATION_TOKEN", AUTH_TOKEN);
        let error = container(env).fetch().await.unwrap_err();
        assert_no_secret(&error);
        match source_kind(&error) {
            (Origin::Container, SourceErrorKind::ForbiddenEndpoint { url, reason }) => {
                assert_eq!(url, &uri);
                assert!(reason.contains("169.254.170.23"), "{reason}");
            }
            other => panic!("{uri}: {other:?}"),
        }
    }
    assert!(fake.endpoint.requests().is_empty());
    // The same fake through its loopback address works, so the refusal was the check's.
    let provider = container(
        fake.env()
            .with_var("AWS_CONTAINER_AUTHORIZATION_TOKEN", AUTH_TOKEN),
    );
    assert_credentials(&provider.fetch().await.unwrap());
}

#[tokio::test]
async fn container_outage_is_retried_once_and_transient() {
    let fake = ContainerFake::start(AUTH_TOKEN);
    let provider = container(
        fake.env()
            .with_var("AWS_CONTAINER_AUTHORIZATION_TOKEN", AUTH_TOKEN),
    );
    fake.failures.store(1, Ordering::SeqCst);
    assert_credentials(&provider.fetch().await.unwrap());
    assert_eq!(fake.authorizations().len(), 2);

    fake.failures.store(2, Ordering::SeqCst);
    let error = provider.fetch().await.unwrap_err();
    assert_no_secret(&error);
    assert!(error.is_transient(), "{error:?}");
    assert!(
        matches!(
            source_kind(&error).1,
            SourceErrorKind::Status { status: 503, .. }
        ),
        "{error:?}"
    );
    assert_eq!(fake.authorizations().len(), 4);
}

#[tokio::test]
async fn container_stalled_endpoint_times_out() {
    let endpoint =
        Endpoint::start(|_| Answer::ok(credentials_document(None)).delayed(Duration::from_secs(5)));
    let env = MapEnv::new().with_var(
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        format!("{}{CREDENTIALS_PATH}", endpoint.url()),
    );
    let provider = ContainerProvider::with_env(Arc::new(env))
        .with_timeout(Duration::from_millis(250))
        .with_attempts(1);
    let started = Instant::now();
    let error = provider.fetch().await.unwrap_err();
    assert!(
        matches!(source_kind(&error).1, SourceErrorKind::Timeout(_)),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(endpoint.requests().len(), 1);
}

#[tokio::test]
async fn container_credentials_are_served_from_the_cache() {
    let fake = ContainerFake::start(AUTH_TOKEN);
    let provider = CachingProvider::new(container(
        fake.env()
            .with_var("AWS_CONTAINER_AUTHORIZATION_TOKEN", AUTH_TOKEN),
    ));
    let first = provider.credentials().await.unwrap();
    let second = provider.credentials().await.unwrap();
    assert_eq!(first, second);
    assert_eq!(first.secret_access_key(), SECRET_KEY);
    assert_eq!(fake.authorizations().len(), 1);
    // The expiration is decades away.
    assert!(SystemTime::now() < UNIX_EPOCH + Duration::from_secs(EXPIRATION_SECS));
}

#[tokio::test]
async fn the_default_chain_falls_back_to_instance_metadata() {
    let fake = ImdsFake::start();
    let env = Arc::new(fake.env());
    let chain = s3_wire_credentials::DefaultChain::with_env(env.clone());
    let credentials = chain.credentials().await.unwrap();
    assert_eq!(credentials.access_key_id(), ACCESS_KEY);
    assert_eq!(credentials.secret_access_key(), SECRET_KEY);
    assert_eq!(chain.region().await.unwrap().as_deref(), Some("eu-west-3"));
}

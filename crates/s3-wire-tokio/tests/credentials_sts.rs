//! Roles and web identities against a fake STS: the requests STS receives (signed by the
//! right credentials, with the right parameters), the credentials the chain ends with,
//! errors, and a real round trip against local-s3 with credentials the fake STS issued.
//! Also: an `ExpiredToken` answer forces one refresh and one re-signed retry.

mod support;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use s3_wire_tokio::credentials::{
    CacheSettings, CachingProvider, Clock, CredentialsProvider, DefaultChain, Error, MapEnv,
    Origin, ProfileProvider, SourceErrorKind, WebIdentityProvider,
};
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::{Body, Client, ClientBuilder, bucket, key};
use support::endpoint::{Answer, Endpoint, Request};
use support::fault::{FaultServer, Reply};

const SECRET_BASE: &str = "base-secret-key-0123456789";

/// An STS answer with credentials `AKID<n>` (secret `secret-<n>`, token `token-<n>`)
/// expiring one hour from now.
fn assume_role_answer(action: &str, n: u32) -> Answer {
    let expiration = httpdate_iso(SystemTime::now() + Duration::from_secs(3600));
    Answer::ok(format!(
        "<{action}Response xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><{action}Result>\
         <Credentials><AccessKeyId>ASIA{n}</AccessKeyId><SecretAccessKey>secret-{n}</SecretAccessKey>\
         <SessionToken>token-{n}</SessionToken><Expiration>{expiration}</Expiration></Credentials>\
         <AssumedRoleUser><Arn>arn:aws:sts::1:assumed-role/r/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId>\
         </AssumedRoleUser></{action}Result><ResponseMetadata><RequestId>req-{n}</RequestId>\
         </ResponseMetadata></{action}Response>"
    ))
    .with_header("content-type", "text/xml")
}

/// RFC 3339 in UTC, as STS writes it.
fn httpdate_iso(time: SystemTime) -> String {
    s3_wire_tokio::s3_xml::Timestamp::from_system_time(time)
        .expect("a time after 1970")
        .to_string()
}

/// A fake STS: AssumeRole must be signed (service `sts`) by a secret it issued (or the
/// base secret), AssumeRoleWithWebIdentity must carry `expected_token`. Each success issues
/// the next `ASIA<n>`.
fn sts(expected_token: &'static str) -> Endpoint {
    let issued = AtomicU32::new(0);
    Endpoint::start(move |request: &Request| {
        let action = request.param("Action").unwrap_or_default();
        match action.as_str() {
            "AssumeRole" => {
                let access_key = request
                    .header("authorization")
                    .and_then(|a| a.split("Credential=").nth(1))
                    .and_then(|c| c.split('/').next())
                    .unwrap_or_default()
                    .to_owned();
                let secret = match access_key.strip_prefix("ASIA") {
                    Some(n) => format!("secret-{n}"),
                    None => SECRET_BASE.to_owned(),
                };
                if let Err(why) = support::sigv4::verify_for(
                    "sts",
                    request.method.as_str(),
                    &request.target,
                    &request.headers,
                    Some(&request.body),
                    &secret,
                ) {
                    return Answer::new(
                        403,
                        format!(
                            "<ErrorResponse><Error><Type>Sender</Type><Code>SignatureDoesNotMatch</Code>\
                             <Message>{why}</Message></Error><RequestId>bad</RequestId></ErrorResponse>"
                        ),
                    );
                }
                let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
                assume_role_answer("AssumeRole", n)
            }
            "AssumeRoleWithWebIdentity" => {
                if request.header("authorization").is_some()
                    || request.param("WebIdentityToken").as_deref() != Some(expected_token)
                {
                    return Answer::new(
                        400,
                        "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>\
                         <Message>bad token</Message></Error><RequestId>r</RequestId></ErrorResponse>",
                    );
                }
                let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
                assume_role_answer("AssumeRoleWithWebIdentity", n)
            }
            _ => Answer::new(400, "unknown action"),
        }
    })
}

/// A home directory with `config` and `credentials` files, and the env pointing STS at
/// `sts`, with instance metadata off.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new(config: &str, credentials: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".aws")).unwrap();
        std::fs::write(dir.path().join(".aws/config"), config).unwrap();
        std::fs::write(dir.path().join(".aws/credentials"), credentials).unwrap();
        Self { dir }
    }

    fn env(&self, sts: &Endpoint) -> MapEnv {
        MapEnv::new()
            .with_home(self.dir.path())
            .with_var("AWS_EC2_METADATA_DISABLED", "true")
            .with_var("AWS_ENDPOINT_URL_STS", sts.url())
            .with_var("AWS_REGION", "eu-west-1")
    }
}

const CHAIN_CONFIG: &str = "[profile top]\nrole_arn = arn:aws:iam::111:role/top\nsource_profile = middle\n\
     external_id = ext-7\nduration_seconds = 1800\nrole_session_name = alice\n\
     [profile middle]\nrole_arn = arn:aws:iam::111:role/middle\nsource_profile = base\n";

fn base_credentials() -> String {
    format!("[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = {SECRET_BASE}\n")
}

#[tokio::test]
async fn a_chain_of_roles_is_assumed_from_the_base_up_each_signed_by_the_one_before() {
    let sts = sts("unused");
    let home = Home::new(CHAIN_CONFIG, &base_credentials());
    let env = home.env(&sts).with_var("AWS_PROFILE", "top");
    let chain = DefaultChain::with_env(Arc::new(env));
    let credentials = chain.credentials().await.expect("credentials");
    assert_eq!(credentials.access_key_id(), "ASIA2");
    assert_eq!(credentials.secret_access_key(), "secret-2");
    assert_eq!(credentials.session_token(), Some("token-2"));

    let requests = sts.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let (first, second) = (&requests[0], &requests[1]);
    assert_eq!(
        first.param("RoleArn").as_deref(),
        Some("arn:aws:iam::111:role/middle")
    );
    assert!(
        first
            .header("authorization")
            .unwrap()
            .contains("Credential=AKIDBASE/")
    );
    assert!(
        first
            .param("RoleSessionName")
            .unwrap()
            .starts_with("s3-wire-")
    );
    assert_eq!(first.param("ExternalId"), None);
    assert_eq!(
        second.param("RoleArn").as_deref(),
        Some("arn:aws:iam::111:role/top")
    );
    assert!(
        second
            .header("authorization")
            .unwrap()
            .contains("Credential=ASIA1/")
    );
    assert_eq!(second.header("x-amz-security-token"), Some("token-1"));
    assert_eq!(second.param("ExternalId").as_deref(), Some("ext-7"));
    assert_eq!(second.param("DurationSeconds").as_deref(), Some("1800"));
    assert_eq!(second.param("RoleSessionName").as_deref(), Some("alice"));
    assert!(
        second
            .header("authorization")
            .unwrap()
            .contains("/eu-west-1/sts/aws4_request")
    );

    // Cached: a second call asks STS nothing.
    assert_eq!(chain.credentials().await.unwrap().access_key_id(), "ASIA2");
    assert_eq!(sts.requests().len(), 2);
}

#[tokio::test]
async fn web_identity_from_the_environment_and_from_a_profile() {
    let sts = sts("eyJ-the-token");
    let home = Home::new(
        "[profile web]\nrole_arn = arn:aws:iam::111:role/web\nweb_identity_token_file = TOKEN\n\
         role_session_name = pod-1\n",
        "",
    );
    let token_file = home.dir.path().join("token");
    std::fs::write(&token_file, "eyJ-the-token\n").unwrap();
    let config = std::fs::read_to_string(home.dir.path().join(".aws/config")).unwrap();
    std::fs::write(
        home.dir.path().join(".aws/config"),
        config.replace("TOKEN", token_file.to_str().unwrap()),
    )
    .unwrap();

    let env = home
        .env(&sts)
        .with_var("AWS_WEB_IDENTITY_TOKEN_FILE", token_file.to_str().unwrap())
        .with_var("AWS_ROLE_ARN", "arn:aws:iam::111:role/irsa")
        .with_var("AWS_ROLE_SESSION_NAME", "irsa-session");
    let credentials = DefaultChain::with_env(Arc::new(env.clone()))
        .credentials()
        .await
        .expect("web identity from the environment");
    assert_eq!(credentials.access_key_id(), "ASIA1");
    let request = &sts.requests()[0];
    assert_eq!(
        request.param("RoleArn").as_deref(),
        Some("arn:aws:iam::111:role/irsa")
    );
    assert_eq!(
        request.param("RoleSessionName").as_deref(),
        Some("irsa-session")
    );
    assert!(
        request.header("authorization").is_none(),
        "the token authenticates"
    );

    let provider = CachingProvider::new(WebIdentityProvider::with_env(Arc::new(env)));
    assert_eq!(
        provider.credentials().await.unwrap().access_key_id(),
        "ASIA2"
    );

    let profile = ProfileProvider::with_env(Arc::new(home.env(&sts)), Some("web".into()));
    assert_eq!(
        profile.credentials().await.unwrap().access_key_id(),
        "ASIA3"
    );
    let request = &sts.requests()[2];
    assert_eq!(
        request.param("RoleArn").as_deref(),
        Some("arn:aws:iam::111:role/web")
    );
    assert_eq!(request.param("RoleSessionName").as_deref(), Some("pod-1"));

    // A token the identity provider does not accept.
    std::fs::write(&token_file, "forged").unwrap();
    let profile = ProfileProvider::with_env(Arc::new(home.env(&sts)), Some("web".into()));
    match profile.credentials().await {
        Err(Error::Source {
            origin: Origin::WebIdentity { role_arn },
            kind:
                SourceErrorKind::Status {
                    status: 400,
                    code: Some(code),
                    ..
                },
        }) => {
            assert_eq!(role_arn, "arn:aws:iam::111:role/web");
            assert_eq!(code, "InvalidIdentityToken");
        }
        other => panic!("{other:?}"),
    }
    // A missing token file names the file.
    std::fs::remove_file(&token_file).unwrap();
    let error = ProfileProvider::with_env(Arc::new(home.env(&sts)), Some("web".into()))
        .credentials()
        .await
        .unwrap_err();
    assert!(error.to_string().contains("token"), "{error}");
    assert!(matches!(
        error,
        Error::Source {
            kind: SourceErrorKind::File { .. },
            ..
        }
    ));
}

#[tokio::test]
async fn sts_refusals_and_outages_are_typed_and_never_show_secrets() {
    let denied = Endpoint::start(|_| {
        Answer::new(
            403,
            "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>\
             <Message>User is not authorized to perform: sts:AssumeRole</Message></Error>\
             <RequestId>req-denied</RequestId></ErrorResponse>",
        )
    });
    let home = Home::new(CHAIN_CONFIG, &base_credentials());
    let error = ProfileProvider::with_env(Arc::new(home.env(&denied)), Some("top".into()))
        .credentials()
        .await
        .unwrap_err();
    let shown = format!("{error} {error:?}");
    assert!(
        shown.contains("AccessDenied") && shown.contains("req-denied"),
        "{shown}"
    );
    assert!(shown.contains("arn:aws:iam::111:role/middle"), "{shown}");
    assert!(!shown.contains(SECRET_BASE), "{shown}");
    assert!(!error.is_transient());
    assert_eq!(denied.requests().len(), 1, "a refusal is not retried");

    let down = Endpoint::start(|_| {
        Answer::new(
            503,
            "<ErrorResponse><Error><Code>ServiceUnavailable</Code></Error></ErrorResponse>",
        )
    });
    let error = ProfileProvider::with_env(Arc::new(home.env(&down)), Some("top".into()))
        .credentials()
        .await
        .unwrap_err();
    assert!(error.is_transient(), "{error}");
    assert_eq!(down.requests().len(), 3, "three attempts");

    // Garbage in a 200.
    let garbage = Endpoint::start(|_| Answer::ok("<AssumeRoleResponse><nope"));
    let error = ProfileProvider::with_env(Arc::new(home.env(&garbage)), Some("top".into()))
        .credentials()
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::Source {
                kind: SourceErrorKind::Xml(_),
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn profile_misconfigurations_are_reported_before_any_request() {
    let sts = sts("unused");
    let home = Home::new(
        "[profile loop-a]\nrole_arn = arn:a\nsource_profile = loop-b\n\
         [profile loop-b]\nrole_arn = arn:b\nsource_profile = loop-a\n\
         [profile mfa]\nrole_arn = arn:m\nsource_profile = base\nmfa_serial = arn:aws:iam::1:mfa/me\n",
        &base_credentials(),
    );
    let error = ProfileProvider::with_env(Arc::new(home.env(&sts)), Some("loop-a".into()))
        .credentials()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::ProfileCycle { chain } if chain == &["loop-a", "loop-b", "loop-a"])
    );
    assert!(
        error.to_string().contains("loop-a -> loop-b -> loop-a"),
        "{error}"
    );
    let error = ProfileProvider::with_env(Arc::new(home.env(&sts)), Some("mfa".into()))
        .credentials()
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::InvalidProfile {
                setting: "mfa_serial",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(sts.requests().is_empty());
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

/// The other bases of a role: `credential_source = Environment`, and a `source_profile`
/// whose credentials come from a `credential_process`.
#[tokio::test]
async fn roles_on_environment_keys_and_on_a_credential_process() {
    let sts = sts("unused");
    let home = Home::new("", "");
    let helper = home.dir.path().join("helper");
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\necho '{{\"Version\": 1, \"AccessKeyId\": \"AKIDPROC\", \
             \"SecretAccessKey\": \"{SECRET_BASE}\"}}'\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        home.dir.path().join(".aws/config"),
        format!(
            "[profile from-env]\nrole_arn = arn:aws:iam::111:role/env\ncredential_source = Environment\n\
             [profile tool]\ncredential_process = {}\n\
             [profile on-tool]\nrole_arn = arn:aws:iam::111:role/tool\nsource_profile = tool\n",
            helper.display()
        ),
    )
    .unwrap();

    let env = home
        .env(&sts)
        .with_var("AWS_ACCESS_KEY_ID", "AKIDENV")
        .with_var("AWS_SECRET_ACCESS_KEY", SECRET_BASE);
    let provider = ProfileProvider::with_env(Arc::new(env), Some("from-env".into()));
    assert_eq!(
        provider.credentials().await.unwrap().access_key_id(),
        "ASIA1"
    );
    let request = &sts.requests()[0];
    assert!(
        request
            .header("authorization")
            .unwrap()
            .contains("Credential=AKIDENV/")
    );
    assert_eq!(
        request.param("RoleArn").as_deref(),
        Some("arn:aws:iam::111:role/env")
    );

    let provider = ProfileProvider::with_env(Arc::new(home.env(&sts)), Some("on-tool".into()));
    assert_eq!(
        provider.credentials().await.unwrap().access_key_id(),
        "ASIA2"
    );
    let request = &sts.requests()[1];
    assert!(
        request
            .header("authorization")
            .unwrap()
            .contains("Credential=AKIDPROC/")
    );
    assert_eq!(
        request.param("RoleArn").as_deref(),
        Some("arn:aws:iam::111:role/tool")
    );
}

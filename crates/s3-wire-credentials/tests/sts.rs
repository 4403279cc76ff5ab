//! Roles and web identities against a fake STS: the requests STS receives (signed by the
//! right credentials, with the right parameters), the credentials the chain ends with, and
//! errors. (The round trip through local-s3 with credentials the fake STS issued, and the
//! refresh an `ExpiredToken` forces, are s3-wire-tokio's `tests/credentials_client.rs`.)

mod support;

use std::sync::Arc;

use s3_wire_credentials::{
    CachingProvider, CredentialsProvider, DefaultChain, Error, Origin, ProfileProvider,
    SourceErrorKind, WebIdentityProvider,
};
use support::endpoint::{Answer, Endpoint};
use support::sts::*;

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

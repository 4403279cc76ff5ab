//! `credential_process` (real scripts run from a temporary directory) and SSO (the portal and
//! SSO OIDC faked on loopback, the token cache in a temporary home directory).
//!
//! Unix only: the credential processes are `#!/bin/sh` scripts.
#![cfg(unix)]

mod support;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use s3_wire_credentials::documents::DocumentError;
use s3_wire_credentials::{
    Error, ExpiringCredentials, ExpiringSource, MapEnv, Origin, ProcessProvider, ProfileSet,
    SourceErrorKind, SsoProvider,
};
use support::endpoint::{Answer, Endpoint};

// ---------------------------------------------------------------------------------------------
// credential_process
// ---------------------------------------------------------------------------------------------

/// Secrets the scripts print; no error may contain them.
const PROCESS_SECRET: &str = "proc-s3cr3t-key";
const PROCESS_TOKEN: &str = "proc-s3ss10n-token";

/// Writes an executable `#!/bin/sh` script `name` with `body` into `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// A command line that runs `path` (single-quoted: temporary paths are plain).
fn quoted(path: &Path) -> String {
    format!("'{}'", path.display())
}

fn assert_no_process_secret(error: &Error) {
    let shown = format!("{error} | {error:?}");
    assert!(
        !shown.contains(PROCESS_SECRET) && !shown.contains(PROCESS_TOKEN),
        "{shown}"
    );
}

/// The error of a failed run (checking its origin and that it shows no secret).
fn process_error(result: Result<ExpiringCredentials, Error>) -> Error {
    let error = result.expect_err("the process must fail");
    assert_no_process_secret(&error);
    match &error {
        Error::Source {
            origin: Origin::Process { profile },
            ..
        } => assert_eq!(profile, "proc"),
        other => panic!("not a credential_process error: {other:?}"),
    }
    error
}

fn kind(error: &Error) -> &SourceErrorKind {
    match error {
        Error::Source { kind, .. } => kind,
        other => panic!("not a source error: {other:?}"),
    }
}

#[tokio::test]
async fn process_output_with_and_without_expiration() {
    let dir = tempfile::tempdir().unwrap();
    let expiring = script(
        dir.path(),
        "expiring",
        &format!(
            "cat <<'EOF'\n{{\"Version\": 1, \"AccessKeyId\": \"AKIDPROCESS\", \
             \"SecretAccessKey\": \"{PROCESS_SECRET}\", \"SessionToken\": \"{PROCESS_TOKEN}\", \
             \"Expiration\": \"2030-01-01T00:00:00Z\"}}\nEOF"
        ),
    );
    let credentials = ProcessProvider::new(quoted(&expiring), "proc")
        .fetch()
        .await
        .unwrap();
    assert_eq!(credentials.credentials().access_key_id(), "AKIDPROCESS");
    assert_eq!(
        credentials.credentials().secret_access_key(),
        PROCESS_SECRET
    );
    assert_eq!(
        credentials.credentials().session_token(),
        Some(PROCESS_TOKEN)
    );
    assert_eq!(
        credentials.expiration(),
        Some(UNIX_EPOCH + Duration::from_secs(1_893_456_000))
    );

    let long_lived = script(
        dir.path(),
        "long-lived",
        &format!(
            "printf '%s' '{{\"Version\": 1, \"AccessKeyId\": \"AKIDLONG\", \
             \"SecretAccessKey\": \"{PROCESS_SECRET}\"}}'"
        ),
    );
    let credentials = ProcessProvider::new(quoted(&long_lived), "proc")
        .fetch()
        .await
        .unwrap();
    assert_eq!(credentials.credentials().access_key_id(), "AKIDLONG");
    assert_eq!(credentials.credentials().session_token(), None);
    assert_eq!(credentials.expiration(), None);
}

#[tokio::test]
async fn process_arguments_are_split_as_shell_words_and_passed_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let received = dir.path().join("received");
    // The script records each argument NUL-terminated, and its argument count in the key id.
    let echo = script(
        dir.path(),
        "echo args",
        &format!(
            "printf '%s\\0' \"$@\" > '{}'\n\
             printf '{{\"Version\": 1, \"AccessKeyId\": \"ARGS%s\", \"SecretAccessKey\": \"{PROCESS_SECRET}\"}}' \"$#\"",
            received.display()
        ),
    );
    // The program's path has a space: quoted as a shell word too.
    let command = format!(
        r#"{} plain "two words" 'single "quoted"' back\ slash "it's" '' '$HOME' ';' "a\"b""#,
        quoted(&echo)
    );
    let credentials = ProcessProvider::new(command, "proc").fetch().await.unwrap();
    assert_eq!(credentials.credentials().access_key_id(), "ARGS9");
    let bytes = std::fs::read(&received).unwrap();
    let arguments: Vec<&str> = std::str::from_utf8(&bytes)
        .unwrap()
        .strip_suffix('\0')
        .unwrap()
        .split('\0')
        .collect();
    assert_eq!(
        arguments,
        [
            "plain",
            "two words",
            "single \"quoted\"",
            "back slash",
            "it's",
            "",
            "$HOME",
            ";",
            "a\"b"
        ]
    );
}

#[tokio::test]
async fn process_exit_status_and_stderr_are_reported_without_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let failing = script(
        dir.path(),
        "failing",
        &format!(
            "echo '{{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"{PROCESS_SECRET}\"}}'\n\
             echo 'vault unreachable: try again later' >&2\n\
             exit 3"
        ),
    );
    let error = process_error(ProcessProvider::new(quoted(&failing), "proc").fetch().await);
    match kind(&error) {
        SourceErrorKind::ProcessFailed { code, stderr } => {
            assert_eq!(*code, Some(3));
            assert_eq!(stderr.trim(), "vault unreachable: try again later");
        }
        other => panic!("{other:?}"),
    }
    let shown = error.to_string();
    assert!(shown.contains("status 3"), "{shown}");
    assert!(shown.contains("vault unreachable"), "{shown}");
    assert!(!error.is_transient());

    // Only the end of a long standard error is kept.
    let chatty = script(
        dir.path(),
        "chatty",
        "i=0; while [ $i -lt 2000 ]; do echo \"noise line $i\" >&2; i=$((i+1)); done\n\
         echo 'the actual reason' >&2\nexit 1",
    );
    let error = process_error(ProcessProvider::new(quoted(&chatty), "proc").fetch().await);
    match kind(&error) {
        SourceErrorKind::ProcessFailed { code, stderr } => {
            assert_eq!(*code, Some(1));
            assert!(stderr.len() <= 4096, "{}", stderr.len());
            assert!(stderr.len() > 4000, "{}", stderr.len());
            assert!(stderr.trim_end().ends_with("the actual reason"));
            assert!(!stderr.contains("noise line 0\n"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_process_past_its_timeout_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    // `exec`: the process the provider started is the `sleep` itself.
    let sleeper = script(
        dir.path(),
        "sleeper",
        &format!("echo $$ > '{}'\nexec sleep 30", pid_file.display()),
    );
    let started = Instant::now();
    let result = ProcessProvider::new(quoted(&sleeper), "proc")
        .with_timeout(Duration::from_millis(500))
        .fetch()
        .await;
    let elapsed = started.elapsed();
    let error = process_error(result);
    assert!(
        matches!(kind(&error), SourceErrorKind::ProcessTimeout(limit) if *limit == Duration::from_millis(500)),
        "{error:?}"
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    // Killed and reaped: the process no longer exists.
    assert!(
        !Path::new(&format!("/proc/{}", pid.trim())).exists(),
        "process {} still exists",
        pid.trim()
    );
}

#[tokio::test]
async fn oversized_output_is_refused_and_the_process_killed() {
    let dir = tempfile::tempdir().unwrap();
    let flood = script(
        dir.path(),
        "flood",
        "head -c 70000 /dev/zero | tr '\\0' 'x'\nexec sleep 30",
    );
    let started = Instant::now();
    let result = ProcessProvider::new(quoted(&flood), "proc")
        .with_timeout(Duration::from_secs(20))
        .fetch()
        .await;
    let error = process_error(result);
    assert!(
        matches!(kind(&error), SourceErrorKind::TooLarge { limit: 65_536 }),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn invalid_documents_are_refused_without_quoting_them() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            format!("echo 'not json at all {PROCESS_SECRET}'"),
            "malformed",
        ),
        (
            format!(
                "echo '{{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"{PROCESS_SECRET}\"}}'"
            ),
            "version",
        ),
        (
            format!(
                "echo '{{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"{PROCESS_SECRET}\", \
                 \"Expiration\": \"{PROCESS_TOKEN}\"}}'"
            ),
            "expiration",
        ),
        ("exit 0".to_owned(), "empty"),
    ];
    for (index, (body, what)) in cases.into_iter().enumerate() {
        let path = script(dir.path(), &format!("invalid-{index}"), &body);
        let error = process_error(ProcessProvider::new(quoted(&path), "proc").fetch().await);
        let document = match kind(&error) {
            SourceErrorKind::Document(document) => document.clone(),
            other => panic!("{what}: {other:?}"),
        };
        match what {
            "malformed" | "empty" => {
                assert!(
                    matches!(document, DocumentError::Malformed { .. }),
                    "{document:?}"
                )
            }
            "version" => assert_eq!(document, DocumentError::UnsupportedVersion),
            _ => assert_eq!(document, DocumentError::InvalidExpiration("Expiration")),
        }
    }
}

#[tokio::test]
async fn programs_that_cannot_start_and_unusable_command_lines() {
    let error = ProcessProvider::new("/nonexistent/s3-wire/helper --flag", "proc")
        .fetch()
        .await
        .unwrap_err();
    match kind(&error) {
        SourceErrorKind::Spawn(io) => {
            assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
            assert!(
                io.to_string().contains("/nonexistent/s3-wire/helper"),
                "{io}"
            );
        }
        other => panic!("{other:?}"),
    }

    let dir = tempfile::tempdir().unwrap();
    let not_executable = dir.path().join("plain-file");
    std::fs::write(&not_executable, "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&not_executable, std::fs::Permissions::from_mode(0o644)).unwrap();
    let error = ProcessProvider::new(quoted(&not_executable), "proc")
        .fetch()
        .await
        .unwrap_err();
    assert!(
        matches!(kind(&error), SourceErrorKind::Spawn(io) if io.kind() == std::io::ErrorKind::PermissionDenied),
        "{error:?}"
    );

    for line in ["", "   ", "helper 'unclosed", "helper \"unclosed"] {
        let error = ProcessProvider::new(line, "proc")
            .fetch()
            .await
            .unwrap_err();
        assert!(
            matches!(kind(&error), SourceErrorKind::Misconfigured { setting, .. } if setting == "credential_process"),
            "{line:?}: {error:?}"
        );
    }
}

/// Standard input is `/dev/null` and the environment is inherited (Linux: `/proc`).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_program_reads_no_input_and_inherits_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let stdin_file = dir.path().join("stdin");
    let path_file = dir.path().join("path");
    let reader = script(
        dir.path(),
        "reader",
        &format!(
            "readlink /proc/$$/fd/0 > '{}'\nprintf '%s' \"${{PATH-unset}}\" > '{}'\n\
             echo '{{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"{PROCESS_SECRET}\"}}'",
            stdin_file.display(),
            path_file.display()
        ),
    );
    ProcessProvider::new(quoted(&reader), "proc")
        .fetch()
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(&stdin_file).unwrap().trim(),
        "/dev/null"
    );
    let path = std::env::var("PATH").expect("the tests run with PATH set");
    assert_eq!(std::fs::read_to_string(&path_file).unwrap(), path);
}

/// The test above, run again in a copy of this test binary whose own standard input is a
/// pipe with data: an inherited standard input would show there (the harness's may be
/// `/dev/null` itself).
#[cfg(target_os = "linux")]
#[test]
fn the_program_does_not_inherit_a_standard_input_that_has_data() {
    use std::io::Write as _;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "the_program_reads_no_input_and_inherits_the_environment",
            "--test-threads=1",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Written before the run and kept open until it ends (ignoring a closed pipe).
    let _ = stdin.write_all(b"data the credential process must not see\n");
    let output = child.wait_with_output().unwrap();
    drop(stdin);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
}

// ---------------------------------------------------------------------------------------------
// SSO
// ---------------------------------------------------------------------------------------------

/// `printf corp | sha1sum`: the cache file of `[sso-session corp]`.
const SESSION_CACHE_FILE: &str = "ee0bfd2552fbd840c02cc48b6e823320543c450f.json";
/// `printf https://d-1234567890.awsapps.com/start | sha1sum`: the legacy form's file.
const LEGACY_CACHE_FILE: &str = "7487b5b67d5fa1132cf33fa93ae51ef38cc37752.json";
const LEGACY_START_URL: &str = "https://d-1234567890.awsapps.com/start";

const ACCESS_TOKEN: &str = "cached-access-t0ken";
const REFRESH_TOKEN: &str = "cached-refresh-t0ken";
const CLIENT_SECRET: &str = "client-s3cr3t";
const NEW_ACCESS_TOKEN: &str = "refreshed-access-t0ken";
const NEW_REFRESH_TOKEN: &str = "rotated-refresh-t0ken";
const ROLE_SECRET: &str = "role-s3cr3t-key";
const ROLE_TOKEN: &str = "role-s3ss10n-token";

/// An account and a role name with characters that must be percent-encoded.
const ACCOUNT: &str = "111122223333";
const ROLE: &str = "Dev+Ops@team";

const CONFIG: &str = "[profile dev]\nsso_session = corp\nsso_account_id = 111122223333\n\
    sso_role_name = Dev+Ops@team\nregion = eu-west-1\n\
    [sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-west-1\n\
    sso_registration_scopes = sso:account:access\n\
    [profile legacy]\nsso_start_url = https://d-1234567890.awsapps.com/start\n\
    sso_region = us-east-1\nsso_account_id = 111122223333\nsso_role_name = Dev+Ops@team\n";

/// A temporary home with `.aws/config` and the SSO cache directory, and the fakes.
struct Sso {
    home: tempfile::TempDir,
    portal: Endpoint,
    oidc: Endpoint,
}

impl Sso {
    fn new(config: &str, portal: Endpoint, oidc: Endpoint) -> Self {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".aws/sso/cache")).unwrap();
        std::fs::write(home.path().join(".aws/config"), config).unwrap();
        Self { home, portal, oidc }
    }

    fn env(&self) -> MapEnv {
        MapEnv::new()
            .with_home(self.home.path())
            .with_var("AWS_ENDPOINT_URL_SSO", self.portal.url())
            .with_var("AWS_ENDPOINT_URL_SSO_OIDC", self.oidc.url())
    }

    fn provider(&self, profile: &str) -> Result<SsoProvider, Error> {
        let env = self.env();
        let profiles = ProfileSet::load(&env).unwrap();
        SsoProvider::from_profile(Arc::new(env), &profiles, profile)
    }

    fn cache_file(&self, name: &str) -> PathBuf {
        self.home.path().join(".aws/sso/cache").join(name)
    }

    fn write_token(&self, name: &str, document: &serde_json::Value) {
        let path = self.cache_file(name);
        std::fs::write(&path, document.to_string()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }

    fn read_token(&self, name: &str) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.cache_file(name)).unwrap()).unwrap()
    }
}

fn rfc3339(time: SystemTime) -> String {
    s3_xml::Timestamp::from_system_time(time)
        .unwrap()
        .to_string()
}

fn from_now(seconds: i64) -> SystemTime {
    let now = SystemTime::now();
    if seconds >= 0 {
        now + Duration::from_secs(seconds.unsigned_abs())
    } else {
        now - Duration::from_secs(seconds.unsigned_abs())
    }
}

/// A token cache document expiring `expires_in` seconds from now, with the refresh fields
/// (registration valid for `registration_in` seconds) if `refreshable`.
fn token_document(expires_in: i64, refreshable: bool, registration_in: i64) -> serde_json::Value {
    let mut document = serde_json::json!({
        "startUrl": "https://corp.awsapps.com/start",
        "region": "eu-west-1",
        "accessToken": ACCESS_TOKEN,
        "expiresAt": rfc3339(from_now(expires_in)),
        "someFieldOfTheCli": {"kept": true},
    });
    if refreshable {
        let object = document.as_object_mut().unwrap();
        object.insert("refreshToken".into(), REFRESH_TOKEN.into());
        object.insert("clientId".into(), "client-id-1".into());
        object.insert("clientSecret".into(), CLIENT_SECRET.into());
        object.insert(
            "registrationExpiresAt".into(),
            rfc3339(from_now(registration_in)).into(),
        );
    }
    document
}

/// A portal that accepts only `token`, for the configured account and role.
fn portal(token: &'static str) -> Endpoint {
    Endpoint::start(move |request| {
        let authorized = request.method == "GET"
            && request.path() == "/federation/credentials"
            && request.param("account_id").as_deref() == Some(ACCOUNT)
            && request.param("role_name").as_deref() == Some(ROLE)
            && request.header("x-amz-sso_bearer_token") == Some(token);
        if authorized {
            Answer::ok(format!(
                r#"{{"roleCredentials": {{"accessKeyId": "ASIASSO", "secretAccessKey": "{ROLE_SECRET}",
                    "sessionToken": "{ROLE_TOKEN}", "expiration": 1893456000000}}}}"#
            ))
        } else {
            Answer::new(
                401,
                r#"{"message": "Session token not found or invalid", "__type": "UnauthorizedException"}"#,
            )
            .with_header("x-amzn-requestid", "req-401")
        }
    })
}

/// An endpoint that answers everything with `status`.
fn answering(status: u16, body: &'static str) -> Endpoint {
    Endpoint::start(move |_| Answer::new(status, body))
}

/// An OIDC fake that refreshes `REFRESH_TOKEN` of `client-id-1` into the new tokens.
fn oidc() -> Endpoint {
    Endpoint::start(|request| {
        let body: serde_json::Value =
            serde_json::from_slice(&request.body).unwrap_or(serde_json::Value::Null);
        let expected = serde_json::json!({
            "clientId": "client-id-1",
            "clientSecret": CLIENT_SECRET,
            "grantType": "refresh_token",
            "refreshToken": REFRESH_TOKEN,
        });
        if request.method == "POST"
            && request.path() == "/token"
            && request.header("content-type") == Some("application/json")
            && body == expected
        {
            Answer::ok(format!(
                r#"{{"accessToken": "{NEW_ACCESS_TOKEN}", "expiresIn": 3600,
                    "refreshToken": "{NEW_REFRESH_TOKEN}", "tokenType": "Bearer"}}"#
            ))
        } else {
            Answer::new(
                400,
                r#"{"error": "invalid_request", "error_description": "unexpected request"}"#,
            )
        }
    })
}

fn assert_no_sso_secret(error: &Error) {
    let shown = format!("{error} | {error:?}");
    for secret in [
        ACCESS_TOKEN,
        REFRESH_TOKEN,
        CLIENT_SECRET,
        NEW_ACCESS_TOKEN,
        NEW_REFRESH_TOKEN,
        ROLE_SECRET,
        ROLE_TOKEN,
    ] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
}

/// The reason of an `SsoLoginRequired` error of profile `profile` (checking its remedy).
fn login_required(error: &Error, profile: &str) -> String {
    assert_no_sso_secret(error);
    assert!(!error.is_transient(), "{error:?}");
    match error {
        Error::Source {
            origin: Origin::Sso { profile: p },
            kind: SourceErrorKind::SsoLoginRequired { reason, remedy },
        } => {
            assert_eq!(p, profile);
            assert_eq!(remedy, &format!("aws sso login --profile {profile}"));
            assert!(error.to_string().contains(remedy.as_str()));
            reason.clone()
        }
        other => panic!("expected SsoLoginRequired, got {other:?}"),
    }
}

fn assert_role_credentials(credentials: &ExpiringCredentials) {
    assert_eq!(credentials.credentials().access_key_id(), "ASIASSO");
    assert_eq!(credentials.credentials().secret_access_key(), ROLE_SECRET);
    assert_eq!(credentials.credentials().session_token(), Some(ROLE_TOKEN));
    assert_eq!(
        credentials.expiration(),
        Some(UNIX_EPOCH + Duration::from_millis(1_893_456_000_000))
    );
}

#[tokio::test]
async fn sso_session_profile_with_a_valid_cached_token() {
    let sso = Sso::new(CONFIG, portal(ACCESS_TOKEN), oidc());
    sso.write_token(SESSION_CACHE_FILE, &token_document(3600, true, 86_400));
    let credentials = sso.provider("dev").unwrap().fetch().await.unwrap();
    assert_role_credentials(&credentials);
    let requests = sso.portal.requests();
    assert_eq!(requests.len(), 1);
    // Percent-encoded: a `+` left raw would have been decoded to a space by the fake.
    assert!(
        requests[0].target.contains("role_name=Dev%2BOps%40team"),
        "{}",
        requests[0].target
    );
    assert!(
        sso.oidc.requests().is_empty(),
        "a valid token is not refreshed"
    );
}

#[tokio::test]
async fn an_expired_refreshable_token_is_refreshed_and_the_cache_rewritten() {
    let sso = Sso::new(CONFIG, portal(NEW_ACCESS_TOKEN), oidc());
    sso.write_token(SESSION_CACHE_FILE, &token_document(-60, true, 86_400));
    let before = SystemTime::now();
    let credentials = sso.provider("dev").unwrap().fetch().await.unwrap();
    assert_role_credentials(&credentials);

    let refreshes = sso.oidc.requests();
    assert_eq!(refreshes.len(), 1, "one refresh");
    let portal_requests = sso.portal.requests();
    assert_eq!(portal_requests.len(), 1);
    assert_eq!(
        portal_requests[0].header("x-amz-sso_bearer_token"),
        Some(NEW_ACCESS_TOKEN)
    );

    let path = sso.cache_file(SESSION_CACHE_FILE);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    let document = sso.read_token(SESSION_CACHE_FILE);
    assert_eq!(document["accessToken"], NEW_ACCESS_TOKEN);
    assert_eq!(document["refreshToken"], NEW_REFRESH_TOKEN);
    // The other fields are kept.
    assert_eq!(document["clientId"], "client-id-1");
    assert_eq!(document["clientSecret"], CLIENT_SECRET);
    assert_eq!(document["startUrl"], "https://corp.awsapps.com/start");
    assert_eq!(document["someFieldOfTheCli"]["kept"], true);
    let expires_at = s3_xml::Timestamp::parse(document["expiresAt"].as_str().unwrap())
        .unwrap()
        .to_system_time()
        .unwrap();
    let expected = before + Duration::from_secs(3600);
    let drift = expires_at
        .duration_since(expected)
        .unwrap_or_else(|early| early.duration());
    assert!(drift < Duration::from_secs(30), "{drift:?}");
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, [SESSION_CACHE_FILE], "{names:?}");

    // The next fetch uses the rewritten token as it is.
    let credentials = sso.provider("dev").unwrap().fetch().await.unwrap();
    assert_role_credentials(&credentials);
    assert_eq!(sso.oidc.requests().len(), 1, "no second refresh");
}

#[tokio::test]
async fn a_token_near_expiry_is_refreshed_but_still_used_when_the_refresh_fails() {
    let sso = Sso::new(
        CONFIG,
        portal(ACCESS_TOKEN),
        answering(503, r#"{"error": "ServiceUnavailable"}"#),
    );
    // Two minutes left: inside the 5-minute window.
    let document = token_document(120, true, 86_400);
    sso.write_token(SESSION_CACHE_FILE, &document);
    let credentials = sso.provider("dev").unwrap().fetch().await.unwrap();
    assert_role_credentials(&credentials);
    assert_eq!(
        sso.oidc.requests().len(),
        3,
        "a refresh was attempted, three times for a 503"
    );
    assert_eq!(
        sso.read_token(SESSION_CACHE_FILE),
        document,
        "file unchanged"
    );
}

#[tokio::test]
async fn a_transient_refresh_failure_of_an_expired_token_stays_transient() {
    let sso = Sso::new(
        CONFIG,
        portal(ACCESS_TOKEN),
        answering(500, r#"{"error": "InternalServerException"}"#),
    );
    sso.write_token(SESSION_CACHE_FILE, &token_document(-60, true, 86_400));
    let error = sso.provider("dev").unwrap().fetch().await.unwrap_err();
    assert_no_sso_secret(&error);
    assert!(error.is_transient(), "{error:?}");
    assert!(
        matches!(kind(&error), SourceErrorKind::Status { status: 500, .. }),
        "{error:?}"
    );
    assert!(sso.portal.requests().is_empty());

    // Unreachable OIDC: a transport failure, transient too.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let unreachable = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let env = sso.env().with_var("AWS_ENDPOINT_URL_SSO_OIDC", unreachable);
    let provider = SsoProvider::from_profile(
        Arc::new(env.clone()),
        &ProfileSet::load(&env).unwrap(),
        "dev",
    )
    .unwrap();
    let error = provider.fetch().await.unwrap_err();
    assert!(error.is_transient(), "{error:?}");
    assert!(
        matches!(kind(&error), SourceErrorKind::Transport(_)),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_refused_refresh_requires_a_login() {
    let sso = Sso::new(
        CONFIG,
        portal(ACCESS_TOKEN),
        answering(
            400,
            r#"{"error": "invalid_grant", "error_description": "Invalid refresh token provided"}"#,
        ),
    );
    let document = token_document(-60, true, 86_400);
    sso.write_token(SESSION_CACHE_FILE, &document);
    let error = sso.provider("dev").unwrap().fetch().await.unwrap_err();
    let reason = login_required(&error, "dev");
    assert!(reason.contains("refused"), "{reason}");
    assert!(reason.contains("invalid_grant"), "{reason}");
    assert_eq!(
        sso.read_token(SESSION_CACHE_FILE),
        document,
        "file unchanged"
    );
    assert!(sso.portal.requests().is_empty());
}

#[tokio::test]
async fn expired_tokens_that_cannot_be_refreshed_require_a_login() {
    let sso = Sso::new(CONFIG, portal(ACCESS_TOKEN), oidc());
    // No refresh token.
    sso.write_token(SESSION_CACHE_FILE, &token_document(-60, false, 0));
    let reason = login_required(
        &sso.provider("dev").unwrap().fetch().await.unwrap_err(),
        "dev",
    );
    assert!(reason.contains("expired"), "{reason}");
    // An expired client registration.
    sso.write_token(SESSION_CACHE_FILE, &token_document(-60, true, -10));
    let reason = login_required(
        &sso.provider("dev").unwrap().fetch().await.unwrap_err(),
        "dev",
    );
    assert!(reason.contains("registration"), "{reason}");
    // No cached token at all.
    std::fs::remove_file(sso.cache_file(SESSION_CACHE_FILE)).unwrap();
    let reason = login_required(
        &sso.provider("dev").unwrap().fetch().await.unwrap_err(),
        "dev",
    );
    assert!(reason.contains(SESSION_CACHE_FILE), "{reason}");
    // A corrupt cache file.
    std::fs::write(
        sso.cache_file(SESSION_CACHE_FILE),
        format!("{{\"accessToken\": \"{ACCESS_TOKEN}\""),
    )
    .unwrap();
    let reason = login_required(
        &sso.provider("dev").unwrap().fetch().await.unwrap_err(),
        "dev",
    );
    assert!(reason.contains("not valid JSON"), "{reason}");

    assert!(sso.oidc.requests().is_empty());
    assert!(sso.portal.requests().is_empty());
}

#[tokio::test]
async fn the_portal_refusing_the_token_requires_a_login_and_its_outage_is_transient() {
    let sso = Sso::new(CONFIG, portal("some-other-token"), oidc());
    sso.write_token(SESSION_CACHE_FILE, &token_document(3600, true, 86_400));
    let error = sso.provider("dev").unwrap().fetch().await.unwrap_err();
    let reason = login_required(&error, "dev");
    assert!(reason.contains("UnauthorizedException"), "{reason}");
    assert_eq!(sso.portal.requests().len(), 1);

    let sso = Sso::new(
        CONFIG,
        answering(
            403,
            r#"{"message": "No access", "__type": "ForbiddenException"}"#,
        ),
        oidc(),
    );
    sso.write_token(SESSION_CACHE_FILE, &token_document(3600, true, 86_400));
    let reason = login_required(
        &sso.provider("dev").unwrap().fetch().await.unwrap_err(),
        "dev",
    );
    assert!(reason.contains("ForbiddenException"), "{reason}");

    let sso = Sso::new(
        CONFIG,
        answering(
            503,
            r#"{"message": "busy", "__type": "ServiceUnavailableException"}"#,
        ),
        oidc(),
    );
    sso.write_token(SESSION_CACHE_FILE, &token_document(3600, true, 86_400));
    let error = sso.provider("dev").unwrap().fetch().await.unwrap_err();
    assert_no_sso_secret(&error);
    assert!(error.is_transient(), "{error:?}");
    assert!(
        matches!(kind(&error), SourceErrorKind::Status { status: 503, .. }),
        "{error:?}"
    );
    assert_eq!(sso.portal.requests().len(), 3, "three attempts for a 503");

    // A malformed answer is a document error that does not quote it.
    let sso = Sso::new(
        CONFIG,
        Endpoint::start(|_| {
            Answer::ok(format!(
                r#"{{"roleCredentials": {{"secretAccessKey": "{ROLE_SECRET}"}}}}"#
            ))
        }),
        oidc(),
    );
    sso.write_token(SESSION_CACHE_FILE, &token_document(3600, true, 86_400));
    let error = sso.provider("dev").unwrap().fetch().await.unwrap_err();
    assert_no_sso_secret(&error);
    assert!(
        matches!(
            kind(&error),
            SourceErrorKind::Document(DocumentError::MissingField("accessKeyId"))
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn legacy_profiles_use_the_start_url_cache_and_are_not_refreshed() {
    let sso = Sso::new(CONFIG, portal(ACCESS_TOKEN), oidc());
    let mut document = token_document(3600, false, 0);
    document["startUrl"] = LEGACY_START_URL.into();
    sso.write_token(LEGACY_CACHE_FILE, &document);
    let credentials = sso.provider("legacy").unwrap().fetch().await.unwrap();
    assert_role_credentials(&credentials);

    // Expired, even with refresh fields: the legacy form is not refreshable.
    sso.write_token(LEGACY_CACHE_FILE, &token_document(-60, true, 86_400));
    let reason = login_required(
        &sso.provider("legacy").unwrap().fetch().await.unwrap_err(),
        "legacy",
    );
    assert!(reason.contains("legacy"), "{reason}");
    assert!(sso.oidc.requests().is_empty());
    // The session profile does not read the legacy file.
    let reason = login_required(
        &sso.provider("dev").unwrap().fetch().await.unwrap_err(),
        "dev",
    );
    assert!(reason.contains(SESSION_CACHE_FILE), "{reason}");
}

#[tokio::test]
async fn misconfigured_sso_profiles_are_refused_naming_the_setting() {
    let cases = [
        (
            "[profile p]\nsso_session = nowhere\nsso_account_id = 1\nsso_role_name = R\n",
            "sso_session",
            "[sso-session nowhere]",
        ),
        (
            "[profile p]\nsso_session = s\nsso_account_id = 1\nsso_role_name = R\n\
             sso_start_url = https://other.awsapps.com/start\n\
             [sso-session s]\nsso_start_url = https://s.awsapps.com/start\nsso_region = eu-west-1\n",
            "sso_start_url",
            "differs",
        ),
        (
            "[profile p]\nsso_session = s\nsso_role_name = R\n\
             [sso-session s]\nsso_start_url = https://s.awsapps.com/start\nsso_region = eu-west-1\n",
            "sso_account_id",
            "required",
        ),
        (
            "[profile p]\nsso_session = s\nsso_account_id = 1\nsso_role_name = R\n\
             [sso-session s]\nsso_start_url = https://s.awsapps.com/start\n",
            "sso_region",
            "[sso-session s]",
        ),
        (
            "[profile p]\nsso_start_url = https://s.awsapps.com/start\nsso_region = eu-west-1\n\
             sso_account_id = 1\n",
            "sso_role_name",
            "required",
        ),
    ];
    for (config, setting, said) in cases {
        let sso = Sso::new(config, answering(500, ""), answering(500, ""));
        match sso.provider("p") {
            Err(Error::InvalidProfile {
                profile,
                setting: s,
                reason,
            }) => {
                assert_eq!((profile.as_str(), s), ("p", setting), "{config}");
                assert!(reason.contains(said), "{reason}");
            }
            other => panic!("{config}: {other:?}"),
        }
    }
    let sso = Sso::new(CONFIG, answering(500, ""), answering(500, ""));
    assert!(matches!(
        sso.provider("absent"),
        Err(Error::ProfileNotFound { .. })
    ));
}

/// Through the default chain, as `Client::from_env` uses it: `AWS_PROFILE` selects the SSO
/// profile, and the chain's cache serves the role credentials without asking again.
#[tokio::test]
async fn the_default_chain_signs_with_the_sso_profile_s_role() {
    use s3_wire_credentials::{CredentialsProvider as _, DefaultChain};
    let sso = Sso::new(CONFIG, portal(ACCESS_TOKEN), oidc());
    sso.write_token(SESSION_CACHE_FILE, &token_document(3600, true, 86_400));
    let env = sso
        .env()
        .with_var("AWS_PROFILE", "dev")
        .with_var("AWS_EC2_METADATA_DISABLED", "true");
    let chain = DefaultChain::with_env(Arc::new(env));
    let credentials = chain.credentials().await.unwrap();
    assert_eq!(credentials.access_key_id(), "ASIASSO");
    assert_eq!(credentials.secret_access_key(), ROLE_SECRET);
    assert_eq!(
        chain.credentials().await.unwrap().session_token(),
        Some(ROLE_TOKEN)
    );
    assert_eq!(sso.portal.requests().len(), 1, "cached");
}

/// A profile's `credential_process` through the default chain: the command line of the
/// file is run (no shell) and its output signs.
#[tokio::test]
async fn the_default_chain_runs_the_profile_s_credential_process() {
    use s3_wire_credentials::{CredentialsProvider as _, DefaultChain};
    let home = tempfile::tempdir().unwrap();
    let helper = script(
        home.path(),
        "helper with space",
        &format!(
            "[ \"$1\" = --account ] && [ \"$2\" = 'a b' ] || exit 9\n\
             echo '{{\"Version\": 1, \"AccessKeyId\": \"AKIDFROMPROFILE\", \
             \"SecretAccessKey\": \"{PROCESS_SECRET}\"}}'"
        ),
    );
    std::fs::create_dir(home.path().join(".aws")).unwrap();
    std::fs::write(
        home.path().join(".aws/config"),
        format!(
            "[profile tool]\ncredential_process = {} --account \"a b\"\n",
            quoted(&helper)
        ),
    )
    .unwrap();
    let env = MapEnv::new()
        .with_home(home.path())
        .with_var("AWS_PROFILE", "tool")
        .with_var("AWS_EC2_METADATA_DISABLED", "true");
    let credentials = DefaultChain::with_env(Arc::new(env))
        .credentials()
        .await
        .unwrap();
    assert_eq!(credentials.access_key_id(), "AKIDFROMPROFILE");
    assert_eq!(credentials.secret_access_key(), PROCESS_SECRET);
    assert_eq!(credentials.session_token(), None);
}

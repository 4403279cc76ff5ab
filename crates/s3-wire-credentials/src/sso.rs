//! AWS IAM Identity Center (SSO): role credentials for the token `aws sso login` cached.
//!
//! The configuration is the AWS CLI v2's: a profile with `sso_session = NAME`, whose
//! `[sso-session NAME]` section gives `sso_start_url` and `sso_region`, or the legacy form
//! with both in the profile; the profile names the `sso_account_id` and `sso_role_name`.
//!
//! The token is read from `~/.aws/sso/cache/<hex SHA-1 of KEY>.json`, KEY being the session
//! name (or, in the legacy form, the start URL). A token that has expired, or expires within
//! [`REFRESH_WINDOW`], is refreshed through SSO OIDC when the cache holds a refresh token
//! and an unexpired client registration (sso-session logins only, as in the CLI); the cache
//! file is then rewritten. The token buys role credentials from the SSO portal's
//! GetRoleCredentials.
//!
//! Neither the tokens, the client secret nor the credentials ever appear in an error.

use std::borrow::Cow;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use serde_json::{Map, Value};
use sha1::{Digest as _, Sha1};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::documents::{
    MAX_DOCUMENT_LEN, OidcToken, SsoToken, parse_oidc_token, parse_sso_role_credentials,
    parse_sso_token,
};
use super::http::{Exchange, Http, Reach, checked_endpoint, configured_endpoint, status_error};
use super::{
    Clock, Env, Error, ExpiringCredentials, ExpiringSource, FetchFuture, Origin, ProfileSet,
    Section, SourceErrorKind, SystemClock,
};

/// A token this close to its expiry is refreshed (when it can be) before use.
pub(crate) const REFRESH_WINDOW: Duration = Duration::from_secs(5 * 60);

/// The deadline of each exchange with the SSO portal and SSO OIDC.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(10);
/// Attempts in all for a transient failure (5xx, 429, unreachable), as for STS, and the
/// first pause between them (doubled after each).
const ATTEMPTS: u32 = 3;
const RETRY_PAUSE: Duration = Duration::from_millis(200);

/// Role credentials of a profile's SSO configuration.
#[derive(Debug)]
pub struct SsoProvider {
    env: Arc<dyn Env>,
    http: Arc<Http>,
    clock: Arc<dyn Clock>,
    profile: String,
    config: SsoConfig,
}

/// A profile's SSO settings, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SsoConfig {
    start_url: String,
    region: String,
    account_id: String,
    role_name: String,
    /// The `sso_session` name; `None` in the legacy form.
    session: Option<String>,
}

impl SsoConfig {
    /// What the token cache file is named after.
    fn cache_key(&self) -> &str {
        self.session.as_deref().unwrap_or(&self.start_url)
    }
}

impl SsoProvider {
    /// The SSO configuration of `profile` in `profiles`; files located through `env`.
    pub fn from_profile(
        env: Arc<dyn Env>,
        profiles: &ProfileSet,
        profile: &str,
    ) -> Result<Self, Error> {
        Self::with_http(
            env,
            profiles,
            profile,
            Arc::default(),
            Arc::new(SystemClock),
        )
    }

    pub(crate) fn with_http(
        env: Arc<dyn Env>,
        profiles: &ProfileSet,
        profile: &str,
        http: Arc<Http>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, Error> {
        let config = resolve_config(profiles, profile)?;
        Ok(Self {
            env,
            http,
            clock,
            profile: profile.to_owned(),
            config,
        })
    }

    fn fail(&self, kind: SourceErrorKind) -> Error {
        Error::from_source(self.origin(), kind)
    }

    fn origin(&self) -> Origin {
        Origin::Sso {
            profile: self.profile.clone(),
        }
    }

    fn login_required(&self, reason: String) -> Error {
        let profile = shlex::try_quote(&self.profile).unwrap_or(Cow::Borrowed(&self.profile));
        self.fail(SourceErrorKind::SsoLoginRequired {
            reason,
            remedy: format!("aws sso login --profile {profile}"),
        })
    }

    /// `~/.aws/sso/cache/<hex sha1 of the key>.json`.
    fn cache_path(&self) -> Result<PathBuf, Error> {
        let home = self.env.home_dir().ok_or_else(|| {
            self.fail(SourceErrorKind::Misconfigured {
                setting: "HOME".to_owned(),
                reason: "no home directory is set, so the SSO token cache (~/.aws/sso/cache) \
                         cannot be found"
                    .to_owned(),
            })
        })?;
        Ok(home
            .join(".aws")
            .join("sso")
            .join("cache")
            .join(cache_file_name(self.config.cache_key())))
    }

    /// `AWS_ENDPOINT_URL_<service>` (or `AWS_ENDPOINT_URL`), else the regional AWS host.
    fn endpoint(&self, service: &str, host_prefix: &str) -> Result<String, Error> {
        let url = configured_endpoint(self.env.as_ref(), service).unwrap_or_else(|| {
            let region = &self.config.region;
            format!("https://{host_prefix}.{region}.{}", aws_domain(region))
        });
        checked_endpoint(&url, |_| false).map_err(|kind| self.fail(kind))
    }

    async fn run(&self) -> Result<ExpiringCredentials, Error> {
        let token = self.access_token().await?;
        self.role_credentials(&token).await
    }

    /// A usable access token: the cached one, refreshed if it must and can be.
    async fn access_token(&self) -> Result<String, Error> {
        let path = self.cache_path()?;
        let bytes = match read_cache(&path).await {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Err(self.login_required(format!(
                    "there is no cached SSO token ({} does not exist)",
                    path.display()
                )));
            }
            Err(source) => return Err(self.fail(SourceErrorKind::File { path, source })),
        };
        let token = parse_sso_token(&bytes).map_err(|error| {
            self.login_required(format!(
                "the cached SSO token {} is unusable: {error}",
                path.display()
            ))
        })?;
        let now = self.clock.now();
        match plan(&token, now, self.config.session.is_some()) {
            Plan::Use => Ok(token.access_token),
            Plan::LoginRequired(reason) => Err(self.login_required(reason)),
            Plan::Refresh { still_valid } => match self.refresh(&token).await {
                Ok(fresh) => {
                    let expires_at = now + fresh.expires_in;
                    // The new token is used even if the cache cannot be rewritten (as the AWS
                    // SDKs do): the credentials are obtainable, and the next login fixes the
                    // file.
                    let _ = write_cache(&path, &bytes, &fresh, expires_at).await;
                    Ok(fresh.access_token)
                }
                // The old token still works: use it, and try again next time.
                Err(_) if still_valid => Ok(token.access_token),
                Err(error) => Err(error),
            },
        }
    }

    /// SSO OIDC CreateToken with the refresh token.
    async fn refresh(&self, token: &SsoToken) -> Result<OidcToken, Error> {
        let url = format!("{}/token", self.endpoint("SSO_OIDC", "oidc")?);
        let body = serde_json::json!({
            "clientId": token.client_id.as_deref().unwrap_or_default(),
            "clientSecret": token.client_secret.as_deref().unwrap_or_default(),
            "grantType": "refresh_token",
            "refreshToken": token.refresh_token.as_deref().unwrap_or_default(),
        });
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let answer = self
            .http
            .send_retrying(
                Reach::Service,
                &self.origin(),
                ATTEMPTS,
                RETRY_PAUSE,
                || Exchange {
                    method: Method::POST,
                    url: &url,
                    headers: headers.clone(),
                    body: Bytes::from(body.to_string()),
                    timeout: EXCHANGE_TIMEOUT,
                },
            )
            .await?;
        if !answer.is_success() {
            let kind = status_error(&answer);
            if (400..500).contains(&answer.status) && !kind.is_transient() {
                return Err(self.login_required(format!(
                    "the cached SSO token has expired and its refresh was refused ({kind})"
                )));
            }
            return Err(self.fail(kind));
        }
        parse_oidc_token(&answer.body).map_err(|error| self.fail(SourceErrorKind::Document(error)))
    }

    /// The SSO portal's GetRoleCredentials.
    async fn role_credentials(&self, token: &str) -> Result<ExpiringCredentials, Error> {
        let url = format!(
            "{}/federation/credentials?role_name={}&account_id={}",
            self.endpoint("SSO", "portal.sso")?,
            s3_sigv4::uri_encode(&self.config.role_name, true),
            s3_sigv4::uri_encode(&self.config.account_id, true),
        );
        let mut bearer = HeaderValue::from_str(token).map_err(|_| {
            self.login_required(
                "the cached SSO token holds characters an HTTP header cannot carry".to_owned(),
            )
        })?;
        bearer.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-amz-sso_bearer_token"), bearer);
        let answer = self
            .http
            .send_retrying(
                Reach::Service,
                &self.origin(),
                ATTEMPTS,
                RETRY_PAUSE,
                || Exchange {
                    method: Method::GET,
                    url: &url,
                    headers: headers.clone(),
                    body: Bytes::new(),
                    timeout: EXCHANGE_TIMEOUT,
                },
            )
            .await?;
        if matches!(answer.status, 401 | 403) {
            let kind = status_error(&answer);
            return Err(
                self.login_required(format!("the SSO portal refused the cached token ({kind})"))
            );
        }
        if !answer.is_success() {
            return Err(self.fail(status_error(&answer)));
        }
        parse_sso_role_credentials(&answer.body)
            .map_err(|error| self.fail(SourceErrorKind::Document(error)))
    }
}

impl ExpiringSource for SsoProvider {
    fn fetch(&self) -> FetchFuture<'_> {
        Box::pin(self.run())
    }

    fn use_http_settings(&self, settings: &super::HttpSettings) {
        self.http.configure(settings);
    }
}

/// The SSO settings of `profile`, as the AWS CLI v2 reads them.
fn resolve_config(profiles: &ProfileSet, name: &str) -> Result<SsoConfig, Error> {
    let profile = profiles
        .profile(name)
        .ok_or_else(|| Error::ProfileNotFound {
            profile: name.to_owned(),
        })?;
    let invalid = |setting: &'static str, reason: String| Error::InvalidProfile {
        profile: name.to_owned(),
        setting,
        reason,
    };
    let required = |setting: &'static str| {
        setting_of(profile, setting)
            .map(str::to_owned)
            .ok_or_else(|| invalid(setting, "is required for SSO and not set".to_owned()))
    };
    let (start_url, region, session) = match setting_of(profile, "sso_session") {
        Some(session_name) => {
            let session = profiles.sso_session(session_name).ok_or_else(|| {
                invalid(
                    "sso_session",
                    format!("the config file has no [sso-session {session_name}] section"),
                )
            })?;
            // The session's values; the profile may repeat them, but not differently.
            let merged = |setting: &'static str| match (
                setting_of(session, setting),
                setting_of(profile, setting),
            ) {
                (Some(ours), Some(theirs)) if ours != theirs => Err(invalid(
                    setting,
                    format!(
                        "differs from the {setting} of [sso-session {session_name}]: remove it \
                         from the profile or make them equal"
                    ),
                )),
                (Some(value), _) | (None, Some(value)) => Ok(value.to_owned()),
                (None, None) => Err(invalid(
                    setting,
                    format!("is set neither in [sso-session {session_name}] nor in the profile"),
                )),
            };
            (
                merged("sso_start_url")?,
                merged("sso_region")?,
                Some(session_name.to_owned()),
            )
        }
        None => (required("sso_start_url")?, required("sso_region")?, None),
    };
    if !region
        .bytes()
        .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
    {
        return Err(invalid(
            "sso_region",
            "is not a region name (lowercase letters, digits and `-`)".to_owned(),
        ));
    }
    Ok(SsoConfig {
        start_url,
        region,
        account_id: required("sso_account_id")?,
        role_name: required("sso_role_name")?,
        session,
    })
}

/// A setting's value; empty counts as unset.
fn setting_of<'a>(section: &'a Section, setting: &str) -> Option<&'a str> {
    section
        .get(setting)
        .map(str::trim)
        .filter(|value| !value.is_empty())
}

/// What to do with a cached token at `now`.
#[derive(Debug, PartialEq, Eq)]
enum Plan {
    /// It is valid for longer than the refresh window.
    Use,
    /// Refresh it; if that fails and `still_valid`, use it anyway.
    Refresh { still_valid: bool },
    /// Nothing usable: the reason.
    LoginRequired(String),
}

fn plan(token: &SsoToken, now: SystemTime, session_form: bool) -> Plan {
    if token.expires_at > now + REFRESH_WINDOW {
        return Plan::Use;
    }
    let still_valid = token.expires_at > now;
    let not_refreshable = if !session_form {
        Some("the legacy sso_start_url configuration cannot refresh it (an sso_session can)")
    } else if token.refresh_token.is_none()
        || token.client_id.is_none()
        || token.client_secret.is_none()
        || token.registration_expires_at.is_none()
    {
        Some("the cache holds no refresh token and client registration")
    } else if token.registration_expires_at.is_some_and(|at| at <= now) {
        Some("its client registration has expired")
    } else {
        None
    };
    match not_refreshable {
        None => Plan::Refresh { still_valid },
        // Near its expiry, but still good for one more call.
        Some(_) if still_valid => Plan::Use,
        Some(why) => Plan::LoginRequired(format!("the cached SSO token has expired and {why}")),
    }
}

/// `<hex SHA-1 of key>.json`.
fn cache_file_name(key: &str) -> String {
    let digest = Sha1::digest(key.as_bytes());
    let mut name = String::with_capacity(45);
    for byte in digest.iter() {
        name.push_str(&format!("{byte:02x}"));
    }
    name.push_str(".json");
    name
}

/// The DNS suffix of AWS endpoints in `region`'s partition.
fn aws_domain(region: &str) -> &'static str {
    if region.starts_with("cn-") {
        "amazonaws.com.cn"
    } else {
        "amazonaws.com"
    }
}

/// The cache file, at most one byte more than a document may be (so that an oversized one
/// is refused by the parser, not read whole).
async fn read_cache(path: &Path) -> io::Result<Vec<u8>> {
    let file = tokio::fs::File::open(path).await?;
    let mut bytes = Vec::new();
    file.take(MAX_DOCUMENT_LEN as u64 + 1)
        .read_to_end(&mut bytes)
        .await?;
    Ok(bytes)
}

/// Rewrites the cache file `path` with the refreshed token, keeping the other fields of
/// `original`: a new file (mode 0600, created exclusively) in the same directory, renamed
/// over the old one.
async fn write_cache(
    path: &Path,
    original: &[u8],
    fresh: &OidcToken,
    expires_at: SystemTime,
) -> io::Result<()> {
    let mut document = match serde_json::from_slice::<Value>(original) {
        Ok(Value::Object(document)) => document,
        _ => Map::new(),
    };
    let expires_at = s3_xml::Timestamp::from_system_time(expires_at)
        .and_then(|at| s3_xml::Timestamp::from_unix(at.unix_seconds(), 0))
        .ok_or_else(|| io::Error::other("the new expiry is out of range"))?;
    document.insert(
        "accessToken".to_owned(),
        Value::String(fresh.access_token.clone()),
    );
    document.insert(
        "expiresAt".to_owned(),
        Value::String(expires_at.to_string()),
    );
    if let Some(refresh_token) = &fresh.refresh_token {
        document.insert(
            "refreshToken".to_owned(),
            Value::String(refresh_token.clone()),
        );
    }
    let text = serde_json::to_vec(&Value::Object(document)).map_err(io::Error::other)?;
    let directory = path
        .parent()
        .ok_or_else(|| io::Error::other("the cache file has no directory"))?;
    let (temporary, mut file) = create_temporary(directory, path).await?;
    let written = async {
        file.write_all(&text).await?;
        file.sync_all().await?;
        drop(file);
        tokio::fs::rename(&temporary, path).await
    }
    .await;
    if written.is_err() {
        let _ = tokio::fs::remove_file(&temporary).await;
    }
    written
}

/// A new, exclusively created file next to `path`.
async fn create_temporary(directory: &Path, path: &Path) -> io::Result<(PathBuf, tokio::fs::File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let stem = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut last_error = None;
    for _ in 0..8 {
        let unique = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|since| since.subsec_nanos())
            .unwrap_or_default();
        let candidate = directory.join(format!(
            ".{stem}.{}.{}.{unique}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let mut options = tokio::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(0o600);
        match options.open(&candidate).await {
            Ok(file) => return Ok((candidate, file)),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last_error = Some(error),
            Err(error) => return Err(error),
        }
    }
    Err(last_error.unwrap_or_else(|| io::Error::other("no temporary file name was free")))
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Mutex;

    use super::*;
    use crate::MapEnv;

    fn profiles(config: &str) -> ProfileSet {
        ProfileSet::parse(config, Path::new("config"), "", Path::new("credentials")).expect("parse")
    }

    const SESSION_FORM: &str = "[profile dev]\nsso_session = corp\nsso_account_id = 111122223333\n\
        sso_role_name = ReadOnly\n\
        [sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\n\
        sso_region = eu-west-1\nsso_registration_scopes = sso:account:access\n";

    #[test]
    fn session_and_legacy_configurations() {
        let config = resolve_config(&profiles(SESSION_FORM), "dev").unwrap();
        assert_eq!(
            config,
            SsoConfig {
                start_url: "https://corp.awsapps.com/start".into(),
                region: "eu-west-1".into(),
                account_id: "111122223333".into(),
                role_name: "ReadOnly".into(),
                session: Some("corp".into()),
            }
        );
        assert_eq!(config.cache_key(), "corp");

        // The profile may repeat the session's values, or supply those it lacks.
        let repeated = profiles(
            "[profile dev]\nsso_session = corp\nsso_account_id = 1\nsso_role_name = R\n\
             sso_region = us-east-2\nsso_start_url = https://corp.awsapps.com/start\n\
             [sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\n",
        );
        let config = resolve_config(&repeated, "dev").unwrap();
        assert_eq!(config.region, "us-east-2");

        let legacy = profiles(
            "[profile old]\nsso_start_url = https://old.awsapps.com/start\nsso_region = us-east-1\n\
             sso_account_id = 444455556666\nsso_role_name = Admin\n",
        );
        let config = resolve_config(&legacy, "old").unwrap();
        assert_eq!(config.session, None);
        assert_eq!(config.cache_key(), "https://old.awsapps.com/start");
    }

    #[test]
    fn misconfigurations_name_the_setting() {
        let cases: [(&str, &str); 7] = [
            (
                "[profile p]\nsso_session = missing\nsso_account_id = 1\nsso_role_name = R\n",
                "sso_session",
            ),
            (
                "[profile p]\nsso_session = s\nsso_account_id = 1\nsso_role_name = R\n\
                 sso_region = us-east-1\n[sso-session s]\nsso_region = eu-west-1\n\
                 sso_start_url = https://x/start\n",
                "sso_region",
            ),
            (
                "[profile p]\nsso_session = s\nsso_account_id = 1\nsso_role_name = R\n\
                 [sso-session s]\nsso_region = eu-west-1\n",
                "sso_start_url",
            ),
            (
                "[profile p]\nsso_session = s\nsso_role_name = R\n\
                 [sso-session s]\nsso_region = eu-west-1\nsso_start_url = https://x/start\n",
                "sso_account_id",
            ),
            (
                "[profile p]\nsso_start_url = https://x/start\nsso_region = eu-west-1\n\
                 sso_account_id = 1\nsso_role_name =\n",
                "sso_role_name",
            ),
            (
                "[profile p]\nsso_start_url = https://x/start\nsso_account_id = 1\n\
                 sso_role_name = R\n",
                "sso_region",
            ),
            (
                "[profile p]\nsso_start_url = https://x/start\nsso_region = evil.com/x?\n\
                 sso_account_id = 1\nsso_role_name = R\n",
                "sso_region",
            ),
        ];
        for (config, expected) in cases {
            match resolve_config(&profiles(config), "p") {
                Err(Error::InvalidProfile {
                    profile, setting, ..
                }) => {
                    assert_eq!((profile.as_str(), setting), ("p", expected), "{config}");
                }
                other => panic!("{config}: {other:?}"),
            }
        }
        assert!(matches!(
            resolve_config(&profiles(SESSION_FORM), "absent"),
            Err(Error::ProfileNotFound { .. })
        ));
    }

    #[test]
    fn cache_file_names_are_the_sha1_of_the_key() {
        // `printf corp | sha1sum`
        assert_eq!(
            cache_file_name("corp"),
            "ee0bfd2552fbd840c02cc48b6e823320543c450f.json"
        );
        let env: Arc<dyn Env> = Arc::new(MapEnv::new().with_home("/home/u"));
        let provider = SsoProvider::from_profile(env, &profiles(SESSION_FORM), "dev").unwrap();
        assert_eq!(
            provider.cache_path().unwrap(),
            Path::new("/home/u/.aws/sso/cache/ee0bfd2552fbd840c02cc48b6e823320543c450f.json")
        );
    }

    #[test]
    fn endpoints_default_to_the_region_and_follow_the_overrides() {
        let provider = |env: MapEnv, config: &str| {
            SsoProvider::from_profile(Arc::new(env), &profiles(config), "dev").unwrap()
        };
        let p = provider(MapEnv::new(), SESSION_FORM);
        assert_eq!(
            p.endpoint("SSO", "portal.sso").unwrap(),
            "https://portal.sso.eu-west-1.amazonaws.com"
        );
        assert_eq!(
            p.endpoint("SSO_OIDC", "oidc").unwrap(),
            "https://oidc.eu-west-1.amazonaws.com"
        );
        let china = SESSION_FORM.replace("eu-west-1", "cn-north-1");
        assert_eq!(
            provider(MapEnv::new(), &china)
                .endpoint("SSO", "portal.sso")
                .unwrap(),
            "https://portal.sso.cn-north-1.amazonaws.com.cn"
        );
        let p = provider(
            MapEnv::new()
                .with_var("AWS_ENDPOINT_URL_SSO", "http://127.0.0.1:1/")
                .with_var("AWS_ENDPOINT_URL", "https://global.example"),
            SESSION_FORM,
        );
        assert_eq!(
            p.endpoint("SSO", "portal.sso").unwrap(),
            "http://127.0.0.1:1"
        );
        assert_eq!(
            p.endpoint("SSO_OIDC", "oidc").unwrap(),
            "https://global.example"
        );
        let p = provider(
            MapEnv::new().with_var("AWS_ENDPOINT_URL_SSO", "http://sso.example.com"),
            SESSION_FORM,
        );
        assert!(matches!(
            p.endpoint("SSO", "portal.sso"),
            Err(Error::Source {
                kind: SourceErrorKind::ForbiddenEndpoint { .. },
                ..
            })
        ));
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(
            s3_sigv4::uri_encode("Read Only+&=/é~._-", true),
            "Read%20Only%2B%26%3D%2F%C3%A9~._-"
        );
    }

    fn token(expires_in: i64, refreshable: bool, registration_in: i64) -> SsoToken {
        let at = |offset: i64| {
            if offset >= 0 {
                now() + Duration::from_secs(offset.unsigned_abs())
            } else {
                now() - Duration::from_secs(offset.unsigned_abs())
            }
        };
        let json = if refreshable {
            format!(
                r#"{{"accessToken": "a", "expiresAt": "{}", "refreshToken": "r",
                    "clientId": "c", "clientSecret": "s", "registrationExpiresAt": "{}"}}"#,
                s3_xml::Timestamp::from_system_time(at(expires_in)).unwrap(),
                s3_xml::Timestamp::from_system_time(at(registration_in)).unwrap(),
            )
        } else {
            format!(
                r#"{{"accessToken": "a", "expiresAt": "{}"}}"#,
                s3_xml::Timestamp::from_system_time(at(expires_in)).unwrap()
            )
        };
        parse_sso_token(json.as_bytes()).unwrap()
    }

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_800_000_000)
    }

    #[test]
    fn when_a_token_is_used_refreshed_or_refused() {
        let hour = 3600;
        // Valid beyond the window: used as it is, refreshable or not.
        assert_eq!(plan(&token(hour, true, hour), now(), true), Plan::Use);
        assert_eq!(plan(&token(301, false, 0), now(), false), Plan::Use);
        // In the window: refreshed if it can be, else used while it lasts.
        assert_eq!(
            plan(&token(120, true, hour), now(), true),
            Plan::Refresh { still_valid: true }
        );
        assert_eq!(plan(&token(120, false, 0), now(), true), Plan::Use);
        assert_eq!(plan(&token(120, true, hour), now(), false), Plan::Use);
        // Expired.
        assert_eq!(
            plan(&token(-10, true, hour), now(), true),
            Plan::Refresh { still_valid: false }
        );
        assert_eq!(
            plan(&token(0, true, hour), now(), true),
            Plan::Refresh { still_valid: false }
        );
        for (token, session_form, why) in [
            (token(-10, false, 0), true, "no refresh token"),
            (token(-10, true, -1), true, "registration has expired"),
            (token(-10, true, hour), false, "legacy"),
        ] {
            match plan(&token, now(), session_form) {
                Plan::LoginRequired(reason) => assert!(reason.contains(why), "{reason}"),
                other => panic!("{why}: {other:?}"),
            }
        }
    }

    /// A clock stuck at one instant.
    #[derive(Debug)]
    struct Fixed(Mutex<SystemTime>);

    impl Clock for Fixed {
        fn now(&self) -> SystemTime {
            *self.0.lock().unwrap()
        }
    }

    #[test]
    fn the_injected_clock_decides_expiry_and_files_are_read_off_thread() {
        let home = tempfile::tempdir().unwrap();
        let cache = home.path().join(".aws/sso/cache");
        std::fs::create_dir_all(&cache).unwrap();
        // A non-refreshable token expiring at now() + 1 hour.
        std::fs::write(
            cache.join(cache_file_name("corp")),
            format!(
                r#"{{"accessToken": "tok-s3cr3t", "expiresAt": "{}"}}"#,
                s3_xml::Timestamp::from_system_time(now() + Duration::from_secs(3600)).unwrap()
            ),
        )
        .unwrap();
        let clock = Arc::new(Fixed(Mutex::new(now())));
        let provider = SsoProvider::with_http(
            Arc::new(MapEnv::new().with_home(home.path())),
            &profiles(SESSION_FORM),
            "dev",
            Arc::default(),
            clock.clone(),
        )
        .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        assert_eq!(
            runtime.block_on(provider.access_token()).unwrap(),
            "tok-s3cr3t"
        );
        *clock.0.lock().unwrap() = now() + Duration::from_secs(3601);
        let error = runtime.block_on(provider.access_token()).unwrap_err();
        match &error {
            Error::Source {
                origin: Origin::Sso { profile },
                kind: SourceErrorKind::SsoLoginRequired { reason, remedy },
            } => {
                assert_eq!(profile, "dev");
                assert!(reason.contains("expired"), "{reason}");
                assert_eq!(remedy, "aws sso login --profile dev");
            }
            other => panic!("{other:?}"),
        }
        assert!(!error.is_transient());
        assert!(!format!("{error} {error:?}").contains("tok-s3cr3t"));
    }

    #[test]
    fn remedies_quote_odd_profile_names() {
        let config = SESSION_FORM.replace("[profile dev]", "[profile my dev]");
        let provider = SsoProvider::from_profile(
            Arc::new(MapEnv::new().with_home("/nonexistent/s3-wire")),
            &profiles(&config),
            "my dev",
        )
        .unwrap();
        match provider.login_required("r".into()) {
            Error::Source {
                kind: SourceErrorKind::SsoLoginRequired { remedy, .. },
                ..
            } => assert_eq!(remedy, "aws sso login --profile 'my dev'"),
            other => panic!("{other:?}"),
        }
    }
}

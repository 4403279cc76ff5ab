//! EC2 instance metadata (IMDSv2): credentials of the instance's role, and its region.
//!
//! As aws-config and botocore do: a session token is obtained with
//! `PUT /latest/api/token` (header `x-aws-ec2-metadata-token-ttl-seconds: 21600`) and sent
//! as `x-aws-ec2-metadata-token` with every `GET`, reused until a minute before its TTL ends
//! and renewed once when a `GET` answers 401 (the service forgot it). IMDSv1 (requests
//! without a token) is never used, so an instance that requires IMDSv2 and one that allows
//! both work alike; an instance whose metadata service refuses the token request (`403`)
//! fails rather than falling back.
//!
//! The requests are short and few so that a machine without instance metadata (a laptop,
//! a CI runner) is not slowed: 1 second per attempt (connection included) and 2 attempts
//! for transient failures (unreachable, timed out, 5xx), about 2 seconds in all.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use tokio::time::Instant;

use super::documents::{DocumentError, parse_container_credentials};
use super::http::{Answer, Exchange, Http, Reach, checked_endpoint, status_error};
use super::{
    Env, Error, ExpiringCredentials, ExpiringSource, FetchFuture, Origin, ProcessEnv,
    SourceErrorKind, env_var,
};

/// Turns instance metadata off when `true` (case-insensitive).
const DISABLED_VAR: &str = "AWS_EC2_METADATA_DISABLED";
/// The endpoint, a full URL.
const ENDPOINT_VAR: &str = "AWS_EC2_METADATA_SERVICE_ENDPOINT";
/// `IPv4` or `IPv6`, when no endpoint is set.
const MODE_VAR: &str = "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE";

const IPV4_ADDRESS: IpAddr = IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254));
const IPV6_ADDRESS: IpAddr = IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254));
const IPV4_ENDPOINT: &str = "http://169.254.169.254";
const IPV6_ENDPOINT: &str = "http://[fd00:ec2::254]";

const TOKEN_PATH: &str = "/latest/api/token";
const ROLES_PATH: &str = "/latest/meta-data/iam/security-credentials/";
const REGION_PATH: &str = "/latest/meta-data/placement/region";

const TOKEN_HEADER: HeaderName = HeaderName::from_static("x-aws-ec2-metadata-token");
const TOKEN_TTL_HEADER: HeaderName =
    HeaderName::from_static("x-aws-ec2-metadata-token-ttl-seconds");
/// The TTL asked for: 6 hours, the maximum (as the SDKs do).
const TOKEN_TTL: Duration = Duration::from_secs(21_600);
/// A token is renewed this long before its TTL ends.
const TOKEN_RENEW_AHEAD: Duration = Duration::from_secs(60);

/// Per attempt, connection included.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);
/// In all, for transient failures.
const DEFAULT_ATTEMPTS: u32 = 2;

/// A session token and when to stop using it.
#[derive(Clone)]
struct Token {
    /// Marked sensitive.
    value: HeaderValue,
    renew_at: Instant,
}

impl Token {
    fn is_fresh(&self, now: Instant) -> bool {
        now < self.renew_at
    }
}

/// A client of the EC2 instance metadata service, IMDSv2 only (see the
/// [crate documentation](crate)).
///
/// Configured by these variables (empty ones count as unset), read at every call:
/// * `AWS_EC2_METADATA_DISABLED`: `true` (case-insensitive) turns it off; every call then
///   fails with [`SourceErrorKind::Disabled`] without any request;
/// * `AWS_EC2_METADATA_SERVICE_ENDPOINT`: the endpoint as a full URL (`https://…`, or
///   `http://` to a loopback address or one of the two addresses below);
/// * else `AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE`: `IPv4` (the default,
///   `http://169.254.169.254`) or `IPv6` (`http://[fd00:ec2::254]`), case-insensitive;
///   another value is [`SourceErrorKind::Misconfigured`].
///
/// Each request has 1 second (see [`with_timeout`](Self::with_timeout)) and is attempted
/// twice in all when it fails transiently (see [`with_attempts`](Self::with_attempts)).
/// The session token is shared by the calls of one client. Errors name
/// [`Origin::InstanceMetadata`] and never contain the token or a credential.
pub struct ImdsClient {
    env: Arc<dyn Env>,
    http: Arc<Http>,
    timeout: Duration,
    attempts: u32,
    /// Locked while a token is fetched, so that concurrent calls share one request.
    token: tokio::sync::Mutex<Option<Token>>,
}

impl fmt::Debug for ImdsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the token.
        f.debug_struct("ImdsClient")
            .field("env", &self.env)
            .field("timeout", &self.timeout)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

impl ImdsClient {
    /// The client configured by the process environment.
    pub fn new() -> Self {
        Self::with_env(Arc::new(ProcessEnv))
    }

    /// The client configured by `env` (the variables of [`ImdsClient`]).
    pub fn with_env(env: Arc<dyn Env>) -> Self {
        Self::with_http(env, Arc::default())
    }

    pub(crate) fn with_http(env: Arc<dyn Env>, http: Arc<Http>) -> Self {
        Self {
            env,
            http,
            timeout: DEFAULT_TIMEOUT,
            attempts: DEFAULT_ATTEMPTS,
            token: tokio::sync::Mutex::new(None),
        }
    }

    /// Sets how long each request may take, connection included (default 1 second; the
    /// connection itself is bounded to 1 second whatever this says).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets how many times in all a request is attempted when it fails transiently:
    /// unreachable, timed out, or a 5xx / 429 answer (default 2; at least 1).
    pub fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts.max(1);
        self
    }

    /// True if `AWS_EC2_METADATA_DISABLED` is `true` (case-insensitive).
    pub fn is_disabled(&self) -> bool {
        env_var(self.env.as_ref(), DISABLED_VAR).is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    /// The instance's region (`GET /latest/meta-data/placement/region`), e.g. `eu-west-1`.
    pub async fn region(&self) -> Result<String, Error> {
        let answer = self.get(REGION_PATH).await?;
        if !answer.is_success() {
            return Err(fail(status_error(&answer)));
        }
        let region = std::str::from_utf8(&answer.body)
            .map_err(|_| {
                fail(SourceErrorKind::Document(DocumentError::WrongType(
                    "region",
                )))
            })?
            .trim();
        if region.is_empty() {
            return Err(fail(SourceErrorKind::Document(
                DocumentError::MissingField("region"),
            )));
        }
        if !region
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return Err(fail(SourceErrorKind::Document(DocumentError::WrongType(
                "region",
            ))));
        }
        Ok(region.to_owned())
    }

    /// The credentials of the instance's role: its name from
    /// `GET /latest/meta-data/iam/security-credentials/`, then the role's document.
    async fn credentials(&self) -> Result<ExpiringCredentials, Error> {
        let answer = self.get(ROLES_PATH).await?;
        let role = if answer.is_success() {
            std::str::from_utf8(&answer.body)
                .ok()
                .and_then(|text| text.lines().map(str::trim).find(|line| !line.is_empty()))
                .map(str::to_owned)
        } else if answer.status == 404 {
            None
        } else {
            return Err(fail(status_error(&answer)));
        };
        let Some(role) = role else {
            return Err(fail(SourceErrorKind::Status {
                status: answer.status,
                code: None,
                message: Some(
                    "no IAM role is attached to this instance (it has no instance profile, or \
                     the profile has no role): attach one, or configure another credential \
                     source"
                        .to_owned(),
                ),
                request_id: None,
            }));
        };
        let answer = self.get(&format!("{ROLES_PATH}{role}")).await?;
        if !answer.is_success() {
            return Err(fail(status_error(&answer)));
        }
        parse_container_credentials(&answer.body).map_err(|e| fail(SourceErrorKind::Document(e)))
    }

    /// The endpoint, without a trailing `/`, or why there is none.
    fn endpoint(&self) -> Result<String, Error> {
        if self.is_disabled() {
            return Err(fail(SourceErrorKind::Disabled {
                variable: DISABLED_VAR,
            }));
        }
        let env = self.env.as_ref();
        if let Some(url) = env_var(env, ENDPOINT_VAR) {
            return checked_endpoint(&url, is_metadata_address).map_err(fail);
        }
        match env_var(env, MODE_VAR) {
            None => Ok(IPV4_ENDPOINT.to_owned()),
            Some(mode) if mode.eq_ignore_ascii_case("ipv4") => Ok(IPV4_ENDPOINT.to_owned()),
            Some(mode) if mode.eq_ignore_ascii_case("ipv6") => Ok(IPV6_ENDPOINT.to_owned()),
            Some(mode) => Err(fail(SourceErrorKind::Misconfigured {
                setting: MODE_VAR.to_owned(),
                reason: format!("{mode:?} is neither IPv4 nor IPv6"),
            })),
        }
    }

    /// `GET path` with the session token; on a 401 a new token, and the `GET` once more.
    /// Any status is returned: the caller interprets it.
    async fn get(&self, path: &str) -> Result<Answer, Error> {
        let endpoint = self.endpoint()?;
        let url = format!("{endpoint}{path}");
        let mut refused = None;
        loop {
            let token = self.token(&endpoint, refused.as_ref()).await?;
            let answer = self
                .http
                .send_retrying(
                    Reach::Metadata,
                    &ORIGIN,
                    self.attempts,
                    Duration::ZERO,
                    || {
                        let mut headers = HeaderMap::new();
                        headers.insert(TOKEN_HEADER, token.clone());
                        Exchange {
                            method: Method::GET,
                            url: &url,
                            headers,
                            body: Bytes::new(),
                            timeout: self.timeout,
                        }
                    },
                )
                .await?;
            if answer.status == 401 && refused.is_none() {
                refused = Some(token);
                continue;
            }
            return Ok(answer);
        }
    }

    /// The session token: the one held if still fresh (and not `refused`), else a new one.
    async fn token(
        &self,
        endpoint: &str,
        refused: Option<&HeaderValue>,
    ) -> Result<HeaderValue, Error> {
        let mut held = self.token.lock().await;
        if let Some(token) = held.as_ref()
            && token.is_fresh(Instant::now())
            && refused != Some(&token.value)
        {
            return Ok(token.value.clone());
        }
        *held = None;
        let token = self.new_token(endpoint).await?;
        let value = token.value.clone();
        *held = Some(token);
        Ok(value)
    }

    async fn new_token(&self, endpoint: &str) -> Result<Token, Error> {
        let url = format!("{endpoint}{TOKEN_PATH}");
        let asked_at = Instant::now();
        let answer = self
            .http
            .send_retrying(
                Reach::Metadata,
                &ORIGIN,
                self.attempts,
                Duration::ZERO,
                || {
                    let mut headers = HeaderMap::new();
                    headers.insert(TOKEN_TTL_HEADER, HeaderValue::from(TOKEN_TTL.as_secs()));
                    Exchange {
                        method: Method::PUT,
                        url: &url,
                        headers,
                        body: Bytes::new(),
                        timeout: self.timeout,
                    }
                },
            )
            .await?;
        if !answer.is_success() {
            return Err(fail(status_error(&answer)));
        }
        // The TTL granted, if the service says (it echoes the one asked for).
        let ttl = answer
            .headers
            .get(&TOKEN_TTL_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(TOKEN_TTL, Duration::from_secs);
        let text = std::str::from_utf8(&answer.body).unwrap_or_default().trim();
        let value = HeaderValue::from_str(text)
            .ok()
            .filter(|_| !text.is_empty());
        let Some(mut value) = value else {
            // Not quoted: it may be a token.
            return Err(fail(SourceErrorKind::Misconfigured {
                setting: ENDPOINT_VAR.to_owned(),
                reason: "the endpoint answered the token request with an empty token or one \
                         that is not a valid header value: is it an instance metadata service?"
                    .to_owned(),
            }));
        };
        value.set_sensitive(true);
        Ok(Token {
            value,
            renew_at: renew_at(asked_at, ttl),
        })
    }
}

impl Default for ImdsClient {
    fn default() -> Self {
        Self::new()
    }
}

const ORIGIN: Origin = Origin::InstanceMetadata;

fn fail(kind: SourceErrorKind) -> Error {
    Error::from_source(ORIGIN, kind)
}

/// When a token asked for at `asked_at`, valid for `ttl`, is renewed.
fn renew_at(asked_at: Instant, ttl: Duration) -> Instant {
    asked_at + ttl.saturating_sub(TOKEN_RENEW_AHEAD)
}

/// The two instance metadata addresses, which plain HTTP may reach.
fn is_metadata_address(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<IpAddr>()
        .is_ok_and(|ip| ip == IPV4_ADDRESS || ip == IPV6_ADDRESS)
}

/// Credentials of the EC2 instance's role, from instance metadata (IMDSv2 only), through
/// an [`ImdsClient`]: the variables and limits are the client's. Wrap it in a
/// [`CachingProvider`](super::CachingProvider) to sign with it.
#[derive(Debug, Default)]
pub struct ImdsProvider {
    client: ImdsClient,
}

impl ImdsProvider {
    /// The provider configured by the process environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// The provider configured by `env` (the variables of [`ImdsClient`]).
    pub fn with_env(env: Arc<dyn Env>) -> Self {
        Self::with_http(env, Arc::default())
    }

    pub(crate) fn with_http(env: Arc<dyn Env>, http: Arc<Http>) -> Self {
        Self {
            client: ImdsClient::with_http(env, http),
        }
    }

    /// See [`ImdsClient::with_timeout`].
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.client = self.client.with_timeout(timeout);
        self
    }

    /// See [`ImdsClient::with_attempts`].
    pub fn with_attempts(mut self, attempts: u32) -> Self {
        self.client = self.client.with_attempts(attempts);
        self
    }

    /// The client it fetches with (its session token is shared with [`ImdsClient::region`]).
    pub fn client(&self) -> &ImdsClient {
        &self.client
    }

    /// See [`ImdsClient::is_disabled`].
    pub fn is_disabled(&self) -> bool {
        self.client.is_disabled()
    }
}

impl ExpiringSource for ImdsProvider {
    fn fetch(&self) -> FetchFuture<'_> {
        Box::pin(self.client.credentials())
    }

    fn use_http_settings(&self, settings: &super::HttpSettings) {
        self.client.http.configure(settings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MapEnv;

    fn client(env: MapEnv) -> ImdsClient {
        ImdsClient::with_env(Arc::new(env))
    }

    fn endpoint(env: MapEnv) -> Result<String, Error> {
        client(env).endpoint()
    }

    #[test]
    fn default_endpoint_is_ipv4_and_mode_selects_ipv6() {
        assert_eq!(endpoint(MapEnv::new()).unwrap(), "http://169.254.169.254");
        for mode in ["IPv4", "ipv4", "IPV4"] {
            let env = MapEnv::new().with_var(MODE_VAR, mode);
            assert_eq!(endpoint(env).unwrap(), "http://169.254.169.254", "{mode}");
        }
        for mode in ["IPv6", "ipv6"] {
            let env = MapEnv::new().with_var(MODE_VAR, mode);
            assert_eq!(endpoint(env).unwrap(), "http://[fd00:ec2::254]", "{mode}");
        }
        // Empty counts as unset.
        let env = MapEnv::new().with_var(MODE_VAR, "");
        assert_eq!(endpoint(env).unwrap(), "http://169.254.169.254");
        let env = MapEnv::new().with_var(MODE_VAR, "IPv5");
        match endpoint(env) {
            Err(Error::Source {
                origin: Origin::InstanceMetadata,
                kind: SourceErrorKind::Misconfigured { setting, reason },
            }) => {
                assert_eq!(setting, MODE_VAR);
                assert!(reason.contains("IPv5"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn endpoint_variable_wins_and_plain_http_is_limited() {
        let with = |url: &str| {
            endpoint(
                MapEnv::new()
                    .with_var(ENDPOINT_VAR, url)
                    .with_var(MODE_VAR, "IPv6"),
            )
        };
        assert_eq!(
            with("http://127.0.0.1:1338/").unwrap(),
            "http://127.0.0.1:1338"
        );
        assert_eq!(
            with("http://localhost:8080").unwrap(),
            "http://localhost:8080"
        );
        assert_eq!(
            with("http://169.254.169.254").unwrap(),
            "http://169.254.169.254"
        );
        assert_eq!(
            with("http://[fd00:ec2::254]:80").unwrap(),
            "http://[fd00:ec2::254]:80"
        );
        assert_eq!(
            with("https://imds.example.com").unwrap(),
            "https://imds.example.com"
        );
        for refused in [
            "http://imds.example.com",
            "http://169.254.169.253",
            "http://0.0.0.0",
            "http://[fd00:ec2::23]",
            "ftp://127.0.0.1",
            "not a url",
        ] {
            assert!(
                matches!(
                    with(refused),
                    Err(Error::Source {
                        kind: SourceErrorKind::ForbiddenEndpoint { .. },
                        ..
                    })
                ),
                "{refused}"
            );
        }
    }

    #[tokio::test]
    async fn disabled_fails_every_call_without_a_request() {
        for value in ["true", "TRUE", "True"] {
            // An endpoint nobody listens on: a request would fail differently.
            let env = MapEnv::new()
                .with_var(DISABLED_VAR, value)
                .with_var(ENDPOINT_VAR, "http://127.0.0.1:9");
            let provider = ImdsProvider::with_env(Arc::new(env));
            assert!(provider.is_disabled());
            let disabled = |result: Result<_, Error>| {
                matches!(
                    result,
                    Err(Error::Source {
                        origin: Origin::InstanceMetadata,
                        kind: SourceErrorKind::Disabled {
                            variable: "AWS_EC2_METADATA_DISABLED"
                        },
                    })
                )
            };
            assert!(disabled(provider.fetch().await.map(|_| ())), "{value}");
            assert!(
                disabled(provider.client().region().await.map(|_| ())),
                "{value}"
            );
        }
        for value in ["false", "", "1", "yes"] {
            let env = MapEnv::new().with_var(DISABLED_VAR, value);
            assert!(!client(env).is_disabled(), "{value:?}");
        }
        assert!(!client(MapEnv::new()).is_disabled());
    }

    #[test]
    fn defaults_are_short_and_settable() {
        let client = client(MapEnv::new());
        assert_eq!(
            (client.timeout, client.attempts),
            (Duration::from_secs(1), 2)
        );
        let client = client
            .with_timeout(Duration::from_millis(50))
            .with_attempts(0);
        assert_eq!(
            (client.timeout, client.attempts),
            (Duration::from_millis(50), 1)
        );
    }

    #[test]
    fn token_is_renewed_a_minute_before_its_ttl() {
        let asked = Instant::now();
        let token = Token {
            value: HeaderValue::from_static("t"),
            renew_at: renew_at(asked, TOKEN_TTL),
        };
        assert!(token.is_fresh(asked + Duration::from_secs(21_600 - 61)));
        assert!(!token.is_fresh(asked + Duration::from_secs(21_600 - 60)));
        // A TTL shorter than the margin: used for the request it was fetched for only.
        assert!(
            !Token {
                renew_at: renew_at(asked, Duration::from_secs(30)),
                ..token
            }
            .is_fresh(asked)
        );
    }

    #[test]
    fn debug_shows_no_token() {
        let client = client(MapEnv::new());
        let mut value = HeaderValue::from_static("SECRET-IMDS-TOKEN");
        value.set_sensitive(true);
        *client.token.try_lock().unwrap() = Some(Token {
            value,
            renew_at: Instant::now() + TOKEN_TTL,
        });
        let debug = format!("{client:?} {:?}", ImdsProvider::default());
        assert!(!debug.contains("SECRET-IMDS-TOKEN"), "{debug}");
    }
}

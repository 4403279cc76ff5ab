//! The ECS / EKS container credentials endpoint.
//!
//! ECS sets `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` (a path on `http://169.254.170.2`);
//! EKS Pod Identity and other hosts set `AWS_CONTAINER_CREDENTIALS_FULL_URI` with an
//! authorization token, in a file (`AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`, which EKS
//! rotates) or in a variable (`AWS_CONTAINER_AUTHORIZATION_TOKEN`). The answer is the JSON
//! role-credentials document (`AccessKeyId`, `SecretAccessKey`, `Token`, `Expiration`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION};
use http::{HeaderMap, HeaderValue, Method};

use super::documents::parse_container_credentials;
use super::http::{Exchange, Http, Reach, checked_endpoint, is_loopback, status_error};
use super::{
    Env, Error, ExpiringCredentials, ExpiringSource, FetchFuture, Origin, ProcessEnv,
    SourceErrorKind, env_var,
};

const RELATIVE_URI_VAR: &str = "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI";
const FULL_URI_VAR: &str = "AWS_CONTAINER_CREDENTIALS_FULL_URI";
const TOKEN_FILE_VAR: &str = "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE";
const TOKEN_VAR: &str = "AWS_CONTAINER_AUTHORIZATION_TOKEN";

/// The ECS endpoint, which `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` is a path on.
const ECS_ENDPOINT: &str = "http://169.254.170.2";
const ECS_ADDRESS: IpAddr = IpAddr::V4(Ipv4Addr::new(169, 254, 170, 2));
/// The EKS Pod Identity agent's addresses.
const EKS_ADDRESS_V4: IpAddr = IpAddr::V4(Ipv4Addr::new(169, 254, 170, 23));
const EKS_ADDRESS_V6: IpAddr = IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23));

const PLAIN_HTTP_REFUSED: &str = "plain http:// is only allowed to a loopback address \
    (localhost, 127.0.0.0/8, ::1), the ECS endpoint 169.254.170.2 or the EKS Pod Identity \
    endpoints 169.254.170.23 and fd00:ec2::23; use https:// for any other host";

/// Per attempt, connection included.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
/// In all, for transient failures.
const DEFAULT_ATTEMPTS: u32 = 2;

const ORIGIN: Origin = Origin::Container;

fn fail(kind: SourceErrorKind) -> Error {
    Error::from_source(ORIGIN, kind)
}

/// Credentials from the ECS / EKS container endpoint. Wrap it in a
/// [`CachingProvider`](super::CachingProvider) to sign with it.
///
/// Configured by these variables (empty ones count as unset), read at every fetch:
/// * `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`: a path (starting with `/`) on the ECS
///   endpoint `http://169.254.170.2`; it wins over the full URI;
/// * else `AWS_CONTAINER_CREDENTIALS_FULL_URI`: an `https://` URL to any host, or a plain
///   `http://` one to a loopback address (`localhost`, 127.0.0.0/8, `::1`), the ECS
///   address `169.254.170.2` or the EKS Pod Identity addresses `169.254.170.23` /
///   `fd00:ec2::23`; any other is [`SourceErrorKind::ForbiddenEndpoint`] (no request);
/// * `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`: a file whose content (trailing whitespace
///   removed), read at every fetch, is sent as the `Authorization` header; else
///   `AWS_CONTAINER_AUTHORIZATION_TOKEN`, the header's value itself. A token that is not
///   a valid header value (a line break, say) is [`SourceErrorKind::Misconfigured`]; an
///   unreadable file is [`SourceErrorKind::File`].
///
/// Each request has 2 seconds (see [`with_timeout`](Self::with_timeout)) and is attempted
/// twice in all when it fails transiently (see [`with_attempts`](Self::with_attempts)).
/// A non-2xx answer is a [`SourceErrorKind::Status`]. Errors name [`Origin::Container`]
/// and never contain the token or a credential.
#[derive(Debug)]
pub struct ContainerProvider {
    env: Arc<dyn Env>,
    http: Arc<Http>,
    timeout: Duration,
    attempts: u32,
}

impl ContainerProvider {
    /// The provider configured by the process environment.
    pub fn new() -> Self {
        Self::with_env(Arc::new(ProcessEnv))
    }

    /// The provider configured by `env` (the variables of [`ContainerProvider`]).
    pub fn with_env(env: Arc<dyn Env>) -> Self {
        Self::with_http(env, Arc::default())
    }

    pub(crate) fn with_http(env: Arc<dyn Env>, http: Arc<Http>) -> Self {
        Self {
            env,
            http,
            timeout: DEFAULT_TIMEOUT,
            attempts: DEFAULT_ATTEMPTS,
        }
    }

    /// Sets how long each request may take, connection included (default 2 seconds; the
    /// connection itself is bounded to 1 second whatever this says).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets how many times in all the request is attempted when it fails transiently:
    /// unreachable, timed out, or a 5xx / 429 answer (default 2; at least 1).
    pub fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts.max(1);
        self
    }

    /// True if `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or
    /// `AWS_CONTAINER_CREDENTIALS_FULL_URI` is set (and not empty).
    pub fn is_configured(&self) -> bool {
        let env = self.env.as_ref();
        env_var(env, RELATIVE_URI_VAR).is_some() || env_var(env, FULL_URI_VAR).is_some()
    }

    /// The URL to fetch, or why it may not be used.
    fn url(&self) -> Result<String, Error> {
        let env = self.env.as_ref();
        if let Some(relative) = env_var(env, RELATIVE_URI_VAR) {
            if !relative.starts_with('/') {
                return Err(fail(SourceErrorKind::Misconfigured {
                    setting: RELATIVE_URI_VAR.to_owned(),
                    reason: "it must be a path starting with `/`".to_owned(),
                }));
            }
            let url = format!("{ECS_ENDPOINT}{relative}");
            // Whatever the path holds, the request goes to the ECS address.
            let parsed = reqwest::Url::parse(&url).ok();
            let host = parsed.as_ref().and_then(|u| u.host_str());
            if host.is_none_or(|host| !is_container_address(host)) {
                return Err(fail(SourceErrorKind::Misconfigured {
                    setting: RELATIVE_URI_VAR.to_owned(),
                    reason: "it does not make a valid URL on http://169.254.170.2".to_owned(),
                }));
            }
            return Ok(url);
        }
        let Some(full) = env_var(env, FULL_URI_VAR) else {
            return Err(fail(SourceErrorKind::Misconfigured {
                setting: FULL_URI_VAR.to_owned(),
                reason: format!("neither it nor {RELATIVE_URI_VAR} is set"),
            }));
        };
        let plain_http_host = reqwest::Url::parse(&full).ok().and_then(|url| {
            (url.scheme() == "http")
                .then(|| url.host_str().map(str::to_owned))
                .flatten()
        });
        if let Some(host) = plain_http_host
            && !is_loopback(&host)
            && !is_container_address(&host)
        {
            return Err(fail(SourceErrorKind::ForbiddenEndpoint {
                url: full,
                reason: PLAIN_HTTP_REFUSED,
            }));
        }
        // The scheme and the rest; the URL is used as written (its path matters).
        checked_endpoint(&full, is_container_address).map_err(fail)?;
        Ok(full)
    }

    /// The `Authorization` header's value, if one is configured: the token file's content
    /// (read now) or the token variable.
    async fn authorization(&self) -> Result<Option<HeaderValue>, Error> {
        let env = self.env.as_ref();
        let (token, setting) = if let Some(path) = env_var(env, TOKEN_FILE_VAR) {
            let path = PathBuf::from(path);
            let text = tokio::fs::read_to_string(&path)
                .await
                .map_err(|source| fail(SourceErrorKind::File { path, source }))?;
            (text.trim_end().to_owned(), TOKEN_FILE_VAR)
        } else if let Some(token) = env_var(env, TOKEN_VAR) {
            (token, TOKEN_VAR)
        } else {
            return Ok(None);
        };
        // Never quoted: it is a secret.
        let invalid = |reason: &str| {
            fail(SourceErrorKind::Misconfigured {
                setting: setting.to_owned(),
                reason: reason.to_owned(),
            })
        };
        if token.is_empty() {
            return Err(invalid("the authorization token is empty"));
        }
        let mut value = HeaderValue::from_str(&token).map_err(|_| {
            invalid(
                "the authorization token contains a line break or another character that is \
                 not allowed in an HTTP header",
            )
        })?;
        value.set_sensitive(true);
        Ok(Some(value))
    }

    async fn credentials(&self) -> Result<ExpiringCredentials, Error> {
        let url = self.url()?;
        let authorization = self.authorization().await?;
        let answer = self
            .http
            .send_retrying(
                Reach::Metadata,
                &ORIGIN,
                self.attempts,
                Duration::ZERO,
                || {
                    let mut headers = HeaderMap::new();
                    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
                    if let Some(value) = &authorization {
                        headers.insert(AUTHORIZATION, value.clone());
                    }
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
        if !answer.is_success() {
            return Err(fail(status_error(&answer)));
        }
        parse_container_credentials(&answer.body).map_err(|e| fail(SourceErrorKind::Document(e)))
    }
}

impl Default for ContainerProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl ExpiringSource for ContainerProvider {
    fn fetch(&self) -> FetchFuture<'_> {
        Box::pin(self.credentials())
    }

    fn use_http_settings(&self, settings: &super::HttpSettings) {
        self.http.configure(settings);
    }
}

/// The ECS and EKS Pod Identity addresses, which plain HTTP may reach.
fn is_container_address(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.parse::<IpAddr>()
        .is_ok_and(|ip| ip == ECS_ADDRESS || ip == EKS_ADDRESS_V4 || ip == EKS_ADDRESS_V6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MapEnv;

    fn provider(env: MapEnv) -> ContainerProvider {
        ContainerProvider::with_env(Arc::new(env))
    }

    fn url(env: MapEnv) -> Result<String, Error> {
        provider(env).url()
    }

    fn full(uri: &str) -> Result<String, Error> {
        url(MapEnv::new().with_var(FULL_URI_VAR, uri))
    }

    #[test]
    fn relative_uri_is_on_the_ecs_address_and_wins() {
        let env = MapEnv::new().with_var(RELATIVE_URI_VAR, "/v2/credentials/abc-123");
        assert!(provider(env.clone()).is_configured());
        assert_eq!(
            url(env.clone()).unwrap(),
            "http://169.254.170.2/v2/credentials/abc-123"
        );
        let both = env.with_var(FULL_URI_VAR, "http://127.0.0.1:8080/elsewhere");
        assert_eq!(
            url(both).unwrap(),
            "http://169.254.170.2/v2/credentials/abc-123"
        );
        // A path that would read as a host is still a path on the ECS address.
        let env = MapEnv::new().with_var(RELATIVE_URI_VAR, "//evil.example.com/x");
        assert_eq!(
            url(env).unwrap(),
            "http://169.254.170.2//evil.example.com/x"
        );
        for bad in ["v2/credentials", "@evil.example.com/x"] {
            let env = MapEnv::new().with_var(RELATIVE_URI_VAR, bad);
            assert!(
                matches!(
                    url(env),
                    Err(Error::Source {
                        origin: Origin::Container,
                        kind: SourceErrorKind::Misconfigured { ref setting, .. },
                    }) if setting == RELATIVE_URI_VAR
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn full_uri_hosts_allowed_and_refused() {
        for allowed in [
            "https://creds.example.com/v1/credentials",
            "http://127.0.0.1:8080/creds",
            "http://127.3.4.5/creds",
            "http://localhost:51679/creds",
            "http://[::1]:8080/creds",
            "http://169.254.170.2/v2/credentials/x",
            "http://169.254.170.23/v1/credentials",
            "http://[fd00:ec2::23]/v1/credentials",
        ] {
            // Used as written, trailing `/` and all.
            assert_eq!(full(allowed).unwrap(), allowed);
        }
        assert_eq!(full("http://127.0.0.1/x/").unwrap(), "http://127.0.0.1/x/");
        for refused in [
            "http://creds.example.com/v1/credentials",
            "http://169.254.169.254/latest",
            "http://10.0.0.1/creds",
            "http://0.0.0.0:8080/creds",
            "http://[::ffff:127.0.0.1]/creds",
        ] {
            match full(refused) {
                Err(Error::Source {
                    origin: Origin::Container,
                    kind: SourceErrorKind::ForbiddenEndpoint { url, reason },
                }) => {
                    assert_eq!(url, refused);
                    for named in [
                        "loopback",
                        "169.254.170.2",
                        "169.254.170.23",
                        "fd00:ec2::23",
                    ] {
                        assert!(reason.contains(named), "{reason}");
                    }
                }
                other => panic!("{refused}: {other:?}"),
            }
        }
        for refused in ["ftp://127.0.0.1/creds", "not a url"] {
            assert!(
                matches!(
                    full(refused),
                    Err(Error::Source {
                        kind: SourceErrorKind::ForbiddenEndpoint { .. },
                        ..
                    })
                ),
                "{refused}"
            );
        }
    }

    #[test]
    fn configured_only_by_a_uri_variable() {
        assert!(!provider(MapEnv::new()).is_configured());
        let env = MapEnv::new()
            .with_var(RELATIVE_URI_VAR, "")
            .with_var(TOKEN_VAR, "t");
        assert!(!provider(env).is_configured());
        assert!(
            provider(MapEnv::new().with_var(FULL_URI_VAR, "http://127.0.0.1/")).is_configured()
        );
        assert!(matches!(
            url(MapEnv::new()),
            Err(Error::Source {
                kind: SourceErrorKind::Misconfigured { .. },
                ..
            })
        ));
        let defaults = provider(MapEnv::new());
        assert_eq!(
            (defaults.timeout, defaults.attempts),
            (Duration::from_secs(2), 2)
        );
    }

    #[tokio::test]
    async fn authorization_from_the_file_first_then_the_variable() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "FILE-TOKEN-SECRET \r\n\n").unwrap();
        let env = MapEnv::new()
            .with_var(TOKEN_FILE_VAR, file.to_str().unwrap())
            .with_var(TOKEN_VAR, "VAR-TOKEN-SECRET");
        let value = provider(env.clone())
            .authorization()
            .await
            .unwrap()
            .unwrap();
        assert_eq!(value, "FILE-TOKEN-SECRET");
        assert!(value.is_sensitive());
        // Read at every call.
        std::fs::write(&file, "ROTATED-TOKEN").unwrap();
        let value = provider(env).authorization().await.unwrap().unwrap();
        assert_eq!(value, "ROTATED-TOKEN");

        let env = MapEnv::new().with_var(TOKEN_VAR, "VAR-TOKEN-SECRET");
        let value = provider(env).authorization().await.unwrap().unwrap();
        assert_eq!(value, "VAR-TOKEN-SECRET");
        assert!(value.is_sensitive());
        assert!(
            provider(MapEnv::new())
                .authorization()
                .await
                .unwrap()
                .is_none()
        );

        let missing = dir.path().join("absent");
        let env = MapEnv::new().with_var(TOKEN_FILE_VAR, missing.to_str().unwrap());
        match provider(env).authorization().await {
            Err(Error::Source {
                origin: Origin::Container,
                kind: SourceErrorKind::File { path, source },
            }) => {
                assert_eq!(path, missing);
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_token_that_is_not_a_header_value_is_refused_unquoted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "SECRET-PART\r\nX-Injected: 1\n").unwrap();
        let from_file = MapEnv::new().with_var(TOKEN_FILE_VAR, file.to_str().unwrap());
        let from_var = MapEnv::new().with_var(TOKEN_VAR, "SECRET-PART\nX-Injected: 1");
        let with_nul = MapEnv::new().with_var(TOKEN_VAR, "SECRET-PART\0");
        for (env, variable) in [
            (from_file, TOKEN_FILE_VAR),
            (from_var, TOKEN_VAR),
            (with_nul, TOKEN_VAR),
        ] {
            let error = provider(env).authorization().await.unwrap_err();
            assert!(
                matches!(
                    error,
                    Error::Source {
                        kind: SourceErrorKind::Misconfigured { ref setting, .. },
                        ..
                    } if setting == variable
                ),
                "{error:?}"
            );
            let shown = format!("{error} {error:?}");
            assert!(!shown.contains("SECRET-PART"), "{shown}");
        }
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "\n").unwrap();
        let env = MapEnv::new().with_var(TOKEN_FILE_VAR, empty.to_str().unwrap());
        assert!(matches!(
            provider(env).authorization().await,
            Err(Error::Source {
                kind: SourceErrorKind::Misconfigured { .. },
                ..
            })
        ));
    }
}

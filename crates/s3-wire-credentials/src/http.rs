//! The HTTP exchanges of the credential sources, on the client's own reqwest and rustls
//! (no second HTTP or TLS stack): one client per kind of endpoint, built on first use,
//! answers read up to a bound, every exchange under a deadline.

use std::net::IpAddr;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, Method};

use super::error::{Error, Origin, SourceErrorKind};
use super::{Env, env_var};
use crate::transport::{self, TransportConfig};

/// The largest answer a credential endpoint may send: real ones are 1–4 KiB.
pub(crate) const MAX_ANSWER_LEN: usize = 64 * 1024;

/// Which kind of endpoint a request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Instance metadata and the container endpoint: link-local or loopback, never
    /// through a proxy, and quick to connect or absent (a laptop has none).
    Metadata,
    /// STS and the SSO portal: AWS services, through the proxy variables like S3.
    Service,
}

/// The HTTP clients of the credential sources, built when first needed, with the TLS and
/// proxy settings of the client that uses them ([`Http::configure`]) or the defaults.
#[derive(Default)]
pub(crate) struct Http {
    settings: OnceLock<HttpSettings>,
    metadata: OnceLock<Result<reqwest::Client, String>>,
    service: OnceLock<Result<reqwest::Client, String>>,
}

/// The TLS and proxy settings of an s3-wire `Client`, which the credential sources that call
/// AWS (STS, SSO, the container endpoint) use too: the same CA bundle, client certificate
/// and proxy, as the AWS CLI applies them (instance metadata and the container endpoint are
/// never reached through a proxy). Handed to a provider by s3-wire's `ClientBuilder::build`
/// through [`CredentialsProvider::use_http_settings`](super::CredentialsProvider::use_http_settings);
/// built here ([`HttpSettings::new`]) by a caller with an HTTP stack of its own.
#[derive(Clone, Debug)]
pub struct HttpSettings {
    pub(crate) tls: std::sync::Arc<crate::transport::TlsSettings>,
    pub(crate) proxy: crate::transport::ProxySettings,
}

impl HttpSettings {
    /// The settings of clients that trust `tls` and go through `proxy`.
    pub fn new(
        tls: std::sync::Arc<crate::transport::TlsSettings>,
        proxy: crate::transport::ProxySettings,
    ) -> Self {
        Self { tls, proxy }
    }
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            tls: std::sync::Arc::new(crate::transport::TlsSettings::platform()),
            proxy: crate::transport::ProxySettings {
                from_env: true,
                ..crate::transport::ProxySettings::default()
            },
        }
    }
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Http")
    }
}

/// One answer: status, headers and the whole (bounded) body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Answer {
    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// A request of a credential source.
pub(crate) struct Exchange<'a> {
    pub(crate) method: Method,
    pub(crate) url: &'a str,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    /// The deadline of the whole exchange, connection included.
    pub(crate) timeout: Duration,
}

impl Http {
    /// Uses `settings` for the clients not built yet (the first call wins: a provider shared
    /// by several clients keeps the first one's).
    pub(crate) fn configure(&self, settings: &HttpSettings) {
        let _ = self.settings.set(settings.clone());
    }

    fn client(&self, reach: Reach) -> Result<&reqwest::Client, SourceErrorKind> {
        let (slot, connect_timeout, bypass_proxies) = match reach {
            Reach::Metadata => (&self.metadata, Duration::from_secs(1), true),
            Reach::Service => (&self.service, Duration::from_millis(3100), false),
        };
        slot.get_or_init(|| {
            let settings = self.settings.get_or_init(HttpSettings::default);
            transport::build(
                &TransportConfig {
                    connect_timeout,
                    pool_idle_timeout: Duration::from_secs(30),
                    pool_max_idle_per_host: 2,
                    http2: false,
                    user_agent: concat!("s3-wire/", env!("CARGO_PKG_VERSION")).to_owned(),
                    tls: settings.tls.clone(),
                    resolve_overrides: Vec::new(),
                    proxy: settings.proxy.clone(),
                    bypass_proxies,
                },
                None,
            )
            .map_err(|error| error.to_string())
        })
        .as_ref()
        .map_err(|error| SourceErrorKind::Transport(error.clone().into()))
    }

    /// Sends `exchange` and reads the answer (at most [`MAX_ANSWER_LEN`] bytes). Failures
    /// name `origin`.
    pub(crate) async fn send(
        &self,
        reach: Reach,
        exchange: Exchange<'_>,
        origin: &Origin,
    ) -> Result<Answer, Error> {
        let fail = |kind| Error::from_source(origin.clone(), kind);
        let client = self.client(reach).map_err(fail)?;
        let timeout = exchange.timeout;
        let request = client
            .request(exchange.method, exchange.url)
            .headers(exchange.headers)
            .body(exchange.body)
            .build()
            .map_err(|error| fail(SourceErrorKind::Transport(Box::new(error))))?;
        let exchange = async {
            let mut response = client.execute(request).await?;
            let status = response.status().as_u16();
            let headers = std::mem::take(response.headers_mut());
            let mut body = BytesMut::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_ANSWER_LEN {
                    return Ok(Err(SourceErrorKind::TooLarge {
                        limit: MAX_ANSWER_LEN,
                    }));
                }
                body.extend_from_slice(&chunk);
            }
            Ok::<_, reqwest::Error>(Ok(Answer {
                status,
                headers,
                body: body.freeze(),
            }))
        };
        match tokio::time::timeout(timeout, exchange).await {
            Err(_) => Err(fail(SourceErrorKind::Timeout(timeout))),
            Ok(Err(error)) if error.is_timeout() => Err(fail(SourceErrorKind::Timeout(timeout))),
            Ok(Err(error)) => Err(fail(SourceErrorKind::Transport(Box::new(error)))),
            Ok(Ok(answer)) => answer.map_err(fail),
        }
    }
}

impl Http {
    /// Sends the exchange `make` builds, up to `attempts` times in all while it fails
    /// transiently (unreachable, timed out, or an answer [`status_error`] calls transient:
    /// 5xx, 429, throttling), waiting `pause` (doubled each time) in between. The last
    /// answer is returned whatever its status.
    pub(crate) async fn send_retrying<'u>(
        &self,
        reach: Reach,
        origin: &Origin,
        attempts: u32,
        pause: Duration,
        make: impl Fn() -> Exchange<'u>,
    ) -> Result<Answer, Error> {
        let mut attempt = 1;
        loop {
            let result = self.send(reach, make(), origin).await;
            let transient = match &result {
                Ok(answer) => !answer.is_success() && status_error(answer).is_transient(),
                Err(error) => error.is_transient(),
            };
            if !transient || attempt >= attempts {
                return result;
            }
            tokio::time::sleep(pause * (1 << (attempt - 1))).await;
            attempt += 1;
        }
    }
}

/// Checks that credentials may be sent to `url`: HTTPS anywhere, plain HTTP only to a
/// loopback address or to a host `also_plain` accepts (the metadata addresses). Returns
/// the URL without a trailing `/`.
pub(crate) fn checked_endpoint(
    url: &str,
    also_plain: impl Fn(&str) -> bool,
) -> Result<String, SourceErrorKind> {
    let forbidden = |reason| SourceErrorKind::ForbiddenEndpoint {
        url: url.to_owned(),
        reason,
    };
    let parsed = reqwest::Url::parse(url).map_err(|_| forbidden("not a URL"))?;
    let host = parsed.host_str().ok_or_else(|| forbidden("no host"))?;
    match parsed.scheme() {
        "https" => {}
        "http" if is_loopback(host) || also_plain(host) => {}
        "http" => {
            return Err(forbidden(
                "plain http:// is only used for loopback addresses (credentials would cross \
                 the network unencrypted)",
            ));
        }
        _ => {
            return Err(forbidden(
                "the scheme must be https:// (or http:// to loopback)",
            ));
        }
    }
    Ok(url.trim_end_matches('/').to_owned())
}

/// The endpoint configured for an AWS service other than S3: `AWS_ENDPOINT_URL_<SERVICE>`
/// (`STS`, `SSO`, `SSO_OIDC`), else `AWS_ENDPOINT_URL`; none when
/// `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is `true`. This is also how tests point each source
/// at its fake.
pub(crate) fn configured_endpoint(env: &dyn Env, service: &str) -> Option<String> {
    if env_var(env, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        return None;
    }
    env_var(env, &format!("AWS_ENDPOINT_URL_{service}"))
        .or_else(|| env_var(env, "AWS_ENDPOINT_URL"))
}

/// `localhost` or a loopback IP (`[::1]` included).
pub(crate) fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The code, message and request id of an error answer: STS's and S3's XML error
/// documents, or AWS JSON errors (`{"__type"|"code"|"error", "message"}`).
pub(crate) fn status_error(answer: &Answer) -> SourceErrorKind {
    let header = |name: &str| {
        answer
            .headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    let mut code = None;
    let mut message = None;
    let mut request_id = header("x-amzn-requestid").or_else(|| header("x-amz-request-id"));
    if let Ok(document) = s3_xml::decode_error_document(&answer.body, &s3_xml::Limits::default()) {
        code = Some(document.code);
        message = document.message;
        request_id = request_id.or(document.request_id);
    } else if let Ok(serde_json::Value::Object(object)) =
        serde_json::from_slice::<serde_json::Value>(&answer.body)
    {
        let text = |name: &str| object.get(name).and_then(|v| v.as_str()).map(str::to_owned);
        code = text("__type")
            .or_else(|| text("code"))
            .or_else(|| text("error"))
            .or_else(|| text("Code"));
        message = text("message").or_else(|| text("Message"));
    }
    // Service messages do not carry secrets, but keep them to one readable line.
    let message = message.map(|m| m.chars().take(512).collect());
    SourceErrorKind::Status {
        status: answer.status,
        code: code.map(|c| c.chars().take(128).collect()),
        message,
        request_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_to_loopback_or_the_allowed_hosts() {
        let none = |_: &str| false;
        assert_eq!(
            checked_endpoint("http://127.0.0.1:8080/", none).unwrap(),
            "http://127.0.0.1:8080"
        );
        assert!(checked_endpoint("http://[::1]:80", none).is_ok());
        assert!(checked_endpoint("http://localhost", none).is_ok());
        assert!(checked_endpoint("https://sts.example.com", none).is_ok());
        for refused in ["http://sts.example.com", "ftp://127.0.0.1", "not a url"] {
            assert!(
                matches!(
                    checked_endpoint(refused, none),
                    Err(SourceErrorKind::ForbiddenEndpoint { .. })
                ),
                "{refused}"
            );
        }
        assert!(checked_endpoint("http://169.254.169.254", |h| h == "169.254.169.254").is_ok());
    }

    #[test]
    fn error_answers_of_both_shapes() {
        let xml = Answer {
            status: 403,
            headers: HeaderMap::new(),
            body: Bytes::from_static(
                b"<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>\
                  <Message>not allowed</Message></Error><RequestId>r-1</RequestId></ErrorResponse>",
            ),
        };
        match status_error(&xml) {
            SourceErrorKind::Status {
                status,
                code,
                message,
                request_id,
            } => {
                assert_eq!(status, 403);
                assert_eq!(code.as_deref(), Some("AccessDenied"));
                assert_eq!(message.as_deref(), Some("not allowed"));
                assert_eq!(request_id.as_deref(), Some("r-1"));
            }
            other => panic!("{other:?}"),
        }
        let json = Answer {
            status: 401,
            headers: HeaderMap::new(),
            body: Bytes::from_static(br#"{"__type":"UnauthorizedException","message":"expired"}"#),
        };
        assert!(matches!(
            status_error(&json),
            SourceErrorKind::Status { code: Some(ref c), .. } if c == "UnauthorizedException"
        ));
    }
}

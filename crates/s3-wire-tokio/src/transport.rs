//! The HTTP transport: one `reqwest` client (one connection pool) per
//! [`Client`](crate::Client), TLS by rustls with the `ring` provider and the
//! platform's root certificates.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::body::BodyError;
use crate::error::{Error, ErrorKind, TimeoutKind, TransportErrorKind};

/// Transport settings taken from the client configuration.
#[derive(Clone, Debug)]
pub(crate) struct TransportConfig {
    pub(crate) connect_timeout: Duration,
    pub(crate) pool_idle_timeout: Duration,
    pub(crate) pool_max_idle_per_host: usize,
    pub(crate) http2: bool,
    pub(crate) user_agent: String,
    /// DER certificates trusted in addition to the platform's roots.
    pub(crate) extra_roots: Vec<Vec<u8>>,
    /// Host names connected to a fixed address instead of being resolved.
    pub(crate) resolve_overrides: Vec<(String, SocketAddr)>,
    /// Ignore the proxy variables (`HTTP_PROXY`, ...): set for loopback endpoints,
    /// which a proxy (on another machine) cannot reach, and on request.
    pub(crate) bypass_proxies: bool,
}

/// The rustls configuration: the `ring` provider and the platform's root
/// certificates (plus `extra_roots`). Loading the platform's roots costs
/// milliseconds, so the verifier without extra roots is built once per process.
fn tls_config(http2: bool, extra_roots: &[Vec<u8>]) -> Result<rustls::ClientConfig, Error> {
    static VERIFIER: OnceLock<Result<Arc<rustls_platform_verifier::Verifier>, String>> =
        OnceLock::new();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots_error =
        |e: String| Error::config(format!("loading the platform's root certificates: {e}"));
    let verifier = if extra_roots.is_empty() {
        VERIFIER
            .get_or_init(|| {
                rustls_platform_verifier::Verifier::new(provider.clone())
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(roots_error)?
    } else {
        let extra = extra_roots
            .iter()
            .map(|der| rustls::pki_types::CertificateDer::from(der.clone()));
        Arc::new(
            rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone())
                .map_err(|e| roots_error(e.to_string()))?,
        )
    };
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::config(format!("TLS setup: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = if http2 {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    Ok(config)
}

/// The most header fields an HTTP/1.1 response may have. hyper's default of 100 would
/// fail a HEAD of an object with ~90 user metadata entries, which S3 stores (its limit is
/// 2 KB of metadata, so up to about a thousand short entries); the size of the response
/// head stays bounded by hyper's read buffer (about 400 KiB) either way.
const MAX_RESPONSE_HEADERS: usize = 1024;

pub(crate) fn build(config: &TransportConfig) -> Result<reqwest::Client, Error> {
    let builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls_config(config.http2, &config.extra_roots)?)
        .connect_timeout(config.connect_timeout)
        .pool_idle_timeout(config.pool_idle_timeout)
        .pool_max_idle_per_host(config.pool_max_idle_per_host)
        .tcp_nodelay(true)
        .user_agent(config.user_agent.clone())
        // Redirects and retries are S3-specific (re-signing, region hints):
        // the client handles them, never the transport.
        .redirect(reqwest::redirect::Policy::none())
        .retry(reqwest::retry::never());
    let builder = config
        .resolve_overrides
        .iter()
        .fold(builder, |builder, (host, addr)| {
            builder.resolve(host, *addr)
        });
    let builder = if config.bypass_proxies {
        builder.no_proxy()
    } else {
        builder
    };
    let builder = if config.http2 {
        builder
    } else {
        builder.http1_only()
    };
    let builder = builder.http1_max_headers(MAX_RESPONSE_HEADERS);
    builder
        .build()
        .map_err(|e| Error::config("building the HTTP client failed").with_source(e))
}

/// Maps a transport failure reported by reqwest to the client's error.
pub(crate) fn map_error(error: reqwest::Error, connect_timeout: Duration) -> Error {
    if let Some(body) = find_cause::<BodyError>(&error as &(dyn std::error::Error + 'static)) {
        let kind = ErrorKind::RequestBody(body.message.clone());
        return Error::new(kind).with_source(error);
    }
    let kind =
        if find_cause::<rustls::Error>(&error as &(dyn std::error::Error + 'static)).is_some() {
            ErrorKind::Transport(TransportErrorKind::Tls)
        } else if error.is_connect() {
            if is_timeout(&error) {
                ErrorKind::Timeout(TimeoutKind::Connect(connect_timeout))
            } else {
                ErrorKind::Transport(TransportErrorKind::Connect)
            }
        } else if error.is_timeout() {
            ErrorKind::Timeout(TimeoutKind::Connect(connect_timeout))
        } else if error.is_redirect() || error.is_builder() || is_not_http(&error) {
            ErrorKind::Transport(TransportErrorKind::Protocol)
        } else {
            ErrorKind::Transport(TransportErrorKind::ConnectionDropped)
        };
    Error::new(kind).with_source(error)
}

/// The first error of type `E` in `error`'s source chain, looking inside
/// `io::Error`s too (whose `source()` skips the error they wrap).
fn find_cause<'a, E: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a E> {
    let mut next = Some(error);
    while let Some(cause) = next {
        if let Some(found) = cause.downcast_ref::<E>() {
            return Some(found);
        }
        if let Some(inner) = cause
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            && let Some(found) = find_cause::<E>(inner)
        {
            return Some(found);
        }
        next = cause.source();
    }
    None
}

/// Whether the answer could not be parsed as HTTP (not HTTP at all, a malformed status
/// line or header, a head too large or with too many fields: all `is_parse`): the server
/// is not speaking
/// HTTP to us, and asking again will not change that, unlike a dropped connection.
fn is_not_http(error: &reqwest::Error) -> bool {
    find_cause::<hyper::Error>(error as &(dyn std::error::Error + 'static))
        .is_some_and(hyper::Error::is_parse)
}

fn is_timeout(error: &reqwest::Error) -> bool {
    if error.is_timeout() {
        return true;
    }
    find_cause::<std::io::Error>(error as &(dyn std::error::Error + 'static))
        .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_found_inside_io_errors() {
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, tls);
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("connect failed")
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let outer = Outer(io);
        let found = find_cause::<rustls::Error>(&outer).expect("found through the io::Error");
        assert!(matches!(found, rustls::Error::InvalidCertificate(_)));
        assert!(find_cause::<BodyError>(&outer).is_none());
    }
}

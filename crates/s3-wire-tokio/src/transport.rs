//! The HTTP transport of a [`Client`](crate::Client): one `reqwest` client (one connection
//! pool) per client, built by s3-wire-credentials' transport with the TLS and proxy settings
//! it shares with the client's credential sources, and what reqwest's failures mean here.

use std::sync::OnceLock;
use std::time::Duration;

pub(crate) use s3_wire_credentials::transport::{ProxySettings, TlsSettings, TransportConfig};

use crate::body::BodyError;
use crate::error::{Error, ErrorKind, TimeoutKind, TransportErrorKind};

/// Where a client's HTTP client comes from.
pub(crate) enum Transport {
    /// Built here from the configuration.
    Build(TransportConfig),
    /// The caller's own (`ClientBuilder::http_client`).
    Given(reqwest::Client),
}

/// The most header fields an HTTP/1.1 response read by the wide client
/// ([`HttpClients::wide`]) may have. S3 stores up to 2 KB of user metadata, so up to several
/// hundred short entries, above hyper's default of 100 fields; the size of the response head
/// stays bounded by hyper's read buffer (about 400 KiB) either way.
const WIDE_RESPONSE_HEADERS: usize = 1024;

/// The HTTP clients of a [`Client`](crate::Client). Every request goes through `common`,
/// whose HTTP/1.1 parser reads hyper's default of up to 100 response header fields on the
/// stack. A limit set in its builder, even 100, makes hyper initialise two arrays of that
/// many entries for every response (10,300 instructions per response at 1,024, an eighth of
/// a small request's CPU: measurements/client-cpu-2026-12-02.md). A response with more
/// fields (an object with hundreds of metadata entries) fails there as "too large" and the
/// request is sent again through `wide`, built on first need with the same settings
/// (and the same cached TLS configuration) and a limit of [`WIDE_RESPONSE_HEADERS`].
pub(crate) struct HttpClients {
    common: reqwest::Client,
    /// `None` for the caller's own client (`ClientBuilder::http_client`): its limits are
    /// the caller's.
    wide: Option<(TransportConfig, OnceLock<reqwest::Client>)>,
}

impl HttpClients {
    pub(crate) fn new(transport: Transport) -> Result<Self, Error> {
        Ok(match transport {
            Transport::Build(config) => Self {
                common: build(&config, None)?,
                wide: Some((config, OnceLock::new())),
            },
            Transport::Given(client) => Self {
                common: client,
                wide: None,
            },
        })
    }

    /// Whether the HTTP client is the caller's own.
    pub(crate) fn is_given(&self) -> bool {
        self.wide.is_none()
    }

    /// The client every request goes through first.
    pub(crate) fn common(&self) -> &reqwest::Client {
        &self.common
    }

    /// The client that reads responses of up to [`WIDE_RESPONSE_HEADERS`] header fields;
    /// `None` for the caller's own client.
    pub(crate) fn wide(&self) -> Option<Result<&reqwest::Client, Error>> {
        let (config, wide) = self.wide.as_ref()?;
        if let Some(client) = wide.get() {
            return Some(Ok(client));
        }
        // Two requests may build one each at once; one is kept.
        Some(build(config, Some(WIDE_RESPONSE_HEADERS)).map(|built| wide.get_or_init(|| built)))
    }
}

/// Whether `error` is an HTTP/1.1 response head the parser gave up on as too large: more
/// header fields than it reads, or more bytes than its buffer holds. (hyper names this case
/// only with its `server` feature, `is_parse_too_large`; without it, by its message, which
/// `tests/hostile_servers.rs` pins: a head of 600 fields must be read.)
pub(crate) fn is_head_too_large(error: &Error) -> bool {
    find_cause::<hyper::Error>(error as &(dyn std::error::Error + 'static))
        .is_some_and(|error| error.is_parse() && error.to_string().contains("too large"))
}

/// Builds a reqwest client; `max_response_headers` replaces hyper's default limit of
/// HTTP/1.1 response header fields.
pub(crate) fn build(
    config: &TransportConfig,
    max_response_headers: Option<usize>,
) -> Result<reqwest::Client, Error> {
    s3_wire_credentials::transport::build(config, max_response_headers).map_err(Error::from)
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
        } else if is_proxy_authentication_refused(&error) {
            ErrorKind::Transport(TransportErrorKind::ProxyAuthentication)
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

/// Whether the proxy answered the tunnel's CONNECT with 407. hyper-util's `TunnelError`
/// is not exported, so its message is what there is to recognise
/// (`ProxyAuthRequired` displays as "proxy authorization required").
fn is_proxy_authentication_refused(error: &reqwest::Error) -> bool {
    fn says_so(error: &(dyn std::error::Error + 'static)) -> bool {
        let mut next = Some(error);
        while let Some(cause) = next {
            if cause.to_string().contains("proxy authorization required") {
                return true;
            }
            if let Some(inner) = cause
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                && says_so(inner)
            {
                return true;
            }
            next = cause.source();
        }
        false
    }
    says_so(error)
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

//! The HTTP transport: one `reqwest` client (one connection pool) per
//! [`Client`](crate::Client), TLS by rustls with the `ring` provider, the platform's root
//! certificates and what the builder adds (CA bundles, a client certificate), and the
//! proxy the builder or the environment names.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::body::BodyError;
use crate::error::{Error, ErrorKind, TimeoutKind, TransportErrorKind};
use crate::tls::RecentlyBuilt;

/// Where a client's HTTP client comes from.
pub(crate) enum Transport {
    /// Built here from the configuration.
    Build(TransportConfig),
    /// The caller's own (`ClientBuilder::http_client`).
    Given(reqwest::Client),
}

/// Transport settings taken from the client configuration.
#[derive(Clone, Debug)]
pub(crate) struct TransportConfig {
    pub(crate) connect_timeout: Duration,
    pub(crate) pool_idle_timeout: Duration,
    pub(crate) pool_max_idle_per_host: usize,
    pub(crate) http2: bool,
    pub(crate) user_agent: String,
    /// What TLS trusts and presents.
    pub(crate) tls: Arc<TlsSettings>,
    /// Host names connected to a fixed address instead of being resolved.
    pub(crate) resolve_overrides: Vec<(String, SocketAddr)>,
    /// Which proxy requests go through.
    pub(crate) proxy: ProxySettings,
    /// Never through a proxy: set for loopback endpoints, which a proxy (on another
    /// machine) cannot reach, and for the instance metadata and container endpoints.
    pub(crate) bypass_proxies: bool,
}

/// What a client's TLS trusts and presents (shared with its credential sources).
#[derive(Clone, Default)]
pub(crate) struct TlsSettings {
    /// Trusted besides (or, without `platform_roots`, instead of) the platform's roots.
    pub(crate) extra_roots: Vec<CertificateDer<'static>>,
    /// Whether the platform's roots are trusted (default: yes).
    pub(crate) platform_roots: bool,
    /// Accept any server certificate (`ClientBuilder::danger_accept_invalid_certificates`).
    pub(crate) accept_invalid: bool,
    /// The client certificate chain and key for servers that ask for one (mTLS).
    pub(crate) identity: Option<(Vec<CertificateDer<'static>>, Arc<PrivateKeyDer<'static>>)>,
}

impl TlsSettings {
    /// The platform's roots and nothing else.
    pub(crate) fn platform() -> Self {
        Self {
            platform_roots: true,
            ..Self::default()
        }
    }

    fn is_platform_only(&self) -> bool {
        self.platform_roots && self.extra_roots.is_empty() && !self.accept_invalid
    }
}

impl std::fmt::Debug for TlsSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSettings")
            .field("extra_roots", &self.extra_roots.len())
            .field("platform_roots", &self.platform_roots)
            .field("accept_invalid", &self.accept_invalid)
            .field(
                "identity",
                &self.identity.as_ref().map(|_| "<certificate and key>"),
            )
            .finish()
    }
}

/// Which proxy requests go through: an explicit one, the environment's, or none.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct ProxySettings {
    /// `http://host:port` or `https://host:port`, without credentials.
    pub(crate) url: Option<String>,
    /// Basic credentials for the proxy.
    pub(crate) credentials: Option<(String, String)>,
    /// Hosts that bypass the explicit proxy (`NO_PROXY` syntax).
    pub(crate) no_proxy: Option<String>,
    /// Without an explicit proxy: whether `HTTP_PROXY` and the like are used.
    pub(crate) from_env: bool,
}

impl std::fmt::Debug for ProxySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxySettings")
            .field("url", &self.url)
            .field(
                "credentials",
                &self
                    .credentials
                    .as_ref()
                    .map(|(user, _)| (user, "<redacted>")),
            )
            .field("no_proxy", &self.no_proxy)
            .field("from_env", &self.from_env)
            .finish()
    }
}

/// Accepts every server certificate: what `danger_accept_invalid_certificates` asks for.
/// Signatures of the handshake are still checked (the connection is encrypted), but not who
/// is at the other end.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The platform's verifier (its root certificates, plus extra roots), made at the first
/// certificate check instead of when a client is built. On Linux that loads and parses
/// every certificate of the system's store (milliseconds, tens of millions of
/// instructions), which a client that only speaks plain HTTP, or is built and dropped,
/// never needs. The verifier of the platform's roots alone is one per process; a failure
/// to load them fails each handshake as a TLS error naming the cause.
struct PlatformVerifier {
    extra_roots: Vec<CertificateDer<'static>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
    loaded: OnceLock<Result<rustls_platform_verifier::Verifier, String>>,
}

impl PlatformVerifier {
    fn new(
        extra_roots: Vec<CertificateDer<'static>>,
        provider: Arc<rustls::crypto::CryptoProvider>,
    ) -> Self {
        Self {
            extra_roots,
            provider,
            loaded: OnceLock::new(),
        }
    }

    fn loaded(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        self.loaded
            .get_or_init(|| {
                rustls_platform_verifier::Verifier::new_with_extra_roots(
                    self.extra_roots.iter().cloned(),
                    self.provider.clone(),
                )
                .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| {
                rustls::Error::General(format!("loading the platform's root certificates: {e}"))
            })
    }
}

impl std::fmt::Debug for PlatformVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlatformVerifier")
            .field("extra_roots", &self.extra_roots.len())
            .field("loaded", &self.loaded.get().map(Result::is_ok))
            .finish_non_exhaustive()
    }
}

impl rustls::client::danger::ServerCertVerifier for PlatformVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        self.loaded()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.loaded()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.loaded()?.verify_tls13_signature(message, cert, dss)
    }

    /// Asked for the first message of a handshake, before any certificate: answered
    /// from the provider (what the platform's verifier answers too), without the roots.
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The rustls configuration of a client, built once per process for each trust (platform
/// roots, CA bundle, accept-any) and ALPN list, and cloned: a clone shares its verifier,
/// provider and TLS session cache. So clients of one process resume each other's sessions,
/// and a CA bundle's verifier, with the platform's roots it adds to (millions of
/// instructions to load), is made once, not by every client that trusts the bundle. A
/// configuration with a client certificate is built for its client alone.
fn tls_config(http2: bool, tls: &TlsSettings) -> Result<rustls::ClientConfig, Error> {
    /// What a configuration was built for.
    struct Trust {
        http2: bool,
        platform_roots: bool,
        accept_invalid: bool,
        extra_roots: Vec<CertificateDer<'static>>,
    }
    static BUILT: RecentlyBuilt<Trust, rustls::ClientConfig> = RecentlyBuilt::new();
    if tls.identity.is_some() {
        return build_tls_config(http2, tls);
    }
    BUILT.get_or_build(
        |trust| {
            trust.http2 == http2
                && trust.platform_roots == tls.platform_roots
                && trust.accept_invalid == tls.accept_invalid
                && trust.extra_roots == tls.extra_roots
        },
        || {
            let trust = Trust {
                http2,
                platform_roots: tls.platform_roots,
                accept_invalid: tls.accept_invalid,
                extra_roots: tls.extra_roots.clone(),
            };
            Ok((trust, build_tls_config(http2, tls)?))
        },
    )
}

/// Builds a rustls configuration: the `ring` provider; the platform's root certificates
/// (plus extra roots, loaded at the first handshake: [`PlatformVerifier`]), only the given
/// roots, or (asked for by name) none; a client certificate if one is set.
fn build_tls_config(http2: bool, tls: &TlsSettings) -> Result<rustls::ClientConfig, Error> {
    static PLATFORM_ONLY: OnceLock<Arc<PlatformVerifier>> = OnceLock::new();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier: Arc<dyn rustls::client::danger::ServerCertVerifier> = if tls.accept_invalid {
        Arc::new(AcceptAnyCertificate(provider.clone()))
    } else if tls.is_platform_only() {
        PLATFORM_ONLY
            .get_or_init(|| Arc::new(PlatformVerifier::new(Vec::new(), provider.clone())))
            .clone()
    } else if tls.platform_roots {
        // The extra roots are checked now, so a garbled one fails the build; the
        // platform's are loaded at the first handshake.
        extra_root_store(&tls.extra_roots)?;
        Arc::new(PlatformVerifier::new(
            tls.extra_roots.clone(),
            provider.clone(),
        ))
    } else {
        if tls.extra_roots.is_empty() {
            return Err(Error::config(
                "the platform's root certificates are turned off and no other root \
                 certificate is given: no server could be trusted (add a CA bundle)",
            ));
        }
        rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(extra_root_store(&tls.extra_roots)?),
            provider.clone(),
        )
        .build()
        .map_err(|e| Error::config(format!("TLS setup: {e}")))?
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::config(format!("TLS setup: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match &tls.identity {
        None => builder.with_no_client_auth(),
        Some((chain, key)) => builder
            .with_client_auth_cert(chain.clone(), key.clone_key())
            .map_err(|e| {
                Error::config(format!(
                    "the client certificate and key cannot be used together: {e}"
                ))
            })?,
    };
    config.alpn_protocols = if http2 {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    Ok(config)
}

/// The extra roots as a store, each one checked as a trust anchor.
fn extra_root_store(
    extra_roots: &[CertificateDer<'static>],
) -> Result<rustls::RootCertStore, Error> {
    let mut roots = rustls::RootCertStore::empty();
    for root in extra_roots {
        roots.add(root.clone()).map_err(|e| {
            Error::config(format!(
                "one of the root certificates cannot be used as a trust anchor: {e}"
            ))
        })?;
    }
    Ok(roots)
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
    let builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls_config(config.http2, &config.tls)?)
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
    let proxy = &config.proxy;
    let builder = match &proxy.url {
        _ if config.bypass_proxies => builder.no_proxy(),
        Some(url) => {
            let mut explicit = reqwest::Proxy::all(url.as_str())
                .map_err(|e| Error::config(format!("proxy {url}: {e}")))?;
            if let Some((user, password)) = &proxy.credentials {
                explicit = explicit.basic_auth(user, password);
            }
            if let Some(list) = &proxy.no_proxy {
                explicit = explicit.no_proxy(reqwest::NoProxy::from_string(list));
            }
            // An explicit proxy replaces the environment's.
            builder.proxy(explicit)
        }
        None if proxy.from_env => builder,
        None => builder.no_proxy(),
    };
    let builder = if config.http2 {
        builder
    } else {
        builder.http1_only()
    };
    let builder = match max_response_headers {
        Some(limit) => builder.http1_max_headers(limit),
        None => builder,
    };
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

    fn trusting(roots: &[&CertificateDer<'static>]) -> TlsSettings {
        TlsSettings {
            extra_roots: roots.iter().map(|root| (*root).clone()).collect(),
            ..TlsSettings::platform()
        }
    }

    fn self_signed() -> CertificateDer<'static> {
        rcgen::generate_simple_self_signed(vec!["ca.example".to_owned()])
            .expect("certificate")
            .cert
            .der()
            .clone()
    }

    /// Configurations built alike share their provider (and verifier and session cache).
    fn shared(a: &rustls::ClientConfig, b: &rustls::ClientConfig) -> bool {
        Arc::ptr_eq(a.crypto_provider(), b.crypto_provider())
    }

    #[test]
    fn clients_of_one_trust_share_one_configuration_and_the_cache_is_bounded() {
        let (bundle, other) = (self_signed(), self_signed());
        let first = tls_config(false, &trusting(&[&bundle])).unwrap();
        let again = tls_config(false, &trusting(&[&bundle])).unwrap();
        assert!(shared(&first, &again), "the same bundle again");
        for different in [
            tls_config(true, &trusting(&[&bundle])).unwrap(),
            tls_config(false, &trusting(&[&other])).unwrap(),
            tls_config(false, &trusting(&[&bundle, &other])).unwrap(),
            tls_config(false, &TlsSettings::platform()).unwrap(),
        ] {
            assert!(!shared(&first, &different));
        }
        let mut only_the_bundle = trusting(&[&bundle]);
        only_the_bundle.platform_roots = false;
        assert!(!shared(
            &first,
            &tls_config(false, &only_the_bundle).unwrap()
        ));

        // Eight more trusts push the first one out: it is built anew.
        for _ in 0..8 {
            tls_config(false, &trusting(&[&self_signed()])).unwrap();
        }
        let rebuilt = tls_config(false, &trusting(&[&bundle])).unwrap();
        assert!(!shared(&first, &rebuilt));
    }

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

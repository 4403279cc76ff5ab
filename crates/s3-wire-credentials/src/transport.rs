//! How the HTTP clients of the credential sources, and s3-wire's own, are built: one
//! `reqwest` client per configuration, TLS by rustls with the program's default crypto
//! provider if it installed one (otherwise `ring`: [`crypto_provider`]), the
//! platform's root certificates and what the caller adds (CA bundles, a client
//! certificate), and the proxy the caller or the environment names. s3-wire-tokio builds
//! its S3 clients here too, so a client and its credential sources trust the same roots,
//! present the same certificate and go through the same proxy.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::tls::RecentlyBuilt;

/// A client configuration that cannot be built: a message naming what is wrong (never a
/// key), and the cause where there is one.
#[derive(Debug)]
#[non_exhaustive]
pub struct BuildError {
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl BuildError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn with_source(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }

    /// What is wrong, as a sentence.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

/// What one HTTP client is built with.
#[derive(Clone, Debug)]
pub struct TransportConfig {
    /// The limit of establishing a connection (TCP and TLS).
    pub connect_timeout: Duration,
    /// How long an idle pooled connection is kept.
    pub pool_idle_timeout: Duration,
    /// At most this many idle connections per host.
    pub pool_max_idle_per_host: usize,
    /// Whether HTTP/2 is offered (ALPN h2) beside HTTP/1.1.
    pub http2: bool,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// What TLS trusts and presents.
    pub tls: Arc<TlsSettings>,
    /// Host names connected to a fixed address instead of being resolved.
    pub resolve_overrides: Vec<(String, SocketAddr)>,
    /// Which proxy requests go through.
    pub proxy: ProxySettings,
    /// Never through a proxy: set for loopback endpoints, which a proxy (on another
    /// machine) cannot reach, and for the instance metadata and container endpoints.
    pub bypass_proxies: bool,
}

/// What a client's TLS trusts and presents (shared with its credential sources).
#[derive(Clone, Default)]
pub struct TlsSettings {
    /// Trusted besides (or, without `platform_roots`, instead of) the platform's roots.
    pub extra_roots: Vec<CertificateDer<'static>>,
    /// Whether the platform's roots are trusted (default: yes).
    pub platform_roots: bool,
    /// Accept any server certificate (`ClientBuilder::danger_accept_invalid_certificates`).
    pub accept_invalid: bool,
    /// The client certificate chain and key for servers that ask for one (mTLS).
    pub identity: Option<(Vec<CertificateDer<'static>>, Arc<PrivateKeyDer<'static>>)>,
}

impl TlsSettings {
    /// The platform's roots and nothing else.
    pub fn platform() -> Self {
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
pub struct ProxySettings {
    /// `http://host:port` or `https://host:port`, without credentials.
    pub url: Option<String>,
    /// Basic credentials for the proxy.
    pub credentials: Option<(String, String)>,
    /// Hosts that bypass the explicit proxy (`NO_PROXY` syntax).
    pub no_proxy: Option<String>,
    /// Without an explicit proxy: whether `HTTP_PROXY` and the like are used.
    pub from_env: bool,
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
fn tls_config(http2: bool, tls: &TlsSettings) -> Result<rustls::ClientConfig, BuildError> {
    /// What a configuration was built for.
    struct Trust {
        /// With the program's default provider, not ring (installed once per process: a
        /// client built before it was installed keeps ring).
        installed_provider: bool,
        http2: bool,
        platform_roots: bool,
        accept_invalid: bool,
        extra_roots: Vec<CertificateDer<'static>>,
    }
    static BUILT: RecentlyBuilt<Trust, rustls::ClientConfig> = RecentlyBuilt::new();
    if tls.identity.is_some() {
        return build_tls_config(http2, tls, crypto_provider());
    }
    let (provider, installed_provider) = crypto_provider();
    BUILT.get_or_build(
        |trust| {
            trust.installed_provider == installed_provider
                && trust.http2 == http2
                && trust.platform_roots == tls.platform_roots
                && trust.accept_invalid == tls.accept_invalid
                && trust.extra_roots == tls.extra_roots
        },
        || {
            let trust = Trust {
                installed_provider,
                http2,
                platform_roots: tls.platform_roots,
                accept_invalid: tls.accept_invalid,
                extra_roots: tls.extra_roots.clone(),
            };
            let config = build_tls_config(http2, tls, (provider, installed_provider))?;
            Ok((trust, config))
        },
    )
}

/// The crypto provider of TLS: the program's default if it installed one
/// (`CryptoProvider::install_default`: aws-lc-rs, its FIPS build, or any other), so that
/// s3-wire speaks TLS with what the program chose; otherwise `ring`, which s3-wire builds
/// with. True with the program's default.
fn crypto_provider() -> (Arc<rustls::crypto::CryptoProvider>, bool) {
    match rustls::crypto::CryptoProvider::get_default() {
        Some(installed) => (installed.clone(), true),
        None => (Arc::new(rustls::crypto::ring::default_provider()), false),
    }
}

/// Builds a rustls configuration: `provider` (from [`crypto_provider`]); the platform's root
/// certificates (plus extra roots, loaded at the first handshake: [`PlatformVerifier`]),
/// only the given roots, or (asked for by name) none; a client certificate if one is set.
fn build_tls_config(
    http2: bool,
    tls: &TlsSettings,
    (provider, installed): (Arc<rustls::crypto::CryptoProvider>, bool),
) -> Result<rustls::ClientConfig, BuildError> {
    // The platform's roots alone: one verifier with ring, one with the installed provider
    // (a process installs its default at most once).
    static PLATFORM_ONLY: [OnceLock<Arc<PlatformVerifier>>; 2] = [OnceLock::new(), OnceLock::new()];
    let verifier: Arc<dyn rustls::client::danger::ServerCertVerifier> = if tls.accept_invalid {
        Arc::new(AcceptAnyCertificate(provider.clone()))
    } else if tls.is_platform_only() {
        PLATFORM_ONLY[usize::from(installed)]
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
            return Err(BuildError::new(
                "the platform's root certificates are turned off and no other root \
                 certificate is given: no server could be trusted (add a CA bundle)",
            ));
        }
        rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(extra_root_store(&tls.extra_roots)?),
            provider.clone(),
        )
        .build()
        .map_err(|e| BuildError::new(format!("TLS setup: {e}")))?
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| BuildError::new(format!("TLS setup: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let mut config = match &tls.identity {
        None => builder.with_no_client_auth(),
        Some((chain, key)) => builder
            .with_client_auth_cert(chain.clone(), key.clone_key())
            .map_err(|e| {
                BuildError::new(format!(
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
) -> Result<rustls::RootCertStore, BuildError> {
    let mut roots = rustls::RootCertStore::empty();
    for root in extra_roots {
        roots.add(root.clone()).map_err(|e| {
            BuildError::new(format!(
                "one of the root certificates cannot be used as a trust anchor: {e}"
            ))
        })?;
    }
    Ok(roots)
}

/// Builds a reqwest client; `max_response_headers` replaces hyper's default limit of
/// HTTP/1.1 response header fields.
pub fn build(
    config: &TransportConfig,
    max_response_headers: Option<usize>,
) -> Result<reqwest::Client, BuildError> {
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
                .map_err(|e| BuildError::new(format!("proxy {url}: {e}")))?;
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
        .map_err(|e| BuildError::with_source("building the HTTP client failed", e))
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
}

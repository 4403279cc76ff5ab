//! Building a [`Client`]: endpoint, region, credentials, timeouts, retries.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use s3_ops::{
    AddressingStyle, ChecksumAlgorithm, Endpoint, IntegrityDefaults, Provider, ProviderQuirks,
    Scheme,
};

use crate::client::Client;
use crate::credentials::{
    CredentialsProvider, DefaultChain, Env, ImdsClient, ProcessEnv, SharedConfig,
};
use crate::error::{Error, ErrorKind};
use crate::retry::RetryConfig;
use crate::sign::PayloadSigning;
use crate::transfer::TransferOptions;
use crate::transport::TransportConfig;

/// The region used when none is configured anywhere (as the AWS CLI does for
/// S3-compatible endpoints).
pub const DEFAULT_REGION: &str = "us-east-1";

/// The smallest bandwidth limit, in bytes per second.
const MIN_BANDWIDTH: u64 = 8 * 1024;

/// Time limits of a [`Client`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timeouts {
    /// Establishing a connection (TCP and TLS). Default 10 s.
    pub connect: Duration,
    /// No byte moving in either direction for this long fails the attempt
    /// (a waiting consumer of a download counts; a paused one does not).
    /// Default 30 s.
    pub stall: Duration,
    /// The whole operation, retries and backoff included (for a streaming
    /// download: until its body is fully read). Default: none.
    pub operation: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            stall: Duration::from_secs(30),
            operation: None,
        }
    }
}

/// Builds a [`Client`]. Start from [`Client::builder`] (nothing configured)
/// or [`Client::from_env`] / [`ClientBuilder::from_env`] (the standard AWS
/// environment and shared config files).
pub struct ClientBuilder {
    endpoint_url: Option<String>,
    region: Option<String>,
    addressing_style: AddressingStyle,
    credentials: Option<Arc<dyn CredentialsProvider>>,
    allow_http: bool,
    proxy_from_env: bool,
    http2: bool,
    timeouts: Timeouts,
    retry: RetryConfig,
    pool_idle_timeout: Duration,
    pool_max_idle_per_host: usize,
    user_agent: String,
    extra_roots: Vec<Vec<u8>>,
    resolve_overrides: Vec<(String, SocketAddr)>,
    transfers: TransferSettings,
    integrity: IntegrityDefaults,
    /// The store's profile: chosen explicitly, or detected from the endpoint in `build`.
    provider: Option<ProviderQuirks>,
    payload_signing: PayloadSigning,
    env_error: Option<Error>,
}

/// How a client's managed transfers run: their default options, the memory they may hold
/// together, and the bandwidth limit of all its requests.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TransferSettings {
    pub(crate) options: TransferOptions,
    pub(crate) memory: Option<u64>,
    pub(crate) bandwidth: Option<u64>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            endpoint_url: None,
            region: None,
            addressing_style: AddressingStyle::Auto,
            credentials: None,
            allow_http: false,
            proxy_from_env: true,
            http2: cfg!(feature = "http2"),
            timeouts: Timeouts::default(),
            retry: RetryConfig::default(),
            pool_idle_timeout: Duration::from_secs(60),
            pool_max_idle_per_host: 64,
            user_agent: concat!("s3-wire/", env!("CARGO_PKG_VERSION")).to_owned(),
            extra_roots: Vec::new(),
            resolve_overrides: Vec::new(),
            transfers: TransferSettings {
                options: TransferOptions::default(),
                memory: None,
                bandwidth: None,
            },
            // Why CRC32: docs/integrity.md.
            integrity: IntegrityDefaults::new(Some(ChecksumAlgorithm::Crc32), true),
            provider: None,
            payload_signing: PayloadSigning::Signed,
            env_error: None,
        }
    }
}

impl ClientBuilder {
    /// A builder with nothing configured: set at least credentials (and an
    /// endpoint or region).
    pub fn new() -> Self {
        Self::default()
    }

    /// A builder preloaded from the process environment and the shared AWS
    /// config files: credentials from the [`DefaultChain`] (the `AWS_*` variables, the
    /// `AWS_PROFILE` profile with its roles, SSO or credential process, web identity,
    /// the container endpoint, EC2 instance metadata), region from `AWS_REGION` / `AWS_DEFAULT_REGION` / the profile,
    /// endpoint from `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL` / the profile.
    /// Settings made afterwards override these.
    pub fn from_env() -> Self {
        Self::from_env_with(Arc::new(ProcessEnv))
    }

    /// Like [`ClientBuilder::from_env`] with the variables and home directory
    /// of `env` (tests, embedders).
    pub fn from_env_with(env: Arc<dyn Env>) -> Self {
        let mut builder = Self::new();
        match SharedConfig::load(env.as_ref()) {
            Ok(shared) => {
                let resolved = shared
                    .region()
                    .and_then(|region| Ok((region, shared.endpoint_url()?)));
                match resolved {
                    Ok((region, endpoint)) => {
                        builder.region = region;
                        builder.endpoint_url = endpoint;
                    }
                    Err(error) => builder.env_error = Some(credentials_error(error)),
                }
            }
            Err(error) => builder.env_error = Some(credentials_error(error)),
        }
        builder.credentials = Some(Arc::new(DefaultChain::with_env(env)));
        builder
    }

    /// [`ClientBuilder::from_env`] without blocking the async thread it runs on, plus what
    /// only a request can find out: on EC2, when
    /// neither the environment nor the profile sets a region (nor an endpoint), the
    /// instance's region from instance metadata (IMDSv2, about 2 s at most where there is
    /// none; skipped when `AWS_EC2_METADATA_DISABLED=true`). The AWS SDKs'
    /// `load_from_env`.
    pub async fn load_from_env() -> Self {
        Self::load_from_env_with(Arc::new(ProcessEnv)).await
    }

    /// Like [`ClientBuilder::load_from_env`] with the variables and home directory of `env`.
    /// The shared files are read on a blocking thread.
    pub async fn load_from_env_with(env: Arc<dyn Env>) -> Self {
        let files_env = env.clone();
        let mut builder =
            match tokio::task::spawn_blocking(move || Self::from_env_with(files_env)).await {
                Ok(builder) => builder,
                Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
                // Cancelled: the runtime is shutting down; read here instead.
                Err(_) => Self::from_env_with(env.clone()),
            };
        if builder.region.is_none() && builder.endpoint_url.is_none() && builder.env_error.is_none()
        {
            let imds = ImdsClient::with_env(env);
            if !imds.is_disabled()
                && let Ok(region) = imds.region().await
            {
                builder.region = Some(region);
            }
        }
        builder
    }

    /// The endpoint URL of an S3-compatible service, e.g.
    /// `http://127.0.0.1:9000` or `https://storage.example.com/base`. Without
    /// one, the AWS endpoint of the region is used.
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint_url = Some(url.into());
        self
    }

    /// The signing region (and, for AWS, the endpoint's region).
    pub fn region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// Path-style or virtual-hosted addressing (default: automatic).
    pub fn addressing_style(mut self, style: AddressingStyle) -> Self {
        self.addressing_style = style;
        self
    }

    /// The credentials provider.
    pub fn credentials(mut self, provider: impl CredentialsProvider + 'static) -> Self {
        self.credentials = Some(Arc::new(provider));
        self
    }

    /// Static credentials.
    pub fn static_credentials(
        self,
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
        session_token: Option<String>,
    ) -> Self {
        self.credentials(crate::credentials::Credentials::new(
            access_key_id.into(),
            secret_access_key.into(),
            session_token,
        ))
    }

    /// Allows a plain `http://` endpoint that is not a loopback address.
    /// Requests and credentials-derived signatures then cross the network
    /// unencrypted; use only on trusted networks.
    pub fn allow_http(mut self, allow: bool) -> Self {
        self.allow_http = allow;
        self
    }

    /// Whether to use the proxies of the standard variables `HTTP_PROXY`,
    /// `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY` (and their lower-case forms),
    /// read when the client is built. On by default; loopback endpoints are
    /// always called directly.
    pub fn proxy_from_env(mut self, enabled: bool) -> Self {
        self.proxy_from_env = enabled;
        self
    }

    /// Offers HTTP/2 over TLS (ALPN `h2`) besides HTTP/1.1. Requires the
    /// `http2` feature; without it this is ignored and HTTP/1.1 is used.
    pub fn http2(mut self, enabled: bool) -> Self {
        self.http2 = enabled && cfg!(feature = "http2");
        self
    }

    /// Trusts `der` (a DER-encoded X.509 certificate, e.g. a private CA of an
    /// on-premises S3 service) in addition to the platform's root
    /// certificates. PEM files hold base64 DER between the `BEGIN`/`END`
    /// lines.
    pub fn add_root_certificate_der(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.extra_roots.push(der.into());
        self
    }

    /// Connects to `addr` for host name `host` instead of resolving it, like
    /// `curl --resolve` (a test server, a private network path to a public
    /// host name). Only `addr` is ever contacted for `host`, unless an
    /// environment proxy applies to `host` (then the proxy resolves it, as
    /// with curl; see [`ClientBuilder::proxy_from_env`]); TLS still verifies
    /// the certificate for `host`. The port of `addr` is used unless
    /// the URL names a port (port `0`: the scheme's default). Virtual-hosted
    /// addressing puts the bucket into the host name, so
    /// `bucket.s3.<region>.amazonaws.com` is a host of its own; names match
    /// whole and case-insensitively.
    pub fn resolve(mut self, host: &str, addr: SocketAddr) -> Self {
        // URL hosts reach the resolver lower-cased.
        self.resolve_overrides
            .push((host.to_ascii_lowercase(), addr));
        self
    }

    /// All time limits at once.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// The connect timeout.
    pub fn connect_timeout(mut self, limit: Duration) -> Self {
        self.timeouts.connect = limit;
        self
    }

    /// The stall timeout: no progress in either direction for this long.
    pub fn stall_timeout(mut self, limit: Duration) -> Self {
        self.timeouts.stall = limit;
        self
    }

    /// The whole-operation timeout, retries included.
    pub fn operation_timeout(mut self, limit: Duration) -> Self {
        self.timeouts.operation = Some(limit);
        self
    }

    /// The retry policy.
    pub fn retry(mut self, retry: RetryConfig) -> Self {
        self.retry = retry;
        self
    }

    /// How long idle pooled connections are kept (default 60 s).
    pub fn pool_idle_timeout(mut self, limit: Duration) -> Self {
        self.pool_idle_timeout = limit;
        self
    }

    /// How many idle connections per host are kept (default 64).
    pub fn pool_max_idle_per_host(mut self, count: usize) -> Self {
        self.pool_max_idle_per_host = count;
        self
    }

    /// The checksum every upload of this client carries unless its request chooses one
    /// (`checksum_algorithm`, `checksum`) or none (`no_checksum`): PutObject, and every
    /// part of the managed transfers (and the new objects of managed copies). Default:
    /// CRC32 (why: `docs/integrity.md`). `None` sends no checksum, for stores that
    /// reject them. A bare UploadPart carries the algorithm its upload was created with,
    /// so it gets no default.
    pub fn upload_checksum(mut self, algorithm: Option<ChecksumAlgorithm>) -> Self {
        self.integrity.upload_checksum = algorithm;
        self
    }

    /// Whether GetObject and HeadObject ask for the store's checksums
    /// (`x-amz-checksum-mode: ENABLED`) unless the request says otherwise, so that a body
    /// with a full-object checksum is verified as it is read (default: on). Managed
    /// downloads follow it too.
    pub fn verify_downloads(mut self, enabled: bool) -> Self {
        self.integrity.checksum_mode = enabled;
        self
    }

    /// The defaults of this client's managed transfers (part size, concurrency, the
    /// single-request limit, part limits); each transfer may override them.
    pub fn transfer_options(mut self, options: TransferOptions) -> Self {
        self.transfers.options = options;
        self
    }

    /// The most memory all managed transfers of this client (and its clones) hold at once
    /// for part data: stream part buffers, download reorder and write buffers. Every part
    /// is admitted before its request is sent, so no number of concurrent transfers can go
    /// past it. Default: `part_size × concurrency` of the transfer options (64 MiB with the
    /// defaults). The parts of a stream never grow past it, so it also bounds the longest
    /// stream of unknown length: 90% of 10,000 parts of this size (562 GiB at 64 MiB; S3's
    /// 5 TiB object limit from about 600 MiB).
    pub fn transfer_memory(mut self, bytes: u64) -> Self {
        self.transfers.memory = Some(bytes);
        self
    }

    /// Limits the bytes this client (and its clones) send, and separately the bytes it
    /// receives, to `bytes_per_second` each (at least 8 KiB/s): a token bucket on the bytes
    /// actually sent and received, shared by all requests.
    pub fn bandwidth_limit(mut self, bytes_per_second: u64) -> Self {
        self.transfers.bandwidth = Some(bytes_per_second);
        self
    }

    /// The store behind the endpoint, whose profile ([`Provider::quirks`]) the client adapts
    /// to: the checksums it sends, trailers, `encoding-type`, conditional writes refused
    /// early, part sizes, presign expiry, signing region and addressing (see
    /// `docs/compatibility.md`). Without it the provider is detected from the endpoint host
    /// ([`Provider::detect`]); [`Provider::Generic`] adapts nothing.
    pub fn provider(mut self, provider: Provider) -> Self {
        self.provider = Some(provider.quirks());
        self
    }

    /// Like [`ClientBuilder::provider`] with a profile of the caller's, e.g. a built-in one
    /// corrected for a store version that accepts more than its documentation says.
    pub fn provider_quirks(mut self, quirks: ProviderQuirks) -> Self {
        self.provider = Some(quirks);
        self
    }

    /// How upload payloads are protected over plain HTTP (default
    /// [`PayloadSigning::Signed`]: signed by their SHA-256, nothing else protects them there).
    /// [`PayloadSigning::UnsignedWithChecksum`] sends a payload that carries a checksum as
    /// over TLS, unsigned: faster (no SHA-256 of every byte), still checked for corruption by
    /// the store, but open to anyone on the path who rewrites the bytes and their checksum
    /// together. Only for a network where nobody between client and store is untrusted; see
    /// `docs/security.md`. Over HTTPS it changes nothing.
    pub fn payload_signing(mut self, signing: PayloadSigning) -> Self {
        self.payload_signing = signing;
        self
    }

    /// The `User-Agent` header.
    pub fn user_agent(mut self, agent: impl Into<String>) -> Self {
        self.user_agent = agent.into();
        self
    }

    /// Builds the client (one connection pool, shared by its clones).
    pub fn build(self) -> Result<Client, Error> {
        if let Some(error) = self.env_error {
            return Err(error);
        }
        let credentials = self
            .credentials
            .ok_or_else(|| Error::config("no credentials provider configured"))?;
        let region = self.region.as_deref().unwrap_or(DEFAULT_REGION);
        let mut endpoint = match &self.endpoint_url {
            Some(url) => Endpoint::custom(url, region)?,
            None => Endpoint::aws(region)?,
        };
        // An explicit choice wins over what the host says.
        let quirks = self
            .provider
            .unwrap_or_else(|| Provider::detect(&endpoint).quirks());
        if self.region.is_none()
            && let Some(region) = quirks.default_region(endpoint.host())
        {
            // R2 signs for `auto`, B2 for the region in its host: not for `us-east-1`.
            endpoint = endpoint.with_region(&region)?;
        }
        let style = match self.addressing_style {
            AddressingStyle::Auto => quirks.addressing,
            chosen => chosen,
        };
        let endpoint = endpoint.with_addressing_style(style);
        let mut integrity = self.integrity;
        integrity.upload_checksum = quirks.upload_checksum(integrity.upload_checksum);
        let mut transfers = self.transfers;
        transfers.options = crate::transfer::fit_to_store(transfers.options, &quirks)?;
        let loopback = is_loopback(endpoint.host());
        if endpoint.scheme() == Scheme::Http && !self.allow_http && !loopback {
            return Err(Error::config(format!(
                "plain http:// to {} is refused (credentials-derived signatures and data would \
                 cross the network unencrypted); use https://, a loopback address, or \
                 ClientBuilder::allow_http(true)",
                endpoint.host()
            )));
        }
        let transport = TransportConfig {
            connect_timeout: self.timeouts.connect,
            pool_idle_timeout: self.pool_idle_timeout,
            pool_max_idle_per_host: self.pool_max_idle_per_host,
            http2: self.http2,
            user_agent: self.user_agent,
            extra_roots: self.extra_roots,
            resolve_overrides: self.resolve_overrides,
            bypass_proxies: loopback || !self.proxy_from_env,
        };
        if self
            .transfers
            .bandwidth
            .is_some_and(|rate| rate < MIN_BANDWIDTH)
        {
            // Below this, the pieces a limit lets through are so far apart that a transfer
            // looks stalled.
            return Err(Error::config(format!(
                "a bandwidth limit must be at least {MIN_BANDWIDTH} bytes per second"
            )));
        }
        Client::from_parts(
            endpoint,
            credentials,
            transport,
            self.timeouts,
            self.retry,
            transfers,
            integrity,
            quirks,
            self.payload_signing,
        )
    }
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("endpoint_url", &self.endpoint_url)
            .field("region", &self.region)
            .field("credentials", &self.credentials)
            .field("allow_http", &self.allow_http)
            .field("proxy_from_env", &self.proxy_from_env)
            .field("http2", &self.http2)
            .field("timeouts", &self.timeouts)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

fn credentials_error(error: crate::credentials::Error) -> Error {
    Error::new(ErrorKind::Credentials).with_source(error)
}

/// True for `localhost`, `127.0.0.0/8` and `::1` (with or without a port).
fn is_loopback(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host),
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_extra_root_certificate_is_a_config_error() {
        let error = ClientBuilder::new()
            .endpoint("https://storage.example.com")
            .static_credentials("AKID", "secret", None)
            .add_root_certificate_der(b"not a certificate".to_vec())
            .build()
            .expect_err("garbage is not a certificate");
        assert!(matches!(error.kind(), ErrorKind::Config(_)), "{error:?}");
        assert!(error.to_string().contains("root certificates"), "{error}");
    }

    #[test]
    fn loopback_hosts() {
        for host in [
            "127.0.0.1:9000",
            "127.1.2.3",
            "localhost:80",
            "[::1]:9000",
            "LOCALHOST",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "10.0.0.1:9000",
            "example.com",
            "[::2]:1",
            "localhost.example.com",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }
}

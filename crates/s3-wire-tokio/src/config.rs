//! Building a [`Client`]: endpoint, region, credentials, timeouts, retries.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use s3_ops::ops::create_session::SessionMode;
use s3_ops::{
    AddressingStyle, ChecksumAlgorithm, Endpoint, IntegrityDefaults, Provider, ProviderQuirks,
    RequestExtras, Scheme,
};

use crate::client::Client;
use crate::credentials::HttpSettings;
use crate::credentials::{
    CredentialsProvider, DefaultChain, Env, ImdsClient, ProcessEnv, SharedConfig,
};
use crate::error::{Error, ErrorKind};
use crate::retry::RetryConfig;
use crate::settings::{Timeouts, TransferOptions, TransferSettings};
use crate::sign::PayloadSigning;
use crate::transport::{ProxySettings, Transport, TransportConfig};

/// The region used when none is configured anywhere (as the AWS CLI does for
/// S3-compatible endpoints).
pub const DEFAULT_REGION: &str = "us-east-1";

/// The smallest bandwidth limit, in bytes per second.
const MIN_BANDWIDTH: u64 = 8 * 1024;

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
    /// Root certificates trusted besides (or instead of) the platform's.
    roots: Vec<RootSource>,
    /// The CA bundle of `AWS_CA_BUNDLE` or the profile's `ca_bundle` (an explicit
    /// [`ClientBuilder::ca_bundle`] replaces it), with where it was named.
    env_ca_bundle: Option<(PathBuf, String)>,
    platform_roots: bool,
    accept_invalid_certificates: bool,
    /// The client certificate chain and key, PEM.
    identity: Option<(Vec<u8>, Vec<u8>)>,
    proxy: ProxySettings,
    /// What was wrong with the proxy URL, reported by `build`.
    proxy_error: Option<String>,
    /// A caller's own HTTP client, used as it is.
    http_client: Option<reqwest::Client>,
    hook: Option<Arc<dyn crate::RequestHook>>,
    resolve_overrides: Vec<(String, SocketAddr)>,
    transfers: TransferSettings,
    integrity: IntegrityDefaults,
    /// The store's profile: chosen explicitly, or detected from the endpoint in `build`.
    provider: Option<ProviderQuirks>,
    /// List with version 1 whatever the profile says.
    list_objects_v1: bool,
    variants: EndpointVariants,
    /// Sign nothing, look up no credentials.
    anonymous: bool,
    /// Added to every request.
    extras: RequestExtras,
    express_session_mode: SessionMode,
    payload_signing: PayloadSigning,
    env_error: Option<Error>,
}

/// FIPS, dual-stack, Transfer Acceleration, `use_arn_region`, the `us-east-1` global
/// endpoint, Multi-Region Access Points and S3 Express session auth: set in code, or read
/// from the environment and profile by `from_env` (`None`: the AWS SDKs' defaults).
#[derive(Clone, Copy, Debug, Default)]
struct EndpointVariants {
    fips: Option<bool>,
    dual_stack: Option<bool>,
    accelerate: Option<bool>,
    use_arn_region: Option<bool>,
    global_endpoint: Option<bool>,
    multi_region_access_points: Option<bool>,
    express_session_auth: Option<bool>,
}

/// A root certificate (or bundle of them) to trust.
#[derive(Clone, Debug)]
enum RootSource {
    /// One DER certificate.
    Der(Vec<u8>),
    /// A PEM bundle given as bytes.
    Pem(Vec<u8>),
    /// A PEM bundle file, read when the client is built, and the setting that named it.
    File(PathBuf, Option<String>),
}

impl Client {
    /// A builder with nothing configured.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// A client configured from the standard AWS environment variables and
    /// shared config files (see [`ClientBuilder::from_env`]).
    pub fn from_env() -> Result<Self, Error> {
        ClientBuilder::from_env().build()
    }

    /// Like [`Client::from_env`], and on EC2 the region from instance metadata when none is
    /// configured (see [`ClientBuilder::load_from_env`]).
    pub async fn load_from_env() -> Result<Self, Error> {
        ClientBuilder::load_from_env().await.build()
    }
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
            roots: Vec::new(),
            env_ca_bundle: None,
            platform_roots: true,
            accept_invalid_certificates: false,
            identity: None,
            proxy: ProxySettings::default(),
            proxy_error: None,
            http_client: None,
            hook: None,
            resolve_overrides: Vec::new(),
            transfers: TransferSettings {
                options: TransferOptions::default(),
                memory: None,
                bandwidth: None,
            },
            // Why CRC32: docs/integrity.md.
            integrity: IntegrityDefaults::new(Some(ChecksumAlgorithm::Crc32), true),
            provider: None,
            list_objects_v1: false,
            variants: EndpointVariants::default(),
            anonymous: false,
            extras: RequestExtras::new(),
            express_session_mode: SessionMode::ReadWrite,
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
                match shared.ca_bundle() {
                    Ok(bundle) => builder.env_ca_bundle = bundle,
                    Err(error) => {
                        builder
                            .env_error
                            .get_or_insert(Error::config(error.to_string()));
                    }
                }
                match shared.endpoint_settings() {
                    Ok(settings) => {
                        builder.variants = EndpointVariants {
                            fips: settings.use_fips,
                            dual_stack: settings.use_dual_stack,
                            accelerate: settings.accelerate,
                            use_arn_region: settings.use_arn_region,
                            global_endpoint: settings.us_east_1_global_endpoint,
                            multi_region_access_points: settings
                                .disable_multi_region_access_points
                                .map(|disabled| !disabled),
                            express_session_auth: settings
                                .disable_express_session_auth
                                .map(|disabled| !disabled),
                        };
                        if let Some(style) = settings.addressing_style {
                            builder.addressing_style = style;
                        }
                    }
                    // A setting, not credentials: say which and why in the error itself.
                    Err(error) => {
                        builder
                            .env_error
                            .get_or_insert(Error::config(error.to_string()));
                    }
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
        self.anonymous = false;
        self
    }

    /// Anonymous requests, for public buckets (AWS Open Data, public artifacts): no
    /// credentials are looked up and nothing is signed (no `Authorization`, no
    /// `x-amz-security-token`). Uploads still carry their checksums. Presigning is refused
    /// (an anonymous URL needs no signature). The AWS CLI's `--no-sign-request`,
    /// object_store's `skip_signature`.
    pub fn anonymous(mut self) -> Self {
        self.anonymous = true;
        self
    }

    /// Uses the FIPS 140 endpoints of the region (`s3-fips.<region>`, access points'
    /// `s3-accesspoint-fips`, S3 Express's `s3express-fips-<zone>`). `from_env` reads
    /// `AWS_USE_FIPS_ENDPOINT` and the profile's `use_fips_endpoint`. Refused with a custom
    /// endpoint, with Transfer Acceleration, and in the China partition.
    pub fn fips(mut self, enabled: bool) -> Self {
        self.variants.fips = Some(enabled);
        self
    }

    /// Uses the dual-stack (IPv4 and IPv6) endpoints. `from_env` reads
    /// `AWS_USE_DUALSTACK_ENDPOINT` and the profile's `use_dualstack_endpoint`. Refused with
    /// a custom endpoint; Multi-Region Access Points, Object Lambda and S3 on Outposts have
    /// none, and refuse it per request.
    pub fn dual_stack(mut self, enabled: bool) -> Self {
        self.variants.dual_stack = Some(enabled);
        self
    }

    /// Sends object requests through S3 Transfer Acceleration
    /// (`<bucket>.s3-accelerate.amazonaws.com`; bucket-level requests keep the regional
    /// host). `from_env` reads the profile's `s3` → `use_accelerate_endpoint`. Refused with a
    /// custom endpoint, with FIPS and in the China partition; a bucket whose name has a `.`,
    /// path-style addressing, access points and directory buckets refuse it per request.
    pub fn accelerate(mut self, enabled: bool) -> Self {
        self.variants.accelerate = Some(enabled);
        self
    }

    /// Whether a request to an access point ARN of another region than the client's goes to
    /// the ARN's region (the default) or fails. `from_env` reads `AWS_S3_USE_ARN_REGION` and
    /// the profile's `s3_use_arn_region`.
    pub fn use_arn_region(mut self, enabled: bool) -> Self {
        self.variants.use_arn_region = Some(enabled);
        self
    }

    /// Sends `us-east-1` requests to the legacy global endpoint `s3.amazonaws.com` instead of
    /// `s3.us-east-1.amazonaws.com` (default off, as in the AWS SDKs). `from_env` reads
    /// `AWS_S3_US_EAST_1_REGIONAL_ENDPOINT=legacy` and the profile's
    /// `s3_us_east_1_regional_endpoint`. The region `aws-global` names that host too.
    pub fn legacy_global_endpoint(mut self, enabled: bool) -> Self {
        self.variants.global_endpoint = Some(enabled);
        self
    }

    /// Whether Multi-Region Access Point ARNs may be used (default on); off, their requests
    /// fail before sending. `from_env` reads `AWS_S3_DISABLE_MULTIREGION_ACCESS_POINTS` and
    /// the profile's `s3_disable_multiregion_access_points`.
    pub fn multi_region_access_points(mut self, enabled: bool) -> Self {
        self.variants.multi_region_access_points = Some(enabled);
        self
    }

    /// Whether requests to S3 Express One Zone directory buckets and their access points are
    /// signed with session credentials from CreateSession (default on), or with the
    /// client's own credentials for the `s3express` service. `from_env` reads
    /// `AWS_S3_DISABLE_EXPRESS_SESSION_AUTH` and the profile's
    /// `s3_disable_express_session_auth`.
    pub fn s3_express_session_auth(mut self, enabled: bool) -> Self {
        self.variants.express_session_auth = Some(enabled);
        self
    }

    /// Sends `x-amz-request-payer: requester` with every request (reads, writes, listings,
    /// multipart, copies, managed transfers): the caller pays for requests to a Requester
    /// Pays bucket, which refuses them with 403 otherwise. Per request:
    /// [`Client::with_request_extras`].
    pub fn request_payer(mut self, enabled: bool) -> Self {
        self.extras = self.extras.request_payer(enabled);
        self
    }

    /// Headers and query parameters every request of the client carries (validated when a
    /// request is built: see [`RequestExtras`]). Per request:
    /// [`Client::with_request_extras`].
    pub fn request_extras(mut self, extras: RequestExtras) -> Self {
        self.extras = self.extras.merged(&extras);
        self
    }

    /// The mode of the S3 Express One Zone sessions the client creates for directory
    /// buckets (default `ReadWrite`; `ReadOnly` for principals allowed only that).
    pub fn s3_express_session_mode(mut self, mode: SessionMode) -> Self {
        self.express_session_mode = mode;
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
    /// on-premises S3 service) in addition to the platform's root certificates.
    pub fn add_root_certificate_der(mut self, der: impl Into<Vec<u8>>) -> Self {
        self.roots.push(RootSource::Der(der.into()));
        self
    }

    /// Trusts every certificate of the PEM bundle `pem` (what TLS-inspecting proxies and
    /// private CAs ship), in addition to the platform's roots. A bundle with no certificate,
    /// or that is not PEM, fails [`ClientBuilder::build`] with the reason.
    pub fn add_root_certificates_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.roots.push(RootSource::Pem(pem.into()));
        self
    }

    /// Trusts every certificate of the PEM bundle file at `path`, read when the client is
    /// built (an unreadable file, or one with no certificate, fails `build` naming the
    /// file). Replaces the bundle `from_env` found in `AWS_CA_BUNDLE` or the profile's
    /// `ca_bundle` (the AWS CLI's precedence: `--ca-bundle`, then `AWS_CA_BUNDLE`, then the
    /// profile).
    pub fn ca_bundle(mut self, path: impl Into<PathBuf>) -> Self {
        self.env_ca_bundle = None;
        self.roots.push(RootSource::File(path.into(), None));
        self
    }

    /// Whether the platform's root certificates are trusted (default: yes). Off, only the
    /// certificates given to this builder are: for air-gapped sites and private CAs that
    /// must be the only ones trusted.
    pub fn platform_roots(mut self, enabled: bool) -> Self {
        self.platform_roots = enabled;
        self
    }

    /// **Dangerous**: accepts any server certificate, so anyone between the client and the
    /// endpoint can read and change every request, credentials-derived signatures and data
    /// included. For a test rig with a throwaway certificate only; trust its CA instead
    /// ([`ClientBuilder::ca_bundle`]) wherever possible. (`s3w --no-verify-ssl`.)
    pub fn danger_accept_invalid_certificates(mut self, enabled: bool) -> Self {
        self.accept_invalid_certificates = enabled;
        self
    }

    /// A client certificate for mutual TLS, to the store and to proxies that ask for one:
    /// `cert_chain` the PEM certificate chain (leaf first), `key` its PEM private key
    /// (PKCS#8, or RSA / EC keys in their own formats). Checked when the client is built.
    pub fn identity_pem(mut self, cert_chain: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        self.identity = Some((cert_chain.into(), key.into()));
        self
    }

    /// Sends every request (S3, STS, SSO; never instance metadata or the container
    /// endpoint) through the proxy at `url`: `http://host:port`, or `https://host:port` for
    /// a TLS connection to the proxy itself (whose certificate must then be trusted, see
    /// [`ClientBuilder::ca_bundle`]). Credentials may be in the URL (`http://user:pass@host`)
    /// or given with [`ClientBuilder::proxy_credentials`]; they are never shown by `Debug`,
    /// errors or logs. HTTPS requests go through a `CONNECT` tunnel, verified for the S3
    /// host. Replaces the proxy variables (`HTTP_PROXY`, ...); a loopback endpoint is still
    /// called directly.
    pub fn proxy(mut self, url: &str) -> Self {
        self.proxy_error = None;
        match parse_proxy_url(url) {
            Ok((url, credentials)) => {
                self.proxy.url = Some(url);
                if credentials.is_some() {
                    self.proxy.credentials = credentials;
                }
            }
            Err(reason) => self.proxy_error = Some(reason),
        }
        self
    }

    /// Basic credentials for the proxy (see [`ClientBuilder::proxy`]).
    pub fn proxy_credentials(
        mut self,
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        self.proxy.credentials = Some((user.into(), password.into()));
        self
    }

    /// Hosts that bypass the proxy of [`ClientBuilder::proxy`], in the syntax of `NO_PROXY`:
    /// comma-separated host names (`example.com` also matches its subdomains), IP addresses
    /// and CIDR ranges, `*` for all.
    pub fn no_proxy(mut self, hosts: impl Into<String>) -> Self {
        self.proxy.no_proxy = Some(hosts.into());
        self
    }

    /// Calls `hook` once for every attempt of every request (see [`crate::RequestHook`]):
    /// operation, attempt number, method, host, status or error kind, request id, bytes
    /// sent and received, memory-budget wait, time to first byte and duration. Without a hook
    /// nothing is recorded.
    pub fn request_hook(mut self, hook: impl crate::RequestHook) -> Self {
        self.hook = Some(Arc::new(hook));
        self
    }

    /// Sends requests to the store with `client`, a `reqwest::Client` the caller built (its
    /// own DNS resolver, connector, TLS, proxies, pool, telemetry). The caller then owns what
    /// that client does: TLS verification and roots, proxies, the connect timeout, the
    /// connection pool and HTTP versions; build it with `redirect::Policy::none()` (a
    /// redirect the client follows fails the request: signed headers must not reach another
    /// host). s3-wire still does everything above the transport: signing, checksums and
    /// their verification, retries with backoff and their budget, stall detection and
    /// operation deadlines, region redirects, the memory budget of transfers. The builder's
    /// own transport settings (CA bundles, client certificate, proxy, `resolve`, HTTP/2)
    /// cannot be combined with it: `build` refuses them. Credential sources that call AWS
    /// (STS, SSO) keep their own client with the default settings.
    ///
    /// It must be a client of the reqwest this crate uses ([`crate::reqwest`]). That reqwest
    /// has rustls without a default crypto provider: install one
    /// (`rustls::crypto::ring::default_provider().install_default()`) or give the client a
    /// TLS configuration of your own before building it.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http_client = Some(client);
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
    /// for part data: stream part buffers, files small enough for one request and file parts
    /// hashed before they are sent (over plain HTTP) read whole, the reads of file parts,
    /// download reorder and write buffers. Every part
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

    /// Lists with ListObjects (version 1) whatever the store's profile says (rclone's
    /// `list_version = 1`): for a store whose ListObjectsV2 misbehaves in a way the client
    /// cannot see. A store that refuses ListObjectsV2, or answers it as version 1, is
    /// switched to version 1 without it ([`Client::list_objects_v2`](crate::Client::list_objects_v2)).
    pub fn list_objects_v1(mut self, v1: bool) -> Self {
        self.list_objects_v1 = v1;
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
        let credentials = match (self.anonymous, self.credentials) {
            (true, _) => None,
            (false, Some(provider)) => Some(provider),
            (false, None) => {
                return Err(Error::config(
                    "no credentials provider configured (for a public bucket, build an \
                     anonymous client: ClientBuilder::anonymous)",
                ));
            }
        };
        let region = self.region.as_deref().unwrap_or(DEFAULT_REGION);
        let variants = self.variants;
        let (fips, dual_stack, accelerate) = (
            variants.fips.unwrap_or(false),
            variants.dual_stack.unwrap_or(false),
            variants.accelerate.unwrap_or(false),
        );
        let mut endpoint = match &self.endpoint_url {
            Some(url) if fips || dual_stack || accelerate => {
                let chosen: Vec<&str> = [
                    (fips, "FIPS"),
                    (dual_stack, "dual-stack"),
                    (accelerate, "Transfer Acceleration"),
                ]
                .into_iter()
                .filter_map(|(on, name)| on.then_some(name))
                .collect();
                return Err(Error::config(format!(
                    "the custom endpoint {url} cannot be combined with {}: those choose AWS's own \
                     hosts. Remove the endpoint (AWS_ENDPOINT_URL, endpoint_url) or turn them off \
                     (AWS_USE_FIPS_ENDPOINT, AWS_USE_DUALSTACK_ENDPOINT, use_accelerate_endpoint)",
                    chosen.join(" and ")
                )));
            }
            Some(url) => Endpoint::custom(url, region)?,
            None => Endpoint::aws(region)?
                .with_fips(fips)
                .with_dual_stack(dual_stack)
                .with_accelerate(accelerate),
        };
        endpoint = endpoint
            .with_use_arn_region(variants.use_arn_region.unwrap_or(true))
            .with_global_endpoint(variants.global_endpoint.unwrap_or(false))
            .with_multi_region_access_points(variants.multi_region_access_points.unwrap_or(true))
            .with_s3_express_session_auth(variants.express_session_auth.unwrap_or(true));
        endpoint.check()?;
        // An explicit choice wins over what the host says.
        let mut quirks = self
            .provider
            .unwrap_or_else(|| Provider::detect(&endpoint).quirks());
        if self.list_objects_v1 {
            quirks.list_objects_v2 = false;
        }
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
        transfers.options = crate::settings::fit_to_store(transfers.options, &quirks)?;
        let loopback = is_loopback(endpoint.host());
        if endpoint.scheme() == Scheme::Http && !self.allow_http && !loopback {
            return Err(Error::config(format!(
                "plain http:// to {} is refused (credentials-derived signatures and data would \
                 cross the network unencrypted); use https://, a loopback address, or \
                 ClientBuilder::allow_http(true)",
                endpoint.host()
            )));
        }
        if let Some(reason) = self.proxy_error {
            return Err(Error::config(reason));
        }
        let mut roots = self.roots;
        if let Some((path, origin)) = self.env_ca_bundle {
            roots.push(RootSource::File(path, Some(origin)));
        }
        let identity = self
            .identity
            .map(|(chain, key)| s3_wire_credentials::tls::identity(&chain, &key))
            .transpose()?;
        let tls = Arc::new(crate::transport::TlsSettings {
            extra_roots: roots
                .iter()
                .map(read_roots)
                .collect::<Result<Vec<_>, _>>()?
                .concat(),
            platform_roots: self.platform_roots,
            accept_invalid: self.accept_invalid_certificates,
            identity,
        });
        let proxy = ProxySettings {
            from_env: self.proxy_from_env,
            ..self.proxy
        };
        if let Some(provider) = &credentials {
            // STS, SSO and the container endpoint go through the same proxy and trust.
            provider.use_http_settings(&HttpSettings::new(tls.clone(), proxy.clone()));
        }
        let transport = match self.http_client {
            Some(client) => {
                let mut conflicting = Vec::new();
                for (set, name) in [
                    (
                        !roots.is_empty()
                            || !self.platform_roots
                            || self.accept_invalid_certificates,
                        "root certificates",
                    ),
                    (tls.identity.is_some(), "a client certificate"),
                    (
                        proxy.url.is_some()
                            || proxy.credentials.is_some()
                            || proxy.no_proxy.is_some(),
                        "a proxy",
                    ),
                    (!self.resolve_overrides.is_empty(), "resolve"),
                    (self.http2, "HTTP/2"),
                ] {
                    if set {
                        conflicting.push(name);
                    }
                }
                if !conflicting.is_empty() {
                    return Err(Error::config(format!(
                        "http_client takes the caller's own HTTP client, so {} must be set on \
                         that client, not on this builder",
                        conflicting.join(", ")
                    )));
                }
                Transport::Given(client)
            }
            None => Transport::Build(TransportConfig {
                connect_timeout: self.timeouts.connect,
                pool_idle_timeout: self.pool_idle_timeout,
                pool_max_idle_per_host: self.pool_max_idle_per_host,
                http2: self.http2,
                user_agent: self.user_agent,
                tls,
                resolve_overrides: self.resolve_overrides,
                proxy,
                bypass_proxies: loopback,
            }),
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
            self.extras,
            self.express_session_mode,
            self.hook,
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
            .field("anonymous", &self.anonymous)
            .field("variants", &self.variants)
            .field("extras", &self.extras)
            .field("allow_http", &self.allow_http)
            .field("proxy_from_env", &self.proxy_from_env)
            .field("proxy", &self.proxy)
            .field("platform_roots", &self.platform_roots)
            .field(
                "accept_invalid_certificates",
                &self.accept_invalid_certificates,
            )
            .field("http2", &self.http2)
            .field("timeouts", &self.timeouts)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

/// The certificates of one root source (a file is read here, and named in any error).
fn read_roots(
    source: &RootSource,
) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, Error> {
    match source {
        RootSource::Der(der) => Ok(vec![rustls::pki_types::CertificateDer::from(der.clone())]),
        RootSource::Pem(pem) => s3_wire_credentials::tls::certificates(
            pem,
            "the PEM bundle given to add_root_certificates_pem",
        )
        .map_err(Error::from),
        RootSource::File(path, setting) => {
            let origin = match setting {
                Some(setting) => format!("the CA bundle {} (from {setting})", path.display()),
                None => format!("the CA bundle {}", path.display()),
            };
            let pem = std::fs::read(path)
                .map_err(|e| Error::config(format!("{origin} cannot be read: {e}")))?;
            s3_wire_credentials::tls::certificates(&pem, &origin).map_err(Error::from)
        }
    }
}

/// A proxy URL without its credentials, and the credentials (percent-decoded), or why the
/// URL cannot be used (never quoting the credentials).
fn parse_proxy_url(url: &str) -> Result<(String, Option<(String, String)>), String> {
    let mut parsed = reqwest::Url::parse(url).map_err(|e| {
        format!("the proxy URL is not a URL ({e}): give http://host:port or https://host:port")
    })?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!(
            "the proxy URL must be http://host:port or https://host:port, not a {} URL",
            parsed.scheme()
        ));
    }
    let decode = |text: &str| {
        let mut out = Vec::with_capacity(text.len());
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let escaped = (bytes[i] == b'%')
                .then(|| {
                    text.get(i + 1..i + 3)
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                })
                .flatten();
            match escaped {
                Some(byte) => {
                    out.push(byte);
                    i += 3;
                }
                None => {
                    out.push(bytes[i]);
                    i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    let credentials = (!parsed.username().is_empty()).then(|| {
        (
            decode(parsed.username()),
            decode(parsed.password().unwrap_or_default()),
        )
    });
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    Ok((
        parsed.as_str().trim_end_matches('/').to_owned(),
        credentials,
    ))
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

//! The default chain of credential sources, in aws-config's order.

use std::fmt;
use std::sync::Arc;

use super::cache::{CacheSettings, Clock, SystemClock};
use super::http::Http;
use super::profile_chain::ProfileSource;
use super::web_identity::WebIdentity;
use super::{
    CachingProvider, ContainerProvider, Credentials, CredentialsFuture, CredentialsProvider, Env,
    Error, ExpiringCredentials, ExpiringSource, FetchFuture, ImdsClient, ImdsProvider, ProcessEnv,
    SharedConfig,
};

/// The standard chain (see the [module docs](super)): the environment variables, the
/// shared-file profile, web identity from the environment, the container endpoint, EC2
/// instance metadata. The first source that is configured decides: its credentials are used,
/// or its failure is returned (a profile that sets a role whose STS call fails does not
/// fall through to another identity). Instance metadata is tried last unless
/// `AWS_EC2_METADATA_DISABLED=true`; its failure then ends in [`Error::NoCredentials`],
/// which lists it.
///
/// The result is cached ([`CachingProvider`]): static keys for good, temporary credentials
/// until shortly before they expire, when the chain is walked again (files are re-read,
/// off the async threads).
pub struct DefaultChain {
    cache: CachingProvider<ChainSource>,
}

/// The uncached chain.
pub(crate) struct ChainSource {
    env: Arc<dyn Env>,
    http: Arc<Http>,
    clock: Arc<dyn Clock>,
}

impl DefaultChain {
    /// The chain over the real process environment.
    pub fn new() -> Self {
        Self::with_env(Arc::new(ProcessEnv))
    }

    /// The chain over `env`.
    pub fn with_env(env: Arc<dyn Env>) -> Self {
        Self::with_clock(env, CacheSettings::default(), Arc::new(SystemClock))
    }

    /// The chain over `env`, cached with `settings` by `clock` (tests with paused time).
    pub fn with_clock(env: Arc<dyn Env>, settings: CacheSettings, clock: Arc<dyn Clock>) -> Self {
        let source = ChainSource {
            env,
            http: Arc::default(),
            clock: clock.clone(),
        };
        Self {
            cache: CachingProvider::with_settings(source, settings, clock),
        }
    }

    /// The region, as the AWS SDKs find it: `AWS_REGION`, `AWS_DEFAULT_REGION`, the
    /// profile's `region`, else EC2 instance metadata (unless disabled). `None` if none
    /// of them knows.
    pub async fn region(&self) -> Result<Option<String>, Error> {
        let source = self.cache.source();
        let shared = SharedConfig::load_off_thread(source.env.clone()).await?;
        if let Some(region) = shared.region()? {
            return Ok(Some(region));
        }
        let imds = ImdsClient::with_http(source.env.clone(), source.http.clone());
        if imds.is_disabled() {
            return Ok(None);
        }
        Ok(imds.region().await.ok())
    }
}

impl ChainSource {
    async fn walk(&self) -> Result<ExpiringCredentials, Error> {
        let shared = SharedConfig::load_off_thread(self.env.clone()).await?;
        if let Some(credentials) = shared.env_credentials()? {
            return Ok(ExpiringCredentials::new(credentials, None));
        }
        let profile = ProfileSource::new(
            self.env.clone(),
            None,
            self.http.clone(),
            self.clock.clone(),
        );
        if let Some(credentials) = profile.fetch_in(&shared).await? {
            return Ok(credentials);
        }
        if let Some(web_identity) = WebIdentity::from_env(self.env.as_ref()) {
            let region = shared.region()?;
            return web_identity?
                .fetch(
                    &self.http,
                    self.env.as_ref(),
                    region.as_deref(),
                    self.clock.as_ref(),
                )
                .await;
        }
        let container = ContainerProvider::with_http(self.env.clone(), self.http.clone());
        if container.is_configured() {
            return container.fetch().await;
        }
        let imds = ImdsProvider::with_http(self.env.clone(), self.http.clone());
        let mut tried = Vec::new();
        if !imds.is_disabled() {
            match imds.fetch().await {
                Ok(credentials) => return Ok(credentials),
                Err(error) => tried.push(error),
            }
        }
        Err(Error::NoCredentials {
            profile: shared.profile_name().to_owned(),
            tried,
        })
    }
}

impl ExpiringSource for ChainSource {
    fn fetch(&self) -> FetchFuture<'_> {
        Box::pin(self.walk())
    }

    fn use_http_settings(&self, settings: &super::HttpSettings) {
        self.http.configure(settings);
    }
}

impl fmt::Debug for ChainSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChainSource").finish_non_exhaustive()
    }
}

impl Default for DefaultChain {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for DefaultChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DefaultChain").finish_non_exhaustive()
    }
}

impl CredentialsProvider for DefaultChain {
    fn credentials(&self) -> CredentialsFuture<'_> {
        self.cache.credentials()
    }

    fn invalidate(&self, rejected: &Credentials) {
        self.cache.invalidate(rejected);
    }

    fn use_http_settings(&self, settings: &super::HttpSettings) {
        self.cache.use_http_settings(settings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use crate::{EnvironmentProvider, MapEnv, ProfileProvider};

    #[test]
    fn providers_and_default_chain() {
        let home = Home::new(
            "[profile other]\nregion = x\n",
            "[default]\naws_access_key_id = FILE\naws_secret_access_key = FS\n\
             [other]\naws_access_key_id = OTHER\naws_secret_access_key = OS\n",
        );
        let chain = DefaultChain::with_env(Arc::new(home.env()));
        assert_eq!(keys(&block_on(chain.credentials()).unwrap()).0, "FILE");

        let env = home
            .env()
            .with_var("AWS_ACCESS_KEY_ID", "ENV")
            .with_var("AWS_SECRET_ACCESS_KEY", "ES");
        let chain = DefaultChain::with_env(Arc::new(env.clone()));
        assert_eq!(keys(&block_on(chain.credentials()).unwrap()).0, "ENV");
        let provider = EnvironmentProvider::with_env(Arc::new(env));
        assert_eq!(keys(&block_on(provider.credentials()).unwrap()).0, "ENV");

        let provider = ProfileProvider::with_env(Arc::new(home.env()), Some("other".into()));
        assert_eq!(keys(&block_on(provider.credentials()).unwrap()).0, "OTHER");

        let empty = Home::new("", "");
        let chain = DefaultChain::with_env(Arc::new(empty.env()));
        let err = block_on(chain.credentials()).unwrap_err();
        assert!(matches!(err, Error::NoCredentials { ref profile, .. } if profile == "default"));
        assert!(err.to_string().contains("AWS_ACCESS_KEY_ID"));
        let provider = EnvironmentProvider::with_env(Arc::new(MapEnv::new()));
        assert!(matches!(
            block_on(provider.credentials()),
            Err(Error::NoCredentials { .. })
        ));

        let fixed = Credentials::new("STATIC".to_owned(), "SS".to_owned(), None);
        let boxed: Box<dyn CredentialsProvider> = Box::new(Arc::new(fixed));
        assert_eq!(keys(&block_on(boxed.credentials()).unwrap()).0, "STATIC");
    }

    #[test]
    fn chain_keeps_first_success() {
        let home = Home::new(
            "",
            "[default]\naws_access_key_id = FIRST\naws_secret_access_key = S\n",
        );
        let chain = DefaultChain::with_env(Arc::new(home.env()));
        assert_eq!(keys(&block_on(chain.credentials()).unwrap()).0, "FIRST");
        std::fs::write(
            home.dir.path().join(".aws").join("credentials"),
            "[default]\naws_access_key_id = SECOND\naws_secret_access_key = S\n",
        )
        .unwrap();
        assert_eq!(keys(&block_on(chain.credentials()).unwrap()).0, "FIRST");
    }
}

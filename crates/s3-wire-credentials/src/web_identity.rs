//! Web identity: an OIDC token in a file (EKS IRSA, GitHub Actions, …) exchanged for role
//! credentials with STS AssumeRoleWithWebIdentity.

use std::path::PathBuf;
use std::sync::Arc;

use super::cache::{Clock, SystemClock};
use super::http::Http;
use super::sts::{self, AssumeRole, StsEndpoint};
use super::{
    Env, Error, ExpiringCredentials, ExpiringSource, FetchFuture, Origin, ProcessEnv, SharedConfig,
    SourceErrorKind, env_var,
};

/// What a web identity exchange needs: from `AWS_WEB_IDENTITY_TOKEN_FILE` / `AWS_ROLE_ARN`
/// / `AWS_ROLE_SESSION_NAME`, or from a profile's `web_identity_token_file` / `role_arn` /
/// `role_session_name`.
#[derive(Debug, Clone)]
pub(crate) struct WebIdentity {
    pub(crate) token_file: PathBuf,
    pub(crate) role_arn: String,
    pub(crate) session_name: Option<String>,
    pub(crate) duration_seconds: Option<u32>,
}

impl WebIdentity {
    /// From the environment variables: `None` unless `AWS_WEB_IDENTITY_TOKEN_FILE` is set;
    /// an error if `AWS_ROLE_ARN` is not.
    pub(crate) fn from_env(env: &dyn Env) -> Option<Result<Self, Error>> {
        let token_file = env_var(env, "AWS_WEB_IDENTITY_TOKEN_FILE")?;
        Some(
            env_var(env, "AWS_ROLE_ARN")
                .map(|role_arn| Self {
                    token_file: PathBuf::from(token_file),
                    role_arn,
                    session_name: env_var(env, "AWS_ROLE_SESSION_NAME"),
                    duration_seconds: None,
                })
                .ok_or_else(|| {
                    Error::from_source(
                        Origin::WebIdentity {
                            role_arn: String::new(),
                        },
                        SourceErrorKind::Misconfigured {
                            setting: "AWS_ROLE_ARN".to_owned(),
                            reason: "AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not"
                                .to_owned(),
                        },
                    )
                }),
        )
    }

    /// Reads the token (it is rotated on disk, so at every fetch) and exchanges it.
    pub(crate) async fn fetch(
        &self,
        http: &Http,
        env: &dyn Env,
        region: Option<&str>,
        clock: &dyn Clock,
    ) -> Result<ExpiringCredentials, Error> {
        let origin = Origin::WebIdentity {
            role_arn: self.role_arn.clone(),
        };
        let token = tokio::fs::read_to_string(&self.token_file)
            .await
            .map_err(|source| {
                Error::from_source(
                    origin.clone(),
                    SourceErrorKind::File {
                        path: self.token_file.clone(),
                        source,
                    },
                )
            })?;
        let token = token.trim();
        if token.is_empty() {
            return Err(Error::from_source(
                origin,
                SourceErrorKind::Misconfigured {
                    setting: self.token_file.display().to_string(),
                    reason: "the web identity token file is empty".to_owned(),
                },
            ));
        }
        let endpoint = StsEndpoint::resolve(env, region, &origin)?;
        let params = AssumeRole {
            role_arn: self.role_arn.clone(),
            session_name: self
                .session_name
                .clone()
                .unwrap_or_else(|| sts::default_session_name(clock.now())),
            external_id: None,
            duration_seconds: self.duration_seconds,
        };
        sts::assume_role_with_web_identity(http, &endpoint, &params, token).await
    }
}

/// Web identity from the environment: `AWS_WEB_IDENTITY_TOKEN_FILE`, `AWS_ROLE_ARN`,
/// `AWS_ROLE_SESSION_NAME` (default `s3-wire-<unix millis>`), with STS at the regional
/// endpoint of `AWS_REGION` / `AWS_DEFAULT_REGION` / the profile's `region`, or at
/// `AWS_ENDPOINT_URL_STS`. The token file is read at every fetch (it is rotated).
/// Wrap it in a [`CachingProvider`](super::CachingProvider).
#[derive(Debug)]
pub struct WebIdentityProvider {
    env: Arc<dyn Env>,
    http: Arc<Http>,
    clock: Arc<dyn Clock>,
}

impl WebIdentityProvider {
    /// From the process environment.
    pub fn new() -> Self {
        Self::with_env(Arc::new(ProcessEnv))
    }

    /// From `env`.
    pub fn with_env(env: Arc<dyn Env>) -> Self {
        Self {
            env,
            http: Arc::default(),
            clock: Arc::new(SystemClock),
        }
    }

    /// True if `AWS_WEB_IDENTITY_TOKEN_FILE` is set.
    pub fn is_configured(&self) -> bool {
        env_var(self.env.as_ref(), "AWS_WEB_IDENTITY_TOKEN_FILE").is_some()
    }
}

impl Default for WebIdentityProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl ExpiringSource for WebIdentityProvider {
    fn fetch(&self) -> FetchFuture<'_> {
        Box::pin(async move {
            let web_identity = WebIdentity::from_env(self.env.as_ref()).unwrap_or_else(|| {
                Err(Error::from_source(
                    Origin::WebIdentity {
                        role_arn: String::new(),
                    },
                    SourceErrorKind::Misconfigured {
                        setting: "AWS_WEB_IDENTITY_TOKEN_FILE".to_owned(),
                        reason: "not set".to_owned(),
                    },
                ))
            })?;
            let shared = SharedConfig::load_off_thread(self.env.clone()).await?;
            let region = shared.region()?;
            web_identity
                .fetch(
                    &self.http,
                    self.env.as_ref(),
                    region.as_deref(),
                    self.clock.as_ref(),
                )
                .await
        })
    }

    fn use_http_settings(&self, settings: &super::HttpSettings) {
        self.http.configure(settings);
    }
}

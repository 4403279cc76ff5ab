//! Credentials, region and endpoint: from code or from the standard AWS environment, as
//! s3-wire's client uses them, and for anyone who signs with `s3-sigv4` in an HTTP stack of
//! their own (aws-config is to aws-sdk-s3 what this crate is to s3-wire-tokio, which
//! re-exports it as `s3_wire_tokio::credentials`).
//!
//! * [`CredentialsProvider`] is the trait the client signs with; applications plug their
//!   own source (a vault, an STS cache, …) by implementing it. [`Credentials`] itself is a
//!   provider of static keys.
//! * [`DefaultChain`] is what s3-wire's `ClientBuilder::from_env` uses. It tries, in aws-config's order, and keeps the first source that has credentials:
//!   1. the environment ([`EnvironmentProvider`]): `AWS_ACCESS_KEY_ID`,
//!      `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`;
//!   2. the shared profile ([`ProfileProvider`]) chosen by `AWS_PROFILE` in
//!      `~/.aws/config` and `~/.aws/credentials` (`AWS_CONFIG_FILE`,
//!      `AWS_SHARED_CREDENTIALS_FILE`): static keys, `role_arn` with `source_profile` or
//!      `credential_source` (chains of STS AssumeRole, [`profile_chain`]),
//!      `web_identity_token_file`, `credential_process` ([`ProcessProvider`]),
//!      `sso_session` or the legacy `sso_start_url` ([`SsoProvider`]);
//!   3. web identity from the environment ([`WebIdentityProvider`]):
//!      `AWS_WEB_IDENTITY_TOKEN_FILE`, `AWS_ROLE_ARN`, `AWS_ROLE_SESSION_NAME` (EKS IRSA);
//!   4. the ECS/EKS container endpoint ([`ContainerProvider`]):
//!      `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`, `AWS_CONTAINER_CREDENTIALS_FULL_URI`,
//!      `AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE)`;
//!   5. EC2 instance metadata, IMDSv2 ([`ImdsProvider`]): `AWS_EC2_METADATA_DISABLED`,
//!      `AWS_EC2_METADATA_SERVICE_ENDPOINT(_MODE)`.
//!
//!   STS and the SSO portal are reached at their regional AWS endpoints unless
//!   `AWS_ENDPOINT_URL_STS` / `AWS_ENDPOINT_URL_SSO` (or `AWS_ENDPOINT_URL`) say otherwise.
//! * Temporary credentials come with an expiration ([`ExpiringCredentials`]); a source of
//!   them implements [`ExpiringSource`] and is wrapped in a [`CachingProvider`], which
//!   refreshes ahead of expiry, once for all concurrent callers, keeps serving the old
//!   credentials through a short outage of the source, and drops them when S3 answers
//!   `ExpiredToken` (the client then re-signs and retries once).
//! * [`SharedConfig`] loads the variables and files once and also resolves the region
//!   (`AWS_REGION`, `AWS_DEFAULT_REGION`, profile `region`) and the endpoint
//!   (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, profile `services` / `endpoint_url`).
//!
//! Every lookup goes through an [`Env`], so tests (and embedders) can inject variables and a
//! home directory with [`MapEnv`] instead of mutating the process environment. Files are
//! read and processes run off the async threads.
//!
//! The file format follows the AWS CLI / SDK shared-config rules: `#` and `;` start comment
//! lines, and inline comments when preceded by whitespace; section names are case-sensitive
//! and property names are not; in the config file profiles are `[profile name]` (or
//! `[default]`, which `[profile default]` overrides), in the credentials file plain `[name]`;
//! the credentials file wins where both files set a property of the same profile.

pub use s3_sigv4::Credentials;

mod cache;
mod chain;
mod container;
pub mod documents;
mod env;
mod environment;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod http;
mod imds;
pub mod jitter;
mod process;
pub mod profile_chain;
mod provider;
mod shared_config;
mod shared_files;
mod sso;
mod sts;
#[cfg(test)]
mod test_support;
pub mod tls;
pub mod transport;
mod web_identity;

pub use cache::{CacheSettings, CachingProvider, Clock, SystemClock};
pub use chain::DefaultChain;
pub use container::ContainerProvider;
pub(crate) use env::env_var;
pub use env::{Env, MapEnv, ProcessEnv};
pub use environment::{EnvironmentProvider, credentials_from_env};
pub use error::{Error, Origin, ParseErrorKind, SourceErrorKind};
pub use http::HttpSettings;
pub use imds::{ImdsClient, ImdsProvider};
pub use process::ProcessProvider;
pub use profile_chain::ProfileProvider;
pub use provider::{
    CredentialsFuture, CredentialsProvider, ExpiringCredentials, ExpiringSource, FetchFuture,
};
pub use shared_config::{EndpointSettings, SharedConfig};
pub use shared_files::{Profile, ProfileSet, Section, credentials_from_profile, shared_file_paths};
pub(crate) use shared_files::{UNSUPPORTED_SETTINGS, static_keys};
pub use sso::SsoProvider;
pub use web_identity::WebIdentityProvider;

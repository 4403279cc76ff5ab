//! Credentials from the `AWS_*` variables, and their provider.

use std::fmt;
use std::sync::Arc;

use crate::shared_config::selected_profile;
use crate::{
    Credentials, CredentialsFuture, CredentialsProvider, Env, Error, Origin, ProcessEnv, env_var,
};

/// Credentials from the `AWS_*` variables: `None` when `AWS_ACCESS_KEY_ID` and
/// `AWS_SECRET_ACCESS_KEY` are both unset, an error when only one is.
pub fn credentials_from_env(env: &dyn Env) -> Result<Option<Credentials>, Error> {
    env_credentials(env).map_err(incomplete_env)
}

/// [`credentials_from_env`] with the error reduced to the missing variable's name, so that
/// [`SharedConfig`] can keep it and stay `Clone`.
pub(crate) fn env_credentials(env: &dyn Env) -> Result<Option<Credentials>, &'static str> {
    let access_key = env_var(env, "AWS_ACCESS_KEY_ID");
    let secret_key = env_var(env, "AWS_SECRET_ACCESS_KEY");
    match (access_key, secret_key) {
        (None, None) => Ok(None),
        (Some(access_key), Some(secret_key)) => Ok(Some(Credentials::new(
            access_key,
            secret_key,
            env_var(env, "AWS_SESSION_TOKEN"),
        ))),
        (None, Some(_)) => Err("AWS_ACCESS_KEY_ID"),
        (Some(_), None) => Err("AWS_SECRET_ACCESS_KEY"),
    }
}

pub(crate) fn incomplete_env(missing: &'static str) -> Error {
    Error::Incomplete {
        origin: Origin::Environment,
        missing,
    }
}

/// Credentials from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`,
/// read at every call.
pub struct EnvironmentProvider {
    env: Arc<dyn Env>,
}

impl EnvironmentProvider {
    /// Reads the real process environment.
    pub fn new() -> Self {
        Self::with_env(Arc::new(ProcessEnv))
    }

    /// Reads `env`.
    pub fn with_env(env: Arc<dyn Env>) -> Self {
        Self { env }
    }
}

impl Default for EnvironmentProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for EnvironmentProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EnvironmentProvider")
    }
}

impl CredentialsProvider for EnvironmentProvider {
    fn credentials(&self) -> CredentialsFuture<'_> {
        let result = credentials_from_env(self.env.as_ref()).and_then(|c| {
            c.ok_or_else(|| Error::NoCredentials {
                profile: selected_profile(self.env.as_ref()).0,
                tried: Vec::new(),
            })
        });
        Box::pin(async move { result })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MapEnv;
    use crate::test_support::*;

    #[test]
    fn environment_credentials_with_and_without_token() {
        let env = MapEnv::new()
            .with_var("AWS_ACCESS_KEY_ID", "AKID")
            .with_var("AWS_SECRET_ACCESS_KEY", "SECRET");
        let creds = credentials_from_env(&env).unwrap().unwrap();
        assert_eq!(keys(&creds), ("AKID".into(), "SECRET".into(), None));

        let env = env.with_var("AWS_SESSION_TOKEN", "TOKEN");
        let creds = credentials_from_env(&env).unwrap().unwrap();
        assert_eq!(keys(&creds).2.as_deref(), Some("TOKEN"));
    }

    #[test]
    fn environment_partial_and_empty() {
        let env = MapEnv::new().with_var("AWS_ACCESS_KEY_ID", "AKID");
        match credentials_from_env(&env) {
            Err(Error::Incomplete { origin, missing }) => {
                assert_eq!(origin, Origin::Environment);
                assert_eq!(missing, "AWS_SECRET_ACCESS_KEY");
            }
            other => panic!("expected Incomplete, got {other:?}"),
        }
        let env = MapEnv::new().with_var("AWS_SECRET_ACCESS_KEY", "S");
        assert!(matches!(
            credentials_from_env(&env),
            Err(Error::Incomplete {
                missing: "AWS_ACCESS_KEY_ID",
                ..
            })
        ));
        // Empty values are unset, as in the AWS CLI.
        let env = MapEnv::new()
            .with_var("AWS_ACCESS_KEY_ID", "")
            .with_var("AWS_SECRET_ACCESS_KEY", "");
        assert!(credentials_from_env(&env).unwrap().is_none());
    }
}

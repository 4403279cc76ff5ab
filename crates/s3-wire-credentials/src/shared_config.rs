//! Everything the standard environment configures, loaded once: the selected profile,
//! credentials, region and endpoint settings.

use std::path::PathBuf;
use std::sync::Arc;

use crate::environment::env_credentials;
use crate::environment::incomplete_env;
use crate::{Credentials, Env, Error, Profile, ProfileSet, credentials_from_profile, env_var};

/// The profile to use: `AWS_PROFILE`, else the legacy `AWS_DEFAULT_PROFILE`, else `default`.
/// The flag tells whether it was chosen explicitly (then it must exist).
pub(crate) fn selected_profile(env: &dyn Env) -> (String, bool) {
    match env_var(env, "AWS_PROFILE").or_else(|| env_var(env, "AWS_DEFAULT_PROFILE")) {
        Some(name) => (name, true),
        None => ("default".to_owned(), false),
    }
}

/// Everything the standard environment configures, loaded once: the variables that matter
/// and the parsed shared files.
///
/// ```
/// use s3_wire_credentials::{MapEnv, SharedConfig};
///
/// let env = MapEnv::new()
///     .with_var("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
///     .with_var("AWS_SECRET_ACCESS_KEY", "secret")
///     .with_var("AWS_REGION", "eu-central-1")
///     .with_var("AWS_ENDPOINT_URL", "http://127.0.0.1:9000");
/// let config = SharedConfig::load(&env)?;
/// assert_eq!(config.region()?.as_deref(), Some("eu-central-1"));
/// assert_eq!(config.endpoint_url()?.as_deref(), Some("http://127.0.0.1:9000"));
/// assert!(config.credentials()?.is_some());
/// # Ok::<(), s3_wire_credentials::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SharedConfig {
    profile_name: String,
    profile_explicit: bool,
    profiles: ProfileSet,
    env_credentials: Result<Option<Credentials>, &'static str>,
    env_region: Option<String>,
    env_endpoint_s3: Option<String>,
    env_endpoint: Option<String>,
    env_ignore_endpoints: Option<bool>,
    env_use_fips: Option<String>,
    env_use_dual_stack: Option<String>,
    env_use_arn_region: Option<String>,
    env_us_east_1_regional: Option<String>,
    env_disable_mrap: Option<String>,
    env_disable_express_session_auth: Option<String>,
    env_ca_bundle: Option<String>,
}

/// The S3 endpoint settings of the environment and the profile (see
/// [`SharedConfig::endpoint_settings`]); `None` where neither sets one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EndpointSettings {
    /// `AWS_USE_FIPS_ENDPOINT`, or the profile's `use_fips_endpoint`.
    pub use_fips: Option<bool>,
    /// `AWS_USE_DUALSTACK_ENDPOINT`, or the profile's `use_dualstack_endpoint` (or
    /// `s3` → `use_dualstack_endpoint`).
    pub use_dual_stack: Option<bool>,
    /// The profile's `s3` → `use_accelerate_endpoint`.
    pub accelerate: Option<bool>,
    /// The profile's `s3` → `addressing_style` (`path`, `virtual` or `auto`).
    pub addressing_style: Option<s3_ops::AddressingStyle>,
    /// `AWS_S3_USE_ARN_REGION`, or the profile's `s3_use_arn_region` (or `s3` →
    /// `use_arn_region`).
    pub use_arn_region: Option<bool>,
    /// `true` for the legacy global endpoint of `us-east-1` (`s3.amazonaws.com`):
    /// `AWS_S3_US_EAST_1_REGIONAL_ENDPOINT`, or the profile's
    /// `s3_us_east_1_regional_endpoint` (or `s3` → `us_east_1_regional_endpoint`), `legacy`
    /// (`true`) or `regional` (`false`).
    pub us_east_1_global_endpoint: Option<bool>,
    /// `AWS_S3_DISABLE_MULTIREGION_ACCESS_POINTS`, or the profile's
    /// `s3_disable_multiregion_access_points` (or `s3` → the same key).
    pub disable_multi_region_access_points: Option<bool>,
    /// `AWS_S3_DISABLE_EXPRESS_SESSION_AUTH`, or the profile's
    /// `s3_disable_express_session_auth` (or `s3` → the same key).
    pub disable_express_session_auth: Option<bool>,
}

impl SharedConfig {
    /// Reads the variables of `env` and the shared files they point to.
    pub fn load(env: &dyn Env) -> Result<Self, Error> {
        let (profile_name, profile_explicit) = selected_profile(env);
        Ok(Self {
            profile_name,
            profile_explicit,
            profiles: ProfileSet::load(env)?,
            env_credentials: env_credentials(env),
            env_region: env_var(env, "AWS_REGION").or_else(|| env_var(env, "AWS_DEFAULT_REGION")),
            env_endpoint_s3: env_var(env, "AWS_ENDPOINT_URL_S3"),
            env_endpoint: env_var(env, "AWS_ENDPOINT_URL"),
            env_ignore_endpoints: env_var(env, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")
                .map(|v| v.eq_ignore_ascii_case("true")),
            env_use_fips: env_var(env, "AWS_USE_FIPS_ENDPOINT"),
            env_use_dual_stack: env_var(env, "AWS_USE_DUALSTACK_ENDPOINT"),
            env_use_arn_region: env_var(env, "AWS_S3_USE_ARN_REGION"),
            env_us_east_1_regional: env_var(env, "AWS_S3_US_EAST_1_REGIONAL_ENDPOINT"),
            env_disable_mrap: env_var(env, "AWS_S3_DISABLE_MULTIREGION_ACCESS_POINTS"),
            env_disable_express_session_auth: env_var(env, "AWS_S3_DISABLE_EXPRESS_SESSION_AUTH"),
            env_ca_bundle: env_var(env, "AWS_CA_BUNDLE"),
        })
    }

    /// Like [`SharedConfig::load`] but with the profile `name` instead of `AWS_PROFILE`.
    pub fn load_profile(env: &dyn Env, name: &str) -> Result<Self, Error> {
        let mut config = Self::load(env)?;
        name.clone_into(&mut config.profile_name);
        config.profile_explicit = true;
        Ok(config)
    }

    /// [`SharedConfig::load`] (with profile `name` if given) on a blocking thread, so that
    /// reading the files never stalls an async thread.
    pub(crate) async fn load_off_thread(env: Arc<dyn Env>) -> Result<Self, Error> {
        Self::load_named_off_thread(env, None).await
    }

    pub(crate) async fn load_named_off_thread(
        env: Arc<dyn Env>,
        name: Option<String>,
    ) -> Result<Self, Error> {
        tokio::task::spawn_blocking(move || match name {
            Some(name) => Self::load_profile(env.as_ref(), &name),
            None => Self::load(env.as_ref()),
        })
        .await
        .map_err(|join| Error::provider(format!("reading the shared files failed: {join}")))?
    }

    /// The credentials of the `AWS_*` variables (see [`credentials_from_env`]).
    pub(crate) fn env_credentials(&self) -> Result<Option<Credentials>, Error> {
        self.env_credentials.clone().map_err(incomplete_env)
    }

    /// The name of the profile in use.
    pub fn profile_name(&self) -> &str {
        &self.profile_name
    }

    /// The parsed shared files.
    pub fn profiles(&self) -> &ProfileSet {
        &self.profiles
    }

    /// The profile in use; `None` if the default profile is absent, an error if an explicitly
    /// chosen one is.
    pub fn profile(&self) -> Result<Option<&Profile>, Error> {
        match self.profiles.profile(&self.profile_name) {
            Some(profile) => Ok(Some(profile)),
            None if self.profile_explicit => Err(Error::ProfileNotFound {
                profile: self.profile_name.clone(),
            }),
            None => Ok(None),
        }
    }

    /// Credentials from the environment, else from the profile; `None` if neither has any.
    pub fn credentials(&self) -> Result<Option<Credentials>, Error> {
        match &self.env_credentials {
            Ok(Some(credentials)) => return Ok(Some(credentials.clone())),
            Ok(None) => {}
            Err(missing) => return Err(incomplete_env(missing)),
        }
        match self.profile()? {
            Some(profile) => credentials_from_profile(profile),
            None => Ok(None),
        }
    }

    /// The region: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else the profile's `region`.
    pub fn region(&self) -> Result<Option<String>, Error> {
        if let Some(region) = &self.env_region {
            return Ok(Some(region.clone()));
        }
        Ok(self
            .profile()?
            .and_then(|p| p.get("region"))
            .filter(|r| !r.is_empty())
            .map(str::to_owned))
    }

    /// The configured S3 endpoint URL, in the AWS precedence order: `AWS_ENDPOINT_URL_S3`,
    /// `AWS_ENDPOINT_URL`, the `s3` → `endpoint_url` of the profile's `services` section, the
    /// profile's `endpoint_url`. `None` if none is set or
    /// `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` (or the profile's
    /// `ignore_configured_endpoint_urls`) is `true`.
    pub fn endpoint_url(&self) -> Result<Option<String>, Error> {
        let profile = self.profile()?;
        let ignore = self.env_ignore_endpoints.unwrap_or_else(|| {
            profile
                .and_then(|p| p.get("ignore_configured_endpoint_urls"))
                .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        });
        if ignore {
            return Ok(None);
        }
        if let Some(url) = self.env_endpoint_s3.as_ref().or(self.env_endpoint.as_ref()) {
            return Ok(Some(url.clone()));
        }
        let Some(profile) = profile else {
            return Ok(None);
        };
        let from_services = profile
            .get("services")
            .and_then(|name| self.profiles.services(name))
            .and_then(|services| services.sub_property("s3", "endpoint_url"));
        Ok(from_services
            .or_else(|| profile.get("endpoint_url"))
            .filter(|url| !url.is_empty())
            .map(str::to_owned))
    }
}

impl SharedConfig {
    /// The CA bundle to trust, as the AWS CLI finds it: `AWS_CA_BUNDLE`, else the profile's
    /// `ca_bundle`; with where it was named (for messages).
    pub fn ca_bundle(&self) -> Result<Option<(PathBuf, String)>, Error> {
        if let Some(path) = &self.env_ca_bundle {
            return Ok(Some((PathBuf::from(path), "AWS_CA_BUNDLE".to_owned())));
        }
        Ok(self.profile()?.and_then(|profile| {
            let path = profile.get("ca_bundle").filter(|p| !p.is_empty())?;
            Some((
                PathBuf::from(path),
                format!("ca_bundle of profile {:?}", profile.name()),
            ))
        }))
    }

    /// FIPS, dual-stack, Transfer Acceleration, addressing style, `use_arn_region`, the
    /// `us-east-1` global endpoint, Multi-Region Access Points and S3 Express session auth,
    /// as the AWS CLI reads them: an environment variable wins over the profile; the
    /// profile's `s3` section holds the S3-only ones. A value that is not `true` / `false`
    /// (`legacy` / `regional`, a known addressing style) is an error naming the setting.
    pub fn endpoint_settings(&self) -> Result<EndpointSettings, Error> {
        let profile = self.profile()?;
        let from_profile = |key: &'static str, sub_key: Option<&'static str>| {
            let profile = profile?;
            let value = profile
                .get(key)
                .or_else(|| sub_key.and_then(|sub| profile.sub_property("s3", sub)))?;
            Some((profile.name().to_owned(), key, value.to_owned()))
        };
        let boolean = |env: (&'static str, &Option<String>),
                       key: &'static str,
                       sub_key: Option<&'static str>|
         -> Result<Option<bool>, Error> {
            if let Some(value) = env.1 {
                return parse_bool(value)
                    .map(Some)
                    .ok_or_else(|| Error::InvalidVariable {
                        variable: env.0,
                        reason: format!("must be true or false, not {value:?}"),
                    });
            }
            match from_profile(key, sub_key) {
                None => Ok(None),
                Some((profile, setting, value)) => {
                    parse_bool(&value)
                        .map(Some)
                        .ok_or_else(|| Error::InvalidProfile {
                            profile,
                            setting,
                            reason: format!("must be true or false, not {value:?}"),
                        })
                }
            }
        };
        let s3_boolean = |sub_key: &'static str| -> Result<Option<bool>, Error> {
            match profile.and_then(|p| p.sub_property("s3", sub_key).map(|v| (p, v))) {
                None => Ok(None),
                Some((profile, value)) => {
                    parse_bool(value)
                        .map(Some)
                        .ok_or_else(|| Error::InvalidProfile {
                            profile: profile.name().to_owned(),
                            setting: sub_key,
                            reason: format!(
                                "(in the s3 section) must be true or false, not {value:?}"
                            ),
                        })
                }
            }
        };
        let addressing_style =
            match profile.and_then(|p| p.sub_property("s3", "addressing_style").map(|v| (p, v))) {
                None => None,
                Some((profile, value)) => Some(match value.to_ascii_lowercase().as_str() {
                    "path" => s3_ops::AddressingStyle::Path,
                    "virtual" => s3_ops::AddressingStyle::VirtualHosted,
                    "auto" => s3_ops::AddressingStyle::Auto,
                    _ => {
                        return Err(Error::InvalidProfile {
                            profile: profile.name().to_owned(),
                            setting: "addressing_style",
                            reason: format!(
                                "(in the s3 section) must be path, virtual or auto, not {value:?}"
                            ),
                        });
                    }
                }),
            };
        Ok(EndpointSettings {
            use_fips: boolean(
                ("AWS_USE_FIPS_ENDPOINT", &self.env_use_fips),
                "use_fips_endpoint",
                None,
            )?,
            use_dual_stack: boolean(
                ("AWS_USE_DUALSTACK_ENDPOINT", &self.env_use_dual_stack),
                "use_dualstack_endpoint",
                Some("use_dualstack_endpoint"),
            )?,
            accelerate: s3_boolean("use_accelerate_endpoint")?,
            addressing_style,
            use_arn_region: boolean(
                ("AWS_S3_USE_ARN_REGION", &self.env_use_arn_region),
                "s3_use_arn_region",
                Some("use_arn_region"),
            )?,
            us_east_1_global_endpoint: self.us_east_1_global_endpoint(profile)?,
            disable_multi_region_access_points: boolean(
                (
                    "AWS_S3_DISABLE_MULTIREGION_ACCESS_POINTS",
                    &self.env_disable_mrap,
                ),
                "s3_disable_multiregion_access_points",
                Some("s3_disable_multiregion_access_points"),
            )?,
            disable_express_session_auth: boolean(
                (
                    "AWS_S3_DISABLE_EXPRESS_SESSION_AUTH",
                    &self.env_disable_express_session_auth,
                ),
                "s3_disable_express_session_auth",
                Some("s3_disable_express_session_auth"),
            )?,
        })
    }

    /// `legacy` (`true`) or `regional` (`false`), from `AWS_S3_US_EAST_1_REGIONAL_ENDPOINT`
    /// or the profile.
    fn us_east_1_global_endpoint(&self, profile: Option<&Profile>) -> Result<Option<bool>, Error> {
        let parse = |value: &str| match value.to_ascii_lowercase().as_str() {
            "legacy" => Some(true),
            "regional" => Some(false),
            _ => None,
        };
        const REASON: &str = "must be legacy or regional";
        if let Some(value) = &self.env_us_east_1_regional {
            return parse(value)
                .map(Some)
                .ok_or_else(|| Error::InvalidVariable {
                    variable: "AWS_S3_US_EAST_1_REGIONAL_ENDPOINT",
                    reason: format!("{REASON}, not {value:?}"),
                });
        }
        let Some(profile) = profile else {
            return Ok(None);
        };
        let Some(value) = profile
            .get("s3_us_east_1_regional_endpoint")
            .or_else(|| profile.sub_property("s3", "us_east_1_regional_endpoint"))
        else {
            return Ok(None);
        };
        parse(value).map(Some).ok_or_else(|| Error::InvalidProfile {
            profile: profile.name().to_owned(),
            setting: "s3_us_east_1_regional_endpoint",
            reason: format!("{REASON}, not {value:?}"),
        })
    }
}

/// `true` / `false`, in any case.
pub(crate) fn parse_bool(value: &str) -> Option<bool> {
    if value.eq_ignore_ascii_case("true") {
        Some(true)
    } else if value.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MapEnv;
    use crate::test_support::*;

    #[test]
    fn shared_config_from_home_files_and_aws_profile() {
        let home = Home::new(
            "[default]\nregion = us-east-2\n[profile work]\nregion = ap-south-1\n",
            "[default]\naws_access_key_id = D\naws_secret_access_key = DS\n\
             [work]\naws_access_key_id = W\naws_secret_access_key = WS\n",
        );
        let config = SharedConfig::load(&home.env()).unwrap();
        assert_eq!(config.profile_name(), "default");
        assert_eq!(config.region().unwrap().as_deref(), Some("us-east-2"));
        assert_eq!(keys(&config.credentials().unwrap().unwrap()).0, "D");

        let env = home.env().with_var("AWS_PROFILE", "work");
        let config = SharedConfig::load(&env).unwrap();
        assert_eq!(config.region().unwrap().as_deref(), Some("ap-south-1"));
        assert_eq!(keys(&config.credentials().unwrap().unwrap()).0, "W");

        // The environment wins over the profile for keys and region.
        let env = env
            .with_var("AWS_ACCESS_KEY_ID", "E")
            .with_var("AWS_SECRET_ACCESS_KEY", "ES")
            .with_var("AWS_DEFAULT_REGION", "default-region");
        let config = SharedConfig::load(&env).unwrap();
        assert_eq!(keys(&config.credentials().unwrap().unwrap()).0, "E");
        assert_eq!(config.region().unwrap().as_deref(), Some("default-region"));
        let config = SharedConfig::load(&env.with_var("AWS_REGION", "r")).unwrap();
        assert_eq!(config.region().unwrap().as_deref(), Some("r"));
    }

    #[test]
    fn missing_explicit_profile_is_an_error_missing_default_is_not() {
        let home = Home::new("", "");
        let config = SharedConfig::load(&home.env()).unwrap();
        assert!(config.credentials().unwrap().is_none());
        assert!(config.region().unwrap().is_none());

        let config = SharedConfig::load(&home.env().with_var("AWS_PROFILE", "typo")).unwrap();
        assert!(matches!(
            config.region(),
            Err(Error::ProfileNotFound { ref profile }) if profile == "typo"
        ));
        assert!(matches!(
            config.credentials(),
            Err(Error::ProfileNotFound { .. })
        ));
    }

    #[test]
    fn endpoint_precedence() {
        let home = Home::new(
            "[default]\nendpoint_url = http://profile-global\nservices = svc\n\
             [services svc]\ns3 =\n  endpoint_url = http://profile-s3\n\
             [profile plain]\nendpoint_url = http://plain\n\
             [profile ignoring]\nendpoint_url = http://x\nignore_configured_endpoint_urls = true\n",
            "",
        );
        let endpoint = |env: &MapEnv| SharedConfig::load(env).unwrap().endpoint_url().unwrap();
        let env = home.env();
        assert_eq!(endpoint(&env).as_deref(), Some("http://profile-s3"));
        assert_eq!(
            endpoint(&env.clone().with_var("AWS_PROFILE", "plain")).as_deref(),
            Some("http://plain")
        );
        assert_eq!(
            endpoint(&env.clone().with_var("AWS_PROFILE", "ignoring")),
            None
        );
        let env = env.with_var("AWS_ENDPOINT_URL", "http://env-global");
        assert_eq!(endpoint(&env).as_deref(), Some("http://env-global"));
        let env = env.with_var("AWS_ENDPOINT_URL_S3", "http://env-s3");
        assert_eq!(endpoint(&env).as_deref(), Some("http://env-s3"));
        let env = env.with_var("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "TRUE");
        assert_eq!(endpoint(&env), None);
        assert_eq!(endpoint(&MapEnv::new()), None);
    }

    #[test]
    fn debug_output_redacts_secrets() {
        let set = parse(
            "",
            "[p]\naws_access_key_id = AKIDVISIBLE\naws_secret_access_key = TOPSECRET\n\
             aws_session_token = TOKENSECRET\n",
        )
        .unwrap();
        let debug = format!("{set:?}");
        assert!(debug.contains("AKIDVISIBLE"), "{debug}");
        assert!(!debug.contains("TOPSECRET"), "{debug}");
        assert!(!debug.contains("TOKENSECRET"), "{debug}");

        let env = MapEnv::new().with_var("AWS_SECRET_ACCESS_KEY", "ENVSECRET");
        let debug = format!("{env:?}");
        assert!(debug.contains("AWS_SECRET_ACCESS_KEY") && !debug.contains("ENVSECRET"));

        let config = SharedConfig::load(
            &env.with_var("AWS_ACCESS_KEY_ID", "A")
                .with_var("AWS_SESSION_TOKEN", "SESSIONSECRET"),
        )
        .unwrap();
        let debug = format!("{config:?}");
        assert!(
            !debug.contains("ENVSECRET") && !debug.contains("SESSIONSECRET"),
            "{debug}"
        );
    }
}

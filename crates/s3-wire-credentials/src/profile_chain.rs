//! Profiles of the shared files: what credentials a profile stands for, as a chain.
//!
//! `resolve` reads the files' profiles (no I/O) into a `ProfileChain`: a base source
//! and the roles to assume on top of it, in order. For each profile, as aws-config and
//! botocore do:
//! 1. `role_arn` — the role is assumed (STS AssumeRole) with the credentials of
//!    `source_profile` (resolved the same way; a profile naming itself uses its own static
//!    keys) or of `credential_source` (`Environment`, `Ec2InstanceMetadata`,
//!    `EcsContainer`); with `web_identity_token_file` instead, through
//!    AssumeRoleWithWebIdentity. `external_id`, `role_session_name` and
//!    `duration_seconds` (900–43200) are passed on; `mfa_serial` is refused, since a
//!    library cannot prompt for a code. A `source_profile` that leads back to a profile
//!    on the way is a [`Error::ProfileCycle`].
//! 2. static keys (`aws_access_key_id`, `aws_secret_access_key`, `aws_session_token`);
//! 3. SSO (`sso_session`, or the legacy `sso_start_url`);
//! 4. `credential_process`.

use std::fmt;
use std::sync::Arc;

use super::cache::{Clock, SystemClock};
use super::http::Http;
use super::sts::{self, AssumeRole, StsEndpoint};
use super::web_identity::WebIdentity;
use super::{
    CachingProvider, ContainerProvider, Credentials, CredentialsFuture, CredentialsProvider, Env,
    Error, ExpiringCredentials, ExpiringSource, FetchFuture, ImdsProvider, Origin, ProcessEnv,
    ProcessProvider, Profile, ProfileSet, SharedConfig, SsoProvider, UNSUPPORTED_SETTINGS,
    credentials_from_env, static_keys,
};

/// Where the first credentials of a chain come from.
#[derive(Debug, Clone)]
pub(crate) enum Base {
    Static(Credentials),
    WebIdentity(WebIdentity),
    Sso { profile: String },
    Process { command: String, profile: String },
    Environment,
    InstanceMetadata,
    Container,
}

/// A profile's credentials: the base, then each role assumed with the credentials before
/// it.
#[derive(Debug, Clone)]
pub(crate) struct ProfileChain {
    pub(crate) base: Base,
    pub(crate) roles: Vec<AssumeRoleStep>,
}

/// One AssumeRole of a chain.
#[derive(Debug, Clone)]
pub(crate) struct AssumeRoleStep {
    pub(crate) role_arn: String,
    pub(crate) session_name: Option<String>,
    pub(crate) external_id: Option<String>,
    pub(crate) duration_seconds: Option<u32>,
}

fn setting<'a>(profile: &'a Profile, name: &str) -> Option<&'a str> {
    profile.get(name).filter(|value| !value.is_empty())
}

fn invalid(profile: &Profile, setting: &'static str, reason: impl Into<String>) -> Error {
    Error::InvalidProfile {
        profile: profile.name().to_owned(),
        setting,
        reason: reason.into(),
    }
}

fn duration_seconds(profile: &Profile) -> Result<Option<u32>, Error> {
    setting(profile, "duration_seconds")
        .map(|text| {
            text.parse::<u32>()
                .ok()
                .filter(|seconds| (900..=43_200).contains(seconds))
                .ok_or_else(|| {
                    invalid(
                        profile,
                        "duration_seconds",
                        format!("{text:?} is not a number of seconds from 900 to 43200"),
                    )
                })
        })
        .transpose()
}

/// The chain of profile `name`; `None` when that profile sets no credentials at all.
pub(crate) fn resolve(profiles: &ProfileSet, name: &str) -> Result<Option<ProfileChain>, Error> {
    let mut visited: Vec<String> = Vec::new();
    let mut roles = Vec::new();
    let mut current = name.to_owned();
    let base = loop {
        if visited.contains(&current) {
            visited.push(current);
            return Err(Error::ProfileCycle { chain: visited });
        }
        let profile = match profiles.profile(&current) {
            Some(profile) => profile,
            None if visited.is_empty() => return Ok(None),
            None => {
                return Err(Error::ProfileNotFound {
                    profile: current.clone(),
                });
            }
        };
        visited.push(current.clone());
        if let Some(unsupported) = UNSUPPORTED_SETTINGS
            .iter()
            .find(|name| setting(profile, name).is_some())
        {
            return Err(Error::UnsupportedProfile {
                profile: current.clone(),
                setting: (*unsupported).to_owned(),
            });
        }
        let Some(role_arn) = setting(profile, "role_arn") else {
            match base_of(profile)? {
                Some(base) => break base,
                None if visited.len() == 1 => return Ok(None),
                None => {
                    return Err(invalid(
                        profile,
                        "source_profile",
                        "it is used as a source_profile but has no credentials (static keys, \
                         a role, SSO or a credential_process)",
                    ));
                }
            }
        };
        if setting(profile, "mfa_serial").is_some() {
            return Err(invalid(
                profile,
                "mfa_serial",
                "a role that requires MFA cannot be assumed without prompting for a code; \
                 use a credential_process that prompts, or obtain session credentials first \
                 (aws sts get-session-token)",
            ));
        }
        let step = AssumeRoleStep {
            role_arn: role_arn.to_owned(),
            session_name: setting(profile, "role_session_name").map(str::to_owned),
            external_id: setting(profile, "external_id").map(str::to_owned),
            duration_seconds: duration_seconds(profile)?,
        };
        match (
            setting(profile, "source_profile"),
            setting(profile, "credential_source"),
            setting(profile, "web_identity_token_file"),
        ) {
            (Some(_), Some(_), _) => {
                return Err(invalid(
                    profile,
                    "credential_source",
                    "source_profile and credential_source exclude each other: set one",
                ));
            }
            (Some(source), None, _) if source == current => {
                // A profile naming itself assumes its role with its own static keys.
                roles.push(step);
                match static_keys(profile)? {
                    Some(credentials) => break Base::Static(credentials),
                    None => {
                        return Err(invalid(
                            profile,
                            "source_profile",
                            "it names the profile itself, which has no static keys",
                        ));
                    }
                }
            }
            (Some(source), None, _) => {
                roles.push(step);
                current = source.to_owned();
            }
            (None, Some(source), _) => {
                roles.push(step);
                break match source {
                    "Environment" => Base::Environment,
                    "Ec2InstanceMetadata" => Base::InstanceMetadata,
                    "EcsContainer" => Base::Container,
                    other => {
                        return Err(invalid(
                            profile,
                            "credential_source",
                            format!(
                                "{other:?} is not one of Environment, Ec2InstanceMetadata, \
                                 EcsContainer"
                            ),
                        ));
                    }
                };
            }
            (None, None, Some(token_file)) => {
                // The role is assumed by the web identity exchange itself.
                break Base::WebIdentity(WebIdentity {
                    token_file: token_file.into(),
                    role_arn: step.role_arn,
                    session_name: step.session_name,
                    duration_seconds: step.duration_seconds,
                });
            }
            (None, None, None) => {
                return Err(invalid(
                    profile,
                    "role_arn",
                    "a role needs source_profile, credential_source or web_identity_token_file \
                     to say which credentials assume it",
                ));
            }
        }
    };
    roles.reverse();
    Ok(Some(ProfileChain { base, roles }))
}

/// The base source of a profile without `role_arn`.
fn base_of(profile: &Profile) -> Result<Option<Base>, Error> {
    if let Some(credentials) = static_keys(profile)? {
        return Ok(Some(Base::Static(credentials)));
    }
    if setting(profile, "web_identity_token_file").is_some() {
        return Err(invalid(
            profile,
            "web_identity_token_file",
            "a web identity needs role_arn, the role it is exchanged for",
        ));
    }
    if setting(profile, "sso_session").is_some() || setting(profile, "sso_start_url").is_some() {
        return Ok(Some(Base::Sso {
            profile: profile.name().to_owned(),
        }));
    }
    if let Some(command) = setting(profile, "credential_process") {
        return Ok(Some(Base::Process {
            command: command.to_owned(),
            profile: profile.name().to_owned(),
        }));
    }
    Ok(None)
}

/// What running a chain needs.
pub(crate) struct ChainContext<'a> {
    pub(crate) env: &'a Arc<dyn Env>,
    pub(crate) http: &'a Arc<Http>,
    pub(crate) clock: &'a Arc<dyn Clock>,
    pub(crate) shared: &'a SharedConfig,
}

impl ProfileChain {
    /// Fetches the base credentials and assumes each role in turn.
    pub(crate) async fn fetch(
        &self,
        context: &ChainContext<'_>,
    ) -> Result<ExpiringCredentials, Error> {
        let env = context.env;
        let region = context.shared.region()?;
        let mut credentials = match &self.base {
            Base::Static(credentials) => ExpiringCredentials::new(credentials.clone(), None),
            Base::WebIdentity(web_identity) => {
                web_identity
                    .fetch(
                        context.http,
                        env.as_ref(),
                        region.as_deref(),
                        context.clock.as_ref(),
                    )
                    .await?
            }
            Base::Sso { profile } => {
                SsoProvider::with_http(
                    env.clone(),
                    context.shared.profiles(),
                    profile,
                    context.http.clone(),
                    context.clock.clone(),
                )?
                .fetch()
                .await?
            }
            Base::Process { command, profile } => {
                ProcessProvider::new(command.clone(), profile.clone())
                    .fetch()
                    .await?
            }
            Base::Environment => {
                let credentials =
                    credentials_from_env(env.as_ref())?.ok_or_else(|| Error::Incomplete {
                        origin: Origin::Environment,
                        missing: "AWS_ACCESS_KEY_ID",
                    })?;
                ExpiringCredentials::new(credentials, None)
            }
            Base::InstanceMetadata => {
                ImdsProvider::with_http(env.clone(), context.http.clone())
                    .fetch()
                    .await?
            }
            Base::Container => {
                ContainerProvider::with_http(env.clone(), context.http.clone())
                    .fetch()
                    .await?
            }
        };
        for role in &self.roles {
            let origin = Origin::AssumeRole {
                role_arn: role.role_arn.clone(),
            };
            let endpoint = StsEndpoint::resolve(env.as_ref(), region.as_deref(), &origin)?;
            let now = context.clock.now();
            let params = AssumeRole {
                role_arn: role.role_arn.clone(),
                session_name: role
                    .session_name
                    .clone()
                    .unwrap_or_else(|| sts::default_session_name(now)),
                external_id: role.external_id.clone(),
                duration_seconds: role.duration_seconds,
            };
            credentials = sts::assume_role(
                context.http,
                &endpoint,
                credentials.credentials(),
                &params,
                now,
            )
            .await?;
        }
        Ok(credentials)
    }
}

/// The credentials of one profile of the shared files, fetched as its settings say (see
/// the [module rules](self)) and cached ([`CachingProvider`]). The profile is `AWS_PROFILE`
/// (else `AWS_DEFAULT_PROFILE`, else `default`) unless named; the files are read again at
/// every refresh, off the async threads.
pub struct ProfileProvider {
    cache: CachingProvider<ProfileSource>,
}

/// The uncached source behind [`ProfileProvider`].
pub(crate) struct ProfileSource {
    env: Arc<dyn Env>,
    profile: Option<String>,
    http: Arc<Http>,
    clock: Arc<dyn Clock>,
}

impl ProfileSource {
    pub(crate) fn new(
        env: Arc<dyn Env>,
        profile: Option<String>,
        http: Arc<Http>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            env,
            profile,
            http,
            clock,
        }
    }

    /// The profile's credentials; `Ok(None)` if the (not explicitly chosen) profile does
    /// not exist or sets none.
    pub(crate) async fn fetch_in(
        &self,
        shared: &SharedConfig,
    ) -> Result<Option<ExpiringCredentials>, Error> {
        if shared.profile()?.is_none() {
            return Ok(None);
        }
        let Some(chain) = resolve(shared.profiles(), shared.profile_name())? else {
            return Ok(None);
        };
        let context = ChainContext {
            env: &self.env,
            http: &self.http,
            clock: &self.clock,
            shared,
        };
        chain.fetch(&context).await.map(Some)
    }
}

impl fmt::Debug for ProfileSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProfileSource")
            .field("profile", &self.profile)
            .finish_non_exhaustive()
    }
}

impl ExpiringSource for ProfileSource {
    fn fetch(&self) -> FetchFuture<'_> {
        Box::pin(async move {
            let shared =
                SharedConfig::load_named_off_thread(self.env.clone(), self.profile.clone()).await?;
            self.fetch_in(&shared)
                .await?
                .ok_or_else(|| Error::NoCredentials {
                    profile: shared.profile_name().to_owned(),
                    tried: Vec::new(),
                })
        })
    }

    fn use_http_settings(&self, settings: &super::HttpSettings) {
        self.http.configure(settings);
    }
}

impl ProfileProvider {
    /// The profile named by `AWS_PROFILE` (else `default`) in the real environment.
    pub fn new() -> Self {
        Self::with_env(Arc::new(ProcessEnv), None)
    }

    /// The profile `profile` (else the one `env` selects) with files located through `env`.
    pub fn with_env(env: Arc<dyn Env>, profile: Option<String>) -> Self {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let source = ProfileSource::new(env, profile, Arc::default(), clock.clone());
        Self {
            cache: CachingProvider::with_settings(source, Default::default(), clock),
        }
    }
}

impl Default for ProfileProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ProfileProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProfileProvider")
            .field("profile", &self.cache.source().profile)
            .finish_non_exhaustive()
    }
}

impl CredentialsProvider for ProfileProvider {
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
    use std::path::Path;

    use super::*;

    fn profiles(config: &str, credentials: &str) -> ProfileSet {
        ProfileSet::parse(
            config,
            Path::new("config"),
            credentials,
            Path::new("credentials"),
        )
        .unwrap()
    }

    fn roles(chain: &ProfileChain) -> Vec<&str> {
        chain.roles.iter().map(|r| r.role_arn.as_str()).collect()
    }

    #[test]
    fn role_chains_resolve_from_the_base_up() {
        let set = profiles(
            "[profile top]\nrole_arn = arn:aws:iam::1:role/top\nsource_profile = middle\n\
             external_id = ext-1\nduration_seconds = 1800\nrole_session_name = me\n\
             [profile middle]\nrole_arn = arn:aws:iam::1:role/middle\nsource_profile = base\n\
             [profile self]\nrole_arn = arn:aws:iam::1:role/self\nsource_profile = self\n",
            "[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = s\n\
             [self]\naws_access_key_id = AKIDSELF\naws_secret_access_key = s\n",
        );
        let chain = resolve(&set, "top").unwrap().unwrap();
        assert!(matches!(&chain.base, Base::Static(c) if c.access_key_id() == "AKIDBASE"));
        assert_eq!(
            roles(&chain),
            ["arn:aws:iam::1:role/middle", "arn:aws:iam::1:role/top"]
        );
        let top = &chain.roles[1];
        assert_eq!(top.external_id.as_deref(), Some("ext-1"));
        assert_eq!(top.duration_seconds, Some(1800));
        assert_eq!(top.session_name.as_deref(), Some("me"));
        let itself = resolve(&set, "self").unwrap().unwrap();
        assert!(matches!(&itself.base, Base::Static(c) if c.access_key_id() == "AKIDSELF"));
        assert_eq!(roles(&itself), ["arn:aws:iam::1:role/self"]);
    }

    #[test]
    fn every_base_kind() {
        let set = profiles(
            "[profile env]\nrole_arn = arn:r\ncredential_source = Environment\n\
             [profile imds]\nrole_arn = arn:r\ncredential_source = Ec2InstanceMetadata\n\
             [profile ecs]\nrole_arn = arn:r\ncredential_source = EcsContainer\n\
             [profile web]\nrole_arn = arn:web\nweb_identity_token_file = /t\n\
             [profile sso]\nsso_session = corp\nsso_account_id = 1\nsso_role_name = r\n\
             [profile process]\ncredential_process = /bin/creds --json\n\
             [profile empty]\nregion = eu-west-1\n",
            "",
        );
        let base = |name| resolve(&set, name).unwrap().unwrap().base;
        assert!(matches!(base("env"), Base::Environment));
        assert!(matches!(base("imds"), Base::InstanceMetadata));
        assert!(matches!(base("ecs"), Base::Container));
        assert!(
            matches!(base("web"), Base::WebIdentity(w) if w.role_arn == "arn:web" && w.token_file == Path::new("/t"))
        );
        assert!(resolve(&set, "web").unwrap().unwrap().roles.is_empty());
        assert!(matches!(base("sso"), Base::Sso { profile } if profile == "sso"));
        assert!(
            matches!(base("process"), Base::Process { command, .. } if command == "/bin/creds --json")
        );
        assert!(resolve(&set, "empty").unwrap().is_none());
        assert!(resolve(&set, "absent").unwrap().is_none());
    }

    #[test]
    fn refusals_name_the_profile_and_setting() {
        let set = profiles(
            "[profile a]\nrole_arn = arn:a\nsource_profile = b\n\
             [profile b]\nrole_arn = arn:b\nsource_profile = a\n\
             [profile mfa]\nrole_arn = arn:m\nsource_profile = k\nmfa_serial = arn:mfa\n\
             [profile both]\nrole_arn = arn:x\nsource_profile = k\ncredential_source = Environment\n\
             [profile bad-source]\nrole_arn = arn:x\ncredential_source = Laptop\n\
             [profile orphan]\nrole_arn = arn:x\n\
             [profile dangling]\nrole_arn = arn:x\nsource_profile = nowhere\n\
             [profile hollow]\nrole_arn = arn:x\nsource_profile = empty\n\
             [profile empty]\nregion = x\n\
             [profile long]\nrole_arn = arn:x\nsource_profile = k\nduration_seconds = 99999\n\
             [profile console]\nlogin_session = arn:aws:iam::1:user/me\n",
            "[k]\naws_access_key_id = A\naws_secret_access_key = S\n",
        );
        match resolve(&set, "a") {
            Err(Error::ProfileCycle { chain }) => assert_eq!(chain, ["a", "b", "a"]),
            other => panic!("{other:?}"),
        }
        for (name, expected_setting) in [
            ("mfa", "mfa_serial"),
            ("both", "credential_source"),
            ("bad-source", "credential_source"),
            ("orphan", "role_arn"),
            ("hollow", "source_profile"),
            ("long", "duration_seconds"),
        ] {
            match resolve(&set, name) {
                Err(Error::InvalidProfile { setting, .. }) => {
                    assert_eq!(setting, expected_setting, "{name}")
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        assert!(matches!(
            resolve(&set, "dangling"),
            Err(Error::ProfileNotFound { profile }) if profile == "nowhere"
        ));
        assert!(matches!(
            resolve(&set, "console"),
            Err(Error::UnsupportedProfile { setting, .. }) if setting == "login_session"
        ));
    }
}

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

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

pub use s3_sigv4::Credentials;

mod cache;
mod chain;
mod container;
pub mod documents;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod http;
mod imds;
pub mod jitter;
mod process;
pub mod profile_chain;
mod sso;
mod sts;
pub mod tls;
pub mod transport;
mod web_identity;

pub use cache::{CacheSettings, CachingProvider, Clock, SystemClock};
pub use chain::DefaultChain;
pub use container::ContainerProvider;
pub use error::{Error, Origin, ParseErrorKind, SourceErrorKind};
pub use http::HttpSettings;
pub use imds::{ImdsClient, ImdsProvider};
pub use process::ProcessProvider;
pub use profile_chain::ProfileProvider;
pub use sso::SsoProvider;
pub use web_identity::WebIdentityProvider;

/// The future returned by [`CredentialsProvider::credentials`].
pub type CredentialsFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Credentials, Error>> + Send + 'a>>;

/// A source of signing credentials.
///
/// The client asks for credentials before every attempt (each attempt is re-signed), so an
/// implementation should be cheap once warm: cache, and refresh before expiry.
///
/// ```
/// use s3_wire_credentials::{Credentials, CredentialsFuture, CredentialsProvider};
///
/// #[derive(Debug)]
/// struct FromVault;
///
/// impl CredentialsProvider for FromVault {
///     fn credentials(&self) -> CredentialsFuture<'_> {
///         Box::pin(async {
///             // … fetch from the vault here …
///             Ok(Credentials::new("AKIDEXAMPLE", "secret", None))
///         })
///     }
/// }
/// ```
pub trait CredentialsProvider: fmt::Debug + Send + Sync {
    /// Returns the credentials to sign the next request with.
    fn credentials(&self) -> CredentialsFuture<'_>;

    /// The store refused `rejected` as expired (`ExpiredToken`): a caching provider drops
    /// them, if they are still the ones it holds, so that the next
    /// [`credentials`](Self::credentials) call fetches new ones. The client then re-signs
    /// and retries once. The default does nothing.
    fn invalidate(&self, rejected: &Credentials) {
        let _ = rejected;
    }

    /// The client that signs with this provider uses `settings` (its CA bundle, client
    /// certificate and proxy): a provider that calls AWS itself (STS, SSO, the container
    /// endpoint) should use them too. Called once by
    /// s3-wire's `ClientBuilder::build`; the default does nothing.
    fn use_http_settings(&self, settings: &HttpSettings) {
        let _ = settings;
    }
}

/// Credentials with the instant they stop being valid (`None`: they do not expire).
/// `Debug` redacts the secret key and the session token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiringCredentials {
    credentials: Credentials,
    expiration: Option<SystemTime>,
}

impl ExpiringCredentials {
    /// Credentials valid until `expiration` (`None`: for ever).
    pub fn new(credentials: Credentials, expiration: Option<SystemTime>) -> Self {
        Self {
            credentials,
            expiration,
        }
    }

    /// The credentials.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// When they expire, if ever.
    pub fn expiration(&self) -> Option<SystemTime> {
        self.expiration
    }

    /// The credentials, dropping the expiration.
    pub fn into_credentials(self) -> Credentials {
        self.credentials
    }
}

/// The future returned by [`ExpiringSource::fetch`].
pub type FetchFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ExpiringCredentials, Error>> + Send + 'a>>;

/// A source of credentials that expire: each call fetches fresh ones (an STS call, a
/// process run, an HTTP request). Wrap it in a [`CachingProvider`] to sign with it.
pub trait ExpiringSource: fmt::Debug + Send + Sync {
    /// Fetches new credentials.
    fn fetch(&self) -> FetchFuture<'_>;

    /// See [`CredentialsProvider::use_http_settings`] (a [`CachingProvider`] passes it on).
    fn use_http_settings(&self, settings: &HttpSettings) {
        let _ = settings;
    }
}

impl<S: ExpiringSource + ?Sized> ExpiringSource for Arc<S> {
    fn fetch(&self) -> FetchFuture<'_> {
        (**self).fetch()
    }

    fn use_http_settings(&self, settings: &HttpSettings) {
        (**self).use_http_settings(settings);
    }
}

impl<S: ExpiringSource + ?Sized> ExpiringSource for Box<S> {
    fn fetch(&self) -> FetchFuture<'_> {
        (**self).fetch()
    }

    fn use_http_settings(&self, settings: &HttpSettings) {
        (**self).use_http_settings(settings);
    }
}

impl CredentialsProvider for Credentials {
    fn credentials(&self) -> CredentialsFuture<'_> {
        let credentials = self.clone();
        Box::pin(async move { Ok(credentials) })
    }
}

impl<P: CredentialsProvider + ?Sized> CredentialsProvider for Arc<P> {
    fn credentials(&self) -> CredentialsFuture<'_> {
        (**self).credentials()
    }

    fn invalidate(&self, rejected: &Credentials) {
        (**self).invalidate(rejected);
    }

    fn use_http_settings(&self, settings: &HttpSettings) {
        (**self).use_http_settings(settings);
    }
}

impl<P: CredentialsProvider + ?Sized> CredentialsProvider for Box<P> {
    fn credentials(&self) -> CredentialsFuture<'_> {
        (**self).credentials()
    }

    fn invalidate(&self, rejected: &Credentials) {
        (**self).invalidate(rejected);
    }

    fn use_http_settings(&self, settings: &HttpSettings) {
        (**self).use_http_settings(settings);
    }
}

// ---------------------------------------------------------------------------------------------
// Environment access
// ---------------------------------------------------------------------------------------------

/// Where environment variables and the home directory come from.
///
/// [`ProcessEnv`] reads the real process; [`MapEnv`] is a fixed map for tests and embedders.
pub trait Env: fmt::Debug + Send + Sync {
    /// The value of variable `name`, or `None` when unset or not valid UTF-8.
    fn var(&self, name: &str) -> Option<String>;

    /// The user's home directory: `HOME`, else `USERPROFILE`, else `HOMEDRIVE` + `HOMEPATH`.
    fn home_dir(&self) -> Option<PathBuf> {
        if let Some(home) = non_empty(self.var("HOME")) {
            return Some(PathBuf::from(home));
        }
        if let Some(profile) = non_empty(self.var("USERPROFILE")) {
            return Some(PathBuf::from(profile));
        }
        let drive = non_empty(self.var("HOMEDRIVE"))?;
        let path = non_empty(self.var("HOMEPATH"))?;
        Some(PathBuf::from(format!("{drive}{path}")))
    }
}

/// The real process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// A fixed set of variables and an optional home directory.
///
/// ```
/// use s3_wire_credentials::{Env, MapEnv};
///
/// let env = MapEnv::new().with_var("AWS_REGION", "eu-west-1").with_home("/home/test");
/// assert_eq!(env.var("AWS_REGION").as_deref(), Some("eu-west-1"));
/// ```
#[derive(Clone, Default)]
pub struct MapEnv {
    vars: HashMap<String, String>,
    home: Option<PathBuf>,
}

impl MapEnv {
    /// An empty environment with no home directory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets variable `name` to `value`.
    pub fn with_var(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// Sets the home directory (otherwise derived from `HOME`/`USERPROFILE` in the map).
    pub fn with_home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }
}

impl Env for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }

    fn home_dir(&self) -> Option<PathBuf> {
        match &self.home {
            Some(home) => Some(home.clone()),
            None => {
                if let Some(home) = non_empty(self.var("HOME")) {
                    return Some(PathBuf::from(home));
                }
                non_empty(self.var("USERPROFILE")).map(PathBuf::from)
            }
        }
    }
}

impl fmt::Debug for MapEnv {
    // Values may be secrets: show only which variables are set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort();
        f.debug_struct("MapEnv")
            .field("vars", &names)
            .field("home", &self.home)
            .finish()
    }
}

/// Empty variables count as unset, as in the AWS CLI.
fn non_empty(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.is_empty())
}

fn env_var(env: &dyn Env, name: &str) -> Option<String> {
    non_empty(env.var(name))
}

// ---------------------------------------------------------------------------------------------
// Shared config / credentials files
// ---------------------------------------------------------------------------------------------

/// Property names whose values are secrets (redacted in `Debug`).
const SECRET_PROPERTIES: &[&str] = &[
    "aws_secret_access_key",
    "aws_session_token",
    "aws_security_token",
];

/// Profile settings that select a credential source that must be fetched, in the order
/// they take precedence (as in aws-config). [`ProfileProvider`] fetches them.
pub(crate) const FETCHED_SETTINGS: &[&str] = &[
    "role_arn",
    "web_identity_token_file",
    "sso_session",
    "sso_start_url",
    "credential_process",
];

/// Profile settings of credential sources this crate does not implement.
pub(crate) const UNSUPPORTED_SETTINGS: &[&str] = &["login_session"];

/// One property: a value, and sub-properties for the indented `name =\n  key = value` form.
#[derive(Clone, Default, PartialEq, Eq)]
struct Property {
    value: String,
    sub: Vec<(String, String)>,
}

/// One section of a shared file: a profile or a `services` block.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Section {
    name: String,
    properties: HashMap<String, Property>,
}

impl Section {
    /// The section's name (for a profile, without the `profile ` prefix).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value of `property` (names are case-insensitive), if set.
    pub fn get(&self, property: &str) -> Option<&str> {
        self.properties
            .get(&property.to_ascii_lowercase())
            .map(|p| p.value.as_str())
    }

    /// The value of the indented sub-property `key` under `property`, e.g. `s3` → `endpoint_url`.
    pub fn sub_property(&self, property: &str, key: &str) -> Option<&str> {
        let key = key.to_ascii_lowercase();
        self.properties
            .get(&property.to_ascii_lowercase())?
            .sub
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Adds `other`'s properties, replacing those already present.
    fn merge_from(&mut self, other: Section) {
        self.properties.extend(other.properties);
    }
}

impl fmt::Debug for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.properties.keys().collect();
        names.sort();
        let mut map = f.debug_map();
        for name in names {
            let property = &self.properties[name];
            if SECRET_PROPERTIES.contains(&name.as_str()) {
                map.entry(name, &"<redacted>");
            } else if property.sub.is_empty() {
                map.entry(name, &property.value);
            } else {
                map.entry(name, &property.sub);
            }
        }
        map.finish()?;
        Ok(())
    }
}

/// A profile of the shared files.
pub type Profile = Section;

/// The parsed profiles and `services` sections of both shared files.
#[derive(Debug, Clone, Default)]
pub struct ProfileSet {
    profiles: HashMap<String, Section>,
    services: HashMap<String, Section>,
    sso_sessions: HashMap<String, Section>,
}

impl ProfileSet {
    /// Parses the texts of a config file and a credentials file. `config_path` and
    /// `credentials_path` only label parse errors.
    pub fn parse(
        config: &str,
        config_path: &Path,
        credentials: &str,
        credentials_path: &Path,
    ) -> Result<Self, Error> {
        let mut set = ProfileSet::default();
        let config = parse_file(config, config_path)?;
        // `[profile default]` overrides `[default]` in the config file, whatever their order.
        let (explicit_default, others): (Vec<_>, Vec<_>) = config
            .into_iter()
            .partition(|(header, _)| config_section_role(header) == Some(Role::ExplicitDefault));
        let has_explicit_default = !explicit_default.is_empty();
        for (header, section) in others.into_iter().chain(explicit_default) {
            match config_section_role(&header) {
                Some(Role::Profile(name)) => set.add_profile(name, section),
                Some(Role::BareDefault) if !has_explicit_default => {
                    set.add_profile("default".to_owned(), section)
                }
                Some(Role::ExplicitDefault) => set.add_profile("default".to_owned(), section),
                Some(Role::Services(name)) => set.add_to(SectionKind::Services, name, section),
                Some(Role::SsoSession(name)) => set.add_to(SectionKind::SsoSession, name, section),
                Some(Role::BareDefault) | None => {}
            }
        }
        // The credentials file's properties take precedence over the config file's.
        for (header, section) in parse_file(credentials, credentials_path)? {
            set.add_profile(header, section);
        }
        Ok(set)
    }

    /// Reads and parses the shared files named by `env` (see [`shared_file_paths`]).
    /// A missing file counts as empty.
    pub fn load(env: &dyn Env) -> Result<Self, Error> {
        let (config_path, credentials_path) = shared_file_paths(env);
        let config = read_optional(config_path.as_deref())?;
        let credentials = read_optional(credentials_path.as_deref())?;
        Self::parse(
            &config,
            config_path.as_deref().unwrap_or(Path::new("config")),
            &credentials,
            credentials_path
                .as_deref()
                .unwrap_or(Path::new("credentials")),
        )
    }

    /// The profile `name`, merged from both files.
    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }

    /// The `[services name]` section of the config file.
    pub fn services(&self, name: &str) -> Option<&Section> {
        self.services.get(name)
    }

    /// The `[sso-session name]` section of the config file.
    pub fn sso_session(&self, name: &str) -> Option<&Section> {
        self.sso_sessions.get(name)
    }

    fn add_profile(&mut self, name: String, section: Section) {
        self.add_to(SectionKind::Profile, name, section);
    }

    fn add_to(&mut self, kind: SectionKind, name: String, mut section: Section) {
        let map = match kind {
            SectionKind::Profile => &mut self.profiles,
            SectionKind::Services => &mut self.services,
            SectionKind::SsoSession => &mut self.sso_sessions,
        };
        section.name.clone_from(&name);
        match map.get_mut(&name) {
            Some(existing) => existing.merge_from(section),
            None => {
                map.insert(name, section);
            }
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Role {
    Profile(String),
    BareDefault,
    ExplicitDefault,
    Services(String),
    SsoSession(String),
}

#[derive(Clone, Copy)]
enum SectionKind {
    Profile,
    Services,
    SsoSession,
}

/// What a config-file section header means; `None` for sections this crate ignores.
fn config_section_role(header: &str) -> Option<Role> {
    if header == "default" {
        return Some(Role::BareDefault);
    }
    let prefixed = |prefix: &str| -> Option<String> {
        let rest = header.strip_prefix(prefix)?;
        // The prefix must be followed by whitespace: `[profilefoo]` is not a profile.
        if !rest.starts_with([' ', '\t']) {
            return None;
        }
        let name = rest.trim();
        (!name.is_empty()).then(|| name.to_owned())
    };
    if let Some(name) = prefixed("profile") {
        return Some(if name == "default" {
            Role::ExplicitDefault
        } else {
            Role::Profile(name)
        });
    }
    prefixed("services")
        .map(Role::Services)
        .or_else(|| prefixed("sso-session").map(Role::SsoSession))
}

/// Splits off an inline comment: `#` or `;` preceded by whitespace.
fn strip_inline_comment(text: &str) -> &str {
    let bytes = text.as_bytes();
    for (index, &byte) in bytes.iter().enumerate() {
        if (byte == b'#' || byte == b';')
            && index > 0
            && bytes
                .get(index - 1)
                .is_some_and(|b| b.is_ascii_whitespace())
        {
            return text.get(..index).unwrap_or(text);
        }
    }
    text
}

/// Parses one shared file into `(raw header, section)` pairs, in file order.
fn parse_file(text: &str, path: &Path) -> Result<Vec<(String, Section)>, Error> {
    let error = |line: usize, kind: ParseErrorKind| Error::Parse {
        path: path.to_owned(),
        line,
        kind,
    };
    let mut sections: Vec<(String, Section)> = Vec::new();
    // The property an indented line continues, in the current section.
    let mut last_property: Option<(String, usize)> = None;
    for (index, raw) in text.lines().enumerate() {
        let line_number = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        let indent = raw.len() - raw.trim_start().len();
        // As in the AWS CLI, a line indented deeper than the property before it continues
        // that property; anything else is parsed on its own.
        if let Some((_, section)) = sections.last_mut()
            && let Some((name, property_indent)) = &last_property
            && indent > *property_indent
            && let Some(property) = section.properties.get_mut(name)
        {
            let content = strip_inline_comment(trimmed).trim();
            match content.split_once('=') {
                // `name =` followed by `  key = value` lines: sub-properties.
                Some((key, value)) if property.value.is_empty() => {
                    let key = key.trim().to_ascii_lowercase();
                    if key.is_empty() {
                        return Err(error(line_number, ParseErrorKind::EmptyPropertyName));
                    }
                    property.sub.push((key, value.trim().to_owned()));
                }
                // Otherwise a continuation of a multi-line value.
                _ => {
                    property.value.push('\n');
                    property.value.push_str(content);
                }
            }
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix('[') {
            let close = rest
                .find(']')
                .ok_or_else(|| error(line_number, ParseErrorKind::UnclosedSection))?;
            let header = rest.get(..close).unwrap_or_default().trim().to_owned();
            sections.push((header, Section::default()));
            last_property = None;
            continue;
        }
        let (name, value) = trimmed
            .split_once('=')
            .ok_or_else(|| error(line_number, ParseErrorKind::ExpectedProperty))?;
        let (_, section) = sections
            .last_mut()
            .ok_or_else(|| error(line_number, ParseErrorKind::PropertyOutsideSection))?;
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() {
            return Err(error(line_number, ParseErrorKind::EmptyPropertyName));
        }
        let value = strip_inline_comment(value.trim()).trim().to_owned();
        section.properties.insert(
            name.clone(),
            Property {
                value,
                sub: Vec::new(),
            },
        );
        last_property = Some((name, indent));
    }
    // Sections with an empty header (`[]`) name nothing.
    sections.retain(|(header, _)| !header.is_empty());
    Ok(sections)
}

/// The config and credentials file paths: `AWS_CONFIG_FILE` / `AWS_SHARED_CREDENTIALS_FILE`
/// (a leading `~` is the home directory), else `~/.aws/config` / `~/.aws/credentials`.
/// `None` when neither the variable nor a home directory is available.
pub fn shared_file_paths(env: &dyn Env) -> (Option<PathBuf>, Option<PathBuf>) {
    let path = |variable: &str, default_name: &str| -> Option<PathBuf> {
        match env_var(env, variable) {
            Some(path) => expand_home(&path, env),
            None => Some(env.home_dir()?.join(".aws").join(default_name)),
        }
    };
    (
        path("AWS_CONFIG_FILE", "config"),
        path("AWS_SHARED_CREDENTIALS_FILE", "credentials"),
    )
}

fn expand_home(path: &str, env: &dyn Env) -> Option<PathBuf> {
    if path == "~" {
        return env.home_dir();
    }
    match path.strip_prefix("~/").or_else(|| path.strip_prefix("~\\")) {
        Some(rest) => Some(env.home_dir()?.join(rest)),
        None => Some(PathBuf::from(path)),
    }
}

fn read_optional(path: Option<&Path>) -> Result<String, Error> {
    let Some(path) = path else {
        return Ok(String::new());
    };
    match std::fs::read(path) {
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(String::new()),
        Err(source) => Err(Error::ReadFile {
            path: path.to_owned(),
            source,
        }),
    }
}

// ---------------------------------------------------------------------------------------------
// Resolution
// ---------------------------------------------------------------------------------------------

/// Credentials from the `AWS_*` variables: `None` when `AWS_ACCESS_KEY_ID` and
/// `AWS_SECRET_ACCESS_KEY` are both unset, an error when only one is.
pub fn credentials_from_env(env: &dyn Env) -> Result<Option<Credentials>, Error> {
    env_credentials(env).map_err(incomplete_env)
}

/// [`credentials_from_env`] with the error reduced to the missing variable's name, so that
/// [`SharedConfig`] can keep it and stay `Clone`.
fn env_credentials(env: &dyn Env) -> Result<Option<Credentials>, &'static str> {
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

fn incomplete_env(missing: &'static str) -> Error {
    Error::Incomplete {
        origin: Origin::Environment,
        missing,
    }
}

/// Static credentials of `profile`: `None` when it sets no keys, an error when it sets only
/// one of them or obtains credentials some other way (role, SSO, process, web identity:
/// [`Error::FetchedCredentials`], which [`ProfileProvider`] fetches).
pub fn credentials_from_profile(profile: &Profile) -> Result<Option<Credentials>, Error> {
    let set = |setting: &&&str| profile.get(setting).is_some();
    if let Some(setting) = UNSUPPORTED_SETTINGS.iter().find(set) {
        return Err(Error::UnsupportedProfile {
            profile: profile.name().to_owned(),
            setting: (*setting).to_owned(),
        });
    }
    if let Some(setting) = FETCHED_SETTINGS.iter().find(set) {
        return Err(Error::FetchedCredentials {
            profile: profile.name().to_owned(),
            setting,
        });
    }
    static_keys(profile)
}

/// The static keys of `profile` (`None` when it sets none, an error when it sets only one),
/// whatever other credential source it also configures: the profile chain decides which
/// one counts.
pub(crate) fn static_keys(profile: &Profile) -> Result<Option<Credentials>, Error> {
    let present = |key: &str| profile.get(key).filter(|v| !v.is_empty());
    let origin = || Origin::Profile(profile.name().to_owned());
    match (
        present("aws_access_key_id"),
        present("aws_secret_access_key"),
    ) {
        (None, None) => Ok(None),
        (Some(access_key), Some(secret_key)) => {
            // `aws_security_token` is the legacy name the AWS CLI still accepts.
            let token = present("aws_session_token").or_else(|| present("aws_security_token"));
            Ok(Some(Credentials::new(
                access_key.to_owned(),
                secret_key.to_owned(),
                token.map(str::to_owned),
            )))
        }
        (None, Some(_)) => Err(Error::Incomplete {
            origin: origin(),
            missing: "aws_access_key_id",
        }),
        (Some(_), None) => Err(Error::Incomplete {
            origin: origin(),
            missing: "aws_secret_access_key",
        }),
    }
}

/// The profile to use: `AWS_PROFILE`, else the legacy `AWS_DEFAULT_PROFILE`, else `default`.
/// The flag tells whether it was chosen explicitly (then it must exist).
fn selected_profile(env: &dyn Env) -> (String, bool) {
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
fn parse_bool(value: &str) -> Option<bool> {
    if value.eq_ignore_ascii_case("true") {
        Some(true)
    } else if value.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------------
// Providers
// ---------------------------------------------------------------------------------------------

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
    use std::error::Error as _;

    use super::*;

    /// A temporary home directory with `.aws/config` and `.aws/credentials`.
    struct Home {
        dir: tempfile::TempDir,
    }

    impl Home {
        fn new(config: &str, credentials: &str) -> Self {
            let dir = tempfile::tempdir().expect("temp dir");
            let aws = dir.path().join(".aws");
            std::fs::create_dir(&aws).expect("mkdir .aws");
            std::fs::write(aws.join("config"), config).expect("write config");
            std::fs::write(aws.join("credentials"), credentials).expect("write credentials");
            Self { dir }
        }

        /// The home directory, with instance metadata off: a chain that finds nothing
        /// must not go looking on the network.
        fn env(&self) -> MapEnv {
            MapEnv::new()
                .with_home(self.dir.path())
                .with_var("AWS_EC2_METADATA_DISABLED", "true")
        }
    }

    fn keys(credentials: &Credentials) -> (String, String, Option<String>) {
        (
            credentials.access_key_id().to_owned(),
            credentials.secret_access_key().to_owned(),
            credentials.session_token().map(str::to_owned),
        )
    }

    fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(future)
    }

    fn parse(config: &str, credentials: &str) -> Result<ProfileSet, Error> {
        ProfileSet::parse(
            config,
            Path::new("config"),
            credentials,
            Path::new("credentials"),
        )
    }

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

    #[test]
    fn parses_sections_comments_whitespace_and_case() {
        let config = "\
# leading comment
; another comment
[default]
region = us-west-2

[profile   dev]   # inline comment on a header
Region=eu-west-1 ; inline comment
endpoint_url = http://localhost:9000#not-a-comment
\tOUTPUT = json

[profiledev2]
region = ignored-no-space

[not-a-profile]
region = ignored-no-prefix
";
        let credentials = "\
[default]
aws_access_key_id = AKIDDEFAULT
aws_secret_access_key = secret/with+chars=

[dev]
AWS_ACCESS_KEY_ID=AKIDDEV
aws_secret_access_key=SECRETDEV
aws_session_token = TOKEN ; trailing comment

[profile dev]
aws_access_key_id = literal-section-name-in-credentials-file
";
        let set = parse(config, credentials).unwrap();
        let default = set.profile("default").unwrap();
        assert_eq!(default.get("region"), Some("us-west-2"));
        assert_eq!(default.get("aws_access_key_id"), Some("AKIDDEFAULT"));
        assert_eq!(
            default.get("aws_secret_access_key"),
            Some("secret/with+chars=")
        );

        let dev = set.profile("dev").unwrap();
        assert_eq!(dev.get("region"), Some("eu-west-1"));
        assert_eq!(dev.get("REGION"), Some("eu-west-1"));
        // `#` not preceded by whitespace is part of the value; the indented line after it
        // continues that value rather than starting a property.
        assert_eq!(
            dev.get("endpoint_url"),
            Some("http://localhost:9000#not-a-comment\nOUTPUT = json")
        );
        assert_eq!(dev.get("aws_access_key_id"), Some("AKIDDEV"));
        assert_eq!(dev.get("aws_session_token"), Some("TOKEN"));
        assert!(dev.get("output").is_none());

        assert!(set.profile("dev2").is_none());
        assert!(set.profile("profiledev2").is_none());
        assert!(set.profile("not-a-profile").is_none());
        // In the credentials file, `[profile dev]` is a profile literally named so.
        assert_eq!(
            set.profile("profile dev").unwrap().get("aws_access_key_id"),
            Some("literal-section-name-in-credentials-file")
        );
        // Section names are case-sensitive.
        assert!(set.profile("DEV").is_none());
    }

    #[test]
    fn multi_line_values_and_sub_properties() {
        let config = "\
[profile p]
services = local
note = first
  second
[services local]
s3 =
  endpoint_url = http://127.0.0.1:1234 # comment
  addressing_style = path
";
        let set = parse(config, "").unwrap();
        let profile = set.profile("p").unwrap();
        assert_eq!(profile.get("note"), Some("first\nsecond"));
        let services = set.services("local").unwrap();
        assert_eq!(
            services.sub_property("s3", "endpoint_url"),
            Some("http://127.0.0.1:1234")
        );
        assert_eq!(
            services.sub_property("S3", "ADDRESSING_STYLE"),
            Some("path")
        );
        assert!(services.sub_property("s3", "missing").is_none());
    }

    #[test]
    fn indented_properties_at_the_same_depth_are_separate() {
        // The AWS CLI accepts indented keys; only deeper indentation continues a value.
        let set = parse(
            "",
            "[default]\n  aws_access_key_id = A\n  aws_secret_access_key = S\n    more\n",
        )
        .unwrap();
        let default = set.profile("default").unwrap();
        assert_eq!(default.get("aws_access_key_id"), Some("A"));
        assert_eq!(default.get("aws_secret_access_key"), Some("S\nmore"));
    }

    #[test]
    fn explicit_default_profile_overrides_bare_default_in_either_order() {
        for config in [
            "[profile default]\nregion = a\n[default]\nregion = b\n",
            "[default]\nregion = b\n[profile default]\nregion = a\n",
        ] {
            let set = parse(config, "").unwrap();
            assert_eq!(set.profile("default").unwrap().get("region"), Some("a"));
        }
    }

    #[test]
    fn credentials_file_wins_over_config_file_and_duplicates_merge() {
        let config = "[profile p]\naws_access_key_id = FROMCONFIG\nregion = r1\n";
        let credentials = "[p]\naws_access_key_id = FROMCREDS\n[p]\naws_secret_access_key = S\n";
        let set = parse(config, credentials).unwrap();
        let p = set.profile("p").unwrap();
        assert_eq!(p.get("aws_access_key_id"), Some("FROMCREDS"));
        assert_eq!(p.get("aws_secret_access_key"), Some("S"));
        assert_eq!(p.get("region"), Some("r1"));
    }

    #[test]
    fn parse_errors_name_file_and_line() {
        let cases = [
            ("region = x\n", 1, ParseErrorKind::PropertyOutsideSection),
            (
                "[default]\njust words\n",
                2,
                ParseErrorKind::ExpectedProperty,
            ),
            ("[default\n", 1, ParseErrorKind::UnclosedSection),
            ("[default]\n= value\n", 2, ParseErrorKind::EmptyPropertyName),
        ];
        for (text, expected_line, expected_kind) in cases {
            match parse(text, "") {
                Err(Error::Parse { path, line, kind }) => {
                    assert_eq!(path, Path::new("config"), "{text:?}");
                    assert_eq!(line, expected_line, "{text:?}");
                    assert_eq!(kind, expected_kind, "{text:?}");
                }
                other => panic!("{text:?}: expected a parse error, got {other:?}"),
            }
        }
        let err = parse("", "[x]\n???\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "credentials, line 2: expected `name = value`, a [section] or a comment"
        );
    }

    #[test]
    fn profile_credentials_partial_legacy_token_and_unsupported() {
        let set = parse(
            "[profile role]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = default\n\
             [profile sso]\nsso_session = corp\n",
            "[partial]\naws_access_key_id = A\n[legacy]\naws_access_key_id = A\n\
             aws_secret_access_key = S\naws_security_token = T\n[none]\nregion = x\n",
        )
        .unwrap();
        assert!(matches!(
            credentials_from_profile(set.profile("partial").unwrap()),
            Err(Error::Incomplete { origin: Origin::Profile(ref name), missing: "aws_secret_access_key" }) if name == "partial"
        ));
        let legacy = credentials_from_profile(set.profile("legacy").unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(keys(&legacy), ("A".into(), "S".into(), Some("T".into())));
        assert!(
            credentials_from_profile(set.profile("none").unwrap())
                .unwrap()
                .is_none()
        );
        for (name, setting) in [("role", "role_arn"), ("sso", "sso_session")] {
            match credentials_from_profile(set.profile(name).unwrap()) {
                Err(Error::FetchedCredentials {
                    profile,
                    setting: s,
                }) => {
                    assert_eq!((profile.as_str(), s), (name, setting));
                }
                other => panic!("expected FetchedCredentials, got {other:?}"),
            }
        }
    }

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
    fn file_locations_are_overridable_and_missing_files_are_empty() {
        let home = Home::new("", "");
        let elsewhere = tempfile::tempdir().unwrap();
        let config_path = elsewhere.path().join("my-config");
        let credentials_path = elsewhere.path().join("my-credentials");
        std::fs::write(&config_path, "[profile x]\nregion = from-override\n").unwrap();
        std::fs::write(
            &credentials_path,
            "[x]\naws_access_key_id = OX\naws_secret_access_key = OS\n",
        )
        .unwrap();
        let env = home
            .env()
            .with_var("AWS_CONFIG_FILE", config_path.to_str().unwrap())
            .with_var(
                "AWS_SHARED_CREDENTIALS_FILE",
                credentials_path.to_str().unwrap(),
            )
            .with_var("AWS_PROFILE", "x");
        let config = SharedConfig::load(&env).unwrap();
        assert_eq!(config.region().unwrap().as_deref(), Some("from-override"));
        assert_eq!(keys(&config.credentials().unwrap().unwrap()).0, "OX");

        // `~` expands to the home directory.
        let env = MapEnv::new()
            .with_home(elsewhere.path())
            .with_var("AWS_CONFIG_FILE", "~/my-config");
        assert_eq!(shared_file_paths(&env).0, Some(config_path));
        assert_eq!(
            shared_file_paths(&env).1,
            Some(elsewhere.path().join(".aws").join("credentials"))
        );

        let env = MapEnv::new().with_var("AWS_CONFIG_FILE", "/nonexistent/s3-wire/config");
        let set = ProfileSet::load(&env).unwrap();
        assert!(set.profile("default").is_none());
    }

    #[test]
    fn unreadable_file_is_a_read_error_with_source() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where a file is expected cannot be read.
        let env = MapEnv::new().with_var("AWS_CONFIG_FILE", dir.path().to_str().unwrap());
        let err = ProfileSet::load(&env).unwrap_err();
        assert!(matches!(err, Error::ReadFile { ref path, .. } if path == dir.path()));
        assert!(err.source().is_some());
    }

    #[test]
    fn home_directory_fallbacks() {
        let env = MapEnv::new().with_var("HOME", "/home/a");
        assert_eq!(env.home_dir(), Some(PathBuf::from("/home/a")));
        let env = MapEnv::new().with_var("USERPROFILE", "C:\\Users\\a");
        assert_eq!(env.home_dir(), Some(PathBuf::from("C:\\Users\\a")));
        assert_eq!(MapEnv::new().home_dir(), None);
        assert_eq!(shared_file_paths(&MapEnv::new()), (None, None));
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

    #[test]
    fn arbitrary_file_contents_never_panic() {
        // Deterministic pseudo-random texts built from the tokens the parser reacts to.
        const TOKENS: &[&str] = &[
            "[",
            "]",
            "=",
            "#",
            ";",
            " ",
            "\t",
            "\n",
            "\r\n",
            "profile",
            "services",
            "default",
            "a",
            "key",
            "é",
            "日",
            "\u{0}",
            "\\",
            "\"",
            "[profile x]",
            "  k = v",
            "s3 =",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            // splitmix64
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for _ in 0..5_000 {
            let len = (next() % 40) as usize;
            let text: String = (0..len)
                .map(|_| TOKENS[(next() % TOKENS.len() as u64) as usize])
                .collect();
            let lines = text.lines().count().max(1);
            match parse(&text, &text) {
                Ok(set) => {
                    // Whatever parsed is usable.
                    let _ = format!("{set:?}");
                }
                Err(Error::Parse { line, .. }) => assert!(line >= 1 && line <= lines, "{text:?}"),
                Err(other) => panic!("{text:?}: unexpected {other:?}"),
            }
        }
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

//! The shared config and credentials files (`~/.aws/config`, `~/.aws/credentials`): where
//! they are, their parser, and the static keys a profile holds.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::{Credentials, Env, Error, Origin, ParseErrorKind, env_var};

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

/// Static credentials of `profile`: `None` when it sets no keys, an error when it sets only
/// one of them or obtains credentials some other way (role, SSO, process, web identity:
/// [`Error::FetchedCredentials`], which [`ProfileProvider`](crate::ProfileProvider) fetches).
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

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;
    use crate::test_support::*;
    use crate::{MapEnv, SharedConfig};

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
}

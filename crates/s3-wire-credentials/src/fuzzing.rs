//! Internal entry points for the fuzz targets (`fuzzing` feature). Not a stable API.
//!
//! * [`profile_files_arbitrary`]: the shared config / credentials file parser and the
//!   profile resolution on arbitrary text (target `credentials_profile`).
//! * [`credential_documents_arbitrary`]: the JSON credential documents
//!   (`credential_process`, container / instance metadata, SSO role credentials, the SSO
//!   token cache and its OIDC refresh) on arbitrary bytes
//!   (target `credentials_documents`).

use std::path::{Path, PathBuf};

use crate::{
    Credentials, Error, ExpiringCredentials, MapEnv, Profile, ProfileSet, SharedConfig,
    credentials_from_profile,
};

/// Parses `data` as a config file and a credentials file and resolves a profile from them,
/// checking what must hold. Panics only on a broken invariant:
///
/// * parsing never panics; an error names the file that is malformed and a line of it;
/// * a profile found under a name is named so; every `[name]` of a credentials file
///   without indented lines is a profile (and every `[profile name]` of such a config file);
/// * property lookups ignore case; where both files set a property of a profile the
///   credentials file wins, otherwise the config file's value shows;
/// * static credentials of a profile are its keys (the session token, else the legacy
///   security token); an unsupported or incomplete profile says which setting;
/// * [`SharedConfig`] loaded from the same texts as files resolves the profile, its
///   credentials, region and endpoint as the parsed profiles say.
///
/// Layout of `data`: config text, credentials text and a profile name separated by `0xFF`
/// (each lossily UTF-8); an empty name resolves the default profile.
pub fn profile_files_arbitrary(data: &[u8]) {
    let mut parts = data.splitn(3, |&b| b == 0xFF);
    let mut text = || String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let (config, credentials, name) = (text(), text(), text());
    let (config_path, credentials_path) = (Path::new("config"), Path::new("credentials"));

    let parsed = ProfileSet::parse(&config, config_path, &credentials, credentials_path);
    let config_only = ProfileSet::parse(&config, config_path, "", credentials_path);
    let credentials_only = ProfileSet::parse("", config_path, &credentials, credentials_path);
    let set = match parsed {
        Ok(set) => set,
        Err(error) => {
            let _ = (error.to_string(), format!("{error:?}"));
            let Error::Parse { path, line, .. } = &error else {
                panic!("parsing failed with {error:?}");
            };
            // The config file is parsed first; the error is the first malformed file's.
            let (file, text) = match &config_only {
                Err(_) => (config_path, &config),
                Ok(_) => (credentials_path, &credentials),
            };
            assert_eq!(path, file);
            assert!(*line >= 1 && *line <= text.lines().count(), "line {line}");
            return;
        }
    };
    let (Ok(config_only), Ok(credentials_only)) = (config_only, credentials_only) else {
        panic!("both files parse together but not apart");
    };

    let names = candidate_names(&config, &credentials, &name);
    let properties = candidate_properties(&config, &credentials);
    for profile_name in &names {
        let profile = set.profile(profile_name);
        if let Some(profile) = profile {
            assert_eq!(profile.name(), profile_name);
            let _ = format!("{profile:?}");
            check_credentials(profile);
        }
        if let Some(services) = set.services(profile_name) {
            assert_eq!(services.name(), profile_name);
        }
        let from_credentials = credentials_only.profile(profile_name);
        let from_config = config_only.profile(profile_name);
        assert_eq!(
            profile.is_some(),
            from_credentials.is_some() || from_config.is_some()
        );
        for property in &properties {
            fn get<'a>(p: Option<&'a Profile>, property: &str) -> Option<&'a str> {
                p.and_then(|p| p.get(property))
            }
            let get = |p| get(p, property);
            let expected = get(from_credentials).or_else(|| get(from_config));
            assert_eq!(get(profile), expected, "{profile_name:?} {property:?}");
            let upper = property.to_ascii_uppercase();
            assert_eq!(profile.and_then(|p| p.get(&upper)), expected);
            for key in &properties {
                fn sub<'a>(p: Option<&'a Profile>, property: &str, key: &str) -> Option<&'a str> {
                    p.and_then(|p| p.sub_property(property, key))
                }
                let sub = |p| sub(p, property, key);
                let expected = match get(from_credentials) {
                    Some(_) => sub(from_credentials),
                    None => sub(from_config),
                };
                assert_eq!(sub(profile), expected);
            }
        }
    }
    for header in headers(&credentials).filter(|_| !has_indented_line(&credentials)) {
        assert!(set.profile(&header).is_some(), "[{header}] is no profile");
    }
    if !has_indented_line(&config) {
        for header in headers(&config) {
            if let Some(name) = header
                .strip_prefix("profile")
                .filter(|rest| rest.starts_with([' ', '\t']))
                .map(str::trim)
                .filter(|name| !name.is_empty())
            {
                assert!(set.profile(name).is_some(), "[{header}] is no profile");
            }
        }
    }

    check_shared_config(&set, &config, &credentials, &name);
}

/// Section headers of a file, as the parser reads them (`[` ... first `]`, trimmed).
fn headers(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines().filter_map(|line| {
        let rest = line.trim().strip_prefix('[')?;
        let header = rest.get(..rest.find(']')?)?.trim();
        (!header.is_empty()).then(|| header.to_owned())
    })
}

fn has_indented_line(text: &str) -> bool {
    text.lines()
        .any(|line| line.trim_start().len() < line.len() && !line.trim().is_empty())
}

/// Every name the input could define a profile or services section under.
fn candidate_names(config: &str, credentials: &str, name: &str) -> Vec<String> {
    let mut names = vec!["default".to_owned(), name.to_owned()];
    for header in headers(config).chain(headers(credentials)) {
        for prefix in ["profile", "services"] {
            if let Some(rest) = header.strip_prefix(prefix) {
                names.push(rest.trim().to_owned());
            }
        }
        names.push(header);
    }
    names.sort();
    names.dedup();
    names.truncate(16);
    names
}

/// Every property name the input could set, plus the ones resolution reads.
fn candidate_properties(config: &str, credentials: &str) -> Vec<String> {
    let mut properties: Vec<String> = [
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "region",
        "services",
        "s3",
        "endpoint_url",
    ]
    .map(str::to_owned)
    .to_vec();
    for line in config.lines().chain(credentials.lines()) {
        if let Some((name, _)) = line.split_once('=') {
            properties.push(name.trim().to_ascii_lowercase());
        }
    }
    properties.sort();
    properties.dedup();
    properties.truncate(16);
    properties
}

/// Static credentials of a profile are its keys; refusals name their setting.
fn check_credentials(profile: &Profile) {
    let present = |key: &str| profile.get(key).filter(|v| !v.is_empty());
    match credentials_from_profile(profile) {
        Ok(Some(credentials)) => {
            assert_eq!(
                Some(credentials.access_key_id()),
                present("aws_access_key_id")
            );
            assert_eq!(
                Some(credentials.secret_access_key()),
                present("aws_secret_access_key")
            );
            let token = present("aws_session_token").or_else(|| present("aws_security_token"));
            assert_eq!(credentials.session_token(), token);
            // `Debug` does not depend on the secret key or the token, only on the
            // token's presence.
            let other = crate::Credentials::new(
                credentials.access_key_id(),
                "other",
                credentials.session_token().map(|_| "other".to_owned()),
            );
            assert_eq!(format!("{credentials:?}"), format!("{other:?}"));
        }
        Ok(None) => {
            assert!(present("aws_access_key_id").is_none());
            assert!(present("aws_secret_access_key").is_none());
        }
        Err(Error::UnsupportedProfile {
            profile: name,
            setting,
        }) => {
            assert_eq!(name, profile.name());
            assert!(profile.get(&setting).is_some());
        }
        Err(Error::FetchedCredentials {
            profile: name,
            setting,
        }) => {
            assert_eq!(name, profile.name());
            assert!(profile.get(setting).is_some());
        }
        Err(Error::Incomplete { missing, .. }) => assert!(present(missing).is_none()),
        Err(other) => panic!("unexpected error {other:?}"),
    }
}

/// The directory the shared files of this thread go to.
fn scratch_dir() -> PathBuf {
    let thread = format!("{:?}", std::thread::current().id());
    let name: String = thread.chars().filter(char::is_ascii_digit).collect();
    std::env::temp_dir().join(format!(
        "s3-wire-fuzz-profiles-{}-{name}",
        std::process::id()
    ))
}

/// Loads [`SharedConfig`] from the texts written as files and checks its resolution
/// against the parsed profiles.
fn check_shared_config(set: &ProfileSet, config: &str, credentials: &str, name: &str) {
    let dir = scratch_dir();
    let (config_file, credentials_file) = (dir.join("config"), dir.join("credentials"));
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&config_file, config))
        .and_then(|()| std::fs::write(&credentials_file, credentials));
    if written.is_err() {
        return;
    }
    let env = MapEnv::new()
        .with_var("AWS_CONFIG_FILE", config_file.to_string_lossy())
        .with_var(
            "AWS_SHARED_CREDENTIALS_FILE",
            credentials_file.to_string_lossy(),
        );
    let loaded = if name.is_empty() {
        SharedConfig::load(&env)
    } else {
        SharedConfig::load_profile(&env, name)
    };
    let _ = std::fs::remove_file(&config_file);
    let _ = std::fs::remove_file(&credentials_file);
    let shared = loaded.unwrap_or_else(|e| panic!("the parsed files do not load: {e}"));
    let profile_name = if name.is_empty() { "default" } else { name };
    assert_eq!(shared.profile_name(), profile_name);
    let expected = set.profile(profile_name);
    match shared.profile() {
        Ok(profile) => assert_eq!(profile, expected),
        Err(Error::ProfileNotFound { profile }) => {
            assert!(expected.is_none() && !name.is_empty());
            assert_eq!(profile, name);
            assert!(shared.credentials().is_err() && shared.region().is_err());
            assert!(shared.endpoint_url().is_err());
            return;
        }
        Err(other) => panic!("unexpected error {other:?}"),
    }
    assert_eq!(shared.profiles().profile(profile_name), expected);

    let resolved = shared.credentials().map(|c| c.map(|c| format!("{c:?}")));
    let direct = expected
        .map(credentials_from_profile)
        .transpose()
        .map(|c| c.flatten().map(|c| format!("{c:?}")));
    assert_eq!(
        resolved.as_ref().map_err(ToString::to_string),
        direct.as_ref().map_err(ToString::to_string)
    );
    let region = expected
        .and_then(|p| p.get("region"))
        .filter(|r| !r.is_empty());
    assert_eq!(shared.region().ok().flatten().as_deref(), region);

    let endpoint = shared.endpoint_url().ok().flatten();
    let ignored = expected
        .and_then(|p| p.get("ignore_configured_endpoint_urls"))
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let configured = expected.and_then(|profile| {
        profile
            .get("services")
            .and_then(|services| set.services(services))
            .and_then(|services| services.sub_property("s3", "endpoint_url"))
            .or_else(|| profile.get("endpoint_url"))
            .filter(|url| !url.is_empty())
    });
    assert_eq!(endpoint.as_deref(), configured.filter(|_| !ignored));
}

/// Parses `data` as each JSON credential document. Panics only on a broken invariant:
/// parsing never panics; an accepted document has a non-empty access key id and secret;
/// a refusal never shows the secret or the token of the document (each is taken from
/// the input when the input is a JSON object, so a mutated document that is almost
/// valid is checked too).
pub fn credential_documents_arbitrary(data: &[u8]) {
    use crate::documents::{
        DocumentError, parse_container_credentials, parse_oidc_token, parse_process_output,
        parse_sso_role_credentials, parse_sso_token,
    };
    let secrets: Vec<String> = match serde_json::from_slice::<serde_json::Value>(data) {
        Ok(value) => {
            let mut found = Vec::new();
            collect_strings(&value, &mut found);
            // Strings that could also be words of a message ("accessToken", "redacted")
            // prove nothing: only those with a character no message has are looked for.
            found.retain(|text| text.len() >= 8 && text.contains(['/', '+', '=']));
            found
        }
        Err(_) => Vec::new(),
    };
    for parse in [
        parse_process_output,
        parse_container_credentials,
        parse_sso_role_credentials,
    ] {
        match parse(data) {
            Ok(parsed) => {
                let credentials = parsed.credentials();
                assert!(!credentials.access_key_id().is_empty());
                assert!(!credentials.secret_access_key().is_empty());
                // `Debug` does not depend on the secret key or the token.
                let other = ExpiringCredentials::new(
                    Credentials::new(
                        credentials.access_key_id(),
                        "other",
                        credentials.session_token().map(|_| "other".to_owned()),
                    ),
                    parsed.expiration(),
                );
                assert_eq!(format!("{parsed:?}"), format!("{other:?}"));
            }
            Err(error) => {
                let shown = format!("{error} {error:?}");
                for secret in &secrets {
                    // The IMDS status code is shown on purpose; it is AWS's word, not a value
                    // a caller keeps secret.
                    if let crate::documents::DocumentError::NotSuccessful { code } = &error
                        && code.contains(secret.as_str())
                    {
                        continue;
                    }
                    assert!(!shown.contains(secret.as_str()), "{shown}");
                }
            }
        }
    }

    // The SSO token cache and the OIDC refresh answer: accepted tokens are non-empty and
    // `Debug` shows none of the token values; refusals show no string of the input.
    let refused = |error: DocumentError| {
        let shown = format!("{error} {error:?}");
        for secret in &secrets {
            assert!(!shown.contains(secret.as_str()), "{shown}");
        }
    };
    match parse_sso_token(data) {
        Ok(token) => {
            assert!(!token.access_token.is_empty());
            // `Debug` does not depend on the tokens or the client secret.
            let mut other = token.clone();
            other.access_token = "other".to_owned();
            other.refresh_token = other.refresh_token.map(|_| "other".to_owned());
            other.client_secret = other.client_secret.map(|_| "other".to_owned());
            assert_eq!(format!("{token:?}"), format!("{other:?}"));
        }
        Err(error) => refused(error),
    }
    match parse_oidc_token(data) {
        Ok(token) => {
            assert!(!token.access_token.is_empty());
            let mut other = token.clone();
            other.access_token = "other".to_owned();
            other.refresh_token = other.refresh_token.map(|_| "other".to_owned());
            assert_eq!(format!("{token:?}"), format!("{other:?}"));
        }
        Err(error) => refused(error),
    }
}

fn collect_strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(text) => out.push(text.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        serde_json::Value::Object(map) => map.values().for_each(|item| collect_strings(item, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn credential_documents_never_panic_nor_leak(
            fields in proptest::collection::vec(
                (
                    prop::sample::select(vec![
                        "Version", "AccessKeyId", "SecretAccessKey", "SessionToken", "Token",
                        "Expiration", "Code", "roleCredentials", "accessKeyId",
                        "secretAccessKey", "sessionToken", "expiration", "accessToken",
                        "expiresAt", "refreshToken", "clientId", "clientSecret", "expiresIn",
                    ]),
                    prop_oneof![
                        "[ -~]{0,24}".prop_map(serde_json::Value::String),
                        any::<i64>().prop_map(serde_json::Value::from),
                        Just(serde_json::Value::Null),
                    ],
                ),
                0..8,
            ),
            nest in any::<bool>(),
        ) {
            let object: serde_json::Map<String, serde_json::Value> =
                fields.into_iter().map(|(name, value)| (name.to_owned(), value)).collect();
            let document = if nest {
                serde_json::json!({ "roleCredentials": object })
            } else {
                serde_json::Value::Object(object)
            };
            super::credential_documents_arbitrary(document.to_string().as_bytes());
        }

        #[test]
        fn profile_files_never_panic_on_bytes(data in proptest::collection::vec(any::<u8>(), 0..256)) {
            super::profile_files_arbitrary(&data);
        }

        #[test]
        fn profile_files_resolve_consistently(
            config in proptest::collection::vec(line(true), 0..10),
            credentials in proptest::collection::vec(line(false), 0..10),
            name in prop_oneof![Just(String::new()), Just("dev".to_owned()), "[a-z]{1,3}"],
        ) {
            let mut data = config.concat().into_bytes();
            data.push(0xFF);
            data.extend_from_slice(credentials.concat().as_bytes());
            data.push(0xFF);
            data.extend_from_slice(name.as_bytes());
            super::profile_files_arbitrary(&data);
        }
    }

    /// Lines of a shared file: headers, properties (some of them the ones resolution
    /// reads), indented sub-properties and continuations, comments, garbage.
    fn line(config: bool) -> impl Strategy<Value = String> {
        let header = if config {
            prop_oneof![
                Just("[default]\n".to_owned()),
                Just("[profile default]\n".to_owned()),
                Just("[profile dev]\n".to_owned()),
                Just("[services s3dev]\n".to_owned()),
                "\\[(profile|services|profilex)[ \t]{0,2}[a-z]{0,3}\\]\n",
            ]
            .boxed()
        } else {
            prop_oneof![
                Just("[default]\n".to_owned()),
                Just("[dev]\n".to_owned()),
                "\\[[ a-z]{0,4}\\]?\n",
            ]
            .boxed()
        };
        prop_oneof![
            header,
            "(aws_access_key_id|aws_secret_access_key|aws_session_token|AWS_Security_Token|region|endpoint_url|services|s3|role_arn|ignore_configured_endpoint_urls)[ ]?=[ ]?[a-zA-Z0-9/+:.]{0,8}( #c)?\n",
            "[ \t]{1,3}(endpoint_url|region|[a-z]{1,3})[ ]?=[ ]?[a-z0-9:/.]{0,8}\n",
            "[ \t]{1,3}[a-z]{0,5}\n",
            "[#;][ -~]{0,8}\n",
            "[ -~]{0,10}\r?\n",
        ]
    }

    #[test]
    fn profile_files_examples() {
        let cases: [&[u8]; 5] = [
            b"[profile dev]\nregion = eu-west-1\nservices = s3dev\n[services s3dev]\ns3 =\n  endpoint_url = http://127.0.0.1:9000\n\xFF[dev]\naws_access_key_id = AKID\naws_secret_access_key = SECRETKEY\n\xFFdev",
            b"[default]\nregion=us-east-2\n[profile default]\nregion=eu-north-1\n\xFF[default]\naws_access_key_id=A\n\xFF",
            b"[profile dev]\nrole_arn = arn:aws:iam::1:role/r\n\xFF\xFFdev",
            b"\xFF[dev]\naws_secret_access_key = only\n\xFFmissing",
            b"[unclosed\n\xFF\xFF",
        ];
        for data in cases {
            super::profile_files_arbitrary(data);
        }
    }

    #[test]
    fn credential_document_examples() {
        for document in [
            r#"{"Version": 1, "AccessKeyId": "AKIAEXAMPLE", "SecretAccessKey": "secret/key+value", "SessionToken": "token/value=1", "Expiration": "2026-12-01T18:00:00Z"}"#,
            r#"{"Code": "Success", "AccessKeyId": "ASIA", "SecretAccessKey": "secret/key+value", "Token": "token/value=1", "Expiration": "2026-12-01T18:00:00Z"}"#,
            r#"{"Code": "NotSuccess-long-code", "AccessKeyId": "ASIA"}"#,
            r#"{"roleCredentials": {"accessKeyId": "ASIA", "secretAccessKey": "secret/key+value", "sessionToken": "token/value=1", "expiration": 1796148000123}}"#,
            r#"{"Version": 1, "AccessKeyId": "AKIA", "SecretAccessKey": "secret/key+value", "Expiration": "not-a-time-at-all"}"#,
            r#"{"Version": 1, "AccessKeyId": "AKIA", "SecretAccessKey": ["secret/key+value"]}"#,
            r#"{"accessToken": "access/token+1", "expiresAt": "2026-12-01T18:00:00Z", "refreshToken": "refresh/token=1", "clientId": "client-1", "clientSecret": "client/secret=1"}"#,
            r#"{"accessToken": "access/token+1", "expiresAt": "not a time/+="}"#,
            r#"{"accessToken": "access/token+1", "expiresIn": 3600, "refreshToken": "refresh/token=2", "tokenType": "Bearer"}"#,
        ] {
            super::credential_documents_arbitrary(document.as_bytes());
        }
    }
}

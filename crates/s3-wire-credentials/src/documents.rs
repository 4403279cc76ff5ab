//! The JSON documents AWS credential sources answer with, parsed into expiring credentials:
//! the output of a `credential_process` (version 1), the ECS/EKS container endpoint and EC2
//! instance metadata (IMDS) role credentials (one shape), and the SSO portal's
//! GetRoleCredentials, the SSO token cache file and the SSO OIDC token refresh; shared by
//! the sources that fetch them and by applications that implement a [`CredentialsProvider`]
//! of their own.
//!
//! Parsing is pure (no I/O, no clock) and bounded ([`MAX_DOCUMENT_LEN`]). A
//! [`DocumentError`] names the field at fault and never echoes a value, so a secret in a
//! malformed document never reaches a log.
//!
//! [`CredentialsProvider`]: super::CredentialsProvider

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::{Credentials, ExpiringCredentials};

/// The largest document accepted: real ones are 1–3 KiB (session tokens included).
pub const MAX_DOCUMENT_LEN: usize = 64 * 1024;

/// Why a credential document was refused. Never holds a value of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DocumentError {
    /// Longer than [`MAX_DOCUMENT_LEN`].
    TooLarge {
        /// The document's length.
        len: usize,
    },
    /// Not JSON (the position of the first error).
    Malformed {
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
    },
    /// JSON, but not an object where one is needed (`field` is the object's name, or
    /// `"document"` for the whole).
    NotAnObject {
        /// The object that is not one.
        field: &'static str,
    },
    /// A required field is absent or empty.
    MissingField(&'static str),
    /// A field has the wrong JSON type.
    WrongType(&'static str),
    /// A `credential_process` output whose `Version` is not 1.
    UnsupportedVersion,
    /// An instance-metadata answer whose `Code` is not `Success` (the code is AWS's own
    /// status word, not a secret).
    NotSuccessful {
        /// The `Code` field.
        code: String,
    },
    /// The expiration cannot be read as a time (`field` names it).
    InvalidExpiration(&'static str),
}

impl fmt::Display for DocumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { len } => write!(
                f,
                "the credential document is {len} bytes, more than the {MAX_DOCUMENT_LEN} accepted"
            ),
            Self::Malformed { line, column } => write!(
                f,
                "the credential document is not valid JSON (line {line}, column {column})"
            ),
            Self::NotAnObject { field } => write!(f, "`{field}` must be a JSON object"),
            Self::MissingField(field) => {
                write!(f, "the required field `{field}` is missing or empty")
            }
            Self::WrongType(field) => write!(f, "the field `{field}` has the wrong JSON type"),
            Self::UnsupportedVersion => {
                f.write_str("the credential_process output must have \"Version\": 1")
            }
            Self::NotSuccessful { code } => {
                write!(f, "the credentials endpoint answered with Code {code:?}")
            }
            Self::InvalidExpiration(field) => {
                write!(f, "the field `{field}` is not a valid expiration time")
            }
        }
    }
}

impl std::error::Error for DocumentError {}

/// Parses the standard output of a `credential_process`: `{"Version": 1, "AccessKeyId",
/// "SecretAccessKey", "SessionToken"?, "Expiration"?}` with an RFC 3339 expiration
/// (absent: the credentials do not expire).
pub fn parse_process_output(json: &[u8]) -> Result<ExpiringCredentials, DocumentError> {
    let document = parse_object(json)?;
    match document.get("Version") {
        None => return Err(DocumentError::MissingField("Version")),
        Some(Value::Number(version)) if version.as_u64() == Some(1) => {}
        Some(Value::Number(_)) => return Err(DocumentError::UnsupportedVersion),
        Some(_) => return Err(DocumentError::WrongType("Version")),
    }
    credentials_from(
        &document,
        ["AccessKeyId", "SecretAccessKey", "SessionToken"],
        false,
    )
    .and_then(|credentials| {
        Ok(ExpiringCredentials::new(
            credentials,
            rfc3339(&document, "Expiration")?,
        ))
    })
}

/// Parses the role credentials of the ECS/EKS container endpoint or of EC2 instance
/// metadata: `{"AccessKeyId", "SecretAccessKey", "Token", "Expiration", "Code"?, ...}`.
/// A `Code` other than `Success` (IMDS) is an error; the token is required.
pub fn parse_container_credentials(json: &[u8]) -> Result<ExpiringCredentials, DocumentError> {
    let document = parse_object(json)?;
    match document.get("Code") {
        None => {}
        Some(Value::String(code)) if code == "Success" => {}
        Some(Value::String(code)) => {
            return Err(DocumentError::NotSuccessful {
                code: code.chars().take(64).collect(),
            });
        }
        Some(_) => return Err(DocumentError::WrongType("Code")),
    }
    let credentials =
        credentials_from(&document, ["AccessKeyId", "SecretAccessKey", "Token"], true)?;
    Ok(ExpiringCredentials::new(
        credentials,
        rfc3339(&document, "Expiration")?,
    ))
}

/// Parses the SSO portal's GetRoleCredentials answer: `{"roleCredentials":
/// {"accessKeyId", "secretAccessKey", "sessionToken", "expiration"}}` with the expiration
/// in milliseconds since the Unix epoch.
pub fn parse_sso_role_credentials(json: &[u8]) -> Result<ExpiringCredentials, DocumentError> {
    let document = parse_object(json)?;
    let role = match document.get("roleCredentials") {
        None => return Err(DocumentError::MissingField("roleCredentials")),
        Some(Value::Object(role)) => role,
        Some(_) => {
            return Err(DocumentError::NotAnObject {
                field: "roleCredentials",
            });
        }
    };
    let credentials = credentials_from(
        role,
        ["accessKeyId", "secretAccessKey", "sessionToken"],
        true,
    )?;
    let expiration = match role.get("expiration") {
        None => return Err(DocumentError::MissingField("expiration")),
        Some(Value::Number(millis)) => millis
            .as_u64()
            .and_then(|millis| UNIX_EPOCH.checked_add(Duration::from_millis(millis)))
            .ok_or(DocumentError::InvalidExpiration("expiration"))?,
        Some(_) => return Err(DocumentError::WrongType("expiration")),
    };
    Ok(ExpiringCredentials::new(credentials, Some(expiration)))
}

/// A token of the SSO token cache (`~/.aws/sso/cache/<sha1>.json`, written by
/// `aws sso login`). `Debug` redacts the tokens and the client secret.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SsoToken {
    /// `accessToken`: the bearer token of the SSO portal.
    pub access_token: String,
    /// `expiresAt`: when the access token expires.
    pub expires_at: SystemTime,
    /// `refreshToken`, for the OIDC refresh (sso-session logins only).
    pub refresh_token: Option<String>,
    /// `clientId` of the OIDC client registration.
    pub client_id: Option<String>,
    /// `clientSecret` of the OIDC client registration.
    pub client_secret: Option<String>,
    /// `registrationExpiresAt`: when the client registration expires.
    pub registration_expires_at: Option<SystemTime>,
    /// `region` of the OIDC service.
    pub region: Option<String>,
    /// `startUrl` of the SSO portal.
    pub start_url: Option<String>,
}

impl fmt::Debug for SsoToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted = |value: &Option<String>| value.as_ref().map(|_| "<redacted>");
        f.debug_struct("SsoToken")
            .field("access_token", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .field("refresh_token", &redacted(&self.refresh_token))
            .field("client_id", &self.client_id)
            .field("client_secret", &redacted(&self.client_secret))
            .field("registration_expires_at", &self.registration_expires_at)
            .field("region", &self.region)
            .field("start_url", &self.start_url)
            .finish()
    }
}

/// Parses a file of the SSO token cache: `{"accessToken", "expiresAt", "refreshToken"?,
/// "clientId"?, "clientSecret"?, "registrationExpiresAt"?, "region"?, "startUrl"?, ...}`
/// with RFC 3339 times (the `2019-11-14T04:05:45UTC` form of older AWS CLIs included).
/// Other fields are ignored.
pub fn parse_sso_token(json: &[u8]) -> Result<SsoToken, DocumentError> {
    let document = parse_object(json)?;
    let text = |field| optional(&document, field).map(|value| value.map(str::to_owned));
    Ok(SsoToken {
        access_token: required(&document, "accessToken")?.to_owned(),
        expires_at: cache_time(&document, "expiresAt")?
            .ok_or(DocumentError::MissingField("expiresAt"))?,
        refresh_token: text("refreshToken")?,
        client_id: text("clientId")?,
        client_secret: text("clientSecret")?,
        registration_expires_at: cache_time(&document, "registrationExpiresAt")?,
        region: text("region")?,
        start_url: text("startUrl")?,
    })
}

/// The answer of the SSO OIDC `CreateToken` call (a refresh). `Debug` redacts the tokens.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OidcToken {
    /// `accessToken`: the new bearer token.
    pub access_token: String,
    /// `expiresIn`: how long the new token is valid, from the answer.
    pub expires_in: Duration,
    /// `refreshToken`: the refresh token to use next time, when the service rotated it.
    pub refresh_token: Option<String>,
}

impl fmt::Debug for OidcToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcToken")
            .field("access_token", &"<redacted>")
            .field("expires_in", &self.expires_in)
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// Parses the SSO OIDC `CreateToken` answer: `{"accessToken", "expiresIn" (seconds),
/// "refreshToken"?, "tokenType"?, ...}`.
pub fn parse_oidc_token(json: &[u8]) -> Result<OidcToken, DocumentError> {
    let document = parse_object(json)?;
    let expires_in = match document.get("expiresIn") {
        None | Some(Value::Null) => return Err(DocumentError::MissingField("expiresIn")),
        Some(Value::Number(seconds)) => seconds
            .as_u64()
            .filter(|seconds| *seconds > 0)
            .map(Duration::from_secs)
            .ok_or(DocumentError::InvalidExpiration("expiresIn"))?,
        Some(_) => return Err(DocumentError::WrongType("expiresIn")),
    };
    Ok(OidcToken {
        access_token: required(&document, "accessToken")?.to_owned(),
        expires_in,
        refresh_token: optional(&document, "refreshToken")?.map(str::to_owned),
    })
}

/// An RFC 3339 time of the SSO token cache; older AWS CLIs wrote `...T04:05:45UTC`.
fn cache_time(
    object: &Map<String, Value>,
    field: &'static str,
) -> Result<Option<SystemTime>, DocumentError> {
    optional(object, field)?
        .map(|text| match text.strip_suffix("UTC") {
            Some(rest) => parse_time(&format!("{rest}Z"), field),
            None => parse_time(text, field),
        })
        .transpose()
}

fn parse_object(json: &[u8]) -> Result<Map<String, Value>, DocumentError> {
    if json.len() > MAX_DOCUMENT_LEN {
        return Err(DocumentError::TooLarge { len: json.len() });
    }
    // Parsed as a `Value`, never into typed fields: serde's type errors quote the value
    // they met, which could be a secret.
    match serde_json::from_slice::<Value>(json) {
        Ok(Value::Object(document)) => Ok(document),
        Ok(_) => Err(DocumentError::NotAnObject { field: "document" }),
        Err(error) => Err(DocumentError::Malformed {
            line: error.line(),
            column: error.column(),
        }),
    }
}

/// The credentials named by `[access key id, secret, session token]`; the token is
/// required if `token_required`.
fn credentials_from(
    object: &Map<String, Value>,
    [access_key_id, secret, token]: [&'static str; 3],
    token_required: bool,
) -> Result<Credentials, DocumentError> {
    let access = required(object, access_key_id)?;
    let secret = required(object, secret)?;
    let token = match optional(object, token)? {
        Some(token) => Some(token.to_owned()),
        None if token_required => return Err(DocumentError::MissingField(token)),
        None => None,
    };
    Ok(Credentials::new(access, secret, token))
}

fn required<'a>(
    object: &'a Map<String, Value>,
    field: &'static str,
) -> Result<&'a str, DocumentError> {
    optional(object, field)?.ok_or(DocumentError::MissingField(field))
}

/// A string field; absent, `null` and empty are all `None`.
fn optional<'a>(
    object: &'a Map<String, Value>,
    field: &'static str,
) -> Result<Option<&'a str>, DocumentError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.is_empty() => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(DocumentError::WrongType(field)),
    }
}

fn rfc3339(
    object: &Map<String, Value>,
    field: &'static str,
) -> Result<Option<SystemTime>, DocumentError> {
    optional(object, field)?
        .map(|text| parse_time(text, field))
        .transpose()
}

fn parse_time(text: &str, field: &'static str) -> Result<SystemTime, DocumentError> {
    s3_xml::Timestamp::parse(text)
        .ok()
        .and_then(|timestamp| timestamp.to_system_time())
        .ok_or(DocumentError::InvalidExpiration(field))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY";
    const TOKEN: &str = "IQoJb3JpZ2luX2VjEXAMPLETOKEN";

    fn at(seconds: u64) -> Option<SystemTime> {
        Some(UNIX_EPOCH + Duration::from_secs(seconds))
    }

    #[test]
    fn a_credential_process_output_with_and_without_expiration() {
        let output = format!(
            r#"{{"Version": 1, "AccessKeyId": "AKIAEXAMPLE", "SecretAccessKey": "{SECRET}",
                "SessionToken": "{TOKEN}", "Expiration": "2026-12-01T18:00:00Z"}}"#
        );
        let parsed = parse_process_output(output.as_bytes()).unwrap();
        assert_eq!(parsed.credentials().access_key_id(), "AKIAEXAMPLE");
        assert_eq!(parsed.credentials().secret_access_key(), SECRET);
        assert_eq!(parsed.credentials().session_token(), Some(TOKEN));
        assert_eq!(parsed.expiration(), at(1_796_148_000));

        let long_lived = format!(
            r#"{{"Version": 1, "AccessKeyId": "AKIAEXAMPLE", "SecretAccessKey": "{SECRET}"}}"#
        );
        let parsed = parse_process_output(long_lived.as_bytes()).unwrap();
        assert_eq!(parsed.credentials().session_token(), None);
        assert_eq!(parsed.expiration(), None);
    }

    #[test]
    fn container_and_instance_metadata_credentials() {
        // The ECS/EKS endpoint's answer.
        let ecs = format!(
            r#"{{"AccessKeyId": "ASIAEXAMPLE", "Expiration": "2026-12-01T18:00:00.123Z",
                "RoleArn": "arn:aws:iam::123456789012:role/task", "SecretAccessKey": "{SECRET}",
                "Token": "{TOKEN}"}}"#
        );
        let parsed = parse_container_credentials(ecs.as_bytes()).unwrap();
        assert_eq!(parsed.credentials().session_token(), Some(TOKEN));
        assert_eq!(
            parsed.expiration(),
            Some(UNIX_EPOCH + Duration::from_millis(1_796_148_000_123))
        );
        // IMDS's, with its status fields.
        let imds = format!(
            r#"{{"Code": "Success", "LastUpdated": "2026-12-01T12:00:00Z", "Type": "AWS-HMAC",
                "AccessKeyId": "ASIAEXAMPLE", "SecretAccessKey": "{SECRET}", "Token": "{TOKEN}",
                "Expiration": "2026-12-01T18:00:00Z"}}"#
        );
        assert_eq!(
            parse_container_credentials(imds.as_bytes())
                .unwrap()
                .expiration(),
            at(1_796_148_000)
        );
        let failed = r#"{"Code": "AssumeRoleUnauthorizedAccess", "Message": "denied"}"#;
        assert_eq!(
            parse_container_credentials(failed.as_bytes()),
            Err(DocumentError::NotSuccessful {
                code: "AssumeRoleUnauthorizedAccess".into()
            })
        );
    }

    #[test]
    fn sso_role_credentials_expire_in_milliseconds() {
        let sso = format!(
            r#"{{"roleCredentials": {{"accessKeyId": "ASIAEXAMPLE", "secretAccessKey": "{SECRET}",
                "sessionToken": "{TOKEN}", "expiration": 1796148000123}}}}"#
        );
        let parsed = parse_sso_role_credentials(sso.as_bytes()).unwrap();
        assert_eq!(parsed.credentials().secret_access_key(), SECRET);
        assert_eq!(
            parsed.expiration(),
            Some(UNIX_EPOCH + Duration::from_millis(1_796_148_000_123))
        );
    }

    #[test]
    fn every_refusal_names_its_cause_and_no_value() {
        type Parse = fn(&[u8]) -> Result<ExpiringCredentials, DocumentError>;
        let cases: [(&[u8], Parse, DocumentError); 12] = [
            (b"{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"", parse_process_output,
                DocumentError::Malformed { line: 1, column: 55 }),
            (b"[1]", parse_process_output, DocumentError::NotAnObject { field: "document" }),
            (b"{\"AccessKeyId\": \"A\", \"SecretAccessKey\": \"s3cr3t\"}", parse_process_output,
                DocumentError::MissingField("Version")),
            (b"{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"s3cr3t\"}", parse_process_output,
                DocumentError::UnsupportedVersion),
            (b"{\"Version\": \"1\", \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"s3cr3t\"}", parse_process_output,
                DocumentError::WrongType("Version")),
            (b"{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"\"}", parse_process_output,
                DocumentError::MissingField("SecretAccessKey")),
            (b"{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": 7}", parse_process_output,
                DocumentError::WrongType("SecretAccessKey")),
            (b"{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": \"s3cr3t\", \"Expiration\": \"s3cr3t\"}",
                parse_process_output, DocumentError::InvalidExpiration("Expiration")),
            (b"{\"AccessKeyId\": \"A\", \"SecretAccessKey\": \"s3cr3t\"}", parse_container_credentials,
                DocumentError::MissingField("Token")),
            (b"{\"roleCredentials\": \"s3cr3t\"}", parse_sso_role_credentials,
                DocumentError::NotAnObject { field: "roleCredentials" }),
            (b"{\"roleCredentials\": {\"accessKeyId\": \"A\", \"secretAccessKey\": \"s3cr3t\", \"sessionToken\": \"t\"}}",
                parse_sso_role_credentials, DocumentError::MissingField("expiration")),
            (b"{\"roleCredentials\": {\"accessKeyId\": \"A\", \"secretAccessKey\": \"s3cr3t\", \"sessionToken\": \"t\", \"expiration\": -1}}",
                parse_sso_role_credentials, DocumentError::InvalidExpiration("expiration")),
        ];
        for (document, parse, expected) in cases {
            let error = parse(document).unwrap_err();
            assert_eq!(error, expected, "{}", String::from_utf8_lossy(document));
            let shown = format!("{error} {error:?}");
            assert!(!shown.contains("s3cr3t"), "{shown}");
        }
        let huge = vec![b' '; MAX_DOCUMENT_LEN + 1];
        assert_eq!(
            parse_process_output(&huge),
            Err(DocumentError::TooLarge {
                len: MAX_DOCUMENT_LEN + 1
            })
        );
    }

    #[test]
    fn expiring_credentials_redact_themselves() {
        let parsed =
            ExpiringCredentials::new(Credentials::new("AKID", SECRET, Some(TOKEN.into())), None);
        let shown = format!("{parsed:?}");
        assert!(!shown.contains(SECRET) && !shown.contains(TOKEN), "{shown}");
    }

    #[test]
    fn sso_token_cache_files_of_both_cli_generations() {
        let session = format!(
            r#"{{"startUrl": "https://d-1234567890.awsapps.com/start", "region": "eu-west-1",
                "accessToken": "{TOKEN}", "expiresAt": "2026-12-01T18:00:00Z",
                "clientId": "client-1", "clientSecret": "{SECRET}",
                "registrationExpiresAt": "2026-12-31T00:00:00Z", "refreshToken": "rt-s3cr3t",
                "unknownField": [1, 2]}}"#
        );
        let token = parse_sso_token(session.as_bytes()).unwrap();
        assert_eq!(token.access_token, TOKEN);
        assert_eq!(Some(token.expires_at), at(1_796_148_000));
        assert_eq!(token.refresh_token.as_deref(), Some("rt-s3cr3t"));
        assert_eq!(token.client_id.as_deref(), Some("client-1"));
        assert_eq!(token.client_secret.as_deref(), Some(SECRET));
        assert_eq!(token.registration_expires_at, at(1_798_675_200));
        assert_eq!(token.region.as_deref(), Some("eu-west-1"));
        assert_eq!(
            token.start_url.as_deref(),
            Some("https://d-1234567890.awsapps.com/start")
        );
        let shown = format!("{token:?}");
        assert!(
            !shown.contains(TOKEN) && !shown.contains(SECRET) && !shown.contains("rt-s3cr3t"),
            "{shown}"
        );
        assert!(shown.contains("client-1"), "{shown}");

        // The legacy form of older CLIs: no refresh fields, a `UTC` suffix.
        let legacy =
            format!(r#"{{"accessToken": "{TOKEN}", "expiresAt": "2026-12-01T18:00:00UTC"}}"#);
        let token = parse_sso_token(legacy.as_bytes()).unwrap();
        assert_eq!(Some(token.expires_at), at(1_796_148_000));
        assert_eq!(
            (
                token.refresh_token,
                token.client_id,
                token.registration_expires_at
            ),
            (None, None, None)
        );
    }

    #[test]
    fn oidc_create_token_answers() {
        let answer = format!(
            r#"{{"accessToken": "{TOKEN}", "expiresIn": 28800, "refreshToken": "rt-s3cr3t",
                "tokenType": "Bearer"}}"#
        );
        let token = parse_oidc_token(answer.as_bytes()).unwrap();
        assert_eq!(token.access_token, TOKEN);
        assert_eq!(token.expires_in, Duration::from_secs(28_800));
        assert_eq!(token.refresh_token.as_deref(), Some("rt-s3cr3t"));
        let shown = format!("{token:?}");
        assert!(
            !shown.contains(TOKEN) && !shown.contains("rt-s3cr3t"),
            "{shown}"
        );

        let without_rotation = format!(r#"{{"accessToken": "{TOKEN}", "expiresIn": 60}}"#);
        assert_eq!(
            parse_oidc_token(without_rotation.as_bytes())
                .unwrap()
                .refresh_token,
            None
        );
    }

    #[test]
    fn sso_token_and_oidc_refusals_name_the_field_and_no_value() {
        let token_cases: [(&[u8], DocumentError); 6] = [
            (b"{\"expiresAt\": \"2026-12-01T18:00:00Z\"}", DocumentError::MissingField("accessToken")),
            (b"{\"accessToken\": \"s3cr3t\"}", DocumentError::MissingField("expiresAt")),
            (b"{\"accessToken\": \"s3cr3t\", \"expiresAt\": \"s3cr3t\"}",
                DocumentError::InvalidExpiration("expiresAt")),
            (b"{\"accessToken\": 5, \"expiresAt\": \"2026-12-01T18:00:00Z\"}", DocumentError::WrongType("accessToken")),
            (b"{\"accessToken\": \"s3cr3t\", \"expiresAt\": \"2026-12-01T18:00:00Z\", \"refreshToken\": {}}",
                DocumentError::WrongType("refreshToken")),
            (b"\"s3cr3t\"", DocumentError::NotAnObject { field: "document" }),
        ];
        for (document, expected) in token_cases {
            let error = parse_sso_token(document).unwrap_err();
            assert_eq!(error, expected, "{}", String::from_utf8_lossy(document));
            let shown = format!("{error} {error:?}");
            assert!(!shown.contains("s3cr3t"), "{shown}");
        }
        let oidc_cases: [(&[u8], DocumentError); 5] = [
            (
                b"{\"accessToken\": \"s3cr3t\"}",
                DocumentError::MissingField("expiresIn"),
            ),
            (
                b"{\"accessToken\": \"s3cr3t\", \"expiresIn\": \"3600\"}",
                DocumentError::WrongType("expiresIn"),
            ),
            (
                b"{\"accessToken\": \"s3cr3t\", \"expiresIn\": -1}",
                DocumentError::InvalidExpiration("expiresIn"),
            ),
            (
                b"{\"accessToken\": \"s3cr3t\", \"expiresIn\": 0}",
                DocumentError::InvalidExpiration("expiresIn"),
            ),
            (
                b"{\"expiresIn\": 3600, \"refreshToken\": \"s3cr3t\"}",
                DocumentError::MissingField("accessToken"),
            ),
        ];
        for (document, expected) in oidc_cases {
            let error = parse_oidc_token(document).unwrap_err();
            assert_eq!(error, expected, "{}", String::from_utf8_lossy(document));
            let shown = format!("{error} {error:?}");
            assert!(!shown.contains("s3cr3t"), "{shown}");
        }
    }
}

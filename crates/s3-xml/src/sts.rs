//! STS AssumeRole and AssumeRoleWithWebIdentity responses.

use std::fmt;

use crate::common::{DecodeBody, required};
use crate::reader::XmlReader;
use crate::{Error, Timestamp};

/// Temporary credentials issued by STS. `Debug` redacts the secret key and
/// the session token.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StsCredentials {
    /// `AccessKeyId`.
    pub access_key_id: String,
    /// `SecretAccessKey` (secret).
    pub secret_access_key: String,
    /// `SessionToken` (secret).
    pub session_token: String,
    /// `Expiration`.
    pub expiration: Timestamp,
}

impl fmt::Debug for StsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field("session_token", &"<redacted>")
            .field("expiration", &self.expiration)
            .finish()
    }
}

/// `AssumedRoleUser`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AssumedRoleUser {
    /// `Arn`.
    pub arn: Option<String>,
    /// `AssumedRoleId`.
    pub assumed_role_id: Option<String>,
}

/// The result of AssumeRole (`<AssumeRoleResponse>`) or
/// AssumeRoleWithWebIdentity (`<AssumeRoleWithWebIdentityResponse>`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AssumeRoleResult {
    /// The credentials.
    pub credentials: StsCredentials,
    /// `AssumedRoleUser`.
    pub assumed_role_user: Option<AssumedRoleUser>,
    /// `PackedPolicySize` (percentage of the allowed policy size).
    pub packed_policy_size: Option<u32>,
    /// `SourceIdentity`.
    pub source_identity: Option<String>,
    /// `SubjectFromWebIdentityToken` (web identity only).
    pub subject_from_web_identity_token: Option<String>,
    /// `Provider` (web identity only).
    pub provider: Option<String>,
    /// `Audience` (web identity only).
    pub audience: Option<String>,
    /// `ResponseMetadata/RequestId`.
    pub request_id: Option<String>,
}

#[derive(Default)]
struct Partial {
    credentials: Option<StsCredentials>,
    assumed_role_user: Option<AssumedRoleUser>,
    packed_policy_size: Option<u32>,
    source_identity: Option<String>,
    subject_from_web_identity_token: Option<String>,
    provider: Option<String>,
    audience: Option<String>,
    request_id: Option<String>,
}

impl DecodeBody for AssumeRoleResult {
    const ROOT: &'static str = "AssumeRoleResponse";

    fn accepts_root(root: &str) -> bool {
        root == "AssumeRoleResponse" || root == "AssumeRoleWithWebIdentityResponse"
    }

    fn decode_body(r: &mut XmlReader<'_>, root: &str) -> Result<Self, Error> {
        let result_name = if root == "AssumeRoleResponse" {
            "AssumeRoleResult"
        } else {
            "AssumeRoleWithWebIdentityResult"
        };
        let mut p = Partial::default();
        let mut seen_result = false;
        while let Some(child) = r.next_child()? {
            if child == result_name && !seen_result {
                seen_result = true;
                decode_result(r, &mut p)?;
            } else if child == "ResponseMetadata" {
                while let Some(name) = r.next_child()? {
                    match name {
                        "RequestId" => r.put(&mut p.request_id, "RequestId", XmlReader::string)?,
                        _ => r.skip()?,
                    }
                }
            } else {
                r.skip()?;
            }
        }
        Ok(Self {
            credentials: required(p.credentials, r, "AssumeRoleResult", "Credentials")?,
            assumed_role_user: p.assumed_role_user,
            packed_policy_size: p.packed_policy_size,
            source_identity: p.source_identity,
            subject_from_web_identity_token: p.subject_from_web_identity_token,
            provider: p.provider,
            audience: p.audience,
            request_id: p.request_id,
        })
    }
}

fn decode_result(r: &mut XmlReader<'_>, p: &mut Partial) -> Result<(), Error> {
    while let Some(child) = r.next_child()? {
        match child {
            "Credentials" => r.put(&mut p.credentials, "Credentials", |r, _| {
                decode_credentials(r)
            })?,
            "AssumedRoleUser" => r.put(&mut p.assumed_role_user, "AssumedRoleUser", |r, _| {
                let mut user = AssumedRoleUser::default();
                while let Some(name) = r.next_child()? {
                    match name {
                        "Arn" => r.put(&mut user.arn, "Arn", XmlReader::string)?,
                        "AssumedRoleId" => r.put(
                            &mut user.assumed_role_id,
                            "AssumedRoleId",
                            XmlReader::string,
                        )?,
                        _ => r.skip()?,
                    }
                }
                Ok(user)
            })?,
            "PackedPolicySize" => r.put(
                &mut p.packed_policy_size,
                "PackedPolicySize",
                XmlReader::u32_value,
            )?,
            "SourceIdentity" => {
                r.put(&mut p.source_identity, "SourceIdentity", XmlReader::string)?
            }
            "SubjectFromWebIdentityToken" => {
                r.put(
                    &mut p.subject_from_web_identity_token,
                    "SubjectFromWebIdentityToken",
                    XmlReader::string,
                )?;
            }
            "Provider" => r.put(&mut p.provider, "Provider", XmlReader::string)?,
            "Audience" => r.put(&mut p.audience, "Audience", XmlReader::string)?,
            _ => r.skip()?,
        }
    }
    Ok(())
}

pub(crate) fn decode_credentials(r: &mut XmlReader<'_>) -> Result<StsCredentials, Error> {
    let (mut access_key_id, mut secret_access_key, mut session_token, mut expiration) =
        (None, None, None, None);
    while let Some(name) = r.next_child()? {
        match name {
            "AccessKeyId" => r.put(&mut access_key_id, "AccessKeyId", XmlReader::string)?,
            "SecretAccessKey" => {
                r.put(&mut secret_access_key, "SecretAccessKey", XmlReader::string)?
            }
            "SessionToken" => r.put(&mut session_token, "SessionToken", XmlReader::string)?,
            "Expiration" => r.put(&mut expiration, "Expiration", XmlReader::timestamp_value)?,
            _ => r.skip()?,
        }
    }
    Ok(StsCredentials {
        access_key_id: required(access_key_id, r, "Credentials", "AccessKeyId")?,
        secret_access_key: required(secret_access_key, r, "Credentials", "SecretAccessKey")?,
        session_token: required(session_token, r, "Credentials", "SessionToken")?,
        expiration: required(expiration, r, "Credentials", "Expiration")?,
    })
}

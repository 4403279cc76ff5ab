//! A loopback STS (AssumeRole checked against the independent SigV4 verifier, web identity
//! against its token) and a home directory pointing the chain at it, shared by the
//! credential sources' tests and s3-wire-tokio's (which includes this file).

#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use s3_wire_credentials::MapEnv;

use super::endpoint::{Answer, Endpoint, Request};

pub const SECRET_BASE: &str = "base-secret-key-0123456789";

/// An STS answer with credentials `AKID<n>` (secret `secret-<n>`, token `token-<n>`)
/// expiring one hour from now.
pub fn assume_role_answer(action: &str, n: u32) -> Answer {
    let expiration = httpdate_iso(SystemTime::now() + Duration::from_secs(3600));
    Answer::ok(format!(
        "<{action}Response xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><{action}Result>\
         <Credentials><AccessKeyId>ASIA{n}</AccessKeyId><SecretAccessKey>secret-{n}</SecretAccessKey>\
         <SessionToken>token-{n}</SessionToken><Expiration>{expiration}</Expiration></Credentials>\
         <AssumedRoleUser><Arn>arn:aws:sts::1:assumed-role/r/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId>\
         </AssumedRoleUser></{action}Result><ResponseMetadata><RequestId>req-{n}</RequestId>\
         </ResponseMetadata></{action}Response>"
    ))
    .with_header("content-type", "text/xml")
}

/// RFC 3339 in UTC, as STS writes it.
pub fn httpdate_iso(time: SystemTime) -> String {
    s3_xml::Timestamp::from_system_time(time)
        .expect("a time after 1970")
        .to_string()
}

/// A fake STS: AssumeRole must be signed (service `sts`) by a secret it issued (or the
/// base secret), AssumeRoleWithWebIdentity must carry `expected_token`. Each success issues
/// the next `ASIA<n>`.
pub fn sts(expected_token: &'static str) -> Endpoint {
    let issued = AtomicU32::new(0);
    Endpoint::start(move |request: &Request| {
        let action = request.param("Action").unwrap_or_default();
        match action.as_str() {
            "AssumeRole" => {
                let access_key = request
                    .header("authorization")
                    .and_then(|a| a.split("Credential=").nth(1))
                    .and_then(|c| c.split('/').next())
                    .unwrap_or_default()
                    .to_owned();
                let secret = match access_key.strip_prefix("ASIA") {
                    Some(n) => format!("secret-{n}"),
                    None => SECRET_BASE.to_owned(),
                };
                if let Err(why) = super::sigv4::verify_for(
                    "sts",
                    request.method.as_str(),
                    &request.target,
                    &request.headers,
                    Some(&request.body),
                    &secret,
                ) {
                    return Answer::new(
                        403,
                        format!(
                            "<ErrorResponse><Error><Type>Sender</Type><Code>SignatureDoesNotMatch</Code>\
                             <Message>{why}</Message></Error><RequestId>bad</RequestId></ErrorResponse>"
                        ),
                    );
                }
                let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
                assume_role_answer("AssumeRole", n)
            }
            "AssumeRoleWithWebIdentity" => {
                if request.header("authorization").is_some()
                    || request.param("WebIdentityToken").as_deref() != Some(expected_token)
                {
                    return Answer::new(
                        400,
                        "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>\
                         <Message>bad token</Message></Error><RequestId>r</RequestId></ErrorResponse>",
                    );
                }
                let n = issued.fetch_add(1, Ordering::SeqCst) + 1;
                assume_role_answer("AssumeRoleWithWebIdentity", n)
            }
            _ => Answer::new(400, "unknown action"),
        }
    })
}

/// A home directory with `config` and `credentials` files, and the env pointing STS at
/// `sts`, with instance metadata off.
pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new(config: &str, credentials: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".aws")).unwrap();
        std::fs::write(dir.path().join(".aws/config"), config).unwrap();
        std::fs::write(dir.path().join(".aws/credentials"), credentials).unwrap();
        Self { dir }
    }

    pub fn env(&self, sts: &Endpoint) -> MapEnv {
        MapEnv::new()
            .with_home(self.dir.path())
            .with_var("AWS_EC2_METADATA_DISABLED", "true")
            .with_var("AWS_ENDPOINT_URL_STS", sts.url())
            .with_var("AWS_REGION", "eu-west-1")
    }
}

pub const CHAIN_CONFIG: &str = "[profile top]\nrole_arn = arn:aws:iam::111:role/top\nsource_profile = middle\n\
     external_id = ext-7\nduration_seconds = 1800\nrole_session_name = alice\n\
     [profile middle]\nrole_arn = arn:aws:iam::111:role/middle\nsource_profile = base\n";

pub fn base_credentials() -> String {
    format!("[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = {SECRET_BASE}\n")
}

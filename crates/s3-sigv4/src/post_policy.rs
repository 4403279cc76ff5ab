//! POST policy signing for browser-based uploads (HTML form POST to S3).

use std::fmt;

use crate::credentials::Credentials;
use crate::encoding::base64_encode;
use crate::error::{Error, InvalidParameter};
use crate::params::{SigningAlgorithm, SigningParams};
use crate::signer::{Signature, Signer, write_scope};

const ALGORITHM: &str = SigningAlgorithm::V4.name();
use crate::time::SigningTime;

/// A POST policy document under construction. The conditions naming the
/// signature (`x-amz-algorithm`, `x-amz-credential`, `x-amz-date`,
/// `x-amz-security-token`) are added by [`Signer::sign_post_policy`].
///
/// ```
/// use s3_sigv4::{PostPolicy, SigningTime};
/// let policy = PostPolicy::new(SigningTime::from_parts(2015, 12, 30, 12, 0, 0)?)
///     .exact("bucket", "sigv4examplebucket")
///     .starts_with("key", "user/user1/")
///     .content_length_range(1, 10_485_760);
/// assert_eq!(
///     policy.to_json(&[]),
///     r#"{"expiration":"2015-12-30T12:00:00.000Z","conditions":[{"bucket":"sigv4examplebucket"},["starts-with","$key","user/user1/"],["content-length-range",1,10485760]]}"#
/// );
/// # Ok::<(), s3_sigv4::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostPolicy {
    expiration: SigningTime,
    conditions: Vec<String>,
}

impl PostPolicy {
    /// A policy that expires at `expiration`.
    pub fn new(expiration: SigningTime) -> Self {
        Self {
            expiration,
            conditions: Vec::new(),
        }
    }

    /// The form field `field` must equal `value` (`{"field": "value"}`).
    pub fn exact(mut self, field: &str, value: &str) -> Self {
        let mut condition = String::from("{");
        push_json_string(&mut condition, field);
        condition.push(':');
        push_json_string(&mut condition, value);
        condition.push('}');
        self.conditions.push(condition);
        self
    }

    /// The form field `field` must start with `prefix` (an empty prefix allows
    /// any value): `["starts-with", "$field", "prefix"]`.
    pub fn starts_with(mut self, field: &str, prefix: &str) -> Self {
        let mut condition = String::from("[\"starts-with\",");
        push_json_string(&mut condition, &format!("${field}"));
        condition.push(',');
        push_json_string(&mut condition, prefix);
        condition.push(']');
        self.conditions.push(condition);
        self
    }

    /// The uploaded file must be `min..=max` bytes long.
    pub fn content_length_range(mut self, min: u64, max: u64) -> Self {
        self.conditions
            .push(format!("[\"content-length-range\",{min},{max}]"));
        self
    }

    /// The JSON document with the given extra `(field, value)` exact conditions.
    pub fn to_json(&self, extra_exact: &[(&str, &str)]) -> String {
        let mut json = String::from("{\"expiration\":");
        push_json_string(&mut json, &iso8601_millis(self.expiration));
        json.push_str(",\"conditions\":[");
        let mut first = true;
        for condition in &self.conditions {
            if !first {
                json.push(',');
            }
            first = false;
            json.push_str(condition);
        }
        for (field, value) in extra_exact {
            if !first {
                json.push(',');
            }
            first = false;
            json.push('{');
            push_json_string(&mut json, field);
            json.push(':');
            push_json_string(&mut json, value);
            json.push('}');
        }
        json.push_str("]}");
        json
    }
}

/// `2015-12-30T12:00:00.000Z` from `20151230T120000Z`.
fn iso8601_millis(time: SigningTime) -> String {
    let d = time.amz_date();
    format!(
        "{}-{}-{}T{}:{}:{}.000Z",
        &d[0..4],
        &d[4..6],
        &d[6..8],
        &d[9..11],
        &d[11..13],
        &d[13..15]
    )
}

fn push_json_string(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The form fields of a signed POST policy, to put next to `key`, `file` and
/// the fields the policy constrains. `Debug` redacts the signature and token.
#[derive(Clone, PartialEq, Eq)]
pub struct PostPolicyForm {
    /// `policy`: the base64 policy document (the string that was signed).
    pub policy: String,
    /// `x-amz-algorithm`: `AWS4-HMAC-SHA256`.
    pub algorithm: &'static str,
    /// `x-amz-credential`: `access-key-id/date/region/service/aws4_request`.
    pub credential: String,
    /// `x-amz-date`.
    pub date: String,
    /// `x-amz-security-token`, for temporary credentials.
    pub security_token: Option<String>,
    /// `x-amz-signature`.
    pub signature: Signature,
}

impl PostPolicyForm {
    /// All fields as `(form field name, value)` pairs.
    pub fn fields(&self) -> Vec<(&'static str, String)> {
        let mut fields = vec![
            ("policy", self.policy.clone()),
            ("x-amz-algorithm", self.algorithm.to_owned()),
            ("x-amz-credential", self.credential.clone()),
            ("x-amz-date", self.date.clone()),
        ];
        if let Some(token) = &self.security_token {
            fields.push(("x-amz-security-token", token.clone()));
        }
        fields.push(("x-amz-signature", self.signature.to_hex()));
        fields
    }
}

impl fmt::Debug for PostPolicyForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostPolicyForm")
            // The policy embeds the session token, so only its size is shown.
            .field(
                "policy",
                &format_args!("<{} bytes of base64>", self.policy.len()),
            )
            .field("credential", &self.credential)
            .field("date", &self.date)
            .field(
                "security_token",
                &self.security_token.as_ref().map(|_| "<redacted>"),
            )
            .field("signature", &self.signature)
            .finish_non_exhaustive()
    }
}

impl Signer {
    /// Signs `policy`, adding the conditions for the algorithm, credential,
    /// date and session token fields. Uses the region, service and time of
    /// `params` (the payload and rules are irrelevant here).
    pub fn sign_post_policy(
        &self,
        policy: &PostPolicy,
        credentials: &Credentials,
        params: &SigningParams<'_>,
    ) -> Result<PostPolicyForm, Error> {
        credentials.validate()?;
        params.validate()?;
        checked_v4(params)?;
        let credential = credential_string(credentials, params);
        let time = params.time();
        let mut extra = vec![
            ("x-amz-algorithm", ALGORITHM),
            ("x-amz-credential", credential.as_str()),
            ("x-amz-date", time.amz_date()),
        ];
        if let Some(token) = credentials.session_token() {
            extra.push(("x-amz-security-token", token));
        }
        self.sign_post_policy_document(&policy.to_json(&extra), credentials, params)
    }

    /// Signs a complete policy document written by the caller, which must
    /// itself contain the `x-amz-algorithm`, `x-amz-credential` and
    /// `x-amz-date` conditions matching `params`.
    pub fn sign_post_policy_document(
        &self,
        policy_json: &str,
        credentials: &Credentials,
        params: &SigningParams<'_>,
    ) -> Result<PostPolicyForm, Error> {
        credentials.validate()?;
        params.validate()?;
        checked_v4(params)?;
        let policy = base64_encode(policy_json.as_bytes());
        let signature =
            Signature::from_hmac(self.signing_key(credentials, params).mac(policy.as_bytes()));
        Ok(PostPolicyForm {
            policy,
            algorithm: ALGORITHM,
            credential: credential_string(credentials, params),
            date: params.time().amz_date().to_owned(),
            security_token: credentials.session_token().map(str::to_owned),
            signature,
        })
    }
}

/// POST policies are SigV4 only (S3 documents no SigV4a form).
fn checked_v4(params: &SigningParams<'_>) -> Result<(), Error> {
    if params.algorithm() == SigningAlgorithm::V4 {
        Ok(())
    } else {
        Err(InvalidParameter::Payload("POST policies are signed with SigV4 only").into())
    }
}

fn credential_string(credentials: &Credentials, params: &SigningParams<'_>) -> String {
    let mut credential = Vec::with_capacity(96);
    credential.extend_from_slice(credentials.access_key_id().as_bytes());
    credential.push(b'/');
    write_scope(
        &mut credential,
        &params.time(),
        params.region(),
        params.service(),
    );
    String::from_utf8_lossy(&credential).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PayloadHash;

    fn testdata(file: &str) -> String {
        let path = format!(
            "{}/testdata/s3-post-policy/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn documented_policy_signature() {
        let credentials = Credentials::new(
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            None,
        );
        let time = SigningTime::from_parts(2015, 12, 29, 0, 0, 0).unwrap();
        let params = SigningParams::new("us-east-1", "s3", time, PayloadHash::Unsigned);
        let form = Signer::new()
            .sign_post_policy_document(&testdata("policy.json"), &credentials, &params)
            .unwrap();
        assert_eq!(form.policy, testdata("policy.base64"));
        assert_eq!(form.signature.to_hex(), testdata("signature.txt"));
        assert_eq!(
            form.credential,
            "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request"
        );
        assert_eq!(form.date, "20151229T000000Z");
    }

    #[test]
    fn builder_adds_signature_conditions_and_escapes() {
        let credentials = Credentials::new("AKID", "secret", Some("SeSsIoN\"ToKeN".into()));
        let time = SigningTime::from_parts(2015, 12, 29, 0, 0, 0).unwrap();
        let params = SigningParams::new("us-east-1", "s3", time, PayloadHash::Unsigned);
        let policy = PostPolicy::new(SigningTime::from_parts(2015, 12, 30, 12, 0, 0).unwrap())
            .exact("acl", "public-read")
            .starts_with("key", "a\\b");
        let signer = Signer::new();
        let form = signer
            .sign_post_policy(&policy, &credentials, &params)
            .unwrap();
        let expected_json = concat!(
            r#"{"expiration":"2015-12-30T12:00:00.000Z","conditions":[{"acl":"public-read"},"#,
            r#"["starts-with","$key","a\\b"],{"x-amz-algorithm":"AWS4-HMAC-SHA256"},"#,
            r#"{"x-amz-credential":"AKID/20151229/us-east-1/s3/aws4_request"},"#,
            r#"{"x-amz-date":"20151229T000000Z"},{"x-amz-security-token":"SeSsIoN\"ToKeN"}]}"#
        );
        let direct = signer
            .sign_post_policy_document(expected_json, &credentials, &params)
            .unwrap();
        assert_eq!(form, direct);
        assert_eq!(form.fields().len(), 6);
        let shown = format!("{form:?}");
        assert!(
            !shown.contains("SeSsIoN") && !shown.contains(&form.signature.to_hex()),
            "{shown}"
        );
    }
}

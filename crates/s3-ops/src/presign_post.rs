//! Presigned POST: the URL and form fields of a browser upload (an HTML form, or any
//! `multipart/form-data` request), signed as a SigV4 POST policy with s3-sigv4.
//!
//! Whoever holds the fields can upload one object within the policy's conditions until it
//! expires, without credentials: the form posts every field below, then the file as the
//! last field, named `file`.
//!
//! ```
//! use std::time::{Duration, UNIX_EPOCH};
//! use s3_ops::{BucketName, Endpoint};
//! use s3_ops::presign_post::{PostConditions, presign_post};
//! use s3_sigv4::{Credentials, Signer};
//!
//! let conditions = PostConditions::key_prefix("uploads/alice/")
//!     .content_length_range(1, 10 << 20)
//!     .content_type_prefix("image/");
//! let post = presign_post(
//!     &BucketName::new("examplebucket")?,
//!     &conditions,
//!     &Endpoint::aws("us-east-1")?,
//!     &Signer::new(),
//!     &Credentials::new("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", None),
//!     UNIX_EPOCH + Duration::from_secs(1_451_347_200), // 2015-12-29
//!     Duration::from_secs(3600),
//! )?;
//! assert_eq!(post.url(), "https://examplebucket.s3.us-east-1.amazonaws.com/");
//! assert_eq!(post.field("key"), Some("uploads/alice/${filename}"));
//! assert_eq!(post.field("x-amz-credential"), Some("AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, SystemTime};

use s3_sigv4::{Credentials, PayloadHash, PostPolicy, Signer, SigningParams, SigningTime};

use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::{BucketName, ObjectKey};
use crate::types::CannedAcl;

/// A form field the policy pins to one value or lets the uploader choose under a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FieldRule {
    Exact(String),
    StartsWith(String),
}

/// What a presigned POST allows: the key (or a key prefix), the size range, the content
/// type and the fields the form sets. Every field the form carries is covered by a
/// condition, as S3 requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostConditions {
    key: FieldRule,
    content_length: Option<(u64, u64)>,
    content_type: Option<FieldRule>,
    acl: Option<CannedAcl>,
    success_action_status: Option<u16>,
    metadata: BTreeMap<String, String>,
}

impl PostConditions {
    /// An upload to exactly `key`.
    pub fn key(key: ObjectKey) -> Self {
        Self::with_key(FieldRule::Exact(key.as_str().to_owned()))
    }

    /// An upload to any key starting with `prefix` (the form's `key` field is
    /// `{prefix}${filename}`: a browser puts the chosen file's name there).
    pub fn key_prefix(prefix: impl Into<String>) -> Self {
        Self::with_key(FieldRule::StartsWith(prefix.into()))
    }

    fn with_key(key: FieldRule) -> Self {
        Self {
            key,
            content_length: None,
            content_type: None,
            acl: None,
            success_action_status: None,
            metadata: BTreeMap::new(),
        }
    }

    /// The file must be `min..=max` bytes long (`content-length-range`).
    pub fn content_length_range(mut self, min: u64, max: u64) -> Self {
        self.content_length = Some((min, max));
        self
    }

    /// `Content-Type` must be exactly `content_type` (the form sets it).
    pub fn content_type(mut self, content_type: impl Into<String>) -> Self {
        self.content_type = Some(FieldRule::Exact(content_type.into()));
        self
    }

    /// `Content-Type` must start with `prefix` (the uploader sets it, e.g. `image/`).
    pub fn content_type_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.content_type = Some(FieldRule::StartsWith(prefix.into()));
        self
    }

    /// The object's canned ACL (`acl`).
    pub fn acl(mut self, acl: CannedAcl) -> Self {
        self.acl = Some(acl);
        self
    }

    /// The status S3 answers a successful upload with: 200, 201 (with an XML body) or 204
    /// (S3's default).
    pub fn success_action_status(mut self, status: u16) -> Self {
        self.success_action_status = Some(status);
        self
    }

    /// User metadata `x-amz-meta-<name>` (names are lower-cased, as S3 stores them).
    pub fn metadata(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata
            .insert(name.into().to_ascii_lowercase(), value.into());
        self
    }

    fn validate(&self) -> Result<(), Error> {
        let invalid = |name: &'static str, reason: String| -> Error {
            InvalidInput::Parameter { name, reason }.into()
        };
        if let Some((min, max)) = self.content_length
            && min > max
        {
            return Err(invalid(
                "content-length-range",
                format!("minimum {min} is above maximum {max}"),
            ));
        }
        if let Some(status) = self.success_action_status
            && !matches!(status, 200 | 201 | 204)
        {
            return Err(invalid(
                "success_action_status",
                format!("{status} is not one of 200, 201, 204"),
            ));
        }
        if let FieldRule::Exact(key) = &self.key {
            ObjectKey::new(key.clone())?;
        }
        Ok(())
    }

    /// The policy's conditions (besides the signature's own) and the form fields with a
    /// fixed value, in the form's order.
    fn apply(
        &self,
        bucket: &BucketName,
        mut policy: PostPolicy,
    ) -> (PostPolicy, Vec<(String, String)>) {
        let mut fields = Vec::new();
        policy = policy.exact("bucket", bucket.as_str());
        match &self.key {
            FieldRule::Exact(key) => {
                policy = policy.exact("key", key);
                fields.push(("key".to_owned(), key.clone()));
            }
            FieldRule::StartsWith(prefix) => {
                policy = policy.starts_with("key", prefix);
                fields.push(("key".to_owned(), format!("{prefix}${{filename}}")));
            }
        }
        match &self.content_type {
            Some(FieldRule::Exact(value)) => {
                policy = policy.exact("Content-Type", value);
                fields.push(("Content-Type".to_owned(), value.clone()));
            }
            Some(FieldRule::StartsWith(prefix)) => {
                policy = policy.starts_with("Content-Type", prefix);
            }
            None => {}
        }
        if let Some(acl) = self.acl {
            policy = policy.exact("acl", acl.as_str());
            fields.push(("acl".to_owned(), acl.as_str().to_owned()));
        }
        if let Some(status) = self.success_action_status {
            policy = policy.exact("success_action_status", &status.to_string());
            fields.push(("success_action_status".to_owned(), status.to_string()));
        }
        for (name, value) in &self.metadata {
            let field = format!("x-amz-meta-{name}");
            policy = policy.exact(&field, value);
            fields.push((field, value.clone()));
        }
        if let Some((min, max)) = self.content_length {
            policy = policy.content_length_range(min, max);
        }
        (policy, fields)
    }
}

/// A presigned POST: where to post and the fields to send before the file. `Debug` redacts
/// the policy, signature and session token.
#[derive(Clone, PartialEq, Eq)]
pub struct PresignedPost {
    url: String,
    fields: Vec<(String, String)>,
    expires_at: SystemTime,
}

impl PresignedPost {
    /// The form's `action`: the bucket's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The form fields, in order; the file goes after them, as the field `file`.
    pub fn fields(&self) -> &[(String, String)] {
        &self.fields
    }

    /// The value of the field `name`.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// When the policy expires (whole seconds).
    pub fn expires_at(&self) -> SystemTime {
        self.expires_at
    }
}

impl fmt::Debug for PresignedPost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SECRET: [&str; 3] = ["policy", "x-amz-signature", "x-amz-security-token"];
        let fields: Vec<(&str, &str)> = self
            .fields
            .iter()
            .map(|(name, value)| {
                let shown = if SECRET.contains(&name.as_str()) {
                    "<redacted>"
                } else {
                    value.as_str()
                };
                (name.as_str(), shown)
            })
            .collect();
        f.debug_struct("PresignedPost")
            .field("url", &self.url)
            .field("fields", &fields)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// Signs a POST policy for uploads to `bucket` under `conditions`, valid for `expires_in`
/// (1 second to 7 days, as presigned URLs) from `now`.
///
/// Multi-Region Access Points are refused: S3 defines POST policies for SigV4 only.
pub fn presign_post(
    bucket: &BucketName,
    conditions: &PostConditions,
    endpoint: &Endpoint,
    signer: &Signer,
    credentials: &Credentials,
    now: SystemTime,
    expires_in: Duration,
) -> Result<PresignedPost, Error> {
    conditions.validate()?;
    if bucket.multi_region_access_point().is_some() {
        return Err(InvalidInput::Parameter {
            name: "bucket",
            reason: "presigned POST is signed with SigV4, which Multi-Region Access Points refuse"
                .to_owned(),
        }
        .into());
    }
    if expires_in < Duration::from_secs(1) || expires_in > s3_sigv4::MAX_PRESIGN_EXPIRY {
        return Err(InvalidInput::Parameter {
            name: "expiration",
            reason: format!("{} s is outside 1 s to 7 days", expires_in.as_secs_f64()),
        }
        .into());
    }
    let time = SigningTime::from_system_time(now).map_err(Error::Presign)?;
    let expires = SigningTime::from_system_time(now + expires_in).map_err(Error::Presign)?;
    let (policy, mut fields) = conditions.apply(bucket, PostPolicy::new(expires));
    let params = SigningParams::new(endpoint.region(), "s3", time, PayloadHash::Unsigned);
    let form = signer
        .sign_post_policy(&policy, credentials, &params)
        .map_err(Error::Presign)?;
    fields.extend(
        form.fields()
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value)),
    );
    let url = endpoint.uri(Some(bucket), None, "")?.to_string();
    Ok(PresignedPost {
        url,
        fields,
        expires_at: expires.to_system_time(),
    })
}

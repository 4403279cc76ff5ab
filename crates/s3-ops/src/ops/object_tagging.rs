//! What the three object-tagging operations share: the `?tagging` sub-resource on an
//! object (version), and the tag-set limits S3 enforces.

use http::Method;

use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::{BucketName, ObjectKey};
use crate::request::RequestBuilder;

/// `/{Key}?tagging[&versionId=]` on an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TaggingTarget {
    pub(crate) bucket: BucketName,
    pub(crate) key: ObjectKey,
    pub(crate) version_id: Option<String>,
    pub(crate) expected_bucket_owner: Option<String>,
}

impl TaggingTarget {
    pub(crate) fn new(bucket: BucketName, key: ObjectKey) -> Self {
        TaggingTarget {
            bucket,
            key,
            version_id: None,
            expected_bucket_owner: None,
        }
    }

    pub(crate) fn builder<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        method: Method,
    ) -> RequestBuilder<'a> {
        RequestBuilder::new(endpoint, method)
            .bucket(&self.bucket)
            .key(&self.key)
            .subresource("tagging")
            .query_opt("versionId", self.version_id.as_ref())
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
    }
}

/// S3's object tag limits: at most 10 tags, keys 1–128 and values 0–256 characters,
/// no duplicate keys.
pub(crate) fn validate_tags<'t>(
    tags: impl ExactSizeIterator<Item = (&'t str, &'t str)>,
) -> Result<(), Error> {
    let invalid = |reason: String| -> Error {
        InvalidInput::Parameter {
            name: "Tagging",
            reason,
        }
        .into()
    };
    if tags.len() > 10 {
        return Err(invalid(format!(
            "{} tags given; S3 allows at most 10",
            tags.len()
        )));
    }
    let mut seen = Vec::with_capacity(tags.len());
    for (key, value) in tags {
        let key_chars = key.chars().count();
        if !(1..=128).contains(&key_chars) {
            return Err(invalid(format!(
                "tag key {key:?} must be 1 to 128 characters"
            )));
        }
        if value.chars().count() > 256 {
            return Err(invalid(format!(
                "value of tag {key:?} exceeds 256 characters"
            )));
        }
        if seen.contains(&key) {
            return Err(invalid(format!("tag key {key:?} appears twice")));
        }
        seen.push(key);
    }
    Ok(())
}

/// Generates the `version_id` / `expected_bucket_owner` setters on a type with a
/// `target: TaggingTarget` field.
macro_rules! tagging_target_setters {
    () => {
        /// Targets a specific version.
        pub fn version_id(mut self, version_id: impl Into<String>) -> Self {
            self.target.version_id = Some(version_id.into());
            self
        }

        /// `x-amz-expected-bucket-owner`.
        pub fn expected_bucket_owner(mut self, account_id: impl Into<String>) -> Self {
            self.target.expected_bucket_owner = Some(account_id.into());
            self
        }
    };
}
pub(crate) use tagging_target_setters;

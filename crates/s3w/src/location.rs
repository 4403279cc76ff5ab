//! Where a command reads or writes: a local path or `s3://bucket/key`.

use std::path::PathBuf;

use s3_wire::key;
use s3_wire::ops::{BucketName, ObjectKey};

use crate::report::*;

/// A location: a local path or an S3 bucket and key (or prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// A local path (`-` is stdin/stdout where a command allows it).
    Local(PathBuf),
    /// `s3://bucket/key`; the key may be empty.
    S3 {
        /// The bucket.
        bucket: String,
        /// The key or prefix.
        key: String,
    },
}

impl Location {
    /// Parses `s3://bucket/key` or a local path. The bucket may be an access point ARN, as
    /// the AWS CLI takes it: `s3://arn:aws:s3:us-west-2:123456789012:accesspoint/my-ap/key`
    /// (the ARN ends with the access point's name).
    pub fn parse(text: &str) -> Location {
        match text.strip_prefix("s3://") {
            Some(rest) => {
                let (bucket, key) = split_bucket(rest);
                Location::S3 {
                    bucket: bucket.to_owned(),
                    key: key.to_owned(),
                }
            }
            None => Location::Local(PathBuf::from(text)),
        }
    }
}

/// `bucket/key` at the first `/`, or after an ARN's `accesspoint/<name>` (`accesspoint:`
/// too; an Outposts ARN's `outpost/<id>/` before it).
fn split_bucket(rest: &str) -> (&str, &str) {
    if rest.starts_with("arn:") {
        let name = rest
            .find("accesspoint/")
            .or_else(|| rest.find("accesspoint:"))
            .map(|at| at + "accesspoint/".len());
        if let Some(name) = name {
            let end = rest[name..].find('/').map_or(rest.len(), |i| name + i);
            return (&rest[..end], rest.get(end + 1..).unwrap_or(""));
        }
    }
    rest.split_once('/').unwrap_or((rest, ""))
}

pub(crate) fn s3_location(text: &str) -> Result<(String, String)> {
    match Location::parse(text) {
        Location::S3 { bucket, key } if !bucket.is_empty() => Ok((bucket, key)),
        _ => Err(usage(format!("expected s3://bucket/key, got `{text}`"))),
    }
}

/// The key prefix a recursive command works under: `s3://b/data` names the directory
/// `data/`, so `data2/…` and `database.txt` beside it are never listed, copied or deleted
/// (the AWS CLI reads a recursive path the same way). An empty key is the whole bucket.
pub(crate) fn directory_prefix(key: &str) -> String {
    if key.is_empty() || key.ends_with('/') {
        key.to_owned()
    } else {
        format!("{key}/")
    }
}

pub(crate) fn bucket_name(name: &str) -> Result<BucketName> {
    BucketName::new(name).map_err(|e| {
        let reason = match &e {
            s3_wire::ops::Error::InvalidInput(s3_wire::ops::InvalidInput::BucketName {
                reason,
                ..
            }) => (*reason).to_owned(),
            other => other.to_string(),
        };
        usage(format!("invalid bucket name `{name}`: {reason}"))
    })
}

pub(crate) fn key_name(name: &str) -> Result<ObjectKey> {
    key(name).map_err(|e| Failure::new(format!("invalid key `{name}`: {e}")))
}

pub(crate) fn object_key(text: &str) -> Result<(BucketName, ObjectKey, String, String)> {
    let (b, k) = s3_location(text)?;
    if k.is_empty() {
        return Err(usage(format!(
            "`{text}` names no object: expected s3://bucket/key"
        )));
    }
    Ok((bucket_name(&b)?, key_name(&k)?, b, k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_access_point_arn_is_the_bucket_of_an_s3_url() {
        for (url, bucket, key) in [
            ("s3://b/k/x", "b", "k/x"),
            ("s3://b", "b", ""),
            (
                "s3://arn:aws:s3:us-west-2:123456789012:accesspoint/my-ap/dir/k",
                "arn:aws:s3:us-west-2:123456789012:accesspoint/my-ap",
                "dir/k",
            ),
            (
                "s3://arn:aws:s3:us-west-2:123456789012:accesspoint:my-ap",
                "arn:aws:s3:us-west-2:123456789012:accesspoint:my-ap",
                "",
            ),
            (
                "s3://arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap/k",
                "arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap",
                "k",
            ),
            (
                "s3://arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01234567890123456/accesspoint/r/k",
                "arn:aws:s3-outposts:us-west-2:123456789012:outpost/op-01234567890123456/accesspoint/r",
                "k",
            ),
        ] {
            assert_eq!(
                Location::parse(url),
                Location::S3 {
                    bucket: bucket.to_owned(),
                    key: key.to_owned()
                },
                "{url}"
            );
        }
    }
}

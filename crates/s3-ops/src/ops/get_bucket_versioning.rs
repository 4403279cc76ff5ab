//! GetBucketVersioning: whether a bucket keeps versions.

use crate::ops::subresource::get_bucket_configuration;

get_bucket_configuration! {
    /// `GET /?versioning`: the bucket's versioning state (no status for a bucket that was never
/// versioned) and whether MFA delete is on.
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketVersioning.html>.
    GetBucketVersioning, "versioning", s3_xml::VersioningConfiguration, s3_xml::decode_versioning_configuration, "VersioningConfiguration"
}

/// What GetBucketVersioning returns.
pub type GetBucketVersioningOutput =
    crate::response::DocumentOutput<s3_xml::VersioningConfiguration>;

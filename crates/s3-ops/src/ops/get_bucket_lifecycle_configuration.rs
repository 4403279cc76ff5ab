//! GetBucketLifecycleConfiguration: a bucket's lifecycle rules.

use crate::ops::subresource::get_bucket_configuration;

get_bucket_configuration! {
    /// `GET /?lifecycle`: the bucket's lifecycle rules (`NoSuchLifecycleConfiguration`, 404, when it
/// has none).
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketLifecycleConfiguration.html>.
    GetBucketLifecycleConfiguration, "lifecycle", s3_xml::LifecycleConfiguration, s3_xml::decode_lifecycle_configuration, "LifecycleConfiguration"
}

/// What GetBucketLifecycleConfiguration returns.
pub type GetBucketLifecycleConfigurationOutput =
    crate::response::DocumentOutput<s3_xml::LifecycleConfiguration>;

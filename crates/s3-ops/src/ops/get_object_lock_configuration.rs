//! GetObjectLockConfiguration: a bucket's Object Lock state and default retention.

use crate::ops::subresource::get_bucket_configuration;

get_bucket_configuration! {
    /// `GET /?object-lock`: whether Object Lock is enabled and the default retention of new object
/// versions (`ObjectLockConfigurationNotFoundError`, 404, for a bucket without Object Lock).
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectLockConfiguration.html>.
    GetObjectLockConfiguration, "object-lock", s3_xml::ObjectLockConfiguration, s3_xml::decode_object_lock_configuration, "ObjectLockConfiguration"
}

/// What GetObjectLockConfiguration returns.
pub type GetObjectLockConfigurationOutput =
    crate::response::DocumentOutput<s3_xml::ObjectLockConfiguration>;

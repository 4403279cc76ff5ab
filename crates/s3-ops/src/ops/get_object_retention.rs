//! GetObjectRetention: an object version's Object Lock retention.

use crate::ops::subresource::get_object_configuration;

get_object_configuration! {
    /// `GET /{Key}?retention`: the retention mode and date of an object version
    /// (`NoSuchObjectLockConfiguration`, 404, when it has none).
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectRetention.html>.
    GetObjectRetention, "retention", s3_xml::Retention, s3_xml::decode_retention, "Retention"
}

/// What GetObjectRetention returns.
pub type GetObjectRetentionOutput = crate::response::DocumentOutput<s3_xml::Retention>;

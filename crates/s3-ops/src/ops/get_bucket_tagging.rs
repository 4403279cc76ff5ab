//! GetBucketTagging: a bucket's tags.

use crate::ops::subresource::get_bucket_configuration;

get_bucket_configuration! {
    /// `GET /?tagging`: the bucket's tag set (`NoSuchTagSet`, 404, when it has none).
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketTagging.html>.
    GetBucketTagging, "tagging", s3_xml::Tagging, s3_xml::decode_tagging, "Tagging"
}

/// What GetBucketTagging returns.
pub type GetBucketTaggingOutput = crate::response::DocumentOutput<s3_xml::Tagging>;

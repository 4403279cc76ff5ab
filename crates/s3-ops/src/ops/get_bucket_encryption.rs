//! GetBucketEncryption: a bucket's default encryption.

use crate::ops::subresource::get_bucket_configuration;

get_bucket_configuration! {
    /// `GET /?encryption`: how objects uploaded without encryption headers are encrypted (S3
/// encrypts every new object with SSE-S3 unless told otherwise).
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketEncryption.html>.
    GetBucketEncryption, "encryption", s3_xml::ServerSideEncryptionConfiguration, s3_xml::decode_server_side_encryption_configuration, "ServerSideEncryptionConfiguration"
}

/// What GetBucketEncryption returns.
pub type GetBucketEncryptionOutput =
    crate::response::DocumentOutput<s3_xml::ServerSideEncryptionConfiguration>;

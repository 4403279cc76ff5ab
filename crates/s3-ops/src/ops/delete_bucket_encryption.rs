//! DeleteBucketEncryption: reset a bucket's default encryption.

use crate::ops::subresource::delete_bucket_configuration;

delete_bucket_configuration! {
    /// `DELETE /?encryption`: back to S3's default (SSE-S3).
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucketEncryption.html>.
    DeleteBucketEncryption, "encryption"
}

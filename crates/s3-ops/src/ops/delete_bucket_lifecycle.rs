//! DeleteBucketLifecycle: remove a bucket's lifecycle rules.

use crate::ops::subresource::delete_bucket_configuration;

delete_bucket_configuration! {
    /// `DELETE /?lifecycle`: removes every lifecycle rule of the bucket.
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucketLifecycle.html>.
    DeleteBucketLifecycle, "lifecycle"
}

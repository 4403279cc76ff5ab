//! DeleteBucketTagging: remove a bucket's tags.

use crate::ops::subresource::delete_bucket_configuration;

delete_bucket_configuration! {
    /// `DELETE /?tagging`: removes the bucket's tag set.
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucketTagging.html>.
    DeleteBucketTagging, "tagging"
}

//! DeleteBucketPolicy: remove a bucket's policy.

use crate::ops::subresource::delete_bucket_configuration;

delete_bucket_configuration! {
    /// `DELETE /?policy`: removes the bucket policy.
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucketPolicy.html>.
    DeleteBucketPolicy, "policy"
}

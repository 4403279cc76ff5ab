//! DeleteBucketCors: remove a bucket's cross-origin rules.

use crate::ops::subresource::delete_bucket_configuration;

delete_bucket_configuration! {
    /// `DELETE /?cors`: removes the bucket's CORS rules.
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucketCors.html>.
    DeleteBucketCors, "cors"
}

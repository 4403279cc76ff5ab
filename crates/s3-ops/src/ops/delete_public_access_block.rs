//! DeletePublicAccessBlock: remove a bucket's public access block.

use crate::ops::subresource::delete_bucket_configuration;

delete_bucket_configuration! {
    /// `DELETE /?publicAccessBlock`: removes the bucket's public access block.
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeletePublicAccessBlock.html>.
    DeletePublicAccessBlock, "publicAccessBlock"
}

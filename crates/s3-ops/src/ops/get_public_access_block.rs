//! GetPublicAccessBlock: a bucket's public access block.

use crate::ops::subresource::get_bucket_configuration;

get_bucket_configuration! {
    /// `GET /?publicAccessBlock`: which public ACLs and policies the bucket refuses or ignores
/// (`NoSuchPublicAccessBlockConfiguration`, 404, when none is set).
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetPublicAccessBlock.html>.
    GetPublicAccessBlock, "publicAccessBlock", s3_xml::PublicAccessBlockConfiguration, s3_xml::decode_public_access_block_configuration, "PublicAccessBlockConfiguration"
}

/// What GetPublicAccessBlock returns.
pub type GetPublicAccessBlockOutput =
    crate::response::DocumentOutput<s3_xml::PublicAccessBlockConfiguration>;

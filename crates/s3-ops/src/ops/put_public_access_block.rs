//! PutPublicAccessBlock: set which public ACLs and policies a bucket refuses or ignores.

use s3_xml::PublicAccessBlockConfiguration;

use crate::error::Error;
use crate::ops::subresource::put_bucket_configuration;

put_bucket_configuration! {
    /// `PUT /?publicAccessBlock` with a `<PublicAccessBlockConfiguration>`; a setting left
    /// out is `false`.
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutPublicAccessBlock.html>.
    PutPublicAccessBlock, "publicAccessBlock", PublicAccessBlockConfiguration,
    s3_xml::encode_public_access_block_configuration, "PublicAccessBlockConfiguration", validate
}

/// Every combination of settings is valid.
fn validate(_: &PublicAccessBlockConfiguration) -> Result<(), Error> {
    Ok(())
}

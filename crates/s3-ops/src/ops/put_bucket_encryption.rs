//! PutBucketEncryption: set a bucket's default encryption.

use s3_xml::ServerSideEncryptionConfiguration;

use crate::error::Error;
use crate::ops::subresource::{invalid, put_bucket_configuration};

put_bucket_configuration! {
    /// `PUT /?encryption` with a `<ServerSideEncryptionConfiguration>`: how objects uploaded
    /// without encryption headers are encrypted (`AES256`, `aws:kms`, `aws:kms:dsse`).
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketEncryption.html>.
    PutBucketEncryption, "encryption", ServerSideEncryptionConfiguration,
    s3_xml::encode_server_side_encryption_configuration, "ServerSideEncryptionConfiguration",
    validate
}

/// S3 takes exactly one rule, which names an algorithm.
fn validate(configuration: &ServerSideEncryptionConfiguration) -> Result<(), Error> {
    match configuration.rules.as_slice() {
        [rule] if rule.default.is_some() => Ok(()),
        [_] => Err(invalid(
            "ApplyServerSideEncryptionByDefault",
            "the rule names no algorithm (AES256, aws:kms or aws:kms:dsse)",
        )),
        rules => Err(invalid(
            "Rule",
            format!("{} rules given; S3 takes exactly one", rules.len()),
        )),
    }
}

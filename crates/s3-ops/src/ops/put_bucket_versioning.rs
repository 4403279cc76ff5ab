//! PutBucketVersioning: turn a bucket's versioning on or suspend it.

use s3_xml::VersioningConfiguration;

use crate::error::Error;
use crate::ops::subresource::{invalid, put_bucket_configuration};

put_bucket_configuration! {
    /// `PUT /?versioning` with a `<VersioningConfiguration>` status (`Enabled` or
    /// `Suspended`). A bucket cannot go back to unversioned.
    ///
    /// Changing MFA delete is refused before sending: S3 takes it only with the `x-amz-mfa`
    /// header (the root user's MFA device serial and a current code), which s3-wire does not
    /// send.
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketVersioning.html>.
    PutBucketVersioning, "versioning", VersioningConfiguration,
    s3_xml::encode_versioning_configuration, "VersioningConfiguration", validate
}

fn validate(configuration: &VersioningConfiguration) -> Result<(), Error> {
    if configuration.mfa_delete.is_some() {
        return Err(invalid(
            "MfaDelete",
            "S3 changes MFA delete only with the x-amz-mfa header (the root user's MFA device \
             serial and a current code), which s3-wire does not send; change it as the root \
             user with `aws s3api put-bucket-versioning --mfa \"SERIAL CODE\"`",
        ));
    }
    if configuration.status.is_none() {
        return Err(invalid("Status", "set Enabled or Suspended"));
    }
    Ok(())
}

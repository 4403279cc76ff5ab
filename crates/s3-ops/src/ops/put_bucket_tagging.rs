//! PutBucketTagging: replace a bucket's tags.

use s3_xml::Tagging;

use crate::error::Error;
use crate::ops::object_tagging::{MAX_BUCKET_TAGS, validate_tags};
use crate::ops::subresource::{invalid, put_bucket_configuration};

put_bucket_configuration! {
    /// `PUT /?tagging` with a `<Tagging>` of 1 to 50 tags (remove them all with
    /// `DeleteBucketTagging`).
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketTagging.html>.
    PutBucketTagging, "tagging", Tagging, s3_xml::encode_tagging, "Tagging", validate
}

fn validate(tagging: &Tagging) -> Result<(), Error> {
    if tagging.tags.is_empty() {
        return Err(invalid(
            "Tagging",
            "no tags given; remove a bucket's tags with DeleteBucketTagging",
        ));
    }
    validate_tags(
        tagging
            .tags
            .iter()
            .map(|t| (t.key.as_str(), t.value.as_str())),
        MAX_BUCKET_TAGS,
    )
}

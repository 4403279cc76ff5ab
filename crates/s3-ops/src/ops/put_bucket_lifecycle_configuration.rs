//! PutBucketLifecycleConfiguration: replace a bucket's lifecycle rules.

use s3_xml::{LifecycleConfiguration, LifecycleRule};

use crate::error::Error;
use crate::ops::subresource::{invalid, put_bucket_configuration};

put_bucket_configuration! {
    /// `PUT /?lifecycle` with a `<LifecycleConfiguration>` of 1 to 1,000 rules: expiration,
    /// transitions, noncurrent-version expiration and transitions, aborting incomplete
    /// multipart uploads; each rule selects objects by prefix, tags and size. The whole
    /// configuration is replaced.
    ///
    /// Rules S3 would refuse are refused before sending, with the rule named: no filter, an
    /// expiration that is not exactly one of days / date / delete markers, a transition that
    /// is not exactly one of days / date, no action at all.
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketLifecycleConfiguration.html>.
    PutBucketLifecycleConfiguration, "lifecycle", LifecycleConfiguration,
    s3_xml::encode_lifecycle_configuration, "LifecycleConfiguration", validate
}

fn validate(configuration: &LifecycleConfiguration) -> Result<(), Error> {
    let count = configuration.rules.len();
    if !(1..=1000).contains(&count) {
        return Err(invalid(
            "Rule",
            format!(
                "{count} rules given; S3 takes 1 to 1000 (remove them all with DeleteBucketLifecycle)"
            ),
        ));
    }
    for (index, rule) in configuration.rules.iter().enumerate() {
        validate_rule(rule).map_err(|reason| {
            let id = rule.id.as_deref().unwrap_or("");
            invalid("Rule", format!("rule {} ({id:?}): {reason}", index + 1))
        })?;
    }
    Ok(())
}

fn validate_rule(rule: &LifecycleRule) -> Result<(), String> {
    if rule.id.as_ref().is_some_and(|id| id.chars().count() > 255) {
        return Err("its ID is longer than 255 characters".into());
    }
    match (&rule.filter, &rule.prefix) {
        (Some(_), Some(_)) => return Err("it has both a Filter and the older Prefix".into()),
        (None, None) => {
            return Err(
                "it has no Filter (LifecycleFilter::everything() selects every object)".into(),
            );
        }
        _ => {}
    }
    if let Some(expiration) = &rule.expiration {
        let given = usize::from(expiration.days.is_some())
            + usize::from(expiration.date.is_some())
            + usize::from(expiration.expired_object_delete_marker.is_some());
        if given != 1 {
            return Err(
                "its Expiration must give exactly one of Days, Date, ExpiredObjectDeleteMarker"
                    .into(),
            );
        }
        if expiration.days == Some(0) {
            return Err("its Expiration Days must be at least 1".into());
        }
    }
    for transition in &rule.transitions {
        if transition.days.is_some() == transition.date.is_some() {
            return Err("a Transition must give exactly one of Days and Date".into());
        }
    }
    if rule
        .noncurrent_version_transitions
        .iter()
        .any(|transition| transition.noncurrent_days.is_none())
    {
        return Err("a NoncurrentVersionTransition needs NoncurrentDays".into());
    }
    if rule.abort_incomplete_multipart_upload_days == Some(0) {
        return Err("AbortIncompleteMultipartUpload needs at least 1 day".into());
    }
    let acts = rule.expiration.is_some()
        || !rule.transitions.is_empty()
        || !rule.noncurrent_version_transitions.is_empty()
        || rule.noncurrent_version_expiration.is_some()
        || rule.abort_incomplete_multipart_upload_days.is_some();
    if !acts {
        return Err(
            "it has no action (expiration, transition, noncurrent versions, aborting uploads)"
                .into(),
        );
    }
    Ok(())
}

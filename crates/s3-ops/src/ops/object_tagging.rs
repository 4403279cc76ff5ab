//! What the tagging operations share: the tag-set limits S3 enforces.

use crate::error::{Error, InvalidInput};

/// The most tags of an object.
pub(crate) const MAX_OBJECT_TAGS: usize = 10;
/// The most tags of a bucket.
pub(crate) const MAX_BUCKET_TAGS: usize = 50;

/// S3's tag limits: at most `max` tags ([`MAX_OBJECT_TAGS`], [`MAX_BUCKET_TAGS`]), keys
/// 1–128 and values 0–256 characters, no duplicate keys.
pub(crate) fn validate_tags<'t>(
    tags: impl ExactSizeIterator<Item = (&'t str, &'t str)>,
    max: usize,
) -> Result<(), Error> {
    let invalid = |reason: String| -> Error {
        InvalidInput::Parameter {
            name: "Tagging",
            reason,
        }
        .into()
    };
    if tags.len() > max {
        return Err(invalid(format!(
            "{} tags given; S3 allows at most {max}",
            tags.len()
        )));
    }
    let mut seen = Vec::with_capacity(tags.len());
    for (key, value) in tags {
        let key_chars = key.chars().count();
        if !(1..=128).contains(&key_chars) {
            return Err(invalid(format!(
                "tag key {key:?} must be 1 to 128 characters"
            )));
        }
        if value.chars().count() > 256 {
            return Err(invalid(format!(
                "value of tag {key:?} exceeds 256 characters"
            )));
        }
        if seen.contains(&key) {
            return Err(invalid(format!("tag key {key:?} appears twice")));
        }
        seen.push(key);
    }
    Ok(())
}

//! Between `object_store`'s values (paths, attributes, tags, ranges, metadata) and
//! s3-wire's (keys, `ObjectAttributes`, `ByteRange`, `ObjectHead`).

use std::borrow::Cow;
use std::ops::Range;
use std::time::SystemTime;

use chrono::{DateTime, Utc};

use super::object_store;

use object_store::path::Path;
use object_store::{Attribute, Attributes, GetRange, ObjectMeta, TagSet};
use s3_wire_tokio::s3_ops::ops::head_object::ObjectHead;
use s3_wire_tokio::s3_ops::{ByteRange, ObjectAttributes, ObjectKey, StorageClass};

use super::error::generic;
use crate::AdapterError;

/// `object_store`'s path delimiter, which S3 listings group by.
pub(crate) const DELIMITER: &str = object_store::path::DELIMITER;

/// The S3 key of `path`: its encoded form, as every `object_store` S3 backend uses.
pub(crate) fn key(path: &Path) -> Result<ObjectKey, object_store::Error> {
    s3_wire_tokio::key(path.as_ref()).map_err(generic)
}

/// The listing prefix of `prefix`: segment-wise, so `foo` lists `foo/x` but not `foo.bar/y`.
pub(crate) fn list_prefix(prefix: Option<&Path>) -> Option<String> {
    prefix
        .map(|p| p.as_ref())
        .filter(|p| !p.is_empty())
        .map(|p| format!("{p}{}", DELIMITER))
}

/// A listed key or common prefix (without its trailing delimiter) as a path.
pub(crate) fn path(key: &str) -> Result<Path, object_store::Error> {
    Ok(Path::parse(key.strip_suffix(DELIMITER).unwrap_or(key))?)
}

pub(crate) fn chrono_time(time: SystemTime) -> DateTime<Utc> {
    DateTime::<Utc>::from(time)
}

/// `object_store`'s attributes and tags as the new object's description.
pub(crate) fn object_attributes(
    attributes: &Attributes,
    tags: &TagSet,
) -> Result<ObjectAttributes, object_store::Error> {
    let mut described = ObjectAttributes::new();
    for (attribute, value) in attributes {
        let value = value.as_ref().to_owned();
        described = match attribute {
            Attribute::ContentDisposition => described.content_disposition(value),
            Attribute::ContentEncoding => described.content_encoding(value),
            Attribute::ContentLanguage => described.content_language(value),
            Attribute::ContentType => described.content_type(value),
            Attribute::CacheControl => described.cache_control(value),
            Attribute::StorageClass => described.storage_class(StorageClass::parse(&value)),
            Attribute::Metadata(name) => described.metadata(name.as_ref(), value),
            // `Attribute` is non-exhaustive: a kind added later is refused, not dropped.
            other => {
                return Err(object_store::Error::NotImplemented {
                    operation: format!("the attribute {other:?}"),
                    implementer: super::error::STORE.to_owned(),
                });
            }
        };
    }
    // A `TagSet` keeps its pairs form-urlencoded; s3-ops encodes them again itself.
    for (name, value) in form_urlencoded::parse(tags.encoded().as_bytes()) {
        described = described.tag(name, value);
    }
    Ok(described)
}

/// The attributes `object_store` reports for a stored object.
pub(crate) fn attributes(head: &ObjectHead) -> Attributes {
    let mut attributes = Attributes::new();
    let mut put = |attribute: Attribute, value: &Option<String>| {
        if let Some(value) = value {
            attributes.insert(attribute, value.clone().into());
        }
    };
    put(Attribute::CacheControl, &head.cache_control);
    put(Attribute::ContentDisposition, &head.content_disposition);
    put(Attribute::ContentEncoding, &head.content_encoding);
    put(Attribute::ContentLanguage, &head.content_language);
    put(Attribute::ContentType, &head.content_type);
    put(
        Attribute::StorageClass,
        &head
            .storage_class
            .as_ref()
            .map(|class| class.as_str().to_owned()),
    );
    for (name, value) in &head.metadata {
        attributes.insert(
            Attribute::Metadata(Cow::Owned(name.clone())),
            value.clone().into(),
        );
    }
    attributes
}

/// The object's metadata from a HEAD or GET answer: the full size also for a ranged GET.
pub(crate) fn meta(location: &Path, head: &ObjectHead) -> Result<ObjectMeta, object_store::Error> {
    let size = match &head.content_range {
        Some(range) => range.total,
        None => head.content_length,
    }
    .ok_or_else(|| generic(AdapterError::Incomplete("the object's size")))?;
    let last_modified = head
        .last_modified
        .ok_or_else(|| generic(AdapterError::Incomplete("Last-Modified")))?;
    Ok(ObjectMeta {
        location: location.clone(),
        last_modified: chrono_time(last_modified),
        size,
        e_tag: head.etag.as_ref().map(|etag| etag.as_str().to_owned()),
        version: head.version_id.clone(),
    })
}

/// The `Range` header for `range` (already checked valid by `GetRange::is_valid`).
pub(crate) fn byte_range(range: &GetRange) -> ByteRange {
    match range {
        GetRange::Bounded(bounded) => ByteRange::Closed {
            first: bounded.start,
            last: bounded.end - 1,
        },
        GetRange::Offset(first) => ByteRange::From(*first),
        GetRange::Suffix(len) => ByteRange::Suffix(*len),
    }
}

/// The bytes an answer to `range` must hold for an object of `size` bytes (S3 clamps a range
/// that runs past the end).
pub(crate) fn expected_range(range: &GetRange, size: u64) -> Range<u64> {
    match range {
        GetRange::Bounded(bounded) => bounded.start..bounded.end.min(size),
        GetRange::Offset(first) => *first..size,
        GetRange::Suffix(len) => size.saturating_sub(*len)..size,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_segment_wise() {
        assert_eq!(list_prefix(None), None);
        assert_eq!(list_prefix(Some(&Path::from("/"))), None);
        assert_eq!(list_prefix(Some(&Path::from("a/b"))), Some("a/b/".into()));
        assert_eq!(path("a/b/").unwrap(), Path::from("a/b"));
    }

    #[test]
    fn tags_are_decoded_into_pairs() {
        let mut tags = TagSet::default();
        tags.push("team", "data eng");
        tags.push("a&b", "c=d");
        let attributes = object_attributes(&Attributes::new(), &tags).unwrap();
        let expected = ObjectAttributes::new()
            .tag("team", "data eng")
            .tag("a&b", "c=d");
        assert_eq!(attributes, expected);
    }

    #[test]
    fn ranges_map_to_headers_and_clamp_to_the_size() {
        assert_eq!(
            byte_range(&GetRange::Bounded(2..5)),
            ByteRange::Closed { first: 2, last: 4 }
        );
        assert_eq!(expected_range(&GetRange::Bounded(2..100), 14), 2..14);
        assert_eq!(expected_range(&GetRange::Suffix(100), 14), 0..14);
        assert_eq!(expected_range(&GetRange::Offset(3), 14), 3..14);
    }
}

//! Object and bucket tags: `<Tagging><TagSet><Tag>`.

use crate::Error;
use crate::common::{DecodeBody, required};
use crate::reader::XmlReader;
use crate::writer::XmlWriter;

/// One tag.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tag {
    /// `Key`.
    pub key: String,
    /// `Value` (may be empty).
    pub value: String,
}

impl Tag {
    /// A tag.
    pub fn new(key: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            value: value.into(),
        }
    }
}

/// A tag set: the result of GetObjectTagging / GetBucketTagging and the body
/// of the Put variants.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Tagging {
    /// The tags, in document order.
    pub tags: Vec<Tag>,
}

impl Tagging {
    /// A tag set.
    pub fn new(tags: Vec<Tag>) -> Self {
        Self { tags }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("Tagging");
        w.open("TagSet");
        for tag in &self.tags {
            tag.encode(&mut w)?;
        }
        w.close("TagSet");
        Ok(w.finish())
    }
}

impl Tag {
    /// `<Tag><Key>…</Key><Value>…</Value></Tag>`.
    pub(crate) fn encode(&self, w: &mut XmlWriter) -> Result<(), Error> {
        w.open("Tag");
        w.leaf("Key", &self.key)?;
        w.leaf("Value", &self.value)?;
        w.close("Tag");
        Ok(())
    }

    /// Reads the `<Tag>` element just opened (an entry against the limit).
    pub(crate) fn decode(r: &mut XmlReader<'_>) -> Result<Self, Error> {
        r.count_entry()?;
        let (mut key, mut value) = (None, None);
        while let Some(field) = r.next_child()? {
            match field {
                "Key" => r.put(&mut key, "Key", XmlReader::string)?,
                "Value" => r.put(&mut value, "Value", XmlReader::string)?,
                _ => r.skip()?,
            }
        }
        let key = required(key, r, "Tag", "Key")?;
        Ok(Tag {
            key,
            value: value.unwrap_or_default(),
        })
    }
}

impl DecodeBody for Tagging {
    const ROOT: &'static str = "Tagging";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            if child != "TagSet" {
                r.skip()?;
                continue;
            }
            while let Some(name) = r.next_child()? {
                if name != "Tag" {
                    r.skip()?;
                    continue;
                }
                out.tags.push(Tag::decode(r)?);
            }
        }
        Ok(out)
    }
}

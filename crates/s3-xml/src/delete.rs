//! DeleteObjects: the `<Delete>` request and the `<DeleteResult>` answer.

use crate::Error;
use crate::common::{DecodeBody, required};
use crate::reader::XmlReader;
use crate::writer::XmlWriter;

/// One object to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectIdentifier {
    /// `Key`.
    pub key: String,
    /// `VersionId`: delete this version instead of adding a delete marker.
    pub version_id: Option<String>,
}

impl ObjectIdentifier {
    /// The current version of `key`.
    pub fn new(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            version_id: None,
        }
    }

    /// A given version of `key`.
    pub fn with_version(key: impl Into<String>, version_id: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            version_id: Some(version_id.into()),
        }
    }
}

/// The body of DeleteObjects: `<Delete>`. S3 accepts at most 1,000 objects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Delete {
    /// The objects, in order.
    pub objects: Vec<ObjectIdentifier>,
    /// `Quiet`: report only failures.
    pub quiet: bool,
}

impl Delete {
    /// A request deleting `objects`, reporting each (`quiet` off).
    pub fn new(objects: Vec<ObjectIdentifier>) -> Self {
        Self {
            objects,
            quiet: false,
        }
    }

    /// The same request with `Quiet` set.
    #[must_use]
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("Delete");
        for object in &self.objects {
            w.open("Object");
            w.leaf("Key", &object.key)?;
            if let Some(version_id) = &object.version_id {
                w.leaf("VersionId", version_id)?;
            }
            w.close("Object");
        }
        if self.quiet {
            w.leaf("Quiet", "true")?;
        }
        Ok(w.finish())
    }
}

impl DecodeBody for Delete {
    const ROOT: &'static str = "Delete";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        let mut quiet = None;
        while let Some(child) = r.next_child()? {
            match child {
                "Object" => {
                    r.count_entry()?;
                    let (mut key, mut version_id) = (None, None);
                    while let Some(name) = r.next_child()? {
                        match name {
                            "Key" => r.put(&mut key, "Key", XmlReader::string)?,
                            "VersionId" => {
                                r.put(&mut version_id, "VersionId", XmlReader::string)?
                            }
                            _ => r.skip()?,
                        }
                    }
                    let key = required(key, r, "Object", "Key")?;
                    out.objects.push(ObjectIdentifier { key, version_id });
                }
                "Quiet" => r.put(&mut quiet, "Quiet", XmlReader::bool_value)?,
                _ => r.skip()?,
            }
        }
        out.quiet = quiet.unwrap_or(false);
        Ok(out)
    }
}

/// An object that was deleted (`<Deleted>`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeletedObject {
    /// `Key`.
    pub key: String,
    /// `VersionId` that was deleted.
    pub version_id: Option<String>,
    /// `DeleteMarker`: a delete marker was created or deleted.
    pub delete_marker: Option<bool>,
    /// `DeleteMarkerVersionId`.
    pub delete_marker_version_id: Option<String>,
}

/// An object that could not be deleted (`<Error>` inside `<DeleteResult>`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteError {
    /// `Key`.
    pub key: Option<String>,
    /// `VersionId`.
    pub version_id: Option<String>,
    /// `Code`, e.g. `AccessDenied`.
    pub code: Option<String>,
    /// `Message`.
    pub message: Option<String>,
}

/// The result of DeleteObjects: `<DeleteResult>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteResult {
    /// Deleted objects, in document order (empty in quiet mode).
    pub deleted: Vec<DeletedObject>,
    /// Objects that failed, in document order.
    pub errors: Vec<DeleteError>,
}

impl DecodeBody for DeleteResult {
    const ROOT: &'static str = "DeleteResult";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "Deleted" => {
                    r.count_entry()?;
                    let mut d = DeletedObject::default();
                    let mut key = None;
                    while let Some(name) = r.next_child()? {
                        match name {
                            "Key" => r.put(&mut key, "Key", XmlReader::string)?,
                            "VersionId" => {
                                r.put(&mut d.version_id, "VersionId", XmlReader::string)?
                            }
                            "DeleteMarker" => {
                                r.put(&mut d.delete_marker, "DeleteMarker", XmlReader::bool_value)?
                            }
                            "DeleteMarkerVersionId" => {
                                r.put(
                                    &mut d.delete_marker_version_id,
                                    "DeleteMarkerVersionId",
                                    XmlReader::string,
                                )?;
                            }
                            _ => r.skip()?,
                        }
                    }
                    d.key = required(key, r, "Deleted", "Key")?;
                    out.deleted.push(d);
                }
                "Error" => {
                    r.count_entry()?;
                    let mut e = DeleteError::default();
                    while let Some(name) = r.next_child()? {
                        match name {
                            "Key" => r.put(&mut e.key, "Key", XmlReader::string)?,
                            "VersionId" => {
                                r.put(&mut e.version_id, "VersionId", XmlReader::string)?
                            }
                            "Code" => r.put(&mut e.code, "Code", XmlReader::string)?,
                            "Message" => r.put(&mut e.message, "Message", XmlReader::string)?,
                            _ => r.skip()?,
                        }
                    }
                    out.errors.push(e);
                }
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

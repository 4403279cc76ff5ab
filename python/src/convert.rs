//! s3-wire's outputs as the dicts boto3 returns (its key names), so code moves over
//! unchanged.

use std::time::SystemTime;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use s3_wire_tokio::s3_ops::ops::head_object::ObjectHead;
use s3_wire_tokio::s3_xml::Object;

/// A `datetime` in UTC.
pub(crate) fn datetime<'py>(py: Python<'py>, time: SystemTime) -> PyResult<Bound<'py, PyAny>> {
    let seconds = match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => after.as_secs_f64(),
        Err(before) => -before.duration().as_secs_f64(),
    };
    let module = py.import("datetime")?;
    let utc = module.getattr("timezone")?.getattr("utc")?;
    module
        .getattr("datetime")?
        .call_method1("fromtimestamp", (seconds, utc))
}

/// HeadObject's answer (and GetObject's head): `ContentLength`, `ContentType`, `ETag`,
/// `LastModified`, `Metadata`, `VersionId`, `StorageClass`, the content headers,
/// `ServerSideEncryption` / `SSEKMSKeyId`, and `Checksum<ALGORITHM>` / `ChecksumType` when
/// the store sent them.
pub(crate) fn head<'py>(py: Python<'py>, head: &ObjectHead) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("ContentLength", head.content_length)?;
    dict.set_item("ETag", head.etag.as_ref().map(|etag| etag.as_str()))?;
    if let Some(time) = head.last_modified {
        dict.set_item("LastModified", datetime(py, time)?)?;
    }
    let metadata = PyDict::new(py);
    for (name, value) in &head.metadata {
        metadata.set_item(name, value)?;
    }
    dict.set_item("Metadata", metadata)?;
    let optional = [
        ("ContentType", &head.content_type),
        ("CacheControl", &head.cache_control),
        ("ContentDisposition", &head.content_disposition),
        ("ContentEncoding", &head.content_encoding),
        ("ContentLanguage", &head.content_language),
        ("VersionId", &head.version_id),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            dict.set_item(name, value)?;
        }
    }
    let encryption = &head.encryption;
    if let Some(algorithm) = &encryption.algorithm {
        dict.set_item("ServerSideEncryption", algorithm)?;
    }
    if let Some(key_id) = &encryption.kms_key_id {
        dict.set_item("SSEKMSKeyId", key_id)?;
    }
    // Sent only to a request with checksum mode on (`head(..., checksum_mode=True)`).
    for (algorithm, value) in &head.checksums.values {
        dict.set_item(format!("Checksum{}", algorithm.as_str()), value)?;
    }
    if let Some(kind) = head.checksums.checksum_type {
        dict.set_item("ChecksumType", kind.as_str())?;
    }
    if let Some(parts) = head.parts_count {
        dict.set_item("PartsCount", parts)?;
    }
    if let Some(class) = &head.storage_class {
        dict.set_item("StorageClass", class.as_str())?;
    }
    if let Some(request_id) = &head.ids.request_id {
        dict.set_item("RequestId", request_id)?;
    }
    Ok(dict)
}

/// One entry of a listing, as boto3's `Contents` entries: `Key`, `Size`, `ETag`,
/// `LastModified`, `StorageClass`.
pub(crate) fn listed<'py>(py: Python<'py>, object: &Object) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("Key", &object.key)?;
    dict.set_item("Size", object.size)?;
    dict.set_item("ETag", object.etag.as_ref().map(|etag| etag.as_str()))?;
    if let Some(time) = object.last_modified.to_system_time() {
        dict.set_item("LastModified", datetime(py, time)?)?;
    }
    dict.set_item("StorageClass", object.storage_class.as_deref())?;
    Ok(dict)
}

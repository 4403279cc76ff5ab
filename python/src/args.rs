//! Python arguments into s3-wire's types, each refusal naming its argument.

use bytes::Bytes;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString};
use s3_wire_tokio::s3_ops::{BucketName, ChecksumAlgorithm, ObjectKey};
use s3_wire_tokio::s3_ops::{CannedAcl, ObjectAttributes, ServerSideEncryption, StorageClass};

use crate::errors::{bad_type, bad_value};

/// A bucket name, checked.
pub(crate) fn bucket(argument: &str, name: &str) -> PyResult<BucketName> {
    BucketName::new(name).map_err(|error| bad_value(argument, error))
}

/// An object key, checked.
pub(crate) fn key(argument: &str, name: &str) -> PyResult<ObjectKey> {
    ObjectKey::new(name).map_err(|error| bad_value(argument, error))
}

/// The bytes of `bytes`, `bytearray`, `memoryview` (or any object with `tobytes()`), or a
/// `str` as UTF-8.
pub(crate) fn body(argument: &str, value: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(Bytes::copy_from_slice(bytes.as_bytes()));
    }
    if let Ok(array) = value.cast::<PyByteArray>() {
        return Ok(Bytes::from(array.to_vec()));
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Bytes::from(text.to_string()));
    }
    if let Ok(to_bytes) = value.getattr("tobytes") {
        let bytes = to_bytes.call0()?;
        if let Ok(bytes) = bytes.cast::<PyBytes>() {
            return Ok(Bytes::copy_from_slice(bytes.as_bytes()));
        }
    }
    Err(bad_type(
        argument,
        "bytes, bytearray, memoryview or str",
        value,
    ))
}

/// The `ExtraArgs` of an upload (boto3's names), as object attributes and a checksum
/// choice. Unknown names are refused, listing the known ones.
pub(crate) struct UploadExtras {
    pub(crate) attributes: ObjectAttributes,
    pub(crate) checksum: Option<Option<ChecksumAlgorithm>>,
}

const UPLOAD_EXTRA_ARGS: &[&str] = &[
    "ACL",
    "CacheControl",
    "ChecksumAlgorithm",
    "ContentDisposition",
    "ContentEncoding",
    "ContentLanguage",
    "ContentType",
    "ExpectedBucketOwner",
    "Metadata",
    "SSEKMSKeyId",
    "ServerSideEncryption",
    "StorageClass",
    "Tagging",
];

pub(crate) fn upload_extras(extra: Option<&Bound<'_, PyDict>>) -> PyResult<UploadExtras> {
    let mut attributes = ObjectAttributes::new();
    let mut checksum = None;
    let Some(extra) = extra else {
        return Ok(UploadExtras {
            attributes,
            checksum,
        });
    };
    let string = |name: &str, value: &Bound<'_, PyAny>| -> PyResult<String> {
        value
            .extract::<String>()
            .map_err(|_| bad_type(&format!("ExtraArgs['{name}']"), "str", value))
    };
    let mut encryption: Option<String> = None;
    let mut kms_key: Option<String> = None;
    for (name, value) in extra.iter() {
        let name: String = name
            .extract()
            .map_err(|_| bad_type("ExtraArgs", "a dict with str keys", &name))?;
        attributes = match name.as_str() {
            "ContentType" => attributes.content_type(string(&name, &value)?),
            "CacheControl" => attributes.cache_control(string(&name, &value)?),
            "ContentDisposition" => attributes.content_disposition(string(&name, &value)?),
            "ContentEncoding" => attributes.content_encoding(string(&name, &value)?),
            "ContentLanguage" => attributes.content_language(string(&name, &value)?),
            "ExpectedBucketOwner" => attributes.expected_bucket_owner(string(&name, &value)?),
            "StorageClass" => {
                attributes.storage_class(StorageClass::parse(&string(&name, &value)?))
            }
            "ACL" => attributes.acl(canned_acl(&string(&name, &value)?)?),
            "Metadata" => {
                let metadata = value.cast::<PyDict>().map_err(|_| {
                    bad_type("ExtraArgs['Metadata']", "a dict of str to str", &value)
                })?;
                let mut attributes = attributes;
                let not_str = || bad_type("ExtraArgs['Metadata']", "a dict of str to str", &value);
                for (entry, text) in metadata.iter() {
                    let entry: String = entry.extract().map_err(|_| not_str())?;
                    let text: String = text.extract().map_err(|_| not_str())?;
                    attributes = attributes.metadata(entry, text);
                }
                attributes
            }
            "Tagging" => {
                let mut attributes = attributes;
                for pair in string(&name, &value)?
                    .split('&')
                    .filter(|pair| !pair.is_empty())
                {
                    let (tag, tag_value) = pair.split_once('=').unwrap_or((pair, ""));
                    attributes = attributes.tag(tag, tag_value);
                }
                attributes
            }
            "ServerSideEncryption" => {
                encryption = Some(string(&name, &value)?);
                attributes
            }
            "SSEKMSKeyId" => {
                kms_key = Some(string(&name, &value)?);
                attributes
            }
            "ChecksumAlgorithm" => {
                let algorithm = string(&name, &value)?;
                checksum = Some(Some(algorithm.parse().map_err(|_| {
                    bad_value(
                        "ExtraArgs['ChecksumAlgorithm']",
                        format!(
                            "unknown checksum algorithm {algorithm:?} (CRC32, CRC32C, CRC64NVME, \
                             SHA1 or SHA256)"
                        ),
                    )
                })?));
                attributes
            }
            _ => {
                return Err(bad_value(
                    "ExtraArgs",
                    format!(
                        "unknown key {name:?}: an upload takes {}",
                        UPLOAD_EXTRA_ARGS.join(", ")
                    ),
                ));
            }
        };
    }
    match (encryption.as_deref(), kms_key) {
        (None, None) => {}
        (Some("AES256"), None) => {
            attributes = attributes.server_side_encryption(ServerSideEncryption::S3);
        }
        (Some("aws:kms") | None, key_id) => {
            attributes = attributes.server_side_encryption(ServerSideEncryption::Kms {
                key_id,
                context: None,
                bucket_key: None,
            });
        }
        (Some(other), _) => {
            return Err(bad_value(
                "ExtraArgs['ServerSideEncryption']",
                format!("{other:?} is not AES256 or aws:kms"),
            ));
        }
    }
    Ok(UploadExtras {
        attributes,
        checksum,
    })
}

/// `put`'s `content_type` and `metadata`, as the `ExtraArgs` of an upload.
pub(crate) fn put_extras(
    py: Python<'_>,
    content_type: Option<String>,
    metadata: Option<&Bound<'_, PyDict>>,
) -> PyResult<UploadExtras> {
    let extra = PyDict::new(py);
    if let Some(content_type) = content_type {
        extra.set_item("ContentType", content_type)?;
    }
    if let Some(metadata) = metadata {
        extra.set_item("Metadata", metadata)?;
    }
    upload_extras(Some(&extra))
}

/// The `ExtraArgs` of a download: `VersionId`.
pub(crate) fn download_version(extra: Option<&Bound<'_, PyDict>>) -> PyResult<Option<String>> {
    let Some(extra) = extra else { return Ok(None) };
    let mut version = None;
    for (name, value) in extra.iter() {
        let name: String = name
            .extract()
            .map_err(|_| bad_type("ExtraArgs", "a dict with str keys", &name))?;
        match name.as_str() {
            "VersionId" => {
                version = Some(
                    value
                        .extract::<String>()
                        .map_err(|_| bad_type("ExtraArgs['VersionId']", "str", &value))?,
                );
            }
            _ => {
                return Err(bad_value(
                    "ExtraArgs",
                    format!("unknown key {name:?}: a download takes VersionId"),
                ));
            }
        }
    }
    Ok(version)
}

fn canned_acl(name: &str) -> PyResult<CannedAcl> {
    CannedAcl::parse(name)
        .ok_or_else(|| bad_value("ExtraArgs['ACL']", format!("unknown canned ACL {name:?}")))
}

/// s3transfer's `TransferConfig` (or anything with its attribute names), as part size,
/// parts at once and the size from which an upload is multipart.
#[derive(Default, Clone, Copy)]
pub(crate) struct TransferSettings {
    pub(crate) part_size: Option<u64>,
    pub(crate) concurrency: Option<usize>,
    pub(crate) threshold: Option<u64>,
}

pub(crate) fn transfer_settings(config: Option<&Bound<'_, PyAny>>) -> PyResult<TransferSettings> {
    let Some(config) = config.filter(|config| !config.is_none()) else {
        return Ok(TransferSettings::default());
    };
    let read = |name: &str| -> PyResult<Option<u64>> {
        match config.getattr(name) {
            Ok(value) if value.is_none() => Ok(None),
            Ok(value) => value
                .extract::<u64>()
                .map(Some)
                .map_err(|_| bad_type(&format!("Config.{name}"), "a non-negative int", &value)),
            Err(_) => Ok(None),
        }
    };
    Ok(TransferSettings {
        part_size: read("multipart_chunksize")?,
        concurrency: read("max_concurrency")?.map(|n| n as usize),
        threshold: read("multipart_threshold")?,
    })
}

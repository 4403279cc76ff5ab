//! `cat`, `stat` and `attributes`: one object streamed or described.

use s3_wire::Client;
use s3_wire::ops::{ByteRange, GetObject, GetObjectAttributes, HeadObject};
use s3_wire::xml::Checksums;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use crate::location::*;
use crate::report::*;

pub(crate) fn parse_range(text: &str) -> Result<ByteRange> {
    let text = text.trim_start_matches("bytes=");
    let (first, last) = text
        .split_once('-')
        .ok_or_else(|| usage(format!("--range {text}: expected FIRST-LAST")))?;
    let first: u64 = first
        .parse()
        .map_err(|_| usage(format!("--range {text}: bad first byte")))?;
    let last: u64 = last
        .parse()
        .map_err(|_| usage(format!("--range {text}: bad last byte")))?;
    ByteRange::new(first, last).map_err(|e| usage(format!("--range {text}: {e}")))
}

pub(crate) async fn cat(
    client: &Client,
    path: &str,
    range: Option<&str>,
    version_id: Option<&str>,
) -> Result<()> {
    let (bn, kn, b, k) = object_key(path)?;
    let mut request = GetObject::new(bn, kn);
    if let Some(version) = version_id {
        request = request.version_id(version);
    }
    if let Some(range) = range {
        request = request.range(parse_range(range)?);
    }
    let object = client
        .get_object(request)
        .await
        .map_err(|e| failure_of(&format!("read s3://{b}/{k}"), &b, &e))?;
    let mut stdout = tokio::io::stdout();
    object
        .body
        .write_to(&mut stdout)
        .await
        .map_err(|e| failure_of(&format!("stream s3://{b}/{k}"), &b, &e))?;
    stdout
        .flush()
        .await
        .map_err(|e| Failure::new(format!("write stdout: {e}")))?;
    Ok(())
}

pub(crate) async fn stat(
    client: &Client,
    out: &Out,
    path: &str,
    version_id: Option<&str>,
) -> Result<()> {
    let (bn, kn, b, k) = object_key(path)?;
    let mut request = HeadObject::new(bn, kn).checksum_mode(true);
    if let Some(version) = version_id {
        request = request.version_id(version);
    }
    let head = client
        .head_object(request)
        .await
        .map_err(|e| failure_of(&format!("stat s3://{b}/{k}"), &b, &e))?;
    let mut checksums = head
        .checksums
        .values
        .iter()
        .map(|(algorithm, value)| format!("{}={value}", algorithm.as_str()))
        .collect::<Vec<_>>()
        .join(" ");
    let checksum_type = head.checksums.checksum_type.map(|t| t.as_str());
    if let Some(kind) = checksum_type {
        checksums.push_str(&format!(" ({kind})"));
    }
    let checksum_values: serde_json::Map<String, Value> = head
        .checksums
        .values
        .iter()
        .map(|(algorithm, value)| (algorithm.as_str().to_owned(), json!(value)))
        .collect();
    let etag = head.etag.as_ref().map(|e| e.as_str().to_owned());
    let value = json!({
        "type": "head", "bucket": b, "key": k, "size": head.content_length, "etag": etag,
        "version_id": head.version_id, "last_modified": timestamp(head.last_modified),
        "content_type": head.content_type, "parts": head.parts_count,
        "storage_class": head.storage_class.as_ref().map(|c| c.as_str().to_owned()),
        "metadata": head.metadata, "checksums": checksum_values,
        "checksum_type": checksum_type,
        "object_lock_mode": head.object_lock_mode,
        "object_lock_retain_until_date": head.object_lock_retain_until,
        "object_lock_legal_hold": head.object_lock_legal_hold,
    });
    let mut text = format!(
        "Name      : s3://{b}/{k}\nSize      : {}\nModified  : {}\nETag      : {}\nType      : {}\nParts     : {}\nChecksums : {checksums}",
        head.content_length
            .map(|s| s.to_string())
            .unwrap_or_default(),
        timestamp(head.last_modified),
        etag.unwrap_or_default(),
        head.content_type.clone().unwrap_or_default(),
        head.parts_count
            .map(|p| p.to_string())
            .unwrap_or_else(|| "1".into()),
    );
    if let Some(mode) = &head.object_lock_mode {
        text.push_str(&format!(
            "\nRetention : {mode} until {}",
            head.object_lock_retain_until.as_deref().unwrap_or("-")
        ));
    }
    if let Some(hold) = &head.object_lock_legal_hold {
        text.push_str(&format!("\nLegal hold: {hold}"));
    }
    for (name, v) in &head.metadata {
        text.push_str(&format!("\nMetadata  : {name}={v}"));
    }
    out.line(text, value);
    Ok(())
}

/// The checksums present, as `(algorithm, base64 value)`.
fn checksum_values(checksums: &Checksums) -> Vec<(&'static str, &str)> {
    [
        ("CRC32", &checksums.crc32),
        ("CRC32C", &checksums.crc32c),
        ("CRC64NVME", &checksums.crc64nvme),
        ("SHA1", &checksums.sha1),
        ("SHA256", &checksums.sha256),
    ]
    .into_iter()
    .filter_map(|(name, value)| Some((name, value.as_deref()?)))
    .collect()
}

/// `attributes`: GetObjectAttributes, every page of parts.
pub(crate) async fn object_attributes(
    client: &Client,
    out: &Out,
    path: &str,
    version_id: Option<&str>,
) -> Result<()> {
    let (bn, kn, b, k) = object_key(path)?;
    let mut request = GetObjectAttributes::new(bn, kn);
    if let Some(version) = version_id {
        request = request.version_id(version);
    }
    let failed =
        |e: &s3_wire::Error| failure_of(&format!("read the attributes of s3://{b}/{k}"), &b, e);
    let first = client
        .get_object_attributes(request.clone())
        .await
        .map_err(|e| failed(&e))?;
    let mut parts = Vec::new();
    let mut page = Some(first.clone());
    let mut asked = request;
    while let Some(output) = page.take() {
        if let Some(listed) = &output.result.object_parts {
            parts.extend(listed.parts.iter().cloned());
        }
        if let Some(next) = asked.next_page(&output) {
            page = Some(
                client
                    .get_object_attributes(next.clone())
                    .await
                    .map_err(|e| failed(&e))?,
            );
            asked = next;
        }
    }
    let result = &first.result;
    let checksum = checksum_values(&result.checksums);
    let checksum_text = checksum
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .chain(
            result
                .checksums
                .checksum_type
                .iter()
                .map(|t| format!("({t})")),
        )
        .collect::<Vec<_>>()
        .join(" ");
    let parts_count = result
        .object_parts
        .as_ref()
        .and_then(|p| p.total_parts_count);
    let etag = result.etag.as_ref().map(|e| e.as_str().to_owned());
    let mut text = format!(
        "Name          : s3://{b}/{k}\nSize          : {}\nETag          : {}\nStorage class : {}\nChecksum      : {checksum_text}\nParts         : {}",
        result
            .object_size
            .map(|s| s.to_string())
            .unwrap_or_default(),
        etag.clone().unwrap_or_default(),
        result.storage_class.clone().unwrap_or_default(),
        parts_count
            .map(|n| n.to_string())
            .unwrap_or_else(|| "-".into()),
    );
    let mut listed = Vec::new();
    for part in &parts {
        let values = checksum_values(&part.checksums);
        text.push_str(&format!(
            "\nPart {:>5}    : {} {}",
            part.part_number,
            part.size.map(|s| s.to_string()).unwrap_or_default(),
            values
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
        listed.push(json!({
            "part_number": part.part_number, "size": part.size,
            "checksums": values
                .into_iter()
                .map(|(n, v)| (n.to_owned(), json!(v)))
                .collect::<serde_json::Map<String, Value>>(),
        }));
    }
    let value = json!({
        "type": "attributes", "bucket": b, "key": k, "version_id": first.version_id,
        "size": result.object_size, "etag": etag, "storage_class": result.storage_class,
        "checksums": checksum.into_iter().map(|(n, v)| (n.to_owned(), json!(v))).collect::<serde_json::Map<String, Value>>(),
        "checksum_type": result.checksums.checksum_type, "parts_count": parts_count,
        "parts": listed,
    });
    out.line(text, value);
    Ok(())
}

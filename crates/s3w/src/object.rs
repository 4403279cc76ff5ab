//! `cat` and `stat`: one object streamed or described.

use s3_wire::Client;
use s3_wire::ops::{ByteRange, GetObject, HeadObject};
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
    for (name, v) in &head.metadata {
        text.push_str(&format!("\nMetadata  : {name}={v}"));
    }
    out.line(text, value);
    Ok(())
}

//! Listings: `ls` and the paginated ListObjectsV2 walk that `cp`, `rm`, `sync` and `du` share.

use s3_wire::ops::{ListBuckets, ListObjectsV2};
use s3_wire::{Client, Error, bucket};
use serde_json::json;

use crate::location::*;
use crate::report::*;

/// One listed object.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub(crate) key: String,
    pub(crate) size: u64,
    pub(crate) etag: Option<String>,
    pub(crate) modified: Option<std::time::SystemTime>,
    /// LastModified as the store sent it (RFC 3339, UTC).
    pub(crate) modified_text: String,
    pub(crate) checksum_algorithms: Vec<String>,
}

pub(crate) async fn list_all(
    client: &Client,
    b: &str,
    prefix: &str,
    delimiter: bool,
) -> Result<(Vec<Listed>, Vec<String>)> {
    // The library's paginator asks again without `encoding-type` when a store echoes
    // `EncodingType=url` but sends raw keys (s3s-fs does).
    list_pages(client, b, prefix, delimiter)
        .await
        .map_err(|e| failure_of(&format!("list s3://{b}/{prefix}"), b, &e))
}

pub(crate) async fn list_pages(
    client: &Client,
    b: &str,
    prefix: &str,
    delimiter: bool,
) -> Result<(Vec<Listed>, Vec<String>), Error> {
    let mut request = ListObjectsV2::new(bucket(b)?);
    if !prefix.is_empty() {
        request = request.prefix(prefix);
    }
    if delimiter {
        request = request.delimiter("/");
    }
    let mut pages = client.list_objects_v2_pages(request);
    let (mut objects, mut prefixes) = (Vec::new(), Vec::new());
    while let Some(page) = pages.next_page().await {
        let page = page?;
        for object in page.result.contents {
            objects.push(Listed {
                key: object.key,
                size: object.size,
                etag: object.etag.map(|e| e.as_str().to_owned()),
                modified: object.last_modified.to_system_time(),
                modified_text: object.last_modified.to_string(),
                checksum_algorithms: object.checksum_algorithms,
            });
        }
        prefixes.extend(page.result.common_prefixes);
    }
    Ok((objects, prefixes))
}

pub(crate) async fn ls(
    client: &Client,
    out: &Out,
    path: Option<&str>,
    recursive: bool,
    human_readable: bool,
    summarize: bool,
) -> Result<()> {
    let Some(path) = path.filter(|p| *p != "s3://") else {
        let mut pages = client.list_buckets_pages(ListBuckets::new());
        while let Some(page) = pages.next_page().await {
            let page = page.map_err(|e| failure_of("list buckets", "", &e))?;
            for b in page.result.buckets {
                out.line(&b.name, json!({"bucket": b.name}));
            }
        }
        return Ok(());
    };
    let (b, prefix) = s3_location(path)?;
    let (objects, prefixes) = list_all(client, &b, &prefix, !recursive).await?;
    let size_text = |size: u64| {
        if human_readable {
            human(size)
        } else {
            size.to_string()
        }
    };
    for p in &prefixes {
        out.line(format!("{:>32} {p}", "PRE"), json!({"prefix": p}));
    }
    let mut total = 0u64;
    for o in &objects {
        total += o.size;
        out.line(
            format!(
                "{:19} {:>12} {}",
                o.modified_text.replace('T', " ").get(..19).unwrap_or(""),
                size_text(o.size),
                o.key
            ),
            json!({"key": o.key, "size": o.size, "etag": o.etag,
                   "last_modified": o.modified_text, "checksum_algorithms": o.checksum_algorithms}),
        );
    }
    if summarize {
        out.line(
            format!(
                "Total Objects: {}\n   Total Size: {}",
                objects.len(),
                size_text(total)
            ),
            json!({"total_objects": objects.len(), "total_size": total}),
        );
    }
    Ok(())
}

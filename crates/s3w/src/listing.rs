//! Listings, streamed page by page (a line as soon as its page arrives, memory bounded by
//! a page): `ls` (objects, versions, buckets), `du`, `uploads`, and the walk `rm -r` uses.

use s3_wire::Client;
use s3_wire::ops::{ListBuckets, ListMultipartUploads, ListObjectVersions, ListObjectsV2};
use s3_wire::xml::VersionEntry;
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
    pub(crate) checksum_algorithms: Vec<String>,
}

/// Calls `each` with every page of objects (and common prefixes, with `delimiter`) under
/// `prefix`, as the pages arrive.
pub(crate) async fn each_page(
    client: &Client,
    b: &str,
    prefix: &str,
    delimiter: bool,
    mut each: impl AsyncFnMut(Vec<Listed>, Vec<String>) -> Result<()>,
) -> Result<()> {
    let mut request = ListObjectsV2::new(bucket_name(b)?);
    if !prefix.is_empty() {
        request = request.prefix(prefix);
    }
    if delimiter {
        request = request.delimiter("/");
    }
    let mut pages = client.list_objects_v2_pages(request);
    while let Some(page) = pages.next_page().await {
        let page = page.map_err(|e| failure_of(&format!("list s3://{b}/{prefix}"), b, &e))?;
        let objects = page
            .result
            .contents
            .into_iter()
            .map(|object| Listed {
                modified: object.last_modified.to_system_time(),
                key: object.key,
                size: object.size,
                etag: object.etag.map(|e| e.as_str().to_owned()),
                checksum_algorithms: object.checksum_algorithms,
            })
            .collect();
        each(objects, page.result.common_prefixes).await?;
    }
    Ok(())
}

/// `ls`.
pub(crate) async fn ls(
    client: &Client,
    out: &Out,
    path: Option<&str>,
    recursive: bool,
    human_readable: bool,
    summarize: bool,
    versions: bool,
) -> Result<()> {
    let Some(path) = path.filter(|p| *p != "s3://") else {
        let mut pages = client.list_buckets_pages(ListBuckets::new());
        while let Some(page) = pages.next_page().await {
            let page = page.map_err(|e| failure_of("list buckets", "", &e))?;
            for b in page.result.buckets {
                let created = timestamp(b.creation_date.to_system_time());
                out.line(
                    format!("{created} {}", b.name),
                    json!({"type": "bucket", "bucket": b.name, "created": created}),
                );
            }
        }
        return Ok(());
    };
    let (b, prefix) = s3_location(path)?;
    let size_text = |size: u64| {
        if human_readable {
            human(size)
        } else {
            size.to_string()
        }
    };
    // One level shows names relative to the "directory" listed, as the AWS CLI.
    let base_len = if recursive {
        0
    } else {
        prefix.rfind('/').map_or(0, |i| i + 1)
    };
    let (mut objects, mut total, mut prefixes_seen) = (0u64, 0u64, 0u64);
    if versions {
        let mut request = ListObjectVersions::new(bucket_name(&b)?);
        if !prefix.is_empty() {
            request = request.prefix(prefix.clone());
        }
        let mut pages = client.list_object_versions_pages(request);
        while let Some(page) = pages.next_page().await {
            let page = page
                .map_err(|e| failure_of(&format!("list versions in s3://{b}/{prefix}"), &b, &e))?;
            for entry in page.result.entries {
                let (key, version, latest, modified, size, marker) = match &entry {
                    VersionEntry::Version(v) => (
                        &v.key,
                        &v.version_id,
                        v.is_latest,
                        &v.last_modified,
                        v.size,
                        false,
                    ),
                    VersionEntry::DeleteMarker(m) => (
                        &m.key,
                        &m.version_id,
                        m.is_latest,
                        &m.last_modified,
                        0,
                        true,
                    ),
                };
                objects += 1;
                total += size;
                let when = timestamp(modified.to_system_time());
                let note = match (marker, latest) {
                    (true, _) => " (delete marker)",
                    (false, true) => " (latest)",
                    _ => "",
                };
                out.line(
                    format!("{when} {:>12} {key} {version}{note}", size_text(size)),
                    json!({"type": if marker { "delete_marker" } else { "version" },
                           "key": key, "version_id": version, "is_latest": latest,
                           "size": size, "last_modified": when}),
                );
            }
        }
    } else {
        each_page(client, &b, &prefix, !recursive, async |page, prefixes| {
            for p in &prefixes {
                prefixes_seen += 1;
                let shown = p.get(base_len..).unwrap_or(p);
                out.line(
                    format!("{:>33} {shown}", "PRE"),
                    json!({"type": "prefix", "prefix": p}),
                );
            }
            for o in &page {
                if o.key.len() == base_len {
                    // The "directory" object itself.
                    continue;
                }
                objects += 1;
                total += o.size;
                let when = timestamp(o.modified);
                out.line(
                    format!("{when} {:>12} {}", size_text(o.size), &o.key[base_len..]),
                    json!({"type": "object", "key": o.key, "size": o.size, "etag": o.etag,
                           "last_modified": when, "checksum_algorithms": o.checksum_algorithms}),
                );
            }
            Ok(())
        })
        .await?;
    }
    if summarize {
        out.line(
            format!(
                "\nTotal Objects: {objects}\n   Total Size: {}",
                size_text(total)
            ),
            json!({"type": "summary", "total_objects": objects, "total_size": total}),
        );
    }
    if objects + prefixes_seen == 0 {
        // As `aws s3 ls`: nothing there is a failure (exit 1).
        return Err(Failure::new(format!("nothing under {path}")));
    }
    Ok(())
}

/// `du`: summed as the pages arrive.
pub(crate) async fn du(client: &Client, out: &Out, path: &str, human_readable: bool) -> Result<()> {
    let (b, key) = s3_location(path)?;
    let (mut objects, mut total) = (0u64, 0u64);
    each_page(
        client,
        &b,
        &directory_prefix(&key),
        false,
        async |page, _| {
            objects += page.len() as u64;
            total += page.iter().map(|o| o.size).sum::<u64>();
            Ok(())
        },
    )
    .await?;
    let size = if human_readable {
        human(total)
    } else {
        total.to_string()
    };
    out.line(
        format!("{size}\t{objects} objects\t{path}"),
        json!({"type": "summary", "path": path, "objects": objects, "size": total}),
    );
    Ok(())
}

/// `uploads`: the multipart uploads in progress.
pub(crate) async fn uploads(client: &Client, out: &Out, path: &str) -> Result<()> {
    let (b, prefix) = s3_location(path)?;
    let mut request = ListMultipartUploads::new(bucket_name(&b)?);
    if !prefix.is_empty() {
        request = request.prefix(prefix.clone());
    }
    let mut pages = client.list_multipart_uploads_pages(request);
    while let Some(page) = pages.next_page().await {
        let page =
            page.map_err(|e| failure_of(&format!("list multipart uploads in s3://{b}"), &b, &e))?;
        for upload in page.result.uploads {
            let when = timestamp(upload.initiated.and_then(|t| t.to_system_time()));
            out.line(
                format!("{when} s3://{b}/{} {}", upload.key, upload.upload_id),
                json!({"type": "upload", "bucket": b, "key": upload.key,
                       "upload_id": upload.upload_id, "initiated": when}),
            );
        }
    }
    Ok(())
}

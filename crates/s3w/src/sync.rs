//! `sync`: what differs between two sides, and the jobs that make them the same.

use std::time::Duration;

use s3_wire::ops::{ChecksumAlgorithm, DeleteObject, HeadObject};
use s3_wire::{Client, bucket, key};
use serde_json::json;

use crate::cli::*;
use crate::copy::*;
use crate::filter::*;
use crate::listing::*;
use crate::location::*;
use crate::report::*;

/// One side of a sync: relative path → (size, modified).
pub(crate) type Side = std::collections::BTreeMap<String, (u64, Option<std::time::SystemTime>)>;

pub(crate) async fn side(client: &Client, location: &Location) -> Result<Side> {
    Ok(match location {
        Location::Local(root) => {
            if !root.exists() {
                return Ok(Side::new());
            }
            local_files(root)?
                .into_iter()
                .map(|(path, rel)| {
                    let meta = std::fs::metadata(&path).ok();
                    let size = meta.as_ref().map(|m| m.len()).unwrap_or(0);
                    (rel, (size, meta.and_then(|m| m.modified().ok())))
                })
                .collect()
        }
        Location::S3 {
            bucket: b,
            key: prefix,
        } => {
            let prefix = directory_prefix(prefix);
            list_all(client, b, &prefix, false)
                .await?
                .0
                .into_iter()
                .map(|o| (o.key[prefix.len()..].to_owned(), (o.size, o.modified)))
                .collect()
        }
    })
}

pub(crate) fn target(location: &Location, relative: &str) -> Location {
    match location {
        Location::Local(root) => Location::Local(root.join(relative)),
        Location::S3 { bucket: b, key } => Location::S3 {
            bucket: b.clone(),
            key: join_key(key, relative),
        },
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn sync(
    cli: &Cli,
    client: &Client,
    out: &Out,
    source: &str,
    destination: &str,
    delete: bool,
    filter: &Filter,
    dryrun: bool,
    attrs: &AttrArgs,
) -> Result<()> {
    attributes(attrs, None)?;
    let (from, to) = (Location::parse(source), Location::parse(destination));
    if matches!((&from, &to), (Location::Local(_), Location::Local(_))) {
        return Err(usage("one side of sync must be s3://bucket/prefix"));
    }
    let (have, want) = (side(client, &from).await?, side(client, &to).await?);
    let mut jobs = Vec::new();
    for (rel, (size, modified)) in &have {
        if !filter.keeps(rel) {
            continue;
        }
        let differs = match want.get(rel) {
            None => true,
            Some((dest_size, _)) if dest_size != size => true,
            // `--checksum ALG`: the content decides, not the times.
            Some(_) if attrs.checksum.is_some() => {
                let algorithm = attrs.checksum.unwrap_or(ChecksumAlgorithm::Crc32);
                !same_content(client, &target(&from, rel), &target(&to, rel), algorithm).await
            }
            Some((dest_size, dest_modified)) => {
                dest_size != size
                    // Object times have whole seconds: a source newer by more than one
                    // second counts as changed.
                    || matches!((modified, dest_modified), (Some(s), Some(d))
                        if s.duration_since(*d).is_ok_and(|gap| gap > Duration::from_secs(1)))
            }
        };
        if differs {
            jobs.push(match (target(&from, rel), target(&to, rel)) {
                (Location::Local(p), Location::S3 { bucket: b, key: k }) => Job::Upload(p, b, k),
                (Location::S3 { bucket: b, key: k }, Location::Local(p)) => Job::Download(b, k, p),
                (
                    Location::S3 {
                        bucket: sb,
                        key: sk,
                    },
                    Location::S3 {
                        bucket: db,
                        key: dk,
                    },
                ) => Job::Copy(sb, sk, db, dk),
                _ => unreachable!("local to local refused above"),
            });
        }
    }
    let stale: Vec<&String> = if delete {
        want.keys()
            .filter(|rel| !have.contains_key(*rel) && filter.keeps(rel))
            .collect()
    } else {
        Vec::new()
    };
    if dryrun {
        for job in &jobs {
            out.line(
                format!("(dryrun) {}", describe_job(job)),
                json!({"dryrun": describe_job(job)}),
            );
        }
        for rel in &stale {
            out.line(
                format!("(dryrun) delete: {}", show(&target(&to, rel))),
                json!({"dryrun": format!("delete: {}", show(&target(&to, rel)))}),
            );
        }
        return Ok(());
    }
    run_jobs(cli, client, out, jobs, attrs, false).await?;
    for rel in stale {
        match target(&to, rel) {
            Location::Local(path) => match std::fs::remove_file(&path) {
                Ok(()) => out.line(
                    format!("delete: {}", path.display()),
                    json!({"operation": "delete", "path": path.display().to_string()}),
                ),
                Err(e) => out.error(
                    format!("delete {}: {e}", path.display()),
                    json!({"operation": "delete"}),
                ),
            },
            Location::S3 { bucket: b, key: k } => {
                let result = client
                    .delete_object(DeleteObject::new(bucket_name(&b)?, key_name(&k)?))
                    .await;
                match result {
                    Ok(_) => out.line(
                        format!("delete: s3://{b}/{k}"),
                        json!({"operation": "delete", "bucket": b, "key": k}),
                    ),
                    Err(e) => out.error(
                        failure_of(&format!("delete s3://{b}/{k}"), &b, &e),
                        json!({"operation": "delete", "bucket": b, "key": k}),
                    ),
                }
            }
        }
    }
    Ok(())
}

/// Whether a local file and an object have the same content by the object's stored
/// full-object checksum of `algorithm` (HeadObject with checksum mode). No such checksum
/// (another algorithm, a composite one, none) counts as different: the file is copied.
pub(crate) async fn same_content(
    client: &Client,
    one: &Location,
    other: &Location,
    algorithm: ChecksumAlgorithm,
) -> bool {
    let (path, b, k) = match (one, other) {
        (Location::Local(p), Location::S3 { bucket, key })
        | (Location::S3 { bucket, key }, Location::Local(p)) => (p.clone(), bucket, key),
        _ => return false,
    };
    let (Ok(bn), Ok(kn)) = (bucket(b), key(k)) else {
        return false;
    };
    let Ok(head) = client
        .head_object(HeadObject::new(bn, kn).checksum_mode(true))
        .await
    else {
        return false;
    };
    if head.checksums.checksum_type == Some(s3_wire::ops::ChecksumType::Composite) {
        return false;
    }
    let Some(stored) = head
        .checksums
        .values
        .iter()
        .find(|(a, _)| *a == algorithm)
        .map(|(_, v)| v.clone())
    else {
        return false;
    };
    let local = tokio::task::spawn_blocking(move || -> std::io::Result<String> {
        use std::io::Read;
        let mut file = std::fs::File::open(&path)?;
        let mut summer = s3_wire::ops::Checksummer::new(algorithm);
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            summer.update(&buf[..n]);
        }
        Ok(summer.finish().to_base64())
    })
    .await;
    matches!(local, Ok(Ok(local)) if local == stored)
}

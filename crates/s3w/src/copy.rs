//! `cp` and `mv`: the plan of jobs (upload, download, copy) and running them in parallel.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use s3_wire::ops::{
    ChecksumAlgorithm, CopySource, DeleteObject, ObjectAttributes, ServerSideEncryption,
    StorageClass,
};
use s3_wire::{Client, Destination, UploadSource};
use serde_json::{Value, json};

use crate::cli::*;
use crate::filter::*;
use crate::listing::*;
use crate::location::*;
use crate::report::*;

pub(crate) fn content_type_for(path: &str) -> Option<&'static str> {
    let ext = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "txt" | "log" => "text/plain",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "js" => "text/javascript",
        "json" => "application/json",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "tar" => "application/x-tar",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        "mp4" => "video/mp4",
        "mp3" => "audio/mpeg",
        "wasm" => "application/wasm",
        _ => return None,
    })
}

pub(crate) fn attributes(attrs: &AttrArgs, path: Option<&str>) -> Result<ObjectAttributes> {
    let mut a = ObjectAttributes::new();
    if let Some(t) = attrs
        .content_type
        .as_deref()
        .or_else(|| path.and_then(content_type_for))
    {
        a = a.content_type(t);
    }
    for (n, v) in &attrs.metadata {
        a = a.metadata(n.clone(), v.clone());
    }
    if let Some(class) = &attrs.storage_class {
        a = a.storage_class(StorageClass::parse(class));
    }
    match attrs.sse.as_deref() {
        None => {}
        Some("AES256") => a = a.server_side_encryption(ServerSideEncryption::S3),
        Some("aws:kms") => {
            a = a.server_side_encryption(ServerSideEncryption::Kms {
                key_id: None,
                context: None,
                bucket_key: None,
            })
        }
        Some(other) => return Err(usage(format!("--sse {other}: use AES256 or aws:kms"))),
    }
    attrs.lock.apply(a)
}

/// One planned copy.
#[derive(Debug, Clone)]
pub(crate) enum Job {
    Upload(PathBuf, String, String),
    Download(String, String, PathBuf),
    Copy(String, String, String, String),
}

pub(crate) fn local_files(root: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| Failure::new(format!("cannot read directory {}: {e}", dir.display())))?;
        for entry in entries {
            let entry =
                entry.map_err(|e| Failure::new(format!("cannot read {}: {e}", dir.display())))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|e| Failure::new(format!("cannot stat {}: {e}", path.display())))?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let relative = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                found.push((path, relative));
            }
        }
    }
    found.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(found)
}

pub(crate) fn join_key(prefix: &str, name: &str) -> String {
    if prefix.is_empty() || prefix.ends_with('/') {
        format!("{prefix}{name}")
    } else {
        format!("{prefix}/{name}")
    }
}

pub(crate) fn file_name(key: &str) -> &str {
    key.rsplit('/').next().unwrap_or(key)
}

pub(crate) async fn plan(client: &Client, args: &CopyArgs) -> Result<Vec<Job>> {
    let source = Location::parse(&args.source);
    let destination = Location::parse(&args.destination);
    let into = args.destination.ends_with('/');
    Ok(match (source, destination) {
        (Location::Local(_), Location::Local(_)) => {
            return Err(usage(
                "one side of cp must be s3://bucket/key (local to local is not supported)",
            ));
        }
        (Location::Local(path), Location::S3 { bucket: b, key: k }) => {
            if args.recursive {
                local_files(&path)?
                    .into_iter()
                    .map(|(file, rel)| Job::Upload(file, b.clone(), join_key(&k, &rel)))
                    .collect()
            } else {
                if path.is_dir() {
                    return Err(usage(format!(
                        "{} is a directory: use --recursive",
                        path.display()
                    )));
                }
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let k = if k.is_empty() || into {
                    join_key(&k, &name)
                } else {
                    k
                };
                vec![Job::Upload(path, b, k)]
            }
        }
        (Location::S3 { bucket: b, key: k }, dest) => {
            let wildcard = k.contains('*') || k.contains('?');
            let objects: Vec<(String, String)> = if wildcard || args.recursive {
                let prefix = if wildcard {
                    k[..k.find(['*', '?']).unwrap_or(k.len())].to_owned()
                } else {
                    directory_prefix(&k)
                };
                let base = if wildcard {
                    prefix.rfind('/').map(|i| &prefix[..=i]).unwrap_or("")
                } else {
                    prefix.as_str()
                };
                let (listed, _) = list_all(client, &b, &prefix, false).await?;
                listed
                    .into_iter()
                    .filter(|o| !wildcard || wildcard_match(&k, &o.key))
                    .map(|o| {
                        let rel = o.key[base.len()..].trim_start_matches('/').to_owned();
                        let rel = if wildcard {
                            file_name(&o.key).to_owned()
                        } else {
                            rel
                        };
                        (o.key, rel)
                    })
                    .collect()
            } else {
                vec![(k.clone(), file_name(&k).to_owned())]
            };
            let many = wildcard || args.recursive;
            objects
                .into_iter()
                .map(|(key, rel)| match &dest {
                    Location::Local(path) => {
                        let target = if many || into || path.is_dir() {
                            path.join(&rel)
                        } else {
                            path.clone()
                        };
                        Job::Download(b.clone(), key, target)
                    }
                    Location::S3 {
                        bucket: db,
                        key: dk,
                    } => {
                        let target = if many || into || dk.is_empty() {
                            join_key(dk, &rel)
                        } else {
                            dk.clone()
                        };
                        Job::Copy(b.clone(), key, db.clone(), target)
                    }
                })
                .collect()
        }
    })
}

pub(crate) async fn run_job(
    client: Client,
    job: Job,
    attrs: AttrArgs,
    delete_source: bool,
    bar: Option<indicatif::ProgressBar>,
    total: Option<indicatif::ProgressBar>,
) -> (Value, Result<String>) {
    let started = Instant::now();
    let listener = {
        let bar = bar.clone();
        // What this transfer added to the total line: (bytes committed, its size known).
        let added = std::sync::Mutex::new((0u64, false));
        move |progress: s3_wire::Progress| {
            if let Some(bar) = &bar {
                if let Some(size) = progress.total {
                    bar.set_length(size);
                }
                bar.set_position(progress.committed);
            }
            if let (Some(total), Ok(mut added)) = (&total, added.lock()) {
                if let (Some(size), false) = (progress.total, added.1) {
                    total.inc_length(size);
                    added.1 = true;
                }
                // `committed` only grows (true across retries).
                total.inc(progress.committed.saturating_sub(added.0));
                added.0 = added.0.max(progress.committed);
            }
        }
    };
    let (text, mut value, result) = match &job {
        Job::Upload(path, b, k) => {
            let text = format!("upload: {} to s3://{b}/{k}", path.display());
            let value = json!({"operation": "upload", "source": path.display().to_string(), "bucket": b, "key": k});
            let result = async {
                let attributes = attributes(&attrs, path.to_str())?;
                let output = client
                    .upload(bucket_name(b)?, key_name(k)?, UploadSource::file(path))
                    .on_progress(listener)
                    .attributes(attributes)
                    .checksum(attrs.checksum.or(Some(ChecksumAlgorithm::Crc32)))
                    .await
                    .map_err(|e| failure_of(&format!("upload {} to s3://{b}/{k}", path.display()), b, &e))?;
                if delete_source {
                    std::fs::remove_file(path).map_err(|e| Failure::new(format!("remove {}: {e}", path.display())))?;
                }
                Ok(json!({"size": output.size, "etag": output.etag.as_ref().map(|e| e.as_str().to_owned())}))
            }
            .await;
            (text, value, result)
        }
        Job::Download(b, k, path) => {
            let text = format!("download: s3://{b}/{k} to {}", path.display());
            let value = json!({"operation": "download", "bucket": b, "key": k, "destination": path.display().to_string()});
            let result = async {
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| Failure::new(format!("create {}: {e}", parent.display())))?;
                }
                let output = client
                    .download(
                        bucket_name(b)?,
                        key_name(k)?,
                        Destination::file(path.clone()),
                    )
                    .on_progress(listener)
                    .await
                    .map_err(|e| failure_of(&format!("download s3://{b}/{k}"), b, &e))?;
                if delete_source {
                    client
                        .delete_object(DeleteObject::new(bucket_name(b)?, key_name(k)?))
                        .await
                        .map_err(|e| failure_of(&format!("delete s3://{b}/{k}"), b, &e))?;
                }
                Ok(json!({"size": output.size}))
            }
            .await;
            (text, value, result)
        }
        Job::Copy(sb, sk, db, dk) => {
            let text = format!("copy: s3://{sb}/{sk} to s3://{db}/{dk}");
            let value = json!({"operation": "copy", "source": format!("s3://{sb}/{sk}"), "bucket": db, "key": dk});
            let result = async {
                let output = client
                    .copy(CopySource::new(bucket_name(sb)?, key_name(sk)?), bucket_name(db)?, key_name(dk)?)
                    .on_progress(listener)
                    .await
                    .map_err(|e| failure_of(&format!("copy s3://{sb}/{sk}"), sb, &e))?;
                if delete_source {
                    client
                        .delete_object(DeleteObject::new(bucket_name(sb)?, key_name(sk)?))
                        .await
                        .map_err(|e| failure_of(&format!("delete s3://{sb}/{sk}"), sb, &e))?;
                }
                Ok(json!({"size": output.size, "etag": output.etag.as_ref().map(|e| e.as_str().to_owned())}))
            }
            .await;
            (text, value, result)
        }
    };
    value["duration_ms"] = json!(started.elapsed().as_millis() as u64);
    match result {
        Ok(extra) => {
            if let (Some(v), Value::Object(extra)) = (value.as_object_mut(), extra) {
                v.extend(extra);
            }
            (value, Ok(text))
        }
        Err(failure) => (value, Err(failure)),
    }
}

pub(crate) async fn cp(
    cli: &Cli,
    client: &Client,
    out: &Out,
    args: &CopyArgs,
    delete_source: bool,
) -> Result<()> {
    // Bad attribute values are usage errors, before anything is transferred.
    attributes(&args.attrs, None)?;
    let jobs = plan(client, args).await?;
    if jobs.is_empty() {
        return Err(Failure::new(format!("nothing matches `{}`", args.source)));
    }
    if args.dryrun {
        for job in &jobs {
            out.line(
                format!("(dryrun) {}", describe_job(job)),
                json!({"dryrun": describe_job(job)}),
            );
        }
        return Ok(());
    }
    run_jobs(cli, client, out, jobs, &args.attrs, delete_source).await
}

pub(crate) async fn run_jobs(
    cli: &Cli,
    client: &Client,
    out: &Out,
    jobs: Vec<Job>,
    attrs: &AttrArgs,
    delete_source: bool,
) -> Result<()> {
    let limit = Arc::new(tokio::sync::Semaphore::new(cli.concurrency.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    let total = out.bars.as_ref().map(|bars| {
        let bar = bars.add(indicatif::ProgressBar::new(0));
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "total: {msg} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta} [{elapsed}]",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let count = jobs.len();
    let mut finished = 0usize;
    let mut finish_one = |done| {
        finished += 1;
        if let Some(total) = &total {
            total.set_message(format!("{finished}/{count} objects"));
        }
        report(out, done);
    };
    if let Some(total) = &total {
        total.set_message(format!("0/{count} objects"));
    }
    let mut jobs = jobs.into_iter().peekable();
    while jobs.peek().is_some() {
        // Take a permit, reporting results that finish meanwhile (not only at the end).
        let permit = loop {
            tokio::select! {
                permit = limit.clone().acquire_owned() => break permit,
                Some(done) = tasks.join_next(), if !tasks.is_empty() => finish_one(done),
            }
        };
        let permit = permit.map_err(|_| Failure::new("internal: semaphore closed"))?;
        let Some(job) = jobs.next() else { break };
        // A bar only for a transfer that runs now.
        let bar = out.transfer_bar(&describe_job(&job));
        let (client, attrs, total) = (client.clone(), attrs.clone(), total.clone());
        let bars = out.bars.clone();
        tasks.spawn(async move {
            let result = run_job(client, job, attrs, delete_source, bar.clone(), total).await;
            if let Some(bar) = bar {
                // A final draw at the final position (a fast transfer can end between two
                // rate-limited draws), then off the screen: the result line is the record,
                // and a thousand finished bars would not fit.
                bar.finish();
                if let Some(bars) = bars {
                    bars.remove(&bar);
                }
            }
            drop(permit);
            result
        });
    }
    while let Some(done) = tasks.join_next().await {
        finish_one(done);
    }
    if let Some(total) = &total {
        total.finish();
    }
    Ok(())
}

/// Prints one finished job's result.
pub(crate) fn report(
    out: &Out,
    done: std::result::Result<(Value, Result<String>), tokio::task::JoinError>,
) {
    match done {
        Ok((value, Ok(text))) => out.line(text, value),
        Ok((value, Err(failure))) => out.error(failure, value),
        Err(panic) => out.error(format!("a transfer task failed: {panic}"), json!({})),
    }
}

pub(crate) fn describe_job(job: &Job) -> String {
    match job {
        Job::Upload(p, b, k) => format!("upload: {} to s3://{b}/{k}", p.display()),
        Job::Download(b, k, p) => format!("download: s3://{b}/{k} to {}", p.display()),
        Job::Copy(sb, sk, db, dk) => format!("copy: s3://{sb}/{sk} to s3://{db}/{dk}"),
    }
}

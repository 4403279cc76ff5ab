//! `cp` and `mv` of one object (a file, stdin/stdout, an object), the object attributes
//! every upload and copy takes, and what each command can honour of them. Recursive and
//! wildcard copies are in `tree.rs`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use s3_wire::ops::{
    CannedAcl, CopySource, DeleteObject, ObjectAttributes, ServerSideEncryption, SseCustomerKey,
    StorageClass,
};
use s3_wire::transfer::{MTIME_METADATA, PossibleOrphan, format_mtime};
use s3_wire::{Client, Destination, ErrorKind, TransferErrorKind, TransferOptions, UploadSource};
use serde_json::{Value, json};

use crate::cli::*;
use crate::interrupt;
use crate::location::*;
use crate::report::*;

/// The Content-Type of a file name, from its extension (`None`: unknown, the store's
/// default).
pub(crate) fn content_type_for(name: &str) -> Option<String> {
    mime_guess::from_path(name).first_raw().map(str::to_owned)
}

/// The flags of `attrs` that describe an object's content and metadata (what
/// `--metadata-directive REPLACE` replaces).
fn metadata_flags(attrs: &AttrArgs) -> Vec<&'static str> {
    let mut given = Vec::new();
    for (set, name) in [
        (attrs.content_type.is_some(), "--content-type"),
        (attrs.cache_control.is_some(), "--cache-control"),
        (attrs.content_encoding.is_some(), "--content-encoding"),
        (attrs.content_disposition.is_some(), "--content-disposition"),
        (attrs.content_language.is_some(), "--content-language"),
        (attrs.expires.is_some(), "--expires"),
        (!attrs.metadata.is_empty(), "--metadata"),
    ] {
        if set {
            given.push(name);
        }
    }
    given
}

/// Every attribute flag given that writes something about an object.
fn write_flags(attrs: &AttrArgs) -> Vec<&'static str> {
    let mut given = metadata_flags(attrs);
    for (set, name) in [
        (attrs.checksum.is_some(), "--checksum"),
        (attrs.metadata_directive.is_some(), "--metadata-directive"),
        (attrs.storage_class.is_some(), "--storage-class"),
        (attrs.acl.is_some(), "--acl"),
        (attrs.sse.is_some(), "--sse"),
        (attrs.sse_kms_key_id.is_some(), "--sse-kms-key-id"),
        (attrs.sse_kms_context.is_some(), "--sse-kms-context"),
    ] {
        if set {
            given.push(name);
        }
    }
    given.extend(attrs.lock.given());
    given
}

/// `--sse aws:kms` with its key and encryption context (JSON, encoded here, or base64), the
/// context checked now: a usage error, never echoing the value.
fn kms(attrs: &AttrArgs) -> Result<ServerSideEncryption> {
    let context = attrs.sse_kms_context.as_deref().map(str::trim);
    let sse = match context {
        Some(json) if json.starts_with('{') => ServerSideEncryption::Kms {
            key_id: attrs.sse_kms_key_id.clone(),
            context: Some(s3_wire::sigv4::base64_encode(json.as_bytes())),
            bucket_key: None,
        },
        context => ServerSideEncryption::Kms {
            key_id: attrs.sse_kms_key_id.clone(),
            context: context.map(str::to_owned),
            bucket_key: None,
        },
    };
    sse.check()
        .map_err(|e| usage(format!("--sse-kms-context: {e}")))?;
    Ok(sse)
}

/// An option the command cannot honour is a usage error, never silently dropped.
pub(crate) fn refuse(flags: &[&str], why: &str) -> Result<()> {
    match flags {
        [] => Ok(()),
        flags => Err(usage(format!("{} {why}", flags.join(", ")))),
    }
}

/// Downloads write no object: only the SSE-C key (to read it) applies.
pub(crate) fn check_download(attrs: &AttrArgs) -> Result<()> {
    refuse(
        &write_flags(attrs),
        "set attributes of objects written; a download writes none",
    )
}

/// Uploads: everything but the metadata directive (there is no source object).
pub(crate) fn check_upload(attrs: &AttrArgs) -> Result<()> {
    refuse(
        if attrs.metadata_directive.is_some() {
            &["--metadata-directive"][..]
        } else {
            &[]
        },
        "applies to S3→S3 copies (an upload's attributes are the ones given)",
    )?;
    attributes(attrs, None).map(|_| ())
}

/// The SSE-C key of `--sse-c AES256 --sse-c-key KEY` (raw 32 bytes or base64).
pub(crate) fn sse_customer_key(attrs: &AttrArgs) -> Result<Option<SseCustomerKey>> {
    let Some(algorithm) = &attrs.sse_c else {
        return Ok(None);
    };
    if algorithm != "AES256" {
        return Err(usage(format!(
            "--sse-c {algorithm}: the only algorithm is AES256"
        )));
    }
    let Some(key) = &attrs.sse_c_key else {
        return Err(usage("--sse-c needs --sse-c-key (32 bytes, raw or base64)"));
    };
    if let Ok(raw) = <[u8; 32]>::try_from(key.as_bytes()) {
        return Ok(Some(SseCustomerKey::new(raw)));
    }
    SseCustomerKey::from_base64(key)
        .map(Some)
        .map_err(|_| usage("--sse-c-key: expected 32 bytes, raw or base64-encoded"))
}

/// The attributes the flags give, with the content type guessed from `name` when none is
/// given.
pub(crate) fn attributes(attrs: &AttrArgs, name: Option<&str>) -> Result<ObjectAttributes> {
    let mut a = ObjectAttributes::new();
    if let Some(t) = attrs
        .content_type
        .clone()
        .or_else(|| name.and_then(content_type_for))
    {
        a = a.content_type(t);
    }
    if let Some(v) = &attrs.cache_control {
        a = a.cache_control(v.clone());
    }
    if let Some(v) = &attrs.content_encoding {
        a = a.content_encoding(v.clone());
    }
    if let Some(v) = &attrs.content_disposition {
        a = a.content_disposition(v.clone());
    }
    if let Some(v) = &attrs.content_language {
        a = a.content_language(v.clone());
    }
    if let Some(time) = attrs.expires {
        a = a.expires(time);
    }
    for (n, v) in &attrs.metadata {
        a = a.metadata(n.clone(), v.clone());
    }
    if let Some(class) = &attrs.storage_class {
        a = a.storage_class(StorageClass::parse(class));
    }
    if let Some(acl) = &attrs.acl {
        a = a.acl(canned_acl(acl)?);
    }
    let kms_only = attrs.sse_kms_key_id.is_some() || attrs.sse_kms_context.is_some();
    match attrs.sse.as_deref() {
        None if kms_only => {
            return Err(usage(
                "--sse-kms-key-id and --sse-kms-context need --sse aws:kms",
            ));
        }
        None => {}
        Some("AES256") if !kms_only => a = a.server_side_encryption(ServerSideEncryption::S3),
        Some("aws:kms") => a = a.server_side_encryption(kms(attrs)?),
        Some("AES256") => {
            return Err(usage(
                "--sse-kms-key-id and --sse-kms-context need --sse aws:kms",
            ));
        }
        Some(other) => return Err(usage(format!("--sse {other}: use AES256 or aws:kms"))),
    }
    if let Some(key) = sse_customer_key(attrs)? {
        if attrs.sse.is_some() {
            return Err(usage("--sse and --sse-c exclude each other"));
        }
        a = a.server_side_encryption(ServerSideEncryption::Customer(key));
    }
    attrs.lock.apply(a)
}

fn canned_acl(name: &str) -> Result<CannedAcl> {
    CannedAcl::parse(name).ok_or_else(|| {
        usage(format!(
            "--acl {name}: use private, public-read, public-read-write, authenticated-read, bucket-owner-read or bucket-owner-full-control"
        ))
    })
}

/// What an S3→S3 copy writes: `None` keeps the source's content headers and metadata
/// (COPY); `Some` replaces them (REPLACE: given content headers or metadata imply it, as in
/// the AWS CLI). Storage class, ACL or encryption alone keep the source's metadata, read
/// from its head.
pub(crate) async fn copy_attributes(
    client: &Client,
    attrs: &AttrArgs,
    source: Option<&CopySource>,
) -> Result<Option<ObjectAttributes>> {
    let replacing = !metadata_flags(attrs).is_empty();
    match attrs.metadata_directive {
        Some(MetadataDirective::Copy) if replacing => {
            return Err(usage(format!(
                "{} cannot be honoured with --metadata-directive COPY (the copy keeps the source's)",
                metadata_flags(attrs).join(", ")
            )));
        }
        Some(MetadataDirective::Replace) => return attributes(attrs, None).map(Some),
        _ if replacing => return attributes(attrs, None).map(Some),
        _ => {}
    }
    let others = attrs.storage_class.is_some()
        || attrs.acl.is_some()
        || attrs.sse.is_some()
        || attrs.sse_c.is_some()
        || !attrs.lock.given().is_empty();
    if !others {
        return Ok(None);
    }
    let Some(source) = source else {
        return Err(usage(
            "--storage-class, --acl, --sse or --object-lock-* on a recursive S3→S3 copy would drop each object's metadata: add --metadata-directive REPLACE with the attributes wanted",
        ));
    };
    let head = client
        .head_object(source.head_object())
        .await
        .map_err(|e| {
            failure_of(
                &format!("read s3://{}/{}", source.bucket(), source.key()),
                source.bucket().as_str(),
                &e,
            )
        })?;
    let mut kept = ObjectAttributes::from_head(&head);
    if let Some(class) = &attrs.storage_class {
        kept = kept.storage_class(StorageClass::parse(class));
    }
    if let Some(acl) = &attrs.acl {
        kept = kept.acl(canned_acl(acl)?);
    }
    match (attrs.sse.as_deref(), sse_customer_key(attrs)?) {
        (Some("AES256"), _) => kept = kept.server_side_encryption(ServerSideEncryption::S3),
        (Some(_), _) => kept = kept.server_side_encryption(kms(attrs)?),
        (None, Some(key)) => {
            kept = kept.server_side_encryption(ServerSideEncryption::Customer(key))
        }
        (None, None) => {}
    }
    attrs.lock.apply(kept).map(Some)
}

/// The transfer options of uploads and copies (`--part-size`, `--part-concurrency`).
pub(crate) fn upload_options(tuning: &Tuning) -> TransferOptions {
    let mut options = TransferOptions::default();
    if let Some(size) = tuning.part_size {
        options.part_size = size;
    }
    options.single_request_limit = tuning.multipart_threshold;
    options.concurrency = tuning.part_concurrency.max(1);
    options
}

/// The transfer options of downloads (`--range-size`, `--part-concurrency`, `--no-sync`).
pub(crate) fn download_options(tuning: &Tuning) -> TransferOptions {
    let mut options = TransferOptions::default();
    options.part_size = tuning.range_size.unwrap_or(DEFAULT_RANGE_SIZE);
    options.concurrency = tuning.part_concurrency.max(1);
    options.sync_files = !tuning.no_sync;
    options
}

/// The range size of downloads by default: on moto 4–7× faster than 8 MiB ranges (each
/// range costs moto a pass over the object), on local-s3 the same within the noise
/// (measurements/s3w-range-size-2026-12-02.md). Memory does not grow with it: a range to a
/// file holds at most 2 MiB.
pub(crate) const DEFAULT_RANGE_SIZE: u64 = 64 << 20;

/// Where the resume journal of an upload of `file` to `s3://bucket/key` lives:
/// `$XDG_CACHE_HOME/s3w/journals/` (or `~/.cache/s3w/journals/`), named by a hash of the
/// file's absolute path, the endpoint and the target.
fn journal_path(file: &Path, bucket: &str, key: &str, endpoint: &str) -> Option<PathBuf> {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    let absolute = std::path::absolute(file).ok()?;
    let identity = format!("{}\n{endpoint}\n{bucket}\n{key}", absolute.display());
    let hash = identity.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    Some(
        cache
            .join("s3w")
            .join("journals")
            .join(format!("{hash:016x}.journal")),
    )
}

/// One result line: its text and its JSON object (`type` `result`), timed.
pub(crate) fn result_line(
    operation: &str,
    source: &str,
    destination: &str,
    started: Instant,
    extra: Value,
) -> (String, Value) {
    let mut value = json!({
        "type": "result", "operation": operation, "source": source,
        "destination": destination, "duration_ms": started.elapsed().as_millis() as u64,
    });
    if let (Some(v), Value::Object(extra)) = (value.as_object_mut(), extra) {
        v.extend(extra);
    }
    (format!("{operation}: {source} to {destination}"), value)
}

/// A download's result, and what an interrupted earlier run had already brought over:
/// `resumed` of its `size` bytes were on disk and not fetched again.
pub(crate) fn note_resumed_bytes(text: &mut String, value: &mut Value, resumed: u64, size: u64) {
    value["resumed_bytes"] = json!(resumed);
    if resumed > 0 {
        text.push_str(&format!(
            " (resumed: {resumed} of {size} bytes were already on disk)"
        ));
    }
}

/// An upload's or copy's result, and the multipart upload a lost CreateMultipartUpload
/// answer may have left behind, which the store could not list to abort: named in the
/// result and warned about (the object itself is stored correctly).
pub(crate) fn note_possible_orphan(value: &mut Value, orphan: Option<&PossibleOrphan>) {
    value["possible_orphan"] = json!(orphan.map(|o| o.reason.clone()));
    if let Some(orphan) = orphan {
        eprintln!(
            "s3w: warning: s3://{}/{} may have an extra, empty multipart upload the store \
             cannot list ({}); an AbortIncompleteMultipartUpload lifecycle rule removes it",
            orphan.bucket, orphan.key, orphan.reason
        );
    }
}

/// `cp`/`mv` of one object (not recursive, no wildcard).
pub(crate) async fn copy_one(
    cli: &Cli,
    client: &Client,
    out: &Out,
    args: &CopyArgs,
    from: Location,
    to: Location,
    delete_source: bool,
) -> Result<()> {
    let into = args.destination.ends_with('/');
    match (from, to) {
        (Location::Local(path), Location::S3 { bucket: b, key: k }) => {
            check_upload(&args.attrs)?;
            let stdin = path.as_os_str() == "-";
            if delete_source && stdin {
                return Err(usage("mv cannot move stdin: use cp"));
            }
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let k = if !stdin && (k.is_empty() || into) {
                join_key(&k, &name)
            } else {
                k
            };
            if k.is_empty() {
                return Err(usage(format!(
                    "`{}` names no object: expected s3://bucket/key",
                    args.destination
                )));
            }
            if args.dryrun {
                return dry(
                    out,
                    "upload",
                    &path.display().to_string(),
                    &format!("s3://{b}/{k}"),
                );
            }
            upload_one(cli, client, out, args, &path, stdin, &b, &k, delete_source).await
        }
        (Location::S3 { bucket: b, key: k }, Location::Local(path)) => {
            check_download(&args.attrs)?;
            if k.is_empty() {
                return Err(usage(format!(
                    "`{}` names no object: use --recursive for a prefix",
                    args.source
                )));
            }
            let stdout = path.as_os_str() == "-";
            let target = if !stdout && (into || path.is_dir()) {
                path.join(file_name(&k))
            } else {
                path
            };
            if args.dryrun {
                return dry(
                    out,
                    "download",
                    &format!("s3://{b}/{k}"),
                    &target.display().to_string(),
                );
            }
            download_one(
                cli,
                client,
                out,
                args,
                &b,
                &k,
                &target,
                stdout,
                delete_source,
            )
            .await
        }
        (
            Location::S3 {
                bucket: sb,
                key: sk,
            },
            Location::S3 {
                bucket: db,
                key: dk,
            },
        ) => {
            if sk.is_empty() {
                return Err(usage(format!(
                    "`{}` names no object: use --recursive for a prefix",
                    args.source
                )));
            }
            if args.version_id.is_some() {
                return Err(usage(
                    "--version-id applies to downloads (cp s3://b/k ./file); S3→S3 copies of a version are not supported",
                ));
            }
            let dk = if into || dk.is_empty() {
                join_key(&dk, file_name(&sk))
            } else {
                dk
            };
            if args.dryrun {
                return dry(
                    out,
                    "copy",
                    &format!("s3://{sb}/{sk}"),
                    &format!("s3://{db}/{dk}"),
                );
            }
            let started = Instant::now();
            let source = CopySource::new(bucket_name(&sb)?, key_name(&sk)?);
            let attributes = copy_attributes(client, &args.attrs, Some(&source)).await?;
            let mut copy = client
                .copy(source, bucket_name(&db)?, key_name(&dk)?)
                .options(upload_options(&cli.tuning));
            if let Some(attributes) = attributes {
                copy = copy.attributes(attributes);
            }
            if let Some(algorithm) = args.attrs.checksum {
                copy = copy.checksum(Some(algorithm));
            }
            let meter = out.meter(Some(format!("s3://{db}/{dk}")));
            if let Some(meter) = &meter {
                let meter = meter.clone();
                copy = copy.on_progress(move |p| meter.transfer(p));
            }
            let stored = interrupt::cancellable(copy.start()).await.map_err(|e| {
                failure_of(&format!("copy s3://{sb}/{sk} to s3://{db}/{dk}"), &sb, &e)
            })?;
            if let Some(meter) = &meter {
                meter.finish();
            }
            if delete_source {
                client
                    .delete_object(DeleteObject::new(bucket_name(&sb)?, key_name(&sk)?))
                    .await
                    .map_err(|e| failure_of(&format!("delete s3://{sb}/{sk}"), &sb, &e))?;
            }
            let (text, mut value) = result_line(
                if delete_source { "move" } else { "copy" },
                &format!("s3://{sb}/{sk}"),
                &format!("s3://{db}/{dk}"),
                started,
                json!({"bucket": db, "key": dk, "size": stored.size,
                       "etag": stored.etag.as_ref().map(|e| e.as_str().to_owned()),
                       "verification": stored.verification.to_string()}),
            );
            note_possible_orphan(&mut value, stored.possible_orphan.as_ref());
            out.line(text, value);
            Ok(())
        }
        (Location::Local(_), Location::Local(_)) => Err(usage(
            "one side of cp must be s3://bucket/key (local to local is not supported)",
        )),
    }
}

fn dry(out: &Out, operation: &str, source: &str, destination: &str) -> Result<()> {
    out.line(
        format!("(dryrun) {operation}: {source} to {destination}"),
        json!({"type": "dryrun", "operation": operation, "source": source, "destination": destination}),
    );
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn upload_one(
    cli: &Cli,
    client: &Client,
    out: &Out,
    args: &CopyArgs,
    path: &Path,
    stdin: bool,
    b: &str,
    k: &str,
    delete_source: bool,
) -> Result<()> {
    let started = Instant::now();
    let shown = if stdin {
        "-".to_owned()
    } else {
        path.display().to_string()
    };
    let mut attributes = attributes(&args.attrs, (!stdin).then_some(k))?;
    let file = if stdin {
        None
    } else {
        std::fs::metadata(path).ok()
    };
    let size = file.as_ref().map(std::fs::Metadata::len);
    // The file's time goes with it (as in a directory transfer), so a download gives the
    // file its time back and a later sync compares like with like; --metadata mtime=… wins.
    let given_mtime = args
        .attrs
        .metadata
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case(MTIME_METADATA));
    if !given_mtime && let Some(modified) = file.and_then(|m| m.modified().ok()) {
        attributes = attributes.metadata(MTIME_METADATA, format_mtime(modified));
    }
    let options = upload_options(&cli.tuning);
    let limit = options
        .single_request_limit
        .unwrap_or(TransferOptions::DEFAULT_SINGLE_REQUEST_LIMIT);
    // A multipart upload of a file keeps a resume journal unless --no-resume.
    let journal = match size {
        Some(size) if size > limit => {
            journal_path(path, b, k, cli.endpoint_url.as_deref().unwrap_or("default"))
        }
        _ => None,
    };
    if let Some(journal) = &journal {
        if args.no_resume {
            discard_journal(client, out, journal, &shown).await;
        } else if journal.exists() && !out.quiet && !out.json {
            eprintln!(
                "s3w: resuming the interrupted upload of {shown} (run with --no-resume to start over)"
            );
        }
    }
    let journal = journal.filter(|_| !args.no_resume);
    let mut retried = false;
    let stored = loop {
        let source = if stdin {
            UploadSource::reader(tokio::io::stdin(), None)
        } else {
            UploadSource::file(path)
        };
        let mut upload = client
            .upload(bucket_name(b)?, key_name(k)?, source)
            .options(options)
            .attributes(attributes.clone())
            .checksum(
                args.attrs
                    .checksum
                    .or(Some(s3_wire::ops::ChecksumAlgorithm::Crc32)),
            );
        let meter = out.meter(Some(shown.clone()));
        if let Some(meter) = &meter {
            let meter = meter.clone();
            upload = upload.on_progress(move |p| meter.transfer(p));
        }
        if let Some(journal) = &journal {
            if let Some(parent) = journal.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            upload = upload.journal(journal);
        }
        let mut handle = upload.start();
        let result = if journal.is_some() {
            // Interrupted, a journaled upload is kept (its stored parts and its journal)
            // for the next run, not aborted: quit as a crash would.
            tokio::select! {
                result = &mut handle => result,
                () = interrupt::wait() => {
                    let progress = handle.progress();
                    eprintln!(
                        "s3w: the upload of {shown} is kept with {} of {} stored: run the same command again to send only the rest (add --no-resume to start over)",
                        human(progress.committed),
                        human(progress.total.unwrap_or(0)),
                    );
                    std::process::exit(interrupt::exit_code());
                }
            }
        } else {
            interrupt::cancellable(handle).await
        };
        if let Some(meter) = &meter {
            meter.finish();
        }
        match result {
            Err(error) if journal.is_some() && !retried && stale_journal(&error) => {
                if !out.quiet && !out.json {
                    eprintln!(
                        "s3w: the interrupted upload of {shown} cannot be resumed ({}); starting over",
                        one_line(&error.to_string())
                    );
                }
                if let Some(journal) = &journal {
                    discard_journal(client, out, journal, &shown).await;
                }
                retried = true;
            }
            result => {
                break result
                    .map_err(|e| failure_of(&format!("upload {shown} to s3://{b}/{k}"), b, &e))?;
            }
        }
    };
    if delete_source {
        std::fs::remove_file(path)
            .map_err(|e| Failure::new(format!("remove {}: {e}", path.display())))?;
    }
    let (mut text, mut value) = result_line(
        if delete_source { "move" } else { "upload" },
        &shown,
        &format!("s3://{b}/{k}"),
        started,
        json!({"bucket": b, "key": k, "size": stored.size,
               "etag": stored.etag.as_ref().map(|e| e.as_str().to_owned()),
               "resumed_parts": stored.resumed_parts,
               "verification": stored.verification.to_string()}),
    );
    if stored.resumed_parts > 0 {
        text.push_str(&format!(
            " (resumed: {} of {} parts were already stored)",
            stored.resumed_parts,
            stored.parts.unwrap_or(0)
        ));
    }
    note_possible_orphan(&mut value, stored.possible_orphan.as_ref());
    out.line(text, value);
    Ok(())
}

/// Starting over: aborts the upload the journal names (so its parts are not left stored)
/// and removes the journal. If the abort fails, says so and removes the journal anyway (the
/// user asked to start over); the store's lifecycle rule is then what removes that upload.
async fn discard_journal(client: &Client, out: &Out, journal: &Path, shown: &str) {
    match client.discard_upload_journal(journal).await {
        Ok(Some(upload)) if !out.quiet && !out.json => eprintln!(
            "s3w: aborted the earlier upload of {shown} to s3://{}/{} (upload id {})",
            upload.bucket, upload.key, upload.upload_id
        ),
        Ok(_) => {}
        Err(error) => {
            let _ = std::fs::remove_file(journal);
            eprintln!(
                "s3w: warning: the earlier upload of {shown} could not be aborted ({}); it \
                 stays open on the store until an AbortIncompleteMultipartUpload lifecycle \
                 rule removes it",
                one_line(&error.to_string())
            );
        }
    }
}

/// A journal that cannot be continued: the file changed, the upload is gone, or the
/// journal is of another kind.
fn stale_journal(error: &s3_wire::Error) -> bool {
    matches!(
        error.kind(),
        ErrorKind::Transfer(
            TransferErrorKind::SourceChanged(_)
                | TransferErrorKind::Journal(_)
                | TransferErrorKind::UploadGone
        )
    )
}

#[allow(clippy::too_many_arguments)]
async fn download_one(
    cli: &Cli,
    client: &Client,
    out: &Out,
    args: &CopyArgs,
    b: &str,
    k: &str,
    target: &Path,
    stdout: bool,
    delete_source: bool,
) -> Result<()> {
    let started = Instant::now();
    if !stdout && let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| Failure::new(format!("create {}: {e}", parent.display())))?;
    }
    let destination = if stdout {
        Destination::writer(tokio::io::stdout())
    } else {
        Destination::file(target.to_path_buf())
    };
    let mut download = client
        .download(bucket_name(b)?, key_name(k)?, destination)
        .options(download_options(&cli.tuning));
    if let Some(version) = &args.version_id {
        download = download.version_id(version.clone());
    }
    if let Some(key) = sse_customer_key(&args.attrs)? {
        download = download.sse_customer_key(key);
    }
    let meter = if stdout {
        None
    } else {
        out.meter(Some(format!("s3://{b}/{k}")))
    };
    if let Some(meter) = &meter {
        let meter = meter.clone();
        download = download.on_progress(move |p| meter.transfer(p));
    }
    let got = interrupt::cancellable(download.start())
        .await
        .map_err(|e| failure_of(&format!("download s3://{b}/{k}"), b, &e))?;
    if let Some(meter) = &meter {
        meter.finish();
    }
    if !stdout
        && let Some(time) =
            s3_wire::transfer::object_mtime(&got.head.metadata).or(got.head.last_modified)
    {
        // As the AWS CLI: the file gets the object's time (its `mtime` metadata if any).
        let _ = std::fs::File::options()
            .write(true)
            .open(target)
            .and_then(|f| f.set_modified(time));
    }
    if delete_source {
        client
            .delete_object(DeleteObject::new(bucket_name(b)?, key_name(k)?))
            .await
            .map_err(|e| failure_of(&format!("delete s3://{b}/{k}"), b, &e))?;
    }
    if stdout {
        // The data went to stdout: nothing else may.
        return Ok(());
    }
    let (mut text, mut value) = result_line(
        if delete_source { "move" } else { "download" },
        &format!("s3://{b}/{k}"),
        &target.display().to_string(),
        started,
        json!({"bucket": b, "key": k, "size": got.size,
               "etag": got.etag.as_ref().map(|e| e.as_str().to_owned()),
               "restarted": got.restarted,
               "verification": got.verification.to_string()}),
    );
    note_resumed_bytes(&mut text, &mut value, got.resumed_bytes, got.size);
    if let Some(why) = &got.restarted {
        text.push_str(&format!(" (started over: {why})"));
    }
    out.line(text, value);
    Ok(())
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

//! Recursive and wildcard `cp`/`mv`, and `sync`: the library's directory transfers
//! (`Client::upload_directory`, `download_directory`, `copy_directory`) with the command
//! line's filters, attributes, progress and result lines.

use s3_wire::transfer::{
    Action, Compare, DirectoryEntry, LocalIssue, ObjectOutcome, Place, SkipReason,
};
use s3_wire::{Client, Error};
use serde_json::json;

use crate::cli::*;
use crate::copy::*;
use crate::filter::*;
use crate::interrupt;
use crate::location::*;
use crate::progress::Meter;
use crate::report::*;

/// One recursive copy, move or sync.
#[derive(Debug)]
pub(crate) struct Tree<'a> {
    pub(crate) source: &'a str,
    pub(crate) destination: &'a str,
    pub(crate) filter: Filter,
    pub(crate) compare: Compare,
    pub(crate) delete: bool,
    pub(crate) dryrun: bool,
    pub(crate) move_source: bool,
    pub(crate) attrs: &'a AttrArgs,
    pub(crate) links: LinkArgs,
}

pub(crate) async fn tree(cli: &Cli, client: &Client, out: &Out, job: Tree<'_>) -> Result<()> {
    let (from, to) = (
        Location::parse(job.source),
        Location::parse(job.destination),
    );
    // A wildcard in the source key: the objects under its directory whose relative path
    // matches the rest of the pattern.
    let (from, wildcard) = match from {
        Location::S3 { bucket, key } if has_wildcard(&key) => {
            let first = key.find(['*', '?']).unwrap_or(key.len());
            let directory = key[..first].rfind('/').map_or(0, |slash| slash + 1);
            let pattern = key[directory..].to_owned();
            let key = key[..directory].to_owned();
            (Location::S3 { bucket, key }, Some(pattern))
        }
        other => (other, None),
    };
    let builder = match (&from, &to) {
        (Location::Local(root), Location::S3 { bucket: b, key: k }) => {
            check_upload(job.attrs)?;
            if root.as_os_str() == "-" {
                return Err(usage("stdin (`-`) is one object: drop --recursive"));
            }
            if !root.is_dir() {
                return Err(usage(format!("{} is not a directory", root.display())));
            }
            let attrs = job.attrs.clone();
            client
                .upload_directory(root, bucket_name(b)?, k.clone())
                .options(upload_options(&cli.tuning))
                .attributes(move |entry: &DirectoryEntry| {
                    attributes(&attrs, Some(&entry.relative)).unwrap_or_default()
                })
                .checksum(Some(
                    job.attrs
                        .checksum
                        .unwrap_or(s3_wire::ops::ChecksumAlgorithm::Crc32),
                ))
                .follow_symlinks(!job.links.no_follow_symlinks)
        }
        (Location::S3 { bucket: b, key: k }, Location::Local(root)) => {
            check_download(job.attrs)?;
            if root.as_os_str() == "-" {
                return Err(usage("stdout (`-`) takes one object: drop --recursive"));
            }
            let mut builder = client
                .download_directory(bucket_name(b)?, k.clone(), root)
                .options(download_options(&cli.tuning));
            if let Some(key) = sse_customer_key(job.attrs)? {
                builder = builder.sse_customer_key(key);
            }
            builder
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
            let mut builder = client
                .copy_directory(bucket_name(sb)?, sk.clone(), bucket_name(db)?, dk.clone())
                .options(upload_options(&cli.tuning));
            if let Some(attributes) = copy_attributes(client, job.attrs, None).await? {
                builder = builder.attributes(move |_| attributes.clone());
            }
            if let Some(algorithm) = job.attrs.checksum {
                builder = builder.checksum(Some(algorithm));
            }
            builder
        }
        (Location::Local(_), Location::Local(_)) => {
            return Err(usage(
                "one side must be s3://bucket/prefix (local to local is not supported)",
            ));
        }
    };
    let filter = job.filter.clone();
    let pattern = wildcard.clone();
    let meter = out.meter(None);
    let mut builder = builder
        .objects_at_once(cli.tuning.concurrency)
        .compare(job.compare)
        .delete_extraneous(job.delete)
        .remove_source(job.move_source)
        .dry_run(job.dryrun);
    if !filter.is_empty() || pattern.is_some() {
        builder = builder.filter(move |entry: &DirectoryEntry| {
            filter.keeps(&entry.relative)
                && pattern
                    .as_deref()
                    .is_none_or(|p| wildcard_match(p, &entry.relative))
        });
    }
    if let Some(meter) = &meter {
        let (all, each) = (meter.clone(), meter.clone());
        builder = builder
            .on_progress(move |p| all.directory(p))
            .on_object_progress(move |relative, p| each.object(relative, p));
    }
    let (printer, shown) = (out.clone(), meter.clone());
    let moving = job.move_source;
    builder = builder.on_object(move |outcome| report(&printer, shown.as_deref(), outcome, moving));
    let result = interrupt::cancellable(builder.start()).await;
    if let Some(meter) = &meter {
        meter.finish();
    }
    let output = result.map_err(|e| {
        if matches!(e.kind(), s3_wire::ErrorKind::Io) {
            // The local walk: its error names the path.
            return failure_of("walk", "", &e);
        }
        let side = match (&from, &to) {
            (Location::S3 { bucket, key }, _) | (_, Location::S3 { bucket, key }) => {
                (bucket.clone(), key.clone())
            }
            _ => Default::default(),
        };
        failure_of(&format!("list s3://{}/{}", side.0, side.1), &side.0, &e)
    })?;
    if wildcard.is_some() && output.progress.objects_found == 0 {
        return Err(Failure::new(format!("nothing matches `{}`", job.source)));
    }
    Ok(())
}

/// The operation word of an outcome's line.
fn operation(action: Action, moving: bool) -> &'static str {
    match action {
        Action::Upload | Action::Download | Action::Copy if moving => "move",
        Action::Upload => "upload",
        Action::Download => "download",
        Action::Copy => "copy",
        Action::Delete => "delete",
        _ => "skip",
    }
}

/// One entry's line: its result, its dry run, its failure, or nothing for an unchanged one.
fn report(out: &Out, meter: Option<&Meter>, outcome: &ObjectOutcome, moving: bool) {
    if let Some(meter) = meter {
        meter.object_done(&outcome.relative);
    }
    let shown = |place: &Option<Place>| {
        place
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_else(|| outcome.relative.clone())
    };
    let (source, destination) = (shown(&outcome.source), shown(&outcome.destination));
    let operation = operation(outcome.action, moving);
    let mut value = json!({
        "operation": operation, "source": outcome.source.as_ref().map(|_| &source),
        "destination": destination, "size": outcome.size,
        "duration_ms": outcome.elapsed.as_millis() as u64,
    });
    // The object's bucket and key (the one written, or read by a download).
    if let Some(Place::Object { bucket, key }) = [&outcome.destination, &outcome.source]
        .into_iter()
        .flatten()
        .find(|place| matches!(place, Place::Object { .. }))
    {
        value["bucket"] = json!(bucket);
        value["key"] = json!(key);
    }
    let described = if outcome.action == Action::Delete {
        format!("delete: {destination}")
    } else {
        format!("{operation}: {source} to {destination}")
    };
    match (&outcome.result, outcome.action) {
        (Ok(_), Action::Skip(SkipReason::SpecialFile)) => {
            if !out.quiet {
                eprintln!("s3w: skipping {source}: not a regular file");
            }
        }
        (Ok(_), Action::Skip(_)) => {}
        (Ok(done), _) if done.dry_run => {
            value["type"] = json!("dryrun");
            out.line(format!("(dryrun) {described}"), value);
        }
        (Ok(done), _) => {
            value["type"] = json!("result");
            value["etag"] = json!(done.etag.as_ref().map(|e| e.as_str().to_owned()));
            value["verification"] = json!(done.verification.as_ref().map(ToString::to_string));
            let mut described = described;
            match outcome.action {
                Action::Download => {
                    note_resumed_bytes(&mut described, &mut value, done.resumed_bytes, outcome.size)
                }
                Action::Upload | Action::Copy => {
                    note_possible_orphan(&mut value, done.possible_orphan.as_ref());
                }
                _ => {}
            }
            out.line(described, value);
        }
        (Err(error), _) => out.error(
            failure(outcome, error, &source, &destination, operation),
            value,
        ),
    }
}

fn failure(
    outcome: &ObjectOutcome,
    error: &Error,
    source: &str,
    destination: &str,
    operation: &str,
) -> Failure {
    if let Some(issue) = LocalIssue::of(error) {
        return Failure::new(format!("{source}: {issue}"));
    }
    let bucket = [&outcome.destination, &outcome.source]
        .into_iter()
        .flatten()
        .find_map(|place| match place {
            Place::Object { bucket, .. } => Some(bucket.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let what = if outcome.action == Action::Delete {
        format!("delete {destination}")
    } else {
        format!("{operation} {source} to {destination}")
    };
    failure_of(&what, &bucket, error)
}

/// What a sync copies when the destination has the entry.
pub(crate) fn compare(
    size_only: bool,
    exact_timestamps: bool,
    no_clobber: bool,
    attrs: &AttrArgs,
) -> Compare {
    match attrs.checksum {
        _ if no_clobber => Compare::Missing,
        _ if size_only => Compare::SizeOnly,
        _ if exact_timestamps => Compare::ExactTime,
        Some(algorithm) => Compare::Checksum(algorithm),
        None => Compare::SizeAndTime,
    }
}

/// A `Tree` of one cp/mv command.
pub(crate) fn copy_tree<'a>(args: &'a CopyArgs, filter: Filter, move_source: bool) -> Tree<'a> {
    Tree {
        source: &args.source,
        destination: &args.destination,
        filter,
        compare: Compare::Always,
        delete: false,
        dryrun: args.dryrun,
        move_source,
        attrs: &args.attrs,
        links: args.links,
    }
}

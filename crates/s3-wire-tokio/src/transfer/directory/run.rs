//! Running a directory transfer: one task per planned entry when a slot is free, each an
//! object transfer, a deletion or a skip, under the failure policy.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, SystemTime};

use s3_ops::ops::copy_source::CopySource;
use s3_ops::ops::delete_object::DeleteObject;
use s3_ops::{ChecksumAlgorithm, ObjectAttributes};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::compare::{format_mtime, object_mtime, unchanged};
use super::outcome::{
    Action, Completed, DirectoryEntry, DirectoryOutput, ObjectOutcome, SkipReason,
};
use super::plan::{Planned, Spot, action, place, plan};
use super::progress::{Aggregate, Share};
use super::walk::{Found, LocalWalk, located};
use super::{
    Compare, DirectoryBuilder, EntryFn, FailurePolicy, KEPT_FAILURES, MTIME_METADATA,
    ObjectProgressFn, Side,
};
use crate::client::Client;
use crate::error::{Error, TransferErrorKind};
use crate::transfer::handle::{Control, TransferHandle};
use crate::transfer::{Destination, TransferOptions, UploadSource};

/// What every entry's task shares.
pub(super) struct Shared {
    pub(super) client: Client,
    pub(super) source: Side,
    pub(super) destination: Side,
    pub(super) options: TransferOptions,
    pub(super) attributes: Option<EntryFn<ObjectAttributes>>,
    pub(super) checksum: Option<Option<ChecksumAlgorithm>>,
    pub(super) compare: Compare,
    pub(super) keep_mtime: bool,
    pub(super) remove_source: bool,
    pub(super) dry_run: bool,
    pub(super) sse_customer_key: Option<s3_ops::SseCustomerKey>,
    pub(super) aggregate: Arc<Aggregate>,
    pub(super) object_listener: Option<ObjectProgressFn>,
    /// Becomes true when the running transfers must be cancelled.
    pub(super) halt: watch::Receiver<bool>,
}

pub(super) async fn run(
    builder: DirectoryBuilder,
    control: Arc<Control>,
    aggregate: Arc<Aggregate>,
) -> Result<DirectoryOutput, Error> {
    // A local source is counted first, so the totals are known from the first snapshot.
    let counted_ahead = if let Side::Local(root) = &builder.source {
        let mut walker = LocalWalk::new(root.clone(), builder.follow_symlinks);
        let filter = builder.filter.clone();
        let (objects, bytes) = tokio::task::spawn_blocking(move || {
            let (mut objects, mut bytes) = (0u64, 0u64);
            while let Some(found) = walker.next() {
                match found {
                    Ok(Found::Entry(entry)) if filter.as_ref().is_none_or(|keep| keep(&entry)) => {
                        objects += 1;
                        bytes += entry.size;
                    }
                    // Refused entries that fail are found (and fail at once).
                    Ok(Found::Refused { issue: Err(_), .. }) => objects += 1,
                    _ => {}
                }
            }
            (objects, bytes)
        })
        .await
        .map_err(|e| Error::io(io::Error::other(e)))?;
        aggregate.update(|p| {
            p.objects_found = objects;
            p.bytes_found = bytes;
            p.walk_complete = true;
        });
        true
    } else {
        false
    };
    let mut planned = plan(&builder.client, &builder, aggregate.clone(), counted_ahead);
    let (halt_sender, halt) = watch::channel(false);
    let context = Arc::new(Shared {
        client: builder.client.clone(),
        source: builder.source.clone(),
        destination: builder.destination.clone(),
        options: builder.options,
        attributes: builder.attributes.clone(),
        checksum: builder.checksum,
        compare: builder.compare,
        keep_mtime: builder.keep_mtime,
        remove_source: builder.remove_source,
        dry_run: builder.dry_run,
        sse_customer_key: builder.sse_customer_key.clone(),
        aggregate: aggregate.clone(),
        object_listener: builder.object_listener.clone(),
        halt,
    });
    let report = |outcome: &ObjectOutcome| {
        if let Some(on_object) = &builder.on_object {
            on_object(outcome);
        }
    };
    let mut output = DirectoryOutput::default();
    let mut first_failure: Option<Error> = None;
    let mut fatal: Option<Error> = None;
    let mut tasks: JoinSet<ObjectOutcome> = JoinSet::new();
    let mut pending: VecDeque<ObjectOutcome> = VecDeque::new();
    let mut cancelled = control.watch();
    let (mut planning, mut stopping) = (true, false);
    let stop_on_failure = builder.failure_policy == FailurePolicy::Stop;
    enum Event {
        Cancelled,
        Finished(ObjectOutcome),
        Planned(Option<Result<Planned, Error>>),
        Done,
    }
    loop {
        if let Some(outcome) = pending.pop_front() {
            report(&outcome);
            if outcome.result.is_err() {
                if stop_on_failure && first_failure.is_none() {
                    first_failure = outcome.result.err();
                } else if output.failures.len() < KEPT_FAILURES {
                    output.failures.push(outcome);
                }
            }
            continue;
        }
        if first_failure.is_some() && !stopping {
            stopping = true;
            let _ = halt_sender.send(true);
        }
        let event = std::future::poll_fn(|cx| {
            if !stopping && cancelled.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Event::Cancelled);
            }
            if let Poll::Ready(Some(done)) = tasks.poll_join_next(cx) {
                return Poll::Ready(match done {
                    Ok(outcome) => Event::Finished(outcome),
                    Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
                    Err(_) => Event::Cancelled,
                });
            }
            if planning
                && !stopping
                && tasks.len() < builder.objects
                && let Poll::Ready(item) = planned.poll_recv(cx)
            {
                return Poll::Ready(Event::Planned(item));
            }
            if tasks.is_empty() && (stopping || !planning) {
                return Poll::Ready(Event::Done);
            }
            Poll::Pending
        })
        .await;
        match event {
            Event::Cancelled => {
                stopping = true;
                let _ = halt_sender.send(true);
                fatal.get_or_insert_with(|| Error::transfer_error(TransferErrorKind::Cancelled));
            }
            Event::Finished(outcome) => pending.push_back(outcome),
            Event::Planned(None) => planning = false,
            Event::Planned(Some(Err(error))) => {
                stopping = true;
                let _ = halt_sender.send(true);
                fatal.get_or_insert(error);
            }
            Event::Planned(Some(Ok(Planned::Report(outcome)))) => {
                if outcome.result.is_err() {
                    aggregate.update(|p| p.objects_failed += 1);
                }
                pending.push_back(outcome);
            }
            Event::Planned(Some(Ok(Planned::Transfer { source, existing }))) => {
                tasks.spawn(transfer(context.clone(), source, existing));
            }
            Event::Planned(Some(Ok(Planned::Delete(entry)))) => {
                tasks.spawn(delete(context.clone(), entry));
            }
            Event::Done => break,
        }
    }
    drop(planned);
    output.progress = aggregate.get();
    if let Some(error) = fatal {
        return Err(error);
    }
    if let Some(error) = first_failure {
        return Err(error);
    }
    Ok(output)
}

/// Waits for a transfer, cancelling it if the directory transfer halts meanwhile.
async fn finish<T>(
    mut handle: TransferHandle<T>,
    halt: &watch::Receiver<bool>,
) -> Result<T, Error> {
    let mut halt = halt.clone();
    let mut halted = Box::pin(async move {
        let _ = halt.wait_for(|halted| *halted).await;
    });
    let mut cancelled = false;
    std::future::poll_fn(|cx| {
        if !cancelled && halted.as_mut().poll(cx).is_ready() {
            handle.cancel();
            cancelled = true;
        }
        Pin::new(&mut handle).poll(cx)
    })
    .await
}

/// One source entry: compared with the destination's (when there is one), transferred.
async fn transfer(
    shared: Arc<Shared>,
    source: DirectoryEntry,
    existing: Option<DirectoryEntry>,
) -> ObjectOutcome {
    let started = std::time::Instant::now();
    let mut outcome = ObjectOutcome {
        relative: source.relative.clone(),
        action: action(&shared.source, &shared.destination),
        source: place(&shared.source, &source.relative),
        destination: place(&shared.destination, &source.relative),
        size: source.size,
        elapsed: Duration::ZERO,
        result: Ok(Completed::default()),
    };
    let share = Share::new(
        shared.aggregate.clone(),
        source.size,
        shared
            .object_listener
            .clone()
            .map(|listener| (source.relative.clone(), listener)),
    );
    match transfer_entry(&shared, &source, existing.as_ref(), &share).await {
        Ok(Done::Skipped(reason)) => {
            shared.aggregate.update(|p| {
                p.objects_skipped += 1;
                p.bytes_skipped += source.size;
            });
            outcome.action = Action::Skip(reason);
        }
        Ok(Done::Completed(completed)) => {
            let last = *share.last.lock().unwrap_or_else(|e| e.into_inner());
            outcome.size = last.total.unwrap_or(source.size);
            share.finish(true);
            outcome.result = Ok(completed);
        }
        Err(error) => {
            share.finish(false);
            outcome.result = Err(error);
        }
    }
    outcome.elapsed = started.elapsed();
    outcome
}

enum Done {
    Skipped(SkipReason),
    Completed(Completed),
}

async fn transfer_entry(
    shared: &Shared,
    source: &DirectoryEntry,
    existing: Option<&DirectoryEntry>,
    share: &Arc<Share>,
) -> Result<Done, Error> {
    let from = Spot::of(&shared.source, &source.relative)?;
    let to = Spot::of(&shared.destination, &source.relative)?;
    if let Some(existing) = existing
        && let Some(reason) = unchanged(shared, source, existing, &from, &to).await?
    {
        return Ok(Done::Skipped(reason));
    }
    if *shared.halt.borrow() {
        return Err(Error::transfer_error(TransferErrorKind::Cancelled));
    }
    if shared.dry_run {
        return Ok(Done::Completed(Completed {
            dry_run: true,
            ..Completed::default()
        }));
    }
    let listener = share.clone();
    let on_progress = move |p| listener.report(p);
    let mut completed = match (&from, &to) {
        (Spot::File(path), Spot::Object(bucket, key)) => {
            let mut attributes = shared
                .attributes
                .as_ref()
                .map(|attributes| attributes(source))
                .unwrap_or_default();
            if shared.keep_mtime
                && let Some(modified) = source.modified
            {
                attributes = attributes.metadata(MTIME_METADATA, format_mtime(modified));
            }
            let mut upload = shared
                .client
                .upload(bucket.clone(), key.clone(), UploadSource::file(path))
                .options(shared.options)
                .attributes(attributes)
                .on_progress(on_progress);
            if let Some(checksum) = shared.checksum {
                upload = upload.checksum(checksum);
            }
            let stored = finish(upload.start(), &shared.halt).await?;
            Completed {
                etag: stored.etag,
                version_id: stored.version_id,
                verification: Some(stored.verification),
                possible_orphan: stored.possible_orphan,
                ..Completed::default()
            }
        }
        (Spot::Object(bucket, key), Spot::File(path)) => {
            if let Some(parent) = path.parent() {
                tokio::fs::create_dir_all(parent)
                    .await
                    .map_err(|e| located(parent, e))?;
            }
            let mut download = shared
                .client
                .download(bucket.clone(), key.clone(), Destination::file(path))
                .options(shared.options)
                .on_progress(on_progress);
            if let Some(key) = &shared.sse_customer_key {
                download = download.sse_customer_key(key.clone());
            }
            let got = finish(download.start(), &shared.halt).await?;
            if shared.keep_mtime
                && let Some(time) = object_mtime(&got.head.metadata).or(got.head.last_modified)
            {
                set_mtime(path.clone(), time).await?;
            }
            Completed {
                etag: got.etag,
                version_id: got.version_id,
                verification: Some(got.verification),
                resumed_bytes: got.resumed_bytes,
                ..Completed::default()
            }
        }
        (Spot::Object(bucket, key), Spot::Object(to_bucket, to_key)) => {
            let mut copy = shared
                .client
                .copy(
                    CopySource::new(bucket.clone(), key.clone()),
                    to_bucket.clone(),
                    to_key.clone(),
                )
                .options(shared.options)
                .on_progress(on_progress);
            if let Some(attributes) = &shared.attributes {
                copy = copy.attributes(attributes(source));
            }
            if let Some(checksum) = shared.checksum {
                copy = copy.checksum(checksum);
            }
            let stored = finish(copy.start(), &shared.halt).await?;
            Completed {
                etag: stored.etag,
                version_id: stored.version_id,
                verification: Some(stored.verification),
                possible_orphan: stored.possible_orphan,
                ..Completed::default()
            }
        }
        (Spot::File(_), Spot::File(_)) => unreachable!("one side is a bucket"),
    };
    if shared.remove_source {
        remove(&shared.client, &from).await?;
        completed.source_removed = true;
    }
    Ok(Done::Completed(completed))
}

async fn set_mtime(path: PathBuf, time: SystemTime) -> Result<(), Error> {
    tokio::task::spawn_blocking(move || {
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_modified(time))
            .map_err(|e| located(&path, e))
    })
    .await
    .map_err(|e| Error::io(io::Error::other(e)))?
}

async fn remove(client: &Client, spot: &Spot) -> Result<(), Error> {
    match spot {
        Spot::File(path) => tokio::fs::remove_file(path)
            .await
            .map_err(|e| located(path, e)),
        Spot::Object(bucket, key) => client
            .delete_object(DeleteObject::new(bucket.clone(), key.clone()))
            .await
            .map(|_| ()),
    }
}

/// A destination entry the source lacks: deleted (or, in a dry run, reported).
async fn delete(shared: Arc<Shared>, entry: DirectoryEntry) -> ObjectOutcome {
    let started = std::time::Instant::now();
    let result = match Spot::of(&shared.destination, &entry.relative) {
        Err(error) => Err(error),
        Ok(_) if shared.dry_run => Ok(Completed {
            dry_run: true,
            ..Completed::default()
        }),
        Ok(target) => remove(&shared.client, &target)
            .await
            .map(|()| Completed::default()),
    };
    match &result {
        Ok(_) => shared.aggregate.update(|p| p.objects_deleted += 1),
        Err(_) => shared.aggregate.update(|p| p.objects_failed += 1),
    }
    ObjectOutcome {
        destination: place(&shared.destination, &entry.relative),
        relative: entry.relative,
        action: Action::Delete,
        source: None,
        size: entry.size,
        elapsed: started.elapsed(),
        result,
    }
}

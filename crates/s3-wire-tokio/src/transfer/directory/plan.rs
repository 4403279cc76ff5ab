//! Planning: the source walk, merged with the destination walk when a sync compares or
//! deletes, into one unit of work per entry.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use s3_ops::{BucketName, ObjectKey};
use tokio::sync::mpsc;

use super::outcome::{
    Action, Completed, DirectoryEntry, LocalIssue, ObjectOutcome, Place, SkipReason,
};
use super::progress::Aggregate;
use super::walk::{Found, Walk, local_path, walk};
use super::{Compare, DirectoryBuilder, Side};
use crate::client::Client;
use crate::error::{Error, TransferErrorKind};

/// One unit of work for the engine.
pub(super) enum Planned {
    Transfer {
        source: DirectoryEntry,
        existing: Option<DirectoryEntry>,
    },
    Delete(DirectoryEntry),
    Report(ObjectOutcome),
}

/// The source walk, filtered, merged with the destination walk (when comparing or
/// deleting), into a channel of work; ends with the first fatal error.
pub(super) fn plan(
    client: &Client,
    builder: &DirectoryBuilder,
    aggregate: Arc<Aggregate>,
    counted_ahead: bool,
) -> mpsc::Receiver<Result<Planned, Error>> {
    let (sender, receiver) = mpsc::channel(1);
    let merging = builder.compare != Compare::Always || builder.delete_extraneous;
    let mut source = walk(
        client,
        &builder.source,
        builder.follow_symlinks,
        false,
        merging,
    );
    // The destination's links are not followed: a link is compared as what it is, and a
    // missing destination directory is empty.
    let mut destination = merging.then(|| walk(client, &builder.destination, false, true, true));
    let filter = builder.filter.clone();
    let delete = builder.delete_extraneous;
    let (source_side, destination_side) = (builder.source.clone(), builder.destination.clone());
    tokio::spawn(async move {
        let keep = |found: &Found| match (found, &filter) {
            (Found::Entry(entry), Some(filter)) => filter(entry),
            _ => true,
        };
        let mut next_source = Ordered::new(merging);
        let mut next_destination = Ordered::new(merging);
        let mut source_item = next_source.next(&mut source, &keep).await;
        let mut destination_item = match &mut destination {
            Some(walk) => next_destination.next(walk, &keep).await,
            None => Ok(None),
        };
        loop {
            let (s, d) = match (&source_item, &destination_item) {
                (Err(_), _) | (_, Err(_)) => {
                    let error = match (source_item, destination_item) {
                        (Err(error), _) | (_, Err(error)) => error,
                        _ => unreachable!("one of them is an error"),
                    };
                    let _ = sender.send(Err(error)).await;
                    return;
                }
                (Ok(s), Ok(d)) => (s.as_ref(), d.as_ref()),
            };
            let order = match (s, d) {
                (None, None) => break,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(s), Some(d)) => s.relative().cmp(d.relative()),
            };
            let planned = match order {
                std::cmp::Ordering::Less | std::cmp::Ordering::Equal => {
                    let Ok(Some(found)) = std::mem::replace(
                        &mut source_item,
                        next_source.next(&mut source, &keep).await,
                    ) else {
                        unreachable!("a source entry was there")
                    };
                    let existing = if order == std::cmp::Ordering::Equal {
                        let Some(walk) = &mut destination else {
                            unreachable!("merging")
                        };
                        match std::mem::replace(
                            &mut destination_item,
                            next_destination.next(walk, &keep).await,
                        ) {
                            Ok(Some(Found::Entry(entry))) => Some(entry),
                            _ => None,
                        }
                    } else {
                        None
                    };
                    match found {
                        Found::Entry(source) => {
                            if !counted_ahead {
                                aggregate.update(|p| {
                                    p.objects_found += 1;
                                    p.bytes_found += source.size;
                                });
                            }
                            Some(Planned::Transfer { source, existing })
                        }
                        Found::Refused {
                            relative,
                            place,
                            issue,
                        } => Some(Planned::Report(refused_outcome(
                            (!counted_ahead).then_some(&aggregate),
                            &source_side,
                            &destination_side,
                            relative,
                            place,
                            issue,
                        ))),
                    }
                }
                std::cmp::Ordering::Greater => {
                    let Some(walk) = &mut destination else {
                        unreachable!("merging")
                    };
                    match std::mem::replace(
                        &mut destination_item,
                        next_destination.next(walk, &keep).await,
                    ) {
                        Ok(Some(Found::Entry(entry))) if delete => Some(Planned::Delete(entry)),
                        _ => None,
                    }
                }
            };
            if let Some(planned) = planned
                && sender.send(Ok(planned)).await.is_err()
            {
                return;
            }
        }
        aggregate.update(|p| p.walk_complete = true);
    });
    receiver
}

/// Reads a walk's next kept entry; when merging, checks that the order holds (a listing
/// out of order would make a sync transfer, or delete, the wrong entries).
struct Ordered {
    check: bool,
    last: Option<String>,
}

impl Ordered {
    pub(super) fn new(check: bool) -> Self {
        Self { check, last: None }
    }

    pub(super) async fn next(
        &mut self,
        walk: &mut Walk,
        keep: &impl Fn(&Found) -> bool,
    ) -> Result<Option<Found>, Error> {
        loop {
            let Some(found) = walk.recv().await.transpose()? else {
                return Ok(None);
            };
            if self.check && matches!(found, Found::Entry(_)) {
                if let Some(last) = &self.last
                    && found.relative() <= last.as_str()
                {
                    return Err(Error::transfer_error(TransferErrorKind::Inconsistent(
                        format!(
                            "the entries are not in key order (`{}` after `{last}`): refusing to compare or delete by them",
                            found.relative()
                        ),
                    )));
                }
                self.last = Some(found.relative().to_owned());
            }
            if keep(&found) {
                return Ok(Some(found));
            }
        }
    }
}

/// Where `relative` is on a side, for the requests.
#[derive(Debug, Clone)]
pub(super) enum Spot {
    File(PathBuf),
    Object(BucketName, ObjectKey),
}

impl Spot {
    pub(super) fn of(side: &Side, relative: &str) -> Result<Spot, Error> {
        Ok(match side {
            Side::Local(root) => {
                Spot::File(local_path(root, relative).map_err(LocalIssue::into_error)?)
            }
            Side::Bucket { bucket, prefix } => Spot::Object(
                bucket.clone(),
                ObjectKey::new(format!("{prefix}{relative}"))?,
            ),
        })
    }
}

/// Where `relative` is on a side, as reported (also when it cannot be reached).
pub(super) fn place(side: &Side, relative: &str) -> Option<Place> {
    match side {
        Side::Local(root) => local_path(root, relative).ok().map(Place::File),
        Side::Bucket { bucket, prefix } => Some(Place::Object {
            bucket: bucket.as_str().to_owned(),
            key: format!("{prefix}{relative}"),
        }),
    }
}

pub(super) fn action(source: &Side, destination: &Side) -> Action {
    match (source, destination) {
        (Side::Local(_), _) => Action::Upload,
        (Side::Bucket { .. }, Side::Local(_)) => Action::Download,
        (Side::Bucket { .. }, Side::Bucket { .. }) => Action::Copy,
    }
}

/// The outcome of an entry refused by the walk; a failure counts as found and failed
/// (`count`: unless the walk was counted ahead, which counted it).
fn refused_outcome(
    count: Option<&Arc<Aggregate>>,
    source: &Side,
    destination: &Side,
    relative: String,
    from: Place,
    issue: Result<SkipReason, Error>,
) -> ObjectOutcome {
    let (action, result) = match issue {
        Ok(reason) => (Action::Skip(reason), Ok(Completed::default())),
        Err(error) => {
            if let Some(aggregate) = count {
                aggregate.update(|p| p.objects_found += 1);
            }
            (self::action(source, destination), Err(error))
        }
    };
    ObjectOutcome {
        destination: place(destination, &relative),
        relative,
        action,
        source: Some(from),
        size: 0,
        elapsed: Duration::ZERO,
        result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_merge_refuses_a_walk_out_of_key_order() {
        let (sender, mut walk) = mpsc::channel(4);
        for relative in ["a", "c", "b"] {
            let entry = DirectoryEntry {
                relative: relative.to_owned(),
                size: 0,
                modified: None,
                etag: None,
            };
            sender.send(Ok(Found::Entry(entry))).await.unwrap();
        }
        drop(sender);
        let mut ordered = Ordered::new(true);
        let keep = |_: &Found| true;
        assert!(ordered.next(&mut walk, &keep).await.unwrap().is_some());
        assert!(ordered.next(&mut walk, &keep).await.unwrap().is_some());
        let Err(error) = ordered.next(&mut walk, &keep).await else {
            panic!("an entry out of order was accepted");
        };
        assert!(error.to_string().contains("not in key order"), "{error}");
    }
}

//! Part planning and the transfer scheduler state machines, sans-IO.
//!
//! This crate decides how an upload or download is cut into parts and in
//! what order they run; a driver performs the actions it polls and reports
//! the results back. It does no I/O, reads no clock and spawns nothing, so
//! any transport (the `s3-wire-tokio` adapter, a custom one, a simulation)
//! can drive it.
//!
//! - [`PartLimits`] and [`MultipartOptions`]: the store's limits and the
//!   validated part size, concurrency and retry budget;
//!   [`MultipartOptions::maximum_buffered_bytes`] is the memory bound.
//! - [`UploadPlan`]: parts of an object of known size, growing the part size
//!   (in 1 MiB steps) when the part count limit requires it.
//! - [`StreamPlan`]: the deterministic part-size growth schedule for a stream
//!   of unknown length.
//! - [`UploadScheduler`]: the multipart upload state machine, generic over
//!   the driver's per-part [`PartReceipt`].
//! - [`UploadSnapshot`]: resumable state in a versioned text form, reconciled
//!   with a `ListParts` answer.
//! - [`DownloadScheduler`]: concurrent ranged GETs delivered in order within
//!   a bounded reorder window.
//!
//! # Driving an upload: the drain rule
//!
//! The scheduler is a state machine in the quinn-proto style: input goes in
//! through `handle_*` methods, output comes out of
//! [`poll_action`](UploadScheduler::poll_action).
//!
//! **Drain rule:** after creating the scheduler and after *every* `handle_*`
//! call, call `poll_action` until it returns `None`, and start every
//! [`Action`] it returned. Actions are independent requests that may run
//! concurrently; report each one's result with the matching `handle_*` call
//! as it arrives, in any order. `None` means "nothing can start until a
//! result arrives" — not "finished"; the upload is over when
//! [`outcome`](UploadScheduler::outcome) is `Some`. Polling more often is
//! harmless; polling less often only delays work.
//!
//! The scheduler guarantees, whatever the order of results:
//!
//! - at most `concurrency` parts hold a slot (are read, uploaded or waiting
//!   for a retry), and the bytes they hold never exceed
//!   [`maximum_buffered_bytes`](UploadScheduler::maximum_buffered_bytes);
//! - a part is retried at most `retries_per_part` times, and only after a
//!   retryable failure (the driver backs off using [`Action::UploadPart`]'s
//!   `attempt`);
//! - [`Action::Complete`] comes only after every part succeeded, and lists
//!   the parts 1..=n in ascending order;
//! - a fatal failure or a cancellation produces exactly one
//!   [`Action::Abort`] once an upload id exists (none before: there is
//!   nothing to abort). Results of parts still in flight after that are
//!   accepted and ignored.
//!
//! # Receipts
//!
//! When a part succeeds, the driver hands the scheduler a *receipt*: what it
//! records for the stored part, typically the ETag and the checksum the
//! server returned, in the driver's own types. The planner stores receipts
//! and gives them back ([`Action::Complete`], snapshots) but never
//! interprets them, so it is generic over them ([`PartReceipt`]) instead of
//! having an ETag or checksum vocabulary of its own; a [`String`] holding
//! the ETag is a receipt too, as in the examples here.
//!
//! A stream of unknown length is driven the same way, with one more action:
//! [`Action::ReadPart`] asks the driver to read the next bytes into a buffer;
//! the driver answers with the number of bytes it read, and a short read
//! marks the end of the stream (see
//! [`handle_part_read`](UploadScheduler::handle_part_read)).
//!
//! # Example: a complete driver loop
//!
//! This driver uploads 23 MiB in 5 MiB parts to an in-memory "server", keeps
//! several requests in flight, finishes them out of order and fails one part
//! once to show the retry.
//!
//! ```
//! use std::collections::BTreeMap;
//! use s3_multipart_plan::{Action, MultipartOptions, Outcome, UploadScheduler};
//!
//! const MIB: u64 = 1 << 20;
//! let object: Vec<u8> = (0..23 * MIB).map(|i| (i % 251) as u8).collect();
//! let options = MultipartOptions::builder()
//!     .part_size(5 * MIB)
//!     .concurrency(3)
//!     .retries_per_part(2)
//!     .build()?;
//! let mut upload = UploadScheduler::new(object.len() as u64, &options)?;
//!
//! let mut server_parts: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
//! let mut server_object = None;
//! // The receipt of each part is its ETag, a String.
//! let mut in_flight: Vec<Action<String>> = Vec::new();
//! let mut failed_once = false;
//!
//! while upload.outcome().is_none() {
//!     // The drain rule: start everything the scheduler allows right now.
//!     while let Some(action) = upload.poll_action() {
//!         in_flight.push(action);
//!     }
//!     // "Perform" the most recently started request first, so results
//!     // arrive out of order, and report its result.
//!     match in_flight.pop().expect("an unfinished upload always has work in flight") {
//!         Action::Create => upload.handle_created("upload-1")?,
//!         Action::UploadPart { number, range, attempt } => {
//!             if number == 2 && !failed_once {
//!                 failed_once = true; // e.g. a 503 SlowDown: retryable
//!                 upload.handle_part_failed(number, true)?;
//!             } else {
//!                 let bytes = object[range.start as usize..range.end as usize].to_vec();
//!                 server_parts.insert(number, bytes);
//!                 upload.handle_part_done(number, format!("\"etag-{number}-{attempt}\""))?;
//!             }
//!         }
//!         Action::Complete { parts } => {
//!             let numbers: Vec<u32> = parts.iter().map(|p| p.number).collect();
//!             assert_eq!(numbers, [1, 2, 3, 4, 5]);
//!             // Each part carries the receipt of its successful attempt.
//!             assert_eq!(parts[1].receipt, "\"etag-2-2\"");
//!             let joined: Vec<u8> = parts.iter().flat_map(|p| server_parts[&p.number].clone()).collect();
//!             server_object = Some(joined);
//!             upload.handle_completed()?;
//!         }
//!         Action::Abort { .. } => upload.handle_aborted()?,
//!         // Only streams read; this crate may add actions in later versions.
//!         other => unreachable!("unexpected action {other:?}"),
//!     }
//! }
//!
//! assert_eq!(upload.outcome(), Some(&Outcome::Completed { parts: 5, size: 23 * MIB }));
//! assert_eq!(server_object.as_deref(), Some(&object[..]));
//! # Ok::<(), s3_multipart_plan::Error>(())
//! ```
//!
//! **Dependency rule:** `std` only.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod download;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod options;
mod part;
mod plan;
mod snapshot;
mod upload;

pub use download::{
    Delivery, DownloadOptions, DownloadOptionsBuilder, DownloadOutcome, DownloadPlan,
    DownloadScheduler, RangeFetch,
};
pub use error::{Error, EventError, LimitsError, OptionsError, SnapshotError, SnapshotErrorKind};
pub use options::{MIB, MultipartOptions, MultipartOptionsBuilder, PartLimits};
pub use part::{CompletedPart, CompletedParts, PartReceipt};
pub use plan::{StreamPlan, UploadPlan};
pub use snapshot::{Reconciliation, UploadSnapshot};
pub use upload::{Action, FailureReason, Outcome, UploadScheduler};

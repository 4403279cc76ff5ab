//! Recovery of managed uploads against the in-memory `FaultStore`: a process killed with
//! SIGKILL mid-upload is resumed from its journal (only the missing parts are sent again), a
//! journal whose file changed is refused, a journaled upload whose parts fail is kept open
//! and resumed, a file that changes during an upload is never completed, a stream shorter
//! than announced is aborted, cancellation at every stage cleans up with exactly the requests
//! it should, and progress stays consistent under a flaky store. Parts are 64 KiB (lowered
//! part limits), so every case moves little data.
//!
//! The crash test re-runs this test binary as a child process (environment variables say
//! what to upload where); the parent runs the store, kills the child once its journal records
//! enough parts, and resumes in-process.

use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::fault_store::{FaultKind, FaultPlan, FaultStore, Op};
use crate::helpers::{CrashChild, part_limits, run_until_crash};
use crate::support::{data, retry, sha256};
use bytes::Bytes;
use s3_wire_tokio::transfer::{UploadBuilder, UploadOutput};
use s3_wire_tokio::{
    Cleanup, Client, Error, ErrorKind, Progress, TransferErrorKind, TransferHandle, UploadSource,
    Verification,
};

const BUCKET: &str = "bucket";
/// Bytes per part (and the store's minimum part size).
const PART: u64 = 64 * 1024;

/// Set in the child of the crash test: the store's endpoint.
const CHILD_ENDPOINT: &str = "S3_WIRE_TEST_RECOVERY_CHILD_ENDPOINT";
/// Set in the child: the file to upload.
const CHILD_FILE: &str = "S3_WIRE_TEST_RECOVERY_CHILD_FILE";
/// Set in the child: the resume journal.
const CHILD_JOURNAL: &str = "S3_WIRE_TEST_RECOVERY_CHILD_JOURNAL";
/// The name of the test that is the child process.
const CHILD_TEST: &str = "recovery::crash_child_uploads_slowly_until_killed";
/// The key of the crash test's object.
const CRASH_KEY: &str = "crash/resumed.bin";
/// Parts of the crash test's file.
const CRASH_PARTS: u64 = 32;
/// Parts the journal must record before the child is killed.
const PARTS_BEFORE_KILL: usize = 8;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn start_store() -> FaultStore {
    FaultStore::start_with_min_part_size(PART)
}

/// A client of `store` with `max_attempts` and, if given, a bandwidth limit.
fn client(store: &FaultStore, max_attempts: u32, bandwidth: Option<u64>) -> Client {
    let mut builder = store.client_builder().retry(retry(max_attempts));
    if let Some(rate) = bandwidth {
        builder = builder.bandwidth_limit(rate);
    }
    builder.build().expect("client")
}

fn bucket() -> s3_wire_tokio::s3_ops::BucketName {
    s3_wire_tokio::bucket(BUCKET).unwrap()
}

fn key(name: &str) -> s3_wire_tokio::s3_ops::ObjectKey {
    s3_wire_tokio::key(name).unwrap()
}

/// Writes `parts` parts of data to `name` in `directory`; returns the path and the bytes.
fn write_file(directory: &Path, name: &str, parts: u64, seed: u64) -> (PathBuf, Bytes) {
    let path = directory.join(name);
    let bytes = data(parts * PART, seed);
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

/// An upload of `file` to `name` in `PART`-byte parts, as a multipart upload from two parts
/// on.
fn multipart_upload(client: &Client, name: &str, file: &Path) -> UploadBuilder {
    client
        .upload(bucket(), key(name), UploadSource::file(file))
        .part_size(PART)
        .part_limits(part_limits(PART))
        .single_request_limit(PART)
}

/// An upload of `file` to `name` in `PART`-byte parts with the resume journal `journal`,
/// `concurrency` parts at a time.
fn journaled_upload(
    client: &Client,
    name: &str,
    file: &Path,
    journal: &Path,
    concurrency: usize,
) -> UploadBuilder {
    client
        .upload(bucket(), key(name), UploadSource::file(file))
        .part_size(PART)
        .part_limits(part_limits(PART))
        .concurrency(concurrency)
        .journal(journal)
}

/// Starts a multipart upload of `file` to `name` at 1 MiB/s (about 60 ms a part), two parts
/// at a time.
fn slow_upload(store: &FaultStore, name: &str, file: &Path) -> TransferHandle<UploadOutput> {
    multipart_upload(&client(store, 3, Some(1024 * 1024)), name, file)
        .concurrency(2)
        .start()
}

/// Requests of `op` the store recorded (since the last `clear_requests`).
fn count(store: &FaultStore, op: Op) -> usize {
    store
        .requests()
        .iter()
        .filter(|request| request.operation == op)
        .count()
}

/// The counts of (Create, UploadPart, Complete, Abort) requests.
fn multipart_counts(store: &FaultStore) -> (usize, usize, usize, usize) {
    (
        count(store, Op::CreateMultipartUpload),
        count(store, Op::UploadPart),
        count(store, Op::CompleteMultipartUpload),
        count(store, Op::AbortMultipartUpload),
    )
}

/// The number of `part ` lines of the journal at `path` (0 if there is none yet).
fn journal_parts(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|text| {
            text.lines()
                .filter(|line| line.starts_with("part "))
                .count()
        })
        .unwrap_or(0)
}

/// The part numbers the journal at `path` records.
fn journal_part_numbers(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("journal {}: {e}", path.display()))
        .lines()
        .filter_map(|line| line.strip_prefix("part "))
        .map(|rest| rest.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

/// Waits (up to `limit`) until `done` holds; panics with `what` otherwise.
async fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until the handle's progress shows `committed > 0`, then returns it.
async fn wait_for_first_part<T>(handle: &TransferHandle<T>) -> Progress {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let progress = handle.progress();
        if progress.committed > 0 {
            return progress;
        }
        assert!(
            !handle.is_finished(),
            "the upload ended before a part committed"
        );
        assert!(Instant::now() < deadline, "no part committed: {progress:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn is_source_changed(error: &Error) -> bool {
    matches!(
        error.kind(),
        ErrorKind::Transfer(TransferErrorKind::SourceChanged(_))
    )
}

fn cleanup(error: &Error) -> Cleanup {
    error
        .transfer()
        .unwrap_or_else(|| panic!("no transfer failure in {error:?}"))
        .cleanup
        .clone()
}

/// Asserts that the store holds exactly `bytes` under `name`.
fn assert_stored(store: &FaultStore, name: &str, bytes: &[u8]) {
    let object = store
        .object(BUCKET, name)
        .unwrap_or_else(|| panic!("no object under {name}"));
    assert_eq!(object.data.len(), bytes.len(), "stored size of {name}");
    assert_eq!(
        sha256(&object.data),
        sha256(bytes),
        "stored bytes of {name} differ"
    );
}

/// Asserts that no upload is open and no object stored under `name`.
#[track_caller]
fn assert_nothing_left(store: &FaultStore, name: &str) {
    assert_eq!(store.open_uploads(), [], "an upload is left open");
    assert!(
        store.object(BUCKET, name).is_none(),
        "an object under {name}"
    );
}

/// A transfer handle that an `on_progress` listener can cancel: the listener is registered
/// before the handle exists, so it reaches the handle through this slot.
type Slot<T> = Arc<Mutex<Option<TransferHandle<T>>>>;

/// Awaits the handle in `slot` (without holding the lock across polls), then takes it out.
async fn await_slot<T>(slot: &Slot<T>) -> Result<T, Error> {
    let result = std::future::poll_fn(|cx| {
        let mut guard = slot.lock().unwrap();
        let handle = guard.as_mut().expect("a handle in the slot");
        std::pin::Pin::new(handle).poll(cx)
    })
    .await;
    // Breaks the cycle handle → progress → listener → slot.
    drop(slot.lock().unwrap().take());
    result
}

/// A listener that cancels the handle in `slot` the first time every byte is committed:
/// from inside the driver, at the moment the last part is acknowledged, so the cancellation
/// arrives while (at the latest) CompleteMultipartUpload is in flight.
fn cancel_when_all_committed<T: Send + 'static>(
    slot: &Slot<T>,
    cancelled: &Arc<AtomicBool>,
) -> impl Fn(Progress) + Send + Sync + 'static {
    let slot = slot.clone();
    let cancelled = cancelled.clone();
    let previous = Mutex::new(Progress::default());
    move |progress: Progress| {
        // The last part's acknowledgment: its bytes leave `in_flight` but are committed only
        // with the object, so nothing moves into `committed` (no part here is retried).
        let last_acknowledged = {
            let mut previous = previous.lock().unwrap();
            let held = previous.in_flight > 0
                && progress.in_flight == 0
                && progress.committed == previous.committed
                && progress
                    .total
                    .is_some_and(|total| progress.committed < total);
            *previous = progress;
            held
        };
        if last_acknowledged && !cancelled.swap(true, Ordering::SeqCst) {
            slot.lock()
                .unwrap()
                .as_ref()
                .expect("the handle is in the slot before the upload runs")
                .cancel();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Crash (SIGKILL) and resume
// ---------------------------------------------------------------------------------------------

/// The child process of `a_killed_upload_resumes_from_its_journal`: uploads the file slowly
/// (256 KiB/s, so 32 parts take about 8 s) with a journal, until the parent kills it. In a
/// normal test run (no environment variables) it does nothing.
#[tokio::test]
async fn crash_child_uploads_slowly_until_killed() {
    let Ok(endpoint) = std::env::var(CHILD_ENDPOINT) else {
        return;
    };
    let file = std::env::var(CHILD_FILE).expect("file variable");
    let journal = std::env::var(CHILD_JOURNAL).expect("journal variable");
    let client = CrashChild::client(&endpoint);
    let result =
        journaled_upload(&client, CRASH_KEY, Path::new(&file), Path::new(&journal), 2).await;
    // The parent kills this process long before the upload could end.
    panic!("the child's upload ended without being killed: {result:?}");
}

#[tokio::test]
async fn a_killed_upload_resumes_from_its_journal() {
    if std::env::var(CHILD_ENDPOINT).is_ok() {
        return;
    }
    let store = start_store();
    let directory = tempfile::tempdir().unwrap();
    let (file, bytes) = write_file(directory.path(), "crash.bin", CRASH_PARTS, 1);
    let journal = directory.path().join("crash.journal");
    let mut child = CrashChild::start(
        CHILD_TEST,
        &[
            (CHILD_ENDPOINT, store.endpoint().as_ref()),
            (CHILD_FILE, file.as_os_str()),
            (CHILD_JOURNAL, journal.as_os_str()),
        ],
        directory.path(),
    );
    // Kill it (SIGKILL) once its journal records enough parts.
    let recorded = child
        .kill_when(|| {
            let recorded = journal_parts(&journal);
            let ready = (recorded >= PARTS_BEFORE_KILL).then_some(recorded);
            (ready, format!("the journal records {recorded} parts"))
        })
        .await;
    let child_output = || child.output();
    assert!(
        (recorded as u64) < CRASH_PARTS,
        "the kill came before the last part"
    );
    assert!(
        store.object(BUCKET, CRASH_KEY).is_none(),
        "nothing completed"
    );
    let open = store.open_uploads();
    assert_eq!(open.len(), 1, "the killed upload stays open: {open:?}");
    let created = count(&store, Op::CreateMultipartUpload);
    assert_eq!(created, 1, "the child created one upload");
    // Requests the kill cut short are recorded when the store notices: let it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    store.clear_requests();

    // The same upload, in-process and at full speed: it continues the child's.
    let output = journaled_upload(&client(&store, 3, None), CRASH_KEY, &file, &journal, 2)
        .await
        .unwrap_or_else(|e| panic!("resume failed: {e:?}\n{}", child_output()));

    assert_stored(&store, CRASH_KEY, &bytes);
    assert_eq!(output.size, bytes.len() as u64);
    assert_eq!(output.parts, Some(CRASH_PARTS as u32));
    assert_eq!(
        output.upload_id.as_deref(),
        Some(open[0].upload_id.as_str())
    );
    assert!(
        matches!(output.verification, Verification::FullObject(_)),
        "{:?}",
        output.verification
    );
    assert!(
        output.resumed_parts as usize >= recorded,
        "the {recorded} journaled parts were resumed, not {}",
        output.resumed_parts
    );
    let (creates, parts, completes, aborts) = multipart_counts(&store);
    assert_eq!(creates, 0, "the resume created no upload");
    assert_eq!(
        parts,
        CRASH_PARTS as usize - output.resumed_parts as usize,
        "only the missing parts were sent"
    );
    assert!(
        store
            .requests()
            .iter()
            .filter(|r| r.operation == Op::UploadPart)
            .all(|r| r.status == Some(200)),
        "every part of the resume was accepted"
    );
    assert_eq!((completes, aborts), (1, 0));
    assert_eq!(
        count(&store, Op::ListParts),
        1,
        "one ListParts to reconcile"
    );
    assert!(
        !journal.exists(),
        "the journal is removed once the upload completes"
    );
    assert_eq!(store.open_uploads(), [], "no upload left open");
}

// ---------------------------------------------------------------------------------------------
// 2. A journal whose file changed is refused; a failed journaled upload is kept and resumes
// ---------------------------------------------------------------------------------------------

/// Runs a journaled upload of `file` on a runtime of its own and "crashes" it (the runtime is
/// shut down, so nothing of the upload runs again: no abort, no journal removal) once the
/// journal records `parts` parts.
fn upload_and_crash(store: &FaultStore, name: &str, file: &Path, journal: &Path, parts: usize) {
    let (name, file, journal) = (name.to_owned(), file.to_path_buf(), journal.to_path_buf());
    let watched = journal.clone();
    run_until_crash(
        store.client_builder(),
        move |client| journaled_upload(client, &name, &file, &journal, 2).start(),
        move || journal_parts(&watched) >= parts,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_whose_file_changed_is_refused() {
    let store = start_store();
    let directory = tempfile::tempdir().unwrap();
    let (file, bytes) = write_file(directory.path(), "changed.bin", 16, 2);
    let journal = directory.path().join("changed.journal");
    let name = "journal/changed.bin";
    upload_and_crash(&store, name, &file, &journal, 4);
    let open = store.open_uploads();
    assert_eq!(open.len(), 1, "the crashed upload stays open: {open:?}");
    assert!(journal_parts(&journal) >= 4);
    // Parts the crash cut short are recorded once the store notices: let it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let open = store.open_uploads();

    let resume = || journaled_upload(&client(&store, 3, None), name, &file, &journal, 2);
    let original = std::fs::metadata(&file).unwrap().modified().unwrap();
    // The same length, other bytes (and a modification time that surely moved).
    let rewritten: Vec<u8> = bytes.iter().map(|b| !b).collect();
    // A byte more.
    let mut appended = rewritten.clone();
    appended.push(0x5A);
    for (what, content, modified) in [
        ("rewritten", &rewritten, original + Duration::from_secs(2)),
        ("appended", &appended, original + Duration::from_secs(4)),
    ] {
        std::fs::write(&file, content).unwrap();
        set_modified(&file, modified);
        store.clear_requests();
        let refused = resume().await.expect_err("a changed file is refused");
        assert!(is_source_changed(&refused), "{what}: {refused:?}");
        let message = refused.to_string();
        assert!(
            message.contains("remove the journal"),
            "{what}: the message says what to do: {message}"
        );
        assert_eq!(
            multipart_counts(&store),
            (0, 0, 0, 0),
            "{what}: nothing new was uploaded"
        );
        assert!(
            journal.exists(),
            "{what}: the journal is left for the caller"
        );
        assert_eq!(
            store.open_uploads(),
            open,
            "{what}: the upload is untouched"
        );
        assert!(store.object(BUCKET, name).is_none(), "{what}: no object");
    }
}

/// A journaled upload whose parts start failing (one attempt per request) ends at once with
/// its upload kept for resumption and every acknowledged part in its journal; the next run
/// sends only the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_journaled_upload_is_kept_and_resumes() {
    let store = Arc::new(start_store());
    let directory = tempfile::tempdir().unwrap();
    let (file, bytes) = write_file(directory.path(), "kept.bin", 16, 11);
    let journal = directory.path().join("kept.journal");
    let name = "journal/kept.bin";

    // Every UploadPart fails once 4 parts are committed. One part at a time, at 1 MiB/s
    // (about 60 ms a part), so each journal write is done before the next part ends.
    let faulted = Arc::new(AtomicBool::new(false));
    let listener = {
        let store = store.clone();
        let faulted = faulted.clone();
        move |progress: Progress| {
            if progress.committed >= 4 * PART && !faulted.swap(true, Ordering::SeqCst) {
                store.set_faults(
                    FaultPlan::new(7, 1.0)
                        .kind(FaultKind::InternalError, 1)
                        .operations([Op::UploadPart]),
                );
            }
        }
    };
    let slow_client = client(&store, 1, Some(1024 * 1024));
    let handle = journaled_upload(&slow_client, name, &file, &journal, 1)
        .on_progress(listener)
        .start();
    let failed = tokio::time::timeout(Duration::from_secs(5), handle)
        .await
        .expect("a failed upload ends once its part failed (it waited for nothing)")
        .expect_err("the fifth part fails");
    assert!(
        faulted.load(Ordering::SeqCst),
        "the faults were switched on"
    );
    assert_eq!(
        failed.service_error().map(|e| e.code.as_str()),
        Some("InternalError"),
        "{failed:?}"
    );
    assert_eq!(cleanup(&failed), Cleanup::KeptForResume(journal.clone()));
    let open = store.open_uploads();
    assert_eq!(open.len(), 1, "kept open: {open:?}");
    assert_eq!(open[0].parts, [1, 2, 3, 4], "{open:?}");
    assert_eq!(
        failed.transfer().unwrap().upload_id.as_deref(),
        Some(open[0].upload_id.as_str())
    );
    assert_eq!(
        journal_part_numbers(&journal),
        open[0].parts,
        "the journal records every acknowledged part"
    );

    store.set_faults(FaultPlan::none());
    store.clear_requests();
    let output = journaled_upload(&client(&store, 3, None), name, &file, &journal, 1)
        .await
        .expect("the resume completes");
    assert_stored(&store, name, &bytes);
    assert_eq!(output.resumed_parts, 4);
    assert_eq!(
        output.upload_id.as_deref(),
        Some(open[0].upload_id.as_str())
    );
    assert_eq!(
        multipart_counts(&store),
        (0, 12, 1, 0),
        "only the 12 missing parts"
    );
    assert!(
        !journal.exists(),
        "the journal is removed once the upload completes"
    );
    assert_eq!(store.open_uploads(), []);
}

fn set_modified(path: &Path, time: SystemTime) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// 3. The file changes during an upload
// ---------------------------------------------------------------------------------------------

/// A stream whose chunks come from a channel: it waits until the test sends or drops.
struct Fed(tokio::sync::mpsc::Receiver<Bytes>);

impl futures_core::Stream for Fed {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|chunk| chunk.map(Ok))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_file_that_changes_before_it_is_read_is_refused_and_nothing_is_stored() {
    // A file small enough for one PutObject is opened (its size and mtime taken), admitted
    // to the memory budget, read whole, and checked again after the read, in one job.
    let store = start_store();
    let client = store
        .client_builder()
        .transfer_memory(PART)
        .build()
        .unwrap();
    // A stream upload of unknown length holds the whole budget while its stream waits.
    let (feed, fed) = tokio::sync::mpsc::channel(1);
    let holder = client
        .upload(
            bucket(),
            key("holder"),
            UploadSource::stream(Fed(fed), None),
        )
        .single_request_limit(PART - 1)
        .part_size(PART)
        .part_limits(part_limits(PART))
        .start();
    wait_until(
        Duration::from_secs(10),
        "the stream holds the budget",
        || client.transfer_memory().in_use == PART,
    )
    .await;

    // So the small file waits for memory after it was opened.
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("small.bin");
    let bytes = data(PART / 2, 5);
    std::fs::write(&file, &bytes).unwrap();
    let small = client
        .upload(bucket(), key("small"), UploadSource::file(&file))
        .single_request_limit(PART)
        .start();
    wait_until(Duration::from_secs(10), "the small file is opened", || {
        small.progress().total == Some(PART / 2)
    })
    .await;
    // Rewritten in place: same length, other bytes, a later mtime.
    let opened = std::fs::metadata(&file).unwrap().modified().unwrap();
    let other: Vec<u8> = bytes.iter().map(|b| b.wrapping_add(1)).collect();
    std::fs::write(&file, &other).unwrap();
    if std::fs::metadata(&file).unwrap().modified().unwrap() == opened {
        set_modified(&file, opened + Duration::from_secs(2));
    }

    // The stream ends: its memory goes to the small file, which is read and refused.
    feed.send(Bytes::from_static(b"held")).await.unwrap();
    drop(feed);
    assert_eq!(holder.await.unwrap().size, 4);
    let error = small.await.expect_err("a file that changed is not stored");
    assert!(is_source_changed(&error), "{error:?}");
    assert!(
        store.object(BUCKET, "small").is_none(),
        "an object was stored"
    );
    assert_eq!(
        count(&store, Op::PutObject),
        1,
        "only the holder's PutObject"
    );
    assert_eq!(client.transfer_memory().in_use, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_changes_during_the_upload_is_not_completed() {
    let store = start_store();
    let directory = tempfile::tempdir().unwrap();
    let (file, bytes) = write_file(directory.path(), "moving.bin", 40, 3);
    let name = "moving/target.bin";
    // 40 parts at 1 MiB/s: about 2.5 s.
    let handle = slow_upload(&store, name, &file);
    let deadline = Instant::now() + Duration::from_secs(10);
    while handle.progress().committed < 3 * PART {
        assert!(!handle.is_finished(), "ended before 3 parts");
        assert!(Instant::now() < deadline, "3 parts take too long");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let at_change = handle.progress();
    assert!(
        at_change.committed < at_change.total.unwrap(),
        "{at_change:?}"
    );
    rewrite_in_place(&file, &bytes);

    let error = handle.await.expect_err("a changed file is not completed");
    assert!(is_source_changed(&error), "{error:?}");
    assert_eq!(cleanup(&error), Cleanup::Aborted, "{error}");
    assert!(error.transfer().unwrap().upload_id.is_some());
    assert_nothing_left(&store, name);
    let (creates, _, completes, aborts) = multipart_counts(&store);
    assert_eq!(
        (creates, completes, aborts),
        (1, 0, 1),
        "no Complete of mixed bytes, one abort"
    );
}

/// A part's request signs the part's SHA-256 (plain HTTP), so the part is read whole, once,
/// and hashed as it is read: its retry after the file was rewritten sends the bytes that were
/// hashed. (Read again to be sent, the retry would carry the new bytes under the old
/// hash, and the store would refuse it with `XAmzContentSHA256Mismatch`.) The upload then ends
/// as for any file that changed: not completed, aborted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_part_sent_again_after_its_file_changed_carries_the_bytes_it_was_signed_for() {
    let store = start_store();
    store.set_faults(FaultPlan::first_try(
        FaultKind::StalledRequest,
        [Op::UploadPart],
    ));
    let directory = tempfile::tempdir().unwrap();
    let (file, bytes) = write_file(directory.path(), "resent.bin", 3, 6);
    let name = "resent/target.bin";
    let client = store
        .client_builder()
        .retry(retry(3))
        .stall_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    let handle = multipart_upload(&client, name, &file)
        .concurrency(1)
        .start();
    wait_until(Duration::from_secs(10), "the first part stalls", || {
        count(&store, Op::UploadPart) > 0
    })
    .await;
    store.set_faults(FaultPlan::none());
    rewrite_in_place(&file, &bytes);

    let error = handle.await.expect_err("a changed file is not completed");
    assert!(is_source_changed(&error), "{error:?}");
    assert_eq!(cleanup(&error), Cleanup::Aborted, "{error}");
    let parts: Vec<_> = store
        .requests()
        .into_iter()
        .filter(|request| request.operation == Op::UploadPart)
        .map(|request| (request.fault, request.status))
        .collect();
    assert_eq!(
        parts,
        [
            (Some(FaultKind::StalledRequest), None),
            (None, Some(200)),
            (None, Some(200)),
            (None, Some(200)),
        ],
        "the stalled part's retry was accepted"
    );
    assert_nothing_left(&store, name);
}

/// Rewrites `file` (holding `bytes`) in place: the same length, other bytes, a later
/// modification time.
fn rewrite_in_place(file: &Path, bytes: &[u8]) {
    let original = std::fs::metadata(file).unwrap().modified().unwrap();
    {
        use std::io::Write as _;
        let mut writer = std::fs::OpenOptions::new().write(true).open(file).unwrap();
        let other: Vec<u8> = bytes.iter().map(|b| b.wrapping_add(1)).collect();
        writer.write_all(&other).unwrap();
        writer.sync_all().unwrap();
    }
    assert_eq!(std::fs::metadata(file).unwrap().len(), bytes.len() as u64);
    if std::fs::metadata(file).unwrap().modified().unwrap() == original {
        // A file system with coarse timestamps: the time must move for the check to see it.
        set_modified(file, original + Duration::from_secs(2));
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Cancellation at every stage
// ---------------------------------------------------------------------------------------------

/// Cancelled before the task ran: a small file (one PutObject) sends nothing at all; a
/// multipart file's Create is already on its way when the driver sees the cancellation, so
/// the abort follows its upload id: one Create, one Abort, no part.
#[tokio::test]
async fn cancelled_before_create_is_answered() {
    let store = start_store();
    let directory = tempfile::tempdir().unwrap();

    // One PutObject's worth: nothing is sent.
    let (small, _) = write_file(directory.path(), "small.bin", 1, 4);
    let handle = client(&store, 3, None)
        .upload(
            bucket(),
            key("cancel/small.bin"),
            UploadSource::file(&small),
        )
        .start();
    handle.cancel();
    let error = handle.await.expect_err("cancelled");
    assert!(error.is_cancelled(), "{error:?}");
    assert_eq!(cleanup(&error), Cleanup::Nothing);
    assert_eq!(store.requests().len(), 0, "nothing was sent");

    // A multipart upload: Create is in flight when the cancellation is seen.
    let (file, _) = write_file(directory.path(), "multi.bin", 8, 5);
    let name = "cancel/before-create.bin";
    let handle = multipart_upload(&client(&store, 3, None), name, &file).start();
    handle.cancel();
    let error = handle.await.expect_err("cancelled");
    assert!(error.is_cancelled(), "{error:?}");
    assert_eq!(cleanup(&error), Cleanup::Aborted, "{error}");
    assert!(error.transfer().unwrap().upload_id.is_some());
    assert_eq!(
        multipart_counts(&store),
        (1, 0, 0, 1),
        "(Create, UploadPart, Complete, Abort)"
    );
    assert_nothing_left(&store, name);

    // The same, by dropping the handle: the abort happens in the background.
    store.clear_requests();
    let name = "cancel/dropped-before-create.bin";
    drop(multipart_upload(&client(&store, 3, None), name, &file).start());
    wait_until(
        Duration::from_secs(10),
        "the dropped upload is aborted",
        || count(&store, Op::AbortMultipartUpload) > 0,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(multipart_counts(&store), (1, 0, 0, 1));
    assert_nothing_left(&store, name);
}

/// Cancelled while parts are in flight: no new part starts, the ones in flight settle, one
/// abort.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_during_parts_aborts_once() {
    let store = start_store();
    let directory = tempfile::tempdir().unwrap();
    let (file, _) = write_file(directory.path(), "parts.bin", 40, 6);
    let name = "cancel/during-parts.bin";
    let handle = slow_upload(&store, name, &file);
    wait_for_first_part(&handle).await;
    handle.cancel();
    let at_cancel = handle.progress();
    let error = handle.await.expect_err("cancelled");
    assert!(error.is_cancelled(), "{error:?}");
    assert_eq!(cleanup(&error), Cleanup::Aborted, "{error}");
    let (creates, parts, completes, aborts) = multipart_counts(&store);
    assert_eq!((creates, completes, aborts), (1, 0, 1));
    // At most the parts in flight (2), and one being started as the cancellation came,
    // went out after it.
    assert!(
        parts as u64 <= at_cancel.committed / PART + 3,
        "{parts} parts sent, {at_cancel:?} at the cancellation"
    );
    assert!(parts < 40, "the upload stopped early: {parts} parts");
    assert_nothing_left(&store, name);
}

/// Dropping the handle while parts are in flight cancels too: the abort still happens, in
/// the background, exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_handle_during_parts_aborts_in_the_background() {
    let store = start_store();
    let directory = tempfile::tempdir().unwrap();
    let (file, _) = write_file(directory.path(), "dropped.bin", 40, 7);
    let name = "cancel/dropped.bin";
    let handle = slow_upload(&store, name, &file);
    wait_for_first_part(&handle).await;
    assert_eq!(store.open_uploads().len(), 1);
    drop(handle);
    wait_until(
        Duration::from_secs(10),
        "the dropped upload is aborted",
        || count(&store, Op::AbortMultipartUpload) > 0 && store.open_uploads().is_empty(),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (creates, parts, completes, aborts) = multipart_counts(&store);
    assert_eq!((creates, completes, aborts), (1, 0, 1));
    assert!(parts < 40, "the upload stopped early: {parts} parts");
    assert_nothing_left(&store, name);
}

/// Uploads a 16-part file (of `seed`) to `name` with `attempts` attempts per request, two
/// parts at a time, cancelled by [`cancel_when_all_committed`]; returns the result (after
/// checking that the listener cancelled) and the file's bytes.
async fn upload_cancelled_once_all_committed(
    store: &FaultStore,
    attempts: u32,
    name: &str,
    seed: u64,
) -> (Result<UploadOutput, Error>, Bytes) {
    let directory = tempfile::tempdir().unwrap();
    let (file, bytes) = write_file(directory.path(), "cancelled.bin", 16, seed);
    let slot: Slot<_> = Arc::new(Mutex::new(None));
    let cancelled = Arc::new(AtomicBool::new(false));
    let handle = multipart_upload(&client(store, attempts, None), name, &file)
        .concurrency(2)
        .on_progress(cancel_when_all_committed(&slot, &cancelled))
        .start();
    *slot.lock().unwrap() = Some(handle);
    let result = await_slot(&slot).await;
    assert!(cancelled.load(Ordering::SeqCst), "the listener cancelled");
    (result, bytes)
}

/// Cancelled once CompleteMultipartUpload is in flight: the cancellation only takes effect
/// if Complete fails. Here its first attempt is applied and the connection reset; the retry
/// finds the upload gone and the object stored: the result is the object, no abort.
#[tokio::test]
async fn cancelled_during_a_complete_that_succeeds_keeps_the_object() {
    let store = start_store();
    store.set_faults(FaultPlan::first_try(
        FaultKind::ResetAfterApply,
        [Op::CompleteMultipartUpload],
    ));
    let name = "cancel/during-complete.bin";
    let (result, bytes) = upload_cancelled_once_all_committed(&store, 3, name, 8).await;
    let output = result.expect("Complete went out: the object stands");
    assert_stored(&store, name, &bytes);
    assert_eq!(output.parts, Some(16));
    let (creates, parts, completes, aborts) = multipart_counts(&store);
    assert_eq!((creates, parts, aborts), (1, 16, 0), "no abort");
    assert_eq!(
        completes, 2,
        "the reset Complete and its retry (answered NoSuchUpload)"
    );
    assert_eq!(store.open_uploads(), []);
}

/// Cancelled once CompleteMultipartUpload is in flight, and Complete fails: then the
/// cancellation takes effect: one abort, a cancelled error.
#[tokio::test]
async fn cancelled_during_a_complete_that_fails_aborts() {
    let store = start_store();
    store.set_faults(
        FaultPlan::new(9, 1.0)
            .kind(FaultKind::InternalError, 1)
            .operations([Op::CompleteMultipartUpload]),
    );
    let name = "cancel/failing-complete.bin";
    let (result, _) = upload_cancelled_once_all_committed(&store, 2, name, 9).await;
    let error = result.expect_err("Complete fails");
    assert!(error.is_cancelled(), "{error:?}");
    assert_eq!(cleanup(&error), Cleanup::Aborted, "{error}");
    let (creates, parts, completes, aborts) = multipart_counts(&store);
    assert_eq!((creates, parts, aborts), (1, 16, 1));
    assert_eq!(completes, 2, "Complete with its one retry");
    assert_nothing_left(&store, name);
}

/// A stream that ends before its announced length, in a multipart upload: the mismatch is
/// found when the upload would complete; it is aborted at once (no request in flight is
/// left to wait for) and fails with the lengths.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_shorter_than_announced_is_aborted() {
    let store = start_store();
    let name = "stream/short.bin";
    let actual = data(8 * PART, 12);
    let announced = 10 * PART;
    let chunks = actual
        .chunks(10_000)
        .map(bytes::Bytes::copy_from_slice)
        .collect();
    let handle = client(&store, 3, None)
        .upload(
            bucket(),
            key(name),
            UploadSource::stream(crate::support::Chunks(chunks), Some(announced)),
        )
        .part_size(PART)
        .part_limits(part_limits(PART))
        .single_request_limit(PART)
        .concurrency(2)
        .start();
    let error = tokio::time::timeout(Duration::from_secs(5), handle)
        .await
        .expect("the upload ends (nothing is in flight once its length is known)")
        .expect_err("a short stream is refused");
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Transfer(TransferErrorKind::SourceLength { announced: a, actual: n })
                if *a == announced && *n == 8 * PART
        ),
        "{error:?}"
    );
    assert_eq!(cleanup(&error), Cleanup::Aborted, "{error}");
    assert_eq!(multipart_counts(&store), (1, 8, 0, 1));
    assert_nothing_left(&store, name);
}

// ---------------------------------------------------------------------------------------------
// 5. Progress under a flaky store
// ---------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_stays_consistent_under_a_flaky_store() {
    let store = start_store();
    store.set_faults(
        FaultPlan::new(2024, 0.2)
            .kind(FaultKind::SlowDown, 1)
            .kind(FaultKind::ResetBeforeApply, 1)
            .kind(FaultKind::ResetAfterApply, 1)
            .kind(FaultKind::TruncatedResponse, 1)
            .operations([Op::UploadPart]),
    );
    let directory = tempfile::tempdir().unwrap();
    let (file, bytes) = write_file(directory.path(), "flaky.bin", 30, 10);
    let total = bytes.len() as u64;
    let name = "flaky/progress.bin";
    let snapshots = Arc::new(Mutex::new(Vec::<Progress>::new()));
    let recorder = {
        let snapshots = snapshots.clone();
        move |progress: Progress| snapshots.lock().unwrap().push(progress)
    };
    let handle = multipart_upload(&client(&store, 6, None), name, &file)
        .concurrency(4)
        .on_progress(recorder)
        .start();
    let output = handle.await.expect("the retries get every part through");
    assert_stored(&store, name, &bytes);
    assert_eq!(output.parts, Some(30));
    let faults: u64 = store.fault_counts().values().sum();
    assert!(
        faults >= 3,
        "the store was flaky: {:?}",
        store.fault_counts()
    );
    assert!(
        count(&store, Op::UploadPart) > 30,
        "parts were retried: {:?}",
        store.request_counts()
    );

    let snapshots = snapshots.lock().unwrap().clone();
    assert!(snapshots.len() > 30, "{} snapshots", snapshots.len());
    let mut last_committed = 0;
    for (index, progress) in snapshots.iter().enumerate() {
        let at = format!("snapshot {index}: {progress:?}");
        assert!(
            progress.committed >= last_committed,
            "committed went down at {at}"
        );
        last_committed = progress.committed;
        if let Some(known) = progress.total {
            assert_eq!(known, total, "{at}");
            assert!(
                progress.committed <= known,
                "committed past the total at {at}"
            );
            assert!(
                progress.committed + progress.in_flight <= known,
                "committed + in flight past the total at {at}"
            );
        }
    }
    let last = snapshots.last().unwrap();
    assert_eq!(
        (last.total, last.committed, last.in_flight),
        (Some(total), total, 0),
        "the final snapshot"
    );
}

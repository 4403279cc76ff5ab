//! Directory transfers (`transfer/directory.rs`) against the fault store: a tree of 2,000
//! small files and a few multipart-sized ones up and back down with faults injected into
//! one request in ten, every byte compared, the aggregate progress checked at every
//! snapshot; sync comparisons and deletions; failure policies; cancellation.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::fault_store::{FaultKind, FaultPlan, FaultStore, Op, StoreQuirks};
use crate::helpers::part_limits;
use crate::support::data;
use s3_wire_tokio::s3_ops::{BucketName, Provider};
use s3_wire_tokio::transfer::{
    Action, Compare, DirectoryBuilder, DirectoryProgress, FailurePolicy, LocalIssue, ObjectOutcome,
    SkipReason,
};
use s3_wire_tokio::{Client, ClientBuilder, RetryConfig, TransferOptions};

const PART: u64 = 16 * 1024;
const MEMORY: u64 = 16 * PART;

fn bucket(name: &str) -> BucketName {
    BucketName::new(name).unwrap()
}

/// Small parts and a small single-request limit, so that the large files go in parts.
fn options() -> TransferOptions {
    let mut options = TransferOptions::default();
    options.part_size = PART;
    options.concurrency = 4;
    options.single_request_limit = Some(2 * PART);
    options.limits = part_limits(PART);
    options
}

fn client(store: &FaultStore, attempts: u32) -> Client {
    client_builder(store, attempts).build().unwrap()
}

fn client_builder(store: &FaultStore, attempts: u32) -> ClientBuilder {
    store
        .client_builder()
        .retry(
            RetryConfig::default()
                .with_max_attempts(attempts)
                .with_delays(Duration::from_millis(1), Duration::from_millis(20))
                .with_budget_capacity(1_000_000),
        )
        .stall_timeout(Duration::from_millis(800))
        .transfer_memory(MEMORY)
        .transfer_options(options())
}

/// Writes the tree: `small` files of 0 to 3 KiB spread over nested directories, and the
/// `large` sizes; returns relative path → bytes.
fn tree(root: &Path, small: usize, large: &[u64]) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for i in 0..small {
        let relative = format!("d{:02}/sub{}/f{i:04}.bin", i % 23, i % 3);
        files.insert(relative, data((i as u64 * 37) % 3072, i as u64).to_vec());
    }
    for (i, &size) in large.iter().enumerate() {
        files.insert(
            format!("large/{i}.bin"),
            data(size, 1000 + i as u64).to_vec(),
        );
    }
    for (relative, bytes) in &files {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    files
}

/// One outcome as the test keeps it: relative path, action, the error's words.
type Reported = (String, Action, Result<(), String>);

/// What the listeners saw: every progress snapshot and every outcome.
#[derive(Clone, Default)]
struct Seen {
    progress: Arc<Mutex<Vec<DirectoryProgress>>>,
    outcomes: Arc<Mutex<Vec<Reported>>>,
}

impl Seen {
    fn watch(&self, builder: DirectoryBuilder) -> DirectoryBuilder {
        let (progress, outcomes) = (self.progress.clone(), self.outcomes.clone());
        builder
            .on_progress(move |p| progress.lock().unwrap().push(p))
            .on_object(move |o: &ObjectOutcome| {
                let result = o
                    .result
                    .as_ref()
                    .map(|_| ())
                    .map_err(|e| format!("{e} {:?}", LocalIssue::of(e)));
                outcomes
                    .lock()
                    .unwrap()
                    .push((o.relative.clone(), o.action, result));
            })
    }

    fn actions(&self) -> BTreeMap<String, Action> {
        self.outcomes
            .lock()
            .unwrap()
            .iter()
            .map(|(relative, action, _)| (relative.clone(), *action))
            .collect()
    }

    /// The aggregate's invariants over the snapshots, in the order delivered: committed
    /// only grows and never passes the bytes to transfer, which (for a local source) are
    /// known from the first snapshot.
    fn check_progress(&self, total: u64, objects: u64, counted_ahead: bool) {
        let snapshots = self.progress.lock().unwrap();
        assert!(!snapshots.is_empty());
        if counted_ahead {
            let first = snapshots[0];
            assert_eq!(
                (first.objects_found, first.bytes_found, first.walk_complete),
                (objects, total, true),
                "the totals are known from the first snapshot"
            );
        }
        let mut committed = 0;
        for p in snapshots.iter() {
            assert!(p.committed >= committed, "committed went back: {p:?}");
            committed = p.committed;
            assert!(
                p.committed <= p.bytes_to_transfer(),
                "committed passed the total: {p:?}"
            );
        }
        let last = snapshots.last().unwrap();
        assert_eq!(
            (last.committed, last.in_flight, last.bytes_found),
            (total, 0, total),
            "{last:?}"
        );
        assert_eq!(last.objects_transferred, objects, "{last:?}");
        assert!(last.walk_complete);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_files_and_three_large_ones_go_up_and_down_through_faults_byte_exact() {
    let store = FaultStore::start_with_min_part_size(PART);
    store.set_faults(crate::faults::faulty_plan(0xD1EC_7087, 0.1));
    let client = client(&store, 6);
    let source = tempfile::tempdir().unwrap();
    let files = tree(
        source.path(),
        2000,
        &[5 * PART + 123, 9 * PART, 3 * PART + 1],
    );
    let total: u64 = files.values().map(|f| f.len() as u64).sum();
    let count = files.len() as u64;

    let up = Seen::default();
    let output = up
        .watch(
            client
                .upload_directory(source.path(), bucket("dir"), "backup")
                .objects_at_once(16),
        )
        .await
        .unwrap();
    assert!(output.is_success(), "{:?}", output.failures);
    assert!(
        store.fault_counts().values().sum::<u64>() >= 100,
        "{:?}",
        store.fault_counts()
    );
    let keys = store.keys("dir");
    let expected: Vec<String> = files.keys().map(|k| format!("backup/{k}")).collect();
    assert_eq!(keys, expected);
    for (relative, bytes) in &files {
        let object = store.object("dir", &format!("backup/{relative}")).unwrap();
        assert!(object.data == bytes[..], "{relative} differs");
    }
    for (relative, _) in files.iter().filter(|(r, _)| r.starts_with("large/")) {
        let object = store.object("dir", &format!("backup/{relative}")).unwrap();
        assert!(object.parts.is_some(), "{relative} went in parts");
    }
    up.check_progress(total, count, true);
    assert!(
        store.open_uploads().is_empty(),
        "{:?}",
        store.open_uploads()
    );
    let memory = client.transfer_memory();
    assert!(
        memory.high_water <= MEMORY && memory.in_use == 0,
        "{memory:?}"
    );

    let target = tempfile::tempdir().unwrap();
    let down = Seen::default();
    let output = down
        .watch(
            client
                .download_directory(bucket("dir"), "backup/", target.path().join("restored"))
                .objects_at_once(16),
        )
        .await
        .unwrap();
    assert!(output.is_success(), "{:?}", output.failures);
    for (relative, bytes) in &files {
        let path = target.path().join("restored").join(relative);
        assert!(
            std::fs::read(&path).unwrap() == *bytes,
            "{relative} differs"
        );
        // The file's own time came back with it (the `mtime` metadata).
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            std::fs::metadata(source.path().join(relative))
                .unwrap()
                .modified()
                .unwrap(),
            "{relative}"
        );
    }
    down.check_progress(total, count, false);

    // A sync either way now finds everything the same.
    store.set_faults(FaultPlan::none());
    for builder in [
        client.upload_directory(source.path(), bucket("dir"), "backup"),
        client.download_directory(bucket("dir"), "backup", target.path().join("restored")),
    ] {
        let again = Seen::default();
        let output = again
            .watch(builder.compare(Compare::SizeAndTime))
            .await
            .unwrap();
        assert_eq!(
            (
                output.progress.objects_transferred,
                output.progress.objects_skipped
            ),
            (0, count),
            "{:?}",
            output.progress
        );
        assert!(
            again
                .actions()
                .values()
                .all(|a| *a == Action::Skip(SkipReason::Unchanged))
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_sends_what_changed_and_deletes_only_what_the_source_lacks_under_its_prefix() {
    // On a store that lists in key order, and on one that does not (as S3 Express One
    // Zone's directory buckets), which is walked directory by directory for the merge.
    let ordered = FaultStore::start_with_min_part_size(PART);
    sync_scenario(&ordered, client(&ordered, 3)).await;
    let unordered = FaultStore::start_with_min_part_size(PART);
    unordered.set_quirks(StoreQuirks {
        unordered_listings: true,
        ..StoreQuirks::default()
    });
    let mut quirks = Provider::Generic.quirks();
    quirks.listings_in_key_order = false;
    let profiled = client_builder(&unordered, 3)
        .provider_quirks(quirks)
        .build()
        .unwrap();
    sync_scenario(&unordered, profiled).await;
    // The same store with the profile of an ordered store: the merge refuses it.
    let empty = tempfile::tempdir().unwrap();
    let error = client(&unordered, 3)
        .upload_directory(empty.path(), bucket("syn"), "data")
        .delete_extraneous(true)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("not in key order"), "{error}");
}

async fn sync_scenario(store: &FaultStore, client: Client) {
    let source = tempfile::tempdir().unwrap();
    tree(source.path(), 0, &[]);
    for (name, body) in [
        ("same.txt", "same"),
        ("changed.txt", "new!!"),
        ("new.txt", "n"),
    ] {
        std::fs::write(source.path().join(name), body).unwrap();
    }
    std::fs::create_dir_all(source.path().join("keep")).unwrap();
    let time = |path: &str| {
        std::fs::metadata(source.path().join(path))
            .unwrap()
            .modified()
            .unwrap()
    };
    // The bucket: the same file (stored after it was written), a changed one, one the source
    // lacks, one under an excluded path, and siblings of the prefix.
    store.insert_object("syn", "data/same.txt", "same", None);
    store.insert_object("syn", "data/changed.txt", "old", None);
    store.insert_object("syn", "data/gone.txt", "gone", None);
    store.insert_object("syn", "data/keep/local-only.txt", "kee", None);
    store.insert_object("syn", "data2/sibling.txt", "syn", None);
    store.insert_object("syn", "database.txt", "d", None);
    assert!(time("same.txt") <= store.object("syn", "data/same.txt").unwrap().last_modified);

    let seen = Seen::default();
    let output = seen
        .watch(
            client
                .upload_directory(source.path(), bucket("syn"), "data")
                .compare(Compare::SizeAndTime)
                .delete_extraneous(true)
                .filter(|entry| !entry.relative.starts_with("keep/")),
        )
        .await
        .unwrap();
    assert!(output.is_success(), "{:?}", output.failures);
    let actions = seen.actions();
    assert_eq!(
        actions,
        BTreeMap::from([
            ("changed.txt".to_owned(), Action::Upload),
            ("gone.txt".to_owned(), Action::Delete),
            ("new.txt".to_owned(), Action::Upload),
            ("same.txt".to_owned(), Action::Skip(SkipReason::Unchanged)),
        ])
    );
    assert_eq!(
        store.keys("syn"),
        [
            "data/changed.txt",
            "data/keep/local-only.txt",
            "data/new.txt",
            "data/same.txt",
            "data2/sibling.txt",
            "database.txt"
        ]
    );
    assert_eq!(
        &store.object("syn", "data/changed.txt").unwrap().data[..],
        b"new!!"
    );
    assert_eq!(output.progress.objects_deleted, 1);

    // A dry run reports the same plan and changes nothing.
    std::fs::write(source.path().join("changed.txt"), "newer, longer").unwrap();
    let dry = Seen::default();
    dry.watch(
        client
            .upload_directory(source.path(), bucket("syn"), "data")
            .compare(Compare::SizeOnly)
            .dry_run(true),
    )
    .await
    .unwrap();
    assert_eq!(dry.actions()["changed.txt"], Action::Upload);
    assert_eq!(
        &store.object("syn", "data/changed.txt").unwrap().data[..],
        b"new!!"
    );

    // Missing: only what the destination lacks.
    let missing = Seen::default();
    missing
        .watch(
            client
                .upload_directory(source.path(), bucket("syn"), "data")
                .compare(Compare::Missing),
        )
        .await
        .unwrap();
    assert!(
        missing
            .actions()
            .values()
            .all(|a| *a == Action::Skip(SkipReason::Exists))
    );
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_reported_per_object_and_stop_ends_the_transfer() {
    let store = FaultStore::start_with_min_part_size(PART);
    let client = client(&store, 2);
    let source = tempfile::tempdir().unwrap();
    tree(source.path(), 40, &[]);
    std::os::unix::fs::symlink(source.path().join("nowhere"), source.path().join("broken"))
        .unwrap();
    std::os::unix::fs::symlink(source.path(), source.path().join("d01/loop")).unwrap();
    // A key longer than S3 allows (1,024 bytes) is refused before anything is sent.
    let deep: PathBuf = (0..6).map(|_| "x".repeat(200)).collect();
    std::fs::create_dir_all(source.path().join(&deep)).unwrap();
    std::fs::write(source.path().join(&deep).join("too-long"), "x").unwrap();

    let seen = Seen::default();
    let output = seen
        .watch(client.upload_directory(source.path(), bucket("fai"), ""))
        .await
        .unwrap();
    assert_eq!(output.progress.objects_failed, 3, "{:?}", output.progress);
    assert_eq!(output.progress.objects_transferred, 40);
    assert_eq!(store.keys("fai").len(), 40);
    let failures: BTreeMap<String, String> = seen
        .outcomes
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(r, _, result)| result.clone().err().map(|e| (r.clone(), e)))
        .collect();
    assert!(failures["broken"].contains("BrokenLink"), "{failures:?}");
    assert!(failures["d01/loop"].contains("LinkLoop"), "{failures:?}");
    assert_eq!(failures.len(), 3, "{failures:?}");
    assert_eq!(output.failures.len(), 3);

    // Stop: the first failure ends it, with that error.
    let store = FaultStore::start_with_min_part_size(PART);
    let error = self::client(&store, 2)
        .upload_directory(source.path(), bucket("fai"), "")
        .objects_at_once(1)
        .failure_policy(FailurePolicy::Stop)
        .await
        .unwrap_err();
    assert!(LocalIssue::of(&error).is_some(), "{error}");
    // `broken` sorts before `d01/…`: nothing after it was started.
    assert!(
        store.keys("fai").iter().all(|k| k < &"broken".to_owned()),
        "{:?}",
        store.keys("fai")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_directory_upload_aborts_its_multipart_uploads_and_keys_never_leave_the_target()
{
    let store = FaultStore::start_with_min_part_size(PART);
    // Slow answers keep the uploads open while the test cancels.
    store.set_faults(
        FaultPlan::new(1, 1.0)
            .kind(FaultKind::SlowDown, 1)
            .operations([crate::fault_store::Op::UploadPart])
            .first_occurrences(3),
    );
    let client = client(&store, 10);
    let source = tempfile::tempdir().unwrap();
    tree(source.path(), 0, &[8 * PART, 8 * PART, 8 * PART]);
    let handle = client
        .upload_directory(source.path(), bucket("can"), "")
        .start();
    while store.open_uploads().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    handle.cancel();
    let error = handle.await.unwrap_err();
    assert!(error.is_cancelled(), "{error}");
    assert!(
        store.open_uploads().is_empty(),
        "{:?}",
        store.open_uploads()
    );

    // A key that would leave the target directory is refused; the others arrive.
    store.set_faults(FaultPlan::none());
    store.insert_object("kee", "p/ok.txt", "fine", None);
    store.insert_object("kee", "p/a/../../escape.txt", "bad", None);
    store.insert_object("kee", "p/folder/", "", None);
    let target = tempfile::tempdir().unwrap();
    let inner = target.path().join("inner");
    let seen = Seen::default();
    let output = seen
        .watch(client.download_directory(bucket("kee"), "p", &inner))
        .await
        .unwrap();
    assert_eq!(output.progress.objects_failed, 1);
    assert_eq!(std::fs::read(inner.join("ok.txt")).unwrap(), b"fine");
    assert!(!target.path().join("escape.txt").exists());
    let outcomes = seen.outcomes.lock().unwrap();
    let refused = outcomes
        .iter()
        .find(|(r, _, _)| r == "a/../../escape.txt")
        .unwrap();
    assert!(
        refused.2.as_ref().unwrap_err().contains("UnsafeKey"),
        "{refused:?}"
    );
    let marker = outcomes.iter().find(|(r, _, _)| r == "folder/").unwrap();
    assert_eq!(marker.1, Action::Skip(SkipReason::DirectoryMarker));
}

/// `copy_directory` from one bucket to another: small objects by CopyObject and
/// multipart-sized ones by UploadPartCopy, their metadata kept, a filter applied; then a
/// bucket-to-bucket sync that copies what changed and deletes what the source lacks under
/// the destination prefix only; then a copy whose part copies all fail mid-way: those
/// objects are reported failed, their multipart uploads aborted and nothing of them left at
/// the destination, the rest copied; the rerun copies only what failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bucket_to_bucket_copies_and_syncs_keep_metadata_apply_filters_and_report_failures() {
    use s3_wire_tokio::UploadSource;
    use s3_wire_tokio::s3_ops::ObjectAttributes;
    use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
    let store = FaultStore::start_with_min_part_size(PART);
    let client = client(&store, 3);
    let (src, dst) = (bucket("src"), bucket("dst"));
    let mut objects = BTreeMap::new();
    for (name, size) in [
        ("a.txt", 10),
        ("b/c.txt", 3 * 1024),
        ("big/one.bin", 3 * PART + 17),
        ("big/two.bin", 5 * PART),
        ("skip/x.txt", 5),
    ] {
        let bytes = data(size, size);
        client
            .upload(
                src.clone(),
                s3_wire_tokio::key(&format!("data/{name}")).unwrap(),
                UploadSource::bytes(bytes.clone()),
            )
            .attributes(ObjectAttributes::default().metadata("owner", name))
            .await
            .unwrap();
        objects.insert(name, bytes);
    }
    store.insert_object("dst", "copy/stale.txt", "stale", None);
    store.insert_object("dst", "copy-sibling.txt", "stays", None);
    store.clear_requests();
    let copy = || {
        client
            .copy_directory(src.clone(), "data", dst.clone(), "copy")
            .filter(|entry| !entry.relative.starts_with("skip/"))
    };
    let seen = Seen::default();
    let output = seen.watch(copy()).await.unwrap();
    assert!(output.is_success(), "{:?}", output.failures);
    assert_eq!(output.progress.objects_transferred, 4);
    for (name, bytes) in objects.iter().filter(|(n, _)| !n.starts_with("skip/")) {
        let key = format!("copy/{name}");
        assert_eq!(
            &store.object("dst", &key).unwrap().data[..],
            &bytes[..],
            "{key}"
        );
        let head = client
            .head_object(HeadObject::new(
                dst.clone(),
                s3_wire_tokio::key(&key).unwrap(),
            ))
            .await
            .unwrap();
        assert_eq!(
            head.metadata.get("owner").map(String::as_str),
            Some(*name),
            "{key}"
        );
    }
    assert!(store.object("dst", "copy/skip/x.txt").is_none());
    let part_copies = store
        .requests()
        .iter()
        .filter(|r| r.operation == Op::UploadPartCopy)
        .count();
    assert_eq!(part_copies, 4 + 5, "the two large objects by parts");

    // Sync: one changed, one gone, one new at the source; stale.txt is not under the
    // source, so the sync deletes it; the sibling outside the prefix stays.
    client
        .upload(
            src.clone(),
            s3_wire_tokio::key("data/a.txt").unwrap(),
            UploadSource::bytes("changed, longer"),
        )
        .await
        .unwrap();
    store.delete_object("src", "data/b/c.txt");
    store.insert_object("src", "data/new.txt", "new", None);
    let seen = Seen::default();
    let synced = seen
        .watch(copy().compare(Compare::SizeAndTime).delete_extraneous(true))
        .await
        .unwrap();
    assert!(synced.is_success(), "{:?}", synced.failures);
    assert_eq!(
        seen.actions(),
        BTreeMap::from([
            ("a.txt".to_owned(), Action::Copy),
            ("b/c.txt".to_owned(), Action::Delete),
            (
                "big/one.bin".to_owned(),
                Action::Skip(SkipReason::Unchanged)
            ),
            (
                "big/two.bin".to_owned(),
                Action::Skip(SkipReason::Unchanged)
            ),
            ("new.txt".to_owned(), Action::Copy),
            ("stale.txt".to_owned(), Action::Delete),
        ])
    );
    assert_eq!(
        store.keys("dst"),
        [
            "copy-sibling.txt",
            "copy/a.txt",
            "copy/big/one.bin",
            "copy/big/two.bin",
            "copy/new.txt"
        ]
    );

    // Every part copy fails: the large objects fail, the small ones are copied.
    let target = bucket("dst2");
    store.set_faults(
        FaultPlan::new(7, 1.0)
            .kind(FaultKind::InternalError, 1)
            .operations([Op::UploadPartCopy]),
    );
    let seen = Seen::default();
    let failed = seen
        .watch(client.copy_directory(src.clone(), "data", target.clone(), "copy"))
        .await
        .unwrap();
    let mut failures: Vec<String> = failed
        .failures
        .iter()
        .map(|outcome| outcome.relative.clone())
        .collect();
    failures.sort();
    assert_eq!(failures, ["big/one.bin", "big/two.bin"]);
    assert_eq!(failed.progress.objects_transferred, 3);
    assert_eq!(
        store.keys("dst2"),
        ["copy/a.txt", "copy/new.txt", "copy/skip/x.txt"]
    );
    assert_eq!(
        store.open_uploads(),
        Vec::new(),
        "the failed copies were aborted"
    );
    // The rerun copies what failed, and only that.
    store.set_faults(FaultPlan::none());
    let seen = Seen::default();
    let rerun = seen
        .watch(
            client
                .copy_directory(src.clone(), "data", target, "copy")
                .compare(Compare::SizeAndTime),
        )
        .await
        .unwrap();
    assert!(rerun.is_success(), "{:?}", rerun.failures);
    assert_eq!(rerun.progress.objects_transferred, 2);
    assert_eq!(store.keys("dst2").len(), 5);
    assert_eq!(store.signature_failures(), 0);
}

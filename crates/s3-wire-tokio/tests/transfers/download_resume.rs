//! Downloads to a file resumed after a crash: a process killed with SIGKILL mid-download
//! leaves its part file and journal beside the target, and rerunning the same download
//! fetches only the missing ranges, pinned to the journal's ETag; an object that changed in
//! between is downloaded from the start, and the result says why; a download that fails on
//! the network keeps its files for the rerun.
//!
//! The crash test re-runs this test binary as a child process (environment variables say
//! what to download where), as `recovery.rs` does for uploads.

use std::ops::Range;
use std::path::{Path, PathBuf};

use std::time::Duration;

use crate::fault_store::{FaultKind, FaultPlan, FaultStore, Op, StoreQuirks};
use crate::helpers::{CrashChild, run_until_crash};
use crate::support::{data, retry, sha256};
use s3_wire_tokio::s3_ops::{ChecksumAlgorithm, ChecksumType};
use s3_wire_tokio::transfer::DownloadBuilder;
use s3_wire_tokio::{Cleanup, Client, Verification};

const BUCKET: &str = "bucket";
/// Bytes per range.
const RANGE: u64 = 64 * 1024;
/// Ranges of the crash test's object.
const CRASH_RANGES: u64 = 32;
/// Bytes the journal must record before the child is killed.
const BYTES_BEFORE_KILL: u64 = 8 * RANGE;

/// Set in the child of the crash test: the store's endpoint.
const CHILD_ENDPOINT: &str = "S3_WIRE_TEST_DOWNLOAD_CHILD_ENDPOINT";
/// Set in the child: the target file.
const CHILD_TARGET: &str = "S3_WIRE_TEST_DOWNLOAD_CHILD_TARGET";
/// The name of the test that is the child process.
const CHILD_TEST: &str = "download_resume::crash_child_downloads_slowly_until_killed";
const CRASH_KEY: &str = "crash/download.bin";

fn download(client: &Client, key: &str, target: &Path) -> DownloadBuilder {
    client
        .download(
            s3_wire_tokio::bucket(BUCKET).unwrap(),
            s3_wire_tokio::key(key).unwrap(),
            target,
        )
        .part_size(RANGE)
        .single_request_limit(RANGE)
        .concurrency(2)
        // Ranges of one size, whatever loopback's timing: these tests count them.
        .adapt_range_size(false)
}

/// The journal beside `target`.
fn journal_of(target: &Path) -> PathBuf {
    let name = target.file_name().unwrap().to_str().unwrap();
    target.with_file_name(format!(".{name}.s3w-download.journal"))
}

/// The byte ranges the journal beside `target` records as written (none yet: empty).
fn journaled(target: &Path) -> Vec<Range<u64>> {
    std::fs::read_to_string(journal_of(target))
        .ok()
        .and_then(|text| {
            let line = text
                .lines()
                .find_map(|l| l.strip_prefix("done"))?
                .to_owned();
            Some(
                line.split_whitespace()
                    .map(|r| {
                        let (start, end) = r.split_once('-').unwrap();
                        start.parse().unwrap()..end.parse().unwrap()
                    })
                    .collect(),
            )
        })
        .unwrap_or_default()
}

fn bytes_in(ranges: &[Range<u64>]) -> u64 {
    ranges.iter().map(|r| r.end - r.start).sum()
}

/// The ranges of the ranged GETs the store answered since the last `clear_requests`.
fn fetched_ranges(store: &FaultStore) -> Vec<(Range<u64>, Option<String>)> {
    store
        .requests()
        .into_iter()
        .filter(|r| r.operation == Op::GetObject)
        .filter_map(|r| {
            let range = r.header("range")?.strip_prefix("bytes=")?.to_owned();
            let (first, last) = range.split_once('-')?;
            let range = first.parse::<u64>().ok()?..last.parse::<u64>().ok()? + 1;
            Some((range, r.header("if-match").map(str::to_owned)))
        })
        .collect()
}

/// The files left in `directory` besides `keep`.
fn leftovers(directory: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !keep.contains(&name.as_str()))
        .collect()
}

/// The child process of `a_killed_download_resumes_with_only_the_missing_ranges`: downloads
/// slowly (256 KiB/s, so 2 MiB take about 8 s) until the parent kills it. In a normal test
/// run (no environment variables) it does nothing.
#[tokio::test]
async fn crash_child_downloads_slowly_until_killed() {
    let Ok(endpoint) = std::env::var(CHILD_ENDPOINT) else {
        return;
    };
    let target = std::env::var(CHILD_TARGET).expect("target variable");
    let client = CrashChild::client(&endpoint);
    let result = download(&client, CRASH_KEY, Path::new(&target)).await;
    panic!("the child's download ended without being killed: {result:?}");
}

#[tokio::test]
async fn a_killed_download_resumes_with_only_the_missing_ranges() {
    if std::env::var(CHILD_ENDPOINT).is_ok() {
        return;
    }
    let store = FaultStore::start();
    let bytes = data(CRASH_RANGES * RANGE, 17);
    let parts = [8 * RANGE, 8 * RANGE, 8 * RANGE, 8 * RANGE];
    let stored = store.insert_multipart_object(
        BUCKET,
        CRASH_KEY,
        bytes.clone(),
        &parts,
        Some((ChecksumAlgorithm::Crc32c, ChecksumType::FullObject)),
    );
    let directory = tempfile::tempdir().unwrap();
    let target = directory.path().join("download.bin");
    let mut child = CrashChild::start(
        CHILD_TEST,
        &[
            (CHILD_ENDPOINT, store.endpoint().as_ref()),
            (CHILD_TARGET, target.as_os_str()),
        ],
        directory.path(),
    );
    // Kill it (SIGKILL) once its journal records enough bytes.
    let recorded = child
        .kill_when(|| {
            let recorded = journaled(&target);
            let ready = (bytes_in(&recorded) >= BYTES_BEFORE_KILL).then(|| recorded.to_vec());
            (ready, format!("the journal records {recorded:?}"))
        })
        .await;
    let child_output = || child.output();
    assert!(!target.exists(), "no target before the download completes");
    assert!(
        bytes_in(&recorded) < bytes.len() as u64,
        "the kill came before the end"
    );
    // Requests the kill cut short are recorded when the store notices: let it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let recorded = journaled(&target);
    store.clear_requests();

    // The same download, in-process and at full speed: it continues the child's.
    let client = store.client_builder().retry(retry(3)).build().unwrap();
    let got = download(&client, CRASH_KEY, &target)
        .await
        .unwrap_or_else(|e| panic!("resume failed: {e:?}\n{}", child_output()));
    assert_eq!(sha256(&std::fs::read(&target).unwrap()), sha256(&bytes));
    assert_eq!(got.restarted, None);
    assert!(
        got.resumed_bytes >= bytes_in(&recorded),
        "{} resumed, {recorded:?} journaled",
        got.resumed_bytes
    );
    assert!(
        matches!(got.verification, Verification::FullObject(_)),
        "the resumed bytes are verified with the rest: {:?}",
        got.verification
    );
    let fetched = fetched_ranges(&store);
    let fetched_bytes: u64 = fetched.iter().map(|(r, _)| r.end - r.start).sum();
    assert_eq!(
        fetched_bytes + got.resumed_bytes,
        bytes.len() as u64,
        "only the missing bytes were fetched: {fetched:?}"
    );
    for (range, if_match) in &fetched {
        assert_eq!(if_match.as_deref(), Some(stored.etag.as_str()), "{range:?}");
        assert!(
            recorded
                .iter()
                .all(|done| range.end <= done.start || done.end <= range.start),
            "{range:?} was journaled as written: {recorded:?}"
        );
    }
    assert_eq!(
        leftovers(
            directory.path(),
            &["download.bin", "child.stdout", "child.stderr"]
        ),
        Vec::<String>::new(),
        "the part file and journal are gone"
    );
}

/// Runs a download on a runtime of its own and "crashes" it (the runtime is shut down, so
/// nothing of it runs again) once its journal records `bytes` bytes.
fn download_and_crash(store: &FaultStore, key: &str, target: &Path, bytes: u64) {
    let (key, target) = (key.to_owned(), target.to_path_buf());
    let watched = target.clone();
    run_until_crash(
        store.client_builder(),
        move |client| download(client, &key, &target).start(),
        move || bytes_in(&journaled(&watched)) >= bytes,
    );
}

/// A crashed download of a multipart object with a composite checksum resumes part by part,
/// in both ways its parts are checked: listed with their checksums (GetObjectAttributes,
/// then ranges on the part boundaries) and read by number (`partNumber`, each answer with
/// its part's checksum, where the store lists no parts). Only the missing parts are fetched,
/// pinned to the journal's ETag; the parts on disk are checked too (the result is per part).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_download_of_parts_resumes_with_only_the_missing_parts() {
    const PART: u64 = 4 * RANGE;
    for listed in [true, false] {
        let store = FaultStore::start();
        store.set_quirks(StoreQuirks {
            no_object_attributes: !listed,
            ..StoreQuirks::default()
        });
        let bytes = data(6 * PART, 23);
        let stored = store.insert_multipart_object(
            BUCKET,
            "parts",
            bytes.clone(),
            &[PART; 6],
            Some((ChecksumAlgorithm::Crc32c, ChecksumType::Composite)),
        );
        let directory = tempfile::tempdir().unwrap();
        let target = directory.path().join("parts");
        download_and_crash(&store, "parts", &target, 2 * PART);
        let recorded = journaled(&target);
        assert!(
            recorded
                .iter()
                .all(|r| r.start % PART == 0 && (r.end % PART == 0)),
            "whole parts: {recorded:?}"
        );
        store.clear_requests();
        let client = store.client_builder().retry(retry(3)).build().unwrap();
        let got = download(&client, "parts", &target).await.unwrap();
        assert_eq!(sha256(&std::fs::read(&target).unwrap()), sha256(&bytes));
        assert_eq!(got.restarted, None, "listed: {listed}");
        assert_eq!(got.resumed_bytes, bytes_in(&recorded), "listed: {listed}");
        assert_eq!(
            got.verification,
            Verification::PerPart {
                algorithm: ChecksumAlgorithm::Crc32c,
                parts: 6
            },
            "listed: {listed}"
        );
        let attributes: Vec<_> = store
            .requests()
            .into_iter()
            .filter(|r| r.operation == Op::GetObjectAttributes)
            .map(|r| r.status)
            .collect();
        let expected = if listed { Some(200) } else { Some(501) };
        assert_eq!(attributes, [expected], "listed: {listed}");
        // The parts fetched: by range on part boundaries, or by number; none on disk.
        let gets: Vec<_> = store
            .requests()
            .into_iter()
            .filter(|r| r.operation == Op::GetObject)
            .collect();
        let mut fetched = Vec::new();
        for get in &gets {
            let part = if listed {
                assert!(!get.query.contains("partNumber"), "{get:?}");
                match get.header("range") {
                    // The opening GET, whose body is dropped: part 1 is on disk.
                    None => continue,
                    Some(range) => {
                        let first: u64 = range
                            .strip_prefix("bytes=")
                            .and_then(|r| r.split_once('-'))
                            .and_then(|(first, _)| first.parse().ok())
                            .unwrap();
                        assert_eq!(first % PART, 0, "{range}");
                        first / PART
                    }
                }
            } else {
                match get
                    .query
                    .split('&')
                    .find_map(|p| p.strip_prefix("partNumber="))
                {
                    Some(number) => number.parse::<u64>().unwrap() - 1,
                    // The opening GET, whose body is dropped.
                    None => continue,
                }
            };
            // Pinned to the ETag the journal names (the opening GET compares it).
            assert_eq!(
                get.header("if-match"),
                Some(stored.etag.as_str()),
                "{get:?}"
            );
            fetched.push(part * PART..(part + 1) * PART);
        }
        assert_eq!(
            bytes_in(&fetched) + got.resumed_bytes,
            bytes.len() as u64,
            "listed: {listed}: only the missing parts: {fetched:?} beside {recorded:?}"
        );
        for range in &fetched {
            assert!(
                recorded
                    .iter()
                    .all(|done| range.end <= done.start || done.end <= range.start),
                "{range:?} was journaled as written: {recorded:?}"
            );
        }
        assert_eq!(
            leftovers(directory.path(), &["parts"]),
            Vec::<String>::new()
        );
    }
}

/// The object changes between the crash and the rerun: nothing of the old bytes is kept,
/// the new object is downloaded whole, and the result says why it started over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_whose_object_changed_starts_over_and_says_so() {
    let store = FaultStore::start();
    let old = data(16 * RANGE, 5);
    store.insert_object(BUCKET, "changes", old, Some(ChecksumAlgorithm::Crc32));
    let directory = tempfile::tempdir().unwrap();
    let target = directory.path().join("changes");
    download_and_crash(&store, "changes", &target, 4 * RANGE);
    let new = data(12 * RANGE + 7, 6);
    store.insert_object(
        BUCKET,
        "changes",
        new.clone(),
        Some(ChecksumAlgorithm::Crc32),
    );
    store.clear_requests();
    let client = store.client_builder().retry(retry(3)).build().unwrap();
    let got = download(&client, "changes", &target).await.unwrap();
    assert_eq!(sha256(&std::fs::read(&target).unwrap()), sha256(&new));
    assert_eq!(got.resumed_bytes, 0);
    let why = got.restarted.expect("it says it started over");
    assert!(
        why.contains("the object changed") && why.contains("ETag"),
        "{why}"
    );
    let fetched: u64 = fetched_ranges(&store)
        .iter()
        .map(|(r, _)| r.end - r.start)
        .sum();
    assert_eq!(
        fetched,
        new.len() as u64 - RANGE,
        "all but the first answer's range"
    );
    assert_eq!(
        leftovers(directory.path(), &["changes"]),
        Vec::<String>::new()
    );
}

/// A download that fails on the network keeps its part file and journal, says so, and the
/// rerun continues it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_failed_by_the_network_is_kept_and_continued() {
    let store = std::sync::Arc::new(FaultStore::start());
    let bytes = data(10 * RANGE, 8);
    store.insert_object(
        BUCKET,
        "flaky",
        bytes.clone(),
        Some(ChecksumAlgorithm::Crc32),
    );
    let directory = tempfile::tempdir().unwrap();
    let target = directory.path().join("flaky");
    let client = store.client_builder().retry(retry(2)).build().unwrap();
    let faulty = store.clone();
    // After four ranges, every GET is refused.
    let error = download(&client, "flaky", &target)
        .concurrency(1)
        .on_progress(move |progress| {
            if progress.committed >= 4 * RANGE {
                faulty.set_faults(
                    FaultPlan::new(3, 1.0)
                        .kind(FaultKind::InternalError, 1)
                        .operations([Op::GetObject]),
                );
            }
        })
        .await
        .expect_err("the store refuses the rest");
    let cleanup = error.transfer().unwrap().cleanup.clone();
    assert_eq!(cleanup, Cleanup::KeptForResume(journal_of(&target)));
    assert!(
        error.to_string().contains("kept to be continued"),
        "{error}"
    );
    let kept = bytes_in(&journaled(&target));
    assert!(kept >= 4 * RANGE, "{kept}");
    assert!(!target.exists());
    // Nothing of the failed download holds its part file any more: the rerun can lock it.
    let part = directory.path().join(".flaky.s3w-download.part");
    let free = std::fs::File::open(&part).unwrap().try_lock();
    assert!(free.is_ok(), "the part file is still locked: {free:?}");

    store.set_faults(FaultPlan::none());
    let got = download(&client, "flaky", &target).await.unwrap();
    assert_eq!(sha256(&std::fs::read(&target).unwrap()), sha256(&bytes));
    assert!(got.resumed_bytes >= kept, "{} < {kept}", got.resumed_bytes);
    assert!(matches!(got.verification, Verification::FullObject(_)));
    assert_eq!(
        leftovers(directory.path(), &["flaky"]),
        Vec::<String>::new()
    );
}

/// The part file's name is predictable: a symlink planted there is never followed, and in a
/// directory everyone may write to no part file is reused; either way the download goes to
/// a temporary file of its own and succeeds.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_part_file_is_never_followed_or_reused() {
    use std::os::unix::fs::PermissionsExt;
    let store = FaultStore::start();
    let bytes = data(4 * RANGE, 9);
    store.insert_object(BUCKET, "planted", bytes.clone(), None);
    let client = store.client_builder().build().unwrap();
    let directory = tempfile::tempdir().unwrap();
    let target = directory.path().join("planted");
    let victim = directory.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let part = directory.path().join(".planted.s3w-download.part");
    std::os::unix::fs::symlink(&victim, &part).unwrap();
    let got = download(&client, "planted", &target).await.unwrap();
    assert_eq!(got.resumed_bytes, 0);
    assert_eq!(sha256(&std::fs::read(&target).unwrap()), sha256(&bytes));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        std::fs::symlink_metadata(&part)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // Everyone may write here: a part file and journal found are anybody's, never reused
    // (these are a real crashed download's, moved there).
    let private = tempfile::tempdir().unwrap();
    let crashed = private.path().join("planted");
    download_and_crash(&store, "planted", &crashed, 2 * RANGE);
    let shared = tempfile::tempdir().unwrap();
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let target = shared.path().join("planted");
    let planted_part = shared.path().join(".planted.s3w-download.part");
    std::fs::rename(
        private.path().join(".planted.s3w-download.part"),
        &planted_part,
    )
    .unwrap();
    std::fs::rename(journal_of(&crashed), journal_of(&target)).unwrap();
    let got = download(&client, "planted", &target).await.unwrap();
    assert_eq!(got.resumed_bytes, 0, "nothing planted is reused");
    assert_eq!(sha256(&std::fs::read(&target).unwrap()), sha256(&bytes));
    assert!(
        planted_part.exists() && journal_of(&target).exists(),
        "nor touched"
    );
}

//! Managed transfers against the fault store: a seeded campaign of hundreds of uploads (every
//! source kind), downloads (to files and writers, from single-part, full-object and composite
//! multipart objects) and copies, with faults injected into their requests — 503 SlowDown,
//! 500, connection resets before and after the store acted, truncated and stalled answers,
//! stalled uploads and errors inside a 200. Each transfer either stores (or delivers) exactly
//! the source's bytes, or fails with a typed error and leaves no open multipart upload; the
//! progress invariants hold at every observation and the memory budget is never exceeded.
//!
//! The other tests here pin down single behaviours: ranges pinned to the first response's
//! ETag, per-part checksums of composite objects, ambiguous completions, the stale-upload
//! sweep, a hard memory cap shared by concurrent transfers.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::fault_store::{FaultKind, FaultPlan, FaultStore, Op, StoreQuirks};
use crate::helpers::{SourceKind, collecting_writer, part_limits};
use crate::support::{data, sha256};
use bytes::Bytes;
use s3_wire_tokio::s3_ops::ops::copy_source::CopySource;
use s3_wire_tokio::s3_ops::{BucketName, ChecksumAlgorithm, ChecksumType, ObjectKey};
use s3_wire_tokio::transfer::UploadBuilder;
use s3_wire_tokio::{
    Client, Destination, ErrorKind, NotVerified, PayloadSigning, Progress, RetryConfig,
    TransferErrorKind, UploadSource, Verification,
};

const PART: u64 = 16 * 1024;
const BUCKET: &str = "campaign";

fn bucket() -> BucketName {
    BucketName::new(BUCKET).unwrap()
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::new(name).unwrap()
}

/// Retries as in the other tests, with a budget that the campaign's many retries never
/// exhaust.
fn retry(max_attempts: u32) -> RetryConfig {
    crate::support::retry(max_attempts).with_budget_capacity(1_000_000)
}

fn store() -> FaultStore {
    FaultStore::start_with_min_part_size(PART)
}

/// splitmix64: the campaign's own seeded choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Every progress snapshot a transfer reported, checked as it arrives.
#[derive(Default)]
struct Observed {
    snapshots: usize,
    last: Progress,
    violations: Vec<String>,
}

fn watch(observed: &Arc<Mutex<Observed>>) -> impl Fn(Progress) + Send + Sync + 'static {
    let observed = observed.clone();
    move |progress: Progress| {
        let mut seen = observed.lock().unwrap();
        if progress.committed < seen.last.committed {
            let message = format!("committed went down: {:?} -> {progress:?}", seen.last);
            seen.violations.push(message);
        }
        if let Some(total) = progress.total
            && progress.committed > total
        {
            seen.violations
                .push(format!("committed above total: {progress:?}"));
        }
        seen.snapshots += 1;
        seen.last = progress;
    }
}

#[derive(Debug, Clone, Copy)]
enum Transfer {
    Upload(SourceKind),
    DownloadToFile,
    DownloadToWriter,
    Copy,
}

/// The options of every campaign transfer, on its upload, download or copy builder:
/// `PART`-byte parts, three at a time, one request up to two parts, progress watched.
macro_rules! campaign_options {
    ($transfer:expr, $observed:expr) => {
        $transfer
            .part_size(PART)
            .concurrency(3)
            .single_request_limit(PART * 2)
            .on_progress(watch($observed))
    };
}

/// What one campaign transfer ended as.
enum Ended {
    Stored,
    Failed(String),
}

/// Runs transfer `index` of the campaign and checks its outcome. Returns how it ended and
/// the progress snapshots it checked, and panics on anything that is neither exact success
/// nor a typed failure.
async fn run_one(
    client: Client,
    store: Arc<FaultStore>,
    directory: Arc<tempfile::TempDir>,
    index: u64,
    transfer: Transfer,
    len: u64,
) -> (Ended, usize) {
    let name = format!("t{index}");
    let observed = Arc::new(Mutex::new(Observed::default()));
    let bytes = data(len, index + 1);
    let (result, expected_total) = match transfer {
        Transfer::Upload(kind) => {
            let source = kind.source(&bytes, directory.path(), &name, 7_001);
            let result = campaign_options!(client.upload(bucket(), key(&name), source), &observed)
                .part_limits(part_limits(PART))
                .await
                .map(|stored| stored.size);
            (result, len)
        }
        Transfer::DownloadToFile | Transfer::DownloadToWriter | Transfer::Copy => {
            // The object to read, put there directly (no faults on the way in).
            let source_key = format!("{name}-source");
            let part_sizes: Vec<u64> = (0..len.div_ceil(PART))
                .map(|i| PART.min(len - i * PART))
                .collect();
            match index % 3 {
                0 => store.insert_object(
                    BUCKET,
                    &source_key,
                    bytes.clone(),
                    Some(ChecksumAlgorithm::Crc64Nvme),
                ),
                1 if len > PART => store.insert_multipart_object(
                    BUCKET,
                    &source_key,
                    bytes.clone(),
                    &part_sizes,
                    Some((ChecksumAlgorithm::Crc32c, ChecksumType::FullObject)),
                ),
                _ if len > PART => store.insert_multipart_object(
                    BUCKET,
                    &source_key,
                    bytes.clone(),
                    &part_sizes,
                    Some((ChecksumAlgorithm::Sha256, ChecksumType::Composite)),
                ),
                _ => store.insert_object(
                    BUCKET,
                    &source_key,
                    bytes.clone(),
                    Some(ChecksumAlgorithm::Sha256),
                ),
            };
            let result = match transfer {
                Transfer::DownloadToFile => {
                    let path = directory.path().join(&name);
                    let download = client.download(bucket(), key(&source_key), path.as_path());
                    let got = campaign_options!(download, &observed).await;
                    match got {
                        Ok(got) => {
                            let on_disk = std::fs::read(&path).unwrap();
                            assert_eq!(
                                sha256(&on_disk),
                                sha256(&bytes),
                                "{name}: downloaded bytes"
                            );
                            Ok(got.size)
                        }
                        Err(error) => {
                            assert!(!path.exists(), "{name}: a failed download left its target");
                            Err(error)
                        }
                    }
                }
                Transfer::DownloadToWriter => {
                    let (writer, collected) = collecting_writer(64 * 1024);
                    let download = client.download(bucket(), key(&source_key), writer);
                    let got = campaign_options!(download, &observed).await;
                    let all = collected.await.unwrap();
                    if got.is_ok() {
                        assert_eq!(sha256(&all), sha256(&bytes), "{name}: bytes to the writer");
                    }
                    got.map(|got| got.size)
                }
                _ => {
                    let source = CopySource::new(bucket(), key(&source_key));
                    campaign_options!(client.copy(source, bucket(), key(&name)), &observed)
                        .part_limits(part_limits(PART))
                        .await
                        .map(|copied| copied.size)
                }
            };
            (result, len)
        }
    };
    let seen = observed.lock().unwrap();
    assert!(
        seen.violations.is_empty(),
        "{name} {transfer:?}: {:?}",
        seen.violations
    );
    match result {
        Ok(size) => {
            assert_eq!(size, expected_total, "{name}");
            assert_eq!(
                seen.last.committed, len,
                "{name}: committed equals the total at success"
            );
            assert_eq!(
                seen.last.in_flight, 0,
                "{name}: nothing in flight at success"
            );
            if matches!(transfer, Transfer::Upload(_) | Transfer::Copy) {
                let stored = store.object(BUCKET, &name).expect("the object exists");
                assert_eq!(
                    sha256(&stored.data),
                    sha256(&bytes),
                    "{name} {transfer:?}: stored bytes"
                );
            }
            (Ended::Stored, seen.snapshots)
        }
        Err(error) => {
            // A typed failure: a request's own kind, or the transfer's, never a panic; and it
            // says what it cleaned up.
            assert!(
                error.transfer().is_some(),
                "{name}: {error:?} says nothing of its cleanup"
            );
            // A request's failure says how many attempts that request made.
            let from_a_request = matches!(
                error.kind(),
                ErrorKind::Service(_)
                    | ErrorKind::Transport(_)
                    | ErrorKind::Timeout(_)
                    | ErrorKind::BodyLength { .. }
                    | ErrorKind::Transfer(TransferErrorKind::ObjectChanged)
            );
            assert!(
                !from_a_request || error.attempts() >= 1,
                "{name}: {error:?} does not count its attempts"
            );
            let kind = match error.kind() {
                ErrorKind::Service(service) => format!("Service({})", service.code),
                ErrorKind::Transport(kind) => format!("Transport({kind:?})"),
                ErrorKind::Timeout(_) => "Timeout".to_owned(),
                ErrorKind::BodyLength { .. } => "BodyLength".to_owned(),
                ErrorKind::Transfer(kind) => format!("Transfer({kind:?})"),
                other => format!("{other:?}"),
            };
            if matches!(transfer, Transfer::Upload(_) | Transfer::Copy) {
                // Nothing half-made: either no object, or (a lost answer after success that
                // could not be resolved) exactly the source's bytes.
                match store.object(BUCKET, &name) {
                    Some(stored) => assert_eq!(
                        sha256(&stored.data),
                        sha256(&bytes),
                        "{name}: partial object"
                    ),
                    // Every byte committed means the object exists.
                    None => assert!(
                        len == 0 || seen.last.committed < len,
                        "{name} {transfer:?}: no object, yet every byte committed: {:?}",
                        seen.last
                    ),
                }
            }
            (Ended::Failed(kind), seen.snapshots)
        }
    }
}

/// A campaign's results.
struct Campaign {
    transfers: u64,
    kinds: BTreeMap<String, u64>,
    ended: BTreeMap<String, u64>,
    /// Progress snapshots checked (monotonic, within the total) over all transfers.
    snapshots: u64,
}

impl Campaign {
    fn stored(&self) -> u64 {
        self.ended.get("stored").copied().unwrap_or(0)
    }
}

/// Runs `transfers` seeded transfers against `store` with `client`, six at a time.
async fn campaign(
    client: &Client,
    store: &Arc<FaultStore>,
    seed: u64,
    first: u64,
    transfers: u64,
) -> Campaign {
    let directory = Arc::new(tempfile::tempdir().unwrap());
    let mut rng = Rng(seed);
    let mut tasks = tokio::task::JoinSet::new();
    let mut result = Campaign {
        transfers,
        kinds: BTreeMap::new(),
        ended: BTreeMap::new(),
        snapshots: 0,
    };
    for index in first..first + transfers {
        let transfer = match rng.below(10) {
            0..=5 => Transfer::Upload(SourceKind::ALL[rng.below(6) as usize]),
            6 => Transfer::DownloadToFile,
            7 => Transfer::DownloadToWriter,
            _ => Transfer::Copy,
        };
        // Boundaries and a few parts: 0, 1, part − 1, part, part + 1, ..., 7.5 parts.
        let len = match rng.below(8) {
            0 => [0, 1, PART - 1, PART, PART + 1][rng.below(5) as usize],
            _ => rng.below(PART * 15 / 2) + 1,
        };
        *result.kinds.entry(format!("{transfer:?}")).or_default() += 1;
        tasks.spawn(run_one(
            client.clone(),
            store.clone(),
            directory.clone(),
            index,
            transfer,
            len,
        ));
        while tasks.len() >= 6 {
            result.record(tasks.join_next().await.unwrap().unwrap());
        }
    }
    while let Some(done) = tasks.join_next().await {
        result.record(done.unwrap());
    }
    // No download to a file, stored or failed, left a temporary file of its own beside its
    // target (a failed parallel download keeps its resumable part file and journal, named
    // `.NAME.s3w-download.*`, on purpose: `Cleanup::KeptForResume`).
    let temporaries: Vec<_> = std::fs::read_dir(directory.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".s3w-") && !name.contains(".s3w-download."))
        .collect();
    assert!(
        temporaries.is_empty(),
        "temporary files left: {temporaries:?}"
    );
    result
}

pub(crate) fn faulty_plan(seed: u64, probability: f64) -> FaultPlan {
    let mut plan = FaultPlan::new(seed, probability);
    for (kind, weight) in [
        (FaultKind::SlowDown, 4),
        (FaultKind::InternalError, 3),
        (FaultKind::ResetBeforeApply, 3),
        (FaultKind::ResetAfterApply, 3),
        (FaultKind::TruncatedResponse, 3),
        (FaultKind::StalledResponse, 1),
        (FaultKind::StalledRequest, 1),
        (FaultKind::ErrorIn200, 3),
    ] {
        plan = plan.kind(kind, weight);
    }
    plan
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seeded_fault_campaign_of_800_transfers_stores_exact_bytes_or_fails_cleanly() {
    const MEMORY: u64 = 8 * PART;
    let store = Arc::new(store());
    let client_with = |attempts| {
        store
            .client_builder()
            .retry(retry(attempts))
            .stall_timeout(Duration::from_millis(800))
            .transfer_memory(MEMORY)
            .build()
            .unwrap()
    };
    const GENTLE: f64 = 0.1;
    const HARSH: f64 = 0.3;
    // Phase 1: 10% of requests fail, five attempts each: everything gets through.
    store.set_faults(faulty_plan(0x5EED_2026, GENTLE));
    let client = client_with(5);
    let gentle = campaign(&client, &store, 7, 0, 600).await;
    let gentle_faults: u64 = store.fault_counts().values().sum();
    // Phase 2: 30% of requests fail, two attempts each: many transfers fail, and each must
    // fail cleanly.
    store.set_faults(faulty_plan(0xBAD_5EED, HARSH));
    let harsh_client = client_with(2);
    let harsh = campaign(&harsh_client, &store, 11, 600, 200).await;
    let leaked = store.open_uploads();
    let faults = store.fault_counts();
    let requests: u64 = store.request_counts().values().sum();
    for (name, phase, client) in [
        ("gentle", &gentle, &client),
        ("harsh", &harsh, &harsh_client),
    ] {
        let memory = client.transfer_memory();
        println!(
            "campaign {name}: {} transfers ({:?}); {} succeeded, {} failed with typed errors \
             ({:?}); memory high-water {} of {MEMORY} bytes",
            phase.transfers,
            phase.kinds,
            phase.stored(),
            phase.transfers - phase.stored(),
            phase.ended,
            memory.high_water,
        );
        assert!(memory.high_water <= MEMORY, "{memory:?}");
        assert_eq!(memory.in_use, 0, "{memory:?}");
    }
    println!(
        "campaign: {} faults injected ({faults:?}; {gentle_faults} in the gentle phase) in \
         {requests} requests; leaked uploads {}; signature failures {}",
        faults.values().sum::<u64>(),
        leaked.len(),
        store.signature_failures(),
    );
    assert!(leaked.is_empty(), "open uploads left behind: {leaked:?}");
    assert_eq!(store.signature_failures(), 0);
    assert!(
        gentle_faults >= 300,
        "the gentle phase injects enough faults: {faults:?}"
    );
    assert_eq!(
        gentle.stored(),
        gentle.transfers,
        "five attempts get through: {:?}",
        gentle.ended
    );
    assert!(
        harsh.stored() < harsh.transfers && harsh.stored() > 0,
        "the harsh phase has both outcomes: {:?}",
        harsh.ended
    );
    if std::env::var_os(WRITE_CAMPAIGN_VAR).is_some() {
        let phases = [
            Phase {
                name: "gentle",
                probability: GENTLE,
                attempts: 5,
                results: &gentle,
                memory: client.transfer_memory(),
            },
            Phase {
                name: "harsh",
                probability: HARSH,
                attempts: 2,
                results: &harsh,
                memory: harsh_client.transfer_memory(),
            },
        ];
        write_campaign_report(&phases, &faults, requests, store.signature_failures());
    }
}

impl Campaign {
    fn record(&mut self, (end, snapshots): (Ended, usize)) {
        let label = match end {
            Ended::Stored => "stored".to_owned(),
            Ended::Failed(kind) => kind,
        };
        *self.ended.entry(label).or_default() += 1;
        self.snapshots += snapshots as u64;
    }
}

/// The variable that makes the campaign write its counts into the file the README and
/// docs/security.md quote.
const WRITE_CAMPAIGN_VAR: &str = "S3W_WRITE_CAMPAIGN";

/// One phase of the campaign as the report shows it.
struct Phase<'a> {
    name: &'a str,
    probability: f64,
    attempts: u32,
    results: &'a Campaign,
    memory: s3_wire_tokio::transfer::MemoryUsage,
}

/// Writes `measurements/transfer-campaign.md` from a campaign that passed every check.
fn write_campaign_report(
    phases: &[Phase<'_>],
    faults: &BTreeMap<FaultKind, u64>,
    requests: u64,
    signature_failures: u64,
) {
    let total_faults: u64 = faults.values().sum();
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line("# The seeded fault campaign of the managed transfers".into());
    line(String::new());
    line(format!(
        "Written by the test itself (`tests/transfers/faults.rs`, \
         `a_seeded_fault_campaign_of_800_transfers_stores_exact_bytes_or_fails_cleanly`) \
         after every check passed, {}; load average {} at the end (a debug build, shared).",
        crate::helpers::measurement_context(),
        crate::helpers::load_average(),
    ));
    line(String::new());
    line("```sh".into());
    line(format!(
        "{WRITE_CAMPAIGN_VAR}=1 cargo test -p s3-wire-tokio --test transfers a_seeded -- --nocapture"
    ));
    line("```".into());
    line(String::new());
    line(
        "Uploads (from files, bytes, readers and streams of known and unknown length), \
         downloads (to files and writers, of single-part, full-object and composite \
         multipart objects) and copies, six at a time, against the fault store (a stateful \
         S3 on loopback that verifies every signature and checksum), with faults injected \
         into their requests. Every success is compared byte for byte with its source; every \
         failure must be typed, say what it cleaned up and count its request's attempts; every \
         progress snapshot must be monotonic and within the total; the memory budget must \
         hold. Any other outcome fails the test, so a written file means none happened."
            .into(),
    );
    line(String::new());
    line("| phase | fault probability | attempts per request | transfers | stored exactly | failed with a typed error | failures by kind | memory high-water / budget |".into());
    line("|---|---:|---:|---:|---:|---:|---|---|".into());
    for phase in phases {
        let stored = phase.results.stored();
        let failures: Vec<String> = phase
            .results
            .ended
            .iter()
            .filter(|(kind, _)| kind.as_str() != "stored")
            .map(|(kind, count)| format!("{kind} {count}"))
            .collect();
        line(format!(
            "| {} | {} | {} | {} | {stored} | {} | {} | {} / {} bytes |",
            phase.name,
            phase.probability,
            phase.attempts,
            phase.results.transfers,
            phase.results.transfers - stored,
            if failures.is_empty() {
                "—".to_owned()
            } else {
                failures.join(", ")
            },
            phase.memory.high_water,
            phase.memory.capacity,
        ));
    }
    line(String::new());
    line("| phase | transfers by kind |".into());
    line("|---|---|".into());
    for phase in phases {
        let kinds: Vec<String> = phase
            .results
            .kinds
            .iter()
            .map(|(kind, count)| format!("{kind} {count}"))
            .collect();
        line(format!("| {} | {} |", phase.name, kinds.join(", ")));
    }
    line(String::new());
    let by_kind: Vec<String> = faults
        .iter()
        .map(|(kind, n)| format!("{kind:?} {n}"))
        .collect();
    let snapshots: u64 = phases.iter().map(|p| p.results.snapshots).sum();
    let transfers: u64 = phases.iter().map(|p| p.results.transfers).sum();
    line(format!(
        "In all: {transfers} transfers, {requests} requests, {total_faults} faults injected \
         ({}); wrong successes 0; open multipart uploads left behind 0; signature failures \
         {signature_failures}; progress snapshots checked {snapshots}, violations 0.",
        by_kind.join(", ")
    ));
    crate::helpers::write_measurement("transfer-campaign.md", &out);
}

/// A store that applies the first `op` but loses its answer (the connection is reset), and
/// a client of it with three attempts.
fn losing_the_first_answer_to(op: Op) -> (FaultStore, Client) {
    let store = store();
    store.set_faults(FaultPlan::first_try(FaultKind::ResetAfterApply, [op]));
    let client = store.client_builder().retry(retry(3)).build().unwrap();
    (store, client)
}

/// A multipart upload of `bytes` to `name`, whatever their size, in `PART`-byte parts.
fn multipart_upload(client: &Client, name: &str, bytes: Bytes) -> UploadBuilder {
    client
        .upload(bucket(), key(name), UploadSource::bytes(bytes))
        .part_size(PART)
        .part_limits(part_limits(PART))
        .single_request_limit(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_complete_answer_is_resolved_from_the_stored_object() {
    let (store, client) = losing_the_first_answer_to(Op::CompleteMultipartUpload);
    let bytes = data(PART * 3, 1);
    let stored = multipart_upload(&client, "lost-complete", bytes.clone())
        .await
        .expect("completed although the answer was lost");
    assert_eq!(stored.parts, Some(3));
    assert!(
        matches!(stored.verification, Verification::FullObject(_)),
        "{stored:?}"
    );
    let counts = store.request_counts();
    // The retry found NoSuchUpload; a HEAD showed the object is ours; nothing was aborted.
    assert_eq!(counts.get(&Op::CompleteMultipartUpload), Some(&2));
    assert_eq!(counts.get(&Op::HeadObject), Some(&1));
    assert_eq!(counts.get(&Op::AbortMultipartUpload), None);
    assert_eq!(
        sha256(&store.object(BUCKET, "lost-complete").unwrap().data),
        sha256(&bytes)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_create_answer_costs_no_orphan_upload() {
    // A dropped connection before the store acted, after it acted, and a cut answer: the
    // create is retried each time, and an upload the store made for a lost answer is
    // found and aborted.
    for (fault, orphans) in [
        (FaultKind::ResetBeforeApply, 0),
        (FaultKind::ResetAfterApply, 1),
        (FaultKind::TruncatedResponse, 1),
    ] {
        let store = store();
        store.set_faults(FaultPlan::first_try(fault, [Op::CreateMultipartUpload]));
        let client = store.client_builder().retry(retry(3)).build().unwrap();
        let bytes = data(PART * 2, 2);
        let stored = multipart_upload(&client, "lost-create", bytes.clone())
            .await
            .unwrap_or_else(|e| panic!("{fault:?}: the retried create went on: {e:?}"));
        assert_eq!(stored.parts, Some(2), "{fault:?}");
        assert_eq!(stored.possible_orphan, None, "{fault:?}");
        assert_eq!(store.object(BUCKET, "lost-create").unwrap().data, bytes);
        let counts = store.request_counts();
        assert_eq!(
            counts.get(&Op::CreateMultipartUpload),
            Some(&2),
            "{fault:?}"
        );
        assert_eq!(
            counts.get(&Op::AbortMultipartUpload).copied().unwrap_or(0),
            orphans,
            "{fault:?}"
        );
        assert!(
            store.open_uploads().is_empty(),
            "{fault:?}: {:?}",
            store.open_uploads()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_range_is_pinned_to_the_first_answer_and_a_replaced_object_fails_the_download() {
    let store = store();
    let client = store.client_builder().retry(retry(2)).build().unwrap();
    let bytes = data(PART * 6, 3);
    store.insert_object(
        BUCKET,
        "pinned",
        bytes.clone(),
        Some(ChecksumAlgorithm::Crc64Nvme),
    );
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("pinned");
    let got = client
        .download(bucket(), key("pinned"), path.as_path())
        .part_size(PART)
        .single_request_limit(PART)
        .adapt_range_size(false)
        .await
        .unwrap();
    assert_eq!(got.requests, 6);
    assert!(
        matches!(got.verification, Verification::FullObject(_)),
        "{got:?}"
    );
    let etag = got.etag.unwrap();
    let gets: Vec<_> = store
        .requests()
        .into_iter()
        .filter(|r| r.operation == Op::GetObject)
        .collect();
    assert_eq!(gets.len(), 6);
    for get in &gets[1..] {
        assert_eq!(get.header("if-match"), Some(etag.as_str()), "{get:?}");
        assert!(get.header("range").is_some(), "{get:?}");
    }

    // The object is replaced while the download runs (after its first answer): no range of
    // the new object is accepted and nothing is left at the target.
    std::fs::write(&path, b"previous contents").unwrap();
    store.clear_requests();
    let replaced = Arc::new(store);
    let replacer = replaced.clone();
    let client2 = client.clone();
    let download = client2
        .download(bucket(), key("pinned"), path.as_path())
        .part_size(PART)
        .concurrency(1)
        .single_request_limit(PART)
        .on_progress(move |progress| {
            if progress.committed >= PART && progress.committed < 2 * PART {
                replacer.insert_object(BUCKET, "pinned", data(PART * 6, 4), None);
            }
        })
        .await;
    let error = download.expect_err("the object changed");
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Transfer(TransferErrorKind::ObjectChanged)
        ),
        "{error:?}"
    );
    // The range whose GET found the change, with that GET's attempts.
    assert_eq!(error.attempts(), 1, "{error:?}");
    let failure = error.transfer().unwrap();
    assert!(
        failure
            .range
            .as_ref()
            .is_some_and(|r| r.start >= PART && r.end - r.start == PART),
        "{error:?}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"previous contents",
        "the target is untouched"
    );
    assert_eq!(
        std::fs::read_dir(directory.path()).unwrap().count(),
        1,
        "no temporary file is left"
    );
}

/// An error that ends a transfer carries the attempts of the request that failed and the
/// part or range it carried: an upload's part refused twice, a download's range refused
/// twice (after the first answer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_part_or_range_names_itself_and_its_attempts() {
    let store = Arc::new(store());
    let client = store.client_builder().retry(retry(2)).build().unwrap();
    let bytes = data(PART * 3, 31);
    store.set_faults(
        FaultPlan::new(1, 1.0)
            .kind(FaultKind::InternalError, 1)
            .operations([Op::UploadPart]),
    );
    let error = client
        .upload(bucket(), key("parts"), UploadSource::bytes(bytes.clone()))
        .part_size(PART)
        .concurrency(1)
        .single_request_limit(PART)
        .part_limits(part_limits(PART))
        .await
        .expect_err("every part is refused");
    assert_eq!(error.attempts(), 2, "{error:?}");
    let failure = error.transfer().unwrap();
    assert_eq!(failure.part, Some(1), "{error:?}");
    assert_eq!(failure.range, Some(0..PART), "{error:?}");
    assert!(
        error
            .to_string()
            .contains(&format!("in part 1 (bytes 0..{PART})")),
        "{error}"
    );

    store.set_faults(FaultPlan::none());
    store.insert_object(BUCKET, "ranges", bytes, None);
    let faulty = store.clone();
    let error = client
        .download(
            bucket(),
            key("ranges"),
            Destination::writer(tokio::io::sink()),
        )
        .part_size(PART)
        .concurrency(1)
        .single_request_limit(PART)
        .on_progress(move |progress| {
            // After the first answer, every GET is refused.
            if progress.total.is_some() && progress.in_flight == 0 && progress.committed == 0 {
                faulty.set_faults(
                    FaultPlan::new(2, 1.0)
                        .kind(FaultKind::InternalError, 1)
                        .operations([Op::GetObject]),
                );
            }
        })
        .await
        .expect_err("every range is refused");
    assert_eq!(error.attempts(), 2, "{error:?}");
    let failure = error.transfer().unwrap();
    assert_eq!(failure.part, None);
    assert_eq!(failure.range, Some(PART..2 * PART), "{error:?}");
}

/// A download whose bytes arrive whole but fail the object's checksum (a bit flipped at
/// rest, found only when the range CRCs are combined or the whole object hashed at the end)
/// never reports all its bytes committed: the last range is committed with the verdict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_that_fails_its_final_check_never_commits_every_byte() {
    let store = store();
    let client = store.client_builder().retry(retry(2)).build().unwrap();
    let bytes = data(PART * 4, 21);
    let parts = [PART; 4];
    store.insert_multipart_object(
        BUCKET,
        "full-crc",
        bytes.clone(),
        &parts,
        Some((ChecksumAlgorithm::Crc32c, ChecksumType::FullObject)),
    );
    store.insert_object(
        BUCKET,
        "sha",
        bytes.clone(),
        Some(ChecksumAlgorithm::Sha256),
    );
    let directory = tempfile::tempdir().unwrap();
    for name in ["full-crc", "sha"] {
        store.corrupt(BUCKET, name, (PART * 3 + 7) as usize);
        for to_file in [true, false] {
            let case = format!("{name}, to a file: {to_file}");
            let observed = Arc::new(Mutex::new(Observed::default()));
            let path = directory.path().join(name);
            let download = |destination: s3_wire_tokio::Destination| {
                client
                    .download(bucket(), key(name), destination)
                    .part_size(PART)
                    .single_request_limit(PART)
                    .on_progress(watch(&observed))
                    .start()
            };
            let (handle, collected) = if to_file {
                (download(path.as_path().into()), None)
            } else {
                let (writer, collected) = collecting_writer(1 << 20);
                (download(writer), Some(collected))
            };
            let error = handle.await.expect_err(&case);
            assert!(
                matches!(
                    error.kind(),
                    ErrorKind::Operation(s3_wire_tokio::s3_ops::Error::ChecksumMismatch { .. })
                ),
                "{case}: {error:?}"
            );
            if let Some(collected) = collected {
                assert_eq!(collected.await.unwrap().len(), bytes.len(), "{case}");
            }
            let seen = observed.lock().unwrap();
            assert!(seen.violations.is_empty(), "{case}: {:?}", seen.violations);
            assert!(
                seen.last.committed < bytes.len() as u64,
                "{case}: {:?}",
                seen.last
            );
            assert_eq!(seen.last.in_flight, 0, "{case}: {:?}", seen.last);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn composite_objects_are_verified_part_by_part_and_full_object_ones_by_combined_crcs() {
    let store = store();
    let client = store.client_builder().retry(retry(2)).build().unwrap();
    let bytes = data(PART * 4 + 100, 5);
    let sizes = [PART, PART, PART, PART, 100];
    store.insert_multipart_object(
        BUCKET,
        "composite",
        bytes.clone(),
        &sizes,
        Some((ChecksumAlgorithm::Sha256, ChecksumType::Composite)),
    );
    store.insert_multipart_object(
        BUCKET,
        "full",
        bytes.clone(),
        &sizes,
        Some((ChecksumAlgorithm::Crc64Nvme, ChecksumType::FullObject)),
    );
    // Where the store lists the parts' checksums (GetObjectAttributes), the parts are read
    // by range on their boundaries, the first from the opening GET; where it does not, by
    // number, each answer with its part's checksum.
    for listed in [true, false] {
        store.set_quirks(StoreQuirks {
            no_object_attributes: !listed,
            ..StoreQuirks::default()
        });
        store.clear_requests();
        let (writer, reading) = collecting_writer(1 << 20);
        let got = client
            .download(bucket(), key("composite"), writer)
            .part_size(PART)
            .single_request_limit(PART)
            .await
            .unwrap();
        assert_eq!(reading.await.unwrap(), bytes);
        assert_eq!(
            got.verification,
            Verification::PerPart {
                algorithm: ChecksumAlgorithm::Sha256,
                parts: 5
            },
            "listed: {listed}"
        );
        let gets: Vec<_> = store
            .requests()
            .into_iter()
            .filter(|r| r.operation == Op::GetObject)
            .collect();
        let by_number = gets
            .iter()
            .filter(|r| r.query.contains("partNumber"))
            .count();
        let ranged = gets.iter().filter(|r| r.header("range").is_some()).count();
        let attributes = store
            .request_counts()
            .get(&Op::GetObjectAttributes)
            .copied();
        if listed {
            assert_eq!((by_number, ranged, gets.len()), (0, 4, 5), "{gets:?}");
            assert!(attributes.is_some_and(|n| n >= 1));
        } else {
            assert_eq!(
                by_number, 5,
                "every part fetched by number, with its checksum"
            );
        }
    }
    store.set_quirks(StoreQuirks::default());

    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("full");
    let got = client
        .download(bucket(), key("full"), path.as_path())
        .part_size(PART * 2)
        .single_request_limit(PART)
        .await
        .unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert!(
        matches!(got.verification, Verification::FullObject(c) if c.algorithm() == ChecksumAlgorithm::Crc64Nvme)
    );

    // Without checksums, the result says so.
    store.insert_object(BUCKET, "plain", bytes.clone(), None);
    let got = client
        .download(
            bucket(),
            key("plain"),
            directory.path().join("plain").as_path(),
        )
        .part_size(PART)
        .single_request_limit(PART)
        .await
        .unwrap();
    assert_eq!(
        got.verification,
        Verification::NotVerified(NotVerified::StoreSentNone)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_uploads_are_swept_and_young_ones_kept() {
    let store = store();
    let client = store.client_builder().build().unwrap();
    use s3_wire_tokio::s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
    for name in ["logs/a", "logs/b", "other/c"] {
        client
            .create_multipart_upload(CreateMultipartUpload::new(bucket(), key(name)))
            .await
            .unwrap();
    }
    store.age_uploads(Duration::from_secs(3 * 3600));
    client
        .create_multipart_upload(CreateMultipartUpload::new(bucket(), key("logs/young")))
        .await
        .unwrap();
    let swept = client
        .abort_stale_uploads(&bucket(), "logs/", Duration::from_secs(3600))
        .await
        .unwrap();
    let mut aborted: Vec<_> = swept.aborted.iter().map(|u| u.key.clone()).collect();
    aborted.sort();
    assert_eq!(aborted, ["logs/a", "logs/b"]);
    assert_eq!(swept.kept, 1);
    assert!(swept.failed.is_empty());
    let mut open: Vec<_> = store.open_uploads().into_iter().map(|u| u.key).collect();
    open.sort();
    assert_eq!(open, ["logs/young", "other/c"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_transfers_never_hold_more_than_the_client_budget() {
    const MEMORY: u64 = 3 * PART;
    let store = store();
    let client = store
        .client_builder()
        .transfer_memory(MEMORY)
        .build()
        .unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..8u64 {
        let client = client.clone();
        let bytes = data(PART * 6, 100 + index);
        tasks.spawn(async move {
            client
                .upload(
                    bucket(),
                    key(&format!("budget/{index}")),
                    UploadSource::stream(
                        crate::support::Chunks(
                            bytes.chunks(5_000).map(Bytes::copy_from_slice).collect(),
                        ),
                        None,
                    ),
                )
                .part_size(PART)
                .concurrency(4)
                .part_limits(part_limits(PART))
                .single_request_limit(PART)
                .await
                .map(|stored| stored.size)
        });
    }
    while let Some(done) = tasks.join_next().await {
        assert_eq!(done.unwrap().unwrap(), PART * 6);
    }
    let memory = client.transfer_memory();
    assert!(memory.high_water <= MEMORY, "{memory:?}");
    assert!(
        memory.high_water > PART,
        "parts were held concurrently: {memory:?}"
    );
    assert_eq!(memory.in_use, 0);
    // A part larger than the whole budget is refused before anything is sent.
    let error = client
        .upload(
            bucket(),
            key("budget/too-large"),
            UploadSource::reader(std::io::Cursor::new(data(PART * 8, 9)), None),
        )
        .part_size(PART * 4)
        .part_limits(part_limits(PART))
        .single_request_limit(PART)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Transfer(TransferErrorKind::MemoryBudget { .. })
        ),
        "{error:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_object_options_apply_to_multipart_uploads_and_create_only_stores_nothing_over_an_object()
 {
    use s3_wire_tokio::s3_ops::{ObjectAttributes, ServerSideEncryption, StorageClass};
    let store = store();
    let client = store.client_builder().retry(retry(2)).build().unwrap();
    let attributes = ObjectAttributes::new()
        .content_type("text/csv")
        .cache_control("no-cache")
        .metadata("Origin", "transfer-test")
        .storage_class(StorageClass::StandardIa)
        .tag("project", "q3")
        .server_side_encryption(ServerSideEncryption::S3);
    for (name, limit) in [("options/single", u64::MAX), ("options/multipart", 0)] {
        let stored = client
            .upload(bucket(), key(name), UploadSource::bytes(data(PART * 3, 6)))
            .part_size(PART)
            .part_limits(part_limits(PART))
            .single_request_limit(limit)
            .attributes(attributes.clone())
            .create_only()
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(stored.parts.is_some(), limit == 0, "{name}");
        let held = store.object(BUCKET, name).unwrap();
        let kept = &held.attributes;
        assert_eq!(kept.content_type.as_deref(), Some("text/csv"), "{name}");
        assert_eq!(kept.cache_control.as_deref(), Some("no-cache"), "{name}");
        assert_eq!(
            kept.metadata.get("origin").map(String::as_str),
            Some("transfer-test")
        );
        assert_eq!(kept.storage_class.as_deref(), Some("STANDARD_IA"), "{name}");
        assert_eq!(kept.tagging.as_deref(), Some("project=q3"), "{name}");
        assert_eq!(kept.sse.as_deref(), Some("AES256"), "{name}");

        // Create-only over an existing object: a precondition failure, nothing replaced,
        // and no upload left open.
        let error = client
            .upload(bucket(), key(name), UploadSource::bytes(data(PART * 3, 7)))
            .part_size(PART)
            .part_limits(part_limits(PART))
            .single_request_limit(limit)
            .create_only()
            .await
            .unwrap_err();
        assert!(error.is_precondition_failed(), "{name}: {error:?}");
        assert_eq!(
            store.object(BUCKET, name).unwrap().data,
            held.data,
            "{name}"
        );
        assert!(
            store.open_uploads().is_empty(),
            "{:?}",
            store.open_uploads()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_checksum_algorithm_is_confirmed_full_object_or_part_by_part() {
    let store = store();
    let client = store.client_builder().build().unwrap();
    let bytes = data(PART * 3 + 11, 8);
    for algorithm in ChecksumAlgorithm::ALL {
        let name = format!("checksum/{algorithm}");
        let stored = multipart_upload(&client, &name, bytes.clone())
            .checksum(Some(algorithm))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let held = store.object(BUCKET, &name).unwrap();
        let checksum = held
            .checksum
            .expect("the store keeps the object's checksum");
        match algorithm {
            ChecksumAlgorithm::Sha1 | ChecksumAlgorithm::Sha256 => {
                // A hash cannot be combined: the store keeps the checksum of the part
                // checksums, and confirmed each part.
                assert_eq!(checksum.checksum_type, ChecksumType::Composite, "{name}");
                assert!(checksum.value.ends_with("-4"), "{name}: {}", checksum.value);
                assert_eq!(
                    stored.verification,
                    Verification::PerPart {
                        algorithm,
                        parts: 4
                    },
                    "{name}"
                );
            }
            _ => {
                // The client's combined CRC is the store's checksum of the whole object.
                assert_eq!(checksum.checksum_type, ChecksumType::FullObject, "{name}");
                let whole = algorithm.checksum(&bytes);
                assert_eq!(checksum.value, whole.to_base64(), "{name}");
                assert_eq!(stored.checksum, Some(whole.clone()), "{name}");
                assert_eq!(
                    stored.verification,
                    Verification::FullObject(whole),
                    "{name}"
                );
            }
        }
    }
    let unchecked = multipart_upload(&client, "checksum/none", bytes)
        .checksum(None)
        .await
        .unwrap();
    assert_eq!(
        unchecked.verification,
        Verification::NotVerified(NotVerified::Disabled)
    );
}

/// A file part whose request hashes it before sending it (a signed payload over plain HTTP)
/// is read whole, once, into memory admitted for it when the budget has that memory free at
/// once, and otherwise read as it is sent, through the 2 MiB its reads hold (the file read
/// twice); a part sent with a trailer (the unsigned opt-in) is always read as it is sent.
/// Each way the store gets the file's bytes, each part's checksum and a payload hash that
/// matches, and the budget's high-water mark shows what was held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_parts_hashed_ahead_are_read_whole_when_their_memory_is_free() {
    const MIB: u64 = 1 << 20;
    const FILE_PART: u64 = 3 * MIB;
    let store = FaultStore::start_with_min_part_size(FILE_PART);
    let directory = tempfile::tempdir().unwrap();
    let bytes = data(2 * FILE_PART + MIB + 11, 12);
    let path = directory.path().join("parts.bin");
    std::fs::write(&path, &bytes).unwrap();
    // (case, payload signing, budget, parts at once, the budget's high-water mark)
    let cases = [
        (
            "whole",
            PayloadSigning::Signed,
            64 * MIB,
            1,
            FILE_PART..=FILE_PART,
        ),
        // The first part takes 3 of the 4 MiB; the second finds 1 MiB free and waits for
        // the 2 MiB a part read as it is sent holds; the last (1 MiB) fits whole beside it.
        (
            "tight budget",
            PayloadSigning::Signed,
            4 * MIB,
            2,
            FILE_PART..=4 * MIB,
        ),
        (
            "trailer",
            PayloadSigning::UnsignedWithChecksum,
            64 * MIB,
            1,
            2 * MIB..=2 * MIB,
        ),
    ];
    for algorithm in [ChecksumAlgorithm::Crc32, ChecksumAlgorithm::Sha256] {
        for (case, signing, memory, concurrency, high_water) in cases.clone() {
            let name = format!("file-parts/{algorithm}/{case}");
            let client = store
                .client_builder()
                .payload_signing(signing)
                .transfer_memory(memory)
                .build()
                .unwrap();
            store.clear_requests();
            let stored = client
                .upload(bucket(), key(&name), UploadSource::file(&path))
                .part_size(FILE_PART)
                .part_limits(part_limits(FILE_PART))
                .single_request_limit(0)
                .concurrency(concurrency)
                .checksum(Some(algorithm))
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(stored.parts, Some(3), "{name}");
            let held = store.object(BUCKET, &name).unwrap();
            assert_eq!(sha256(&held.data), sha256(&bytes), "{name}");
            let part_checksums: Vec<_> = held
                .parts
                .unwrap()
                .into_iter()
                .map(|part| part.checksum.unwrap().to_base64())
                .collect();
            let expected: Vec<_> = bytes
                .chunks(FILE_PART as usize)
                .map(|part| algorithm.checksum(part).to_base64())
                .collect();
            assert_eq!(part_checksums, expected, "{name}");
            let payloads: Vec<String> = store
                .requests()
                .iter()
                .filter(|request| request.operation == Op::UploadPart)
                .map(|request| {
                    request.headers["x-amz-content-sha256"]
                        .to_str()
                        .unwrap()
                        .into()
                })
                .collect();
            let signed = payloads.iter().all(|p| p.len() == 64);
            assert_eq!(
                (payloads.len(), signed),
                (3, signing == PayloadSigning::Signed),
                "{name}: {payloads:?}"
            );
            let memory = client.transfer_memory();
            assert!(
                high_water.contains(&memory.high_water),
                "{name}: {memory:?}"
            );
            assert_eq!(memory.in_use, 0, "{name}");
        }
    }
    assert_eq!(store.signature_failures(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_keeps_the_source_algorithm_and_checks_the_new_value_against_the_source() {
    let store = store();
    let client = store.client_builder().retry(retry(2)).build().unwrap();
    let bytes = data(PART * 3, 31);
    store.insert_object(
        BUCKET,
        "crc64-source",
        bytes.clone(),
        Some(ChecksumAlgorithm::Crc64Nvme),
    );
    store.insert_object(BUCKET, "plain-source", bytes.clone(), None);
    let source_crc = ChecksumAlgorithm::Crc64Nvme.checksum(&bytes);
    let cases = [
        // The source has a CRC64NVME: the copy asks the store for one too, whatever the
        // client's default, and the new value must be the source's.
        (
            "crc64-source",
            "CRC64NVME",
            Verification::FullObject(source_crc),
        ),
        // A source without one: the client's default (CRC32), with nothing to compare.
        (
            "plain-source",
            "CRC32",
            Verification::NotVerified(NotVerified::StoreSentNone),
        ),
    ];
    for (name, limit, create) in [
        ("copy-whole", u64::MAX, Op::CopyObject),
        ("copy-parts", 0, Op::CreateMultipartUpload),
    ] {
        for (source, algorithm, verification) in &cases {
            let case = format!("{name} from {source}");
            store.clear_requests();
            let copied = client
                .copy(CopySource::new(bucket(), key(source)), bucket(), key(name))
                .part_size(PART)
                .part_limits(part_limits(PART))
                .single_request_limit(limit)
                .await
                .unwrap_or_else(|e| panic!("{case}: {e:?}"));
            assert_eq!(&copied.verification, verification, "{case}");
            let request = store
                .requests()
                .into_iter()
                .find(|r| r.operation == create)
                .unwrap();
            assert_eq!(
                request.header("x-amz-checksum-algorithm"),
                Some(*algorithm),
                "{case}"
            );
            assert_eq!(store.object(BUCKET, name).unwrap().data, bytes, "{case}");
        }
    }
}

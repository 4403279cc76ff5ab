//! What real S3-compatible stores get wrong, and what the client does about it: each
//! deviation imitated by the fault store ([`StoreQuirks`]), so that the test fails exactly when
//! the client stops coping with it.

use s3_wire_tokio::s3_ops::InvalidInput;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::provider::Feature;
use s3_wire_tokio::s3_ops::{BucketName, ChecksumAlgorithm, ChecksumType, ObjectKey, Provider};
use s3_wire_tokio::{Body, ErrorKind, NotVerified, UploadSource, Verification};

use crate::fault_store::{FaultKind, FaultPlan, FaultStore, Op, StoreQuirks};
use crate::helpers::part_limits;
use crate::support::{data, one_shot, sha256};

const PART: u64 = 16 * 1024;
const BUCKET: &str = "quirks";

fn bucket() -> BucketName {
    BucketName::new(BUCKET).unwrap()
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::new(name).unwrap()
}

/// Garage 2.5.0 refuses signed aws-chunked trailers. Over plain HTTP a managed upload of a
/// file sends each part signed by its SHA-256 with its CRC32 in a header, computed ahead in
/// one pass, and so does a bare `put_object` of a file: both are stored. A one-shot stream is
/// the one body still sent with a signed trailer; a profile that says the store refuses them
/// sends it in signed chunks without the trailer.
#[tokio::test]
async fn a_store_that_refuses_signed_trailers_takes_uploads_from_files_and_streams() {
    let store = FaultStore::start_with_min_part_size(PART);
    store.set_quirks(StoreQuirks {
        refuse_signed_trailers: true,
        ..StoreQuirks::default()
    });
    let client = store.client_builder().build().unwrap();
    let directory = tempfile::tempdir().unwrap();
    let bytes = data(PART * 3 + 100, 7);
    let path = directory.path().join("source.bin");
    std::fs::write(&path, &bytes).unwrap();

    let stored = client
        .upload(bucket(), key("managed"), UploadSource::file(&path))
        .part_size(PART)
        .single_request_limit(PART)
        .part_limits(part_limits(PART))
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(stored.parts, Some(4));
    let crc = ChecksumAlgorithm::Crc32.checksum(&bytes);
    assert_eq!(stored.verification, Verification::FullObject(crc));
    assert_eq!(
        sha256(&store.object(BUCKET, "managed").unwrap().data),
        sha256(&bytes)
    );
    client
        .put_object(
            PutObject::new(bucket(), key("bare")),
            Body::from_file(&path).await.unwrap(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        sha256(&store.object(BUCKET, "bare").unwrap().data),
        sha256(&bytes)
    );
    let uploads: Vec<_> = store
        .requests()
        .into_iter()
        .filter(|r| matches!(r.operation, Op::UploadPart | Op::PutObject))
        .collect();
    assert_eq!(uploads.len(), 5, "{uploads:?}");
    for upload in &uploads {
        let payload = upload.header("x-amz-content-sha256").unwrap();
        assert!(
            payload.len() == 64 && upload.header("content-encoding").is_none(),
            "hashed ahead, not aws-chunked: {upload:?}"
        );
        assert!(
            upload.header("x-amz-checksum-crc32").is_some(),
            "{upload:?}"
        );
        assert_eq!(upload.header("x-amz-sdk-checksum-algorithm"), Some("CRC32"));
        assert_eq!(upload.status, Some(200), "{upload:?}");
    }

    // A one-shot stream: the default profile sends its signed trailer, which this store
    // refuses as Garage does. The stream was read, so it cannot go again: the error says the
    // client learnt it, and the next stream of the same client goes without the trailer.
    let stream = || one_shot(&bytes, 10_000);
    let refused = client
        .put_object(PutObject::new(bucket(), key("stream")), stream())
        .await
        .unwrap_err();
    assert_signed_trailer_refused(&refused);
    assert!(store.object(BUCKET, "stream").is_none());
    client
        .clone()
        .put_object(PutObject::new(bucket(), key("stream")), stream())
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_streamed_without_trailer(&store, "stream", &bytes);
    // Garage's profile sends none from the start.
    let garage = store
        .client_builder()
        .provider(Provider::Garage)
        .build()
        .unwrap();
    garage
        .put_object(PutObject::new(bucket(), key("garage")), stream())
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_streamed_without_trailer(&store, "garage", &bytes);
    assert_eq!(store.signature_failures(), 0);
}

/// The refusal of a signed trailer, as the client reports it when the body cannot go again.
fn assert_signed_trailer_refused(refused: &s3_wire_tokio::Error) {
    match refused.kind() {
        ErrorKind::Operation(s3_wire_tokio::s3_ops::Error::InvalidInput(
            InvalidInput::Unsupported(unsupported),
        )) => assert_eq!(unsupported.feature, Feature::SignedTrailer),
        other => panic!("{other:?}: {refused}"),
    }
    let text = refused.to_string();
    assert!(
        text.contains("signed checksum trailer") && text.contains("send the body again"),
        "{text}"
    );
}

/// The last request stored `key` from a stream in signed chunks without a trailer.
fn assert_streamed_without_trailer(store: &FaultStore, key: &str, bytes: &[u8]) {
    let sent = store.requests().pop().unwrap();
    assert_eq!(
        sent.header("x-amz-content-sha256"),
        Some("STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
    );
    assert_eq!(sent.header("x-amz-sdk-checksum-algorithm"), None);
    assert_eq!(
        sha256(&store.object(BUCKET, key).unwrap().data),
        sha256(bytes)
    );
}

/// A store that refuses a signed trailer from the headers, before reading the body: the
/// stream was not read, so the same request goes again at once without the trailer, and the
/// upload succeeds (two requests, the first refused).
#[tokio::test]
async fn a_signed_trailer_refused_before_the_body_is_read_is_sent_again_without_it() {
    let store = FaultStore::start();
    store.set_quirks(StoreQuirks {
        refuse_signed_trailers_unread: true,
        ..StoreQuirks::default()
    });
    let client = store.client_builder().build().unwrap();
    let bytes = data(40_000, 3);
    // Its first bytes come only after the refusal has arrived.
    let late = crate::support::LateStream::new(&bytes, std::time::Duration::from_millis(500));
    let stored = client
        .put_object(
            PutObject::new(bucket(), key("late")),
            Body::from_stream(late, bytes.len() as u64),
        )
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert!(stored.etag.is_some());
    let puts: Vec<_> = store
        .requests()
        .into_iter()
        .filter(|r| r.operation == Op::PutObject)
        .collect();
    assert_eq!(puts.len(), 2, "{puts:?}");
    assert_eq!(
        puts[0].header("x-amz-content-sha256"),
        Some("STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER")
    );
    assert_eq!(puts[0].status, Some(400));
    assert_eq!(puts[0].body_len, 0);
    assert_streamed_without_trailer(&store, "late", &bytes);
}

/// moto answers a HEAD of one part with that part's own ETag, so the part-size probe of a
/// composite object, pinned by `If-Match` to the object's ETag, gets 412. A probe is not
/// data: the download goes on by ranges (each pinned to the object's ETag), stores exactly
/// the object, and says its parts were not checked one by one. It failed with
/// `ObjectChanged` before.
#[tokio::test]
async fn a_part_probe_refused_by_a_part_etag_falls_back_to_ranges() {
    let store = FaultStore::start_with_min_part_size(PART);
    store.set_quirks(StoreQuirks {
        part_etag_on_head: true,
        // moto lists no parts.
        no_object_attributes: true,
        ..StoreQuirks::default()
    });
    let bytes = data(PART * 3 + 500, 11);
    let sizes = [PART, PART, PART, 500];
    store.insert_multipart_object(
        BUCKET,
        "composite",
        bytes.clone(),
        &sizes,
        Some((ChecksumAlgorithm::Crc32, ChecksumType::Composite)),
    );
    let client = store.client_builder().build().unwrap();
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("composite");
    let got = client
        .download(bucket(), key("composite"), path.as_path())
        .part_size(PART)
        .single_request_limit(PART)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(sha256(&std::fs::read(&path).unwrap()), sha256(&bytes));
    assert_eq!(
        got.verification,
        Verification::NotVerified(NotVerified::CompositeNotByParts)
    );
    let requests = store.requests();
    let probe: Vec<_> = requests
        .iter()
        .filter(|r| r.operation == Op::HeadObject)
        .collect();
    assert_eq!(probe.len(), 1, "{requests:?}");
    assert_eq!(probe[0].status, Some(412), "the probe was refused");
    let ranges = requests
        .iter()
        .filter(|r| r.operation == Op::GetObject && r.header("range").is_some())
        .count();
    assert_eq!(ranges, 3, "ranges 2 to 4 after the first answer");
    assert!(
        requests
            .iter()
            .filter(|r| r.operation == Op::GetObject)
            .all(|r| !r.query.contains("partNumber")),
        "{requests:?}"
    );

    // A writer gets the same.
    let (writer, collected) = crate::helpers::collecting_writer(64 * 1024);
    let got = client
        .download(bucket(), key("composite"), writer)
        .part_size(PART)
        .single_request_limit(PART)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(sha256(&collected.await.unwrap()), sha256(&bytes));
    assert_eq!(
        got.verification,
        Verification::NotVerified(NotVerified::CompositeNotByParts)
    );
}

/// s3s-fs cannot list multipart uploads. An upload a lost CreateMultipartUpload answer
/// created cannot be found there: the transfer still succeeds, and its result says that an
/// upload of the key may have been left behind; sweeping stale uploads says it cannot, and
/// what to do instead. (Where the store lists uploads, the extra one is aborted:
/// `faults::a_lost_create_answer_costs_no_orphan_upload`.)
#[tokio::test]
async fn where_uploads_cannot_be_listed_a_possible_orphan_is_reported_not_hidden() {
    for profile_knows in [false, true] {
        let store = FaultStore::start_with_min_part_size(PART);
        store.set_quirks(StoreQuirks {
            no_list_multipart_uploads: true,
            ..StoreQuirks::default()
        });
        store.set_faults(FaultPlan::first_try(
            FaultKind::ResetAfterApply,
            [Op::CreateMultipartUpload],
        ));
        let mut quirks = Provider::Generic.quirks();
        quirks.list_multipart_uploads = !profile_knows;
        let client = store
            .client_builder()
            .provider_quirks(quirks)
            .retry(crate::support::retry(3))
            .build()
            .unwrap();
        let bytes = data(PART * 2, 4);
        let stored = client
            .upload(bucket(), key("lost"), UploadSource::bytes(bytes.clone()))
            .part_size(PART)
            .part_limits(part_limits(PART))
            .single_request_limit(0)
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(store.object(BUCKET, "lost").unwrap().data, bytes);
        let orphan = stored
            .possible_orphan
            .expect("a possible orphan is reported");
        assert_eq!(
            (orphan.bucket.as_str(), orphan.key.as_str()),
            (BUCKET, "lost")
        );
        assert!(
            orphan.reason.contains("AbortIncompleteMultipartUpload"),
            "{orphan:?}"
        );
        let open = store.open_uploads();
        assert_eq!(open.len(), 1, "the lost answer's upload: {open:?}");
        let listings = store
            .request_counts()
            .get(&Op::ListMultipartUploads)
            .copied()
            .unwrap_or(0);
        // A profile that knows asks nothing; otherwise the store's 501 is asked for once.
        assert_eq!(listings, u64::from(!profile_knows), "{listings}");

        let error = client
            .abort_stale_uploads(&bucket(), "", std::time::Duration::ZERO)
            .await
            .expect_err("no sweep without a listing");
        let unsupported = match error.kind() {
            ErrorKind::Operation(s3_wire_tokio::s3_ops::Error::InvalidInput(
                InvalidInput::Unsupported(unsupported),
            )) => unsupported,
            other => panic!("{other:?}"),
        };
        assert_eq!(unsupported.feature, Feature::ListMultipartUploads);
        assert!(
            error.to_string().contains("AbortIncompleteMultipartUpload"),
            "{error}"
        );
        assert_eq!(store.open_uploads().len(), 1);
    }
}

/// The ranges a download asked for, in the order the store received them.
fn range_sizes(store: &FaultStore) -> Vec<u64> {
    store
        .requests()
        .iter()
        .filter(|r| r.operation == Op::GetObject)
        .filter_map(|r| {
            let (first, last) = r.header("range")?.strip_prefix("bytes=")?.split_once('-')?;
            Some(last.parse::<u64>().ok()? - first.parse::<u64>().ok()? + 1)
        })
        .collect()
}

/// A store that charges a fixed latency per request (moto builds each ranged answer from
/// the whole object: a 1 GiB download took 134 s in 8 MiB ranges, 7.7 s in 128 MiB ones):
/// the download's ranges grow, from `part_size` up to one range per GET in flight. Where the
/// bytes dominate (a client limited to 256 KiB/s) they keep their size. The sizes asked
/// for are what is checked, not the time taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranges_grow_where_each_request_costs_more_than_its_bytes() {
    let store = FaultStore::start();
    let bytes = data(64 * PART, 13);
    store.insert_object(
        BUCKET,
        "slow",
        bytes.clone(),
        Some(ChecksumAlgorithm::Crc32),
    );
    let directory = tempfile::tempdir().unwrap();
    let download = |client: &s3_wire_tokio::Client| {
        client
            .download(
                bucket(),
                key("slow"),
                directory.path().join("slow").as_path(),
            )
            .part_size(PART)
            .single_request_limit(PART)
            .concurrency(2)
    };

    store.set_quirks(StoreQuirks {
        get_latency: std::time::Duration::from_millis(40),
        ..StoreQuirks::default()
    });
    let client = store.client_builder().build().unwrap();
    let got = download(&client).await.unwrap();
    assert_eq!(
        sha256(&std::fs::read(directory.path().join("slow")).unwrap()),
        sha256(&bytes)
    );
    assert!(matches!(got.verification, Verification::FullObject(_)));
    let sizes = range_sizes(&store);
    assert!(
        sizes[..sizes.len() - 1].windows(2).all(|w| w[0] <= w[1]),
        "sizes only grow (but the last, the rest of the object): {sizes:?}"
    );
    // Grown at least eightfold, never past half the object (one range per GET in flight).
    let largest = *sizes.iter().max().unwrap();
    assert!((8 * PART..=32 * PART).contains(&largest), "{sizes:?}");
    assert!(
        sizes.len() < 10,
        "{} ranges instead of 63: {sizes:?}",
        sizes.len()
    );
    assert_eq!(
        sizes.iter().sum::<u64>(),
        63 * PART,
        "all but the first answer's"
    );

    // Bytes that take longer than the request (1 MiB/s, 256 KiB ranges): the ranges keep
    // their size.
    store.set_quirks(StoreQuirks::default());
    store.clear_requests();
    let limited = store
        .client_builder()
        .bandwidth_limit(1 << 20)
        .build()
        .unwrap();
    let big = 16 * PART;
    store.insert_object(
        BUCKET,
        "bulk",
        data(6 * big, 14),
        Some(ChecksumAlgorithm::Crc32),
    );
    limited
        .download(
            bucket(),
            key("bulk"),
            directory.path().join("bulk").as_path(),
        )
        .part_size(big)
        .single_request_limit(big)
        .concurrency(2)
        .await
        .unwrap();
    assert_eq!(range_sizes(&store), vec![big; 5]);

    // Turned off: the latency no longer grows them.
    store.set_quirks(StoreQuirks {
        get_latency: std::time::Duration::from_millis(40),
        ..StoreQuirks::default()
    });
    store.clear_requests();
    download(&client).adapt_range_size(false).await.unwrap();
    assert_eq!(range_sizes(&store), vec![PART; 63]);
}

/// Garage 2.5.0 takes `x-amz-checksum-type` on CompleteMultipartUpload only with a checksum
/// value, and its part copies carry no checksums back: every managed multipart copy ended
/// there, after every part was copied. A multipart copy names the checksum type only beside
/// a value, and is stored; until it is, its progress never shows every byte committed.
#[tokio::test]
async fn a_multipart_copy_names_its_checksum_type_only_beside_a_value() {
    let store = FaultStore::start_with_min_part_size(PART);
    let client = store.client_builder().build().unwrap();
    let bytes = data(PART * 3 + 100, 11);
    // A full-object CRC32 copy on Garage's terms; a composite SHA-256 copy (no value the
    // client could compute) where part copies do carry their checksums, as S3 requires of a
    // composite upload's Complete.
    for (source, algorithm, part_checksums) in [
        ("crc32", ChecksumAlgorithm::Crc32, false),
        ("sha256", ChecksumAlgorithm::Sha256, true),
    ] {
        store.set_quirks(StoreQuirks {
            checksum_type_only_with_a_value: true,
            no_checksums_on_part_copies: !part_checksums,
            ..StoreQuirks::default()
        });
        client
            .put_object(
                PutObject::new(bucket(), key(source)).checksum_algorithm(algorithm),
                Body::from_bytes(bytes.clone()),
            )
            .await
            .unwrap();
        let copy = format!("{source}-copy");
        let last = std::sync::Arc::new(std::sync::Mutex::new(None));
        let record = last.clone();
        let copied = client
            .copy(
                s3_wire_tokio::s3_ops::CopySource::new(bucket(), key(source)),
                bucket(),
                key(&copy),
            )
            .part_size(PART)
            .single_request_limit(PART)
            .part_limits(part_limits(PART))
            .on_progress(move |p| *record.lock().unwrap() = Some(p))
            .await;
        let progress = last.lock().unwrap().expect("progress reported");
        match copied {
            Ok(copied) => {
                assert_eq!(copied.size, bytes.len() as u64);
                assert_eq!(
                    sha256(&store.object(BUCKET, &copy).unwrap().data),
                    sha256(&bytes),
                    "{copy}"
                );
                assert_eq!(progress.committed, bytes.len() as u64);
            }
            Err(error) => {
                assert!(store.object(BUCKET, &copy).is_none());
                assert!(
                    progress.committed < bytes.len() as u64,
                    "{copy} failed ({error}) with every byte committed: {progress:?}"
                );
                panic!("{copy}: {error}");
            }
        }
    }
}

/// How a client comes to list a store that serves only ListObjects (version 1).
#[derive(Debug, Clone, Copy)]
enum VersionOneStore {
    /// Its provider profile says so (`list_objects_v2: false`).
    Profiled,
    /// Nothing says so: it answers `list-type=2` with a version 1 page, ignoring the
    /// continuation token, and the client finds out from the first truncated page.
    Found,
}

/// Every feature built on listings (paged listings with and without `start-after`, a
/// download of a prefix, a sync with `--delete`, a copy of a prefix) works on a store that
/// serves only ListObjects (version 1), its pages capped at 5 entries so every listing
/// continues by marker: the same keys as on any store.
#[tokio::test]
async fn a_store_that_lists_only_with_version_1_is_listed_with_it() {
    use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
    for way in [VersionOneStore::Profiled, VersionOneStore::Found] {
        let store = FaultStore::start();
        store.set_quirks(StoreQuirks {
            version_1_listings_only: true,
            page_entries: Some(5),
            ..StoreQuirks::default()
        });
        let mut builder = store.client_builder();
        if let VersionOneStore::Profiled = way {
            let mut quirks = Provider::Generic.quirks();
            quirks.list_objects_v2 = false;
            builder = builder.provider_quirks(quirks);
        }
        let client = builder.build().unwrap();
        let mut tree: Vec<String> = (0..12).map(|i| format!("tree/k{i:02}")).collect();
        tree.extend(["tree/sub/a".to_owned(), "tree/sub/b".to_owned()]);
        for key in tree.iter().chain([&"other/o".to_owned()]) {
            store.insert_object(BUCKET, key, format!("data of {key}"), None);
        }
        let listed = |request: ListObjectsV2| {
            let client = client.clone();
            async move {
                let mut pages = client.list_objects_v2_pages(request);
                let mut keys = Vec::new();
                while let Some(page) = pages.next_page().await {
                    let page = page.unwrap_or_else(|e| panic!("{way:?}: {e}"));
                    keys.extend(page.result.contents.into_iter().map(|o| o.key));
                }
                keys
            }
        };
        assert_eq!(
            listed(ListObjectsV2::new(bucket()).prefix("tree/")).await,
            tree,
            "{way:?}"
        );
        assert_eq!(
            listed(ListObjectsV2::new(bucket()).start_after("tree/k09")).await,
            ["tree/k10", "tree/k11", "tree/sub/a", "tree/sub/b"],
            "{way:?}"
        );
        // cp -r down, sync back up with --delete, cp -r to another prefix.
        let local = tempfile::tempdir().unwrap();
        let down = client
            .download_directory(bucket(), "tree", local.path())
            .await
            .unwrap();
        assert!(down.is_success(), "{way:?}: {:?}", down.failures);
        assert_eq!(down.progress.objects_transferred, tree.len() as u64);
        std::fs::remove_file(local.path().join("k03")).unwrap();
        std::fs::write(local.path().join("new"), "new").unwrap();
        let synced = client
            .upload_directory(local.path(), bucket(), "tree")
            .compare(s3_wire_tokio::transfer::Compare::SizeAndTime)
            .delete_extraneous(true)
            .await
            .unwrap();
        assert!(synced.is_success(), "{way:?}: {:?}", synced.failures);
        assert_eq!(
            (
                synced.progress.objects_transferred,
                synced.progress.objects_deleted
            ),
            (1, 1),
            "{way:?}"
        );
        let copied = client
            .copy_directory(bucket(), "tree", bucket(), "copy")
            .await
            .unwrap();
        assert!(copied.is_success(), "{way:?}: {:?}", copied.failures);
        let keys = store.keys(BUCKET);
        let under = |prefix: &str| -> Vec<String> {
            keys.iter()
                .filter_map(|k| k.strip_prefix(prefix).map(str::to_owned))
                .collect()
        };
        let mut expected: Vec<String> = tree
            .iter()
            .map(|k| k["tree/".len()..].to_owned())
            .filter(|k| k != "k03")
            .chain(["new".to_owned()])
            .collect();
        expected.sort();
        assert_eq!(under("tree/"), expected, "{way:?}");
        assert_eq!(under("copy/"), expected, "{way:?}");
        assert_eq!(under("other/"), ["o"], "{way:?}");
        // ListObjectsV2 went out once (the page that gave the store away) or never.
        let version_2 = store
            .requests()
            .iter()
            .filter(|r| r.query.contains("list-type=2"))
            .count();
        let version_1 = store
            .requests()
            .iter()
            .filter(|r| r.operation == Op::ListObjects)
            .count();
        let expected_v2 = match way {
            VersionOneStore::Profiled => 0,
            VersionOneStore::Found => 1,
        };
        assert_eq!(version_2, expected_v2, "{way:?}");
        assert!(version_1 >= 12, "{way:?}: {version_1} version 1 pages");
        assert!(
            store
                .requests()
                .iter()
                .any(|r| r.operation == Op::ListObjects && r.query.contains("marker=tree%2Fk04")),
            "{way:?}: continued by marker"
        );
    }
}

/// A store that ignores `list-type=2` and so `start-after`: a first listing that starts
/// after a key, on a page not truncated, would silently restart from the bucket's first
/// key. The keys before `start-after` give it away; the page is asked again with version 1.
#[tokio::test]
async fn a_version_1_answer_is_caught_by_the_keys_before_start_after() {
    use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
    let store = FaultStore::start();
    store.set_quirks(StoreQuirks {
        version_1_listings_only: true,
        ..StoreQuirks::default()
    });
    for key in ["a", "b", "c"] {
        store.insert_object(BUCKET, key, "x", None);
    }
    let client = store.client_builder().build().unwrap();
    let page = client
        .list_objects_v2(ListObjectsV2::new(bucket()).start_after("a"))
        .await
        .unwrap();
    let keys: Vec<_> = page
        .result
        .contents
        .iter()
        .map(|o| o.key.as_str())
        .collect();
    assert_eq!(keys, ["b", "c"]);
    let operations: Vec<Op> = store.requests().iter().map(|r| r.operation).collect();
    assert_eq!(operations, [Op::ListObjectsV2, Op::ListObjects]);
}

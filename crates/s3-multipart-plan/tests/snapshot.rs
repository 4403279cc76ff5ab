//! Resumable state: the versioned text form, its errors, reconciliation with
//! `ListParts` and resuming an interrupted upload.

use proptest::prelude::*;
use s3_multipart_plan::{
    Action, Checksum, ChecksumAlgorithm, CompletedPart, Error, ListedPart, MultipartOptions,
    Outcome, PartLimits, SnapshotError, SnapshotErrorKind, UploadScheduler, UploadSnapshot,
};

fn limits() -> PartLimits {
    PartLimits::new(10, 100, 5, 400).unwrap()
}

fn options(concurrency: usize) -> MultipartOptions {
    MultipartOptions::builder()
        .limits(limits())
        .part_size(10)
        .concurrency(concurrency)
        .build()
        .unwrap()
}

fn part(number: u32, size: u64, etag: &str) -> CompletedPart {
    CompletedPart {
        number,
        size,
        etag: etag.to_owned(),
        checksum: None,
    }
}

fn listed(number: u32, size: u64, etag: &str) -> ListedPart {
    ListedPart {
        number,
        size,
        etag: etag.to_owned(),
        checksum: None,
    }
}

#[test]
fn text_form_is_stable() {
    let snapshot = UploadSnapshot::new(
        "2~abc def%é".to_owned(),
        25,
        10,
        vec![
            CompletedPart {
                number: 1,
                size: 10,
                etag: "\"d41d8cd98f00b204e9800998ecf8427e\"".to_owned(),
                checksum: Some(Checksum {
                    algorithm: ChecksumAlgorithm::Sha256,
                    value: "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=".to_owned(),
                }),
            },
            part(3, 5, "\"x\""),
        ],
    );
    let text = "s3-multipart-snapshot 1\n\
                upload-id 2~abc%20def%25%C3%A9\n\
                object-size 25\n\
                part-size 10\n\
                part 1 10 \"d41d8cd98f00b204e9800998ecf8427e\" \
                SHA256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\
                part 3 5 \"x\"\n\
                end\n";
    assert_eq!(snapshot.to_text(), text);
    assert_eq!(UploadSnapshot::parse(text), Ok(snapshot.clone()));
    // Field order is free, CRLF line ends and checksum names' case too.
    let reordered = "s3-multipart-snapshot 1\r\npart-size 10\r\nobject-size 25\r\n\
                     part 1 10 \"d41d8cd98f00b204e9800998ecf8427e\" \
                     sha256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\r\n\
                     upload-id 2~abc%20def%25%c3%a9\r\npart 3 5 \"x\"\r\nend\r\n\r\n";
    assert_eq!(UploadSnapshot::parse(reordered), Ok(snapshot));
}

#[test]
fn parse_errors_name_the_line_and_the_problem() {
    let valid = "s3-multipart-snapshot 1\nupload-id u\nobject-size 25\npart-size 10\nend\n";
    assert!(UploadSnapshot::parse(valid).is_ok());
    let cases: &[(&str, usize, SnapshotErrorKind)] = &[
        ("", 1, SnapshotErrorKind::MissingHeader),
        (
            "s3-multipart-snapshot\n",
            1,
            SnapshotErrorKind::MissingHeader,
        ),
        (
            "s3-multipart-snapshot 2\nend\n",
            1,
            SnapshotErrorKind::UnsupportedVersion("2".into()),
        ),
        (
            "s3-multipart-snapshot 1\nupload-id u\ncolour blue\nend\n",
            3,
            SnapshotErrorKind::UnknownKey("colour".into()),
        ),
        (
            "s3-multipart-snapshot 1\npart-size 1\npart-size 2\nend\n",
            3,
            SnapshotErrorKind::DuplicateField("part-size"),
        ),
        (
            "s3-multipart-snapshot 1\nupload-id u\nobject-size 25\nend\n",
            0,
            SnapshotErrorKind::MissingField("part-size"),
        ),
        (
            "s3-multipart-snapshot 1\nobject-size +25\nend\n",
            2,
            SnapshotErrorKind::InvalidNumber("+25".into()),
        ),
        (
            "s3-multipart-snapshot 1\nobject-size 99999999999999999999\nend\n",
            2,
            SnapshotErrorKind::InvalidNumber("99999999999999999999".into()),
        ),
        (
            "s3-multipart-snapshot 1\nupload-id a%G1\nend\n",
            2,
            SnapshotErrorKind::InvalidEncoding("a%G1".into()),
        ),
        (
            "s3-multipart-snapshot 1\nupload-id a%4\nend\n",
            2,
            SnapshotErrorKind::InvalidEncoding("a%4".into()),
        ),
        (
            "s3-multipart-snapshot 1\nupload-id %FF\nend\n",
            2,
            SnapshotErrorKind::InvalidEncoding("%FF".into()),
        ),
        (
            "s3-multipart-snapshot 1\npart 1 10\nend\n",
            2,
            SnapshotErrorKind::MalformedPart,
        ),
        (
            "s3-multipart-snapshot 1\npart 1 10 e CRC32=a CRC32C=b\nend\n",
            2,
            SnapshotErrorKind::MalformedPart,
        ),
        (
            "s3-multipart-snapshot 1\npart 1 10 e MD5=x\nend\n",
            2,
            SnapshotErrorKind::UnknownChecksumAlgorithm("MD5".into()),
        ),
        (
            "s3-multipart-snapshot 1\npart 2 10 e\npart 2 10 e\nend\n",
            3,
            SnapshotErrorKind::PartsOutOfOrder { number: 2 },
        ),
        (
            "s3-multipart-snapshot 1\nupload-id u\nobject-size 25\npart-size 10\n",
            0,
            SnapshotErrorKind::Truncated,
        ),
        (
            "s3-multipart-snapshot 1\nupload-id u\nobject-size 25\npart-size 10\nend\nmore\n",
            6,
            SnapshotErrorKind::TrailingData,
        ),
    ];
    for (text, line, kind) in cases {
        assert_eq!(
            UploadSnapshot::parse(text),
            Err(Error::Snapshot(SnapshotError {
                line: *line,
                kind: kind.clone()
            })),
            "{text:?}"
        );
    }
    let message = UploadSnapshot::parse("s3-multipart-snapshot 7\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        "invalid upload snapshot: line 1: snapshot format version \"7\" is not supported \
         (this crate reads version 1)"
    );
}

#[test]
fn resume_rejects_snapshots_that_do_not_fit() {
    let check = |snapshot: UploadSnapshot| UploadScheduler::resume(&snapshot, &options(2)).err();
    // Part size below the limits' minimum.
    assert!(matches!(
        check(UploadSnapshot::new("u".into(), 25, 5, vec![])),
        Some(Error::Snapshot(SnapshotError {
            kind: SnapshotErrorKind::Plan(_),
            ..
        }))
    ));
    // 25 bytes in 10-byte parts: part 3 has 5 bytes, part 4 does not exist.
    for bad in [part(3, 10, "e"), part(4, 5, "e"), part(0, 10, "e")] {
        let number = bad.number;
        assert_eq!(
            check(UploadSnapshot::new("u".into(), 25, 10, vec![bad])),
            Some(Error::Snapshot(SnapshotError {
                line: 0,
                kind: SnapshotErrorKind::PartOutsidePlan { number }
            }))
        );
    }
}

#[test]
fn reconcile_keeps_adopts_reuploads_and_ignores() {
    // 45 bytes in 10-byte parts: parts 1..=5, part 5 has 5 bytes.
    let snapshot = UploadSnapshot::new(
        "u".into(),
        45,
        10,
        vec![
            part(1, 10, "\"a\""),
            part(2, 10, "\"b\""),
            part(4, 10, "\"d\""),
        ],
    );
    let server = [
        listed(9, 10, "\"z\""),     // outside the plan
        listed(4, 10, "\"other\""), // replaced on the server
        listed(1, 10, "a"),         // same ETag without quotes
        listed(3, 10, "\"c\""),     // finished after the snapshot
        listed(5, 7, "\"wrong\""),  // wrong size for the last part
        listed(3, 10, "\"dup\""),   // duplicate entry: the first wins
    ];
    let result = snapshot.reconcile(&server, &limits()).unwrap();
    assert_eq!(result.kept, [1]);
    assert_eq!(result.adopted, [3]);
    assert_eq!(result.reupload, [2, 4]);
    assert_eq!(result.ignored, [5, 9]);
    assert_eq!(
        result.snapshot.parts(),
        [part(1, 10, "\"a\""), part(3, 10, "\"c\"")]
    );

    // Resuming uploads exactly the parts not held: 2, 4 and 5.
    let mut up = UploadScheduler::resume(&result.snapshot, &options(5)).unwrap();
    assert_eq!(up.upload_id(), Some("u"));
    assert_eq!(up.parts_done(), 2);
    let actions: Vec<Action> = std::iter::from_fn(|| up.poll_action()).collect();
    let numbers: Vec<u32> = actions
        .iter()
        .map(|a| match a {
            Action::UploadPart { number, .. } => *number,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(numbers, [2, 4, 5]);
}

#[test]
fn an_interrupted_upload_continues_from_its_text_snapshot() {
    let opts = options(2);
    let mut first = UploadScheduler::new(45, &opts).unwrap();
    assert_eq!(first.snapshot(), None, "no upload id yet");
    assert_eq!(first.poll_action(), Some(Action::Create));
    first.handle_created("upload-7").unwrap();
    let _ = std::iter::from_fn(|| first.poll_action()).count();
    first.handle_part_done(2, "\"e2\"", None).unwrap();
    let _ = std::iter::from_fn(|| first.poll_action()).count(); // starts part 3
    let text = first.snapshot().unwrap().to_text();
    // The process dies here; part 3 finished on the server meanwhile.
    drop(first);

    let snapshot = UploadSnapshot::parse(&text).unwrap();
    assert_eq!(snapshot.parts(), [part(2, 10, "\"e2\"")]);
    let server = [listed(2, 10, "\"e2\""), listed(3, 10, "\"e3\"")];
    let reconciled = snapshot.reconcile(&server, opts.limits()).unwrap();
    assert_eq!(reconciled.adopted, [3]);
    let mut second = UploadScheduler::resume(&reconciled.snapshot, &opts).unwrap();
    let mut uploaded = Vec::new();
    loop {
        match second.poll_action() {
            Some(Action::UploadPart { number, .. }) => uploaded.push(number),
            Some(Action::Complete { parts }) => {
                let etags: Vec<&str> = parts.iter().map(|p| p.etag.as_str()).collect();
                assert_eq!(etags, ["\"n1\"", "\"e2\"", "\"e3\"", "\"n4\"", "\"n5\""]);
                second.handle_completed().unwrap();
            }
            Some(other) => panic!("unexpected {other:?}"),
            None => match uploaded.pop() {
                Some(number) => second
                    .handle_part_done(number, format!("\"n{number}\""), None)
                    .unwrap(),
                None => break,
            },
        }
    }
    assert_eq!(
        second.outcome(),
        Some(&Outcome::Completed { parts: 5, size: 45 })
    );
}

fn checksum_strategy() -> impl Strategy<Value = Checksum> {
    (0..ChecksumAlgorithm::ALL.len(), any::<String>()).prop_map(|(i, value)| Checksum {
        algorithm: ChecksumAlgorithm::ALL[i],
        value,
    })
}

fn snapshot_strategy() -> impl Strategy<Value = UploadSnapshot> {
    let part = (
        any::<u32>(),
        any::<u64>(),
        any::<String>(),
        proptest::option::of(checksum_strategy()),
    );
    (
        any::<String>(),
        any::<u64>(),
        any::<u64>(),
        proptest::collection::vec(part, 0..6),
    )
        .prop_map(|(id, object_size, part_size, mut parts)| {
            parts.sort_by_key(|p| p.0);
            parts.dedup_by_key(|p| p.0);
            let parts = parts
                .into_iter()
                .map(|(number, size, etag, checksum)| CompletedPart {
                    number,
                    size,
                    etag,
                    checksum,
                })
                .collect();
            UploadSnapshot::new(id, object_size, part_size, parts)
        })
}

proptest! {
    #[test]
    fn text_form_round_trips(snapshot in snapshot_strategy()) {
        let text = snapshot.to_text();
        prop_assert_eq!(UploadSnapshot::parse(&text), Ok(snapshot));
    }

    /// The same check as the `plan_snapshot` fuzz target: arbitrary input
    /// never panics, and whatever parses re-serializes to an equal value.
    #[test]
    fn arbitrary_text_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        s3_multipart_plan::fuzzing::snapshot_text(&bytes);
    }

    #[test]
    fn mutated_snapshots_never_panic(snapshot in snapshot_strategy(), at in any::<usize>(), byte in any::<u8>()) {
        let mut bytes = snapshot.to_text().into_bytes();
        let index = at % bytes.len();
        bytes[index] = byte;
        s3_multipart_plan::fuzzing::snapshot_text(&bytes);
        bytes.truncate(index);
        s3_multipart_plan::fuzzing::snapshot_text(&bytes);
    }
}

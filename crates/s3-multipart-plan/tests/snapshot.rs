//! Resumable state: the versioned text form, its errors, reconciliation with
//! `ListParts` and resuming an interrupted upload.

use proptest::prelude::*;
use s3_multipart_plan::{
    Action, CompletedPart, Error, MultipartOptions, Outcome, PartLimits, PartReceipt,
    SnapshotError, SnapshotErrorKind, UploadScheduler, UploadSnapshot,
};

/// Snapshots whose receipts are ETags.
type Snapshot = UploadSnapshot<String>;

/// A receipt with structure, as a real driver keeps: the ETag and, when the
/// upload uses one, the part's checksum. Its text form has a space.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Receipt {
    etag: String,
    checksum: Option<String>,
}

impl PartReceipt for Receipt {
    fn to_snapshot_text(&self) -> String {
        match &self.checksum {
            Some(checksum) => format!("{} {checksum}", self.etag),
            None => self.etag.clone(),
        }
    }

    fn from_snapshot_text(text: &str) -> Result<Self, String> {
        let mut fields = text.split(' ');
        let etag = fields.next().unwrap_or_default().to_owned();
        let checksum = fields.next().map(str::to_owned);
        if etag.is_empty() || fields.next().is_some() {
            return Err(format!("expected `<etag> [<checksum>]`, found {text:?}"));
        }
        Ok(Self { etag, checksum })
    }

    fn same_part(&self, listed: &Self) -> bool {
        self.etag.same_part(&listed.etag) && self.checksum == listed.checksum
    }
}

fn receipt(etag: &str, checksum: Option<&str>) -> Receipt {
    Receipt {
        etag: etag.to_owned(),
        checksum: checksum.map(str::to_owned),
    }
}

fn with_receipt(number: u32, size: u64, receipt: Receipt) -> CompletedPart<Receipt> {
    CompletedPart {
        number,
        size,
        receipt,
    }
}

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

/// A part whose receipt is its ETag.
fn part(number: u32, size: u64, etag: &str) -> CompletedPart<String> {
    CompletedPart {
        number,
        size,
        receipt: etag.to_owned(),
    }
}

/// A `ListParts` entry as a driver records it: the same shape.
fn listed(number: u32, size: u64, etag: &str) -> CompletedPart<String> {
    part(number, size, etag)
}

#[test]
fn text_form_is_stable() {
    let snapshot = Snapshot::new(
        "2~abc def%é".to_owned(),
        25,
        10,
        vec![
            part(1, 10, "\"d41d8cd98f00b204e9800998ecf8427e\""),
            part(3, 5, "\"x y\""),
        ],
    );
    let text = "s3-multipart-snapshot 2\n\
                upload-id 2~abc%20def%25%C3%A9\n\
                object-size 25\n\
                part-size 10\n\
                part 1 10 \"d41d8cd98f00b204e9800998ecf8427e\"\n\
                part 3 5 \"x%20y\"\n\
                end\n";
    assert_eq!(snapshot.to_text(), text);
    assert_eq!(UploadSnapshot::parse(text), Ok(snapshot.clone()));
    // Field order is free, CRLF line ends and hex digits' case too.
    let reordered = "s3-multipart-snapshot 2\r\npart-size 10\r\nobject-size 25\r\n\
                     part 1 10 \"d41d8cd98f00b204e9800998ecf8427e\"\r\n\
                     upload-id 2~abc%20def%25%c3%a9\r\npart 3 5 \"x%20y\"\r\nend\r\n\r\n";
    assert_eq!(UploadSnapshot::parse(reordered), Ok(snapshot));
}

#[test]
fn empty_and_dash_receipts_round_trip() {
    // An empty receipt text is `-`, so a part line always has four fields;
    // the text `-` itself is percent-encoded.
    let snapshot = Snapshot::new(
        "u".to_owned(),
        25,
        10,
        vec![part(1, 10, ""), part(2, 10, "-"), part(3, 5, "--")],
    );
    let text = "s3-multipart-snapshot 2\nupload-id u\nobject-size 25\npart-size 10\n\
                part 1 10 -\npart 2 10 %2D\npart 3 5 --\nend\n";
    assert_eq!(snapshot.to_text(), text);
    assert_eq!(UploadSnapshot::parse(text), Ok(snapshot));
    // A missing or empty receipt field is malformed, not an empty receipt.
    for line in ["part 1 10", "part 1 10 "] {
        let text = format!("s3-multipart-snapshot 2\n{line}\nend\n");
        assert_eq!(
            Snapshot::parse(&text),
            Err(Error::Snapshot(SnapshotError {
                line: 2,
                kind: SnapshotErrorKind::MalformedPart
            })),
            "{line:?}"
        );
    }
}

#[test]
fn structured_receipts_round_trip_through_the_text_form() {
    let snapshot = UploadSnapshot::new(
        "u".to_owned(),
        25,
        10,
        vec![
            with_receipt(
                1,
                10,
                receipt(
                    "\"d41d8cd98f00b204e9800998ecf8427e\"",
                    Some("SHA256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="),
                ),
            ),
            with_receipt(3, 5, receipt("\"x\"", None)),
        ],
    );
    // The receipt's space is encoded: the part line keeps four fields.
    let text = "s3-multipart-snapshot 2\n\
                upload-id u\n\
                object-size 25\n\
                part-size 10\n\
                part 1 10 \"d41d8cd98f00b204e9800998ecf8427e\"\
                %20SHA256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\
                part 3 5 \"x\"\n\
                end\n";
    assert_eq!(snapshot.to_text(), text);
    assert_eq!(UploadSnapshot::parse(text), Ok(snapshot));
}

#[test]
fn rejected_receipts_are_invalid_receipt_errors_on_their_line() {
    let text = "s3-multipart-snapshot 2\nupload-id u\nobject-size 25\npart-size 10\n\
                part 1 10 e%20c\npart 2 10 a%20b%20c\nend\n";
    assert_eq!(
        UploadSnapshot::<Receipt>::parse(text),
        Err(Error::Snapshot(SnapshotError {
            line: 6,
            kind: SnapshotErrorKind::InvalidReceipt(
                "expected `<etag> [<checksum>]`, found \"a b c\"".into()
            )
        }))
    );
    // The same text is fine for ETag receipts, which accept any text.
    assert!(Snapshot::parse(text).is_ok());
    let message = UploadSnapshot::<Receipt>::parse("s3-multipart-snapshot 2\npart 1 10 -\nend\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        "invalid upload snapshot: line 2: the part's receipt is invalid: \
         expected `<etag> [<checksum>]`, found \"\""
    );
}

#[test]
fn version_1_snapshots_are_rejected() {
    // Version 1 had the planner's own ETag and checksum fields.
    let text = "s3-multipart-snapshot 1\nupload-id u\nobject-size 25\npart-size 10\n\
                part 1 10 \"e\" SHA256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\nend\n";
    let expected = Error::Snapshot(SnapshotError {
        line: 1,
        kind: SnapshotErrorKind::UnsupportedVersion("1".into()),
    });
    assert_eq!(Snapshot::parse(text), Err(expected.clone()));
    assert_eq!(UploadSnapshot::<Receipt>::parse(text), Err(expected));
}

#[test]
fn same_part_decides_reconciliation() {
    // 25 bytes in 10-byte parts: parts 1..=3, part 3 has 5 bytes.
    let snapshot = UploadSnapshot::new(
        "u".into(),
        25,
        10,
        vec![
            with_receipt(1, 10, receipt("\"a\"", Some("c1"))),
            with_receipt(2, 10, receipt("\"b\"", Some("c2"))),
        ],
    );
    let server = [
        // Same size and same part (the ETag's quotes are optional): kept.
        with_receipt(1, 10, receipt("a", Some("c1"))),
        // Same size and ETag, but another checksum: not the same part.
        with_receipt(2, 10, receipt("\"b\"", Some("other"))),
        // Unknown to the snapshot: adopted with the listed receipt.
        with_receipt(3, 5, receipt("\"c\"", Some("c3"))),
    ];
    let result = snapshot.reconcile(&server, &limits()).unwrap();
    assert_eq!(result.kept, [1]);
    assert_eq!(result.adopted, [3]);
    assert_eq!(result.reupload, [2]);
    assert_eq!(result.ignored, [] as [u32; 0]);
    // A kept part keeps the recorded receipt; an adopted one takes the listed.
    assert_eq!(
        result.snapshot.parts(),
        [
            with_receipt(1, 10, receipt("\"a\"", Some("c1"))),
            with_receipt(3, 5, receipt("\"c\"", Some("c3"))),
        ]
    );
    let mut up = UploadScheduler::resume(&result.snapshot, &options(3)).unwrap();
    assert_eq!(
        std::iter::from_fn(|| up.poll_action()).collect::<Vec<_>>(),
        [Action::UploadPart {
            number: 2,
            range: 10..20,
            attempt: 1
        }]
    );
    up.handle_part_done(2, receipt("\"b2\"", Some("c2'")))
        .unwrap();
    match up.poll_action() {
        Some(Action::Complete { parts }) => assert_eq!(
            parts.as_slice(),
            [
                with_receipt(1, 10, receipt("\"a\"", Some("c1"))),
                with_receipt(2, 10, receipt("\"b2\"", Some("c2'"))),
                with_receipt(3, 5, receipt("\"c\"", Some("c3"))),
            ]
        ),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn parse_errors_name_the_line_and_the_problem() {
    let valid = "s3-multipart-snapshot 2\nupload-id u\nobject-size 25\npart-size 10\nend\n";
    assert!(Snapshot::parse(valid).is_ok());
    let cases: &[(&str, usize, SnapshotErrorKind)] = &[
        ("", 1, SnapshotErrorKind::MissingHeader),
        (
            "s3-multipart-snapshot\n",
            1,
            SnapshotErrorKind::MissingHeader,
        ),
        (
            "s3-multipart-snapshot 1\nend\n",
            1,
            SnapshotErrorKind::UnsupportedVersion("1".into()),
        ),
        (
            "s3-multipart-snapshot 3\nend\n",
            1,
            SnapshotErrorKind::UnsupportedVersion("3".into()),
        ),
        (
            "s3-multipart-snapshot 2\nupload-id u\ncolour blue\nend\n",
            3,
            SnapshotErrorKind::UnknownKey("colour".into()),
        ),
        (
            "s3-multipart-snapshot 2\npart-size 1\npart-size 2\nend\n",
            3,
            SnapshotErrorKind::DuplicateField("part-size"),
        ),
        (
            "s3-multipart-snapshot 2\nupload-id u\nobject-size 25\nend\n",
            0,
            SnapshotErrorKind::MissingField("part-size"),
        ),
        (
            "s3-multipart-snapshot 2\nobject-size +25\nend\n",
            2,
            SnapshotErrorKind::InvalidNumber("+25".into()),
        ),
        (
            "s3-multipart-snapshot 2\nobject-size 99999999999999999999\nend\n",
            2,
            SnapshotErrorKind::InvalidNumber("99999999999999999999".into()),
        ),
        (
            "s3-multipart-snapshot 2\nupload-id a%G1\nend\n",
            2,
            SnapshotErrorKind::InvalidEncoding("a%G1".into()),
        ),
        (
            "s3-multipart-snapshot 2\nupload-id a%4\nend\n",
            2,
            SnapshotErrorKind::InvalidEncoding("a%4".into()),
        ),
        (
            "s3-multipart-snapshot 2\nupload-id %FF\nend\n",
            2,
            SnapshotErrorKind::InvalidEncoding("%FF".into()),
        ),
        (
            "s3-multipart-snapshot 2\npart 1 10\nend\n",
            2,
            SnapshotErrorKind::MalformedPart,
        ),
        (
            "s3-multipart-snapshot 2\npart 1 10 e CRC32=a\nend\n",
            2,
            SnapshotErrorKind::MalformedPart,
        ),
        (
            "s3-multipart-snapshot 2\npart 1 10 e%4\nend\n",
            2,
            SnapshotErrorKind::InvalidEncoding("e%4".into()),
        ),
        (
            "s3-multipart-snapshot 2\npart 2 10 e\npart 2 10 e\nend\n",
            3,
            SnapshotErrorKind::PartsOutOfOrder { number: 2 },
        ),
        (
            "s3-multipart-snapshot 2\nupload-id u\nobject-size 25\npart-size 10\n",
            0,
            SnapshotErrorKind::Truncated,
        ),
        (
            "s3-multipart-snapshot 2\nupload-id u\nobject-size 25\npart-size 10\nend\nmore\n",
            6,
            SnapshotErrorKind::TrailingData,
        ),
    ];
    for (text, line, kind) in cases {
        assert_eq!(
            Snapshot::parse(text),
            Err(Error::Snapshot(SnapshotError {
                line: *line,
                kind: kind.clone()
            })),
            "{text:?}"
        );
    }
    let message = Snapshot::parse("s3-multipart-snapshot 7\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        "invalid upload snapshot: line 1: snapshot format version \"7\" is not supported \
         (this crate reads version 2)"
    );
}

#[test]
fn resume_rejects_snapshots_that_do_not_fit() {
    let check = |snapshot: Snapshot| UploadScheduler::resume(&snapshot, &options(2)).err();
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
    let snapshot = Snapshot::new(
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
    let actions: Vec<Action<String>> = std::iter::from_fn(|| up.poll_action()).collect();
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
    first.handle_part_done(2, "\"e2\"".to_owned()).unwrap();
    let _ = std::iter::from_fn(|| first.poll_action()).count(); // starts part 3
    let text = first.snapshot().unwrap().to_text();
    // The process dies here; part 3 finished on the server meanwhile.
    drop(first);

    let snapshot = Snapshot::parse(&text).unwrap();
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
                let etags: Vec<&str> = parts.iter().map(|p| p.receipt.as_str()).collect();
                assert_eq!(etags, ["\"n1\"", "\"e2\"", "\"e3\"", "\"n4\"", "\"n5\""]);
                second.handle_completed().unwrap();
            }
            Some(other) => panic!("unexpected {other:?}"),
            None => match uploaded.pop() {
                Some(number) => second
                    .handle_part_done(number, format!("\"n{number}\""))
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

/// Receipts whose text form `Receipt::from_snapshot_text` reads back.
fn receipt_strategy() -> impl Strategy<Value = Receipt> {
    ("[^ ]{1,12}", proptest::option::of("[^ ]{0,12}"))
        .prop_map(|(etag, checksum)| Receipt { etag, checksum })
}

fn snapshot_strategy<R: std::fmt::Debug>(
    receipt: impl Strategy<Value = R>,
) -> impl Strategy<Value = UploadSnapshot<R>> {
    let part = (any::<u32>(), any::<u64>(), receipt);
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
                .map(|(number, size, receipt)| CompletedPart {
                    number,
                    size,
                    receipt,
                })
                .collect();
            UploadSnapshot::new(id, object_size, part_size, parts)
        })
}

proptest! {
    #[test]
    fn text_form_round_trips(snapshot in snapshot_strategy(any::<String>())) {
        let text = snapshot.to_text();
        prop_assert_eq!(UploadSnapshot::parse(&text), Ok(snapshot));
    }

    #[test]
    fn structured_receipts_round_trip(snapshot in snapshot_strategy(receipt_strategy())) {
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
    fn mutated_snapshots_never_panic(snapshot in snapshot_strategy(any::<String>()), at in any::<usize>(), byte in any::<u8>()) {
        let mut bytes = snapshot.to_text().into_bytes();
        let index = at % bytes.len();
        bytes[index] = byte;
        s3_multipart_plan::fuzzing::snapshot_text(&bytes);
        bytes.truncate(index);
        s3_multipart_plan::fuzzing::snapshot_text(&bytes);
    }
}

//! Every fixture in testdata/ (see testdata/SOURCE.txt) against the decoders.
//!
//! botocore fixtures: each decoded field is rendered in botocore's JSON shape
//! and compared with the expected JSON beside the XML, so a field that is
//! missing, extra or different fails the test.

use serde_json::{Map, Value, json};

use s3_xml::*;

fn fixture(path: &str) -> Vec<u8> {
    let full = format!("{}/testdata/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn limits() -> Limits {
    Limits::default()
}

/// The expected JSON without botocore's `ResponseMetadata`, with timestamps
/// rewritten to this crate's canonical form so that `.000Z` and `Z` compare.
fn expected_json(path: &str) -> Value {
    let mut v: Value = serde_json::from_slice(&fixture(path)).unwrap();
    v.as_object_mut().unwrap().remove("ResponseMetadata");
    normalize_timestamps(&mut v);
    v
}

fn normalize_timestamps(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if matches!(k.as_str(), "LastModified" | "CreationDate" | "Initiated") {
                    let t: Timestamp = v.as_str().unwrap().parse().unwrap();
                    *v = Value::String(t.to_string());
                } else {
                    normalize_timestamps(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_timestamps),
        _ => {}
    }
}

/// A JSON object builder that leaves out absent values, as botocore does.
#[derive(Default)]
struct Obj(Map<String, Value>);

impl Obj {
    fn s(mut self, k: &str, v: &Option<String>) -> Self {
        if let Some(v) = v {
            self.0.insert(k.into(), json!(v));
        }
        self
    }
    fn v(mut self, k: &str, v: impl Into<Value>) -> Self {
        self.0.insert(k.into(), v.into());
        self
    }
    fn o(mut self, k: &str, v: Option<Value>) -> Self {
        if let Some(v) = v {
            self.0.insert(k.into(), v);
        }
        self
    }
    fn list(mut self, k: &str, v: Vec<Value>) -> Self {
        if !v.is_empty() {
            self.0.insert(k.into(), Value::Array(v));
        }
        self
    }
    fn done(self) -> Value {
        Value::Object(self.0)
    }
}

fn owner(o: &Option<Owner>) -> Option<Value> {
    o.as_ref().map(|o| {
        Obj::default()
            .s("ID", &o.id)
            .s("DisplayName", &o.display_name)
            .done()
    })
}

fn ts(t: &Timestamp) -> Value {
    json!(t.to_string())
}

fn etag(e: &Option<ETag>) -> Option<Value> {
    e.as_ref().map(|e| json!(e.as_str()))
}

fn prefixes(p: &[String]) -> Vec<Value> {
    p.iter().map(|p| json!({ "Prefix": p })).collect()
}

fn object_json(o: &Object) -> Value {
    Obj::default()
        .v("Key", o.key.clone())
        .v("LastModified", ts(&o.last_modified))
        .o("ETag", etag(&o.etag))
        .v("Size", o.size)
        .s("StorageClass", &o.storage_class)
        .o("Owner", owner(&o.owner))
        .list(
            "ChecksumAlgorithm",
            o.checksum_algorithms.iter().map(|a| json!(a)).collect(),
        )
        .s("ChecksumType", &o.checksum_type)
        .done()
}

#[test]
fn botocore_list_objects_matches_expected_json() {
    let r = decode_list_objects(
        &fixture("botocore/responses/s3-list-objects.xml"),
        &limits(),
    )
    .unwrap();
    let mine = Obj::default()
        .v("Name", r.name.clone())
        .s("Prefix", &r.prefix)
        .s("Delimiter", &r.delimiter)
        .s("Marker", &r.marker)
        .s("NextMarker", &r.next_marker)
        .o("MaxKeys", r.max_keys.map(Value::from))
        .v("IsTruncated", r.is_truncated)
        .s("EncodingType", &r.encoding_type)
        .list("Contents", r.contents.iter().map(object_json).collect())
        .list("CommonPrefixes", prefixes(&r.common_prefixes))
        .done();
    assert_eq!(
        mine,
        expected_json("botocore/responses/s3-list-objects.json")
    );
    assert_eq!(r.url_decoded, UrlDecoded::default());
}

#[test]
fn botocore_list_buckets_matches_expected_json() {
    let r = decode_list_buckets(
        &fixture("botocore/responses/s3-list-buckets.xml"),
        &limits(),
    )
    .unwrap();
    let buckets = r
        .buckets
        .iter()
        .map(|b| {
            Obj::default()
                .v("Name", b.name.clone())
                .v("CreationDate", ts(&b.creation_date))
                .s("BucketRegion", &b.region)
                .done()
        })
        .collect();
    let mine = Obj::default()
        .o("Owner", owner(&r.owner))
        .list("Buckets", buckets)
        .s("ContinuationToken", &r.continuation_token)
        .s("Prefix", &r.prefix)
        .done();
    assert_eq!(
        mine,
        expected_json("botocore/responses/s3-list-buckets.json")
    );
    assert_eq!(r.buckets.len(), 36);
}

fn list_uploads_json(r: &ListMultipartUploadsResult) -> Value {
    let uploads = r
        .uploads
        .iter()
        .map(|u| {
            Obj::default()
                .v("Key", u.key.clone())
                .v("UploadId", u.upload_id.clone())
                .o("Initiated", u.initiated.as_ref().map(ts))
                .o("Initiator", owner(&u.initiator))
                .o("Owner", owner(&u.owner))
                .s("StorageClass", &u.storage_class)
                .s("ChecksumAlgorithm", &u.checksum_algorithm)
                .s("ChecksumType", &u.checksum_type)
                .done()
        })
        .collect();
    Obj::default()
        .s("Bucket", &r.bucket)
        .s("KeyMarker", &r.key_marker)
        .s("UploadIdMarker", &r.upload_id_marker)
        .s("NextKeyMarker", &r.next_key_marker)
        .s("NextUploadIdMarker", &r.next_upload_id_marker)
        .s("Prefix", &r.prefix)
        .s("Delimiter", &r.delimiter)
        .o("MaxUploads", r.max_uploads.map(Value::from))
        .v("IsTruncated", r.is_truncated)
        .s("EncodingType", &r.encoding_type)
        .list("Uploads", uploads)
        .list("CommonPrefixes", prefixes(&r.common_prefixes))
        .done()
}

#[test]
fn botocore_list_multipart_uploads_match_expected_json() {
    for name in ["s3-list-multipart-uploads", "s3-list-multipart-uploads#2"] {
        let xml = fixture(&format!("botocore/responses/{name}.xml"));
        let r = decode_list_multipart_uploads(&xml, &limits()).unwrap();
        assert_eq!(
            list_uploads_json(&r),
            expected_json(&format!("botocore/responses/{name}.json")),
            "{name}"
        );
    }
}

fn owner_and_time(e: &VersionEntry) -> (Option<Value>, Value) {
    match e {
        VersionEntry::Version(v) => (owner(&v.owner), ts(&v.last_modified)),
        VersionEntry::DeleteMarker(d) => (owner(&d.owner), ts(&d.last_modified)),
    }
}

/// botocore splits the interleaved entries into `Versions` and `DeleteMarkers`.
fn versions_json(r: &ListObjectVersionsResult) -> Value {
    let (mut versions, mut markers) = (Vec::new(), Vec::new());
    for e in &r.entries {
        let (o, t) = owner_and_time(e);
        let base = Obj::default()
            .v("Key", e.key())
            .v("VersionId", e.version_id())
            .v("LastModified", t)
            .o("Owner", o);
        match e {
            VersionEntry::Version(v) => versions.push(
                base.v("IsLatest", v.is_latest)
                    .o("ETag", etag(&v.etag))
                    .v("Size", v.size)
                    .s("StorageClass", &v.storage_class)
                    .done(),
            ),
            VersionEntry::DeleteMarker(d) => markers.push(base.v("IsLatest", d.is_latest).done()),
        }
    }
    Obj::default()
        .v("Name", r.name.clone())
        .s("Prefix", &r.prefix)
        .s("Delimiter", &r.delimiter)
        .s("KeyMarker", &r.key_marker)
        .s("VersionIdMarker", &r.version_id_marker)
        .s("NextKeyMarker", &r.next_key_marker)
        .s("NextVersionIdMarker", &r.next_version_id_marker)
        .o("MaxKeys", r.max_keys.map(Value::from))
        .v("IsTruncated", r.is_truncated)
        .list("Versions", versions)
        .list("DeleteMarkers", markers)
        .list("CommonPrefixes", prefixes(&r.common_prefixes))
        .done()
}

#[test]
fn botocore_list_object_versions_matches_expected_json_and_keeps_order() {
    let r = decode_list_object_versions(
        &fixture("botocore/responses/s3-list-object-versions.xml"),
        &limits(),
    )
    .unwrap();
    assert_eq!(
        versions_json(&r),
        expected_json("botocore/responses/s3-list-object-versions.json")
    );
    let order: Vec<_> = r
        .entries
        .iter()
        .map(|e| matches!(e, VersionEntry::Version(_)))
        .collect();
    assert_eq!(order, [true, false, true, false, true]);
}

#[test]
fn botocore_bucket_location_is_legacy_eu() {
    let r = decode_bucket_location(
        &fixture("botocore/responses/s3-get-bucket-location.xml"),
        &limits(),
    )
    .unwrap();
    assert_eq!(
        json!({ "LocationConstraint": r.location_constraint }),
        expected_json("botocore/responses/s3-get-bucket-location.json")
    );
    assert_eq!(r.region(), "eu-west-1");
}

#[test]
fn botocore_errors_match_expected_json() {
    for (name, request_id, host_id) in [
        (
            "s3-create-bucket",
            "96380E1CB938DDF7",
            "uCyKZYcyp+7qYdvAcvwQueBs6VdfDURJZTrhTjc3gTfsqaWjC2n532mPb0P+ZQ4Q",
        ),
        (
            "s3-list-objects",
            "9C7D5181867045BB",
            "XNe9pgGHhc+EBMJajTIuknWns46Dd3psDfbWyo1pbc0dULg/tkidZSeWG5VNitPJ",
        ),
    ] {
        let e = decode_error_document(&fixture(&format!("botocore/errors/{name}.xml")), &limits())
            .unwrap();
        let mine = json!({
            "Error": Obj::default()
                .v("Code", e.code.clone())
                .s("Message", &e.message)
                .s("BucketName", &e.bucket_name)
                .s("Key", &e.key)
                .s("Resource", &e.resource)
                .s("Region", &e.region)
                .done()
        });
        assert_eq!(
            mine,
            expected_json(&format!("botocore/errors/{name}.json")),
            "{name}"
        );
        // botocore moves these two into ResponseMetadata, which the fixture leaves empty.
        assert_eq!(e.request_id.as_deref(), Some(request_id));
        assert_eq!(e.host_id.as_deref(), Some(host_id));
        assert!(e.other.is_empty());
    }
}

#[test]
fn smithy_whitespace_only_keys_are_kept_exactly() {
    let r = decode_list_objects(
        &fixture("smithy-rs/protocol-tests/KeysWithWhitespace.xml"),
        &limits(),
    )
    .unwrap();
    assert_eq!(
        (r.name.as_str(), r.max_keys, r.is_truncated),
        ("bucketname", Some(1000), false)
    );
    assert_eq!(
        (r.prefix.as_deref(), r.marker.as_deref()),
        (Some(""), Some(""))
    );
    let got: Vec<_> = r
        .contents
        .iter()
        .map(|o| {
            let id = o.owner.as_ref().and_then(|o| o.id.as_deref());
            (
                o.key.as_str(),
                o.last_modified.unix_seconds(),
                o.etag.as_ref().unwrap().as_str(),
                o.size,
                id,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("    ", 1_626_452_453, "\"etag123\"", 0, Some("owner")),
            (" a ", 1_626_451_330, "\"etag123\"", 0, Some("owner")),
        ]
    );
    assert!(
        r.contents
            .iter()
            .all(|o| o.storage_class.as_deref() == Some("STANDARD"))
    );
}

#[test]
fn smithy_out_of_order_versions_keep_document_order() {
    let r = decode_list_object_versions(
        &fixture("smithy-rs/protocol-tests/OutOfOrderVersions.xml"),
        &limits(),
    )
    .unwrap();
    assert_eq!(
        (r.name.as_str(), r.max_keys, r.is_truncated),
        ("sdk-obj-versions-test", Some(1000), false)
    );
    assert_eq!(
        (
            r.prefix.as_deref(),
            r.key_marker.as_deref(),
            r.version_id_marker.as_deref()
        ),
        (Some(""), Some(""), Some(""))
    );
    let owner_id = "c1665459250c459f1849ddce9b291fc3a72bcf5220dc8f6391a0a1045c683b34";
    let got: Vec<_> = r
        .entries
        .iter()
        .map(|e| match e {
            VersionEntry::Version(v) => {
                assert_eq!(v.owner.as_ref().unwrap().id.as_deref(), Some(owner_id));
                assert_eq!(v.storage_class.as_deref(), Some("STANDARD"));
                let etag = v.etag.as_ref().unwrap().as_str().to_owned();
                (
                    "V",
                    v.key.as_str(),
                    v.version_id.as_str(),
                    v.is_latest,
                    v.last_modified.unix_seconds(),
                    Some((etag, v.size)),
                )
            }
            VersionEntry::DeleteMarker(d) => {
                assert_eq!(
                    d.owner.as_ref().unwrap().display_name.as_deref(),
                    Some("test-name")
                );
                (
                    "D",
                    d.key.as_str(),
                    d.version_id.as_str(),
                    d.is_latest,
                    d.last_modified.unix_seconds(),
                    None,
                )
            }
        })
        .collect();
    let etag = |s: &str, n| Some((s.to_owned(), n));
    assert_eq!(
        got,
        [
            ("D", "build.gradle.kts", "null", true, 1_234_567_890, None),
            (
                "V",
                "build.gradle.kts",
                "IfK9Z4.H5TLAtMxFrxN_C7rFEZbufF3V",
                false,
                1_234_567_890,
                etag("\"99613b85e3f38b222c4ee548cde1e59d\"", 6903)
            ),
            (
                "D",
                "file-2",
                "o98RL6vmlOYiymftbX7wgy_4XWQG4AmY",
                true,
                1_234_567_890,
                None
            ),
            (
                "V",
                "file-2",
                "PSVAbvQihRdsNiktGothjGng7q.5ou9Q",
                false,
                1_234_567_890,
                etag("\"1727d9cb38dd325d9c12c973ef3675fc\"", 14)
            ),
        ]
    );
}

#[test]
fn smithy_recorded_listings_decode() {
    let v2 = decode_list_objects_v2(
        &fixture("smithy-rs/recorded/list-objects-v2.xml"),
        &limits(),
    )
    .unwrap();
    assert_eq!(v2.name, "gdc-organoid-pancreatic-phs001611-2-open");
    assert_eq!(
        (v2.key_count, v2.max_keys, v2.is_truncated),
        (Some(3), Some(3), true)
    );
    assert!(
        v2.next_continuation_token
            .as_deref()
            .unwrap()
            .starts_with("1SL9nYFaimMAwnR9dJnF4M5NMfm3Em6/")
    );
    assert!(
        v2.next_continuation_token
            .as_deref()
            .unwrap()
            .ends_with("TebzB83BzA==")
    );
    let sizes: Vec<_> = v2.contents.iter().map(|o| o.size).collect();
    assert_eq!(sizes, [386_910, 388_349, 396_626]);
    assert_eq!(
        v2.contents[2].key,
        "0541851c-ac0c-496e-93d2-3c03921fa6bd/c92f3dc4-24ea-457b-b90a-d6d599b14a73.rna_seq.star_gene_counts.tsv.gz"
    );
    assert_eq!(
        v2.contents[1].etag.as_ref().unwrap().unquoted(),
        "a2c6997aa0c6a9fd697af3e0517d96be"
    );
    assert!(v2.contents.iter().all(|o| o.owner.is_none()));

    let v1 =
        decode_list_objects(&fixture("smithy-rs/recorded/list-objects.xml"), &limits()).unwrap();
    assert_eq!(
        (v1.max_keys, v1.is_truncated, v1.marker.as_deref()),
        (Some(3), true, Some(""))
    );
    assert_eq!(v1.next_page_marker(), Some(v2.contents[2].key.as_str()));
    let owner = v1.contents[0].owner.as_ref().unwrap();
    assert_eq!(owner.display_name.as_deref(), Some("dcfopen-buckets"));
    let v1_keys: Vec<_> = v1
        .contents
        .iter()
        .map(|o| (&o.key, o.size, &o.etag))
        .collect();
    let v2_keys: Vec<_> = v2
        .contents
        .iter()
        .map(|o| (&o.key, o.size, &o.etag))
        .collect();
    assert_eq!(v1_keys, v2_keys);
}

#[test]
fn s3mock_result_documents_decode() {
    let l = limits();
    let r = decode_complete_multipart_upload(
        &fixture("s3mock/CompleteMultipartUploadResultTest_testSerialization.xml"),
        &l,
    )
    .unwrap();
    assert_eq!(
        (
            r.location.as_deref(),
            r.bucket.as_deref(),
            r.key.as_deref(),
            r.etag.as_ref().map(ETag::as_str)
        ),
        (
            Some("location"),
            Some("bucket"),
            Some("key"),
            Some("\"etag\"")
        )
    );
    assert_eq!(r.checksums.sha256.as_deref(), Some("checksumSHA256"));
    assert_eq!(r.checksums.checksum_type.as_deref(), Some("COMPOSITE"));

    let r = decode_copy_part(
        &fixture("s3mock/CopyPartResultTest_testSerialization.xml"),
        &l,
    )
    .unwrap();
    assert_eq!(r.checksums.crc32.as_deref(), Some("checksum"));
    assert_eq!(
        r.etag.unwrap().unquoted(),
        "99f2fdceebf20fb2e891810adfb0eb71"
    );
    let t = r.last_modified.unwrap();
    assert_eq!(
        (t.unix_seconds(), t.subsec_nanos()),
        (1_514_477_008, 120_000_000)
    );

    let r = decode_delete_result(
        &fixture("s3mock/DeleteResultTest_testSerialization.xml"),
        &l,
    )
    .unwrap();
    let deleted: Vec<_> = r
        .deleted
        .iter()
        .map(|d| (d.key.as_str(), d.version_id.as_deref()))
        .collect();
    assert_eq!(
        deleted,
        [("key0", Some("versionId0")), ("key1", Some("versionId1"))]
    );
    assert_eq!(
        delete_errors(&r),
        [(
            Some("key3"),
            Some("versionId3"),
            Some("errorCode"),
            Some("errorMessage")
        )]
    );

    let e = decode_error_document(
        &fixture("s3mock/ErrorResponseTest_testSerialization.xml"),
        &l,
    )
    .unwrap();
    assert_eq!(
        (
            e.code.as_str(),
            e.message.as_deref(),
            e.resource.as_deref(),
            e.request_id.as_deref()
        ),
        ("code", Some("message"), Some("resource"), Some("requestId"))
    );

    let r = decode_initiate_multipart_upload(
        &fixture("s3mock/InitiateMultipartUploadResultTest_testSerialization.xml"),
        &l,
    )
    .unwrap();
    assert_eq!(
        (r.bucket.as_deref(), r.key.as_deref(), r.upload_id.as_str()),
        (Some("bucketName"), Some("fileName"), "uploadId")
    );

    let r = decode_list_parts(
        &fixture("s3mock/ListPartsResultTest_testSerialization.xml"),
        &l,
    )
    .unwrap();
    assert_eq!(
        (
            r.bucket.as_deref(),
            r.key.as_deref(),
            r.upload_id.as_deref()
        ),
        (Some("bucketName"), Some("fileName"), Some("uploadId"))
    );
    assert_eq!(
        (
            r.part_number_marker,
            r.next_part_number_marker,
            r.max_parts,
            r.is_truncated
        ),
        (Some(5), Some(100), Some(1000), false)
    );
    assert_eq!(
        (r.checksum_algorithm.as_deref(), r.checksum_type.as_deref()),
        (Some("CRC32"), Some("COMPOSITE"))
    );
    assert_eq!(
        r.initiator.as_ref().unwrap().id.as_deref(),
        Some("displayName")
    );
    assert_eq!(r.storage_class.as_deref(), Some("STANDARD"));
    let parts: Vec<_> = r
        .parts
        .iter()
        .map(|p| (p.part_number, p.etag.as_str(), p.size))
        .collect();
    assert_eq!(parts, [(1, "\"etag1\"", 11), (2, "\"etag2\"", 12)]);
}

#[test]
fn s3mock_listings_decode() {
    let l = limits();
    let r = decode_list_objects(
        &fixture("s3mock/ListBucketResultTest_testSerialization.xml"),
        &l,
    )
    .unwrap();
    assert_eq!(
        (r.marker.as_deref(), r.next_marker.as_deref()),
        (Some("marker"), Some("nextMarker"))
    );
    assert_eq!(r.encoding_type.as_deref(), Some("url"));
    // Nothing needed decoding, but every encoded field was present and decoded.
    let d = r.url_decoded;
    assert_eq!(
        (
            d.keys,
            d.prefix,
            d.marker,
            d.next_marker,
            d.common_prefixes,
            d.delimiter,
            d.start_after
        ),
        (true, true, true, true, true, false, false)
    );
    assert_eq!(r.common_prefixes, ["prefix1/", "prefix2/"]);
    assert_eq!(
        r.contents[1].owner.as_ref().unwrap().id.as_deref(),
        Some("11")
    );
    assert_eq!(r.contents[0].checksum_algorithms, ["SHA256"]);
    assert_eq!(r.contents[0].checksum_type.as_deref(), Some("FULL_OBJECT"));

    let r = decode_list_objects_v2(
        &fixture("s3mock/ListBucketResultV2Test_testSerialization.xml"),
        &l,
    )
    .unwrap();
    assert_eq!(
        (
            r.continuation_token.as_deref(),
            r.next_continuation_token.as_deref(),
            r.start_after.as_deref()
        ),
        (
            Some("continuationToken"),
            Some("nextContinuationToken"),
            Some("startAfter")
        )
    );
    assert_eq!(
        (r.key_count, r.delimiter.as_deref()),
        (Some(2), Some("delimiter"))
    );
    // EncodingType comes last in this document: decoding still applies.
    assert!(r.url_decoded.keys && r.url_decoded.start_after && r.url_decoded.delimiter);
    let keys: Vec<_> = r
        .contents
        .iter()
        .map(|o| (o.key.as_str(), o.size))
        .collect();
    assert_eq!(keys, [("key0", 434_234), ("key1", 434_234)]);

    let r = decode_list_multipart_uploads(
        &fixture("s3mock/ListMultipartUploadsResultTest_testSerialization.xml"),
        &l,
    )
    .unwrap();
    // "encodingType" is not "url": values are left as they are.
    assert_eq!(
        (r.encoding_type.as_deref(), r.url_decoded),
        (Some("encodingType"), UrlDecoded::default())
    );
    let uploads: Vec<_> = r
        .uploads
        .iter()
        .map(|u| (u.key.as_str(), u.upload_id.as_str()))
        .collect();
    assert_eq!(uploads, [("key0", "uploadId0"), ("key1", "uploadId1")]);
    assert_eq!(
        r.uploads[1]
            .initiator
            .as_ref()
            .unwrap()
            .display_name
            .as_deref(),
        Some("displayName1001")
    );
    assert_eq!(
        r.uploads[0].initiated.unwrap().unix_seconds(),
        1_514_477_008
    );
    assert_eq!((r.max_uploads, r.common_prefixes.len()), (Some(2), 2));
}

/// The mock's ListAllMyBucketsResult carries the placeholder `creationDate`
/// where a timestamp belongs: strict decoding reports exactly that.
#[test]
fn s3mock_list_buckets_placeholder_date_is_a_clear_error() {
    let xml = fixture("s3mock/ListAllMyBucketsResultTest_testSerialization.xml");
    let err = decode_list_buckets(&xml, &limits()).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::InvalidValue {
            element: "CreationDate",
            problem: ValueProblem::Timestamp(TimestampError::Format)
        }
    );
    let at = usize::try_from(err.position()).unwrap();
    assert!(
        xml[at..].starts_with(b"creationDate</CreationDate>"),
        "{}",
        err
    );
    assert!(err.to_string().contains("CreationDate"));
}

#[test]
fn s3mock_request_bodies_decode_and_match_the_encoders() {
    let l = limits();
    let xml = fixture("s3mock/CompleteMultipartUploadTest_testDeserialization.xml");
    let req = decode_complete_multipart_upload_request(&xml, &l).unwrap();
    assert_eq!(
        req,
        CompleteMultipartUpload::new(vec![CompletedPart::new(1, "\"etag\"".parse().unwrap())])
    );
    assert_eq!(
        strip_layout(&xml),
        strip_layout(encode_complete_multipart_upload(&req).unwrap().as_bytes())
    );

    let xml = fixture("s3mock/DeleteTest_testDeserialization.xml");
    let req = decode_delete_request(&xml, &l).unwrap();
    assert_eq!(
        req,
        Delete::new(vec![
            ObjectIdentifier::with_version("key0", "versionId0"),
            ObjectIdentifier::with_version("key1", "versionId1"),
        ])
    );
    // The fixture spells out `<Quiet>false</Quiet>`, the encoder leaves the default out.
    let fixture_text = strip_layout(&xml).replace("<Quiet>false</Quiet>", "");
    assert_eq!(
        fixture_text,
        strip_layout(encode_delete(&req).unwrap().as_bytes())
    );
}

/// The document without XML declaration, comments and inter-element whitespace.
fn strip_layout(xml: &[u8]) -> String {
    let text = std::str::from_utf8(xml).unwrap();
    let mut text = text.to_owned();
    while let (Some(a), Some(b)) = (text.find("<!--"), text.find("-->")) {
        text.replace_range(a..b + 3, "");
    }
    if let (Some(a), Some(b)) = (text.find("<?xml"), text.find("?>")) {
        text.replace_range(a..b + 2, "");
    }
    text.split('\n').map(str::trim).collect()
}

#[test]
fn java_error_bodies_decode_or_fail_clearly() {
    let l = limits();
    let read = |name: &str| fixture(&format!("aws-sdk-java-v2/errorResponse/{name}.xml"));
    let basic = decode_error_document(&read("ErrorResponseBasicTags"), &l).unwrap();
    assert_eq!(
        (
            basic.code.as_str(),
            basic.message.as_deref(),
            basic.request_id.as_deref(),
            basic.host_id.as_deref()
        ),
        (
            "TestCode",
            Some("TestMessage"),
            Some("TestRequestId"),
            Some("TestExtendedRequestId")
        )
    );
    assert!(basic.other.is_empty());

    let details = decode_error_document(&read("ErrorResponseWithAdditionalDetails"), &l).unwrap();
    let expected: Vec<_> = (1..=4)
        .map(|i| {
            (
                format!("AdditionalDetails{i}"),
                format!("AdditionalDetails{i}"),
            )
        })
        .collect();
    assert_eq!(details.other, expected);
    assert_eq!(
        details.other("AdditionalDetails3"),
        Some("AdditionalDetails3")
    );

    // A nested <Error> child is just another text-only child.
    let nested = decode_error_document(&read("ErrorResponseChildTagError"), &l).unwrap();
    assert_eq!(
        (nested.code.as_str(), nested.other("Error")),
        ("TestCode", Some("TestErrorResponse"))
    );

    // A child with element content is skipped, the rest still decodes.
    let child_tags = decode_error_document(&read("ErrorResponseChildTags"), &l).unwrap();
    assert_eq!(
        (child_tags.code.as_str(), child_tags.other.len()),
        ("TestCode", 0)
    );
    assert_eq!(child_tags.host_id.as_deref(), Some("TestExtendedRequestId"));

    let no_error_tag = decode_error_document(&read("ErrorResponseNoErrorTag"), &l).unwrap_err();
    assert_eq!(
        no_error_tag.kind(),
        &ErrorKind::UnexpectedRoot {
            expected: "Error",
            found: "Code".into()
        }
    );

    let foo = decode_error_document(&read("ErrorResponseRootElementAsFoo"), &l).unwrap_err();
    assert_eq!(
        foo.kind(),
        &ErrorKind::UnexpectedRoot {
            expected: "Error",
            found: "Foo".into()
        }
    );

    let xml = read("ErrorResponseRepeatedXml");
    let repeated = decode_error_document(&xml, &l).unwrap_err();
    assert_eq!(
        repeated.kind(),
        &ErrorKind::Malformed(Malformed::ContentAfterRoot)
    );
    let second = xml.windows(7).rposition(|w| w == b"<Error>").unwrap() as u64;
    assert_eq!(repeated.position(), second, "{repeated}");

    let xml = read("ErrorResponseXMLNotProperFormat");
    let improper = decode_error_document(&xml, &l).unwrap_err();
    assert_eq!(
        improper.kind(),
        &ErrorKind::Malformed(Malformed::MismatchedEndTag {
            expected: "AdditionalDetails4".into(),
            found: "AdditionalDetails3".into()
        })
    );
    let at = usize::try_from(improper.position()).unwrap();
    assert!(
        xml[at..].starts_with(b"</AdditionalDetails3>"),
        "{improper}"
    );
}

#[test]
fn java_crlf_delete_results_decode() {
    let l = limits();
    let full = decode_delete_result(
        &fixture("aws-sdk-java-v2/multiObjectDelete/fullResponse.xml"),
        &l,
    )
    .unwrap();
    let deleted: Vec<_> = full
        .deleted
        .iter()
        .map(|d| {
            (
                d.key.as_str(),
                d.version_id.as_deref(),
                d.delete_marker,
                d.delete_marker_version_id.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        deleted,
        [
            ("key1", Some("Version1"), None, None),
            ("key3", None, Some(true), Some("Version3"))
        ]
    );
    assert_eq!(
        delete_errors(&full),
        [(
            Some("key2"),
            Some("Version2"),
            Some("Code"),
            Some("Message")
        )]
    );
    let partial = decode_delete_result(
        &fixture("aws-sdk-java-v2/multiObjectDelete/errorResponse.xml"),
        &l,
    )
    .unwrap();
    assert_eq!(partial.deleted.len(), 1);
    assert_eq!(partial.deleted[0].version_id.as_deref(), Some("123"));
    assert_eq!(partial.errors[0].message.as_deref(), Some("Access Denied"));
}

type DeleteErrorFields<'a> = (
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
);

fn delete_errors(r: &DeleteResult) -> Vec<DeleteErrorFields<'_>> {
    r.errors
        .iter()
        .map(|e| {
            (
                e.key.as_deref(),
                e.version_id.as_deref(),
                e.code.as_deref(),
                e.message.as_deref(),
            )
        })
        .collect()
}

/// moto names the ListParts root `ListPartsResponse`; the content is S3's, and decodes.
#[test]
fn moto_list_parts_response_root_is_accepted() {
    let xml = fixture("moto/ListPartsResponse.xml");
    let r = decode_list_parts(&xml, &limits()).unwrap();
    assert_eq!(
        (r.bucket.as_deref(), r.key.as_deref()),
        (Some("rec"), Some("big"))
    );
    assert_eq!(r.parts.len(), 1);
    assert_eq!((r.parts[0].part_number, r.parts[0].size), (1, 10));
    assert_eq!(r.next_part_number_marker, Some(1));
    assert!(!r.is_truncated);
    // Any other root is still refused.
    let other = String::from_utf8(xml)
        .unwrap()
        .replace("ListPartsResponse", "ListPartsReply");
    assert!(matches!(
        decode_list_parts(other.as_bytes(), &limits())
            .unwrap_err()
            .kind(),
        ErrorKind::UnexpectedRoot { .. }
    ));
}

/// s3s-fs echoes `EncodingType=url` but sends keys raw: a key with a space or a lone `%`
/// proves it, and the error names the quirk instead of returning a changed key.
#[test]
fn s3s_fs_unencoded_listing_is_named_not_misread() {
    let xml = fixture("s3s-fs/ListObjectsV2-encoding-type-ignored.xml");
    let err = decode_list_objects_v2(&xml, &limits()).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::NotUrlEncoded { element: "Key" });
    let at = usize::try_from(err.position()).unwrap();
    assert!(xml[..at].ends_with(b"<EncodingType>"), "{err}");
    // Read as what it is (no EncodingType), every key is right.
    let raw = String::from_utf8(xml)
        .unwrap()
        .replace("<EncodingType>url</EncodingType>", "");
    let r = decode_list_objects_v2(raw.as_bytes(), &limits()).unwrap();
    let keys: Vec<&str> = r.contents.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(keys, ["100% done.txt", "a+b", "plain"]);
}

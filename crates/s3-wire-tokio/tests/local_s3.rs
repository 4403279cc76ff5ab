//! The client against `tools/local-s3` (s3s-fs with real SigV4 verification): every
//! operation it supports, unusual keys, empty objects, ranges, conditional requests,
//! presigned URLs used by a plain HTTP client, multipart uploads, file and stream uploads,
//! streaming downloads and paginated listings. Each test starts its own server on 127.0.0.1.
//!
//! Not asserted (gaps of s3s-fs 0.14): ListMultipartUploads, tagging, versioning,
//! DeleteBucket refusing a non-empty bucket, PutObject refusing a missing bucket; also
//! conditional GET/HEAD (ignored), keys over ~160 bytes, `encoding-type=url` listings (keys
//! sent unencoded), ListParts (no part ETags), NoSuchUpload after abort, part-ETag checks on
//! completion. Those behaviours are covered against the fault server in `fault.rs`.

mod support;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use local_s3::LocalS3;
use s3_wire_tokio::credentials::MapEnv;
use s3_wire_tokio::s3_ops::ops::abort_multipart_upload::AbortMultipartUpload;
use s3_wire_tokio::s3_ops::ops::complete_multipart_upload::CompleteMultipartUpload;
use s3_wire_tokio::s3_ops::ops::copy_object::CopyObject;
use s3_wire_tokio::s3_ops::ops::copy_source::CopySource;
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
use s3_wire_tokio::s3_ops::ops::delete_bucket::DeleteBucket;
use s3_wire_tokio::s3_ops::ops::delete_object::DeleteObject;
use s3_wire_tokio::s3_ops::ops::delete_objects::DeleteObjects;
use s3_wire_tokio::s3_ops::ops::get_bucket_location::GetBucketLocation;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_bucket::HeadBucket;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::list_buckets::ListBuckets;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::list_parts::ListParts;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::ops::upload_part::UploadPart;
use s3_wire_tokio::s3_ops::ops::upload_part_copy::UploadPartCopy;
use s3_wire_tokio::s3_ops::{BucketName, ByteRange, ChecksumAlgorithm, CompletedPart, ObjectKey};
use s3_wire_tokio::{Body, Client, ClientBuilder};
use sha2::{Digest, Sha256};

/// A running local-s3 server and a client for it.
struct Local {
    client: Client,
    // Dropped last: stops the server after the client is gone.
    server: LocalS3,
}

impl Local {
    /// Starts a server and a client.
    async fn start() -> Self {
        let (client, server) = support::local_s3().await;
        Self { client, server }
    }

    /// Starts a server and creates `bucket` on it.
    async fn with_bucket(bucket: &str) -> Self {
        let local = Self::start().await;
        local
            .client
            .send(CreateBucket::new(bucket_name(bucket)))
            .await
            .expect("create bucket");
        local
    }

    async fn put(&self, bucket: &str, key: &str, data: impl Into<Body>) {
        self.client
            .put_object(PutObject::new(bucket_name(bucket), object_key(key)), data)
            .await
            .unwrap_or_else(|err| panic!("put {key:?}: {err}"));
    }

    async fn get(&self, bucket: &str, key: &str) -> Bytes {
        self.get_with(GetObject::new(bucket_name(bucket), object_key(key)))
            .await
            .unwrap_or_else(|err| panic!("get {key:?}: {err}"))
    }

    async fn get_with(&self, op: GetObject) -> Result<Bytes, s3_wire_tokio::Error> {
        self.client.get_object(op).await?.body.collect().await
    }
}

fn bucket_name(name: &str) -> BucketName {
    BucketName::new(name).expect("bucket name")
}

fn object_key(name: &str) -> ObjectKey {
    ObjectKey::new(name).unwrap_or_else(|err| panic!("key {name:?}: {err}"))
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    // Not periodic over small windows, so a misplaced chunk cannot compare equal.
    let mut state = u32::from(seed) | 0x9E37_0000;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as u8
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Buckets
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn bucket_create_head_list_delete() {
    let local = Local::start().await;
    let client = &local.client;
    let missing = client
        .send(HeadBucket::new(bucket_name("not-there")))
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing:?}");

    for name in ["alpha-bucket", "beta-bucket"] {
        client
            .send(CreateBucket::new(bucket_name(name)))
            .await
            .unwrap();
    }
    client
        .send(HeadBucket::new(bucket_name("alpha-bucket")))
        .await
        .unwrap();
    let listed = client.send(ListBuckets::new()).await.unwrap();
    let mut names: Vec<&str> = listed
        .result
        .buckets
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["alpha-bucket", "beta-bucket"]);

    let location = client
        .send(GetBucketLocation::new(bucket_name("alpha-bucket")))
        .await
        .unwrap();
    // us-east-1 is reported as the empty constraint, as S3 does.
    assert!(
        ["", "us-east-1"].contains(&location.result.location_constraint.as_str()),
        "{:?}",
        location.result.location_constraint
    );

    client
        .send(DeleteBucket::new(bucket_name("alpha-bucket")))
        .await
        .unwrap();
    let gone = client
        .send(HeadBucket::new(bucket_name("alpha-bucket")))
        .await
        .unwrap_err();
    assert!(gone.is_not_found(), "{gone:?}");
    let listed = client.send(ListBuckets::new()).await.unwrap();
    assert_eq!(listed.result.buckets.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn put_head_get_delete_round_trip_with_metadata() {
    let local = Local::with_bucket("objects").await;
    let data = pattern(10_000, 1);
    let put = local
        .client
        .put_object(
            PutObject::new(bucket_name("objects"), object_key("docs/report.csv"))
                .content_type("text/csv")
                .metadata("owner", "team-a"),
            Bytes::from(data.clone()),
        )
        .await
        .unwrap();
    let etag = put.etag.expect("PutObject returns an ETag");

    let head = local
        .client
        .send(HeadObject::new(
            bucket_name("objects"),
            object_key("docs/report.csv"),
        ))
        .await
        .unwrap();
    assert_eq!(head.content_length, Some(10_000));
    assert_eq!(head.content_type.as_deref(), Some("text/csv"));
    assert_eq!(
        head.metadata.get("owner").map(String::as_str),
        Some("team-a")
    );
    assert_eq!(head.etag.as_ref(), Some(&etag));

    assert_eq!(local.get("objects", "docs/report.csv").await, data);

    local
        .client
        .send(DeleteObject::new(
            bucket_name("objects"),
            object_key("docs/report.csv"),
        ))
        .await
        .unwrap();
    let err = local
        .get_with(GetObject::new(
            bucket_name("objects"),
            object_key("docs/report.csv"),
        ))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(
        err.service_error().map(|e| e.code.as_str()),
        Some("NoSuchKey")
    );
    let err = local
        .client
        .send(HeadObject::new(
            bucket_name("objects"),
            object_key("docs/report.csv"),
        ))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

#[tokio::test]
async fn keys_with_unusual_bytes_round_trip() {
    let local = Local::with_bucket("keys").await;
    // s3s-fs names a metadata file after the base64 of the key, which caps keys at about
    // 160 bytes here; the 1024-byte key is covered against the fault server (`fault.rs`).
    let long_key = format!("long/{}", "k".repeat(150));
    let keys = [
        "with space.txt",
        "plus+sign",
        "percent%20not-an-escape%",
        "double//slash",
        "unicode/日本語/ümlaut-é",
        "emoji-🚀",
        "reserved !$&'()*,;=:@?#[]",
        "tilde~caret^back`tick{brace}|pipe\"quote<angle>",
        long_key.as_str(),
    ];
    for (index, key) in keys.iter().enumerate() {
        let data = format!("object {index}: {key}");
        local.put("keys", key, Bytes::from(data.clone())).await;
        assert_eq!(local.get("keys", key).await, data.as_bytes(), "{key:?}");
        let head = local
            .client
            .send(HeadObject::new(bucket_name("keys"), object_key(key)))
            .await
            .unwrap_or_else(|err| panic!("head {key:?}: {err}"));
        assert_eq!(head.content_length, Some(data.len() as u64), "{key:?}");
    }
    // Keys listed back are the same strings (those s3s-fs can represent as paths). s3s-fs
    // echoes `encoding-type=url` but sends keys raw: a raw non-ASCII key proves it, and a
    // single request says so; the paginator asks again without it.
    let encoded = ListObjectsV2::new(bucket_name("keys")).prefix("unicode/");
    let err = local.client.send(encoded.clone()).await.unwrap_err();
    assert!(err.is_unencoded_listing(), "{err:?}");
    let listed = local
        .client
        .list_objects_v2_pages(encoded)
        .next_page()
        .await
        .expect("one page")
        .unwrap();
    let listed: Vec<&str> = listed
        .result
        .contents
        .iter()
        .map(|o| o.key.as_str())
        .collect();
    assert_eq!(listed, ["unicode/日本語/ümlaut-é"]);
    let listed = local
        .client
        // s3s-fs echoes `encoding-type=url` but sends keys unencoded, so a `+` would be
        // decoded as a space: ask for raw keys here.
        .send(
            ListObjectsV2::new(bucket_name("keys"))
                .prefix("plus+")
                .url_encoding(false),
        )
        .await
        .unwrap();
    assert_eq!(listed.result.contents.len(), 1);
    assert_eq!(listed.result.contents[0].key, "plus+sign");
}

#[tokio::test]
async fn keys_with_dot_segments_are_refused_and_touch_nothing() {
    let local = Local::with_bucket("dots").await;
    local
        .put("dots", "b", Bytes::from_static(b"original b"))
        .await;
    let err = local
        .client
        .put_object(
            PutObject::new(bucket_name("dots"), object_key("a/../b")),
            Bytes::from_static(b"would overwrite b"),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), s3_wire_tokio::ErrorKind::Operation(_)),
        "{err:?}"
    );
    assert_eq!(local.get("dots", "b").await, "original b");
}

#[tokio::test]
async fn empty_objects() {
    let local = Local::with_bucket("empty").await;
    local.put("empty", "nothing", Bytes::new()).await;
    let head = local
        .client
        .send(HeadObject::new(bucket_name("empty"), object_key("nothing")))
        .await
        .unwrap();
    assert_eq!(head.content_length, Some(0));
    let response = local
        .client
        .get_object(GetObject::new(bucket_name("empty"), object_key("nothing")))
        .await
        .unwrap();
    assert_eq!(response.body.content_length(), Some(0));
    assert!(response.body.collect().await.unwrap().is_empty());
    // The MD5 of nothing.
    assert_eq!(
        head.etag.unwrap().as_str(),
        "\"d41d8cd98f00b204e9800998ecf8427e\""
    );
}

#[tokio::test]
async fn ranged_gets() {
    let local = Local::with_bucket("ranges").await;
    let data = pattern(1000, 2);
    local.put("ranges", "obj", Bytes::from(data.clone())).await;
    let get = |range| GetObject::new(bucket_name("ranges"), object_key("obj")).range(range);

    let response = local
        .client
        .get_object(get(ByteRange::new(100, 199).unwrap()))
        .await
        .unwrap();
    let content_range = response.output.head.content_range.expect("Content-Range");
    assert_eq!(
        (content_range.first, content_range.last, content_range.total),
        (100, 199, Some(1000))
    );
    assert_eq!(response.body.collect().await.unwrap(), data[100..200]);

    for (range, expected) in [
        (ByteRange::From(990), &data[990..]),
        (ByteRange::Suffix(7), &data[993..]),
        (ByteRange::new(0, 0).unwrap(), &data[..1]),
        (ByteRange::new(900, 5000).unwrap(), &data[900..]),
    ] {
        assert_eq!(
            local.get_with(get(range)).await.unwrap(),
            expected,
            "{range:?}"
        );
    }
    let err = local
        .get_with(get(ByteRange::From(1000)))
        .await
        .unwrap_err();
    assert_eq!(
        err.service_error()
            .map(|e| (e.status.as_u16(), e.code.as_str())),
        Some((416, "InvalidRange")),
        "{err:?}"
    );
}

/// s3s-fs 0.14 evaluates conditions on PutObject, CopyObject (source) and
/// CompleteMultipartUpload but ignores them on GetObject/HeadObject; conditional reads are
/// covered against the fault server (`fault.rs`).
#[tokio::test]
async fn conditional_writes_and_copies() {
    let local = Local::with_bucket("conditions").await;
    let put = || PutObject::new(bucket_name("conditions"), object_key("obj"));
    let first = local
        .client
        .put_object(
            put().if_none_match_any(),
            Bytes::from_static(b"version one"),
        )
        .await
        .unwrap();
    let etag = first.etag.unwrap();
    let other = "\"00000000000000000000000000000000\"";

    // Create-only fails once the object exists.
    let err = local
        .client
        .put_object(put().if_none_match_any(), Bytes::from_static(b"clobber"))
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err:?}");
    assert_eq!(err.service_error().map(|e| e.status.as_u16()), Some(412));
    assert_eq!(err.attempts(), 1, "a failed precondition is final");

    // Compare-and-swap on the ETag.
    let err = local
        .client
        .put_object(put().if_match(other), Bytes::from_static(b"clobber"))
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err:?}");
    local
        .client
        .put_object(
            put().if_match(etag.as_str()),
            Bytes::from_static(b"version two"),
        )
        .await
        .unwrap();
    assert_eq!(local.get("conditions", "obj").await, "version two");

    // Copy conditions on the source.
    let copy =
        |source: CopySource| CopyObject::new(source, bucket_name("conditions"), object_key("copy"));
    let source = || CopySource::new(bucket_name("conditions"), object_key("obj"));
    let err = local
        .client
        .send(copy(source().if_match(other)))
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err:?}");
    let current = local
        .client
        .send(HeadObject::new(
            bucket_name("conditions"),
            object_key("obj"),
        ))
        .await
        .unwrap()
        .etag
        .unwrap();
    let err = local
        .client
        .send(copy(source().if_none_match(current.as_str())))
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err:?}");
    local
        .client
        .send(copy(source().if_match(current.as_str())))
        .await
        .unwrap();
    assert_eq!(local.get("conditions", "copy").await, "version two");
}

#[tokio::test]
async fn copy_object_and_batch_delete() {
    let local = Local::with_bucket("copies").await;
    let data = pattern(70_000, 3);
    local
        .put("copies", "source", Bytes::from(data.clone()))
        .await;
    let copied = local
        .client
        .send(CopyObject::new(
            CopySource::new(bucket_name("copies"), object_key("source")),
            bucket_name("copies"),
            object_key("dir/copy of source"),
        ))
        .await
        .unwrap();
    assert!(copied.result.etag.is_some());
    assert_eq!(local.get("copies", "dir/copy of source").await, data);

    let deleted = local
        .client
        .send(DeleteObjects::new(
            bucket_name("copies"),
            [object_key("source"), object_key("dir/copy of source")],
        ))
        .await
        .unwrap();
    let mut keys: Vec<&str> = deleted
        .result
        .deleted
        .iter()
        .map(|d| d.key.as_str())
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["dir/copy of source", "source"]);
    assert!(deleted.result.errors.is_empty());
    let listed = local
        .client
        .send(ListObjectsV2::new(bucket_name("copies")))
        .await
        .unwrap();
    assert!(listed.result.contents.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Uploads: checksums, files, one-shot streams
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn each_checksum_algorithm_is_accepted_and_returned() {
    let local = Local::with_bucket("sums").await;
    let data = Bytes::from(pattern(40_000, 4));
    for algorithm in [
        ChecksumAlgorithm::Crc32,
        ChecksumAlgorithm::Crc32c,
        ChecksumAlgorithm::Crc64Nvme,
        ChecksumAlgorithm::Sha1,
        ChecksumAlgorithm::Sha256,
    ] {
        let key = format!("{algorithm:?}");
        let put = local
            .client
            .put_object(
                PutObject::new(bucket_name("sums"), object_key(&key)).checksum_algorithm(algorithm),
                data.clone(),
            )
            .await
            .unwrap_or_else(|err| panic!("{algorithm:?}: {err}"));
        assert!(put.etag.is_some(), "{algorithm:?}");
        let response = local
            .client
            .get_object(GetObject::new(bucket_name("sums"), object_key(&key)).checksum_mode(true))
            .await
            .unwrap();
        assert_eq!(
            response.body.collect().await.unwrap(),
            data,
            "{algorithm:?}"
        );
    }
    // SHA-256 is checkable here independently: S3 returns it base64-encoded.
    let head = local
        .client
        .send(HeadObject::new(bucket_name("sums"), object_key("Sha256")).checksum_mode(true))
        .await
        .unwrap();
    let expected = support::base64(&Sha256::digest(&data));
    let returned: Vec<(ChecksumAlgorithm, &str)> = head
        .checksums
        .values
        .iter()
        .map(|(algorithm, value)| (*algorithm, value.as_str()))
        .collect();
    assert_eq!(returned, [(ChecksumAlgorithm::Sha256, expected.as_str())]);
}

#[tokio::test]
async fn a_file_upload_and_download_to_file() {
    let local = Local::with_bucket("files").await;
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source.bin");
    let data = pattern(3 * 1024 * 1024 + 17, 5);
    std::fs::write(&source, &data).unwrap();
    local
        .put("files", "uploaded", Body::from_file(&source).await.unwrap())
        .await;
    // A range of the file, too.
    local
        .put(
            "files",
            "middle",
            Body::from_file_range(&source, 1000, 5000).await.unwrap(),
        )
        .await;
    assert_eq!(local.get("files", "middle").await, data[1000..6000]);

    let target = dir.path().join("downloaded.bin");
    let response = local
        .client
        .get_object(GetObject::new(bucket_name("files"), object_key("uploaded")))
        .await
        .unwrap();
    let written = response.body.write_to_file(&target).await.unwrap();
    assert_eq!(written, data.len() as u64);
    assert_eq!(std::fs::read(&target).unwrap(), data);
}

#[tokio::test]
async fn a_one_shot_stream_upload_is_verified_by_the_server() {
    // local-s3 checks the aws-chunked chunk signatures (and the trailing checksum).
    let local = Local::with_bucket("streams").await;
    let data = pattern(1_000_003, 6);
    for algorithm in [None, Some(ChecksumAlgorithm::Crc32c)] {
        let key = format!("stream-{algorithm:?}");
        let mut put = PutObject::new(bucket_name("streams"), object_key(&key));
        if let Some(algorithm) = algorithm {
            put = put.checksum_algorithm(algorithm);
        }
        local
            .client
            .put_object(put, support::one_shot(&data, 65_000))
            .await
            .unwrap_or_else(|err| panic!("{key}: {err}"));
        assert_eq!(local.get("streams", &key).await, data, "{key}");
    }
}

// ---------------------------------------------------------------------------------------------
// Downloads: streaming, byte for byte
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_streaming_get_matches_byte_for_byte() {
    let local = Local::with_bucket("stream-get").await;
    let data = pattern(8 * 1024 * 1024 + 3, 7);
    let digest = Sha256::digest(&data);
    local
        .put("stream-get", "big", Bytes::from(data.clone()))
        .await;

    let mut response = local
        .client
        .get_object(GetObject::new(bucket_name("stream-get"), object_key("big")))
        .await
        .unwrap();
    assert_eq!(response.body.content_length(), Some(data.len() as u64));
    let mut offset = 0;
    let mut chunks = 0;
    let mut hasher = Sha256::new();
    while let Some(chunk) = response.body.next_chunk().await {
        let chunk = chunk.unwrap();
        assert_eq!(
            chunk,
            data[offset..offset + chunk.len()],
            "at offset {offset}"
        );
        hasher.update(&chunk);
        offset += chunk.len();
        chunks += 1;
    }
    assert_eq!(offset, data.len());
    assert!(chunks > 1, "an 8 MiB body arrives in several chunks");
    assert_eq!(hasher.finalize(), digest);

    // The AsyncRead adapter delivers the same bytes.
    let response = local
        .client
        .get_object(GetObject::new(bucket_name("stream-get"), object_key("big")))
        .await
        .unwrap();
    let mut reader = response.body.into_async_read();
    let mut read = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut read)
        .await
        .unwrap();
    assert_eq!(Sha256::digest(&read), digest);
}

// ---------------------------------------------------------------------------------------------
// Listing
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn paginated_listing_across_pages() {
    let local = Local::with_bucket("listing").await;
    let mut expected = Vec::new();
    for index in 0..25 {
        let key = format!("logs/{index:03}.txt");
        local.put("listing", &key, Bytes::from(key.clone())).await;
        expected.push(key);
    }
    local
        .put("listing", "other/x", Bytes::from_static(b"x"))
        .await;

    let mut request = Some(
        ListObjectsV2::new(bucket_name("listing"))
            .prefix("logs/")
            .max_keys(10),
    );
    let mut pages = Vec::new();
    while let Some(op) = request.take() {
        let page = local.client.send(op.clone()).await.unwrap();
        pages.push(
            page.result
                .contents
                .iter()
                .map(|o| (o.key.clone(), o.size))
                .collect::<Vec<_>>(),
        );
        request = op.next_page(&page);
        assert!(pages.len() <= 3, "pagination does not end");
    }
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [10, 10, 5]);
    let keys: Vec<String> = pages
        .into_iter()
        .flatten()
        .map(|(key, size)| {
            assert_eq!(size, key.len() as u64);
            key
        })
        .collect();
    assert_eq!(keys, expected);

    // The same listing as a lazy stream of pages.
    let mut pages = local.client.list_objects_v2_pages(
        ListObjectsV2::new(bucket_name("listing"))
            .prefix("logs/")
            .max_keys(10),
    );
    let mut streamed = Vec::new();
    let mut page_count = 0;
    while let Some(page) = pages.next_page().await {
        let page = page.unwrap();
        page_count += 1;
        streamed.extend(page.result.contents.into_iter().map(|o| o.key));
    }
    assert_eq!(page_count, 3);
    assert_eq!(streamed, expected);

    // Delimiter: common prefixes instead of keys.
    let top = local
        .client
        .send(ListObjectsV2::new(bucket_name("listing")).delimiter("/"))
        .await
        .unwrap();
    assert!(top.result.contents.is_empty());
    assert_eq!(top.result.common_prefixes, ["logs/", "other/"]);
}

// ---------------------------------------------------------------------------------------------
// Presigned URLs with a plain HTTP client
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn presigned_put_and_get_with_plain_reqwest() {
    let local = Local::with_bucket("presigned").await;
    let key = "shared/report 2024+final.bin";
    let data = pattern(20_000, 8);
    let http = support::http_client();

    let put = local
        .client
        .presign(
            &PutObject::new(bucket_name("presigned"), object_key(key)),
            Duration::from_secs(300),
        )
        .await
        .unwrap();
    assert!(!format!("{put:?}").contains(&put.signature().to_hex()));
    let mut request = http.put(put.url()).body(data.clone());
    for (name, value) in put.headers() {
        request = request.header(name.as_str(), value.as_bytes());
    }
    let response = request.send().await.unwrap();
    assert!(
        response.status().is_success(),
        "presigned PUT: {} {}",
        response.status(),
        response.text().await.unwrap_or_default()
    );

    let get = local
        .client
        .presign(
            &GetObject::new(bucket_name("presigned"), object_key(key)),
            Duration::from_secs(300),
        )
        .await
        .unwrap();
    let response = http.get(get.url()).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.bytes().await.unwrap(), data);

    // A tampered URL is refused by the server.
    let tampered = get.url().replace("report%202024", "report%202025");
    assert_ne!(tampered, get.url());
    let response = http.get(&tampered).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 403);
}

// ---------------------------------------------------------------------------------------------
// Configuration from the environment
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_client_from_environment_variables_and_from_a_profile() {
    let local = Local::start().await;
    let server = &local.server;
    let env = MapEnv::new()
        .with_var("AWS_ACCESS_KEY_ID", server.access_key())
        .with_var("AWS_SECRET_ACCESS_KEY", server.secret_key())
        .with_var("AWS_REGION", server.region())
        .with_var("AWS_ENDPOINT_URL_S3", server.endpoint());
    let client = ClientBuilder::from_env_with(Arc::new(env)).build().unwrap();
    client
        .send(CreateBucket::new(bucket_name("from-env")))
        .await
        .unwrap();

    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".aws")).unwrap();
    std::fs::write(
        home.path().join(".aws").join("credentials"),
        format!(
            "[local]\naws_access_key_id = {}\naws_secret_access_key = {}\n",
            server.access_key(),
            server.secret_key()
        ),
    )
    .unwrap();
    std::fs::write(
        home.path().join(".aws").join("config"),
        format!(
            "[profile local]\nregion = {}\nendpoint_url = {}\n",
            server.region(),
            server.endpoint()
        ),
    )
    .unwrap();
    let env = MapEnv::new()
        .with_home(home.path())
        .with_var("AWS_PROFILE", "local");
    let client = ClientBuilder::from_env_with(Arc::new(env)).build().unwrap();
    client
        .send(HeadBucket::new(bucket_name("from-env")))
        .await
        .unwrap();

    // Wrong keys in the profile: the server refuses the signature.
    std::fs::write(
        home.path().join(".aws").join("credentials"),
        "[local]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n",
    )
    .unwrap();
    let env = MapEnv::new()
        .with_home(home.path())
        .with_var("AWS_PROFILE", "local");
    let client = ClientBuilder::from_env_with(Arc::new(env)).build().unwrap();
    let err = client
        .send(HeadBucket::new(bucket_name("from-env")))
        .await
        .unwrap_err();
    assert_eq!(
        err.service_error().map(|e| e.status.as_u16()),
        Some(403),
        "{err:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Multipart uploads
// ---------------------------------------------------------------------------------------------

const MIB: usize = 1024 * 1024;

#[tokio::test]
async fn multipart_create_upload_complete_and_abort() {
    let local = Local::with_bucket("multi").await;
    let client = &local.client;
    let key = "big/assembled object.bin";
    let data = pattern(11 * MIB + 123, 9);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("part2.bin");
    std::fs::write(&file, &data).unwrap();

    let created = client
        .send(CreateMultipartUpload::new(
            bucket_name("multi"),
            object_key(key),
        ))
        .await
        .unwrap();
    let upload_id = created.upload_id.clone();
    let part = |number| UploadPart::new(bucket_name("multi"), object_key(key), &upload_id, number);

    // Three body kinds: bytes, a file range read in place, a one-shot stream.
    let first = client
        .upload_part(part(1), Bytes::copy_from_slice(&data[..5 * MIB]))
        .await
        .unwrap();
    let second = client
        .upload_part(
            part(2),
            Body::from_file_range(&file, 5 * MIB as u64, 5 * MIB as u64)
                .await
                .unwrap(),
        )
        .await
        .unwrap();
    let tail = &data[10 * MIB..];
    let third = client
        .upload_part(part(3), support::one_shot(tail, 100_000))
        .await
        .unwrap();
    let etags = [
        first.etag.unwrap(),
        second.etag.unwrap(),
        third.etag.unwrap(),
    ];

    // (ListParts is covered against the fault server: s3s-fs 0.14 omits each part's ETag,
    // which S3 always sends and the strict decoder requires.)
    assert!(etags.iter().all(|etag| !etag.as_str().is_empty()));

    // (s3s-fs 0.14 does not check part ETags on completion, so a wrong one is not asserted.)
    let parts = etags
        .iter()
        .zip(1..)
        .map(|(etag, number)| CompletedPart::new(number, etag.clone()))
        .collect();
    let done = client
        .send(CompleteMultipartUpload::new(
            bucket_name("multi"),
            object_key(key),
            &upload_id,
            parts,
        ))
        .await
        .unwrap();
    // A multipart ETag names its part count.
    let etag = done
        .result
        .etag
        .expect("CompleteMultipartUpload returns an ETag");
    assert!(etag.as_str().ends_with("-3\""), "{etag:?}");
    assert_eq!(local.get("multi", key).await, data);

    // Abort: the upload and its parts are gone.
    let aborted = client
        .send(CreateMultipartUpload::new(
            bucket_name("multi"),
            object_key("abandoned"),
        ))
        .await
        .unwrap();
    client
        .upload_part(
            UploadPart::new(
                bucket_name("multi"),
                object_key("abandoned"),
                &aborted.upload_id,
                1,
            ),
            Bytes::from_static(b"partial"),
        )
        .await
        .unwrap();
    client
        .send(AbortMultipartUpload::new(
            bucket_name("multi"),
            object_key("abandoned"),
            &aborted.upload_id,
        ))
        .await
        .unwrap();
    // S3 answers NoSuchUpload; s3s-fs 0.14 lists an empty upload. Either way no part is left.
    match client
        .send(ListParts::new(
            bucket_name("multi"),
            object_key("abandoned"),
            &aborted.upload_id,
        ))
        .await
    {
        Ok(listed) => assert!(listed.result.parts.is_empty(), "{listed:?}"),
        Err(err) => assert_eq!(
            err.service_error().map(|e| e.code.as_str()),
            Some("NoSuchUpload"),
            "{err:?}"
        ),
    }
    let err = local
        .get_with(GetObject::new(
            bucket_name("multi"),
            object_key("abandoned"),
        ))
        .await
        .unwrap_err();
    assert!(err.is_not_found());
}

#[tokio::test]
async fn upload_part_copy_assembles_ranges_of_another_object() {
    let local = Local::with_bucket("part-copy").await;
    let client = &local.client;
    let data = pattern(12 * MIB, 10);
    local
        .put("part-copy", "source", Bytes::from(data.clone()))
        .await;
    let created = client
        .send(CreateMultipartUpload::new(
            bucket_name("part-copy"),
            object_key("target"),
        ))
        .await
        .unwrap();
    let source = || CopySource::new(bucket_name("part-copy"), object_key("source"));
    let copy_part = |number, first: usize, last: usize| {
        UploadPartCopy::new(
            source(),
            bucket_name("part-copy"),
            object_key("target"),
            &created.upload_id,
            number,
        )
        .source_range(ByteRange::new(first as u64, last as u64).unwrap())
    };
    // Parts: the second half, then the first half (order swapped).
    let one = client
        .send(copy_part(1, 6 * MIB, 12 * MIB - 1))
        .await
        .unwrap();
    let two = client.send(copy_part(2, 0, 6 * MIB - 1)).await.unwrap();
    let parts = vec![
        CompletedPart::new(1, one.result.etag.unwrap()),
        CompletedPart::new(2, two.result.etag.unwrap()),
    ];
    client
        .send(CompleteMultipartUpload::new(
            bucket_name("part-copy"),
            object_key("target"),
            &created.upload_id,
            parts,
        ))
        .await
        .unwrap();
    let mut expected = data[6 * MIB..].to_vec();
    expected.extend_from_slice(&data[..6 * MIB]);
    assert_eq!(local.get("part-copy", "target").await, expected);
}

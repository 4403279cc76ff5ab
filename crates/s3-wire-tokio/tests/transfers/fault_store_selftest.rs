//! The in-memory `FaultStore` against the real client: every operation round-trips through
//! the client's own single-request API and decodes with the strict s3-xml decoders, checksums
//! equal independently computed values, multipart semantics follow S3, and each injected fault
//! does what it says, reproducibly. Every test ends with no signature failures.

use std::time::{Duration, SystemTime};

use crate::fault_store::{FaultKind, FaultPlan, FaultStore, Op, REGION, request_identity};
use crate::support::sigv4::hex;
use crate::support::{base64, crc32, crc64nvme, data, one_shot, retry, sha256};
use bytes::Bytes;
use md5::{Digest as _, Md5};
use s3_wire_tokio::s3_ops::ops::abort_multipart_upload::AbortMultipartUpload;
use s3_wire_tokio::s3_ops::ops::complete_multipart_upload::CompleteMultipartUpload;
use s3_wire_tokio::s3_ops::ops::copy_object::{CopyObject, Directive};
use s3_wire_tokio::s3_ops::ops::copy_source::CopySource;
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
use s3_wire_tokio::s3_ops::ops::delete_object::DeleteObject;
use s3_wire_tokio::s3_ops::ops::delete_objects::DeleteObjects;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::get_object_tagging::GetObjectTagging;
use s3_wire_tokio::s3_ops::ops::head_bucket::HeadBucket;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::list_multipart_uploads::ListMultipartUploads;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::list_parts::ListParts;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::ops::upload_part::{UploadPart, UploadPartOutput};
use s3_wire_tokio::s3_ops::ops::upload_part_copy::UploadPartCopy;
use s3_wire_tokio::s3_ops::{
    ByteRange, Checksum, ChecksumAlgorithm, ChecksumType, ServerSideEncryption, SseCustomerKey,
    StorageClass,
};
use s3_wire_tokio::s3_xml::{Checksums, CompletedPart, ETag};
use s3_wire_tokio::{
    Body, Client, Error, ErrorKind, NotVerified, TimeoutKind, TransportErrorKind, Verification,
};

const BUCKET: &str = "bucket";

fn client_with(store: &FaultStore, attempts: u32, stall: Duration) -> Client {
    store
        .client_builder()
        .retry(retry(attempts))
        .stall_timeout(stall)
        .build()
        .expect("client")
}

fn client(store: &FaultStore) -> Client {
    client_with(store, 3, Duration::from_secs(5))
}

fn bucket() -> s3_wire_tokio::s3_ops::BucketName {
    s3_wire_tokio::bucket(BUCKET).unwrap()
}

fn key(name: &str) -> s3_wire_tokio::s3_ops::ObjectKey {
    s3_wire_tokio::key(name).unwrap()
}

fn md5(data: &[u8]) -> Vec<u8> {
    Md5::digest(data).to_vec()
}

fn b64_crc32(data: &[u8]) -> String {
    base64(&crc32(data).to_be_bytes())
}

fn b64_crc64(data: &[u8]) -> String {
    base64(&crc64nvme(data).to_be_bytes())
}

fn code(error: &Error) -> String {
    error
        .service_error()
        .map(|e| e.code.clone())
        .unwrap_or_else(|| format!("not a service error: {error:?}"))
}

fn status(error: &Error) -> u16 {
    error.service_error().map_or(0, |e| e.status.as_u16())
}

/// `error` is the service error `expected_code`, with HTTP status `expected_status`.
#[track_caller]
fn assert_error(error: &Error, expected_status: u16, expected_code: &str) {
    assert_eq!(
        (status(error), code(error).as_str()),
        (expected_status, expected_code),
        "{error:?}"
    );
}

/// `error` is a dropped connection.
#[track_caller]
fn assert_connection_dropped(error: &Error) {
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Transport(TransportErrorKind::ConnectionDropped)
        ),
        "{error:?}"
    );
}

/// No request of the test was refused for its signature.
fn assert_signed(store: &FaultStore) {
    assert_eq!(store.signature_failures(), 0, "{:#?}", store.requests());
}

fn completed(number: u32, output: &UploadPartOutput) -> CompletedPart {
    let mut checksums = Checksums::default();
    for (algorithm, value) in &output.checksums.values {
        let value = Some(value.clone());
        match algorithm {
            ChecksumAlgorithm::Crc32 => checksums.crc32 = value,
            ChecksumAlgorithm::Crc32c => checksums.crc32c = value,
            ChecksumAlgorithm::Crc64Nvme => checksums.crc64nvme = value,
            ChecksumAlgorithm::Sha1 => checksums.sha1 = value,
            ChecksumAlgorithm::Sha256 => checksums.sha256 = value,
        }
    }
    CompletedPart::new(number, output.etag.clone().expect("part ETag")).with_checksums(checksums)
}

fn multipart_etag(parts: &[&[u8]]) -> String {
    let md5s: Vec<u8> = parts.iter().flat_map(|p| md5(p)).collect();
    format!("\"{}-{}\"", hex(&md5(&md5s)), parts.len())
}

async fn create(client: &Client, name: &str) -> String {
    client
        .create_multipart_upload(CreateMultipartUpload::new(bucket(), key(name)))
        .await
        .unwrap()
        .upload_id
}

// ---------------------------------------------------------------------------------------------
// Single-part objects
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn put_object_stores_attributes_and_verified_checksums_for_every_body_kind() {
    let store = FaultStore::start();
    let client = client(&store);
    let body = data(100_000, 1);

    // In-memory bytes: checksum header, every attribute.
    let put = PutObject::new(bucket(), key("dir/a b+c.bin"))
        .content_type("application/x-test")
        .cache_control("max-age=60")
        .content_disposition("attachment; filename=\"x.bin\"")
        .content_encoding("gzip")
        .content_language("de")
        .metadata("Colour", "blue")
        .storage_class(StorageClass::StandardIa)
        .tag("team", "storage")
        .server_side_encryption(ServerSideEncryption::S3)
        .checksum_algorithm(ChecksumAlgorithm::Crc32);
    let output = client.put_object(put, body.clone()).await.unwrap();
    let etag = format!("\"{}\"", hex(&md5(&body)));
    assert_eq!(output.etag.as_ref().unwrap().as_str(), etag);
    assert_eq!(
        output.checksums.get(ChecksumAlgorithm::Crc32),
        Some(b64_crc32(&body).as_str())
    );
    assert_eq!(
        output.checksums.checksum_type,
        Some(ChecksumType::FullObject)
    );
    assert_eq!(output.encryption.algorithm.as_deref(), Some("AES256"));

    let stored = store.object(BUCKET, "dir/a b+c.bin").expect("stored");
    assert_eq!(sha256(&stored.data), sha256(&body));
    assert_eq!(stored.etag, etag);
    let attributes = &stored.attributes;
    assert_eq!(
        attributes.content_type.as_deref(),
        Some("application/x-test")
    );
    assert_eq!(attributes.cache_control.as_deref(), Some("max-age=60"));
    assert_eq!(attributes.content_encoding.as_deref(), Some("gzip"));
    assert_eq!(attributes.content_language.as_deref(), Some("de"));
    assert_eq!(
        attributes.metadata.get("colour").map(String::as_str),
        Some("blue")
    );
    assert_eq!(attributes.storage_class.as_deref(), Some("STANDARD_IA"));
    assert_eq!(attributes.tagging.as_deref(), Some("team=storage"));
    assert_eq!(attributes.sse.as_deref(), Some("AES256"));
    let checksum = stored.checksum.as_ref().unwrap();
    assert_eq!(checksum.algorithm, ChecksumAlgorithm::Crc32);
    assert_eq!(checksum.value, b64_crc32(&body));
    assert_eq!(checksum.checksum_type, ChecksumType::FullObject);

    let head = client
        .head_object(HeadObject::new(bucket(), key("dir/a b+c.bin")).checksum_mode(true))
        .await
        .unwrap();
    assert_eq!(head.content_length, Some(body.len() as u64));
    assert_eq!(head.content_type.as_deref(), Some("application/x-test"));
    assert_eq!(
        head.content_disposition.as_deref(),
        Some("attachment; filename=\"x.bin\"")
    );
    assert_eq!(
        head.metadata.get("colour").map(String::as_str),
        Some("blue")
    );
    assert_eq!(head.storage_class, Some(StorageClass::StandardIa));
    assert_eq!(head.tag_count, Some(1));
    assert_eq!(head.etag.as_ref().unwrap().as_str(), etag);
    assert_eq!(
        head.checksums.get(ChecksumAlgorithm::Crc32),
        Some(b64_crc32(&body).as_str())
    );
    assert_eq!(head.checksums.checksum_type, Some(ChecksumType::FullObject));
    assert!(head.last_modified.is_some());

    let got = client
        .get_object(GetObject::new(bucket(), key("dir/a b+c.bin")).checksum_mode(true))
        .await
        .unwrap();
    assert!(matches!(
        got.body.verification(),
        Verification::FullObject(_)
    ));
    assert_eq!(sha256(&got.body.collect().await.unwrap()), sha256(&body));

    // A one-shot stream: aws-chunked, signed chunks, CRC32C trailer.
    let stream_put =
        PutObject::new(bucket(), key("stream")).checksum_algorithm(ChecksumAlgorithm::Crc32c);
    let output = client
        .put_object(stream_put, one_shot(&body, 30_000))
        .await
        .unwrap();
    let crc32c = ChecksumAlgorithm::Crc32c.checksum(&body).to_base64();
    assert_eq!(
        output.checksums.get(ChecksumAlgorithm::Crc32c),
        Some(crc32c.as_str())
    );
    let stored = store.object(BUCKET, "stream").unwrap();
    assert_eq!(sha256(&stored.data), sha256(&body));
    assert_eq!(stored.checksum.unwrap().value, crc32c);
    assert_eq!(
        stored.attributes.content_encoding, None,
        "aws-chunked is not stored"
    );
    // A one-shot stream without checksum (signed chunks, no trailer), and a file with a
    // SHA-256 checksum (over plain HTTP: computed ahead, a header).
    client
        .put_object(
            PutObject::new(bucket(), key("plain-stream")),
            one_shot(&body, 70_000),
        )
        .await
        .unwrap();
    assert_eq!(
        sha256(&store.object(BUCKET, "plain-stream").unwrap().data),
        sha256(&body)
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("body.bin");
    std::fs::write(&path, &body).unwrap();
    client
        .put_object(
            PutObject::new(bucket(), key("file")).checksum_algorithm(ChecksumAlgorithm::Sha256),
            Body::from_file(&path).await.unwrap(),
        )
        .await
        .unwrap();
    let stored = store.object(BUCKET, "file").unwrap();
    assert_eq!(stored.checksum.unwrap().value, base64(&sha256(&body)));
    let chunked: Vec<_> = store
        .requests()
        .into_iter()
        .filter(|r| r.header("content-encoding") == Some("aws-chunked"))
        .map(|r| r.path)
        .collect();
    assert_eq!(chunked, ["/bucket/stream", "/bucket/plain-stream"]);

    // A wrong checksum is BadDigest and nothing is stored.
    let wrong = Checksum::from_base64(ChecksumAlgorithm::Crc32, &b64_crc32(b"other")).unwrap();
    let error = client
        .put_object(
            PutObject::new(bucket(), key("bad")).checksum(wrong.clone()),
            body.clone(),
        )
        .await
        .unwrap_err();
    assert_error(&error, 400, "BadDigest");
    assert!(store.object(BUCKET, "bad").is_none());
    let error = client
        .put_object(
            PutObject::new(bucket(), key("stream")).checksum(wrong),
            Bytes::from_static(b"new"),
        )
        .await
        .unwrap_err();
    assert_eq!(code(&error), "BadDigest");
    assert_eq!(
        store.object(BUCKET, "stream").unwrap().data.len(),
        body.len(),
        "old object kept"
    );

    // Conditional writes.
    let error = client
        .put_object(
            PutObject::new(bucket(), key("stream")).if_none_match_any(),
            Bytes::from_static(b"x"),
        )
        .await
        .unwrap_err();
    assert_error(&error, 412, "PreconditionFailed");
    client
        .put_object(
            PutObject::new(bucket(), key("fresh")).if_none_match_any(),
            Bytes::from_static(b"x"),
        )
        .await
        .unwrap();
    let error = client
        .put_object(
            PutObject::new(bucket(), key("fresh")).if_match("\"0123\""),
            Bytes::from_static(b"y"),
        )
        .await
        .unwrap_err();
    assert_eq!(status(&error), 412);
    let fresh = store.object(BUCKET, "fresh").unwrap();
    client
        .put_object(
            PutObject::new(bucket(), key("fresh")).if_match(fresh.etag),
            Bytes::from_static(b"y"),
        )
        .await
        .unwrap();
    assert_eq!(store.object(BUCKET, "fresh").unwrap().data, "y");
    assert_signed(&store);
}

#[tokio::test]
async fn get_and_head_honour_ranges_part_numbers_and_conditions() {
    let store = FaultStore::start();
    let client = client(&store);
    let body = data(1000, 2);
    let object = store.insert_object(BUCKET, "obj", body.clone(), Some(ChecksumAlgorithm::Crc32));
    let get = || GetObject::new(bucket(), key("obj")).checksum_mode(true);
    let head = || HeadObject::new(bucket(), key("obj")).checksum_mode(true);

    // Ranges: 206 with Content-Range, and no checksum.
    for (range, first, last) in [
        (ByteRange::new(100, 199).unwrap(), 100, 199),
        (ByteRange::Suffix(10), 990, 999),
        (ByteRange::From(990), 990, 999),
        (ByteRange::new(900, 5000).unwrap(), 900, 999),
    ] {
        let response = client.get_object(get().range(range)).await.unwrap();
        let range_head = &response.output.head;
        let content_range = range_head.content_range.unwrap();
        assert_eq!(
            (content_range.first, content_range.last, content_range.total),
            (first, last, Some(1000))
        );
        assert!(
            range_head.checksums.values.is_empty(),
            "{range}: a ranged GET has no checksum"
        );
        assert_eq!(
            &response.body.collect().await.unwrap()[..],
            &body[first as usize..=last as usize]
        );
        let headed = client.head_object(head().range(range)).await.unwrap();
        assert_eq!(headed.content_length, Some(last - first + 1));
    }
    let error = client
        .get_object(get().range(ByteRange::From(1000)))
        .await
        .unwrap_err();
    assert_error(&error, 416, "InvalidRange");

    // partNumber on a single-part object: 1 is the whole object as 206, others 416.
    let response = client.get_object(get().part_number(1)).await.unwrap();
    let part_head = &response.output.head;
    assert_eq!(
        part_head.content_range.map(|r| (r.first, r.last)),
        Some((0, 999))
    );
    assert_eq!(
        part_head.checksums.get(ChecksumAlgorithm::Crc32),
        Some(b64_crc32(&body).as_str())
    );
    assert_eq!(response.body.collect().await.unwrap(), body);
    let error = client.get_object(get().part_number(2)).await.unwrap_err();
    assert_error(&error, 416, "InvalidPartNumber");

    // Conditions.
    let error = client
        .get_object(get().if_match("\"nope\""))
        .await
        .unwrap_err();
    assert_error(&error, 412, "PreconditionFailed");
    let error = client
        .head_object(head().if_match("\"nope\""))
        .await
        .unwrap_err();
    assert_eq!(status(&error), 412);
    let error = client
        .get_object(get().if_none_match(object.etag.clone()))
        .await
        .unwrap_err();
    assert_eq!(status(&error), 304);
    assert!(error.is_precondition_failed());
    let response = client
        .get_object(get().if_match(object.etag.clone()))
        .await
        .unwrap();
    assert_eq!(response.body.collect().await.unwrap(), body);
    let later = SystemTime::now() + Duration::from_secs(3600);
    let error = client
        .get_object(get().if_modified_since(later))
        .await
        .unwrap_err();
    assert_eq!(status(&error), 304);
    let earlier = SystemTime::now() - Duration::from_secs(3600);
    let error = client
        .get_object(get().if_unmodified_since(earlier))
        .await
        .unwrap_err();
    assert_eq!(status(&error), 412);

    // Absent keys.
    let error = client
        .get_object(GetObject::new(bucket(), key("missing")))
        .await
        .unwrap_err();
    assert_error(&error, 404, "NoSuchKey");
    let error = client
        .head_object(HeadObject::new(bucket(), key("missing")))
        .await
        .unwrap_err();
    assert!(error.is_not_found());
    assert_signed(&store);
}

// ---------------------------------------------------------------------------------------------
// Multipart uploads
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_full_object_crc64nvme_upload_checks_and_reports_the_full_object_checksum() {
    let store = FaultStore::start();
    store.set_min_part_size(4096);
    let client = client(&store);
    let body = data(11_234, 3);
    let pieces: [&[u8]; 3] = [&body[..5000], &body[5000..10_000], &body[10_000..]];
    let created = client
        .create_multipart_upload(
            CreateMultipartUpload::new(bucket(), key("big"))
                .checksum_algorithm(ChecksumAlgorithm::Crc64Nvme)
                .checksum_type(ChecksumType::FullObject)
                .content_type("text/plain")
                .metadata("origin", "test"),
        )
        .await
        .unwrap();
    assert_eq!(created.checksum_algorithm.as_deref(), Some("CRC64NVME"));
    assert_eq!(created.checksum_type.as_deref(), Some("FULL_OBJECT"));
    let upload_id = created.upload_id;
    assert_eq!(store.open_uploads().len(), 1);

    let mut parts = Vec::new();
    for (index, piece) in pieces.iter().enumerate() {
        let number = index as u32 + 1;
        let op = UploadPart::new(bucket(), key("big"), upload_id.clone(), number)
            .checksum_algorithm(ChecksumAlgorithm::Crc64Nvme);
        // The middle part as a one-shot stream (aws-chunked with a trailer).
        let output = if number == 2 {
            client.upload_part(op, one_shot(piece, 1500)).await.unwrap()
        } else {
            client
                .upload_part(op, Bytes::copy_from_slice(piece))
                .await
                .unwrap()
        };
        assert_eq!(
            output.etag.as_ref().unwrap().as_str(),
            format!("\"{}\"", hex(&md5(piece)))
        );
        assert_eq!(
            output.checksums.get(ChecksumAlgorithm::Crc64Nvme),
            Some(b64_crc64(piece).as_str())
        );
        parts.push(completed(number, &output));
    }
    let listed = client
        .list_parts(ListParts::new(bucket(), key("big"), upload_id.clone()))
        .await
        .unwrap()
        .result;
    assert_eq!(listed.checksum_algorithm.as_deref(), Some("CRC64NVME"));
    assert_eq!(listed.checksum_type.as_deref(), Some("FULL_OBJECT"));
    assert_eq!(listed.parts.len(), 3);
    for (part, piece) in listed.parts.iter().zip(pieces) {
        assert_eq!(part.size, piece.len() as u64);
        assert_eq!(part.etag.unquoted(), hex(&md5(piece)));
        assert_eq!(
            part.checksums.crc64nvme.as_deref(),
            Some(b64_crc64(piece).as_str())
        );
        assert!(part.last_modified.is_some());
    }

    // A wrong full-object checksum is BadDigest and leaves the upload open.
    let complete = |checksum: Checksum| {
        CompleteMultipartUpload::new(bucket(), key("big"), upload_id.clone(), parts.clone())
            .full_object_checksum(checksum)
            .checksum_type(ChecksumType::FullObject)
            .object_size(body.len() as u64)
    };
    let wrong = ChecksumAlgorithm::Crc64Nvme.checksum(b"not the object");
    let error = client
        .complete_multipart_upload(complete(wrong))
        .await
        .unwrap_err();
    assert_error(&error, 400, "BadDigest");
    assert_eq!(store.open_uploads().len(), 1);
    assert!(store.object(BUCKET, "big").is_none());

    // The client's combination of the part CRCs is what the store computes over the bytes.
    let part_crcs: Vec<Checksum> = pieces
        .iter()
        .map(|p| ChecksumAlgorithm::Crc64Nvme.checksum(p))
        .collect();
    let combined = part_crcs[0]
        .combine(&part_crcs[1], pieces[1].len() as u64)
        .unwrap()
        .combine(&part_crcs[2], pieces[2].len() as u64)
        .unwrap();
    assert_eq!(combined.to_base64(), b64_crc64(&body));
    let done = client
        .complete_multipart_upload(complete(combined))
        .await
        .unwrap();
    let etag = multipart_etag(&pieces);
    assert_eq!(done.result.etag.as_ref().unwrap().as_str(), etag);
    assert_eq!(
        done.result.checksums.crc64nvme.as_deref(),
        Some(b64_crc64(&body).as_str())
    );
    assert_eq!(
        done.result.checksums.checksum_type.as_deref(),
        Some("FULL_OBJECT")
    );
    assert_eq!(done.result.key.as_deref(), Some("big"));
    assert!(store.open_uploads().is_empty());
    let stored = store.object(BUCKET, "big").unwrap();
    assert_eq!(stored.part_sizes(), Some(vec![5000, 5000, 1234]));
    assert_eq!(
        stored.attributes.content_type.as_deref(),
        Some("text/plain")
    );

    // HEAD and GET, whole and by part.
    let head = client
        .head_object(HeadObject::new(bucket(), key("big")).checksum_mode(true))
        .await
        .unwrap();
    assert_eq!(head.etag.as_ref().unwrap().as_str(), etag);
    assert_eq!(
        head.checksums.get(ChecksumAlgorithm::Crc64Nvme),
        Some(b64_crc64(&body).as_str())
    );
    assert_eq!(head.checksums.checksum_type, Some(ChecksumType::FullObject));
    assert_eq!(
        head.metadata.get("origin").map(String::as_str),
        Some("test")
    );
    let got = client
        .get_object(GetObject::new(bucket(), key("big")).checksum_mode(true))
        .await
        .unwrap();
    assert!(
        matches!(got.body.verification(), Verification::FullObject(_)),
        "a FULL_OBJECT value covers the whole body"
    );
    assert_eq!(sha256(&got.body.collect().await.unwrap()), sha256(&body));
    let part = client
        .get_object(
            GetObject::new(bucket(), key("big"))
                .part_number(2)
                .checksum_mode(true),
        )
        .await
        .unwrap();
    let part_head = &part.output.head;
    assert_eq!(part_head.parts_count, Some(3));
    let range = part_head.content_range.unwrap();
    assert_eq!(
        (range.first, range.last, range.total),
        (5000, 9999, Some(11_234))
    );
    assert_eq!(
        part_head.checksums.get(ChecksumAlgorithm::Crc64Nvme),
        Some(b64_crc64(pieces[1]).as_str())
    );
    assert_eq!(part.body.collect().await.unwrap(), pieces[1]);
    let last = client
        .head_object(HeadObject::new(bucket(), key("big")).part_number(3))
        .await
        .unwrap();
    assert_eq!(last.content_length, Some(1234));
    assert_eq!(last.parts_count, Some(3));

    // The upload is gone: completing it again is NoSuchUpload, as on S3.
    let error = client
        .complete_multipart_upload(CompleteMultipartUpload::new(
            bucket(),
            key("big"),
            upload_id.clone(),
            parts.clone(),
        ))
        .await
        .unwrap_err();
    assert_error(&error, 404, "NoSuchUpload");
    assert_signed(&store);
}

#[tokio::test]
async fn seeded_multipart_objects_and_sse_c_objects_read_like_uploaded_ones() {
    let store = FaultStore::start();
    let client = client(&store);
    // A COMPOSITE CRC32 object of three parts, seeded directly.
    let body = data(7000, 8);
    let pieces: [&[u8]; 3] = [&body[..3000], &body[3000..6000], &body[6000..]];
    let seeded = store.insert_multipart_object(
        BUCKET,
        "seeded",
        body.clone(),
        &[3000, 3000, 1000],
        Some((ChecksumAlgorithm::Crc32, ChecksumType::Composite)),
    );
    let part_crcs: Vec<u8> = pieces.iter().flat_map(|p| crc32(p).to_be_bytes()).collect();
    let composite = format!("{}-3", b64_crc32(&part_crcs));
    assert_eq!(seeded.etag, multipart_etag(&pieces));
    assert_eq!(seeded.checksum.as_ref().unwrap().value, composite);
    let head = client
        .head_object(HeadObject::new(bucket(), key("seeded")).checksum_mode(true))
        .await
        .unwrap();
    assert_eq!(
        head.checksums.get(ChecksumAlgorithm::Crc32),
        Some(composite.as_str())
    );
    assert_eq!(head.checksums.checksum_type, Some(ChecksumType::Composite));
    assert_eq!(head.etag.unwrap().as_str(), seeded.etag);
    let part = client
        .get_object(
            GetObject::new(bucket(), key("seeded"))
                .part_number(3)
                .checksum_mode(true),
        )
        .await
        .unwrap();
    assert_eq!(part.output.head.parts_count, Some(3));
    assert_eq!(
        part.output.head.checksums.get(ChecksumAlgorithm::Crc32),
        Some(b64_crc32(pieces[2]).as_str())
    );
    assert_eq!(part.body.collect().await.unwrap(), pieces[2]);
    let error = client
        .get_object(GetObject::new(bucket(), key("seeded")).part_number(4))
        .await
        .unwrap_err();
    assert_error(&error, 416, "InvalidPartNumber");

    // SSE-C: stored with the key's MD5, read only with the same key.
    let customer_key = SseCustomerKey::new([7u8; 32]);
    let put = client
        .put_object(
            PutObject::new(bucket(), key("secret"))
                .server_side_encryption(ServerSideEncryption::Customer(customer_key.clone())),
            Bytes::from_static(b"classified"),
        )
        .await
        .unwrap();
    let key_md5 = base64(&md5(&[7u8; 32]));
    assert_eq!(
        put.encryption.customer_key_md5.as_deref(),
        Some(key_md5.as_str())
    );
    let error = client
        .get_object(GetObject::new(bucket(), key("secret")))
        .await
        .unwrap_err();
    assert_error(&error, 400, "InvalidRequest");
    let error = client
        .get_object(
            GetObject::new(bucket(), key("secret"))
                .sse_customer_key(SseCustomerKey::new([8u8; 32])),
        )
        .await
        .unwrap_err();
    assert_eq!(status(&error), 403);
    let got = client
        .get_object(GetObject::new(bucket(), key("secret")).sse_customer_key(customer_key))
        .await
        .unwrap();
    assert_eq!(
        got.output.head.encryption.customer_algorithm.as_deref(),
        Some("AES256")
    );
    assert_eq!(got.body.collect().await.unwrap(), "classified");
    assert_signed(&store);
}

#[tokio::test]
async fn a_composite_sha256_upload_reports_the_checksum_of_its_part_checksums() {
    let store = FaultStore::start();
    store.set_min_part_size(4096);
    let client = client(&store);
    let body = data(4096 + 100, 4);
    let pieces: [&[u8]; 2] = [&body[..4096], &body[4096..]];
    let created = client
        .create_multipart_upload(
            CreateMultipartUpload::new(bucket(), key("composite"))
                .checksum_algorithm(ChecksumAlgorithm::Sha256),
        )
        .await
        .unwrap();
    assert_eq!(
        created.checksum_type.as_deref(),
        Some("COMPOSITE"),
        "the default with an algorithm"
    );
    let upload_id = created.upload_id;
    let mut parts = Vec::new();
    for (index, piece) in pieces.iter().enumerate() {
        let number = index as u32 + 1;
        let output = client
            .upload_part(
                UploadPart::new(bucket(), key("composite"), upload_id.clone(), number)
                    .checksum_algorithm(ChecksumAlgorithm::Sha256),
                Bytes::copy_from_slice(piece),
            )
            .await
            .unwrap();
        assert_eq!(
            output.checksums.get(ChecksumAlgorithm::Sha256),
            Some(base64(&sha256(piece)).as_str())
        );
        parts.push(completed(number, &output));
    }
    // A composite upload needs every part's checksum on completion.
    let bare: Vec<CompletedPart> = parts
        .iter()
        .map(|p| CompletedPart::new(p.part_number, p.etag.clone()))
        .collect();
    let error = client
        .complete_multipart_upload(CompleteMultipartUpload::new(
            bucket(),
            key("composite"),
            upload_id.clone(),
            bare,
        ))
        .await
        .unwrap_err();
    assert_error(&error, 400, "InvalidRequest");

    let done = client
        .complete_multipart_upload(CompleteMultipartUpload::new(
            bucket(),
            key("composite"),
            upload_id,
            parts,
        ))
        .await
        .unwrap();
    let digests: Vec<u8> = pieces.iter().flat_map(|p| sha256(p)).collect();
    let composite = format!("{}-2", base64(&sha256(&digests)));
    assert_eq!(done.result.etag.unwrap().as_str(), multipart_etag(&pieces));
    assert_eq!(
        done.result.checksums.sha256.as_deref(),
        Some(composite.as_str())
    );
    assert_eq!(
        done.result.checksums.checksum_type.as_deref(),
        Some("COMPOSITE")
    );

    let head = client
        .head_object(HeadObject::new(bucket(), key("composite")).checksum_mode(true))
        .await
        .unwrap();
    assert_eq!(
        head.checksums.get(ChecksumAlgorithm::Sha256),
        Some(composite.as_str())
    );
    assert_eq!(head.checksums.checksum_type, Some(ChecksumType::Composite));
    let got = client
        .get_object(GetObject::new(bucket(), key("composite")).checksum_mode(true))
        .await
        .unwrap();
    assert_eq!(
        got.output.head.checksums.get(ChecksumAlgorithm::Sha256),
        Some(composite.as_str())
    );
    assert_eq!(
        got.body.verification(),
        &Verification::NotVerified(NotVerified::CompositeNotByParts),
        "a composite value does not cover the bytes"
    );
    assert_eq!(sha256(&got.body.collect().await.unwrap()), sha256(&body));
    for (index, piece) in pieces.iter().enumerate() {
        let part = client
            .get_object(
                GetObject::new(bucket(), key("composite"))
                    .part_number(index as u32 + 1)
                    .checksum_mode(true),
            )
            .await
            .unwrap();
        assert_eq!(
            part.output.head.checksums.get(ChecksumAlgorithm::Sha256),
            Some(base64(&sha256(piece)).as_str())
        );
        assert_eq!(part.body.collect().await.unwrap(), *piece);
    }
    assert_signed(&store);
}

#[tokio::test]
async fn completion_checks_part_sizes_etags_and_checksum_agreement() {
    let store = FaultStore::start();
    let client = client(&store);
    let upload_id = create(&client, "small").await;
    let mut parts = Vec::new();
    for number in 1..=2 {
        let output = client
            .upload_part(
                UploadPart::new(bucket(), key("small"), upload_id.clone(), number),
                data(1000, u64::from(number)),
            )
            .await
            .unwrap();
        parts.push(completed(number, &output));
    }
    let complete = |parts: Vec<CompletedPart>| {
        CompleteMultipartUpload::new(bucket(), key("small"), upload_id.clone(), parts)
    };
    // S3's 5 MiB minimum for every part but the last.
    let error = client
        .complete_multipart_upload(complete(parts.clone()))
        .await
        .unwrap_err();
    assert_error(&error, 400, "EntityTooSmall");
    store.set_min_part_size(1000);
    // A wrong ETag, and a part that was never uploaded.
    let wrong_etag = vec![
        parts[0].clone(),
        CompletedPart::new(
            2,
            ETag::parse("\"00000000000000000000000000000000\"").unwrap(),
        ),
    ];
    let error = client
        .complete_multipart_upload(complete(wrong_etag))
        .await
        .unwrap_err();
    assert_error(&error, 400, "InvalidPart");
    let missing = vec![
        parts[0].clone(),
        CompletedPart::new(3, parts[1].etag.clone()),
    ];
    let error = client
        .complete_multipart_upload(complete(missing))
        .await
        .unwrap_err();
    assert_eq!(code(&error), "InvalidPart");
    // A part checksum on an upload created without an algorithm, and none on one with.
    let error = client
        .upload_part(
            UploadPart::new(bucket(), key("small"), upload_id.clone(), 3)
                .checksum_algorithm(ChecksumAlgorithm::Crc32),
            Bytes::from_static(b"x"),
        )
        .await
        .unwrap_err();
    assert_eq!(code(&error), "InvalidRequest");
    let with_algorithm = client
        .create_multipart_upload(
            CreateMultipartUpload::new(bucket(), key("other"))
                .checksum_algorithm(ChecksumAlgorithm::Crc32),
        )
        .await
        .unwrap()
        .upload_id;
    let error = client
        .upload_part(
            UploadPart::new(bucket(), key("other"), with_algorithm.clone(), 1),
            Bytes::from_static(b"x"),
        )
        .await
        .unwrap_err();
    assert_eq!(code(&error), "InvalidRequest");
    // SHA-256 cannot be a full-object checksum.
    let error = client
        .create_multipart_upload(
            CreateMultipartUpload::new(bucket(), key("other"))
                .checksum_algorithm(ChecksumAlgorithm::Sha256)
                .checksum_type(ChecksumType::FullObject),
        )
        .await
        .unwrap_err();
    assert_eq!(code(&error), "InvalidRequest");

    // Completion works once; the second try finds no upload.
    let done = client
        .complete_multipart_upload(complete(parts.clone()).if_none_match_any())
        .await
        .unwrap();
    assert!(done.result.etag.unwrap().as_str().ends_with("-2\""));
    let error = client
        .complete_multipart_upload(complete(parts.clone()))
        .await
        .unwrap_err();
    assert_error(&error, 404, "NoSuchUpload");
    // If-None-Match: * on completion over an existing object.
    let again = create(&client, "small").await;
    let output = client
        .upload_part(
            UploadPart::new(bucket(), key("small"), again.clone(), 1),
            Bytes::from_static(b"z"),
        )
        .await
        .unwrap();
    let error = client
        .complete_multipart_upload(
            CompleteMultipartUpload::new(
                bucket(),
                key("small"),
                again.clone(),
                vec![completed(1, &output)],
            )
            .if_none_match_any(),
        )
        .await
        .unwrap_err();
    assert_eq!(status(&error), 412);

    // Abort: 204, then NoSuchUpload.
    assert_eq!(store.open_uploads().len(), 2);
    client
        .abort_multipart_upload(AbortMultipartUpload::new(
            bucket(),
            key("small"),
            again.clone(),
        ))
        .await
        .unwrap();
    let error = client
        .abort_multipart_upload(AbortMultipartUpload::new(bucket(), key("small"), again))
        .await
        .unwrap_err();
    assert_error(&error, 404, "NoSuchUpload");
    let open = store.open_uploads();
    assert_eq!(open.len(), 1);
    assert_eq!(
        (open[0].key.as_str(), open[0].upload_id.as_str()),
        ("other", with_algorithm.as_str())
    );
    assert_signed(&store);
}

#[tokio::test]
async fn uploads_and_parts_are_listed_page_by_page_and_can_be_aged() {
    let store = FaultStore::start();
    let client = client(&store);
    let keys = ["a/1", "a/2", "a/2", "b c+d/é", "z"];
    let mut ids = Vec::new();
    for name in keys {
        ids.push(create(&client, name).await);
    }
    let open = store.open_uploads();
    assert_eq!(open.len(), 5);
    assert_ne!(ids[1], ids[2], "two uploads of one key have different ids");

    // Page by page, two at a time.
    let mut op = ListMultipartUploads::new(bucket()).max_uploads(2);
    let mut listed = Vec::new();
    let mut pages = 0;
    loop {
        let page = client.list_multipart_uploads(op.clone()).await.unwrap();
        pages += 1;
        assert!(page.result.url_decoded.keys || page.result.uploads.is_empty());
        for upload in &page.result.uploads {
            assert!(upload.initiated.is_some());
            listed.push((upload.key.clone(), upload.upload_id.clone()));
        }
        match op.next_page(&page) {
            Some(next) => op = next,
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let expected: Vec<(String, String)> = keys
        .iter()
        .zip(&ids)
        .map(|(k, id)| ((*k).to_owned(), id.clone()))
        .collect();
    assert_eq!(listed, expected);

    let prefixed = client
        .list_multipart_uploads(ListMultipartUploads::new(bucket()).prefix("a/"))
        .await
        .unwrap();
    assert_eq!(prefixed.result.uploads.len(), 3);
    let grouped = client
        .list_multipart_uploads(ListMultipartUploads::new(bucket()).delimiter("/"))
        .await
        .unwrap();
    assert_eq!(grouped.result.common_prefixes, ["a/", "b c+d/"]);
    assert_eq!(grouped.result.uploads.len(), 1);
    assert_eq!(grouped.result.uploads[0].key, "z");

    // Aged uploads show the older Initiated time.
    store.age_uploads(Duration::from_secs(3 * 86_400));
    let cutoff = SystemTime::now() - Duration::from_secs(2 * 86_400);
    let all = client
        .list_multipart_uploads(ListMultipartUploads::new(bucket()))
        .await
        .unwrap();
    for upload in &all.result.uploads {
        let initiated = upload.initiated.unwrap().to_system_time().unwrap();
        assert!(initiated < cutoff, "{initiated:?}");
    }
    assert!(store.open_uploads().iter().all(|u| u.initiated < cutoff));

    // ListParts, two parts per page.
    for number in 1..=3 {
        client
            .upload_part(
                UploadPart::new(bucket(), key("z"), ids[4].clone(), number),
                Bytes::from(vec![number as u8; 10]),
            )
            .await
            .unwrap();
    }
    let first = client
        .list_parts(ListParts::new(bucket(), key("z"), ids[4].clone()).max_parts(2))
        .await
        .unwrap();
    assert!(first.result.is_truncated);
    assert_eq!(first.result.next_part_number_marker, Some(2));
    let numbers: Vec<u32> = first.result.parts.iter().map(|p| p.part_number).collect();
    assert_eq!(numbers, [1, 2]);
    let next = ListParts::new(bucket(), key("z"), ids[4].clone())
        .max_parts(2)
        .next_page(&first)
        .unwrap();
    let second = client.list_parts(next).await.unwrap();
    assert!(!second.result.is_truncated);
    assert_eq!(second.result.parts.len(), 1);
    assert_eq!(second.result.parts[0].part_number, 3);
    assert_eq!(
        second.result.parts[0].etag.unquoted(),
        hex(&md5(&[3u8; 10]))
    );
    assert_eq!(store.open_uploads().last().unwrap().parts, [1, 2, 3]);
    assert_signed(&store);
}

// ---------------------------------------------------------------------------------------------
// Copies, deletes, listings, the rest
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn part_copies_and_object_copies_follow_their_conditions_and_directives() {
    let store = FaultStore::start();
    store.set_min_part_size(5000);
    let client = client(&store);
    let body = data(10_000, 5);
    client
        .put_object(
            PutObject::new(bucket(), key("src/ü file"))
                .metadata("kind", "source")
                .content_type("text/csv"),
            body.clone(),
        )
        .await
        .unwrap();
    let source_etag = store.object(BUCKET, "src/ü file").unwrap().etag;
    let source = || CopySource::new(bucket(), key("src/ü file"));

    // UploadPartCopy into a CRC32C upload: ranges, source conditions, checksums.
    let upload_id = client
        .create_multipart_upload(
            CreateMultipartUpload::new(bucket(), key("joined"))
                .checksum_algorithm(ChecksumAlgorithm::Crc32c),
        )
        .await
        .unwrap()
        .upload_id;
    let copy_part = |number: u32, first: u64, last: u64| {
        UploadPartCopy::new(source(), bucket(), key("joined"), upload_id.clone(), number)
            .source_range(ByteRange::new(first, last).unwrap())
    };
    let error = client
        .upload_part_copy(UploadPartCopy::new(
            source().if_match("\"wrong\""),
            bucket(),
            key("joined"),
            upload_id.clone(),
            1,
        ))
        .await
        .unwrap_err();
    assert_eq!(status(&error), 412);
    let error = client
        .upload_part_copy(copy_part(1, 0, 10_000))
        .await
        .unwrap_err();
    assert_error(&error, 400, "InvalidArgument");
    let mut parts = Vec::new();
    for (number, first, last) in [(1, 0, 4999), (2, 5000, 9999)] {
        let copied = client
            .upload_part_copy(
                UploadPartCopy::new(
                    source().if_match(source_etag.clone()),
                    bucket(),
                    key("joined"),
                    upload_id.clone(),
                    number,
                )
                .source_range(ByteRange::new(first, last).unwrap()),
            )
            .await
            .unwrap();
        let slice = &body[first as usize..=last as usize];
        assert_eq!(
            copied.result.etag.as_ref().unwrap().unquoted(),
            hex(&md5(slice))
        );
        let crc32c = ChecksumAlgorithm::Crc32c.checksum(slice).to_base64();
        assert_eq!(
            copied.result.checksums.crc32c.as_deref(),
            Some(crc32c.as_str())
        );
        assert!(copied.result.last_modified.is_some());
        let mut checksums = Checksums::default();
        checksums.crc32c = Some(crc32c);
        parts.push(
            CompletedPart::new(number, copied.result.etag.unwrap()).with_checksums(checksums),
        );
    }
    client
        .complete_multipart_upload(CompleteMultipartUpload::new(
            bucket(),
            key("joined"),
            upload_id,
            parts,
        ))
        .await
        .unwrap();
    assert_eq!(
        sha256(&store.object(BUCKET, "joined").unwrap().data),
        sha256(&body)
    );

    // CopyObject, COPY directive with a new checksum algorithm.
    let copied = client
        .copy_object(
            CopyObject::new(source(), bucket(), key("copy"))
                .checksum_algorithm(ChecksumAlgorithm::Sha256),
        )
        .await
        .unwrap();
    assert_eq!(copied.result.etag.as_ref().unwrap().as_str(), source_etag);
    assert_eq!(
        copied.result.checksums.sha256.as_deref(),
        Some(base64(&sha256(&body)).as_str())
    );
    let copy = store.object(BUCKET, "copy").unwrap();
    assert_eq!(
        copy.attributes.metadata.get("kind").map(String::as_str),
        Some("source")
    );
    assert_eq!(copy.attributes.content_type.as_deref(), Some("text/csv"));
    assert_eq!(
        copy.checksum.unwrap().checksum_type,
        ChecksumType::FullObject
    );
    // REPLACE.
    client
        .copy_object(
            CopyObject::new(source(), bucket(), key("copy"))
                .metadata_directive(Directive::Replace)
                .content_type("application/json")
                .metadata("kind", "replaced"),
        )
        .await
        .unwrap();
    let copy = store.object(BUCKET, "copy").unwrap();
    assert_eq!(
        copy.attributes.metadata.get("kind").map(String::as_str),
        Some("replaced")
    );
    assert_eq!(
        copy.attributes.content_type.as_deref(),
        Some("application/json")
    );
    // Destination If-None-Match: *, source If-Match, and a copy onto itself without change.
    let error = client
        .copy_object(CopyObject::new(source(), bucket(), key("copy")).if_none_match_any())
        .await
        .unwrap_err();
    assert_eq!(status(&error), 412);
    let error = client
        .copy_object(CopyObject::new(
            source().if_match("\"wrong\""),
            bucket(),
            key("copy2"),
        ))
        .await
        .unwrap_err();
    assert_eq!(status(&error), 412);
    assert!(store.object(BUCKET, "copy2").is_none());
    let error = client
        .copy_object(CopyObject::new(source(), bucket(), key("src/ü file")))
        .await
        .unwrap_err();
    assert_eq!(code(&error), "InvalidRequest");
    let error = client
        .copy_object(CopyObject::new(
            CopySource::new(bucket(), key("nothing")),
            bucket(),
            key("copy3"),
        ))
        .await
        .unwrap_err();
    assert_error(&error, 404, "NoSuchKey");
    assert_signed(&store);
}

#[tokio::test]
async fn deletes_listings_buckets_and_unknown_operations() {
    let store = FaultStore::start();
    let client = client(&store);
    client
        .create_bucket(CreateBucket::new(s3_wire_tokio::bucket("other").unwrap()))
        .await
        .unwrap();
    client
        .head_bucket(HeadBucket::new(s3_wire_tokio::bucket("other").unwrap()))
        .await
        .unwrap();
    for name in ["d/1", "d/2", "d/e/3", "f", "g h"] {
        store.insert_object(BUCKET, name, Bytes::from(name.as_bytes().to_vec()), None);
    }
    let listed = client
        .list_objects_v2(ListObjectsV2::new(bucket()).delimiter("/").max_keys(2))
        .await
        .unwrap();
    assert_eq!(listed.result.common_prefixes, ["d/"]);
    assert_eq!(listed.result.contents.len(), 1);
    assert!(listed.result.is_truncated);
    let mut keys = Vec::new();
    let mut pages = client.list_objects_v2_pages(ListObjectsV2::new(bucket()).max_keys(2));
    while let Some(page) = pages.next_page().await {
        keys.extend(page.unwrap().result.contents.into_iter().map(|o| o.key));
    }
    assert_eq!(keys, ["d/1", "d/2", "d/e/3", "f", "g h"]);

    client
        .delete_object(DeleteObject::new(bucket(), key("f")))
        .await
        .unwrap();
    client
        .delete_object(DeleteObject::new(bucket(), key("f")))
        .await
        .unwrap();
    let error = client
        .delete_object(DeleteObject::new(bucket(), key("g h")).if_match("\"wrong\""))
        .await
        .unwrap_err();
    assert_eq!(status(&error), 412);
    let deleted = client
        .delete_objects(DeleteObjects::new(
            bucket(),
            [key("d/1"), key("d/2"), key("absent")],
        ))
        .await
        .unwrap();
    assert_eq!(deleted.result.deleted.len(), 3);
    assert_eq!(store.keys(BUCKET), ["d/e/3", "g h"]);

    let error = client
        .get_object_tagging(GetObjectTagging::new(bucket(), key("g h")))
        .await
        .unwrap_err();
    assert_error(&error, 501, "NotImplemented");
    let counts = store.request_counts();
    assert_eq!(counts.get(&Op::DeleteObject), Some(&3));
    assert_eq!(counts.get(&Op::Unknown), Some(&1));
    assert_signed(&store);
}

#[tokio::test]
async fn bad_signatures_and_unknown_keys_are_refused_and_counted() {
    let store = FaultStore::start();
    let wrong_secret = s3_wire_tokio::Client::builder()
        .endpoint(store.endpoint())
        .region(REGION)
        .static_credentials(crate::fault_store::ACCESS_KEY, "not-the-secret", None)
        .proxy_from_env(false)
        .retry(retry(1))
        .build()
        .unwrap();
    let error = wrong_secret
        .put_object(
            PutObject::new(bucket(), key("k")),
            Bytes::from_static(b"data"),
        )
        .await
        .unwrap_err();
    assert_error(&error, 403, "SignatureDoesNotMatch");
    let wrong_key = s3_wire_tokio::Client::builder()
        .endpoint(store.endpoint())
        .region(REGION)
        .static_credentials("AKIDSOMEONEELSE", crate::fault_store::SECRET_KEY, None)
        .proxy_from_env(false)
        .retry(retry(1))
        .build()
        .unwrap();
    let error = wrong_key
        .put_object(PutObject::new(bucket(), key("k")), one_shot(b"data", 2))
        .await
        .unwrap_err();
    assert_eq!(code(&error), "InvalidAccessKeyId");
    assert!(store.object(BUCKET, "k").is_none());
    assert_eq!(store.signature_failures(), 2);
}

// ---------------------------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------------------------

/// The faults recorded, in order, as (operation, fault, status).
fn outcomes(store: &FaultStore) -> Vec<(Op, Option<FaultKind>, Option<u16>)> {
    store
        .requests()
        .iter()
        .map(|r| (r.operation, r.fault, r.status))
        .collect()
}

#[tokio::test]
async fn throttling_and_internal_errors_are_not_applied_and_are_retried() {
    let store = FaultStore::start();
    let client = client(&store);
    store.set_faults(FaultPlan::first_try(FaultKind::SlowDown, [Op::PutObject]));
    client
        .put_object(
            PutObject::new(bucket(), key("k")),
            Bytes::from_static(b"v1"),
        )
        .await
        .unwrap();
    store.set_faults(FaultPlan::first_try(
        FaultKind::InternalError,
        [Op::GetObject],
    ));
    let got = client
        .get_object(GetObject::new(bucket(), key("k")))
        .await
        .unwrap();
    assert_eq!(got.body.collect().await.unwrap(), "v1");
    assert_eq!(
        outcomes(&store),
        [
            (Op::PutObject, Some(FaultKind::SlowDown), Some(503)),
            (Op::PutObject, None, Some(200)),
            (Op::GetObject, Some(FaultKind::InternalError), Some(500)),
            (Op::GetObject, None, Some(200)),
        ]
    );
    assert_eq!(store.fault_counts().values().sum::<u64>(), 2);
    assert_signed(&store);
}

#[tokio::test]
async fn a_reset_before_apply_changes_nothing() {
    let store = FaultStore::start();
    let client = client(&store);
    store.set_faults(FaultPlan::first_try(
        FaultKind::ResetBeforeApply,
        [Op::CreateMultipartUpload, Op::PutObject],
    ));
    // The client retries CreateMultipartUpload after a lost answer; the reset attempt created
    // nothing, so exactly one upload exists.
    let upload_id = create(&client, "k").await;
    let open = store.open_uploads();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].upload_id, upload_id);
    // Without retries the client sees the dropped connection, and nothing was stored.
    let once = client_with(&store, 1, Duration::from_secs(5));
    let error = once
        .put_object(PutObject::new(bucket(), key("k")), Bytes::from_static(b"v"))
        .await
        .unwrap_err();
    assert_connection_dropped(&error);
    assert!(store.object(BUCKET, "k").is_none());
    client
        .put_object(
            PutObject::new(bucket(), key("other")),
            Bytes::from_static(b"v"),
        )
        .await
        .unwrap();
    assert_eq!(
        outcomes(&store),
        [
            (
                Op::CreateMultipartUpload,
                Some(FaultKind::ResetBeforeApply),
                None
            ),
            (Op::CreateMultipartUpload, None, Some(200)),
            (Op::PutObject, Some(FaultKind::ResetBeforeApply), None),
            (Op::PutObject, Some(FaultKind::ResetBeforeApply), None),
            (Op::PutObject, None, Some(200)),
        ]
    );
    assert_eq!(
        store.fault_counts().get(&FaultKind::ResetBeforeApply),
        Some(&3)
    );
    assert_signed(&store);
}

#[tokio::test]
async fn a_reset_after_apply_stores_the_part_and_the_retry_succeeds() {
    let store = FaultStore::start();
    store.set_min_part_size(1);
    let client = client(&store);
    // A CreateMultipartUpload whose answer is lost is retried: the first upload is orphaned.
    store.set_faults(FaultPlan::first_try(
        FaultKind::ResetAfterApply,
        [Op::CreateMultipartUpload],
    ));
    let orphan_key = create(&client, "orphan").await;
    let orphans = store.open_uploads();
    assert_eq!(orphans.len(), 2, "{orphans:?}");
    assert!(orphans.iter().all(|u| u.key == "orphan"));
    assert!(orphans.iter().any(|u| u.upload_id == orphan_key));
    client
        .abort_multipart_upload(AbortMultipartUpload::new(
            bucket(),
            key("orphan"),
            orphan_key,
        ))
        .await
        .unwrap();
    store.set_faults(FaultPlan::none());
    store.clear_requests();

    let upload_id = create(&client, "k").await;
    store.set_faults(FaultPlan::first_try(
        FaultKind::ResetAfterApply,
        [Op::UploadPart],
    ));
    // Without retries the client sees the dropped connection, yet the part is stored.
    let once = client_with(&store, 1, Duration::from_secs(5));
    let error = once
        .upload_part(
            UploadPart::new(bucket(), key("k"), upload_id.clone(), 1),
            Bytes::from_static(b"one"),
        )
        .await
        .unwrap_err();
    assert_connection_dropped(&error);
    assert_eq!(store.open_uploads()[0].parts, [1]);
    // With retries: the first attempt is reset after storing, the second succeeds.
    let two = client
        .upload_part(
            UploadPart::new(bucket(), key("k"), upload_id.clone(), 2),
            Bytes::from_static(b"two"),
        )
        .await
        .unwrap();
    assert_eq!(store.open_uploads()[0].parts, [1, 2]);
    let one = client
        .list_parts(ListParts::new(bucket(), key("k"), upload_id.clone()))
        .await
        .unwrap()
        .result
        .parts
        .remove(0);
    let parts = vec![CompletedPart::new(1, one.etag), completed(2, &two)];

    // Completion reset after it took effect: the retry finds no upload, though the object
    // exists (the ambiguity of S3 itself).
    store.set_faults(FaultPlan::first_try(
        FaultKind::ResetAfterApply,
        [Op::CompleteMultipartUpload],
    ));
    let error = client
        .complete_multipart_upload(CompleteMultipartUpload::new(
            bucket(),
            key("k"),
            upload_id,
            parts,
        ))
        .await
        .unwrap_err();
    assert_error(&error, 404, "NoSuchUpload");
    assert_eq!(store.object(BUCKET, "k").unwrap().data, "onetwo");
    assert_eq!(store.open_uploads().len(), 1, "only the orphan is left");
    let faults: Vec<_> = outcomes(&store)
        .into_iter()
        .filter(|o| o.1.is_some())
        .collect();
    assert_eq!(
        faults,
        [
            (Op::UploadPart, Some(FaultKind::ResetAfterApply), None),
            (Op::UploadPart, Some(FaultKind::ResetAfterApply), None),
            (
                Op::CompleteMultipartUpload,
                Some(FaultKind::ResetAfterApply),
                None
            ),
        ]
    );
    assert_signed(&store);
}

#[tokio::test]
async fn an_error_inside_a_200_is_not_applied_and_the_retry_succeeds() {
    let store = FaultStore::start();
    store.set_min_part_size(1);
    let client = client(&store);
    store.insert_object(BUCKET, "src", Bytes::from_static(b"source"), None);
    let upload_id = create(&client, "k").await;
    store.set_faults(FaultPlan::first_try(
        FaultKind::ErrorIn200,
        [
            Op::UploadPartCopy,
            Op::CompleteMultipartUpload,
            Op::CopyObject,
        ],
    ));
    let copied = client
        .upload_part_copy(UploadPartCopy::new(
            CopySource::new(bucket(), key("src")),
            bucket(),
            key("k"),
            upload_id.clone(),
            1,
        ))
        .await
        .unwrap();
    let part = CompletedPart::new(1, copied.result.etag.unwrap());
    client
        .complete_multipart_upload(CompleteMultipartUpload::new(
            bucket(),
            key("k"),
            upload_id,
            vec![part],
        ))
        .await
        .unwrap();
    client
        .copy_object(CopyObject::new(
            CopySource::new(bucket(), key("k")),
            bucket(),
            key("copy"),
        ))
        .await
        .unwrap();
    assert_eq!(store.object(BUCKET, "copy").unwrap().data, "source");
    let expected: Vec<_> = [
        Op::UploadPartCopy,
        Op::CompleteMultipartUpload,
        Op::CopyObject,
    ]
    .into_iter()
    .flat_map(|op| {
        [
            (op, Some(FaultKind::ErrorIn200), Some(200)),
            (op, None, Some(200)),
        ]
    })
    .collect();
    let seen: Vec<_> = outcomes(&store).into_iter().skip(1).collect();
    assert_eq!(seen, expected);
    assert_signed(&store);
}

#[tokio::test]
async fn truncated_responses_are_applied_and_retried() {
    let store = FaultStore::start();
    let client = client(&store);
    let upload_id = create(&client, "k").await;
    client
        .upload_part(
            UploadPart::new(bucket(), key("k"), upload_id.clone(), 1),
            Bytes::from_static(b"p"),
        )
        .await
        .unwrap();
    store.set_faults(FaultPlan::first_try(
        FaultKind::TruncatedResponse,
        [Op::ListParts, Op::PutObject, Op::CopyObject],
    ));
    // Half an XML document, then the connection is aborted: retried.
    let parts = client
        .list_parts(ListParts::new(bucket(), key("k"), upload_id.clone()))
        .await
        .unwrap();
    assert_eq!(parts.result.parts.len(), 1);
    // A bodiless answer is reset instead; the put was applied anyway, and retried.
    client
        .put_object(
            PutObject::new(bucket(), key("obj")),
            Bytes::from_static(b"value"),
        )
        .await
        .unwrap();
    client
        .copy_object(CopyObject::new(
            CopySource::new(bucket(), key("obj")),
            bucket(),
            key("copy"),
        ))
        .await
        .unwrap();
    let faulted: Vec<_> = store
        .requests()
        .into_iter()
        .filter(|r| r.fault.is_some())
        .collect();
    assert_eq!(faulted.len(), 3);
    assert_eq!(
        faulted[0].status,
        Some(200),
        "a truncated answer sends its head"
    );
    assert_eq!(faulted[1].status, None, "a bodiless one is reset");
    assert_eq!(store.object(BUCKET, "copy").unwrap().data, "value");
    assert_signed(&store);
}

/// The first seed whose plan (kind at probability 1/2) faults the first identity and spares
/// the second: decisions are a pure function, so a test can pick them in advance.
fn seed_faulting(kind: FaultKind, op: Op, faulted: &str, spared: &str) -> FaultPlan {
    (0..10_000u64)
        .map(|seed| FaultPlan::new(seed, 0.5).kind(kind, 1))
        .find(|plan| {
            plan.decide(op, faulted, 0) == Some(kind) && plan.decide(op, spared, 0).is_none()
        })
        .expect("a seed")
}

#[tokio::test]
async fn a_truncated_and_a_stalled_object_body_are_resumed_by_the_client() {
    let store = FaultStore::start();
    let body = data(1000, 6);
    store.insert_object(BUCKET, "obj", body.clone(), None);
    let client = client_with(&store, 3, Duration::from_millis(300));
    let whole = request_identity("GET", "/bucket/obj", "", None);
    let rest = request_identity("GET", "/bucket/obj", "", Some("bytes=500-999"));
    for kind in [FaultKind::TruncatedResponse, FaultKind::StalledResponse] {
        store.set_faults(seed_faulting(kind, Op::GetObject, &whole, &rest));
        store.clear_requests();
        let started = std::time::Instant::now();
        let got = client
            .get_object(GetObject::new(bucket(), key("obj")))
            .await
            .unwrap();
        assert_eq!(got.body.collect().await.unwrap(), body, "{kind:?}");
        let requests = store.requests();
        assert_eq!(requests.len(), 2, "{kind:?}");
        assert_eq!(requests[0].fault, Some(kind));
        assert_eq!(requests[1].identity, rest);
        assert_eq!(
            requests[1].header("if-match"),
            Some(store.object(BUCKET, "obj").unwrap().etag.as_str())
        );
        if kind == FaultKind::StalledResponse {
            assert!(
                started.elapsed() >= Duration::from_millis(300),
                "the stall timeout fired"
            );
        }
    }
    assert_signed(&store);
}

#[tokio::test]
async fn stalls_trip_the_stall_timeout() {
    let store = FaultStore::start();
    store.insert_object(BUCKET, "obj", Bytes::from_static(b"value"), None);
    let stall = Duration::from_millis(300);
    let client = client_with(&store, 3, stall);
    // A bodiless answer that never comes: the client times out and retries.
    store.set_faults(FaultPlan::first_try(
        FaultKind::StalledResponse,
        [Op::HeadObject],
    ));
    let started = std::time::Instant::now();
    client
        .head_object(HeadObject::new(bucket(), key("obj")))
        .await
        .unwrap();
    assert!(started.elapsed() >= stall);
    // An upload whose body is never read: not applied; the replayable body is sent again.
    store.set_faults(FaultPlan::first_try(
        FaultKind::StalledRequest,
        [Op::PutObject],
    ));
    // (1 MiB: more than the socket buffers take at once, little enough for a debug build to
    // hash well within the stall timeout once it reads the body.)
    let large = data(1 << 20, 7);
    let upload_stall = Duration::from_millis(600);
    let client = client_with(&store, 3, upload_stall);
    client
        .put_object(PutObject::new(bucket(), key("large")), large.clone())
        .await
        .unwrap();
    assert_eq!(
        sha256(&store.object(BUCKET, "large").unwrap().data),
        sha256(&large)
    );
    // Without retries, a stalled upload is a stall timeout.
    let once = client_with(&store, 1, upload_stall);
    store.set_faults(FaultPlan::first_try(
        FaultKind::StalledRequest,
        [Op::PutObject],
    ));
    let error = once
        .put_object(PutObject::new(bucket(), key("never")), large)
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::Timeout(TimeoutKind::Stalled(_))),
        "{error:?}"
    );
    assert!(store.object(BUCKET, "never").is_none());
    let faulted: Vec<_> = store
        .requests()
        .into_iter()
        .filter_map(|r| r.fault.map(|f| (r.operation, f, r.status, r.body_len)))
        .collect();
    assert_eq!(
        faulted,
        [
            (Op::HeadObject, FaultKind::StalledResponse, None, 0),
            (Op::PutObject, FaultKind::StalledRequest, None, 0),
            (Op::PutObject, FaultKind::StalledRequest, None, 0),
        ]
    );
    assert_signed(&store);
}

/// A burst of concurrent puts and gets, retried through SlowDown and InternalError faults.
async fn campaign(store: &FaultStore, plan: &FaultPlan) -> Vec<(String, u64, Option<FaultKind>)> {
    store.set_faults(plan.clone());
    let client = client_with(store, 5, Duration::from_secs(5));
    let mut tasks = Vec::new();
    for index in 0..16u64 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let name = format!("key-{index}");
            let value = data(1000 + index, index);
            client
                .put_object(PutObject::new(bucket(), key(&name)), value.clone())
                .await
                .unwrap();
            let got = client
                .get_object(GetObject::new(bucket(), key(&name)))
                .await
                .unwrap();
            assert_eq!(got.body.collect().await.unwrap(), value);
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let mut decisions: Vec<_> = store
        .requests()
        .into_iter()
        .map(|r| {
            assert_eq!(plan.decide(r.operation, &r.identity, r.occurrence), r.fault);
            (r.identity, r.occurrence, r.fault)
        })
        .collect();
    decisions.sort();
    decisions
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_seed_gives_the_same_decisions_whatever_the_interleaving() {
    let plan = FaultPlan::new(42, 0.5)
        .kind(FaultKind::SlowDown, 2)
        .kind(FaultKind::InternalError, 1)
        .first_occurrences(3);
    let first = FaultStore::start();
    let second = FaultStore::start();
    let a = campaign(&first, &plan).await;
    let b = campaign(&second, &plan).await;
    assert_eq!(a, b);
    let faults = a.iter().filter(|d| d.2.is_some()).count();
    assert!(faults > 5, "{faults} faults in {} requests", a.len());
    assert_eq!(first.fault_counts(), second.fault_counts());
    assert_eq!(first.fault_counts().values().sum::<u64>(), faults as u64);
    // Another seed decides differently for the same requests.
    let other = FaultPlan {
        seed: 43,
        ..plan.clone()
    };
    assert!(a.iter().any(|(identity, occurrence, fault)| {
        let op = if identity.starts_with("PUT") {
            Op::PutObject
        } else {
            Op::GetObject
        };
        other.decide(op, identity, *occurrence) != *fault
    }));
    assert_signed(&first);
    assert_signed(&second);
}

/// GetObjectAttributes as S3 answers it: ETag, the object's checksum and type, the parts
/// with their sizes and checksums a page at a time, storage class and size; `501` with the
/// quirk of stores that do not implement it.
#[tokio::test]
async fn get_object_attributes_lists_parts_a_page_at_a_time() {
    use s3_wire_tokio::s3_ops::ops::get_object_attributes::GetObjectAttributes;
    let store = FaultStore::start();
    let sizes = [300u64, 300, 300, 300, 7];
    let bytes = data(sizes.iter().sum(), 4);
    let stored = store.insert_multipart_object(
        BUCKET,
        "parts",
        bytes.clone(),
        &sizes,
        Some((ChecksumAlgorithm::Crc32, ChecksumType::Composite)),
    );
    let client = store.client_builder().build().unwrap();
    let mut request = GetObjectAttributes::new(bucket(), key("parts")).max_parts(2);
    let mut parts = Vec::new();
    let mut pages = 0;
    loop {
        let page = client.get_object_attributes(request.clone()).await.unwrap();
        pages += 1;
        let result = &page.result;
        assert_eq!(
            result.etag.as_ref().map(ETag::as_str),
            Some(stored.etag.as_str())
        );
        assert_eq!(result.object_size, Some(bytes.len() as u64));
        assert_eq!(result.storage_class.as_deref(), Some("STANDARD"));
        assert_eq!(
            result.checksums.crc32.as_deref(),
            stored.checksum.as_ref().map(|c| c.value.as_str())
        );
        assert_eq!(result.checksums.checksum_type.as_deref(), Some("COMPOSITE"));
        let listed = result.object_parts.as_ref().unwrap();
        assert_eq!(listed.total_parts_count, Some(5));
        parts.extend(listed.parts.iter().cloned());
        match request.next_page(&page) {
            Some(next) => request = next,
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let mut offset = 0usize;
    for (index, part) in parts.iter().enumerate() {
        let size = sizes[index] as usize;
        assert_eq!(part.part_number as usize, index + 1);
        assert_eq!(part.size, Some(size as u64));
        let expected = base64(&crc32(&bytes[offset..offset + size]).to_be_bytes());
        assert_eq!(part.checksums.crc32.as_deref(), Some(expected.as_str()));
        offset += size;
    }
    assert_eq!(parts.len(), 5);
    store.set_quirks(crate::fault_store::StoreQuirks {
        no_object_attributes: true,
        ..Default::default()
    });
    let refused = client
        .get_object_attributes(GetObjectAttributes::new(bucket(), key("parts")))
        .await
        .unwrap_err();
    assert_eq!(
        refused.service_error().map(|e| e.status.as_u16()),
        Some(501)
    );
    assert_eq!(store.signature_failures(), 0);
}

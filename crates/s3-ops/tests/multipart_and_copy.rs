//! Wire shape and decoding of multipart and server-side copy operations, including the
//! errors S3 hides in 200 responses.

mod common;

use bytes::Bytes;
use common::*;
use s3_ops::ops::abort_multipart_upload::AbortMultipartUpload;
use s3_ops::ops::complete_multipart_upload::CompleteMultipartUpload;
use s3_ops::ops::copy_object::{CopyObject, Directive};
use s3_ops::ops::copy_source::CopySource;
use s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
use s3_ops::ops::list_multipart_uploads::ListMultipartUploads;
use s3_ops::ops::list_parts::ListParts;
use s3_ops::ops::upload_part::UploadPart;
use s3_ops::ops::upload_part_copy::UploadPartCopy;
use s3_ops::{
    Body, ByteRange, ChecksumAlgorithm, ChecksumType, ContentMd5, ETag, Error, InvalidInput,
    Operation, RetryClass, ServerSideEncryption, SseCustomerKey, StorageClass,
};
use s3_xml::CompletedPart;

fn etag(value: &str) -> ETag {
    ETag::parse(value).unwrap()
}

#[test]
fn create_multipart_upload_wire_shape_and_output() {
    let create = CreateMultipartUpload::new(bucket(), key("video.mp4"))
        .content_type("video/mp4")
        .metadata("camera", "x100")
        .storage_class(StorageClass::IntelligentTiering)
        .server_side_encryption(ServerSideEncryption::S3)
        .checksum_algorithm(ChecksumAlgorithm::Crc32c)
        .checksum_type(ChecksumType::FullObject);
    let request = create.request(&aws()).unwrap();
    assert_eq!(
        shape(&request),
        (
            "POST".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/video.mp4?uploads".into(),
            strings(&[
                "content-length: 0",
                "content-type: video/mp4",
                "x-amz-checksum-algorithm: CRC32C",
                "x-amz-checksum-type: FULL_OBJECT",
                "x-amz-meta-camera: x100",
                "x-amz-server-side-encryption: AES256",
                "x-amz-storage-class: INTELLIGENT_TIERING",
            ])
        )
    );
    assert!(
        create.is_idempotent(),
        "retried after a lost answer (the extra upload is swept)"
    );
    let output = create
        .response(response(
            200,
            &[
                ("x-amz-abort-date", "Wed, 28 Oct 2026 00:00:00 GMT"),
                ("x-amz-abort-rule-id", "cleanup"),
                ("x-amz-checksum-algorithm", "CRC32C"),
            ],
            testdata("s3mock/InitiateMultipartUploadResultTest_testSerialization.xml"),
        ))
        .unwrap();
    assert_eq!(output.upload_id, "uploadId");
    assert_eq!(output.abort_rule_id.as_deref(), Some("cleanup"));
    assert_eq!(output.checksum_algorithm.as_deref(), Some("CRC32C"));
    assert_eq!(
        output.abort_date,
        Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_793_145_600))
    );
}

#[test]
fn upload_part_wire_shape() {
    let part = UploadPart::new(bucket(), key("video.mp4"), "up/id+1", 2)
        .body(Bytes::from_static(b"part data"))
        .checksum_algorithm(ChecksumAlgorithm::Crc32c)
        .sse_customer_key(SseCustomerKey::new([1u8; 32]));
    let request = part.request(&minio()).unwrap();
    let (method, uri, headers) = shape(&request);
    assert_eq!(method, "PUT");
    assert_eq!(
        uri,
        "http://127.0.0.1:9000/examplebucket/video.mp4?partNumber=2&uploadId=up%2Fid%2B1"
    );
    let expected_crc = ChecksumAlgorithm::Crc32c.checksum(b"part data").to_base64();
    assert!(headers.contains(&format!("x-amz-checksum-crc32c: {expected_crc}")));
    assert!(headers.contains(&"x-amz-sdk-checksum-algorithm: CRC32C".to_owned()));
    assert!(headers.contains(&"content-length: 9".to_owned()));
    assert!(
        headers.contains(&"x-amz-server-side-encryption-customer-algorithm: AES256".to_owned())
    );
    for bad in [0, 10_001] {
        let bad_part = UploadPart::new(bucket(), key("k"), "id", bad);
        assert!(matches!(
            bad_part.request(&aws()),
            Err(Error::InvalidInput(InvalidInput::Parameter {
                name: "partNumber",
                ..
            }))
        ));
    }
    assert!(
        UploadPart::new(bucket(), key("k"), "", 1)
            .request(&aws())
            .is_err()
    );

    let output = part
        .response(response(
            200,
            &[
                ("etag", "\"b54357faf0632cce46e942fa68356b38\""),
                ("x-amz-checksum-crc32c", &expected_crc),
            ],
            "",
        ))
        .unwrap();
    assert_eq!(
        output.etag.unwrap().as_str(),
        "\"b54357faf0632cce46e942fa68356b38\""
    );
    assert_eq!(
        output.checksums.get(ChecksumAlgorithm::Crc32c),
        Some(expected_crc.as_str())
    );
}

#[test]
fn complete_multipart_upload_wire_shape() {
    let parts = vec![
        CompletedPart::new(1, etag("\"a54357faf0632cce46e942fa68356b38\"")),
        CompletedPart::new(2, etag("\"0c78aef83f66abc1fa1e8477f296d394\"")),
    ];
    let full = ChecksumAlgorithm::Crc64Nvme.checksum(b"whole object");
    let complete = CompleteMultipartUpload::new(bucket(), key("video.mp4"), "uid", parts)
        .full_object_checksum(full.clone())
        .checksum_type(ChecksumType::FullObject)
        .object_size(12)
        .if_none_match_any();
    let request = complete.request(&aws()).unwrap();
    let body = body_text(&request);
    assert_eq!(
        shape(&request),
        (
            "POST".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/video.mp4?uploadId=uid".into(),
            strings(&[
                &format!("content-length: {}", body.len()),
                &format!("content-md5: {}", ContentMd5::of(body.as_bytes())),
                "content-type: application/xml",
                "if-none-match: *",
                &format!("x-amz-checksum-crc64nvme: {}", full.to_base64()),
                "x-amz-checksum-type: FULL_OBJECT",
                "x-amz-mp-object-size: 12",
            ])
        )
    );
    let decoded = s3_xml::decode_complete_multipart_upload_request(
        body.as_bytes(),
        &s3_xml::Limits::default(),
    )
    .unwrap();
    let numbers: Vec<(u32, &str)> = decoded
        .parts
        .iter()
        .map(|p| (p.part_number, p.etag.as_str()))
        .collect();
    assert_eq!(
        numbers,
        [
            (1, "\"a54357faf0632cce46e942fa68356b38\""),
            (2, "\"0c78aef83f66abc1fa1e8477f296d394\"")
        ]
    );
}

#[test]
fn complete_multipart_upload_rejects_bad_part_lists() {
    let none = CompleteMultipartUpload::new(bucket(), key("k"), "uid", vec![]);
    assert!(none.request(&aws()).is_err());
    let unordered = CompleteMultipartUpload::new(
        bucket(),
        key("k"),
        "uid",
        vec![
            CompletedPart::new(2, etag("\"b\"")),
            CompletedPart::new(1, etag("\"a\"")),
        ],
    );
    assert!(matches!(
        unordered.request(&aws()),
        Err(Error::InvalidInput(InvalidInput::Parameter {
            name: "PartNumber",
            ..
        }))
    ));
}

#[test]
fn complete_multipart_upload_decodes_success_and_errors_in_200() {
    let complete = CompleteMultipartUpload::new(
        bucket(),
        key("k"),
        "uid",
        vec![CompletedPart::new(1, etag("\"a\""))],
    );
    let output = complete
        .response(response(
            200,
            &[("x-amz-version-id", "v7")],
            testdata("s3mock/CompleteMultipartUploadResultTest_testSerialization.xml"),
        ))
        .unwrap();
    assert_eq!(output.result.etag.as_ref().unwrap().unquoted(), "etag");
    assert_eq!(output.result.location.as_deref(), Some("location"));
    assert_eq!(output.version_id.as_deref(), Some("v7"));

    // 200 with whitespace keep-alive padding, then an InternalError document.
    let hidden = "\n \n<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InternalError</Code>\
                  <Message>We encountered an internal error. Please try again.</Message>\
                  <RequestId>656c76696e6727732072657175657374</RequestId>\
                  <HostId>Uuag1LuByRx9e6j5Onimru9pO4ZVKnJ2Qz7/C1NPcfTWAtRPfTaOFg==</HostId></Error>";
    let error = complete.response(response(200, &[], hidden)).unwrap_err();
    let service = error.service_error().unwrap();
    assert_eq!(service.status, 200);
    assert_eq!(service.code, "InternalError");
    assert_eq!(
        service.request_id.as_deref(),
        Some("656c76696e6727732072657175657374")
    );
    assert_eq!(error.retry_class(), RetryClass::Transient);

    let slow = "<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>";
    let error = complete.response(response(200, &[], slow)).unwrap_err();
    assert_eq!(error.retry_class(), RetryClass::Throttling);
}

#[test]
fn abort_list_parts_and_list_uploads() {
    let abort = AbortMultipartUpload::new(bucket(), key("a/b"), "uid");
    assert_eq!(
        shape(&abort.request(&aws()).unwrap()),
        (
            "DELETE".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/a/b?uploadId=uid".into(),
            vec![]
        )
    );
    let missing = "<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>";
    let error = abort.response(response(404, &[], missing)).unwrap_err();
    assert!(error.service_error().unwrap().is_not_found());

    let list = ListParts::new(bucket(), key("fileName"), "uploadId")
        .max_parts(100)
        .part_number_marker(5);
    assert_eq!(
        list.request(&aws()).unwrap().request.uri(),
        "https://examplebucket.s3.us-east-1.amazonaws.com/fileName?max-parts=100&part-number-marker=5&uploadId=uploadId"
    );
    let output = list
        .response(response(
            200,
            &[],
            testdata("s3mock/ListPartsResultTest_testSerialization.xml"),
        ))
        .unwrap();
    let parts: Vec<(u32, u64)> = output
        .result
        .parts
        .iter()
        .map(|p| (p.part_number, p.size))
        .collect();
    assert_eq!(parts, [(1, 11), (2, 12)]);
    assert!(list.next_page(&output).is_none(), "IsTruncated is false");
    assert!(
        ListParts::new(bucket(), key("k"), "u")
            .part_number_marker(10_001)
            .request(&aws())
            .is_err()
    );

    let uploads = ListMultipartUploads::new(bucket())
        .prefix("prefix/")
        .delimiter("/")
        .max_uploads(2);
    assert_eq!(
        uploads.request(&aws()).unwrap().request.uri(),
        "https://examplebucket.s3.us-east-1.amazonaws.com/?delimiter=%2F&encoding-type=url&max-uploads=2&prefix=prefix%2F&uploads"
    );
    let output = uploads
        .response(response(
            200,
            &[],
            testdata("botocore/responses/s3-list-multipart-uploads.xml"),
        ))
        .unwrap();
    // botocore's expected parse: no uploads, two common prefixes.
    assert!(output.result.uploads.is_empty());
    assert_eq!(output.result.common_prefixes, ["foo/", "foobar/"]);
    assert!(uploads.next_page(&output).is_none());
    let truncated = "<ListMultipartUploadsResult><Bucket>b</Bucket><IsTruncated>true</IsTruncated>\
                     <NextKeyMarker>k2</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>\
                     </ListMultipartUploadsResult>";
    let output = uploads.response(response(200, &[], truncated)).unwrap();
    let next_uri = uploads
        .next_page(&output)
        .unwrap()
        .request(&aws())
        .unwrap()
        .request
        .uri()
        .to_string();
    assert!(next_uri.contains("key-marker=k2&"), "{next_uri}");
    assert!(next_uri.contains("upload-id-marker=u2&"), "{next_uri}");
}

#[test]
fn copy_object_wire_shape() {
    let source = CopySource::new(bucket(), key("src dir/a+b.txt"))
        .version_id("v/1")
        .if_match("\"abc\"")
        .sse_customer_key(SseCustomerKey::new([2u8; 32]));
    let copy = CopyObject::new(source, bucket(), key("dst.txt"))
        .metadata_directive(Directive::Replace)
        .content_type("text/plain")
        .metadata("k", "v")
        .checksum_algorithm(ChecksumAlgorithm::Sha256);
    let request = copy.request(&aws()).unwrap();
    let (method, uri, headers) = shape(&request);
    assert_eq!(method, "PUT");
    assert_eq!(
        uri,
        "https://examplebucket.s3.us-east-1.amazonaws.com/dst.txt"
    );
    for expected in [
        "x-amz-copy-source: examplebucket/src%20dir/a%2Bb.txt?versionId=v%2F1",
        "x-amz-copy-source-if-match: \"abc\"",
        "x-amz-copy-source-server-side-encryption-customer-algorithm: AES256",
        "x-amz-metadata-directive: REPLACE",
        "x-amz-checksum-algorithm: SHA256",
        "content-type: text/plain",
        "x-amz-meta-k: v",
        "content-length: 0",
    ] {
        assert!(
            headers.contains(&expected.to_owned()),
            "{expected} not in {headers:#?}"
        );
    }
    assert_eq!(request.body, Body::Empty);

    // Metadata without REPLACE would be silently ignored by S3: rejected.
    let ignored = CopyObject::new(CopySource::new(bucket(), key("a")), bucket(), key("b"))
        .content_type("text/plain");
    assert!(matches!(
        ignored.request(&aws()),
        Err(Error::InvalidInput(InvalidInput::Parameter {
            name: "x-amz-metadata-directive",
            ..
        }))
    ));
    let tags =
        CopyObject::new(CopySource::new(bucket(), key("a")), bucket(), key("b")).tag("t", "v");
    assert!(tags.request(&aws()).is_err());
}

#[test]
fn copy_object_decodes_result_and_hidden_error() {
    let copy = CopyObject::new(CopySource::new(bucket(), key("a")), bucket(), key("b"));
    let body = "<CopyObjectResult><LastModified>2009-10-12T17:50:30.000Z</LastModified>\
                <ETag>\"9b2cf535f27731c974343645a3985328\"</ETag></CopyObjectResult>";
    let output = copy
        .response(response(
            200,
            &[
                ("x-amz-version-id", "new"),
                ("x-amz-copy-source-version-id", "old"),
            ],
            body,
        ))
        .unwrap();
    assert_eq!(
        output.result.etag.unwrap().unquoted(),
        "9b2cf535f27731c974343645a3985328"
    );
    assert_eq!(
        output.result.last_modified.unwrap().unix_seconds(),
        1_255_369_830
    );
    assert_eq!(output.version_id.as_deref(), Some("new"));
    assert_eq!(output.copy_source_version_id.as_deref(), Some("old"));

    let hidden = "<Error><Code>InternalError</Code><Message>retry</Message></Error>";
    let error = copy.response(response(200, &[], hidden)).unwrap_err();
    assert_eq!(error.service_error().unwrap().code, "InternalError");
    assert_eq!(error.retry_class(), RetryClass::Transient);
}

#[test]
fn upload_part_copy_wire_shape_and_decoding() {
    let copy = UploadPartCopy::new(
        CopySource::new(bucket(), key("big")),
        bucket(),
        key("dst"),
        "uid",
        3,
    )
    .source_range(ByteRange::new(5_242_880, 10_485_759).unwrap());
    let request = copy.request(&aws()).unwrap();
    assert_eq!(
        shape(&request),
        (
            "PUT".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/dst?partNumber=3&uploadId=uid".into(),
            strings(&[
                "content-length: 0",
                "x-amz-copy-source: examplebucket/big",
                "x-amz-copy-source-range: bytes=5242880-10485759",
            ])
        )
    );
    let open = UploadPartCopy::new(
        CopySource::new(bucket(), key("a")),
        bucket(),
        key("b"),
        "u",
        1,
    )
    .source_range(ByteRange::From(0));
    assert!(matches!(
        open.request(&aws()),
        Err(Error::InvalidInput(InvalidInput::InvalidRange { .. }))
    ));
    let output = copy
        .response(response(
            200,
            &[],
            testdata("s3mock/CopyPartResultTest_testSerialization.xml"),
        ))
        .unwrap();
    assert_eq!(
        output.result.etag.unwrap().as_str(),
        "\"99f2fdceebf20fb2e891810adfb0eb71\""
    );
    let hidden = "<Error><Code>SlowDown</Code></Error>";
    let error = copy.response(response(200, &[], hidden)).unwrap_err();
    assert_eq!(error.retry_class(), RetryClass::Throttling);
}

#[test]
fn a_copy_source_heads_the_same_version_under_the_same_conditions() {
    use s3_ops::ops::copy_source::CopySource;
    use s3_ops::{Operation, SseCustomerKey};
    let source = CopySource::new(bucket(), key("from.bin"))
        .version_id("v 1")
        .if_match("\"abc\"")
        .sse_customer_key(SseCustomerKey::new([7; 32]));
    assert_eq!(source.bucket(), &bucket());
    assert_eq!(source.key(), &key("from.bin"));
    let (method, uri, headers) = shape(&source.head_object().request(&aws()).unwrap());
    assert_eq!(method, "HEAD");
    assert!(uri.ends_with("/from.bin?versionId=v%201"), "{uri}");
    assert!(
        headers.contains(&"if-match: \"abc\"".to_owned()),
        "{headers:?}"
    );
    assert!(
        headers.contains(&"x-amz-server-side-encryption-customer-algorithm: AES256".to_owned()),
        "{headers:?}"
    );
}

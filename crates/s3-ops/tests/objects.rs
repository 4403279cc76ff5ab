//! Wire shape and decoding of the single-object operations.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use common::*;
use s3_ops::ops::delete_object::DeleteObject;
use s3_ops::ops::get_object::{GetObject, ResponseHeaderOverrides};
use s3_ops::ops::head_object::{HeadObject, ObjectHead};
use s3_ops::ops::put_object::PutObject;
use s3_ops::ops::upload_part::UploadPart;
use s3_ops::{
    Body, ByteRange, ChecksumAlgorithm, Error, IntegrityDefaults, InvalidInput, Operation,
    RetryClass, ServerSideEncryption, SseCustomerKey, StorageClass,
};

/// Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example date).
fn rfc_date() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(784_111_777)
}

#[test]
fn get_object_with_every_option() {
    let get = GetObject::new(bucket(), key("photos/2024/a b+c.jpg"))
        .range(ByteRange::new(0, 1023).unwrap())
        .version_id("3/L4kqtJl40Nr8X8gdRQBpUMLUo")
        .if_match("\"abc\"")
        .if_none_match("\"def\"")
        .if_modified_since(rfc_date())
        .if_unmodified_since(rfc_date())
        .checksum_mode(true)
        .response_headers(ResponseHeaderOverrides {
            content_type: Some("text/plain; charset=utf-8".into()),
            content_disposition: Some("attachment; filename=\"x.txt\"".into()),
            ..Default::default()
        });
    let request = get.request(&aws()).unwrap();
    assert_eq!(
        shape(&request),
        (
            "GET".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/photos/2024/a%20b%2Bc.jpg\
             ?response-content-disposition=attachment%3B%20filename%3D%22x.txt%22\
             &response-content-type=text%2Fplain%3B%20charset%3Dutf-8\
             &versionId=3%2FL4kqtJl40Nr8X8gdRQBpUMLUo"
                .into(),
            strings(&[
                "if-match: \"abc\"",
                "if-none-match: \"def\"",
                "if-modified-since: Sun, 06 Nov 1994 08:49:37 GMT",
                "if-unmodified-since: Sun, 06 Nov 1994 08:49:37 GMT",
                "range: bytes=0-1023",
                "x-amz-checksum-mode: ENABLED",
            ])
        )
    );
    assert_eq!(request.body, Body::Empty);
    assert!(get.is_idempotent());
}

#[test]
fn get_object_part_number_and_sse_c() {
    let get = GetObject::new(bucket(), key("k"))
        .part_number(3)
        .sse_customer_key(SseCustomerKey::new([0u8; 32]));
    let request = get.request(&minio()).unwrap();
    assert_eq!(
        shape(&request),
        (
            "GET".into(),
            "http://127.0.0.1:9000/examplebucket/k?partNumber=3".into(),
            strings(&[
                "x-amz-server-side-encryption-customer-algorithm: AES256",
                "x-amz-server-side-encryption-customer-key: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                // MD5 of 32 zero bytes = 70bc8f4b72a86921468bf8e8441dce51.
                "x-amz-server-side-encryption-customer-key-md5: cLyPS3KoaSFGi/joRB3OUQ==",
            ])
        )
    );
}

#[test]
fn get_object_rejects_bad_ranges_and_parts() {
    let both = GetObject::new(bucket(), key("k"))
        .range(ByteRange::From(0))
        .part_number(1);
    assert!(matches!(
        both.request(&aws()),
        Err(Error::InvalidInput(InvalidInput::InvalidRange { .. }))
    ));
    let suffix = GetObject::new(bucket(), key("k")).range(ByteRange::Suffix(0));
    assert!(matches!(
        suffix.request(&aws()),
        Err(Error::InvalidInput(InvalidInput::InvalidRange { .. }))
    ));
    let part = GetObject::new(bucket(), key("k")).part_number(10_001);
    assert!(matches!(
        part.request(&aws()),
        Err(Error::InvalidInput(InvalidInput::Parameter {
            name: "partNumber",
            ..
        }))
    ));
    let header = GetObject::new(bucket(), key("k")).if_match("a\r\nx-evil: 1");
    assert_eq!(
        header.request(&aws()).unwrap_err(),
        Error::InvalidInput(InvalidInput::HeaderValue {
            name: "if-match".into()
        })
    );
}

#[test]
fn get_object_decodes_a_ranged_response() {
    let get = GetObject::new(bucket(), key("k"));
    let response = response(
        206,
        &[
            ("content-length", "5"),
            ("content-range", "bytes 10-14/100"),
            ("content-type", "text/plain"),
            ("etag", "\"9b2cf535f27731c974343645a3985328\""),
            ("last-modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("x-amz-version-id", "v1"),
            ("x-amz-storage-class", "STANDARD_IA"),
            ("x-amz-meta-owner", "alice"),
            ("x-amz-meta-Project", "x"),
            ("x-amz-checksum-crc32", "NhCmhg=="),
            ("x-amz-server-side-encryption", "aws:kms"),
            (
                "x-amz-server-side-encryption-aws-kms-key-id",
                "arn:aws:kms:k",
            ),
            ("x-amz-request-id", "R1"),
            ("x-amz-id-2", "H1"),
            ("x-amz-tagging-count", "2"),
        ],
        "hello",
    );
    let output = get.response(response).unwrap();
    let head = &output.head;
    assert_eq!(output.body, Bytes::from_static(b"hello"));
    assert_eq!(head.content_length, Some(5));
    let range = head.content_range.unwrap();
    assert_eq!((range.first, range.last, range.total), (10, 14, Some(100)));
    assert_eq!(
        head.etag.as_ref().unwrap().unquoted(),
        "9b2cf535f27731c974343645a3985328"
    );
    assert_eq!(head.last_modified, Some(rfc_date()));
    assert_eq!(head.version_id.as_deref(), Some("v1"));
    assert_eq!(head.storage_class, Some(StorageClass::StandardIa));
    assert_eq!(
        head.metadata.get("owner").map(String::as_str),
        Some("alice")
    );
    assert_eq!(head.metadata.get("project").map(String::as_str), Some("x"));
    assert_eq!(
        head.checksums.get(ChecksumAlgorithm::Crc32),
        Some("NhCmhg==")
    );
    assert_eq!(head.encryption.algorithm.as_deref(), Some("aws:kms"));
    assert_eq!(head.encryption.kms_key_id.as_deref(), Some("arn:aws:kms:k"));
    assert_eq!(head.ids.request_id.as_deref(), Some("R1"));
    assert_eq!(head.ids.extended_request_id.as_deref(), Some("H1"));
    assert_eq!(head.tag_count, Some(2));
    // CRC32("hello") = 0x3610a686 -> base64 "NhCmhg==": the announced value validates
    // the body, but a partial (206) body is not checked against it.
    let mut validator = head.checksums.validator().unwrap();
    validator.update(&output.body);
    assert_eq!(validator.finish(), Ok(()));
    assert!(head.checksum_validator().is_none());
}

#[test]
fn streamed_body_validation_catches_corruption() {
    let get = GetObject::new(bucket(), key("k")).checksum_mode(true);
    let headers = [
        ("content-length", "5"),
        ("x-amz-checksum-crc32c", "mnG7TA=="), // CRC32C("hello") = 0x9a71bb4c
    ];
    let (parts, _) = response(200, &headers, "").into_parts();
    let output = get.response_head(&parts).unwrap();
    let mut good = output.head.checksum_validator().unwrap();
    good.update(b"he");
    good.update(b"llo");
    assert_eq!(good.finish(), Ok(()));
    let mut bad = output.head.checksum_validator().unwrap();
    bad.update(b"hellp");
    let error = bad.finish().unwrap_err();
    assert!(matches!(error, Error::ChecksumMismatch { .. }), "{error:?}");
    assert_eq!(error.retry_class(), RetryClass::Transient);
    // A whole-object 206 is still validated; a composite multipart value is not.
    let whole = [
        ("content-range", "bytes 0-4/5"),
        ("x-amz-checksum-crc32c", "mnG7TA=="),
    ];
    let (parts, _) = response(206, &whole, "").into_parts();
    assert!(
        get.response_head(&parts)
            .unwrap()
            .head
            .checksum_validator()
            .is_some()
    );
    let composite = [
        ("x-amz-checksum-crc32c", "mnG7TA==-3"),
        ("x-amz-checksum-type", "COMPOSITE"),
    ];
    let (parts, _) = response(200, &composite, "").into_parts();
    assert!(
        get.response_head(&parts)
            .unwrap()
            .head
            .checksum_validator()
            .is_none()
    );
}

#[test]
fn debug_output_redacts_sse_c_keys() {
    let request = GetObject::new(bucket(), key("k"))
        .sse_customer_key(SseCustomerKey::new([9u8; 32]))
        .request(&aws())
        .unwrap();
    let encoded_key = request.request.headers()["x-amz-server-side-encryption-customer-key"]
        .to_str()
        .unwrap()
        .to_owned();
    let debug = format!("{request:?}");
    assert!(!debug.contains(&encoded_key), "{debug}");
    assert!(debug.contains("<redacted>"), "{debug}");
}

#[test]
fn get_object_head_only_decoding_for_streaming() {
    let get = GetObject::new(bucket(), key("k"));
    let (parts, _) = response(200, &[("content-length", "123456789")], "").into_parts();
    let output = get.response_head(&parts).unwrap();
    assert_eq!(output.head.content_length, Some(123_456_789));
    assert!(output.body.is_empty());

    let (parts, _) = response(404, &[("x-amz-request-id", "R")], "").into_parts();
    let error = get.response_head(&parts).unwrap_err();
    let service = error.service_error().unwrap();
    assert_eq!(service.code, "NotFound");
    assert!(service.is_not_found());
}

#[test]
fn get_object_rejects_garbled_headers() {
    let get = GetObject::new(bucket(), key("k"));
    for (name, value) in [
        ("content-length", "12x"),
        ("last-modified", "yesterday"),
        ("content-range", "bytes 5-1/10"),
        ("etag", "\"unbalanced"),
    ] {
        let result = get.response(response(200, &[(name, value)], ""));
        assert!(
            matches!(result, Err(Error::MalformedResponse(_))),
            "{name}: {result:?}"
        );
    }
}

/// Garage answers a suffix range on an empty object with `206` and
/// `Content-Range: bytes 0-18446744073709551615/0`: an empty object is an empty body,
/// whatever the header says. Every other inconsistent range stays malformed.
#[test]
fn an_empty_object_is_an_empty_body_whatever_its_content_range_says() {
    let get = GetObject::new(bucket(), key("k")).range(ByteRange::Suffix(8));
    for length in [Some("0"), None] {
        let mut headers = vec![("content-range", "bytes 0-18446744073709551615/0")];
        headers.extend(length.map(|length| ("content-length", length)));
        let output = get
            .response(response(206, &headers, ""))
            .unwrap_or_else(|e| panic!("{length:?}: {e:?}"));
        assert_eq!(output.head.content_range, None);
        assert!(output.body.is_empty());
    }
    for (range, length) in [
        // Bytes announced for an empty object.
        ("bytes 0-18446744073709551615/0", "5"),
        // A range past a non-empty object's end.
        ("bytes 0-18446744073709551615/10", "0"),
        ("bytes 0-9/9", "10"),
    ] {
        let result = get.response(response(
            206,
            &[("content-range", range), ("content-length", length)],
            "",
        ));
        assert!(
            matches!(result, Err(Error::MalformedResponse(_))),
            "{range} {length}: {result:?}"
        );
    }
}

#[test]
fn not_modified_is_a_precondition_outcome() {
    let get = GetObject::new(bucket(), key("k")).if_none_match("\"abc\"");
    let error = get.response(response(304, &[], "")).unwrap_err();
    let service = error.service_error().unwrap();
    assert_eq!(service.code, "NotModified");
    assert!(service.is_precondition_failed());
    assert_eq!(error.retry_class(), RetryClass::NotRetryable);
}

#[test]
fn head_object_wire_shape_and_bodiless_errors() {
    let head = HeadObject::new(bucket(), key("dir//x/../y"))
        .version_id("v 2")
        .expected_bucket_owner("111122223333");
    let request = head.request(&aws()).unwrap();
    assert_eq!(
        shape(&request),
        (
            "HEAD".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/dir//x/../y?versionId=v%202".into(),
            strings(&["x-amz-expected-bucket-owner: 111122223333"])
        )
    );

    // A HEAD in the wrong region: 301, no body, region in the header.
    let moved = head
        .response(response(
            301,
            &[
                ("x-amz-bucket-region", "eu-west-1"),
                ("x-amz-request-id", "R"),
            ],
            "",
        ))
        .unwrap_err();
    assert_eq!(moved.service_error().unwrap().code, "PermanentRedirect");
    assert_eq!(
        moved.retry_class(),
        RetryClass::RedirectRegion {
            region: "eu-west-1".into()
        }
    );
    let forbidden = head.response(response(403, &[], "")).unwrap_err();
    assert_eq!(forbidden.service_error().unwrap().code, "Forbidden");
    assert_eq!(forbidden.retry_class(), RetryClass::NotRetryable);
}

#[test]
fn head_object_decodes_delete_marker_and_parts() {
    let head = HeadObject::new(bucket(), key("k")).part_number(1);
    let output = head
        .response(response(
            200,
            &[
                ("x-amz-delete-marker", "false"),
                ("x-amz-mp-parts-count", "7"),
                ("x-amz-missing-meta", "1"),
                ("x-amz-restore", "ongoing-request=\"false\""),
                ("expires", "not a date"),
            ],
            "",
        ))
        .unwrap();
    assert!(!output.delete_marker);
    assert_eq!(output.parts_count, Some(7));
    assert_eq!(output.missing_meta, Some(1));
    assert_eq!(output.restore.as_deref(), Some("ongoing-request=\"false\""));
    assert_eq!(output.expires.as_deref(), Some("not a date"));
}

#[test]
fn put_object_with_every_header() {
    let put = PutObject::new(bucket(), key("docs/report.pdf"))
        .body(Bytes::from_static(b"hello"))
        .content_type("application/pdf")
        .cache_control("max-age=60")
        .content_disposition("inline")
        .content_encoding("gzip")
        .content_language("en")
        .expires(rfc_date())
        .metadata("Owner", "alice")
        .storage_class(StorageClass::GlacierIr)
        .tag("team", "a b")
        .tag("k&=", "v/")
        .server_side_encryption(ServerSideEncryption::Kms {
            key_id: Some("key-1".into()),
            context: None,
            bucket_key: Some(true),
        })
        .if_none_match_any()
        .checksum_algorithm(ChecksumAlgorithm::Crc32)
        .content_md5(true);
    let request = put.request(&aws()).unwrap();
    assert_eq!(
        shape(&request),
        (
            "PUT".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/docs/report.pdf".into(),
            strings(&[
                "cache-control: max-age=60",
                "content-disposition: inline",
                "content-encoding: gzip",
                "content-language: en",
                "content-length: 5",
                // MD5("hello") = 5d41402abc4b2a76b9719d911017c592.
                "content-md5: XUFAKrxLKna5cZ2REBfFkg==",
                "content-type: application/pdf",
                "expires: Sun, 06 Nov 1994 08:49:37 GMT",
                "if-none-match: *",
                // CRC32("hello") = 0x3610a686.
                "x-amz-checksum-crc32: NhCmhg==",
                "x-amz-meta-owner: alice",
                "x-amz-sdk-checksum-algorithm: CRC32",
                "x-amz-server-side-encryption: aws:kms",
                "x-amz-server-side-encryption-aws-kms-key-id: key-1",
                "x-amz-server-side-encryption-bucket-key-enabled: true",
                "x-amz-storage-class: GLACIER_IR",
                "x-amz-tagging: team=a%20b&k%26%3D=v%2F",
            ])
        )
    );
    assert_eq!(request.body, Body::Bytes(Bytes::from_static(b"hello")));
}

#[test]
fn put_object_streaming_body_uses_a_trailer() {
    let put = PutObject::new(bucket(), key("big.bin"))
        .streaming_body(3 << 30)
        .checksum_algorithm(ChecksumAlgorithm::Crc64Nvme);
    let request = put.request(&aws()).unwrap();
    assert_eq!(
        request.body,
        Body::External {
            content_length: 3 << 30,
            trailing_checksum: Some(ChecksumAlgorithm::Crc64Nvme)
        }
    );
    let (_, _, headers) = shape(&request);
    assert_eq!(
        headers,
        strings(&[
            "content-length: 3221225472",
            "x-amz-sdk-checksum-algorithm: CRC64NVME"
        ])
    );
    // Over 5 GiB needs a multipart upload.
    let too_big = PutObject::new(bucket(), key("big.bin")).streaming_body((5 << 30) + 1);
    assert!(matches!(
        too_big.request(&aws()),
        Err(Error::InvalidInput(InvalidInput::Parameter {
            name: "Content-Length",
            ..
        }))
    ));
    assert!(
        PutObject::new(bucket(), key("big.bin"))
            .streaming_body(5 << 30)
            .request(&aws())
            .is_ok()
    );
    // Content-MD5 cannot be computed over a stream.
    let md5 = PutObject::new(bucket(), key("big.bin"))
        .streaming_body(1)
        .content_md5(true);
    assert!(matches!(
        md5.request(&aws()),
        Err(Error::InvalidInput(InvalidInput::Parameter {
            name: "Content-MD5",
            ..
        }))
    ));
}

#[test]
fn put_object_precomputed_checksum_and_conditional_overwrite() {
    let checksum = ChecksumAlgorithm::Sha256.checksum(b"abc");
    let request = PutObject::new(bucket(), key("k"))
        .streaming_body(3)
        .checksum(checksum)
        .if_match("\"etag\"")
        .server_side_encryption(ServerSideEncryption::S3)
        .request(&aws())
        .unwrap();
    let (_, _, headers) = shape(&request);
    assert_eq!(
        headers,
        strings(&[
            "content-length: 3",
            "if-match: \"etag\"",
            "x-amz-checksum-sha256: ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=",
            "x-amz-sdk-checksum-algorithm: SHA256",
            "x-amz-server-side-encryption: AES256",
        ])
    );
}

#[test]
fn put_object_rejects_bad_metadata() {
    let too_big = PutObject::new(bucket(), key("k")).metadata("a", "x".repeat(2048));
    assert_eq!(
        too_big.request(&aws()).unwrap_err(),
        Error::InvalidInput(InvalidInput::MetadataTooLarge { size: 2049 })
    );
    let exactly = PutObject::new(bucket(), key("k")).metadata("ab", "x".repeat(2046));
    assert!(exactly.request(&aws()).is_ok());
    let newline = PutObject::new(bucket(), key("k")).metadata("a", "line\nbreak");
    assert_eq!(
        newline.request(&aws()).unwrap_err(),
        Error::InvalidInput(InvalidInput::HeaderValue {
            name: "x-amz-meta-a".into()
        })
    );
    let bad_name = PutObject::new(bucket(), key("k")).metadata("a b", "v");
    assert!(matches!(
        bad_name.request(&aws()),
        Err(Error::InvalidInput(InvalidInput::MetadataName { .. }))
    ));
    let bad_type = PutObject::new(bucket(), key("k")).content_type("text/plain\r\nx: y");
    assert!(matches!(
        bad_type.request(&aws()),
        Err(Error::InvalidInput(InvalidInput::HeaderValue { .. }))
    ));
}

#[test]
fn put_object_decodes_output() {
    let output = PutObject::new(bucket(), key("k"))
        .response(response(
            200,
            &[
                ("etag", "\"5d41402abc4b2a76b9719d911017c592\""),
                ("x-amz-version-id", "v9"),
                ("x-amz-checksum-crc32", "NhCmhg=="),
                ("x-amz-checksum-type", "FULL_OBJECT"),
                ("x-amz-server-side-encryption", "AES256"),
                ("x-amz-request-id", "R"),
            ],
            "",
        ))
        .unwrap();
    assert_eq!(
        output.etag.unwrap().unquoted(),
        "5d41402abc4b2a76b9719d911017c592"
    );
    assert_eq!(output.version_id.as_deref(), Some("v9"));
    assert_eq!(
        output.checksums.get(ChecksumAlgorithm::Crc32),
        Some("NhCmhg==")
    );
    assert_eq!(
        output.checksums.checksum_type,
        Some(s3_ops::ChecksumType::FullObject)
    );
    assert_eq!(output.encryption.algorithm.as_deref(), Some("AES256"));
    assert_eq!(output.ids.request_id.as_deref(), Some("R"));
}

#[test]
fn put_object_precondition_failure() {
    let put = PutObject::new(bucket(), key("k")).if_none_match_any();
    let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>PreconditionFailed</Code>\
                <Message>At least one of the pre-conditions you specified did not hold</Message>\
                <Condition>If-None-Match</Condition><RequestId>R2</RequestId><HostId>H2</HostId></Error>";
    let error = put.response(response(412, &[], body)).unwrap_err();
    let service = error.service_error().unwrap();
    assert!(service.is_precondition_failed());
    assert_eq!(service.extra("Condition"), Some("If-None-Match"));
    assert_eq!(service.request_id.as_deref(), Some("R2"));
    assert_eq!(service.host_id.as_deref(), Some("H2"));
    assert_eq!(error.retry_class(), RetryClass::NotRetryable);
}

#[test]
fn delete_object_wire_shape_and_output() {
    let delete = DeleteObject::new(bucket(), key("a?b#c"))
        .version_id("v1")
        .if_match("\"e\"");
    let request = delete.request(&minio()).unwrap();
    assert_eq!(
        shape(&request),
        (
            "DELETE".into(),
            "http://127.0.0.1:9000/examplebucket/a%3Fb%23c?versionId=v1".into(),
            strings(&["if-match: \"e\""])
        )
    );
    let output = delete
        .response(response(
            204,
            &[("x-amz-delete-marker", "true"), ("x-amz-version-id", "dm1")],
            "",
        ))
        .unwrap();
    assert!(output.delete_marker);
    assert_eq!(output.version_id.as_deref(), Some("dm1"));
}

/// The decoded head of a GetObject response with these headers.
fn get_head(get: &GetObject, status: u16, headers: &[(&str, &str)]) -> ObjectHead {
    let (parts, _) = response(status, headers, "").into_parts();
    get.response_head(&parts).unwrap().head
}

const ETAG: &str = "\"9b2cf535f27731c974343645a3985328\"";

#[test]
fn a_broken_off_get_resumes_the_same_object_from_the_first_missing_byte() {
    let get = GetObject::new(bucket(), key("k"))
        .version_id("v1")
        .part_number(2)
        .if_none_match("\"other\"")
        .if_modified_since(rfc_date());
    let head = get_head(
        &get,
        206,
        &[
            ("content-length", "1000"),
            ("content-range", "bytes 5000-5999/20000"),
            ("etag", ETAG),
        ],
    );
    let resumable = get.resumable(&head).expect("strong ETag and a length");
    let rest = resumable.request_after(300).expect("bytes are missing");
    let request = rest.request(&aws()).unwrap();
    // Same version; the part number became the absolute range; only If-Match remains.
    assert_eq!(
        shape(&request),
        (
            "GET".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/k?versionId=v1".into(),
            strings(&[&format!("if-match: {ETAG}"), "range: bytes=5300-5999"])
        )
    );
    assert_eq!(
        resumable
            .request_after(999)
            .unwrap()
            .request(&aws())
            .unwrap()
            .request
            .headers()["range"],
        "bytes=5999-5999"
    );
    assert!(
        resumable.request_after(1000).is_none(),
        "nothing is missing"
    );

    let answer = |range: &str, length: &str, etag: &str| {
        get_head(
            &rest,
            206,
            &[
                ("content-length", length),
                ("content-range", range),
                ("etag", etag),
            ],
        )
    };
    resumable
        .check(300, &answer("bytes 5300-5999/20000", "700", ETAG))
        .expect("exactly the missing bytes of the same object");
    for (wrong, why) in [
        (
            answer("bytes 5300-5999/20000", "700", "\"changed\""),
            "another ETag",
        ),
        (
            answer("bytes 5000-5999/20000", "1000", ETAG),
            "the wrong start",
        ),
        (
            answer("bytes 5300-5998/20000", "699", ETAG),
            "the wrong end",
        ),
        (
            answer("bytes 5300-5999/20000", "701", ETAG),
            "a length that disagrees",
        ),
    ] {
        let error = resumable.check(300, &wrong).expect_err(why);
        assert!(
            matches!(error, Error::MalformedResponse(_)),
            "{why}: {error}"
        );
    }
    // A server that ignores Range answers 200 with the whole object.
    let whole = get_head(&rest, 200, &[("content-length", "20000"), ("etag", ETAG)]);
    assert!(resumable.check(300, &whole).is_err());
    // A received count past the end is an error, not an overflow.
    let past_end = answer("bytes 5300-5999/20000", "700", ETAG);
    assert!(resumable.check(u64::MAX, &past_end).is_err());
    assert!(resumable.request_after(u64::MAX).is_none());
}

#[test]
fn a_whole_object_response_resumes_from_its_offset_and_some_cannot_resume() {
    let get = GetObject::new(bucket(), key("k"));
    let whole = get_head(&get, 200, &[("content-length", "10"), ("etag", ETAG)]);
    let rest = get.resumable(&whole).unwrap().request_after(4).unwrap();
    let request = rest.request(&aws()).unwrap();
    assert_eq!(request.request.headers()["range"], "bytes=4-9");
    assert_eq!(request.request.headers()["if-match"], ETAG);

    for (headers, why) in [
        (vec![("content-length", "10")], "no ETag"),
        (
            vec![("content-length", "10"), ("etag", "W/\"weak\"")],
            "a weak ETag",
        ),
        (vec![("etag", ETAG)], "no length"),
        (
            vec![("content-length", "0"), ("etag", ETAG)],
            "an empty body",
        ),
    ] {
        let head = get_head(&get, 200, &headers);
        assert!(get.resumable(&head).is_none(), "{why}");
    }
    let inconsistent = get_head(
        &get,
        206,
        &[
            ("content-length", "5"),
            ("content-range", "bytes 0-9/10"),
            ("etag", ETAG),
        ],
    );
    assert!(
        get.resumable(&inconsistent).is_none(),
        "Content-Range disagrees"
    );
}

#[test]
fn attributes_from_a_head_keep_content_headers_and_metadata_only() {
    let mut head = ObjectHead::default();
    head.content_type = Some("image/png".into());
    head.cache_control = Some("max-age=60".into());
    head.content_disposition = Some("inline".into());
    head.content_encoding = Some("identity".into());
    head.content_language = Some("de".into());
    head.expires = Some("Sun, 06 Nov 1994 08:49:37 GMT".into());
    head.metadata.insert("camera".into(), "x100".into());
    head.storage_class = Some(StorageClass::Glacier);
    let put = PutObject::new(bucket(), key("copy.png"))
        .attributes(s3_ops::ObjectAttributes::from_head(&head));
    let (_, _, headers) = shape(&put.request(&aws()).unwrap());
    for expected in [
        "content-type: image/png",
        "cache-control: max-age=60",
        "content-disposition: inline",
        "content-encoding: identity",
        "content-language: de",
        "expires: Sun, 06 Nov 1994 08:49:37 GMT",
        "x-amz-meta-camera: x100",
    ] {
        assert!(
            headers.iter().any(|h| h == expected),
            "{expected} in {headers:?}"
        );
    }
    // A copy keeps the description of the object, not where or how it was stored.
    assert!(
        !headers.iter().any(|h| h.starts_with("x-amz-storage-class")),
        "{headers:?}"
    );
    // An unparsable Expires (S3 stores what it was given) is dropped, not sent garbled.
    head.expires = Some("tomorrow".into());
    let put = PutObject::new(bucket(), key("copy.png"))
        .attributes(s3_ops::ObjectAttributes::from_head(&head));
    let (_, _, headers) = shape(&put.request(&aws()).unwrap());
    assert!(
        !headers.iter().any(|h| h.starts_with("expires")),
        "{headers:?}"
    );
}

#[test]
fn a_transport_default_checksum_applies_only_where_none_was_chosen() {
    let crc32 = IntegrityDefaults::new(Some(ChecksumAlgorithm::Crc32), true);
    let checksum_headers = |put: PutObject| {
        let (_, _, headers) = shape(
            &put.body(Bytes::from_static(b"abc"))
                .with_integrity_defaults(crc32)
                .request(&aws())
                .unwrap(),
        );
        headers
            .into_iter()
            .filter(|h| h.starts_with("x-amz-checksum-") || h.starts_with("x-amz-sdk-checksum"))
            .collect::<Vec<_>>()
    };
    let put = || PutObject::new(bucket(), key("k"));
    // Unchosen: the default applies.
    assert_eq!(
        checksum_headers(put()),
        [
            "x-amz-checksum-crc32: NSRBwg==",
            "x-amz-sdk-checksum-algorithm: CRC32"
        ]
    );
    // Chosen: the default does not override it.
    let chosen = checksum_headers(put().checksum_algorithm(ChecksumAlgorithm::Sha256));
    assert_eq!(chosen.len(), 2, "{chosen:?}");
    assert!(chosen[0].starts_with("x-amz-checksum-sha256"), "{chosen:?}");
    // Refused: nothing is sent, default or not.
    assert!(checksum_headers(put().no_checksum()).is_empty());
    // s3-ops alone sends none, and a default of none adds none.
    let (_, _, alone) = shape(
        &put()
            .body(Bytes::from_static(b"abc"))
            .request(&aws())
            .unwrap(),
    );
    assert!(
        !alone.iter().any(|h| h.starts_with("x-amz-checksum-")),
        "{alone:?}"
    );
    let (_, _, off) = shape(
        &put()
            .body(Bytes::from_static(b"abc"))
            .with_integrity_defaults(IntegrityDefaults::new(None, false))
            .request(&aws())
            .unwrap(),
    );
    assert!(
        !off.iter().any(|h| h.starts_with("x-amz-checksum-")),
        "{off:?}"
    );
    // What a transport may compute ahead: only a checksum still to be computed over bytes
    // in memory; once given, it is sent as it is.
    let bytes = || put().body(Bytes::from_static(b"abc"));
    let to_compute = bytes().with_integrity_defaults(crc32);
    assert_eq!(
        to_compute.checksum_to_compute(),
        Some(ChecksumAlgorithm::Crc32)
    );
    assert_eq!(bytes().checksum_to_compute(), None);
    assert_eq!(
        bytes()
            .no_checksum()
            .with_integrity_defaults(crc32)
            .checksum_to_compute(),
        None
    );
    assert_eq!(
        put()
            .streaming_body(3)
            .with_integrity_defaults(crc32)
            .checksum_to_compute(),
        None
    );
    let given = to_compute.checksum(ChecksumAlgorithm::Crc32.checksum(b"abc"));
    assert_eq!(given.checksum_to_compute(), None);
    let (_, _, given) = shape(&given.request(&aws()).unwrap());
    assert!(
        given.contains(&"x-amz-checksum-crc32: NSRBwg==".to_owned()),
        "{given:?}"
    );
    // A streamed body gets the default as a trailer.
    let streamed = put()
        .streaming_body(3)
        .with_integrity_defaults(crc32)
        .request(&aws())
        .unwrap();
    assert_eq!(
        streamed.body,
        Body::External {
            content_length: 3,
            trailing_checksum: Some(ChecksumAlgorithm::Crc32)
        }
    );

    // A part keeps whatever its upload uses: no default.
    let part = UploadPart::new(bucket(), key("k"), "upload", 1)
        .body(Bytes::from_static(b"abc"))
        .with_integrity_defaults(crc32);
    let (_, _, headers) = shape(&part.request(&aws()).unwrap());
    assert!(
        !headers.iter().any(|h| h.starts_with("x-amz-checksum-")),
        "{headers:?}"
    );

    let mode = |get: GetObject| {
        let get = get.with_integrity_defaults(crc32);
        let asks = get.asks_for_checksums();
        let (_, _, headers) = shape(&get.request(&aws()).unwrap());
        assert_eq!(
            asks,
            headers.contains(&"x-amz-checksum-mode: ENABLED".to_owned())
        );
        asks
    };
    assert!(mode(GetObject::new(bucket(), key("k"))));
    assert!(!mode(
        GetObject::new(bucket(), key("k")).checksum_mode(false)
    ));
    let (_, _, alone) = shape(&GetObject::new(bucket(), key("k")).request(&aws()).unwrap());
    assert!(!alone.contains(&"x-amz-checksum-mode: ENABLED".to_owned()));
    let head = HeadObject::new(bucket(), key("k")).with_integrity_defaults(crc32);
    let (_, _, headers) = shape(&head.request(&aws()).unwrap());
    assert!(headers.contains(&"x-amz-checksum-mode: ENABLED".to_owned()));
}

#[test]
fn a_buffered_get_object_body_must_match_its_full_object_checksum() {
    let get = GetObject::new(bucket(), key("k"));
    // CRC-32 of "123456789" is 0xCBF43926.
    let headers = [
        ("content-length", "9"),
        ("x-amz-checksum-crc32", "y/Q5Jg=="),
    ];
    let output = get.response(response(200, &headers, "123456789")).unwrap();
    assert_eq!(&output.body[..], b"123456789");
    let error = get
        .response(response(200, &headers, "123456788"))
        .unwrap_err();
    assert!(
        matches!(error, Error::ChecksumMismatch { ref expected, .. } if expected == "y/Q5Jg=="),
        "{error:?}"
    );
    assert_eq!(error.retry_class(), RetryClass::Transient);
    // A range is not the object its checksum covers: not checked.
    let range = [
        ("content-length", "9"),
        ("content-range", "bytes 0-8/20"),
        ("x-amz-checksum-crc32", "y/Q5Jg=="),
    ];
    assert!(get.response(response(206, &range, "123456788")).is_ok());
}

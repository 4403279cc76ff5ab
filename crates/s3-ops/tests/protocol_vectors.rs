//! Request cases from smithy-rs's S3 protocol tests (testdata/smithy-rs/protocol-tests/
//! s3-tests.smithy, transcribed case by case) and the presigned-URL example from the S3
//! SigV4 documentation.

mod common;

use std::time::{Duration, UNIX_EPOCH};

use common::*;
use s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
use s3_ops::ops::delete_object::DeleteObject;
use s3_ops::ops::delete_object_tagging::DeleteObjectTagging;
use s3_ops::ops::get_bucket_location::GetBucketLocation;
use s3_ops::ops::get_object::{GetObject, ResponseHeaderOverrides};
use s3_ops::ops::head_object::HeadObject;
use s3_ops::ops::put_object::PutObject;
use s3_ops::ops::upload_part::UploadPart;
use s3_ops::presign::presign;
use s3_ops::{AddressingStyle, BucketName, ChecksumAlgorithm, Endpoint, ObjectKey, Operation};
use s3_sigv4::{Credentials, Signer, SigningTime};

fn test_bucket() -> BucketName {
    BucketName::new("test-bucket").unwrap()
}

fn path_and_query(request: &s3_ops::OperationRequest) -> String {
    request
        .request
        .uri()
        .path_and_query()
        .unwrap()
        .as_str()
        .to_owned()
}

#[test]
fn create_multipart_upload_uri_construction() {
    let request = CreateMultipartUpload::new(test_bucket(), key("object.txt"))
        .request(&aws())
        .unwrap();
    assert_eq!(request.request.method(), "POST");
    assert_eq!(path_and_query(&request), "/object.txt?uploads");
    assert_eq!(
        request.request.uri().host(),
        Some("test-bucket.s3.us-east-1.amazonaws.com")
    );
}

#[test]
fn dont_send_duplicate_content_type() {
    let request = PutObject::new(test_bucket(), key("test-key"))
        .content_type("text/html")
        .request(&aws())
        .unwrap();
    assert_eq!(path_and_query(&request), "/test-key");
    let values: Vec<_> = request
        .request
        .headers()
        .get_all("content-type")
        .iter()
        .collect();
    assert_eq!(values, ["text/html"]);
}

#[test]
fn head_object_uri_encoding() {
    let request = HeadObject::new(test_bucket(), key("<> `?🐱"))
        .request(&aws())
        .unwrap();
    assert_eq!(request.request.method(), "HEAD");
    assert_eq!(path_and_query(&request), "/%3C%3E%20%60%3F%F0%9F%90%B1");
}

#[test]
fn get_object_if_modified_since() {
    // 1626452453.123: the fraction is dropped, as HTTP dates have whole seconds.
    let time = UNIX_EPOCH + Duration::from_millis(1_626_452_453_123);
    let request = GetObject::new(test_bucket(), key("object.txt"))
        .if_modified_since(time)
        .request(&aws())
        .unwrap();
    assert_eq!(path_and_query(&request), "/object.txt");
    assert_eq!(
        request.request.headers()["if-modified-since"],
        "Fri, 16 Jul 2021 16:20:53 GMT"
    );
}

#[test]
fn escape_object_keys_in_uri_labels() {
    let endpoint = Endpoint::aws("us-west-2").unwrap();
    let bucket = BucketName::new("mybucket").unwrap();
    for (key_text, path) in [
        ("my key.txt", "/my%20key.txt?tagging"),
        ("foo/bar/my key.txt", "/foo/bar/my%20key.txt?tagging"),
    ] {
        let request = DeleteObjectTagging::new(bucket.clone(), key(key_text))
            .request(&endpoint)
            .unwrap();
        assert_eq!(request.request.method(), "DELETE");
        assert_eq!(path_and_query(&request), path);
        assert_eq!(
            request.request.uri().host(),
            Some("mybucket.s3.us-west-2.amazonaws.com")
        );
    }
}

#[test]
fn dot_segments_are_preserved() {
    let endpoint = Endpoint::aws("us-west-2")
        .unwrap()
        .with_addressing_style(AddressingStyle::VirtualHosted);
    let bucket = BucketName::new("mybucket").unwrap();
    for (key_text, path) in [
        ("../key.txt", "/../key.txt"),
        ("foo/../key.txt", "/foo/../key.txt"),
    ] {
        let request = GetObject::new(bucket.clone(), key(key_text))
            .request(&endpoint)
            .unwrap();
        assert_eq!(path_and_query(&request), path);
    }
}

#[test]
fn get_bucket_location_response() {
    let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<LocationConstraint xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">us-west-2</LocationConstraint>";
    let output = GetBucketLocation::new(test_bucket())
        .response(response(200, &[], body))
        .unwrap();
    assert_eq!(output.result.location_constraint, "us-west-2");
}

fn example_credentials() -> Credentials {
    Credentials::new(
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        None,
    )
}

/// `https://examplebucket.s3.amazonaws.com`, the host of the S3 SigV4 documentation.
fn example_endpoint() -> Endpoint {
    Endpoint::custom("https://s3.amazonaws.com", "us-east-1")
        .unwrap()
        .with_addressing_style(AddressingStyle::VirtualHosted)
}

fn example_time() -> SigningTime {
    SigningTime::from_parts(2013, 5, 24, 0, 0, 0).unwrap()
}

#[test]
fn presigned_get_matches_the_s3_documentation_example() {
    // "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)",
    // example: GET test.txt, 86400 s.
    let get = GetObject::new(bucket(), key("test.txt"));
    let presigned = presign(
        &get,
        &example_endpoint(),
        &Signer::new(),
        &example_credentials(),
        example_time(),
        Duration::from_secs(86_400),
    )
    .unwrap();
    assert_eq!(
        presigned.url(),
        "https://examplebucket.s3.amazonaws.com/test.txt\
         ?X-Amz-Algorithm=AWS4-HMAC-SHA256\
         &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request\
         &X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host\
         &X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
    );
    assert!(presigned.headers().is_empty());
    assert_eq!(presigned.method(), "GET");
    // The signature redacts itself.
    assert!(!format!("{presigned:?}").contains("aeeed9bbccd4"));
}

#[test]
fn presigned_put_with_content_type_and_checksum() {
    let checksum = ChecksumAlgorithm::Crc32.checksum(b"hello");
    let put = PutObject::new(bucket(), key("up load.txt"))
        .content_type("text/plain")
        .checksum(checksum);
    let presigned = presign(
        &put,
        &example_endpoint(),
        &Signer::new(),
        &example_credentials(),
        example_time(),
        Duration::from_secs(3600),
    )
    .unwrap();
    assert_eq!(presigned.method(), "PUT");
    let url = presigned.url();
    assert!(
        url.starts_with("https://examplebucket.s3.amazonaws.com/up%20load.txt?"),
        "{url}"
    );
    assert!(
        url.contains(
            "&X-Amz-SignedHeaders=content-type%3Bhost%3Bx-amz-checksum-crc32%3Bx-amz-sdk-checksum-algorithm&"
        ),
        "{url}"
    );
    // Content-Length is not pinned: the uploader's body decides it.
    assert!(presigned.headers().get("content-length").is_none());
    assert_eq!(presigned.headers()["content-type"], "text/plain");
    assert_eq!(presigned.headers()["x-amz-checksum-crc32"], "NhCmhg==");
    assert_eq!(presigned.headers()["x-amz-sdk-checksum-algorithm"], "CRC32");
}

#[test]
fn presigned_head_delete_upload_part_and_overrides() {
    let signer = Signer::new();
    let sign = |op: &dyn Fn() -> Result<s3_sigv4::PresignedRequest, s3_ops::Error>| op().unwrap();
    let endpoint = aws();
    let credentials = example_credentials();
    let expiry = Duration::from_secs(600);

    let head = HeadObject::new(bucket(), key("k"));
    let url = sign(&|| {
        presign(
            &head,
            &endpoint,
            &signer,
            &credentials,
            example_time(),
            expiry,
        )
    });
    assert_eq!(url.method(), "HEAD");

    let delete = DeleteObject::new(bucket(), key("k")).version_id("v1");
    let url = sign(&|| {
        presign(
            &delete,
            &endpoint,
            &signer,
            &credentials,
            example_time(),
            expiry,
        )
    });
    assert_eq!(url.method(), "DELETE");
    assert!(url.url().contains("/k?versionId=v1&"), "{}", url.url());

    let part = UploadPart::new(bucket(), ObjectKey::new("big").unwrap(), "uid", 7);
    let url = sign(&|| {
        presign(
            &part,
            &endpoint,
            &signer,
            &credentials,
            example_time(),
            expiry,
        )
    });
    assert_eq!(url.method(), "PUT");
    assert!(url.url().contains("partNumber=7"), "{}", url.url());
    assert!(url.url().contains("uploadId=uid"), "{}", url.url());

    let download =
        GetObject::new(bucket(), key("report.pdf")).response_headers(ResponseHeaderOverrides {
            content_disposition: Some("attachment; filename=\"r.pdf\"".into()),
            ..Default::default()
        });
    let url = sign(&|| {
        presign(
            &download,
            &endpoint,
            &signer,
            &credentials,
            example_time(),
            expiry,
        )
    });
    assert!(
        url.url()
            .contains("response-content-disposition=attachment%3B%20filename%3D%22r.pdf%22"),
        "{}",
        url.url()
    );

    // Expiry outside 1 s ..= 7 days is rejected by the signer.
    let too_long = presign(
        &head,
        &endpoint,
        &signer,
        &credentials,
        example_time(),
        Duration::from_secs(7 * 24 * 3600 + 1),
    );
    assert!(matches!(too_long, Err(s3_ops::Error::Presign(_))));
}

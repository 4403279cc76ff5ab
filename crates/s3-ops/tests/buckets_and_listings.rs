//! Wire shape and recorded-response decoding of bucket, listing, tagging and batch
//! operations.

mod common;

use bytes::Bytes;
use common::*;
use s3_ops::ops::create_bucket::CreateBucket;
use s3_ops::ops::delete_bucket::DeleteBucket;
use s3_ops::ops::delete_object_tagging::DeleteObjectTagging;
use s3_ops::ops::delete_objects::DeleteObjects;
use s3_ops::ops::get_bucket_location::GetBucketLocation;
use s3_ops::ops::get_object_tagging::GetObjectTagging;
use s3_ops::ops::head_bucket::HeadBucket;
use s3_ops::ops::list_buckets::ListBuckets;
use s3_ops::ops::list_object_versions::ListObjectVersions;
use s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_ops::ops::put_object_tagging::PutObjectTagging;
use s3_ops::{
    BucketName, CannedAcl, ContentMd5, Endpoint, Error, InvalidInput, ObjectKey, Operation,
    RetryClass,
};

/// The `name: value` header list of a request that carries an XML body with its MD5.
fn xml_headers(request: &s3_ops::OperationRequest, extra: &[&str]) -> Vec<String> {
    let body = body_text(request);
    let mut headers = vec![
        format!("content-length: {}", body.len()),
        format!("content-md5: {}", ContentMd5::of(body.as_bytes())),
        "content-type: application/xml".to_owned(),
    ];
    headers.extend(extra.iter().map(|s| (*s).to_owned()));
    headers.sort();
    headers
}

#[test]
fn list_objects_v2_wire_shape() {
    let list = ListObjectsV2::new(bucket())
        .prefix("photos/2024 /")
        .delimiter("/")
        .start_after("photos/a+b")
        .continuation_token("1SL9nYFa/+==")
        .max_keys(3)
        .fetch_owner(true);
    let request = list.request(&aws()).unwrap();
    assert_eq!(
        shape(&request),
        (
            "GET".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/?continuation-token=1SL9nYFa%2F%2B%3D%3D\
             &delimiter=%2F&encoding-type=url&fetch-owner=true&list-type=2&max-keys=3\
             &prefix=photos%2F2024%20%2F&start-after=photos%2Fa%2Bb"
                .into(),
            vec![]
        )
    );
    let plain = ListObjectsV2::new(bucket()).url_encoding(false);
    assert_eq!(
        plain.request(&minio()).unwrap().request.uri(),
        "http://127.0.0.1:9000/examplebucket?list-type=2"
    );
    for bad in [0, 1001] {
        assert!(matches!(
            ListObjectsV2::new(bucket()).max_keys(bad).request(&aws()),
            Err(Error::InvalidInput(InvalidInput::Parameter {
                name: "max-keys",
                ..
            }))
        ));
    }
}

#[test]
fn list_objects_v2_decodes_recorded_aws_response_and_pages() {
    // Recorded from real S3 (smithy-rs integration tests); headers from its .meta.json.
    let list =
        ListObjectsV2::new(BucketName::new("gdc-organoid-pancreatic-phs001611-2-open").unwrap())
            .max_keys(3);
    let output = list
        .response(response(
            200,
            &[
                ("x-amz-request-id", "H8T96AN5TTDT3SSQ"),
                ("x-amz-bucket-region", "us-east-1"),
                ("content-type", "application/xml"),
            ],
            testdata("smithy-rs/recorded/list-objects-v2.xml"),
        ))
        .unwrap();
    let result = &output.result;
    assert_eq!(result.name, "gdc-organoid-pancreatic-phs001611-2-open");
    assert_eq!(result.key_count, Some(3));
    assert!(result.is_truncated);
    assert_eq!(result.contents.len(), 3);
    assert_eq!(
        result.contents[0].key,
        "0431cddc-a418-4a79-a34d-6c041394e8e4/a6ddcc84-8e4d-4c68-885c-2d51168eec97.FPKM-UQ.txt.gz"
    );
    assert_eq!(result.contents[0].size, 386_910);
    assert_eq!(output.ids.request_id.as_deref(), Some("H8T96AN5TTDT3SSQ"));

    let next = list.next_page(&output).unwrap();
    let next_uri = next.request(&aws()).unwrap().request.uri().to_string();
    assert!(
        next_uri.contains("continuation-token=1SL9nYFaimMAwnR9dJnF4M5NMfm3Em6%2FClPUVLEH3GOSw5yjeI%2BwCBLj3THB8DuJSUFhKNy5cGK5QBb%2FSvE%2BMKMZurarr0ZhOhQae2SQ8B4QQPkqQHKp9MeJXsYe4UH8%2FokpqJUZNS2AQt7gXrz7mFdIJXPuSckj02e06tvxZAOkHu7ER4xTJ%2BodI774K2xB%2BpcD3H0pqTUt%2BTebzB83BzA%3D%3D&"),
        "{next_uri}"
    );
}

#[test]
fn list_objects_v2_decodes_url_encoded_keys() {
    let body = "<ListBucketResult><Name>b</Name><Prefix>a%20b%2F</Prefix><KeyCount>1</KeyCount>\
                <MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated><EncodingType>url</EncodingType>\
                <Contents><Key>a%20b%2F%01ctl+plus</Key><LastModified>2020-01-27T20:56:51.000Z</LastModified>\
                <ETag>&quot;x&quot;</ETag><Size>1</Size></Contents></ListBucketResult>";
    let output = ListObjectsV2::new(bucket())
        .response(response(200, &[], body))
        .unwrap();
    assert_eq!(output.result.contents[0].key, "a b/\u{1}ctl plus");
    assert_eq!(output.result.prefix.as_deref(), Some("a b/"));
    assert!(ListObjectsV2::new(bucket()).next_page(&output).is_none());
}

#[test]
fn listing_errors_are_typed() {
    // botocore's recorded AccessDenied for ListObjects.
    let error = ListObjectsV2::new(bucket())
        .response(response(
            403,
            &[],
            testdata("botocore/errors/s3-list-objects.xml"),
        ))
        .unwrap_err();
    let service = error.service_error().unwrap();
    assert_eq!(service.code, "AccessDenied");
    assert_eq!(service.message.as_deref(), Some("Access Denied"));
    assert_eq!(service.request_id.as_deref(), Some("9C7D5181867045BB"));
    assert_eq!(error.retry_class(), RetryClass::NotRetryable);

    // A truncated success body is a transient failure (the connection broke).
    let truncated = ListObjectsV2::new(bucket())
        .response(response(
            200,
            &[],
            "<ListBucketResult><Name>b</Name><IsTruncated>",
        ))
        .unwrap_err();
    assert!(
        matches!(truncated, Error::MalformedResponse(_)),
        "{truncated:?}"
    );
    assert_eq!(truncated.retry_class(), RetryClass::Transient);

    let wrong_document = ListObjectsV2::new(bucket())
        .response(response(200, &[], "<Foo/>"))
        .unwrap_err();
    assert_eq!(wrong_document.retry_class(), RetryClass::NotRetryable);
}

#[test]
fn list_object_versions_wire_shape_decoding_and_paging() {
    let list = ListObjectVersions::new(bucket())
        .prefix("my")
        .key_marker("k")
        .version_id_marker("v/1")
        .max_keys(5);
    assert_eq!(
        list.request(&aws()).unwrap().request.uri(),
        "https://examplebucket.s3.us-east-1.amazonaws.com/?encoding-type=url&key-marker=k\
         &max-keys=5&prefix=my&version-id-marker=v%2F1&versions"
    );
    let output = list
        .response(response(
            200,
            &[],
            testdata("botocore/responses/s3-list-object-versions.xml"),
        ))
        .unwrap();
    let entries = &output.result.entries;
    // botocore's expected parse: 3 versions and 2 delete markers, in document order.
    assert_eq!(entries.len(), 5);
    assert_eq!(entries[0].key(), "my-image.jpg");
    assert_eq!(entries[0].version_id(), "3/L4kqtJl40Nr8X8gdRQBpUMLUo");
    assert!(matches!(entries[1], s3_xml::VersionEntry::DeleteMarker(_)));
    assert_eq!(entries[1].key(), "my-second-image.jpg");
    assert_eq!(
        entries[1].version_id(),
        "03jpff543dhffds434rfdsFDN943fdsFkdmqnh892"
    );
    assert!(list.next_page(&output).is_none());

    let truncated = "<ListVersionsResult><Name>b</Name><IsTruncated>true</IsTruncated>\
                     <NextKeyMarker>next key</NextKeyMarker><NextVersionIdMarker>nv</NextVersionIdMarker>\
                     </ListVersionsResult>";
    let output = list.response(response(200, &[], truncated)).unwrap();
    let next = list.next_page(&output).unwrap();
    let uri = next.request(&aws()).unwrap().request.uri().to_string();
    assert!(uri.contains("key-marker=next%20key&"), "{uri}");
    assert!(uri.contains("version-id-marker=nv"), "{uri}");
}

#[test]
fn list_buckets_wire_shape_and_decoding() {
    let list = ListBuckets::new().prefix("ex").max_buckets(10);
    assert_eq!(
        shape(&list.request(&aws()).unwrap()),
        (
            "GET".into(),
            "https://s3.us-east-1.amazonaws.com/?max-buckets=10&prefix=ex".into(),
            vec![]
        )
    );
    assert_eq!(
        ListBuckets::new().request(&minio()).unwrap().request.uri(),
        "http://127.0.0.1:9000/"
    );
    let output = ListBuckets::new()
        .response(response(
            200,
            &[],
            testdata("botocore/responses/s3-list-buckets.xml"),
        ))
        .unwrap();
    let names: Vec<&str> = output
        .result
        .buckets
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert!(!names.is_empty());
    assert!(ListBuckets::new().max_buckets(0).request(&aws()).is_err());
}

#[test]
fn get_bucket_location_wire_shape_and_legacy_eu() {
    let get = GetBucketLocation::new(bucket());
    assert_eq!(
        shape(&get.request(&aws()).unwrap()),
        (
            "GET".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/?location".into(),
            vec![]
        )
    );
    let output = get
        .response(response(
            200,
            &[],
            testdata("botocore/responses/s3-get-bucket-location.xml"),
        ))
        .unwrap();
    assert_eq!(output.result.location_constraint, "EU");
    assert_eq!(output.result.region(), "eu-west-1");
}

#[test]
fn create_bucket_location_rules() {
    // us-east-1: no body at all.
    let request = CreateBucket::new(bucket()).request(&aws()).unwrap();
    assert_eq!(
        shape(&request),
        (
            "PUT".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/".into(),
            strings(&["content-length: 0"])
        )
    );
    // Other AWS regions: the endpoint's region becomes the location constraint.
    let eu = Endpoint::aws("eu-central-1").unwrap();
    let request = CreateBucket::new(bucket())
        .acl(CannedAcl::Private)
        .object_ownership("BucketOwnerEnforced")
        .request(&eu)
        .unwrap();
    let body = body_text(&request);
    assert!(
        body.contains("<LocationConstraint>eu-central-1</LocationConstraint>"),
        "{body}"
    );
    assert!(body.contains("<CreateBucketConfiguration"), "{body}");
    assert_eq!(
        shape(&request).2,
        xml_headers(
            &request,
            &[
                "x-amz-acl: private",
                "x-amz-object-ownership: BucketOwnerEnforced"
            ]
        )
    );
    // Custom endpoints: only an explicit location.
    let request = CreateBucket::new(bucket()).request(&minio()).unwrap();
    assert_eq!(request.body, s3_ops::Body::Empty);

    let error = CreateBucket::new(bucket())
        .response(response(
            409,
            &[],
            testdata("botocore/errors/s3-create-bucket.xml"),
        ))
        .unwrap_err();
    let service = error.service_error().unwrap();
    assert_eq!(service.code, "BucketAlreadyOwnedByYou");
    assert_eq!(service.extra("BucketName"), Some("garnaat-pdx"));
    assert_eq!(service.request_id.as_deref(), Some("96380E1CB938DDF7"));
    assert_eq!(
        service.host_id.as_deref(),
        Some("uCyKZYcyp+7qYdvAcvwQueBs6VdfDURJZTrhTjc3gTfsqaWjC2n532mPb0P+ZQ4Q")
    );
}

#[test]
fn head_and_delete_bucket() {
    let head = HeadBucket::new(bucket());
    assert_eq!(
        shape(&head.request(&minio()).unwrap()),
        (
            "HEAD".into(),
            "http://127.0.0.1:9000/examplebucket".into(),
            vec![]
        )
    );
    let output = head
        .response(response(200, &[("x-amz-bucket-region", "eu-west-2")], ""))
        .unwrap();
    assert_eq!(output.region.as_deref(), Some("eu-west-2"));
    let missing = head.response(response(404, &[], "")).unwrap_err();
    assert!(missing.service_error().unwrap().is_not_found());

    let delete = DeleteBucket::new(bucket());
    assert_eq!(
        shape(&delete.request(&aws()).unwrap()),
        (
            "DELETE".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/".into(),
            vec![]
        )
    );
    let ids = delete
        .response(response(204, &[("x-amz-request-id", "R")], ""))
        .unwrap();
    assert_eq!(ids.request_id.as_deref(), Some("R"));
    let not_empty = "<Error><Code>BucketNotEmpty</Code><Message>The bucket you tried to delete is not empty</Message></Error>";
    let error = delete.response(response(409, &[], not_empty)).unwrap_err();
    assert_eq!(error.service_error().unwrap().code, "BucketNotEmpty");
}

#[test]
fn object_tagging_round_trip() {
    let put = PutObjectTagging::new(
        bucket(),
        key("k"),
        [
            ("project".to_owned(), "a&b".to_owned()),
            ("empty".to_owned(), String::new()),
        ],
    )
    .version_id("v1");
    let request = put.request(&aws()).unwrap();
    let body = body_text(&request);
    assert_eq!(
        request.request.uri(),
        "https://examplebucket.s3.us-east-1.amazonaws.com/k?tagging&versionId=v1"
    );
    assert_eq!(request.request.method(), "PUT");
    assert_eq!(shape(&request).2, xml_headers(&request, &[]));
    // The body decodes back to the same tags.
    let decoded = s3_xml::decode_tagging(body.as_bytes(), &s3_xml::Limits::default()).unwrap();
    let tags: Vec<(&str, &str)> = decoded
        .tags
        .iter()
        .map(|t| (t.key.as_str(), t.value.as_str()))
        .collect();
    assert_eq!(tags, [("project", "a&b"), ("empty", "")]);

    let get = GetObjectTagging::new(bucket(), key("k"));
    assert_eq!(
        shape(&get.request(&aws()).unwrap()),
        (
            "GET".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/k?tagging".into(),
            vec![]
        )
    );
    let output = get
        .response(response(
            200,
            &[("x-amz-version-id", "v3")],
            Bytes::from(body),
        ))
        .unwrap();
    assert_eq!(output.tagging.tags.len(), 2);
    assert_eq!(output.version_id.as_deref(), Some("v3"));

    let delete = DeleteObjectTagging::new(bucket(), key("k"));
    assert_eq!(
        shape(&delete.request(&aws()).unwrap()),
        (
            "DELETE".into(),
            "https://examplebucket.s3.us-east-1.amazonaws.com/k?tagging".into(),
            vec![]
        )
    );
    let output = delete
        .response(response(204, &[("x-amz-version-id", "v4")], ""))
        .unwrap();
    assert_eq!(output.version_id.as_deref(), Some("v4"));
}

#[test]
fn tag_limits_are_enforced() {
    let eleven = (0..11).map(|i| (format!("k{i}"), "v".to_owned()));
    assert!(matches!(
        PutObjectTagging::new(bucket(), key("k"), eleven).request(&aws()),
        Err(Error::InvalidInput(InvalidInput::Parameter {
            name: "Tagging",
            ..
        }))
    ));
    let long_key = [("k".repeat(129), String::new())];
    assert!(
        PutObjectTagging::new(bucket(), key("k"), long_key)
            .request(&aws())
            .is_err()
    );
    let duplicate = [
        ("a".to_owned(), "1".to_owned()),
        ("a".to_owned(), "2".to_owned()),
    ];
    assert!(
        PutObjectTagging::new(bucket(), key("k"), duplicate)
            .request(&aws())
            .is_err()
    );
    let mut put = s3_ops::ops::put_object::PutObject::new(bucket(), key("k"));
    for i in 0..11 {
        put = put.tag(format!("k{i}"), "v");
    }
    assert!(put.request(&aws()).is_err());
}

#[test]
fn delete_objects_wire_shape_and_integrity_header() {
    let delete = DeleteObjects::new(bucket(), [key("a b"), key("c&d")])
        .version(key("e"), "v1")
        .quiet(true);
    let request = delete.request(&aws()).unwrap();
    assert_eq!(request.request.method(), "POST");
    assert_eq!(
        request.request.uri(),
        "https://examplebucket.s3.us-east-1.amazonaws.com/?delete"
    );
    assert_eq!(shape(&request).2, xml_headers(&request, &[]));
    let body = body_text(&request);
    let decoded =
        s3_xml::decode_delete_request(body.as_bytes(), &s3_xml::Limits::default()).unwrap();
    assert!(decoded.quiet);
    let keys: Vec<(&str, Option<&str>)> = decoded
        .objects
        .iter()
        .map(|o| (o.key.as_str(), o.version_id.as_deref()))
        .collect();
    assert_eq!(keys, [("a b", None), ("c&d", None), ("e", Some("v1"))]);
}

#[test]
fn delete_objects_batch_limits() {
    let none: [ObjectKey; 0] = [];
    assert_eq!(
        DeleteObjects::new(bucket(), none)
            .request(&aws())
            .unwrap_err(),
        Error::InvalidInput(InvalidInput::DeleteBatchSize { count: 0 })
    );
    let keys = (0..1001).map(|i| key(&format!("k{i}")));
    assert_eq!(
        DeleteObjects::new(bucket(), keys)
            .request(&aws())
            .unwrap_err(),
        Error::InvalidInput(InvalidInput::DeleteBatchSize { count: 1001 })
    );
    let keys = (0..1000).map(|i| key(&format!("k{i}")));
    assert!(DeleteObjects::new(bucket(), keys).request(&aws()).is_ok());
    // A key XML 1.0 cannot carry is rejected before sending.
    let control = DeleteObjects::new(bucket(), [key("bell\u{7}")]);
    assert!(matches!(
        control.request(&aws()),
        Err(Error::InvalidInput(InvalidInput::Parameter { .. }))
    ));
}

#[test]
fn delete_objects_decodes_partial_failures() {
    let output = DeleteObjects::new(bucket(), [key("object1"), key("object2")])
        .response(response(
            200,
            &[],
            testdata("aws-sdk-java-v2/multiObjectDelete/errorResponse.xml"),
        ))
        .unwrap();
    assert_eq!(output.result.deleted.len(), 1);
    assert_eq!(output.result.deleted[0].key, "object1");
    assert_eq!(output.result.deleted[0].version_id.as_deref(), Some("123"));
    assert_eq!(output.result.errors.len(), 1);
    assert_eq!(output.result.errors[0].key.as_deref(), Some("object2"));
    assert_eq!(
        output.result.errors[0].code.as_deref(),
        Some("AccessDenied")
    );
}

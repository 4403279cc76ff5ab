//! Every way AWS addresses a request, as data: access point ARNs (single-region and Object
//! Lambda) and aliases, S3 Express One Zone directory buckets, FIPS, dual-stack and Transfer
//! Acceleration hosts, and the signing scope each one needs; the combinations AWS does not
//! offer are refused before anything is sent. Host formats are those of the AWS SDKs'
//! S3 endpoint rules.

mod common;

use bytes::Bytes;
use common::key;
use s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_ops::{
    AddressingStyle, BucketName, CompleteMultipartUpload, CopyObject, CopySource, CreateBucket,
    CreateSession, DeleteObjects, Endpoint, Error, GetObject, HeadBucket, InvalidInput,
    ListDirectoryBuckets, Operation, OperationRequest, PutObject, RawRequest, RequestExtras,
};

const AP: &str = "arn:aws:s3:us-west-2:123456789012:accesspoint/my-ap";
const OLAP: &str = "arn:aws:s3-object-lambda:us-west-2:123456789012:accesspoint/my-olap";
const ALIAS: &str = "my-ap-hrzrlukc5m36ft7okagglf3gmwluquse1b-s3alias";
const DIRECTORY: &str = "logs--usw2-az1--x-s3";
const EXPRESS_AP: &str = "reports--usw2-az1--xa-s3";

fn bucket(name: &str) -> BucketName {
    BucketName::new(name).unwrap()
}

fn aws(region: &str) -> Endpoint {
    Endpoint::aws(region).unwrap()
}

/// (URI, signing region, service, express session bucket) of `op` through `endpoint`.
fn addressed(op: &impl Operation, endpoint: &Endpoint) -> (String, String, String, Option<String>) {
    let request = op.request(endpoint).unwrap();
    let signing = request.signing();
    (
        request.request.uri().to_string(),
        signing.region(endpoint).to_owned(),
        signing.service().to_owned(),
        signing.express_session().map(str::to_owned),
    )
}

fn get(name: &str) -> GetObject {
    GetObject::new(bucket(name), key("a b.txt"))
}

fn endpoint_refusal(result: Result<OperationRequest, Error>) -> String {
    match result {
        Err(Error::InvalidInput(InvalidInput::Endpoint { reason })) => reason,
        Err(Error::InvalidInput(InvalidInput::BucketName { reason, .. })) => reason.to_owned(),
        Err(Error::InvalidInput(InvalidInput::Parameter { reason, .. })) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

// Hosts, signing scopes and refusals of every addressing form are AWS's official cases
// (tests/endpoint_rules.rs); what follows is what the cases do not say: how operations other
// than GetObject address and sign, and the choices s3-ops makes where the rules are silent.

#[test]
fn operations_address_access_points_as_get_object_does() {
    let (uri, region, service, _) = addressed(
        &ListObjectsV2::new(bucket(AP)).prefix("p/"),
        &aws("us-east-1"),
    );
    assert!(
        uri.starts_with("https://my-ap-123456789012.s3-accesspoint.us-west-2.amazonaws.com/?"),
        "{uri}"
    );
    assert_eq!((region.as_str(), service.as_str()), ("us-west-2", "s3"));
    let copy = CopyObject::new(
        CopySource::new(bucket(AP), key("src/a b")),
        bucket("dest"),
        key("k"),
    );
    let request = copy.request(&aws("us-west-2")).unwrap();
    assert_eq!(
        request.request.headers()["x-amz-copy-source"],
        format!("{AP}/object/src/a%20b")
    );
    let source = CopySource::new(bucket(OLAP), key("k"));
    let refusal = endpoint_refusal(
        CopyObject::new(source, bucket("dest"), key("k")).request(&aws("us-west-2")),
    );
    assert!(refusal.contains("cannot be a copy source"), "{refusal}");
}

#[test]
fn access_points_of_every_kind_are_no_buckets_to_create() {
    for name in [
        AP,
        OLAP,
        ALIAS,
        EXPRESS_AP,
        "arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap",
        "test-accessp-o0b1d075431d83bebde8xz5w8ijx1qzlbp3i3kuse10--op-s3",
    ] {
        let refusal = endpoint_refusal(CreateBucket::new(bucket(name)).request(&aws("us-west-2")));
        assert!(
            refusal.contains("access points are not supported"),
            "{name}: {refusal}"
        );
    }
    assert!(
        CreateBucket::new(bucket(DIRECTORY))
            .request(&aws("us-west-2"))
            .is_ok()
    );
}

#[test]
fn s3_express_sessions_and_what_they_sign() {
    let west = aws("us-west-2");
    for (name, zonal) in [
        (
            DIRECTORY,
            format!("https://{DIRECTORY}.s3express-usw2-az1.us-west-2.amazonaws.com"),
        ),
        (
            EXPRESS_AP,
            format!("https://{EXPRESS_AP}.s3express-usw2-az1.us-west-2.amazonaws.com"),
        ),
    ] {
        // One session per bucket or access point, created at its own zonal host with the
        // caller's credentials.
        let request = CreateSession::new(bucket(name)).request(&west).unwrap();
        assert_eq!(
            request.request.uri().to_string(),
            format!("{zonal}/?session")
        );
        assert_eq!(
            request.request.headers()["x-amz-create-session-mode"],
            "ReadWrite"
        );
        assert_eq!(request.signing().express_session(), None);
        assert_eq!(request.signing().service(), "s3express");
        assert_eq!(addressed(&get(name), &west).3.as_deref(), Some(name));
        // HeadBucket and CopyObject are authorized by IAM.
        assert_eq!(addressed(&HeadBucket::new(bucket(name)), &west).3, None);
        let copy = CopyObject::new(
            CopySource::new(bucket(name), key("a")),
            bucket(name),
            key("b"),
        );
        assert_eq!(addressed(&copy, &west).3, None);
        // Session auth off: the caller's credentials, still for s3express.
        let (_, _, service, session) = addressed(
            &get(name),
            &aws("us-west-2").with_s3_express_session_auth(false),
        );
        assert_eq!((service.as_str(), session), ("s3express", None));
    }
    let (uri, _, service, _) = addressed(
        &ListDirectoryBuckets::new().max_directory_buckets(10),
        &west,
    );
    assert_eq!(
        uri,
        "https://s3express-control.us-west-2.amazonaws.com/?max-directory-buckets=10"
    );
    assert_eq!(service, "s3express");
    let refusal = endpoint_refusal(CreateSession::new(bucket("plain")).request(&west));
    assert!(refusal.contains("directory buckets"), "{refusal}");
}

#[test]
fn s3_express_buckets_and_access_points_get_what_s3_express_accepts() {
    let west = aws("us-west-2");
    for name in [DIRECTORY, EXPRESS_AP] {
        // Listings are by directory.
        for (list, fragment) in [
            (
                ListObjectsV2::new(bucket(name)).prefix("logs"),
                "must end in '/'",
            ),
            (ListObjectsV2::new(bucket(name)).delimiter(","), "only '/'"),
        ] {
            let refusal = endpoint_refusal(list.request(&west));
            assert!(refusal.contains(fragment), "{name}: {refusal}");
        }
        assert!(
            ListObjectsV2::new(bucket(name))
                .prefix("logs/")
                .delimiter("/")
                .request(&west)
                .is_ok()
        );
        // No Content-MD5: DeleteObjects carries a CRC32 instead, PutObject refuses it.
        let delete = DeleteObjects::new(bucket(name), vec![key("a")])
            .request(&west)
            .unwrap();
        let headers = delete.request.headers();
        assert!(!headers.contains_key("content-md5"));
        assert_eq!(headers["x-amz-sdk-checksum-algorithm"], "CRC32");
        assert!(headers.contains_key("x-amz-checksum-crc32"));
        let put = PutObject::new(bucket(name), key("k"))
            .body(Bytes::from_static(b"x"))
            .content_md5(true);
        let refusal = endpoint_refusal(put.request(&west));
        assert!(refusal.contains("refuse Content-MD5"), "{refusal}");
        // CompleteMultipartUpload: its `x-amz-checksum-*` is the object's checksum, so the
        // document gets none of its own (it had its CRC32 under the same name, a second
        // `x-amz-checksum-crc32` beside the object's); no MD5 either.
        let parts = vec![s3_ops::CompletedPart::new(
            1,
            s3_ops::ETag::parse("\"etag\"").unwrap(),
        )];
        let object_crc = s3_ops::ChecksumAlgorithm::Crc32.checksum(b"the object");
        for full_object in [Some(object_crc.clone()), None] {
            let mut complete =
                CompleteMultipartUpload::new(bucket(name), key("k"), "upload", parts.clone());
            if let Some(checksum) = &full_object {
                complete = complete.full_object_checksum(checksum.clone());
            }
            let complete = complete.request(&west).unwrap();
            let headers = complete.request.headers();
            assert!(!headers.contains_key("content-md5"), "{name}");
            let values: Vec<_> = headers.get_all("x-amz-checksum-crc32").iter().collect();
            match &full_object {
                Some(checksum) => assert_eq!(values, [checksum.to_base64().as_str()], "{name}"),
                None => assert!(values.is_empty(), "{name}: {values:?}"),
            }
        }
    }
    // A general-purpose bucket keeps its MD5.
    let delete = DeleteObjects::new(bucket("plain"), vec![key("a")])
        .request(&west)
        .unwrap();
    assert!(delete.request.headers().contains_key("content-md5"));
}

/// Where the rules send a request to AWS's own host although the client was given an
/// endpoint, s3-ops refuses instead: no request goes around the configured endpoint.
#[test]
fn nothing_is_routed_around_a_custom_endpoint() {
    let custom = Endpoint::custom("https://s3.internal.example.com", "us-west-2")
        .unwrap()
        .with_addressing_style(AddressingStyle::VirtualHosted);
    for name in [
        "arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap",
        "test-accessp-o0b1d075431d83bebde8xz5w8ijx1qzlbp3i3kuse10--op-s3",
    ] {
        let refusal = endpoint_refusal(get(name).request(&custom));
        assert!(
            refusal.contains("not the custom endpoint"),
            "{name}: {refusal}"
        );
    }
}

#[test]
fn bucket_level_operations_keep_the_regional_host_under_acceleration() {
    let accelerated = aws("eu-west-1").with_accelerate(true);
    assert_eq!(
        addressed(&get("photos"), &accelerated).0,
        "https://photos.s3-accelerate.amazonaws.com/a%20b.txt"
    );
    assert_eq!(
        addressed(&CreateBucket::new(bucket("photos")), &accelerated).0,
        "https://photos.s3.eu-west-1.amazonaws.com/"
    );
    // A name its hosts cannot take is no reason to refuse CreateBucket.
    assert_eq!(
        addressed(&CreateBucket::new(bucket("my.photos")), &accelerated).0,
        "https://s3.eu-west-1.amazonaws.com/my.photos"
    );
}

#[test]
fn a_custom_endpoint_keeps_names_in_the_path_until_told_otherwise() {
    // On an S3-compatible store an access point alias is only a name: path-style.
    let (uri, ..) = addressed(&get(ALIAS), &common::minio());
    assert_eq!(uri, format!("http://127.0.0.1:9000/{ALIAS}/a%20b.txt"));
    let named = Endpoint::custom("http://minio.local:9000", "us-east-1").unwrap();
    assert_eq!(
        addressed(&get("photos"), &named).0,
        "http://minio.local:9000/photos/a%20b.txt"
    );
    assert_eq!(
        addressed(
            &get("photos"),
            &named.with_addressing_style(AddressingStyle::VirtualHosted)
        )
        .0,
        "http://photos.minio.local:9000/a%20b.txt"
    );
}

#[test]
fn extras_add_headers_and_parameters_in_one_validated_place() {
    let endpoint = aws("us-east-1");
    let put = PutObject::new(bucket("photos"), key("k"))
        .body(Bytes::from_static(b"data"))
        .content_type("text/plain");
    let extras = RequestExtras::new()
        .request_payer(true)
        .header("x-amz-expected-bucket-owner", "123456789012")
        .replace_header("content-type", "image/png")
        .query("x-id", Some("PutObject"))
        .query("a b", None);
    let mut request = put.request(&endpoint).unwrap();
    extras.apply(&mut request).unwrap();
    let headers = request.request.headers();
    assert_eq!(headers["x-amz-request-payer"], "requester");
    assert_eq!(headers["x-amz-expected-bucket-owner"], "123456789012");
    assert_eq!(headers["content-type"], "image/png");
    assert_eq!(headers.get_all("content-type").iter().count(), 1);
    // Sorted as SigV4 canonicalizes the query, so what is sent is what is signed.
    assert_eq!(request.request.uri().query(), Some("a%20b&x-id=PutObject"));

    // Headers the library owns are refused, whatever the mode.
    for name in [
        "host",
        "Authorization",
        "x-amz-date",
        "x-amz-content-sha256",
        "x-amz-security-token",
        "x-amz-s3session-token",
        "content-length",
        "x-amz-checksum-crc32",
        "x-amz-sdk-checksum-algorithm",
        "content-md5",
        "x-amz-trailer",
    ] {
        for extras in [
            RequestExtras::new().header(name, "v"),
            RequestExtras::new().replace_header(name, "v"),
        ] {
            let error = extras
                .apply(&mut put.request(&endpoint).unwrap())
                .unwrap_err();
            assert!(
                error.to_string().contains("cannot be set by the caller"),
                "{name}: {error}"
            );
        }
    }
    // What the operation set needs an explicit replace.
    let error = RequestExtras::new()
        .header("content-type", "image/png")
        .apply(&mut put.request(&endpoint).unwrap())
        .unwrap_err();
    assert!(error.to_string().contains("use replace_header"), "{error}");
    let list = ListObjectsV2::new(bucket("photos")).prefix("a/");
    let error = RequestExtras::new()
        .query("prefix", Some("b/"))
        .apply(&mut list.request(&endpoint).unwrap())
        .unwrap_err();
    assert!(error.to_string().contains("use replace_query"), "{error}");
    for bad in [
        RequestExtras::new().query("X-Amz-Signature", Some("0")),
        RequestExtras::new().query("", None),
        RequestExtras::new().header("bad header", "v"),
        RequestExtras::new().header("x-ok", "line\r\nbreak"),
    ] {
        assert!(
            bad.apply(&mut put.request(&endpoint).unwrap()).is_err(),
            "{bad:?}"
        );
    }
    // Merged: the view's values win, requester pays from either.
    let defaults = RequestExtras::new()
        .request_payer(true)
        .header("x-amz-expected-bucket-owner", "1");
    let view = RequestExtras::new().header("x-amz-expected-bucket-owner", "2");
    let merged = defaults.merged(&view);
    let mut request = get("photos").request(&endpoint).unwrap();
    merged.apply(&mut request).unwrap();
    assert_eq!(
        request.request.headers()["x-amz-expected-bucket-owner"],
        "2"
    );
    assert_eq!(
        request.request.headers()["x-amz-request-payer"],
        "requester"
    );
    assert!(RequestExtras::new().is_empty() && !merged.is_empty());
}

#[test]
fn raw_requests_are_addressed_like_any_operation_and_answer_raw() {
    let versioning = RawRequest::new("PutBucketVersioning", http::Method::PUT)
        .bucket(bucket(AP))
        .query("versioning", None)
        .body(Bytes::from_static(b"<VersioningConfiguration/>"))
        .checksum_algorithm(s3_ops::ChecksumAlgorithm::Crc32)
        .idempotent(true);
    let request = versioning.request(&aws("us-east-1")).unwrap();
    assert_eq!(
        request.request.uri().to_string(),
        "https://my-ap-123456789012.s3-accesspoint.us-west-2.amazonaws.com/?versioning"
    );
    assert_eq!(request.signing().region(&aws("us-east-1")), "us-west-2");
    assert!(
        request
            .request
            .headers()
            .contains_key("x-amz-checksum-crc32")
    );
    assert!(versioning.is_idempotent());
    assert_eq!(versioning.name(), "PutBucketVersioning");
    let answer = versioning
        .response(common::response(200, &[("x-amz-version-id", "v1")], "ok"))
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["x-amz-version-id"], "v1");
    assert_eq!(answer.body().as_ref(), b"ok");
    let error = versioning
        .response(common::response(
            403,
            &[("x-amz-request-id", "R1")],
            "<Error><Code>AccessDenied</Code><Message>no</Message></Error>",
        ))
        .unwrap_err();
    assert_eq!(error.service_error().unwrap().code, "AccessDenied");
    // The escape hatch takes no header the library owns either.
    let sneaky = RawRequest::new("X", http::Method::GET).header("authorization", "AWS4 x");
    assert!(sneaky.request(&aws("us-east-1")).is_err());
    assert!(!RawRequest::new("X", http::Method::GET).is_idempotent());
}

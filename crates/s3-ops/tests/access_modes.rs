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
    AddressingStyle, BucketName, CopyObject, CopySource, CreateBucket, CreateSession,
    DeleteObjects, Endpoint, Error, GetObject, HeadBucket, InvalidInput, ListBuckets,
    ListDirectoryBuckets, Operation, OperationRequest, PutObject, RawRequest, RequestExtras,
};

const AP: &str = "arn:aws:s3:us-west-2:123456789012:accesspoint/my-ap";
const OLAP: &str = "arn:aws:s3-object-lambda:us-west-2:123456789012:accesspoint/my-olap";
const ALIAS: &str = "my-ap-hrzrlukc5m36ft7okagglf3gmwluquse1b-s3alias";
const DIRECTORY: &str = "logs--usw2-az1--x-s3";

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

#[test]
fn access_point_arns_go_to_their_hosts_signed_for_their_region() {
    let cases = [
        (
            aws("us-east-1"),
            "my-ap-123456789012.s3-accesspoint.us-west-2.amazonaws.com",
        ),
        (
            aws("us-west-2"),
            "my-ap-123456789012.s3-accesspoint.us-west-2.amazonaws.com",
        ),
        (
            aws("us-west-2").with_fips(true),
            "my-ap-123456789012.s3-accesspoint-fips.us-west-2.amazonaws.com",
        ),
        (
            aws("us-west-2").with_dual_stack(true),
            "my-ap-123456789012.s3-accesspoint.dualstack.us-west-2.amazonaws.com",
        ),
        (
            aws("us-west-2").with_fips(true).with_dual_stack(true),
            "my-ap-123456789012.s3-accesspoint-fips.dualstack.us-west-2.amazonaws.com",
        ),
        (
            Endpoint::custom(
                "https://accesspoint.vpce-1a2b.s3.us-west-2.vpce.amazonaws.com",
                "us-west-2",
            )
            .unwrap(),
            "my-ap-123456789012.accesspoint.vpce-1a2b.s3.us-west-2.vpce.amazonaws.com",
        ),
    ];
    for (endpoint, host) in cases {
        let (uri, region, service, session) = addressed(&get(AP), &endpoint);
        assert_eq!(uri, format!("https://{host}/a%20b.txt"), "{endpoint:?}");
        assert_eq!(
            (region.as_str(), service.as_str(), session),
            ("us-west-2", "s3", None)
        );
    }
    // The other partitions, with their own DNS suffixes.
    for (arn, client, host, region) in [
        (
            "arn:aws-us-gov:s3:us-gov-west-1:123456789012:accesspoint/ap1",
            "us-gov-east-1",
            "ap1-123456789012.s3-accesspoint.us-gov-west-1.amazonaws.com",
            "us-gov-west-1",
        ),
        (
            "arn:aws-cn:s3:cn-north-1:123456789012:accesspoint/ap1",
            "cn-northwest-1",
            "ap1-123456789012.s3-accesspoint.cn-north-1.amazonaws.com.cn",
            "cn-north-1",
        ),
    ] {
        let (uri, signed_region, ..) = addressed(&get(arn), &aws(client));
        assert_eq!(uri, format!("https://{host}/a%20b.txt"));
        assert_eq!(signed_region, region);
    }
    // Listings, uploads and copies from an access point address it the same way.
    let (uri, ..) = addressed(
        &ListObjectsV2::new(bucket(AP)).prefix("p/"),
        &aws("us-east-1"),
    );
    assert!(
        uri.starts_with("https://my-ap-123456789012.s3-accesspoint.us-west-2.amazonaws.com/?"),
        "{uri}"
    );
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
}

#[test]
fn object_lambda_access_points_are_signed_for_their_service() {
    let (uri, region, service, _) = addressed(&get(OLAP), &aws("us-east-1"));
    assert_eq!(
        uri,
        "https://my-olap-123456789012.s3-object-lambda.us-west-2.amazonaws.com/a%20b.txt"
    );
    assert_eq!(
        (region.as_str(), service.as_str()),
        ("us-west-2", "s3-object-lambda")
    );
    let (uri, ..) = addressed(&get(OLAP), &aws("us-west-2").with_fips(true));
    assert!(uri.starts_with("https://my-olap-123456789012.s3-object-lambda-fips.us-west-2."));
    let refusal = endpoint_refusal(get(OLAP).request(&aws("us-west-2").with_dual_stack(true)));
    assert!(refusal.contains("dual-stack"), "{refusal}");
    let source = CopySource::new(bucket(OLAP), key("k"));
    let refusal = endpoint_refusal(
        CopyObject::new(source, bucket("dest"), key("k")).request(&aws("us-west-2")),
    );
    assert!(refusal.contains("cannot be a copy source"), "{refusal}");
}

#[test]
fn access_point_arns_refuse_what_aws_does_not_offer() {
    let cases = [
        (
            aws("us-east-1").with_accelerate(true),
            "Transfer Acceleration",
        ),
        (
            aws("us-east-1").with_use_arn_region(false),
            "use_arn_region is off",
        ),
        (aws("cn-north-1"), "partition aws-cn"),
        (aws("us-gov-west-1"), "partition aws-us-gov"),
        (
            aws("us-west-2").with_addressing_style(AddressingStyle::Path),
            "path-style",
        ),
    ];
    for (endpoint, fragment) in cases {
        let refusal = endpoint_refusal(get(AP).request(&endpoint));
        assert!(refusal.contains(fragment), "{endpoint:?}: {refusal}");
    }
    // use_arn_region off is fine when the regions agree.
    assert!(
        get(AP)
            .request(&aws("us-west-2").with_use_arn_region(false))
            .is_ok()
    );
    // Access points are not buckets to create.
    let refusal = endpoint_refusal(CreateBucket::new(bucket(AP)).request(&aws("us-west-2")));
    assert!(refusal.contains("CreateBucket"), "{refusal}");
}

#[test]
fn access_point_aliases_are_virtual_hosted_only() {
    let (uri, region, service, _) = addressed(&get(ALIAS), &aws("us-east-1"));
    assert_eq!(
        uri,
        format!("https://{ALIAS}.s3.us-east-1.amazonaws.com/a%20b.txt")
    );
    assert_eq!((region.as_str(), service.as_str()), ("us-east-1", "s3"));
    let refusal = endpoint_refusal(
        get(ALIAS).request(&aws("us-east-1").with_addressing_style(AddressingStyle::Path)),
    );
    assert!(refusal.contains("path-style"), "{refusal}");
    // On an S3-compatible store the name is only a name: its addressing style applies.
    let (uri, ..) = addressed(&get(ALIAS), &common::minio());
    assert_eq!(uri, format!("http://127.0.0.1:9000/{ALIAS}/a%20b.txt"));
}

#[test]
fn directory_buckets_use_their_zone_and_the_control_endpoint() {
    let west = aws("us-west-2");
    let zonal = format!("https://{DIRECTORY}.s3express-usw2-az1.us-west-2.amazonaws.com");
    let session = Some(DIRECTORY.to_owned());
    assert_eq!(
        addressed(&get(DIRECTORY), &west),
        (
            format!("{zonal}/a%20b.txt"),
            "us-west-2".into(),
            "s3express".into(),
            session.clone()
        )
    );
    let (uri, ..) = addressed(&get(DIRECTORY), &aws("us-west-2").with_fips(true));
    assert!(
        uri.starts_with(&format!(
            "https://{DIRECTORY}.s3express-fips-usw2-az1.us-west-2."
        )),
        "{uri}"
    );
    // Session-less: CreateSession itself, HeadBucket and CopyObject are authorized by IAM.
    let create = CreateSession::new(bucket(DIRECTORY));
    let request = create.request(&west).unwrap();
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
    assert_eq!(
        addressed(&HeadBucket::new(bucket(DIRECTORY)), &west).3,
        None
    );
    let copy = CopyObject::new(
        CopySource::new(bucket(DIRECTORY), key("a")),
        bucket(DIRECTORY),
        key("b"),
    );
    assert_eq!(addressed(&copy, &west).3, None);
    // Bucket-level operations go to the regional control endpoint, path-style.
    let (uri, _, service, session) = addressed(&CreateBucket::new(bucket(DIRECTORY)), &west);
    assert_eq!(
        uri,
        format!("https://s3express-control.us-west-2.amazonaws.com/{DIRECTORY}")
    );
    assert_eq!((service.as_str(), session), ("s3express", None));
    let (uri, _, service, _) = addressed(
        &ListDirectoryBuckets::new().max_directory_buckets(10),
        &west,
    );
    assert_eq!(
        uri,
        "https://s3express-control.us-west-2.amazonaws.com/?max-directory-buckets=10"
    );
    assert_eq!(service, "s3express");
    // A custom endpoint (a test server, a gateway): the bucket in the host, or in the path
    // when the endpoint is an IP address.
    let local = Endpoint::custom("http://127.0.0.1:9000", "us-west-2").unwrap();
    let (uri, _, _, session) = addressed(&get(DIRECTORY), &local);
    assert_eq!(uri, format!("http://127.0.0.1:9000/{DIRECTORY}/a%20b.txt"));
    assert_eq!(session.as_deref(), Some(DIRECTORY));
    let named = Endpoint::custom("https://express.example.com", "us-west-2").unwrap();
    assert_eq!(
        addressed(&get(DIRECTORY), &named).0,
        format!("https://{DIRECTORY}.express.example.com/a%20b.txt")
    );
    assert!(
        addressed(&ListBuckets::new(), &west)
            .0
            .starts_with("https://s3.us-west-2.amazonaws.com/")
    );
}

#[test]
fn directory_buckets_get_what_s3_express_accepts() {
    let west = aws("us-west-2");
    for endpoint in [
        aws("us-west-2").with_dual_stack(true),
        aws("us-west-2").with_accelerate(true),
    ] {
        let refusal = endpoint_refusal(get(DIRECTORY).request(&endpoint));
        assert!(
            refusal.contains("directory buckets cannot be used with"),
            "{refusal}"
        );
    }
    // Listings are by directory.
    for (list, fragment) in [
        (
            ListObjectsV2::new(bucket(DIRECTORY)).prefix("logs"),
            "must end in '/'",
        ),
        (
            ListObjectsV2::new(bucket(DIRECTORY)).delimiter(","),
            "only '/'",
        ),
    ] {
        let refusal = endpoint_refusal(list.request(&west));
        assert!(refusal.contains(fragment), "{refusal}");
    }
    assert!(
        ListObjectsV2::new(bucket(DIRECTORY))
            .prefix("logs/")
            .delimiter("/")
            .request(&west)
            .is_ok()
    );
    // No Content-MD5: DeleteObjects carries a CRC32 instead, PutObject refuses it.
    let delete = DeleteObjects::new(bucket(DIRECTORY), vec![key("a")])
        .request(&west)
        .unwrap();
    let headers = delete.request.headers();
    assert!(!headers.contains_key("content-md5"));
    assert_eq!(headers["x-amz-sdk-checksum-algorithm"], "CRC32");
    assert!(headers.contains_key("x-amz-checksum-crc32"));
    let put = PutObject::new(bucket(DIRECTORY), key("k"))
        .body(Bytes::from_static(b"x"))
        .content_md5(true);
    let refusal = endpoint_refusal(put.request(&west));
    assert!(refusal.contains("refuse Content-MD5"), "{refusal}");
    // A general-purpose bucket keeps its MD5.
    let delete = DeleteObjects::new(bucket("plain"), vec![key("a")])
        .request(&west)
        .unwrap();
    assert!(delete.request.headers().contains_key("content-md5"));
    // CreateSession is for directory buckets only.
    let refusal = endpoint_refusal(CreateSession::new(bucket("plain")).request(&west));
    assert!(refusal.contains("directory buckets"), "{refusal}");
}

#[test]
fn transfer_acceleration_serves_objects_only() {
    let accelerated = aws("eu-west-1").with_accelerate(true);
    let (uri, region, ..) = addressed(&get("photos"), &accelerated);
    assert_eq!(uri, "https://photos.s3-accelerate.amazonaws.com/a%20b.txt");
    assert_eq!(region, "eu-west-1");
    let (uri, ..) = addressed(
        &get("photos"),
        &aws("eu-west-1").with_accelerate(true).with_dual_stack(true),
    );
    assert_eq!(
        uri,
        "https://photos.s3-accelerate.dualstack.amazonaws.com/a%20b.txt"
    );
    // Bucket-level operations and requests without a bucket keep the regional host.
    assert_eq!(
        addressed(&CreateBucket::new(bucket("photos")), &accelerated).0,
        "https://photos.s3.eu-west-1.amazonaws.com/"
    );
    assert!(
        addressed(&ListBuckets::new(), &accelerated)
            .0
            .starts_with("https://s3.eu-west-1.amazonaws.com/")
    );
    for (endpoint, name, fragment) in [
        (accelerated.clone(), "my.photos", "without '.'"),
        (
            accelerated
                .clone()
                .with_addressing_style(AddressingStyle::Path),
            "photos",
            "path-style",
        ),
        (
            aws("us-east-1").with_accelerate(true).with_fips(true),
            "photos",
            "no FIPS endpoint",
        ),
        (
            aws("cn-north-1").with_accelerate(true),
            "photos",
            "commercial AWS regions",
        ),
    ] {
        let refusal = endpoint_refusal(get(name).request(&endpoint));
        assert!(
            refusal.contains(fragment),
            "{name} via {endpoint:?}: {refusal}"
        );
    }
    let mrap = "arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap";
    let refusal = endpoint_refusal(get(mrap).request(&aws("us-east-1").with_accelerate(true)));
    assert!(refusal.contains("Transfer Acceleration"), "{refusal}");
}

#[test]
fn fips_and_dual_stack_only_where_aws_has_them() {
    let (uri, ..) = addressed(
        &get("photos"),
        &aws("us-east-2").with_fips(true).with_dual_stack(true),
    );
    assert_eq!(
        uri,
        "https://photos.s3-fips.dualstack.us-east-2.amazonaws.com/a%20b.txt"
    );
    let (uri, ..) = addressed(&get("photos"), &aws("us-gov-west-1").with_fips(true));
    assert_eq!(
        uri,
        "https://photos.s3-fips.us-gov-west-1.amazonaws.com/a%20b.txt"
    );
    for (endpoint, fragment) in [
        (
            aws("eu-west-1").with_fips(true),
            "no FIPS endpoint in this region",
        ),
        (
            aws("cn-north-1").with_fips(true),
            "no FIPS endpoint in this region",
        ),
        (aws("us-iso-east-1").with_dual_stack(true), "no dual-stack"),
    ] {
        let refusal = endpoint_refusal(get("photos").request(&endpoint));
        assert!(refusal.contains(fragment), "{endpoint:?}: {refusal}");
        assert!(endpoint.check().is_err());
    }
    assert!(aws("us-east-1").with_fips(true).check().is_ok());
    // The refusal names the regions that have FIPS hosts, exactly.
    let refusal = endpoint_refusal(get("photos").request(&aws("eu-west-1").with_fips(true)));
    assert!(
        refusal.contains("us-gov-west-1, us-iso-east-1, us-iso-west-1, us-isob-east-1"),
        "{refusal}"
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

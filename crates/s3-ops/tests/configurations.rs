//! Wire shape and decoding of the Object Lock, bucket configuration, ACL,
//! GetObjectAttributes, RestoreObject and ListObjects (v1) operations, and the Object Lock
//! and grant headers of object writes.

mod common;

use std::time::{Duration, UNIX_EPOCH};

use common::*;
use s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
use s3_ops::ops::get_object::GetObject;
use s3_ops::ops::list_objects::ListObjects;
use s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_ops::provider::{Feature, Unsupported};
use s3_ops::{
    AclSource, CannedAcl, ContentMd5, CopyObject, CopySource, DeleteBucketCors, DeleteBucketPolicy,
    DeleteObject, DeleteObjects, Error, GetBucketAcl, GetBucketCors, GetBucketEncryption,
    GetBucketLifecycleConfiguration, GetBucketPolicy, GetBucketTagging, GetBucketVersioning,
    GetObjectAcl, GetObjectAttributes, GetObjectLegalHold, GetObjectLockConfiguration,
    GetObjectRetention, GetPublicAccessBlock, Grants, InvalidInput, ObjectAttributeKind, Operation,
    Provider, PutBucketAcl, PutBucketCors, PutBucketEncryption, PutBucketLifecycleConfiguration,
    PutBucketPolicy, PutBucketTagging, PutBucketVersioning, PutObject, PutObjectAcl,
    PutObjectLegalHold, PutObjectLockConfiguration, PutObjectRetention, PutPublicAccessBlock,
    RestoreObject,
};
use s3_xml::{
    AccessControlPolicy, CorsConfiguration, CorsRule, DefaultRetention, EncryptionByDefault,
    EncryptionRule, Grant, Grantee, LegalHoldStatus, LifecycleConfiguration, LifecycleExpiration,
    LifecycleFilter, LifecycleRule, MfaDeleteStatus, ObjectLockConfiguration, Owner, Permission,
    PublicAccessBlockConfiguration, RestoreRequest, RestoreTier, Retention, RetentionMode,
    RetentionPeriod, ServerSideEncryptionConfiguration, Tag, Tagging, Transition,
    VersioningConfiguration, VersioningStatus,
};

const NS: &str = r#" xmlns="http://s3.amazonaws.com/doc/2006-03-01/""#;

/// Method, URI, headers and body of an encoded request.
fn wire(op: &impl Operation) -> (String, String, Vec<String>, String) {
    let request = op.request(&aws()).unwrap();
    let (method, uri, headers) = shape(&request);
    let body = match &request.body {
        s3_ops::Body::Bytes(bytes) => String::from_utf8(bytes.to_vec()).unwrap(),
        s3_ops::Body::Empty => String::new(),
        other => panic!("{other:?}"),
    };
    (method, uri, headers, body)
}

/// The headers of a request whose body carries its MD5, plus `extra`.
fn md5_headers(body: &str, content_type: Option<&str>, extra: &[&str]) -> Vec<String> {
    let mut headers = vec![
        format!("content-length: {}", body.len()),
        format!("content-md5: {}", ContentMd5::of(body.as_bytes())),
    ];
    headers.extend(content_type.map(|t| format!("content-type: {t}")));
    headers.extend(extra.iter().map(|s| (*s).to_owned()));
    headers.sort();
    headers
}

fn invalid_parameter(error: Error) -> (&'static str, String) {
    match error {
        Error::InvalidInput(InvalidInput::Parameter { name, reason }) => (name, reason),
        other => panic!("expected an invalid parameter, got {other}"),
    }
}

const BUCKET_URI: &str = "https://examplebucket.s3.us-east-1.amazonaws.com/";
const OBJECT_URI: &str = "https://examplebucket.s3.us-east-1.amazonaws.com/my%20key";

#[test]
fn object_retention_and_legal_hold_requests() {
    let until = UNIX_EPOCH + Duration::from_secs(1_893_456_000); // 2030-01-01
    let retention = Retention::new(
        RetentionMode::Governance,
        s3_xml::Timestamp::from_system_time(until).unwrap(),
    );
    let put = PutObjectRetention::new(bucket(), key("my key"), retention.clone())
        .version_id("v1")
        .bypass_governance_retention(true);
    let (method, uri, headers, body) = wire(&put);
    assert_eq!(method, "PUT");
    assert_eq!(uri, format!("{OBJECT_URI}?retention&versionId=v1"));
    assert_eq!(
        body,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Retention{NS}><Mode>GOVERNANCE</Mode>\
             <RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>"
        )
    );
    assert_eq!(
        headers,
        md5_headers(
            &body,
            Some("application/xml"),
            &["x-amz-bypass-governance-retention: true"]
        )
    );
    // A retention needs its mode and date together.
    let mut half = Retention::default();
    half.mode = Some(RetentionMode::Compliance);
    let (name, _) = invalid_parameter(
        PutObjectRetention::new(bucket(), key("k"), half)
            .request(&aws())
            .unwrap_err(),
    );
    assert_eq!(name, "Retention");
    // ... or neither, to remove a governance retention.
    assert!(
        PutObjectRetention::new(bucket(), key("k"), Retention::default())
            .bypass_governance_retention(true)
            .request(&aws())
            .is_ok()
    );

    let hold = PutObjectLegalHold::new(bucket(), key("my key"), LegalHoldStatus::On);
    let (method, uri, headers, body) = wire(&hold);
    assert_eq!(
        (method.as_str(), uri),
        ("PUT", format!("{OBJECT_URI}?legal-hold"))
    );
    assert!(body.ends_with("<LegalHold xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Status>ON</Status></LegalHold>"));
    assert_eq!(headers, md5_headers(&body, Some("application/xml"), &[]));

    let get = GetObjectRetention::new(bucket(), key("my key"));
    assert_eq!(wire(&get).1, format!("{OBJECT_URI}?retention"));
    let output = get
        .response(response(
            200,
            &[("x-amz-request-id", "R")],
            "<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>2030-01-01T00:00:00.000Z</RetainUntilDate></Retention>",
        ))
        .unwrap();
    assert_eq!(output.result.mode, Some(RetentionMode::Compliance));
    assert_eq!(
        output.result.retain_until_date.unwrap().to_system_time(),
        Some(until)
    );
    assert_eq!(output.ids.request_id.as_deref(), Some("R"));
    let hold = GetObjectLegalHold::new(bucket(), key("k"))
        .response(response(
            200,
            &[],
            "<LegalHold><Status>OFF</Status></LegalHold>",
        ))
        .unwrap();
    assert_eq!(hold.result.status, LegalHoldStatus::Off);
    let none = GetObjectRetention::new(bucket(), key("k"))
        .response(response(
            404,
            &[],
            "<Error><Code>NoSuchObjectLockConfiguration</Code></Error>",
        ))
        .unwrap_err();
    assert_eq!(
        none.service_error().unwrap().code,
        "NoSuchObjectLockConfiguration"
    );
}

#[test]
fn object_lock_configuration_requests() {
    let config = ObjectLockConfiguration::enabled(Some(DefaultRetention::new(
        RetentionMode::Compliance,
        RetentionPeriod::Days(30),
    )));
    let put = PutObjectLockConfiguration::new(bucket(), config).token("tok");
    let (method, uri, headers, body) = wire(&put);
    assert_eq!(
        (method.as_str(), uri),
        ("PUT", format!("{BUCKET_URI}?object-lock"))
    );
    assert!(body.contains("<ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Days>30</Days>"));
    assert_eq!(
        headers,
        md5_headers(
            &body,
            Some("application/xml"),
            &["x-amz-bucket-object-lock-token: tok"]
        )
    );
    let (name, _) = invalid_parameter(
        PutObjectLockConfiguration::new(bucket(), ObjectLockConfiguration::default())
            .request(&aws())
            .unwrap_err(),
    );
    assert_eq!(name, "ObjectLockEnabled");
    let get = GetObjectLockConfiguration::new(bucket()).expected_bucket_owner("111122223333");
    let (method, uri, headers, _) = wire(&get);
    assert_eq!(
        (method.as_str(), uri, headers),
        (
            "GET",
            format!("{BUCKET_URI}?object-lock"),
            strings(&["x-amz-expected-bucket-owner: 111122223333"])
        )
    );
}

#[test]
fn object_lock_and_grant_headers_on_object_writes() {
    let until = UNIX_EPOCH + Duration::from_secs(1_893_456_000);
    let grantee = Grantee::CanonicalUser {
        id: "79a59df9".into(),
        display_name: None,
    };
    let put = PutObject::new(bucket(), key("k"))
        .body(&b"data"[..])
        .content_md5(true)
        .object_lock_retention(RetentionMode::Governance, until)
        .object_lock_legal_hold(LegalHoldStatus::On)
        .grant(
            Permission::Read,
            Grantee::Group {
                uri: Grantee::ALL_USERS.into(),
            },
        )
        .grant(Permission::ReadAcp, grantee.clone())
        .grant(Permission::Read, grantee.clone());
    let (_, _, headers, _) = wire(&put);
    for expected in [
        "x-amz-object-lock-mode: GOVERNANCE",
        "x-amz-object-lock-retain-until-date: 2030-01-01T00:00:00Z",
        "x-amz-object-lock-legal-hold: ON",
        "x-amz-grant-read: uri=\"http://acs.amazonaws.com/groups/global/AllUsers\", id=\"79a59df9\"",
        "x-amz-grant-read-acp: id=\"79a59df9\"",
    ] {
        assert!(
            headers.iter().any(|h| h == expected),
            "{expected} in {headers:?}"
        );
    }
    // A fraction of a second is rounded up: the retention is never shorter than asked.
    let (_, _, headers, _) = wire(
        &PutObject::new(bucket(), key("k"))
            .checksum_algorithm(s3_ops::ChecksumAlgorithm::Crc32)
            .object_lock_retention(
                RetentionMode::Governance,
                until - Duration::from_millis(1500),
            ),
    );
    assert!(
        headers.contains(&"x-amz-object-lock-retain-until-date: 2029-12-31T23:59:59Z".to_owned()),
        "{headers:?}"
    );
    // S3 refuses a locked upload without an integrity header: so does the encoder.
    let (name, reason) = invalid_parameter(
        PutObject::new(bucket(), key("k"))
            .object_lock_legal_hold(LegalHoldStatus::On)
            .no_checksum()
            .request(&aws())
            .unwrap_err(),
    );
    assert_eq!(name, "x-amz-object-lock-mode");
    assert!(reason.contains("Content-MD5"), "{reason}");
    // A checksum known in advance names its algorithm, on a locked upload (the header stores
    // check for) as on every other (what the AWS SDKs send).
    let precomputed = s3_ops::ChecksumAlgorithm::Crc32.checksum(b"x");
    let (_, _, headers, _) = wire(
        &PutObject::new(bucket(), key("k"))
            .checksum(precomputed.clone())
            .object_lock_legal_hold(LegalHoldStatus::On),
    );
    assert_eq!(
        headers
            .iter()
            .filter(|h| h.starts_with("x-amz-sdk-checksum-algorithm"))
            .collect::<Vec<_>>(),
        ["x-amz-sdk-checksum-algorithm: CRC32"],
        "named once"
    );
    let (_, _, headers, _) = wire(&PutObject::new(bucket(), key("k")).checksum(precomputed));
    assert!(
        headers.contains(&"x-amz-sdk-checksum-algorithm: CRC32".to_owned()),
        "{headers:?}"
    );
    // A checksum is enough.
    assert!(
        PutObject::new(bucket(), key("k"))
            .object_lock_legal_hold(LegalHoldStatus::On)
            .checksum_algorithm(s3_ops::ChecksumAlgorithm::Crc32)
            .request(&aws())
            .is_ok()
    );
    // The same description goes to CreateMultipartUpload (managed uploads) and CopyObject.
    let attributes = s3_ops::ObjectAttributes::new()
        .object_lock_retention(RetentionMode::Compliance, until)
        .grant(Permission::FullControl, grantee);
    let create = CreateMultipartUpload::new(bucket(), key("k")).attributes(attributes.clone());
    let copy = CopyObject::new(CopySource::new(bucket(), key("src")), bucket(), key("k"))
        .attributes(attributes);
    for headers in [wire(&create).2, wire(&copy).2] {
        assert!(headers.contains(&"x-amz-object-lock-mode: COMPLIANCE".to_owned()));
        assert!(headers.contains(&"x-amz-grant-full-control: id=\"79a59df9\"".to_owned()));
    }
    // A mode without a date, WRITE on an object, a quote in a grantee: refused.
    let mut half = s3_ops::ObjectAttributes::new();
    half = half.object_lock_legal_hold(LegalHoldStatus::Off);
    assert!(
        CreateMultipartUpload::new(bucket(), key("k"))
            .attributes(half)
            .request(&aws())
            .is_ok()
    );
    let write = CreateMultipartUpload::new(bucket(), key("k")).grant(
        Permission::Write,
        Grantee::Group {
            uri: Grantee::ALL_USERS.into(),
        },
    );
    assert_eq!(
        invalid_parameter(write.request(&aws()).unwrap_err()).0,
        "x-amz-grant-*"
    );
    let quote = CreateMultipartUpload::new(bucket(), key("k")).grant(
        Permission::Read,
        Grantee::Email {
            address: "a\"b".into(),
        },
    );
    assert_eq!(
        invalid_parameter(quote.request(&aws()).unwrap_err()).0,
        "x-amz-grant-*"
    );
}

#[test]
fn deletes_can_bypass_a_governance_retention() {
    let (_, _, headers, _) = wire(
        &DeleteObject::new(bucket(), key("k"))
            .version_id("v")
            .bypass_governance_retention(true),
    );
    assert_eq!(
        headers,
        strings(&["x-amz-bypass-governance-retention: true"])
    );
    let (_, _, headers, _) = wire(&DeleteObject::new(bucket(), key("k")));
    assert!(headers.is_empty());
    let (_, _, headers, _) =
        wire(&DeleteObjects::new(bucket(), [key("a")]).bypass_governance_retention(true));
    assert!(headers.contains(&"x-amz-bypass-governance-retention: true".to_owned()));
}

#[test]
fn versioning_requests_and_mfa_delete_refused() {
    let put = PutBucketVersioning::new(
        bucket(),
        VersioningConfiguration::new(VersioningStatus::Enabled),
    );
    let (method, uri, headers, body) = wire(&put);
    assert_eq!(
        (method.as_str(), uri),
        ("PUT", format!("{BUCKET_URI}?versioning"))
    );
    assert!(body.ends_with("<Status>Enabled</Status></VersioningConfiguration>"));
    assert_eq!(headers, md5_headers(&body, Some("application/xml"), &[]));
    let mut mfa = VersioningConfiguration::new(VersioningStatus::Enabled);
    mfa.mfa_delete = Some(MfaDeleteStatus::Enabled);
    let (name, reason) = invalid_parameter(
        PutBucketVersioning::new(bucket(), mfa)
            .request(&aws())
            .unwrap_err(),
    );
    assert_eq!(name, "MfaDelete");
    assert!(
        reason.contains("x-amz-mfa") && reason.contains("--mfa"),
        "{reason}"
    );
    let error = PutBucketVersioning::new(bucket(), VersioningConfiguration::default())
        .request(&aws())
        .unwrap_err();
    assert!(
        error.to_string().contains("Enabled or Suspended"),
        "{error}"
    );
    let output = GetBucketVersioning::new(bucket())
        .response(response(
            200,
            &[],
            "<VersioningConfiguration><Status>Suspended</Status></VersioningConfiguration>",
        ))
        .unwrap();
    assert_eq!(output.result.status, Some(VersioningStatus::Suspended));
}

#[test]
fn lifecycle_requests_and_their_validation() {
    let mut rule = LifecycleRule::new("logs", LifecycleFilter::with_prefix("logs/"));
    rule.expiration = Some(LifecycleExpiration::after_days(30));
    rule.abort_incomplete_multipart_upload_days = Some(2);
    let put = PutBucketLifecycleConfiguration::new(
        bucket(),
        LifecycleConfiguration::new(vec![rule.clone()]),
    );
    let (method, uri, headers, body) = wire(&put);
    assert_eq!(
        (method.as_str(), uri),
        ("PUT", format!("{BUCKET_URI}?lifecycle"))
    );
    assert_eq!(
        body,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><LifecycleConfiguration{NS}><Rule><ID>logs</ID>\
             <Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>30</Days>\
             </Expiration><AbortIncompleteMultipartUpload><DaysAfterInitiation>2</DaysAfterInitiation>\
             </AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>"
        )
    );
    assert_eq!(headers, md5_headers(&body, Some("application/xml"), &[]));

    let refused = |configure: &dyn Fn(&mut LifecycleRule)| -> String {
        let mut rule = rule.clone();
        configure(&mut rule);
        let op =
            PutBucketLifecycleConfiguration::new(bucket(), LifecycleConfiguration::new(vec![rule]));
        let (name, reason) = invalid_parameter(op.request(&aws()).unwrap_err());
        assert_eq!(name, "Rule");
        assert!(reason.starts_with("rule 1 (\"logs\")"), "{reason}");
        reason
    };
    assert!(refused(&|r| r.filter = None).contains("no Filter"));
    assert!(refused(&|r| r.prefix = Some("x".into())).contains("both a Filter"));
    assert!(
        refused(&|r| r.expiration = Some(LifecycleExpiration::default())).contains("exactly one")
    );
    assert!(
        refused(&|r| r.expiration = Some(LifecycleExpiration::after_days(0)))
            .contains("at least 1")
    );
    assert!(
        refused(&|r| {
            let mut t = Transition::after_days(1, "GLACIER");
            t.date = Some("2030-01-01T00:00:00Z".parse().unwrap());
            r.transitions = vec![t];
        })
        .contains("Transition")
    );
    assert!(
        refused(&|r| {
            r.expiration = None;
            r.abort_incomplete_multipart_upload_days = None;
        })
        .contains("no action")
    );
    let (_, reason) = invalid_parameter(
        PutBucketLifecycleConfiguration::new(bucket(), LifecycleConfiguration::default())
            .request(&aws())
            .unwrap_err(),
    );
    assert!(reason.contains("DeleteBucketLifecycle"), "{reason}");

    let get = GetBucketLifecycleConfiguration::new(bucket());
    assert_eq!(wire(&get).1, format!("{BUCKET_URI}?lifecycle"));
    let output = get.response(response(200, &[], body.clone())).unwrap();
    assert_eq!(output.result.rules, [rule]);
    let missing = get
        .response(response(
            404,
            &[],
            "<Error><Code>NoSuchLifecycleConfiguration</Code><Message>The lifecycle configuration does not exist</Message></Error>",
        ))
        .unwrap_err();
    assert!(missing.to_string().contains("NoSuchLifecycleConfiguration"));
    let (method, uri, headers, _) = wire(&s3_ops::DeleteBucketLifecycle::new(bucket()));
    assert_eq!(
        (method.as_str(), uri, headers.len()),
        ("DELETE", format!("{BUCKET_URI}?lifecycle"), 0)
    );
}

#[test]
fn policy_is_passed_through_verbatim_and_bounded() {
    let policy = "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Deny\",\"Principal\":\"*\",\
                  \"Action\":\"s3:*\",\"Resource\":\"arn:aws:s3:::examplebucket/*\",\
                  \"Condition\":{\"Bool\":{\"aws:SecureTransport\":\"false\"}}}]}";
    let put = PutBucketPolicy::new(bucket(), policy).confirm_remove_self_bucket_access(true);
    let (method, uri, headers, body) = wire(&put);
    assert_eq!(
        (method.as_str(), uri),
        ("PUT", format!("{BUCKET_URI}?policy"))
    );
    assert_eq!(body, policy);
    assert_eq!(
        headers,
        md5_headers(
            policy,
            Some("application/json"),
            &["x-amz-confirm-remove-self-bucket-access: true"]
        )
    );
    let too_big = "x".repeat(s3_ops::ops::put_bucket_policy::MAX_POLICY_BYTES + 1);
    let (name, reason) = invalid_parameter(
        PutBucketPolicy::new(bucket(), too_big)
            .request(&aws())
            .unwrap_err(),
    );
    assert_eq!(name, "Policy");
    assert!(reason.contains("20480"), "{reason}");
    assert_eq!(
        invalid_parameter(
            PutBucketPolicy::new(bucket(), " ")
                .request(&aws())
                .unwrap_err()
        )
        .0,
        "Policy"
    );

    let get = GetBucketPolicy::new(bucket());
    let output = get.response(response(200, &[], policy)).unwrap();
    assert_eq!(output.policy, policy);
    let hostile = "y".repeat(get.response_body_limit() + 1);
    assert!(matches!(
        get.response(response(200, &[], hostile)).unwrap_err(),
        Error::MalformedResponse(_)
    ));
    assert!(matches!(
        get.response(response(200, &[], &b"\xff\xfe"[..]))
            .unwrap_err(),
        Error::MalformedResponse(_)
    ));
    assert_eq!(wire(&DeleteBucketPolicy::new(bucket())).0, "DELETE");
}

#[test]
fn cors_encryption_tagging_and_public_access_block_requests() {
    let mut rule = CorsRule::new(["https://example.com"], ["GET", "PUT"]);
    rule.max_age_seconds = Some(600);
    let cors = PutBucketCors::new(bucket(), CorsConfiguration::new(vec![rule.clone()]));
    let (method, uri, headers, body) = wire(&cors);
    assert_eq!(
        (method.as_str(), uri),
        ("PUT", format!("{BUCKET_URI}?cors"))
    );
    assert_eq!(headers, md5_headers(&body, Some("application/xml"), &[]));
    let bad = PutBucketCors::new(
        bucket(),
        CorsConfiguration::new(vec![CorsRule::new(["*"], ["PATCH"])]),
    );
    assert_eq!(
        invalid_parameter(bad.request(&aws()).unwrap_err()).0,
        "AllowedMethod"
    );
    assert_eq!(
        invalid_parameter(
            PutBucketCors::new(bucket(), CorsConfiguration::default())
                .request(&aws())
                .unwrap_err()
        )
        .0,
        "CORSRule"
    );
    assert_eq!(
        GetBucketCors::new(bucket())
            .response(response(200, &[], body))
            .unwrap()
            .result
            .rules,
        [rule]
    );
    assert_eq!(
        wire(&DeleteBucketCors::new(bucket())).1,
        format!("{BUCKET_URI}?cors")
    );

    let sse = PutBucketEncryption::new(
        bucket(),
        ServerSideEncryptionConfiguration::new(vec![EncryptionRule::new(
            EncryptionByDefault::new("AES256"),
        )]),
    );
    let (_, uri, _, body) = wire(&sse);
    assert_eq!(uri, format!("{BUCKET_URI}?encryption"));
    assert!(body.contains("<SSEAlgorithm>AES256</SSEAlgorithm>"));
    assert_eq!(
        invalid_parameter(
            PutBucketEncryption::new(bucket(), ServerSideEncryptionConfiguration::default())
                .request(&aws())
                .unwrap_err()
        )
        .0,
        "Rule"
    );
    assert_eq!(
        wire(&GetBucketEncryption::new(bucket())).1,
        format!("{BUCKET_URI}?encryption")
    );

    let tags = PutBucketTagging::new(bucket(), Tagging::new(vec![Tag::new("team", "data")]));
    let (_, uri, _, body) = wire(&tags);
    assert_eq!(uri, format!("{BUCKET_URI}?tagging"));
    assert!(body.contains("<Tag><Key>team</Key><Value>data</Value></Tag>"));
    let fifty_one = Tagging::new((0..51).map(|i| Tag::new(format!("k{i}"), "v")).collect());
    let (_, reason) = invalid_parameter(
        PutBucketTagging::new(bucket(), fifty_one)
            .request(&aws())
            .unwrap_err(),
    );
    assert!(reason.contains("at most 50"), "{reason}");
    let fifty = Tagging::new((0..50).map(|i| Tag::new(format!("k{i}"), "v")).collect());
    assert!(
        PutBucketTagging::new(bucket(), fifty)
            .request(&aws())
            .is_ok()
    );
    assert!(
        PutBucketTagging::new(bucket(), Tagging::default())
            .request(&aws())
            .is_err()
    );
    assert_eq!(wire(&GetBucketTagging::new(bucket())).0, "GET");

    let block = PutPublicAccessBlock::new(bucket(), PublicAccessBlockConfiguration::all_blocked());
    let (_, uri, headers, body) = wire(&block);
    assert_eq!(uri, format!("{BUCKET_URI}?publicAccessBlock"));
    assert_eq!(headers, md5_headers(&body, Some("application/xml"), &[]));
    let output = GetPublicAccessBlock::new(bucket())
        .response(response(200, &[], body))
        .unwrap();
    assert_eq!(output.result, PublicAccessBlockConfiguration::all_blocked());
}

#[test]
fn acl_requests_take_a_canned_acl_grants_or_a_policy() {
    let empty_md5 = ContentMd5::of(b"");
    let canned = PutObjectAcl::new(
        bucket(),
        key("my key"),
        AclSource::Canned(CannedAcl::PublicRead),
    );
    let (method, uri, headers, body) = wire(&canned);
    assert_eq!((method.as_str(), uri), ("PUT", format!("{OBJECT_URI}?acl")));
    assert_eq!(body, "");
    assert_eq!(
        headers,
        strings(&[
            "content-length: 0",
            &format!("content-md5: {empty_md5}"),
            "x-amz-acl: public-read"
        ])
    );
    let grants = Grants::new().grant(
        Permission::Read,
        Grantee::Email {
            address: "a@example.com".into(),
        },
    );
    let (_, uri, headers, _) = wire(&PutBucketAcl::new(bucket(), AclSource::Grants(grants)));
    assert_eq!(uri, format!("{BUCKET_URI}?acl"));
    assert!(headers.contains(&"x-amz-grant-read: emailAddress=\"a@example.com\"".to_owned()));
    // Object-only canned ACLs are refused for buckets; an empty grant list too.
    assert_eq!(
        invalid_parameter(
            PutBucketAcl::new(
                bucket(),
                AclSource::Canned(CannedAcl::BucketOwnerFullControl)
            )
            .request(&aws())
            .unwrap_err()
        )
        .0,
        "x-amz-acl"
    );
    assert!(
        PutObjectAcl::new(bucket(), key("k"), AclSource::Grants(Grants::new()))
            .request(&aws())
            .is_err()
    );
    let policy = AccessControlPolicy::new(
        Owner::new("owner-id"),
        vec![Grant::new(
            Grantee::CanonicalUser {
                id: "owner-id".into(),
                display_name: None,
            },
            Permission::FullControl,
        )],
    );
    let (_, _, headers, body) = wire(&PutObjectAcl::new(
        bucket(),
        key("my key"),
        AclSource::Policy(policy.clone()),
    ));
    assert!(body.contains("xsi:type=\"CanonicalUser\"><ID>owner-id</ID></Grantee><Permission>FULL_CONTROL</Permission>"));
    assert_eq!(headers, md5_headers(&body, Some("application/xml"), &[]));
    let read = GetObjectAcl::new(bucket(), key("k"))
        .response(response(200, &[], body.clone()))
        .unwrap();
    assert_eq!(read.result, policy);
    assert_eq!(
        wire(&GetBucketAcl::new(bucket())).1,
        format!("{BUCKET_URI}?acl")
    );
}

#[test]
fn get_object_attributes_requests_and_pages() {
    let op = GetObjectAttributes::new(bucket(), key("my key"))
        .max_parts(2)
        .part_number_marker(4)
        .sse_customer_key(s3_ops::SseCustomerKey::new([1u8; 32]));
    let (method, uri, headers, _) = wire(&op);
    assert_eq!(
        (method.as_str(), uri),
        ("GET", format!("{OBJECT_URI}?attributes"))
    );
    assert!(headers.contains(
        &"x-amz-object-attributes: ETag,Checksum,ObjectParts,StorageClass,ObjectSize".to_owned()
    ));
    assert!(headers.contains(&"x-amz-max-parts: 2".to_owned()));
    assert!(headers.contains(&"x-amz-part-number-marker: 4".to_owned()));
    assert!(
        headers
            .iter()
            .any(|h| h.starts_with("x-amz-server-side-encryption-customer-key: "))
    );
    let only =
        GetObjectAttributes::new(bucket(), key("k")).attributes([ObjectAttributeKind::ObjectSize]);
    assert!(
        wire(&only)
            .2
            .contains(&"x-amz-object-attributes: ObjectSize".to_owned())
    );
    assert!(
        GetObjectAttributes::new(bucket(), key("k"))
            .attributes([])
            .request(&aws())
            .is_err()
    );
    assert!(
        GetObjectAttributes::new(bucket(), key("k"))
            .max_parts(1001)
            .request(&aws())
            .is_err()
    );

    let page = |truncated: bool, next: u32| {
        format!(
            "<GetObjectAttributesResponse><ObjectParts><IsTruncated>{truncated}</IsTruncated>\
             <NextPartNumberMarker>{next}</NextPartNumberMarker><PartsCount>3</PartsCount>\
             <Part><PartNumber>{next}</PartNumber><Size>5</Size><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part>\
             </ObjectParts></GetObjectAttributesResponse>"
        )
    };
    let first = GetObjectAttributes::new(bucket(), key("k"));
    let output = first
        .response(response(
            200,
            &[
                ("x-amz-version-id", "v9"),
                ("last-modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ],
            page(true, 2),
        ))
        .unwrap();
    assert_eq!(output.version_id.as_deref(), Some("v9"));
    assert!(output.last_modified.is_some());
    let second = first.next_page(&output).unwrap();
    assert!(
        wire(&second)
            .2
            .contains(&"x-amz-part-number-marker: 2".to_owned())
    );
    let last = second.response(response(200, &[], page(false, 3))).unwrap();
    assert!(second.next_page(&last).is_none());
    // A store that repeats the marker just sent does not loop.
    let repeated = second.response(response(200, &[], page(true, 2))).unwrap();
    assert!(second.next_page(&repeated).is_none());
}

#[test]
fn restore_requests_and_archived_objects() {
    let op = RestoreObject::new(
        bucket(),
        key("my key"),
        RestoreRequest::new(3, RestoreTier::Standard),
    );
    let (method, uri, headers, body) = wire(&op);
    assert_eq!(
        (method.as_str(), uri),
        ("POST", format!("{OBJECT_URI}?restore"))
    );
    assert!(body.contains(
        "<Days>3</Days><GlacierJobParameters><Tier>Standard</Tier></GlacierJobParameters>"
    ));
    assert_eq!(headers, md5_headers(&body, Some("application/xml"), &[]));
    assert!(
        !op.response(response(202, &[], ""))
            .unwrap()
            .already_restored
    );
    assert!(
        op.response(response(200, &[], ""))
            .unwrap()
            .already_restored
    );
    let mut zero = RestoreRequest::default();
    zero.days = Some(0);
    assert!(
        RestoreObject::new(bucket(), key("k"), zero)
            .request(&aws())
            .is_err()
    );

    // A GET of an archived object says what to do about it.
    let error = GetObject::new(bucket(), key("k"))
        .response(response(
            403,
            &[],
            "<Error><Code>InvalidObjectState</Code><Message>The operation is not valid for the object's storage class</Message>\
             <StorageClass>GLACIER</StorageClass></Error>",
        ))
        .unwrap_err();
    let s3 = error.service_error().unwrap();
    assert!(s3.is_archived());
    let text = error.to_string();
    assert!(
        text.contains("archived (GLACIER)")
            && text.contains("RestoreObject")
            && text.contains("ongoing-request"),
        "{text}"
    );
    // Other 403s are not about archives.
    let denied = GetObject::new(bucket(), key("k"))
        .response(response(
            403,
            &[],
            "<Error><Code>AccessDenied</Code></Error>",
        ))
        .unwrap_err();
    assert!(!denied.service_error().unwrap().is_archived());
    assert!(!denied.to_string().contains("RestoreObject"));
}

fn v1_page(truncated: bool, next_marker: Option<&str>, keys: &[&str], prefixes: &[&str]) -> String {
    let mut xml = format!(
        "<ListBucketResult><Name>examplebucket</Name><IsTruncated>{truncated}</IsTruncated>\
         <EncodingType>url</EncodingType>"
    );
    if let Some(marker) = next_marker {
        xml.push_str(&format!("<NextMarker>{marker}</NextMarker>"));
    }
    for key in keys {
        xml.push_str(&format!(
            "<Contents><Key>{key}</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>\
             <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag><Size>1</Size></Contents>"
        ));
    }
    for prefix in prefixes {
        xml.push_str(&format!(
            "<CommonPrefixes><Prefix>{prefix}</Prefix></CommonPrefixes>"
        ));
    }
    xml.push_str("</ListBucketResult>");
    xml
}

#[test]
fn list_objects_v1_pages_by_marker() {
    let list = ListObjects::new(bucket())
        .prefix("a b/")
        .delimiter("/")
        .max_keys(2);
    let (method, uri, headers, _) = wire(&list);
    assert_eq!(method, "GET");
    assert_eq!(
        uri,
        format!("{BUCKET_URI}?delimiter=%2F&encoding-type=url&max-keys=2&prefix=a%20b%2F")
    );
    assert!(headers.is_empty());
    // NextMarker (encoded like the keys) when the store sends one.
    let output = list
        .response(response(
            200,
            &[],
            v1_page(true, Some("a+b%2Fz"), &["a%20b%2Fk"], &[]),
        ))
        .unwrap();
    assert_eq!(output.result.contents[0].key, "a b/k");
    let next = list.next_page(&output).unwrap();
    assert!(
        wire(&next).1.contains("marker=a%20b%2Fz"),
        "{}",
        wire(&next).1
    );
    // Otherwise the later of the last key and the last common prefix.
    let output = list
        .response(response(
            200,
            &[],
            v1_page(true, None, &["a%2Fk"], &["a%2Fz%2F"]),
        ))
        .unwrap();
    assert!(
        wire(&list.next_page(&output).unwrap())
            .1
            .contains("marker=a%2Fz%2F")
    );
    let output = list
        .response(response(200, &[], v1_page(false, None, &["a%2Fk"], &[])))
        .unwrap();
    assert!(list.next_page(&output).is_none());
    // A truncated page with nothing to continue from would loop or stop early: an error.
    let stuck = list
        .response(response(200, &[], v1_page(true, None, &[], &[])))
        .unwrap_err();
    assert!(matches!(stuck, Error::MalformedResponse(_)), "{stuck}");
}

#[test]
fn a_v1_answer_to_list_objects_v2_is_not_taken_for_the_last_page() {
    // What a store that ignores list-type=2 sends: a v1 page, truncated, with no token.
    let error = ListObjectsV2::new(bucket())
        .response(response(200, &[], v1_page(true, None, &["k"], &[])))
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("ListObjects (version 1)") && text.contains("list_objects_v2"),
        "{text}"
    );
    // A store profiled as v1-only gets no ListObjectsV2 request at all.
    let mut quirks = Provider::Generic.quirks();
    quirks.list_objects_v2 = false;
    let mut request = ListObjectsV2::new(bucket()).request(&aws()).unwrap();
    match quirks.adapt_request(&mut request).unwrap_err() {
        Error::InvalidInput(InvalidInput::Unsupported(Unsupported {
            feature: Feature::ListObjectsV2,
            ..
        })) => {}
        other => panic!("{other}"),
    }
    let mut v1 = ListObjects::new(bucket()).request(&aws()).unwrap();
    assert!(quirks.adapt_request(&mut v1).is_ok());
    assert!(Provider::ALL.iter().all(|p| p.quirks().list_objects_v2));
    // A store that ignores list-type=2 ignores start-after too: keys at or before it.
    let restarted = ListObjectsV2::new(bucket())
        .start_after("b")
        .response(response(200, &[], v1_page(false, None, &["a", "c"], &[])))
        .unwrap_err();
    assert!(restarted.is_version_1_listing(), "{restarted}");
    let after = ListObjectsV2::new(bucket())
        .start_after("b")
        .response(response(200, &[], v1_page(false, None, &["c"], &[])))
        .unwrap();
    assert_eq!(after.result.contents[0].key, "c");
}

#[test]
fn list_objects_v2_asked_of_a_version_1_store() {
    let listing = ListObjectsV2::new(bucket())
        .prefix("a b/")
        .delimiter("/")
        .max_keys(2)
        .fetch_owner(true)
        .start_after("a b/0");
    // The same scope; start-after (or a continuation token) as the marker; no list-type,
    // no fetch-owner.
    let first = listing.as_version_1();
    assert_eq!(
        wire(&first).1,
        format!(
            "{BUCKET_URI}?delimiter=%2F&encoding-type=url&marker=a%20b%2F0&max-keys=2&prefix=a%20b%2F"
        )
    );
    let page = listing.page_from_version_1(
        first
            .response(response(
                200,
                &[],
                v1_page(true, None, &["a%20b%2Fk"], &["a%20b%2Fz%2F"]),
            ))
            .unwrap(),
    );
    assert_eq!(page.result.contents[0].key, "a b/k");
    assert_eq!(page.result.common_prefixes, ["a b/z/"]);
    assert_eq!(page.result.key_count, Some(2));
    assert!(page.result.is_truncated);
    // The marker to continue after is the page's token; the next request carries it as
    // the marker, in place of start-after.
    assert_eq!(
        page.result.next_continuation_token.as_deref(),
        Some("a b/z/")
    );
    let next = listing.next_page(&page).unwrap();
    assert!(
        wire(&next.as_version_1()).1.contains("marker=a%20b%2Fz%2F"),
        "{}",
        wire(&next.as_version_1()).1
    );
    let last = next.page_from_version_1(
        next.as_version_1()
            .response(response(
                200,
                &[],
                v1_page(false, None, &["a%20b%2Fzz"], &[]),
            ))
            .unwrap(),
    );
    assert!(next.next_page(&last).is_none());
}

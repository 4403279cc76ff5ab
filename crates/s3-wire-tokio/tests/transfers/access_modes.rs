//! Every way AWS users reach their data, end to end through the client over TLS: anonymous
//! requests, Requester Pays, access point ARNs (single-region and Object Lambda), S3 Express
//! One Zone sessions, FIPS / dual-stack / Transfer Acceleration hosts; each with plain
//! requests, listings and managed transfers.
//!
//! No AWS endpoint is reachable here, so each mode is proven on what was sent and received:
//! the AWS host names route to a loopback gateway (`support::aws_gateway`) that checks the
//! host, the signature (an independent verifier), the signing service and region, S3
//! Express session keys and tokens, and bucket policies (public: unsigned only; Requester
//! Pays: the header), then forwards to the fault store so the bytes really land.

use std::time::Duration;

use bytes::Bytes;
use s3_wire_tokio::s3_multipart_plan::PartLimits;
use s3_wire_tokio::s3_ops::ops::create_session::SessionMode;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::{
    CopyObject, CopySource, CreateBucket, DeleteObject, DeleteObjects, GetObject, HeadBucket,
    HeadObject, ListDirectoryBuckets, PutObject, RequestExtras,
};
use s3_wire_tokio::{Client, ClientBuilder, Destination, TransferOptions, bucket, key};

use crate::fault_store::{self, FaultStore};
use crate::support;
use crate::support::aws_gateway::{ACCOUNT, Authenticated, Backend, Gateway, Route};

const REGION: &str = "us-west-2";
const PART: u64 = 64 * 1024;

/// Transfer options with 64 KiB parts (the gateway's local-s3 takes parts of any size).
fn small_parts() -> TransferOptions {
    let mut options = TransferOptions::default();
    options.part_size = PART;
    options.single_request_limit = Some(PART);
    options.limits = PartLimits::new(PART, 5 << 30, 10_000, 5 << 40).expect("limits");
    options
}

fn builder(gateway: &Gateway, region: &str) -> ClientBuilder {
    gateway
        .client_builder(region)
        .transfer_options(small_parts())
}

/// A gateway serving `routes` in front of a fault store that takes 64 KiB parts (keep the
/// store until the test is done).
async fn start(routes: Vec<(&'static str, Route)>) -> (Gateway, FaultStore) {
    tokio::task::spawn_blocking(move || {
        let store = FaultStore::start_with_min_part_size(PART);
        let backend = Backend {
            endpoint: store.endpoint(),
            access_key: fault_store::ACCESS_KEY.to_owned(),
            secret_key: fault_store::SECRET_KEY.to_owned(),
            region: fault_store::REGION.to_owned(),
        };
        (Gateway::start(&routes, backend), store)
    })
    .await
    .expect("join")
}

/// Uploads, lists, reads (plain and managed) and deletes objects of `name` through `client`:
/// what every mode must carry.
async fn round_trip(client: &Client, name: &str) {
    let b = || bucket(name).unwrap();
    let small = support::data(1000, 1);
    client
        .put_object(
            PutObject::new(b(), key("dir/small").unwrap()),
            s3_wire_tokio::Body::from_bytes(small.clone()),
        )
        .await
        .unwrap_or_else(|e| panic!("put to {name}: {e}"));
    let large = support::data(3 * PART + 100, 2);
    let stored = client
        .upload(
            b(),
            key("dir/large").unwrap(),
            s3_wire_tokio::UploadSource::bytes(large.clone()),
        )
        .await
        .unwrap_or_else(|e| panic!("managed upload to {name}: {e}"));
    assert_eq!(stored.size, large.len() as u64);

    let got = client
        .get_object(GetObject::new(b(), key("dir/small").unwrap()))
        .await
        .unwrap()
        .body
        .collect()
        .await
        .unwrap();
    assert_eq!(got, small);
    let head = client
        .head_object(HeadObject::new(b(), key("dir/large").unwrap()))
        .await
        .unwrap();
    assert_eq!(head.content_length, Some(large.len() as u64));
    let mut pages = client.list_objects_v2_pages(ListObjectsV2::new(b()).prefix("dir/"));
    let mut keys = Vec::new();
    while let Some(page) = pages.next_page().await {
        keys.extend(page.unwrap().result.contents.into_iter().map(|o| o.key));
    }
    keys.sort();
    assert_eq!(keys, ["dir/large", "dir/small"]);
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("large");
    client
        .download(b(), key("dir/large").unwrap(), Destination::file(&path))
        .await
        .unwrap_or_else(|e| panic!("managed download from {name}: {e}"));
    assert_eq!(std::fs::read(&path).unwrap(), large);
    client
        .delete_object(DeleteObject::new(b(), key("dir/small").unwrap()))
        .await
        .unwrap();
}

#[tokio::test]
async fn anonymous_requests_carry_no_signature_material_and_uploads_keep_checksums() {
    let (gateway, _store) = start(vec![
        (
            "open-data.s3.us-west-2.amazonaws.com",
            Route::new(Some("open-data"), "s3", REGION),
        ),
        (
            "closed-data.s3.us-west-2.amazonaws.com",
            Route::new(Some("closed-data"), "s3", REGION),
        ),
    ])
    .await;
    gateway.make_public("open-data");
    let anonymous = builder(&gateway, REGION).anonymous().build().unwrap();
    assert!(anonymous.is_anonymous());
    round_trip(&anonymous, "open-data").await;
    let seen = gateway.seen();
    assert!(seen.len() >= 10, "{seen:?}");
    for request in &seen {
        assert_eq!(
            request.authenticated,
            Authenticated::Anonymous,
            "{request:?}"
        );
        assert!(request.header("authorization").is_none());
        assert!(request.header("x-amz-security-token").is_none());
        assert!(!request.target.contains("X-Amz-"), "{}", request.target);
        if request.method == http::Method::PUT {
            let checksummed = request
                .headers
                .keys()
                .any(|name| name.as_str().starts_with("x-amz-checksum-"))
                || request
                    .header("x-amz-trailer")
                    .is_some_and(|t| t.starts_with("x-amz-checksum-"));
            assert!(checksummed, "an upload without a checksum: {request:?}");
        }
    }
    // A bucket that is not public says why it refused, and what to do.
    let error = anonymous
        .get_object(GetObject::new(
            bucket("closed-data").unwrap(),
            key("k").unwrap(),
        ))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("anonymous client"), "{error}");
    // The gateway would catch a client that signs anyway.
    let signed = builder(&gateway, REGION).build().unwrap();
    let error = signed
        .head_object(HeadObject::new(
            bucket("open-data").unwrap(),
            key("dir/large").unwrap(),
        ))
        .await
        .unwrap_err();
    assert_eq!(
        error.service_error().map(|e| e.status.as_u16()),
        Some(400),
        "{error}"
    );
    // Nothing to presign with.
    let error = anonymous
        .presign(
            &GetObject::new(bucket("open-data").unwrap(), key("dir/large").unwrap()),
            Duration::from_secs(60),
        )
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("anonymous client cannot presign"),
        "{error}"
    );
}

#[tokio::test]
async fn requester_pays_reaches_every_operation_and_its_refusal_names_the_remedy() {
    let (gateway, _store) = start(vec![(
        "payer-data.s3.us-west-2.amazonaws.com",
        Route::new(Some("payer-data"), "s3", REGION),
    )])
    .await;
    gateway.require_request_payer("payer-data");
    let payer = builder(&gateway, REGION)
        .request_payer(true)
        .build()
        .unwrap();
    round_trip(&payer, "payer-data").await;
    let b = || bucket("payer-data").unwrap();
    payer
        .copy_object(CopyObject::new(
            CopySource::new(b(), key("dir/large").unwrap()),
            b(),
            key("copy").unwrap(),
        ))
        .await
        .unwrap();
    payer
        .copy(
            CopySource::new(b(), key("dir/large").unwrap()),
            b(),
            key("managed-copy").unwrap(),
        )
        .await
        .unwrap();
    payer
        .delete_objects(DeleteObjects::new(
            b(),
            vec![key("copy").unwrap(), key("managed-copy").unwrap()],
        ))
        .await
        .unwrap();
    let seen = gateway.seen();
    for request in &seen {
        assert_eq!(
            request.header("x-amz-request-payer"),
            Some("requester"),
            "{request:?}"
        );
        assert!(
            matches!(request.authenticated, Authenticated::Iam { .. }),
            "{request:?}"
        );
    }

    // Without it: refused, and the error says what to do.
    let plain = builder(&gateway, REGION).build().unwrap();
    let error = plain
        .get_object(GetObject::new(b(), key("dir/large").unwrap()))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("Requester Pays"), "{error}");
    assert!(
        error
            .hint()
            .is_some_and(|hint| hint.contains("request_payer")),
        "the remedy is the error's hint: {error:?}"
    );
    // Per request, through a view of the same client.
    let view = plain.with_request_extras(RequestExtras::new().request_payer(true));
    let body = view
        .get_object(GetObject::new(b(), key("dir/large").unwrap()))
        .await
        .unwrap()
        .body
        .collect()
        .await
        .unwrap();
    assert_eq!(body.len() as u64, 3 * PART + 100);
}

#[tokio::test]
async fn access_point_arns_are_addressed_and_signed_for_their_region() {
    let ap = "arn:aws:s3:us-west-2:123456789012:accesspoint/my-ap";
    let hosts = [
        (
            "my-ap-123456789012.s3-accesspoint.us-west-2.amazonaws.com",
            false,
            false,
        ),
        (
            "my-ap-123456789012.s3-accesspoint-fips.us-west-2.amazonaws.com",
            true,
            false,
        ),
        (
            "my-ap-123456789012.s3-accesspoint.dualstack.us-west-2.amazonaws.com",
            false,
            true,
        ),
        (
            "my-ap-123456789012.s3-accesspoint-fips.dualstack.us-west-2.amazonaws.com",
            true,
            true,
        ),
    ];
    let olap = "arn:aws:s3-object-lambda:us-west-2:123456789012:accesspoint/my-olap";
    let olap_hosts = [
        (
            "my-olap-123456789012.s3-object-lambda.us-west-2.amazonaws.com",
            false,
        ),
        (
            "my-olap-123456789012.s3-object-lambda-fips.us-west-2.amazonaws.com",
            true,
        ),
    ];
    let mut routes: Vec<(&str, Route)> = hosts
        .iter()
        .map(|(host, ..)| (*host, Route::new(Some("my-ap"), "s3", REGION)))
        .collect();
    routes.extend(olap_hosts.iter().map(|(host, _)| {
        (
            *host,
            Route::new(Some("my-olap"), "s3-object-lambda", REGION),
        )
    }));
    let (gateway, store) = start(routes).await;
    assert_eq!(ACCOUNT, "123456789012");

    for (host, fips, dual_stack) in hosts {
        // A client of another region: the ARN's region is used (use_arn_region's default).
        let client = builder(&gateway, "us-east-2")
            .fips(fips)
            .dual_stack(dual_stack)
            .build()
            .unwrap();
        gateway.clear_seen();
        round_trip(&client, ap).await;
        let seen = gateway.seen();
        assert!(!seen.is_empty());
        for request in &seen {
            assert_eq!(request.host, host, "{request:?}");
            assert_eq!(
                request.authenticated,
                Authenticated::Iam {
                    service: "s3".into(),
                    region: REGION.into()
                },
                "{request:?}"
            );
        }
    }
    // Presigned: the URL's host and query signature are the access point's.
    let client = builder(&gateway, "us-east-2").build().unwrap();
    let url = client
        .presign(
            &GetObject::new(bucket(ap).unwrap(), key("dir/large").unwrap()),
            Duration::from_secs(300),
        )
        .await
        .unwrap();
    assert!(
        url.url()
            .starts_with(&format!("https://{}/dir/large?", hosts[0].0)),
        "{}",
        url.url()
    );
    gateway.clear_seen();
    let fetched = gateway.https_get(url.url()).await;
    assert_eq!(fetched.len() as u64, 3 * PART + 100);
    assert_eq!(
        gateway.seen()[0].authenticated,
        Authenticated::Presigned {
            service: "s3".into(),
            region: REGION.into()
        }
    );
    // Object Lambda access points: their own service.
    store
        .client_builder()
        .build()
        .unwrap()
        .put_object(
            PutObject::new(bucket("my-olap").unwrap(), key("transformed").unwrap()),
            s3_wire_tokio::Body::from_bytes(Bytes::from_static(b"through a lambda")),
        )
        .await
        .unwrap();
    for (host, fips) in olap_hosts {
        gateway.clear_seen();
        let client = builder(&gateway, REGION).fips(fips).build().unwrap();
        let body = client
            .get_object(GetObject::new(
                bucket(olap).unwrap(),
                key("transformed").unwrap(),
            ))
            .await
            .unwrap()
            .body
            .collect()
            .await
            .unwrap();
        assert_eq!(body, "through a lambda");
        let seen = gateway.seen();
        assert_eq!(seen[0].host, host);
        assert_eq!(
            seen[0].authenticated,
            Authenticated::Iam {
                service: "s3-object-lambda".into(),
                region: REGION.into()
            }
        );
    }
    // use_arn_region off refuses another region before anything is sent.
    gateway.clear_seen();
    let strict = builder(&gateway, "us-east-2")
        .use_arn_region(false)
        .build()
        .unwrap();
    let error = strict
        .get_object(GetObject::new(bucket(ap).unwrap(), key("k").unwrap()))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("use_arn_region is off"),
        "{error}"
    );
    assert!(gateway.seen().is_empty());
}

const DIRECTORY: &str = "logs--usw2-az1--x-s3";
const ZONAL: &str = "logs--usw2-az1--x-s3.s3express-usw2-az1.us-west-2.amazonaws.com";
const CONTROL: &str = "s3express-control.us-west-2.amazonaws.com";

async fn express() -> (Gateway, FaultStore) {
    start(vec![
        (ZONAL, Route::zonal(DIRECTORY, REGION)),
        (CONTROL, Route::new(None, "s3express", REGION)),
    ])
    .await
}

#[tokio::test]
async fn s3_express_creates_one_session_per_bucket_and_signs_zonal_requests_with_it() {
    let (gateway, _store) = express().await;
    let client = builder(&gateway, REGION).build().unwrap();
    round_trip(&client, DIRECTORY).await;
    // A transfer of 100 parts does not create 100 sessions.
    let data = support::data(100 * PART, 3);
    client
        .upload(
            bucket(DIRECTORY).unwrap(),
            key("dir/hundred").unwrap(),
            s3_wire_tokio::UploadSource::bytes(data.clone()),
        )
        .await
        .unwrap();
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("hundred");
    client
        .download(
            bucket(DIRECTORY).unwrap(),
            key("dir/hundred").unwrap(),
            Destination::file(&path),
        )
        .await
        .unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), data);
    assert_eq!(
        gateway.sessions_created(),
        [(DIRECTORY.to_owned(), "ReadWrite".to_owned())]
    );
    let seen = gateway.seen();
    let parts = seen
        .iter()
        .filter(|r| r.target.contains("partNumber="))
        .count();
    assert!(parts >= 100, "{parts} part requests");
    for request in &seen {
        let expected = if request.target.ends_with("?session") {
            Authenticated::Iam {
                service: "s3express".into(),
                region: REGION.into(),
            }
        } else {
            Authenticated::Session {
                service: "s3express".into(),
                region: REGION.into(),
            }
        };
        assert_eq!(request.host, ZONAL);
        assert_eq!(
            request.authenticated, expected,
            "{} {}",
            request.method, request.target
        );
        assert!(request.header("x-amz-security-token").is_none());
    }
    // The S3 Express profile applies to the directory bucket whatever the client's: a
    // checksum it does not take (CRC64NVME) becomes one it does.
    gateway.clear_seen();
    client
        .put_object(
            PutObject::new(bucket(DIRECTORY).unwrap(), key("dir/crc").unwrap())
                .checksum_algorithm(s3_wire_tokio::s3_ops::ChecksumAlgorithm::Crc64Nvme),
            s3_wire_tokio::Body::from_bytes(Bytes::from_static(b"express")),
        )
        .await
        .unwrap();
    let put = &gateway.seen()[0];
    assert!(put.header("x-amz-checksum-crc32").is_some(), "{put:?}");
    assert!(put.header("x-amz-checksum-crc64nvme").is_none(), "{put:?}");
    // HeadBucket is authorized by IAM; ListDirectoryBuckets goes to the control endpoint.
    gateway.clear_seen();
    client
        .head_bucket(HeadBucket::new(bucket(DIRECTORY).unwrap()))
        .await
        .unwrap();
    let listed = client.send(ListDirectoryBuckets::new()).await.unwrap();
    assert_eq!(listed.result.buckets[0].name, DIRECTORY);
    let seen = gateway.seen();
    assert_eq!(
        (seen[0].host.as_str(), &seen[0].authenticated),
        (
            ZONAL,
            &Authenticated::Iam {
                service: "s3express".into(),
                region: REGION.into()
            }
        )
    );
    assert_eq!(
        (seen[1].host.as_str(), &seen[1].authenticated),
        (
            CONTROL,
            &Authenticated::Iam {
                service: "s3express".into(),
                region: REGION.into()
            }
        )
    );
    // Presigned URLs are signed with the caller's own keys (they outlive a session).
    let url = client
        .presign(
            &GetObject::new(bucket(DIRECTORY).unwrap(), key("dir/large").unwrap()),
            Duration::from_secs(600),
        )
        .await
        .unwrap();
    gateway.clear_seen();
    assert_eq!(
        gateway.https_get(url.url()).await.len() as u64,
        3 * PART + 100
    );
    assert_eq!(
        gateway.seen()[0].authenticated,
        Authenticated::Presigned {
            service: "s3express".into(),
            region: REGION.into()
        }
    );
}

const EXPRESS_AP: &str = "reports--usw2-az1--xa-s3";
const EXPRESS_AP_ZONAL: &str =
    "reports--usw2-az1--xa-s3.s3express-usw2-az1.us-west-2.amazonaws.com";

/// Every request seen was for `host`, signed with a session of the bucket or access point
/// there (CreateSession itself with the caller's keys).
fn assert_sessions_at(seen: &[support::aws_gateway::Seen], host: &str) {
    assert!(!seen.is_empty());
    for request in seen {
        let service = "s3express".to_owned();
        let region = REGION.to_owned();
        let expected = if request.target.ends_with("?session") {
            Authenticated::Iam { service, region }
        } else {
            Authenticated::Session { service, region }
        };
        assert_eq!(request.host, host);
        assert_eq!(
            request.authenticated, expected,
            "{} {}",
            request.method, request.target
        );
    }
}

#[tokio::test]
async fn an_s3_express_access_point_has_a_session_of_its_own_at_its_zonal_host() {
    let (gateway, _store) = start(vec![
        (ZONAL, Route::zonal(DIRECTORY, REGION)),
        (EXPRESS_AP_ZONAL, Route::zonal(EXPRESS_AP, REGION)),
    ])
    .await;
    let client = builder(&gateway, REGION).build().unwrap();
    round_trip(&client, EXPRESS_AP).await;
    assert_sessions_at(&gateway.seen(), EXPRESS_AP_ZONAL);
    gateway.clear_seen();
    round_trip(&client, DIRECTORY).await;
    assert_sessions_at(&gateway.seen(), ZONAL);
    round_trip(&client, EXPRESS_AP).await;
    // One session each, however many requests: the access point's is not the bucket's.
    assert_eq!(
        gateway.sessions_created(),
        [
            (EXPRESS_AP.to_owned(), "ReadWrite".to_owned()),
            (DIRECTORY.to_owned(), "ReadWrite".to_owned())
        ]
    );
}

#[tokio::test]
async fn s3_express_over_dual_stack_uses_the_zones_dual_stack_host() {
    const DUAL: &str = "logs--usw2-az1--x-s3.s3express-usw2-az1.dualstack.us-west-2.amazonaws.com";
    const CONTROL_DUAL: &str = "s3express-control.dualstack.us-west-2.amazonaws.com";
    let (gateway, _store) = start(vec![
        (DUAL, Route::zonal(DIRECTORY, REGION)),
        (CONTROL_DUAL, Route::new(None, "s3express", REGION)),
    ])
    .await;
    let client = builder(&gateway, REGION).dual_stack(true).build().unwrap();
    round_trip(&client, DIRECTORY).await;
    assert_sessions_at(&gateway.seen(), DUAL);
    // ListDirectoryBuckets keeps dual-stack too.
    gateway.clear_seen();
    let listed = client.send(ListDirectoryBuckets::new()).await.unwrap();
    assert_eq!(listed.result.buckets[0].name, DIRECTORY);
    assert_eq!(gateway.seen()[0].host, CONTROL_DUAL);
}

#[tokio::test]
async fn an_outposts_access_point_alias_is_signed_with_sigv4a_for_s3_outposts() {
    const ALIAS: &str = "test-accessp-o0b1d075431d83bebde8xz5w8ijx1qzlbp3i3kuse10--op-s3";
    const HOST: &str = "test-accessp-o0b1d075431d83bebde8xz5w8ijx1qzlbp3i3kuse10--op-s3.\
                        op-0b1d075431d83bebd.s3-outposts.us-west-2.amazonaws.com";
    let (gateway, _store) = start(vec![(HOST, Route::new(Some(ALIAS), "s3-outposts", "*"))]).await;
    let client = builder(&gateway, REGION).build().unwrap();
    round_trip(&client, ALIAS).await;
    for request in gateway.seen() {
        assert_eq!(request.host, HOST);
        assert_eq!(
            request.authenticated,
            Authenticated::IamV4a {
                service: "s3-outposts".into(),
                region_set: "*".into()
            },
            "{} {}",
            request.method,
            request.target
        );
    }
}

#[tokio::test]
async fn s3_express_sessions_are_refreshed_before_expiry_and_after_a_refusal() {
    let (gateway, _store) = express().await;
    let client = builder(&gateway, REGION).build().unwrap();
    let get = || GetObject::new(bucket(DIRECTORY).unwrap(), key("k").unwrap());
    client
        .put_object(
            PutObject::new(bucket(DIRECTORY).unwrap(), key("k").unwrap()),
            s3_wire_tokio::Body::from_bytes(Bytes::from_static(b"v")),
        )
        .await
        .unwrap();
    assert_eq!(gateway.sessions_created().len(), 1);
    // The store forgets the session (as it does once one expires): the refusal drops it,
    // one new session is created and the request retried with it.
    gateway.revoke_sessions();
    client
        .get_object(get())
        .await
        .unwrap()
        .body
        .collect()
        .await
        .unwrap();
    assert_eq!(gateway.sessions_created().len(), 2);
    let refused: Vec<_> = gateway
        .seen()
        .into_iter()
        .filter(|r| r.status >= 400)
        .collect();
    assert_eq!(refused.len(), 1, "{refused:?}");

    // Short-lived sessions are renewed ahead of their expiry: a request never goes out
    // with an expired one.
    gateway.set_session_lifetime(Duration::from_secs(4));
    gateway.revoke_sessions();
    gateway.clear_seen();
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_millis(5000) {
        client
            .get_object(get())
            .await
            .unwrap()
            .body
            .collect()
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let expired: Vec<_> = gateway
        .seen()
        .into_iter()
        .filter(|r| r.status >= 400)
        .collect();
    assert_eq!(
        expired.len(),
        1,
        "only the revoked session was refused: {expired:?}"
    );
    assert!(
        gateway.sessions_created().len() >= 4,
        "{:?}",
        gateway.sessions_created()
    );

    // ReadOnly sessions are their own.
    let reader = builder(&gateway, REGION)
        .s3_express_session_mode(SessionMode::ReadOnly)
        .build()
        .unwrap();
    reader
        .get_object(get())
        .await
        .unwrap()
        .body
        .collect()
        .await
        .unwrap();
    assert!(
        gateway
            .sessions_created()
            .contains(&(DIRECTORY.to_owned(), "ReadOnly".to_owned()))
    );
}

/// The gateway's session checks, tried by hand: a request signed with a session's key is
/// taken, with a wrong secret refused (`SignatureDoesNotMatch`), with a session past its
/// expiry refused (`ExpiredToken`), so the session tests above prove what they claim.
#[tokio::test]
async fn a_wrong_or_expired_session_key_is_refused() {
    let (gateway, store) = express().await;
    store.insert_object("express-backing", "k", "data", None);
    let client = builder(&gateway, REGION).build().unwrap();
    let get = || GetObject::new(bucket(DIRECTORY).unwrap(), key("k").unwrap());
    client.get_object(get()).await.unwrap();
    let (id, secret, token) = gateway.sessions().pop().expect("a session");
    let send = |secret: String, id: String, token: String| {
        let gateway = &gateway;
        async move {
            gateway
                .send_signed(
                    http::Method::GET,
                    ZONAL,
                    "/k",
                    REGION,
                    (&id, &secret, Some(&token)),
                )
                .await
        }
    };
    assert_eq!(
        send(secret.clone(), id.clone(), token.clone()).await,
        (200, None)
    );
    assert_eq!(
        send("not-the-secret".into(), id.clone(), token.clone()).await,
        (403, Some("SignatureDoesNotMatch".to_owned()))
    );
    // A session that ran out (a second's lifetime, two seconds ago).
    gateway.set_session_lifetime(Duration::from_secs(1));
    gateway.revoke_sessions();
    let fresh = builder(&gateway, REGION).build().unwrap();
    fresh.get_object(get()).await.unwrap();
    let (id, secret, token) = gateway.sessions().pop().expect("a session");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        send(secret, id, token).await,
        (400, Some("ExpiredToken".to_owned()))
    );
}

/// A cold session cache under 100 parts at once: one CreateSession, every part signed with
/// its session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_session_cache_creates_one_session_for_a_hundred_concurrent_parts() {
    use s3_wire_tokio::s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
    use s3_wire_tokio::s3_ops::ops::upload_part::UploadPart;
    let (gateway, _store) = express().await;
    let warm = builder(&gateway, REGION).build().unwrap();
    let created = warm
        .create_multipart_upload(CreateMultipartUpload::new(
            bucket(DIRECTORY).unwrap(),
            key("many").unwrap(),
        ))
        .await
        .unwrap();
    let before = gateway.sessions_created().len();
    gateway.clear_seen();
    let cold = builder(&gateway, REGION).build().unwrap();
    let part = support::data(PART, 3);
    let mut parts = tokio::task::JoinSet::new();
    for number in 1..=100u32 {
        let (cold, part, upload_id) = (cold.clone(), part.clone(), created.upload_id.clone());
        parts.spawn(async move {
            cold.upload_part(
                UploadPart::new(
                    bucket(DIRECTORY).unwrap(),
                    key("many").unwrap(),
                    &upload_id,
                    number,
                ),
                part,
            )
            .await
        });
    }
    while let Some(part) = parts.join_next().await {
        part.unwrap().unwrap();
    }
    assert_eq!(gateway.sessions_created().len(), before + 1);
    let seen = gateway.seen();
    let sessions = seen
        .iter()
        .filter(|r| r.target.ends_with("?session"))
        .count();
    assert_eq!(sessions, 1, "single flight");
    let parts: Vec<_> = seen
        .iter()
        .filter(|r| r.target.contains("partNumber="))
        .collect();
    assert_eq!(parts.len(), 100);
    assert!(parts.iter().all(|r| r.status == 200), "{parts:?}");
}

#[tokio::test]
async fn fips_dual_stack_and_accelerate_hosts_are_used_as_configured() {
    let hosts = [
        ("photos.s3-fips.us-west-2.amazonaws.com", true, false, false),
        (
            "photos.s3.dualstack.us-west-2.amazonaws.com",
            false,
            true,
            false,
        ),
        (
            "photos.s3-fips.dualstack.us-west-2.amazonaws.com",
            true,
            true,
            false,
        ),
        ("photos.s3-accelerate.amazonaws.com", false, false, true),
        (
            "photos.s3-accelerate.dualstack.amazonaws.com",
            false,
            true,
            true,
        ),
    ];
    let mut routes: Vec<(&str, Route)> = hosts
        .iter()
        .map(|(host, ..)| (*host, Route::new(Some("photos"), "s3", REGION)))
        .collect();
    routes.push((
        "photos.s3.us-west-2.amazonaws.com",
        Route::new(Some("photos"), "s3", REGION),
    ));
    let (gateway, _store) = start(routes).await;
    for (host, fips, dual_stack, accelerate) in hosts {
        let client = builder(&gateway, REGION)
            .fips(fips)
            .dual_stack(dual_stack)
            .accelerate(accelerate)
            .build()
            .unwrap();
        gateway.clear_seen();
        round_trip(&client, "photos").await;
        for request in gateway.seen() {
            assert_eq!(request.host, host, "{request:?}");
            assert_eq!(
                request.authenticated,
                Authenticated::Iam {
                    service: "s3".into(),
                    region: REGION.into()
                }
            );
        }
    }
    // Bucket-level requests (CreateBucket, DeleteBucket) keep the regional host under
    // acceleration; the others use the accelerated one.
    let accelerated = builder(&gateway, REGION).accelerate(true).build().unwrap();
    gateway.clear_seen();
    accelerated
        .head_bucket(HeadBucket::new(bucket("photos").unwrap()))
        .await
        .unwrap();
    let _ = accelerated
        .create_bucket(CreateBucket::new(bucket("photos").unwrap()))
        .await;
    let hosts: Vec<String> = gateway.seen().into_iter().map(|r| r.host).collect();
    assert_eq!(
        hosts,
        [
            "photos.s3-accelerate.amazonaws.com",
            "photos.s3.us-west-2.amazonaws.com"
        ]
    );
}

/// A directory bucket lists in no order. A sync to one (compare, delete what the source
/// lacks), a download of it and a copy between two of its prefixes each walk it directory
/// by directory (a listing with the delimiter `/` per directory, sorted), through the
/// gateway, its session and a backing store whose listings come in hash order.
#[tokio::test]
async fn sync_download_and_copy_of_a_directory_bucket_walk_it_by_directory() {
    let (gateway, store) = start(vec![(ZONAL, Route::zonal(DIRECTORY, REGION))]).await;
    store.set_quirks(crate::fault_store::StoreQuirks {
        unordered_listings: true,
        ..Default::default()
    });
    let client = builder(&gateway, REGION).build().unwrap();
    let b = || bucket(DIRECTORY).unwrap();
    let source = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (index, name) in [
        "a.txt",
        "a-b.txt",
        "a/1.txt",
        "a/b/2.txt",
        "a/b/c/3.txt",
        "a0.txt",
        "b/4.txt",
        "b/5.txt",
        "b.txt",
        "c/d/e/6.txt",
        "z.txt",
    ]
    .into_iter()
    .enumerate()
    {
        let path = source.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("{name}:{index}")).unwrap();
        files.push(name);
    }
    // What the source lacks and must go, beside what stays (another prefix).
    for key in ["tree/stale.txt", "tree/a/b/stale.txt", "elsewhere/keep.txt"] {
        store.insert_object("express-backing", key, "old", None);
    }
    let synced = client
        .upload_directory(source.path(), b(), "tree")
        .compare(s3_wire_tokio::transfer::Compare::SizeAndTime)
        .delete_extraneous(true)
        .await
        .unwrap();
    assert!(synced.is_success(), "{:?}", synced.failures);
    assert_eq!(synced.progress.objects_transferred, files.len() as u64);
    assert_eq!(synced.progress.objects_deleted, 2);
    let mut stored = store.keys("express-backing");
    stored.sort();
    let mut expected: Vec<String> = files.iter().map(|f| format!("tree/{f}")).collect();
    expected.push("elsewhere/keep.txt".to_owned());
    expected.sort();
    assert_eq!(stored, expected);
    // The bucket was listed directory by directory (the ones it held), never whole.
    let listed = || {
        let prefixes: Vec<String> = gateway
            .seen()
            .into_iter()
            .filter(|r| r.method == http::Method::GET && r.target.contains("list-type=2"))
            .map(|r| {
                assert!(r.target.contains("delimiter=%2F"), "{}", r.target);
                r.target
                    .split("prefix=")
                    .nth(1)
                    .unwrap_or("")
                    .replace("%2F", "/")
            })
            .collect();
        gateway.clear_seen();
        prefixes
    };
    assert_eq!(listed(), ["tree/", "tree/a/", "tree/a/b/"]);
    // Again: nothing changed, nothing sent or deleted.
    let again = client
        .upload_directory(source.path(), b(), "tree")
        .compare(s3_wire_tokio::transfer::Compare::SizeAndTime)
        .delete_extraneous(true)
        .await
        .unwrap();
    assert_eq!(
        (
            again.progress.objects_transferred,
            again.progress.objects_skipped,
            again.progress.objects_deleted
        ),
        (0, files.len() as u64, 0)
    );
    assert_eq!(
        listed(),
        [
            "tree/",
            "tree/a/",
            "tree/a/b/",
            "tree/a/b/c/",
            "tree/b/",
            "tree/c/",
            "tree/c/d/",
            "tree/c/d/e/"
        ]
    );
    // cp -r back down, and a copy to another prefix of the same bucket.
    let target = tempfile::tempdir().unwrap();
    let down = client
        .download_directory(b(), "tree", target.path())
        .await
        .unwrap();
    assert!(down.is_success(), "{:?}", down.failures);
    for name in &files {
        assert_eq!(
            std::fs::read(target.path().join(name)).unwrap(),
            std::fs::read(source.path().join(name)).unwrap(),
            "{name}"
        );
    }
    let copied = client
        .copy_directory(b(), "tree", b(), "copy")
        .delete_extraneous(true)
        .await
        .unwrap();
    assert!(copied.is_success(), "{:?}", copied.failures);
    assert_eq!(copied.progress.objects_transferred, files.len() as u64);
    for name in &files {
        assert_eq!(
            store
                .object("express-backing", &format!("copy/{name}"))
                .unwrap()
                .data,
            store
                .object("express-backing", &format!("tree/{name}"))
                .unwrap()
                .data
        );
    }
}

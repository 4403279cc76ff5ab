//! What the suite does not check: cleanup of dropped uploads and the exact requests behind
//! them (against the loopback fault server), the error mapping, tags and attributes on the
//! wire, the memory budget of parallel parts, payloads in pieces and create-only copies
//! (against local-s3).

extern crate object_store_014 as object_store;

mod support;

use std::error::Error as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::try_join_all;
use object_store::path::Path;
use object_store::{
    Attribute, Attributes, Error, GetOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions,
    TagSet,
};
use s3_wire_object_store::S3WireStore;
use support::fault::{FaultServer, Recorded, Reply};

const UPLOAD_ID: &str = "UPLOAD-1";

/// A store of bucket `bucket` on `server`.
fn store_on(server: &FaultServer, max_attempts: u32) -> S3WireStore {
    S3WireStore::new(
        server.client(max_attempts),
        s3_wire_tokio::bucket("bucket").unwrap(),
    )
}

/// Answers the multipart requests of one upload: create, parts (after `part_delay`), abort.
fn multipart_server(part_delay: Duration) -> FaultServer {
    FaultServer::start(move |request: &Recorded| {
        if request.method == http::Method::POST && request.query_has("uploads") {
            Reply::new(200).body(format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><InitiateMultipartUploadResult>\
                 <Bucket>bucket</Bucket><Key>key</Key><UploadId>{UPLOAD_ID}</UploadId>\
                 </InitiateMultipartUploadResult>"
            ))
        } else if request.method == http::Method::PUT && request.query_has("partNumber") {
            Reply::new(200)
                .header("etag", "\"part-etag\"")
                .after(part_delay)
        } else if request.method == http::Method::DELETE && request.query_has("uploadId") {
            Reply::new(204)
        } else {
            Reply::s3_error(400, "UnexpectedRequest")
        }
    })
}

fn aborts(server: &FaultServer) -> Vec<Recorded> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.method == http::Method::DELETE)
        .collect()
}

/// Waits up to `limit` for the abort request.
async fn abort_within(server: &FaultServer, limit: Duration) -> Option<Recorded> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Some(abort) = aborts(server).pop() {
            return Some(abort);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_an_unfinished_upload_aborts_it() {
    let server = multipart_server(Duration::ZERO);
    let store = store_on(&server, 2);
    let mut upload = store.put_multipart(&Path::from("key")).await.unwrap();
    upload
        .put_part(Bytes::from_static(b"part one").into())
        .await
        .unwrap();
    drop(upload);

    let abort = abort_within(&server, Duration::from_secs(5))
        .await
        .expect("the dropped upload is aborted");
    assert!(abort.target.starts_with("/bucket/key?"), "{}", abort.target);
    assert!(
        abort.target.contains(&format!("uploadId={UPLOAD_ID}")),
        "{}",
        abort.target
    );
    assert_eq!(aborts(&server).len(), 1, "one abort");
    let completions = server
        .requests()
        .into_iter()
        .filter(|r| r.method == http::Method::POST && r.query_has("uploadId"))
        .count();
    assert_eq!(completions, 0, "a dropped upload is never completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_an_upload_stops_its_parts_in_flight_and_aborts_at_once() {
    // The part would be answered after 30 s: the abort must not wait for it.
    let server = multipart_server(Duration::from_secs(30));
    let store = store_on(&server, 2);
    let mut upload = store.put_multipart(&Path::from("key")).await.unwrap();
    let part = upload.put_part(Bytes::from_static(b"slow part").into());
    // The part's task runs whether or not its future is polled: wait until it is sent.
    let started = Instant::now();
    while !server.requests().iter().any(|r| r.query_has("partNumber")) {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the part was sent"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(upload);
    abort_within(&server, Duration::from_secs(5))
        .await
        .expect("aborted without waiting for the part in flight");
    let error = part.await.unwrap_err();
    assert!(error.to_string().contains("stopped"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_sends_the_abort_and_ends_the_upload() {
    let server = multipart_server(Duration::ZERO);
    let store = store_on(&server, 2);
    let mut upload = store.put_multipart(&Path::from("key")).await.unwrap();
    upload
        .put_part(Bytes::from_static(b"part").into())
        .await
        .unwrap();
    upload.abort().await.unwrap();
    assert_eq!(aborts(&server).len(), 1);
    drop(upload);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(aborts(&server).len(), 1, "no second abort on drop");
}

/// A store whose every request is answered with `reply`.
fn answering(reply: Reply) -> (FaultServer, S3WireStore) {
    let server = FaultServer::start(move |_| reply.clone());
    let store = store_on(&server, 2);
    (server, store)
}

/// The s3-wire error behind an `object_store` error.
fn wire_error(error: &Error) -> &s3_wire_tokio::Error {
    error
        .source()
        .and_then(|source| source.downcast_ref::<s3_wire_tokio::Error>())
        .unwrap_or_else(|| panic!("no s3-wire error behind {error:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_keep_their_kind_and_the_s3_wire_error_as_source() {
    let path = Path::from("key");
    let get = |store: S3WireStore| {
        let path = path.clone();
        async move {
            store
                .get_opts(&path, GetOptions::default())
                .await
                .unwrap_err()
        }
    };

    let (_server, store) = answering(Reply::s3_error(404, "NoSuchKey"));
    let error = get(store).await;
    assert!(
        matches!(error, Error::NotFound { ref path, .. } if path == "key"),
        "{error:?}"
    );
    assert_eq!(wire_error(&error).request_id(), Some("REQ-FAULT-1"));

    let (_server, store) = answering(Reply::s3_error(412, "PreconditionFailed"));
    assert!(matches!(get(store).await, Error::Precondition { .. }));

    let (_server, store) = answering(Reply::new(304));
    assert!(matches!(get(store).await, Error::NotModified { .. }));

    let (_server, store) = answering(Reply::s3_error(403, "AccessDenied"));
    assert!(matches!(get(store).await, Error::PermissionDenied { .. }));

    let (_server, store) = answering(Reply::s3_error(403, "SignatureDoesNotMatch"));
    assert!(matches!(get(store).await, Error::Unauthenticated { .. }));

    let (_server, store) = answering(Reply::s3_error(501, "NotImplemented"));
    let error = get(store).await;
    assert!(
        matches!(error, Error::NotImplemented { ref operation, .. } if operation.contains("GetObject")),
        "{error:?}"
    );

    // Retried (2 attempts allowed), then Generic with the attempts and the S3 code.
    let (server, store) = answering(Reply::s3_error(500, "InternalError"));
    let error = get(store).await;
    assert!(
        matches!(
            error,
            Error::Generic {
                store: "S3Wire",
                ..
            }
        ),
        "{error:?}"
    );
    let wire = wire_error(&error);
    assert_eq!(wire.attempts(), 2);
    assert_eq!(wire.service_error().unwrap().code, "InternalError");
    assert_eq!(server.requests().len(), 2);

    // A create-only put that finds an object: AlreadyExists.
    let (server, store) = answering(Reply::s3_error(412, "PreconditionFailed"));
    let error = store
        .put_opts(&path, "new".into(), PutMode::Create.into())
        .await
        .unwrap_err();
    assert!(matches!(error, Error::AlreadyExists { .. }), "{error:?}");
    assert_eq!(server.requests()[0].header("if-none-match"), Some("*"));

    // An update of a missing object: a failed precondition, as object_store defines it.
    let (server, store) = answering(Reply::s3_error(404, "NoSuchKey"));
    let version = object_store::UpdateVersion {
        e_tag: Some("\"v1\"".into()),
        version: None,
    };
    let error = store
        .put_opts(&path, "new".into(), PutMode::Update(version).into())
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Precondition { .. }), "{error:?}");
    assert_eq!(server.requests()[0].header("if-match"), Some("\"v1\""));
}

/// Garage answers a suffix range on an empty object with `206` and
/// `Content-Range: bytes 0-18446744073709551615/0`. An empty object is an empty body, so the
/// caller (parquet reading a footer) gets no bytes and decides, as with object_store's own
/// S3 backend, instead of a malformed-response error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suffix_range_of_an_empty_object_is_empty_whatever_its_content_range_says() {
    let (server, store) = answering(
        Reply::new(206)
            .header("content-range", "bytes 0-18446744073709551615/0")
            .header("last-modified", "Wed, 02 Dec 2026 10:00:00 GMT")
            .header("etag", "\"d41d8cd98f00b204e9800998ecf8427e\""),
    );
    let options = GetOptions {
        range: Some(object_store::GetRange::Suffix(8)),
        ..GetOptions::default()
    };
    let got = store
        .get_opts(&Path::from("empty"), options)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!((got.meta.size, got.range.clone()), (0, 0..0));
    assert!(got.bytes().await.unwrap().is_empty());
    assert_eq!(server.requests()[0].header("range"), Some("bytes=-8"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attributes_tags_and_a_checksum_go_with_a_put() {
    let server = FaultServer::start(|_| Reply::new(200).header("etag", "\"e1\""));
    let store = store_on(&server, 1);
    let mut tags = TagSet::default();
    tags.push("team", "data eng");
    tags.push("tier", "gold");
    let options = PutOptions {
        tags,
        attributes: Attributes::from_iter([
            (Attribute::ContentType, "text/csv"),
            (Attribute::Metadata("owner".into()), "reports"),
        ]),
        ..Default::default()
    };
    let stored = store
        .put_opts(&Path::from("a/b.csv"), "x,y\n".into(), options)
        .await
        .unwrap();
    assert_eq!(stored.e_tag.as_deref(), Some("\"e1\""));
    let put = &server.requests()[0];
    assert_eq!(put.target, "/bucket/a/b.csv");
    assert_eq!(put.header("content-type"), Some("text/csv"));
    assert_eq!(put.header("x-amz-meta-owner"), Some("reports"));
    assert_eq!(
        put.header("x-amz-tagging"),
        Some("team=data%20eng&tier=gold")
    );
    assert!(
        put.header("x-amz-checksum-crc32").is_some(),
        "{:?}",
        put.headers
    );
    assert_eq!(put.body.as_ref(), b"x,y\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_parts_stay_within_the_clients_memory_budget() {
    const MIB: u64 = 1 << 20;
    let server = support::local_s3().await;
    server.create_bucket("budget").await;
    // Room for two 5 MiB parts at once, not three.
    let client = s3_wire_tokio::Client::builder()
        .endpoint(&server.endpoint)
        .region(&server.region)
        .static_credentials(&server.access_key, &server.secret_key, None)
        .transfer_memory(12 * MIB)
        .build()
        .unwrap();
    let store = S3WireStore::new(client.clone(), s3_wire_tokio::bucket("budget").unwrap())
        .with_url_encoded_listings(false);
    let parts: Vec<Bytes> = (0..6u8)
        .map(|i| Bytes::from(vec![i; 5 * MIB as usize]))
        .collect();

    let mut upload = store.put_multipart(&Path::from("big")).await.unwrap();
    let started: Vec<_> = parts
        .iter()
        .map(|p| upload.put_part(p.clone().into()))
        .collect();
    try_join_all(started).await.unwrap();
    upload.complete().await.unwrap();

    let usage = client.transfer_memory();
    assert!(usage.high_water <= 12 * MIB, "{usage:?}");
    assert!(
        usage.high_water >= 10 * MIB,
        "two parts were in flight at once: {usage:?}"
    );
    assert_eq!(usage.in_use, 0);
    let stored = store
        .get(&Path::from("big"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(stored, parts.concat());
}

/// A payload in pieces, as DataFusion's writers hand it over, is stored exactly through a
/// put and through the parts of a multipart upload. It is sent as it came, never joined:
/// local-s3 checks the signature's SHA-256 and the CRC32 computed over the pieces in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payloads_in_pieces_are_stored_exactly() {
    const MIB: usize = 1 << 20;
    let server = support::local_s3().await;
    let store = server.s3_wire("pieces", false).await;
    // Uneven pieces, one of them past what is hashed on the runtime's thread.
    let in_pieces = |seed: u8, len: usize| -> (Vec<u8>, object_store::PutPayload) {
        let data: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(seed)).collect();
        let whole = Bytes::from(data.clone());
        let cuts = [0..1, 1..300 * 1024, 300 * 1024..len / 2, len / 2..len];
        (data, cuts.into_iter().map(|cut| whole.slice(cut)).collect())
    };
    let read = |path: &'static str| {
        let store = &store;
        async move {
            let got = store.get(&Path::from(path)).await.unwrap();
            got.bytes().await.unwrap()
        }
    };

    let (data, payload) = in_pieces(7, MIB + 3);
    assert_eq!(payload.as_ref().len(), 4);
    store.put(&Path::from("put"), payload).await.unwrap();
    assert_eq!(read("put").await, data);

    let mut upload = store.put_multipart(&Path::from("parts")).await.unwrap();
    let (first, payload) = in_pieces(11, 5 * MIB + 1);
    upload.put_part(payload).await.unwrap();
    let (second, payload) = in_pieces(13, MIB);
    upload.put_part(payload).await.unwrap();
    upload.complete().await.unwrap();
    assert_eq!(read("parts").await, [first, second].concat());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_only_copy_keeps_the_description_and_refuses_to_overwrite() {
    let server = support::local_s3().await;
    let store = Arc::new(server.s3_wire("copies", false).await);
    let source = Path::from("source.csv");
    let attributes = Attributes::from_iter([
        (Attribute::ContentType, "text/csv"),
        (Attribute::Metadata("owner".into()), "reports"),
    ]);
    store
        .put_opts(&source, "a,b\n".into(), attributes.clone().into())
        .await
        .unwrap();

    let copy = Path::from("copies/first.csv");
    store.copy_if_not_exists(&source, &copy).await.unwrap();
    let got = store.get(&copy).await.unwrap();
    assert_eq!(got.attributes, attributes);
    assert_eq!(got.bytes().await.unwrap().as_ref(), b"a,b\n");

    let error = store.copy_if_not_exists(&source, &copy).await.unwrap_err();
    assert!(matches!(error, Error::AlreadyExists { .. }), "{error:?}");

    // An empty source has no range to copy: written as an empty create-only object.
    let empty = Path::from("empty");
    store.put(&empty, Bytes::new().into()).await.unwrap();
    let empty_copy = Path::from("copies/empty");
    store.copy_if_not_exists(&empty, &empty_copy).await.unwrap();
    assert_eq!(store.head(&empty_copy).await.unwrap().size, 0);
    let error = store
        .copy_if_not_exists(&empty, &empty_copy)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::AlreadyExists { .. }), "{error:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_ranges_are_coalesced_and_cut_exactly() {
    let server = support::local_s3().await;
    let store = server.s3_wire("ranges", false).await;
    let data: Bytes = (0..=255u8).cycle().take(100_000).collect();
    let path = Path::from("data.bin");
    store.put(&path, data.clone().into()).await.unwrap();
    let ranges = [0..10, 5..20, 50_000..50_001, 99_990..100_000];
    let got = store.get_ranges(&path, &ranges).await.unwrap();
    for (range, bytes) in ranges.iter().zip(got) {
        assert_eq!(bytes, data.slice(range.start as usize..range.end as usize));
    }
}

/// `from_env` reads object_store's own variables for anonymous access and Requester Pays,
/// and refuses `AWS_S3_EXPRESS` for a name that is not a directory bucket, and bad values.
#[tokio::test]
async fn from_env_takes_skip_signature_request_payer_and_s3_express() {
    use s3_wire_tokio::credentials::MapEnv;
    let server = FaultServer::start(|_| {
        Reply::new(200)
            .header("etag", "\"e1\"")
            .header("last-modified", "Wed, 02 Dec 2026 10:00:00 GMT")
            .body("public bytes")
    });
    let home = tempfile::tempdir().unwrap();
    let env = |vars: &[(&str, &str)]| {
        let mut env = MapEnv::new()
            .with_home(home.path())
            .with_var("AWS_ENDPOINT_URL", server.endpoint())
            .with_var("AWS_REGION", "us-east-1")
            .with_var("AWS_EC2_METADATA_DISABLED", "true");
        for (name, value) in vars {
            env = env.with_var(*name, *value);
        }
        Arc::new(env)
    };
    // No credentials anywhere: an anonymous store still reads.
    let store = S3WireStore::from_env_with(
        "bucket",
        env(&[
            ("AWS_SKIP_SIGNATURE", "true"),
            ("AWS_REQUEST_PAYER", "TRUE"),
        ]),
    )
    .unwrap();
    let body = store
        .get(&Path::from("open/data.csv"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(body, "public bytes");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].header("authorization").is_none(),
        "{:?}",
        requests[0]
    );
    assert!(
        !requests[0].target.contains("X-Amz-"),
        "{}",
        requests[0].target
    );
    assert_eq!(requests[0].header("x-amz-request-payer"), Some("requester"));

    for (vars, fragment) in [
        (vec![("AWS_S3_EXPRESS", "true")], "not a directory bucket"),
        (
            vec![("AWS_SKIP_SIGNATURE", "sometimes")],
            "must be true or false",
        ),
    ] {
        let Err(error) = S3WireStore::from_env_with("bucket", env(&vars)) else {
            panic!("{vars:?} accepted");
        };
        assert!(error.to_string().contains(fragment), "{error}");
    }
    assert!(
        S3WireStore::from_env_with(
            "data--usw2-az1--x-s3",
            env(&[("AWS_S3_EXPRESS", "true"), ("AWS_SKIP_SIGNATURE", "1")])
        )
        .is_ok()
    );
}

/// The AWS SDKs' S3 addressing variables configure the store's client like any other
/// (what each does on the wire: s3-wire-tokio's tests of AWS's endpoint cases).
#[test]
fn from_env_takes_the_sdks_addressing_variables() {
    use s3_wire_tokio::credentials::MapEnv;
    let home = tempfile::tempdir().unwrap();
    let store = |vars: &[(&str, &str)], bucket: &str| {
        let mut env = MapEnv::new()
            .with_home(home.path())
            .with_var("AWS_REGION", "us-east-1")
            .with_var("AWS_ACCESS_KEY_ID", "AKID")
            .with_var("AWS_SECRET_ACCESS_KEY", "secret")
            .with_var("AWS_EC2_METADATA_DISABLED", "true");
        for (name, value) in vars {
            env = env.with_var(*name, *value);
        }
        S3WireStore::from_env_with(bucket, Arc::new(env))
    };
    let plain = store(&[], "bucket").unwrap();
    assert_eq!(
        plain.client().endpoint().host(),
        "s3.us-east-1.amazonaws.com"
    );
    assert!(plain.client().endpoint().s3_express_session_auth());
    let legacy = store(
        &[("AWS_S3_US_EAST_1_REGIONAL_ENDPOINT", "legacy")],
        "bucket",
    )
    .unwrap();
    assert_eq!(legacy.client().endpoint().host(), "s3.amazonaws.com");
    let sessionless = store(
        &[("AWS_S3_DISABLE_EXPRESS_SESSION_AUTH", "true")],
        "data--usw2-az1--x-s3",
    )
    .unwrap();
    assert!(!sessionless.client().endpoint().s3_express_session_auth());
    let mrap = "arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap";
    let refused = store(
        &[("AWS_S3_DISABLE_MULTIREGION_ACCESS_POINTS", "true")],
        mrap,
    )
    .unwrap()
    .client()
    .endpoint()
    .uri(Some(&s3_wire_tokio::bucket(mrap).unwrap()), None, "")
    .unwrap_err();
    assert!(refused.to_string().contains("disabled"), "{refused}");
    let Err(error) = store(
        &[("AWS_S3_US_EAST_1_REGIONAL_ENDPOINT", "global")],
        "bucket",
    ) else {
        panic!("accepted");
    };
    assert!(error.to_string().contains("legacy or regional"), "{error}");
}

/// A store whose provider profile says it ignores conditional writes (moto's): every
/// conditional write an engine asks for (`PutMode::Create`, `PutMode::Update`, a create-only
/// copy, a create-only rename) is refused before anything is sent, as `NotImplemented`
/// naming the store and the condition; never written unconditionally.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditional_writes_a_store_would_ignore_are_refused_not_emulated() {
    // The source of the copies: a 5-byte object.
    let server = FaultServer::start(|_| {
        Reply::new(200)
            .header("etag", "\"e\"")
            .header("content-length", "5")
            .header("last-modified", "Wed, 02 Dec 2026 10:00:00 GMT")
    });
    let client = s3_wire_tokio::Client::builder()
        .endpoint(server.endpoint())
        .region("us-east-1")
        .static_credentials("AKID", "secret", None)
        .provider(s3_wire_tokio::s3_ops::Provider::Moto)
        .build()
        .unwrap();
    let store = S3WireStore::new(client, s3_wire_tokio::bucket("bucket").unwrap());
    let path = Path::from("_delta_log/00000000000000000001.json");
    let update = PutMode::Update(object_store::UpdateVersion {
        e_tag: Some("\"e\"".into()),
        version: None,
    });
    for (what, mode) in [("If-None-Match", PutMode::Create), ("If-Match", update)] {
        let error = store
            .put_opts(
                &path,
                Bytes::from_static(b"{}").into(),
                PutOptions::from(mode),
            )
            .await
            .unwrap_err();
        let Error::NotImplemented {
            operation,
            implementer,
        } = &error
        else {
            panic!("{error:?}");
        };
        assert!(operation.contains(what), "{operation}");
        assert!(
            implementer.contains("S3Wire") && implementer.contains("moto"),
            "{implementer}"
        );
    }
    let from = Path::from("a");
    for result in [
        store.copy_if_not_exists(&from, &path).await,
        store.rename_if_not_exists(&from, &path).await,
    ] {
        let error = result.unwrap_err();
        assert!(matches!(error, Error::NotImplemented { .. }), "{error:?}");
    }
    let writes: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|request| request.method != http::Method::HEAD)
        .collect();
    assert!(writes.is_empty(), "nothing is written: {writes:?}");
}

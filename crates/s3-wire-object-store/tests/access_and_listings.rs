//! S3WireStore where the bucket or the store is unusual: a directory bucket (S3 Express One
//! Zone) through the loopback TLS gateway of s3-wire-tokio's tests, which answers for AWS's
//! host names, verifies every signature and issues session keys, in front of local-s3; and
//! a store that serves only ListObjects (version 1), listed through local-s3.

extern crate object_store_014 as object_store;

mod support;

mod gateway;

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::TryStreamExt as _;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use s3_wire_object_store::S3WireStore;
use s3_wire_tokio::s3_ops::Provider;
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;

use gateway::aws_gateway::{Authenticated, Backend, Gateway, Route};

const DIRECTORY: &str = "data--usw2-az1--x-s3";
const ZONAL: &str = "data--usw2-az1--x-s3.s3express-usw2-az1.us-west-2.amazonaws.com";

/// Every operation object_store users make, on a directory bucket: the store signs zonal
/// requests with one session of the bucket (CreateSession once), lists it (a prefix that
/// ends in `/`, as directory buckets demand, whatever the caller's path), reads ranges,
/// copies, uploads in parts and deletes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3wire_store_round_trips_on_a_directory_bucket() {
    let backend = support::local_s3().await;
    let backing = format!("{DIRECTORY}-backing").replace("--", "-");
    let client = s3_wire_tokio::Client::builder()
        .endpoint(backend.endpoint.clone())
        .region(backend.region.clone())
        .static_credentials(&backend.access_key, &backend.secret_key, None)
        .build()
        .unwrap();
    client
        .send(CreateBucket::new(s3_wire_tokio::bucket(&backing).unwrap()))
        .await
        .unwrap();
    let route = Route {
        backend_bucket: Some(backing.clone()),
        ..Route::zonal(DIRECTORY, "us-west-2")
    };
    let gateway = tokio::task::spawn_blocking(move || {
        Gateway::start(
            &[(ZONAL, route)],
            Backend {
                endpoint: backend.endpoint.clone(),
                access_key: backend.access_key.clone(),
                secret_key: backend.secret_key.clone(),
                region: backend.region.clone(),
            },
        )
    })
    .await
    .unwrap();
    let client = gateway.client_builder("us-west-2").build().unwrap();
    let store = S3WireStore::new(client, s3_wire_tokio::bucket(DIRECTORY).unwrap());

    let a = Path::from("dir/a.txt");
    store
        .put(&a, PutPayload::from_static(b"alpha"))
        .await
        .unwrap();
    store
        .put(
            &Path::from("dir/sub/b.txt"),
            PutPayload::from_static(b"bravo"),
        )
        .await
        .unwrap();
    assert_eq!(
        store.get(&a).await.unwrap().bytes().await.unwrap(),
        Bytes::from_static(b"alpha")
    );
    assert_eq!(
        store.get_range(&a, 1..4).await.unwrap(),
        Bytes::from_static(b"lph")
    );
    assert_eq!(store.head(&a).await.unwrap().size, 5);
    let mut listed: Vec<String> = store
        .list(Some(&Path::from("dir")))
        .map_ok(|meta| meta.location.to_string())
        .try_collect()
        .await
        .unwrap();
    listed.sort();
    assert_eq!(listed, ["dir/a.txt", "dir/sub/b.txt"]);
    let level = store
        .list_with_delimiter(Some(&Path::from("dir")))
        .await
        .unwrap();
    assert_eq!(level.common_prefixes, [Path::from("dir/sub")], "{level:?}");
    store.copy(&a, &Path::from("dir/copy.txt")).await.unwrap();
    let large: Vec<u8> = (0..(11u32 << 20)).map(|i| (i % 251) as u8).collect();
    let mut upload = store
        .put_multipart(&Path::from("dir/large.bin"))
        .await
        .unwrap();
    for part in large.chunks(6 << 20) {
        upload
            .put_part(PutPayload::from(part.to_vec()))
            .await
            .unwrap();
    }
    upload.complete().await.unwrap();
    assert_eq!(
        store
            .get(&Path::from("dir/large.bin"))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap()
            .len(),
        large.len()
    );
    store.delete(&a).await.unwrap();
    assert!(store.head(&a).await.is_err());

    // One session for the bucket; every zonal request but CreateSession and the copy
    // (which S3 signs with IAM credentials) signed with it; nothing refused.
    assert_eq!(
        gateway.sessions_created(),
        [(DIRECTORY.to_owned(), "ReadWrite".to_owned())]
    );
    let seen = gateway.seen();
    let (last, before) = seen.split_last().unwrap();
    assert_eq!(
        (last.method.as_str(), last.status),
        ("HEAD", 404),
        "{last:?}"
    );
    for request in before.iter().chain([last]) {
        assert!(
            request.status < 400 || std::ptr::eq(request, last),
            "{request:?}"
        );
        let iam = request.target.ends_with("?session")
            || request.headers.contains_key("x-amz-copy-source");
        match &request.authenticated {
            Authenticated::Session { service, .. } if !iam => assert_eq!(service, "s3express"),
            Authenticated::Iam { service, .. } if iam => assert_eq!(service, "s3express"),
            other => panic!("{other:?} for {} {}", request.method, request.target),
        }
    }
    assert!(seen.len() >= 10, "{}", seen.len());
}

/// A store whose profile says it serves only ListObjects (version 1): `list` and
/// `list_with_delimiter` go through version 1 (no `list-type=2` sent) and find what
/// version 2 finds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3wire_store_lists_a_version_1_store_with_list_objects() {
    #[derive(Debug, Default, Clone)]
    struct Operations(Arc<Mutex<Vec<&'static str>>>);
    impl s3_wire_tokio::RequestHook for Operations {
        fn on_attempt(&self, attempt: &s3_wire_tokio::AttemptRecord<'_>) {
            self.0.lock().unwrap().push(attempt.operation);
        }
    }
    let server = support::local_s3().await;
    let operations = Operations::default();
    let mut quirks = Provider::Generic.quirks();
    quirks.list_objects_v2 = false;
    let client = s3_wire_tokio::Client::builder()
        .endpoint(server.endpoint.clone())
        .region(server.region.clone())
        .static_credentials(&server.access_key, &server.secret_key, None)
        .provider_quirks(quirks)
        .request_hook(operations.clone())
        .build()
        .unwrap();
    client
        .send(CreateBucket::new(s3_wire_tokio::bucket("v1-list").unwrap()))
        .await
        .unwrap();
    let store = S3WireStore::new(client, s3_wire_tokio::bucket("v1-list").unwrap());
    for name in ["a/1", "a/2", "a/b/3", "c"] {
        store
            .put(&Path::from(name), PutPayload::from_static(b"x"))
            .await
            .unwrap();
    }
    let mut all: Vec<String> = store
        .list(None)
        .map_ok(|meta| meta.location.to_string())
        .try_collect()
        .await
        .unwrap();
    all.sort();
    assert_eq!(all, ["a/1", "a/2", "a/b/3", "c"]);
    let level = store
        .list_with_delimiter(Some(&Path::from("a")))
        .await
        .unwrap();
    let objects: Vec<String> = level
        .objects
        .iter()
        .map(|o| o.location.to_string())
        .collect();
    assert_eq!(objects, ["a/1", "a/2"]);
    assert_eq!(level.common_prefixes, [Path::from("a/b")]);
    let operations = operations.0.lock().unwrap();
    assert!(!operations.contains(&"ListObjectsV2"), "{operations:?}");
    assert!(
        operations.iter().filter(|o| **o == "ListObjects").count() >= 2,
        "{operations:?}"
    );
}

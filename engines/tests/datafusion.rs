//! DataFusion 55 on S3WireStore, on local-s3 and on moto: a partitioned parquet table written
//! with `COPY ... PARTITIONED BY`, CSV and NDJSON tables beside it, external tables over
//! them, and queries (filter, aggregate, joins, `ORDER BY ... LIMIT`) whose results must equal
//! the same queries over the same data held in memory (`MemTable`). A request hook on the
//! store's client counts what went through s3-wire; the bucket's URL resolves to S3WireStore.
//! Bad input ends in a clear error through the engine.

mod support;

use std::sync::Arc;

use datafusion::prelude::SessionContext;
use s3_wire_engines::{RequestCounter, Tables, counted_store, queries, register, run};
use support::Server;

const BUCKET: &str = "engines";

/// Runs the whole round trip on `server`; returns what the hook counted.
async fn round_trip(server: &Server) {
    s3_wire_engines::install_crypto_provider();
    server.create_bucket(BUCKET).await;
    let counter = RequestCounter::default();
    let store = counted_store(BUCKET, server.shared_env(), &counter).expect("store");
    let ctx = SessionContext::new();
    register(&ctx, BUCKET, Arc::new(store));
    let tables = Tables::generate(20_000, 500);
    tables.register_in_memory(&ctx).unwrap();

    for statement in s3_wire_engines::write_statements(BUCKET, "round-trip") {
        run(&ctx, &statement)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
    let written = counter.seen();
    assert!(
        written.of("PutObject") + written.of("UploadPart") >= 4 + 2,
        "four orders partitions, customers and regions are written through s3-wire: {written:?}"
    );
    for statement in s3_wire_engines::table_statements(BUCKET, "round-trip") {
        run(&ctx, &statement)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
    // Hive partitions: one directory per region.
    let partitions = run(
        &ctx,
        "SELECT region, count(*) AS n FROM orders GROUP BY region ORDER BY region",
    )
    .await
    .unwrap();
    assert_eq!(
        partitions,
        run(
            &ctx,
            "SELECT region, count(*) AS n FROM orders_mem GROUP BY region ORDER BY region"
        )
        .await
        .unwrap()
    );

    let before = counter.seen();
    for ((name, in_s3), (_, in_memory)) in queries("").into_iter().zip(queries("_mem")) {
        let got = run(&ctx, &in_s3)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected = run(&ctx, &in_memory).await.unwrap();
        assert_eq!(got, expected, "{name} on {}", server.name);
        assert!(got.lines().count() > 4, "{name} returned rows:\n{got}");
    }
    let read = counter.seen();
    assert!(read.of("GetObject") > before.of("GetObject"), "{read:?}");
    assert!(read.bytes_received > before.bytes_received, "{read:?}");
    assert!(read.of("ListObjectsV2") > 0, "{read:?}");
    // The bucket's URL resolves to the store registered: nothing else could have answered.
    let resolved = ctx
        .runtime_env()
        .object_store(
            datafusion::execution::object_store::ObjectStoreUrl::parse(format!("s3://{BUCKET}"))
                .unwrap(),
        )
        .unwrap();
    assert_eq!(resolved.to_string(), format!("S3WireStore({BUCKET})"));
    eprintln!(
        "{} requests through s3-wire on {}: {read:?}",
        read.requests(),
        server.name
    );
}

/// Bad input through the engine: each ends in a clear error, and a failed write leaves
/// nothing visible.
async fn bad_input(server: &Server) {
    s3_wire_engines::install_crypto_provider();
    server.create_bucket(BUCKET).await;
    let counter = RequestCounter::default();
    let ctx = SessionContext::new();
    register(
        &ctx,
        BUCKET,
        Arc::new(counted_store(BUCKET, server.shared_env(), &counter).unwrap()),
    );
    Tables::generate(100, 10).register_in_memory(&ctx).unwrap();

    // A location outside the registered bucket: DataFusion finds no store for it.
    let error = run(
        &ctx,
        "CREATE EXTERNAL TABLE t STORED AS PARQUET LOCATION 's3://elsewhere/t/'",
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(error.contains("s3://elsewhere"), "{error}");

    // A bucket that does not exist, behind a registered store.
    let missing = "no-such-bucket-here";
    register(
        &ctx,
        missing,
        Arc::new(counted_store(missing, server.shared_env(), &counter).unwrap()),
    );
    let error = run(
        &ctx,
        &format!("CREATE EXTERNAL TABLE m STORED AS PARQUET LOCATION 's3://{missing}/t/'"),
    )
    .await;
    if server.name == "moto" {
        let error = error.unwrap_err().to_string();
        assert!(error.contains("NoSuchBucket"), "{error}");
    } // local-s3 lists a missing bucket as empty (see docs/compatibility.md).

    // Wrong credentials: the store's error, through the engine, names the refusal.
    let wrong = server
        .env()
        .with_var("AWS_SECRET_ACCESS_KEY", "wrong-secret");
    let ctx_wrong = SessionContext::new();
    register(
        &ctx_wrong,
        BUCKET,
        Arc::new(counted_store(BUCKET, Arc::new(wrong), &counter).unwrap()),
    );
    Tables::generate(100, 10)
        .register_in_memory(&ctx_wrong)
        .unwrap();
    let result = run(
        &ctx_wrong,
        &format!("COPY orders_mem TO 's3://{BUCKET}/denied/' STORED AS PARQUET"),
    )
    .await;
    if server.name == "local-s3" {
        // moto verifies no signature.
        let error = result.unwrap_err().to_string();
        assert!(error.contains("SignatureDoesNotMatch"), "{error}");
        let listed = server
            .client()
            .list_objects_v2(
                s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2::new(
                    s3_wire_tokio::bucket(BUCKET).unwrap(),
                )
                .prefix("denied/"),
            )
            .await
            .unwrap();
        assert!(
            listed.result.contents.is_empty(),
            "nothing of the refused COPY is visible"
        );
    }
}

/// The network fails mid-`COPY`: every request writing under `cut/` loses its connection
/// part way (retried by s3-wire, failing each time). The `COPY` ends in an error naming the
/// failure, and nothing of it is visible in the bucket (moto stores an empty object for a
/// cut PutObject: its deviation, asserted as such).
async fn connection_cut_mid_copy(server: &Server) {
    s3_wire_engines::install_crypto_provider();
    server.create_bucket(BUCKET).await;
    let (endpoint, cuts) = support::cutting_proxy(&server.endpoint, "PUT /engines/cut/").await;
    let env = server.env().with_var("AWS_ENDPOINT_URL", &endpoint);
    let counter = RequestCounter::default();
    let ctx = SessionContext::new();
    register(
        &ctx,
        BUCKET,
        Arc::new(counted_store(BUCKET, Arc::new(env), &counter).unwrap()),
    );
    Tables::generate(1_000, 10)
        .register_in_memory(&ctx)
        .unwrap();
    let error = run(
        &ctx,
        &format!("COPY orders_mem TO 's3://{BUCKET}/cut/orders/' STORED AS PARQUET"),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("S3Wire") && error.contains("connection was closed"),
        "{error}"
    );
    assert!(
        cuts.load(std::sync::atomic::Ordering::Relaxed) >= 2,
        "retried, cut each time"
    );
    let listed = server
        .client()
        .list_objects_v2(
            s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2::new(
                s3_wire_tokio::bucket(BUCKET).unwrap(),
            )
            .prefix("cut/"),
        )
        .await
        .unwrap();
    if server.name == "moto" {
        // moto's deviation: a PutObject whose connection is cut after its head stores an
        // empty object (S3 stores nothing of a request it did not receive whole). Nothing
        // of the parquet written is visible.
        assert!(
            listed.result.contents.iter().all(|object| object.size == 0),
            "{:?}",
            listed.result.contents
        );
    } else {
        assert!(
            listed.result.contents.is_empty(),
            "{:?}",
            listed.result.contents
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_cut_mid_copy_on_local_s3() {
    connection_cut_mid_copy(&support::local_s3().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_cut_mid_copy_on_moto() {
    connection_cut_mid_copy(&support::moto().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datafusion_on_local_s3() {
    round_trip(&support::local_s3().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datafusion_on_moto() {
    round_trip(&support::moto().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_on_local_s3() {
    bad_input(&support::local_s3().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_on_moto() {
    bad_input(&support::moto().await).await;
}

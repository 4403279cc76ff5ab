//! delta-rs (deltalake 1.1, without its DataFusion feature) on S3WireStore given as a custom
//! `Arc<dyn ObjectStore>`, on local-s3 and on moto: create a table, append twice, read the
//! latest version, version 0 and version 1, two writers racing for one commit (exactly one
//! wins: the version is written with `PutMode::Create`, `If-None-Match: *`; the loser
//! commits nothing), and a vacuum that removes the loser's orphaned data file. The race is
//! concurrent on moto; on local-s3, whose conditional PutObject is not atomic, the two
//! commits go in turn.

mod support;

use std::sync::Arc;

use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType as ArrowType, Field, Schema};
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use deltalake::kernel::transaction::CommitProperties;
use deltalake::kernel::{DataType, StructField};
use deltalake::operations::vacuum::VacuumMode;
use deltalake::writer::{DeltaWriter, RecordBatchWriter};
use deltalake::{DeltaTable, DeltaTableBuilder, ObjectStore};
use s3_wire_engines::{RequestCounter, counted_store, register};
use support::Server;
use url::Url;

const BUCKET: &str = "delta";

fn batch(first_id: i64, rows: i64) -> RecordBatch {
    let ids: Vec<i64> = (first_id..first_id + rows).collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, true),
            Field::new("amount", ArrowType::Int64, true),
            Field::new("region", ArrowType::Utf8, true),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(ids.iter().copied())),
            Arc::new(Int64Array::from_iter_values(ids.iter().map(|id| id * 3))),
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|id| ["emea", "apac"][(*id % 2) as usize]),
            )),
        ],
    )
    .unwrap()
}

/// The table at `url` on `store`, as of `version` (the newest if `None`).
async fn open(store: &Arc<dyn ObjectStore>, url: &Url, version: Option<u64>) -> DeltaTable {
    let mut builder = DeltaTableBuilder::from_url(url.clone())
        .unwrap()
        .with_storage_backend(store.clone(), url.clone());
    if let Some(version) = version {
        builder = builder.with_version(version);
    }
    builder.load().await.unwrap()
}

/// Rows and the sum of `amount` of the table's data files, read back with DataFusion through
/// the same store.
async fn contents(ctx: &SessionContext, table: &DeltaTable) -> (i64, i64) {
    let files: Vec<String> = table.get_file_uris().unwrap().collect();
    if files.is_empty() {
        return (0, 0);
    }
    let frame = ctx
        .read_parquet(files, ParquetReadOptions::default())
        .await
        .unwrap();
    let batches = frame
        .aggregate(
            vec![],
            vec![
                datafusion::functions_aggregate::count::count(datafusion::prelude::lit(1)),
                datafusion::functions_aggregate::sum::sum(datafusion::prelude::col("amount")),
            ],
        )
        .unwrap()
        .collect()
        .await
        .unwrap();
    let column = |i: usize| {
        batches[0]
            .column(i)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap()
            .value(0)
    };
    (column(0), column(1))
}

fn expected(ids: std::ops::Range<i64>) -> (i64, i64) {
    (ids.end - ids.start, ids.map(|id| id * 3).sum())
}

async fn append(table: &mut DeltaTable, rows: RecordBatch) -> u64 {
    let mut writer = RecordBatchWriter::for_table(table).unwrap();
    writer.write(rows).await.unwrap();
    writer.flush_and_commit(table).await.unwrap()
}

async fn delta_round_trip(server: &Server) {
    s3_wire_engines::install_crypto_provider();
    s3_wire_engines::delta::register_s3_log_store();
    server.create_bucket(BUCKET).await;
    let counter = RequestCounter::default();
    let store: Arc<dyn ObjectStore> =
        Arc::new(counted_store(BUCKET, server.shared_env(), &counter).unwrap());
    let ctx = SessionContext::new();
    register(&ctx, BUCKET, store.clone());
    let url = Url::parse(&format!("s3://{BUCKET}/tables/events/")).unwrap();

    let table = DeltaTableBuilder::from_url(url.clone())
        .unwrap()
        .with_storage_backend(store.clone(), url.clone())
        .build()
        .unwrap();
    let mut table = table
        .create()
        .with_table_name("events")
        .with_columns([
            StructField::new("id", DataType::LONG, true),
            StructField::new("amount", DataType::LONG, true),
            StructField::new("region", DataType::STRING, true),
        ])
        .await
        .unwrap();
    assert_eq!(table.version(), Some(0));
    assert_eq!(append(&mut table, batch(0, 1_000)).await, 1);
    assert_eq!(append(&mut table, batch(1_000, 500)).await, 2);

    let latest = open(&store, &url, None).await;
    assert_eq!(latest.version(), Some(2));
    assert_eq!(contents(&ctx, &latest).await, expected(0..1_500));
    let first = open(&store, &url, Some(0)).await;
    assert_eq!(
        (first.version(), contents(&ctx, &first).await),
        (Some(0), (0, 0))
    );
    let one = open(&store, &url, Some(1)).await;
    assert_eq!(contents(&ctx, &one).await, expected(0..1_000));

    // Two writers, both at version 2, race for version 3; neither retries.
    let mut tables = [
        open(&store, &url, None).await,
        open(&store, &url, None).await,
    ];
    let mut writers = Vec::new();
    for (first_id, table) in [10_000, 20_000].into_iter().zip(&tables) {
        let mut writer = RecordBatchWriter::for_table(table)
            .unwrap()
            .with_commit_properties(CommitProperties::default().with_max_retries(0));
        writer.write(batch(first_id, 100)).await.unwrap();
        writers.push(writer);
    }
    let [table_a, table_b] = &mut tables;
    let [writer_a, writer_b] = &mut writers[..] else {
        unreachable!()
    };
    let (a, b) = if server.name == "local-s3" {
        // s3s-fs evaluates `If-None-Match: *` but not atomically: two PutObjects racing for
        // one key both succeed (docs/compatibility.md). There the commits go in turn, which
        // still proves the loser is refused by the condition, not by timing.
        let a = writer_a.flush_and_commit(table_a).await;
        (a, writer_b.flush_and_commit(table_b).await)
    } else {
        tokio::join!(
            writer_a.flush_and_commit(table_a),
            writer_b.flush_and_commit(table_b)
        )
    };
    let (winner, loser_error) = match (a, b) {
        (Ok(version), Err(error)) => (10_000, (version, error)),
        (Err(error), Ok(version)) => (20_000, (version, error)),
        other => panic!(
            "exactly one writer must win version 3 on {}: {other:?}",
            server.name
        ),
    };
    let (version, error) = loser_error;
    assert_eq!(version, 3);
    // Without retries, the loser's commit fails outright (delta-rs: "Failed to commit
    // transaction: 0", the retries it was allowed).
    let message = error.to_string();
    assert!(
        message.contains("Failed to commit transaction"),
        "{message}"
    );

    let after_race = open(&store, &url, None).await;
    assert_eq!(after_race.version(), Some(3));
    let (rows, sum) = expected(0..1_500);
    let (won_rows, won_sum) = expected(winner..winner + 100);
    assert_eq!(
        contents(&ctx, &after_race).await,
        (rows + won_rows, sum + won_sum),
        "only the winner's rows are visible"
    );

    // The loser's data file is in the table's directory but in no version: a full vacuum
    // removes it and nothing else.
    let (_, metrics) = after_race
        .vacuum()
        .with_mode(VacuumMode::Full)
        .with_retention_period(chrono::Duration::zero())
        .with_enforce_retention_duration(false)
        .await
        .unwrap();
    assert_eq!(
        metrics.files_deleted.len(),
        1,
        "{:?}",
        metrics.files_deleted
    );
    let vacuumed = open(&store, &url, None).await;
    assert_eq!(
        contents(&ctx, &vacuumed).await,
        (rows + won_rows, sum + won_sum)
    );

    let seen = counter.seen();
    assert!(
        seen.of("PutObject") >= 5 && seen.of("GetObject") > 0,
        "{seen:?}"
    );
    eprintln!(
        "delta on {}: {} requests through s3-wire: {seen:?}",
        server.name,
        seen.requests()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delta_on_local_s3() {
    delta_round_trip(&support::local_s3().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delta_on_moto() {
    delta_round_trip(&support::moto().await).await;
}

//! DataFusion, Ballista and delta-rs on [`S3WireStore`]: what the examples, the tests, the
//! Ballista processes and the measurement share. Its own workspace and lockfile, so the
//! engines' builds stay out of the library's graph.
//!
//! The engines here (DataFusion 55, Ballista 55, deltalake 1.1) resolve object_store 0.13:
//! they take S3WireStore's `v0_13` implementation (feature `object-store-0-13`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::datasource::MemTable;
use datafusion::error::Result;
use datafusion::prelude::SessionContext;
use object_store::ObjectStore;
use s3_wire_object_store::S3WireStore;
use s3_wire_tokio::credentials::Env;
use s3_wire_tokio::{AttemptRecord, ClientBuilder, RequestHook};
use url::Url;

/// Counts every request attempt S3WireStore's client sends, by S3 operation.
#[derive(Debug, Clone, Default)]
pub struct RequestCounter {
    seen: Arc<Mutex<Seen>>,
}

/// What a [`RequestCounter`] has seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// Attempts per S3 operation (`GetObject`, `PutObject`, ...).
    pub operations: BTreeMap<&'static str, u64>,
    /// Response body bytes received, over all attempts.
    pub bytes_received: u64,
    /// Request body bytes sent, over all attempts.
    pub bytes_sent: u64,
}

impl Seen {
    /// Attempts of all operations.
    pub fn requests(&self) -> u64 {
        self.operations.values().sum()
    }

    /// Attempts of `operation`.
    pub fn of(&self, operation: &str) -> u64 {
        self.operations.get(operation).copied().unwrap_or(0)
    }
}

impl RequestCounter {
    /// What was counted so far.
    pub fn seen(&self) -> Seen {
        self.seen.lock().unwrap().clone()
    }
}

impl RequestHook for RequestCounter {
    fn on_attempt(&self, attempt: &AttemptRecord<'_>) {
        let mut seen = self.seen.lock().unwrap();
        *seen.operations.entry(attempt.operation).or_default() += 1;
        seen.bytes_received += attempt.bytes_received;
        seen.bytes_sent += attempt.bytes_sent;
    }
}

/// S3WireStore of `bucket` with a client from the standard AWS environment of `env`
/// (credentials, region, `AWS_ENDPOINT_URL`, profiles), every request counted by `counter`.
pub fn counted_store(
    bucket: &str,
    env: Arc<dyn Env>,
    counter: &RequestCounter,
) -> std::result::Result<S3WireStore, s3_wire_tokio::Error> {
    let client = ClientBuilder::from_env_with(env)
        .request_hook(counter.clone())
        .build()?;
    Ok(S3WireStore::new(client, s3_wire_tokio::bucket(bucket)?))
}

/// `s3://bucket` (the URL DataFusion and Ballista resolve a table location's store by).
pub fn bucket_url(bucket: &str) -> Url {
    Url::parse(&format!("s3://{bucket}")).expect("a bucket name is a URL host")
}

/// Registers `store` as the store of `s3://bucket` in `ctx`.
pub fn register(ctx: &SessionContext, bucket: &str, store: Arc<dyn ObjectStore>) {
    ctx.register_object_store(&bucket_url(bucket), store);
}

/// The tables the queries run over: `orders` (partitioned parquet), `customers` (CSV) and
/// `regions` (NDJSON), generated deterministically.
pub struct Tables {
    /// order_id, customer_id, region, amount (cents), day.
    pub orders: RecordBatch,
    /// customer_id, name, segment.
    pub customers: RecordBatch,
    /// region, manager.
    pub regions: RecordBatch,
}

const REGIONS: [&str; 4] = ["emea", "amer", "apac", "latam"];
const SEGMENTS: [&str; 3] = ["retail", "wholesale", "public"];

impl Tables {
    /// `orders` rows over `customers` customers (a linear congruential sequence: the same
    /// data on every run and machine).
    pub fn generate(orders: usize, customers: usize) -> Self {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 33
        };
        let mut columns = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for id in 0..orders as i64 {
            columns.0.push(id);
            columns.1.push((next() % customers as u64) as i64);
            columns.2.push(REGIONS[(next() % 4) as usize]);
            columns.3.push((next() % 100_000) as i64);
            columns.4.push(format!(
                "2026-{:02}-{:02}",
                1 + next() % 12,
                1 + next() % 28
            ));
        }
        let orders = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("order_id", DataType::Int64, false),
                Field::new("customer_id", DataType::Int64, false),
                Field::new("region", DataType::Utf8, false),
                Field::new("amount", DataType::Int64, false),
                Field::new("day", DataType::Utf8, false),
            ])),
            vec![
                Arc::new(Int64Array::from(columns.0)),
                Arc::new(Int64Array::from(columns.1)),
                Arc::new(StringArray::from(columns.2)),
                Arc::new(Int64Array::from(columns.3)),
                Arc::new(StringArray::from(columns.4)),
            ],
        )
        .expect("orders");
        let customers = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("customer_id", DataType::Int64, false),
                Field::new("name", DataType::Utf8, false),
                Field::new("segment", DataType::Utf8, false),
            ])),
            vec![
                Arc::new(Int64Array::from_iter_values(0..customers as i64)),
                Arc::new(StringArray::from_iter_values(
                    (0..customers).map(|c| format!("customer {c}")),
                )),
                Arc::new(StringArray::from_iter_values(
                    (0..customers).map(|c| SEGMENTS[c % SEGMENTS.len()]),
                )),
            ],
        )
        .expect("customers");
        let regions = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("region", DataType::Utf8, false),
                Field::new("manager", DataType::Utf8, false),
            ])),
            vec![
                Arc::new(StringArray::from_iter_values(REGIONS)),
                Arc::new(StringArray::from_iter_values(
                    REGIONS.iter().map(|r| format!("manager of {r}")),
                )),
            ],
        )
        .expect("regions");
        Self {
            orders,
            customers,
            regions,
        }
    }

    /// Registers the tables in memory (`MemTable`) as `<name>_mem`.
    pub fn register_in_memory(&self, ctx: &SessionContext) -> Result<()> {
        for (name, batch) in self.named() {
            let table = MemTable::try_new(batch.schema(), vec![vec![batch.clone()]])?;
            ctx.register_table(format!("{name}_mem"), Arc::new(table))?;
        }
        Ok(())
    }

    fn named(&self) -> [(&'static str, &RecordBatch); 3] {
        [
            ("orders", &self.orders),
            ("customers", &self.customers),
            ("regions", &self.regions),
        ]
    }
}

/// Writes the in-memory tables (see [`Tables::register_in_memory`]) under `s3://bucket/prefix/`:
/// `orders/` as parquet partitioned by region, `customers/` as CSV, `regions/` as NDJSON.
pub fn write_statements(bucket: &str, prefix: &str) -> Vec<String> {
    let base = format!("s3://{bucket}/{prefix}");
    vec![
        format!("COPY orders_mem TO '{base}/orders/' STORED AS PARQUET PARTITIONED BY (region)"),
        format!(
            "COPY customers_mem TO '{base}/customers/' STORED AS CSV OPTIONS ('format.has_header' 'true')"
        ),
        format!("COPY regions_mem TO '{base}/regions/' STORED AS JSON"),
    ]
}

/// Creates `orders`, `customers` and `regions` as external tables over what
/// [`write_statements`] wrote.
pub fn table_statements(bucket: &str, prefix: &str) -> Vec<String> {
    let base = format!("s3://{bucket}/{prefix}");
    vec![
        // The columns declared: an inferred partition column is a dictionary, which
        // Ballista 55's shuffle does not carry ("RowConverter column schema mismatch,
        // expected Dictionary(UInt16, Utf8) got Utf8").
        format!(
            "CREATE EXTERNAL TABLE orders (order_id BIGINT NOT NULL, customer_id BIGINT NOT NULL, \
             amount BIGINT NOT NULL, day VARCHAR NOT NULL, region VARCHAR NOT NULL) \
             STORED AS PARQUET PARTITIONED BY (region) LOCATION '{base}/orders/'"
        ),
        format!(
            "CREATE EXTERNAL TABLE customers STORED AS CSV LOCATION '{base}/customers/' OPTIONS ('format.has_header' 'true')"
        ),
        format!("CREATE EXTERNAL TABLE regions STORED AS JSON LOCATION '{base}/regions/'"),
    ]
}

/// The queries, over tables named `orders`, `customers` and `regions` followed by `suffix`
/// (`""` for the tables in S3, `"_mem"` for the same data in memory). Each has an `ORDER BY`
/// that fixes its rows' order.
pub fn queries(suffix: &str) -> Vec<(&'static str, String)> {
    let (o, c, r) = (
        format!("orders{suffix}"),
        format!("customers{suffix}"),
        format!("regions{suffix}"),
    );
    vec![
        (
            "filter + aggregate",
            format!(
                "SELECT region, count(*) AS orders, sum(amount) AS total, min(day) AS first_day \
                 FROM {o} WHERE amount >= 50000 GROUP BY region ORDER BY region"
            ),
        ),
        (
            "join + aggregate + order by + limit",
            format!(
                "SELECT c.segment, m.manager, count(*) AS orders, sum(o.amount) AS total \
                 FROM {o} o JOIN {c} c ON o.customer_id = c.customer_id \
                 JOIN {r} m ON o.region = m.region \
                 WHERE o.day >= '2026-06-01' \
                 GROUP BY c.segment, m.manager ORDER BY total DESC, c.segment, m.manager LIMIT 5"
            ),
        ),
        (
            "top customers",
            format!(
                "SELECT c.name, sum(o.amount) AS total FROM {o} o JOIN {c} c \
                 ON o.customer_id = c.customer_id GROUP BY c.name \
                 ORDER BY total DESC, c.name LIMIT 10"
            ),
        ),
        (
            "csv and ndjson",
            format!(
                "SELECT m.manager, count(*) AS customers FROM {c} c CROSS JOIN {r} m \
                 WHERE c.segment = 'retail' GROUP BY m.manager ORDER BY m.manager"
            ),
        ),
    ]
}

/// Runs `sql` and formats its rows as a table (column types aside: a partition column
/// read back from S3 is a dictionary, its in-memory original a string).
pub async fn run(ctx: &SessionContext, sql: &str) -> Result<String> {
    let batches = ctx.sql(sql).await?.collect().await?;
    Ok(pretty_format_batches(&batches)?.to_string())
}

/// Sets aws-lc-rs as the process's rustls provider, or ring with `ENGINES_TLS_PROVIDER=ring`:
/// s3-wire's reqwest is built without one, and the engines' graph brings two (ring and
/// aws-lc-rs, deltalake's), so rustls cannot pick one itself. S3WireStore and object_store's
/// AmazonS3 both speak TLS with it.
pub fn install_crypto_provider() {
    let _ = match std::env::var("ENGINES_TLS_PROVIDER").as_deref() {
        Ok("ring") => rustls::crypto::ring::default_provider().install_default(),
        _ => rustls::crypto::aws_lc_rs::default_provider().install_default(),
    };
}

/// delta-rs on S3WireStore: the log store for `s3://` table locations.
pub mod delta {
    use std::sync::{Arc, Once};

    use deltalake::DeltaResult;
    use deltalake::logstore::{
        LogStore, LogStoreFactory, ObjectStoreRef, StorageConfig, default_logstore,
        logstore_factories,
    };
    use url::Url;

    /// delta-rs's default log store for `s3://` locations given a store of their own
    /// (`DeltaTableBuilder::with_storage_backend`): it commits a version with
    /// `put_opts(PutMode::Create)`, which S3WireStore sends as `If-None-Match: *`, so of two
    /// writers racing for one version exactly one wins, without a lock table. (deltalake's
    /// own S3 log store lives in the `deltalake-aws` crate, which this build leaves out.)
    #[derive(Debug, Default)]
    struct ConditionalPutLogStore;

    impl LogStoreFactory for ConditionalPutLogStore {
        fn with_options(
            &self,
            prefixed_store: ObjectStoreRef,
            root_store: ObjectStoreRef,
            location: &Url,
            options: &StorageConfig,
        ) -> DeltaResult<Arc<dyn LogStore>> {
            Ok(default_logstore(
                prefixed_store,
                root_store,
                location,
                options,
            ))
        }
    }

    /// Registers the `s3://` log store (once per process).
    pub fn register_s3_log_store() {
        static REGISTERED: Once = Once::new();
        REGISTERED.call_once(|| {
            logstore_factories().insert(
                Url::parse("s3://").expect("a scheme"),
                Arc::new(ConditionalPutLogStore),
            );
        });
    }
}

/// What the Ballista processes (`ballista-scheduler`, `ballista-executor`) share: their
/// command lines and their S3WireStore.
pub mod ballista_process {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::Arc;
    use std::time::Duration;

    use datafusion::execution::runtime_env::RuntimeEnv;
    use s3_wire_tokio::credentials::ProcessEnv;

    use crate::{RequestCounter, bucket_url, counted_store};

    /// `--name value` pairs of a command line (a name may repeat: `--bucket a --bucket b`).
    #[derive(Debug, Default)]
    pub struct Args(HashMap<String, Vec<String>>);

    impl Args {
        /// This process's arguments; exits with `usage` on anything else.
        pub fn parse(usage: &str) -> Self {
            let mut parsed = HashMap::<String, Vec<String>>::new();
            let mut args = std::env::args().skip(1);
            while let Some(name) = args.next() {
                let (Some(name), Some(value)) = (name.strip_prefix("--"), args.next()) else {
                    eprintln!("usage: {usage}");
                    std::process::exit(2);
                };
                parsed.entry(name.to_owned()).or_default().push(value);
            }
            Self(parsed)
        }

        /// Every value of `--name`.
        pub fn all(&self, name: &str) -> Vec<String> {
            self.0.get(name).cloned().unwrap_or_default()
        }

        /// The value of `--name`, or `default`.
        pub fn get(&self, name: &str, default: &str) -> String {
            self.all(name).pop().unwrap_or_else(|| default.to_owned())
        }

        /// The value of `--name` as a number, or `default`.
        pub fn number<T: std::str::FromStr>(&self, name: &str, default: T) -> T {
            match self.all(name).pop() {
                Some(value) => value
                    .parse()
                    .unwrap_or_else(|_| panic!("--{name} {value}: not a number")),
                None => default,
            }
        }
    }

    /// The stores of this process: one S3WireStore per `--bucket`, from the process's
    /// standard AWS environment, all counted by one hook.
    pub struct Stores {
        stores: Vec<(url::Url, Arc<dyn object_store::ObjectStore>)>,
        /// Every request of this process's stores.
        pub counter: RequestCounter,
    }

    impl Stores {
        /// The stores of `buckets`.
        pub fn from_env(buckets: &[String]) -> Result<Self, s3_wire_tokio::Error> {
            let counter = RequestCounter::default();
            let stores = buckets
                .iter()
                .map(|bucket| {
                    let store = counted_store(bucket, Arc::new(ProcessEnv), &counter)?;
                    let store: Arc<dyn object_store::ObjectStore> = Arc::new(store);
                    Ok((bucket_url(bucket), store))
                })
                .collect::<Result<_, s3_wire_tokio::Error>>()?;
            Ok(Self { stores, counter })
        }

        /// Registers every store in `runtime` (its registry is shared, behind a lock).
        pub fn register_in(&self, runtime: &RuntimeEnv) {
            for (url, store) in &self.stores {
                runtime.register_object_store(url, store.clone());
            }
        }

        /// Writes what the hook counted to `path` every 100 ms (`operation count` lines, then
        /// `bytes_received N`), for the tests and the measurement to read.
        pub fn report_to(&self, path: PathBuf) {
            let counter = self.counter.clone();
            tokio::spawn(async move {
                loop {
                    let seen = counter.seen();
                    let mut text = String::new();
                    for (operation, count) in &seen.operations {
                        text.push_str(&format!("{operation} {count}\n"));
                    }
                    text.push_str(&format!("bytes_received {}\n", seen.bytes_received));
                    let partial = path.with_extension("partial");
                    if std::fs::write(&partial, text).is_ok() {
                        let _ = std::fs::rename(&partial, &path);
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            });
        }
    }
}

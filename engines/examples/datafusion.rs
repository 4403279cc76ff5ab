//! DataFusion 55 querying S3 through S3WireStore.
//!
//! ```text
//! AWS_REGION=... AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... [AWS_ENDPOINT_URL=...] \
//!     cargo run --example datafusion -- BUCKET [PREFIX]
//! ```
//!
//! Registers S3WireStore (from the standard AWS environment: variables and profiles) for
//! `s3://BUCKET`, writes generated `orders` as parquet partitioned by region with
//! `COPY ... PARTITIONED BY`, `customers` as CSV and `regions` as NDJSON under
//! `s3://BUCKET/PREFIX/` (default `datafusion-example`), creates external tables over them
//! and prints the results of a filter + aggregate, a join + aggregate + `ORDER BY ... LIMIT`
//! and the rest of the query set.

use std::sync::Arc;

use datafusion::prelude::SessionContext;
use s3_wire_engines::{Tables, queries, register, run, table_statements, write_statements};
use s3_wire_object_store::S3WireStore;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    s3_wire_engines::install_crypto_provider();
    let mut args = std::env::args().skip(1);
    let bucket = args.next().ok_or("usage: datafusion BUCKET [PREFIX]")?;
    let prefix = args
        .next()
        .unwrap_or_else(|| "datafusion-example".to_owned());

    let ctx = SessionContext::new();
    register(&ctx, &bucket, Arc::new(S3WireStore::from_env(&bucket)?));

    let tables = Tables::generate(100_000, 1_000);
    tables.register_in_memory(&ctx)?;
    for statement in write_statements(&bucket, &prefix) {
        println!("{statement}\n{}", run(&ctx, &statement).await?);
    }
    for statement in table_statements(&bucket, &prefix) {
        run(&ctx, &statement).await?;
    }
    for (name, sql) in queries("") {
        println!("-- {name}\n{sql}\n{}\n", run(&ctx, &sql).await?);
    }
    Ok(())
}

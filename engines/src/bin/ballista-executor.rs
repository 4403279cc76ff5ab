//! A Ballista 55 executor that reads and writes S3 through S3WireStore.
//!
//! ```text
//! AWS_REGION=... AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... [AWS_ENDPOINT_URL=...] \
//!     ballista-executor --bucket BUCKET [--scheduler-host H] [--scheduler-port 50050] \
//!     [--bind-host 0.0.0.0] [--external-host H] [--port 50051] [--grpc-port 50052] \
//!     [--concurrent-tasks N] [--work-dir DIR] [--stats FILE]
//! ```
//!
//! Ballista's own executor process, with a runtime producer that registers an S3WireStore
//! for `s3://BUCKET` in every task's runtime.

use std::sync::Arc;

use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use s3_wire_engines::ballista_process::{Args, Stores};

const USAGE: &str = "ballista-executor --bucket BUCKET [--scheduler-host H] \
                     [--scheduler-port P] [--bind-host H] [--external-host H] [--port P] \
                     [--grpc-port P] [--concurrent-tasks N] [--work-dir DIR] [--stats FILE]";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    s3_wire_engines::install_crypto_provider();
    let args = Args::parse(USAGE);
    let stores = Arc::new(Stores::from_env(&args.all("bucket"))?);
    if let Some(path) = args.all("stats").pop() {
        stores.report_to(path.into());
    }
    let defaults = ExecutorProcessConfig::default();
    let work_dir = args.all("work-dir").pop();
    let config = ExecutorProcessConfig {
        bind_host: args.get("bind-host", "127.0.0.1"),
        external_host: args.all("external-host").pop(),
        port: args.number("port", defaults.port),
        grpc_port: args.number("grpc-port", defaults.grpc_port),
        scheduler_host: args.get("scheduler-host", "127.0.0.1"),
        scheduler_port: args.number("scheduler-port", defaults.scheduler_port),
        vcores: args.number("concurrent-tasks", defaults.vcores),
        work_dir: work_dir.clone(),
        override_runtime_producer: Some(Arc::new(move |_session_config| {
            let mut runtime = RuntimeEnvBuilder::new();
            if let Some(dir) = &work_dir {
                runtime = runtime.with_temp_file_path(dir);
            }
            let runtime = runtime.build()?;
            stores.register_in(&runtime);
            Ok(Arc::new(runtime))
        })),
        ..defaults
    };
    start_executor_process(Arc::new(config)).await?;
    Ok(())
}

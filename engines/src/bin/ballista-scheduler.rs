//! A Ballista 55 scheduler whose sessions read and write S3 through S3WireStore.
//!
//! ```text
//! AWS_REGION=... AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... [AWS_ENDPOINT_URL=...] \
//!     ballista-scheduler --bucket BUCKET [--bucket ...] [--bind-host 0.0.0.0] [--port 50050] \
//!     [--external-host HOST] [--stats FILE]
//! ```
//!
//! Ballista's own scheduler, configured as its binary configures it, but for the session
//! builder: each session's runtime has an S3WireStore registered for `s3://BUCKET`.

use std::sync::Arc;

use ballista_core::utils::default_session_builder;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use s3_wire_engines::ballista_process::{Args, Stores};

const USAGE: &str = "ballista-scheduler --bucket BUCKET [--bind-host H] [--port P] \
                     [--external-host H] [--stats FILE]";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    s3_wire_engines::install_crypto_provider();
    let args = Args::parse(USAGE);
    let stores = Arc::new(Stores::from_env(&args.all("bucket"))?);
    if let Some(path) = args.all("stats").pop() {
        stores.report_to(path.into());
    }
    let bind_host = args.get("bind-host", "127.0.0.1");
    let port = args.number("port", 50050u16);
    let mut config = SchedulerConfig::default()
        .with_hostname(args.get("external-host", &bind_host))
        .with_port(port);
    config.bind_host = bind_host.clone();
    let sessions = stores.clone();
    let config = config.with_override_session_builder(Arc::new(move |session_config| {
        let state = default_session_builder(session_config)?;
        sessions.register_in(state.runtime_env());
        Ok(state)
    }));
    let cluster = BallistaCluster::new_from_config(&config).await?;
    start_server(
        cluster,
        format!("{bind_host}:{port}").parse()?,
        Arc::new(config),
    )
    .await?;
    Ok(())
}

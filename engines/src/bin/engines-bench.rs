//! The DataFusion query set of `measurements/engines-*`: a TPC-H-like `lineitem` in S3, read
//! and written through S3WireStore or through object_store's own `AmazonS3`, one query a
//! process (so CPU and peak RSS are the query's).
//!
//! ```text
//! engines-bench serve-local-s3                       # prints its endpoint, runs until stdin closes
//! engines-bench proxy UPSTREAM STATS_FILE [CA_FILE]  # counts connections, requests, bytes; prints its endpoint
//! engines-bench generate ENDPOINT BUCKET ROWS FILES  # writes lineitem/ through S3WireStore
//! engines-bench query ENDPOINT BUCKET STORE QUERY    # prints one JSON line
//! engines-bench free-port                            # a port nothing listens on
//! ```
//!
//! STORE: `s3wire` or `amazons3` (one process runs the query), or `ballista@PORT`: the
//! query planned here and run by the Ballista scheduler on 127.0.0.1:PORT and its executors
//! (S3WireStore in each; their CPU and memory are not this process's).
//!
//! Credentials: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_REGION` of the server.
//! Given CA_FILE, the proxy serves TLS with a certificate for 127.0.0.1 from a CA it makes and
//! writes there; `query` has both stores trust the CA named by `AWS_CA_BUNDLE`.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use datafusion::arrow::array::{
    Date32Array, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use object_store::ObjectStore;
use s3_wire_engines::{register, run};
use s3_wire_object_store::S3WireStore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

type Failure = Box<dyn std::error::Error>;

const QUERIES: [(&str, &str); 5] = [
    (
        "full-scan-aggregate",
        // Sums of floats are rounded: their last bits depend on the order partitions are
        // added in, which differs between runs, and the digest compares results exactly.
        "SELECT l_returnflag, l_linestatus, round(sum(l_quantity)) AS qty, \
         round(sum(l_extendedprice)) AS price, round(avg(l_discount), 9) AS discount, \
         count(*) AS n FROM lineitem \
         GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus",
    ),
    (
        "selective-page-index",
        "SELECT count(*) AS n, sum(l_extendedprice) AS price FROM lineitem \
         WHERE l_orderkey BETWEEN 3000000 AND 3002000",
    ),
    (
        "projection-2-of-16",
        "SELECT sum(l_quantity) AS qty, max(l_shipdate) AS last FROM lineitem",
    ),
    (
        "copy-back",
        "COPY (SELECT * FROM lineitem WHERE l_shipmode = 'AIR') TO 's3://__BUCKET__/out-__STORE__/' \
         STORED AS PARQUET",
    ),
    // Reads nothing: what a query process costs before its query (the store made, the
    // table's footers read), for bench/callgrind.sh to take from each query's count.
    ("baseline", "SELECT 1 AS one"),
];

fn lineitem_schema() -> Arc<Schema> {
    let utf8 = |name: &str| Field::new(name, DataType::Utf8, false);
    Arc::new(Schema::new(vec![
        Field::new("l_orderkey", DataType::Int64, false),
        Field::new("l_partkey", DataType::Int64, false),
        Field::new("l_suppkey", DataType::Int64, false),
        Field::new("l_linenumber", DataType::Int32, false),
        Field::new("l_quantity", DataType::Float64, false),
        Field::new("l_extendedprice", DataType::Float64, false),
        Field::new("l_discount", DataType::Float64, false),
        Field::new("l_tax", DataType::Float64, false),
        utf8("l_returnflag"),
        utf8("l_linestatus"),
        Field::new("l_shipdate", DataType::Date32, false),
        Field::new("l_commitdate", DataType::Date32, false),
        Field::new("l_receiptdate", DataType::Date32, false),
        utf8("l_shipinstruct"),
        utf8("l_shipmode"),
        utf8("l_comment"),
    ]))
}

/// Rows `first..first + rows` of `lineitem` (ordered by `l_orderkey`, four lines an order).
fn lineitem(first: u64, rows: u64) -> RecordBatch {
    let mut state = first.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let n = rows as usize;
    let (mut orderkey, mut partkey, mut suppkey, mut linenumber) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut quantity, mut price, mut discount, mut tax) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut flag, mut status, mut ship, mut commit, mut receipt) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut instruct, mut mode, mut comment) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    const MODES: [&str; 7] = ["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"];
    const INSTRUCT: [&str; 4] = [
        "DELIVER IN PERSON",
        "COLLECT COD",
        "NONE",
        "TAKE BACK RETURN",
    ];
    const WORDS: [&str; 8] = [
        "quickly", "final", "deposits", "sleep", "furious", "ironic", "bold", "pending",
    ];
    for row in first..first + rows {
        let r = next();
        orderkey.push((row / 4) as i64);
        partkey.push((r % 200_000) as i64);
        suppkey.push(((r >> 20) % 10_000) as i64);
        linenumber.push((row % 4) as i32 + 1);
        let qty = (1 + (r >> 8) % 50) as f64;
        quantity.push(qty);
        price.push(qty * (900.0 + ((r >> 16) % 100_000) as f64 / 100.0));
        discount.push(((r >> 24) % 11) as f64 / 100.0);
        tax.push(((r >> 28) % 9) as f64 / 100.0);
        flag.push(["A", "N", "R"][((r >> 32) % 3) as usize]);
        status.push(["F", "O"][((r >> 34) % 2) as usize]);
        let day = 8_035 + ((r >> 36) % 2_500) as i32;
        ship.push(day);
        commit.push(day + ((r >> 40) % 60) as i32 - 30);
        receipt.push(day + 1 + ((r >> 44) % 30) as i32);
        instruct.push(INSTRUCT[((r >> 46) % 4) as usize]);
        mode.push(MODES[((r >> 48) % 7) as usize]);
        comment.push(format!(
            "{} {} {} {}",
            WORDS[((r >> 51) % 8) as usize],
            WORDS[((r >> 54) % 8) as usize],
            WORDS[((r >> 57) % 8) as usize],
            (r >> 40) % 10_000
        ));
    }
    RecordBatch::try_new(
        lineitem_schema(),
        vec![
            Arc::new(Int64Array::from(orderkey)),
            Arc::new(Int64Array::from(partkey)),
            Arc::new(Int64Array::from(suppkey)),
            Arc::new(Int32Array::from(linenumber)),
            Arc::new(Float64Array::from(quantity)),
            Arc::new(Float64Array::from(price)),
            Arc::new(Float64Array::from(discount)),
            Arc::new(Float64Array::from(tax)),
            Arc::new(StringArray::from(flag)),
            Arc::new(StringArray::from(status)),
            Arc::new(Date32Array::from(ship)),
            Arc::new(Date32Array::from(commit)),
            Arc::new(Date32Array::from(receipt)),
            Arc::new(StringArray::from(instruct)),
            Arc::new(StringArray::from(mode)),
            Arc::new(StringArray::from(comment)),
        ],
    )
    .expect("lineitem")
}

fn s3_wire(endpoint: &str, bucket: &str) -> Result<Arc<dyn ObjectStore>, Failure> {
    let mut env = s3_wire_tokio::credentials::MapEnv::new()
        .with_var("AWS_ENDPOINT_URL", endpoint)
        .with_var("AWS_REGION", std::env::var("AWS_REGION")?)
        .with_var("AWS_ACCESS_KEY_ID", std::env::var("AWS_ACCESS_KEY_ID")?)
        .with_var(
            "AWS_SECRET_ACCESS_KEY",
            std::env::var("AWS_SECRET_ACCESS_KEY")?,
        )
        .with_home("/nonexistent");
    if let Ok(ca_file) = std::env::var("AWS_CA_BUNDLE") {
        env = env.with_var("AWS_CA_BUNDLE", ca_file);
    }
    Ok(Arc::new(S3WireStore::from_env_with(bucket, Arc::new(env))?))
}

fn amazon_s3(endpoint: &str, bucket: &str) -> Result<Arc<dyn ObjectStore>, Failure> {
    // Client options hold `allow_http` too: the builder's `with_client_options` replaces them.
    let mut options = object_store::ClientOptions::new().with_allow_http(true);
    if let Ok(ca_file) = std::env::var("AWS_CA_BUNDLE") {
        let pem = std::fs::read(&ca_file).map_err(|e| format!("{ca_file}: {e}"))?;
        options = options.with_root_certificate(object_store::Certificate::from_pem(&pem)?);
    }
    Ok(Arc::new(
        object_store::aws::AmazonS3Builder::new()
            .with_endpoint(endpoint)
            .with_region(std::env::var("AWS_REGION")?)
            .with_access_key_id(std::env::var("AWS_ACCESS_KEY_ID")?)
            .with_secret_access_key(std::env::var("AWS_SECRET_ACCESS_KEY")?)
            .with_virtual_hosted_style_request(false)
            .with_bucket_name(bucket)
            .with_client_options(options)
            .build()?,
    ))
}

/// User + system CPU of this process, all threads, to the nanosecond
/// (`CLOCK_PROCESS_CPUTIME_ID`; `/proc/self/stat` counts 10 ms ticks, too coarse for a query
/// of a few hundred milliseconds).
fn cpu_seconds() -> f64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the duration of the call.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    now.tv_sec as f64 + now.tv_nsec as f64 / 1e9
}

/// The peak resident set of this process (`VmHWM`).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn generate(endpoint: &str, bucket: &str, rows: u64, files: u64) -> Result<(), Failure> {
    let config = SessionConfig::new()
        .set_usize(
            "datafusion.execution.soft_max_rows_per_output_file",
            (rows / files) as usize,
        )
        .set_usize(
            "datafusion.execution.minimum_parallel_output_files",
            files as usize,
        );
    let ctx = SessionContext::new_with_config(config);
    let client = s3_wire_tokio::Client::builder()
        .endpoint(endpoint)
        .region(std::env::var("AWS_REGION")?)
        .static_credentials(
            std::env::var("AWS_ACCESS_KEY_ID")?,
            std::env::var("AWS_SECRET_ACCESS_KEY")?,
            None,
        )
        .build()?;
    client
        .create_bucket(
            s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket::new(s3_wire_tokio::bucket(
                bucket,
            )?),
        )
        .await?;
    register(&ctx, bucket, s3_wire(endpoint, bucket)?);
    let batch_rows = 100_000;
    let batches: Vec<RecordBatch> = (0..rows.div_ceil(batch_rows))
        .map(|i| lineitem(i * batch_rows, batch_rows.min(rows - i * batch_rows)))
        .collect();
    ctx.register_table(
        "lineitem_mem",
        Arc::new(MemTable::try_new(lineitem_schema(), vec![batches])?),
    )?;
    run(
        &ctx,
        &format!("COPY lineitem_mem TO 's3://{bucket}/lineitem/' STORED AS PARQUET"),
    )
    .await?;
    Ok(())
}

async fn query(endpoint: &str, bucket: &str, store: &str, name: &str) -> Result<(), Failure> {
    let (object_store, ctx, store) = match (store, store.strip_prefix("ballista@")) {
        ("s3wire", _) => (s3_wire(endpoint, bucket)?, SessionContext::new(), store),
        ("amazons3", _) => (amazon_s3(endpoint, bucket)?, SessionContext::new(), store),
        // The client plans the query and infers the table's schema: it needs the store too.
        (_, Some(port)) => {
            let state = SessionStateBuilder::new()
                .with_default_features()
                .with_config(SessionConfig::new_with_ballista())
                .build();
            let remote =
                SessionContext::remote_with_state(&format!("df://127.0.0.1:{port}"), state).await?;
            (s3_wire(endpoint, bucket)?, remote, "ballista")
        }
        (other, None) => return Err(format!("no store {other}").into()),
    };
    register(&ctx, bucket, object_store);
    run(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE lineitem STORED AS PARQUET LOCATION 's3://{bucket}/lineitem/'"
        ),
    )
    .await?;
    let sql = QUERIES
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or("no such query")?
        .1
        .replace("__BUCKET__", bucket)
        .replace("__STORE__", store);
    let (cpu, started) = (cpu_seconds(), Instant::now());
    let result = run(&ctx, &sql).await?;
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    let digest = result.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    println!(
        "{{\"store\":\"{store}\",\"query\":\"{name}\",\"wall_s\":{wall:.4},\"cpu_s\":{cpu:.6},\"peak_rss_kib\":{},\"result_fnv\":\"{digest:016x}\"}}",
        peak_rss_kib()
    );
    Ok(())
}

/// A loopback proxy counting the connections clients open, HTTP requests (request lines at
/// the start of what the client sends) and the bytes the server sends back; writes
/// `connections N`, `requests N` and `bytes N` to `stats` after every change. Given
/// `ca_file`, it serves TLS (TLS 1.3 and 1.2, HTTP/1.1) with a certificate for 127.0.0.1
/// issued by a CA made for the run, whose PEM it writes there, and relays the plaintext to
/// `upstream`: everything is counted alike either way.
async fn proxy(upstream: String, stats: String, ca_file: Option<String>) -> Result<(), Failure> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let acceptor = match &ca_file {
        Some(path) => {
            let ca = pki::TestCa::new("s3-wire engines bench CA");
            let leaf = ca.issue(&["127.0.0.1", "localhost"]);
            std::fs::write(path, ca.pem()).map_err(|e| format!("{path}: {e}"))?;
            let config = pki::server_config(&leaf, pki::DEFAULT_VERSIONS, &[b"http/1.1"]);
            Some(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
        }
        None => None,
    };
    let scheme = if acceptor.is_some() { "https" } else { "http" };
    println!("{scheme}://{}", listener.local_addr()?);
    std::io::stdout().flush()?;
    let counts = Arc::new(Counts {
        connections: AtomicU64::new(0),
        requests: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        stats,
    });
    let upstream = upstream.trim_start_matches("http://").to_owned();
    loop {
        let (client, _) = listener.accept().await?;
        counts.connections.fetch_add(1, Ordering::Relaxed);
        counts.write();
        let server = tokio::net::TcpStream::connect(&upstream).await?;
        // Relayed as soon as read: with Nagle's algorithm on, a relayed tail shorter than a
        // segment waits for the peer's delayed ACK, which no direct connection does.
        client.set_nodelay(true)?;
        server.set_nodelay(true)?;
        let (acceptor, counts) = (acceptor.clone(), counts.clone());
        // The handshake in the connection's task, so that one client's does not hold up the
        // next accept.
        tokio::spawn(async move {
            match acceptor {
                Some(acceptor) => {
                    if let Ok(client) = acceptor.accept(client).await {
                        relay(client, server, &counts).await;
                    }
                }
                None => relay(client, server, &counts).await,
            }
        });
    }
}

/// What the proxy counted, and the file it writes the counts to.
struct Counts {
    connections: AtomicU64,
    requests: AtomicU64,
    bytes: AtomicU64,
    stats: String,
}

impl Counts {
    fn write(&self) {
        let text = format!(
            "connections {}\nrequests {}\nbytes {}\n",
            self.connections.load(Ordering::Relaxed),
            self.requests.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed)
        );
        let _ = std::fs::write(&self.stats, text);
    }
}

/// Relays one connection both ways until either side ends it, counting as it goes.
async fn relay<C>(client: C, mut server: tokio::net::TcpStream, counts: &Counts)
where
    C: tokio::io::AsyncRead + tokio::io::AsyncWrite,
{
    let (client_read, client_write) = tokio::io::split(client);
    let (server_read, server_write) = server.split();
    let starts = [&b"GET /"[..], b"PUT /", b"HEAD /", b"POST /", b"DELETE /"];
    let upward = forward(client_read, server_write, |chunk| {
        if starts.iter().any(|s| chunk.starts_with(s)) {
            counts.requests.fetch_add(1, Ordering::Relaxed);
            counts.write();
        }
    });
    let downward = forward(server_read, client_write, |chunk| {
        counts
            .bytes
            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
    });
    tokio::select! {
        _ = upward => {}
        _ = downward => {}
    }
    counts.write();
}

/// Copies `from` to `to` until `from` ends, showing `seen` each piece as it passes.
async fn forward<R, W>(mut from: R, mut to: W, mut seen: impl FnMut(&[u8])) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let read = from.read(&mut buffer).await?;
        if read == 0 {
            return Ok(());
        }
        seen(&buffer[..read]);
        to.write_all(&buffer[..read]).await?;
        // A TLS stream holds what it encrypted until flushed (a no-op on TCP).
        to.flush().await?;
    }
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    s3_wire_engines::install_crypto_provider();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["serve-local-s3"] => {
            let server = tokio::task::spawn_blocking(local_s3::LocalS3::start).await??;
            println!("{}", server.endpoint());
            std::io::stdout().flush()?;
            let stdin = std::io::stdin();
            for _ in stdin.lock().lines() {}
            drop(server);
            Ok(())
        }
        ["proxy", upstream, stats, ca_file @ ..] if ca_file.len() <= 1 => {
            let ca_file = ca_file.first().map(|path| path.to_string());
            proxy(upstream.to_string(), stats.to_string(), ca_file).await
        }
        ["generate", endpoint, bucket, rows, files] => {
            generate(endpoint, bucket, rows.parse()?, files.parse()?).await
        }
        ["query", endpoint, bucket, store, name] => query(endpoint, bucket, store, name).await,
        ["free-port"] => {
            println!("{}", std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port());
            Ok(())
        }
        _ => Err("usage: engines-bench serve-local-s3 | proxy UPSTREAM STATS [CA_FILE] | generate ENDPOINT BUCKET ROWS FILES | query ENDPOINT BUCKET STORE QUERY | free-port".into()),
    }
}

// The proxy's certificates: the test PKI of crates/s3-wire-tokio/tests/support, as
// tools/perf's null-tls server takes it (one certificate generator in the repository).
#[path = "../../../crates/s3-wire-tokio/tests/support/base64.rs"]
mod base64_encoding;
#[path = "../../../crates/s3-wire-tokio/tests/support/pki.rs"]
#[allow(dead_code)]
mod pki;

// pki.rs writes PEM with its parent's `base64`.
use base64_encoding::base64;

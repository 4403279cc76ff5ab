//! Ballista 55, the distributed engine, on S3WireStore: a scheduler and two executors started
//! as separate processes on 127.0.0.1 (this package's thin mains over `ballista-scheduler` and
//! `ballista-executor`), each with its own S3WireStore from the standard AWS environment. The
//! query set runs through them; results must equal the single-process DataFusion run over
//! the same tables, and both executors must have read from S3 (their request hooks' counts,
//! which each process writes to a file).

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use s3_wire_engines::{RequestCounter, Tables, counted_store, queries, register, run};
use support::Server;

const BUCKET: &str = "ballista";

/// Child processes, killed when dropped (the test's own, by handle).
struct Processes(Vec<(String, Child)>);

impl Drop for Processes {
    fn drop(&mut self) {
        for (_, child) in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16, processes: &mut Processes) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        for (name, child) in &mut processes.0 {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("{name} exited: {status}");
            }
        }
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn spawn(server: &Server, binary: &str, args: &[String]) -> Child {
    Command::new(binary)
        .args(args)
        .env_clear()
        .envs(server.env_vars())
        .env("HOME", "/nonexistent")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{binary}: {e}"))
}

/// `operation count` lines of a process's stats file.
fn stats(path: &Path) -> BTreeMap<String, u64> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let (name, count) = line.split_once(' ')?;
            Some((name.to_owned(), count.parse().ok()?))
        })
        .collect()
}

async fn distributed(server: &Server) {
    s3_wire_engines::install_crypto_provider();
    server.create_bucket(BUCKET).await;

    // The tables, written and queried by one process first.
    let counter = RequestCounter::default();
    let store = Arc::new(counted_store(BUCKET, server.shared_env(), &counter).unwrap());
    let local = SessionContext::new();
    register(&local, BUCKET, store.clone());
    Tables::generate(20_000, 500)
        .register_in_memory(&local)
        .unwrap();
    for statement in s3_wire_engines::write_statements(BUCKET, "t") {
        run(&local, &statement).await.unwrap();
    }
    for statement in s3_wire_engines::table_statements(BUCKET, "t") {
        run(&local, &statement).await.unwrap();
    }
    let mut single = Vec::new();
    for (name, sql) in queries("") {
        single.push((name, run(&local, &sql).await.unwrap()));
    }

    // One scheduler, two executors of one task slot each (so the stages' tasks spread).
    let dir = tempfile::tempdir().unwrap();
    let scheduler_port = free_port();
    let mut processes = Processes(Vec::new());
    let scheduler = spawn(
        server,
        env!("CARGO_BIN_EXE_ballista-scheduler"),
        &[
            "--bucket".into(),
            BUCKET.into(),
            "--port".into(),
            scheduler_port.to_string(),
            "--stats".into(),
            dir.path().join("scheduler.stats").display().to_string(),
        ],
    );
    processes.0.push(("scheduler".into(), scheduler));
    wait_for_port(scheduler_port, &mut processes);
    for executor in 0..2 {
        let (port, grpc_port) = (free_port(), free_port());
        let work_dir = dir.path().join(format!("executor-{executor}"));
        std::fs::create_dir_all(&work_dir).unwrap();
        let child = spawn(
            server,
            env!("CARGO_BIN_EXE_ballista-executor"),
            &[
                "--bucket".into(),
                BUCKET.into(),
                "--scheduler-port".into(),
                scheduler_port.to_string(),
                "--port".into(),
                port.to_string(),
                "--grpc-port".into(),
                grpc_port.to_string(),
                "--concurrent-tasks".into(),
                "1".into(),
                "--work-dir".into(),
                work_dir.display().to_string(),
                "--stats".into(),
                dir.path()
                    .join(format!("executor-{executor}.stats"))
                    .display()
                    .to_string(),
            ],
        );
        processes.0.push((format!("executor {executor}"), child));
        wait_for_port(port, &mut processes);
    }

    // The client: a remote context whose own runtime has the store too (it plans the
    // queries and infers the tables' schemas).
    let state = SessionStateBuilder::new()
        .with_default_features()
        .with_config(SessionConfig::new_with_ballista())
        .build();
    let remote =
        SessionContext::remote_with_state(&format!("df://127.0.0.1:{scheduler_port}"), state)
            .await
            .unwrap();
    register(&remote, BUCKET, store.clone());
    for statement in s3_wire_engines::table_statements(BUCKET, "t") {
        run(&remote, &statement).await.unwrap();
    }
    for ((name, sql), (_, expected)) in queries("").into_iter().zip(&single) {
        let got = run(&remote, &sql)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(&got, expected, "{name} on Ballista ({})", server.name);
    }

    // Both executors read from S3 through their S3WireStore.
    std::thread::sleep(Duration::from_millis(300));
    for executor in 0..2 {
        let seen = stats(&dir.path().join(format!("executor-{executor}.stats")));
        assert!(
            seen.get("GetObject").copied().unwrap_or(0) > 0,
            "executor {executor} read nothing on {}: {seen:?}",
            server.name
        );
        eprintln!("executor {executor} on {}: {seen:?}", server.name);
    }
    drop(processes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ballista_on_local_s3() {
    distributed(&support::local_s3().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ballista_on_moto() {
    distributed(&support::moto().await).await;
}

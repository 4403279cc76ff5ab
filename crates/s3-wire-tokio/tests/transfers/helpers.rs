//! Helpers of the managed-transfer tests: lowered part limits, every kind of upload source,
//! and a writer destination whose bytes are collected.

use std::path::Path;

use bytes::Bytes;
use s3_wire_tokio::s3_multipart_plan::PartLimits;
use s3_wire_tokio::{Destination, UploadSource};

/// S3's part limits with a minimum part size of `min_part_size`, so that multipart cases
/// move little data.
pub fn part_limits(min_part_size: u64) -> PartLimits {
    PartLimits::new(min_part_size, 5 << 30, 10_000, 5 << 40).expect("part limits")
}

/// The kinds of [`UploadSource`].
#[derive(Debug, Clone, Copy)]
pub enum SourceKind {
    File,
    Bytes,
    ReaderKnown,
    ReaderUnknown,
    StreamKnown,
    StreamUnknown,
}

impl SourceKind {
    pub const ALL: [SourceKind; 6] = [
        SourceKind::File,
        SourceKind::Bytes,
        SourceKind::ReaderKnown,
        SourceKind::ReaderUnknown,
        SourceKind::StreamKnown,
        SourceKind::StreamUnknown,
    ];

    /// A source of this kind over `bytes`: a file in `directory` named after `name` (slashes
    /// replaced), the bytes themselves, or a reader or a stream of `chunk`-byte pieces, of
    /// announced (`…Known`) or unknown length.
    pub fn source(self, bytes: &Bytes, directory: &Path, name: &str, chunk: usize) -> UploadSource {
        let len = Some(bytes.len() as u64);
        let chunks =
            || crate::support::Chunks(bytes.chunks(chunk).map(Bytes::copy_from_slice).collect());
        match self {
            SourceKind::File => {
                let path = directory.join(name.replace('/', "_"));
                std::fs::write(&path, bytes).unwrap();
                UploadSource::file(path)
            }
            SourceKind::Bytes => UploadSource::bytes(bytes.clone()),
            SourceKind::ReaderKnown => {
                UploadSource::reader(std::io::Cursor::new(bytes.clone()), len)
            }
            SourceKind::ReaderUnknown => {
                UploadSource::reader(std::io::Cursor::new(bytes.clone()), None)
            }
            SourceKind::StreamKnown => UploadSource::stream(chunks(), len),
            SourceKind::StreamUnknown => UploadSource::stream(chunks(), None),
        }
    }
}

/// A writer destination (an in-memory pipe of `capacity` bytes) and the task that collects
/// everything written to it until the download drops the writer.
pub fn collecting_writer(capacity: usize) -> (Destination, tokio::task::JoinHandle<Vec<u8>>) {
    let (writer, mut reader) = tokio::io::duplex(capacity);
    let collected = tokio::spawn(async move {
        let mut all = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut all)
            .await
            .expect("read the pipe");
        all
    });
    (Destination::writer(writer), collected)
}

/// Where and when a measurement the tests write into `measurements/` ran: "on <date> at
/// commit <hash> (with uncommitted changes, if any), <cores> cores (<CPU>)".
pub fn measurement_context() -> String {
    let run = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .output()
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let commit = run("git", &["-C", root, "rev-parse", "--short", "HEAD"]);
    let dirty = !run(
        "git",
        &["-C", root, "status", "--porcelain", "--untracked-files=no"],
    )
    .is_empty();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines().find_map(|line| {
                line.strip_prefix("model name")
                    .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "on {} at commit {commit}{}, {cores} cores ({cpu})",
        run("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        if dirty {
            " (with uncommitted changes)"
        } else {
            ""
        },
    )
}

/// The load average now (1, 5 and 15 minutes).
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes `text` into `measurements/<name>` of the workspace and says so.
pub fn write_measurement(name: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../measurements")
        .join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("wrote {}", path.display());
}

/// This test binary run again as a child process that runs only `test`, with `env` set (a
/// crash test's transfer), its output kept in `directory`; [`CrashChild::kill_when`] kills
/// it with SIGKILL.
pub struct CrashChild {
    child: std::process::Child,
    stdout: std::path::PathBuf,
    stderr: std::path::PathBuf,
}

impl CrashChild {
    pub fn start(test: &str, env: &[(&str, &std::ffi::OsStr)], directory: &Path) -> Self {
        let stdout = directory.join("child.stdout");
        let stderr = directory.join("child.stderr");
        let child = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("child test runs");
        Self {
            child,
            stdout,
            stderr,
        }
    }

    /// The client of a crash child: the fault store at `endpoint`, three attempts, and slow
    /// (256 KiB/s), so that the parent has time to kill it mid-transfer.
    pub fn client(endpoint: &str) -> s3_wire_tokio::Client {
        s3_wire_tokio::Client::builder()
            .endpoint(endpoint)
            .region(crate::fault_store::REGION)
            .static_credentials(
                crate::fault_store::ACCESS_KEY,
                crate::fault_store::SECRET_KEY,
                None,
            )
            .proxy_from_env(false)
            .retry(crate::support::retry(3))
            .bandwidth_limit(256 * 1024)
            .build()
            .expect("client")
    }

    /// What the child printed.
    pub fn output(&self) -> String {
        format!(
            "child stdout:\n{}\nchild stderr:\n{}",
            std::fs::read_to_string(&self.stdout).unwrap_or_default(),
            std::fs::read_to_string(&self.stderr).unwrap_or_default()
        )
    }

    /// Kills the child (SIGKILL) as soon as `ready` returns something (within 20 s, and
    /// before the child ends by itself), and returns that.
    pub async fn kill_when<T: std::fmt::Debug>(
        &mut self,
        mut ready: impl FnMut() -> (Option<T>, String),
    ) -> T {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let found = loop {
            let (found, state) = ready();
            if let Some(found) = found {
                break found;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "the child exited ({status}) before it was killed\n{}",
                    self.output()
                );
            }
            assert!(
                std::time::Instant::now() < deadline,
                "not ready after 20 s: {state}\n{}",
                self.output()
            );
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        };
        self.child.kill().expect("SIGKILL");
        let status = self.child.wait().expect("the child is reaped");
        assert!(!status.success(), "the child was killed: {status}");
        found
    }
}

/// Runs the transfer `start` begins, with a client of `builder` (three attempts, 1 MiB/s),
/// on a runtime of its own, and "crashes" it once `crashed` holds: the runtime is shut down,
/// so nothing of the transfer runs again (no abort, no cleanup, no journal removal).
pub fn run_until_crash<T: Send + 'static>(
    builder: s3_wire_tokio::ClientBuilder,
    start: impl FnOnce(&s3_wire_tokio::Client) -> s3_wire_tokio::TransferHandle<T> + Send + 'static,
    crashed: impl Fn() -> bool + Send + 'static,
) {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = builder
            .retry(crate::support::retry(3))
            .bandwidth_limit(1024 * 1024)
            .build()
            .expect("client");
        let handle = {
            let _entered = runtime.enter();
            start(&client)
        };
        runtime.block_on(async {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while !crashed() {
                assert!(!handle.is_finished(), "the transfer ended before the crash");
                assert!(
                    std::time::Instant::now() < deadline,
                    "the transfer did not get far enough"
                );
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        });
        // Dropping the runtime drops its tasks unpolled, then waits for its blocking
        // threads, which a crash would have ended too: a file writer still holding a part
        // file (and its lock) would turn the rerun away from it.
        drop(runtime);
        // The driver is gone with its runtime: this cancellation reaches nobody.
        drop(handle);
    })
    .join()
    .expect("the crashed transfer's thread");
}

//! moto (5.2.5, server mode) as a second S3 server, and the venv its Python side runs in.
//!
//! The venv is made by the tests themselves, from PyPI, with the pinned set in
//! `tests/interop/requirements.txt`: once per build directory (`<target>/<profile>/`, found
//! from the test binary's path), under a lock so that test binaries running at the same time
//! do not race, and reused when complete (a marker file written last). A change to the
//! requirements makes a new venv (its directory name carries a hash of the file).
//! `S3W_PYTHON` names the interpreter that creates it (default `python3`).
//!
//! [`Moto::start`] runs `tests/interop/moto_server.py` with the venv's python: moto on
//! 127.0.0.1 on a free port, ended when the guard is dropped, and by itself when the test
//! process dies (it runs until its standard input closes).

use std::fs;
use std::io::{BufRead, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// The pinned Python packages.
const REQUIREMENTS: &str = include_str!("../interop/requirements.txt");

/// The directory of the Python helpers (`crates/s3-wire-tokio/tests/interop`). This file is
/// also compiled into other packages' tests (`#[path]`): those in `crates/` and `tools/`,
/// and the engines workspace's (`engines/`).
pub fn interop_dir() -> PathBuf {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        "../s3-wire-tokio",
        "../crates/s3-wire-tokio",
        "../../crates/s3-wire-tokio",
    ]
    .iter()
    .map(|crate_dir| package.join(crate_dir).join("tests/interop"))
    .find(|dir| dir.exists())
    .expect("crates/s3-wire-tokio/tests/interop beside this package")
}

/// The venv's python, creating the venv first if this build directory has none.
pub fn python() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            venv(
                "s3w-interop",
                REQUIREMENTS,
                "tests/interop/requirements.txt",
            )
        })
        .clone()
}

/// `<target>/<profile>`, where the test binary lies.
pub fn build_dir() -> PathBuf {
    // <target>/<profile>/deps/<test binary>
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary lies in <target>/<profile>/deps")
        .to_path_buf()
}

/// FNV-1a 64 of the requirements: names the venv, so a new pin makes a new one.
fn requirements_hash(requirements: &str) -> String {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for byte in requirements.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The python of a venv with `requirements` (the text of the file `file`) installed from
/// PyPI, under `<build directory>/<name>/`: made once per build directory and set of pins,
/// under a lock, reused once complete.
pub fn venv(name: &str, requirements: &str, file: &str) -> PathBuf {
    let root = build_dir().join(name);
    fs::create_dir_all(&root).expect("create the venv directory");
    let venv = root.join(format!("venv-{}", requirements_hash(requirements)));
    let python = venv.join("bin").join("python");
    let marker = venv.join("s3w-complete");
    if marker.exists() {
        return python;
    }
    let lock = fs::File::create(root.join("venv.lock")).expect("create the venv lock");
    lock.lock().expect("lock the venv directory");
    if marker.exists() {
        // Another test binary made it while this one waited.
        return python;
    }
    let started = Instant::now();
    if venv.exists() {
        // An earlier attempt broke off: start over.
        fs::remove_dir_all(&venv).expect("remove an incomplete venv");
    }
    let interpreter = std::env::var("S3W_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    run(
        Command::new(&interpreter).arg("-m").arg("venv").arg(&venv),
        &format!("{interpreter} -m venv (set S3W_PYTHON to another Python 3 interpreter)"),
    );
    let pins = requirements;
    let requirements = venv.join("requirements.txt");
    fs::write(&requirements, pins).expect("write requirements.txt");
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-input",
                "-r",
            ])
            .arg(&requirements),
        &format!("pip install -r {file} (from PyPI)"),
    );
    fs::write(&marker, format!("{:?}\n", started.elapsed())).expect("write the venv marker");
    eprintln!(
        "s3w: created the venv {} ({file}) in {:.1} s",
        venv.display(),
        started.elapsed().as_secs_f64()
    );
    python
}

fn run(command: &mut Command, what: &str) {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|err| panic!("{what}: cannot run: {err}"));
    assert!(
        output.status.success(),
        "{what}: {}\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A running moto server; dropping it stops the server.
pub struct Moto {
    child: Child,
    // Closing it ends the server (moto_server.py reads it until EOF).
    stdin: Option<ChildStdin>,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// The keys moto is given (it verifies no signature, so any would do).
pub const ACCESS_KEY: &str = "moto-access-key";
/// See [`ACCESS_KEY`].
pub const SECRET_KEY: &str = "moto-secret-key";
/// The region moto's clients sign for.
pub const REGION: &str = "us-east-1";

impl Moto {
    /// Starts moto (creating the venv first if needed) and waits until it answers.
    /// Blocking: call it from `spawn_blocking` in async code.
    pub fn start() -> Self {
        let python = python();
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("moto.log");
        let mut child = Command::new(&python)
            .arg(interop_dir().join("moto_server.py"))
            // moto reads no credentials and reaches nothing outside; keep it that way.
            .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
            .env("AWS_DEFAULT_REGION", REGION)
            .env("MOTO_CALL_RESET_API", "false")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(fs::File::create(&log).expect("moto log"))
            .spawn()
            .unwrap_or_else(|err| panic!("start moto with {}: {err}", python.display()));
        let stdin = child.stdin.take();
        let mut line = String::new();
        let read = BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line);
        let port = match (read, line.trim().parse::<u16>()) {
            (Ok(_), Ok(port)) => port,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "moto did not start: {line:?}\n{}",
                    fs::read_to_string(&log).unwrap_or_default()
                );
            }
        };
        let moto = Moto {
            child,
            stdin,
            port,
            log,
            _dir: dir,
        };
        moto.wait_until_answering();
        moto
    }

    fn wait_until_answering(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                use std::io::Write as _;
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let request =
                    "GET /moto-api/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
                let mut answer = Vec::new();
                if stream.write_all(request.as_bytes()).is_ok()
                    && stream.read_to_end(&mut answer).is_ok()
                    && answer.starts_with(b"HTTP/1.")
                {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "moto does not answer on port {}\n{}",
                self.port,
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// What moto wrote to its standard error.
    pub fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A client of this server.
    pub fn client(&self) -> s3_wire_tokio::Client {
        s3_wire_tokio::Client::builder()
            .endpoint(self.endpoint())
            .region(REGION)
            .static_credentials(ACCESS_KEY, SECRET_KEY, None)
            .build()
            .expect("client")
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts moto from async code.
pub async fn moto() -> Moto {
    tokio::task::spawn_blocking(Moto::start)
        .await
        .expect("join")
}

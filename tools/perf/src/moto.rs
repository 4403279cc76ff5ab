//! moto (the pinned server mode the interop tests use) as a server of `perf cli`: the same
//! `moto_server.py` and requirements as `crates/s3-wire-tokio/tests/interop/`, in a venv
//! the harness makes. moto decodes every body in Python, so it shows what a client's
//! encoding costs on a slow store (the performance issue's "1 GiB upload on moto").

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use crate::venv;

/// A running moto; dropping it closes its stdin, which ends it.
pub struct Moto {
    child: Child,
    stdin: Option<ChildStdin>,
    pub port: u16,
}

fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crates/s3-wire-tokio/tests/interop")
}

impl Moto {
    /// Starts moto on 127.0.0.1 (a free port), its log in `log`.
    pub fn start(log: &Path) -> Result<Moto, String> {
        let python = venv::python(
            "moto",
            venv::Install::Requirements(&interop_dir().join("requirements.txt")),
        )?;
        let mut child = Command::new(&python)
            .arg(interop_dir().join("moto_server.py"))
            .env("MOTO_CALL_RESET_API", "false")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).map_err(|e| e.to_string())?)
            .spawn()
            .map_err(|e| format!("{}: {e}", python.display()))?;
        let stdin = child.stdin.take();
        let mut line = String::new();
        let stdout = child.stdout.take().ok_or("moto: no stdout")?;
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        match line.trim().parse() {
            Ok(port) => Ok(Moto { child, stdin, port }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!(
                    "moto did not start: {line:?}\n{}",
                    std::fs::read_to_string(log).unwrap_or_default()
                ))
            }
        }
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if self.child.wait().is_err() {
            let _ = self.child.kill();
        }
    }
}

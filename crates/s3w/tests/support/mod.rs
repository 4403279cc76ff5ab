//! What every s3w end-to-end suite shares: a fresh local-s3 and an empty home per test, and
//! the built binary run against them with nothing else of the environment.

// Each test binary uses its own part of it.
#![allow(dead_code)]

pub mod proxy;

use std::path::Path;
use std::process::{Command, Output};

pub struct Env {
    pub server: local_s3::LocalS3,
    pub home: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env {
            server: local_s3::LocalS3::start().expect("start local-s3"),
            home: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_s3w"));
        command.args(args);
        self.isolate(&mut command);
        command
    }

    /// Gives `command` this test's store and home and nothing else of the environment.
    pub fn isolate<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("AWS_ENDPOINT_URL", self.server.endpoint())
            .env("AWS_ACCESS_KEY_ID", self.server.access_key())
            .env("AWS_SECRET_ACCESS_KEY", self.server.secret_key())
            .env("AWS_REGION", self.server.region())
            .env("AWS_CONFIG_FILE", self.home.path().join("no-config"))
            .env(
                "AWS_SHARED_CREDENTIALS_FILE",
                self.home.path().join("no-credentials"),
            )
            .env("AWS_EC2_METADATA_DISABLED", "true")
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run s3w")
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "s3w {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 stdout")
    }
}

pub fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Sets a file's modification time.
#[allow(dead_code)] // not every suite that includes the support sets times
pub fn set_mtime(path: &Path, when: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

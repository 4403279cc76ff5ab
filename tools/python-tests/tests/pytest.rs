//! The s3wire Python package's pytest suite (`python/tests`), on local-s3 and moto 5.2.5:
//! a venv with `python/requirements-test.txt` (pinned, from PyPI; made once per build
//! directory), the extension built into it by `maturin develop` in this build's target
//! directory (so CI compiles its dependencies once), local-s3 started here and moto from the
//! interop venv, both on 127.0.0.1, given to pytest as `S3WIRE_TEST_SERVERS`.

#[path = "../../../crates/s3-wire-tokio/tests/support/moto.rs"]
#[allow(dead_code)]
mod moto;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

const REQUIREMENTS: &str = include_str!("../../../python/requirements-test.txt");

#[test]
fn the_python_package_passes_its_pytest_suite_on_local_s3_and_moto() {
    let package = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python");
    let python = moto::venv(
        "s3wire-python",
        REQUIREMENTS,
        "python/requirements-test.txt",
    );
    let venv = python
        .parent()
        .and_then(Path::parent)
        .expect("<venv>/bin/python");
    let build_dir = moto::build_dir();
    let target = build_dir.parent().expect("<target>/<profile>");
    // The extension is built by maturin into this build's target directory and profile
    // (`<target>/debug` under `cargo test`): cargo has released its lock by the time tests
    // run, and the python crate's lockfile pins the workspace's versions, so what both
    // graphs build with the same features is compiled once.
    let started = Instant::now();
    let mut maturin = s3wire_python_tests::maturin(&venv.join("bin"));
    let built = maturin
        .args(["develop", "--quiet", "--locked"])
        .current_dir(&package)
        .env("VIRTUAL_ENV", venv)
        .env("CARGO_TARGET_DIR", target)
        .env("PATH", path_with(&venv.join("bin")))
        .status()
        .expect("run maturin from the venv");
    assert!(built.success(), "maturin develop failed: {built}");
    eprintln!(
        "s3wire: maturin develop in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let local = local_s3::LocalS3::start().expect("start local-s3");
    let moto = moto::Moto::start();
    let servers = format!(
        "local-s3={},{},{},{};moto={},{},{},{}",
        local.endpoint(),
        local.access_key(),
        local.secret_key(),
        local.region(),
        moto.endpoint(),
        moto::ACCESS_KEY,
        moto::SECRET_KEY,
        moto::REGION,
    );
    let home = tempfile::tempdir().expect("a home without AWS files");
    let started = Instant::now();
    let status = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        .current_dir(&package)
        .env("S3WIRE_TEST_SERVERS", servers)
        // Nothing of the developer's AWS setup reaches the tests.
        .env("HOME", home.path())
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_SESSION_TOKEN")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .status()
        .expect("run pytest");
    assert!(status.success(), "pytest failed: {status}");
    eprintln!("s3wire: pytest in {:.1} s", started.elapsed().as_secs_f64());
}

/// `PATH` with `bin` first (maturin calls the venv's pip).
fn path_with(bin: &Path) -> std::ffi::OsString {
    let mut paths = vec![bin.to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).expect("PATH")
}

//! The s3wire Python package (`python/`, its own crate and lockfile) is tested by pytest;
//! `tests/pytest.rs` runs that suite under `cargo test --workspace`, so the README's test
//! command covers it. This library holds what every build of the package from Rust needs
//! (the test's `maturin develop`, the perf harness's `maturin build`).

use std::path::Path;
use std::process::Command;

/// `maturin` of the venv whose `bin` directory is given, without the variables cargo sets
/// for the process that runs it (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, ...): build scripts
/// that watch them (ring's) would otherwise be rebuilt, with all that depends on them,
/// whenever the package was last built from another command.
pub fn maturin(bin: &Path) -> Command {
    let mut maturin = Command::new(bin.join("maturin"));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
            "CARGO_PRIMARY_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
            || name == "CARGO_TARGET_TMPDIR"
            || name == "CARGO_RUSTC_CURRENT_DIR"
        {
            maturin.env_remove(name.as_ref());
        }
    }
    maturin
}

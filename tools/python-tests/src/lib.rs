//! The s3wire Python package (`python/`, its own crate and lockfile) is tested by pytest;
//! `tests/pytest.rs` runs that suite under `cargo test --workspace`, so the README's test
//! command covers it. Nothing to build here.

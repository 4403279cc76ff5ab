//! One criterion run signing the same request with s3-sigv4, aws-sigv4 and
//! rusty-s3 (see `src/lib.rs` for the request and settings), measured in
//! wall-clock time.
//!
//! Run: `cargo bench --bench signing` in `comparisons/signing`.

use criterion::{criterion_group, criterion_main};

criterion_group!(
    benches,
    signing_comparison::benches::header_signing,
    signing_comparison::benches::presigning
);
criterion_main!(benches);

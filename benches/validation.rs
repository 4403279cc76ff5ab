//! Criterion microbenchmarks of the pure crates, on the published s3-wire
//! workloads. Run with `cargo bench -p s3-wire-benches --features fuzzing`.
//!
//! Each crate's workloads live in `benches/validation/<crate>.rs`.

#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main};

#[path = "validation/multipart_plan.rs"]
mod multipart_plan;
#[path = "validation/sigv4.rs"]
mod sigv4;
#[path = "validation/xml.rs"]
mod xml;

criterion_group!(
    benches,
    sigv4::benches,
    xml::benches,
    multipart_plan::benches
);
criterion_main!(benches);

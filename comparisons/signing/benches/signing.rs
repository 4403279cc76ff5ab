//! One criterion run signing the same request with s3-sigv4, aws-sigv4 and
//! rusty-s3 (see `src/lib.rs` for the request and settings).
//!
//! Run: `cargo bench --bench signing` in `comparisons/signing`.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use signing_comparison::{AwsSigv4, RustyS3, S3Sigv4, request};

fn header_signing(c: &mut Criterion) {
    let mut group = c.benchmark_group("sign_headers");
    let ours = S3Sigv4::new();
    let aws = AwsSigv4::new();
    let template = request();
    group.bench_function("s3-sigv4", |b| {
        b.iter_batched_ref(
            || template.clone(),
            |r| ours.sign_headers(r),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("aws-sigv4", |b| {
        b.iter_batched_ref(
            || template.clone(),
            |r| aws.sign_headers(r),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn presigning(c: &mut Criterion) {
    let mut group = c.benchmark_group("presign");
    let ours = S3Sigv4::new();
    let aws = AwsSigv4::new();
    let rusty = RustyS3::new();
    let template = request();
    group.bench_function("s3-sigv4", |b| b.iter(|| ours.presign(&template)));
    group.bench_function("aws-sigv4", |b| b.iter(|| aws.presign(&template)));
    group.bench_function("rusty-s3", |b| b.iter(|| rusty.presign()));
    group.finish();
}

criterion_group!(benches, header_signing, presigning);
criterion_main!(benches);

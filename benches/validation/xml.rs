//! s3-xml: the published s3-wire decoding workloads and a realistic
//! 1,000-key ListObjectsV2 page (reported in MiB/s).

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use s3_wire::xml::{self, Limits, fuzzing};

pub fn benches(c: &mut Criterion) {
    let limits = Limits::default();
    let mut group = c.benchmark_group("xml");

    let one_entry = fuzzing::workload_list_objects_v2_one_entry();
    group.throughput(Throughput::Bytes(one_entry.len() as u64));
    group.bench_function("list_objects_v2_one_entry", |b| {
        b.iter(|| xml::decode_list_objects_v2(black_box(&one_entry), &limits).unwrap())
    });

    let error = fuzzing::workload_error_document();
    group.throughput(Throughput::Bytes(error.len() as u64));
    group.bench_function("error_document", |b| {
        b.iter(|| xml::decode_error_document(black_box(&error), &limits).unwrap())
    });

    let uploads = fuzzing::workload_list_multipart_uploads_one_upload();
    group.throughput(Throughput::Bytes(uploads.len() as u64));
    group.bench_function("list_multipart_uploads_one_upload", |b| {
        b.iter(|| xml::decode_list_multipart_uploads(black_box(&uploads), &limits).unwrap())
    });

    let page = fuzzing::workload_list_objects_v2_page(1000);
    group.throughput(Throughput::Bytes(page.len() as u64));
    group.bench_function("list_objects_v2_1000_keys", |b| {
        b.iter(|| xml::decode_list_objects_v2(black_box(&page), &limits).unwrap())
    });
    group.finish();
}

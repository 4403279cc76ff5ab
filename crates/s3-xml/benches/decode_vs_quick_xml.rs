//! Side by side on the same documents: the full s3-xml decode (tokenizer +
//! typed values + allocations) against quick-xml merely iterating its events
//! (no values, no allocations) — the floor a quick-xml-based decoder starts
//! from. Run with `cargo bench -p s3-xml --bench decode_vs_quick_xml`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use s3_xml::{Limits, fuzzing};

fn quick_xml_events(xml: &[u8]) -> usize {
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut events = 0;
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => return events,
            Ok(event) => {
                black_box(&event);
                events += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
}

fn benches(c: &mut Criterion) {
    let limits = Limits::default();
    let documents = [
        (
            "list_objects_v2_one_entry",
            fuzzing::workload_list_objects_v2_one_entry(),
        ),
        (
            "list_objects_v2_1000_keys",
            fuzzing::workload_list_objects_v2_page(1000),
        ),
    ];
    for (name, xml) in &documents {
        let mut group = c.benchmark_group(*name);
        group.throughput(Throughput::Bytes(xml.len() as u64));
        group.bench_function("s3_xml_decode", |b| {
            b.iter(|| s3_xml::decode_list_objects_v2(black_box(xml), &limits).unwrap())
        });
        group.bench_function("quick_xml_events_only", |b| {
            b.iter(|| quick_xml_events(black_box(xml)))
        });
        group.finish();
    }
}

criterion_group!(decode, benches);
criterion_main!(decode);

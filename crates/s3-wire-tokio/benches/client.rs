//! Client construction and cloning cost.
//!
//! `cargo bench -p s3-wire-tokio --bench client`

use criterion::{Criterion, criterion_group, criterion_main};
use s3_wire_tokio::Client;

fn build(endpoint: &str) -> Client {
    Client::builder()
        .endpoint(endpoint)
        .region("us-east-1")
        .static_credentials(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            None,
        )
        .build()
        .expect("client builds")
}

fn construction(c: &mut Criterion) {
    // Connection pools are created lazily by the HTTP stack; building a client
    // needs no runtime and opens no socket.
    c.bench_function("client/build_https", |b| {
        b.iter(|| build("https://s3.example.com"))
    });
    c.bench_function("client/build_loopback_http", |b| {
        b.iter(|| build("http://127.0.0.1:9000"))
    });
    let client = build("https://s3.example.com");
    c.bench_function("client/clone", |b| b.iter(|| client.clone()));
}

criterion_group!(benches, construction);
criterion_main!(benches);

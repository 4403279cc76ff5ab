//! Streaming GET cost of the client against the raw limit: the same 64 MiB body from a
//! loopback HTTP server, drained by plain reqwest (the transport alone) and by
//! `Client::get_object` (request building, SigV4 signing, retry wrapper, `ObjectBody` with
//! its length, stall and deadline checks), side by side in one run.
//!
//! `cargo bench -p s3-wire-tokio --bench download`

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use http_body_util::StreamBody;
use hyper::body::Frame;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use s3_wire_tokio::Client;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;

const BODY: u64 = 64 * 1024 * 1024;
/// The server sends the body as repeated clones of one buffer: its own cost is negligible.
const CHUNK: usize = 64 * 1024;

/// Serves every request with a `200` of [`BODY`] bytes, on its own thread and runtime.
fn start_server() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("non-blocking");
    let address = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("server runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let chunk = Bytes::from(vec![0x5a; CHUNK]);
            loop {
                let (stream, _) = listener.accept().await.expect("accept");
                let chunk = chunk.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |_request| {
                        let chunk = chunk.clone();
                        async move {
                            let frames = (0..BODY / CHUNK as u64)
                                .map(move |_| Ok::<_, Infallible>(Frame::data(chunk.clone())));
                            let body = StreamBody::new(futures_iter(frames));
                            Ok::<_, Infallible>(
                                http::Response::builder()
                                    .header("content-length", BODY)
                                    .header("etag", "\"bench\"")
                                    .body(body)
                                    .expect("response"),
                            )
                        }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    address
}

/// An iterator as an always-ready `Stream`.
fn futures_iter<I: Iterator + Unpin>(iter: I) -> impl futures_core::Stream<Item = I::Item> {
    struct Iter<I>(I);
    impl<I: Iterator + Unpin> futures_core::Stream for Iter<I> {
        type Item = I::Item;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<I::Item>> {
            std::task::Poll::Ready(self.0.next())
        }
    }
    Iter(iter)
}

fn download(c: &mut Criterion) {
    let address = start_server();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("client runtime");
    let client = Client::builder()
        .endpoint(format!("http://{address}"))
        .region("us-east-1")
        .static_credentials("AKIDEXAMPLE", "bench-secret", None)
        .build()
        .expect("client");
    // reqwest is built without a default crypto provider; plain HTTP still wants one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let plain = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("reqwest");
    let url = format!("http://{address}/bucket/object");

    let mut group = c.benchmark_group("download_64MiB");
    group.throughput(Throughput::Bytes(BODY));
    group.sample_size(20);
    group.bench_function("reqwest_plain", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut response = plain.get(&url).send().await.expect("response");
                let mut received = 0;
                while let Some(chunk) = response.chunk().await.expect("chunk") {
                    received += chunk.len() as u64;
                }
                assert_eq!(received, BODY);
            })
        })
    });
    group.bench_function("s3_wire_get_object", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let get = GetObject::new(
                    s3_wire_tokio::bucket("bucket").unwrap(),
                    s3_wire_tokio::key("object").unwrap(),
                );
                let mut body = client.get_object(get).await.expect("response").body;
                let mut received = 0;
                while let Some(chunk) = body.next_chunk().await {
                    received += chunk.expect("chunk").len() as u64;
                }
                assert_eq!(received, BODY);
            })
        })
    });
    group.finish();
}

criterion_group!(benches, download);
criterion_main!(benches);

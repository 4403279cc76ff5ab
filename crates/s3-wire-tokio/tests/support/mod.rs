//! Support code for the integration tests. Each test binary uses a different subset.
#![allow(dead_code)]

pub mod aws_chunked;
pub mod aws_gateway;
mod base64;
pub mod capture;
pub mod connect_proxy;
#[path = "../../../s3-wire-credentials/tests/support/endpoint.rs"]
pub mod endpoint;
pub mod endpoint_recorder;
pub mod fault;
pub mod form;
#[path = "../../../s3-wire-credentials/tests/support/imds.rs"]
pub mod imds;
pub mod moto;
pub mod pki;
#[path = "../../../s3-wire-credentials/tests/support/server.rs"]
pub mod server;
pub mod servers;
#[path = "../../../s3-wire-credentials/tests/support/sigv4.rs"]
pub mod sigv4;
#[path = "../../../s3-wire-credentials/tests/support/sts.rs"]
pub mod sts;

pub use base64::base64;
// Each test binary uses a different subset (the fault store decodes SSE-C keys).
#[allow(unused_imports)]
pub use base64::base64_decode;

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use s3_wire_tokio::RetryConfig;
use sha2::{Digest as _, Sha256};

/// A plain HTTP client (for presigned URLs), without connection reuse. It ignores the proxy
/// variables of the developer's environment: every test server is on this machine's loopback.
pub fn http_client() -> reqwest::Client {
    // reqwest is built without a default TLS crypto provider; plain HTTP still needs one set.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .no_proxy()
        .build()
        .expect("reqwest client")
}

/// A client of the embedded local-s3 and the server, started outside the async context
/// (it builds its own runtime). Keep the server until the client is done with it.
pub async fn local_s3() -> (s3_wire_tokio::Client, local_s3::LocalS3) {
    let server =
        tokio::task::spawn_blocking(|| local_s3::LocalS3::start().expect("start local-s3"))
            .await
            .expect("join");
    let client = s3_wire_tokio::Client::builder()
        .endpoint(server.endpoint())
        .region(server.region())
        .static_credentials(server.access_key(), server.secret_key(), None)
        .build()
        .expect("client");
    (client, server)
}

/// `len` pseudo-random bytes (xorshift64), the same for the same `seed`.
pub fn data(len: u64, seed: u64) -> Bytes {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// `max_attempts` attempts with millisecond backoff (1 ms, at most 20 ms), so tests stay fast.
pub fn retry(max_attempts: u32) -> RetryConfig {
    RetryConfig::default()
        .with_max_attempts(max_attempts)
        .with_delays(Duration::from_millis(1), Duration::from_millis(20))
}

/// A one-shot body stream of fixed chunks.
pub struct Chunks(pub std::collections::VecDeque<Bytes>);

/// A one-shot upload body: `data` streamed in `chunk`-byte pieces, its length announced.
pub fn one_shot(data: &[u8], chunk: usize) -> s3_wire_tokio::Body {
    let chunks = data.chunks(chunk).map(Bytes::copy_from_slice).collect();
    s3_wire_tokio::Body::from_stream(Chunks(chunks), data.len() as u64)
}

impl futures_core::Stream for Chunks {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready(self.0.pop_front().map(Ok))
    }
}

/// A one-shot body stream whose bytes come only after a delay from its first poll (a
/// producer that is slow to start), in one piece.
pub struct LateStream {
    data: Option<Bytes>,
    delay: Duration,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl LateStream {
    pub fn new(data: &[u8], delay: Duration) -> Self {
        Self {
            data: Some(Bytes::copy_from_slice(data)),
            delay,
            timer: None,
        }
    }
}

impl futures_core::Stream for LateStream {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let delay = self.delay;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(delay)));
        std::task::ready!(timer.as_mut().poll(cx));
        Poll::Ready(self.data.take().map(Ok))
    }
}

/// CRC32 (IEEE) computed here, bit by bit, independently of the client's checksum code.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// CRC-64/NVME computed here, bit by bit, independently of the client's checksum code
/// (reflected polynomial of 0xAD93D23594C93659, initial value and final XOR all ones).
pub fn crc64nvme(data: &[u8]) -> u64 {
    let mut crc = !0u64;
    for &byte in data {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x9A6C_9329_AC4B_C9B5
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

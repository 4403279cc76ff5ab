//! The cost of the first client of a process and of every further one. Neither loads
//! the platform's root certificates: that happens once per process, at the first TLS
//! handshake (`transport::PlatformVerifier`).
//!
//! `cargo run --release -p s3-wire-tokio --example first_client`

use std::time::Instant;

use s3_wire_tokio::Client;

fn build() -> Client {
    Client::builder()
        .endpoint("https://s3.example.com")
        .region("us-east-1")
        .static_credentials(
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            None,
        )
        .build()
        .expect("client builds")
}

fn main() {
    let started = Instant::now();
    let first = build();
    let first_took = started.elapsed();
    let started = Instant::now();
    let second = build();
    let second_took = started.elapsed();
    println!("first client: {first_took:?}, second client: {second_took:?}");
    drop((first, second));
}

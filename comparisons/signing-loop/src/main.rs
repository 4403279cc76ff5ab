//! `signing-loop [N] [clone-only]`: signs `GET /bucket/key%20with%20spaces`
//! (empty payload, cached key: the seed request of sigv4-signing.md) N times on
//! a fresh clone of the unsigned request, and prints ns per iteration: wall
//! time, and time on a CPU (the thread's `/proc/thread-self/schedstat`, which
//! waiting for a CPU on a loaded machine does not inflate).
//! `clone-only` runs the same loop without signing, to subtract the clone.

use std::hint::black_box;
use std::time::Instant;

use s3_sigv4::{Credentials, PayloadHash, Signer, SigningParams, SigningTime};

fn main() {
    let mut args = std::env::args().skip(1);
    let iterations: u64 = args.next().map_or(1_000_000, |n| n.parse().expect("N"));
    let clone_only = args.next().as_deref() == Some("clone-only");

    let signer = Signer::new();
    let credentials = Credentials::new(
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        None,
    );
    let time = SigningTime::from_parts(2013, 5, 24, 0, 0, 0).expect("time");
    let params = SigningParams::new("us-east-1", "s3", time, PayloadHash::Empty);
    let request =
        http::Request::get("https://s3.us-east-1.amazonaws.com/bucket/key%20with%20spaces")
            .body(())
            .expect("request");
    let mut warm = request.clone();
    let signature = signer
        .sign_headers(&mut warm, &credentials, &params)
        .expect("sign");
    assert_eq!(
        signature.to_hex(),
        "c3b747191b6a90ad57df54a25756db47b012fe1401114f74fec14454c744b186",
        "signature of the seed request"
    );

    let start_cpu = on_cpu_ns();
    let start = Instant::now();
    for _ in 0..iterations {
        let mut request = black_box(&request).clone();
        if !clone_only {
            black_box(
                signer
                    .sign_headers(&mut request, &credentials, &params)
                    .expect("sign"),
            );
        }
        black_box(request);
    }
    let elapsed = start.elapsed();
    let on_cpu = on_cpu_ns() - start_cpu;
    println!(
        "{:.1} ns per iteration wall, {:.1} ns on CPU ({iterations} iterations{})",
        elapsed.as_nanos() as f64 / iterations as f64,
        on_cpu as f64 / iterations as f64,
        if clone_only { ", clone only" } else { "" }
    );
}

/// Nanoseconds this thread has run on a CPU.
fn on_cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    stat.split_whitespace()
        .next()
        .and_then(|ns| ns.parse().ok())
        .expect("schedstat on-CPU time")
}

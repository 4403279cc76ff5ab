//! TLS with the program's crypto provider: a program that installs a rustls default
//! provider (aws-lc-rs, its FIPS build, any other) gets s3-wire's TLS from it, and a
//! program that installs none gets ring's. A test binary of its own: the default is one per
//! process and is installed once.

mod support;

use std::time::Duration;

use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::{Client, bucket, key};
use support::fault::{FaultServer, Reply};
use support::pki::{DEFAULT_VERSIONS, TestCa, server_config};

const SECRET_KEY: &str = "crypto-provider-secret-key";

#[tokio::test]
async fn tls_runs_on_the_provider_the_program_installed_and_on_ring_without_one() {
    let ca = TestCa::new("s3-wire crypto provider test CA");
    let server = FaultServer::start_tls_with(
        [Reply::ok("with ring"), Reply::ok("with the program's")],
        server_config(&ca.issue(&["localhost"]), DEFAULT_VERSIONS, &[b"http/1.1"]),
    );
    let client = || {
        Client::builder()
            .resolve("localhost", server.addr())
            .endpoint(format!("https://localhost:{}", server.addr().port()))
            .proxy_from_env(false)
            .static_credentials("AKIDCRYPTOPROVIDER", SECRET_KEY, None)
            .add_root_certificate_der(ca.der())
            .connect_timeout(Duration::from_secs(5))
            .build()
            .unwrap()
    };
    let get = |client: Client| async move {
        let object = GetObject::new(bucket("bucket").unwrap(), key("k").unwrap());
        let object = client.get_object(object).await.unwrap();
        object.body.collect().await.unwrap()
    };

    // No default installed: ring's provider, and its first choice of cipher suite (the test
    // server takes the client's order).
    assert_eq!(get(client()).await, "with ring");

    // The program installs its own: here ring's, offering ChaCha20-Poly1305 only, which
    // ring's default never puts first. A client built from now on speaks TLS with it.
    rustls::crypto::CryptoProvider {
        cipher_suites: vec![rustls::crypto::ring::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256],
        ..rustls::crypto::ring::default_provider()
    }
    .install_default()
    .unwrap();
    assert_eq!(get(client()).await, "with the program's");

    let suites: Vec<_> = server
        .tls_sessions()
        .iter()
        .map(|session| session.cipher_suite)
        .collect();
    let ring_first = rustls::crypto::ring::default_provider().cipher_suites[0].suite();
    assert_ne!(
        ring_first,
        rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256
    );
    assert_eq!(
        suites,
        [
            Some(ring_first),
            Some(rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256)
        ]
    );
    for request in server.requests() {
        support::fault::verify_recorded(&request, SECRET_KEY).unwrap();
    }
}

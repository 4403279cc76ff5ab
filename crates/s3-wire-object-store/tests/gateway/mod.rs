//! The gateway of s3-wire-tokio's access-mode tests and what it needs of that suite's
//! support (its shared files, compiled here too).
#![allow(dead_code)]

#[path = "../../../s3-wire-tokio/tests/support/aws_gateway.rs"]
pub mod aws_gateway;
#[path = "../../../s3-wire-tokio/tests/support/base64.rs"]
mod base64_encoding;
#[path = "../../../s3-wire-tokio/tests/support/pki.rs"]
pub mod pki;
#[path = "../../../s3-wire-credentials/tests/support/server.rs"]
pub mod server;
#[path = "../../../s3-wire-credentials/tests/support/sigv4.rs"]
pub mod sigv4;

pub use base64_encoding::base64;

pub fn http_client() -> reqwest::Client {
    super::support::install_crypto_provider();
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .no_proxy()
        .build()
        .expect("reqwest client")
}

pub fn retry(max_attempts: u32) -> s3_wire_tokio::RetryConfig {
    s3_wire_tokio::RetryConfig::default()
        .with_max_attempts(max_attempts)
        .with_delays(
            std::time::Duration::from_millis(1),
            std::time::Duration::from_millis(20),
        )
}

//! The `null-tls` server's PKI: a CA generated per run and a certificate it issues for
//! `127.0.0.1` and `localhost`, with the test PKI of `crates/s3-wire-tokio/tests/support`
//! (one certificate generator in the repository). The CA's PEM file is what every peer is
//! told to trust (`--ca-file`).

#[path = "../../../crates/s3-wire-tokio/tests/support/base64.rs"]
mod base64_encoding;
#[path = "../../../crates/s3-wire-tokio/tests/support/pki.rs"]
#[allow(dead_code)]
mod pki;

// pki.rs writes PEM with its parent's `base64`.
use base64_encoding::base64;

use std::path::{Path, PathBuf};

/// A run's CA PEM file and the server configuration of a certificate the CA issued.
pub struct RunPki {
    /// Where the CA PEM is, for the peers.
    pub ca_file: PathBuf,
    /// rustls (ring) presenting the leaf for 127.0.0.1 and localhost, TLS 1.3 and 1.2,
    /// ALPN `http/1.1` only (the null server speaks HTTP/1.1).
    pub server: rustls::ServerConfig,
}

/// A fresh CA and server certificate; the CA's PEM written to `dir/ca.pem`.
pub fn generate(dir: &Path) -> Result<RunPki, String> {
    let ca = pki::TestCa::new("s3-wire perf CA");
    let leaf = ca.issue(&["127.0.0.1", "localhost"]);
    let server = pki::server_config(&leaf, pki::DEFAULT_VERSIONS, &[b"http/1.1"]);
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).map_err(|e| format!("{}: {e}", ca_file.display()))?;
    Ok(RunPki { ca_file, server })
}

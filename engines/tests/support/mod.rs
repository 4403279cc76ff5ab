//! The S3 servers the engines' tests run on, started by the tests on 127.0.0.1: the embedded
//! local-s3 (s3s-fs) and moto 5.2.5 (the pinned venv of s3-wire-tokio's interop tests).
#![allow(dead_code)]

// The pinned moto and its venv, shared with the library's tests.
#[path = "../../../crates/s3-wire-tokio/tests/support/moto.rs"]
pub mod moto;

use std::sync::Arc;

use s3_wire_tokio::Client;
use s3_wire_tokio::credentials::{Env, MapEnv};
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;

/// A running S3-compatible server, its address and keys.
pub struct Server {
    pub name: &'static str,
    pub endpoint: String,
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
    /// Keeps the server running (local-s3's handle, moto's child process).
    _running: Box<dyn std::any::Any + Send + Sync>,
}

/// The embedded local-s3 (s3s-fs); it builds its own runtime, so it starts outside async.
pub async fn local_s3() -> Server {
    let server = tokio::task::spawn_blocking(|| local_s3::LocalS3::start().expect("local-s3"))
        .await
        .expect("join");
    Server {
        name: "local-s3",
        endpoint: server.endpoint().to_owned(),
        region: server.region().to_owned(),
        access_key: server.access_key().to_owned(),
        secret_key: server.secret_key().to_owned(),
        _running: Box::new(server),
    }
}

/// moto on a free loopback port (the venv is made from PyPI on first use).
pub async fn moto() -> Server {
    let moto = moto::moto().await;
    Server {
        name: "moto",
        endpoint: moto.endpoint(),
        region: moto::REGION.into(),
        access_key: moto::ACCESS_KEY.into(),
        secret_key: moto::SECRET_KEY.into(),
        _running: Box::new(moto),
    }
}

/// The server a test names: `local-s3` or `moto`.
pub async fn start(name: &str) -> Server {
    match name {
        "local-s3" => local_s3().await,
        "moto" => moto().await,
        other => panic!("no server {other}"),
    }
}

impl Server {
    /// The standard AWS environment a program on this server is given: keys, region and
    /// `AWS_ENDPOINT_URL`, and no home directory (no profile files are read).
    pub fn env(&self) -> MapEnv {
        MapEnv::new()
            .with_var("AWS_ACCESS_KEY_ID", &self.access_key)
            .with_var("AWS_SECRET_ACCESS_KEY", &self.secret_key)
            .with_var("AWS_REGION", &self.region)
            .with_var("AWS_ENDPOINT_URL", &self.endpoint)
            .with_home("/nonexistent")
    }

    pub fn shared_env(&self) -> Arc<dyn Env> {
        Arc::new(self.env())
    }

    /// The same variables, for a child process.
    pub fn env_vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", self.access_key.clone()),
            ("AWS_SECRET_ACCESS_KEY", self.secret_key.clone()),
            ("AWS_REGION", self.region.clone()),
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
        ]
    }

    pub fn client(&self) -> Client {
        Client::builder()
            .endpoint(&self.endpoint)
            .region(&self.region)
            .static_credentials(&self.access_key, &self.secret_key, None)
            .build()
            .expect("client")
    }

    pub async fn create_bucket(&self, name: &str) {
        self.client()
            .create_bucket(CreateBucket::new(s3_wire_tokio::bucket(name).unwrap()))
            .await
            .expect("create bucket");
    }
}

/// A TCP proxy on 127.0.0.1 in front of `upstream` that cuts every connection whose client
/// sends `needle` (a request line, say `PUT /bucket/prefix/`): it forwards the bytes before
/// the needle and a few after it, then closes both sides, as a network failing mid-request
/// does. Everything else passes through. Returns its endpoint and the count of cuts.
pub async fn cutting_proxy(
    upstream: &str,
    needle: &'static str,
) -> (String, Arc<std::sync::atomic::AtomicU64>) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let upstream = upstream.trim_start_matches("http://").to_owned();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let cuts = Arc::new(AtomicU64::new(0));
    let counted = cuts.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else {
                continue;
            };
            let cuts = counted.clone();
            tokio::spawn(async move {
                let (mut from_client, mut to_server) = (client, server);
                let (mut client_read, mut client_write) = from_client.split();
                let (mut server_read, mut server_write) = to_server.split();
                let upward = async {
                    let mut buffer = vec![0u8; 64 * 1024];
                    loop {
                        let read = client_read.read(&mut buffer).await?;
                        if read == 0 {
                            return Ok::<_, std::io::Error>(());
                        }
                        let chunk = &buffer[..read];
                        if let Some(at) = chunk
                            .windows(needle.len())
                            .position(|window| window == needle.as_bytes())
                        {
                            let keep = (at + needle.len() + 64).min(read);
                            server_write.write_all(&chunk[..keep]).await?;
                            cuts.fetch_add(1, Ordering::Relaxed);
                            return Ok(());
                        }
                        server_write.write_all(chunk).await?;
                    }
                };
                let downward = tokio::io::copy(&mut server_read, &mut client_write);
                // Whichever side ends first ends the connection (a cut ends both).
                tokio::select! {
                    _ = upward => {}
                    _ = downward => {}
                }
            });
        }
    });
    (endpoint, cuts)
}

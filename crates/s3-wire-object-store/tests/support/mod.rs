//! The servers and the two backends the tests run object_store's suite against.
#![allow(dead_code)]

pub mod fault;
// The pinned moto and its venv, shared with s3-wire-tokio's two-server suite.
#[path = "../../../s3-wire-tokio/tests/support/moto.rs"]
pub mod moto;

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::aws::{AmazonS3, AmazonS3Builder, S3ConditionalPut, S3CopyIfNotExists};
use s3_wire_object_store::S3WireStore;
use s3_wire_tokio::Client;
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;

/// An S3-compatible server the suite runs against, with its address and keys.
pub struct Server {
    pub endpoint: String,
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
    moto: bool,
    /// Keeps the server running (local-s3's handle, moto's child process).
    _running: Box<dyn std::any::Any + Send + Sync>,
}

/// Sets ring as the process's rustls provider: reqwest (under AmazonS3 and s3-wire) is
/// built without one, and even plain-HTTP clients need it.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The embedded local-s3 (s3s-fs), started outside the async context (it builds its own
/// runtime), as s3-wire-tokio's tests do.
pub async fn local_s3() -> Server {
    install_crypto_provider();
    let server =
        tokio::task::spawn_blocking(|| local_s3::LocalS3::start().expect("start local-s3"))
            .await
            .expect("join");
    Server {
        endpoint: server.endpoint().to_owned(),
        region: server.region().to_owned(),
        access_key: server.access_key().to_owned(),
        secret_key: server.secret_key().to_owned(),
        moto: false,
        _running: Box::new(server),
    }
}

/// moto 5.2.5 (server mode) in the venv s3-wire-tokio's interop tests make from PyPI
/// (`crates/s3-wire-tokio/tests/interop/requirements.txt`), on a free loopback port;
/// stopped when dropped.
pub async fn moto() -> Server {
    install_crypto_provider();
    let moto = tokio::task::spawn_blocking(moto::Moto::start)
        .await
        .expect("start moto");
    Server {
        endpoint: moto.endpoint(),
        region: moto::REGION.into(),
        access_key: moto::ACCESS_KEY.into(),
        secret_key: moto::SECRET_KEY.into(),
        moto: true,
        _running: Box::new(moto),
    }
}

impl Server {
    pub fn is_moto(&self) -> bool {
        self.moto
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

    /// s3-wire's store of a new bucket `name`. Listings without `encoding-type=url` on
    /// local-s3, which echoes the encoding type but sends keys unencoded.
    pub async fn s3_wire(&self, name: &str, url_encoded_listings: bool) -> S3WireStore {
        self.create_bucket(name).await;
        S3WireStore::new(self.client(), s3_wire_tokio::bucket(name).unwrap())
            .with_url_encoded_listings(url_encoded_listings)
    }

    /// object_store's own S3 backend on a new bucket `name`: this server's endpoint, region
    /// and keys, plain HTTP, path-style; conditional puts by ETag, create-only copies by
    /// multipart (`S3CopyIfNotExists::Multipart`, the mode that needs no vendor header).
    pub async fn amazon_s3(&self, name: &str) -> AmazonS3 {
        self.amazon_s3_builder(name)
            .await
            .build()
            .expect("AmazonS3")
    }

    pub async fn amazon_s3_builder(&self, name: &str) -> AmazonS3Builder {
        self.create_bucket(name).await;
        AmazonS3Builder::new()
            .with_endpoint(&self.endpoint)
            .with_region(&self.region)
            .with_access_key_id(&self.access_key)
            .with_secret_access_key(&self.secret_key)
            .with_allow_http(true)
            .with_virtual_hosted_style_request(false)
            .with_bucket_name(name)
            .with_conditional_put(S3ConditionalPut::ETagMatch)
            .with_copy_if_not_exists(S3CopyIfNotExists::Multipart)
    }
}

/// A store as the suite takes it.
pub fn dyn_store(store: impl ObjectStore) -> Arc<dyn ObjectStore> {
    Arc::new(store)
}

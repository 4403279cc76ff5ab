//! The signer and the credential chain in an HTTP stack of your own, without s3-wire-tokio:
//! `s3-ops` encodes each S3 request and decodes its answer, `s3-sigv4` signs it with
//! credentials from this crate's default chain (the environment, profiles with roles to
//! assume, SSO, web identity, containers, instance metadata; cached and refreshed), and
//! hyper's own client sends it.
//!
//! ```text
//! AWS_PROFILE=app cargo run -p s3-wire-credentials --example hyper_stack -- BUCKET KEY
//! ```
//!
//! puts a few bytes at `KEY` and reads them back. The region and the endpoint come from
//! where the AWS CLI reads them (`AWS_REGION`, `AWS_ENDPOINT_URL`, the profile).
//! `tests/hyper_stack.rs` runs it against local-s3, with a profile whose role is assumed
//! through a loopback STS.

use std::error::Error;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use s3_ops::{
    Body, BucketName, ChecksumAlgorithm, Endpoint, GetObject, ObjectKey, Operation, PutObject,
};
use s3_sigv4::{PayloadHash, Signer, SigningTime};
use s3_wire_credentials::{CredentialsProvider, DefaultChain, Env, ProcessEnv, SharedConfig};

/// What every request needs: the HTTP client, where requests go, and how they are signed.
pub struct S3 {
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    endpoint: Endpoint,
    credentials: DefaultChain,
    signer: Signer,
}

impl S3 {
    /// The region and endpoint from `env` and the shared files, credentials from the
    /// default chain over the same `env`.
    pub fn from_env(env: Arc<dyn Env>) -> Result<Self, Box<dyn Error>> {
        let config = SharedConfig::load(env.as_ref())?;
        let region = config.region()?.unwrap_or_else(|| "us-east-1".to_owned());
        let endpoint = match config.endpoint_url()? {
            Some(url) => Endpoint::custom(&url, &region)?,
            None => Endpoint::aws(&region)?,
        };
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_platform_verifier(rustls::crypto::ring::default_provider())?
            .https_or_http()
            .enable_http1()
            .build();
        Ok(Self {
            http: Client::builder(TokioExecutor::new()).build(connector),
            endpoint,
            credentials: DefaultChain::with_env(env),
            signer: Signer::new(),
        })
    }

    /// One operation: encode, sign, send, read the answer within the operation's bound,
    /// decode. (No retries: a transport of your own decides those, `S3Error::retry_class`
    /// says which failures are worth one.)
    pub async fn send<O: Operation>(&self, operation: &O) -> Result<O::Output, Box<dyn Error>> {
        let encoded = operation.request(&self.endpoint)?;
        let scope = encoded.signing().clone();
        if scope.express_session().is_some() {
            return Err(
                "a directory bucket signs with CreateSession credentials: see \
                        s3-wire-tokio, which creates and caches them"
                    .into(),
            );
        }
        let body = match encoded.body {
            Body::Empty => Bytes::new(),
            Body::Bytes(bytes) => bytes,
            _ => return Err("this example sends in-memory bodies only".into()),
        };
        let credentials = self.credentials.credentials().await?;
        let time = SigningTime::from_system_time(SystemTime::now())?;
        let params = scope.params(&self.endpoint, time, PayloadHash::of(&body))?;
        let mut request = encoded.request;
        self.signer
            .sign_headers(&mut request, &credentials, &params)?;
        let (head, ()) = request.into_parts();
        let answer = self
            .http
            .request(http::Request::from_parts(head, Full::new(body)))
            .await?;
        let (head, body) = answer.into_parts();
        let body = Limited::new(body, operation.response_body_limit())
            .collect()
            .await
            .map_err(|error| -> Box<dyn Error> { error })?
            .to_bytes();
        Ok(operation.response(http::Response::from_parts(head, body))?)
    }
}

/// Stores `data` at `key` (with a CRC32C the store checks) and reads it back.
pub async fn put_and_get(
    s3: &S3,
    bucket: &BucketName,
    key: &ObjectKey,
    data: Bytes,
) -> Result<Bytes, Box<dyn Error>> {
    let put = PutObject::new(bucket.clone(), key.clone())
        .body(data)
        .checksum_algorithm(ChecksumAlgorithm::Crc32c);
    s3.send(&put).await?;
    let object = s3
        .send(&GetObject::new(bucket.clone(), key.clone()))
        .await?;
    Ok(object.body)
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(bucket), Some(key)) = (args.next(), args.next()) else {
        return Err("usage: hyper_stack BUCKET KEY".into());
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let s3 = S3::from_env(Arc::new(ProcessEnv))?;
        let data = Bytes::from_static(b"sent by hyper, signed by s3-sigv4\n");
        let read = put_and_get(
            &s3,
            &BucketName::new(&bucket)?,
            &ObjectKey::new(&key)?,
            data.clone(),
        )
        .await?;
        if read != data {
            return Err(
                format!("read back {} bytes that differ from those sent", read.len()).into(),
            );
        }
        println!(
            "stored and read back {} bytes at s3://{bucket}/{key}",
            read.len()
        );
        Ok(())
    })
}

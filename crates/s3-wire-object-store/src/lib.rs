//! An [Apache `object_store`](https://docs.rs/object_store) backend on s3-wire: DataFusion,
//! Ballista, delta-rs, Polars, LanceDB and every other user of `object_store` read and write
//! S3 through s3-wire's client — its retries, timeouts, checksums on every upload and
//! download, resumed downloads, and one memory budget per client — without changing a line.
//!
//! [`S3WireStore`] is one bucket of an S3-compatible store, from an [`s3_wire_tokio::Client`]
//! (the `s3_wire::Client` of the facade crate is the same type). It implements the traits of
//! **object_store 0.13 and 0.14**, each behind a feature, both from one source (compiled
//! once per version):
//!
//! | feature | traits implemented | for |
//! |---|---|---|
//! | `object-store-0-14` (default) | [`v0_14`]: `object_store` 0.14's `ObjectStore`, `MultipartStore`, `PaginatedListStore`, `Signer` | programs on object_store 0.14 |
//! | `object-store-0-13` | [`v0_13`]: the same traits of `object_store` 0.13 | DataFusion 55, Ballista 55, deltalake 1.1, Lance 14, Polars 0.55 (all resolve object_store 0.13.2) |
//!
//! Pick the version your engine resolves (`cargo tree -i object_store` names it); both may be
//! on, and the same store then serves both. `Signer` (presigned URLs) needs the `signer`
//! feature: object_store defines that trait only with its cloud backends' shared code.
//!
//! # Registering it where a query engine looks for stores
//!
//! Engines resolve `s3://bucket/...` URLs through an `object_store` registry (DataFusion's
//! `RuntimeEnv::register_object_store(&url, store)` takes the same `Arc<dyn ObjectStore>`):
//!
//! ```no_run
//! # use object_store_014 as object_store;
//! use std::sync::Arc;
//!
//! use object_store::registry::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
//! use object_store::{ObjectStore, ObjectStoreExt};
//! use s3_wire_object_store::S3WireStore;
//! use url::Url;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! // Credentials, region and endpoint from AWS_* variables or ~/.aws/{config,credentials}.
//! let store: Arc<dyn ObjectStore> = Arc::new(S3WireStore::from_env("analytics")?);
//!
//! let registry = DefaultObjectStoreRegistry::new();
//! registry.register(Url::parse("s3://analytics")?, store);
//! // What an engine does with a table location:
//! let (store, path) = registry.resolve(&Url::parse("s3://analytics/events/2024/part-0.parquet")?)?;
//! let footer = store.get_range(&path, 0..8).await?;
//! println!("{} bytes of {path}", footer.len());
//! # Ok(()) }
//! ```
//!
//! The crate's `engines/` workspace runs DataFusion 55, Ballista 55 (a scheduler and
//! executors as separate processes) and delta-rs 1.1 on it.
//!
//! # What each method does
//!
//! | method | S3 requests |
//! |---|---|
//! | `put_opts` | s3-wire's managed upload of the payload's chunks as they are (never joined into one buffer): one PutObject up to 16 MiB, a parallel multipart upload above; `PutMode::Create` adds `If-None-Match: *` (a lost answer is resolved by looking at the stored object), `PutMode::Update` is a PutObject with `If-Match` on the ETag; attributes and tags go with it |
//! | `put_multipart_opts` | `S3WireUpload` ([`v0_13::S3WireUpload`], [`v0_14::S3WireUpload`]): parts in parallel within the client's memory budget, each sent in the chunks it came in, the whole object's CRC checked at completion, aborted on `abort` and on drop |
//! | `get_opts` | a streaming GetObject (or HeadObject with `head`): ranges (bounded, offset, suffix), `If-Match`, `If-None-Match`, `If-(Un)Modified-Since`, version; the body's length and full-object checksum are verified as it is read, and a body that breaks off is resumed |
//! | `get_ranges` | ranges closer than 1 MiB coalesced, up to 10 ranged GETs at once |
//! | `delete_stream` | DeleteObjects, 1,000 keys a request, 4 requests at once |
//! | `list`, `list_with_offset`, `list_with_delimiter` | ListObjectsV2 pages, fetched as consumed; the offset is sent as `start-after` |
//! | `copy_opts` (`copy`, `copy_if_not_exists`) | s3-wire's managed copy (CopyObject up to 5 GiB, parallel UploadPartCopy above); the create-only copy always goes through a multipart upload completed with `If-None-Match: *` (see `copy_opts` in the module of either version) |
//! | `rename_opts` | copy, then delete the source (`object_store`'s default) |
//!
//! # Errors
//!
//! Callers keep matching on `object_store`'s kinds: `NotFound`, `AlreadyExists`
//! (`PutMode::Create` and create-only copies), `Precondition`, `NotModified`,
//! `NotImplemented` (the store answered 501), `PermissionDenied`, `Unauthenticated`; anything
//! else is `Generic`. Each variant with a source has the [`s3_wire_tokio::Error`] as it
//! (S3 code, request id, attempts: `err.source()?.downcast_ref::<s3_wire_tokio::Error>()`),
//! or an [`AdapterError`] for what the adapter itself refused.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod adapter_error;

#[cfg(feature = "object-store-0-13")]
pub mod v0_13;
#[cfg(feature = "object-store-0-14")]
pub mod v0_14;

#[cfg(not(any(feature = "object-store-0-13", feature = "object-store-0-14")))]
compile_error!(
    "s3-wire-object-store implements nothing without `object-store-0-13` or `object-store-0-14`"
);

use std::fmt;

use s3_wire_tokio::credentials::{Env, ProcessEnv};
use s3_wire_tokio::s3_ops::{BucketName, ChecksumAlgorithm, RequestExtras};
use s3_wire_tokio::{Client, ClientBuilder};

pub use adapter_error::AdapterError;

/// A boolean variable as object_store reads it (`true`/`false`, `1`/`0`, `yes`/`no`, `on`/
/// `off`, any case); unset is false; anything else is an error naming the variable.
fn env_flag(env: &dyn Env, name: &'static str) -> Result<bool, s3_wire_tokio::Error> {
    let Some(value) = env.var(name) else {
        return Ok(false);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" | "" => Ok(false),
        _ => Err(s3_wire_tokio::Error::from(
            s3_wire_tokio::s3_ops::Error::InvalidInput(
                s3_wire_tokio::s3_ops::InvalidInput::Parameter {
                    name,
                    reason: format!("must be true or false, not {value:?}"),
                },
            ),
        )),
    }
}

/// One bucket of an S3-compatible store as an `object_store` store, on s3-wire's client.
///
/// Cheap to clone (the client is an `Arc`); clones share connections, credentials, retry
/// budget and memory budget.
#[derive(Clone)]
pub struct S3WireStore {
    client: Client,
    bucket: BucketName,
    url_encoded_listings: bool,
    upload_checksum: Option<ChecksumAlgorithm>,
}

impl S3WireStore {
    /// The store of `bucket`, reached with `client`.
    pub fn new(client: Client, bucket: BucketName) -> Self {
        Self {
            client,
            bucket,
            url_encoded_listings: true,
            upload_checksum: Some(ChecksumAlgorithm::Crc32),
        }
    }

    /// The store of `bucket` with a client configured from the standard AWS environment
    /// variables and shared config files (see `s3_wire_tokio::ClientBuilder::from_env`:
    /// credentials, region, endpoint, FIPS, dual-stack, acceleration), plus the variables
    /// object_store's `AmazonS3Builder::from_env` reads for the same choices:
    /// `AWS_SKIP_SIGNATURE` (anonymous requests, for public buckets), `AWS_REQUEST_PAYER`
    /// (Requester Pays) and `AWS_S3_EXPRESS` (the bucket must then be an S3 Express One Zone
    /// directory bucket; s3-wire recognises one by its name either way). `bucket` may be any
    /// name s3-wire accepts: an access point ARN or alias, a directory bucket.
    pub fn from_env(bucket: &str) -> Result<Self, s3_wire_tokio::Error> {
        Self::from_env_with(bucket, std::sync::Arc::new(ProcessEnv))
    }

    /// [`S3WireStore::from_env`] with the variables and home directory of `env`.
    pub fn from_env_with(
        bucket: &str,
        env: std::sync::Arc<dyn Env>,
    ) -> Result<Self, s3_wire_tokio::Error> {
        let bucket = s3_wire_tokio::bucket(bucket)?;
        let mut builder = ClientBuilder::from_env_with(env.clone());
        if env_flag(env.as_ref(), "AWS_SKIP_SIGNATURE")? {
            builder = builder.anonymous();
        }
        if env_flag(env.as_ref(), "AWS_REQUEST_PAYER")? {
            builder = builder.request_payer(true);
        }
        if env_flag(env.as_ref(), "AWS_S3_EXPRESS")? && !bucket.is_s3_express() {
            return Err(s3_wire_tokio::Error::from(
                s3_wire_tokio::s3_ops::Error::InvalidInput(
                    s3_wire_tokio::s3_ops::InvalidInput::Parameter {
                        name: "AWS_S3_EXPRESS",
                        reason: format!(
                            "is true, but {bucket:?} is not a directory bucket name \
                         (<base>--<zone-id>--x-s3)"
                        ),
                    },
                ),
            ));
        }
        Ok(Self::new(builder.build()?, bucket))
    }

    /// Sends `x-amz-request-payer: requester` with every request of this store (a Requester
    /// Pays bucket refuses requests without it), whatever the client's own setting.
    /// object_store's `with_request_payer`.
    pub fn with_request_payer(mut self, enabled: bool) -> Self {
        self.client = self
            .client
            .with_request_extras(RequestExtras::new().request_payer(enabled));
        self
    }

    /// Whether listings ask for `encoding-type=url` (on by default: keys may hold characters
    /// XML 1.0 cannot carry). Turn it off for stores that echo the encoding type but send
    /// keys unencoded (s3s-fs 0.14): keys with `%` would otherwise be decoded a second time.
    pub fn with_url_encoded_listings(mut self, enabled: bool) -> Self {
        self.url_encoded_listings = enabled;
        self
    }

    /// The checksum every upload carries (CRC32 by default; a CRC gives multipart objects a
    /// full-object checksum, combined here from the parts). `None` for stores that reject
    /// checksums.
    pub fn with_upload_checksum(mut self, algorithm: Option<ChecksumAlgorithm>) -> Self {
        self.upload_checksum = algorithm;
        self
    }

    /// The client requests are sent with.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The bucket.
    pub fn bucket(&self) -> &BucketName {
        &self.bucket
    }
}

impl fmt::Debug for S3WireStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3WireStore")
            .field("bucket", &self.bucket)
            .field("client", &self.client)
            .field("url_encoded_listings", &self.url_encoded_listings)
            .field("upload_checksum", &self.upload_checksum)
            .finish()
    }
}

impl fmt::Display for S3WireStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S3WireStore({})", self.bucket.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_its_bucket() {
        let client = Client::builder()
            .endpoint("http://127.0.0.1:9")
            .static_credentials("AKID", "secret", None)
            .build()
            .unwrap();
        let store = S3WireStore::new(client, s3_wire_tokio::bucket("bucket").unwrap());
        assert_eq!(store.to_string(), "S3WireStore(bucket)");
    }
}

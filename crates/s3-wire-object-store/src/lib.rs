//! An [`object_store`] backend on s3-wire: DataFusion, Polars, delta-rs, LanceDB and every
//! other user of `object_store` 0.14 read and write S3 through s3-wire's client — its
//! retries, timeouts, checksums on every upload and download, resumed downloads, and one
//! memory budget per client — without changing a line.
//!
//! [`S3WireStore`] implements [`ObjectStore`], [`MultipartStore`], [`PaginatedListStore`]
//! and, with the `signer` feature, `object_store::signer::Signer` (presigned URLs; object_store
//! defines that trait only with its `cloud-base` feature, which the `signer` feature turns
//! on) for one bucket, from an [`s3_wire_tokio::Client`] (the `s3_wire::Client` of the facade
//! crate is the same type).
//!
//! # Registering it where a query engine looks for stores
//!
//! Engines resolve `s3://bucket/...` URLs through an `object_store` registry (DataFusion's
//! `RuntimeEnv::register_object_store(&url, store)` takes the same `Arc<dyn ObjectStore>`):
//!
//! ```no_run
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
//! # What each method does
//!
//! | method | S3 requests |
//! |---|---|
//! | `put_opts` | s3-wire's managed upload: one PutObject up to 16 MiB, a parallel multipart upload above; `PutMode::Create` adds `If-None-Match: *` (a lost answer is resolved by looking at the stored object), `PutMode::Update` is a PutObject with `If-Match` on the ETag; attributes and tags go with it |
//! | `put_multipart_opts` | [`S3WireUpload`]: parts in parallel within the client's memory budget, the whole object's CRC checked at completion, aborted on `abort` and on drop |
//! | `get_opts` | a streaming GetObject (or HeadObject with `head`): ranges (bounded, offset, suffix), `If-Match`, `If-None-Match`, `If-(Un)Modified-Since`, version; the body's length and full-object checksum are verified as it is read, and a body that breaks off is resumed |
//! | `get_ranges` | ranges closer than 1 MiB coalesced, up to 10 ranged GETs at once |
//! | `delete_stream` | DeleteObjects, 1,000 keys a request, 4 requests at once |
//! | `list`, `list_with_offset`, `list_with_delimiter` | ListObjectsV2 pages, fetched as consumed; the offset is sent as `start-after` |
//! | `copy_opts` (`copy`, `copy_if_not_exists`) | s3-wire's managed copy (CopyObject up to 5 GiB, parallel UploadPartCopy above); the create-only copy always goes through a multipart upload completed with `If-None-Match: *` (see [`ObjectStore::copy_opts`] on [`S3WireStore`]) |
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

mod convert;
mod error;
mod multipart;

use std::fmt;
use std::ops::Range;
#[cfg(feature = "signer")]
use std::time::Duration;
use std::time::SystemTime;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt, TryStreamExt};
use object_store::list::{PaginatedListOptions, PaginatedListResult, PaginatedListStore};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
#[cfg(feature = "signer")]
use object_store::signer::Signer;
use object_store::{
    CopyMode, CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartId,
    MultipartUpload, ObjectMeta, ObjectStore, PutMode, PutMultipartOptions, PutOptions, PutPayload,
    PutResult,
};
use s3_wire_tokio::credentials::{Env, ProcessEnv};
use s3_wire_tokio::s3_ops::ops::copy_source::CopySource;
use s3_wire_tokio::s3_ops::ops::delete_objects::DeleteObjects;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::{HeadObject, ObjectHead};
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::{BucketName, ChecksumAlgorithm, ObjectKey, RequestExtras};
use s3_wire_tokio::s3_xml;
use s3_wire_tokio::{Client, ClientBuilder, UploadSource};

pub use error::AdapterError;
pub use multipart::S3WireUpload;

use crate::error::generic;
use crate::multipart::Target;

/// Applies `options`' selectors and conditions to a GetObject or HeadObject (the same
/// setters on both).
macro_rules! select {
    ($request:ident, $options:ident) => {
        if let Some(range) = &$options.range {
            $request = $request.range(convert::byte_range(range));
        }
        if let Some(etag) = &$options.if_match {
            $request = $request.if_match(etag.clone());
        }
        if let Some(etag) = &$options.if_none_match {
            $request = $request.if_none_match(etag.clone());
        }
        if let Some(time) = $options.if_modified_since {
            $request = $request.if_modified_since(SystemTime::from(time));
        }
        if let Some(time) = $options.if_unmodified_since {
            $request = $request.if_unmodified_since(SystemTime::from(time));
        }
        if let Some(version) = &$options.version {
            $request = $request.version_id(version.clone());
        }
    };
}

/// Keys per DeleteObjects request: S3's maximum.
const DELETE_BATCH: usize = 1_000;
/// DeleteObjects requests in flight at once.
const DELETE_CONCURRENCY: usize = 4;
/// Create-only copies go through UploadPartCopy parts this large (S3 allows up to 5 GiB;
/// larger parts mean fewer requests, and copied parts hold no memory here).
const CREATE_ONLY_COPY_PART: u64 = 1 << 30;

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

    fn target(&self, location: &Path, upload_id: String) -> Result<Target, object_store::Error> {
        Ok(Target {
            client: self.client.clone(),
            bucket: self.bucket.clone(),
            key: convert::key(location)?,
            location: location.clone(),
            upload_id,
            algorithm: self.upload_checksum,
        })
    }

    fn listing(&self) -> ListObjectsV2 {
        ListObjectsV2::new(self.bucket.clone()).url_encoding(self.url_encoded_listings)
    }

    /// Every object under `prefix` (after `start_after`), page by page as consumed.
    fn list_objects(
        &self,
        prefix: Option<&Path>,
        start_after: Option<String>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let mut request = self.listing();
        if let Some(prefix) = convert::list_prefix(prefix) {
            request = request.prefix(prefix);
        }
        if let Some(offset) = start_after {
            request = request.start_after(offset);
        }
        self.client
            .list_objects_v2_pages(request)
            .map_err(|e| error::map(e, "ListObjectsV2", ""))
            .map_ok(|page| stream::iter(page.result.contents.into_iter().map(listed_meta)))
            .try_flatten()
            .boxed()
    }

    async fn head_or_get(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        if let Some(range) = &options.range {
            range.is_valid().map_err(generic)?;
        }
        let key = convert::key(location)?;
        let path = location.as_ref();
        let (head, body) = if options.head {
            let mut head = HeadObject::new(self.bucket.clone(), key);
            select!(head, options);
            let head = self
                .client
                .head_object(head)
                .await
                .map_err(|e| error::map(e, "HeadObject", path))?;
            (head, stream::empty().boxed())
        } else {
            let mut get = GetObject::new(self.bucket.clone(), key);
            select!(get, options);
            let got = self
                .client
                .get_object(get)
                .await
                .map_err(|e| error::map(e, "GetObject", path))?;
            // The body fails with the client's error (a checksum or length mismatch, a
            // connection lost beyond resumption) where it happens.
            let body = got.body.map_err(generic).boxed();
            (got.output.head, body)
        };
        let meta = convert::meta(location, &head)?;
        let range = self.answered_range(&options, &head, meta.size)?;
        Ok(GetResult {
            payload: GetResultPayload::Stream(body),
            attributes: convert::attributes(&head),
            meta,
            range,
            extensions: Default::default(),
        })
    }

    /// The bytes the answer holds, checked against the range asked for.
    fn answered_range(
        &self,
        options: &GetOptions,
        head: &ObjectHead,
        size: u64,
    ) -> object_store::Result<Range<u64>> {
        let Some(asked) = &options.range else {
            return Ok(0..size);
        };
        let expected = convert::expected_range(asked, size);
        if options.head {
            // A HEAD carries no bytes: it reports the object.
            return Ok(expected);
        }
        let actual = match &head.content_range {
            Some(range) => range.first..range.last + 1,
            // A store that ignored the Range header sent the whole object.
            None => 0..size,
        };
        if actual != expected {
            return Err(generic(AdapterError::UnexpectedRange { expected, actual }));
        }
        Ok(actual)
    }

    /// The create-only copy: a multipart upload of UploadPartCopy parts, completed with
    /// `If-None-Match: *` (see [`ObjectStore::copy_opts`]).
    async fn copy_create_only(
        &self,
        source: CopySource,
        from: &Path,
        to: &Path,
        key: ObjectKey,
    ) -> object_store::Result<()> {
        let head = self
            .client
            .head_object(source.head_object())
            .await
            .map_err(|e| error::map(e, "HeadObject", from.as_ref()))?;
        if head.content_length == Some(0) {
            // No range of an empty object can be copied: write an empty one with its
            // description, if nothing is there.
            let put = PutObject::new(self.bucket.clone(), key)
                .attributes(s3_wire_tokio::s3_ops::ObjectAttributes::from_head(&head))
                .if_none_match_any();
            self.client
                .put_object(put, Bytes::new())
                .await
                .map_err(|e| error::map_create(e, "PutObject", to.as_ref()))?;
            return Ok(());
        }
        self.client
            .copy(source, self.bucket.clone(), key)
            .create_only()
            .single_request_limit(0)
            .part_size(CREATE_ONLY_COPY_PART)
            .await
            .map_err(|e| error::map_create(e, "UploadPartCopy", to.as_ref()))?;
        Ok(())
    }
}

/// A listed object's metadata (listings carry no version).
fn listed_meta(object: s3_xml::Object) -> object_store::Result<ObjectMeta> {
    let last_modified = object
        .last_modified
        .to_system_time()
        .ok_or_else(|| generic(AdapterError::Incomplete("a representable LastModified")))?;
    Ok(ObjectMeta {
        location: convert::path(&object.key)?,
        last_modified: convert::chrono_time(last_modified),
        size: object.size,
        e_tag: object.etag.map(|etag| etag.as_str().to_owned()),
        version: None,
    })
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

#[async_trait]
impl ObjectStore for S3WireStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        let key = convert::key(location)?;
        let attributes = convert::object_attributes(&opts.attributes, &opts.tags)?;
        let path = location.as_ref();
        let bytes = Bytes::from(payload);
        let create = match opts.mode {
            PutMode::Overwrite => false,
            PutMode::Create => true,
            PutMode::Update(version) => {
                // S3 conditions writes on the ETag only; one request (up to 5 GiB).
                let etag = version
                    .e_tag
                    .ok_or_else(|| generic(AdapterError::UpdateWithoutETag))?;
                let put = PutObject::new(self.bucket.clone(), key)
                    .attributes(attributes)
                    .if_match(etag);
                let put = match self.upload_checksum {
                    Some(algorithm) => put.checksum_algorithm(algorithm),
                    None => put.no_checksum(),
                };
                let stored = self
                    .client
                    .put_object(put, bytes)
                    .await
                    .map_err(|e| error::map_update(e, "PutObject", path))?;
                return Ok(PutResult {
                    e_tag: stored.etag.map(|etag| etag.as_str().to_owned()),
                    version: stored.version_id,
                    extensions: Default::default(),
                });
            }
        };
        let mut upload = self
            .client
            .upload(self.bucket.clone(), key, UploadSource::bytes(bytes))
            .attributes(attributes)
            .checksum(self.upload_checksum);
        if create {
            upload = upload.create_only();
        }
        let stored = upload.await.map_err(|e| {
            if create {
                error::map_create(e, "PutObject", path)
            } else {
                error::map(e, "PutObject", path)
            }
        })?;
        Ok(PutResult {
            e_tag: stored.etag.map(|etag| etag.as_str().to_owned()),
            version: stored.version_id,
            extensions: Default::default(),
        })
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let id = self.create_multipart_opts(location, opts).await?;
        Ok(Box::new(S3WireUpload::new(self.target(location, id)?)))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.head_or_get(location, options).await
    }

    /// Ranges closer than 1 MiB (`OBJECT_STORE_COALESCE_DEFAULT`) are fetched as one, the
    /// merged ranges with up to 10 GETs in flight, and each asked range cut out of them.
    async fn get_ranges(
        &self,
        location: &Path,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        object_store::coalesce_ranges(
            ranges,
            |range| {
                use object_store::ObjectStoreExt as _;
                self.get_range(location, range)
            },
            object_store::OBJECT_STORE_COALESCE_DEFAULT,
        )
        .await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        let (client, bucket) = (self.client.clone(), self.bucket.clone());
        locations
            .try_chunks(DELETE_BATCH)
            .map(move |batch| {
                let (client, bucket) = (client.clone(), bucket.clone());
                async move {
                    // A failed input ends its batch: the paths collected before it are
                    // not deleted (as `object_store`'s S3 backend does).
                    let paths = batch.map_err(|e| e.1)?;
                    delete_batch(&client, bucket, paths).await
                }
            })
            .buffered(DELETE_CONCURRENCY)
            .map(|batch| match batch {
                Ok(results) => stream::iter(results).boxed(),
                Err(error) => stream::once(async { Err(error) }).boxed(),
            })
            .flatten()
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.list_objects(prefix, None)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        // `start-after` is exclusive, as `list_with_offset` is.
        self.list_objects(prefix, Some(offset.as_ref().to_owned()))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        let mut request = self.listing().delimiter(convert::DELIMITER);
        if let Some(prefix) = convert::list_prefix(prefix) {
            request = request.prefix(prefix);
        }
        let mut pages = self.client.list_objects_v2_pages(request);
        let mut listed = ListResult {
            common_prefixes: Vec::new(),
            objects: Vec::new(),
            extensions: Default::default(),
        };
        while let Some(page) = pages.next_page().await {
            let page = page.map_err(|e| error::map(e, "ListObjectsV2", ""))?.result;
            for prefix in &page.common_prefixes {
                listed.common_prefixes.push(convert::path(prefix)?);
            }
            for object in page.contents {
                listed.objects.push(listed_meta(object)?);
            }
        }
        Ok(listed)
    }

    /// `CopyMode::Overwrite` is s3-wire's managed copy: one CopyObject up to 5 GiB, parallel
    /// UploadPartCopy requests above, each pinned to the source's ETag, keeping its content
    /// headers and metadata.
    ///
    /// `CopyMode::Create` copies through a multipart upload of UploadPartCopy parts that is
    /// completed with `If-None-Match: *`, so it is atomic wherever conditional completion is
    /// (Amazon S3, s3s-fs, MinIO); a CopyObject with `If-None-Match: *` is not: some stores
    /// (s3s-fs, moto) ignore the header there and overwrite. An empty source is written as
    /// an empty create-only PutObject with the source's description (no range of it can be
    /// copied).
    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        let source = CopySource::new(self.bucket.clone(), convert::key(from)?);
        let key = convert::key(to)?;
        match options.mode {
            CopyMode::Overwrite => {
                self.client
                    .copy(source, self.bucket.clone(), key)
                    .await
                    .map_err(|e| error::map(e, "CopyObject", from.as_ref()))?;
                Ok(())
            }
            CopyMode::Create => self.copy_create_only(source, from, to, key).await,
        }
    }
}

/// One DeleteObjects request (quiet: only failures are listed); a path S3 did not name as
/// failed is deleted.
async fn delete_batch(
    client: &Client,
    bucket: BucketName,
    paths: Vec<Path>,
) -> object_store::Result<Vec<object_store::Result<Path>>> {
    let mut keys = Vec::with_capacity(paths.len());
    let mut refused = std::collections::HashMap::new();
    for path in &paths {
        match convert::key(path) {
            Ok(key) => keys.push(key),
            Err(error) => {
                refused.insert(path.as_ref().to_owned(), error);
            }
        }
    }
    let mut failed: std::collections::HashMap<String, s3_xml::DeleteError> =
        std::collections::HashMap::new();
    if !keys.is_empty() {
        let request = DeleteObjects::new(bucket, keys).quiet(true);
        let answer = client
            .delete_objects(request)
            .await
            .map_err(|e| error::map(e, "DeleteObjects", ""))?;
        for entry in answer.result.errors {
            if let Some(key) = entry.key.clone() {
                failed.insert(key, entry);
            }
        }
    }
    Ok(paths
        .into_iter()
        .map(|path| {
            if let Some(error) = refused.remove(path.as_ref()) {
                return Err(error);
            }
            match failed.remove(path.as_ref()) {
                None => Ok(path),
                Some(entry) => Err(delete_error(&path, entry)),
            }
        })
        .collect())
}

fn delete_error(path: &Path, entry: s3_xml::DeleteError) -> object_store::Error {
    let code = entry.code.clone();
    let source = Box::new(AdapterError::DeleteFailed {
        key: path.as_ref().to_owned(),
        code: entry.code,
        message: entry.message,
    });
    let path = path.as_ref().to_owned();
    match code.as_deref() {
        Some("NoSuchKey") => object_store::Error::NotFound { path, source },
        Some("AccessDenied") => object_store::Error::PermissionDenied { path, source },
        _ => object_store::Error::Generic {
            store: error::STORE,
            source,
        },
    }
}

#[async_trait]
impl MultipartStore for S3WireStore {
    async fn create_multipart(&self, path: &Path) -> object_store::Result<MultipartId> {
        self.create_multipart_opts(path, PutMultipartOptions::default())
            .await
    }

    async fn create_multipart_opts(
        &self,
        path: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<MultipartId> {
        let attributes = convert::object_attributes(&opts.attributes, &opts.tags)?;
        multipart::create(
            &self.client,
            &self.bucket,
            &convert::key(path)?,
            path,
            attributes,
            self.upload_checksum,
        )
        .await
    }

    /// Part `part_idx + 1` (S3 numbers parts from 1). The `PartId` records the part's ETag,
    /// size and checksum, which completion needs.
    async fn put_part(
        &self,
        path: &Path,
        id: &MultipartId,
        part_idx: usize,
        data: PutPayload,
    ) -> object_store::Result<PartId> {
        let number = u32::try_from(part_idx + 1).map_err(|_| {
            generic(AdapterError::InvalidPartId(format!(
                "part index {part_idx}"
            )))
        })?;
        let receipt = multipart::upload_part(&self.target(path, id.clone())?, number, data).await?;
        Ok(PartId {
            content_id: multipart::encode_part_id(&receipt),
        })
    }

    async fn complete_multipart(
        &self,
        path: &Path,
        id: &MultipartId,
        parts: Vec<PartId>,
    ) -> object_store::Result<PutResult> {
        let receipts = parts
            .iter()
            .map(|part| multipart::decode_part_id(&part.content_id))
            .collect::<object_store::Result<Vec<_>>>()?;
        multipart::complete(&self.target(path, id.clone())?, receipts).await
    }

    async fn abort_multipart(&self, path: &Path, id: &MultipartId) -> object_store::Result<()> {
        multipart::abort(&self.target(path, id.clone())?).await
    }
}

#[async_trait]
impl PaginatedListStore for S3WireStore {
    /// One ListObjectsV2 page: `prefix` as given (not segment-wise), the options'
    /// delimiter, `max_keys` (1 to 1,000), `offset` as `start-after` and the page token as
    /// the continuation token.
    async fn list_paginated(
        &self,
        prefix: Option<&str>,
        opts: PaginatedListOptions,
    ) -> object_store::Result<PaginatedListResult> {
        let mut request = self.listing();
        if let Some(prefix) = prefix.filter(|p| !p.is_empty()) {
            request = request.prefix(prefix);
        }
        if let Some(delimiter) = &opts.delimiter {
            request = request.delimiter(delimiter.as_ref());
        }
        if let Some(max_keys) = opts.max_keys {
            request = request.max_keys(max_keys.clamp(1, 1_000) as u32);
        }
        if let Some(offset) = opts.offset {
            request = request.start_after(offset);
        }
        if let Some(token) = opts.page_token {
            request = request.continuation_token(token);
        }
        let page = self
            .client
            .list_objects_v2(request)
            .await
            .map_err(|e| error::map(e, "ListObjectsV2", prefix.unwrap_or("")))?
            .result;
        let page_token = page
            .next_continuation_token
            .clone()
            .filter(|_| page.is_truncated);
        Ok(PaginatedListResult {
            result: ListResult {
                common_prefixes: page
                    .common_prefixes
                    .iter()
                    .map(|prefix| convert::path(prefix))
                    .collect::<object_store::Result<_>>()?,
                objects: page
                    .contents
                    .into_iter()
                    .map(listed_meta)
                    .collect::<object_store::Result<_>>()?,
                extensions: Default::default(),
            },
            page_token,
        })
    }
}

#[cfg(feature = "signer")]
#[async_trait]
impl Signer for S3WireStore {
    /// A SigV4 presigned URL (s3-wire's presigning) for GET (GetObject), PUT (PutObject),
    /// HEAD (HeadObject) or DELETE (DeleteObject) of `path`, valid for `expires_in` (1 s to
    /// 7 days).
    async fn signed_url(
        &self,
        method: http::Method,
        path: &Path,
        expires_in: Duration,
    ) -> object_store::Result<url::Url> {
        let key = convert::key(path)?;
        let bucket = self.bucket.clone();
        let presigned = match method {
            http::Method::GET => {
                self.client
                    .presign(&GetObject::new(bucket, key), expires_in)
                    .await
            }
            http::Method::PUT => {
                self.client
                    .presign(&PutObject::new(bucket, key), expires_in)
                    .await
            }
            http::Method::HEAD => {
                self.client
                    .presign(&HeadObject::new(bucket, key), expires_in)
                    .await
            }
            http::Method::DELETE => {
                let delete =
                    s3_wire_tokio::s3_ops::ops::delete_object::DeleteObject::new(bucket, key);
                self.client.presign(&delete, expires_in).await
            }
            other => return Err(generic(AdapterError::UnsupportedMethod(other))),
        }
        .map_err(|e| error::map(e, "presign", path.as_ref()))?;
        let needed: Vec<String> = presigned
            .headers()
            .keys()
            .filter(|name| *name != http::header::HOST)
            .map(|name| name.as_str().to_owned())
            .collect();
        if !needed.is_empty() {
            return Err(generic(AdapterError::PresignNeedsHeaders(needed)));
        }
        url::Url::parse(presigned.url()).map_err(generic)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> S3WireStore {
        let client = Client::builder()
            .endpoint("http://127.0.0.1:9")
            .static_credentials("AKID", "secret", None)
            .build()
            .unwrap();
        S3WireStore::new(client, s3_wire_tokio::bucket("bucket").unwrap())
    }

    #[test]
    fn is_an_object_store_to_share() {
        fn shared<T: ObjectStore + MultipartStore + PaginatedListStore + Clone>() {}
        shared::<S3WireStore>();
        assert_eq!(store().to_string(), "S3WireStore(bucket)");
    }

    #[cfg(feature = "signer")]
    #[tokio::test]
    async fn presigned_urls_carry_the_signature_and_no_headers() {
        let url = store()
            .signed_url(
                http::Method::GET,
                &Path::from("a b/c.parquet"),
                Duration::from_secs(60),
            )
            .await
            .unwrap();
        assert_eq!(url.path(), "/bucket/a%20b/c.parquet");
        let query: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        assert!(
            query.iter().any(|(k, v)| k == "X-Amz-Expires" && v == "60"),
            "{url}"
        );
        assert!(query.iter().any(|(k, _)| k == "X-Amz-Signature"), "{url}");
        let error = store()
            .signed_url(
                http::Method::POST,
                &Path::from("x"),
                Duration::from_secs(60),
            )
            .await
            .unwrap_err();
        assert!(error.to_string().contains("POST"), "{error}");
    }
}

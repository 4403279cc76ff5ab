//! The store's implementation of object_store's traits, one source for both versions: the
//! module of each version (`v0_13.rs`, `v0_14.rs`) brings its `object_store` into scope, the
//! few constructors whose types differ, and `impl_multipart_store!`.

mod convert;
mod error;
mod multipart;

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
use s3_wire_tokio::s3_ops::ops::copy_source::CopySource;
use s3_wire_tokio::s3_ops::ops::delete_objects::DeleteObjects;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::{HeadObject, ObjectHead};
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::{BucketName, ObjectKey};
use s3_wire_tokio::s3_xml;
use s3_wire_tokio::{Body, Client, UploadSource};

pub use multipart::S3WireUpload;

use super::{get_result, list_result, object_store, put_result};
use crate::{AdapterError, S3WireStore};
use error::generic;
use multipart::Target;

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

fn target(
    store: &S3WireStore,
    location: &Path,
    upload_id: String,
) -> Result<Target, object_store::Error> {
    Ok(Target {
        client: store.client.clone(),
        bucket: store.bucket.clone(),
        key: convert::key(location)?,
        location: location.clone(),
        upload_id,
        algorithm: store.upload_checksum,
    })
}

fn listing(store: &S3WireStore) -> ListObjectsV2 {
    ListObjectsV2::new(store.bucket.clone()).url_encoding(store.url_encoded_listings)
}

/// Every object under `prefix` (after `start_after`), page by page as consumed.
fn list_objects(
    store: &S3WireStore,
    prefix: Option<&Path>,
    start_after: Option<String>,
) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
    let mut request = listing(store);
    if let Some(prefix) = convert::list_prefix(prefix) {
        request = request.prefix(prefix);
    }
    if let Some(offset) = start_after {
        request = request.start_after(offset);
    }
    store
        .client
        .list_objects_v2_pages(request)
        .map_err(|e| error::map(e, "ListObjectsV2", ""))
        .map_ok(|page| stream::iter(page.result.contents.into_iter().map(listed_meta)))
        .try_flatten()
        .boxed()
}

async fn head_or_get(
    store: &S3WireStore,
    location: &Path,
    options: GetOptions,
) -> object_store::Result<GetResult> {
    if let Some(range) = &options.range {
        range.is_valid().map_err(generic)?;
    }
    let key = convert::key(location)?;
    let path = location.as_ref();
    let (head, body) = if options.head {
        let mut head = HeadObject::new(store.bucket.clone(), key);
        select!(head, options);
        let head = store
            .client
            .head_object(head)
            .await
            .map_err(|e| error::map(e, "HeadObject", path))?;
        (head, stream::empty().boxed())
    } else {
        let mut get = GetObject::new(store.bucket.clone(), key);
        select!(get, options);
        let got = store
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
    let range = answered_range(&options, &head, meta.size)?;
    Ok(get_result(
        GetResultPayload::Stream(body),
        meta,
        range,
        convert::attributes(&head),
    ))
}

/// The bytes the answer holds, checked against the range asked for.
fn answered_range(
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
/// `If-None-Match: *` (see `copy_opts`).
async fn copy_create_only(
    store: &S3WireStore,
    source: CopySource,
    from: &Path,
    to: &Path,
    key: ObjectKey,
) -> object_store::Result<()> {
    let head = store
        .client
        .head_object(source.head_object())
        .await
        .map_err(|e| error::map(e, "HeadObject", from.as_ref()))?;
    if head.content_length == Some(0) {
        // No range of an empty object can be copied: write an empty one with its
        // description, if nothing is there.
        let put = PutObject::new(store.bucket.clone(), key)
            .attributes(s3_wire_tokio::s3_ops::ObjectAttributes::from_head(&head))
            .if_none_match_any();
        store
            .client
            .put_object(put, Bytes::new())
            .await
            .map_err(|e| error::map_create(e, "PutObject", to.as_ref()))?;
        return Ok(());
    }
    store
        .client
        .copy(source, store.bucket.clone(), key)
        .create_only()
        .single_request_limit(0)
        .part_size(CREATE_ONLY_COPY_PART)
        .await
        .map_err(|e| error::map_create(e, "UploadPartCopy", to.as_ref()))?;
    Ok(())
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
        // The payload is sent in the pieces it came in: joining them would copy every byte.
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
                    .put_object(put, Body::from_chunks(payload))
                    .await
                    .map_err(|e| error::map_update(e, "PutObject", path))?;
                return Ok(put_result(
                    stored.etag.map(|etag| etag.as_str().to_owned()),
                    stored.version_id,
                ));
            }
        };
        let mut upload = self
            .client
            .upload(self.bucket.clone(), key, UploadSource::chunks(payload))
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
        Ok(put_result(
            stored.etag.map(|etag| etag.as_str().to_owned()),
            stored.version_id,
        ))
    }

    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let id = create_multipart(self, location, opts).await?;
        Ok(Box::new(S3WireUpload::new(target(self, location, id)?)))
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        head_or_get(self, location, options).await
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
        list_objects(self, prefix, None)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        // `start-after` is exclusive, as `list_with_offset` is.
        list_objects(self, prefix, Some(offset.as_ref().to_owned()))
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        let mut request = listing(self).delimiter(convert::DELIMITER);
        if let Some(prefix) = convert::list_prefix(prefix) {
            request = request.prefix(prefix);
        }
        let mut pages = self.client.list_objects_v2_pages(request);
        let mut listed = list_result(Vec::new(), Vec::new());
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
            CopyMode::Create => copy_create_only(self, source, from, to, key).await,
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

/// CreateMultipartUpload for `path`, its object described by `opts`; the upload id.
async fn create_multipart(
    store: &S3WireStore,
    path: &Path,
    opts: PutMultipartOptions,
) -> object_store::Result<MultipartId> {
    let attributes = convert::object_attributes(&opts.attributes, &opts.tags)?;
    multipart::create(
        &store.client,
        &store.bucket,
        &convert::key(path)?,
        path,
        attributes,
        store.upload_checksum,
    )
    .await
}

// 0.14 adds `create_multipart_opts` (see the version's module).
impl_multipart_store! {
    async fn create_multipart(&self, path: &Path) -> object_store::Result<MultipartId> {
        create_multipart(self, path, PutMultipartOptions::default()).await
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
        let receipt = multipart::upload_part(&target(self, path, id.clone())?, number, data).await?;
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
        multipart::complete(&target(self, path, id.clone())?, receipts).await
    }

    async fn abort_multipart(&self, path: &Path, id: &MultipartId) -> object_store::Result<()> {
        multipart::abort(&target(self, path, id.clone())?).await
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
        let mut request = listing(self);
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
            result: list_result(
                page.common_prefixes
                    .iter()
                    .map(|prefix| convert::path(prefix))
                    .collect::<object_store::Result<_>>()?,
                page.contents
                    .into_iter()
                    .map(listed_meta)
                    .collect::<object_store::Result<_>>()?,
            ),
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

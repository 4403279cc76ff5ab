//! `s3wire._s3wire`: the native half of the `s3wire` Python package, over s3-wire's
//! blocking client (`s3_wire_tokio::blocking`) and, for `AsyncClient`, its async one.
//!
//! Every call releases the GIL while bytes move and waits in steps of [`STEP`], between
//! which it reports progress to a `Callback` and looks for signals: a `KeyboardInterrupt`
//! cancels the transfer (its multipart upload aborted, its partial download removed) and
//! is raised once the cleanup is done.

// The Python methods take boto3's arguments, as many as boto3 has.
#![allow(clippy::too_many_arguments)]

mod aio;
mod args;
mod body;
mod convert;
mod errors;

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use pyo3::exceptions::PyFileNotFoundError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use s3_wire_tokio::blocking::{
    self, Controlled, Handle, Kept, read_source, write_destination_keeping_small,
};
use s3_wire_tokio::s3_ops::ops::copy_source::CopySource;
use s3_wire_tokio::s3_ops::{
    ByteRange, CreateBucket, DeleteBucket, DeleteObject, DeleteObjects, GetObject, HeadObject,
    ListBuckets, ListObjectsV2, PutObject,
};
use s3_wire_tokio::transfer::{Compare, DirectoryOutput, Progress};
use s3_wire_tokio::{ClientBuilder, Error, RetryConfig, UploadSource};

use crate::args::{TransferSettings, bucket, key};
use crate::errors::bad_value;

/// How long a waiting call blocks before it looks for signals and reports progress.
const STEP: Duration = Duration::from_millis(50);

/// The client's settings, shared by [`Client`] and [`aio::AsyncClient`]: the standard AWS
/// environment (variables, shared files) overridden by what is given.
fn builder(
    endpoint_url: Option<String>,
    region_name: Option<String>,
    aws_access_key_id: Option<String>,
    aws_secret_access_key: Option<String>,
    aws_session_token: Option<String>,
    anonymous: bool,
    requester_pays: bool,
    ca_bundle: Option<PathBuf>,
    proxy: Option<String>,
    max_attempts: Option<u32>,
    max_memory: Option<u64>,
    allow_http: bool,
    sync_files: bool,
) -> PyResult<ClientBuilder> {
    let mut builder = ClientBuilder::from_env();
    if let Some(endpoint) = endpoint_url {
        builder = builder.endpoint(endpoint);
    }
    if let Some(region) = region_name {
        builder = builder.region(region);
    }
    match (aws_access_key_id, aws_secret_access_key) {
        (Some(id), Some(secret)) => {
            builder = builder.static_credentials(id, secret, aws_session_token);
        }
        (None, None) if aws_session_token.is_none() => {}
        (None, _) => {
            return Err(bad_value(
                "aws_access_key_id",
                "missing: explicit credentials need the key id and the secret key",
            ));
        }
        (Some(_), None) => {
            return Err(bad_value(
                "aws_secret_access_key",
                "missing: explicit credentials need the key id and the secret key",
            ));
        }
    }
    if anonymous {
        builder = builder.anonymous();
    }
    if requester_pays {
        builder = builder.request_payer(true);
    }
    if let Some(path) = ca_bundle {
        if !path.is_file() {
            return Err(PyFileNotFoundError::new_err(format!(
                "argument 'ca_bundle': no file at {}",
                path.display()
            )));
        }
        builder = builder.ca_bundle(path);
    }
    if let Some(proxy) = proxy {
        builder = builder.proxy(&proxy);
    }
    if let Some(attempts) = max_attempts {
        if attempts == 0 {
            return Err(bad_value("max_attempts", "must be at least 1"));
        }
        builder = builder.retry(RetryConfig::default().with_max_attempts(attempts));
    }
    if let Some(bytes) = max_memory {
        builder = builder.transfer_memory(bytes);
    }
    if allow_http {
        builder = builder.allow_http(true);
    }
    if !sync_files {
        let mut options = s3_wire_tokio::TransferOptions::default();
        options.sync_files = false;
        builder = builder.transfer_options(options);
    }
    Ok(builder)
}

/// A blocking S3 client (see the package's docs). Thread-safe: share one between threads.
#[pyclass(module = "s3wire._s3wire", frozen)]
struct Client {
    client: blocking::Client,
}

/// Waits for `handle` in steps with the GIL released, calling `step` between them (progress
/// callbacks); a signal (Ctrl-C) cancels it, waits for its cleanup and raises.
fn wait<H>(
    py: Python<'_>,
    mut handle: Handle<H>,
    mut step: impl FnMut(Python<'_>, &Handle<H>) -> PyResult<()>,
) -> PyResult<H::Output>
where
    H: Controlled,
    H::Output: Send,
{
    loop {
        if let Some(outcome) = py.detach(|| handle.wait_timeout(STEP)) {
            step(py, &handle)?;
            return Ok(outcome);
        }
        // A signal (Ctrl-C), or an exception of the step's callback, which is also where a
        // signal surfaces when it arrives while Python code runs.
        if let Err(raised) = step(py, &handle).and_then(|()| py.check_signals()) {
            handle.cancel();
            while py.detach(|| handle.wait_timeout(STEP)).is_none() {}
            return Err(raised);
        }
    }
}

/// Runs `work` on the client's runtime, waiting as [`wait`] does; its error becomes the
/// matching exception (`not_found` names the class for a bodiless 404).
fn run<T: Send + 'static>(
    py: Python<'_>,
    client: &blocking::Client,
    not_found: &'static str,
    work: impl Future<Output = Result<T, Error>> + Send + 'static,
) -> PyResult<T> {
    wait(py, client.spawn(work), |_, _| Ok(()))?
        .map_err(|error| errors::to_py(py, error, not_found))
}

/// Reports a transfer's committed bytes to a boto3-style `Callback` as increments.
struct Reporter {
    callback: Option<Py<PyAny>>,
    reported: u64,
}

impl Reporter {
    fn new(callback: Option<Py<PyAny>>) -> Self {
        Self {
            callback,
            reported: 0,
        }
    }

    fn report(&mut self, py: Python<'_>, committed: u64) -> PyResult<()> {
        if let Some(callback) = &self.callback
            && committed > self.reported
        {
            callback.call1(py, (committed - self.reported,))?;
            self.reported = committed;
        }
        Ok(())
    }
}

/// Waits for a managed transfer, reporting its progress to `callback`.
fn wait_transfer<T: Send + 'static>(
    py: Python<'_>,
    handle: Handle<s3_wire_tokio::TransferHandle<T>>,
    callback: Option<Py<PyAny>>,
    not_found: &'static str,
) -> PyResult<T> {
    let mut reporter = Reporter::new(callback);
    let outcome = wait(py, handle, |py, handle| {
        let progress: Progress = handle.progress();
        reporter.report(py, progress.committed)
    })?;
    outcome.map_err(|error| errors::to_py(py, error, not_found))
}

/// The `s3://bucket/prefix` parts of a location, or `None` for a local path.
fn s3_location(location: &str) -> Option<(&str, &str)> {
    let rest = location.strip_prefix("s3://")?;
    Some(rest.split_once('/').unwrap_or((rest, "")))
}

fn directory_summary(py: Python<'_>, output: &DirectoryOutput) -> PyResult<Py<PyDict>> {
    let dict = PyDict::new(py);
    let progress = &output.progress;
    dict.set_item("objects_transferred", progress.objects_transferred)?;
    dict.set_item("objects_skipped", progress.objects_skipped)?;
    dict.set_item("objects_failed", progress.objects_failed)?;
    dict.set_item("objects_deleted", progress.objects_deleted)?;
    dict.set_item("bytes_transferred", progress.committed)?;
    Ok(dict.unbind())
}

#[pymethods]
impl Client {
    /// A client from the standard AWS environment (`AWS_*` variables, `~/.aws` files),
    /// with what is given here taking precedence.
    #[new]
    #[pyo3(signature = (
        endpoint_url=None, region_name=None, aws_access_key_id=None,
        aws_secret_access_key=None, aws_session_token=None, *, anonymous=false,
        requester_pays=false, ca_bundle=None, proxy=None, max_attempts=None, max_memory=None,
        allow_http=false, sync_files=true,
    ))]
    fn new(
        py: Python<'_>,
        endpoint_url: Option<String>,
        region_name: Option<String>,
        aws_access_key_id: Option<String>,
        aws_secret_access_key: Option<String>,
        aws_session_token: Option<String>,
        anonymous: bool,
        requester_pays: bool,
        ca_bundle: Option<PathBuf>,
        proxy: Option<String>,
        max_attempts: Option<u32>,
        max_memory: Option<u64>,
        allow_http: bool,
        sync_files: bool,
    ) -> PyResult<Self> {
        let client = builder(
            endpoint_url,
            region_name,
            aws_access_key_id,
            aws_secret_access_key,
            aws_session_token,
            anonymous,
            requester_pays,
            ca_bundle,
            proxy,
            max_attempts,
            max_memory,
            allow_http,
            sync_files,
        )?
        .build()
        .and_then(blocking::Client::new);
        client
            .map(|client| Self { client })
            .map_err(|error| errors::build_error(py, error))
    }

    /// The object's bytes; with `stream=True` a file-like `StreamingBody` to read in pieces
    /// instead. `range` is `(first, last)` (inclusive, as HTTP ranges are).
    #[pyo3(signature = (bucket, key, *, stream=false, range=None, version_id=None))]
    fn get(
        &self,
        py: Python<'_>,
        bucket: &str,
        key: &str,
        stream: bool,
        range: Option<(u64, u64)>,
        version_id: Option<String>,
    ) -> PyResult<Py<PyAny>> {
        let mut operation = GetObject::new(args::bucket("bucket", bucket)?, args::key("key", key)?);
        if let Some((first, last)) = range {
            operation = operation
                .range(ByteRange::new(first, last).map_err(|error| bad_value("range", error))?);
        }
        if let Some(version) = version_id {
            operation = operation.version_id(version);
        }
        if stream {
            let response = py
                .detach(|| self.client.get_object(operation))
                .map_err(|error| errors::to_py(py, error, "NoSuchKey"))?;
            return Ok(Py::new(py, body::StreamingBody::new(py, response)?)?.into_any());
        }
        let client = self.client.async_client().clone();
        let bytes = run(py, &self.client, "NoSuchKey", async move {
            client.get_object(operation).await?.body.collect().await
        })?;
        Ok(PyBytes::new(py, &bytes).into_any().unbind())
    }

    /// Stores `body` (bytes, bytearray, memoryview or str) under `key`; the store's answer
    /// as a dict (`ETag`, `VersionId`).
    #[pyo3(signature = (bucket, key, body, *, content_type=None, metadata=None, if_none_match=false))]
    fn put(
        &self,
        py: Python<'_>,
        bucket: &str,
        key: &str,
        body: &Bound<'_, PyAny>,
        content_type: Option<String>,
        metadata: Option<&Bound<'_, PyDict>>,
        if_none_match: bool,
    ) -> PyResult<Py<PyDict>> {
        let data = args::body("body", body)?;
        let extras = args::put_extras(py, content_type, metadata)?;
        let mut operation = PutObject::new(args::bucket("bucket", bucket)?, args::key("key", key)?)
            .attributes(extras.attributes);
        if if_none_match {
            operation = operation.if_none_match_any();
        }
        let client = self.client.async_client().clone();
        let output = run(py, &self.client, "NoSuchBucket", async move {
            client.put_object(operation, data).await
        })?;
        let dict = PyDict::new(py);
        dict.set_item("ETag", output.etag.as_ref().map(|etag| etag.as_str()))?;
        dict.set_item("VersionId", output.version_id)?;
        Ok(dict.unbind())
    }

    /// The object's metadata (boto3's `head_object` keys); `NoSuchKey` if there is none.
    /// With `checksum_mode=True` (boto3's `ChecksumMode="ENABLED"`) the stored checksum too
    /// (`ChecksumCRC32C`, ..., `ChecksumType`).
    #[pyo3(signature = (bucket, key, *, version_id=None, checksum_mode=false))]
    fn head(
        &self,
        py: Python<'_>,
        bucket: &str,
        key: &str,
        version_id: Option<String>,
        checksum_mode: bool,
    ) -> PyResult<Py<PyDict>> {
        let mut operation =
            HeadObject::new(args::bucket("bucket", bucket)?, args::key("key", key)?)
                .checksum_mode(checksum_mode);
        if let Some(version) = version_id {
            operation = operation.version_id(version);
        }
        let client = self.client.async_client().clone();
        let head = run(py, &self.client, "NoSuchKey", async move {
            client.head_object(operation).await
        })?;
        Ok(convert::head(py, &head)?.unbind())
    }

    /// Deletes the object (no error if there was none, as S3 answers).
    fn delete(&self, py: Python<'_>, bucket: &str, key: &str) -> PyResult<()> {
        let operation = DeleteObject::new(args::bucket("bucket", bucket)?, args::key("key", key)?);
        let client = self.client.async_client().clone();
        run(py, &self.client, "NoSuchBucket", async move {
            client.delete_object(operation).await
        })?;
        Ok(())
    }

    /// Deletes `keys` (any number: sent 1,000 per request); the keys the store refused, as
    /// dicts `{"Key", "Code", "Message"}` (empty when every key was deleted).
    fn delete_many(&self, py: Python<'_>, bucket: &str, keys: Vec<String>) -> PyResult<Py<PyList>> {
        let name = args::bucket("bucket", bucket)?;
        let keys = keys
            .iter()
            .map(|name| args::key("keys", name))
            .collect::<PyResult<Vec<_>>>()?;
        let client = self.client.async_client().clone();
        let refused = run(py, &self.client, "NoSuchBucket", async move {
            let mut refused = Vec::new();
            for batch in keys.chunks(1000) {
                let request = DeleteObjects::new(name.clone(), batch.iter().cloned()).quiet(true);
                refused.extend(client.delete_objects(request).await?.result.errors);
            }
            Ok(refused)
        })?;
        let list = PyList::empty(py);
        for error in refused {
            let dict = PyDict::new(py);
            dict.set_item("Key", error.key)?;
            dict.set_item("Code", error.code)?;
            dict.set_item("Message", error.message)?;
            list.append(dict)?;
        }
        Ok(list.unbind())
    }

    /// A server-side copy (CopyObject up to 5 GiB, a multipart copy beyond), keeping the
    /// source's metadata.
    fn copy(
        &self,
        py: Python<'_>,
        source_bucket: &str,
        source_key: &str,
        bucket: &str,
        key: &str,
    ) -> PyResult<()> {
        let source = CopySource::new(
            args::bucket("source_bucket", source_bucket)?,
            args::key("source_key", source_key)?,
        );
        let handle = self
            .client
            .copy(
                source,
                args::bucket("bucket", bucket)?,
                args::key("key", key)?,
            )
            .start();
        wait_transfer(py, handle, None, "NoSuchKey")?;
        Ok(())
    }

    /// The objects under `prefix`, lazily: an iterator of dicts (`Key`, `Size`, `ETag`,
    /// `LastModified`, `StorageClass`) whose `.pages()` iterates over whole pages instead.
    #[pyo3(signature = (bucket, prefix="", *, delimiter=None, start_after=None, page_size=None))]
    fn list(
        &self,
        bucket: &str,
        prefix: &str,
        delimiter: Option<String>,
        start_after: Option<String>,
        page_size: Option<u32>,
    ) -> PyResult<body::Listing> {
        let mut listing = ListObjectsV2::new(args::bucket("bucket", bucket)?).prefix(prefix);
        if let Some(delimiter) = delimiter {
            listing = listing.delimiter(delimiter);
        }
        if let Some(start_after) = start_after {
            listing = listing.start_after(start_after);
        }
        if let Some(size) = page_size {
            if size == 0 || size > 1000 {
                return Err(bad_value("page_size", "must be 1 to 1000"));
            }
            listing = listing.max_keys(size);
        }
        Ok(body::Listing::new(
            self.client.list_objects_v2_pages(listing),
        ))
    }

    /// A presigned URL for `method` (`GET`, `PUT`, `HEAD` or `DELETE`) on the object,
    /// valid for `expires_in` seconds.
    #[pyo3(signature = (bucket, key, *, method="GET", expires_in=3600))]
    fn presign(
        &self,
        py: Python<'_>,
        bucket: &str,
        key: &str,
        method: &str,
        expires_in: u64,
    ) -> PyResult<String> {
        let (bucket, key) = (args::bucket("bucket", bucket)?, args::key("key", key)?);
        let expires = Duration::from_secs(expires_in);
        let client = self.client.async_client().clone();
        let url = match method.to_ascii_uppercase().as_str() {
            "GET" => run(py, &self.client, "NoSuchKey", async move {
                client.presign(&GetObject::new(bucket, key), expires).await
            }),
            "PUT" => run(py, &self.client, "NoSuchKey", async move {
                client.presign(&PutObject::new(bucket, key), expires).await
            }),
            "HEAD" => run(py, &self.client, "NoSuchKey", async move {
                client.presign(&HeadObject::new(bucket, key), expires).await
            }),
            "DELETE" => run(py, &self.client, "NoSuchKey", async move {
                client
                    .presign(&DeleteObject::new(bucket, key), expires)
                    .await
            }),
            other => {
                return Err(bad_value(
                    "method",
                    format!("{other:?} is not GET, PUT, HEAD or DELETE"),
                ));
            }
        }?;
        Ok(url.url().to_owned())
    }

    /// The names of the buckets the credentials own.
    fn list_buckets(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let client = self.client.async_client().clone();
        run(py, &self.client, "NoSuchBucket", async move {
            let mut pages = client.list_buckets_pages(ListBuckets::new());
            let mut names = Vec::new();
            while let Some(page) = pages.next_page().await {
                names.extend(page?.result.buckets.into_iter().map(|bucket| bucket.name));
            }
            Ok(names)
        })
    }

    /// Creates a bucket.
    fn create_bucket(&self, py: Python<'_>, bucket: &str) -> PyResult<()> {
        let operation = CreateBucket::new(args::bucket("bucket", bucket)?);
        let client = self.client.async_client().clone();
        run(py, &self.client, "NoSuchBucket", async move {
            client.create_bucket(operation).await
        })?;
        Ok(())
    }

    /// Deletes an empty bucket.
    fn delete_bucket(&self, py: Python<'_>, bucket: &str) -> PyResult<()> {
        let operation = DeleteBucket::new(args::bucket("bucket", bucket)?);
        let client = self.client.async_client().clone();
        run(py, &self.client, "NoSuchBucket", async move {
            client.delete_bucket(operation).await
        })?;
        Ok(())
    }

    /// boto3's `upload_file`: the file at `Filename` to `Key` in `Bucket`, multipart when
    /// large, parts read in place; `ExtraArgs` (ContentType, Metadata,
    /// ServerSideEncryption, SSEKMSKeyId, ChecksumAlgorithm, ...), `Callback` called with
    /// each increment of bytes stored, `Config` an s3transfer `TransferConfig`.
    #[pyo3(signature = (Filename, Bucket, Key, ExtraArgs=None, Callback=None, Config=None))]
    #[allow(non_snake_case)]
    fn upload_file(
        &self,
        py: Python<'_>,
        Filename: PathBuf,
        Bucket: &str,
        Key: &str,
        ExtraArgs: Option<&Bound<'_, PyDict>>,
        Callback: Option<Py<PyAny>>,
        Config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if !Filename.is_file() {
            return Err(PyFileNotFoundError::new_err(format!(
                "argument 'Filename': no file at {}",
                Filename.display()
            )));
        }
        let source = UploadSource::file(Filename);
        self.upload(py, source, Bucket, Key, ExtraArgs, Callback, Config)
    }

    /// boto3's `upload_fileobj`: a readable binary file object (read in order, on a worker
    /// thread that takes the GIL for each read), with the same `ExtraArgs`, `Callback` and
    /// `Config` as `upload_file`.
    #[pyo3(signature = (Fileobj, Bucket, Key, ExtraArgs=None, Callback=None, Config=None))]
    #[allow(non_snake_case)]
    fn upload_fileobj(
        &self,
        py: Python<'_>,
        Fileobj: Bound<'_, PyAny>,
        Bucket: &str,
        Key: &str,
        ExtraArgs: Option<&Bound<'_, PyDict>>,
        Callback: Option<Py<PyAny>>,
        Config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if !Fileobj.hasattr("read")? {
            return Err(errors::bad_type(
                "Fileobj",
                "a readable file object",
                &Fileobj,
            ));
        }
        let source = match in_memory_file(&Fileobj)? {
            Some(bytes) => UploadSource::bytes(bytes),
            None => read_source(body::PyReader::new(Fileobj.unbind()), None),
        };
        self.upload(py, source, Bucket, Key, ExtraArgs, Callback, Config)
    }

    /// boto3's `download_file`: the object to the file at `Filename`, in parallel ranges,
    /// written whole or not at all (a temporary file renamed into place); `ExtraArgs`
    /// takes `VersionId`.
    #[pyo3(signature = (Bucket, Key, Filename, ExtraArgs=None, Callback=None, Config=None))]
    #[allow(non_snake_case)]
    fn download_file(
        &self,
        py: Python<'_>,
        Bucket: &str,
        Key: &str,
        Filename: PathBuf,
        ExtraArgs: Option<&Bound<'_, PyDict>>,
        Callback: Option<Py<PyAny>>,
        Config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        match Filename.parent() {
            Some(parent) if !parent.as_os_str().is_empty() && !parent.is_dir() => {
                return Err(PyFileNotFoundError::new_err(format!(
                    "argument 'Filename': no directory {}",
                    parent.display()
                )));
            }
            _ => {}
        }
        self.download(
            py,
            Bucket,
            Key,
            Filename.into(),
            ExtraArgs,
            Callback,
            Config,
        )
    }

    /// boto3's `download_fileobj`: the object written in order to a writable binary file
    /// object. An object of up to 1 MiB is written once, by this thread, after it arrived
    /// whole; a larger one as it arrives, by a worker thread that takes the GIL for each
    /// write of up to 1 MiB.
    #[pyo3(signature = (Bucket, Key, Fileobj, ExtraArgs=None, Callback=None, Config=None))]
    #[allow(non_snake_case)]
    fn download_fileobj(
        &self,
        py: Python<'_>,
        Bucket: &str,
        Key: &str,
        Fileobj: Bound<'_, PyAny>,
        ExtraArgs: Option<&Bound<'_, PyDict>>,
        Callback: Option<Py<PyAny>>,
        Config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if !Fileobj.hasattr("write")? {
            return Err(errors::bad_type(
                "Fileobj",
                "a writable file object",
                &Fileobj,
            ));
        }
        // A small body is written here, where the GIL is held anyway: from a worker thread
        // its one write would first wait for the GIL, behind every Python thread.
        let kept = Kept::new();
        let destination = write_destination_keeping_small(
            body::PyWriter::new(Fileobj.clone().unbind()),
            kept.clone(),
        );
        self.download(py, Bucket, Key, destination, ExtraArgs, Callback, Config)?;
        if let Some(body) = kept.take() {
            let mut writer = body::PyWriter::new(Fileobj.unbind());
            writer
                .write_all(&body)
                .and_then(|()| writer.flush())
                .map_err(|error| errors::local(py, error.to_string()))?;
        }
        Ok(())
    }

    /// Uploads every file under `directory` to `prefix` in `bucket`; a summary dict
    /// (`objects_transferred`, `objects_skipped`, `objects_failed`, `objects_deleted`,
    /// `bytes_transferred`).
    #[pyo3(signature = (directory, bucket, prefix=""))]
    fn upload_directory(
        &self,
        py: Python<'_>,
        directory: PathBuf,
        bucket: &str,
        prefix: &str,
    ) -> PyResult<Py<PyDict>> {
        if !directory.is_dir() {
            return Err(PyFileNotFoundError::new_err(format!(
                "argument 'directory': no directory at {}",
                directory.display()
            )));
        }
        let transfer =
            self.client
                .upload_directory(directory, args::bucket("bucket", bucket)?, prefix);
        self.directory(py, transfer, "NoSuchBucket")
    }

    /// Downloads every object under `prefix` in `bucket` into `directory` (created if
    /// missing); a summary dict as `upload_directory`'s.
    #[pyo3(signature = (bucket, prefix, directory))]
    fn download_directory(
        &self,
        py: Python<'_>,
        bucket: &str,
        prefix: &str,
        directory: PathBuf,
    ) -> PyResult<Py<PyDict>> {
        let transfer =
            self.client
                .download_directory(args::bucket("bucket", bucket)?, prefix, directory);
        self.directory(py, transfer, "NoSuchBucket")
    }

    /// `aws s3 sync`: copies what is new or changed (by size and modification time) from
    /// `source` to `destination`, each a local directory or `s3://bucket/prefix`; with
    /// `delete=True` also removes what the source lacks. A summary dict as
    /// `upload_directory`'s.
    #[pyo3(signature = (source, destination, *, delete=false))]
    fn sync(
        &self,
        py: Python<'_>,
        source: &str,
        destination: &str,
        delete: bool,
    ) -> PyResult<Py<PyDict>> {
        let transfer = match (s3_location(source), s3_location(destination)) {
            (None, Some((name, prefix))) => {
                if !std::path::Path::new(source).is_dir() {
                    return Err(PyFileNotFoundError::new_err(format!(
                        "argument 'source': no directory at {source}"
                    )));
                }
                self.client
                    .upload_directory(source, args::bucket("destination", name)?, prefix)
            }
            (Some((name, prefix)), None) => {
                self.client
                    .download_directory(args::bucket("source", name)?, prefix, destination)
            }
            (Some((from, from_prefix)), Some((to, to_prefix))) => self.client.copy_directory(
                args::bucket("source", from)?,
                from_prefix,
                args::bucket("destination", to)?,
                to_prefix,
            ),
            (None, None) => {
                return Err(bad_value(
                    "destination",
                    "one of source and destination must be an s3://bucket/prefix location",
                ));
            }
        };
        let transfer =
            transfer.configure(|sync| sync.compare(Compare::SizeAndTime).delete_extraneous(delete));
        self.directory(py, transfer, "NoSuchBucket")
    }

    /// The memory budget of this client's managed transfers (`max_memory`): a dict of
    /// `capacity` (the budget), `in_use` (part data held now) and `high_water` (the most
    /// ever held at once), in bytes.
    fn transfer_memory(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let usage = self.client.async_client().transfer_memory();
        let dict = PyDict::new(py);
        dict.set_item("capacity", usage.capacity)?;
        dict.set_item("in_use", usage.in_use)?;
        dict.set_item("high_water", usage.high_water)?;
        Ok(dict.unbind())
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.client.async_client())
    }
}

impl Client {
    fn upload(
        &self,
        py: Python<'_>,
        source: UploadSource,
        bucket_name: &str,
        key_name: &str,
        extra: Option<&Bound<'_, PyDict>>,
        callback: Option<Py<PyAny>>,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let extras = args::upload_extras(extra)?;
        let settings = args::transfer_settings(config)?;
        let handle = self
            .client
            .upload(
                bucket("Bucket", bucket_name)?,
                key("Key", key_name)?,
                source,
            )
            .configure(|upload| {
                let upload = apply_settings(upload, settings).attributes(extras.attributes);
                match extras.checksum {
                    Some(algorithm) => upload.checksum(algorithm),
                    None => upload,
                }
            })
            .start();
        wait_transfer(py, handle, callback, "NoSuchBucket")?;
        Ok(())
    }

    fn download(
        &self,
        py: Python<'_>,
        bucket_name: &str,
        key_name: &str,
        destination: s3_wire_tokio::Destination,
        extra: Option<&Bound<'_, PyDict>>,
        callback: Option<Py<PyAny>>,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let version = args::download_version(extra)?;
        let settings = args::transfer_settings(config)?;
        let handle = self
            .client
            .download(
                bucket("Bucket", bucket_name)?,
                key("Key", key_name)?,
                destination,
            )
            // Interrupted, a download leaves nothing behind (no partial file to resume).
            .configure(|download| {
                let download = apply_settings(download, settings).resume(false);
                match version {
                    Some(version) => download.version_id(version),
                    None => download,
                }
            })
            .start();
        wait_transfer(py, handle, callback, "NoSuchKey")?;
        Ok(())
    }

    fn directory(
        &self,
        py: Python<'_>,
        transfer: blocking::Transfer<s3_wire_tokio::transfer::DirectoryBuilder>,
        not_found: &'static str,
    ) -> PyResult<Py<PyDict>> {
        let outcome = wait(py, transfer.start(), |_, _| Ok(()))?;
        let output = outcome.map_err(|error| errors::to_py(py, error, not_found))?;
        if !output.is_success() {
            return Err(errors::local(
                py,
                format!(
                    "{} of the directory's objects failed",
                    output.progress.objects_failed
                ),
            ));
        }
        directory_summary(py, &output)
    }
}

/// The settings of an s3transfer `TransferConfig` on a transfer builder of either kind.
trait TransferBuilder: Sized {
    fn part_size(self, bytes: u64) -> Self;
    fn concurrency(self, parts: usize) -> Self;
    fn single_request_limit(self, bytes: u64) -> Self;
}

macro_rules! transfer_builder {
    ($($builder:ty),*) => {$(
        impl TransferBuilder for $builder {
            fn part_size(self, bytes: u64) -> Self {
                <$builder>::part_size(self, bytes)
            }
            fn concurrency(self, parts: usize) -> Self {
                <$builder>::concurrency(self, parts)
            }
            fn single_request_limit(self, bytes: u64) -> Self {
                <$builder>::single_request_limit(self, bytes)
            }
        }
    )*};
}
transfer_builder!(
    s3_wire_tokio::transfer::UploadBuilder,
    s3_wire_tokio::transfer::DownloadBuilder
);

fn apply_settings<B: TransferBuilder>(mut builder: B, settings: TransferSettings) -> B {
    if let Some(bytes) = settings.part_size {
        builder = builder.part_size(bytes);
    }
    if let Some(parts) = settings.concurrency {
        builder = builder.concurrency(parts);
    }
    if let Some(bytes) = settings.threshold {
        builder = builder.single_request_limit(bytes);
    }
    builder
}

#[pymodule]
fn _s3wire(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Client>()?;
    module.add_class::<aio::AsyncClient>()?;
    module.add_class::<body::StreamingBody>()?;
    module.add_class::<body::Listing>()?;
    module.add_class::<body::Pages>()?;
    Ok(())
}

/// The rest of an `io.BytesIO` (exactly that type: a subclass may read otherwise), read at
/// once with the GIL held and the file left at its end, as reading it would: uploaded from
/// memory rather than by `read` calls from a worker thread taking the GIL for each, which
/// many small uploads at once spend their time on.
fn in_memory_file(fileobj: &Bound<'_, PyAny>) -> PyResult<Option<bytes::Bytes>> {
    let bytes_io = fileobj.py().import("io")?.getattr("BytesIO")?;
    if !fileobj.get_type().is(&bytes_io) {
        return Ok(None);
    }
    let rest = fileobj.call_method0("read")?;
    let rest = rest.cast::<PyBytes>()?;
    Ok(Some(bytes::Bytes::copy_from_slice(rest.as_bytes())))
}

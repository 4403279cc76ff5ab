//! `AsyncClient`: awaitables for asyncio over the async client, on pyo3-async-runtimes'
//! Tokio runtime. Cancelling the awaiting task drops the Rust future, which cancels a
//! transfer as dropping its handle does (its multipart upload aborted in the background).

use std::path::PathBuf;

use pyo3::exceptions::PyFileNotFoundError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use s3_wire_tokio::s3_ops::ops::copy_source::CopySource;
use s3_wire_tokio::s3_ops::{
    ByteRange, DeleteObject, DeleteObjects, GetObject, HeadObject, ListObjectsV2, PutObject,
};
use s3_wire_tokio::{Client, Error, UploadSource};

use crate::{args, convert, errors};

/// The asyncio client: the same settings as `Client`; each method returns an awaitable.
#[pyclass(module = "s3wire._s3wire", frozen)]
pub(crate) struct AsyncClient {
    client: Client,
}

/// `work` as an asyncio awaitable, its result made a Python object by `into_py` and its
/// error the matching exception.
fn awaitable<'py, T, F, P>(
    py: Python<'py>,
    not_found: &'static str,
    work: F,
    into_py: P,
) -> PyResult<Bound<'py, PyAny>>
where
    T: Send + 'static,
    F: Future<Output = Result<T, Error>> + Send + 'static,
    P: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    pyo3_async_runtimes::tokio::future_into_py(py, async move {
        let result = work.await;
        Python::attach(|py| match result {
            Ok(value) => into_py(py, value),
            Err(error) => Err(errors::to_py(py, error, not_found)),
        })
    })
}

#[pymethods]
impl AsyncClient {
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
        let builder = crate::builder(
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
        )?;
        let client = builder
            .build()
            .map_err(|error| errors::build_error(py, error))?;
        Ok(Self { client })
    }

    /// Awaits the object's bytes; `range` is `(first, last)`, inclusive.
    #[pyo3(signature = (bucket, key, *, range=None, version_id=None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        range: Option<(u64, u64)>,
        version_id: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut operation = GetObject::new(args::bucket("bucket", bucket)?, args::key("key", key)?);
        if let Some((first, last)) = range {
            operation = operation.range(
                ByteRange::new(first, last).map_err(|error| errors::bad_value("range", error))?,
            );
        }
        if let Some(version) = version_id {
            operation = operation.version_id(version);
        }
        let client = self.client.clone();
        awaitable(
            py,
            "NoSuchKey",
            async move { client.get_object(operation).await?.body.collect().await },
            |py, bytes| Ok(PyBytes::new(py, &bytes).into_any().unbind()),
        )
    }

    /// Stores `body` under `key` (the options of `Client.put`); awaits the store's answer
    /// (`ETag`, `VersionId`).
    #[pyo3(signature = (bucket, key, body, *, content_type=None, metadata=None, if_none_match=false))]
    fn put<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        body: &Bound<'py, PyAny>,
        content_type: Option<String>,
        metadata: Option<&Bound<'py, PyDict>>,
        if_none_match: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let data = args::body("body", body)?;
        let extras = args::put_extras(py, content_type, metadata)?;
        let mut operation = PutObject::new(args::bucket("bucket", bucket)?, args::key("key", key)?)
            .attributes(extras.attributes);
        if if_none_match {
            operation = operation.if_none_match_any();
        }
        let client = self.client.clone();
        awaitable(
            py,
            "NoSuchBucket",
            async move { client.put_object(operation, data).await },
            |py, output| {
                let dict = PyDict::new(py);
                dict.set_item("ETag", output.etag.as_ref().map(|etag| etag.as_str()))?;
                dict.set_item("VersionId", output.version_id)?;
                Ok(dict.into_any().unbind())
            },
        )
    }

    /// Awaits the object's metadata (boto3's `head_object` keys), as `Client.head`.
    #[pyo3(signature = (bucket, key, *, version_id=None, checksum_mode=false))]
    fn head<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        version_id: Option<String>,
        checksum_mode: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut operation =
            HeadObject::new(args::bucket("bucket", bucket)?, args::key("key", key)?)
                .checksum_mode(checksum_mode);
        if let Some(version) = version_id {
            operation = operation.version_id(version);
        }
        let client = self.client.clone();
        awaitable(
            py,
            "NoSuchKey",
            async move { client.head_object(operation).await },
            |py, head| Ok(convert::head(py, &head)?.into_any().unbind()),
        )
    }

    /// Deletes the object.
    fn delete<'py>(&self, py: Python<'py>, bucket: &str, key: &str) -> PyResult<Bound<'py, PyAny>> {
        let operation = DeleteObject::new(args::bucket("bucket", bucket)?, args::key("key", key)?);
        let client = self.client.clone();
        awaitable(
            py,
            "NoSuchBucket",
            async move { client.delete_object(operation).await },
            |py, _| Ok(py.None()),
        )
    }

    /// Awaits every object under `prefix` (a list of dicts as `Client.list` yields).
    #[pyo3(signature = (bucket, prefix=""))]
    fn list<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        prefix: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let listing = ListObjectsV2::new(args::bucket("bucket", bucket)?).prefix(prefix);
        let client = self.client.clone();
        awaitable(
            py,
            "NoSuchBucket",
            async move {
                let mut pages = client.list_objects_v2_pages(listing);
                let mut objects = Vec::new();
                while let Some(page) = pages.next_page().await {
                    objects.extend(page?.result.contents);
                }
                Ok(objects)
            },
            |py, objects| {
                let list = PyList::empty(py);
                for object in &objects {
                    list.append(convert::listed(py, object)?)?;
                }
                Ok(list.into_any().unbind())
            },
        )
    }

    /// Uploads the file at `Filename` (boto3's argument order; `ExtraArgs` as
    /// `Client.upload_file`).
    #[pyo3(signature = (Filename, Bucket, Key, ExtraArgs=None))]
    #[allow(non_snake_case)]
    fn upload_file<'py>(
        &self,
        py: Python<'py>,
        Filename: PathBuf,
        Bucket: &str,
        Key: &str,
        ExtraArgs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if !Filename.is_file() {
            return Err(PyFileNotFoundError::new_err(format!(
                "argument 'Filename': no file at {}",
                Filename.display()
            )));
        }
        let extras = args::upload_extras(ExtraArgs)?;
        let mut upload = self
            .client
            .upload(
                args::bucket("Bucket", Bucket)?,
                args::key("Key", Key)?,
                UploadSource::file(Filename),
            )
            .attributes(extras.attributes);
        if let Some(algorithm) = extras.checksum {
            upload = upload.checksum(algorithm);
        }
        awaitable(py, "NoSuchBucket", async move { upload.await }, |py, _| {
            Ok(py.None())
        })
    }

    /// Downloads the object to the file at `Filename` (boto3's argument order).
    #[pyo3(signature = (Bucket, Key, Filename))]
    #[allow(non_snake_case)]
    fn download_file<'py>(
        &self,
        py: Python<'py>,
        Bucket: &str,
        Key: &str,
        Filename: PathBuf,
    ) -> PyResult<Bound<'py, PyAny>> {
        let download = self
            .client
            .download(
                args::bucket("Bucket", Bucket)?,
                args::key("Key", Key)?,
                Filename,
            )
            .resume(false);
        awaitable(py, "NoSuchKey", async move { download.await }, |py, _| {
            Ok(py.None())
        })
    }

    /// Deletes `keys` (1,000 per request); awaits the keys the store refused, as dicts
    /// `{"Key", "Code", "Message"}`.
    fn delete_many<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        keys: Vec<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let name = args::bucket("bucket", bucket)?;
        let keys = keys
            .iter()
            .map(|name| args::key("keys", name))
            .collect::<PyResult<Vec<_>>>()?;
        let client = self.client.clone();
        awaitable(
            py,
            "NoSuchBucket",
            async move {
                let mut refused = Vec::new();
                for batch in keys.chunks(1000) {
                    let request =
                        DeleteObjects::new(name.clone(), batch.iter().cloned()).quiet(true);
                    refused.extend(client.delete_objects(request).await?.result.errors);
                }
                Ok(refused)
            },
            |py, refused| {
                let list = PyList::empty(py);
                for error in refused {
                    let dict = PyDict::new(py);
                    dict.set_item("Key", error.key)?;
                    dict.set_item("Code", error.code)?;
                    dict.set_item("Message", error.message)?;
                    list.append(dict)?;
                }
                Ok(list.into_any().unbind())
            },
        )
    }

    /// A server-side copy, as `Client.copy`.
    fn copy<'py>(
        &self,
        py: Python<'py>,
        source_bucket: &str,
        source_key: &str,
        bucket: &str,
        key: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let source = CopySource::new(
            args::bucket("source_bucket", source_bucket)?,
            args::key("source_key", source_key)?,
        );
        let copy = self.client.copy(
            source,
            args::bucket("bucket", bucket)?,
            args::key("key", key)?,
        );
        awaitable(py, "NoSuchKey", async move { copy.await }, |py, _| {
            Ok(py.None())
        })
    }

    /// Awaits a presigned URL, as `Client.presign`.
    #[pyo3(signature = (bucket, key, *, method="GET", expires_in=3600))]
    fn presign<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        method: &str,
        expires_in: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (bucket, key) = (args::bucket("bucket", bucket)?, args::key("key", key)?);
        let expires = std::time::Duration::from_secs(expires_in);
        let client = self.client.clone();
        let method = method.to_ascii_uppercase();
        if !["GET", "PUT", "HEAD", "DELETE"].contains(&method.as_str()) {
            return Err(errors::bad_value(
                "method",
                format!("{method:?} is not GET, PUT, HEAD or DELETE"),
            ));
        }
        awaitable(
            py,
            "NoSuchKey",
            async move {
                match method.as_str() {
                    "GET" => client.presign(&GetObject::new(bucket, key), expires).await,
                    "PUT" => client.presign(&PutObject::new(bucket, key), expires).await,
                    "HEAD" => client.presign(&HeadObject::new(bucket, key), expires).await,
                    _ => {
                        client
                            .presign(&DeleteObject::new(bucket, key), expires)
                            .await
                    }
                }
            },
            |py, url| Ok(url.url().into_pyobject(py)?.into_any().unbind()),
        )
    }
}

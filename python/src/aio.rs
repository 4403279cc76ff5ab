//! `AsyncClient`: awaitables for asyncio over the async client, on pyo3-async-runtimes'
//! Tokio runtime. Cancelling the awaiting task drops the Rust future, which cancels a
//! transfer as dropping its handle does (its multipart upload aborted in the background).

use std::path::PathBuf;

use pyo3::exceptions::PyFileNotFoundError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use s3_wire_tokio::s3_ops::{DeleteObject, GetObject, HeadObject, ListObjectsV2, PutObject};
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
        allow_http=false,
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
        )?;
        let client = builder
            .build()
            .map_err(|error| errors::to_py(py, error, "S3WireError"))?;
        Ok(Self { client })
    }

    /// Awaits the object's bytes.
    fn get<'py>(&self, py: Python<'py>, bucket: &str, key: &str) -> PyResult<Bound<'py, PyAny>> {
        let operation = GetObject::new(args::bucket("bucket", bucket)?, args::key("key", key)?);
        let client = self.client.clone();
        awaitable(
            py,
            "NoSuchKey",
            async move { client.get_object(operation).await?.body.collect().await },
            |py, bytes| Ok(PyBytes::new(py, &bytes).into_any().unbind()),
        )
    }

    /// Stores `body` under `key`; awaits the store's answer (`ETag`, `VersionId`).
    fn put<'py>(
        &self,
        py: Python<'py>,
        bucket: &str,
        key: &str,
        body: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let data = args::body("body", body)?;
        let operation = PutObject::new(args::bucket("bucket", bucket)?, args::key("key", key)?);
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

    /// Awaits the object's metadata (boto3's `head_object` keys).
    fn head<'py>(&self, py: Python<'py>, bucket: &str, key: &str) -> PyResult<Bound<'py, PyAny>> {
        let operation = HeadObject::new(args::bucket("bucket", bucket)?, args::key("key", key)?);
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
}

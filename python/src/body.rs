//! Streaming bodies and listings as Python objects, and Python file objects as the sources
//! and destinations of transfers.

use std::io::{self, Read, Write};
use std::sync::Mutex;

use pyo3::exceptions::{PyStopIteration, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use s3_wire_tokio::blocking::{self, ObjectBody, Pages as BlockingPages};
use s3_wire_tokio::s3_ops::ListObjectsV2;
use s3_wire_tokio::s3_xml::Object;

use crate::{convert, errors};

/// A file-like body of `get(..., stream=True)`: `read(n)`, `readinto(buffer)`, iteration
/// over the chunks as they arrived, `close()`, and use as a context manager. The object's head is in
/// `.head` (a dict with boto3's `head_object` keys). A body that breaks off, or fails its
/// length or checksum check, raises `S3WireError` rather than end early.
#[pyclass(module = "s3wire._s3wire")]
pub(crate) struct StreamingBody {
    body: Option<ObjectBody>,
    #[pyo3(get)]
    head: Py<PyDict>,
}

impl StreamingBody {
    pub(crate) fn new(py: Python<'_>, response: blocking::GetObjectResponse) -> PyResult<Self> {
        Ok(Self {
            head: convert::head(py, &response.output.head)?.unbind(),
            body: Some(response.body),
        })
    }

    fn body(&mut self) -> PyResult<&mut ObjectBody> {
        self.body
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("I/O operation on a closed body"))
    }
}

/// Reads up to `size` bytes (all that is left when `None` or negative) with the GIL
/// released.
fn read_up_to(py: Python<'_>, body: &mut ObjectBody, size: Option<usize>) -> PyResult<Vec<u8>> {
    let result = py.detach(|| -> io::Result<Vec<u8>> {
        match size {
            None => {
                let mut all = Vec::new();
                body.read_to_end(&mut all)?;
                Ok(all)
            }
            Some(size) => {
                let mut buffer = vec![0; size];
                let mut filled = 0;
                while filled < size {
                    match body.read(&mut buffer[filled..])? {
                        0 => break,
                        n => filled += n,
                    }
                }
                buffer.truncate(filled);
                Ok(buffer)
            }
        }
    });
    result.map_err(|error| io_to_py(py, error))
}

/// A read error: the client's error inside becomes its exception.
fn io_to_py(py: Python<'_>, error: io::Error) -> PyErr {
    match error.into_inner() {
        Some(inner) => match inner.downcast::<s3_wire_tokio::Error>() {
            Ok(error) => errors::to_py(py, *error, "NoSuchKey"),
            Err(other) => pyo3::exceptions::PyOSError::new_err(other.to_string()),
        },
        None => pyo3::exceptions::PyOSError::new_err("read failed"),
    }
}

#[pymethods]
impl StreamingBody {
    /// Up to `size` bytes (`b""` at the end); the whole rest when `size` is omitted or
    /// negative.
    #[pyo3(signature = (size=-1))]
    fn read<'py>(&mut self, py: Python<'py>, size: isize) -> PyResult<Bound<'py, PyBytes>> {
        let size = usize::try_from(size).ok();
        let bytes = read_up_to(py, self.body()?, size)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Reads into `buffer` (a writable bytes-like object, such as a `bytearray`); the
    /// number of bytes read, 0 at the end.
    fn readinto(&mut self, py: Python<'_>, buffer: &Bound<'_, PyAny>) -> PyResult<usize> {
        let capacity = buffer.len()?;
        let bytes = read_up_to(py, self.body()?, Some(capacity))?;
        let slice = pyo3::types::PySlice::new(py, 0, bytes.len() as isize, 1);
        buffer.set_item(slice, PyBytes::new(py, &bytes))?;
        Ok(bytes.len())
    }

    /// Whether this is readable (always, until closed): for `io` wrappers.
    fn readable(&self) -> bool {
        self.body.is_some()
    }

    /// Closes the body; the connection is dropped if it was not read to its end.
    fn close(&mut self) {
        self.body = None;
    }

    #[getter]
    fn closed(&self) -> bool {
        self.body.is_none()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let body = self.body()?;
        let chunk = py.detach(|| body.next_chunk());
        match chunk {
            Some(Ok(chunk)) => Ok(PyBytes::new(py, &chunk)),
            Some(Err(error)) => Err(errors::to_py(py, error, "NoSuchKey")),
            None => Err(PyStopIteration::new_err(())),
        }
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        &mut self,
        _kind: Option<&Bound<'_, PyAny>>,
        _value: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) {
        self.close();
    }
}

/// The objects of a listing, lazily (each page requested as iteration reaches it); the
/// pages themselves through `.pages()`.
#[pyclass(module = "s3wire._s3wire")]
pub(crate) struct Listing {
    /// In a `Mutex` only so that the class is `Sync`; reached through `&mut self`.
    pages: Mutex<Option<BlockingPages<ListObjectsV2>>>,
    current: std::collections::VecDeque<Object>,
}

impl Listing {
    pub(crate) fn new(pages: BlockingPages<ListObjectsV2>) -> Self {
        Self {
            pages: Mutex::new(Some(pages)),
            current: Default::default(),
        }
    }
}

impl Listing {
    fn remaining(&mut self) -> &mut Option<BlockingPages<ListObjectsV2>> {
        self.pages
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[pymethods]
impl Listing {
    /// An iterator of whole pages (dicts with `Contents`, `CommonPrefixes`, `KeyCount`,
    /// `IsTruncated`, `NextContinuationToken`, as boto3's `list_objects_v2` answers),
    /// instead of objects. Only before iteration over objects started.
    fn pages(&mut self) -> PyResult<Pages> {
        match (self.remaining().take(), self.current.is_empty()) {
            (Some(pages), true) => Ok(Pages {
                pages: Mutex::new(pages),
            }),
            _ => Err(PyValueError::new_err(
                "pages() of a listing whose objects are being iterated over",
            )),
        }
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        loop {
            if let Some(object) = self.current.pop_front() {
                return convert::listed(py, &object);
            }
            let pages = self.remaining();
            let Some(listing) = pages.as_mut() else {
                return Err(PyStopIteration::new_err(()));
            };
            match py.detach(|| listing.next()) {
                Some(Ok(page)) => self.current.extend(page.result.contents),
                Some(Err(error)) => {
                    *pages = None;
                    return Err(errors::to_py(py, error, "NoSuchBucket"));
                }
                None => *pages = None,
            }
        }
    }
}

/// The pages of a listing, each requested when iteration reaches it.
#[pyclass(module = "s3wire._s3wire")]
pub(crate) struct Pages {
    /// In a `Mutex` only so that the class is `Sync`; reached through `&mut self`.
    pages: Mutex<BlockingPages<ListObjectsV2>>,
}

#[pymethods]
impl Pages {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let pages = self
            .pages
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let page = match py.detach(|| pages.next()) {
            Some(Ok(page)) => page,
            Some(Err(error)) => return Err(errors::to_py(py, error, "NoSuchBucket")),
            None => return Err(PyStopIteration::new_err(())),
        };
        let dict = PyDict::new(py);
        let contents = PyList::empty(py);
        for object in &page.result.contents {
            contents.append(convert::listed(py, object)?)?;
        }
        dict.set_item("KeyCount", page.result.contents.len())?;
        dict.set_item("Contents", contents)?;
        let prefixes = PyList::empty(py);
        for prefix in &page.result.common_prefixes {
            let entry = PyDict::new(py);
            entry.set_item("Prefix", prefix)?;
            prefixes.append(entry)?;
        }
        dict.set_item("CommonPrefixes", prefixes)?;
        dict.set_item("IsTruncated", page.result.is_truncated)?;
        dict.set_item(
            "NextContinuationToken",
            page.result.next_continuation_token.as_deref(),
        )?;
        Ok(dict)
    }
}

/// A Python binary file object as a [`Read`]: each read takes the GIL and calls its
/// `read(n)` (on the runtime's blocking pool, while the caller waits without it).
pub(crate) struct PyReader(Py<PyAny>);

impl PyReader {
    pub(crate) fn new(file: Py<PyAny>) -> Self {
        Self(file)
    }
}

impl Read for PyReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let data = self
                .0
                .call_method1(py, "read", (buf.len(),))
                .map_err(|error| io::Error::other(format!("Fileobj.read failed: {error}")))?;
            let data = data.bind(py);
            let bytes = data.cast::<PyBytes>().map_err(|_| {
                io::Error::other("Fileobj.read returned something other than bytes")
            })?;
            let bytes = bytes.as_bytes();
            if bytes.len() > buf.len() {
                return Err(io::Error::other("Fileobj.read returned more than asked"));
            }
            buf[..bytes.len()].copy_from_slice(bytes);
            Ok(bytes.len())
        })
    }
}

/// A Python binary file object as a [`Write`]: each write takes the GIL and calls its
/// `write(b)`.
pub(crate) struct PyWriter(Py<PyAny>);

impl PyWriter {
    pub(crate) fn new(file: Py<PyAny>) -> Self {
        Self(file)
    }
}

impl Write for PyWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let written = self
                .0
                .call_method1(py, "write", (PyBytes::new(py, buf),))
                .map_err(|error| io::Error::other(format!("Fileobj.write failed: {error}")))?;
            // Raw files may write less than asked, and say how much; buffered ones None.
            Ok(written.extract::<usize>(py).unwrap_or(buf.len()))
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Python::attach(|py| match self.0.bind(py).getattr("flush") {
            Ok(flush) => flush
                .call0()
                .map(drop)
                .map_err(|error| io::Error::other(format!("Fileobj.flush failed: {error}"))),
            Err(_) => Ok(()),
        })
    }
}

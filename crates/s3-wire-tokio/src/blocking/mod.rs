//! A blocking client over the async one, for programs that are not async (feature
//! `blocking`).
//!
//! [`Client`] owns a multi-thread Tokio runtime of its own (as `reqwest::blocking` does),
//! which drives every call's I/O: each operation (the named methods and [`Client::send`]
//! for any of them, polled on the calling thread), the managed transfers with their
//! progress and cancellation ([`Transfer`], [`Handle`]: tasks on the runtime), listings as
//! iterators ([`Pages`]) and object bodies as [`std::io::Read`] ([`ObjectBody`]), read
//! ahead by a task and handed over in batches.
//!
//! ```no_run
//! use std::io::Read;
//! use s3_wire_tokio::blocking::Client;
//! use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
//! use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
//! use s3_wire_tokio::{UploadSource, bucket, key};
//!
//! # fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::from_env()?;
//! client
//!     .upload(bucket("backups")?, key("disk.img")?, UploadSource::file("disk.img"))
//!     .configure(|upload| upload.part_size(16 << 20))
//!     .run()?;
//! let mut object = client.get_object(GetObject::new(bucket("backups")?, key("notes.txt")?))?;
//! let mut text = String::new();
//! object.body.read_to_string(&mut text)?;
//! for entry in client.list_objects_v2_pages(ListObjectsV2::new(bucket("backups")?)).objects() {
//!     println!("{}", entry?.key);
//! }
//! # Ok(()) }
//! ```
//!
//! **When to use it:** in a program with no async runtime (a command-line tool, a script,
//! a binding to another language). Within async code use the async [`crate::Client`]:
//! every method here blocks its thread until the work is done, and calling one from
//! inside a Tokio runtime panics with a message that says so (blocking there would stall
//! the runtime's thread; call it from `tokio::task::spawn_blocking` if you must). A
//! `Client` may be cloned and shared across threads: clones share the runtime, the
//! connection pool and the credentials.

mod body;
mod pages;
mod transfer;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use s3_ops::ops::copy_source::CopySource;
use s3_ops::ops::get_object::GetObject;
use s3_ops::ops::list_buckets::ListBuckets;
use s3_ops::ops::list_multipart_uploads::ListMultipartUploads;
use s3_ops::ops::list_object_versions::ListObjectVersions;
use s3_ops::ops::list_objects::ListObjects;
use s3_ops::ops::list_objects_v2::{ListObjectsV2, ListObjectsV2Output};
use s3_ops::ops::list_parts::ListParts;
use s3_ops::ops::put_object::{PutObject, PutObjectOutput};
use s3_ops::ops::upload_part::{UploadPart, UploadPartOutput};
use s3_ops::presign::Presignable;
use s3_ops::presign_post::{PostConditions, PresignedPost};
use s3_ops::{BucketName, ObjectKey, Operation};
use s3_sigv4::PresignedRequest;

use crate::body::Body;
use crate::error::Error;
use crate::transfer::{
    CopyBuilder, Destination, DirectoryBuilder, DownloadBuilder, UploadBuilder, UploadSource,
};

pub use body::{GetObjectResponse, ObjectBody};
pub use pages::{Objects, Pages};
pub use transfer::{
    Controlled, Handle, Kept, Task, Transfer, read_source, write_destination,
    write_destination_keeping_small,
};

/// The blocking S3 client: see the [module docs](self).
#[derive(Clone)]
pub struct Client {
    client: crate::Client,
    runtime: Arc<Runtime>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("blocking::Client")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A blocking client over `client`, with a multi-thread runtime of its own (one worker
    /// per core).
    pub fn new(client: crate::Client) -> Result<Self, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("s3-wire-blocking")
            .build()
            .map_err(Error::io)?;
        Ok(Self {
            client,
            runtime: Arc::new(Runtime(Some(runtime))),
        })
    }

    /// A client configured from the standard AWS environment variables and shared config
    /// files (see [`crate::ClientBuilder::from_env`]).
    pub fn from_env() -> Result<Self, Error> {
        Self::new(crate::Client::from_env()?)
    }

    /// A builder for the async client this one wraps: `Client::new(builder.build()?)`.
    pub fn builder() -> crate::ClientBuilder {
        crate::ClientBuilder::new()
    }

    /// The async client this one runs (the same connection pool and credentials).
    pub fn async_client(&self) -> &crate::Client {
        &self.client
    }

    /// Runs `future` on this thread, the client's runtime driving its I/O and timers, and
    /// blocks until it ends: any async work of the async client, done from blocking code
    /// (to run it as a task that can be cancelled, see [`Client::spawn`]).
    ///
    /// # Panics
    ///
    /// When called from inside a Tokio runtime (see the [module docs](self)), and with the
    /// future's panic if it panics.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.run(future)
    }

    /// Starts `future` as a task on the client's runtime, for a [`Handle`] to wait for
    /// (in steps, with [`Handle::wait_timeout`]) or cancel: any async work of the async
    /// client that a caller must be able to interrupt. A cancelled task ends with an error
    /// that [`is_cancelled`](Error::is_cancelled).
    ///
    /// # Panics
    ///
    /// Inside a Tokio runtime (see the [module docs](self)).
    pub fn spawn<T, F>(&self, future: F) -> Handle<Task<T>>
    where
        F: Future<Output = Result<T, Error>> + Send + 'static,
        T: Send + 'static,
    {
        let task = Task(self.runtime.get().spawn(future));
        Handle::new(task, self.clone())
    }

    /// Runs any operation whose response is decoded in memory (see
    /// [`crate::Client::send`]).
    pub fn send<O: Operation>(&self, operation: O) -> Result<O::Output, Error> {
        self.block_on(self.client.send(operation))
    }

    /// `GetObject`: returns once the response head arrived; the body is read as the
    /// caller reads [`GetObjectResponse::body`] (see [`crate::Client::get_object`]).
    pub fn get_object(&self, operation: GetObject) -> Result<GetObjectResponse, Error> {
        let response = self.block_on(self.client.get_object(operation))?;
        Ok(GetObjectResponse::new(response, self.runtime.clone()))
    }

    /// `PutObject` with a body (see [`crate::Client::put_object`]). A file is sent in place
    /// with [`Client::file_body`].
    pub fn put_object(
        &self,
        operation: PutObject,
        body: impl Into<Body>,
    ) -> Result<PutObjectOutput, Error> {
        self.block_on(self.client.put_object(operation, body.into()))
    }

    /// `UploadPart` with a body (see [`crate::Client::upload_part`]).
    pub fn upload_part(
        &self,
        operation: UploadPart,
        body: impl Into<Body>,
    ) -> Result<UploadPartOutput, Error> {
        self.block_on(self.client.upload_part(operation, body.into()))
    }

    /// A body read from the file at `path` in place (see [`Body::from_file`]).
    pub fn file_body(&self, path: impl Into<std::path::PathBuf>) -> Result<Body, Error> {
        self.block_on(Body::from_file(path.into()))
    }

    /// `ListObjectsV2`, one page (see [`crate::Client::list_objects_v2`]).
    pub fn list_objects_v2(&self, operation: ListObjectsV2) -> Result<ListObjectsV2Output, Error> {
        self.block_on(self.client.list_objects_v2(operation))
    }

    /// A presigned URL for `operation`, valid for `expires_in` (see
    /// [`crate::Client::presign`]).
    pub fn presign<O: Presignable>(
        &self,
        operation: &O,
        expires_in: Duration,
    ) -> Result<PresignedRequest, Error> {
        self.block_on(self.client.presign(operation, expires_in))
    }

    /// A presigned POST form (see [`crate::Client::presign_post`]).
    pub fn presign_post(
        &self,
        bucket: &BucketName,
        conditions: &PostConditions,
        expires_in: Duration,
    ) -> Result<PresignedPost, Error> {
        self.block_on(self.client.presign_post(bucket, conditions, expires_in))
    }

    /// Every page of a ListObjectsV2 listing, each requested when the iterator is advanced
    /// to it (see [`crate::Client::list_objects_v2_pages`]); [`Pages::objects`] iterates
    /// over the objects.
    pub fn list_objects_v2_pages(&self, first: ListObjectsV2) -> Pages<ListObjectsV2> {
        Pages::new(self.client.list_objects_v2_pages(first), self.clone())
    }

    /// Every page of a ListObjects (version 1) listing.
    pub fn list_objects_pages(&self, first: ListObjects) -> Pages<ListObjects> {
        Pages::new(self.client.list_objects_pages(first), self.clone())
    }

    /// Every page of a ListObjectVersions listing.
    pub fn list_object_versions_pages(
        &self,
        first: ListObjectVersions,
    ) -> Pages<ListObjectVersions> {
        Pages::new(self.client.list_object_versions_pages(first), self.clone())
    }

    /// Every page of a ListParts listing.
    pub fn list_parts_pages(&self, first: ListParts) -> Pages<ListParts> {
        Pages::new(self.client.list_parts_pages(first), self.clone())
    }

    /// Every page of a ListMultipartUploads listing.
    pub fn list_multipart_uploads_pages(
        &self,
        first: ListMultipartUploads,
    ) -> Pages<ListMultipartUploads> {
        Pages::new(
            self.client.list_multipart_uploads_pages(first),
            self.clone(),
        )
    }

    /// Every page of a ListBuckets listing.
    pub fn list_buckets_pages(&self, first: ListBuckets) -> Pages<ListBuckets> {
        Pages::new(self.client.list_buckets_pages(first), self.clone())
    }

    /// A managed upload (see [`crate::Client::upload`]); a [`std::io::Read`] is a source
    /// through [`read_source`].
    pub fn upload(
        &self,
        bucket: BucketName,
        key: ObjectKey,
        source: impl Into<UploadSource>,
    ) -> Transfer<UploadBuilder> {
        self.transfer(self.client.upload(bucket, key, source))
    }

    /// A managed download (see [`crate::Client::download`]); a [`std::io::Write`] is a
    /// destination through [`write_destination`].
    pub fn download(
        &self,
        bucket: BucketName,
        key: ObjectKey,
        destination: impl Into<Destination>,
    ) -> Transfer<DownloadBuilder> {
        self.transfer(self.client.download(bucket, key, destination))
    }

    /// A managed server-side copy (see [`crate::Client::copy`]).
    pub fn copy(
        &self,
        source: CopySource,
        bucket: BucketName,
        key: ObjectKey,
    ) -> Transfer<CopyBuilder> {
        self.transfer(self.client.copy(source, bucket, key))
    }

    /// A directory upload (see [`crate::Client::upload_directory`]).
    pub fn upload_directory(
        &self,
        directory: impl Into<std::path::PathBuf>,
        bucket: BucketName,
        prefix: impl Into<String>,
    ) -> Transfer<DirectoryBuilder> {
        self.transfer(self.client.upload_directory(directory, bucket, prefix))
    }

    /// A directory download (see [`crate::Client::download_directory`]).
    pub fn download_directory(
        &self,
        bucket: BucketName,
        prefix: impl Into<String>,
        directory: impl Into<std::path::PathBuf>,
    ) -> Transfer<DirectoryBuilder> {
        self.transfer(self.client.download_directory(bucket, prefix, directory))
    }

    /// A copy of every object under a prefix (see [`crate::Client::copy_directory`]).
    pub fn copy_directory(
        &self,
        source_bucket: BucketName,
        source_prefix: impl Into<String>,
        bucket: BucketName,
        prefix: impl Into<String>,
    ) -> Transfer<DirectoryBuilder> {
        self.transfer(
            self.client
                .copy_directory(source_bucket, source_prefix, bucket, prefix),
        )
    }

    /// Any managed transfer of the async client, built there, run from here.
    pub fn transfer<B>(&self, builder: B) -> Transfer<B>
    where
        B: std::future::IntoFuture,
        B::IntoFuture: Controlled,
    {
        Transfer::new(builder, self.clone())
    }
}

/// Generates the blocking method of every operation whose response is decoded in memory,
/// from the async client's list.
macro_rules! blocking_operations {
    ($($(#[$doc:meta])* $method:ident => $module:ident::$op:ident;)*) => {
        impl Client {
            $(
                $(#[$doc])*
                pub fn $method(
                    &self,
                    operation: s3_ops::ops::$module::$op,
                ) -> Result<<s3_ops::ops::$module::$op as Operation>::Output, Error> {
                    self.block_on(self.client.$method(operation))
                }
            )*
        }
    };
}
crate::ops::buffered_operations_list!(blocking_operations);

/// The client's runtime; shut down in the background when dropped inside another runtime
/// (where a plain drop, which waits, would panic).
struct Runtime(Option<tokio::runtime::Runtime>);

impl Runtime {
    /// Runs `future` on the calling thread, the runtime driving its I/O and timers, and
    /// blocks until it ends. An operation's future mostly waits for its connection's task:
    /// polled here, it saves the two thread switches of a task of its own (started on a
    /// worker, its end waking this thread), which small requests from many threads paid
    /// for (measurements/perf-2026-12-07-python-blocking.md). A body is read ahead by a task all
    /// the same ([`ObjectBody`]).
    ///
    /// # Panics
    ///
    /// Inside a Tokio runtime, and with the future's panic if it panics.
    fn run<F: Future>(&self, future: F) -> F::Output {
        self.get().block_on(future)
    }

    /// The runtime, for a caller that is about to block on it.
    ///
    /// # Panics
    ///
    /// Inside a Tokio runtime, with a message saying why.
    fn get(&self) -> &tokio::runtime::Runtime {
        let runtime = self.0.as_ref().expect("the runtime is taken only on drop");
        assert_blocking_allowed(runtime);
        runtime
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take()
            && tokio::runtime::Handle::try_current().is_ok()
        {
            runtime.shutdown_background();
        }
    }
}

/// Panics with a clear message where blocking would stall a Tokio runtime: on its worker
/// threads, or in its `block_on`. A thread of a runtime's blocking pool
/// (`tokio::task::spawn_blocking`) is there to block, and passes. Tokio tells the two apart
/// only by the check of its own `block_on`, so a thread with a runtime's context runs that
/// check, on `runtime`, with nothing to do (Tokio's panic message is printed before ours).
fn assert_blocking_allowed(runtime: &tokio::runtime::Runtime) {
    if tokio::runtime::Handle::try_current().is_err() {
        return;
    }
    if std::panic::catch_unwind(|| runtime.block_on(async {})).is_err() {
        panic!(
            "s3_wire::blocking::Client was called from inside a Tokio runtime, where \
             blocking would stall the runtime's thread: use the async s3_wire::Client \
             there (or call the blocking one from tokio::task::spawn_blocking)"
        );
    }
}

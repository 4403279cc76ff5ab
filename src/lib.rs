//! **s3-wire**: an async, streaming S3-compatible object-storage client.
//!
//! This is the facade crate users depend on. It re-exports the Tokio client from
//! `s3-wire-tokio`; the sans-IO building blocks are available as modules for
//! custom transports.
//!
//! ```no_run
//! use s3_wire::{Client, bucket, key};
//! use s3_wire::ops::{GetObject, PutObject};
//!
//! # async fn demo() -> Result<(), s3_wire::Error> {
//! // Credentials, region and endpoint from AWS_* variables or ~/.aws/{config,credentials}.
//! let client = Client::from_env()?;
//! client
//!     .put_object(PutObject::new(bucket("my-bucket")?, key("hello.txt")?), "hello")
//!     .await?;
//! let mut object = client
//!     .get_object(GetObject::new(bucket("my-bucket")?, key("hello.txt")?))
//!     .await?;
//! while let Some(chunk) = object.body.next_chunk().await {
//!     print!("{}", String::from_utf8_lossy(&chunk?));
//! }
//! # Ok(()) }
//! ```
//!
//! Features: `http2` offers HTTP/2 over TLS; `blocking` adds `blocking::Client` for
//! programs that are not async; `ascii-hostnames` (default) keeps ICU out of the build (see
//! `s3-wire-tokio`).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use s3_multipart_plan as multipart_plan;
pub use s3_ops as ops;
pub use s3_sigv4 as sigv4;
pub use s3_xml as xml;

/// Presigned POST (`Client::presign_post`): the conditions of a browser upload and its form.
pub use s3_ops::presign_post::{PostConditions, PresignedPost};
/// Provider profiles, for `ClientBuilder::provider` (see `docs/compatibility.md`).
pub use s3_ops::{Provider, ProviderQuirks};

/// A blocking client over the async one, with a runtime of its own (feature `blocking`).
#[cfg(feature = "blocking")]
pub use s3_wire_tokio::blocking;
pub use s3_wire_tokio::{
    Body, ByteStream, Cleanup, Client, ClientBuilder, DEFAULT_REGION, Destination, DirectoryHandle,
    DirectoryProgress, Error, ErrorKind, GetObjectResponse, NotVerified, ObjectBody, ObjectReader,
    Paginated, Paginator, PayloadSigning, Progress, RetryConfig, TimeoutKind, Timeouts,
    TransferErrorKind, TransferFailure, TransferHandle, TransferOptions, TransportErrorKind,
    UploadSource, Verification, bucket, credentials, key, transfer,
};

/// The README's example compiles (run by `cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

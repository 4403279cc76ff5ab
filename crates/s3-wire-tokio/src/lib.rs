//! The Tokio runtime adapter of s3-wire: an async, streaming S3 client that
//! drives `s3-ops` (operation codecs) and `s3-sigv4` (signing) over `reqwest`.
//!
//! Owns everything that touches the outside world: the HTTP transport,
//! credential sources, clocks and timers for retries and timeouts, and
//! streaming bodies.
//!
//! **Dependency rule:** may depend on every pure crate and on tokio/reqwest; no
//! pure crate may depend on it.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod body;
mod chunked;
mod client;
mod config;
pub mod credentials;
mod download;
mod error;
mod ops;
mod paginate;
mod progress;
mod retry;
mod sign;
mod transport;

pub use body::{Body, ByteStream};
pub use client::Client;
pub use config::{ClientBuilder, DEFAULT_REGION, Timeouts};
pub use download::{ObjectBody, ObjectReader};
pub use error::{Error, ErrorKind, TimeoutKind, TransportErrorKind};
pub use ops::{GetObjectResponse, bucket, key};
pub use paginate::{Paginated, Paginator};
pub use retry::RetryConfig;

/// The operation codecs (`s3-ops`): typed requests and outputs.
pub use s3_ops;

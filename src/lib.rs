//! **s3-wire**: an async, streaming S3-compatible object-storage client.
//!
//! This is the facade crate users depend on. It re-exports the Tokio client from
//! `s3-wire-tokio`; the sans-IO building blocks are available as modules for
//! custom transports.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use s3_multipart_plan as multipart_plan;
pub use s3_ops as ops;
pub use s3_sigv4 as sigv4;
pub use s3_xml as xml;

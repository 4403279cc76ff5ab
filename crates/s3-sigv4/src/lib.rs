//! AWS Signature Version 4 for S3, sans-IO.
//!
//! Signs `http::Request` values (headers or query string), derives and caches
//! signing keys, encodes `aws-chunked` streaming bodies with chained chunk
//! signatures and trailers, and signs POST policies. It performs no I/O, reads no
//! clock and spawns nothing: the caller passes the time in.
//!
//! **Dependency rule:** `http`, `sha2`, `hmac` and little else; never a runtime.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

//! Typed S3 operations as pure `http::Request` / `http::Response` codecs.
//!
//! Each operation turns into an `http::Request<()>` plus a body description, and
//! an `http::Response` (status, headers, body bytes) turns into a typed output or
//! a typed S3 error. Addressing, key encoding, checksums and retry
//! classification live here as data. No I/O, no clock.
//!
//! **Dependency rule:** `s3-sigv4`, `s3-xml`, `http` and checksum crates; never a
//! runtime.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

//! The Tokio runtime adapter: drives `s3-ops` and `s3-sigv4` over `reqwest`.
//!
//! Owns everything that touches the outside world: the HTTP transport, credential
//! sources, clocks and timers for retries and timeouts, streaming bodies, and
//! the transfer drivers for `s3-multipart-plan`.
//!
//! **Dependency rule:** may depend on every pure crate and on tokio/reqwest; no
//! pure crate may depend on it.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

//! Support code of the integration tests (s3-wire-tokio's tests include these files too).
#![allow(dead_code)]

pub mod endpoint;
pub mod imds;
pub mod server;
pub mod sigv4;
pub mod sts;

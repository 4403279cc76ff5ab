//! Support code for the integration tests. Each test binary uses a different subset.
#![allow(dead_code)]

pub mod aws_chunked;
pub mod fault;
pub mod sigv4;

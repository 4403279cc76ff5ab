//! Response-header decoding on arbitrary header values: Content-Range, checksums, dates,
//! ETags, counts, Content-Length (s3-ops: HeadObject, GetObject buffered and head-only,
//! body validation, resumption, PutObject, UploadPart, ...) and the client's
//! `Retry-After`. Must never panic; the decoded values must agree with the headers. The
//! same logic runs under proptest in `crates/s3-ops/src/fuzzing.rs` and
//! `crates/s3-wire-tokio/src/fuzzing.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    s3_wire::ops::fuzzing::decode_response_headers_arbitrary(data);
    s3_wire_tokio::fuzzing::retry_after_arbitrary(data);
});

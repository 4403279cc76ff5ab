//! aws-chunked encoding (the three modes, with and without trailer, SigV4 and SigV4a) of
//! arbitrary payload lengths, chunk sizes and trailers, with encoder misuse interleaved,
//! decoded by an independent parser and its signatures verified independently. The same
//! logic runs under proptest in `crates/s3-sigv4/src/fuzz_tests.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    s3_wire::sigv4::fuzzing::chunked_roundtrip_arbitrary(data);
});

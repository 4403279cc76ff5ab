//! URI, query and header canonicalization plus full signing on arbitrary
//! bytes: must never panic. The same logic runs under proptest in
//! `crates/s3-sigv4/src/fuzz_tests.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    s3_wire::sigv4::fuzzing::canonicalize_arbitrary(data);
});

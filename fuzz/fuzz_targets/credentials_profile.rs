//! The shared config / credentials file parser and profile resolution (`ProfileSet`,
//! `SharedConfig`, `credentials_from_profile`) on arbitrary text. Must never panic;
//! lookups must agree with what was parsed. The same logic runs under proptest in
//! `crates/s3-wire-tokio/src/fuzzing.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    s3_wire_credentials::fuzzing::profile_files_arbitrary(data);
});

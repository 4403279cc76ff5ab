//! The resumable snapshot text parser: whatever parses must round-trip,
//! reconcile and resume without panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    s3_wire::multipart_plan::fuzzing::snapshot_text(data);
});

//! Arbitrary `handle_*`/poll sequences on the upload scheduler (known size and
//! stream): typed errors, never panics; concurrency, memory and single-Abort
//! bounds hold.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    s3_wire::multipart_plan::fuzzing::upload_events(data);
});

//! Arbitrary call sequences on the ranged download scheduler: concurrency
//! and window bounds hold and delivery stays in order.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    s3_wire::multipart_plan::fuzzing::download_events(data);
});

//! Every s3-ops operation's response decoder (status, headers and body from the input),
//! plus head-only decoding, checksum validation and retry classification.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    s3_wire::ops::fuzzing::decode_arbitrary_response(data);
});

//! s3-ops request encoding from arbitrary bucket names, keys, metadata, tags, version ids
//! and ranges: never a panic, and every accepted key decodes back from the request path.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    s3_wire::ops::fuzzing::encode_arbitrary_request(data);
});

//! Bucket names, access point ARNs (single-region, Object Lambda, Outposts, Multi-Region),
//! S3 Express and Outposts alias names and regions from arbitrary input, addressed through
//! AWS and custom endpoints with every flag: never a panic, and every request built has a
//! host name and its bucket in the host or the path.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    s3_wire::ops::fuzzing::address_arbitrary_name(data);
});

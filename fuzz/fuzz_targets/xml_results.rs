//! s3-xml, results family: arbitrary bytes never panic a decoder, and a
//! document over the byte limit is always refused with `TooLarge`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use s3_wire::xml::Limits;
use s3_wire::xml::fuzzing::{Family, decode_family};

fuzz_target!(|data: &[u8]| {
    decode_family(Family::Results, data, &Limits::default());
    let tight = Limits::new(data.len() / 2)
        .with_max_depth(6)
        .with_max_entries(4);
    decode_family(Family::Results, data, &tight);
});

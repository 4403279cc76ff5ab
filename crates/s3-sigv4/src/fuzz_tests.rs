//! The fuzz target's logic under proptest, so `cargo test` exercises it.

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn canonicalization_never_panics_on_bytes(data in prop::collection::vec(any::<u8>(), 0..256)) {
        crate::fuzzing::canonicalize_arbitrary(&data);
    }

    #[test]
    fn canonicalization_never_panics_on_uri_like_input(
        path in "[/%.a-zA-Z0-9 é+$]{0,40}",
        query in "[=&%a-zA-Z0-9 +é]{0,40}",
        headers in "([a-zA-Z-]{1,8}:[ \t!-~]{0,12}\n){0,6}",
    ) {
        let mut data = path.into_bytes();
        data.push(0xFF);
        data.extend_from_slice(query.as_bytes());
        data.push(0xFF);
        data.extend_from_slice(headers.as_bytes());
        crate::fuzzing::canonicalize_arbitrary(&data);
    }
}

proptest! {
    // Each case encodes up to three chunks of 8-73 KiB (SigV4a: ECDSA per chunk).
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn chunked_roundtrip_on_bytes(data in prop::collection::vec(any::<u8>(), 0..96)) {
        crate::fuzzing::chunked_roundtrip_arbitrary(&data);
    }

    #[test]
    fn chunked_roundtrip_on_structured_input(
        flags in any::<u8>(),
        chunk_size in any::<u16>(),
        length in 0u32..1 << 24,
        name in 0u8..8,
        misuse in any::<u16>(),
        header_path in any::<u8>(),
        value in prop_oneof![
            Just(String::new()),
            "[A-Za-z0-9+/]{6}==",
            "[ -~\t\r\n\u{7f}é]{0,12}",
        ],
        custom_name in prop_oneof!["[a-z0-9-]{1,20}", "[ -~]{0,6}"],
        pattern in prop::collection::vec(any::<u8>(), 0..8),
    ) {
        let mut data = vec![flags];
        data.extend_from_slice(&chunk_size.to_be_bytes());
        data.extend_from_slice(&length.to_be_bytes()[1..]);
        data.push(name);
        data.extend_from_slice(&misuse.to_be_bytes());
        data.push(header_path);
        data.extend_from_slice(value.as_bytes());
        data.push(0xFF);
        data.extend_from_slice(custom_name.as_bytes());
        data.push(0xFF);
        data.extend_from_slice(&pattern);
        crate::fuzzing::chunked_roundtrip_arbitrary(&data);
    }
}

/// Every mode, with and without SigV4a, large chunks, a session token, an existing
/// content encoding and misuse at every step: the round trip holds.
#[test]
fn chunked_roundtrip_covers_every_mode() {
    for flags in [0u8, 1, 2, 3, 4, 5, 6, 7, 0x0D, 0x19, 0x41, 0x86, 0xDF] {
        for length in [0u32, 1, 8192, 8193, 20_000] {
            let mut data = vec![flags, 0, 16];
            data.extend_from_slice(&length.to_be_bytes()[1..]);
            data.extend_from_slice(&[1, 0xFF, 0xFF, 0x55]);
            data.extend_from_slice(b"AAAAAA==\xFFx-custom\xFFab\r\n");
            crate::fuzzing::chunked_roundtrip_arbitrary(&data);
        }
    }
}

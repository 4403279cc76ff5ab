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

//! The fuzz targets' event checks, fed by proptest so `cargo test` runs them.

use proptest::prelude::*;
use s3_multipart_plan::fuzzing::{download_events, upload_events};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn arbitrary_upload_events_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        upload_events(&bytes);
    }

    #[test]
    fn arbitrary_download_events_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        download_events(&bytes);
    }
}

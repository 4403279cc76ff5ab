//! [`S3WireStore`](crate::S3WireStore) as a store of `object_store` 0.13 (feature
//! `object-store-0-13`): `ObjectStore`, `MultipartStore`,
//! `PaginatedListStore` and, with the `signer` feature, `Signer`.
//!
//! The implementation is the one of [`v0_14`](crate::v0_14) too (`src/store/`, compiled once
//! per version); this module holds only what the two versions' types differ in.

use object_store_013 as object_store;

use object_store::path::Path;
use object_store::{GetResult, GetResultPayload, ListResult, ObjectMeta, PutResult};

/// 0.13's results have no `extensions`.
fn put_result(e_tag: Option<String>, version: Option<String>) -> PutResult {
    PutResult { e_tag, version }
}

fn get_result(
    payload: GetResultPayload,
    meta: ObjectMeta,
    range: std::ops::Range<u64>,
    attributes: object_store::Attributes,
) -> GetResult {
    GetResult {
        payload,
        meta,
        range,
        attributes,
    }
}

fn list_result(common_prefixes: Vec<Path>, objects: Vec<ObjectMeta>) -> ListResult {
    ListResult {
        common_prefixes,
        objects,
    }
}

/// `impl MultipartStore` with the methods both versions have (0.13's has no
/// `create_multipart_opts`).
macro_rules! impl_multipart_store {
    ($($shared:tt)*) => {
        #[async_trait]
        impl MultipartStore for S3WireStore {
            $($shared)*
        }
    };
}

// The same source is the `v0_14` module too.
#[allow(clippy::duplicate_mod)]
#[path = "store/mod.rs"]
mod store;

pub use store::S3WireUpload;

//! [`S3WireStore`](crate::S3WireStore) as a store of `object_store` 0.14 (feature
//! `object-store-0-14`, on by default): `ObjectStore`, `MultipartStore`,
//! `PaginatedListStore` and, with the `signer` feature, `Signer`.
//!
//! The implementation is the one of [`v0_13`](crate::v0_13) too (`src/store/`, compiled once
//! per version); this module holds only what the two versions' types differ in.

use object_store_014 as object_store;

use object_store::path::Path;
use object_store::{GetResult, GetResultPayload, ListResult, ObjectMeta, PutResult};

/// 0.14's results carry `extensions` (empty here: nothing is added to them).
fn put_result(e_tag: Option<String>, version: Option<String>) -> PutResult {
    PutResult {
        e_tag,
        version,
        extensions: Default::default(),
    }
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
        extensions: Default::default(),
    }
}

fn list_result(common_prefixes: Vec<Path>, objects: Vec<ObjectMeta>) -> ListResult {
    ListResult {
        common_prefixes,
        objects,
        extensions: Default::default(),
    }
}

/// `impl MultipartStore` with the methods both versions have, plus 0.14's
/// `create_multipart_opts` (attributes and tags for the upload's object).
macro_rules! impl_multipart_store {
    ($($shared:tt)*) => {
        #[async_trait]
        impl MultipartStore for S3WireStore {
            $($shared)*

            async fn create_multipart_opts(
                &self,
                path: &Path,
                opts: PutMultipartOptions,
            ) -> object_store::Result<MultipartId> {
                create_multipart(self, path, opts).await
            }
        }
    };
}

// The same source is the `v0_13` module too.
#[allow(clippy::duplicate_mod)]
#[path = "store/mod.rs"]
mod store;

pub use store::S3WireUpload;

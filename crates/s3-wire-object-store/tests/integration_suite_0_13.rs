//! object_store 0.13's own reusable suite (`object_store::integration`, 16 functions: 0.14's
//! less `multipart_with_opts`, `multipart_put_part_out_of_order` and `response_extensions`),
//! against `S3WireStore` (its `v0_13` implementation) and object_store 0.13's `AmazonS3`, run
//! exactly as `integration_suite_0_14.rs` runs 0.14's (the harness is the same file,
//! `integration_suite/body.rs`): every function on local-s3 in a fresh server, the whole
//! suite on moto; the same gaps, with the same reasons (see that file's table).
//!
//! Results (local-s3 s3s-fs 0.14.1, moto 5.2.5): on local-s3 S3WireStore passes 12 of the 16,
//! AmazonS3 13 (`put_get_delete_list`, `get_opts`, `put_opts` fail for both,
//! `copy_if_not_exists` for S3WireStore only, as with 0.14); on moto all 16 pass for both.

extern crate object_store_013 as object_store;

mod support;

include!("integration_suite/body.rs");

/// 0.13's suite has no `response_extensions`, and so no marker middleware.
fn reference_for_suite(
    builder: object_store::aws::AmazonS3Builder,
) -> object_store::aws::AmazonS3Builder {
    builder
}

/// Every public function of `object_store::integration` 0.13.2.
fn suite<S: SuiteStore>() -> Vec<(&'static str, SuiteFn<S>)> {
    suite_of_both_versions()
}

on_local_s3!(
    put_get_delete_list,
    put_get_attributes,
    get_opts,
    put_opts,
    stream_get,
    list_uses_directories_correctly,
    list_with_delimiter,
    get_nonexistent_object,
    rename_and_copy,
    copy_if_not_exists,
    copy_rename_nonexistent_object,
    multipart,
    multipart_race_condition,
    multipart_out_of_order,
    list_paginated,
    list_with_offset_exclusivity,
);

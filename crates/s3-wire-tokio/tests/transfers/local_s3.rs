//! Managed transfers against `tools/local-s3` (s3s-fs, real SigV4): every source kind at the
//! part boundaries (0, 1, part − 1, part, part + 1, 3.5 parts) and one object over 100 MiB,
//! each upload checked byte for byte by SHA-256 of what the store holds, then downloaded in
//! parallel to a file and to a writer, and copied. s3s-fs enforces S3's 5 MiB minimum part
//! size, so the boundaries are at 5 MiB here; the fault store tests them with small parts.
//!
//! s3s-fs ignores `If-Match` on GET, lists no part ETags and keeps no multipart checksums, so
//! pinning, resumption and checksum confirmation are proven against the fault store
//! (`faults.rs`), not here.

use crate::helpers::{SourceKind, collecting_writer};
use crate::support::{data, sha256};
use bytes::Bytes;
use local_s3::LocalS3;
use s3_wire_tokio::s3_multipart_plan::PartLimits;
use s3_wire_tokio::s3_ops::ops::copy_source::CopySource;
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::{BucketName, ObjectAttributes, ObjectKey};
use s3_wire_tokio::{Client, NotVerified, UploadSource, Verification};

/// s3s-fs enforces S3's 5 MiB minimum part size (`EntityTooSmall`), so the boundaries
/// here are at 5 MiB; the fault store tests them with small parts.
const PART: u64 = 5 * 1024 * 1024;

struct Local {
    client: Client,
    _server: LocalS3,
}

async fn start() -> Local {
    let (client, server) = crate::support::local_s3().await;
    client
        .create_bucket(CreateBucket::new(bucket()))
        .await
        .expect("create bucket");
    Local {
        client,
        _server: server,
    }
}

fn bucket() -> BucketName {
    BucketName::new("transfers").unwrap()
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::new(name).unwrap()
}

/// What the store holds under `name`, by a plain GetObject.
async fn stored(client: &Client, name: &str) -> Bytes {
    client
        .get_object(GetObject::new(bucket(), key(name)))
        .await
        .expect("get")
        .body
        .collect()
        .await
        .expect("body")
}

/// Uploads `bytes` from every source kind, once as one request where it fits and once always
/// as a multipart upload, and checks what the store holds.
async fn upload_every_way(local: &Local, len: u64) {
    let directory = tempfile::tempdir().unwrap();
    let bytes = data(len, len + 1);
    for kind in SourceKind::ALL {
        for single_request_limit in [PART, 0] {
            let name = format!("{len}/{kind:?}/{single_request_limit}");
            let stored_output = local
                .client
                .upload(
                    bucket(),
                    key(&name),
                    kind.source(&bytes, directory.path(), &name, 100_003),
                )
                .part_size(PART)
                .concurrency(4)
                .part_limits(PartLimits::S3)
                .single_request_limit(single_request_limit)
                .await
                .unwrap_or_else(|e| panic!("upload {name}: {e}"));
            assert_eq!(stored_output.size, len, "{name}");
            let multipart = len > single_request_limit;
            assert_eq!(
                stored_output.parts.is_some(),
                multipart,
                "{name}: {stored_output:?}"
            );
            if let Some(parts) = stored_output.parts {
                assert_eq!(u64::from(parts), len.div_ceil(PART).max(1), "{name}");
            }
            assert!(
                stored_output.checksum.is_some(),
                "{name}: a CRC64NVME was computed"
            );
            let held = stored(&local.client, &name).await;
            assert_eq!(held.len() as u64, len, "{name}");
            assert_eq!(sha256(&held), sha256(&bytes), "{name}: stored bytes differ");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_of_every_source_kind_store_exactly_their_bytes_at_the_part_boundaries() {
    let local = start().await;
    for len in [0, 1, PART - 1, PART, PART + 1, PART * 7 / 2] {
        upload_every_way(&local, len).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_to_a_file_and_to_a_writer_get_exactly_the_stored_bytes() {
    let local = start().await;
    let directory = tempfile::tempdir().unwrap();
    for len in [0, 1, PART - 1, PART, PART + 1, PART * 7 / 2] {
        let name = format!("download/{len}");
        let bytes = data(len, len + 7);
        local
            .client
            .upload(bucket(), key(&name), UploadSource::bytes(bytes.clone()))
            .await
            .unwrap();
        for single_request_limit in [PART, 0] {
            // Synced or not (`TransferOptions::sync_files`), the file appears whole, alone.
            for sync_files in [true, false] {
                let path = directory
                    .path()
                    .join(format!("{len}-{single_request_limit}-{sync_files}"));
                let got = local
                    .client
                    .download(bucket(), key(&name), path.as_path())
                    .part_size(PART)
                    .concurrency(3)
                    .single_request_limit(single_request_limit)
                    .sync_files(sync_files)
                    // One range per part: the requests are counted below.
                    .adapt_range_size(false)
                    .await
                    .unwrap_or_else(|e| panic!("download {name} to a file: {e}"));
                assert_eq!(got.size, len);
                let expected_requests = if len > single_request_limit {
                    len.div_ceil(PART)
                } else {
                    1
                };
                assert_eq!(u64::from(got.requests), expected_requests, "{name}");
                assert_eq!(
                    sha256(&std::fs::read(&path).unwrap()),
                    sha256(&bytes),
                    "{name}"
                );
                // Nothing but the target is left in the directory.
                let leftovers: Vec<_> = std::fs::read_dir(directory.path())
                    .unwrap()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|name| name.starts_with('.'))
                    .collect();
                assert!(leftovers.is_empty(), "{leftovers:?}");
            }
            let (writer, collected) = collecting_writer(64 * 1024);
            let got = local
                .client
                .download(bucket(), key(&name), writer)
                .part_size(PART)
                .concurrency(3)
                .single_request_limit(single_request_limit)
                .await
                .unwrap_or_else(|e| panic!("download {name} to a writer: {e}"));
            assert_eq!(got.size, len);
            let all = collected.await.unwrap();
            assert_eq!(sha256(&all), sha256(&bytes), "{name} to a writer");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_object_over_100_mib_goes_up_from_a_file_and_a_stream_and_down_in_parallel() {
    let local = start().await;
    let directory = tempfile::tempdir().unwrap();
    let len = 100 * 1024 * 1024 + 12_345;
    let bytes = data(len, 42);
    for kind in [SourceKind::File, SourceKind::StreamUnknown] {
        let name = format!("large/{kind:?}");
        let source = kind.source(&bytes, directory.path(), &name, 1 << 20);
        let uploaded = local
            .client
            .upload(bucket(), key(&name), source)
            .part_size(8 << 20)
            .await
            .unwrap_or_else(|e| panic!("upload {name}: {e}"));
        assert_eq!((uploaded.size, uploaded.parts), (len, Some(13)), "{name}");
        let back = directory.path().join("back.bin");
        let got = local
            .client
            .download(bucket(), key(&name), back.as_path())
            .part_size(8 << 20)
            .adapt_range_size(false)
            .await
            .unwrap_or_else(|e| panic!("download {name}: {e}"));
        assert_eq!(got.requests, 13, "{name}");
        assert_eq!(
            sha256(&std::fs::read(&back).unwrap()),
            sha256(&bytes),
            "{name}"
        );
    }
    let memory = local.client.transfer_memory();
    assert!(memory.high_water <= memory.capacity, "{memory:?}");
    assert!(
        memory.high_water > 8 << 20,
        "the stream's parts were held: {memory:?}"
    );
    assert_eq!(memory.in_use, 0, "everything was given back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_below_and_above_the_single_request_limit_keep_bytes_and_metadata() {
    let local = start().await;
    let len = PART * 7 / 2;
    let bytes = data(len, 3);
    local
        .client
        .upload(
            bucket(),
            key("copy/source"),
            UploadSource::bytes(bytes.clone()),
        )
        .attributes(
            ObjectAttributes::new()
                .content_type("application/x-test")
                .metadata("origin", "copy-test"),
        )
        .await
        .unwrap();
    for (name, single_request_limit) in [("copy/whole", u64::MAX), ("copy/parts", 0)] {
        let copied = local
            .client
            .copy(
                CopySource::new(bucket(), key("copy/source")),
                bucket(),
                key(name),
            )
            .part_size(PART)
            .part_limits(PartLimits::S3)
            .single_request_limit(single_request_limit)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(copied.size, len);
        assert_eq!(copied.parts.is_some(), single_request_limit == 0, "{name}");
        // Checksums were on; s3s-fs keeps none for a copy (whole or by parts): the store
        // sent none, which is not the same as turned off.
        assert_eq!(
            copied.verification,
            Verification::NotVerified(NotVerified::StoreSentNone),
            "{name}"
        );
        assert_eq!(
            sha256(&stored(&local.client, name).await),
            sha256(&bytes),
            "{name}"
        );
        let head = local
            .client
            .head_object(HeadObject::new(bucket(), key(name)))
            .await
            .unwrap();
        assert_eq!(
            head.content_type.as_deref(),
            Some("application/x-test"),
            "{name}"
        );
        assert_eq!(
            head.metadata.get("origin").map(String::as_str),
            Some("copy-test")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_put_reports_the_store_confirmed_checksum() {
    let local = start().await;
    let stored_output = local
        .client
        .upload(
            bucket(),
            key("confirmed"),
            UploadSource::bytes(data(1000, 9)),
        )
        .await
        .unwrap();
    match &stored_output.verification {
        Verification::FullObject(checksum) => {
            assert_eq!(Some(checksum), stored_output.checksum.as_ref())
        }
        other => panic!("local-s3 echoes single-PUT checksums: {other:?}"),
    }
}

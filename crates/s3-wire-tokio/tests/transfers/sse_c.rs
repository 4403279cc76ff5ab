//! SSE-C (customer-provided keys) through every managed transfer, on the fault store, which
//! checks keys as S3 does: a well-formed key with its MD5, an SSE-C object read only with its
//! key, every part and the completion of an SSE-C upload with the upload's key. Single and
//! multipart uploads, downloads, copies into and out of SSE-C and a key rotation by copy,
//! each with the key and key-MD5 header values asserted on what was sent.

use s3_wire_tokio::s3_ops::{CopySource, ObjectAttributes, ServerSideEncryption, SseCustomerKey};
use s3_wire_tokio::{Destination, UploadSource};

use crate::fault_store::{FaultKind, FaultPlan, FaultStore, Op, RequestRecord};
use crate::helpers::part_limits;
use crate::support::{base64, data, sha256};

const PART: u64 = 16 * 1024;
const BUCKET: &str = "sse-c";

fn bucket() -> s3_wire_tokio::s3_ops::BucketName {
    s3_wire_tokio::bucket(BUCKET).unwrap()
}

fn key(name: &str) -> s3_wire_tokio::s3_ops::ObjectKey {
    s3_wire_tokio::key(name).unwrap()
}

/// A customer key and the header values S3 expects with it, computed here.
struct CustomerKey {
    key: SseCustomerKey,
    base64: String,
    md5: String,
}

fn customer_key(byte: u8) -> CustomerKey {
    let raw = [byte; 32];
    CustomerKey {
        key: SseCustomerKey::new(raw),
        base64: base64(&raw),
        md5: base64(&md5_digest(&raw)),
    }
}

fn md5_digest(bytes: &[u8]) -> [u8; 16] {
    use md5::Digest;
    md5::Md5::digest(bytes).into()
}

fn encrypted_with(customer: &CustomerKey) -> ObjectAttributes {
    ObjectAttributes::new()
        .server_side_encryption(ServerSideEncryption::Customer(customer.key.clone()))
}

/// Every request of `operations` carried `customer`'s key under `prefix` (`x-amz-` or
/// `x-amz-copy-source-`), and there was at least one.
fn assert_key_sent(
    requests: &[RequestRecord],
    operations: &[Op],
    prefix: &str,
    customer: &CustomerKey,
) {
    let matching: Vec<&RequestRecord> = requests
        .iter()
        .filter(|r| operations.contains(&r.operation))
        .collect();
    assert!(!matching.is_empty(), "no {operations:?} request");
    for request in matching {
        let field =
            |name: &str| request.header(&format!("{prefix}server-side-encryption-customer-{name}"));
        assert_eq!(field("algorithm"), Some("AES256"), "{request:?}");
        assert_eq!(
            field("key"),
            Some(customer.base64.as_str()),
            "{:?}",
            request.operation
        );
        assert_eq!(
            field("key-md5"),
            Some(customer.md5.as_str()),
            "{:?}",
            request.operation
        );
    }
}

#[tokio::test]
async fn customer_keys_go_with_every_upload_download_and_copy() {
    let store = FaultStore::start_with_min_part_size(PART);
    let client = store.client_builder().build().unwrap();
    let (a, b) = (customer_key(1), customer_key(2));
    let small = data(PART / 2, 1);
    let large = data(3 * PART + 7, 2);
    let upload = |name: &'static str, bytes: &bytes::Bytes, customer: &CustomerKey| {
        client
            .upload(bucket(), key(name), UploadSource::bytes(bytes.clone()))
            .attributes(encrypted_with(customer))
            .part_size(PART)
            .single_request_limit(PART)
            .part_limits(part_limits(PART))
    };

    // Uploads: one PutObject, and a multipart upload whose every request has the key.
    store.clear_requests();
    upload("small", &small, &a).await.unwrap();
    upload("large", &large, &a).await.unwrap();
    let requests = store.requests();
    assert_key_sent(
        &requests,
        &[
            Op::PutObject,
            Op::CreateMultipartUpload,
            Op::UploadPart,
            Op::CompleteMultipartUpload,
        ],
        "x-amz-",
        &a,
    );
    for name in ["small", "large"] {
        let stored = store.object(BUCKET, name).unwrap();
        assert_eq!(
            stored.attributes.sse_customer_key_md5.as_deref(),
            Some(a.md5.as_str())
        );
    }

    // Downloads: with the key, the bytes; without it, refused by the store.
    let directory = tempfile::tempdir().unwrap();
    for (name, bytes) in [("small", &small), ("large", &large)] {
        let path = directory.path().join(name);
        store.clear_requests();
        client
            .download(bucket(), key(name), Destination::file(&path))
            .sse_customer_key(a.key.clone())
            .part_size(PART)
            .await
            .unwrap_or_else(|e| panic!("download of {name}: {e}"));
        assert_eq!(sha256(&std::fs::read(&path).unwrap()), sha256(bytes));
        assert_key_sent(
            &store.requests(),
            &[Op::GetObject, Op::HeadObject],
            "x-amz-",
            &a,
        );
        let refused = client
            .download(bucket(), key(name), Destination::file(&path))
            .await
            .unwrap_err();
        assert!(
            refused.to_string().contains("Server Side Encryption"),
            "{refused}"
        );
    }

    // Copies, single and multipart: out of SSE-C, into it, and a key rotation.
    for (source_name, bytes) in [("small", &small), ("large", &large)] {
        for (target, from, to) in [("out", Some(&a), None), ("rotated", Some(&a), Some(&b))] {
            let name = format!("{source_name}-{target}");
            let mut source = CopySource::new(bucket(), key(source_name));
            if let Some(from) = from {
                source = source.sse_customer_key(from.key.clone());
            }
            let mut copy = client
                .copy(source, bucket(), key(&name))
                .part_size(PART)
                .single_request_limit(PART)
                .part_limits(part_limits(PART));
            if let Some(to) = to {
                copy = copy.attributes(encrypted_with(to));
            }
            store.clear_requests();
            let copied = copy.await.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(copied.size, bytes.len() as u64);
            let stored = store.object(BUCKET, &name).unwrap();
            assert_eq!(sha256(&stored.data), sha256(bytes), "{name}");
            assert_eq!(
                stored.attributes.sse_customer_key_md5,
                to.map(|to| to.md5.clone()),
                "{name}"
            );
            let requests = store.requests();
            let copying = [Op::CopyObject, Op::UploadPartCopy];
            assert_key_sent(&requests, &copying, "x-amz-copy-source-", from.unwrap());
            if let Some(to) = to {
                assert_key_sent(&requests, &copying, "x-amz-", to);
            }
        }
        // Into SSE-C from a plain object: the new object is encrypted with the key.
        let plain = format!("{source_name}-plain");
        client
            .upload(bucket(), key(&plain), UploadSource::bytes(bytes.clone()))
            .await
            .unwrap();
        let name = format!("{source_name}-in");
        client
            .copy(CopySource::new(bucket(), key(&plain)), bucket(), key(&name))
            .attributes(encrypted_with(&b))
            .part_size(PART)
            .single_request_limit(PART)
            .part_limits(part_limits(PART))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let stored = store.object(BUCKET, &name).unwrap();
        assert_eq!(sha256(&stored.data), sha256(bytes));
        assert_eq!(
            stored.attributes.sse_customer_key_md5.as_deref(),
            Some(b.md5.as_str())
        );
    }
}

/// A create-only copy whose answer is lost is confirmed with a HEAD of the new object: an
/// SSE-C object answers that HEAD only with its key.
#[tokio::test]
async fn a_create_only_copy_into_sse_c_is_confirmed_with_its_key() {
    let store = FaultStore::start_with_min_part_size(PART);
    let client = store
        .client_builder()
        .retry(crate::support::retry(3))
        .build()
        .unwrap();
    let b = customer_key(2);
    client
        .upload(bucket(), key("source"), UploadSource::bytes(data(1000, 3)))
        .await
        .unwrap();
    store.set_faults(FaultPlan::first_try(
        FaultKind::ResetAfterApply,
        [Op::CopyObject],
    ));
    let copied = client
        .copy(
            CopySource::new(bucket(), key("source")),
            bucket(),
            key("new"),
        )
        .attributes(encrypted_with(&b))
        .create_only()
        .await
        .unwrap_or_else(|e| panic!("the copy was made, its confirmation failed: {e}"));
    assert_eq!(copied.size, 1000);
    let heads: Vec<RequestRecord> = store
        .requests()
        .into_iter()
        .filter(|r| r.operation == Op::HeadObject && r.path.ends_with("/new"))
        .collect();
    assert_key_sent(&heads, &[Op::HeadObject], "x-amz-", &b);
}

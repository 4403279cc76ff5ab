//! The client against both real servers, each scenario written once and run on both: the
//! embedded local-s3 (s3s-fs 0.14.1, real SigV4 verification) and moto 5.2.5 in server mode
//! (started from a venv the test makes, see `support/moto.rs`). Buckets, objects and keys
//! (unusual bytes, `//`, long keys), ranges, conditions, copies, checksums, uploads from
//! bytes, files and one-shot streams, streaming downloads, listings, presigned URLs,
//! credentials from the environment and profiles, multipart uploads, tagging, versions, and
//! the configuration operations of `servers/configurations.rs`.
//!
//! Each server has a table of its known deviations from S3 ([`LOCAL_S3_DEVIATIONS`],
//! [`MOTO_DEVIATIONS`]): scenario → the exact behaviour. A scenario listed there asserts that
//! behaviour instead of S3's, so an entry goes stale loudly when the server changes; nothing
//! is skipped. The harness also fails if a listed scenario never consulted its entry.
//!
//! The results make the operation × server matrix of `docs/compatibility.md` (between its
//! `server-matrix` markers); the test fails when the committed section differs.
//! `S3W_WRITE_COMPAT_MATRIX=1 cargo test -p s3-wire-tokio --test servers` rewrites it.

mod support;

/// The scenarios of issue 28 (configuration operations, ACLs, presigned POST, ...).
#[path = "servers/configurations.rs"]
mod configurations;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use configurations::{
    acls, bucket_cors, bucket_encryption, bucket_lifecycle_configuration, bucket_policy,
    bucket_tagging, bucket_versioning, get_object_attributes, list_objects_v1, object_lock,
    presigned_post, public_access_block, restore_object,
};
use s3_wire_tokio::credentials::MapEnv;
use s3_wire_tokio::s3_ops::ops::abort_multipart_upload::AbortMultipartUpload;
use s3_wire_tokio::s3_ops::ops::complete_multipart_upload::{
    CompleteMultipartUpload, CompleteMultipartUploadOutput,
};
use s3_wire_tokio::s3_ops::ops::copy_object::{CopyObject, Directive};
use s3_wire_tokio::s3_ops::ops::copy_source::CopySource;
use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
use s3_wire_tokio::s3_ops::ops::delete_bucket::DeleteBucket;
use s3_wire_tokio::s3_ops::ops::delete_object::DeleteObject;
use s3_wire_tokio::s3_ops::ops::delete_object_tagging::DeleteObjectTagging;
use s3_wire_tokio::s3_ops::ops::delete_objects::DeleteObjects;
use s3_wire_tokio::s3_ops::ops::get_bucket_location::GetBucketLocation;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::get_object_tagging::GetObjectTagging;
use s3_wire_tokio::s3_ops::ops::head_bucket::HeadBucket;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::list_buckets::ListBuckets;
use s3_wire_tokio::s3_ops::ops::list_multipart_uploads::ListMultipartUploads;
use s3_wire_tokio::s3_ops::ops::list_object_versions::ListObjectVersions;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::list_parts::ListParts;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::ops::put_object_tagging::PutObjectTagging;
use s3_wire_tokio::s3_ops::ops::upload_part::UploadPart;
use s3_wire_tokio::s3_ops::ops::upload_part_copy::UploadPartCopy;
use s3_wire_tokio::s3_ops::{
    BucketName, ByteRange, Checksum, ChecksumAlgorithm, ChecksumType, CompletedPart, ObjectKey,
};
use s3_wire_tokio::s3_xml::VersionEntry;
use s3_wire_tokio::{Body, Client, ClientBuilder, NotVerified, UploadSource, Verification};
use sha2::{Digest, Sha256};
use support::servers::{Kind, Server};

// ---------------------------------------------------------------------------------------------
// The deviation tables
// ---------------------------------------------------------------------------------------------

/// How local-s3 (s3s-fs 0.14.1) deviates from S3, scenario by scenario.
const LOCAL_S3_DEVIATIONS: &[(&str, &str)] = &[
    (
        "delete-non-empty-bucket",
        "DeleteBucket removes a bucket that still holds objects (204, not 409 BucketNotEmpty)",
    ),
    (
        "put-into-missing-bucket",
        "PutObject into a bucket that does not exist succeeds (not 404 NoSuchBucket)",
    ),
    (
        "key-double-slash",
        "`a//b` is the same file as `a/b`: the last write wins for both spellings, and a GET of `a/b` carries the checksum of the last write to `a/b` (stale: the client's verification refuses the body)",
    ),
    (
        "key-1024-bytes",
        "keys over ~160 bytes fail with 500 InternalError (a 150-byte key works)",
    ),
    (
        "key-that-is-a-prefix",
        "GET of a key that is a prefix of other keys (a directory) answers 500, not 404",
    ),
    (
        "range-suffix-longer-than-object",
        "`Range: bytes=-N` with N larger than the object answers 500",
    ),
    (
        "conditional-get-head",
        "GetObject and HeadObject ignore If-Match, If-None-Match, If-Modified-Since and If-Unmodified-Since (200)",
    ),
    (
        "copy-destination-if-none-match",
        "CopyObject ignores the destination's `If-None-Match: *`: the existing object is overwritten",
    ),
    (
        "copy-checksum-algorithm",
        "CopyObject ignores `x-amz-checksum-algorithm`: the copy has no such checksum",
    ),
    (
        "checksum-wrong-value",
        "a wrong `x-amz-checksum-*` on PutObject answers 400 BadDigest but the object is stored",
    ),
    (
        "listing-url-encoded-keys",
        "ListObjectsV2 echoes `EncodingType=url` but sends keys unencoded: a key with `%` fails the client's strict decoding",
    ),
    (
        "list-parts",
        "ListParts omits each part's `<ETag>`: the client's strict decoder refuses the answer",
    ),
    (
        "complete-wrong-part-etag",
        "CompleteMultipartUpload does not check part ETags: a wrong one completes the object",
    ),
    (
        "abort-multipart",
        "an aborted upload still lists (ListParts answers with no parts, not 404 NoSuchUpload)",
    ),
    (
        "list-multipart-uploads",
        "ListMultipartUploads is not implemented (501 NotImplemented)",
    ),
    (
        "multipart-full-object-checksum",
        "no checksums for multipart objects: the upload is NotVerified(StoreSentNone), HEAD returns none",
    ),
    (
        "multipart-composite-checksum",
        "no checksums for multipart objects: UploadPart, Complete and HEAD return none, and the managed download is NotVerified(StoreSentNone)",
    ),
    (
        "get-part-number",
        "GET with `partNumber` returns the whole object",
    ),
    (
        "head-part-number",
        "HEAD with `partNumber` describes the whole object",
    ),
    (
        "object-tagging",
        "no tagging: PutObjectTagging answers 501 NotImplemented",
    ),
    (
        "list-object-versions",
        "ListObjectVersions is not implemented (501 NotImplemented)",
    ),
    (
        "object-lock",
        "Object Lock is not implemented: PutObjectLockConfiguration answers 501 NotImplemented",
    ),
    (
        "bucket-versioning",
        "versioning is not implemented: PutBucketVersioning answers 501 NotImplemented",
    ),
    (
        "bucket-lifecycle-configuration",
        "lifecycle is not implemented: PutBucketLifecycleConfiguration answers 501 NotImplemented",
    ),
    (
        "bucket-policy",
        "bucket policies are not implemented: PutBucketPolicy answers 501 NotImplemented",
    ),
    (
        "bucket-cors",
        "CORS is not implemented: PutBucketCors answers 501 NotImplemented",
    ),
    (
        "bucket-encryption",
        "default encryption is not implemented: PutBucketEncryption answers 501 NotImplemented",
    ),
    (
        "bucket-tagging",
        "bucket tagging is not implemented: PutBucketTagging answers 501 NotImplemented",
    ),
    (
        "public-access-block",
        "public access blocks are not implemented: PutPublicAccessBlock answers 501 NotImplemented",
    ),
    (
        "acls",
        "ACLs are not implemented: a canned ACL on PutObject is accepted, GetObjectAcl answers 501 NotImplemented",
    ),
    (
        "get-object-attributes",
        "GetObjectAttributes is not implemented (501 NotImplemented)",
    ),
    (
        "restore-object",
        "no archive storage classes: PutObject with `x-amz-storage-class: GLACIER` answers 400 InvalidStorageClass; RestoreObject answers 501 NotImplemented",
    ),
];

/// How moto 5.2.5 (server mode) deviates from S3, scenario by scenario.
const MOTO_DEVIATIONS: &[(&str, &str)] = &[
    (
        "copy-source-if-match",
        "CopyObject ignores a wrong `x-amz-copy-source-if-match`: the copy is made",
    ),
    (
        "copy-destination-if-none-match",
        "CopyObject ignores the destination's `If-None-Match: *`: the existing object is overwritten",
    ),
    (
        "checksum-wrong-value",
        "checksums are not verified: a wrong `x-amz-checksum-crc32` is accepted (200) and the object stored",
    ),
    (
        "presigned-urls",
        "signatures are not verified: a presigned URL with a wrong signature works",
    ),
    (
        "credentials",
        "signatures are not verified: a request signed with a wrong secret key succeeds",
    ),
    (
        "multipart-full-object-checksum",
        "CompleteMultipartUpload returns no checksum, so the managed upload is NotVerified(StoreSentNone); HEAD and the download see the full-object CRC32",
    ),
    (
        "multipart-composite-checksum",
        "CompleteMultipartUpload returns no checksum; HEAD in checksum mode returns the composite value without its `-N` suffix and without `x-amz-checksum-type` (UploadPart and GET are right); HEAD with `partNumber` answers with the part's own ETag, so the managed download's part probe (pinned by `If-Match`) gets 412: it reads by ranges, NotVerified(CompositeNotByParts)",
    ),
    (
        "get-part-number",
        "GET with `partNumber` returns the whole object (HEAD with `partNumber` is right)",
    ),
    (
        "object-lock",
        "GetObjectRetention answers with the object itself (its bytes, the retention in `x-amz-object-lock-*` headers), not a `<Retention>` document: the client's strict decoder refuses it; CreateMultipartUpload ignores the Object Lock headers, so a multipart object gets no retention or legal hold (GetObjectLegalHold answers a `<LegalHold>` without `<Status>`)",
    ),
    (
        "bucket-lifecycle-configuration",
        "a rule's `ObjectSizeGreaterThan` (inside `<And>`) and `NewerNoncurrentVersions` are dropped; the rest comes back as sent",
    ),
    (
        "get-object-attributes",
        "no `ObjectParts`: the parts of a multipart object are not listed (ETag, checksum, size and storage class are)",
    ),
    (
        "acls",
        "PutObjectAcl with an `<AccessControlPolicy>` body answers 200 and resets the ACL to the owner's FULL_CONTROL alone, whatever the body grants (canned ACLs and `x-amz-grant-*` headers are applied)",
    ),
    (
        "list-objects-v1",
        "ListObjects (v1) with a delimiter lists every common prefix on every page and counts only keys against `max-keys` (boto3's paginator sees them twice too)",
    ),
    (
        "presigned-post",
        "POST policies are not checked: forms over the size range, of another content type or key prefix, expired or with a wrong signature are stored",
    ),
];

fn deviations(kind: Kind) -> &'static [(&'static str, &'static str)] {
    match kind {
        Kind::LocalS3 => LOCAL_S3_DEVIATIONS,
        Kind::Moto => MOTO_DEVIATIONS,
    }
}

// ---------------------------------------------------------------------------------------------
// The harness
// ---------------------------------------------------------------------------------------------

/// What a scenario gets: the server, a client, its own bucket, and its deviation entry.
struct Ctx {
    server: Arc<Server>,
    client: Client,
    bucket: String,
    deviation: Option<&'static str>,
    consulted: Arc<AtomicBool>,
}

impl Ctx {
    /// Whether this server is listed as deviating in this scenario (the scenario then
    /// asserts the listed behaviour).
    fn deviates(&self) -> bool {
        self.consulted.store(true, Ordering::SeqCst);
        self.deviation.is_some()
    }

    fn kind(&self) -> Kind {
        self.server.kind
    }

    fn bucket(&self) -> BucketName {
        bucket_name(&self.bucket)
    }

    async fn create_bucket(&self) {
        self.client
            .send(CreateBucket::new(self.bucket()))
            .await
            .unwrap_or_else(|err| panic!("create bucket {}: {err}", self.bucket));
    }

    async fn put(&self, key: &str, data: impl Into<Body>) -> s3_wire_tokio::s3_xml::ETag {
        self.client
            .put_object(PutObject::new(self.bucket(), object_key(key)), data)
            .await
            .unwrap_or_else(|err| panic!("put {key:?}: {err}"))
            .etag
            .unwrap_or_else(|| panic!("put {key:?}: no ETag"))
    }

    async fn get(&self, key: &str) -> Bytes {
        self.get_with(GetObject::new(self.bucket(), object_key(key)))
            .await
            .unwrap_or_else(|err| panic!("get {key:?}: {err}"))
    }

    async fn get_with(&self, op: GetObject) -> Result<Bytes, s3_wire_tokio::Error> {
        self.client.get_object(op).await?.body.collect().await
    }

    async fn head(
        &self,
        key: &str,
    ) -> Result<s3_wire_tokio::s3_ops::ops::head_object::ObjectHead, s3_wire_tokio::Error> {
        self.client
            .send(HeadObject::new(self.bucket(), object_key(key)))
            .await
    }

    /// CompleteMultipartUpload of `key`'s upload `id` from `parts`.
    async fn complete(
        &self,
        key: &str,
        id: &str,
        parts: Vec<CompletedPart>,
    ) -> Result<CompleteMultipartUploadOutput, s3_wire_tokio::Error> {
        self.client
            .send(CompleteMultipartUpload::new(
                self.bucket(),
                object_key(key),
                id,
                parts,
            ))
            .await
    }
}

type Run = fn(Ctx) -> Pin<Box<dyn Future<Output = ()> + Send>>;

struct Scenario {
    id: &'static str,
    operations: &'static str,
    run: Run,
}

macro_rules! scenarios {
    ($($id:literal, $operations:literal => $function:ident;)*) => {
        const SCENARIOS: &[Scenario] = &[
            $(Scenario { id: $id, operations: $operations, run: |ctx| Box::pin($function(ctx)) },)*
        ];
    };
}

scenarios! {
    "bucket-lifecycle", "CreateBucket, HeadBucket, ListBuckets, GetBucketLocation, DeleteBucket" => bucket_lifecycle;
    "delete-non-empty-bucket", "DeleteBucket" => delete_non_empty_bucket;
    "put-into-missing-bucket", "PutObject" => put_into_missing_bucket;
    "object-round-trip", "PutObject, HeadObject, GetObject, DeleteObject (content headers, metadata)" => object_round_trip;
    "unusual-keys", "PutObject, GetObject, HeadObject, ListObjectsV2 (spaces, `+`, `%`, unicode, reserved characters)" => unusual_keys;
    "key-double-slash", "PutObject, GetObject (`a//b` beside `a/b`)" => key_double_slash;
    "key-1024-bytes", "PutObject, GetObject (a 1024-byte key)" => key_1024_bytes;
    "key-that-is-a-prefix", "GetObject (a key that is a prefix of others)" => key_that_is_a_prefix;
    "empty-object", "PutObject, HeadObject, GetObject (0 bytes)" => empty_object;
    "ranged-get", "GetObject with Range (416 past the end)" => ranged_get;
    "range-suffix-longer-than-object", "GetObject with `Range: bytes=-N`, N > size" => range_suffix_longer_than_object;
    "conditional-put", "PutObject with If-None-Match: *, If-Match" => conditional_put;
    "conditional-get-head", "GetObject, HeadObject with If-Match, If-None-Match, If-(Un)Modified-Since" => conditional_get_head;
    "copy-object", "CopyObject (metadata replaced, source If-None-Match / If-Match)" => copy_object;
    "copy-source-if-match", "CopyObject with a wrong x-amz-copy-source-if-match" => copy_source_if_match;
    "copy-destination-if-none-match", "CopyObject with If-None-Match: * on an existing destination" => copy_destination_if_none_match;
    "copy-checksum-algorithm", "CopyObject with x-amz-checksum-algorithm" => copy_checksum_algorithm;
    "delete-objects", "DeleteObjects" => delete_objects;
    "checksums-each-algorithm", "PutObject, HeadObject, GetObject: CRC32, CRC32C, CRC64NVME, SHA-1, SHA-256" => checksums_each_algorithm;
    "checksum-precomputed", "PutObject with a precomputed x-amz-checksum-crc32, managed single-request uploads (bytes, file): the checksum on HEAD" => checksum_precomputed;
    "checksum-wrong-value", "PutObject with a wrong x-amz-checksum-crc32" => checksum_wrong_value;
    "streaming-upload", "PutObject, aws-chunked one-shot stream: signed chunks, with a CRC32 (the default) or CRC32C trailer" => streaming_upload;
    "file-upload-and-download", "PutObject from a file (range too), GetObject to a file" => file_upload_and_download;
    "streaming-get", "GetObject streamed, as chunks and AsyncRead" => streaming_get;
    "paginated-listing", "ListObjectsV2 (pages by `next_page` and by the paginator, delimiter)" => paginated_listing;
    "listing-url-encoded-keys", "ListObjectsV2 with encoding-type=url, keys with `%`, `+` and non-ASCII; the paginator's fallback without it" => listing_url_encoded_keys;
    "presigned-urls", "presigned PutObject, GetObject with a plain HTTP client" => presigned_urls;
    "credentials", "CreateBucket, HeadBucket from clients configured by the AWS variables and by a profile; signed with a wrong secret key (in code, in a profile)" => credentials;
    "multipart-upload", "CreateMultipartUpload, UploadPart (bytes, file range, stream), CompleteMultipartUpload" => multipart_upload;
    "list-parts", "ListParts" => list_parts;
    "complete-wrong-part-etag", "CompleteMultipartUpload with a wrong part ETag" => complete_wrong_part_etag;
    "abort-multipart", "AbortMultipartUpload" => abort_multipart;
    "list-multipart-uploads", "ListMultipartUploads" => list_multipart_uploads;
    "multipart-full-object-checksum", "managed upload and download: full-object CRC32" => multipart_full_object_checksum;
    "multipart-composite-checksum", "multipart CRC32C composite: UploadPart, Complete, HEAD, GET, managed download" => multipart_composite_checksum;
    "get-part-number", "GetObject with partNumber" => get_part_number;
    "head-part-number", "HeadObject with partNumber" => head_part_number;
    "upload-part-copy", "UploadPartCopy" => upload_part_copy;
    "managed-multipart-copy", "managed copy above its single-request limit: CreateMultipartUpload, UploadPartCopy, CompleteMultipartUpload (bytes and description kept)" => managed_multipart_copy;
    "object-tagging", "PutObjectTagging, GetObjectTagging, DeleteObjectTagging, x-amz-tagging" => object_tagging;
    "list-object-versions", "ListObjectVersions (unversioned bucket)" => list_object_versions;
    "object-lock", "PutObjectLockConfiguration, GetObjectLockConfiguration; PutObject and a managed multipart upload with a retention and a legal hold; Get/PutObjectLegalHold, Get/PutObjectRetention; DeleteObject with and without the governance bypass" => object_lock;
    "bucket-versioning", "PutBucketVersioning, GetBucketVersioning (Enabled, Suspended), MFA delete refused" => bucket_versioning;
    "bucket-lifecycle-configuration", "Put/Get/DeleteBucketLifecycle(Configuration): filters by prefix, tag and size, expiration, transitions, noncurrent versions, aborting uploads" => bucket_lifecycle_configuration;
    "bucket-policy", "Put/Get/DeleteBucketPolicy (the JSON verbatim)" => bucket_policy;
    "bucket-cors", "Put/Get/DeleteBucketCors" => bucket_cors;
    "bucket-encryption", "Put/Get/DeleteBucketEncryption (SSE-KMS, bucket key)" => bucket_encryption;
    "bucket-tagging", "Put/Get/DeleteBucketTagging" => bucket_tagging;
    "public-access-block", "Put/Get/DeletePublicAccessBlock" => public_access_block;
    "acls", "PutObject with a canned ACL; Put/GetObjectAcl (canned, x-amz-grant-*, a policy); Put/GetBucketAcl" => acls;
    "get-object-attributes", "GetObjectAttributes of an object and of a multipart object (parts and their checksums, paged)" => get_object_attributes;
    "restore-object", "GetObject of a GLACIER object (InvalidObjectState), RestoreObject, HeadObject's x-amz-restore" => restore_object;
    "list-objects-v1", "ListObjects (v1) paged by marker, with a delimiter; the same keys as ListObjectsV2" => list_objects_v1;
    "presigned-post", "presigned POST: a multipart/form-data upload with the fields; forms breaking the size range, content type, key prefix, expiry or signature" => presigned_post;
}

enum Outcome {
    Pass,
    Deviates(&'static str),
    Fails(String),
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scenarios_on_both_servers() {
    // The tables name only scenarios that exist.
    for kind in Kind::ALL {
        for (id, _) in deviations(kind) {
            assert!(
                SCENARIOS.iter().any(|s| s.id == *id),
                "{}: deviation for an unknown scenario {id:?}",
                kind.name()
            );
        }
    }
    let (local, moto) = tokio::join!(run_all(Kind::LocalS3), run_all(Kind::Moto));
    let columns = [local, moto];

    let mut failures = Vec::new();
    for (kind, outcomes) in Kind::ALL.iter().zip(&columns) {
        for (scenario, outcome) in SCENARIOS.iter().zip(outcomes) {
            if let Outcome::Fails(message) = outcome {
                failures.push(format!("{} on {}: {message}", scenario.id, kind.name()));
            }
        }
    }
    let matrix = render_matrix(&columns);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/compatibility.md");
    let document = std::fs::read_to_string(&path).expect("docs/compatibility.md");
    let (before, committed, after) = split_matrix(&document);
    if std::env::var_os("S3W_WRITE_COMPAT_MATRIX").is_some() {
        std::fs::write(&path, format!("{before}{matrix}{after}")).expect("write the matrix");
    }
    assert!(
        failures.is_empty(),
        "{} scenario(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        std::env::var_os("S3W_WRITE_COMPAT_MATRIX").is_some() || committed == matrix,
        "the server matrix in docs/compatibility.md is stale: rerun with \
         S3W_WRITE_COMPAT_MATRIX=1. It should read:\n{matrix}"
    );
}

async fn run_all(kind: Kind) -> Vec<Outcome> {
    let server = Arc::new(Server::start(kind).await);
    let limit = Arc::new(tokio::sync::Semaphore::new(3));
    let mut tasks = Vec::new();
    for (index, scenario) in SCENARIOS.iter().enumerate() {
        let deviation = deviations(kind)
            .iter()
            .find(|(id, _)| *id == scenario.id)
            .map(|(_, text)| *text);
        let consulted = Arc::new(AtomicBool::new(false));
        let ctx = Ctx {
            client: server.client(),
            server: server.clone(),
            bucket: format!("s{index:02}-{}", scenario.id)
                .chars()
                .take(63)
                .collect(),
            deviation,
            consulted: consulted.clone(),
        };
        let limit = limit.clone();
        let run = scenario.run;
        let task = tokio::spawn(async move {
            let _permit = limit.acquire_owned().await.expect("semaphore");
            tokio::time::timeout(Duration::from_secs(180), run(ctx))
                .await
                .map_err(|_| "timed out after 180 s".to_owned())
        });
        tasks.push((task, deviation, consulted));
    }
    let mut outcomes = Vec::new();
    for (task, deviation, consulted) in tasks {
        let outcome = match task.await {
            Ok(Ok(())) => match deviation {
                Some(text) if consulted.load(Ordering::SeqCst) => Outcome::Deviates(text),
                Some(_) => Outcome::Fails(
                    "listed as a deviation, but the scenario never consulted the table".into(),
                ),
                None => Outcome::Pass,
            },
            Ok(Err(timeout)) => Outcome::Fails(timeout),
            Err(err) => Outcome::Fails(match err.try_into_panic() {
                Ok(payload) => payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "panicked".to_owned()),
                Err(err) => err.to_string(),
            }),
        };
        outcomes.push(outcome);
    }
    if outcomes.iter().any(|o| matches!(o, Outcome::Fails(_))) {
        let log = server.log_text();
        if !log.is_empty() {
            eprintln!("--- {} log ---\n{log}", kind.name());
        }
    }
    outcomes
}

const MATRIX_BEGIN: &str = "<!-- server-matrix: generated by `S3W_WRITE_COMPAT_MATRIX=1 cargo test -p s3-wire-tokio --test servers`; do not edit -->\n";
const MATRIX_END: &str = "<!-- end of server-matrix -->\n";

fn split_matrix(document: &str) -> (&str, &str, &str) {
    let start = document
        .find(MATRIX_BEGIN)
        .expect("docs/compatibility.md has the server-matrix begin marker")
        + MATRIX_BEGIN.len();
    let end = start
        + document[start..]
            .find(MATRIX_END)
            .expect("docs/compatibility.md has the server-matrix end marker");
    (&document[..start], &document[start..end], &document[end..])
}

fn render_matrix(columns: &[Vec<Outcome>; 2]) -> String {
    let mut out = format!(
        "| scenario | operations | {} | {} |\n|---|---|---|---|\n",
        Kind::LocalS3.title(),
        Kind::Moto.title()
    );
    for (index, scenario) in SCENARIOS.iter().enumerate() {
        let cell = |outcome: &Outcome| match outcome {
            Outcome::Pass => "as S3".to_owned(),
            Outcome::Deviates(text) => format!("**deviates:** {}", text.replace('|', "\\|")),
            Outcome::Fails(_) => "**fails** (see the test's output)".to_owned(),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            scenario.id,
            scenario.operations.replace('|', "\\|"),
            cell(&columns[0][index]),
            cell(&columns[1][index])
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn bucket_name(name: &str) -> BucketName {
    BucketName::new(name).expect("bucket name")
}

fn object_key(name: &str) -> ObjectKey {
    ObjectKey::new(name).unwrap_or_else(|err| panic!("key {name:?}: {err}"))
}

fn pattern(len: usize, seed: u64) -> Bytes {
    support::data(len as u64, seed)
}

fn status_and_code(err: &s3_wire_tokio::Error) -> Option<(u16, &str)> {
    err.service_error()
        .map(|e| (e.status.as_u16(), e.code.as_str()))
}

fn status(err: &s3_wire_tokio::Error) -> Option<u16> {
    err.service_error().map(|e| e.status.as_u16())
}

const MIB: usize = 1024 * 1024;

/// Creates a multipart upload of `parts` 5 MiB parts (the last one `tail` bytes), with
/// `algorithm` on every part; returns the upload id, the parts and the whole data.
async fn upload_parts(
    ctx: &Ctx,
    key: &str,
    sizes: &[usize],
    algorithm: Option<ChecksumAlgorithm>,
) -> (String, Vec<CompletedPart>, Bytes) {
    let mut create = CreateMultipartUpload::new(ctx.bucket(), object_key(key));
    if let Some(algorithm) = algorithm {
        create = create.checksum_algorithm(algorithm);
    }
    let created = ctx.client.send(create).await.expect("create upload");
    let total: usize = sizes.iter().sum();
    let data = pattern(total, 77);
    let mut parts = Vec::new();
    let mut offset = 0;
    for (index, size) in sizes.iter().enumerate() {
        let number = index as u32 + 1;
        let mut op = UploadPart::new(ctx.bucket(), object_key(key), &created.upload_id, number);
        if let Some(algorithm) = algorithm {
            op = op.checksum_algorithm(algorithm);
        }
        let out = ctx
            .client
            .upload_part(op, data.slice(offset..offset + size))
            .await
            .unwrap_or_else(|err| panic!("upload part {number}: {err}"));
        let mut checksums = s3_wire_tokio::s3_xml::Checksums::default();
        for (algorithm, value) in &out.checksums.values {
            let slot = match algorithm {
                ChecksumAlgorithm::Crc32 => &mut checksums.crc32,
                ChecksumAlgorithm::Crc32c => &mut checksums.crc32c,
                ChecksumAlgorithm::Crc64Nvme => &mut checksums.crc64nvme,
                ChecksumAlgorithm::Sha1 => &mut checksums.sha1,
                ChecksumAlgorithm::Sha256 => &mut checksums.sha256,
            };
            *slot = Some(value.clone());
        }
        parts.push(
            CompletedPart::new(number, out.etag.expect("part ETag")).with_checksums(checksums),
        );
        offset += size;
    }
    (created.upload_id, parts, data)
}

// ---------------------------------------------------------------------------------------------
// Buckets
// ---------------------------------------------------------------------------------------------

async fn bucket_lifecycle(ctx: Ctx) {
    let client = &ctx.client;
    let missing = client
        .send(HeadBucket::new(ctx.bucket()))
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing:?}");
    ctx.create_bucket().await;
    // A second bucket, which stays: the listing after the delete still has it.
    let other = format!("{}-2", ctx.bucket);
    client
        .send(CreateBucket::new(bucket_name(&other)))
        .await
        .unwrap();
    client.send(HeadBucket::new(ctx.bucket())).await.unwrap();
    // The server is shared with the other scenarios: only these two names are known.
    let listed_names = || async {
        let listed = client.send(ListBuckets::new()).await.unwrap();
        listed
            .result
            .buckets
            .into_iter()
            .map(|b| b.name)
            .filter(|name| *name == ctx.bucket || *name == other)
            .collect::<Vec<_>>()
    };
    assert_eq!(listed_names().await, [ctx.bucket.clone(), other.clone()]);
    let location = client
        .send(GetBucketLocation::new(ctx.bucket()))
        .await
        .unwrap();
    assert!(
        ["", "us-east-1"].contains(&location.result.location_constraint.as_str()),
        "{:?}",
        location.result.location_constraint
    );
    client.send(DeleteBucket::new(ctx.bucket())).await.unwrap();
    let gone = client
        .send(HeadBucket::new(ctx.bucket()))
        .await
        .unwrap_err();
    assert!(gone.is_not_found(), "{gone:?}");
    assert_eq!(listed_names().await, [other]);
}

async fn delete_non_empty_bucket(ctx: Ctx) {
    ctx.create_bucket().await;
    ctx.put("still-here", Bytes::from_static(b"x")).await;
    let result = ctx.client.send(DeleteBucket::new(ctx.bucket())).await;
    if ctx.deviates() {
        result.expect("local-s3 deletes the non-empty bucket");
        let gone = ctx
            .client
            .send(HeadBucket::new(ctx.bucket()))
            .await
            .unwrap_err();
        assert!(gone.is_not_found(), "{gone:?}");
    } else {
        let err = result.unwrap_err();
        assert_eq!(
            status_and_code(&err),
            Some((409, "BucketNotEmpty")),
            "{err:?}"
        );
        assert_eq!(ctx.get("still-here").await, "x");
    }
}

async fn put_into_missing_bucket(ctx: Ctx) {
    let result = ctx
        .client
        .put_object(
            PutObject::new(ctx.bucket(), object_key("orphan")),
            Bytes::from_static(b"x"),
        )
        .await;
    if ctx.deviates() {
        result.expect("local-s3 stores into a missing bucket");
    } else {
        let err = result.unwrap_err();
        assert_eq!(
            status_and_code(&err),
            Some((404, "NoSuchBucket")),
            "{err:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Objects and keys
// ---------------------------------------------------------------------------------------------

async fn object_round_trip(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(10_000, 1);
    let key = "docs/report.csv";
    let put = ctx
        .client
        .put_object(
            PutObject::new(ctx.bucket(), object_key(key))
                .content_type("text/csv")
                .content_disposition("attachment; filename=\"report.csv\"")
                .cache_control("max-age=60")
                .content_language("en")
                .metadata("owner", "team-a")
                .metadata("project", "s3-wire"),
            data.clone(),
        )
        .await
        .unwrap();
    let etag = put.etag.expect("ETag");
    let head = ctx.head(key).await.unwrap();
    assert_eq!(head.content_length, Some(10_000));
    assert_eq!(head.content_type.as_deref(), Some("text/csv"));
    assert_eq!(
        head.content_disposition.as_deref(),
        Some("attachment; filename=\"report.csv\"")
    );
    assert_eq!(head.cache_control.as_deref(), Some("max-age=60"));
    assert_eq!(head.content_language.as_deref(), Some("en"));
    assert_eq!(
        head.metadata.get("owner").map(String::as_str),
        Some("team-a")
    );
    assert_eq!(
        head.metadata.get("project").map(String::as_str),
        Some("s3-wire")
    );
    assert_eq!(head.etag.as_ref(), Some(&etag));
    // A single-part ETag is the MD5 of the bytes.
    assert_eq!(
        etag.as_str(),
        format!("\"{}\"", hex(&md5::Md5::digest(&data)))
    );
    assert_eq!(ctx.get(key).await, data);

    ctx.client
        .send(DeleteObject::new(ctx.bucket(), object_key(key)))
        .await
        .unwrap();
    let err = ctx
        .get_with(GetObject::new(ctx.bucket(), object_key(key)))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
    assert_eq!(status_and_code(&err), Some((404, "NoSuchKey")), "{err:?}");
    let err = ctx.head(key).await.unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn unusual_keys(ctx: Ctx) {
    ctx.create_bucket().await;
    let keys = [
        "with space.txt",
        "plus+sign",
        "percent%20not-an-escape%",
        "unicode/日本語/ümlaut-é",
        "emoji-🚀",
        "reserved !$&'()*,;=:@?#[]",
        "tilde~caret^back`tick{brace}|pipe\"quote<angle>",
        "trailing-dot.",
    ];
    for (index, key) in keys.iter().enumerate() {
        let data = format!("object {index}: {key}");
        ctx.put(key, Bytes::from(data.clone())).await;
        assert_eq!(ctx.get(key).await, data.as_bytes(), "{key:?}");
        let head = ctx
            .head(key)
            .await
            .unwrap_or_else(|err| panic!("head {key:?}: {err}"));
        assert_eq!(head.content_length, Some(data.len() as u64), "{key:?}");
    }
    // Listed back as raw keys (`url_encoding(false)`: the encoded listing has its own
    // scenario).
    let listed = ctx
        .client
        .send(ListObjectsV2::new(ctx.bucket()).url_encoding(false))
        .await
        .unwrap();
    let mut listed: Vec<&str> = listed
        .result
        .contents
        .iter()
        .map(|o| o.key.as_str())
        .collect();
    listed.sort_unstable();
    let mut expected = keys.to_vec();
    expected.sort_unstable();
    assert_eq!(listed, expected);
    // A prefix with `+` reaches the server as `+`, not as a space.
    let listed = ctx
        .client
        .send(
            ListObjectsV2::new(ctx.bucket())
                .prefix("plus+")
                .url_encoding(false),
        )
        .await
        .unwrap();
    assert_eq!(listed.result.contents.len(), 1);
    assert_eq!(listed.result.contents[0].key, "plus+sign");
}

async fn key_double_slash(ctx: Ctx) {
    ctx.create_bucket().await;
    // Alone, a key with `//` round-trips on every server.
    ctx.put("c//d", Bytes::from_static(b"alone")).await;
    assert_eq!(ctx.get("c//d").await, "alone");
    assert_eq!(ctx.head("c//d").await.unwrap().content_length, Some(5));
    ctx.put("a/b", Bytes::from_static(b"single")).await;
    ctx.put("a//b", Bytes::from_static(b"double")).await;
    if ctx.deviates() {
        // A part of the object is not checked against its checksum: it shows the bytes.
        let raw = |key| {
            GetObject::new(ctx.bucket(), object_key(key)).range(ByteRange::new(0, 4).unwrap())
        };
        assert_eq!(ctx.get_with(raw("a/b")).await.unwrap(), "doubl", "one file");
        assert_eq!(ctx.get_with(raw("a//b")).await.unwrap(), "doubl");
        let err = ctx
            .get_with(GetObject::new(ctx.bucket(), object_key("a/b")))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("checksum mismatch"), "{err:?}");
    } else {
        assert_eq!(ctx.get("a/b").await, "single");
        assert_eq!(ctx.get("a//b").await, "double");
        let listed = ctx
            .client
            .send(ListObjectsV2::new(ctx.bucket()).prefix("a/"))
            .await
            .unwrap();
        let keys: Vec<&str> = listed
            .result
            .contents
            .iter()
            .map(|o| o.key.as_str())
            .collect();
        assert_eq!(keys, ["a//b", "a/b"]);
    }
}

async fn key_1024_bytes(ctx: Ctx) {
    ctx.create_bucket().await;
    let long = format!("long/{}", "k".repeat(1019));
    assert_eq!(long.len(), 1024);
    let result = ctx
        .client
        .put_object(
            PutObject::new(ctx.bucket(), object_key(&long)),
            Bytes::from_static(b"long"),
        )
        .await;
    if ctx.deviates() {
        let err = result.unwrap_err();
        assert_eq!(status(&err), Some(500), "{err:?}");
        let short = format!("long/{}", "k".repeat(145));
        ctx.put(&short, Bytes::from_static(b"150")).await;
        assert_eq!(ctx.get(&short).await, "150");
        assert_eq!(ctx.head(&short).await.unwrap().content_length, Some(3));
    } else {
        result.unwrap();
        assert_eq!(ctx.get(&long).await, "long");
        let listed = ctx
            .client
            .send(ListObjectsV2::new(ctx.bucket()).prefix("long/"))
            .await
            .unwrap();
        assert_eq!(listed.result.contents.len(), 1);
        assert_eq!(listed.result.contents[0].key, long);
    }
}

async fn key_that_is_a_prefix(ctx: Ctx) {
    ctx.create_bucket().await;
    ctx.put("dir/inside", Bytes::from_static(b"x")).await;
    let err = ctx
        .get_with(GetObject::new(ctx.bucket(), object_key("dir")))
        .await
        .unwrap_err();
    if ctx.deviates() {
        assert_eq!(status(&err), Some(500), "{err:?}");
    } else {
        assert_eq!(status_and_code(&err), Some((404, "NoSuchKey")), "{err:?}");
    }
}

async fn empty_object(ctx: Ctx) {
    ctx.create_bucket().await;
    ctx.put("nothing", Bytes::new()).await;
    let head = ctx.head("nothing").await.unwrap();
    assert_eq!(head.content_length, Some(0));
    let response = ctx
        .client
        .get_object(GetObject::new(ctx.bucket(), object_key("nothing")))
        .await
        .unwrap();
    assert_eq!(response.body.content_length(), Some(0));
    assert!(response.body.collect().await.unwrap().is_empty());
    assert_eq!(
        head.etag.unwrap().as_str(),
        "\"d41d8cd98f00b204e9800998ecf8427e\""
    );
}

async fn ranged_get(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(1000, 2);
    ctx.put("obj", data.clone()).await;
    let get = |range| GetObject::new(ctx.bucket(), object_key("obj")).range(range);
    let response = ctx
        .client
        .get_object(get(ByteRange::new(100, 199).unwrap()))
        .await
        .unwrap();
    let content_range = response.output.head.content_range.expect("Content-Range");
    assert_eq!(
        (content_range.first, content_range.last, content_range.total),
        (100, 199, Some(1000))
    );
    assert_eq!(response.body.collect().await.unwrap(), data[100..200]);
    for (range, expected) in [
        (ByteRange::From(990), &data[990..]),
        (ByteRange::Suffix(7), &data[993..]),
        (ByteRange::new(0, 0).unwrap(), &data[..1]),
        (ByteRange::new(900, 5000).unwrap(), &data[900..]),
    ] {
        assert_eq!(
            ctx.get_with(get(range)).await.unwrap(),
            expected,
            "{range:?}"
        );
    }
    let err = ctx.get_with(get(ByteRange::From(1000))).await.unwrap_err();
    assert_eq!(
        status_and_code(&err),
        Some((416, "InvalidRange")),
        "{err:?}"
    );
}

async fn range_suffix_longer_than_object(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(1000, 3);
    ctx.put("obj", data.clone()).await;
    let result = ctx
        .get_with(GetObject::new(ctx.bucket(), object_key("obj")).range(ByteRange::Suffix(5000)))
        .await;
    if ctx.deviates() {
        let err = result.unwrap_err();
        assert_eq!(status(&err), Some(500), "{err:?}");
    } else {
        assert_eq!(result.unwrap(), data, "the whole object");
    }
}

async fn conditional_put(ctx: Ctx) {
    ctx.create_bucket().await;
    let put = || PutObject::new(ctx.bucket(), object_key("obj"));
    let first = ctx
        .client
        .put_object(
            put().if_none_match_any(),
            Bytes::from_static(b"version one"),
        )
        .await
        .unwrap();
    let etag = first.etag.unwrap();
    let err = ctx
        .client
        .put_object(put().if_none_match_any(), Bytes::from_static(b"clobber"))
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err:?}");
    assert_eq!(status(&err), Some(412));
    assert_eq!(err.attempts(), 1, "a failed precondition is final");
    let err = ctx
        .client
        .put_object(
            put().if_match("\"00000000000000000000000000000000\""),
            Bytes::from_static(b"clobber"),
        )
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err:?}");
    ctx.client
        .put_object(
            put().if_match(etag.as_str()),
            Bytes::from_static(b"version two"),
        )
        .await
        .unwrap();
    assert_eq!(ctx.get("obj").await, "version two");
}

async fn conditional_get_head(ctx: Ctx) {
    ctx.create_bucket().await;
    let etag = ctx.put("obj", Bytes::from_static(b"conditional")).await;
    let other = "\"00000000000000000000000000000000\"";
    let past = SystemTime::now() - Duration::from_secs(86_400);
    let future = SystemTime::now() + Duration::from_secs(86_400);
    let get = || GetObject::new(ctx.bucket(), object_key("obj"));
    let head = || HeadObject::new(ctx.bucket(), object_key("obj"));
    let gets = [
        ("GET If-Match other", get().if_match(other), 412),
        (
            "GET If-None-Match etag",
            get().if_none_match(etag.as_str()),
            304,
        ),
        (
            "GET If-Modified-Since future",
            get().if_modified_since(future),
            304,
        ),
        (
            "GET If-Unmodified-Since past",
            get().if_unmodified_since(past),
            412,
        ),
    ];
    let heads = [
        ("HEAD If-Match other", head().if_match(other), 412),
        (
            "HEAD If-None-Match etag",
            head().if_none_match(etag.as_str()),
            304,
        ),
        (
            "HEAD If-Modified-Since future",
            head().if_modified_since(future),
            304,
        ),
        (
            "HEAD If-Unmodified-Since past",
            head().if_unmodified_since(past),
            412,
        ),
    ];
    let deviates = ctx.deviates();
    for (what, op, expected) in gets {
        let result = ctx.get_with(op).await;
        if deviates {
            assert_eq!(
                result.unwrap_or_else(|err| panic!("{what}: {err}")),
                "conditional"
            );
        } else {
            let err = result.unwrap_err();
            assert_eq!(status(&err), Some(expected), "{what}: {err:?}");
        }
    }
    for (what, op, expected) in heads {
        let result = ctx.client.send(op).await;
        if deviates {
            result.unwrap_or_else(|err| panic!("{what}: {err}"));
        } else {
            let err = result.unwrap_err();
            assert_eq!(status(&err), Some(expected), "{what}: {err:?}");
        }
    }
    // The conditions that hold.
    assert_eq!(
        ctx.get_with(get().if_match(etag.as_str())).await.unwrap(),
        "conditional"
    );
    ctx.client
        .send(head().if_none_match(other).if_unmodified_since(future))
        .await
        .unwrap();
}

async fn copy_object(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(70_000, 4);
    let etag = ctx.put("source", data.clone()).await;
    let source = || CopySource::new(ctx.bucket(), object_key("source"));
    let copied = ctx
        .client
        .send(
            CopyObject::new(source(), ctx.bucket(), object_key("dir/copy of source"))
                .metadata_directive(Directive::Replace)
                .content_type("application/x-copy")
                .metadata("copied", "yes"),
        )
        .await
        .unwrap();
    assert_eq!(
        copied.result.etag.as_ref(),
        Some(&etag),
        "same bytes, same MD5"
    );
    assert_eq!(ctx.get("dir/copy of source").await, data);
    let head = ctx.head("dir/copy of source").await.unwrap();
    assert_eq!(head.content_type.as_deref(), Some("application/x-copy"));
    assert_eq!(head.metadata.get("copied").map(String::as_str), Some("yes"));
    // Source conditions.
    let copy = |source: CopySource| CopyObject::new(source, ctx.bucket(), object_key("copy2"));
    let err = ctx
        .client
        .send(copy(source().if_none_match(etag.as_str())))
        .await
        .unwrap_err();
    assert!(err.is_precondition_failed(), "{err:?}");
    ctx.client
        .send(copy(source().if_match(etag.as_str())))
        .await
        .unwrap();
    assert_eq!(ctx.get("copy2").await, data);
}

async fn copy_source_if_match(ctx: Ctx) {
    ctx.create_bucket().await;
    ctx.put("source", Bytes::from_static(b"source")).await;
    let result = ctx
        .client
        .send(CopyObject::new(
            CopySource::new(ctx.bucket(), object_key("source"))
                .if_match("\"00000000000000000000000000000000\""),
            ctx.bucket(),
            object_key("copy"),
        ))
        .await;
    if ctx.deviates() {
        result.expect("moto copies despite the wrong source ETag");
        assert_eq!(ctx.get("copy").await, "source");
    } else {
        let err = result.unwrap_err();
        assert!(err.is_precondition_failed(), "{err:?}");
        assert!(ctx.head("copy").await.unwrap_err().is_not_found());
    }
}

async fn copy_destination_if_none_match(ctx: Ctx) {
    ctx.create_bucket().await;
    ctx.put("source", Bytes::from_static(b"source")).await;
    ctx.put("existing", Bytes::from_static(b"existing")).await;
    let result = ctx
        .client
        .send(
            CopyObject::new(
                CopySource::new(ctx.bucket(), object_key("source")),
                ctx.bucket(),
                object_key("existing"),
            )
            .if_none_match_any(),
        )
        .await;
    if ctx.deviates() {
        result.expect("the condition is ignored");
        assert_eq!(ctx.get("existing").await, "source");
    } else {
        let err = result.unwrap_err();
        assert!(err.is_precondition_failed(), "{err:?}");
        assert_eq!(ctx.get("existing").await, "existing");
    }
}

async fn copy_checksum_algorithm(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(5000, 5);
    ctx.client
        .put_object(
            PutObject::new(ctx.bucket(), object_key("source")).no_checksum(),
            data.clone(),
        )
        .await
        .unwrap();
    ctx.client
        .send(
            CopyObject::new(
                CopySource::new(ctx.bucket(), object_key("source")),
                ctx.bucket(),
                object_key("copy"),
            )
            .checksum_algorithm(ChecksumAlgorithm::Sha256),
        )
        .await
        .unwrap();
    let head = ctx
        .client
        .send(HeadObject::new(ctx.bucket(), object_key("copy")).checksum_mode(true))
        .await
        .unwrap();
    let sha256 = head.checksums.get(ChecksumAlgorithm::Sha256);
    if ctx.deviates() {
        assert_eq!(sha256, None, "{:?}", head.checksums);
    } else {
        assert_eq!(
            sha256,
            Some(support::base64(&Sha256::digest(&data)).as_str())
        );
    }
}

async fn delete_objects(ctx: Ctx) {
    ctx.create_bucket().await;
    for key in ["one", "two/three", "four five"] {
        ctx.put(key, Bytes::from_static(b"x")).await;
    }
    let deleted = ctx
        .client
        .send(DeleteObjects::new(
            ctx.bucket(),
            [
                object_key("one"),
                object_key("two/three"),
                object_key("four five"),
            ],
        ))
        .await
        .unwrap();
    let mut keys: Vec<&str> = deleted
        .result
        .deleted
        .iter()
        .map(|d| d.key.as_str())
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["four five", "one", "two/three"]);
    assert!(deleted.result.errors.is_empty());
    let listed = ctx
        .client
        .send(ListObjectsV2::new(ctx.bucket()))
        .await
        .unwrap();
    assert!(listed.result.contents.is_empty(), "{listed:?}");
}

// ---------------------------------------------------------------------------------------------
// Uploads, checksums, downloads
// ---------------------------------------------------------------------------------------------

/// The value S3 returns for `algorithm` over `data`: computed here independently where the
/// tests have an implementation (CRC32, CRC64NVME, SHA-256), else by s3-ops.
fn expected_checksum(algorithm: ChecksumAlgorithm, data: &[u8]) -> String {
    match algorithm {
        ChecksumAlgorithm::Crc32 => support::base64(&support::crc32(data).to_be_bytes()),
        ChecksumAlgorithm::Crc64Nvme => support::base64(&support::crc64nvme(data).to_be_bytes()),
        ChecksumAlgorithm::Sha256 => support::base64(&Sha256::digest(data)),
        other => other.checksum(data).to_base64(),
    }
}

/// In pieces, as object_store hands a payload over: never joined, checksummed over them.
fn in_pieces(data: &Bytes) -> Body {
    let len = data.len();
    Body::from_chunks([0..1, 1..len / 3, len / 3..len].map(|range| data.slice(range)))
}

async fn checksums_each_algorithm(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(40_000, 6);
    for (algorithm, in_chunks) in ChecksumAlgorithm::ALL
        .into_iter()
        .flat_map(|algorithm| [(algorithm, false), (algorithm, true)])
    {
        let (key, body) = match in_chunks {
            false => (
                format!("{algorithm:?}-bytes"),
                Body::from_bytes(data.clone()),
            ),
            true => (format!("{algorithm:?}-chunks"), in_pieces(&data)),
        };
        let put = ctx
            .client
            .put_object(
                PutObject::new(ctx.bucket(), object_key(&key)).checksum_algorithm(algorithm),
                body,
            )
            .await
            .unwrap_or_else(|err| panic!("{key}: {err}"));
        assert!(put.etag.is_some(), "{algorithm:?}");
        let expected = expected_checksum(algorithm, &data);
        assert_eq!(
            put.checksums.get(algorithm),
            Some(expected.as_str()),
            "{algorithm:?} PUT"
        );
        let head = ctx
            .client
            .send(HeadObject::new(ctx.bucket(), object_key(&key)).checksum_mode(true))
            .await
            .unwrap();
        // That checksum and no other (the client sent one algorithm).
        let returned: Vec<(ChecksumAlgorithm, &str)> = head
            .checksums
            .values
            .iter()
            .map(|(algorithm, value)| (*algorithm, value.as_str()))
            .collect();
        assert_eq!(
            returned,
            [(algorithm, expected.as_str())],
            "{algorithm:?} HEAD"
        );
        let response = ctx
            .client
            .get_object(GetObject::new(ctx.bucket(), object_key(&key)).checksum_mode(true))
            .await
            .unwrap();
        let mut body = response.body;
        let mut received = Vec::new();
        while let Some(chunk) = body.next_chunk().await {
            received.extend_from_slice(&chunk.unwrap());
        }
        assert_eq!(received, data, "{algorithm:?}");
        assert!(
            matches!(body.verification(), Verification::FullObject(c) if c.to_base64() == expected),
            "{algorithm:?}: {:?}",
            body.verification()
        );
    }
}

/// Every way a checksum known before sending goes up (precomputed on the request, a managed
/// upload's single PutObject from bytes or from a file) names its algorithm in
/// `x-amz-sdk-checksum-algorithm` as the AWS SDKs do, so that moto, which keeps no checksum
/// without it, stores it too: HEAD in checksum mode returns it.
async fn checksum_precomputed(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(3000, 14);
    let crc32 = support::base64(&support::crc32(&data).to_be_bytes());
    let put = ctx
        .client
        .put_object(
            PutObject::new(ctx.bucket(), object_key("known"))
                .checksum(Checksum::from_base64(ChecksumAlgorithm::Crc32, &crc32).unwrap()),
            data.clone(),
        )
        .await
        .unwrap();
    assert_eq!(
        put.checksums.get(ChecksumAlgorithm::Crc32),
        Some(crc32.as_str())
    );
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("source");
    std::fs::write(&path, &data).unwrap();
    let pieces = [0..1, 1..1000, 1000..3000].map(|range| data.slice(range));
    for (key, source) in [
        ("managed-bytes", UploadSource::bytes(data.clone())),
        ("managed-chunks", UploadSource::chunks(pieces)),
        ("managed-file", UploadSource::file(&path)),
    ] {
        let stored = ctx
            .client
            .upload(ctx.bucket(), object_key(key), source)
            .await
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        assert!(
            matches!(&stored.verification, Verification::FullObject(c) if c.to_base64() == crc32),
            "{key}: {:?}",
            stored.verification
        );
    }
    for key in ["known", "managed-bytes", "managed-chunks", "managed-file"] {
        let head = ctx
            .client
            .send(HeadObject::new(ctx.bucket(), object_key(key)).checksum_mode(true))
            .await
            .unwrap();
        assert_eq!(
            head.checksums.get(ChecksumAlgorithm::Crc32),
            Some(crc32.as_str()),
            "{key}"
        );
        assert_eq!(ctx.get(key).await, data, "{key}");
    }
}

async fn checksum_wrong_value(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = Bytes::from_static(b"these bytes do not have that CRC32");
    let wrong = Checksum::from_base64(ChecksumAlgorithm::Crc32, "AAAAAA==").unwrap();
    let result = ctx
        .client
        .put_object(
            PutObject::new(ctx.bucket(), object_key("corrupt")).checksum(wrong),
            data.clone(),
        )
        .await;
    match ctx.kind() {
        _ if !ctx.deviates() => {
            let err = result.unwrap_err();
            assert_eq!(status_and_code(&err), Some((400, "BadDigest")), "{err:?}");
            assert!(ctx.head("corrupt").await.unwrap_err().is_not_found());
        }
        Kind::LocalS3 => {
            let err = result.unwrap_err();
            assert_eq!(status_and_code(&err), Some((400, "BadDigest")), "{err:?}");
            assert_eq!(ctx.get("corrupt").await, data, "stored after all");
        }
        Kind::Moto => {
            result.expect("moto accepts the wrong checksum");
            let raw = GetObject::new(ctx.bucket(), object_key("corrupt")).checksum_mode(false);
            assert_eq!(ctx.get_with(raw).await.unwrap(), data);
        }
    }
}

async fn streaming_upload(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(1_000_003, 7);
    // Signed chunks only; the default checksum (CRC32) as a signed trailer; CRC32C.
    let choices = [
        ("stream-None", Some(None)),
        ("stream-default", None),
        ("stream-Some(Crc32c)", Some(Some(ChecksumAlgorithm::Crc32c))),
    ];
    for (key, choice) in choices {
        let key = key.to_owned();
        let put = PutObject::new(ctx.bucket(), object_key(&key));
        let put = match choice {
            Some(Some(algorithm)) => put.checksum_algorithm(algorithm),
            Some(None) => put.no_checksum(),
            None => put,
        };
        ctx.client
            .put_object(put, support::one_shot(&data, 65_000))
            .await
            .unwrap_or_else(|err| panic!("{key}: {err}"));
        assert_eq!(ctx.get(&key).await, data, "{key}");
    }
    let head = ctx
        .client
        .send(HeadObject::new(ctx.bucket(), object_key("stream-Some(Crc32c)")).checksum_mode(true))
        .await
        .unwrap();
    assert_eq!(
        head.checksums.get(ChecksumAlgorithm::Crc32c),
        Some(expected_checksum(ChecksumAlgorithm::Crc32c, &data).as_str())
    );
}

async fn file_upload_and_download(ctx: Ctx) {
    ctx.create_bucket().await;
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source.bin");
    let data = pattern(3 * MIB + 17, 8);
    std::fs::write(&source, &data).unwrap();
    ctx.put("uploaded", Body::from_file(&source).await.unwrap())
        .await;
    ctx.put(
        "middle",
        Body::from_file_range(&source, 1000, 5000).await.unwrap(),
    )
    .await;
    assert_eq!(ctx.get("middle").await, data[1000..6000]);
    let target = dir.path().join("downloaded.bin");
    let response = ctx
        .client
        .get_object(GetObject::new(ctx.bucket(), object_key("uploaded")))
        .await
        .unwrap();
    assert_eq!(
        response.body.write_to_file(&target).await.unwrap(),
        data.len() as u64
    );
    assert_eq!(std::fs::read(&target).unwrap(), data);
}

async fn streaming_get(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(4 * MIB + 3, 9);
    let digest = Sha256::digest(&data);
    ctx.put("big", data.clone()).await;
    let mut response = ctx
        .client
        .get_object(GetObject::new(ctx.bucket(), object_key("big")))
        .await
        .unwrap();
    assert_eq!(response.body.content_length(), Some(data.len() as u64));
    let mut offset = 0;
    let mut chunks = 0;
    let mut hasher = Sha256::new();
    while let Some(chunk) = response.body.next_chunk().await {
        let chunk = chunk.unwrap();
        assert_eq!(
            chunk,
            data[offset..offset + chunk.len()],
            "at offset {offset}"
        );
        hasher.update(&chunk);
        offset += chunk.len();
        chunks += 1;
    }
    assert_eq!(offset, data.len());
    assert!(chunks > 1, "a 4 MiB body arrives in several chunks");
    assert_eq!(hasher.finalize(), digest);
    let response = ctx
        .client
        .get_object(GetObject::new(ctx.bucket(), object_key("big")))
        .await
        .unwrap();
    let mut reader = response.body.into_async_read();
    let mut read = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut read)
        .await
        .unwrap();
    assert_eq!(Sha256::digest(&read), digest);
}

// ---------------------------------------------------------------------------------------------
// Listings
// ---------------------------------------------------------------------------------------------

async fn paginated_listing(ctx: Ctx) {
    ctx.create_bucket().await;
    let mut expected = Vec::new();
    for index in 0..25 {
        let key = format!("logs/{index:03}.txt");
        ctx.put(&key, Bytes::from(key.clone())).await;
        expected.push(key);
    }
    ctx.put("other/x", Bytes::from_static(b"x")).await;
    let first_page = ListObjectsV2::new(ctx.bucket())
        .prefix("logs/")
        .max_keys(10);
    // Page by page with the request's own `next_page`.
    let mut request = Some(first_page.clone());
    let mut sizes = Vec::new();
    let mut keys = Vec::new();
    while let Some(op) = request.take() {
        let page = ctx.client.send(op.clone()).await.unwrap();
        request = op.next_page(&page);
        sizes.push(page.result.contents.len());
        for object in page.result.contents {
            assert_eq!(object.size, object.key.len() as u64);
            keys.push(object.key);
        }
        assert!(sizes.len() <= 3, "pagination does not end");
    }
    assert_eq!(sizes, [10, 10, 5]);
    assert_eq!(keys, expected);
    // The same listing as a lazy stream of pages.
    let mut pages = ctx.client.list_objects_v2_pages(first_page);
    let mut streamed = Vec::new();
    let mut page_count = 0;
    while let Some(page) = pages.next_page().await {
        page_count += 1;
        streamed.extend(page.unwrap().result.contents.into_iter().map(|o| o.key));
    }
    assert_eq!(page_count, 3);
    assert_eq!(streamed, expected);
    let top = ctx
        .client
        .send(ListObjectsV2::new(ctx.bucket()).delimiter("/"))
        .await
        .unwrap();
    assert!(top.result.contents.is_empty());
    assert_eq!(top.result.common_prefixes, ["logs/", "other/"]);
}

async fn listing_url_encoded_keys(ctx: Ctx) {
    ctx.create_bucket().await;
    let keys = [
        "100%",
        "a+b",
        "space key",
        "tab\tand\u{1}control",
        "unicode/日本語/ümlaut-é",
    ];
    for key in keys {
        ctx.put(key, Bytes::from_static(b"x")).await;
    }
    // A raw non-ASCII key proves the encoding was ignored: the paginator then asks again
    // without `encoding-type`, and lists on either server.
    let mut pages = ctx
        .client
        .list_objects_v2_pages(ListObjectsV2::new(ctx.bucket()).prefix("unicode/"));
    let page = pages.next_page().await.expect("one page").unwrap();
    let listed: Vec<&str> = page
        .result
        .contents
        .iter()
        .map(|o| o.key.as_str())
        .collect();
    assert_eq!(listed, ["unicode/日本語/ümlaut-é"]);
    // `url_encoding` is on by default.
    let result = ctx.client.send(ListObjectsV2::new(ctx.bucket())).await;
    if ctx.deviates() {
        let err = result.unwrap_err();
        assert!(
            matches!(err.kind(), s3_wire_tokio::ErrorKind::Operation(_)),
            "{err:?}"
        );
        assert!(err.is_unencoded_listing(), "{err:?}");
    } else {
        let listed = result.unwrap();
        let mut listed: Vec<&str> = listed
            .result
            .contents
            .iter()
            .map(|o| o.key.as_str())
            .collect();
        listed.sort_unstable();
        let mut expected = keys.to_vec();
        expected.sort_unstable();
        assert_eq!(listed, expected);
    }
}

// ---------------------------------------------------------------------------------------------
// Presigned URLs, credentials
// ---------------------------------------------------------------------------------------------

async fn presigned_urls(ctx: Ctx) {
    ctx.create_bucket().await;
    let key = "shared/report 2024+final%.bin";
    let data = pattern(20_000, 10);
    let http = support::http_client();
    let put = ctx
        .client
        .presign(
            &PutObject::new(ctx.bucket(), object_key(key)),
            Duration::from_secs(300),
        )
        .await
        .unwrap();
    assert!(!format!("{put:?}").contains(&put.signature().to_hex()));
    let mut request = http.put(put.url()).body(data.clone());
    for (name, value) in put.headers() {
        request = request.header(name.as_str(), value.as_bytes());
    }
    let response = request.send().await.unwrap();
    assert!(
        response.status().is_success(),
        "presigned PUT: {} {}",
        response.status(),
        response.text().await.unwrap_or_default()
    );
    let get = ctx
        .client
        .presign(
            &GetObject::new(ctx.bucket(), object_key(key)),
            Duration::from_secs(300),
        )
        .await
        .unwrap();
    let response = http.get(get.url()).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.bytes().await.unwrap(), data);

    // The signature's last hex digit changed.
    let url = get.url();
    let last = url.chars().last().unwrap();
    let tampered = format!(
        "{}{}",
        &url[..url.len() - 1],
        if last == '0' { '1' } else { '0' }
    );
    let response = http.get(&tampered).send().await.unwrap();
    let wrong_signature = response.status().as_u16();
    // The URL of another key with this key's signature.
    let elsewhere = url.replace("report%202024", "report%202025");
    assert_ne!(elsewhere, url);
    let response = http.get(&elsewhere).send().await.unwrap();
    let wrong_key = response.status().as_u16();
    if ctx.deviates() {
        // Unchecked: the tampered URL reads the object; the other key does not exist.
        assert_eq!((wrong_signature, wrong_key), (200, 404));
    } else {
        assert_eq!((wrong_signature, wrong_key), (403, 403));
    }
}

async fn credentials(ctx: Ctx) {
    let server = &ctx.server;
    // A client configured by the standard variables creates the bucket.
    let env = MapEnv::new()
        .with_var("AWS_ACCESS_KEY_ID", &server.access_key)
        .with_var("AWS_SECRET_ACCESS_KEY", &server.secret_key)
        .with_var("AWS_REGION", &server.region)
        .with_var("AWS_ENDPOINT_URL_S3", &server.endpoint);
    let from_env = ClientBuilder::from_env_with(Arc::new(env)).build().unwrap();
    from_env
        .send(CreateBucket::new(ctx.bucket()))
        .await
        .unwrap();
    // One configured by a profile in ~/.aws finds it.
    let home = tempfile::tempdir().unwrap();
    let aws = home.path().join(".aws");
    std::fs::create_dir(&aws).unwrap();
    let profile_client = |access_key: &str, secret_key: &str| {
        std::fs::write(
            aws.join("credentials"),
            format!(
                "[local]\naws_access_key_id = {access_key}\naws_secret_access_key = {secret_key}\n"
            ),
        )
        .unwrap();
        std::fs::write(
            aws.join("config"),
            format!(
                "[profile local]\nregion = {}\nendpoint_url = {}\n",
                server.region, server.endpoint
            ),
        )
        .unwrap();
        let env = MapEnv::new()
            .with_home(home.path())
            .with_var("AWS_PROFILE", "local");
        ClientBuilder::from_env_with(Arc::new(env)).build().unwrap()
    };
    profile_client(&server.access_key, &server.secret_key)
        .send(HeadBucket::new(ctx.bucket()))
        .await
        .unwrap();
    // A wrong secret, given in code or in the profile.
    let wrong_static = server
        .builder()
        .static_credentials(server.access_key.clone(), "not-the-secret", None)
        .build()
        .unwrap();
    let wrong_profile = profile_client(&server.access_key, "not-the-secret");
    for (what, client) in [("static", wrong_static), ("profile", wrong_profile)] {
        let result = client.send(HeadBucket::new(ctx.bucket())).await;
        if ctx.deviates() {
            result.unwrap_or_else(|err| panic!("{what}: the signature is not checked: {err}"));
        } else {
            let err = result.unwrap_err();
            assert_eq!(status(&err), Some(403), "{what}: {err:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Multipart
// ---------------------------------------------------------------------------------------------

async fn multipart_upload(ctx: Ctx) {
    ctx.create_bucket().await;
    let client = &ctx.client;
    let key = "big/assembled object.bin";
    let data = pattern(10 * MIB + 123, 11);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.bin");
    std::fs::write(&file, &data).unwrap();
    let created = client
        .send(CreateMultipartUpload::new(ctx.bucket(), object_key(key)))
        .await
        .unwrap();
    let id = &created.upload_id;
    let part = |number| UploadPart::new(ctx.bucket(), object_key(key), id, number);
    let first = client
        .upload_part(part(1), in_pieces(&data.slice(..5 * MIB)))
        .await
        .unwrap();
    let second = client
        .upload_part(
            part(2),
            Body::from_file_range(&file, 5 * MIB as u64, 5 * MIB as u64)
                .await
                .unwrap(),
        )
        .await
        .unwrap();
    let third = client
        .upload_part(part(3), support::one_shot(&data[10 * MIB..], 100_000))
        .await
        .unwrap();
    let etags = [
        first.etag.unwrap(),
        second.etag.unwrap(),
        third.etag.unwrap(),
    ];
    assert!(etags.iter().all(|etag| !etag.as_str().is_empty()));
    let parts = etags
        .iter()
        .zip(1..)
        .map(|(etag, number)| CompletedPart::new(number, etag.clone()))
        .collect();
    let done = ctx.complete(key, id, parts).await.unwrap();
    let etag = done.result.etag.expect("ETag");
    assert_eq!(
        Some(&etag),
        s3_wire_tokio::s3_ops::checksum::multipart_etag(&etags).as_ref(),
        "MD5 of the part MD5s, -3"
    );
    assert_eq!(ctx.get(key).await, data);
}

async fn list_parts(ctx: Ctx) {
    ctx.create_bucket().await;
    let (id, parts, _) = upload_parts(&ctx, "listed", &[5 * MIB, 1000], None).await;
    let result = ctx
        .client
        .send(ListParts::new(ctx.bucket(), object_key("listed"), &id))
        .await;
    if ctx.deviates() {
        let err = result.unwrap_err();
        assert!(
            matches!(err.kind(), s3_wire_tokio::ErrorKind::Operation(_)),
            "{err:?}"
        );
        assert!(format!("{err:?}").contains("ETag"), "{err:?}");
    } else {
        let listed = result.unwrap_or_else(|err| panic!("ListParts: {err:?}"));
        let got: Vec<(u32, u64, &str)> = listed
            .result
            .parts
            .iter()
            .map(|p| (p.part_number, p.size, p.etag.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (1, 5 * MIB as u64, parts[0].etag.as_str()),
                (2, 1000, parts[1].etag.as_str())
            ]
        );
    }
}

async fn complete_wrong_part_etag(ctx: Ctx) {
    ctx.create_bucket().await;
    let (id, mut parts, _) = upload_parts(&ctx, "wrong", &[5 * MIB, 1000], None).await;
    parts[1] = CompletedPart::new(
        2,
        s3_wire_tokio::s3_xml::ETag::parse("\"00000000000000000000000000000000\"").unwrap(),
    );
    let result = ctx.complete("wrong", &id, parts).await;
    if ctx.deviates() {
        result.expect("completed despite the wrong ETag");
    } else {
        let err = result.unwrap_err();
        assert_eq!(status_and_code(&err), Some((400, "InvalidPart")), "{err:?}");
    }
}

async fn abort_multipart(ctx: Ctx) {
    ctx.create_bucket().await;
    let created = ctx
        .client
        .send(CreateMultipartUpload::new(
            ctx.bucket(),
            object_key("abandoned"),
        ))
        .await
        .unwrap();
    ctx.client
        .upload_part(
            UploadPart::new(ctx.bucket(), object_key("abandoned"), &created.upload_id, 1),
            Bytes::from_static(b"partial"),
        )
        .await
        .unwrap();
    ctx.client
        .send(AbortMultipartUpload::new(
            ctx.bucket(),
            object_key("abandoned"),
            &created.upload_id,
        ))
        .await
        .unwrap();
    let result = ctx
        .client
        .send(ListParts::new(
            ctx.bucket(),
            object_key("abandoned"),
            &created.upload_id,
        ))
        .await;
    if ctx.deviates() {
        let listed = result.unwrap();
        assert!(listed.result.parts.is_empty(), "{listed:?}");
    } else {
        let err = result.unwrap_err();
        assert_eq!(
            status_and_code(&err),
            Some((404, "NoSuchUpload")),
            "{err:?}"
        );
    }
    assert!(ctx.head("abandoned").await.unwrap_err().is_not_found());
    let err = ctx
        .get_with(GetObject::new(ctx.bucket(), object_key("abandoned")))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err:?}");
}

async fn list_multipart_uploads(ctx: Ctx) {
    ctx.create_bucket().await;
    let created = ctx
        .client
        .send(CreateMultipartUpload::new(
            ctx.bucket(),
            object_key("pending"),
        ))
        .await
        .unwrap();
    let result = ctx
        .client
        .send(ListMultipartUploads::new(ctx.bucket()))
        .await;
    if ctx.deviates() {
        let err = result.unwrap_err();
        assert_eq!(
            status_and_code(&err),
            Some((501, "NotImplemented")),
            "{err:?}"
        );
    } else {
        let listed = result.unwrap();
        let uploads: Vec<(&str, &str)> = listed
            .result
            .uploads
            .iter()
            .map(|u| (u.key.as_str(), u.upload_id.as_str()))
            .collect();
        assert_eq!(uploads, [("pending", created.upload_id.as_str())]);
    }
}

/// A managed copy too large for one CopyObject goes part by part and is stored: the source's
/// bytes and description, whether the source was one PutObject or a multipart upload.
async fn managed_multipart_copy(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(11 * MIB, 31);
    ctx.client
        .put_object(
            PutObject::new(ctx.bucket(), object_key("one-put"))
                .content_type("application/x-source")
                .metadata("origin", "put"),
            Body::from_bytes(data.clone()),
        )
        .await
        .unwrap();
    ctx.client
        .upload(
            ctx.bucket(),
            object_key("multipart"),
            UploadSource::bytes(data.clone()),
        )
        .part_size(5 * MIB as u64)
        .single_request_limit(5 * MIB as u64)
        .await
        .unwrap();
    for source in ["one-put", "multipart"] {
        let copy = format!("{source}-copy");
        let copied = ctx
            .client
            .copy(
                CopySource::new(ctx.bucket(), object_key(source)),
                ctx.bucket(),
                object_key(&copy),
            )
            .part_size(5 * MIB as u64)
            .single_request_limit(5 * MIB as u64)
            .await
            .unwrap_or_else(|e| panic!("copy of {source}: {e}"));
        assert_eq!(copied.size, data.len() as u64);
        assert_eq!(ctx.get(&copy).await, data, "{copy}");
        if source == "one-put" {
            let head = ctx.head(&copy).await.unwrap();
            assert_eq!(head.content_type.as_deref(), Some("application/x-source"));
            assert_eq!(head.metadata.get("origin").map(String::as_str), Some("put"));
        }
    }
}

async fn multipart_full_object_checksum(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(11 * MIB, 12);
    // In pieces whose ends are not the parts' (5 MiB): parts are cut across them.
    let pieces = [
        0..1,
        1..3 * MIB,
        3 * MIB..5 * MIB + 7,
        5 * MIB + 7..11 * MIB,
    ]
    .map(|range| data.slice(range));
    let uploaded = ctx
        .client
        .upload(
            ctx.bucket(),
            object_key("managed"),
            UploadSource::chunks(pieces),
        )
        .part_size(5 * MIB as u64)
        .single_request_limit(5 * MIB as u64)
        .await
        .unwrap();
    assert_eq!(uploaded.parts, Some(3));
    let crc32 = support::base64(&support::crc32(&data).to_be_bytes());
    let head = ctx
        .client
        .send(HeadObject::new(ctx.bucket(), object_key("managed")).checksum_mode(true))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("managed.bin");
    let downloaded = ctx
        .client
        .download(ctx.bucket(), object_key("managed"), target.as_path())
        .await
        .unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), data);
    let full_object = |verification: &Verification| matches!(verification, Verification::FullObject(c) if c.to_base64() == crc32);
    if ctx.deviates() && ctx.kind() == Kind::Moto {
        assert_eq!(
            uploaded.verification,
            Verification::NotVerified(NotVerified::StoreSentNone)
        );
        assert_eq!(
            head.checksums.get(ChecksumAlgorithm::Crc32),
            Some(crc32.as_str())
        );
        assert_eq!(head.checksums.checksum_type, Some(ChecksumType::FullObject));
        assert!(
            full_object(&downloaded.verification),
            "{:?}",
            downloaded.verification
        );
    } else if ctx.deviates() {
        assert_eq!(
            uploaded.verification,
            Verification::NotVerified(NotVerified::StoreSentNone)
        );
        assert!(head.checksums.values.is_empty(), "{:?}", head.checksums);
        assert_eq!(
            downloaded.verification,
            Verification::NotVerified(NotVerified::StoreSentNone)
        );
    } else {
        assert!(
            matches!(&uploaded.verification, Verification::FullObject(c) if c.to_base64() == crc32),
            "{:?}",
            uploaded.verification
        );
        assert_eq!(
            head.checksums.get(ChecksumAlgorithm::Crc32),
            Some(crc32.as_str())
        );
        assert_eq!(head.checksums.checksum_type, Some(ChecksumType::FullObject));
        assert!(
            matches!(&downloaded.verification, Verification::FullObject(c) if c.to_base64() == crc32),
            "{:?}",
            downloaded.verification
        );
    }
}

async fn multipart_composite_checksum(ctx: Ctx) {
    ctx.create_bucket().await;
    let sizes = [5 * MIB, 2000];
    let (id, parts, data) =
        upload_parts(&ctx, "composite", &sizes, Some(ChecksumAlgorithm::Crc32c)).await;
    let part_values: Vec<Option<String>> = parts
        .iter()
        .map(|p| {
            ChecksumAlgorithm::Crc32c
                .value_in(&p.checksums)
                .map(str::to_owned)
        })
        .collect();
    let done = ctx.complete("composite", &id, parts).await.unwrap();
    let head = ctx
        .client
        .send(HeadObject::new(ctx.bucket(), object_key("composite")).checksum_mode(true))
        .await
        .unwrap();
    let response = ctx
        .client
        .get_object(GetObject::new(ctx.bucket(), object_key("composite")).checksum_mode(true))
        .await
        .unwrap();
    let get_checksums = response.output.head.checksums.clone();
    assert_eq!(response.body.collect().await.unwrap(), data);
    // A managed download in parallel: it checks the parts one by one where it can.
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("composite");
    let downloaded = ctx
        .client
        .download(ctx.bucket(), object_key("composite"), path.as_path())
        .part_size(5 * MIB as u64)
        .single_request_limit(MIB as u64)
        .await
        .unwrap_or_else(|e| panic!("managed download: {e:?}"));
    assert_eq!(std::fs::read(&path).unwrap(), data);
    let downloaded = downloaded.verification;
    let part_sums: Vec<Checksum> = [&data[..sizes[0]], &data[sizes[0]..]]
        .iter()
        .map(|part| ChecksumAlgorithm::Crc32c.checksum(part))
        .collect();
    let composite = Checksum::composite(&part_sums).expect("composite");
    assert!(composite.ends_with("-2"), "{composite}");
    let bare = composite.trim_end_matches("-2");
    match ctx.kind() {
        _ if !ctx.deviates() => {
            let expected: Vec<Option<String>> =
                part_sums.iter().map(|c| Some(c.to_base64())).collect();
            assert_eq!(part_values, expected, "UploadPart checksums");
            assert_eq!(
                done.result.checksums.crc32c.as_deref(),
                Some(composite.as_str()),
                "Complete"
            );
            assert_eq!(
                head.checksums.get(ChecksumAlgorithm::Crc32c),
                Some(composite.as_str())
            );
            assert_eq!(head.checksums.checksum_type, Some(ChecksumType::Composite));
            assert_eq!(
                get_checksums.get(ChecksumAlgorithm::Crc32c),
                Some(composite.as_str())
            );
            assert_eq!(
                downloaded,
                Verification::PerPart {
                    algorithm: ChecksumAlgorithm::Crc32c,
                    parts: 2
                }
            );
        }
        Kind::LocalS3 => {
            assert_eq!(part_values, [None, None], "UploadPart checksums");
            assert_eq!(done.result.checksums.crc32c, None, "Complete");
            assert!(head.checksums.values.is_empty(), "{:?}", head.checksums);
            assert_eq!(
                downloaded,
                Verification::NotVerified(NotVerified::StoreSentNone)
            );
        }
        Kind::Moto => {
            let expected: Vec<Option<String>> =
                part_sums.iter().map(|c| Some(c.to_base64())).collect();
            assert_eq!(part_values, expected, "UploadPart checksums");
            assert_eq!(done.result.checksums.crc32c, None, "Complete");
            assert_eq!(head.checksums.get(ChecksumAlgorithm::Crc32c), Some(bare));
            assert_eq!(head.checksums.checksum_type, None);
            assert_eq!(
                get_checksums.get(ChecksumAlgorithm::Crc32c),
                Some(composite.as_str())
            );
            assert_eq!(get_checksums.checksum_type, Some(ChecksumType::Composite));
            assert_eq!(
                downloaded,
                Verification::NotVerified(NotVerified::CompositeNotByParts)
            );
        }
    }
}

async fn get_part_number(ctx: Ctx) {
    ctx.create_bucket().await;
    let (id, parts, data) = upload_parts(&ctx, "parts", &[5 * MIB, 1000], None).await;
    ctx.complete("parts", &id, parts).await.unwrap();
    let response = ctx
        .client
        .get_object(GetObject::new(ctx.bucket(), object_key("parts")).part_number(2))
        .await
        .unwrap();
    let head = response.output.head.clone();
    let body = response.body.collect().await.unwrap();
    if ctx.deviates() {
        assert_eq!(body, data, "the whole object");
        assert_eq!(head.content_range, None);
    } else {
        assert_eq!(body, data[5 * MIB..]);
        assert_eq!(head.parts_count, Some(2));
        let range = head.content_range.expect("Content-Range");
        assert_eq!(
            (range.first, range.last, range.total),
            (
                5 * MIB as u64,
                data.len() as u64 - 1,
                Some(data.len() as u64)
            )
        );
    }
}

async fn head_part_number(ctx: Ctx) {
    ctx.create_bucket().await;
    let (id, parts, _) = upload_parts(&ctx, "parts", &[5 * MIB, 1000], None).await;
    ctx.complete("parts", &id, parts).await.unwrap();
    let head = ctx
        .client
        .send(HeadObject::new(ctx.bucket(), object_key("parts")).part_number(1))
        .await
        .unwrap();
    if ctx.deviates() {
        assert_eq!(head.content_length, Some(5 * MIB as u64 + 1000));
        assert_eq!(head.parts_count, None);
    } else {
        assert_eq!(head.content_length, Some(5 * MIB as u64));
        assert_eq!(head.parts_count, Some(2));
    }
}

async fn upload_part_copy(ctx: Ctx) {
    ctx.create_bucket().await;
    let data = pattern(12 * MIB, 13);
    ctx.put("source", data.clone()).await;
    let created = ctx
        .client
        .send(CreateMultipartUpload::new(
            ctx.bucket(),
            object_key("target"),
        ))
        .await
        .unwrap();
    let copy_part = |number, first: usize, last: usize| {
        UploadPartCopy::new(
            CopySource::new(ctx.bucket(), object_key("source")),
            ctx.bucket(),
            object_key("target"),
            &created.upload_id,
            number,
        )
        .source_range(ByteRange::new(first as u64, last as u64).unwrap())
    };
    let one = ctx
        .client
        .send(copy_part(1, 6 * MIB, 12 * MIB - 1))
        .await
        .unwrap();
    let two = ctx.client.send(copy_part(2, 0, 6 * MIB - 1)).await.unwrap();
    let parts = vec![
        CompletedPart::new(1, one.result.etag.unwrap()),
        CompletedPart::new(2, two.result.etag.unwrap()),
    ];
    ctx.complete("target", &created.upload_id, parts)
        .await
        .unwrap();
    let mut expected = data[6 * MIB..].to_vec();
    expected.extend_from_slice(&data[..6 * MIB]);
    assert_eq!(ctx.get("target").await, expected);
}

// ---------------------------------------------------------------------------------------------
// Tagging, versions
// ---------------------------------------------------------------------------------------------

async fn object_tagging(ctx: Ctx) {
    ctx.create_bucket().await;
    ctx.client
        .put_object(
            PutObject::new(ctx.bucket(), object_key("tagged"))
                .tag("stage", "raw")
                .tag("team", "a b"),
            Bytes::from_static(b"x"),
        )
        .await
        .unwrap();
    let result = ctx
        .client
        .send(PutObjectTagging::new(
            ctx.bucket(),
            object_key("tagged"),
            [("stage".to_owned(), "clean".to_owned())],
        ))
        .await;
    if ctx.deviates() {
        let err = result.unwrap_err();
        assert_eq!(
            status_and_code(&err),
            Some((501, "NotImplemented")),
            "{err:?}"
        );
        return;
    }
    // Before the replacement the PUT's tags were there (checked on a second object).
    result.unwrap();
    let tags = |output: &s3_wire_tokio::s3_ops::ops::get_object_tagging::GetObjectTaggingOutput| {
        output
            .tagging
            .tags
            .iter()
            .map(|t| (t.key.clone(), t.value.clone()))
            .collect::<Vec<_>>()
    };
    let got = ctx
        .client
        .send(GetObjectTagging::new(ctx.bucket(), object_key("tagged")))
        .await
        .unwrap();
    assert_eq!(tags(&got), [("stage".to_owned(), "clean".to_owned())]);
    ctx.client
        .put_object(
            PutObject::new(ctx.bucket(), object_key("tagged-on-put"))
                .tag("stage", "raw")
                .tag("team", "a b"),
            Bytes::from_static(b"x"),
        )
        .await
        .unwrap();
    let got = ctx
        .client
        .send(GetObjectTagging::new(
            ctx.bucket(),
            object_key("tagged-on-put"),
        ))
        .await
        .unwrap();
    let mut got = tags(&got);
    got.sort();
    assert_eq!(
        got,
        [
            ("stage".to_owned(), "raw".to_owned()),
            ("team".to_owned(), "a b".to_owned())
        ]
    );
    let head = ctx.head("tagged-on-put").await.unwrap();
    assert_eq!(head.tag_count, Some(2));
    ctx.client
        .send(DeleteObjectTagging::new(ctx.bucket(), object_key("tagged")))
        .await
        .unwrap();
    let got = ctx
        .client
        .send(GetObjectTagging::new(ctx.bucket(), object_key("tagged")))
        .await
        .unwrap();
    assert!(got.tagging.tags.is_empty(), "{got:?}");
}

async fn list_object_versions(ctx: Ctx) {
    ctx.create_bucket().await;
    let etag = ctx.put("only", Bytes::from_static(b"x")).await;
    let result = ctx.client.send(ListObjectVersions::new(ctx.bucket())).await;
    if ctx.deviates() {
        let err = result.unwrap_err();
        assert_eq!(
            status_and_code(&err),
            Some((501, "NotImplemented")),
            "{err:?}"
        );
    } else {
        let listed = result.unwrap();
        let versions: Vec<(&str, Option<&str>, bool)> = listed
            .result
            .entries
            .iter()
            .map(|entry| match entry {
                VersionEntry::Version(v) => (
                    v.key.as_str(),
                    v.etag.as_ref().map(|e| e.as_str()),
                    v.is_latest,
                ),
                VersionEntry::DeleteMarker(m) => (m.key.as_str(), None, m.is_latest),
            })
            .collect();
        assert_eq!(versions, [("only", Some(etag.as_str()), true)]);
    }
}

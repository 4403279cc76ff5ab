//! `FaultStore`: a stateful in-memory S3 on loopback, with seeded, reproducible fault injection.
//!
//! Where [`FaultServer`](crate::support::fault::FaultServer) answers from a script, this server keeps
//! real state: buckets, objects (with their attributes and checksums, and the part layout of
//! multipart objects) and open multipart uploads. It behaves like Amazon S3 where the embedded
//! test server (s3s-fs, see docs/compatibility.md) does not: conditional GET/HEAD,
//! ETags in ListParts, multipart checksums (COMPOSITE and FULL_OBJECT), `partNumber` reads,
//! ListMultipartUploads, checksums verified before anything is stored, atomic conditional
//! writes, and a repeated CompleteMultipartUpload answering `NoSuchUpload`.
//!
//! It runs like `FaultServer`: hyper 1, HTTP/1.1 on `127.0.0.1:0`, on its own thread and
//! current-thread runtime; dropping the [`FaultStore`] stops it and cuts open connections.
//!
//! # What it models
//!
//! - Path-style addressing `/{bucket}/{key...}` (the key percent-decoded). Buckets spring into
//!   existence on first use; `PUT /{bucket}` creates one, `DELETE /{bucket}` removes an empty one.
//! - SigV4: every request's header signature is checked with the independent verifier
//!   ([`crate::support::sigv4`]) against [`ACCESS_KEY`] / [`SECRET_KEY`] / [`REGION`], and so are the chunk
//!   and trailer signatures of signed `aws-chunked` bodies ([`crate::support::aws_chunked`]). Failures
//!   answer 403 (`SignatureDoesNotMatch`, `InvalidAccessKeyId`, `AccessDenied` when unsigned)
//!   and are counted by [`FaultStore::signature_failures`].
//! - PutObject, GetObject, HeadObject, CopyObject, DeleteObject, DeleteObjects, ListObjectsV2,
//!   CreateMultipartUpload, UploadPart, UploadPartCopy, CompleteMultipartUpload,
//!   AbortMultipartUpload, ListParts, ListMultipartUploads, CreateBucket, HeadBucket,
//!   DeleteBucket; anything else is `501 NotImplemented`. Checksums use s3-ops' `Checksummer`,
//!   ETags MD5 (`"hex(md5(part md5s))-N"` for multipart objects).
//! - Upload ids are derived from the bucket, key and how many uploads that key had before, so a
//!   test run gives the same ids whatever the interleaving of requests for different keys.
//! - Multipart checksums as S3 has them since 2025: `x-amz-checksum-type` COMPOSITE (the
//!   default, not for CRC64NVME) or FULL_OBJECT (CRCs only; CRC64NVME's default); a part of an
//!   upload with an algorithm must carry that checksum, and a part of an upload without one
//!   must carry none ("Checksum Type mismatch"); COMPOSITE completions must list every part's
//!   checksum. The FULL_OBJECT value is recomputed over the assembled bytes, not combined.
//!
//! Plain bodies are hashed (SHA-256 for the signature, MD5, the announced checksum) as they
//! arrive; aws-chunked decoding and CompleteMultipartUpload's assembly run on the blocking pool,
//! so that the server's single thread keeps serving other connections. Debug builds of the
//! hash crates still limit a plain upload to roughly 15 MB/s.
//!
//! # What it deliberately does not model
//!
//! No versioning (`versionId` is ignored), no ACLs or policies (`x-amz-acl` is accepted and
//! dropped), no tagging API (`x-amz-tagging` on writes is stored and counted in
//! `x-amz-tagging-count`), no presigned URLs (query authentication is refused), no
//! virtual-hosted addressing, no TLS, no clock-skew check, no size limits (5 GiB parts, 10,000
//! parts), no default CRC64NVME checksum for objects uploaded without one (today's S3 adds
//! one; this store records a checksum only when the client sent one), no encryption (SSE
//! headers are stored and echoed; an SSE-C object must be read with the same key MD5), and
//! ListObjects v1 is not implemented.
//!
//! # Real stores' deviations
//!
//! [`StoreQuirks`] (all off by default, [`FaultStore::set_quirks`]) makes the store behave as
//! real ones were observed to (docs/compatibility.md): the regression tests of those
//! deviations need a store that has them, and only the one under test.
//!
//! # Faults
//!
//! [`FaultPlan`] decides per request, reproducibly: the decision is a hash of the plan's seed,
//! the request's identity (method, path, query without `X-Amz-*` parameters, `Range` header)
//! and how many times that identity was seen before (since the plan was set), never of the
//! arrival order. See [`FaultKind`] for what each fault does.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use md5::{Digest as _, Md5};
use s3_wire_tokio::s3_ops::{Checksum, ChecksumAlgorithm, ChecksumType, Checksummer};
use s3_wire_tokio::s3_xml;
use sha2::Sha256;

use crate::support::aws_chunked;
use crate::support::fault::{ScriptedBody, ServerThread, Tail, loopback_listener};
use crate::support::sigv4;

/// The access key id the store accepts.
pub const ACCESS_KEY: &str = "AKIDFAULTSTORE";
/// The secret key every signature is checked against.
pub const SECRET_KEY: &str = "fault-store-secret-key";
/// The region of the credential scope.
pub const REGION: &str = "us-east-1";
/// S3's minimum size of every part but the last ([`FaultStore::set_min_part_size`] lowers it).
pub const DEFAULT_MIN_PART_SIZE: u64 = 5 * 1024 * 1024;

const OWNER_ID: &str = "fault-store-owner";
const REQUEST_ID_PLACEHOLDER: &str = "{request-id}";
const XMLNS: &str = "http://s3.amazonaws.com/doc/2006-03-01/";

// ---------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------

/// The S3 operation a request was recognized as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// `PUT /{bucket}/{key}`.
    PutObject,
    /// `GET /{bucket}/{key}`.
    GetObject,
    /// `HEAD /{bucket}/{key}`.
    HeadObject,
    /// `DELETE /{bucket}/{key}`.
    DeleteObject,
    /// `POST /{bucket}?delete`.
    DeleteObjects,
    /// `PUT /{bucket}/{key}` with `x-amz-copy-source`.
    CopyObject,
    /// `POST /{bucket}/{key}?uploads`.
    CreateMultipartUpload,
    /// `PUT /{bucket}/{key}?partNumber&uploadId`.
    UploadPart,
    /// UploadPart with `x-amz-copy-source`.
    UploadPartCopy,
    /// `POST /{bucket}/{key}?uploadId`.
    CompleteMultipartUpload,
    /// `DELETE /{bucket}/{key}?uploadId`.
    AbortMultipartUpload,
    /// `GET /{bucket}/{key}?uploadId`.
    ListParts,
    /// `GET /{bucket}?uploads`.
    ListMultipartUploads,
    /// `GET /{bucket}?list-type=2`.
    ListObjectsV2,
    /// `GET /{bucket}` (version 1).
    ListObjects,
    /// `GET /{bucket}/{key}?attributes`.
    GetObjectAttributes,
    /// `PUT /{bucket}`.
    CreateBucket,
    /// `HEAD /{bucket}`.
    HeadBucket,
    /// `DELETE /{bucket}`.
    DeleteBucket,
    /// Anything else (answered `501 NotImplemented`, never faulted).
    Unknown,
}

impl Op {}

/// A fault the store can inject into one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// `503 SlowDown`; the operation is not applied.
    SlowDown,
    /// `500 InternalError`; not applied.
    InternalError,
    /// The whole request is read, then the connection is reset (TCP RST); not applied.
    ResetBeforeApply,
    /// The operation is applied (part stored, upload completed, ...), then the connection is
    /// reset without an answer: the ambiguous case.
    ResetAfterApply,
    /// Applied; the response announces its full `Content-Length` but only the first half of
    /// the body (object data, or the XML document) is sent before the connection is aborted.
    /// Bodiless responses (HEAD, UploadPart, 204s) are reset instead.
    TruncatedResponse,
    /// Applied; the response head and the first half of the body are sent, then nothing (the
    /// client's stall timeout must fire). Bodiless responses never get their head.
    StalledResponse,
    /// PutObject and UploadPart only: the request body is not read and no answer is ever
    /// sent; not applied.
    StalledRequest,
    /// CompleteMultipartUpload, CopyObject and UploadPartCopy only: `200 OK` whose body is
    /// whitespace then an `<Error><Code>InternalError</Code>` document; not applied.
    ErrorIn200,
}

impl FaultKind {
    /// Whether this kind can be injected into `op` at all.
    pub fn applies_to(self, op: Op) -> bool {
        match self {
            _ if op == Op::Unknown => false,
            FaultKind::StalledRequest => matches!(op, Op::PutObject | Op::UploadPart),
            FaultKind::ErrorIn200 => matches!(
                op,
                Op::CompleteMultipartUpload | Op::CopyObject | Op::UploadPartCopy
            ),
            _ => true,
        }
    }
}

/// Which requests get which faults; see the module docs for how decisions are made.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan {
    /// Seed of every decision.
    pub seed: u64,
    /// Probability that an eligible request gets a fault (0 to 1).
    pub probability: f64,
    /// Allowed kinds with their relative weights.
    pub kinds: Vec<(FaultKind, u32)>,
    /// Only these operations are eligible (`None`: all).
    pub operations: Option<Vec<Op>>,
    /// Only the first `n` occurrences of each request identity are eligible (`None`: all),
    /// e.g. 1 to fault each distinct request once and let its retry through.
    pub first_occurrences: Option<u64>,
}

impl Default for FaultPlan {
    fn default() -> Self {
        Self::none()
    }
}

impl FaultPlan {
    /// No faults.
    pub fn none() -> Self {
        Self::new(0, 0.0)
    }

    /// Faults with `probability`, seeded by `seed`; add kinds with [`FaultPlan::kind`].
    pub fn new(seed: u64, probability: f64) -> Self {
        Self {
            seed,
            probability,
            kinds: Vec::new(),
            operations: None,
            first_occurrences: None,
        }
    }

    /// Every first try of each distinct request to one of `operations` gets `kind`; retries
    /// (the same identity again) pass.
    pub fn first_try(kind: FaultKind, operations: impl IntoIterator<Item = Op>) -> Self {
        Self::new(0, 1.0)
            .kind(kind, 1)
            .operations(operations)
            .first_occurrences(1)
    }

    /// Allows `kind` with relative `weight`.
    pub fn kind(mut self, kind: FaultKind, weight: u32) -> Self {
        self.kinds.push((kind, weight));
        self
    }

    /// Restricts the faults to these operations.
    pub fn operations(mut self, operations: impl IntoIterator<Item = Op>) -> Self {
        self.operations = Some(operations.into_iter().collect());
        self
    }

    /// Only the first `n` occurrences of each request identity are eligible.
    pub fn first_occurrences(mut self, n: u64) -> Self {
        self.first_occurrences = Some(n);
        self
    }

    /// The decision for the `occurrence`-th (from 0) request with `identity` (as in
    /// [`RequestRecord::identity`]) recognized as `op`. Pure: the store calls exactly this.
    pub fn decide(&self, op: Op, identity: &str, occurrence: u64) -> Option<FaultKind> {
        if self.probability <= 0.0 || self.kinds.is_empty() || op == Op::Unknown {
            return None;
        }
        if self
            .operations
            .as_ref()
            .is_some_and(|ops| !ops.contains(&op))
        {
            return None;
        }
        if self.first_occurrences.is_some_and(|n| occurrence >= n) {
            return None;
        }
        let base =
            splitmix64(splitmix64(self.seed ^ 0xA076_1D64_78BD_642F) ^ fnv1a(identity.as_bytes()))
                ^ splitmix64(occurrence.wrapping_add(0xE703_7ED1_A0B4_28DB));
        let roll = (splitmix64(base ^ 0x8EBC_6AF0_9C88_C6E3) >> 11) as f64 / (1u64 << 53) as f64;
        if roll >= self.probability {
            return None;
        }
        let applicable: Vec<(FaultKind, u64)> = self
            .kinds
            .iter()
            .filter(|(kind, weight)| *weight > 0 && kind.applies_to(op))
            .map(|&(kind, weight)| (kind, u64::from(weight)))
            .collect();
        let total: u64 = applicable.iter().map(|(_, w)| w).sum();
        if total == 0 {
            return None;
        }
        let mut pick = splitmix64(base ^ 0x5899_65CC_7537_4CC3) % total;
        for (kind, weight) in applicable {
            if pick < weight {
                return Some(kind);
            }
            pick -= weight;
        }
        None
    }
}

/// Deviations of real stores the fault store can imitate; see the module docs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreQuirks {
    /// Garage 2.5.0: a signed aws-chunked body with a trailer
    /// (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`) is refused with `400 InvalidRequest:
    /// Invalid payload signature` (Garage signs the trailer with the wrong string-to-sign).
    pub refuse_signed_trailers: bool,
    /// The same refusal from the request's headers alone, answered before any of the body
    /// is read (a store that checks `x-amz-content-sha256` first).
    pub refuse_signed_trailers_unread: bool,
    /// moto 5.2.5: a HEAD with `partNumber` answers with the part's own ETag (the MD5 of its
    /// bytes), and evaluates `If-Match` against that, so a part probe pinned to the object's
    /// ETag gets `412 PreconditionFailed`.
    pub part_etag_on_head: bool,
    /// s3s-fs 0.14.1: ListMultipartUploads answers `501 NotImplemented` (an upload a lost
    /// CreateMultipartUpload answer created cannot be found).
    pub no_list_multipart_uploads: bool,
    /// A store that serves only ListObjects (version 1): it answers `list-type=2` with a
    /// version 1 page, ignoring `continuation-token` and `start-after` (and `marker`
    /// continues it).
    pub version_1_listings_only: bool,
    /// GetObjectAttributes answers `501 NotImplemented` (as s3s-fs does).
    pub no_object_attributes: bool,
    /// At most this many entries per listing page, whatever `max-keys` asks (as stores cap
    /// pages below S3's 1000); `None`: S3's 1000.
    pub page_entries: Option<usize>,
    /// S3 Express One Zone's directory buckets: ListObjectsV2 does not answer in key order
    /// (here in the order of a hash of each key or common prefix, across pages too; the
    /// continuation token an offset into that order).
    pub unordered_listings: bool,
    /// Garage 2.5.0: CompleteMultipartUpload with `x-amz-checksum-type` but no
    /// `x-amz-checksum-*` value is refused with `400 InvalidRequest: Cannot specify
    /// x-amz-checksum-type when no checksum algorithm is in use`.
    pub checksum_type_only_with_a_value: bool,
    /// Garage 2.5.0 (every managed multipart copy of a CRC32 object ended at that refusal,
    /// so no part copy carried its checksum back): UploadPartCopy answers without the part's
    /// checksum, whatever the upload's algorithm.
    pub no_checksums_on_part_copies: bool,
    /// A store that does much work per request (moto builds every ranged answer from the
    /// whole object): each GetObject answers only after this long, whatever its size.
    pub get_latency: Duration,
}

/// Attributes stored with an object (or given to an upload).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectAttributes {
    /// `Content-Type` (GET answers `binary/octet-stream` when none was given).
    pub content_type: Option<String>,
    /// `Cache-Control`.
    pub cache_control: Option<String>,
    /// `Content-Disposition`.
    pub content_disposition: Option<String>,
    /// `Content-Encoding` (without the transfer's `aws-chunked`).
    pub content_encoding: Option<String>,
    /// `Content-Language`.
    pub content_language: Option<String>,
    /// `Expires`, verbatim.
    pub expires: Option<String>,
    /// `x-amz-meta-*`, names without the prefix.
    pub metadata: BTreeMap<String, String>,
    /// `x-amz-storage-class`.
    pub storage_class: Option<String>,
    /// `x-amz-tagging`, verbatim (URL-encoded `k=v&...`).
    pub tagging: Option<String>,
    /// `x-amz-server-side-encryption`.
    pub sse: Option<String>,
    /// `x-amz-server-side-encryption-aws-kms-key-id`.
    pub sse_kms_key_id: Option<String>,
    /// `x-amz-server-side-encryption-bucket-key-enabled`.
    pub sse_bucket_key_enabled: Option<String>,
    /// `x-amz-server-side-encryption-customer-algorithm` (SSE-C).
    pub sse_customer_algorithm: Option<String>,
    /// `x-amz-server-side-encryption-customer-key-MD5` (SSE-C).
    pub sse_customer_key_md5: Option<String>,
}

/// An object's checksum as S3 reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredChecksum {
    /// The algorithm.
    pub algorithm: ChecksumAlgorithm,
    /// Base64 value; `...-N` for a composite multipart checksum.
    pub value: String,
    /// FULL_OBJECT or COMPOSITE.
    pub checksum_type: ChecksumType,
}

/// One part of a multipart object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPart {
    /// Bytes.
    pub size: u64,
    /// The part's own checksum (uploads with an algorithm).
    pub checksum: Option<Checksum>,
}

/// An object in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    /// The bytes.
    pub data: Bytes,
    /// Quoted ETag.
    pub etag: String,
    /// When it was written.
    pub last_modified: SystemTime,
    /// Content headers, metadata, storage class, tags, encryption.
    pub attributes: ObjectAttributes,
    /// Its checksum, if one was sent (or computed on completion or copy).
    pub checksum: Option<StoredChecksum>,
    /// The part layout of a multipart object.
    pub parts: Option<Vec<StoredPart>>,
}

impl StoredObject {
    /// The sizes of a multipart object's parts.
    pub fn part_sizes(&self) -> Option<Vec<u64>> {
        self.parts
            .as_ref()
            .map(|parts| parts.iter().map(|p| p.size).collect())
    }
}

/// A multipart upload that was created and neither completed nor aborted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenUpload {
    /// Bucket.
    pub bucket: String,
    /// Key.
    pub key: String,
    /// Upload id.
    pub upload_id: String,
    /// When it was created (moved back by [`FaultStore::age_uploads`]).
    pub initiated: SystemTime,
    /// Numbers of the parts uploaded so far.
    pub parts: Vec<u32>,
}

/// One request as the store handled it (without its body).
#[derive(Debug, Clone)]
pub struct RequestRecord {
    /// Method.
    #[allow(dead_code)] // shown in assertion messages (Debug)
    pub method: Method,
    /// Path as sent (percent-encoded).
    pub path: String,
    /// Query as sent (empty for none).
    pub query: String,
    /// The operation it was recognized as.
    pub operation: Op,
    /// Request headers.
    pub headers: HeaderMap,
    /// Body bytes received (as sent, aws-chunked framing included).
    pub body_len: u64,
    /// The fault injected, if any.
    pub fault: Option<FaultKind>,
    /// The status of the response head sent; `None` if none was (reset, stalled).
    pub status: Option<u16>,
    /// What fault decisions key on (see [`FaultPlan::decide`]).
    pub identity: String,
    /// How many requests with this identity came before (since the plan was set).
    pub occurrence: u64,
    /// `x-amz-request-id` of the answer.
    #[allow(dead_code)] // shown in assertion messages (Debug)
    pub request_id: String,
}

impl RequestRecord {
    /// The value of header `name`, if present and valid UTF-8.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)?.to_str().ok()
    }
}

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

struct UploadedPart {
    data: Bytes,
    md5: [u8; 16],
    etag: String,
    checksum: Option<Checksum>,
    last_modified: SystemTime,
}

struct Upload {
    bucket: String,
    key: String,
    upload_id: String,
    initiated: SystemTime,
    attributes: ObjectAttributes,
    checksum: Option<(ChecksumAlgorithm, ChecksumType)>,
    parts: BTreeMap<u32, UploadedPart>,
}

struct State {
    buckets: BTreeMap<String, BTreeMap<String, StoredObject>>,
    uploads: BTreeMap<String, Upload>,
    creations: HashMap<(String, String), u64>,
    min_part_size: u64,
    plan: FaultPlan,
    occurrences: HashMap<String, u64>,
    requests: Vec<RequestRecord>,
    request_counts: BTreeMap<Op, u64>,
    fault_counts: BTreeMap<FaultKind, u64>,
    signature_failures: u64,
    next_request: u64,
    endpoint: String,
    quirks: StoreQuirks,
}

impl State {
    fn object(&self, bucket: &str, key: &str) -> Option<&StoredObject> {
        self.buckets.get(bucket)?.get(key)
    }

    fn put(&mut self, bucket: &str, key: &str, object: StoredObject) {
        self.buckets
            .entry(bucket.to_owned())
            .or_default()
            .insert(key.to_owned(), object);
    }

    fn new_upload_id(&mut self, bucket: &str, key: &str) -> String {
        let count = self
            .creations
            .entry((bucket.to_owned(), key.to_owned()))
            .or_insert(0);
        let mut n = *count;
        *count += 1;
        let seed = fnv1a(format!("{bucket}/{key}").as_bytes());
        loop {
            let a = splitmix64(seed ^ splitmix64(n));
            let b = splitmix64(a ^ 0x2545_F491_4F6C_DD1D);
            let id = format!("fs{a:016x}{b:016x}");
            if !self.uploads.contains_key(&id) {
                return id;
            }
            n = n.wrapping_add(1 << 32);
        }
    }

    fn record(&mut self, record: RequestRecord) {
        if let Some(kind) = record.fault {
            *self.fault_counts.entry(kind).or_default() += 1;
        }
        self.requests.push(record);
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // A test that panicked while holding the lock must not hide its own failure behind ours.
    state.lock().unwrap_or_else(|poison| poison.into_inner())
}

// ---------------------------------------------------------------------------------------------
// The handle
// ---------------------------------------------------------------------------------------------

/// A running store; see the module docs.
pub struct FaultStore {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    _thread: ServerThread,
}

impl FaultStore {
    /// Starts an empty store without faults, S3's minimum part size.
    pub fn start() -> Self {
        let (listener, addr) = loopback_listener();
        let state = Arc::new(Mutex::new(State {
            buckets: BTreeMap::new(),
            uploads: BTreeMap::new(),
            creations: HashMap::new(),
            min_part_size: DEFAULT_MIN_PART_SIZE,
            plan: FaultPlan::none(),
            occurrences: HashMap::new(),
            requests: Vec::new(),
            request_counts: BTreeMap::new(),
            fault_counts: BTreeMap::new(),
            signature_failures: 0,
            next_request: 0,
            endpoint: format!("http://{addr}"),
            quirks: StoreQuirks::default(),
        }));
        let server_state = Arc::clone(&state);
        let thread = ServerThread::start("fault-store", listener, move |stream, socket| {
            let socket = Arc::new(socket);
            let state = Arc::clone(&server_state);
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    let state = Arc::clone(&state);
                    let socket = Arc::clone(&socket);
                    async move { handle(request, &state, &socket).await }
                });
                // Resets and aborted bodies are the point: ignore connection errors.
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        });
        Self {
            addr,
            state,
            _thread: thread,
        }
    }

    /// Starts an empty store without faults whose minimum part size is `bytes`.
    pub fn start_with_min_part_size(bytes: u64) -> Self {
        let store = Self::start();
        store.set_min_part_size(bytes);
        store
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A client builder for this store: endpoint, region, credentials, no proxy.
    pub fn client_builder(&self) -> s3_wire_tokio::ClientBuilder {
        s3_wire_tokio::Client::builder()
            .endpoint(self.endpoint())
            .region(REGION)
            .static_credentials(ACCESS_KEY, SECRET_KEY, None)
            .proxy_from_env(false)
    }

    /// The minimum size of every part but the last in CompleteMultipartUpload.
    pub fn set_min_part_size(&self, bytes: u64) {
        lock(&self.state).min_part_size = bytes;
    }

    /// Makes the store deviate from S3 as real stores do (see [`StoreQuirks`]).
    pub fn set_quirks(&self, quirks: StoreQuirks) {
        lock(&self.state).quirks = quirks;
    }

    /// Replaces the fault plan and restarts the per-identity occurrence counts.
    pub fn set_faults(&self, plan: FaultPlan) {
        let mut state = lock(&self.state);
        state.plan = plan;
        state.occurrences.clear();
    }

    /// The object stored under `key`, if any.
    pub fn object(&self, bucket: &str, key: &str) -> Option<StoredObject> {
        lock(&self.state).object(bucket, key).cloned()
    }

    /// The keys of `bucket`, sorted.
    pub fn keys(&self, bucket: &str) -> Vec<String> {
        lock(&self.state)
            .buckets
            .get(bucket)
            .map(|objects| objects.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Removes an object directly (as DeleteObject would); true if there was one.
    pub fn delete_object(&self, bucket: &str, key: &str) -> bool {
        lock(&self.state)
            .buckets
            .get_mut(bucket)
            .is_some_and(|objects| objects.remove(key).is_some())
    }

    /// Stores a single-part object directly (as PutObject would, with a FULL_OBJECT checksum
    /// of `checksum`'s algorithm if given).
    pub fn insert_object(
        &self,
        bucket: &str,
        key: &str,
        data: impl Into<Bytes>,
        checksum: Option<ChecksumAlgorithm>,
    ) -> StoredObject {
        let data = data.into();
        let object = StoredObject {
            etag: quoted_md5(&data),
            last_modified: SystemTime::now(),
            attributes: ObjectAttributes::default(),
            checksum: checksum.map(|algorithm| StoredChecksum {
                algorithm,
                value: algorithm.checksum(&data).to_base64(),
                checksum_type: ChecksumType::FullObject,
            }),
            parts: None,
            data,
        };
        lock(&self.state).put(bucket, key, object.clone());
        object
    }

    /// Flips one bit of the stored bytes of `key` at `offset`, keeping its ETag and checksums:
    /// corruption at rest, which only a checksum can reveal.
    pub fn corrupt(&self, bucket: &str, key: &str, offset: usize) {
        let mut state = lock(&self.state);
        let object = state
            .buckets
            .get_mut(bucket)
            .and_then(|objects| objects.get_mut(key))
            .expect("the object to corrupt");
        let mut data = object.data.to_vec();
        data[offset] ^= 0x01;
        object.data = Bytes::from(data);
    }

    /// Stores a multipart object directly, cut into `part_sizes` (which must add up to the
    /// data's length), with per-part checksums and the object checksum of `checksum`.
    pub fn insert_multipart_object(
        &self,
        bucket: &str,
        key: &str,
        data: impl Into<Bytes>,
        part_sizes: &[u64],
        checksum: Option<(ChecksumAlgorithm, ChecksumType)>,
    ) -> StoredObject {
        let data = data.into();
        assert_eq!(
            part_sizes.iter().sum::<u64>(),
            data.len() as u64,
            "part sizes must add up to the object's length"
        );
        assert!(!part_sizes.is_empty(), "a multipart object has parts");
        if let Some((algorithm, ChecksumType::FullObject)) = checksum {
            assert!(
                is_crc(algorithm),
                "FULL_OBJECT multipart checksums are CRCs"
            );
        }
        let mut offset = 0usize;
        let mut md5s = Vec::new();
        let mut parts = Vec::new();
        for &size in part_sizes {
            let piece = &data[offset..offset + size as usize];
            offset += size as usize;
            md5s.extend_from_slice(&md5(piece));
            parts.push(StoredPart {
                size,
                checksum: checksum.map(|(algorithm, _)| algorithm.checksum(piece)),
            });
        }
        let object = StoredObject {
            etag: format!("\"{}-{}\"", sigv4::hex(&md5(&md5s)), parts.len()),
            last_modified: SystemTime::now(),
            attributes: ObjectAttributes::default(),
            checksum: checksum.map(|(algorithm, checksum_type)| {
                multipart_checksum(algorithm, checksum_type, &data, &parts)
            }),
            parts: Some(parts),
            data,
        };
        lock(&self.state).put(bucket, key, object.clone());
        object
    }

    /// The uploads created and neither completed nor aborted, by bucket, key and creation.
    pub fn open_uploads(&self) -> Vec<OpenUpload> {
        let state = lock(&self.state);
        let mut uploads: Vec<OpenUpload> = state
            .uploads
            .values()
            .map(|upload| OpenUpload {
                bucket: upload.bucket.clone(),
                key: upload.key.clone(),
                upload_id: upload.upload_id.clone(),
                initiated: upload.initiated,
                parts: upload.parts.keys().copied().collect(),
            })
            .collect();
        uploads.sort_by(|a, b| {
            (&a.bucket, &a.key, a.initiated, &a.upload_id).cmp(&(
                &b.bucket,
                &b.key,
                b.initiated,
                &b.upload_id,
            ))
        });
        uploads
    }

    /// Moves the `Initiated` time of every open upload `by` into the past.
    pub fn age_uploads(&self, by: Duration) {
        for upload in lock(&self.state).uploads.values_mut() {
            upload.initiated = upload.initiated.checked_sub(by).unwrap_or(UNIX_EPOCH);
        }
    }

    /// Every request handled so far, in the order they were answered (or given up on).
    pub fn requests(&self) -> Vec<RequestRecord> {
        lock(&self.state).requests.clone()
    }

    /// Forgets the recorded requests (counts are kept).
    pub fn clear_requests(&self) {
        lock(&self.state).requests.clear();
    }

    /// Requests received per operation.
    pub fn request_counts(&self) -> BTreeMap<Op, u64> {
        lock(&self.state).request_counts.clone()
    }

    /// Faults injected per kind.
    pub fn fault_counts(&self) -> BTreeMap<FaultKind, u64> {
        lock(&self.state).fault_counts.clone()
    }

    /// Requests refused for a missing or wrong signature (header, chunk or trailer).
    pub fn signature_failures(&self) -> u64 {
        lock(&self.state).signature_failures
    }
}

// ---------------------------------------------------------------------------------------------
// Serving
// ---------------------------------------------------------------------------------------------

/// What a request addresses.
struct Target {
    bucket: Option<String>,
    key: Option<String>,
    /// Decoded query parameters, in order (`None` for a value-less one like `uploads`).
    query: Vec<(String, Option<String>)>,
    op: Op,
}

impl Target {
    fn parse(method: &Method, path: &str, raw_query: &str, headers: &HeaderMap) -> Self {
        let path = path.strip_prefix('/').unwrap_or(path);
        let (bucket, key) = match path.split_once('/') {
            Some((bucket, key)) if !key.is_empty() => (bucket, Some(key)),
            Some((bucket, _)) => (bucket, None),
            None => (path, None),
        };
        let bucket = (!bucket.is_empty()).then(|| percent_decode_lossy(bucket));
        let key = key.map(percent_decode_lossy);
        let query: Vec<(String, Option<String>)> = raw_query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((name, value)) => (
                    percent_decode_lossy(name),
                    Some(percent_decode_lossy(value)),
                ),
                None => (percent_decode_lossy(pair), None),
            })
            .collect();
        let mut target = Target {
            bucket,
            key,
            query,
            op: Op::Unknown,
        };
        target.op = target.classify(method, headers);
        target
    }

    fn has(&self, name: &str) -> bool {
        self.query.iter().any(|(n, _)| n == name)
    }

    fn q(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    fn classify(&self, method: &Method, headers: &HeaderMap) -> Op {
        const KNOWN: [&str; 21] = [
            "uploads",
            "uploadId",
            "partNumber",
            "versionId",
            "max-parts",
            "part-number-marker",
            "max-uploads",
            "key-marker",
            "upload-id-marker",
            "prefix",
            "delimiter",
            "encoding-type",
            "list-type",
            "continuation-token",
            "start-after",
            "marker",
            "attributes",
            "max-keys",
            "fetch-owner",
            "delete",
            "x-id",
        ];
        let unknown_parameter = self.query.iter().any(|(name, _)| {
            !KNOWN.contains(&name.as_str())
                && !name.starts_with("response-")
                && !name.to_ascii_lowercase().starts_with("x-amz-")
        });
        if unknown_parameter || self.bucket.is_none() {
            return Op::Unknown;
        }
        let copy = headers.contains_key("x-amz-copy-source");
        let upload = self.has("uploadId");
        match (method.as_str(), self.key.is_some()) {
            ("PUT", true) if upload && self.has("partNumber") => {
                if copy {
                    Op::UploadPartCopy
                } else {
                    Op::UploadPart
                }
            }
            ("PUT", true) if !upload && !self.has("uploads") => {
                if copy {
                    Op::CopyObject
                } else {
                    Op::PutObject
                }
            }
            ("GET", true) if upload => Op::ListParts,
            ("GET", true) if self.has("attributes") => Op::GetObjectAttributes,
            ("GET", true) if !self.has("uploads") => Op::GetObject,
            ("HEAD", true) if !upload => Op::HeadObject,
            ("POST", true) if self.has("uploads") => Op::CreateMultipartUpload,
            ("POST", true) if upload => Op::CompleteMultipartUpload,
            ("DELETE", true) if upload => Op::AbortMultipartUpload,
            ("DELETE", true) => Op::DeleteObject,
            ("PUT", false) if self.query.is_empty() => Op::CreateBucket,
            ("HEAD", false) if self.query.is_empty() => Op::HeadBucket,
            ("DELETE", false) if self.query.is_empty() => Op::DeleteBucket,
            ("GET", false) if self.has("uploads") => Op::ListMultipartUploads,
            ("GET", false) if self.q("list-type") == Some("2") => Op::ListObjectsV2,
            ("GET", false) if !self.has("list-type") => Op::ListObjects,
            ("POST", false) if self.has("delete") => Op::DeleteObjects,
            _ => Op::Unknown,
        }
    }
}

/// The identity fault decisions key on ([`RequestRecord::identity`]): the method, the path
/// and query as sent (query parameters sorted, `X-Amz-*` presign parameters left out), and
/// the `Range` header. Lets a test predict decisions with [`FaultPlan::decide`].
pub fn request_identity(method: &str, path: &str, query: &str, range: Option<&str>) -> String {
    let mut pairs: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty() && !p.to_ascii_lowercase().starts_with("x-amz-"))
        .collect();
    pairs.sort_unstable();
    format!(
        "{method} {path}?{} range={}",
        pairs.join("&"),
        range.unwrap_or("")
    )
}

fn identity_of(method: &Method, path: &str, raw_query: &str, headers: &HeaderMap) -> String {
    request_identity(method.as_str(), path, raw_query, header(headers, "range"))
}

/// An answer before it is sent (the request id is filled in then).
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Bytes,
    /// For HEAD: the `Content-Length` a GET would have announced.
    head_length: Option<u64>,
    /// The body is an error document with the request-id placeholder.
    error: bool,
}

type Outcome = Result<Answer, Answer>;

impl Answer {
    fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Bytes::new(),
            head_length: None,
            error: false,
        }
    }

    fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    fn headers(mut self, headers: Vec<(String, String)>) -> Self {
        self.headers.extend(headers);
        self
    }

    fn body(mut self, body: Bytes) -> Self {
        self.body = body;
        self
    }

    fn xml(document: String) -> Self {
        Self::new(200)
            .header("content-type", "application/xml")
            .body(Bytes::from(document))
    }

    fn error(status: u16, code: &str, message: &str) -> Self {
        Self::error_with(status, code, message, &[])
    }

    fn error_with(status: u16, code: &str, message: &str, extra: &[(&str, String)]) -> Self {
        let mut answer = Self::new(status)
            .header("content-type", "application/xml")
            .body(Bytes::from(error_document(code, message, extra)));
        answer.error = true;
        answer
    }

    fn is_bodiless(&self, head: bool) -> bool {
        head || self.body.is_empty() || matches!(self.status, 204 | 304)
    }
}

fn error_document(code: &str, message: &str, extra: &[(&str, String)]) -> String {
    let mut doc = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{}</Code><Message>{}</Message>",
        escape(code),
        escape(message)
    );
    for (name, value) in extra {
        doc.push_str(&format!("<{name}>{}</{name}>", escape(value)));
    }
    doc.push_str(&format!(
        "<RequestId>{REQUEST_ID_PLACEHOLDER}</RequestId><HostId>fault-store</HostId></Error>"
    ));
    doc
}

/// How the body of an answer is delivered.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Delivery {
    Whole,
    /// Half the body, then the connection is aborted.
    Truncated,
    /// Half the body, then nothing.
    Stalled,
}

fn build_response(
    answer: Answer,
    request_id: &str,
    head: bool,
    delivery: Delivery,
) -> Response<ScriptedBody> {
    let mut body = answer.body;
    if answer.error
        && let Ok(text) = std::str::from_utf8(&body)
    {
        body = Bytes::from(text.replace(REQUEST_ID_PLACEHOLDER, request_id));
    }
    let no_length = matches!(answer.status, 204 | 304);
    let (declared, body) = if head || no_length {
        (answer.head_length.unwrap_or(0), Bytes::new())
    } else {
        (body.len() as u64, body)
    };
    let scripted = match delivery {
        Delivery::Whole => ScriptedBody::new(body, declared, Tail::End),
        Delivery::Truncated => {
            ScriptedBody::new(body.slice(..body.len() / 2), declared, Tail::Abort)
        }
        Delivery::Stalled => ScriptedBody::new(body.slice(..body.len() / 2), declared, Tail::Hang),
    };
    let mut response = Response::new(scripted);
    *response.status_mut() =
        StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let map = response.headers_mut();
    if !no_length {
        map.insert(http::header::CONTENT_LENGTH, HeaderValue::from(declared));
    }
    if let Ok(value) = HeaderValue::from_str(request_id) {
        map.insert("x-amz-request-id", value.clone());
        map.insert("x-amz-id-2", value);
    }
    map.insert("server", HeaderValue::from_static("FaultStore"));
    for (name, value) in answer.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            map.append(name, value);
        }
    }
    response
}

/// Everything an operation handler needs about the request.
struct Ctx<'a> {
    headers: &'a HeaderMap,
    target: &'a Target,
    /// The request body: an upload's payload, or an XML document.
    payload: Payload,
    now: SystemTime,
}

impl Ctx<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        header(self.headers, name)
    }

    fn bucket(&self) -> &str {
        self.target.bucket.as_deref().unwrap_or_default()
    }

    fn key(&self) -> &str {
        self.target.key.as_deref().unwrap_or_default()
    }
}

async fn handle(
    request: http::Request<Incoming>,
    state: &Mutex<State>,
    socket: &tokio::net::TcpStream,
) -> Result<Response<ScriptedBody>, io::Error> {
    let (parts, mut body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let raw_query = parts.uri.query().unwrap_or("").to_owned();
    let target = Target::parse(&parts.method, &path, &raw_query, &parts.headers);
    let identity = identity_of(&parts.method, &path, &raw_query, &parts.headers);
    let head = parts.method == Method::HEAD;
    let (request_id, occurrence, fault, quirks) = {
        let mut state = lock(state);
        state.next_request += 1;
        let request_id = format!("FSREQ{:08}", state.next_request);
        let count = state.occurrences.entry(identity.clone()).or_insert(0);
        let occurrence = *count;
        *count += 1;
        *state.request_counts.entry(target.op).or_default() += 1;
        let fault = state.plan.decide(target.op, &identity, occurrence);
        (request_id, occurrence, fault, state.quirks)
    };
    let mut record = RequestRecord {
        method: parts.method.clone(),
        path,
        query: raw_query,
        operation: target.op,
        headers: parts.headers.clone(),
        body_len: 0,
        fault: None,
        status: None,
        identity,
        occurrence,
        request_id: request_id.clone(),
    };

    if fault == Some(FaultKind::StalledRequest) {
        record.fault = fault;
        lock(state).record(record);
        // Keep the body unread (the client's writes stall once the socket buffers fill).
        return std::future::pending().await;
    }

    // A header S3 takes once, sent twice (as s3s refuses it): which value would count?
    if let Some(name) = parts.headers.keys().find(|name| {
        name.as_str().starts_with("x-amz-checksum-")
            && parts.headers.get_all(*name).iter().count() > 1
    }) {
        let answer = Answer::error(400, "InvalidRequest", &format!("duplicate header: {name}"));
        record.status = Some(answer.status);
        lock(state).record(record);
        return Ok(build_response(answer, &request_id, head, Delivery::Whole));
    }
    if quirks.refuse_signed_trailers_unread
        && header(&parts.headers, "x-amz-content-sha256")
            == Some("STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER")
    {
        let answer = Answer::error(400, "InvalidRequest", "Invalid payload signature");
        record.status = Some(answer.status);
        lock(state).record(record);
        return Ok(build_response(answer, &request_id, head, Delivery::Whole));
    }

    // Read the whole body, frame by frame (so that an abandoned upload is still recorded),
    // hashing a plain body as it arrives: SHA-256 for the signature, MD5 for the ETag and the
    // announced checksum. (Debug builds hash at tens of MB/s; afterwards would leave the
    // client without progress for long enough to trip short stall timeouts.)
    let content_sha256 = header(&parts.headers, "x-amz-content-sha256").unwrap_or("");
    let streaming = content_sha256.starts_with("STREAMING-");
    let mut sha256 = is_hex_digest(content_sha256).then(Sha256::new);
    let mut md5 = (!streaming).then(Md5::new);
    let mut checksummer = if streaming {
        None
    } else {
        ChecksumAlgorithm::ALL
            .into_iter()
            .find(|a| parts.headers.contains_key(a.header_name()))
            .map(Checksummer::new)
    };
    let mut received = BytesMut::new();
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Some(data) = frame.data_ref() {
                    received.extend_from_slice(data);
                    if let Some(hasher) = sha256.as_mut() {
                        hasher.update(data);
                    }
                    if let Some(hasher) = md5.as_mut() {
                        hasher.update(data);
                    }
                    if let Some(checksummer) = checksummer.as_mut() {
                        checksummer.update(data);
                    }
                }
            }
            Err(_) => {
                record.body_len = received.len() as u64;
                lock(state).record(record);
                return Err(io::Error::other("request body aborted by the client"));
            }
        }
    }
    let raw = received.freeze();
    record.body_len = raw.len() as u64;
    let raw_sha256 = sha256.map(|hasher| sigv4::hex(&hasher.finalize()));

    let target_str = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let verified = match authenticate(
        &parts.method,
        target_str,
        &parts.headers,
        raw_sha256.as_deref(),
    ) {
        Ok(signed) if streaming => {
            // Decoding and checking every chunk signature is slow in debug builds: off the
            // server's only thread, so that other connections keep moving.
            let headers = parts.headers.clone();
            let raw = raw.clone();
            tokio::task::spawn_blocking(move || decode_streaming(&raw, &signed, &headers))
                .await
                .unwrap_or_else(|_| {
                    Err((
                        Answer::error(500, "InternalError", "aws-chunked decoding panicked"),
                        false,
                    ))
                })
        }
        Ok(_) => Ok(Payload {
            data: raw,
            trailers: Vec::new(),
            chunked: false,
            md5: md5.map_or([0; 16], |hasher| bytes16(&hasher.finalize())),
            checksum: checksummer.map(Checksummer::finish),
        }),
        Err(refused) => Err(refused),
    };
    let verified = match verified {
        Ok(_)
            if quirks.refuse_signed_trailers
                && content_sha256 == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER" =>
        {
            Err((
                Answer::error(400, "InvalidRequest", "Invalid payload signature"),
                false,
            ))
        }
        verified => verified,
    };
    let payload = match verified {
        Ok(payload) => payload,
        Err((answer, counted)) => {
            let mut state = lock(state);
            if counted {
                state.signature_failures += 1;
            }
            record.status = Some(answer.status);
            state.record(record);
            return Ok(build_response(answer, &request_id, head, Delivery::Whole));
        }
    };

    // Faults that stop the request before it takes effect.
    let early = match fault {
        Some(FaultKind::SlowDown) => Some(Answer::error(
            503,
            "SlowDown",
            "Please reduce your request rate.",
        )),
        Some(FaultKind::InternalError) => Some(Answer::error(
            500,
            "InternalError",
            "We encountered an internal error. Please try again.",
        )),
        Some(FaultKind::ErrorIn200) => {
            let mut answer = Answer::new(200)
                .header("content-type", "application/xml")
                .body(Bytes::from(format!(
                    "\n \n {}",
                    error_document(
                        "InternalError",
                        "We encountered an internal error. Please try again.",
                        &[]
                    )
                )));
            answer.error = true;
            Some(answer)
        }
        _ => None,
    };
    if let Some(answer) = early {
        record.fault = fault;
        record.status = Some(answer.status);
        lock(state).record(record);
        return Ok(build_response(answer, &request_id, head, Delivery::Whole));
    }
    if fault == Some(FaultKind::ResetBeforeApply) {
        record.fault = fault;
        lock(state).record(record);
        socket.set_zero_linger()?;
        return Err(io::Error::other("fault: reset before apply"));
    }

    if target.op == Op::GetObject && !quirks.get_latency.is_zero() {
        tokio::time::sleep(quirks.get_latency).await;
    }
    let ctx = Ctx {
        headers: &parts.headers,
        target: &target,
        payload,
        now: SystemTime::now(),
    };
    let answer = if target.op == Op::CompleteMultipartUpload {
        complete_multipart_upload(state, &ctx).await
    } else {
        let mut state = lock(state);
        apply(&mut state, &ctx)
    }
    .unwrap_or_else(|error| error);
    record.fault = fault;
    let delivery = match fault {
        None => Delivery::Whole,
        Some(FaultKind::ResetAfterApply) => {
            lock(state).record(record);
            socket.set_zero_linger()?;
            return Err(io::Error::other("fault: reset after apply"));
        }
        Some(FaultKind::TruncatedResponse) if answer.is_bodiless(head) => {
            lock(state).record(record);
            socket.set_zero_linger()?;
            return Err(io::Error::other("fault: truncated bodiless response"));
        }
        Some(FaultKind::StalledResponse) if answer.is_bodiless(head) => {
            lock(state).record(record);
            return std::future::pending().await;
        }
        Some(FaultKind::TruncatedResponse) => Delivery::Truncated,
        Some(FaultKind::StalledResponse) => Delivery::Stalled,
        Some(_) => Delivery::Whole,
    };
    record.status = Some(answer.status);
    lock(state).record(record);
    Ok(build_response(answer, &request_id, head, delivery))
}

fn is_hex_digest(value: &str) -> bool {
    value.len() == 64 && value.bytes().all(|b| b.is_ascii_hexdigit())
}

fn bytes16(digest: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

/// An upload's payload, decoded and hashed.
struct Payload {
    /// The object bytes (aws-chunked framing removed).
    data: Bytes,
    /// Trailing headers of an aws-chunked body.
    trailers: Vec<(String, String)>,
    /// It was sent aws-chunked.
    chunked: bool,
    /// MD5 of `data`.
    md5: [u8; 16],
    /// The checksum of `data` for the algorithm the request announces (header or trailer),
    /// computed ahead; [`verify_payload`] compares it.
    checksum: Option<Checksum>,
}

/// Checks the request's header signature (and, for a hex `x-amz-content-sha256`, that it is
/// the SHA-256 of the body received). An error says whether it counts as a signature failure.
fn authenticate(
    method: &Method,
    target: &str,
    headers: &HeaderMap,
    body_sha256: Option<&str>,
) -> Result<sigv4::Signed, (Answer, bool)> {
    let denied = |status, code: &str, message: &str| (Answer::error(status, code, message), true);
    let Some(authorization) = header(headers, "authorization") else {
        return Err(denied(
            403,
            "AccessDenied",
            "Anonymous requests are not accepted.",
        ));
    };
    let access_key = authorization
        .split_once("Credential=")
        .map(|(_, rest)| rest.split('/').next().unwrap_or(""))
        .unwrap_or("");
    if access_key != ACCESS_KEY {
        return Err(denied(
            403,
            "InvalidAccessKeyId",
            "The AWS Access Key Id you provided does not exist in our records.",
        ));
    }
    let signed = sigv4::verify(method.as_str(), target, headers, None, SECRET_KEY)
        .map_err(|reason| denied(403, "SignatureDoesNotMatch", &reason))?;
    if signed.region != REGION {
        return Err((
            Answer::error_with(
                400,
                "AuthorizationHeaderMalformed",
                "The authorization header is malformed; the region is wrong.",
                &[("Region", REGION.to_owned())],
            ),
            true,
        ));
    }
    if is_hex_digest(&signed.payload) && body_sha256 != Some(signed.payload.as_str()) {
        return Err(denied(
            400,
            "XAmzContentSHA256Mismatch",
            &format!(
                "The provided 'x-amz-content-sha256' header {} does not match what was computed: {}",
                signed.payload,
                body_sha256.unwrap_or("")
            ),
        ));
    }
    Ok(signed)
}

/// Decodes an aws-chunked body, checks its chunk and trailer signatures (signed variants)
/// and its decoded length, and hashes the payload.
fn decode_streaming(
    body: &[u8],
    signed: &sigv4::Signed,
    headers: &HeaderMap,
) -> Result<Payload, (Answer, bool)> {
    let denied = |message: &str| (Answer::error(403, "SignatureDoesNotMatch", message), true);
    let bad_body = |message: String| (Answer::error(400, "IncompleteBody", &message), false);
    let decoded = aws_chunked::decode(body).map_err(|e| bad_body(format!("aws-chunked: {e}")))?;
    match signed.payload.as_str() {
        "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" | "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER" => {
            aws_chunked::verify_signatures(&decoded, signed, SECRET_KEY)
                .map_err(|reason| denied(&reason))?;
            let with_trailer = signed.payload.ends_with("-TRAILER");
            if with_trailer && decoded.trailer_signature.is_none() {
                return Err(denied(
                    "the trailer of a signed aws-chunked body is not signed",
                ));
            }
            if !with_trailer
                && (!decoded.trailers.is_empty() || decoded.trailer_signature.is_some())
            {
                return Err(bad_body(
                    "trailers sent with STREAMING-AWS4-HMAC-SHA256-PAYLOAD".into(),
                ));
            }
        }
        "STREAMING-UNSIGNED-PAYLOAD-TRAILER" => {
            if !decoded.chunk_signatures.is_empty() || decoded.trailer_signature.is_some() {
                return Err(bad_body(
                    "signatures in an unsigned aws-chunked body".into(),
                ));
            }
        }
        other => return Err(bad_body(format!("unknown streaming payload {other}"))),
    }
    match header(headers, "x-amz-decoded-content-length").map(str::parse::<u64>) {
        Some(Ok(len)) if len == decoded.data.len() as u64 => {}
        Some(Ok(len)) => {
            return Err(bad_body(format!(
                "x-amz-decoded-content-length {len}, but {} bytes were decoded",
                decoded.data.len()
            )));
        }
        _ => {
            return Err((
                Answer::error(
                    411,
                    "MissingContentLength",
                    "x-amz-decoded-content-length is missing or invalid",
                ),
                false,
            ));
        }
    }
    let algorithm = ChecksumAlgorithm::ALL.into_iter().find(|a| {
        let name = a.header_name();
        headers.contains_key(&name)
            || decoded
                .trailers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name.as_str()))
    });
    Ok(Payload {
        md5: md5(&decoded.data),
        checksum: algorithm.map(|a| a.checksum(&decoded.data)),
        trailers: decoded.trailers,
        chunked: true,
        data: Bytes::from(decoded.data),
    })
}

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------

fn apply(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    sse_customer_key_well_formed(ctx.headers, "x-amz-")?;
    sse_customer_key_well_formed(ctx.headers, "x-amz-copy-source-")?;
    match ctx.target.op {
        Op::PutObject => put_object(state, ctx),
        Op::GetObject => get_object(state, ctx, false),
        Op::HeadObject => get_object(state, ctx, true),
        Op::GetObjectAttributes if state.quirks.no_object_attributes => Err(Answer::error(
            501,
            "NotImplemented",
            "GetObjectAttributes is not implemented",
        )),
        Op::GetObjectAttributes => get_object_attributes(state, ctx),
        Op::DeleteObject => delete_object(state, ctx),
        Op::DeleteObjects => delete_objects(state, ctx),
        Op::CopyObject => copy_object(state, ctx),
        Op::CreateMultipartUpload => create_multipart_upload(state, ctx),
        Op::UploadPart => upload_part(state, ctx),
        Op::UploadPartCopy => upload_part_copy(state, ctx),
        // Completion runs in phases, off the lock in between: see `handle`.
        Op::CompleteMultipartUpload => Err(Answer::error(500, "InternalError", "unreachable")),
        Op::AbortMultipartUpload => abort_multipart_upload(state, ctx),
        Op::ListParts => list_parts(state, ctx),
        Op::ListMultipartUploads if state.quirks.no_list_multipart_uploads => Err(Answer::error(
            501,
            "NotImplemented",
            "A header you provided implies functionality that is not implemented",
        )),
        Op::ListMultipartUploads => list_multipart_uploads(state, ctx),
        Op::ListObjectsV2 if state.quirks.version_1_listings_only => {
            list_objects(state, ctx, Listing::Version1)
        }
        Op::ListObjectsV2 => list_objects(state, ctx, Listing::Version2),
        Op::ListObjects => list_objects(state, ctx, Listing::Version1),
        Op::CreateBucket => {
            state.buckets.entry(ctx.bucket().to_owned()).or_default();
            Ok(Answer::new(200).header("location", format!("/{}", ctx.bucket())))
        }
        Op::HeadBucket => Ok(Answer::new(200).header("x-amz-bucket-region", REGION)),
        Op::DeleteBucket => {
            let bucket = ctx.bucket();
            let busy = state.buckets.get(bucket).is_some_and(|b| !b.is_empty())
                || state.uploads.values().any(|u| u.bucket == bucket);
            if busy {
                return Err(Answer::error(
                    409,
                    "BucketNotEmpty",
                    "The bucket you tried to delete is not empty",
                ));
            }
            state.buckets.remove(bucket);
            Ok(Answer::new(204))
        }
        Op::Unknown => Err(Answer::error(
            501,
            "NotImplemented",
            "A header or query you provided implies functionality that is not implemented.",
        )),
    }
}

fn no_such_key(key: &str) -> Answer {
    Answer::error_with(
        404,
        "NoSuchKey",
        "The specified key does not exist.",
        &[("Key", key.to_owned())],
    )
}

fn no_such_upload(upload_id: &str) -> Answer {
    Answer::error_with(
        404,
        "NoSuchUpload",
        "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
        &[("UploadId", upload_id.to_owned())],
    )
}

fn invalid_request(message: &str) -> Answer {
    Answer::error(400, "InvalidRequest", message)
}

fn invalid_argument(message: &str) -> Answer {
    Answer::error(400, "InvalidArgument", message)
}

fn precondition_failed(condition: &str) -> Answer {
    Answer::error_with(
        412,
        "PreconditionFailed",
        "At least one of the pre-conditions you specified did not hold",
        &[("Condition", condition.to_owned())],
    )
}

/// The checksum an upload's payload carries (header or trailer), verified against the data,
/// and the `Content-MD5` check. Nothing is stored on failure.
fn verify_payload(ctx: &Ctx<'_>) -> Result<Option<Checksum>, Answer> {
    if let Some(declared) = ctx.header("x-amz-trailer") {
        for name in declared.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if !ctx
                .payload
                .trailers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                return Err(Answer::error(
                    400,
                    "MalformedTrailerError",
                    &format!("The request declared trailer {name} but did not send it."),
                ));
            }
        }
    }
    let mut sent: Vec<(ChecksumAlgorithm, String)> = Vec::new();
    for algorithm in ChecksumAlgorithm::ALL {
        let name = algorithm.header_name();
        if let Some(value) = ctx.header(name.as_str()) {
            sent.push((algorithm, value.trim().to_owned()));
        }
        if let Some((_, value)) = ctx
            .payload
            .trailers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.as_str()))
        {
            sent.push((algorithm, value.trim().to_owned()));
        }
    }
    if sent.len() > 1 {
        return Err(invalid_request(
            "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.",
        ));
    }
    if let Some(sdk) = ctx.header("x-amz-sdk-checksum-algorithm") {
        let algorithm = parse_algorithm(sdk)?;
        if !sent.iter().any(|(a, _)| *a == algorithm) {
            return Err(invalid_request(
                "x-amz-sdk-checksum-algorithm specified, but no corresponding x-amz-checksum-* or x-amz-trailer headers were found.",
            ));
        }
    }
    if let Some(value) = ctx.header("content-md5") {
        let value = value.trim();
        if value.len() != 24 {
            return Err(Answer::error(
                400,
                "InvalidDigest",
                "The Content-MD5 you specified was invalid.",
            ));
        }
        if crate::support::base64(&ctx.payload.md5) != value {
            return Err(Answer::error(
                400,
                "BadDigest",
                "The Content-MD5 you specified did not match what we received.",
            ));
        }
    }
    let Some((algorithm, value)) = sent.pop() else {
        return Ok(None);
    };
    let claimed = Checksum::from_base64(algorithm, &value).map_err(|_| {
        invalid_request(&format!(
            "Value for {} header is invalid.",
            algorithm.header_name().as_str()
        ))
    })?;
    let actual = match &ctx.payload.checksum {
        Some(computed) if computed.algorithm() == algorithm => computed.clone(),
        _ => algorithm.checksum(&ctx.payload.data),
    };
    if actual != claimed {
        return Err(Answer::error(
            400,
            "BadDigest",
            &format!("The {algorithm} you specified did not match the calculated checksum."),
        ));
    }
    Ok(Some(actual))
}

fn parse_algorithm(value: &str) -> Result<ChecksumAlgorithm, Answer> {
    value
        .parse::<ChecksumAlgorithm>()
        .map_err(|_| invalid_request(&format!("Checksum algorithm {value:?} is not supported.")))
}

fn is_crc(algorithm: ChecksumAlgorithm) -> bool {
    matches!(
        algorithm,
        ChecksumAlgorithm::Crc32 | ChecksumAlgorithm::Crc32c | ChecksumAlgorithm::Crc64Nvme
    )
}

/// Object attributes from request headers.
fn attributes_from(ctx: &Ctx<'_>) -> ObjectAttributes {
    let get = |name: &str| ctx.header(name).map(str::to_owned);
    let content_encoding = ctx.header("content-encoding").and_then(|value| {
        let rest: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty() && (!ctx.payload.chunked || *e != "aws-chunked"))
            .collect();
        (!rest.is_empty()).then(|| rest.join(","))
    });
    let metadata = ctx
        .headers
        .iter()
        .filter_map(|(name, value)| {
            let name = name.as_str().strip_prefix("x-amz-meta-")?;
            Some((
                name.to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            ))
        })
        .collect();
    ObjectAttributes {
        content_type: get("content-type"),
        cache_control: get("cache-control"),
        content_disposition: get("content-disposition"),
        content_encoding,
        content_language: get("content-language"),
        expires: get("expires"),
        metadata,
        storage_class: get("x-amz-storage-class"),
        tagging: get("x-amz-tagging"),
        sse: get("x-amz-server-side-encryption"),
        sse_kms_key_id: get("x-amz-server-side-encryption-aws-kms-key-id"),
        sse_bucket_key_enabled: get("x-amz-server-side-encryption-bucket-key-enabled"),
        sse_customer_algorithm: get("x-amz-server-side-encryption-customer-algorithm"),
        sse_customer_key_md5: get("x-amz-server-side-encryption-customer-key-md5"),
    }
}

fn encryption_headers(attributes: &ObjectAttributes) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut push = |name: &str, value: &Option<String>| {
        if let Some(value) = value {
            out.push((name.to_owned(), value.clone()));
        }
    };
    push("x-amz-server-side-encryption", &attributes.sse);
    push(
        "x-amz-server-side-encryption-aws-kms-key-id",
        &attributes.sse_kms_key_id,
    );
    push(
        "x-amz-server-side-encryption-bucket-key-enabled",
        &attributes.sse_bucket_key_enabled,
    );
    push(
        "x-amz-server-side-encryption-customer-algorithm",
        &attributes.sse_customer_algorithm,
    );
    push(
        "x-amz-server-side-encryption-customer-key-md5",
        &attributes.sse_customer_key_md5,
    );
    out
}

fn checksum_headers(checksum: &StoredChecksum) -> Vec<(String, String)> {
    vec![
        (
            checksum.algorithm.header_name().as_str().to_owned(),
            checksum.value.clone(),
        ),
        (
            "x-amz-checksum-type".to_owned(),
            checksum.checksum_type.as_str().to_owned(),
        ),
    ]
}

/// `If-None-Match: *` and `If-Match` on a write, evaluated against what is stored now.
fn write_conditions(headers: &HeaderMap, existing: Option<&StoredObject>) -> Result<(), Answer> {
    if let Some(value) = header(headers, "if-none-match") {
        if value.trim() != "*" {
            return Err(Answer::error(
                501,
                "NotImplemented",
                "If-None-Match on writes takes only *.",
            ));
        }
        if existing.is_some() {
            return Err(precondition_failed("If-None-Match"));
        }
    }
    if let Some(value) = header(headers, "if-match") {
        match existing {
            None => return Err(no_such_key("")),
            Some(object) if !etag_matches(value, &object.etag) => {
                return Err(precondition_failed("If-Match"));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// `If-Match` / `If-Unmodified-Since` (412) and `If-None-Match` / `If-Modified-Since` (304,
/// or 412 for a copy source), with `prefix` `""` or `"x-amz-copy-source-"`.
fn read_conditions(headers: &HeaderMap, object: &StoredObject, prefix: &str) -> Result<(), Answer> {
    let get = |name: &str| header(headers, &format!("{prefix}{name}"));
    let modified = unix_seconds(object.last_modified);
    let copy = !prefix.is_empty();
    match get("if-match") {
        Some(value) if !etag_matches(value, &object.etag) => {
            return Err(precondition_failed("If-Match"));
        }
        Some(_) => {}
        None => {
            if let Some(since) = get("if-unmodified-since").and_then(parse_http_date)
                && modified > since
            {
                return Err(precondition_failed("If-Unmodified-Since"));
            }
        }
    }
    let not_modified = || {
        if copy {
            precondition_failed("x-amz-copy-source-If-None-Match")
        } else {
            Answer::new(304)
                .header("etag", object.etag.clone())
                .header("last-modified", http_date(object.last_modified))
        }
    };
    match get("if-none-match") {
        Some(value) if etag_matches(value, &object.etag) => return Err(not_modified()),
        Some(_) => {}
        None => {
            if let Some(since) = get("if-modified-since").and_then(parse_http_date)
                && modified <= since
            {
                return Err(not_modified());
            }
        }
    }
    Ok(())
}

/// An SSE-C key as S3 takes it (`prefix` as in [`read_conditions`]): algorithm `AES256`, a
/// 256-bit key in base64, and the base64 MD5 of the key beside it.
fn sse_customer_key_well_formed(headers: &HeaderMap, prefix: &str) -> Result<(), Answer> {
    let field = |name: &str| {
        header(
            headers,
            &format!("{prefix}server-side-encryption-customer-{name}"),
        )
    };
    let (algorithm, key, key_md5) = (field("algorithm"), field("key"), field("key-md5"));
    if algorithm.is_none() && key.is_none() && key_md5.is_none() {
        return Ok(());
    }
    if algorithm != Some("AES256") {
        return Err(invalid_argument(
            "The encryption request you specified is not valid. The valid value is AES256.",
        ));
    }
    let Some(key) = key
        .and_then(crate::support::base64_decode)
        .filter(|k| k.len() == 32)
    else {
        return Err(invalid_argument(
            "The secret key was invalid for the specified algorithm.",
        ));
    };
    if key_md5 != Some(crate::support::base64(&md5(&key)).as_str()) {
        return Err(invalid_argument(
            "The calculated MD5 hash of the key did not match the hash that was provided.",
        ));
    }
    Ok(())
}

/// Every part, and the completion, of an SSE-C upload carries the upload's own key (S3: "you
/// must provide identical encryption information in each part upload request").
fn sse_customer_upload_check(upload: &Upload, headers: &HeaderMap) -> Result<(), Answer> {
    let sent = header(headers, "x-amz-server-side-encryption-customer-key-md5");
    if sent == upload.attributes.sse_customer_key_md5.as_deref() {
        return Ok(());
    }
    Err(invalid_request(
        "The provided encryption parameters did not match the ones used originally.",
    ))
}

/// An SSE-C object is read only with its key (`prefix` as in [`read_conditions`]).
fn sse_customer_check(
    headers: &HeaderMap,
    object: &StoredObject,
    prefix: &str,
) -> Result<(), Answer> {
    let Some(stored) = &object.attributes.sse_customer_key_md5 else {
        return Ok(());
    };
    match header(
        headers,
        &format!("{prefix}server-side-encryption-customer-key-md5"),
    ) {
        None => Err(invalid_request(
            "The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.",
        )),
        Some(md5) if md5 != stored => Err(Answer::error(403, "AccessDenied", "Access Denied")),
        Some(_) => Ok(()),
    }
}

fn put_object(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    let checksum = verify_payload(ctx)?;
    write_conditions(ctx.headers, state.object(ctx.bucket(), ctx.key()))?;
    let attributes = attributes_from(ctx);
    let stored_checksum = checksum.map(|checksum| StoredChecksum {
        algorithm: checksum.algorithm(),
        value: checksum.to_base64(),
        checksum_type: ChecksumType::FullObject,
    });
    let object = StoredObject {
        data: ctx.payload.data.clone(),
        etag: format!("\"{}\"", sigv4::hex(&ctx.payload.md5)),
        last_modified: ctx.now,
        attributes,
        checksum: stored_checksum,
        parts: None,
    };
    let mut answer = Answer::new(200)
        .header("etag", object.etag.clone())
        .headers(encryption_headers(&object.attributes));
    if let Some(checksum) = &object.checksum {
        answer = answer.headers(checksum_headers(checksum));
    }
    state.put(ctx.bucket(), ctx.key(), object);
    Ok(answer)
}

/// A `Range` header resolved against an object of `len` bytes.
enum RangeRequest {
    None,
    Satisfiable(u64, u64),
    Unsatisfiable,
}

fn resolve_range(value: Option<&str>, len: u64) -> RangeRequest {
    let Some(spec) = value.and_then(|v| v.trim().strip_prefix("bytes=")) else {
        return RangeRequest::None;
    };
    if spec.contains(',') {
        return RangeRequest::None;
    }
    let Some((first, last)) = spec.split_once('-') else {
        return RangeRequest::None;
    };
    let (first, last) = (first.trim(), last.trim());
    if first.is_empty() {
        let Ok(suffix) = last.parse::<u64>() else {
            return RangeRequest::None;
        };
        if suffix == 0 || len == 0 {
            return RangeRequest::Unsatisfiable;
        }
        return RangeRequest::Satisfiable(len.saturating_sub(suffix), len - 1);
    }
    let Ok(first) = first.parse::<u64>() else {
        return RangeRequest::None;
    };
    let last = if last.is_empty() {
        None
    } else {
        match last.parse::<u64>() {
            Ok(last) if last >= first => Some(last),
            _ => return RangeRequest::None,
        }
    };
    if first >= len {
        return RangeRequest::Unsatisfiable;
    }
    RangeRequest::Satisfiable(first, last.map_or(len - 1, |l| l.min(len - 1)))
}

fn get_object(state: &mut State, ctx: &Ctx<'_>, head: bool) -> Outcome {
    let object = state
        .object(ctx.bucket(), ctx.key())
        .ok_or_else(|| no_such_key(ctx.key()))?;
    sse_customer_check(ctx.headers, object, "x-amz-")?;
    let len = object.data.len() as u64;
    let part_etag = part_etag_on_head(state.quirks, head, ctx, object);
    match &part_etag {
        Some(etag) => {
            let part = StoredObject {
                etag: etag.clone(),
                ..object.clone()
            };
            read_conditions(ctx.headers, &part, "")?;
        }
        None => read_conditions(ctx.headers, object, "")?,
    }
    let range_header = ctx.header("range");
    let part_number = match ctx.target.q("partNumber") {
        None => None,
        Some(value) => Some(
            value
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=10_000).contains(n))
                .ok_or_else(|| {
                    invalid_argument(
                        "Part number must be an integer between 1 and 10000, inclusive",
                    )
                })?,
        ),
    };
    if part_number.is_some() && range_header.is_some() {
        return Err(invalid_request(
            "Cannot specify both Range header and partNumber query parameter",
        ));
    }
    let checksum_mode = ctx
        .header("x-amz-checksum-mode")
        .is_some_and(|v| v.eq_ignore_ascii_case("ENABLED"));
    let mut answer = Answer::new(200);
    // (first, last) of a partial answer, and the checksum headers that go with it.
    let mut partial: Option<(u64, u64)> = None;
    let mut checksum: Vec<(String, String)> = Vec::new();
    match (part_number, &object.parts) {
        (Some(number), Some(parts)) => {
            let index = number as usize - 1;
            let Some(part) = parts.get(index) else {
                return Err(invalid_part_number(parts.len()));
            };
            let first: u64 = parts[..index].iter().map(|p| p.size).sum();
            if part.size > 0 {
                partial = Some((first, first + part.size - 1));
            }
            answer = answer
                .header("x-amz-mp-parts-count", parts.len().to_string())
                .body(Bytes::new());
            answer.status = 206;
            if checksum_mode && let Some(part_checksum) = &part.checksum {
                checksum.push((
                    part_checksum.algorithm().header_name().as_str().to_owned(),
                    part_checksum.to_base64(),
                ));
            }
        }
        (Some(1), None) => {
            answer.status = 206;
            if len > 0 {
                partial = Some((0, len - 1));
            }
            if checksum_mode && let Some(stored) = &object.checksum {
                checksum = checksum_headers(stored);
            }
        }
        (Some(_), None) => return Err(invalid_part_number(1)),
        (None, _) => match resolve_range(range_header, len) {
            RangeRequest::None => {
                if checksum_mode && let Some(stored) = &object.checksum {
                    checksum = checksum_headers(stored);
                }
            }
            RangeRequest::Satisfiable(first, last) => {
                answer.status = 206;
                partial = Some((first, last));
            }
            RangeRequest::Unsatisfiable => {
                return Err(Answer::error_with(
                    416,
                    "InvalidRange",
                    "The requested range is not satisfiable",
                    &[
                        ("RangeRequested", range_header.unwrap_or("").to_owned()),
                        ("ActualObjectSize", len.to_string()),
                    ],
                )
                .header("content-range", format!("bytes */{len}")));
            }
        },
    }
    let data = match partial {
        Some((first, last)) => {
            answer = answer.header("content-range", format!("bytes {first}-{last}/{len}"));
            object.data.slice(first as usize..=last as usize)
        }
        None if answer.status == 206 => Bytes::new(),
        None => object.data.clone(),
    };
    answer = answer
        .headers(object_headers(object, ctx))
        .headers(checksum);
    if let Some(etag) = part_etag {
        answer.headers.retain(|(name, _)| name != "etag");
        answer = answer.header("etag", etag);
    }
    if head {
        answer.head_length = Some(data.len() as u64);
    } else {
        answer.body = data;
    }
    Ok(answer)
}

/// The ETag moto gives a HEAD of one part of a multipart object (the part's own, see
/// [`StoreQuirks::part_etag_on_head`]), when the quirk is on and the request is one.
fn part_etag_on_head(
    quirks: StoreQuirks,
    head: bool,
    ctx: &Ctx<'_>,
    object: &StoredObject,
) -> Option<String> {
    let number: usize = ctx.target.q("partNumber")?.parse().ok()?;
    let parts = object.parts.as_ref()?;
    if !(quirks.part_etag_on_head && head) || number == 0 || number > parts.len() {
        return None;
    }
    let first: u64 = parts[..number - 1].iter().map(|p| p.size).sum();
    let end = first + parts[number - 1].size;
    Some(quoted_md5(&object.data[first as usize..end as usize]))
}

fn invalid_part_number(parts: usize) -> Answer {
    Answer::error_with(
        416,
        "InvalidPartNumber",
        "The requested partnumber is not satisfiable",
        &[("PartsCount", parts.to_string())],
    )
}

/// The metadata headers of a GET/HEAD answer (with `response-*` overrides).
/// GetObjectAttributes: what `x-amz-object-attributes` asks for; the parts of a multipart
/// object a page at a time (`x-amz-max-parts`, default 1000; `x-amz-part-number-marker`),
/// each with its checksum, as S3 lists them for an object uploaded with one.
fn get_object_attributes(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    let object = state
        .object(ctx.bucket(), ctx.key())
        .ok_or_else(|| no_such_key(ctx.key()))?;
    sse_customer_check(ctx.headers, object, "x-amz-")?;
    let asked: Vec<&str> = ctx
        .header("x-amz-object-attributes")
        .ok_or_else(|| invalid_argument("x-amz-object-attributes is required"))?
        .split(',')
        .map(str::trim)
        .collect();
    let number = |name: &str, default: usize| -> Result<usize, Answer> {
        ctx.header(name).map_or(Ok(default), |value| {
            value
                .parse()
                .map_err(|_| invalid_argument(&format!("{name} must be an integer")))
        })
    };
    let max_parts = number("x-amz-max-parts", 1000)?.min(1000);
    let marker = number("x-amz-part-number-marker", 0)?;
    let mut xml = Xml::new("GetObjectAttributesResponse");
    if asked.contains(&"ETag") {
        xml.leaf("ETag", object.etag.trim_matches('"'));
    }
    if asked.contains(&"Checksum")
        && let Some(stored) = &object.checksum
    {
        xml.open("Checksum");
        xml.leaf(
            &format!("Checksum{}", stored.algorithm.as_str()),
            &stored.value,
        );
        xml.leaf("ChecksumType", stored.checksum_type.as_str());
        xml.close("Checksum");
    }
    if asked.contains(&"ObjectParts")
        && let Some(parts) = &object.parts
    {
        let page: Vec<(usize, &StoredPart)> = parts
            .iter()
            .enumerate()
            .map(|(index, part)| (index + 1, part))
            .filter(|(number, _)| *number > marker)
            .take(max_parts)
            .collect();
        let last = page.last().map_or(marker, |(number, _)| *number);
        xml.open("ObjectParts");
        xml.leaf("PartsCount", &parts.len().to_string());
        xml.leaf("PartNumberMarker", &marker.to_string());
        xml.leaf("NextPartNumberMarker", &last.to_string());
        xml.leaf("MaxParts", &max_parts.to_string());
        xml.leaf(
            "IsTruncated",
            if last < parts.len() { "true" } else { "false" },
        );
        for (number, part) in page {
            xml.open("Part");
            xml.leaf("PartNumber", &number.to_string());
            xml.leaf("Size", &part.size.to_string());
            if let Some(checksum) = &part.checksum {
                xml.leaf(
                    &format!("Checksum{}", checksum.algorithm().as_str()),
                    &checksum.to_base64(),
                );
            }
            xml.close("Part");
        }
        xml.close("ObjectParts");
    }
    if asked.contains(&"StorageClass") {
        xml.leaf(
            "StorageClass",
            object
                .attributes
                .storage_class
                .as_deref()
                .unwrap_or("STANDARD"),
        );
    }
    if asked.contains(&"ObjectSize") {
        xml.leaf("ObjectSize", &object.data.len().to_string());
    }
    Ok(
        Answer::xml(xml.finish("GetObjectAttributesResponse")).header(
            "last-modified",
            httpdate::fmt_http_date(object.last_modified),
        ),
    )
}

fn object_headers(object: &StoredObject, ctx: &Ctx<'_>) -> Vec<(String, String)> {
    let attributes = &object.attributes;
    let mut out = vec![
        ("etag".to_owned(), object.etag.clone()),
        ("last-modified".to_owned(), http_date(object.last_modified)),
        ("accept-ranges".to_owned(), "bytes".to_owned()),
    ];
    let overridden = |name: &str, stored: &Option<String>| -> Option<String> {
        ctx.target
            .q(&format!("response-{name}"))
            .map(str::to_owned)
            .or_else(|| stored.clone())
    };
    let content_type = overridden("content-type", &attributes.content_type)
        .unwrap_or_else(|| "binary/octet-stream".to_owned());
    out.push(("content-type".to_owned(), content_type));
    for (name, stored) in [
        ("cache-control", &attributes.cache_control),
        ("content-disposition", &attributes.content_disposition),
        ("content-encoding", &attributes.content_encoding),
        ("content-language", &attributes.content_language),
        ("expires", &attributes.expires),
    ] {
        if let Some(value) = overridden(name, stored) {
            out.push((name.to_owned(), value));
        }
    }
    for (name, value) in &attributes.metadata {
        out.push((format!("x-amz-meta-{name}"), value.clone()));
    }
    if let Some(class) = attributes
        .storage_class
        .as_ref()
        .filter(|class| class.as_str() != "STANDARD")
    {
        out.push(("x-amz-storage-class".to_owned(), class.clone()));
    }
    if let Some(tagging) = attributes.tagging.as_ref().filter(|t| !t.is_empty()) {
        out.push((
            "x-amz-tagging-count".to_owned(),
            tagging.split('&').count().to_string(),
        ));
    }
    out.extend(encryption_headers(attributes));
    out
}

fn delete_object(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    if let Some(value) = ctx.header("if-match") {
        match state.object(ctx.bucket(), ctx.key()) {
            None => return Err(no_such_key(ctx.key())),
            Some(object) if !etag_matches(value, &object.etag) => {
                return Err(precondition_failed("If-Match"));
            }
            Some(_) => {}
        }
    }
    if let Some(objects) = state.buckets.get_mut(ctx.bucket()) {
        objects.remove(ctx.key());
    }
    Ok(Answer::new(204))
}

fn delete_objects(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    verify_payload(ctx)?;
    let request = s3_xml::decode_delete_request(&ctx.payload.data, &xml_limits())
        .map_err(|e| malformed_xml(&e.to_string()))?;
    if request.objects.len() > 1000 {
        return Err(malformed_xml("more than 1000 objects"));
    }
    let mut xml = Xml::new("DeleteResult");
    for object in &request.objects {
        if let Some(objects) = state.buckets.get_mut(ctx.bucket()) {
            objects.remove(&object.key);
        }
        if !request.quiet {
            xml.open("Deleted");
            xml.leaf("Key", &object.key);
            if let Some(version_id) = &object.version_id {
                xml.leaf("VersionId", version_id);
            }
            xml.close("Deleted");
        }
    }
    Ok(Answer::xml(xml.finish("DeleteResult")))
}

fn malformed_xml(detail: &str) -> Answer {
    Answer::error(
        400,
        "MalformedXML",
        &format!(
            "The XML you provided was not well-formed or did not validate against our published schema ({detail})."
        ),
    )
}

fn xml_limits() -> s3_xml::Limits {
    s3_xml::Limits::new(16 << 20)
}

/// The `x-amz-copy-source` object: bucket, key (the `?versionId` is ignored: no versions).
fn copy_source(ctx: &Ctx<'_>) -> Result<(String, String), Answer> {
    let value = ctx.header("x-amz-copy-source").unwrap_or("");
    let path = value.split_once('?').map_or(value, |(path, _)| path);
    let decoded = percent_decode_lossy(path);
    let decoded = decoded.strip_prefix('/').unwrap_or(&decoded);
    match decoded.split_once('/') {
        Some((bucket, key)) if !bucket.is_empty() && !key.is_empty() => {
            Ok((bucket.to_owned(), key.to_owned()))
        }
        _ => Err(invalid_argument("Invalid copy source object key")),
    }
}

fn copy_source_object<'s>(state: &'s State, ctx: &Ctx<'_>) -> Result<&'s StoredObject, Answer> {
    let (bucket, key) = copy_source(ctx)?;
    let object = state
        .object(&bucket, &key)
        .ok_or_else(|| no_such_key(&key))?;
    sse_customer_check(ctx.headers, object, "x-amz-copy-source-")?;
    read_conditions(ctx.headers, object, "x-amz-copy-source-")?;
    Ok(object)
}

fn copy_object(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    let source = copy_source_object(state, ctx)?.clone();
    write_conditions(ctx.headers, state.object(ctx.bucket(), ctx.key()))?;
    let directive = |name: &str| -> Result<bool, Answer> {
        match ctx.header(name) {
            None | Some("COPY") => Ok(false),
            Some("REPLACE") => Ok(true),
            Some(other) => Err(invalid_argument(&format!("Unknown {name} {other}"))),
        }
    };
    let replace_metadata = directive("x-amz-metadata-directive")?;
    let replace_tags = directive("x-amz-tagging-directive")?;
    let algorithm = ctx
        .header("x-amz-checksum-algorithm")
        .map(parse_algorithm)
        .transpose()?;
    let requested = attributes_from(ctx);
    let (source_bucket, source_key) = copy_source(ctx)?;
    let changes = replace_metadata
        || requested.storage_class.is_some()
        || requested.sse.is_some()
        || requested.sse_customer_key_md5.is_some()
        || algorithm.is_some();
    if source_bucket == ctx.bucket() && source_key == ctx.key() && !changes {
        return Err(invalid_request(
            "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
        ));
    }
    let mut attributes = if replace_metadata {
        requested.clone()
    } else {
        ObjectAttributes {
            content_type: source.attributes.content_type.clone(),
            cache_control: source.attributes.cache_control.clone(),
            content_disposition: source.attributes.content_disposition.clone(),
            content_encoding: source.attributes.content_encoding.clone(),
            content_language: source.attributes.content_language.clone(),
            expires: source.attributes.expires.clone(),
            metadata: source.attributes.metadata.clone(),
            ..requested.clone()
        }
    };
    attributes.tagging = if replace_tags {
        requested.tagging.clone()
    } else {
        source.attributes.tagging.clone()
    };
    let algorithm = algorithm.or(source.checksum.as_ref().map(|c| c.algorithm));
    let checksum = algorithm.map(|algorithm| StoredChecksum {
        algorithm,
        value: algorithm.checksum(&source.data).to_base64(),
        checksum_type: ChecksumType::FullObject,
    });
    let object = StoredObject {
        etag: quoted_md5(&source.data),
        data: source.data.clone(),
        last_modified: ctx.now,
        attributes,
        checksum,
        parts: None,
    };
    let mut xml = Xml::new("CopyObjectResult");
    xml.leaf("ETag", &object.etag);
    xml.leaf("LastModified", &xml_time(object.last_modified));
    if let Some(checksum) = &object.checksum {
        xml.leaf(&checksum_element(checksum.algorithm), &checksum.value);
        xml.leaf("ChecksumType", checksum.checksum_type.as_str());
    }
    let answer =
        Answer::xml(xml.finish("CopyObjectResult")).headers(encryption_headers(&object.attributes));
    state.put(ctx.bucket(), ctx.key(), object);
    Ok(answer)
}

fn create_multipart_upload(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    let algorithm = ctx
        .header("x-amz-checksum-algorithm")
        .map(parse_algorithm)
        .transpose()?;
    let checksum_type = match ctx.header("x-amz-checksum-type") {
        None => None,
        Some("COMPOSITE") => Some(ChecksumType::Composite),
        Some("FULL_OBJECT") => Some(ChecksumType::FullObject),
        Some(other) => {
            return Err(invalid_request(&format!(
                "Value for x-amz-checksum-type header is invalid: {other}"
            )));
        }
    };
    let checksum = match (algorithm, checksum_type) {
        (None, None) => None,
        (None, Some(_)) => {
            return Err(invalid_request(
                "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.",
            ));
        }
        (Some(algorithm), checksum_type) => {
            // CRC-64/NVME exists only as a full-object checksum (and is the default then).
            let checksum_type =
                checksum_type.unwrap_or(if algorithm == ChecksumAlgorithm::Crc64Nvme {
                    ChecksumType::FullObject
                } else {
                    ChecksumType::Composite
                });
            let valid = match checksum_type {
                ChecksumType::FullObject => is_crc(algorithm),
                ChecksumType::Composite => algorithm != ChecksumAlgorithm::Crc64Nvme,
            };
            if !valid {
                return Err(invalid_request(&format!(
                    "The {} checksum type cannot be used with the {algorithm} checksum algorithm.",
                    checksum_type.as_str()
                )));
            }
            Some((algorithm, checksum_type))
        }
    };
    let upload_id = state.new_upload_id(ctx.bucket(), ctx.key());
    let attributes = attributes_from(ctx);
    let mut answer = Answer::new(200).headers(encryption_headers(&attributes));
    if let Some((algorithm, checksum_type)) = checksum {
        answer = answer
            .header("x-amz-checksum-algorithm", algorithm.as_str())
            .header("x-amz-checksum-type", checksum_type.as_str());
    }
    state.uploads.insert(
        upload_id.clone(),
        Upload {
            bucket: ctx.bucket().to_owned(),
            key: ctx.key().to_owned(),
            upload_id: upload_id.clone(),
            initiated: ctx.now,
            attributes,
            checksum,
            parts: BTreeMap::new(),
        },
    );
    let mut xml = Xml::new("InitiateMultipartUploadResult");
    xml.leaf("Bucket", ctx.bucket());
    xml.leaf("Key", ctx.key());
    xml.leaf("UploadId", &upload_id);
    let mut document = Answer::xml(xml.finish("InitiateMultipartUploadResult"));
    document.headers.extend(answer.headers);
    Ok(document)
}

fn upload_of<'s>(state: &'s mut State, ctx: &Ctx<'_>) -> Result<&'s mut Upload, Answer> {
    let upload_id = ctx.target.q("uploadId").unwrap_or("");
    match state.uploads.get_mut(upload_id) {
        Some(upload) if upload.bucket == ctx.bucket() && upload.key == ctx.key() => Ok(upload),
        _ => Err(no_such_upload(upload_id)),
    }
}

fn part_number(ctx: &Ctx<'_>) -> Result<u32, Answer> {
    ctx.target
        .q("partNumber")
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| {
            invalid_argument("Part number must be an integer between 1 and 10000, inclusive")
        })
}

fn upload_part(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    let number = part_number(ctx)?;
    upload_of(state, ctx)?;
    let checksum = verify_payload(ctx)?;
    let upload = upload_of(state, ctx)?;
    sse_customer_upload_check(upload, ctx.headers)?;
    check_part_checksum(upload, checksum.as_ref().map(Checksum::algorithm))?;
    let md5 = ctx.payload.md5;
    let etag = format!("\"{}\"", sigv4::hex(&md5));
    let mut answer = Answer::new(200)
        .header("etag", etag.clone())
        .headers(encryption_headers(&upload.attributes));
    if let Some(checksum) = &checksum {
        answer = answer.header(
            checksum.algorithm().header_name().as_str(),
            checksum.to_base64(),
        );
    }
    upload.parts.insert(
        number,
        UploadedPart {
            data: ctx.payload.data.clone(),
            md5,
            etag,
            checksum,
            last_modified: ctx.now,
        },
    );
    Ok(answer)
}

/// A part of an upload with a checksum algorithm must carry that checksum, and a part of an
/// upload without one must carry none (S3: "Checksum Type mismatch occurred").
fn check_part_checksum(upload: &Upload, sent: Option<ChecksumAlgorithm>) -> Result<(), Answer> {
    let expected = upload.checksum.map(|(algorithm, _)| algorithm);
    match (expected, sent) {
        (Some(expected), Some(sent)) if expected == sent => Ok(()),
        (None, None) => Ok(()),
        (Some(expected), None) => Err(invalid_request(&format!(
            "The upload was created using a {} checksum. The part must carry the {} header.",
            expected.as_str().to_ascii_lowercase(),
            expected.header_name().as_str()
        ))),
        (expected, Some(sent)) => Err(invalid_request(&format!(
            "Checksum Type mismatch occurred, expected checksum Type: {}, actual checksum Type: {}",
            expected.map_or("null".to_owned(), |a| a.as_str().to_ascii_lowercase()),
            sent.as_str().to_ascii_lowercase()
        ))),
    }
}

fn upload_part_copy(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    let number = part_number(ctx)?;
    upload_of(state, ctx)?;
    let source = copy_source_object(state, ctx)?;
    let len = source.data.len() as u64;
    let data = match ctx.header("x-amz-copy-source-range") {
        None => source.data.clone(),
        Some(value) => {
            let range = value
                .trim()
                .strip_prefix("bytes=")
                .and_then(|spec| spec.split_once('-'))
                .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)));
            match range {
                Some((first, last)) if first <= last && last < len => {
                    source.data.slice(first as usize..=last as usize)
                }
                _ => {
                    return Err(invalid_argument(&format!(
                        "Range specified is not valid for source object of size: {len}"
                    )));
                }
            }
        }
    };
    let quiet = state.quirks.no_checksums_on_part_copies;
    let upload = upload_of(state, ctx)?;
    sse_customer_upload_check(upload, ctx.headers)?;
    let checksum = upload
        .checksum
        .map(|(algorithm, _)| algorithm.checksum(&data));
    let md5 = md5(&data);
    let etag = format!("\"{}\"", sigv4::hex(&md5));
    let mut xml = Xml::new("CopyPartResult");
    xml.leaf("ETag", &etag);
    xml.leaf("LastModified", &xml_time(ctx.now));
    if let Some(checksum) = checksum.as_ref().filter(|_| !quiet) {
        xml.leaf(
            &checksum_element(checksum.algorithm()),
            &checksum.to_base64(),
        );
    }
    let answer =
        Answer::xml(xml.finish("CopyPartResult")).headers(encryption_headers(&upload.attributes));
    upload.parts.insert(
        number,
        UploadedPart {
            data,
            md5,
            etag,
            checksum,
            last_modified: ctx.now,
        },
    );
    Ok(answer)
}

fn xml_checksum(checksums: &s3_xml::Checksums, algorithm: ChecksumAlgorithm) -> Option<&str> {
    match algorithm {
        ChecksumAlgorithm::Crc32 => checksums.crc32.as_deref(),
        ChecksumAlgorithm::Crc32c => checksums.crc32c.as_deref(),
        ChecksumAlgorithm::Crc64Nvme => checksums.crc64nvme.as_deref(),
        ChecksumAlgorithm::Sha1 => checksums.sha1.as_deref(),
        ChecksumAlgorithm::Sha256 => checksums.sha256.as_deref(),
    }
}

/// The checksum S3 reports for a multipart object.
fn multipart_checksum(
    algorithm: ChecksumAlgorithm,
    checksum_type: ChecksumType,
    data: &[u8],
    parts: &[StoredPart],
) -> StoredChecksum {
    let value = match checksum_type {
        // Recomputed over the assembled bytes (not combined), so that the client's
        // combination is checked against something independent.
        ChecksumType::FullObject => algorithm.checksum(data).to_base64(),
        ChecksumType::Composite => {
            let digests: Vec<Checksum> = parts
                .iter()
                .map(|p| p.checksum.clone().expect("every part has a checksum"))
                .collect();
            Checksum::composite(&digests).expect("parts of one algorithm")
        }
    };
    StoredChecksum {
        algorithm,
        value,
        checksum_type,
    }
}

/// What a CompleteMultipartUpload assembles, collected under the lock (phase 1) and turned
/// into the object off the server's thread (phase 2: concatenation and checksum, slow for
/// large objects in debug builds) before it is committed under the lock again (phase 3).
struct Assembly {
    upload_id: String,
    /// The listed parts, in order.
    parts: Vec<AssemblyPart>,
    attributes: ObjectAttributes,
    checksum: Option<(ChecksumAlgorithm, ChecksumType)>,
    /// A full-object `x-amz-checksum-*` header to check against the assembled object.
    full_checksum: Option<(ChecksumAlgorithm, String)>,
}

/// One part of an [`Assembly`].
struct AssemblyPart {
    number: u32,
    etag: String,
    data: Bytes,
    md5: [u8; 16],
    checksum: Option<Checksum>,
}

async fn complete_multipart_upload(state: &Mutex<State>, ctx: &Ctx<'_>) -> Outcome {
    let assembly = complete_prepare(&mut lock(state), ctx)?;
    let (assembly, object) = tokio::task::spawn_blocking(move || complete_assemble(assembly))
        .await
        .map_err(|_| Answer::error(500, "InternalError", "assembling the object panicked"))?;
    let object = object?;
    complete_commit(&mut lock(state), ctx, &assembly, object)
}

/// Phase 1: every check that needs no object bytes.
fn complete_prepare(state: &mut State, ctx: &Ctx<'_>) -> Result<Assembly, Answer> {
    let min_part_size = state.min_part_size;
    upload_of(state, ctx)?;
    let request =
        s3_xml::decode_complete_multipart_upload_request(&ctx.payload.data, &xml_limits())
            .map_err(|e| malformed_xml(&e.to_string()))?;
    if request.parts.is_empty() {
        return Err(malformed_xml("no parts"));
    }
    write_conditions(ctx.headers, state.object(ctx.bucket(), ctx.key()))?;
    let pair_type_with_value = state.quirks.checksum_type_only_with_a_value;
    let upload = upload_of(state, ctx)?;
    sse_customer_upload_check(upload, ctx.headers)?;
    let upload_algorithm = upload.checksum.map(|(a, _)| a);
    if pair_type_with_value
        && ctx.header("x-amz-checksum-type").is_some()
        && !ChecksumAlgorithm::ALL
            .into_iter()
            .any(|a| ctx.header(a.header_name().as_str()).is_some())
    {
        return Err(invalid_request(
            "Cannot specify x-amz-checksum-type when no checksum algorithm is in use",
        ));
    }
    // AWS: "If the checksum type doesn't match the checksum type that was specified for the
    // multipart upload request, then the request fails with BadDigest."
    if let Some(value) = ctx.header("x-amz-checksum-type")
        && upload.checksum.map(|(_, t)| t.as_str()) != Some(value)
    {
        return Err(Answer::error(
            400,
            "BadDigest",
            &format!(
                "The upload was created with checksum type {}, not {value}.",
                upload.checksum.map_or("none", |(_, t)| t.as_str())
            ),
        ));
    }
    let mut previous = 0;
    let count = request.parts.len();
    let mut total = 0u64;
    let mut parts = Vec::with_capacity(count);
    for (index, part) in request.parts.iter().enumerate() {
        if part.part_number <= previous {
            return Err(Answer::error(
                400,
                "InvalidPartOrder",
                "The list of parts was not in ascending order. The parts list must be specified in order by part number.",
            ));
        }
        previous = part.part_number;
        let invalid_part = || {
            Answer::error_with(
                400,
                "InvalidPart",
                "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
                &[
                    ("UploadId", upload.upload_id.clone()),
                    ("PartNumber", part.part_number.to_string()),
                ],
            )
        };
        let Some(stored) = upload.parts.get(&part.part_number) else {
            return Err(invalid_part());
        };
        if part.etag.unquoted().trim_matches('"') != stored.etag.trim_matches('"') {
            return Err(invalid_part());
        }
        if index + 1 < count && (stored.data.len() as u64) < min_part_size {
            return Err(Answer::error_with(
                400,
                "EntityTooSmall",
                "Your proposed upload is smaller than the minimum allowed object size.",
                &[
                    ("ProposedSize", stored.data.len().to_string()),
                    ("MinSizeAllowed", min_part_size.to_string()),
                    ("PartNumber", part.part_number.to_string()),
                ],
            ));
        }
        total += stored.data.len() as u64;
        for algorithm in ChecksumAlgorithm::ALL {
            let Some(value) = xml_checksum(&part.checksums, algorithm) else {
                continue;
            };
            if Some(algorithm) != upload_algorithm {
                return Err(invalid_request(&format!(
                    "Part {} carries a {algorithm} checksum, but the upload uses {}.",
                    part.part_number,
                    upload_algorithm.map_or("none", ChecksumAlgorithm::as_str)
                )));
            }
            if stored.checksum.as_ref().map(Checksum::to_base64).as_deref() != Some(value) {
                return Err(invalid_part());
            }
        }
        if let Some((algorithm, ChecksumType::Composite)) = upload.checksum
            && xml_checksum(&part.checksums, algorithm).is_none()
        {
            return Err(invalid_request(&format!(
                "The upload was created using a {} checksum. The complete request must include the checksum for each part. It was missing for part {} in the request.",
                algorithm.as_str().to_ascii_lowercase(),
                part.part_number
            )));
        }
        parts.push(AssemblyPart {
            number: part.part_number,
            etag: stored.etag.clone(),
            data: stored.data.clone(),
            md5: stored.md5,
            checksum: stored.checksum.clone(),
        });
    }
    if let Some(value) = ctx.header("x-amz-mp-object-size")
        && value.trim().parse::<u64>().ok() != Some(total)
    {
        return Err(invalid_request(&format!(
            "The provided 'x-amz-mp-object-size' header value {value} does not match what was computed: {total}"
        )));
    }
    let mut full: Vec<(ChecksumAlgorithm, String)> = ChecksumAlgorithm::ALL
        .into_iter()
        .filter_map(|a| Some((a, ctx.header(a.header_name().as_str())?.trim().to_owned())))
        .collect();
    if full.len() > 1 {
        return Err(invalid_request(
            "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.",
        ));
    }
    let full_checksum = full.pop();
    if let (Some((algorithm, _)), Some((expected, _))) = (&full_checksum, upload.checksum)
        && *algorithm != expected
    {
        return Err(invalid_request(&format!(
            "The upload was created using a {expected} checksum, not {algorithm}."
        )));
    }
    Ok(Assembly {
        upload_id: upload.upload_id.clone(),
        parts,
        attributes: upload.attributes.clone(),
        checksum: upload.checksum,
        full_checksum,
    })
}

/// Phase 2: the object's bytes, ETag and checksum, and the full-object checksum check.
fn complete_assemble(assembly: Assembly) -> (Assembly, Result<StoredObject, Answer>) {
    let total: usize = assembly.parts.iter().map(|p| p.data.len()).sum();
    let mut data = BytesMut::with_capacity(total);
    let mut md5s = Vec::with_capacity(assembly.parts.len() * 16);
    let mut parts = Vec::with_capacity(assembly.parts.len());
    for part in &assembly.parts {
        data.extend_from_slice(&part.data);
        md5s.extend_from_slice(&part.md5);
        parts.push(StoredPart {
            size: part.data.len() as u64,
            checksum: part.checksum.clone(),
        });
    }
    let data = data.freeze();
    let checksum = assembly.checksum.map(|(algorithm, checksum_type)| {
        multipart_checksum(algorithm, checksum_type, &data, &parts)
    });
    if let Some((algorithm, value)) = &assembly.full_checksum {
        let matches = match &checksum {
            Some(stored) => match stored.checksum_type {
                ChecksumType::FullObject => stored.value == *value,
                ChecksumType::Composite => {
                    stored.value == *value
                        || stored.value.rsplit_once('-').map(|(v, _)| v) == Some(value.as_str())
                }
            },
            None => algorithm.checksum(&data).to_base64() == *value,
        };
        if !matches {
            let error = Answer::error(
                400,
                "BadDigest",
                &format!("The {algorithm} you specified did not match the calculated checksum."),
            );
            return (assembly, Err(error));
        }
    }
    let object = StoredObject {
        etag: format!("\"{}-{}\"", sigv4::hex(&md5(&md5s)), parts.len()),
        data,
        last_modified: SystemTime::now(),
        attributes: assembly.attributes.clone(),
        checksum,
        parts: Some(parts),
    };
    (assembly, Ok(object))
}

/// Phase 3: the upload must still be there with the same parts (a concurrent Complete or
/// Abort wins), and the conditions must still hold; then the object replaces the upload.
fn complete_commit(
    state: &mut State,
    ctx: &Ctx<'_>,
    assembly: &Assembly,
    object: StoredObject,
) -> Outcome {
    let endpoint = state.endpoint.clone();
    let upload = upload_of(state, ctx)?;
    let unchanged = assembly.parts.iter().all(|listed| {
        upload
            .parts
            .get(&listed.number)
            .is_some_and(|part| part.etag == listed.etag)
    });
    if !unchanged {
        return Err(Answer::error(
            400,
            "InvalidPart",
            "A part was replaced while the upload was being completed.",
        ));
    }
    write_conditions(ctx.headers, state.object(ctx.bucket(), ctx.key()))?;
    state.uploads.remove(&assembly.upload_id);
    let mut xml = Xml::new("CompleteMultipartUploadResult");
    xml.leaf(
        "Location",
        &format!(
            "{endpoint}/{}/{}",
            ctx.bucket(),
            uri_encode(ctx.key(), true)
        ),
    );
    xml.leaf("Bucket", ctx.bucket());
    xml.leaf("Key", ctx.key());
    xml.leaf("ETag", &object.etag);
    if let Some(checksum) = &object.checksum {
        xml.leaf(&checksum_element(checksum.algorithm), &checksum.value);
        xml.leaf("ChecksumType", checksum.checksum_type.as_str());
    }
    let answer = Answer::xml(xml.finish("CompleteMultipartUploadResult"))
        .headers(encryption_headers(&object.attributes));
    state.put(ctx.bucket(), ctx.key(), object);
    Ok(answer)
}

fn abort_multipart_upload(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    let upload_id = upload_of(state, ctx)?.upload_id.clone();
    state.uploads.remove(&upload_id);
    Ok(Answer::new(204))
}

fn owner(xml: &mut Xml, element: &str) {
    xml.open(element);
    xml.leaf("ID", OWNER_ID);
    xml.leaf("DisplayName", OWNER_ID);
    xml.close(element);
}

fn list_parts(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    let max_parts = page_size(ctx, "max-parts")?;
    let marker = match ctx.target.q("part-number-marker") {
        None => 0,
        Some(value) => value
            .parse::<u32>()
            .map_err(|_| invalid_argument("part-number-marker must be an integer"))?,
    };
    let upload = upload_of(state, ctx)?;
    let mut page: Vec<(&u32, &UploadedPart)> = upload
        .parts
        .range(marker.saturating_add(1)..)
        .take(max_parts + 1)
        .collect();
    let truncated = page.len() > max_parts;
    page.truncate(max_parts);
    let mut xml = Xml::new("ListPartsResult");
    xml.leaf("Bucket", &upload.bucket);
    xml.leaf("Key", &upload.key);
    xml.leaf("UploadId", &upload.upload_id);
    xml.leaf("PartNumberMarker", &marker.to_string());
    if let Some((last, _)) = page.last() {
        xml.leaf("NextPartNumberMarker", &last.to_string());
    }
    xml.leaf("MaxParts", &max_parts.to_string());
    xml.leaf("IsTruncated", if truncated { "true" } else { "false" });
    owner(&mut xml, "Initiator");
    owner(&mut xml, "Owner");
    xml.leaf(
        "StorageClass",
        upload
            .attributes
            .storage_class
            .as_deref()
            .unwrap_or("STANDARD"),
    );
    if let Some((algorithm, checksum_type)) = upload.checksum {
        xml.leaf("ChecksumAlgorithm", algorithm.as_str());
        xml.leaf("ChecksumType", checksum_type.as_str());
    }
    for (number, part) in page {
        xml.open("Part");
        xml.leaf("PartNumber", &number.to_string());
        xml.leaf("LastModified", &xml_time(part.last_modified));
        xml.leaf("ETag", &part.etag);
        xml.leaf("Size", &part.data.len().to_string());
        if let Some(checksum) = &part.checksum {
            xml.leaf(
                &checksum_element(checksum.algorithm()),
                &checksum.to_base64(),
            );
        }
        xml.close("Part");
    }
    Ok(Answer::xml(xml.finish("ListPartsResult")))
}

fn page_size(ctx: &Ctx<'_>, name: &str) -> Result<usize, Answer> {
    match ctx.target.q(name) {
        None => Ok(1000),
        Some(value) => value.parse::<usize>().map(|n| n.min(1000)).map_err(|_| {
            invalid_argument(&format!(
                "Provided {name} not an integer or within integer range"
            ))
        }),
    }
}

/// A listing's `encoding-type`: keys, prefixes and delimiters URL-encoded (`url`), or as
/// they are.
#[derive(Clone, Copy)]
struct KeyEncoding {
    url: bool,
}

impl KeyEncoding {
    /// The request's `encoding-type`; anything but `url` is `InvalidArgument`.
    fn of(ctx: &Ctx<'_>) -> Result<Self, Answer> {
        match ctx.target.q("encoding-type") {
            None => Ok(Self { url: false }),
            Some("url") => Ok(Self { url: true }),
            Some(_) => Err(invalid_argument(
                "Invalid Encoding Method specified in Request",
            )),
        }
    }

    fn encode(self, text: &str) -> String {
        if self.url {
            uri_encode(text, true)
        } else {
            text.to_owned()
        }
    }

    /// `<EncodingType>url</EncodingType>` where keys are encoded.
    fn announce(self, xml: &mut Xml) {
        if self.url {
            xml.leaf("EncodingType", "url");
        }
    }
}

fn list_multipart_uploads(state: &mut State, ctx: &Ctx<'_>) -> Outcome {
    let max_uploads = page_size(ctx, "max-uploads")?;
    let prefix = ctx.target.q("prefix").unwrap_or("");
    let delimiter = ctx.target.q("delimiter").filter(|d| !d.is_empty());
    let key_marker = ctx.target.q("key-marker").unwrap_or("");
    let upload_id_marker = ctx
        .target
        .q("upload-id-marker")
        .filter(|_| !key_marker.is_empty());
    let encoding = KeyEncoding::of(ctx)?;
    let encode = |s: &str| encoding.encode(s);
    let mut uploads: Vec<&Upload> = state
        .uploads
        .values()
        .filter(|u| u.bucket == ctx.bucket() && u.key.starts_with(prefix))
        .collect();
    uploads.sort_by(|a, b| {
        (&a.key, a.initiated, &a.upload_id).cmp(&(&b.key, b.initiated, &b.upload_id))
    });
    let start = match upload_id_marker {
        Some(id) => match uploads
            .iter()
            .position(|u| u.key == key_marker && u.upload_id == id)
        {
            Some(position) => position + 1,
            None => uploads
                .iter()
                .position(|u| {
                    u.key.as_str() > key_marker
                        || (u.key == key_marker && u.upload_id.as_str() > id)
                })
                .unwrap_or(uploads.len()),
        },
        None => uploads
            .iter()
            .position(|u| u.key.as_str() > key_marker)
            .unwrap_or(uploads.len()),
    };
    // Entries: an upload, or a common prefix (which stands for all its uploads).
    let mut entries: Vec<Result<&Upload, String>> = Vec::new();
    let mut truncated = false;
    let mut next: Option<(String, Option<String>)> = None;
    for upload in &uploads[start..] {
        let entry = match delimiter {
            Some(d) => match upload.key[prefix.len()..].find(d) {
                Some(at) => Err(upload.key[..prefix.len() + at + d.len()].to_owned()),
                None => Ok(*upload),
            },
            None => Ok(*upload),
        };
        if let (Err(common), Some(Err(last))) = (&entry, entries.last())
            && common == last
        {
            continue;
        }
        // A key marker that is a common prefix (a previous page's NextKeyMarker) stands for
        // all the uploads under it.
        if matches!(&entry, Err(common) if common == key_marker) {
            continue;
        }
        if entries.len() == max_uploads {
            truncated = true;
            break;
        }
        next = Some(match &entry {
            Ok(upload) => (upload.key.clone(), Some(upload.upload_id.clone())),
            Err(common) => (common.clone(), None),
        });
        entries.push(entry);
    }
    let mut xml = Xml::new("ListMultipartUploadsResult");
    xml.leaf("Bucket", ctx.bucket());
    xml.leaf("KeyMarker", &encode(key_marker));
    xml.leaf("UploadIdMarker", upload_id_marker.unwrap_or(""));
    if truncated && let Some((key, upload_id)) = &next {
        xml.leaf("NextKeyMarker", &encode(key));
        if let Some(upload_id) = upload_id {
            xml.leaf("NextUploadIdMarker", upload_id);
        }
    }
    encoding.announce(&mut xml);
    xml.leaf("Prefix", &encode(prefix));
    if let Some(d) = delimiter {
        xml.leaf("Delimiter", &encode(d));
    }
    xml.leaf("MaxUploads", &max_uploads.to_string());
    xml.leaf("IsTruncated", if truncated { "true" } else { "false" });
    for entry in &entries {
        match entry {
            Ok(upload) => {
                xml.open("Upload");
                xml.leaf("Key", &encode(&upload.key));
                xml.leaf("UploadId", &upload.upload_id);
                owner(&mut xml, "Initiator");
                owner(&mut xml, "Owner");
                xml.leaf(
                    "StorageClass",
                    upload
                        .attributes
                        .storage_class
                        .as_deref()
                        .unwrap_or("STANDARD"),
                );
                xml.leaf("Initiated", &xml_time(upload.initiated));
                if let Some((algorithm, checksum_type)) = upload.checksum {
                    xml.leaf("ChecksumAlgorithm", algorithm.as_str());
                    xml.leaf("ChecksumType", checksum_type.as_str());
                }
                xml.close("Upload");
            }
            Err(common) => {
                xml.open("CommonPrefixes");
                xml.leaf("Prefix", &encode(common));
                xml.close("CommonPrefixes");
            }
        }
    }
    Ok(Answer::xml(xml.finish("ListMultipartUploadsResult")))
}

/// Which ListObjects answers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Listing {
    /// Continued by `marker`; `NextMarker` only with a delimiter, as S3 sends it.
    Version1,
    /// Continued by `continuation-token`, or started after `start-after`.
    Version2,
}

fn list_objects(state: &mut State, ctx: &Ctx<'_>, listing: Listing) -> Outcome {
    let cap = state.quirks.page_entries.unwrap_or(usize::MAX);
    let max_keys = page_size(ctx, "max-keys")?.min(cap);
    let prefix = ctx.target.q("prefix").unwrap_or("");
    let delimiter = ctx.target.q("delimiter").filter(|d| !d.is_empty());
    let version_2 = listing == Listing::Version2;
    let token = ctx.target.q("continuation-token").filter(|_| version_2);
    let start_after = ctx.target.q("start-after").filter(|_| version_2);
    let marker = ctx.target.q("marker").filter(|_| !version_2);
    let encoding = KeyEncoding::of(ctx)?;
    let encode = |s: &str| encoding.encode(s);
    let unordered = state.quirks.unordered_listings;
    let incorrect = || invalid_argument("The continuation token provided is incorrect");
    // Unordered: the token is an offset into the hash order (every entry is listed first).
    let (after, offset) = match token {
        Some(token) if unordered => (
            None,
            token
                .strip_prefix("offset-")
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(incorrect)?,
        ),
        Some(token) => (
            Some(
                hex_decode(token)
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .ok_or_else(incorrect)?,
            ),
            0,
        ),
        None => (start_after.or(marker).map(str::to_owned), 0),
    };
    let max_keys = if unordered { usize::MAX } else { max_keys };
    let empty = BTreeMap::new();
    let objects = state.buckets.get(ctx.bucket()).unwrap_or(&empty);
    let mut entries: Vec<Result<(&String, &StoredObject), String>> = Vec::new();
    let mut truncated = false;
    let mut last_key: Option<String> = None;
    for (key, object) in objects {
        if !key.starts_with(prefix) || after.as_ref().is_some_and(|a| key <= a) {
            continue;
        }
        let entry = match delimiter.and_then(|d| key[prefix.len()..].find(d).map(|at| (d, at))) {
            Some((d, at)) => Err(key[..prefix.len() + at + d.len()].to_owned()),
            None => Ok((key, object)),
        };
        if let (Err(common), Some(Err(previous))) = (&entry, entries.last())
            && common == previous
        {
            last_key = Some(key.clone());
            continue;
        }
        if entries.len() == max_keys {
            truncated = true;
            break;
        }
        last_key = Some(key.clone());
        entries.push(entry);
    }
    let max_keys = page_size(ctx, "max-keys")?.min(cap);
    let mut next_offset = None;
    if unordered {
        let name = |entry: &Result<(&String, &StoredObject), String>| match entry {
            Ok((key, _)) => (*key).clone(),
            Err(common) => common.clone(),
        };
        entries.sort_by_key(|entry| {
            let digest = md5(name(entry).as_bytes());
            (
                u64::from_be_bytes(digest[..8].try_into().expect("8 bytes")),
                name(entry),
            )
        });
        let rest = entries.len().saturating_sub(offset);
        truncated = rest > max_keys;
        if truncated {
            next_offset = Some(offset + max_keys);
        }
        entries = entries.into_iter().skip(offset).take(max_keys).collect();
    }
    let mut xml = Xml::new("ListBucketResult");
    xml.leaf("Name", ctx.bucket());
    xml.leaf("Prefix", &encode(prefix));
    if let Some(d) = delimiter {
        xml.leaf("Delimiter", &encode(d));
    }
    if let Some(token) = token {
        xml.leaf("ContinuationToken", token);
    }
    if let Some(start_after) = start_after {
        xml.leaf("StartAfter", &encode(start_after));
    }
    if !version_2 {
        xml.leaf("Marker", &encode(marker.unwrap_or("")));
    }
    if version_2 {
        xml.leaf("KeyCount", &entries.len().to_string());
    }
    xml.leaf("MaxKeys", &max_keys.to_string());
    encoding.announce(&mut xml);
    xml.leaf("IsTruncated", if truncated { "true" } else { "false" });
    if !version_2 {
        // S3 names the next marker only with a delimiter; without one, the client
        // continues after the page's last key.
        if truncated
            && delimiter.is_some()
            && let Some(last) = &last_key
        {
            xml.leaf("NextMarker", &encode(last));
        }
    } else if let Some(offset) = next_offset {
        xml.leaf("NextContinuationToken", &format!("offset-{offset}"));
    } else if truncated && let Some(last) = &last_key {
        xml.leaf("NextContinuationToken", &sigv4::hex(last.as_bytes()));
    }
    for entry in &entries {
        match entry {
            Ok((key, object)) => {
                xml.open("Contents");
                xml.leaf("Key", &encode(key));
                xml.leaf("LastModified", &xml_time(object.last_modified));
                xml.leaf("ETag", &object.etag);
                xml.leaf("Size", &object.data.len().to_string());
                xml.leaf(
                    "StorageClass",
                    object
                        .attributes
                        .storage_class
                        .as_deref()
                        .unwrap_or("STANDARD"),
                );
                if let Some(checksum) = &object.checksum {
                    xml.leaf("ChecksumAlgorithm", checksum.algorithm.as_str());
                    xml.leaf("ChecksumType", checksum.checksum_type.as_str());
                }
                xml.close("Contents");
            }
            Err(common) => {
                xml.open("CommonPrefixes");
                xml.leaf("Prefix", &encode(common));
                xml.close("CommonPrefixes");
            }
        }
    }
    Ok(Answer::xml(xml.finish("ListBucketResult")))
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn md5(data: &[u8]) -> [u8; 16] {
    let digest = Md5::digest(data);
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..]);
    out
}

fn quoted_md5(data: &[u8]) -> String {
    format!("\"{}\"", sigv4::hex(&md5(data)))
}

/// `If-Match` / `If-None-Match` lists against a stored (quoted) ETag.
fn etag_matches(condition: &str, etag: &str) -> bool {
    let bare = |e: &str| {
        e.trim()
            .trim_start_matches("W/")
            .trim_matches('"')
            .to_owned()
    };
    condition
        .split(',')
        .any(|c| c.trim() == "*" || bare(c) == bare(etag))
}

fn checksum_element(algorithm: ChecksumAlgorithm) -> String {
    format!("Checksum{}", algorithm.as_str())
}

/// SplitMix64's finalizer.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    })
}

fn percent_decode_lossy(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = text
                .get(i + 1..i + 3)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// SigV4-style percent-encoding (unreserved kept, `/` kept if asked).
fn uri_encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for &byte in text.as_bytes() {
        if byte.is_ascii_alphanumeric()
            || matches!(byte, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && byte == b'/')
        {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn hex_decode(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#xD;"),
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => {
                out.push_str(&format!("&#x{:X};", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// A tiny XML writer for S3 result documents.
struct Xml(String);

impl Xml {
    fn new(root: &str) -> Self {
        Xml(format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{root} xmlns=\"{XMLNS}\">"
        ))
    }

    fn open(&mut self, name: &str) {
        self.0.push_str(&format!("<{name}>"));
    }

    fn close(&mut self, name: &str) {
        self.0.push_str(&format!("</{name}>"));
    }

    fn leaf(&mut self, name: &str, value: &str) {
        self.0
            .push_str(&format!("<{name}>{}</{name}>", escape(value)));
    }

    fn finish(mut self, root: &str) -> String {
        self.close(root);
        self.0
    }
}

fn unix_seconds(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_secs() as i64,
        Err(before) => -(before.duration().as_secs() as i64),
    }
}

fn xml_time(time: SystemTime) -> String {
    s3_xml::Timestamp::from_system_time(time)
        .map(|t| t.to_string())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

/// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn http_date(time: SystemTime) -> String {
    httpdate::fmt_http_date(time)
}

/// Unix seconds of an HTTP date.
fn parse_http_date(text: &str) -> Option<i64> {
    httpdate::parse_http_date(text).ok().map(unix_seconds)
}

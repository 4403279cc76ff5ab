//! The Tokio runtime adapter of s3-wire: an async, streaming S3 client that
//! drives `s3-ops` (operation codecs) and `s3-sigv4` (signing) over `reqwest`.
//!
//! ```no_run
//! use std::time::Duration;
//! use s3_wire_tokio::s3_ops::ops::{
//!     get_object::GetObject, list_objects_v2::ListObjectsV2, put_object::PutObject,
//! };
//! use s3_wire_tokio::s3_ops::ChecksumAlgorithm;
//! use s3_wire_tokio::{Body, Client, RetryConfig, bucket, key};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! // From code (or `Client::from_env()` for AWS_* variables and ~/.aws files).
//! let client = Client::builder()
//!     .endpoint("http://127.0.0.1:9000") // plain http only for loopback (or allow_http)
//!     .region("us-east-1")
//!     .static_credentials("AKIDEXAMPLE", "secret", None)
//!     .stall_timeout(Duration::from_secs(20))
//!     .retry(RetryConfig::default().with_max_attempts(5))
//!     .build()?;
//! let photos = bucket("photos")?;
//!
//! // Upload a file in place (re-read on retry, never copied), with a CRC32C trailer.
//! let body = Body::from_file("cat.jpg").await?;
//! let put = PutObject::new(photos.clone(), key("2024/cat.jpg")?)
//!     .checksum_algorithm(ChecksumAlgorithm::Crc32c);
//! client.put_object(put, body).await?;
//!
//! // Stream it back to disk; length and (with checksum mode) checksum are verified.
//! let get = GetObject::new(photos.clone(), key("2024/cat.jpg")?).checksum_mode(true);
//! let object = client.get_object(get).await?;
//! object.body.write_to_file("cat-copy.jpg").await?;
//!
//! // List lazily, page by page.
//! let mut pages = client.list_objects_v2_pages(ListObjectsV2::new(photos).prefix("2024/"));
//! while let Some(page) = pages.next_page().await {
//!     for object in page?.result.contents {
//!         println!("{} {}", object.size, object.key);
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! **Managed transfers** ([`transfer`]): [`Client::upload`] from a file (parts read
//! concurrently by position), bytes, or a stream / `AsyncRead` of known or unknown length;
//! [`Client::download`] in parallel to a file (written by position into a temporary file,
//! renamed into place only when complete) or to a writer in order; [`Client::copy`]. Each
//! returns a builder to `.await`, or to [`start`](transfer::UploadBuilder::start) for a
//! [`TransferHandle`] with [`Progress`] and cancellation:
//!
//! ```no_run
//! use s3_wire_tokio::{Client, UploadSource, bucket, key};
//!
//! # async fn demo(client: Client) -> Result<(), s3_wire_tokio::Error> {
//! let upload = client
//!     .upload(bucket("backups")?, key("disk.img")?, UploadSource::file("disk.img"))
//!     .part_size(16 << 20)
//!     .concurrency(8)
//!     .journal("disk.img.s3w-journal") // rerun after a crash: only missing parts are sent
//!     .start();
//! while !upload.is_finished() {
//!     let progress = upload.progress(); // committed never goes back, in_flight is exact
//!     println!("{} of {:?} bytes stored", progress.committed, progress.total);
//!     tokio::time::sleep(std::time::Duration::from_secs(1)).await;
//! }
//! let stored = upload.await?;
//! println!("{:?} ({:?})", stored.etag, stored.verification); // what the store confirmed
//!
//! let got = client
//!     .download(bucket("backups")?, key("disk.img")?, std::path::Path::new("copy.img"))
//!     .await?;
//! println!("{} bytes in {} GETs, {:?}", got.size, got.requests, got.verification);
//! # Ok(()) }
//! ```
//!
//! **Directory transfers**: [`Client::upload_directory`], [`Client::download_directory`]
//! and [`Client::copy_directory`] move a tree of files or a prefix of objects, many objects
//! at once over the managed transfers, the source walked (or listed) lazily so memory stays
//! bounded whatever the bucket's size; with filters, sync comparisons
//! ([`transfer::Compare`]), deletion of what the source lacks, an aggregate
//! [`DirectoryProgress`] and each object's outcome as it finishes:
//!
//! ```no_run
//! use s3_wire_tokio::transfer::Compare;
//! use s3_wire_tokio::{Client, bucket};
//!
//! # async fn demo(client: Client) -> Result<(), s3_wire_tokio::Error> {
//! let synced = client
//!     .upload_directory("photos", bucket("backups")?, "photos/")
//!     .compare(Compare::SizeAndTime) // only new or changed files
//!     .on_object(|outcome| println!("{:?} {}", outcome.action, outcome.relative))
//!     .await?;
//! println!("{} uploaded", synced.progress.objects_transferred);
//! # Ok(()) }
//! ```
//!
//! Every byte of part data the transfers of a client hold is admitted against one memory
//! budget ([`ClientBuilder::transfer_memory`]) before its request is sent; every part carries
//! a checksum (CRC32 by default: for multipart uploads the client combines the part CRCs
//! into the full-object value the store checks); downloads pin every range to the first
//! answer's ETag and verify what the store's checksums allow, and say so
//! ([`Verification`]). A failure says what it cleaned up ([`Error::transfer`]).
//!
//! **Integrity.** By default every PutObject carries a CRC32 the store checks (a header
//! for bytes, and for files over plain HTTP, where it is computed with the SHA-256 the
//! signature needs; an aws-chunked trailer for streams, and for files over TLS), and every
//! GetObject and HeadObject asks for the stored checksums; a body with a full-object
//! checksum is checked as it is read and fails with a checksum error unless every byte
//! matches ([`ObjectBody::verification`] says whether there was one to check). The request or the
//! client can turn either off ([`ClientBuilder::upload_checksum`],
//! [`ClientBuilder::verify_downloads`]); `docs/integrity.md` lists exactly what is checked
//! where.
//!
//! **Requests.** Every attempt is built by `s3-ops`, signed anew by
//! `s3-sigv4` (one signer and signing-key cache per client) and sent over one
//! shared connection pool (`reqwest`, rustls with the program's default crypto
//! provider if it installed one and `ring` otherwise, the platform's roots,
//! HTTP/1.1; HTTP/2 with the `http2` feature). Proxies
//! come from `HTTP_PROXY` / `HTTPS_PROXY` / `ALL_PROXY` / `NO_PROXY`, read when
//! the client is built (HTTPS through a proxy is tunnelled with `CONNECT`); a
//! loopback endpoint (`localhost`, `127.0.0.0/8`, `::1`) is always called
//! directly, as Go's HTTP client does: a proxy cannot reach this machine's
//! loopback. `ClientBuilder::proxy_from_env(false)` ignores those variables.
//!
//! **Multi-Region Access Points.** A bucket given as a Multi-Region Access Point ARN
//! (`bucket("arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap")`) is addressed at
//! its global host `<alias>.accesspoint.s3-global.amazonaws.com` (AWS endpoints only) and
//! signed with SigV4a for every region (`x-amz-region-set: *`), which needs the `sigv4a`
//! feature: it is off by default because it adds the ECDSA P-256 crates, and without it
//! such requests fail before anything is sent. Region redirects are never followed for
//! them: the one host serves every region.
//!
//! **Retries** ([`RetryConfig`]): exponential backoff with full jitter, a
//! maximum number of attempts, a token-bucket retry budget shared by all
//! clones of a client, `Retry-After` honoured within the operation deadline,
//! one region redirect followed for AWS endpoints (the request is rebuilt and
//! re-signed for the new host). Replayable bodies are resent; a one-shot
//! stream is retried only if none of it was sent. A `GetObject` body that
//! breaks off or stalls is resumed from its first missing byte with a ranged
//! request pinned to the same object by `If-Match` on its ETag; its requests, the first
//! GET's tries included, all count against the same `max_attempts`.
//!
//! **Timeouts** ([`Timeouts`]): connect, stall (no progress in either
//! direction) and whole operation.
//!
//! **Tracing** (feature `tracing`): every operation runs in a `tracing` span
//! `s3.operation` (target `s3_wire`, field `operation`), and each of its attempts ends with
//! a DEBUG event `s3.attempt` with the method, host, path and query, attempt number,
//! status, request id, error and elapsed milliseconds. No header and no secret is recorded.
//! Subscribe with, say, `tracing_subscriber::fmt().with_env_filter("s3_wire=debug")`.
//!
//! **Errors** ([`Error`]): the kind (S3 error document, transport, timeout,
//! body length, ...), the request id, the number of attempts and the source
//! chain.
//!
//! **Dependency rule:** may depend on every pure crate and on tokio/reqwest; no
//! pure crate may depend on it.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bandwidth;
#[cfg(feature = "blocking")]
pub mod blocking;
mod body;
mod chunked;
mod client;
mod config;
/// Credentials, region and endpoint settings: s3-wire-credentials, re-exported.
pub use s3_wire_credentials as credentials;
mod error;
mod express;
mod file_writer;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
mod hooks;
mod learnt;
mod memory;
mod object_body;
mod ops;
mod paginate;
mod progress;
mod retry;
mod settings;
mod sign;
mod stall;
mod task_hop;
mod trace;
pub mod transfer;
mod transport;
mod verification;

pub use body::{Body, ByteStream};
pub use client::Client;
pub use config::{ClientBuilder, DEFAULT_REGION};
pub use error::{
    Cleanup, Error, ErrorKind, TimeoutKind, TransferErrorKind, TransferFailure, TransportErrorKind,
};
pub use hooks::{AttemptRecord, RequestHook};
pub use object_body::{ObjectBody, ObjectReader};
pub use ops::{GetObjectResponse, bucket, key};
pub use paginate::{Paginated, Paginator};
pub use progress::Progress;
pub use retry::RetryConfig;
pub use settings::{Timeouts, TransferOptions};
pub use sign::PayloadSigning;
pub use transfer::{Destination, DirectoryHandle, DirectoryProgress, TransferHandle, UploadSource};
pub use verification::{NotVerified, Verification};

/// The HTTP client this crate sends with: build a client of your own with it for
/// [`ClientBuilder::http_client`].
pub use reqwest;
/// The planner (`s3-multipart-plan`): part limits and sizing of managed transfers.
pub use s3_multipart_plan;
/// The operation codecs (`s3-ops`): typed requests and outputs.
pub use s3_ops;
/// The signer (`s3-sigv4`): credentials, presigned requests.
pub use s3_sigv4;
/// The S3 XML documents (`s3-xml`): listing entries, completed parts, ….
pub use s3_xml;

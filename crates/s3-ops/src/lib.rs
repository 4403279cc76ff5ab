//! Typed S3 operations as pure `http::Request` / `http::Response` codecs.
//!
//! Each operation turns into an `http::Request<()>` plus a [`Body`] description, and an
//! `http::Response` (status, headers, body bytes) turns into a typed output or a typed
//! S3 error. Addressing, key encoding, checksums and retry classification live here as
//! data. No I/O, no clock: a transport (such as `s3-wire-tokio`) signs the request with
//! `s3-sigv4`, sends it, and hands the response back.
//!
//! **Dependency rule:** `s3-sigv4`, `s3-xml`, `http`, `bytes` and checksum crates; never a
//! runtime.
//!
//! # Example
//!
//! ```
//! use bytes::Bytes;
//! use s3_ops::{BucketName, Endpoint, ObjectKey, Operation, RetryClass};
//! use s3_ops::PutObject;
//! use s3_ops::GetObject;
//!
//! let endpoint = Endpoint::aws("eu-west-1")?;
//! let bucket = BucketName::new("my-bucket")?;
//! let key = ObjectKey::new("reports/2024 Q1+Q2.csv")?;
//!
//! // Encode: method, fully encoded URI and headers; the body is described, not sent.
//! let put = PutObject::new(bucket.clone(), key.clone())
//!     .body(Bytes::from_static(b"a,b\n1,2\n"))
//!     .content_type("text/csv")
//!     .checksum_algorithm(s3_ops::ChecksumAlgorithm::Crc32c);
//! let request = put.request(&endpoint)?;
//! assert_eq!(
//!     request.request.uri(),
//!     "https://my-bucket.s3.eu-west-1.amazonaws.com/reports/2024%20Q1%2BQ2.csv"
//! );
//! assert_eq!(request.request.headers()["x-amz-checksum-crc32c"], "SZ2HxQ==");
//!
//! // ... sign with s3-sigv4, send, then decode what came back:
//! let response = http::Response::builder()
//!     .status(503)
//!     .header("x-amz-request-id", "REQ1")
//!     .body(Bytes::from_static(
//!         b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
//!     ))?;
//! let error = GetObject::new(bucket, key).response(response).unwrap_err();
//! assert_eq!(error.retry_class(), RetryClass::Throttling);
//! assert_eq!(error.service_error().unwrap().request_id.as_deref(), Some("REQ1"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Layout
//!
//! - [`Endpoint`], [`AddressingStyle`]: where requests go; [`BucketName`], [`ObjectKey`]:
//!   validated names. A bucket may be a Multi-Region Access Point ARN, whose requests are
//!   signed with SigV4a (feature `sigv4a`); access point ARNs, access point aliases and S3
//!   Express directory buckets are addressed as AWS documents them, and each request says
//!   how it must be signed ([`OperationRequest::signing`], [`SigningScope`]).
//! - [`Operation`]: the trait every operation in [`ops`] implements (one module per S3
//!   action, each with a builder-style request type and a typed output).
//! - [`Error`] / [`S3Error`] / [`RetryClass`]: errors and how to react to them.
//! - [`checksum`]: CRC32, CRC32C, CRC64NVME, SHA-1, SHA-256 and Content-MD5.
//! - [`provider`]: provider profiles ([`Provider`], [`ProviderQuirks`]): what each
//!   S3-compatible store accepts, and how a request is adapted to it.
//! - [`presign`]: presigned URLs for GetObject, PutObject, HeadObject, DeleteObject and
//!   UploadPart; [`presign_post`]: the URL and fields of a browser upload form (POST policy).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod checksum;
mod encoding;
mod endpoint;
mod error;
mod extras;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
mod grants;
mod names;
pub mod ops;
mod partition;
pub mod presign;
pub mod presign_post;
pub mod provider;
mod request;
mod response;
mod signing;
mod types;
mod xml;

pub use checksum::{Checksum, ChecksumAlgorithm, ChecksumType, Checksummer, ContentMd5};
pub use endpoint::{AddressingStyle, Endpoint, Scheme};
pub use error::{Error, InvalidInput, MalformedResponse, RetryClass, S3Error, TransportFailure};
pub use extras::{RawRequest, RequestExtras};
pub use grants::Grants;
/// The `http` crate whose types requests and responses are made of (`Method`,
/// `Request`, `Response`, `HeaderMap`), for [`RawRequest`] and custom transports.
pub use http;
pub use names::{AccessPointArn, BucketKind, BucketName, ObjectKey};
pub use ops::{
    AbortMultipartUpload, AclSource, CompleteMultipartUpload, CopyObject, CopySource, CreateBucket,
    CreateMultipartUpload, CreateSession, DeleteBucket, DeleteBucketCors, DeleteBucketEncryption,
    DeleteBucketLifecycle, DeleteBucketPolicy, DeleteBucketTagging, DeleteObject,
    DeleteObjectTagging, DeleteObjects, DeletePublicAccessBlock, GetBucketAcl, GetBucketCors,
    GetBucketEncryption, GetBucketLifecycleConfiguration, GetBucketLocation, GetBucketPolicy,
    GetBucketTagging, GetBucketVersioning, GetObject, GetObjectAcl, GetObjectAttributes,
    GetObjectLegalHold, GetObjectLockConfiguration, GetObjectRetention, GetObjectTagging,
    GetPublicAccessBlock, HeadBucket, HeadObject, ListBuckets, ListDirectoryBuckets,
    ListMultipartUploads, ListObjectVersions, ListObjects, ListObjectsV2, ListParts,
    ObjectAttributeKind, ObjectAttributes, PutBucketAcl, PutBucketCors, PutBucketEncryption,
    PutBucketLifecycleConfiguration, PutBucketPolicy, PutBucketTagging, PutBucketVersioning,
    PutObject, PutObjectAcl, PutObjectLegalHold, PutObjectLockConfiguration, PutObjectRetention,
    PutObjectTagging, PutPublicAccessBlock, RestoreObject, UploadPart, UploadPartCopy,
    WriteGetObjectResponse,
};
pub use provider::{Provider, ProviderQuirks};
pub use request::{Body, IntegrityDefaults, Operation, OperationRequest, RESPONSE_BODY_LIMIT};
pub use response::{DocumentOutput, EncryptionInfo, RequestIds, service_error};
pub use s3_xml::{CompletedPart, ETag, Timestamp};
pub use signing::SigningScope;
pub use types::{
    ByteRange, CannedAcl, Conditions, ContentRange, ServerSideEncryption, SseCustomerKey,
    StorageClass,
};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

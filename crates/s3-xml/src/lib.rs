//! The S3 XML documents, decoded and encoded, without I/O.
//!
//! Remote XML is untrusted input: decoding is bounded ([`Limits`]: bytes,
//! nesting depth, list entries), strict about values (integers, booleans,
//! RFC 3339 [`Timestamp`]s, [`ETag`]s), refuses DTDs and entity declarations,
//! and never panics. Documents are read by a small purpose-built XML 1.0
//! tokenizer (well-formedness checked: names, matching end tags, quoting,
//! comments, CDATA, references) that borrows from the input and allocates
//! only the owned strings of the result; it is tested differentially against
//! `quick-xml`. Unknown elements are skipped, element names are matched
//! on their local part (with or without `xmlns` or a prefix), text is kept
//! exactly (whitespace-only keys included) except that line ends are
//! normalized as XML 1.0 requires, and CRLF documents are accepted.
//!
//! Every problem is one [`Error`] carrying an [`ErrorKind`] and the byte
//! position where it was found.
//!
//! # Example
//!
//! ```
//! use s3_xml::{decode_list_objects_v2, decode_or_error, CompleteMultipartUploadResult, Limits, Outcome};
//!
//! let limits = Limits::new(1 << 20);
//! let page = decode_list_objects_v2(
//!     br#"<?xml version="1.0" encoding="UTF-8"?>
//!     <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
//!       <Name>bucket</Name><Prefix></Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys>
//!       <IsTruncated>false</IsTruncated>
//!       <Contents><Key>photos/2006/January/sample.jpg</Key>
//!         <LastModified>2009-10-12T17:50:30.000Z</LastModified>
//!         <ETag>&quot;bf1d737a4d46a19f3bced6905cc8b902&quot;</ETag>
//!         <Size>142863</Size><StorageClass>STANDARD</StorageClass></Contents>
//!     </ListBucketResult>"#,
//!     &limits,
//! )?;
//! assert_eq!(page.contents[0].key, "photos/2006/January/sample.jpg");
//! assert_eq!(page.contents[0].size, 142_863);
//! assert_eq!(page.contents[0].etag.as_ref().unwrap().unquoted(), "bf1d737a4d46a19f3bced6905cc8b902");
//! assert_eq!(page.contents[0].last_modified.unix_seconds(), 1_255_369_830);
//!
//! // CompleteMultipartUpload can fail after S3 has sent "200 OK".
//! let body = b"<Error><Code>InternalError</Code><Message>retry</Message></Error>";
//! match decode_or_error::<CompleteMultipartUploadResult>(body, &limits)? {
//!     Outcome::Success(done) => println!("etag {:?}", done.etag),
//!     Outcome::Error(e) => assert_eq!(e.code, "InternalError"),
//! }
//!
//! // Request bodies.
//! let parts = vec![s3_xml::CompletedPart::new(1, "\"a54357aff0632cce46d942af68356b38\"".parse()?)];
//! let body = s3_xml::encode_complete_multipart_upload(&s3_xml::CompleteMultipartUpload::new(parts))?;
//! assert!(body.contains("<Part><ETag>\"a54357aff0632cce46d942af68356b38\"</ETag><PartNumber>1</PartNumber></Part>"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **Dependency rule:** `memchr` only; never a runtime, never `http`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod acl;
mod buckets;
mod common;
mod copy;
mod cors;
mod delete;
mod encryption;
mod error;
mod error_document;
mod etag;
mod express;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod lexer;
mod lifecycle;
mod limits;
mod list_object_versions;
mod list_objects;
mod multipart;
mod object_attributes;
mod object_lock;
mod public_access_block;
mod reader;
mod restore;
mod sts;
mod tagging;
mod timestamp;
mod versioning;
mod writer;

pub use acl::{AccessControlPolicy, Grant, Grantee, Permission};
pub use buckets::{Bucket, BucketLocation, CreateBucketConfiguration, ListBucketsResult};
pub use common::{Checksums, Outcome, Owner, UrlDecoded};
pub use copy::{CopyObjectResult, CopyPartResult};
pub use cors::{CorsConfiguration, CorsRule};
pub use delete::{Delete, DeleteError, DeleteResult, DeletedObject, ObjectIdentifier};
pub use encryption::{EncryptionByDefault, EncryptionRule, ServerSideEncryptionConfiguration};
pub use error::{Error, ErrorKind, Malformed, ValueProblem};
pub use error_document::ErrorDocument;
pub use etag::{ETag, ETagError};
pub use express::{CreateSessionResult, ListDirectoryBucketsResult};
pub use lifecycle::{
    LifecycleConfiguration, LifecycleExpiration, LifecycleFilter, LifecycleRule,
    NoncurrentVersionExpiration, NoncurrentVersionTransition, RuleStatus, Transition,
};
pub use limits::Limits;
pub use list_object_versions::{
    DeleteMarkerEntry, ListObjectVersionsResult, ObjectVersion, VersionEntry,
};
pub use list_objects::{ListObjectsResult, ListObjectsV2Result, Object};
pub use multipart::{
    CompleteMultipartUpload, CompleteMultipartUploadResult, CompletedPart,
    InitiateMultipartUploadResult, ListMultipartUploadsResult, ListPartsResult, MultipartUpload,
    Part,
};
pub use object_attributes::{GetObjectAttributesResult, ObjectPart, ObjectParts};
pub use object_lock::{
    DefaultRetention, LegalHold, LegalHoldStatus, ObjectLockConfiguration, ObjectLockEnabled,
    Retention, RetentionMode, RetentionPeriod,
};
pub use public_access_block::PublicAccessBlockConfiguration;
pub use restore::{RestoreRequest, RestoreTier};
pub use sts::{AssumeRoleResult, AssumedRoleUser, StsCredentials};
pub use tagging::{Tag, Tagging};
pub use timestamp::{Timestamp, TimestampError};
pub use versioning::{MfaDeleteStatus, VersioningConfiguration, VersioningStatus};

use common::decode_document;

/// A document type that [`decode_or_error`] can decode. Implemented by every
/// decoded type of this crate; sealed.
pub trait Document: sealed::Sealed {}

mod sealed {
    pub trait Sealed: Sized {
        fn decode_outcome(
            xml: &[u8],
            limits: &crate::Limits,
        ) -> Result<crate::Outcome<Self>, crate::Error>;
    }
}

macro_rules! documents {
    ($($t:ty),* $(,)?) => {$(
        impl sealed::Sealed for $t {
            fn decode_outcome(xml: &[u8], limits: &Limits) -> Result<Outcome<Self>, Error> {
                common::decode_outcome::<$t>(xml, limits)
            }
        }
        impl Document for $t {}
    )*};
}

documents!(
    ListObjectsV2Result,
    ListObjectsResult,
    ListObjectVersionsResult,
    ListBucketsResult,
    BucketLocation,
    InitiateMultipartUploadResult,
    CompleteMultipartUploadResult,
    ListPartsResult,
    ListMultipartUploadsResult,
    CopyObjectResult,
    CopyPartResult,
    DeleteResult,
    Tagging,
    AssumeRoleResult,
    CreateSessionResult,
    ListDirectoryBucketsResult,
    CompleteMultipartUpload,
    Delete,
    CreateBucketConfiguration,
    Retention,
    LegalHold,
    ObjectLockConfiguration,
    VersioningConfiguration,
    LifecycleConfiguration,
    CorsConfiguration,
    ServerSideEncryptionConfiguration,
    PublicAccessBlockConfiguration,
    GetObjectAttributesResult,
    AccessControlPolicy,
    RestoreRequest,
);

/// Decodes a document of type `T`, or the S3 `<Error>` document sent in its
/// place. Use it for the bodies of 200 responses to CompleteMultipartUpload
/// ([`CompleteMultipartUploadResult`]), CopyObject ([`CopyObjectResult`]) and
/// UploadPartCopy ([`CopyPartResult`]), which S3 may turn into errors after
/// the status line was sent. Any other root element is an
/// [`ErrorKind::UnexpectedRoot`] error.
pub fn decode_or_error<T: Document>(xml: &[u8], limits: &Limits) -> Result<Outcome<T>, Error> {
    T::decode_outcome(xml, limits)
}

/// Decodes a ListObjectsV2 result (`<ListBucketResult>`).
pub fn decode_list_objects_v2(xml: &[u8], limits: &Limits) -> Result<ListObjectsV2Result, Error> {
    decode_document(xml, limits)
}

/// Decodes a ListObjects (v1) result (`<ListBucketResult>`).
pub fn decode_list_objects(xml: &[u8], limits: &Limits) -> Result<ListObjectsResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a ListObjectVersions result (`<ListVersionsResult>`).
pub fn decode_list_object_versions(
    xml: &[u8],
    limits: &Limits,
) -> Result<ListObjectVersionsResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a ListBuckets result (`<ListAllMyBucketsResult>`).
pub fn decode_list_buckets(xml: &[u8], limits: &Limits) -> Result<ListBucketsResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a CreateSession result (`<CreateSessionResult>`).
pub fn decode_create_session(xml: &[u8], limits: &Limits) -> Result<CreateSessionResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a ListDirectoryBuckets result (`<ListAllMyDirectoryBucketsResult>`).
pub fn decode_list_directory_buckets(
    xml: &[u8],
    limits: &Limits,
) -> Result<ListDirectoryBucketsResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a GetBucketLocation result (`<LocationConstraint>`).
pub fn decode_bucket_location(xml: &[u8], limits: &Limits) -> Result<BucketLocation, Error> {
    decode_document(xml, limits)
}

/// Decodes a CreateMultipartUpload result (`<InitiateMultipartUploadResult>`).
pub fn decode_initiate_multipart_upload(
    xml: &[u8],
    limits: &Limits,
) -> Result<InitiateMultipartUploadResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a CompleteMultipartUpload result. An `<Error>` root is an error
/// here; use [`decode_or_error`] on 200 responses.
pub fn decode_complete_multipart_upload(
    xml: &[u8],
    limits: &Limits,
) -> Result<CompleteMultipartUploadResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a ListParts result (`<ListPartsResult>`).
pub fn decode_list_parts(xml: &[u8], limits: &Limits) -> Result<ListPartsResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a ListMultipartUploads result (`<ListMultipartUploadsResult>`).
pub fn decode_list_multipart_uploads(
    xml: &[u8],
    limits: &Limits,
) -> Result<ListMultipartUploadsResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a CopyObject result (`<CopyObjectResult>`). Use
/// [`decode_or_error`] on 200 responses.
pub fn decode_copy_object(xml: &[u8], limits: &Limits) -> Result<CopyObjectResult, Error> {
    decode_document(xml, limits)
}

/// Decodes an UploadPartCopy result (`<CopyPartResult>`). Use
/// [`decode_or_error`] on 200 responses.
pub fn decode_copy_part(xml: &[u8], limits: &Limits) -> Result<CopyPartResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a DeleteObjects result (`<DeleteResult>`).
pub fn decode_delete_result(xml: &[u8], limits: &Limits) -> Result<DeleteResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a tag set (`<Tagging>`), e.g. a GetObjectTagging result.
pub fn decode_tagging(xml: &[u8], limits: &Limits) -> Result<Tagging, Error> {
    decode_document(xml, limits)
}

/// Decodes an S3 error document (`<Error>`, or STS's `<ErrorResponse>`).
pub fn decode_error_document(xml: &[u8], limits: &Limits) -> Result<ErrorDocument, Error> {
    decode_document(xml, limits)
}

/// Decodes an STS AssumeRole or AssumeRoleWithWebIdentity response.
pub fn decode_assume_role(xml: &[u8], limits: &Limits) -> Result<AssumeRoleResult, Error> {
    decode_document(xml, limits)
}

/// Decodes a CompleteMultipartUpload request body (for servers and tests).
pub fn decode_complete_multipart_upload_request(
    xml: &[u8],
    limits: &Limits,
) -> Result<CompleteMultipartUpload, Error> {
    decode_document(xml, limits)
}

/// Decodes a DeleteObjects request body (for servers and tests).
pub fn decode_delete_request(xml: &[u8], limits: &Limits) -> Result<Delete, Error> {
    decode_document(xml, limits)
}

/// Decodes a CreateBucket request body (for servers and tests).
pub fn decode_create_bucket_configuration(
    xml: &[u8],
    limits: &Limits,
) -> Result<CreateBucketConfiguration, Error> {
    decode_document(xml, limits)
}

/// Encodes a CompleteMultipartUpload request body. Fails only if a value
/// holds a character XML 1.0 cannot carry ([`ErrorKind::Unencodable`]).
pub fn encode_complete_multipart_upload(
    request: &CompleteMultipartUpload,
) -> Result<String, Error> {
    request.encode()
}

/// Encodes a DeleteObjects request body. Fails only if a key or version id
/// holds a character XML 1.0 cannot carry ([`ErrorKind::Unencodable`]).
pub fn encode_delete(request: &Delete) -> Result<String, Error> {
    request.encode()
}

/// Encodes a CreateBucket request body.
pub fn encode_create_bucket_configuration(
    config: &CreateBucketConfiguration,
) -> Result<String, Error> {
    config.encode()
}

/// Encodes a tag set (PutObjectTagging / PutBucketTagging body).
pub fn encode_tagging(tagging: &Tagging) -> Result<String, Error> {
    tagging.encode()
}

/// Generates `decode_*` functions for documents that are both a request body and a result
/// (bucket and object configurations) or a result only.
macro_rules! decode_functions {
    ($($(#[$doc:meta])* $name:ident => $t:ty;)*) => {$(
        $(#[$doc])*
        pub fn $name(xml: &[u8], limits: &Limits) -> Result<$t, Error> {
            decode_document(xml, limits)
        }
    )*};
}

/// Generates `encode_*` functions; each fails only if a value holds a character XML 1.0
/// cannot carry ([`ErrorKind::Unencodable`]).
macro_rules! encode_functions {
    ($($(#[$doc:meta])* $name:ident => $t:ty;)*) => {$(
        $(#[$doc])*
        ///
        /// Fails only if a value holds a character XML 1.0 cannot carry
        /// ([`ErrorKind::Unencodable`]).
        pub fn $name(document: &$t) -> Result<String, Error> {
            document.encode()
        }
    )*};
}

decode_functions! {
    /// Decodes an object's retention (`<Retention>`): GetObjectRetention's result or
    /// PutObjectRetention's body.
    decode_retention => Retention;
    /// Decodes an object's legal hold (`<LegalHold>`).
    decode_legal_hold => LegalHold;
    /// Decodes a bucket's Object Lock configuration (`<ObjectLockConfiguration>`).
    decode_object_lock_configuration => ObjectLockConfiguration;
    /// Decodes a bucket's versioning state (`<VersioningConfiguration>`).
    decode_versioning_configuration => VersioningConfiguration;
    /// Decodes a bucket's lifecycle rules (`<LifecycleConfiguration>`).
    decode_lifecycle_configuration => LifecycleConfiguration;
    /// Decodes a bucket's CORS rules (`<CORSConfiguration>`).
    decode_cors_configuration => CorsConfiguration;
    /// Decodes a bucket's default encryption (`<ServerSideEncryptionConfiguration>`).
    decode_server_side_encryption_configuration => ServerSideEncryptionConfiguration;
    /// Decodes a bucket's public access block (`<PublicAccessBlockConfiguration>`).
    decode_public_access_block_configuration => PublicAccessBlockConfiguration;
    /// Decodes a GetObjectAttributes result (`<GetObjectAttributesResponse>`).
    decode_get_object_attributes => GetObjectAttributesResult;
    /// Decodes an ACL (`<AccessControlPolicy>`): GetObjectAcl / GetBucketAcl's result or the
    /// Put variants' body.
    decode_access_control_policy => AccessControlPolicy;
    /// Decodes a RestoreObject request body (`<RestoreRequest>`, for servers and tests).
    decode_restore_request => RestoreRequest;
}

encode_functions! {
    /// Encodes an object's retention (PutObjectRetention body).
    encode_retention => Retention;
    /// Encodes an object's legal hold (PutObjectLegalHold body).
    encode_legal_hold => LegalHold;
    /// Encodes a bucket's Object Lock configuration (PutObjectLockConfiguration body).
    encode_object_lock_configuration => ObjectLockConfiguration;
    /// Encodes a bucket's versioning state (PutBucketVersioning body).
    encode_versioning_configuration => VersioningConfiguration;
    /// Encodes a bucket's lifecycle rules (PutBucketLifecycleConfiguration body): a filter of
    /// two or more conditions is written inside `<And>`.
    encode_lifecycle_configuration => LifecycleConfiguration;
    /// Encodes a bucket's CORS rules (PutBucketCors body).
    encode_cors_configuration => CorsConfiguration;
    /// Encodes a bucket's default encryption (PutBucketEncryption body).
    encode_server_side_encryption_configuration => ServerSideEncryptionConfiguration;
    /// Encodes a bucket's public access block (PutPublicAccessBlock body).
    encode_public_access_block_configuration => PublicAccessBlockConfiguration;
    /// Encodes an ACL (PutObjectAcl / PutBucketAcl body).
    encode_access_control_policy => AccessControlPolicy;
    /// Encodes a RestoreObject request body.
    encode_restore_request => RestoreRequest;
}

//! Every `s3-ops` operation as an async method of [`Client`].
//!
//! Operations are the typed request structs of `s3-ops` (re-exported as
//! [`s3_ops::ops`]), built with their setters and handed to the method of the
//! same name. [`Client::send`] runs any operation whose response is decoded in
//! memory.

use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use s3_ops::ops::get_object::{GetObject, GetObjectOutput, Resumable};
use s3_ops::ops::list_objects_v2::{ListObjectsV2, ListObjectsV2Output};
use s3_ops::ops::put_object::{PutObject, PutObjectOutput};
use s3_ops::ops::upload_part::{UploadPart, UploadPartOutput};
use s3_ops::ops::write_get_object_response::{
    WriteGetObjectResponse, WriteGetObjectResponseOutput,
};
use s3_ops::presign::Presignable;
use s3_ops::presign_post::{PostConditions, PresignedPost};
use s3_ops::{BucketName, Checksum, ChecksumAlgorithm, ObjectKey, Operation};
use s3_sigv4::{Credentials, PresignedRequest, SigningTime};

use crate::body::{Body, Source};
use crate::client::{Client, RawResponse, RetryDenied, decode_buffered};
use crate::error::{Error, ErrorKind, TimeoutKind};
use crate::object_body::{ObjectBody, Resumer, Resumption};
use crate::retry::RetryCost;
use crate::sign::{INLINE_DIGEST_LIMIT, digest_bytes};

/// The [`Resumer`](crate::object_body::Resumer) of a `GetObject` body: continuation requests planned by `plan`, while
/// the client's retry limits (attempts, budget) and the deadline allow.
pub(crate) fn resumer(client: Client, plan: Resumable) -> Resumer {
    Box::new(move |received, deadline, requests| {
        let Some(request) = plan.request_after(received) else {
            return Resumption::Refused;
        };
        if deadline.is_some_and(|(at, _)| Instant::now() >= at) {
            return Resumption::Refused;
        }
        let (delay, tokens) = match client.retry_permit(requests, RetryCost::Timeout) {
            Ok(permit) => permit,
            Err(RetryDenied::Attempts) => return Resumption::Refused,
            Err(RetryDenied::Budget) => return Resumption::BudgetSpent,
        };
        let client = client.clone();
        let plan = plan.clone();
        let fetch = async move {
            tokio::time::sleep(delay).await;
            // The continuation's own body is only a source of bytes: this body keeps
            // the checks and the resumption. Its tries count on from the body's.
            let (response, requests) = client.fetch_object(&request, requests).await?;
            plan.check(received, &response.output.head)
                .map_err(|error| Error::from(error).with_attempts(requests))?;
            client.retry_succeeded(tokens);
            Ok((response.body.into_transport_body(), requests))
        };
        Resumption::Started(match deadline {
            // The whole body, continuations included, stays within the deadline.
            Some((at, limit)) => Box::pin(async move {
                tokio::time::timeout_at(at, fetch)
                    .await
                    .unwrap_or_else(|_| {
                        Err(Error::timeout(TimeoutKind::Operation(limit))
                            .with_attempts(requests + 1))
                    })
            }),
            None => Box::pin(fetch),
        })
    })
}

/// A streaming `GetObject` response: the decoded head and the unread body.
#[derive(Debug)]
#[non_exhaustive]
pub struct GetObjectResponse {
    /// Status, headers and metadata (its `body` field is empty: read
    /// [`GetObjectResponse::body`]).
    pub output: GetObjectOutput,
    /// The object's bytes, streamed.
    pub body: ObjectBody,
}

impl Client {
    /// Runs any operation whose response is decoded in memory (everything
    /// except streaming downloads), with the client's retries and timeouts, and its
    /// integrity defaults where the operation chose nothing (see
    /// [`ClientBuilder::upload_checksum`](crate::ClientBuilder::upload_checksum)).
    pub async fn send<O: Operation>(&self, operation: O) -> Result<O::Output, Error> {
        let operation = operation.with_integrity_defaults(self.inner.integrity);
        self.send_ref(&operation).await
    }

    /// `GetObject`, streaming: returns once the response head arrived; the
    /// body is read from the connection as the caller consumes
    /// [`GetObjectResponse::body`]. Retries cover failures before the head
    /// arrives; a body that breaks off later is resumed with a ranged request
    /// for the same object (see [`ObjectBody`]).
    ///
    /// Checksum mode is on unless the operation or the client
    /// ([`ClientBuilder::verify_downloads`](crate::ClientBuilder::verify_downloads)) turns
    /// it off, so a full-object checksum the store returns is verified as the body is
    /// read; [`ObjectBody::verification`] says whether there is one.
    pub async fn get_object(&self, operation: GetObject) -> Result<GetObjectResponse, Error> {
        let operation = operation.with_integrity_defaults(self.inner.integrity);
        let (GetObjectResponse { output, mut body }, requests) =
            self.fetch_object(&operation, 0).await?;
        // s3-ops decides which bodies a full-object checksum covers (not a
        // partial range, not a composite multipart value) and which can resume.
        body.verify_as(operation.asks_for_checksums(), &output.head);
        body.set_requests(requests);
        if let Some(plan) = operation.resumable(&output.head) {
            body.resume_with(resumer(self.clone(), plan));
        }
        Ok(GetObjectResponse { output, body })
    }

    /// `GetObject` up to a successful response head, with the body as the
    /// transport delivers it (length, stall and deadline checks only): what
    /// [`Client::get_object`] builds on, and what a resumed body's continuation
    /// requests use (counting on from the `tries_before` requests of the body). Also
    /// returns the number of requests made in all.
    pub(crate) async fn fetch_object(
        &self,
        op: &GetObject,
        tries_before: u32,
    ) -> Result<(GetObjectResponse, u32), Error> {
        let done = self
            .execute_counted(op, None, tries_before, |response: RawResponse| async move {
                let RawResponse { head, body } = response;
                if !head.status.is_success() {
                    // s3-ops decodes every non-2xx GetObject as the S3 error.
                    let output = decode_buffered(op, RawResponse { head, body }).await?;
                    return Ok(GetObjectResponse {
                        output,
                        body: ObjectBody::empty(),
                    });
                }
                let output = op.response_head(&head)?;
                Ok(GetObjectResponse { output, body })
            })
            .await?;
        Ok((done.output, done.attempts))
    }

    /// `PutObject` with `body`: bytes (replayable), a file
    /// ([`Body::from_file`]: read in place, re-read on retry) or a one-shot
    /// stream of known length ([`Body::from_stream`]).
    ///
    /// The object carries a checksum: the one chosen on the operation
    /// (`checksum_algorithm`, `checksum`), otherwise the client's
    /// ([`ClientBuilder::upload_checksum`](crate::ClientBuilder::upload_checksum),
    /// CRC32 unless changed). It is computed up front for bytes, and for a file over plain
    /// HTTP (in the same read as the SHA-256 the signature needs), and sent in a header; a
    /// stream, and a file over TLS, send it as an aws-chunked trailer. The store refuses
    /// bytes that do not match it. With `no_checksum` (or a client without one) nothing is added: a file is
    /// signed by its SHA-256 over plain HTTP and sent `UNSIGNED-PAYLOAD` over TLS, a stream
    /// is sent in signed chunks over plain HTTP and `UNSIGNED-PAYLOAD` over TLS.
    pub async fn put_object(
        &self,
        operation: PutObject,
        body: impl Into<Body>,
    ) -> Result<PutObjectOutput, Error> {
        let body = body.into();
        let operation = match &body.source {
            Source::Bytes(bytes) => operation.body(bytes.clone()),
            _ => operation.streaming_body(body.len()),
        };
        self.send_upload(operation, body).await
    }

    /// `UploadPart` with `body` (see [`Client::put_object`] for body kinds). The part
    /// carries the checksum chosen on the operation, which must be the algorithm its
    /// upload was created with; there is no client default (the managed
    /// [`Client::upload`] keeps the algorithm consistent across the whole upload).
    pub async fn upload_part(
        &self,
        operation: UploadPart,
        body: impl Into<Body>,
    ) -> Result<UploadPartOutput, Error> {
        let body = body.into();
        let operation = match &body.source {
            Source::Bytes(bytes) => operation.body(bytes.clone()),
            _ => operation.streaming_body(body.len()),
        };
        self.send_upload(operation, body).await
    }

    /// `WriteGetObjectResponse`: an S3 Object Lambda function's answer to the GetObject it
    /// was invoked for, `body` streamed to the caller with the status and headers the
    /// operation forwards. The request goes to
    /// `<request-route>.s3-object-lambda.<region>.amazonaws.com`, signed for
    /// `s3-object-lambda`. It is sent once: the event's token answers one GetObject.
    pub async fn write_get_object_response(
        &self,
        operation: WriteGetObjectResponse,
        body: impl Into<Body>,
    ) -> Result<WriteGetObjectResponseOutput, Error> {
        let body = body.into();
        let operation = match &body.source {
            Source::Bytes(bytes) => operation.body(bytes.clone()),
            _ => operation.streaming_body(body.len()),
        };
        self.send_upload(operation, body).await
    }

    async fn send_upload<O: InMemoryChecksum>(
        &self,
        op: O,
        mut body: Body,
    ) -> Result<O::Output, Error> {
        // In-memory bytes travel in the operation's description (s3-ops checksums them as it
        // builds each attempt's request); the body still goes along for its progress
        // reporting. A large one, and bytes in pieces (which the description cannot hold),
        // are checksummed here instead: once for every attempt, off the runtime's thread
        // when large, with the SHA-256 a plain-HTTP signature needs in the same pass.
        let mut op = op.with_integrity_defaults(self.inner.integrity);
        let in_memory = match &body.source {
            Source::Bytes(bytes) if bytes.len() > INLINE_DIGEST_LIMIT => {
                Some(std::slice::from_ref(bytes))
            }
            Source::Pieces(pieces) => Some(pieces.as_slice()),
            _ => None,
        };
        if let (Some(pieces), Some(requested)) = (in_memory, op.checksum_to_compute())
            && let Some(algorithm) = self.provider_quirks().upload_checksum(Some(requested))
        {
            let digests = self.upload_digests(Some(algorithm));
            let (sha256, checksum) = digest_bytes(pieces, digests).await?;
            op = op.with_checksum(checksum.expect("asked for"));
            body.sha256 = sha256;
        }
        self.send_with_body(&op, Some(&body)).await
    }

    /// A presigned URL for `operation` (GetObject, PutObject, HeadObject,
    /// DeleteObject, UploadPart), valid for `expires_in` (1 s to 7 days, or the store's
    /// shorter limit: see [`ClientBuilder::provider`](crate::ClientBuilder::provider)) from
    /// now. Anyone holding it can perform the operation without credentials,
    /// sending the headers in [`PresignedRequest::headers`].
    pub async fn presign<O: Presignable>(
        &self,
        operation: &O,
        expires_in: Duration,
    ) -> Result<PresignedRequest, Error> {
        let credentials = self.presigning_credentials(expires_in).await?;
        let time = SigningTime::from_system_time(SystemTime::now())
            .map_err(|e| Error::new(ErrorKind::Signing).with_source(format!("{e:?}")))?;
        let mut encoded = operation.request(&self.inner.endpoint)?;
        self.request_extras().apply(&mut encoded)?;
        s3_ops::presign::presign_request(
            encoded,
            &self.inner.endpoint,
            self.inner.signer.raw(),
            &credentials,
            time,
            expires_in,
        )
        .map_err(Error::from)
    }
}

impl Client {
    /// A presigned POST: the URL and form fields of a browser upload to `bucket` within
    /// `conditions` (a key or key prefix, a size range, a content type, ...), valid for
    /// `expires_in` (1 s to 7 days, or the store's shorter limit) from now. The credentials'
    /// access key and session token, the region, the host and the addressing are the
    /// client's. Post the fields as `multipart/form-data`, then the file as the field `file`.
    ///
    /// ```no_run
    /// # async fn demo(client: s3_wire_tokio::Client) -> Result<(), s3_wire_tokio::Error> {
    /// use s3_wire_tokio::s3_ops::presign_post::PostConditions;
    /// let form = client
    ///     .presign_post(
    ///         &s3_wire_tokio::bucket("uploads")?,
    ///         &PostConditions::key_prefix("incoming/").content_length_range(1, 10 << 20),
    ///         std::time::Duration::from_secs(900),
    ///     )
    ///     .await?;
    /// println!("<form action=\"{}\" method=\"post\" enctype=\"multipart/form-data\">", form.url());
    /// for (name, value) in form.fields() {
    ///     println!("<input type=\"hidden\" name=\"{name}\" value=\"{value}\">");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn presign_post(
        &self,
        bucket: &BucketName,
        conditions: &PostConditions,
        expires_in: Duration,
    ) -> Result<PresignedPost, Error> {
        let credentials = self.presigning_credentials(expires_in).await?;
        s3_ops::presign_post::presign_post(
            bucket,
            conditions,
            &self.inner.endpoint,
            self.inner.signer.raw(),
            &credentials,
            SystemTime::now(),
            expires_in,
        )
        .map_err(Error::from)
    }

    /// The credentials a presigned URL or form is signed with, once `expires_in` is known
    /// to be within the store's limit: a URL the store would stop honouring early is
    /// refused, not handed out.
    async fn presigning_credentials(&self, expires_in: Duration) -> Result<Credentials, Error> {
        // A URL the store would stop honouring early is refused, not handed out.
        self.inner.quirks.check_presign_expiry(expires_in)?;
        let Some(provider) = &self.inner.credentials else {
            return Err(Error::config(
                "an anonymous client cannot presign: a presigned URL carries a signature made \
                 with credentials (a public object needs none: send its plain URL)",
            ));
        };
        provider
            .credentials()
            .await
            .map_err(|e| Error::new(ErrorKind::Credentials).with_source(e))
    }
}

/// Validates a bucket name (shorthand for [`BucketName::new`] with the
/// client's error type).
pub fn bucket(name: &str) -> Result<BucketName, Error> {
    BucketName::new(name).map_err(Error::from)
}

/// Validates an object key (shorthand for [`ObjectKey::new`] with the
/// client's error type).
pub fn key(name: &str) -> Result<ObjectKey, Error> {
    ObjectKey::new(name).map_err(Error::from)
}

/// Generates one async method per operation whose response is decoded in
/// memory.
macro_rules! buffered_operations {
    ($($(#[$doc:meta])* $method:ident => $module:ident::$op:ident;)*) => {
        impl Client {
            $(
                $(#[$doc])*
                pub async fn $method(
                    &self,
                    operation: s3_ops::ops::$module::$op,
                ) -> Result<<s3_ops::ops::$module::$op as Operation>::Output, Error> {
                    self.send(operation).await
                }
            )*
        }
    };
}

impl Client {
    /// `ListObjectsV2`, one page (see [`Client::list_objects_v2_pages`]). A store that does
    /// not serve it is asked with ListObjects (version 1) instead, and the page given back
    /// as a version 2 page whose continuation token is the version 1 marker: where the
    /// store's profile says so
    /// ([`ProviderQuirks::list_objects_v2`](s3_ops::ProviderQuirks::list_objects_v2)), and
    /// from the first time the store refuses a ListObjectsV2 request as not implemented
    /// (`501`) or answers it as version 1 (a truncated page without a continuation token,
    /// or keys before `start-after`): that page is asked again with version 1, and so is
    /// every listing of the client after it.
    pub async fn list_objects_v2(
        &self,
        operation: ListObjectsV2,
    ) -> Result<ListObjectsV2Output, Error> {
        let operation = operation.with_integrity_defaults(self.inner.integrity);
        if self.lists_version_2() {
            match self.send_ref(&operation).await {
                Err(error) if error.is_version_1_listing() || error.is_not_implemented() => {
                    self.inner.learnt.set_lists_version_1_only();
                }
                answered => return answered,
            }
        }
        let page = self.send_ref(&operation.as_version_1()).await?;
        Ok(operation.page_from_version_1(page))
    }

    /// Whether listings ask ListObjectsV2 of this store: its profile says it serves it,
    /// and it never answered one as version 1.
    pub(crate) fn lists_version_2(&self) -> bool {
        self.inner.quirks.list_objects_v2 && !self.inner.learnt.lists_version_1_only()
    }
}

/// The operations whose response is decoded in memory, each with its doc comment, handed to
/// `$generate` (the async client's methods here, the blocking client's in `blocking`).
macro_rules! buffered_operations_list {
    ($generate:ident) => {
        $generate! {
    /// `HeadObject`: an object's metadata, with the stored checksums unless the request or
    /// the client ([`ClientBuilder::verify_downloads`](crate::ClientBuilder::verify_downloads))
    /// turns checksum mode off.
    head_object => head_object::HeadObject;
    /// `DeleteObject`.
    delete_object => delete_object::DeleteObject;
    /// `DeleteObjects`: up to 1000 keys in one request.
    delete_objects => delete_objects::DeleteObjects;
    /// `CopyObject` (server-side copy, up to 5 GiB).
    copy_object => copy_object::CopyObject;
    /// `GetObjectTagging`.
    get_object_tagging => get_object_tagging::GetObjectTagging;
    /// `PutObjectTagging`.
    put_object_tagging => put_object_tagging::PutObjectTagging;
    /// `DeleteObjectTagging`.
    delete_object_tagging => delete_object_tagging::DeleteObjectTagging;
    /// `CreateBucket`.
    create_bucket => create_bucket::CreateBucket;
    /// `DeleteBucket` (the bucket must be empty).
    delete_bucket => delete_bucket::DeleteBucket;
    /// `HeadBucket`: does the bucket exist and may we access it.
    head_bucket => head_bucket::HeadBucket;
    /// `GetBucketLocation`: the bucket's region.
    get_bucket_location => get_bucket_location::GetBucketLocation;
    /// `ListBuckets`, one page (see [`Client::list_buckets_pages`]).
    list_buckets => list_buckets::ListBuckets;
    /// `ListObjectVersions`, one page (see [`Client::list_object_versions_pages`]).
    list_object_versions => list_object_versions::ListObjectVersions;
    /// `CreateMultipartUpload`.
    create_multipart_upload => create_multipart_upload::CreateMultipartUpload;
    /// `UploadPartCopy`: a part copied from an existing object.
    upload_part_copy => upload_part_copy::UploadPartCopy;
    /// `CompleteMultipartUpload` (an error inside its 200 response is
    /// detected and retried like any other).
    complete_multipart_upload => complete_multipart_upload::CompleteMultipartUpload;
    /// `AbortMultipartUpload`.
    abort_multipart_upload => abort_multipart_upload::AbortMultipartUpload;
    /// `ListParts`, one page (see [`Client::list_parts_pages`]).
    list_parts => list_parts::ListParts;
    /// `ListMultipartUploads`, one page (see
    /// [`Client::list_multipart_uploads_pages`]).
    list_multipart_uploads => list_multipart_uploads::ListMultipartUploads;
    /// `ListObjects` (version 1), one page (see [`Client::list_objects_pages`]), for stores
    /// that do not serve ListObjectsV2.
    list_objects => list_objects::ListObjects;
    /// `PutObjectRetention`: an object version's Object Lock retention.
    put_object_retention => put_object_retention::PutObjectRetention;
    /// `GetObjectRetention`.
    get_object_retention => get_object_retention::GetObjectRetention;
    /// `PutObjectLegalHold`.
    put_object_legal_hold => put_object_legal_hold::PutObjectLegalHold;
    /// `GetObjectLegalHold`.
    get_object_legal_hold => get_object_legal_hold::GetObjectLegalHold;
    /// `PutObjectLockConfiguration`: enable Object Lock, set a default retention.
    put_object_lock_configuration => put_object_lock_configuration::PutObjectLockConfiguration;
    /// `GetObjectLockConfiguration`.
    get_object_lock_configuration => get_object_lock_configuration::GetObjectLockConfiguration;
    /// `PutBucketVersioning` (MFA delete is refused before sending).
    put_bucket_versioning => put_bucket_versioning::PutBucketVersioning;
    /// `GetBucketVersioning`.
    get_bucket_versioning => get_bucket_versioning::GetBucketVersioning;
    /// `PutBucketLifecycleConfiguration`: replaces every lifecycle rule.
    put_bucket_lifecycle_configuration => put_bucket_lifecycle_configuration::PutBucketLifecycleConfiguration;
    /// `GetBucketLifecycleConfiguration`.
    get_bucket_lifecycle_configuration => get_bucket_lifecycle_configuration::GetBucketLifecycleConfiguration;
    /// `DeleteBucketLifecycle`.
    delete_bucket_lifecycle => delete_bucket_lifecycle::DeleteBucketLifecycle;
    /// `PutBucketPolicy` (the JSON is sent verbatim).
    put_bucket_policy => put_bucket_policy::PutBucketPolicy;
    /// `GetBucketPolicy`.
    get_bucket_policy => get_bucket_policy::GetBucketPolicy;
    /// `DeleteBucketPolicy`.
    delete_bucket_policy => delete_bucket_policy::DeleteBucketPolicy;
    /// `PutBucketCors`.
    put_bucket_cors => put_bucket_cors::PutBucketCors;
    /// `GetBucketCors`.
    get_bucket_cors => get_bucket_cors::GetBucketCors;
    /// `DeleteBucketCors`.
    delete_bucket_cors => delete_bucket_cors::DeleteBucketCors;
    /// `PutBucketEncryption`: the default encryption of new objects.
    put_bucket_encryption => put_bucket_encryption::PutBucketEncryption;
    /// `GetBucketEncryption`.
    get_bucket_encryption => get_bucket_encryption::GetBucketEncryption;
    /// `DeleteBucketEncryption`.
    delete_bucket_encryption => delete_bucket_encryption::DeleteBucketEncryption;
    /// `PutBucketTagging`.
    put_bucket_tagging => put_bucket_tagging::PutBucketTagging;
    /// `GetBucketTagging`.
    get_bucket_tagging => get_bucket_tagging::GetBucketTagging;
    /// `DeleteBucketTagging`.
    delete_bucket_tagging => delete_bucket_tagging::DeleteBucketTagging;
    /// `PutPublicAccessBlock`.
    put_public_access_block => put_public_access_block::PutPublicAccessBlock;
    /// `GetPublicAccessBlock`.
    get_public_access_block => get_public_access_block::GetPublicAccessBlock;
    /// `DeletePublicAccessBlock`.
    delete_public_access_block => delete_public_access_block::DeletePublicAccessBlock;
    /// `PutObjectAcl`: a canned ACL, grants or a whole policy.
    put_object_acl => put_object_acl::PutObjectAcl;
    /// `GetObjectAcl`.
    get_object_acl => get_object_acl::GetObjectAcl;
    /// `PutBucketAcl`.
    put_bucket_acl => put_bucket_acl::PutBucketAcl;
    /// `GetBucketAcl`.
    get_bucket_acl => get_bucket_acl::GetBucketAcl;
    /// `GetObjectAttributes`: ETag, checksum, parts, storage class and size in one request.
    get_object_attributes => get_object_attributes::GetObjectAttributes;
    /// `RestoreObject`: a temporary copy of an archived object.
    restore_object => restore_object::RestoreObject;
        }
    };
}
#[cfg(feature = "blocking")]
pub(crate) use buffered_operations_list;
buffered_operations_list!(buffered_operations);

/// The uploads whose in-memory body s3-ops checksums while it builds each attempt's request
/// (the one copy of the two operations' shared calls that `send_upload` needs).
trait InMemoryChecksum: Operation + Sized {
    fn checksum_to_compute(&self) -> Option<ChecksumAlgorithm>;
    fn with_checksum(self, checksum: Checksum) -> Self;
}

impl InMemoryChecksum for PutObject {
    fn checksum_to_compute(&self) -> Option<ChecksumAlgorithm> {
        PutObject::checksum_to_compute(self)
    }
    fn with_checksum(self, checksum: Checksum) -> Self {
        self.checksum(checksum)
    }
}

impl InMemoryChecksum for WriteGetObjectResponse {
    fn checksum_to_compute(&self) -> Option<ChecksumAlgorithm> {
        WriteGetObjectResponse::checksum_to_compute(self)
    }
    fn with_checksum(self, checksum: Checksum) -> Self {
        self.checksum(checksum)
    }
}

impl InMemoryChecksum for UploadPart {
    fn checksum_to_compute(&self) -> Option<ChecksumAlgorithm> {
        UploadPart::checksum_to_compute(self)
    }
    fn with_checksum(self, checksum: Checksum) -> Self {
        self.checksum(checksum)
    }
}

//! One module per S3 action, plus the pieces several of them share.

use std::collections::BTreeMap;
use std::time::SystemTime;

use bytes::Bytes;
use http::Method;

use crate::checksum::{Checksum, ChecksumAlgorithm, ContentMd5};
use crate::encoding::push_query_encoded;
use crate::endpoint::Endpoint;
use crate::error::{Error, InvalidInput};
use crate::names::BucketName;
use crate::request::{Body, IntegrityDefaults, RequestBuilder};
use crate::types::{CannedAcl, ServerSideEncryption, SseCustomerKey, StorageClass};

pub mod abort_multipart_upload;
pub mod complete_multipart_upload;
pub mod copy_object;
pub mod copy_source;
pub mod create_bucket;
pub mod create_multipart_upload;
pub mod create_session;
pub mod delete_bucket;
pub mod delete_bucket_cors;
pub mod delete_bucket_encryption;
pub mod delete_bucket_lifecycle;
pub mod delete_bucket_policy;
pub mod delete_bucket_tagging;
pub mod delete_object;
pub mod delete_object_tagging;
pub mod delete_objects;
pub mod delete_public_access_block;
pub mod get_bucket_acl;
pub mod get_bucket_cors;
pub mod get_bucket_encryption;
pub mod get_bucket_lifecycle_configuration;
pub mod get_bucket_location;
pub mod get_bucket_policy;
pub mod get_bucket_tagging;
pub mod get_bucket_versioning;
pub mod get_object;
pub mod get_object_acl;
pub mod get_object_attributes;
pub mod get_object_legal_hold;
pub mod get_object_lock_configuration;
pub mod get_object_retention;
pub mod get_object_tagging;
pub mod get_public_access_block;
pub mod head_bucket;
pub mod head_object;
pub mod list_buckets;
pub mod list_directory_buckets;
pub mod list_multipart_uploads;
pub mod list_object_versions;
pub mod list_objects;
pub mod list_objects_v2;
pub mod list_parts;
mod object_tagging;
pub mod put_bucket_acl;
pub mod put_bucket_cors;
pub mod put_bucket_encryption;
pub mod put_bucket_lifecycle_configuration;
pub mod put_bucket_policy;
pub mod put_bucket_tagging;
pub mod put_bucket_versioning;
pub mod put_object;
pub mod put_object_acl;
pub mod put_object_legal_hold;
pub mod put_object_lock_configuration;
pub mod put_object_retention;
pub mod put_object_tagging;
pub mod put_public_access_block;
pub mod restore_object;
mod subresource;
pub mod upload_part;
pub mod upload_part_copy;
pub mod write_get_object_response;

// The operations themselves, flat: `s3_ops::ops::PutObject` (and `s3_ops::PutObject`).
pub use abort_multipart_upload::AbortMultipartUpload;
pub use complete_multipart_upload::CompleteMultipartUpload;
pub use copy_object::CopyObject;
pub use copy_source::CopySource;
pub use create_bucket::CreateBucket;
pub use create_multipart_upload::CreateMultipartUpload;
pub use create_session::{CreateSession, SessionMode};
pub use delete_bucket::DeleteBucket;
pub use delete_bucket_cors::DeleteBucketCors;
pub use delete_bucket_encryption::DeleteBucketEncryption;
pub use delete_bucket_lifecycle::DeleteBucketLifecycle;
pub use delete_bucket_policy::DeleteBucketPolicy;
pub use delete_bucket_tagging::DeleteBucketTagging;
pub use delete_object::DeleteObject;
pub use delete_object_tagging::DeleteObjectTagging;
pub use delete_objects::DeleteObjects;
pub use delete_public_access_block::DeletePublicAccessBlock;
pub use get_bucket_acl::GetBucketAcl;
pub use get_bucket_cors::GetBucketCors;
pub use get_bucket_encryption::GetBucketEncryption;
pub use get_bucket_lifecycle_configuration::GetBucketLifecycleConfiguration;
pub use get_bucket_location::GetBucketLocation;
pub use get_bucket_policy::GetBucketPolicy;
pub use get_bucket_tagging::GetBucketTagging;
pub use get_bucket_versioning::GetBucketVersioning;
pub use get_object::GetObject;
pub use get_object_acl::GetObjectAcl;
pub use get_object_attributes::GetObjectAttributes;
pub use get_object_attributes::ObjectAttributeKind;
pub use get_object_legal_hold::GetObjectLegalHold;
pub use get_object_lock_configuration::GetObjectLockConfiguration;
pub use get_object_retention::GetObjectRetention;
pub use get_object_tagging::GetObjectTagging;
pub use get_public_access_block::GetPublicAccessBlock;
pub use head_bucket::HeadBucket;
pub use head_object::HeadObject;
pub use list_buckets::ListBuckets;
pub use list_directory_buckets::ListDirectoryBuckets;
pub use list_multipart_uploads::ListMultipartUploads;
pub use list_object_versions::ListObjectVersions;
pub use list_objects::ListObjects;
pub use list_objects_v2::ListObjectsV2;
pub use list_parts::ListParts;
pub use put_bucket_acl::PutBucketAcl;
pub use put_bucket_cors::PutBucketCors;
pub use put_bucket_encryption::PutBucketEncryption;
pub use put_bucket_lifecycle_configuration::PutBucketLifecycleConfiguration;
pub use put_bucket_policy::PutBucketPolicy;
pub use put_bucket_tagging::PutBucketTagging;
pub use put_bucket_versioning::PutBucketVersioning;
pub use put_object::PutObject;
pub use put_object_acl::AclSource;
pub use put_object_acl::PutObjectAcl;
pub use put_object_legal_hold::PutObjectLegalHold;
pub use put_object_lock_configuration::PutObjectLockConfiguration;
pub use put_object_retention::PutObjectRetention;
pub use put_object_tagging::PutObjectTagging;
pub use put_public_access_block::PutPublicAccessBlock;
pub use restore_object::RestoreObject;
pub use upload_part::UploadPart;
pub use upload_part_copy::UploadPartCopy;
pub use write_get_object_response::WriteGetObjectResponse;

/// Generates builder setters for `Option` fields named like the setter:
/// `name: impl Into<T>` becomes `pub fn name(self, value: impl Into<T>) -> Self`, and
/// `name: T` takes the value as is (so integer literals infer).
macro_rules! option_setters {
    () => {};
    ($(#[$doc:meta])* $name:ident: impl Into<$ty:ty> $(, $($rest:tt)*)?) => {
        $(#[$doc])*
        pub fn $name(mut self, value: impl Into<$ty>) -> Self {
            self.$name = Some(value.into());
            self
        }
        $(crate::ops::option_setters! { $($rest)* })?
    };
    ($(#[$doc:meta])* $name:ident: $ty:ty $(, $($rest:tt)*)?) => {
        $(#[$doc])*
        pub fn $name(mut self, value: $ty) -> Self {
            self.$name = Some(value);
            self
        }
        $(crate::ops::option_setters! { $($rest)* })?
    };
}
pub(crate) use option_setters;

/// Part numbers are 1 to 10000.
pub(crate) fn validate_part_number(part_number: u32) -> Result<(), Error> {
    if (1..=10_000).contains(&part_number) {
        Ok(())
    } else {
        Err(InvalidInput::Parameter {
            name: "partNumber",
            reason: format!("{part_number} is outside 1..=10000"),
        }
        .into())
    }
}

/// Listing page sizes are 1 to 1000 (S3 silently caps larger values; we reject them so a
/// caller's paging assumptions hold).
pub(crate) fn validate_max_keys(name: &'static str, value: Option<u32>) -> Result<(), Error> {
    match value {
        Some(0) | Some(1001..) => Err(InvalidInput::Parameter {
            name,
            reason: format!("{} is outside 1..=1000", value.unwrap_or_default()),
        }
        .into()),
        _ => Ok(()),
    }
}

/// What the bucket listings (ListObjectsV2, ListObjectVersions, ListMultipartUploads)
/// share: bucket, prefix, delimiter, page size, `encoding-type=url`, expected owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListingScope {
    pub(crate) bucket: BucketName,
    pub(crate) prefix: Option<String>,
    pub(crate) delimiter: Option<String>,
    pub(crate) page_size: Option<u32>,
    /// On by default: keys may hold characters XML 1.0 cannot carry.
    pub(crate) url_encoding: bool,
    pub(crate) expected_bucket_owner: Option<String>,
}

impl ListingScope {
    pub(crate) fn new(bucket: BucketName) -> Self {
        ListingScope {
            bucket,
            prefix: None,
            delimiter: None,
            page_size: None,
            url_encoding: true,
            expected_bucket_owner: None,
        }
    }

    /// `GET` on the bucket with the shared parameters; `page_size_name` is the listing's
    /// own name for it (`max-keys`, `max-uploads`).
    pub(crate) fn builder<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        page_size_name: &'static str,
    ) -> RequestBuilder<'a> {
        RequestBuilder::new(endpoint, Method::GET)
            .bucket(&self.bucket)
            .check(validate_max_keys(page_size_name, self.page_size))
            .check(self.check_directory_bucket())
            .query_opt("prefix", self.prefix.as_ref())
            .query_opt("delimiter", self.delimiter.as_ref())
            .query_opt(page_size_name, self.page_size)
            .query_opt("encoding-type", self.url_encoding.then_some("url"))
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
    }
}

impl ListingScope {
    /// A directory bucket lists only by directories: a prefix must end in `/`, and `/` is
    /// the only delimiter (its listings also come back unordered).
    fn check_directory_bucket(&self) -> Result<(), Error> {
        if !self.bucket.is_s3_express() {
            return Ok(());
        }
        let reason = if self
            .prefix
            .as_ref()
            .is_some_and(|p| !p.is_empty() && !p.ends_with('/'))
        {
            "a directory bucket (S3 Express One Zone) lists by directory: the prefix must end in '/'"
        } else if self.delimiter.as_ref().is_some_and(|d| d != "/") {
            "a directory bucket (S3 Express One Zone) takes only '/' as the delimiter"
        } else {
            return Ok(());
        };
        Err(InvalidInput::Parameter {
            name: "prefix",
            reason: reason.to_owned(),
        }
        .into())
    }
}

/// Generates the [`ListingScope`] setters on a type with a `scope` field; `$page_size` is
/// the page-size setter's name.
macro_rules! listing_setters {
    ($page_size:ident) => {
        /// Only keys starting with `prefix`.
        pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
            self.scope.prefix = Some(prefix.into());
            self
        }

        /// Groups keys sharing a prefix up to `delimiter` into common prefixes.
        pub fn delimiter(mut self, delimiter: impl Into<String>) -> Self {
            self.scope.delimiter = Some(delimiter.into());
            self
        }

        /// At most this many entries per page (1–1000; S3's default is 1000).
        pub fn $page_size(mut self, page_size: u32) -> Self {
            self.scope.page_size = Some(page_size);
            self
        }

        /// `encoding-type=url` (on by default; keys come back decoded either way). Turn it
        /// off for a server that echoes `EncodingType=url` but sends values unencoded
        /// ([`Error::is_unencoded_listing`](crate::Error::is_unencoded_listing)).
        pub fn url_encoding(mut self, enabled: bool) -> Self {
            self.scope.url_encoding = enabled;
            self
        }

        /// Whether `encoding-type=url` is asked for.
        pub fn uses_url_encoding(&self) -> bool {
            self.scope.url_encoding
        }

        /// `x-amz-expected-bucket-owner`: fail unless the bucket belongs to this account.
        pub fn expected_bucket_owner(mut self, account_id: impl Into<String>) -> Self {
            self.scope.expected_bucket_owner = Some(account_id.into());
            self
        }
    };
}
pub(crate) use listing_setters;

/// Upload ids are opaque but never empty.
pub(crate) fn validate_upload_id(upload_id: &str) -> Result<(), Error> {
    if upload_id.is_empty() {
        Err(InvalidInput::Parameter {
            name: "uploadId",
            reason: "must not be empty".to_owned(),
        }
        .into())
    } else {
        Ok(())
    }
}

/// What describes a new object besides its bytes: content headers, user metadata, storage
/// class, tags, server-side encryption, ACL and the expected bucket owner. PutObject,
/// CreateMultipartUpload and CopyObject (with `MetadataDirective::Replace`) take the same
/// setters, or a whole value with their `attributes` method, so a managed transfer can apply
/// one description to whichever operation it ends up sending.
///
/// ```
/// use s3_ops::{BucketName, CreateMultipartUpload, Endpoint, ObjectAttributes, ObjectKey, Operation, PutObject};
///
/// let attributes = ObjectAttributes::new()
///     .content_type("text/csv")
///     .metadata("Owner", "reports");
/// let (bucket, key) = (BucketName::new("reports")?, ObjectKey::new("q3.csv")?);
/// let endpoint = Endpoint::aws("eu-west-1")?;
/// let put = PutObject::new(bucket.clone(), key.clone()).attributes(attributes.clone());
/// let create = CreateMultipartUpload::new(bucket, key).attributes(attributes);
/// for request in [put.request(&endpoint)?.request, create.request(&endpoint)?.request] {
///     assert_eq!(request.headers()["content-type"], "text/csv");
///     assert_eq!(request.headers()["x-amz-meta-owner"], "reports");
/// }
/// # Ok::<(), s3_ops::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectAttributes {
    pub(crate) content_type: Option<String>,
    pub(crate) cache_control: Option<String>,
    pub(crate) content_disposition: Option<String>,
    pub(crate) content_encoding: Option<String>,
    pub(crate) content_language: Option<String>,
    pub(crate) expires: Option<SystemTime>,
    pub(crate) metadata: BTreeMap<String, String>,
    pub(crate) storage_class: Option<StorageClass>,
    pub(crate) tagging: Vec<(String, String)>,
    pub(crate) encryption: Option<ServerSideEncryption>,
    pub(crate) acl: Option<CannedAcl>,
    pub(crate) expected_bucket_owner: Option<String>,
    pub(crate) object_lock_mode: Option<s3_xml::RetentionMode>,
    pub(crate) object_lock_retain_until: Option<SystemTime>,
    pub(crate) object_lock_legal_hold: Option<s3_xml::LegalHoldStatus>,
    pub(crate) grants: crate::grants::Grants,
}

impl ObjectAttributes {
    /// No attributes: the store's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    object_attribute_setters!();

    /// The SSE-C key, if the object is to be encrypted with a customer key: every part
    /// upload and every read of the object must send it too.
    pub fn sse_customer_key(&self) -> Option<&SseCustomerKey> {
        match &self.encryption {
            Some(ServerSideEncryption::Customer(key)) => Some(key),
            _ => None,
        }
    }

    /// The content headers and user metadata of an existing object (what a copy keeps when
    /// it does not replace them): `Content-Type`, `Cache-Control`, `Content-Disposition`,
    /// `Content-Encoding`, `Content-Language`, `Expires` (when it is a valid HTTP date) and
    /// `x-amz-meta-*`.
    pub fn from_head(head: &crate::ops::head_object::ObjectHead) -> Self {
        Self {
            content_type: head.content_type.clone(),
            cache_control: head.cache_control.clone(),
            content_disposition: head.content_disposition.clone(),
            content_encoding: head.content_encoding.clone(),
            content_language: head.content_language.clone(),
            expires: head
                .expires
                .as_deref()
                .and_then(|value| httpdate::parse_http_date(value).ok()),
            metadata: head.metadata.clone(),
            ..Self::default()
        }
    }

    /// Whether a retention or legal hold is asked for (S3 then requires an integrity header
    /// on the upload: Content-MD5 or a checksum).
    pub fn uses_object_lock(&self) -> bool {
        self.object_lock_mode.is_some()
            || self.object_lock_retain_until.is_some()
            || self.object_lock_legal_hold.is_some()
    }

    /// `x-amz-object-lock-*`: a retention needs both its mode and its date. The date is sent
    /// in whole seconds, rounded up so the retention is never shorter than asked (the AWS
    /// SDKs send whole seconds too; moto cannot parse a fraction).
    fn object_lock<'a>(&self, builder: RequestBuilder<'a>) -> RequestBuilder<'a> {
        let until = self.object_lock_retain_until.map(|time| {
            let whole = match time.duration_since(std::time::UNIX_EPOCH) {
                Ok(since) if since.subsec_nanos() > 0 => {
                    time + std::time::Duration::from_nanos(u64::from(
                        1_000_000_000 - since.subsec_nanos(),
                    ))
                }
                _ => time,
            };
            s3_xml::Timestamp::from_system_time(whole).ok_or(time)
        });
        let check = match (self.object_lock_mode, &until) {
            (Some(_), Some(Ok(_))) | (None, None) => Ok(()),
            (_, Some(Err(time))) => Err(InvalidInput::Parameter {
                name: "x-amz-object-lock-retain-until-date",
                reason: format!("{time:?} is outside the years 0000–9999"),
            }
            .into()),
            _ => Err(InvalidInput::Parameter {
                name: "x-amz-object-lock-mode",
                reason: "a retention needs both a mode and a retain-until date".to_owned(),
            }
            .into()),
        };
        builder
            .check(check)
            .header_opt("x-amz-object-lock-mode", self.object_lock_mode)
            .header_opt(
                "x-amz-object-lock-retain-until-date",
                until.and_then(Result::ok),
            )
            .header_opt("x-amz-object-lock-legal-hold", self.object_lock_legal_hold)
    }

    pub(crate) fn apply<'a>(&'a self, builder: RequestBuilder<'a>) -> RequestBuilder<'a> {
        let builder = self.grants.apply(true, self.object_lock(builder));
        let tags_check = object_tagging::validate_tags(
            self.tagging.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            object_tagging::MAX_OBJECT_TAGS,
        );
        let tagging = (!self.tagging.is_empty()).then(|| {
            let mut value = String::new();
            for (name, tag_value) in &self.tagging {
                if !value.is_empty() {
                    value.push('&');
                }
                push_query_encoded(&mut value, name);
                value.push('=');
                push_query_encoded(&mut value, tag_value);
            }
            value
        });
        builder
            .check(tags_check)
            .header_opt("content-type", self.content_type.as_ref())
            .header_opt("cache-control", self.cache_control.as_ref())
            .header_opt("content-disposition", self.content_disposition.as_ref())
            .header_opt("content-encoding", self.content_encoding.as_ref())
            .header_opt("content-language", self.content_language.as_ref())
            .date_header_opt("expires", self.expires)
            .metadata(&self.metadata)
            .header_opt("x-amz-storage-class", self.storage_class.as_ref())
            .header_opt("x-amz-tagging", tagging)
            .server_side_encryption(self.encryption.as_ref())
            .header_opt("x-amz-acl", self.acl)
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
    }
}

/// Generates the setters of [`ObjectAttributes`]: on the type itself (`object_attribute_setters!()`)
/// and on an operation with an `attributes` field (`object_attribute_setters!(attributes)`).
macro_rules! object_attribute_setters {
    ($($field:ident)?) => {
        /// `Content-Type`.
        pub fn content_type(mut self, value: impl Into<String>) -> Self {
            self$(.$field)?.content_type = Some(value.into());
            self
        }

        /// `Cache-Control`.
        pub fn cache_control(mut self, value: impl Into<String>) -> Self {
            self$(.$field)?.cache_control = Some(value.into());
            self
        }

        /// `Content-Disposition`.
        pub fn content_disposition(mut self, value: impl Into<String>) -> Self {
            self$(.$field)?.content_disposition = Some(value.into());
            self
        }

        /// `Content-Encoding`.
        pub fn content_encoding(mut self, value: impl Into<String>) -> Self {
            self$(.$field)?.content_encoding = Some(value.into());
            self
        }

        /// `Content-Language`.
        pub fn content_language(mut self, value: impl Into<String>) -> Self {
            self$(.$field)?.content_language = Some(value.into());
            self
        }

        /// `Expires`.
        pub fn expires(mut self, time: std::time::SystemTime) -> Self {
            self$(.$field)?.expires = Some(time);
            self
        }

        /// Adds user metadata (`x-amz-meta-<name>`; names are stored lower-case; names +
        /// values may total 2 KB).
        pub fn metadata(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self$(.$field)?
                .metadata
                .insert(name.into().to_ascii_lowercase(), value.into());
            self
        }

        /// `x-amz-storage-class`.
        pub fn storage_class(mut self, class: crate::types::StorageClass) -> Self {
            self$(.$field)?.storage_class = Some(class);
            self
        }

        /// Adds an object tag (sent URL-encoded in `x-amz-tagging`).
        pub fn tag(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self$(.$field)?.tagging.push((name.into(), value.into()));
            self
        }

        /// Server-side encryption (SSE-S3, SSE-KMS or SSE-C).
        pub fn server_side_encryption(
            mut self,
            encryption: crate::types::ServerSideEncryption,
        ) -> Self {
            self$(.$field)?.encryption = Some(encryption);
            self
        }

        /// A canned ACL (`x-amz-acl`).
        pub fn acl(mut self, acl: crate::types::CannedAcl) -> Self {
            self$(.$field)?.acl = Some(acl);
            self
        }

        /// `x-amz-expected-bucket-owner`: fail unless the bucket belongs to this account.
        pub fn expected_bucket_owner(mut self, account_id: impl Into<String>) -> Self {
            self$(.$field)?.expected_bucket_owner = Some(account_id.into());
            self
        }

        /// An Object Lock retention (`x-amz-object-lock-mode`,
        /// `x-amz-object-lock-retain-until-date`) in a bucket with Object Lock enabled. S3
        /// requires Content-MD5 or a checksum on such an upload.
        pub fn object_lock_retention(
            mut self,
            mode: s3_xml::RetentionMode,
            until: std::time::SystemTime,
        ) -> Self {
            self$(.$field)?.object_lock_mode = Some(mode);
            self$(.$field)?.object_lock_retain_until = Some(until);
            self
        }

        /// An Object Lock legal hold (`x-amz-object-lock-legal-hold`).
        pub fn object_lock_legal_hold(mut self, status: s3_xml::LegalHoldStatus) -> Self {
            self$(.$field)?.object_lock_legal_hold = Some(status);
            self
        }

        /// Adds an explicit ACL grant (`x-amz-grant-*`; objects take every permission but
        /// `WRITE`).
        pub fn grant(mut self, permission: s3_xml::Permission, grantee: s3_xml::Grantee) -> Self {
            self$(.$field)?.grants = std::mem::take(&mut self$(.$field)?.grants).grant(permission, grantee);
            self
        }
    };
}
pub(crate) use object_attribute_setters;

/// The payload of an upload (PutObject, UploadPart) with its integrity headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Payload {
    pub(crate) body: Body,
    pub(crate) checksum: ChecksumChoice,
    pub(crate) content_md5: bool,
}

/// How an upload's checksum is provided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChecksumChoice {
    /// Nothing chosen: a transport may apply its default
    /// (`Operation::with_integrity_defaults`); s3-ops alone sends none.
    Unchosen,
    /// None, whatever the transport's default (`no_checksum`).
    None,
    /// Computed here for in-memory bodies, as a trailer for external ones.
    Compute(ChecksumAlgorithm),
    /// Known in advance.
    Precomputed(Checksum),
}

impl Default for Payload {
    fn default() -> Self {
        Payload {
            body: Body::Bytes(Bytes::new()),
            checksum: ChecksumChoice::Unchosen,
            content_md5: false,
        }
    }
}

impl Payload {
    /// The transport's default checksum, if the caller chose nothing.
    pub(crate) fn apply_default(&mut self, defaults: IntegrityDefaults) {
        if let (ChecksumChoice::Unchosen, Some(algorithm)) =
            (&self.checksum, defaults.upload_checksum)
        {
            self.checksum = ChecksumChoice::Compute(algorithm);
        }
    }

    /// The largest single PutObject or UploadPart payload S3 accepts (5 GiB).
    pub(crate) const MAX_LEN: u64 = 5 << 30;

    pub(crate) fn apply<'a>(&self, builder: RequestBuilder<'a>) -> RequestBuilder<'a> {
        let len = self.body.content_length();
        let builder = builder.check(if len > Self::MAX_LEN {
            Err(InvalidInput::Parameter {
                name: "Content-Length",
                reason: format!(
                    "{len} bytes exceed the 5 GiB limit of a single upload request; use a multipart upload"
                ),
            }
            .into())
        } else {
            Ok(())
        });
        let mut body = self.body.clone();
        let builder = match (&self.checksum, body.in_memory()) {
            (ChecksumChoice::Unchosen | ChecksumChoice::None, _) => builder,
            // Named in x-amz-sdk-checksum-algorithm too, as the AWS SDKs send it: some
            // stores (moto) keep no checksum they were not told the algorithm of.
            (ChecksumChoice::Precomputed(checksum), _) => builder
                .header("x-amz-sdk-checksum-algorithm", checksum.algorithm())
                .checksum_header(Some(checksum)),
            (ChecksumChoice::Compute(algorithm), Some(bytes)) => builder
                .header("x-amz-sdk-checksum-algorithm", algorithm)
                .checksum_header(Some(&algorithm.checksum(bytes))),
            (ChecksumChoice::Compute(algorithm), None) => {
                if let Body::External {
                    trailing_checksum, ..
                } = &mut body
                {
                    *trailing_checksum = Some(*algorithm);
                }
                builder.header("x-amz-sdk-checksum-algorithm", algorithm)
            }
        };
        let builder = match (self.content_md5, body.in_memory()) {
            (false, _) => builder,
            (true, _) if builder.is_s3_express() => builder.check(Err(InvalidInput::Parameter {
                name: "Content-MD5",
                reason: "S3 Express One Zone directory buckets refuse Content-MD5; use a checksum \
                         (checksum_algorithm) instead"
                    .to_owned(),
            }
            .into())),
            (true, Some(bytes)) => builder.header("content-md5", ContentMd5::of(bytes)),
            (true, None) => builder.check(Err(InvalidInput::Parameter {
                name: "Content-MD5",
                reason: "can only be computed for in-memory bodies".to_owned(),
            }
            .into())),
        };
        builder.body(body)
    }
}

/// Generates the payload setters on a type with a `payload` field.
macro_rules! payload_setters {
    () => {
        /// An in-memory body.
        pub fn body(mut self, body: impl Into<bytes::Bytes>) -> Self {
            self.payload.body = crate::request::Body::Bytes(body.into());
            self
        }

        /// A body of exactly `content_length` bytes that the transport streams itself.
        pub fn streaming_body(mut self, content_length: u64) -> Self {
            self.payload.body = crate::request::Body::External {
                content_length,
                trailing_checksum: None,
            };
            self
        }

        /// Checksums the body with `algorithm`: now for in-memory bodies (header), while
        /// streaming for streamed ones (aws-chunked trailer).
        pub fn checksum_algorithm(mut self, algorithm: crate::checksum::ChecksumAlgorithm) -> Self {
            self.payload.checksum = crate::ops::ChecksumChoice::Compute(algorithm);
            self
        }

        /// The algorithm an in-memory body is to be checksummed with while its request is
        /// built ([`Self::checksum_algorithm`], or a transport's default), if any: a transport
        /// may compute it ahead, once and off its hot path, and give it with
        /// [`Self::checksum`].
        pub fn checksum_to_compute(&self) -> Option<crate::checksum::ChecksumAlgorithm> {
            match (&self.payload.checksum, &self.payload.body) {
                (
                    crate::ops::ChecksumChoice::Compute(algorithm),
                    crate::request::Body::Bytes(_),
                ) => Some(*algorithm),
                _ => None,
            }
        }

        /// Sends a checksum computed in advance (`x-amz-checksum-*` header).
        pub fn checksum(mut self, checksum: crate::checksum::Checksum) -> Self {
            self.payload.checksum = crate::ops::ChecksumChoice::Precomputed(checksum);
            self
        }

        /// Sends no checksum, whatever the transport's default (for stores that reject
        /// checksums).
        pub fn no_checksum(mut self) -> Self {
            self.payload.checksum = crate::ops::ChecksumChoice::None;
            self
        }

        /// Also sends `Content-MD5` (in-memory bodies only).
        pub fn content_md5(mut self, enabled: bool) -> Self {
            self.payload.content_md5 = enabled;
            self
        }
    };
}
pub(crate) use payload_setters;

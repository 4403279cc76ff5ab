//! What the configuration operations share: a sub-resource (`?tagging`, `?acl`,
//! `?lifecycle`, ...) of an object version or of a bucket, with the expected bucket owner,
//! and the decoding of their answers.

use http::Method;

use crate::endpoint::Endpoint;
use crate::names::{BucketName, ObjectKey};
use crate::request::RequestBuilder;

/// `/{Key}?{sub-resource}[&versionId=]` on an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObjectSubresource {
    pub(crate) bucket: BucketName,
    pub(crate) key: ObjectKey,
    pub(crate) version_id: Option<String>,
    pub(crate) expected_bucket_owner: Option<String>,
}

impl ObjectSubresource {
    pub(crate) fn new(bucket: BucketName, key: ObjectKey) -> Self {
        ObjectSubresource {
            bucket,
            key,
            version_id: None,
            expected_bucket_owner: None,
        }
    }

    pub(crate) fn builder<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        method: Method,
        subresource: &'static str,
    ) -> RequestBuilder<'a> {
        RequestBuilder::new(endpoint, method)
            .bucket(&self.bucket)
            .key(&self.key)
            .subresource(subresource)
            .query_opt("versionId", self.version_id.as_ref())
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
    }
}

/// Generates the `version_id` / `expected_bucket_owner` setters on a type with a
/// `target: ObjectSubresource` field.
macro_rules! object_subresource_setters {
    () => {
        /// Targets a specific version.
        pub fn version_id(mut self, version_id: impl Into<String>) -> Self {
            self.target.version_id = Some(version_id.into());
            self
        }

        /// `x-amz-expected-bucket-owner`.
        pub fn expected_bucket_owner(mut self, account_id: impl Into<String>) -> Self {
            self.target.expected_bucket_owner = Some(account_id.into());
            self
        }
    };
}
pub(crate) use object_subresource_setters;

/// `/?{sub-resource}` on a bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BucketSubresource {
    pub(crate) bucket: BucketName,
    pub(crate) expected_bucket_owner: Option<String>,
}

impl BucketSubresource {
    pub(crate) fn new(bucket: BucketName) -> Self {
        BucketSubresource {
            bucket,
            expected_bucket_owner: None,
        }
    }

    pub(crate) fn builder<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        method: Method,
        subresource: &'static str,
    ) -> RequestBuilder<'a> {
        // A bucket's configuration is bucket-level: a directory bucket's is served by the
        // S3 Express control endpoint, and no accelerated host serves it.
        RequestBuilder::new(endpoint, method)
            .control_plane()
            .bucket(&self.bucket)
            .subresource(subresource)
            .header_opt(
                "x-amz-expected-bucket-owner",
                self.expected_bucket_owner.as_ref(),
            )
    }

    /// `PUT /?{sub-resource}` with an XML configuration and its `Content-MD5` (S3 requires an
    /// integrity header on every configuration upload).
    pub(crate) fn put_xml<'a>(
        &'a self,
        endpoint: &'a Endpoint,
        subresource: &'static str,
        encoded: Result<String, s3_xml::Error>,
        document: &'static str,
    ) -> RequestBuilder<'a> {
        let builder = self.builder(endpoint, Method::PUT, subresource);
        match crate::xml::request_body(encoded, document) {
            Ok(body) => builder.xml_body(body),
            Err(error) => builder.check(Err(error)),
        }
    }
}

/// Generates the `expected_bucket_owner` setter on a type with a `target: BucketSubresource`
/// field.
macro_rules! bucket_subresource_setters {
    () => {
        /// `x-amz-expected-bucket-owner`: fail unless the bucket belongs to this account.
        pub fn expected_bucket_owner(mut self, account_id: impl Into<String>) -> Self {
            self.target.expected_bucket_owner = Some(account_id.into());
            self
        }
    };
}
pub(crate) use bucket_subresource_setters;

/// The `Operation` of a type with a `target` sub-resource (of a bucket or an object) that
/// reads one XML document (`GET ...?{sub-resource}`) into a `DocumentOutput`.
macro_rules! get_configuration_operation {
    ($op:ident, $subresource:literal, $document:ty, $decode:path, $root:literal) => {
        impl crate::request::Operation for $op {
            type Output = crate::response::DocumentOutput<$document>;

            fn request(
                &self,
                endpoint: &crate::endpoint::Endpoint,
            ) -> Result<crate::request::OperationRequest, crate::error::Error> {
                self.target
                    .builder(endpoint, http::Method::GET, $subresource)
                    .build()
            }

            fn response(
                &self,
                response: http::Response<bytes::Bytes>,
            ) -> Result<Self::Output, crate::error::Error> {
                crate::response::decode_document(response, $decode, $root)
            }

            fn is_idempotent(&self) -> bool {
                true
            }

            fn name(&self) -> &'static str {
                stringify!($op)
            }
        }
    };
}
pub(crate) use get_configuration_operation;

/// Defines an operation that reads one XML configuration of a bucket (`GET /?{sub-resource}`)
/// into a [`DocumentOutput`].
macro_rules! get_bucket_configuration {
    (
        $(#[$doc:meta])*
        $op:ident, $subresource:literal, $document:ty, $decode:path, $root:literal
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $op {
            target: crate::ops::subresource::BucketSubresource,
        }

        impl $op {
            /// Reads the configuration of `bucket`.
            pub fn new(bucket: crate::names::BucketName) -> Self {
                $op {
                    target: crate::ops::subresource::BucketSubresource::new(bucket),
                }
            }

            crate::ops::subresource::bucket_subresource_setters!();
        }

        crate::ops::subresource::get_configuration_operation!(
            $op, $subresource, $document, $decode, $root
        );
    };
}
pub(crate) use get_bucket_configuration;

/// Defines an operation that removes one configuration of a bucket
/// (`DELETE /?{sub-resource}`, 204).
macro_rules! delete_bucket_configuration {
    ($(#[$doc:meta])* $op:ident, $subresource:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $op {
            target: crate::ops::subresource::BucketSubresource,
        }

        impl $op {
            /// Removes the configuration of `bucket`.
            pub fn new(bucket: crate::names::BucketName) -> Self {
                $op {
                    target: crate::ops::subresource::BucketSubresource::new(bucket),
                }
            }

            crate::ops::subresource::bucket_subresource_setters!();
        }

        impl crate::request::Operation for $op {
            /// Only the request ids: success is the answer.
            type Output = crate::response::RequestIds;

            fn request(
                &self,
                endpoint: &crate::endpoint::Endpoint,
            ) -> Result<crate::request::OperationRequest, crate::error::Error> {
                self.target
                    .builder(endpoint, http::Method::DELETE, $subresource)
                    .build()
            }

            fn response(
                &self,
                response: http::Response<bytes::Bytes>,
            ) -> Result<crate::response::RequestIds, crate::error::Error> {
                crate::response::decode_request_ids(response)
            }

            /// Deleting what is gone succeeds again.
            fn is_idempotent(&self) -> bool {
                true
            }

            fn name(&self) -> &'static str {
                stringify!($op)
            }
        }
    };
}
pub(crate) use delete_bucket_configuration;

/// Defines an operation that replaces one XML configuration of a bucket
/// (`PUT /?{sub-resource}` with its `Content-MD5`), after `$validate` accepted it.
macro_rules! put_bucket_configuration {
    (
        $(#[$doc:meta])*
        $op:ident, $subresource:literal, $document:ty, $encode:path, $root:literal, $validate:path
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $op {
            target: crate::ops::subresource::BucketSubresource,
            configuration: $document,
        }

        impl $op {
            /// Replaces the configuration of `bucket` with `configuration`.
            pub fn new(bucket: crate::names::BucketName, configuration: $document) -> Self {
                $op {
                    target: crate::ops::subresource::BucketSubresource::new(bucket),
                    configuration,
                }
            }

            /// The configuration this request sends.
            pub fn configuration(&self) -> &$document {
                &self.configuration
            }

            crate::ops::subresource::bucket_subresource_setters!();
        }

        impl crate::request::Operation for $op {
            /// Only the request ids: success is the answer.
            type Output = crate::response::RequestIds;

            fn request(
                &self,
                endpoint: &crate::endpoint::Endpoint,
            ) -> Result<crate::request::OperationRequest, crate::error::Error> {
                $validate(&self.configuration)?;
                self.target
                    .put_xml(endpoint, $subresource, $encode(&self.configuration), $root)
                    .build()
            }

            fn response(
                &self,
                response: http::Response<bytes::Bytes>,
            ) -> Result<crate::response::RequestIds, crate::error::Error> {
                crate::response::decode_request_ids(response)
            }

            /// The same configuration sent again leaves the same state.
            fn is_idempotent(&self) -> bool {
                true
            }

            fn name(&self) -> &'static str {
                stringify!($op)
            }
        }
    };
}
pub(crate) use put_bucket_configuration;

/// An [`InvalidInput::Parameter`](crate::InvalidInput::Parameter) error.
pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> crate::error::Error {
    crate::error::InvalidInput::Parameter {
        name,
        reason: reason.into(),
    }
    .into()
}

/// A body that is not XML with the `Content-MD5` S3 requires on configuration and ACL
/// uploads: a policy's JSON, or the empty body of an ACL given in headers.
pub(crate) fn md5_body<'a>(
    builder: RequestBuilder<'a>,
    body: Vec<u8>,
    content_type: Option<&'static str>,
) -> RequestBuilder<'a> {
    builder
        .header_opt("content-type", content_type)
        .header("content-md5", crate::checksum::ContentMd5::of(&body))
        .body(crate::request::Body::Bytes(bytes::Bytes::from(body)))
}

/// Defines an operation that reads one XML document of an object version
/// (`GET /{Key}?{sub-resource}`) into a `DocumentOutput`.
macro_rules! get_object_configuration {
    (
        $(#[$doc:meta])*
        $op:ident, $subresource:literal, $document:ty, $decode:path, $root:literal
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $op {
            target: crate::ops::subresource::ObjectSubresource,
        }

        impl $op {
            /// Reads the document of `key` (its current version unless `version_id`).
            pub fn new(bucket: crate::names::BucketName, key: crate::names::ObjectKey) -> Self {
                $op {
                    target: crate::ops::subresource::ObjectSubresource::new(bucket, key),
                }
            }

            crate::ops::subresource::object_subresource_setters!();
        }

        crate::ops::subresource::get_configuration_operation!(
            $op, $subresource, $document, $decode, $root
        );
    };
}
pub(crate) use get_object_configuration;

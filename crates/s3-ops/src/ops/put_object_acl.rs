//! PutObjectAcl: replace an object's access control list.

use bytes::Bytes;
use http::{Method, Response};
use s3_xml::AccessControlPolicy;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::grants::Grants;
use crate::names::{BucketName, ObjectKey};
use crate::ops::subresource::{ObjectSubresource, invalid, md5_body, object_subresource_setters};
use crate::request::{Operation, OperationRequest, RequestBuilder};
use crate::response::{RequestIds, decode_request_ids};
use crate::types::CannedAcl;

/// What PutObjectAcl and PutBucketAcl set: S3 takes one of the three.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AclSource {
    /// A canned ACL (`x-amz-acl`).
    Canned(CannedAcl),
    /// Explicit grants (`x-amz-grant-*` headers); the owner keeps nothing it is not granted.
    Grants(Grants),
    /// A whole `<AccessControlPolicy>` (owner and grants) in the body.
    Policy(AccessControlPolicy),
}

impl AclSource {
    /// The request with the ACL: a header or a body, and the `Content-MD5` S3 requires on
    /// both operations (of the empty body when the ACL travels in headers, as the AWS SDKs
    /// send it).
    pub(crate) fn apply<'a>(
        &self,
        objects: bool,
        builder: RequestBuilder<'a>,
    ) -> RequestBuilder<'a> {
        match self {
            AclSource::Canned(acl) => {
                let bucket_acl = matches!(
                    acl,
                    CannedAcl::Private
                        | CannedAcl::PublicRead
                        | CannedAcl::PublicReadWrite
                        | CannedAcl::AuthenticatedRead
                );
                let check = if objects || bucket_acl {
                    Ok(())
                } else {
                    Err(invalid(
                        "x-amz-acl",
                        format!(
                            "{acl} applies to objects; buckets take private, public-read, public-read-write and authenticated-read"
                        ),
                    ))
                };
                md5_body(
                    builder.check(check).header("x-amz-acl", acl),
                    Vec::new(),
                    None,
                )
            }
            AclSource::Grants(grants) => {
                let check = if grants.is_empty() {
                    Err(invalid("x-amz-grant-*", "no grant given"))
                } else {
                    Ok(())
                };
                md5_body(
                    grants.apply(objects, builder.check(check)),
                    Vec::new(),
                    None,
                )
            }
            AclSource::Policy(policy) => {
                match crate::xml::request_body(
                    s3_xml::encode_access_control_policy(policy),
                    "AccessControlPolicy",
                ) {
                    Ok(body) => builder.xml_body(body),
                    Err(error) => builder.check(Err(error)),
                }
            }
        }
    }
}

/// `PUT /{Key}?acl`: replaces the ACL of an object (version). Buckets whose object
/// ownership is "bucket owner enforced" (S3's default since 2023) refuse ACLs with
/// `AccessControlListNotSupported`.
///
/// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObjectAcl.html>.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutObjectAcl {
    target: ObjectSubresource,
    acl: AclSource,
}

impl PutObjectAcl {
    /// Sets the ACL of `key` from `acl`.
    pub fn new(bucket: BucketName, key: ObjectKey, acl: AclSource) -> Self {
        PutObjectAcl {
            target: ObjectSubresource::new(bucket, key),
            acl,
        }
    }

    object_subresource_setters!();
}

impl Operation for PutObjectAcl {
    /// Only the request ids: success is the answer.
    type Output = RequestIds;

    fn request(&self, endpoint: &Endpoint) -> Result<OperationRequest, Error> {
        let builder = self.target.builder(endpoint, Method::PUT, "acl");
        self.acl.apply(true, builder).build()
    }

    fn response(&self, response: Response<Bytes>) -> Result<RequestIds, Error> {
        decode_request_ids(response)
    }

    fn is_idempotent(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "PutObjectAcl"
    }
}

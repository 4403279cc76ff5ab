//! GetBucketAcl: a bucket's access control list.

use crate::ops::subresource::get_bucket_configuration;

get_bucket_configuration! {
    /// `GET /?acl`: the bucket's owner and grants.
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketAcl.html>.
    GetBucketAcl, "acl", s3_xml::AccessControlPolicy, s3_xml::decode_access_control_policy, "AccessControlPolicy"
}

/// What GetBucketAcl returns.
pub type GetBucketAclOutput = crate::response::DocumentOutput<s3_xml::AccessControlPolicy>;

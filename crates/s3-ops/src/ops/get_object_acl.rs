//! GetObjectAcl: an object's access control list.

use crate::ops::subresource::get_object_configuration;

get_object_configuration! {
    /// `GET /{Key}?acl`: the owner and grants of an object version.
    ///
    /// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectAcl.html>.
    GetObjectAcl, "acl", s3_xml::AccessControlPolicy, s3_xml::decode_access_control_policy,
    "AccessControlPolicy"
}

/// What GetObjectAcl returns.
pub type GetObjectAclOutput = crate::response::DocumentOutput<s3_xml::AccessControlPolicy>;

//! GetObjectLegalHold: whether an object version is under a legal hold.

use crate::ops::subresource::get_object_configuration;

get_object_configuration! {
    /// `GET /{Key}?legal-hold`: the legal hold status of an object version.
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObjectLegalHold.html>.
    GetObjectLegalHold, "legal-hold", s3_xml::LegalHold, s3_xml::decode_legal_hold, "LegalHold"
}

/// What GetObjectLegalHold returns.
pub type GetObjectLegalHoldOutput = crate::response::DocumentOutput<s3_xml::LegalHold>;

//! GetBucketCors: a bucket's cross-origin rules.

use crate::ops::subresource::get_bucket_configuration;

get_bucket_configuration! {
    /// `GET /?cors`: the bucket's CORS rules (`NoSuchCORSConfiguration`, 404, when it has none).
    ///
    /// S3 documents it at
    /// <https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetBucketCors.html>.
    GetBucketCors, "cors", s3_xml::CorsConfiguration, s3_xml::decode_cors_configuration, "CORSConfiguration"
}

/// What GetBucketCors returns.
pub type GetBucketCorsOutput = crate::response::DocumentOutput<s3_xml::CorsConfiguration>;

//! PutBucketCors: replace a bucket's cross-origin rules.

use s3_xml::CorsConfiguration;

use crate::error::Error;
use crate::ops::subresource::{invalid, put_bucket_configuration};

put_bucket_configuration! {
    /// `PUT /?cors` with a `<CORSConfiguration>` of 1 to 100 rules.
    ///
    /// S3 documents it at <https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketCors.html>.
    PutBucketCors, "cors", CorsConfiguration, s3_xml::encode_cors_configuration,
    "CORSConfiguration", validate
}

/// The methods S3 allows in a rule.
const METHODS: [&str; 5] = ["GET", "PUT", "POST", "DELETE", "HEAD"];

fn validate(configuration: &CorsConfiguration) -> Result<(), Error> {
    let count = configuration.rules.len();
    if !(1..=100).contains(&count) {
        return Err(invalid(
            "CORSRule",
            format!("{count} rules given; S3 takes 1 to 100"),
        ));
    }
    for rule in &configuration.rules {
        if rule.allowed_origins.is_empty() || rule.allowed_methods.is_empty() {
            return Err(invalid(
                "CORSRule",
                "every rule needs an AllowedOrigin and an AllowedMethod",
            ));
        }
        if let Some(method) = rule
            .allowed_methods
            .iter()
            .find(|m| !METHODS.contains(&m.as_str()))
        {
            return Err(invalid(
                "AllowedMethod",
                format!("{method:?} is not one of GET, PUT, POST, DELETE, HEAD"),
            ));
        }
    }
    Ok(())
}

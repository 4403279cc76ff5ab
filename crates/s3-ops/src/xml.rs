//! The bridge to `s3-xml`: S3 documents in and out, mapped to this crate's errors.

use http::StatusCode;
use s3_xml::{ErrorDocument, Limits, Outcome};

use crate::error::{Error, InvalidInput, MalformedResponse, S3Error};
use crate::request::RESPONSE_BODY_LIMIT;

fn limits() -> Limits {
    Limits::new(RESPONSE_BODY_LIMIT)
}

/// Decodes an S3 `<Error>` document; `None` if the body is empty or not one (HTML from a
/// proxy, a truncated body): the caller then derives the error from the status.
pub(crate) fn decode_error_document(status: StatusCode, body: &[u8]) -> Option<S3Error> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    s3_xml::decode_error_document(body, &limits())
        .ok()
        .map(|document| service_error(status, document))
}

fn service_error(status: StatusCode, document: ErrorDocument) -> S3Error {
    let mut extra = document.other;
    extra.extend(document.bucket_name.map(|v| ("BucketName".to_owned(), v)));
    extra.extend(document.key.map(|v| ("Key".to_owned(), v)));
    let mut error = S3Error::new(status, document.code);
    error.message = document.message;
    error.request_id = document.request_id;
    error.host_id = document.host_id;
    error.region = document.region;
    error.resource = document.resource;
    error.extra = extra;
    error
}

/// Decodes a success document with one of `s3_xml`'s `decode_*` functions.
pub(crate) fn document<T>(
    body: &[u8],
    decode: fn(&[u8], &Limits) -> Result<T, s3_xml::Error>,
    name: &'static str,
) -> Result<T, Error> {
    decode(body, &limits()).map_err(|error| malformed(name, error))
}

/// Decodes a success document that S3 may have replaced by an `<Error>` after sending
/// 200 (CompleteMultipartUpload, CopyObject, UploadPartCopy).
pub(crate) fn document_or_error<T: s3_xml::Document>(
    status: StatusCode,
    body: &[u8],
    name: &'static str,
) -> Result<T, Error> {
    match s3_xml::decode_or_error::<T>(body, &limits()) {
        Ok(Outcome::Success(value)) => Ok(value),
        Ok(Outcome::Error(document)) => Err(service_error(status, *document).into()),
        Err(error) => Err(malformed(name, error)),
    }
}

fn malformed(document: &'static str, error: s3_xml::Error) -> Error {
    Error::MalformedResponse(MalformedResponse::Xml { document, error })
}

/// Turns an encoder result into a request body; the only failure is a value XML 1.0
/// cannot carry (such as a control character in a key), which is bad input.
pub(crate) fn request_body(
    encoded: Result<String, s3_xml::Error>,
    name: &'static str,
) -> Result<Vec<u8>, Error> {
    encoded.map(String::into_bytes).map_err(|error| {
        InvalidInput::Parameter {
            name,
            reason: error.to_string(),
        }
        .into()
    })
}

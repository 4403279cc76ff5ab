//! Internal entry points for the fuzz targets and benchmarks (`fuzzing` feature).
//! Not a stable API.

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response, StatusCode};

use crate::ops::abort_multipart_upload::AbortMultipartUpload;
use crate::ops::complete_multipart_upload::CompleteMultipartUpload;
use crate::ops::copy_object::CopyObject;
use crate::ops::copy_source::CopySource;
use crate::ops::create_bucket::CreateBucket;
use crate::ops::create_multipart_upload::CreateMultipartUpload;
use crate::ops::delete_bucket::DeleteBucket;
use crate::ops::delete_object::DeleteObject;
use crate::ops::delete_object_tagging::DeleteObjectTagging;
use crate::ops::delete_objects::DeleteObjects;
use crate::ops::get_bucket_location::GetBucketLocation;
use crate::ops::get_object::GetObject;
use crate::ops::get_object_tagging::GetObjectTagging;
use crate::ops::head_bucket::HeadBucket;
use crate::ops::head_object::HeadObject;
use crate::ops::list_buckets::ListBuckets;
use crate::ops::list_multipart_uploads::ListMultipartUploads;
use crate::ops::list_object_versions::ListObjectVersions;
use crate::ops::list_objects_v2::ListObjectsV2;
use crate::ops::list_parts::ListParts;
use crate::ops::put_object::PutObject;
use crate::ops::put_object_tagging::PutObjectTagging;
use crate::ops::upload_part::UploadPart;
use crate::ops::upload_part_copy::UploadPartCopy;
use crate::{BucketName, Error, ObjectKey, Operation};

/// Splits fuzz input into a response: 2 bytes of status (mapped into 100..=599), a header
/// block up to the first `0xFF` (lines split by `\n`, name and value by the first `:`;
/// invalid lines skipped), then the body.
pub fn response_from_bytes(data: &[u8]) -> Response<Bytes> {
    let (status, rest) = match data {
        [hi, lo, rest @ ..] => (u16::from_be_bytes([*hi, *lo]) % 500 + 100, rest),
        _ => (200, data),
    };
    let (header_block, body) = match rest.iter().position(|&b| b == 0xFF) {
        Some(split) => (&rest[..split], &rest[split + 1..]),
        None => (rest, &[][..]),
    };
    let mut response = Response::new(Bytes::copy_from_slice(body));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    for line in header_block.split(|&b| b == b'\n') {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
        {
            response.headers_mut().append(name, value);
        }
    }
    response
}

/// Decodes `data` (see [`response_from_bytes`]) as the response of every operation, and
/// exercises what a transport does with the result (head-only decoding, checksum
/// validation, retry classification, display). Must never panic. Returns how many
/// operations accepted the response, so the work cannot be optimized away.
pub fn decode_arbitrary_response(data: &[u8]) -> usize {
    let (Ok(bucket), Ok(key)) = (BucketName::new("fuzz-bucket"), ObjectKey::new("k")) else {
        return 0;
    };
    let source = CopySource::new(bucket.clone(), key.clone());
    let respond = || response_from_bytes(data);
    let results: [Result<(), Error>; 24] = [
        ok(AbortMultipartUpload::new(bucket.clone(), key.clone(), "u").response(respond())),
        ok(
            CompleteMultipartUpload::new(bucket.clone(), key.clone(), "u", Vec::new())
                .response(respond()),
        ),
        ok(CopyObject::new(source.clone(), bucket.clone(), key.clone()).response(respond())),
        ok(CreateBucket::new(bucket.clone()).response(respond())),
        ok(CreateMultipartUpload::new(bucket.clone(), key.clone()).response(respond())),
        ok(DeleteBucket::new(bucket.clone()).response(respond())),
        ok(DeleteObject::new(bucket.clone(), key.clone()).response(respond())),
        ok(DeleteObjectTagging::new(bucket.clone(), key.clone()).response(respond())),
        ok(DeleteObjects::new(bucket.clone(), [key.clone()]).response(respond())),
        ok(GetBucketLocation::new(bucket.clone()).response(respond())),
        get_object(&GetObject::new(bucket.clone(), key.clone()), respond()),
        ok(GetObjectTagging::new(bucket.clone(), key.clone()).response(respond())),
        ok(HeadBucket::new(bucket.clone()).response(respond())),
        ok(HeadObject::new(bucket.clone(), key.clone()).response(respond())),
        ok(ListBuckets::new().response(respond())),
        ok(ListMultipartUploads::new(bucket.clone()).response(respond())),
        ok(ListObjectVersions::new(bucket.clone()).response(respond())),
        ok(ListObjectsV2::new(bucket.clone()).response(respond())),
        ok(ListParts::new(bucket.clone(), key.clone(), "u").response(respond())),
        ok(PutObject::new(bucket.clone(), key.clone()).response(respond())),
        ok(PutObjectTagging::new(bucket.clone(), key.clone(), Vec::new()).response(respond())),
        ok(UploadPart::new(bucket.clone(), key.clone(), "u", 1).response(respond())),
        ok(UploadPartCopy::new(source, bucket, key, "u", 1).response(respond())),
        {
            let (parts, body) = respond().into_parts();
            let _ = crate::service_error(&parts, &body).retry_class();
            Ok(())
        },
    ];
    results
        .iter()
        .filter(|result| match result {
            Ok(()) => true,
            Err(error) => {
                let _ = (error.retry_class(), error.to_string());
                false
            }
        })
        .count()
}

/// Encodes requests from arbitrary input and checks what must hold for every accepted
/// one. Fields are split by `0xFF`: bucket, key, metadata name, metadata value, version id
/// / tag value / prefix, then two 8-byte range bounds. Panics only on a broken invariant
/// (an accepted key that does not decode back from the request path).
pub fn encode_arbitrary_request(data: &[u8]) {
    let mut fields = data.split(|&b| b == 0xFF);
    let mut text = || String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let (bucket, key, meta_name, meta_value, extra) = (text(), text(), text(), text(), text());
    let bounds: Vec<u64> = data
        .rchunks(8)
        .take(2)
        .map(|chunk| chunk.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b)))
        .collect();
    let endpoints = [
        crate::Endpoint::aws("us-east-1"),
        crate::Endpoint::custom("http://127.0.0.1:9000/base", "us-east-1"),
    ];
    // Invalid names fall back to a fixed bucket so the rest of the input is still used.
    let bucket = BucketName::new(bucket.clone())
        .or_else(|_| BucketName::new_relaxed(bucket))
        .or_else(|_| BucketName::new("fuzz-bucket"));
    let (Ok(bucket), Ok(key)) = (bucket, ObjectKey::new(key)) else {
        return;
    };
    let range = crate::ByteRange::new(
        bounds.first().copied().unwrap_or(0),
        bounds.get(1).copied().unwrap_or(0),
    );
    for endpoint in endpoints.into_iter().flatten() {
        let get = GetObject::new(bucket.clone(), key.clone()).version_id(extra.clone());
        let get = match range {
            Ok(range) => get.range(range),
            Err(_) => get,
        };
        if let Ok(request) = get.request(&endpoint) {
            let path = request.request.uri().path();
            let decoded = s3_sigv4::uri_decode(path).unwrap_or_default();
            assert!(
                decoded.ends_with(key.as_str().as_bytes()),
                "key {key:?} does not decode back from {path:?}"
            );
        }
        let put = PutObject::new(bucket.clone(), key.clone())
            .metadata(meta_name.clone(), meta_value.clone())
            .tag(meta_name.clone(), extra.clone())
            .content_type(meta_value.clone())
            .body(Bytes::copy_from_slice(data));
        let _ = put.request(&endpoint);
        let keys = key
            .as_str()
            .split('\n')
            .filter_map(|k| ObjectKey::new(k).ok());
        let _ = DeleteObjects::new(bucket.clone(), keys).request(&endpoint);
        let source = CopySource::new(bucket.clone(), key.clone()).version_id(extra.clone());
        let _ = CopyObject::new(source, bucket.clone(), key.clone())
            .metadata(meta_name.clone(), meta_value.clone())
            .request(&endpoint);
        let _ = ListObjectsV2::new(bucket.clone())
            .prefix(extra.clone())
            .delimiter(meta_name.clone())
            .request(&endpoint);
        let _ = PutObjectTagging::new(
            bucket.clone(),
            key.clone(),
            [(meta_name.clone(), meta_value.clone())],
        )
        .request(&endpoint);
    }
}

fn ok<T>(result: Result<T, Error>) -> Result<(), Error> {
    result.map(drop)
}

/// Head-only decoding plus body checksum validation, as a streaming transport does it.
fn get_object(get: &GetObject, response: Response<Bytes>) -> Result<(), Error> {
    let (parts, body) = response.into_parts();
    let output = get.response_head(&parts)?;
    if let Some(mut validator) = output.head.checksum_validator() {
        validator.update(&body);
        validator.finish()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512)) {
            decode_arbitrary_response(&data);
        }

        #[test]
        fn arbitrary_xml_ish_bodies_never_panic(
            status in 100u16..600,
            body in proptest::collection::vec(
                prop_oneof![
                    Just("<Error>".to_owned()), Just("</Error>".to_owned()),
                    Just("<Code>".to_owned()), Just("</Code>".to_owned()),
                    Just("<ListBucketResult>".to_owned()), Just("<Contents><Key>".to_owned()),
                    Just("</Key></Contents>".to_owned()), Just("<IsTruncated>true</IsTruncated>".to_owned()),
                    Just("<EncodingType>url</EncodingType>".to_owned()), Just("%".to_owned()),
                    Just("&amp;".to_owned()), Just("<!DOCTYPE x>".to_owned()), "[a-z0-9 ]{0,8}",
                ],
                0..40,
            ),
        ) {
            let mut data = status.wrapping_sub(100).to_be_bytes().to_vec();
            data.extend_from_slice(b"x-amz-checksum-crc32:AAAAAA==\nx-amz-bucket-region:eu-west-1");
            data.push(0xFF);
            data.extend_from_slice(body.concat().as_bytes());
            decode_arbitrary_response(&data);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn arbitrary_requests_encode_or_fail_cleanly(
            fields in proptest::collection::vec(".{0,40}", 5),
            bounds in proptest::collection::vec(any::<u8>(), 16),
        ) {
            let joined: Vec<u8> = fields
                .iter()
                .map(|f| f.as_bytes().to_vec())
                .collect::<Vec<_>>()
                .join(&0xFF);
            encode_arbitrary_request(&joined);
            let mut with_bounds = joined;
            with_bounds.push(0xFF);
            with_bounds.extend_from_slice(&bounds);
            encode_arbitrary_request(&with_bounds);
        }
    }

    #[test]
    fn the_input_layout_is_as_documented() {
        let mut data = vec![0, 104]; // 104 % 500 + 100 = 204
        data.extend_from_slice(b"x-amz-request-id: R1\nbroken line\nx-amz-delete-marker:true");
        data.push(0xFF);
        data.extend_from_slice(b"body");
        let response = response_from_bytes(&data);
        assert_eq!(response.status(), 204);
        assert_eq!(response.headers()["x-amz-request-id"], "R1");
        assert_eq!(response.headers()["x-amz-delete-marker"], "true");
        assert_eq!(response.headers().len(), 2);
        assert_eq!(response.body().as_ref(), b"body");
        // A 204 with no XML: the header-only operations accept it.
        assert!(decode_arbitrary_response(&data) >= 8);
    }
}

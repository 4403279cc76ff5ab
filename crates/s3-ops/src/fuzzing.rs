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
use crate::{
    AclSource, BucketName, DeleteBucketCors, DeleteBucketEncryption, DeleteBucketLifecycle,
    DeleteBucketPolicy, DeleteBucketTagging, DeletePublicAccessBlock, Error, GetBucketAcl,
    GetBucketCors, GetBucketEncryption, GetBucketLifecycleConfiguration, GetBucketPolicy,
    GetBucketTagging, GetBucketVersioning, GetObjectAcl, GetObjectAttributes, GetObjectLegalHold,
    GetObjectLockConfiguration, GetObjectRetention, GetPublicAccessBlock, Grants, ListObjects,
    ObjectKey, Operation, PutBucketAcl, PutBucketCors, PutBucketEncryption,
    PutBucketLifecycleConfiguration, PutBucketPolicy, PutBucketTagging, PutBucketVersioning,
    PutObjectAcl, PutObjectLegalHold, PutObjectLockConfiguration, PutObjectRetention,
    PutPublicAccessBlock, RestoreObject,
};

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
    let configurations = configuration_responses(&bucket, &key, &respond);
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
        .chain(&configurations)
        .filter(|result| match result {
            Ok(()) => true,
            Err(error) => {
                let _ = (error.retry_class(), error.to_string());
                false
            }
        })
        .count()
}

/// The configuration, ACL, Object Lock, GetObjectAttributes, RestoreObject and ListObjects
/// (v1) operations on the same response.
fn configuration_responses(
    bucket: &BucketName,
    key: &ObjectKey,
    respond: &dyn Fn() -> Response<Bytes>,
) -> Vec<Result<(), Error>> {
    let (b, k) = (|| bucket.clone(), || key.clone());
    vec![
        ok(GetBucketVersioning::new(b()).response(respond())),
        ok(GetBucketLifecycleConfiguration::new(b()).response(respond())),
        ok(GetBucketCors::new(b()).response(respond())),
        ok(GetBucketEncryption::new(b()).response(respond())),
        ok(GetBucketTagging::new(b()).response(respond())),
        ok(GetPublicAccessBlock::new(b()).response(respond())),
        ok(GetObjectLockConfiguration::new(b()).response(respond())),
        ok(GetBucketAcl::new(b()).response(respond())),
        ok(GetBucketPolicy::new(b()).response(respond())),
        ok(DeleteBucketLifecycle::new(b()).response(respond())),
        ok(DeleteBucketCors::new(b()).response(respond())),
        ok(DeleteBucketEncryption::new(b()).response(respond())),
        ok(DeleteBucketTagging::new(b()).response(respond())),
        ok(DeletePublicAccessBlock::new(b()).response(respond())),
        ok(DeleteBucketPolicy::new(b()).response(respond())),
        ok(PutBucketVersioning::new(b(), Default::default()).response(respond())),
        ok(PutBucketLifecycleConfiguration::new(b(), Default::default()).response(respond())),
        ok(PutBucketCors::new(b(), Default::default()).response(respond())),
        ok(PutBucketEncryption::new(b(), Default::default()).response(respond())),
        ok(PutBucketTagging::new(b(), Default::default()).response(respond())),
        ok(PutPublicAccessBlock::new(b(), Default::default()).response(respond())),
        ok(PutObjectLockConfiguration::new(b(), Default::default()).response(respond())),
        ok(PutBucketPolicy::new(b(), "{}").response(respond())),
        ok(PutBucketAcl::new(b(), AclSource::Grants(Grants::new())).response(respond())),
        ok(PutObjectAcl::new(b(), k(), AclSource::Grants(Grants::new())).response(respond())),
        ok(GetObjectAcl::new(b(), k()).response(respond())),
        ok(GetObjectRetention::new(b(), k()).response(respond())),
        ok(GetObjectLegalHold::new(b(), k()).response(respond())),
        ok(PutObjectRetention::new(b(), k(), Default::default()).response(respond())),
        ok(PutObjectLegalHold::new(b(), k(), s3_xml::LegalHoldStatus::On).response(respond())),
        ok(RestoreObject::new(b(), k(), Default::default()).response(respond())),
        ok(ListObjects::new(b()).response(respond())),
        {
            let attributes = GetObjectAttributes::new(b(), k());
            attributes.response(respond()).map(|output| {
                // Paging on never goes back to a marker already sent.
                if let Some(next) = attributes.next_page(&output) {
                    assert!(next.next_page(&output).is_none());
                }
            })
        },
    ]
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
        encode_arbitrary_configurations(
            &bucket,
            &key,
            [&meta_name, &meta_value, &extra],
            &endpoint,
        );
    }
}

/// Bucket names, ARNs and regions from arbitrary input, addressed through every kind of
/// endpoint and flag: byte 0 chooses the flags (FIPS, dual-stack, acceleration, path-style,
/// the global endpoint, Multi-Region Access Points off, S3 Express session auth off, a
/// custom endpoint), byte 1 a region (or, with its high bit, the region is the text after
/// the first `0xFF`), the rest is the name. Never a panic; every accepted name either is
/// refused by the endpoint with an error or gives a request whose host is a host name
/// and, path-style, whose path decodes back to the name.
pub fn address_arbitrary_name(data: &[u8]) {
    const REGIONS: [&str; 8] = [
        "us-east-1",
        "us-west-2",
        "aws-global",
        "cn-north-1",
        "us-gov-west-1",
        "us-iso-east-1",
        "eusc-de-east-1",
        "s3-external-1",
    ];
    let (flags, region_byte) = (
        data.first().copied().unwrap_or(0),
        data.get(1).copied().unwrap_or(0),
    );
    let rest = data.get(2..).unwrap_or_default();
    let (name, region) = if region_byte & 0x80 != 0 {
        let mut fields = rest.splitn(2, |&b| b == 0xFF);
        let name = fields.next().unwrap_or_default();
        let region = String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
        (name, region)
    } else {
        (
            rest,
            REGIONS[usize::from(region_byte) % REGIONS.len()].to_owned(),
        )
    };
    let name = String::from_utf8_lossy(name).into_owned();
    let on = |bit: u8| flags & (1 << bit) != 0;
    let endpoints = [
        crate::Endpoint::aws(&region),
        crate::Endpoint::custom("https://s3.example.com/base", &region),
        crate::Endpoint::custom("http://10.0.0.1:9000", &region),
    ];
    for endpoint in endpoints.into_iter().flatten() {
        if endpoint.is_aws() == on(7) {
            continue;
        }
        let endpoint = endpoint
            .with_fips(on(0))
            .with_dual_stack(on(1))
            .with_accelerate(on(2))
            .with_addressing_style(if on(3) {
                crate::AddressingStyle::Path
            } else {
                crate::AddressingStyle::VirtualHosted
            })
            .with_global_endpoint(on(4))
            .with_multi_region_access_points(!on(5))
            .with_s3_express_session_auth(!on(6));
        for bucket in [
            BucketName::new(name.clone()),
            BucketName::new_relaxed(name.clone()),
        ]
        .into_iter()
        .flatten()
        {
            let _ = bucket.kind();
            let key = ObjectKey::new("k").unwrap_or_else(|_| unreachable!());
            let requests = [
                GetObject::new(bucket.clone(), key.clone()).request(&endpoint),
                CreateBucket::new(bucket.clone()).request(&endpoint),
                ListObjectsV2::new(bucket.clone()).request(&endpoint),
            ];
            for request in requests.into_iter().flatten() {
                let uri = request.request.uri();
                let host = uri.host().unwrap_or_default();
                assert!(
                    !host.is_empty() && !host.contains(['/', '?', '#', '@', ' ']),
                    "{name:?}: host {host:?}"
                );
                let path = s3_sigv4::uri_decode(uri.path()).unwrap_or_default();
                if !host.contains(name.as_str()) && bucket.multi_region_access_point().is_none() {
                    let in_path = path
                        .windows(name.len().max(1))
                        .any(|w| w == name.as_bytes());
                    assert!(
                        in_path || bucket.as_str().starts_with("arn:"),
                        "{name:?}: neither in the host {host:?} nor in the path {:?}",
                        uri.path()
                    );
                }
                let _ = request.signing().params(
                    &endpoint,
                    s3_sigv4::SigningTime::from_unix(1_700_000_000)
                        .unwrap_or_else(|_| unreachable!()),
                    s3_sigv4::PayloadHash::Unsigned,
                );
            }
        }
    }
}

/// The configuration and ACL requests with arbitrary text in their documents and headers:
/// each is encoded (its body then decodes back to the same document) or refused.
fn encode_arbitrary_configurations(
    bucket: &BucketName,
    key: &ObjectKey,
    [name, value, extra]: [&String; 3],
    endpoint: &crate::Endpoint,
) {
    use s3_xml::*;
    let body = |request: Result<crate::OperationRequest, crate::Error>| -> Option<Vec<u8>> {
        match request.ok()?.body {
            crate::Body::Bytes(bytes) => Some(bytes.to_vec()),
            _ => None,
        }
    };
    let limits = Limits::default();
    let mut rule = LifecycleRule::new(name.clone(), LifecycleFilter::with_prefix(extra.clone()));
    rule.filter
        .iter_mut()
        .for_each(|f| f.tags.push(Tag::new(name.clone(), value.clone())));
    rule.transitions
        .push(Transition::after_days(1, value.clone()));
    let lifecycle = LifecycleConfiguration::new(vec![rule]);
    if let Some(xml) = body(
        PutBucketLifecycleConfiguration::new(bucket.clone(), lifecycle.clone()).request(endpoint),
    ) {
        assert_eq!(
            decode_lifecycle_configuration(&xml, &limits).ok(),
            Some(lifecycle)
        );
    }
    let mut cors_rule = CorsRule::new([extra.clone()], ["GET"]);
    cors_rule.allowed_headers.push(name.clone());
    let cors = CorsConfiguration::new(vec![cors_rule]);
    if let Some(xml) = body(PutBucketCors::new(bucket.clone(), cors.clone()).request(endpoint)) {
        assert_eq!(decode_cors_configuration(&xml, &limits).ok(), Some(cors));
    }
    let tags = Tagging::new(vec![Tag::new(name.clone(), value.clone())]);
    if let Some(xml) = body(PutBucketTagging::new(bucket.clone(), tags.clone()).request(endpoint)) {
        assert_eq!(decode_tagging(&xml, &limits).ok(), Some(tags));
    }
    let grantee = Grantee::CanonicalUser {
        id: name.clone(),
        display_name: Some(value.clone()),
    };
    let policy = AccessControlPolicy::new(
        Owner::new(extra.clone()),
        vec![Grant::new(grantee.clone(), Permission::Read)],
    );
    let acl = PutObjectAcl::new(
        bucket.clone(),
        key.clone(),
        AclSource::Policy(policy.clone()),
    );
    if let Some(xml) = body(acl.request(endpoint)) {
        assert_eq!(
            decode_access_control_policy(&xml, &limits).ok(),
            Some(policy)
        );
    }
    let grants = Grants::new().grant(Permission::ReadAcp, grantee);
    let _ = PutBucketAcl::new(bucket.clone(), AclSource::Grants(grants)).request(endpoint);
    let _ = PutBucketPolicy::new(bucket.clone(), extra.clone()).request(endpoint);
    let _ = ListObjects::new(bucket.clone())
        .prefix(extra.clone())
        .marker(name.clone())
        .request(endpoint);
    let _ = GetObjectAttributes::new(bucket.clone(), key.clone())
        .version_id(extra.clone())
        .request(endpoint);
}

/// Response headers whose values the header decoders parse (or copy).
const RESPONSE_HEADERS: [&str; 34] = [
    "content-range",
    "content-length",
    "last-modified",
    "expires",
    "etag",
    "date",
    "retry-after",
    "x-amz-checksum-crc32",
    "x-amz-checksum-crc32c",
    "x-amz-checksum-crc64nvme",
    "x-amz-checksum-sha1",
    "x-amz-checksum-sha256",
    "x-amz-checksum-type",
    "x-amz-delete-marker",
    "x-amz-missing-meta",
    "x-amz-mp-parts-count",
    "x-amz-tagging-count",
    "x-amz-meta-a",
    "x-amz-meta-b",
    "x-amz-storage-class",
    "x-amz-version-id",
    "x-amz-request-id",
    "x-amz-id-2",
    "x-amz-server-side-encryption",
    "x-amz-server-side-encryption-customer-algorithm",
    "x-amz-server-side-encryption-customer-key-md5",
    "x-amz-server-side-encryption-bucket-key-enabled",
    "content-type",
    "cache-control",
    "content-disposition",
    "content-encoding",
    "x-amz-bucket-region",
    "x-amz-object-size",
    "x-amz-object-lock-retain-until-date",
];

/// Statuses the header decoders see: successes (full and partial) and errors.
const RESPONSE_STATUSES: [u16; 12] = [200, 206, 200, 206, 204, 304, 403, 404, 412, 416, 500, 503];

/// Splits fuzz input into a response whose header values come from the input: byte 0
/// picks the status from a short list; then `0xFF`-separated segments, each a header: its
/// first byte picks the name from [`RESPONSE_HEADERS`] and the rest is the raw value
/// (invalid values skipped); a first byte of `0xFE` makes the rest the body instead, any
/// other the segment is `name:value`.
pub fn response_with_headers(data: &[u8]) -> Response<Bytes> {
    let status = RESPONSE_STATUSES[usize::from(data.first().copied().unwrap_or(0)) % 12];
    let mut response = Response::new(Bytes::new());
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    for segment in data.get(1..).unwrap_or_default().split(|&b| b == 0xFF) {
        let Some((&selector, value)) = segment.split_first() else {
            continue;
        };
        let (name, value) = match RESPONSE_HEADERS.get(usize::from(selector)) {
            Some(name) => (HeaderName::from_static(name), value),
            None if selector == 0xFE => {
                *response.body_mut() = Bytes::copy_from_slice(value);
                continue;
            }
            None => {
                let Some(colon) = value.iter().position(|&b| b == b':') else {
                    continue;
                };
                let Ok(name) = HeaderName::from_bytes(&value[..colon]) else {
                    continue;
                };
                (name, &value[colon + 1..])
            }
        };
        if let Ok(value) = HeaderValue::from_bytes(value) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

/// Decodes a response whose headers come from `data` (see [`response_with_headers`]) with
/// every decoder of response headers: HeadObject and GetObject (buffered and head-only,
/// with body checksum validation and resumption), PutObject, UploadPart, CopyObject,
/// CreateMultipartUpload, DeleteObject, the S3 error of a failure, and the metadata a copy
/// carries over. Panics only on a broken invariant:
///
/// * a decoded `Content-Range` is ordered and inside the total, and formats back to
///   itself; a canonical `bytes a-b/c` value is always accepted;
/// * a decoded `Content-Length`, count or ETag is what the header says (an ETag parses back
///   to itself, unquoted without quotes);
/// * a decoded date formats back (HTTP-date) to the same instant;
/// * a body checksum validator exists only for a full-object value of a full (or whole
///   `Content-Range`) response, and accepts exactly the body whose checksum it expects;
///   buffered GetObject agrees with it;
/// * resumption offsets stay inside the announced range;
/// * the attributes copied from the head give a request or an error, and keep the content
///   type.
pub fn decode_response_headers_arbitrary(data: &[u8]) {
    use crate::{ChecksumAlgorithm, ContentRange, ObjectAttributes};

    let (Ok(bucket), Ok(key)) = (BucketName::new("fuzz-bucket"), ObjectKey::new("k")) else {
        return;
    };
    let response = response_with_headers(data);
    let (parts, body) = response.into_parts();
    let respond = || {
        let mut response = Response::new(body.clone());
        *response.status_mut() = parts.status;
        *response.headers_mut() = parts.headers.clone();
        response
    };
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let source = CopySource::new(bucket.clone(), key.clone());
    let results = [
        ok(PutObject::new(bucket.clone(), key.clone()).response(respond())),
        ok(UploadPart::new(bucket.clone(), key.clone(), "u", 1).response(respond())),
        ok(CopyObject::new(source, bucket.clone(), key.clone()).response(respond())),
        ok(CreateMultipartUpload::new(bucket.clone(), key.clone()).response(respond())),
        ok(DeleteObject::new(bucket.clone(), key.clone()).response(respond())),
    ];
    for error in results.iter().filter_map(|r| r.as_ref().err()) {
        let _ = (error.retry_class(), error.to_string(), format!("{error:?}"));
    }
    if !parts.status.is_success() {
        let error = crate::service_error(&parts, &body);
        let _ = (error.retry_class(), error.to_string());
        // The error document's `<RequestId>` first, else the header's.
        if header("x-amz-request-id").is_some() {
            assert!(error.request_id.is_some());
        } else if error.request_id.is_some() {
            assert!(body.windows(11).any(|w| w == b"<RequestId>"));
        }
    }

    // The `Content-Range` parser on the raw value, against its own output.
    if let Some(value) = header("content-range") {
        if let Some(range) = ContentRange::parse(value) {
            assert!(range.first <= range.last && range.total.is_none_or(|t| range.last < t));
            let total = range.total.map_or("*".to_owned(), |t| t.to_string());
            let canonical = format!("bytes {}-{}/{total}", range.first, range.last);
            assert_eq!(ContentRange::parse(&canonical), Some(range), "{canonical}");
        } else if let Some((first, last, total)) = strict_content_range(value) {
            assert!(
                first > last || total.is_some_and(|t| last >= t),
                "canonical Content-Range {value:?} refused"
            );
        }
    }

    let head_object = HeadObject::new(bucket.clone(), key.clone()).response(respond());
    let get = GetObject::new(bucket.clone(), key.clone());
    let streamed = get.response_head(&parts);
    let buffered = get.response(respond());
    // The head decodes the same whichever way it is read (an error status is decoded from
    // the body by HeadObject, from the head alone by `response_head`).
    match (&head_object, &streamed) {
        (Ok(head), Ok(output)) => assert_eq!(head, &output.head),
        (Err(a), Err(b)) if parts.status.is_success() => assert_eq!(a.to_string(), b.to_string()),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("HeadObject {a:?} but GetObject head {b:?}"),
    }
    let Ok(head) = head_object else {
        if let Err(error) = &buffered {
            let _ = (error.retry_class(), error.to_string());
        }
        return;
    };
    check_object_head(&head, &parts.headers);

    // Body validation: only a full-object value of a full response, and exactly right.
    let validator = head.checksum_validator();
    let partial = head.content_range.is_some_and(|r| !r.is_whole_object());
    assert!(!(partial && validator.is_some()));
    match validator {
        Some(mut validator) => {
            let expected = validator.expected().clone();
            let algorithm = expected.algorithm();
            assert_eq!(
                head.checksums
                    .get(algorithm)
                    .map(|v| crate::Checksum::from_base64(algorithm, v)),
                Some(Ok(expected.clone()))
            );
            // Its base64 form round-trips.
            assert_eq!(
                crate::Checksum::from_base64(algorithm, &expected.to_base64()).as_ref(),
                Ok(&expected)
            );
            let matches = algorithm.checksum(&body) == expected;
            validator.update(&body);
            assert_eq!(validator.finish().is_ok(), matches);
            match &buffered {
                Ok(output) => assert!(matches && output.body == body),
                Err(Error::ChecksumMismatch { .. }) => assert!(!matches),
                Err(other) => panic!("buffered GetObject failed: {other}"),
            }
        }
        None => {
            assert!(buffered.is_ok(), "{buffered:?}");
            if !partial {
                // No algorithm has a valid full-object value.
                for algorithm in ChecksumAlgorithm::ALL {
                    if let Some(value) = head.checksums.get(algorithm) {
                        assert!(crate::Checksum::from_base64(algorithm, value).is_err());
                    }
                }
            }
        }
    }

    // Resumption stays inside what the first answer announced.
    if let Some(resumable) = get.resumable(&head) {
        let length = head.content_length.unwrap_or_default();
        let first = head.content_range.map_or(0, |r| r.first);
        assert!(length > 0 && head.etag.as_ref().is_some_and(|e| !e.is_weak()));
        for received in [0, 1, length / 2, length - 1, length, u64::MAX] {
            match resumable.request_after(received) {
                Some(next) => {
                    assert!(received < length);
                    if let Ok(request) = next.request(
                        &crate::Endpoint::aws("us-east-1").unwrap_or_else(|_| unreachable!()),
                    ) {
                        let range = request
                            .request
                            .headers()
                            .get("range")
                            .and_then(|v| v.to_str().ok());
                        let expected = format!("bytes={}-{}", first + received, first + length - 1);
                        assert_eq!(range, Some(expected.as_str()));
                    }
                }
                None => assert!(received >= length),
            }
            // The first answer itself answers the first resumption when it was a range.
            let checked = resumable.check(received, &head);
            if checked.is_ok() {
                assert_eq!(received, 0);
                assert!(head.content_range.is_some());
            }
        }
    }

    // What a copy carries over from the head gives a request or an error, never a panic.
    let attributes = ObjectAttributes::from_head(&head);
    let endpoint = crate::Endpoint::aws("us-east-1");
    if let Ok(endpoint) = endpoint {
        let create = CreateMultipartUpload::new(bucket, key).attributes(attributes);
        if let Ok(request) = create.request(&endpoint) {
            let content_type = request.request.headers().get("content-type");
            assert_eq!(
                content_type.and_then(|v| v.to_str().ok()),
                head.content_type.as_deref()
            );
        }
    }
}

/// `bytes first-last/total` (or `/*`) with digits only: `Content-Range` as RFC 9110
/// §14.4 writes it.
fn strict_content_range(value: &str) -> Option<(u64, u64, Option<u64>)> {
    let digits = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (range, total) = value.strip_prefix("bytes ")?.split_once('/')?;
    let (first, last) = range.split_once('-')?;
    let total = match total {
        "*" => None,
        total => Some(digits(total)?),
    };
    Some((digits(first)?, digits(last)?, total))
}

/// What an accepted head must say about the headers it came from.
fn check_object_head(head: &crate::ops::head_object::ObjectHead, headers: &http::HeaderMap) {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let number = |name: &str| header(name).and_then(|v| v.parse::<u64>().ok());
    assert_eq!(head.content_length, number("content-length"));
    assert_eq!(
        head.parts_count.map(u64::from),
        number("x-amz-mp-parts-count")
    );
    assert_eq!(head.tag_count.map(u64::from), number("x-amz-tagging-count"));
    assert_eq!(
        head.missing_meta.map(u64::from),
        number("x-amz-missing-meta")
    );
    assert_eq!(
        head.delete_marker,
        header("x-amz-delete-marker") == Some("true")
    );
    if let Some(range) = head.content_range {
        assert_eq!(
            crate::ContentRange::parse(header("content-range").unwrap_or_default()),
            Some(range)
        );
    }
    if let Some(etag) = &head.etag {
        assert_eq!(s3_xml::ETag::parse(etag.as_str()).as_ref(), Ok(etag));
        let unquoted = etag.unquoted();
        assert!(!unquoted.is_empty() && !unquoted.contains('"'));
        assert!(header("etag").is_some_and(|v| v.contains(unquoted)));
    }
    if let Some(modified) = head.last_modified {
        let formatted = httpdate::fmt_http_date(modified);
        assert_eq!(httpdate::parse_http_date(&formatted).ok(), Some(modified));
    }
    for (algorithm, value) in &head.checksums.values {
        assert_eq!(
            header(algorithm.header_name().as_str()),
            Some(value.as_str())
        );
    }
    for (name, value) in &head.metadata {
        // A repeated header gives one of its values.
        let mut raw = headers.get_all(format!("x-amz-meta-{name}")).into_iter();
        assert!(raw.any(|raw| String::from_utf8_lossy(raw.as_bytes()) == *value));
    }
    let _ = format!("{head:?}");
}

/// The `httpdate` crate's reading of an HTTP-date (IMF-fixdate, RFC 850 or asctime; the
/// weekday and the day of the month checked): the reference other date parsers are
/// fuzzed against.
pub fn http_date_reference(value: &str) -> Option<std::time::SystemTime> {
    httpdate::parse_http_date(value).ok()
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
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn arbitrary_names_address_or_fail_cleanly(
            flags in any::<u8>(),
            region in any::<u8>(),
            name in prop_oneof![
                ".{0,70}",
                "arn:(aws|aws-cn|x):(s3|s3-object-lambda|s3-outposts):[a-z0-9-]{0,12}:[0-9]{0,12}:[a-z/:.-]{0,40}",
                "[a-z0-9-]{1,40}--[a-z0-9-]{1,20}--xa?-s3",
                "[a-z0-9-]{40,56}--op-s3",
            ],
        ) {
            let mut data = vec![flags, region & 0x7F];
            data.extend_from_slice(name.as_bytes());
            address_arbitrary_name(&data);
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn response_headers_never_panic_on_bytes(data in proptest::collection::vec(any::<u8>(), 0..256)) {
            decode_response_headers_arbitrary(&data);
        }

        #[test]
        fn response_headers_hold_their_invariants(
            status in any::<u8>(),
            headers in proptest::collection::vec(
                (
                    0u8..34,
                    prop_oneof![
                        "bytes [0-9]{1,3}-[0-9]{1,3}/([0-9]{1,4}|\\*)",
                        "[0-9+-]{1,21}",
                        "(Mon|Sun), 0[1-9] (Jan|Feb) (19[0-9]{2}|20[0-9]{2}|9999|10000) [0-2][0-9]:[0-5][0-9]:[0-6][0-9] GMT",
                        "W?/?\"?[0-9a-f -]{0,8}\"?",
                        "[A-Za-z0-9+/]{2,11}={0,2}(-[0-9])?",
                        "(true|false|COMPOSITE|FULL_OBJECT|AES256)",
                        "[ -~\t\u{80}-\u{ff}]{0,12}",
                    ],
                ),
                0..8,
            ),
            body in proptest::collection::vec(any::<u8>(), 0..16),
        ) {
            let mut data = vec![status];
            for (name, value) in headers {
                data.push(name);
                data.extend_from_slice(value.as_bytes());
                data.push(0xFF);
            }
            data.push(0xFE);
            data.extend_from_slice(&body);
            decode_response_headers_arbitrary(&data);
        }
    }

    /// Hand-picked responses: a valid full object with a matching and a wrong checksum, a
    /// partial one, an inconsistent range, huge numbers, a resumable head.
    #[test]
    fn response_headers_examples() {
        let crc32_of_abc = crate::ChecksumAlgorithm::Crc32.checksum(b"abc").to_base64();
        let mut cases: Vec<Vec<u8>> = Vec::new();
        let header = |name: &str, value: &str| -> Vec<u8> {
            let index = RESPONSE_HEADERS.iter().position(|n| *n == name).unwrap() as u8;
            let mut segment = vec![index];
            segment.extend_from_slice(value.as_bytes());
            segment.push(0xFF);
            segment
        };
        for (status, checksum, range) in [
            (0u8, crc32_of_abc.as_str(), None),
            (0, "AAAAAA==", None),
            (1, crc32_of_abc.as_str(), Some("bytes 0-2/3")),
            (1, crc32_of_abc.as_str(), Some("bytes 1-2/3")),
            (1, "AAAAAA==", Some("bytes 5-2/3")),
            (
                1,
                "AAAAAA==",
                Some("bytes 0-18446744073709551615/18446744073709551615"),
            ),
            (1, "AAAAAA==", Some("bytes +1-+2/*")),
        ] {
            let mut data = vec![status];
            data.extend(header("x-amz-checksum-crc32", checksum));
            data.extend(header("etag", "\"0123abcd\""));
            data.extend(header("content-length", "3"));
            data.extend(header("last-modified", "Sun, 06 Nov 1994 08:49:37 GMT"));
            data.extend(header("x-amz-meta-a", "caf\u{e9}"));
            if let Some(range) = range {
                data.extend(header("content-range", range));
            }
            data.push(0xFE);
            data.extend_from_slice(b"abc");
            cases.push(data);
        }
        for data in cases {
            let response = response_with_headers(&data);
            assert_eq!(response.body().as_ref(), b"abc");
            decode_response_headers_arbitrary(&data);
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

//! Provider profiles, end to end: for each quirk, what the client actually sent (recorded by
//! the fault server or the fault store) differs from what it sends to a generic store exactly
//! as the profile documents, and what a store would mishandle is refused before anything is
//! sent.

mod support;

#[allow(dead_code, clippy::all)]
#[path = "transfers/fault_store.rs"]
mod fault_store;

use std::time::Duration;

use bytes::Bytes;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::provider::{Feature, Unsupported};
use s3_wire_tokio::s3_ops::{ChecksumAlgorithm, InvalidInput, Provider};
use s3_wire_tokio::{Body, Client, ClientBuilder, ErrorKind, TransferOptions};
use support::fault::{FaultServer, Recorded, Reply};
use support::{crc32, one_shot, sha256};

const ACCESS_KEY: &str = "AKIDPROVIDERS";
const SECRET_KEY: &str = "provider-profiles-secret";

fn builder(server: &FaultServer) -> ClientBuilder {
    Client::builder()
        .endpoint(server.endpoint())
        .region("us-east-1")
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .proxy_from_env(false)
        .retry(support::retry(1))
}

/// A client of `server` with the profile of `provider` (`None`: detected, i.e. generic for
/// a loopback address).
fn client(server: &FaultServer, provider: Option<Provider>) -> Client {
    let builder = builder(server);
    match provider {
        Some(provider) => builder.provider(provider),
        None => builder,
    }
    .build()
    .expect("client")
}

/// A client trusting a TLS fault server, with `hosts` routed to it and no region set.
fn tls_client(server: &FaultServer, endpoint: Option<&str>, hosts: &[&str]) -> ClientBuilder {
    let builder = hosts
        .iter()
        .fold(Client::builder(), |builder, host| {
            builder.resolve(host, server.addr())
        })
        .proxy_from_env(false)
        .add_root_certificate_der(server.certificate_der())
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .retry(support::retry(1));
    match endpoint {
        Some(url) => builder.endpoint(url),
        None => builder,
    }
}

fn put(key: &str) -> PutObject {
    PutObject::new(
        s3_wire_tokio::bucket("bucket").unwrap(),
        s3_wire_tokio::key(key).unwrap(),
    )
}

fn only(server: &FaultServer) -> Recorded {
    let mut requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    requests.remove(0)
}

/// The signing region of a recorded request (its credential scope).
fn signed_region(request: &Recorded) -> String {
    let authorization = request.header("authorization").expect("signed");
    let scope = authorization
        .split("Credential=")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .expect("credential scope");
    scope.split('/').nth(2).expect("region in scope").to_owned()
}

fn unsupported(error: &s3_wire_tokio::Error) -> &Unsupported {
    match error.kind() {
        ErrorKind::Operation(s3_wire_tokio::s3_ops::Error::InvalidInput(
            InvalidInput::Unsupported(unsupported),
        )) => unsupported,
        other => panic!("expected a provider refusal, got {other:?} ({error})"),
    }
}

#[tokio::test]
async fn a_store_that_takes_no_checksums_gets_none_and_another_gets_one_it_keeps() {
    let data = Bytes::from_static(b"provider profiles");
    // Generic: the client's default CRC32.
    let server = FaultServer::start([Reply::empty()]);
    client(&server, None)
        .put_object(put("k"), data.clone())
        .await
        .unwrap();
    let sent = only(&server);
    assert_eq!(
        sent.header("x-amz-checksum-crc32"),
        Some(support::base64(&crc32(&data).to_be_bytes()).as_str())
    );

    // DigitalOcean Spaces refuses uploads of SDKs that send checksums by default: none.
    let server = FaultServer::start([Reply::empty()]);
    client(&server, Some(Provider::DigitalOceanSpaces))
        .put_object(put("k"), data.clone())
        .await
        .unwrap();
    let sent = only(&server);
    let checksum_headers: Vec<&str> = sent
        .headers
        .keys()
        .map(|name| name.as_str())
        .filter(|name| name.starts_with("x-amz-checksum") || name.contains("sdk-checksum"))
        .collect();
    assert!(checksum_headers.is_empty(), "{checksum_headers:?}");

    // moto stores CRC32C as CRC32 without its optional package: asked for CRC32C, the
    // request carries CRC32 instead (the value of these bytes).
    let server = FaultServer::start([Reply::empty()]);
    client(&server, Some(Provider::Moto))
        .put_object(
            put("k").checksum_algorithm(ChecksumAlgorithm::Crc32c),
            data.clone(),
        )
        .await
        .unwrap();
    let sent = only(&server);
    assert_eq!(sent.header("x-amz-checksum-crc32c"), None);
    assert_eq!(
        sent.header("x-amz-checksum-crc32"),
        Some(support::base64(&crc32(&data).to_be_bytes()).as_str())
    );
}

#[tokio::test]
async fn a_file_checksum_goes_in_a_header_where_the_store_takes_no_trailer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("object");
    let data = support::data(3000, 7);
    std::fs::write(&path, &data).unwrap();
    let crc = support::base64(&crc32(&data).to_be_bytes());
    let host = "files.example";
    let send = |provider: Option<Provider>| {
        let path = path.clone();
        async move {
            let server = FaultServer::start_tls([Reply::empty()], &[host]);
            let builder = tls_client(&server, Some(&format!("https://{host}")), &[host]);
            let builder = match provider {
                Some(provider) => builder.provider(provider),
                None => builder,
            };
            builder
                .build()
                .unwrap()
                .put_object(put("k"), Body::from_file(&path).await.unwrap())
                .await
                .unwrap();
            only(&server)
        }
    };

    // Over TLS a generic store gets the CRC32 as a trailer, computed as the file is sent.
    let generic = send(None).await;
    assert_eq!(
        generic.header("x-amz-trailer"),
        Some("x-amz-checksum-crc32")
    );
    assert_eq!(generic.header("content-encoding"), Some("aws-chunked"));

    // R2 documents no trailer: the file is read once ahead for the value, sent in a header.
    let r2 = send(Some(Provider::CloudflareR2)).await;
    assert_eq!(r2.header("x-amz-trailer"), None);
    assert_eq!(r2.header("content-encoding"), None);
    assert_eq!(r2.header("x-amz-checksum-crc32"), Some(crc.as_str()));
    assert_eq!(r2.header("x-amz-content-sha256"), Some("UNSIGNED-PAYLOAD"));
    assert_eq!(&r2.body[..], &data[..]);

    // Over plain HTTP every store gets that header, computed in the same read as the
    // SHA-256 the signature needs.
    let server = FaultServer::start([Reply::empty()]);
    client(&server, None)
        .put_object(put("k"), Body::from_file(&path).await.unwrap())
        .await
        .unwrap();
    let plain = only(&server);
    assert_eq!(plain.header("x-amz-trailer"), None);
    assert_eq!(plain.header("x-amz-checksum-crc32"), Some(crc.as_str()));
    let digest: String = sha256(&data).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(plain.header("x-amz-content-sha256"), Some(digest.as_str()));
    assert_eq!(&plain.body[..], &data[..]);
}

#[tokio::test]
async fn a_stream_that_would_need_aws_chunked_is_refused_before_sending() {
    let data = support::data(100, 3);
    let server = FaultServer::start([Reply::empty()]);
    client(&server, None)
        .put_object(put("k").no_checksum(), one_shot(&data, 40))
        .await
        .unwrap();
    assert_eq!(
        only(&server).header("content-encoding"),
        Some("aws-chunked")
    );

    let server = FaultServer::start([Reply::empty()]);
    let error = client(&server, Some(Provider::DigitalOceanSpaces))
        .put_object(put("k").no_checksum(), one_shot(&data, 40))
        .await
        .unwrap_err();
    assert_eq!(unsupported(&error).feature, Feature::AwsChunked);
    assert!(server.requests().is_empty(), "nothing may be sent");
}

fn empty_listing() -> Reply {
    Reply::ok(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult \
         xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bucket</Name><Prefix></Prefix>\
         <KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>\
         </ListBucketResult>",
    )
    .with_header("content-type", "application/xml")
}

#[tokio::test]
async fn listings_ask_for_url_encoding_only_where_it_is_honoured() {
    let list = || ListObjectsV2::new(s3_wire_tokio::bucket("bucket").unwrap());
    let server = FaultServer::start([empty_listing()]);
    client(&server, None).list_objects_v2(list()).await.unwrap();
    assert_eq!(
        only(&server).uri.query(),
        Some("encoding-type=url&list-type=2")
    );

    // s3s-fs echoes EncodingType=url but sends keys unencoded: not asked for.
    let server = FaultServer::start([empty_listing()]);
    client(&server, Some(Provider::S3sFs))
        .list_objects_v2(list())
        .await
        .unwrap();
    assert_eq!(only(&server).uri.query(), Some("list-type=2"));
}

#[tokio::test]
async fn a_conditional_write_the_store_would_ignore_is_refused_before_sending() {
    let server = FaultServer::start([Reply::empty()]);
    client(&server, Some(Provider::Aws))
        .put_object(put("k").if_none_match_any(), Bytes::from_static(b"x"))
        .await
        .unwrap();
    assert_eq!(only(&server).header("if-none-match"), Some("*"));

    let server = FaultServer::start([Reply::empty()]);
    let b2 = client(&server, Some(Provider::BackblazeB2));
    let error = b2
        .put_object(put("k").if_none_match_any(), Bytes::from_static(b"x"))
        .await
        .unwrap_err();
    assert_eq!(
        unsupported(&error).feature,
        Feature::ConditionalWrite {
            header: "If-None-Match",
            copy: false
        }
    );
    assert!(error.to_string().contains("Backblaze B2"), "{error}");
    // A managed create-only upload is refused before its first request as well.
    let error = b2
        .upload(
            s3_wire_tokio::bucket("bucket").unwrap(),
            s3_wire_tokio::key("k").unwrap(),
            Bytes::from_static(b"x"),
        )
        .create_only()
        .await
        .unwrap_err();
    assert!(
        matches!(
            unsupported(&error).feature,
            Feature::ConditionalWrite { .. }
        ),
        "{error:?}"
    );
    assert!(server.requests().is_empty(), "nothing may be sent");
}

#[tokio::test]
async fn presigned_urls_longer_than_the_store_honours_are_refused() {
    let server = FaultServer::start([]);
    let get = s3_wire_tokio::s3_ops::ops::get_object::GetObject::new(
        s3_wire_tokio::bucket("bucket").unwrap(),
        s3_wire_tokio::key("k").unwrap(),
    );
    // Every built-in profile honours SigV4's 7 days; a store version with a shorter limit
    // is described by correcting the profile.
    let mut quirks = Provider::Minio.quirks();
    quirks.max_presign_expiry = Duration::from_secs(3600);
    let limited = builder(&server).provider_quirks(quirks).build().unwrap();
    let url = limited
        .presign(&get, Duration::from_secs(3600))
        .await
        .unwrap();
    assert!(url.url().contains("X-Amz-Expires=3600"), "{}", url.url());
    let error = limited
        .presign(&get, Duration::from_secs(3601))
        .await
        .unwrap_err();
    assert!(matches!(
        unsupported(&error).feature,
        Feature::PresignExpiry { .. }
    ));
    assert!(
        client(&server, None)
            .presign(&get, Duration::from_secs(3601))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn the_signing_region_follows_the_detected_provider_and_an_explicit_choice_wins() {
    let cases = [
        ("0123abcd.r2.cloudflarestorage.com", None, "auto"),
        ("s3.us-west-004.backblazeb2.com", None, "us-west-004"),
        (
            "0123abcd.r2.cloudflarestorage.com",
            Some(Provider::Generic),
            "us-east-1",
        ),
        ("storage.example.com", None, "us-east-1"),
    ];
    for (host, provider, region) in cases {
        let server = FaultServer::start_tls([Reply::empty()], &[host]);
        let url = format!("https://{host}");
        let builder = tls_client(&server, Some(&url), &[host]);
        let builder = match provider {
            Some(provider) => builder.provider(provider),
            None => builder,
        };
        let client = builder.build().unwrap();
        client
            .put_object(put("k"), Bytes::from_static(b"x"))
            .await
            .unwrap();
        assert_eq!(signed_region(&only(&server)), region, "{host} {provider:?}");
        assert_eq!(client.region(), region);
    }
}

#[tokio::test]
async fn path_style_where_the_store_serves_buckets_only_in_the_path() {
    // An AWS endpoint (no URL) routed to the server: virtual-hosted by default, path-style
    // under a profile that needs it.
    let hosts = [
        "s3.us-east-1.amazonaws.com",
        "bucket.s3.us-east-1.amazonaws.com",
    ];
    let server = FaultServer::start_tls([Reply::empty()], &hosts);
    tls_client(&server, None, &hosts)
        .region("us-east-1")
        .build()
        .unwrap()
        .put_object(put("k"), Bytes::from_static(b"x"))
        .await
        .unwrap();
    let aws = only(&server);
    assert_eq!(
        aws.header("host"),
        Some("bucket.s3.us-east-1.amazonaws.com")
    );
    assert_eq!(aws.uri.path(), "/k");

    let server = FaultServer::start_tls([Reply::empty()], &hosts);
    tls_client(&server, None, &hosts)
        .region("us-east-1")
        .provider(Provider::Minio)
        .build()
        .unwrap()
        .put_object(put("k"), Bytes::from_static(b"x"))
        .await
        .unwrap();
    let minio = only(&server);
    assert_eq!(minio.header("host"), Some("s3.us-east-1.amazonaws.com"));
    assert_eq!(minio.uri.path(), "/bucket/k");
}

/// A managed multipart upload of `source` to the fault store under `quirks` (none: generic),
/// with 5 MiB parts; returns what the store recorded.
async fn managed_upload(
    quirks: Option<s3_wire_tokio::s3_ops::ProviderQuirks>,
    source: s3_wire_tokio::UploadSource,
    options: TransferOptions,
) -> Vec<fault_store::RequestRecord> {
    let store = fault_store::FaultStore::start();
    let builder = store.client_builder().retry(support::retry(1));
    let builder = match quirks {
        Some(quirks) => builder.provider_quirks(quirks),
        None => builder,
    };
    let client = builder.transfer_options(options).build().unwrap();
    client
        .upload(
            s3_wire_tokio::bucket("bucket").unwrap(),
            s3_wire_tokio::key("big").unwrap(),
            source,
        )
        .await
        .expect("upload");
    store.requests()
}

/// The requests of operation `op`, in part-number order (parts are sent concurrently).
fn multipart(
    records: &[fault_store::RequestRecord],
    op: fault_store::Op,
) -> Vec<&fault_store::RequestRecord> {
    let mut found: Vec<_> = records.iter().filter(|r| r.operation == op).collect();
    found.sort_by_key(|r| part_number(r));
    found
}

fn part_number(record: &fault_store::RequestRecord) -> u32 {
    record
        .query
        .split('&')
        .find_map(|pair| pair.strip_prefix("partNumber="))
        .map_or(0, |n| n.parse().unwrap())
}

#[tokio::test]
async fn a_managed_upload_uses_a_checksum_combination_the_store_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big");
    let data = support::data(11 << 20, 5);
    std::fs::write(&path, &data).unwrap();
    let mut options = TransferOptions::default();
    options.part_size = 5 << 20;
    options.single_request_limit = Some(5 << 20);

    let generic = managed_upload(None, path.clone().into(), options).await;
    let create = multipart(&generic, fault_store::Op::CreateMultipartUpload);
    assert_eq!(create[0].header("x-amz-checksum-algorithm"), Some("CRC32"));
    assert_eq!(create[0].header("x-amz-checksum-type"), Some("FULL_OBJECT"));
    let parts = multipart(&generic, fault_store::Op::UploadPart);
    assert_eq!(parts.len(), 3);
    for (part, bytes) in parts.iter().zip(data.chunks(5 << 20)) {
        // Over plain HTTP: computed ahead with the SHA-256, in a header.
        assert_eq!(part.header("x-amz-trailer"), None);
        let expected = support::base64(&crc32(bytes).to_be_bytes());
        assert_eq!(part.header("x-amz-checksum-crc32"), Some(expected.as_str()));
    }

    // R2 takes CRC32 only as a composite checksum: CRC64NVME full-object, each part's value
    // in a header.
    let r2 = managed_upload(
        Some(Provider::CloudflareR2.quirks()),
        path.clone().into(),
        options,
    )
    .await;
    let create = multipart(&r2, fault_store::Op::CreateMultipartUpload);
    assert_eq!(
        create[0].header("x-amz-checksum-algorithm"),
        Some("CRC64NVME")
    );
    assert_eq!(create[0].header("x-amz-checksum-type"), Some("FULL_OBJECT"));
    let parts = multipart(&r2, fault_store::Op::UploadPart);
    assert_eq!(parts.len(), 3);
    for (part, bytes) in parts.iter().zip(data.chunks(5 << 20)) {
        assert_eq!(part.header("x-amz-trailer"), None);
        let expected = support::base64(&support::crc64nvme(bytes).to_be_bytes());
        assert_eq!(
            part.header("x-amz-checksum-crc64nvme"),
            Some(expected.as_str())
        );
    }
    let complete = multipart(&r2, fault_store::Op::CompleteMultipartUpload);
    let whole = support::base64(&support::crc64nvme(&data).to_be_bytes());
    assert_eq!(
        complete[0].header("x-amz-checksum-crc64nvme"),
        Some(whole.as_str())
    );
}

#[tokio::test]
async fn managed_uploads_cut_parts_within_the_stores_limits() {
    // R2's largest part is 5 MiB short of 5 GiB: the client's defaults follow.
    let server = FaultServer::start([]);
    let r2 = client(&server, Some(Provider::CloudflareR2));
    assert_eq!(
        r2.transfer_options().limits.max_part_size(),
        5 * 1024 * 1024 * 1024 - 5 * 1024 * 1024
    );
    assert_eq!(
        client(&server, None).transfer_options().limits,
        s3_wire_tokio::s3_multipart_plan::PartLimits::S3
    );

    // A store whose parts are at most 6 MiB: the default 8 MiB parts become 6 MiB ones.
    let data = support::data(13 << 20, 9);
    let mut options = TransferOptions::default();
    options.single_request_limit = Some(5 << 20);
    let mut small_parts = Provider::Minio.quirks();
    small_parts.max_part_size = 6 << 20;
    let sizes = |records: Vec<fault_store::RequestRecord>| -> Vec<u64> {
        multipart(&records, fault_store::Op::UploadPart)
            .iter()
            .map(|r| r.header("content-length").unwrap().parse().unwrap())
            .collect()
    };
    let generic = managed_upload(None, data.clone().into(), options).await;
    assert_eq!(sizes(generic), [8 << 20, 5 << 20]);
    let limited = managed_upload(Some(small_parts), data.into(), options).await;
    assert_eq!(sizes(limited), [6 << 20, 6 << 20, 1 << 20]);
}

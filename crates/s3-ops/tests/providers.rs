//! Provider profiles: detection, the profiles' internal consistency, and every adaptation of
//! an encoded request (`ProviderQuirks::adapt_request`) changing exactly what the profile
//! says, checked on the request a transport would sign.

use std::time::Duration;

use bytes::Bytes;
use s3_ops::provider::{ConditionalWrites, Feature, Unsupported};
use s3_ops::{
    BucketName, ChecksumAlgorithm, ChecksumType, CompleteMultipartUpload, CopyObject, CopySource,
    CreateMultipartUpload, Endpoint, Error, InvalidInput, ListObjectsV2, ObjectKey, Operation,
    OperationRequest, Provider, ProviderQuirks, PutObject, UploadPart,
};

fn bucket() -> BucketName {
    BucketName::new("bucket").unwrap()
}

fn key() -> ObjectKey {
    ObjectKey::new("k").unwrap()
}

fn endpoint() -> Endpoint {
    Endpoint::custom("https://storage.example.com", "us-east-1").unwrap()
}

fn adapted(provider: Provider, op: &impl Operation) -> Result<OperationRequest, Error> {
    let mut request = op.request(&endpoint())?;
    provider.quirks().adapt_request(&mut request)?;
    Ok(request)
}

fn header<'a>(request: &'a OperationRequest, name: &str) -> Option<&'a str> {
    request.request.headers().get(name)?.to_str().ok()
}

/// The managed uploads' rule: full-object CRCs, composite hashes.
fn transfer_type(algorithm: ChecksumAlgorithm) -> ChecksumType {
    match algorithm {
        ChecksumAlgorithm::Sha1 | ChecksumAlgorithm::Sha256 => ChecksumType::Composite,
        _ => ChecksumType::FullObject,
    }
}

fn unsupported(error: Error) -> Unsupported {
    match error {
        Error::InvalidInput(InvalidInput::Unsupported(unsupported)) => unsupported,
        other => panic!("expected an Unsupported refusal, got {other:?}"),
    }
}

#[test]
fn hosts_detect_their_provider_and_unknown_hosts_are_generic() {
    let cases = [
        ("s3.eu-west-1.amazonaws.com", Provider::Aws),
        (
            "bucket.s3.dualstack.us-east-1.amazonaws.com:443",
            Provider::Aws,
        ),
        ("s3.cn-north-1.amazonaws.com.cn", Provider::Aws),
        ("0123abcd.r2.cloudflarestorage.com", Provider::CloudflareR2),
        (
            "0123abcd.eu.r2.cloudflarestorage.com",
            Provider::CloudflareR2,
        ),
        ("storage.googleapis.com", Provider::GoogleCloudStorage),
        ("S3.US-WEST-004.BACKBLAZEB2.COM", Provider::BackblazeB2),
        ("s3.eu-central-1.wasabisys.com", Provider::Wasabi),
        ("nyc3.digitaloceanspaces.com", Provider::DigitalOceanSpaces),
        ("127.0.0.1:9000", Provider::Generic),
        ("minio.internal:9000", Provider::Generic),
        // A look-alike domain is not the provider's.
        ("evilamazonaws.com", Provider::Generic),
        ("r2.cloudflarestorage.com.example.net", Provider::Generic),
    ];
    for (host, provider) in cases {
        assert_eq!(Provider::from_host(host), provider, "{host}");
    }
    assert_eq!(
        Provider::detect(&Endpoint::aws("us-west-2").unwrap()),
        Provider::Aws
    );
    assert_eq!(
        Provider::detect(&Endpoint::custom("http://127.0.0.1:9000", "us-east-1").unwrap()),
        Provider::Generic
    );
}

#[test]
fn every_profile_is_consistent() {
    for provider in Provider::ALL {
        let quirks = provider.quirks();
        assert_eq!(quirks.provider, provider);
        // A multipart checksum the store takes is one it takes on a single request too: the
        // parts are single requests.
        for algorithm in quirks
            .full_object_checksums
            .iter()
            .chain(quirks.composite_checksums)
        {
            assert!(
                quirks.checksums.contains(algorithm),
                "{provider}: {algorithm}"
            );
        }
        assert!(quirks.min_part_size <= quirks.max_part_size, "{provider}");
        assert!(quirks.max_presign_expiry <= Duration::from_secs(7 * 24 * 3600));
        // A trailer is an aws-chunked body.
        assert!(
            !quirks.trailing_checksums || quirks.aws_chunked,
            "{provider}"
        );
    }
    // The generic profile is S3's: it adapts nothing.
    let generic = Provider::Generic.quirks();
    assert_eq!(generic.checksums.len(), ChecksumAlgorithm::ALL.len());
    assert_eq!(generic.conditional_writes, ConditionalWrites::ALL);
    assert!(generic.listing_url_encoding && generic.trailing_checksums);
}

#[test]
fn regions_follow_the_providers_naming() {
    let r2 = Provider::CloudflareR2.quirks();
    assert_eq!(
        r2.default_region("acct.r2.cloudflarestorage.com")
            .as_deref(),
        Some("auto")
    );
    let b2 = Provider::BackblazeB2.quirks();
    assert_eq!(
        b2.default_region("s3.us-west-004.backblazeb2.com:443")
            .as_deref(),
        Some("us-west-004")
    );
    assert_eq!(b2.default_region("backblazeb2.com"), None);
    assert_eq!(
        Provider::Aws
            .quirks()
            .default_region("s3.eu-west-1.amazonaws.com"),
        None
    );
    assert_eq!(
        Provider::Generic.quirks().default_region("127.0.0.1:9000"),
        None
    );
}

#[test]
fn single_request_checksums_fall_back_to_one_the_store_accepts() {
    let moto = Provider::Moto.quirks();
    // moto turns CRC32C into CRC32 without its optional package: CRC32, the cheapest it keeps.
    assert_eq!(
        moto.upload_checksum(Some(ChecksumAlgorithm::Crc32c)),
        Some(ChecksumAlgorithm::Crc32)
    );
    assert_eq!(
        moto.upload_checksum(Some(ChecksumAlgorithm::Sha256)),
        Some(ChecksumAlgorithm::Sha256)
    );
    let spaces = Provider::DigitalOceanSpaces.quirks();
    assert_eq!(spaces.upload_checksum(Some(ChecksumAlgorithm::Crc32)), None);
    assert_eq!(Provider::Aws.quirks().upload_checksum(None), None);
}

#[test]
fn multipart_checksums_fall_back_to_an_accepted_combination() {
    let r2 = Provider::CloudflareR2.quirks();
    // R2: CRC32 only COMPOSITE, CRC64NVME only FULL_OBJECT.
    assert_eq!(
        r2.multipart_checksum(Some(ChecksumAlgorithm::Crc32), transfer_type),
        Some(ChecksumAlgorithm::Crc64Nvme)
    );
    assert_eq!(
        r2.multipart_checksum(Some(ChecksumAlgorithm::Sha256), transfer_type),
        Some(ChecksumAlgorithm::Sha256)
    );
    assert!(r2.accepts_multipart(ChecksumAlgorithm::Crc32, ChecksumType::Composite));
    assert!(!r2.accepts_multipart(ChecksumAlgorithm::Crc32, ChecksumType::FullObject));
    // moto keeps composite values only: the hashes.
    assert_eq!(
        Provider::Moto
            .quirks()
            .multipart_checksum(Some(ChecksumAlgorithm::Crc32), transfer_type),
        Some(ChecksumAlgorithm::Sha256)
    );
    // s3s-fs keeps no multipart checksums at all.
    assert_eq!(
        Provider::S3sFs
            .quirks()
            .multipart_checksum(Some(ChecksumAlgorithm::Crc32), transfer_type),
        None
    );
    assert_eq!(
        Provider::Aws
            .quirks()
            .multipart_checksum(Some(ChecksumAlgorithm::Crc32), transfer_type),
        Some(ChecksumAlgorithm::Crc32)
    );
}

#[test]
fn an_in_memory_checksum_is_recomputed_with_the_fallback_algorithm() {
    let put = PutObject::new(bucket(), key())
        .body(Bytes::from_static(b"hello"))
        .checksum_algorithm(ChecksumAlgorithm::Crc32c);
    let generic = adapted(Provider::Generic, &put).unwrap();
    assert!(header(&generic, "x-amz-checksum-crc32c").is_some());
    let moto = adapted(Provider::Moto, &put).unwrap();
    assert_eq!(header(&moto, "x-amz-checksum-crc32c"), None);
    // CRC32("hello") = 0x3610a686 (zlib).
    assert_eq!(header(&moto, "x-amz-checksum-crc32"), Some("NhCmhg=="));
    assert_eq!(header(&moto, "x-amz-sdk-checksum-algorithm"), Some("CRC32"));

    // A store that takes none gets none, also for a value computed in advance.
    let precomputed = PutObject::new(bucket(), key())
        .body(Bytes::from_static(b"hello"))
        .checksum(ChecksumAlgorithm::Crc32.checksum(b"hello"));
    let spaces = adapted(Provider::DigitalOceanSpaces, &precomputed).unwrap();
    for algorithm in ChecksumAlgorithm::ALL {
        assert_eq!(header(&spaces, algorithm.header_name().as_str()), None);
    }
    assert_eq!(header(&spaces, "x-amz-sdk-checksum-algorithm"), None);
}

#[test]
fn a_trailer_is_dropped_where_the_store_takes_none_and_switched_where_it_takes_another() {
    let streamed = UploadPart::new(bucket(), key(), "upload", 1)
        .streaming_body(10)
        .checksum_algorithm(ChecksumAlgorithm::Crc32c);
    let generic = adapted(Provider::Generic, &streamed).unwrap();
    assert!(matches!(
        generic.body,
        s3_ops::Body::External {
            trailing_checksum: Some(ChecksumAlgorithm::Crc32c),
            ..
        }
    ));
    let r2 = adapted(Provider::CloudflareR2, &streamed).unwrap();
    assert!(matches!(
        r2.body,
        s3_ops::Body::External {
            trailing_checksum: None,
            content_length: 10,
            ..
        }
    ));
    assert_eq!(header(&r2, "x-amz-sdk-checksum-algorithm"), None);
    let moto = adapted(Provider::Moto, &streamed).unwrap();
    assert!(matches!(
        moto.body,
        s3_ops::Body::External {
            trailing_checksum: Some(ChecksumAlgorithm::Crc32),
            ..
        }
    ));
    assert_eq!(header(&moto, "x-amz-sdk-checksum-algorithm"), Some("CRC32"));
}

#[test]
fn create_multipart_upload_and_copy_name_an_accepted_algorithm_or_none() {
    let create = CreateMultipartUpload::new(bucket(), key())
        .checksum_algorithm(ChecksumAlgorithm::Crc32c)
        .checksum_type(ChecksumType::Composite);
    let moto = adapted(Provider::Moto, &create).unwrap();
    assert_eq!(header(&moto, "x-amz-checksum-algorithm"), Some("CRC32"));
    assert_eq!(header(&moto, "x-amz-checksum-type"), Some("COMPOSITE"));
    let b2 = adapted(Provider::BackblazeB2, &create).unwrap();
    assert_eq!(header(&b2, "x-amz-checksum-algorithm"), None);
    assert_eq!(header(&b2, "x-amz-checksum-type"), None);
    let generic = adapted(Provider::Generic, &create).unwrap();
    assert_eq!(header(&generic, "x-amz-checksum-algorithm"), Some("CRC32C"));

    let source = CopySource::new(bucket(), ObjectKey::new("src").unwrap());
    let copy = CopyObject::new(source, bucket(), key()).checksum_algorithm(ChecksumAlgorithm::Sha1);
    let wasabi = adapted(Provider::Wasabi, &copy).unwrap();
    assert_eq!(header(&wasabi, "x-amz-checksum-algorithm"), None);
}

#[test]
fn listings_ask_for_url_encoding_only_where_it_is_honoured() {
    let list = ListObjectsV2::new(bucket()).prefix("a b");
    let generic = adapted(Provider::Generic, &list).unwrap();
    assert_eq!(
        generic.request.uri().query(),
        Some("encoding-type=url&list-type=2&prefix=a%20b")
    );
    let s3s = adapted(Provider::S3sFs, &list).unwrap();
    assert_eq!(s3s.request.uri().query(), Some("list-type=2&prefix=a%20b"));
    assert_eq!(s3s.request.uri().path(), "/bucket");
    // GCS documents `encoding-type` among the XML API's parameters.
    let gcs = adapted(Provider::GoogleCloudStorage, &list).unwrap();
    assert!(
        gcs.request
            .uri()
            .query()
            .unwrap()
            .contains("encoding-type=url")
    );
}

#[test]
fn conditional_writes_the_store_ignores_are_refused() {
    let create_only = PutObject::new(bucket(), key()).if_none_match_any();
    let sent = adapted(Provider::Aws, &create_only).unwrap();
    assert_eq!(header(&sent, "if-none-match"), Some("*"));
    let refused = unsupported(adapted(Provider::BackblazeB2, &create_only).unwrap_err());
    assert_eq!(refused.provider, Provider::BackblazeB2);
    assert_eq!(
        refused.feature,
        Feature::ConditionalWrite {
            header: "If-None-Match",
            copy: false
        }
    );
    assert!(adapted(Provider::Minio, &create_only).is_ok());

    let overwrite_only = PutObject::new(bucket(), key()).if_match("\"etag\"");
    assert!(adapted(Provider::S3sFs, &overwrite_only).is_ok());
    assert!(matches!(
        unsupported(adapted(Provider::GoogleCloudStorage, &overwrite_only).unwrap_err()).feature,
        Feature::ConditionalWrite {
            header: "If-Match",
            ..
        }
    ));

    // s3s-fs evaluates PutObject's condition but not CopyObject's destination one.
    let source = CopySource::new(bucket(), ObjectKey::new("src").unwrap());
    let copy = CopyObject::new(source, bucket(), key()).if_none_match_any();
    assert!(matches!(
        unsupported(adapted(Provider::S3sFs, &copy).unwrap_err()).feature,
        Feature::ConditionalWrite { copy: true, .. }
    ));
    assert!(adapted(Provider::Aws, &copy).is_ok());
    // R2 documents PutObject's and CompleteMultipartUpload's conditions, and CopyObject's
    // destination ones under other header names.
    assert!(adapted(Provider::CloudflareR2, &create_only).is_ok());
    assert!(adapted(Provider::CloudflareR2, &overwrite_only).is_ok());
    assert!(matches!(
        unsupported(adapted(Provider::CloudflareR2, &copy).unwrap_err()).feature,
        Feature::ConditionalWrite { copy: true, .. }
    ));

    let part = s3_ops::CompletedPart::new(1, s3_ops::ETag::parse("\"etag\"").unwrap());
    let complete =
        CompleteMultipartUpload::new(bucket(), key(), "upload", vec![part]).if_none_match_any();
    assert!(adapted(Provider::Moto, &complete).is_err());
    assert!(adapted(Provider::Aws, &complete).is_ok());

    // Reads keep their conditions everywhere.
    let get = s3_ops::GetObject::new(bucket(), key()).if_none_match("\"etag\"");
    assert!(adapted(Provider::BackblazeB2, &get).is_ok());
}

#[test]
fn presign_expiry_and_aws_chunked_refusals_say_what_and_why() {
    let mut quirks = Provider::CloudflareR2.quirks();
    assert!(
        quirks
            .check_presign_expiry(Duration::from_secs(7 * 24 * 3600))
            .is_ok()
    );
    quirks.max_presign_expiry = Duration::from_secs(3600);
    let error = quirks
        .check_presign_expiry(Duration::from_secs(7200))
        .unwrap_err();
    assert_eq!(
        unsupported(error.clone()).feature,
        Feature::PresignExpiry {
            requested: Duration::from_secs(7200),
            maximum: Duration::from_secs(3600)
        }
    );
    assert!(error.to_string().contains("Cloudflare R2"), "{error}");
    assert!(Provider::Generic.quirks().check_aws_chunked().is_ok());
    let error = Provider::DigitalOceanSpaces
        .quirks()
        .check_aws_chunked()
        .unwrap_err();
    assert!(error.to_string().contains("aws-chunked"), "{error}");
}

#[test]
fn a_corrected_profile_is_honoured() {
    // A store version that evaluates If-None-Match although the docs do not say so.
    let mut quirks: ProviderQuirks = Provider::CephRgw.quirks();
    quirks.conditional_writes.put_if_none_match = true;
    let mut request = PutObject::new(bucket(), key())
        .if_none_match_any()
        .request(&endpoint())
        .unwrap();
    assert!(
        Provider::CephRgw
            .quirks()
            .adapt_request(&mut request)
            .is_err()
    );
    assert!(quirks.adapt_request(&mut request).is_ok());
}

#[test]
fn every_provider_has_a_short_name_that_reads_back() {
    for provider in Provider::ALL {
        assert_eq!(Provider::from_id(provider.id()), Some(provider));
        assert_eq!(
            Provider::from_id(&provider.id().to_ascii_uppercase()),
            Some(provider)
        );
    }
    assert_eq!(Provider::from_id("garage"), Some(Provider::Garage));
    assert_eq!(Provider::from_id("nonesuch"), None);
}

/// Garage's profile, written from its compatibility table and source: path-style, no signed
/// trailers (a one-shot stream goes in signed chunks without one), conditional writes
/// refused before sending, checksums as S3 takes them.
#[test]
fn garage_takes_checksums_and_unsigned_trailers_but_no_signed_ones_or_write_conditions() {
    let garage = Provider::Garage.quirks();
    assert_eq!(garage.addressing, s3_ops::AddressingStyle::Path);
    assert!(!garage.signed_trailers && garage.trailing_checksums && garage.aws_chunked);
    assert_eq!(garage.conditional_writes, ConditionalWrites::NONE);
    assert_eq!(garage.checksums.len(), 5);
    assert_eq!(
        garage.multipart_checksum(Some(ChecksumAlgorithm::Crc32), transfer_type),
        Some(ChecksumAlgorithm::Crc32)
    );
    assert!(garage.accepts_multipart(ChecksumAlgorithm::Sha256, ChecksumType::Composite));
    assert!(!garage.accepts_multipart(ChecksumAlgorithm::Sha256, ChecksumType::FullObject));
    let create_only = PutObject::new(bucket(), key()).if_none_match_any();
    assert!(matches!(
        adapted(Provider::Garage, &create_only),
        Err(Error::InvalidInput(InvalidInput::Unsupported(
            Unsupported {
                feature: Feature::ConditionalWrite { .. },
                ..
            }
        )))
    ));
    // Never detected from a host: it runs under any name.
    assert_eq!(Provider::from_host("garage.example.com"), Provider::Generic);
}

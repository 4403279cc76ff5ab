//! Multi-Region Access Points: ARN buckets addressed at their global host, the SigV4a region
//! set their requests carry, the operations that cannot take them, and presigning (SigV4a
//! with the `sigv4a` feature, a typed error without it).

mod common;

use std::time::Duration;

use common::*;
use s3_ops::ops::copy_object::CopyObject;
use s3_ops::ops::copy_source::CopySource;
use s3_ops::ops::create_bucket::CreateBucket;
use s3_ops::ops::delete_object::DeleteObject;
use s3_ops::ops::get_object::GetObject;
use s3_ops::ops::list_buckets::ListBuckets;
use s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_ops::ops::put_object::PutObject;
use s3_ops::ops::upload_part_copy::UploadPartCopy;
use s3_ops::presign::presign;
use s3_ops::{BucketName, Endpoint, Error, InvalidInput, Operation};
use s3_sigv4::{Credentials, PayloadHash, Signer, SigningTime};

const MRAP_ARN: &str = "arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap";
const MRAP_HOST: &str = "mfzwi23gnjvgw.mrap.accesspoint.s3-global.amazonaws.com";
const ACCESS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

fn mrap() -> BucketName {
    BucketName::new(MRAP_ARN).unwrap()
}

fn time() -> SigningTime {
    SigningTime::from_parts(2013, 5, 24, 0, 0, 0).unwrap()
}

fn credentials() -> Credentials {
    Credentials::new(ACCESS_KEY, SECRET_KEY, None)
}

#[test]
fn a_get_object_goes_to_the_global_host_with_region_set_star() {
    let request = GetObject::new(mrap(), key("photos/2024/a b.jpg"))
        .request(&aws())
        .unwrap();
    assert_eq!(
        request.request.uri(),
        &*format!("https://{MRAP_HOST}/photos/2024/a%20b.jpg")
    );
    assert_eq!(request.region_set(), Some("*"));
    // The endpoint's region does not matter: the host is global.
    let from_eu = GetObject::new(mrap(), key("k"))
        .request(&Endpoint::aws("eu-west-1").unwrap())
        .unwrap();
    assert_eq!(from_eu.request.uri(), &*format!("https://{MRAP_HOST}/k"));
    assert_eq!(from_eu.region_set(), Some("*"));
}

#[test]
fn only_requests_to_a_multi_region_access_point_have_a_region_set() {
    let requests = [
        PutObject::new(mrap(), key("k")).request(&aws()).unwrap(),
        DeleteObject::new(mrap(), key("k")).request(&aws()).unwrap(),
        ListObjectsV2::new(mrap()).request(&aws()).unwrap(),
        // A copy *into* the access point, from a bucket.
        CopyObject::new(CopySource::new(bucket(), key("src")), mrap(), key("dst"))
            .request(&aws())
            .unwrap(),
    ];
    for request in &requests {
        assert_eq!(request.region_set(), Some("*"), "{request:?}");
        assert_eq!(request.request.uri().host(), Some(MRAP_HOST), "{request:?}");
    }
    let regional = [
        GetObject::new(bucket(), key("k")).request(&aws()).unwrap(),
        GetObject::new(bucket(), key("k"))
            .request(&minio())
            .unwrap(),
        ListBuckets::new().request(&aws()).unwrap(),
        CopyObject::new(CopySource::new(bucket(), key("src")), bucket(), key("dst"))
            .request(&aws())
            .unwrap(),
    ];
    for request in &regional {
        assert_eq!(request.region_set(), None, "{request:?}");
    }
}

/// Dual-stack, FIPS, path-style and the other refusals are AWS's official cases
/// (tests/endpoint_rules.rs); a custom endpoint is refused where the rules would go around it.
#[test]
fn custom_endpoints_refuse_multi_region_access_points() {
    for endpoint in [
        minio(),
        Endpoint::custom("https://s3.example.com", "us-east-1").unwrap(),
    ] {
        let error = GetObject::new(mrap(), key("k"))
            .request(&endpoint)
            .unwrap_err();
        assert!(
            matches!(
                &error,
                Error::InvalidInput(InvalidInput::Endpoint { reason })
                    if reason.contains("Multi-Region Access Points")
            ),
            "{endpoint:?}: {error:?}"
        );
    }
}

#[test]
fn a_multi_region_access_point_is_no_copy_source_and_no_bucket_to_create() {
    let source = CopySource::new(mrap(), key("src"));
    let errors = [
        CopyObject::new(source.clone(), bucket(), key("dst"))
            .request(&aws())
            .unwrap_err(),
        CopyObject::new(source.clone(), mrap(), key("dst"))
            .request(&aws())
            .unwrap_err(),
        UploadPartCopy::new(source, bucket(), key("dst"), "upload-1", 1)
            .request(&aws())
            .unwrap_err(),
    ];
    for error in errors {
        match error {
            Error::InvalidInput(InvalidInput::BucketName { name, reason }) => {
                assert_eq!(name, MRAP_ARN);
                assert!(reason.contains("copy source"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }
    match CreateBucket::new(mrap()).request(&aws()).unwrap_err() {
        Error::InvalidInput(InvalidInput::BucketName { name, reason }) => {
            assert_eq!(name, MRAP_ARN);
            assert!(reason.contains("CreateBucket"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn requests_without_a_region_set_are_signed_with_sigv4_for_the_endpoint_region() {
    let endpoint = Endpoint::aws("eu-west-1").unwrap();
    let request = GetObject::new(bucket(), key("k"))
        .request(&endpoint)
        .unwrap();
    let params = request
        .signing()
        .params(&endpoint, time(), PayloadHash::Empty)
        .unwrap();
    assert_eq!(params.region(), "eu-west-1");
    assert_eq!(params.algorithm(), s3_sigv4::SigningAlgorithm::V4);
    assert_eq!(params.service(), "s3");
}

#[cfg(feature = "sigv4a")]
mod sigv4a {
    use super::*;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::{DerSignature, VerifyingKey};
    use sha2::{Digest, Sha256};

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn a_region_set_is_signed_with_sigv4a() {
        let endpoint = aws();
        let request = GetObject::new(mrap(), key("k")).request(&endpoint).unwrap();
        let params = request
            .signing()
            .params(&endpoint, time(), PayloadHash::Empty)
            .unwrap();
        assert_eq!(params.algorithm(), s3_sigv4::SigningAlgorithm::V4a);
        assert_eq!(params.region(), "*");
        assert_eq!(params.service(), "s3");
    }

    /// The URL and the signature, checked against a canonical request and string to sign
    /// written out here from the SigV4a rules (no region in the scope, `X-Amz-Region-Set`
    /// signed in the query), not taken from the signer.
    #[test]
    fn a_presigned_get_is_signed_with_sigv4a_for_every_region() {
        let credentials = credentials();
        let get = GetObject::new(mrap(), key("test.txt"));
        let presigned = presign(
            &get,
            &aws(),
            &Signer::new(),
            &credentials,
            time(),
            Duration::from_secs(86_400),
        )
        .unwrap();
        let query = "X-Amz-Algorithm=AWS4-ECDSA-P256-SHA256\
                     &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fs3%2Faws4_request\
                     &X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-Region-Set=%2A\
                     &X-Amz-SignedHeaders=host";
        let (unsigned, signature) = presigned.url().split_once("&X-Amz-Signature=").unwrap();
        assert_eq!(unsigned, format!("https://{MRAP_HOST}/test.txt?{query}"));
        assert!(presigned.headers().is_empty());

        let canonical_request =
            format!("GET\n/test.txt\n{query}\nhost:{MRAP_HOST}\n\nhost\nUNSIGNED-PAYLOAD");
        let string_to_sign = format!(
            "AWS4-ECDSA-P256-SHA256\n20130524T000000Z\n20130524/s3/aws4_request\n{}",
            hex(&Sha256::digest(canonical_request.as_bytes()))
        );
        let key = VerifyingKey::from_sec1_bytes(&credentials.sigv4a_public_key().unwrap()).unwrap();
        let signature = DerSignature::from_bytes(&unhex(signature)).unwrap();
        key.verify(string_to_sign.as_bytes(), &signature)
            .expect("the URL's signature verifies with the credentials' SigV4a key");
    }
}

#[cfg(not(feature = "sigv4a"))]
#[test]
fn without_the_sigv4a_feature_a_multi_region_access_point_is_a_typed_error() {
    let get = GetObject::new(mrap(), key("test.txt"));
    let error = presign(
        &get,
        &aws(),
        &Signer::new(),
        &credentials(),
        time(),
        Duration::from_secs(3600),
    )
    .unwrap_err();
    assert_eq!(error, Error::SigV4aDisabled);
    assert!(
        error
            .to_string()
            .contains("Multi-Region Access Points need SigV4a: enable the `sigv4a` feature"),
        "{error}"
    );
    assert_eq!(error.retry_class(), s3_ops::RetryClass::NotRetryable);
    let request = GetObject::new(mrap(), key("k")).request(&aws()).unwrap();
    assert!(matches!(
        request.signing().params(&aws(), time(), PayloadHash::Empty),
        Err(Error::SigV4aDisabled)
    ));
    // Presigning a regional bucket is unaffected.
    assert!(
        presign(
            &GetObject::new(bucket(), key("test.txt")),
            &aws(),
            &Signer::new(),
            &credentials(),
            time(),
            Duration::from_secs(3600),
        )
        .is_ok()
    );
}

//! S3 error decoding and retry classification, as a table.

mod common;

use common::*;
use s3_ops::ops::get_object::GetObject;
use s3_ops::ops::head_object::HeadObject;
use s3_ops::{Error, Operation, RetryClass, S3Error, TransportFailure};

fn error_body(code: &str) -> String {
    format!("<Error><Code>{code}</Code><Message>m</Message><RequestId>R</RequestId></Error>")
}

fn classify(status: u16, headers: &[(&str, &str)], body: &str) -> RetryClass {
    GetObject::new(bucket(), key("k"))
        .response(response(status, headers, body.to_owned()))
        .unwrap_err()
        .retry_class()
}

#[test]
fn throttling() {
    for code in [
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "RequestLimitExceeded",
    ] {
        assert_eq!(
            classify(400, &[], &error_body(code)),
            RetryClass::Throttling,
            "{code}"
        );
    }
    assert_eq!(
        classify(503, &[], &error_body("SlowDown")),
        RetryClass::Throttling
    );
    assert_eq!(classify(503, &[], ""), RetryClass::Throttling);
    assert_eq!(
        classify(503, &[], "<html>Service Unavailable</html>"),
        RetryClass::Throttling
    );
    assert_eq!(classify(429, &[], ""), RetryClass::Throttling);
}

#[test]
fn transient() {
    for status in [500, 502, 504] {
        assert_eq!(classify(status, &[], ""), RetryClass::Transient, "{status}");
    }
    assert_eq!(
        classify(500, &[], &error_body("InternalError")),
        RetryClass::Transient
    );
    assert_eq!(
        classify(400, &[], &error_body("RequestTimeout")),
        RetryClass::Transient
    );
    for failure in [
        TransportFailure::ConnectionDropped,
        TransportFailure::Connect,
        TransportFailure::Timeout,
    ] {
        assert_eq!(
            RetryClass::for_transport_failure(failure),
            RetryClass::Transient
        );
    }
    assert_eq!(
        RetryClass::for_transport_failure(TransportFailure::Tls),
        RetryClass::NotRetryable
    );
}

#[test]
fn expired_temporary_credentials_ask_for_new_ones() {
    for code in ["ExpiredToken", "TokenRefreshRequired"] {
        assert_eq!(
            classify(400, &[], &error_body(code)),
            RetryClass::RefreshCredentials,
            "{code}"
        );
    }
    // A signature refused for other reasons is not about expiry.
    for code in [
        "InvalidToken",
        "SignatureDoesNotMatch",
        "InvalidAccessKeyId",
    ] {
        assert_eq!(
            classify(403, &[], &error_body(code)),
            RetryClass::NotRetryable,
            "{code}"
        );
    }
}

#[test]
fn redirect_to_region() {
    let moved = "<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access \
                 must be addressed using the specified endpoint.</Message>\
                 <Endpoint>examplebucket.s3.eu-west-1.amazonaws.com</Endpoint><Bucket>examplebucket</Bucket>\
                 <RequestId>R</RequestId><HostId>H</HostId></Error>";
    assert_eq!(
        classify(301, &[("x-amz-bucket-region", "eu-west-1")], moved),
        RetryClass::RedirectRegion {
            region: "eu-west-1".into()
        }
    );
    // Without any region hint there is nothing to redirect to.
    assert_eq!(classify(301, &[], moved), RetryClass::NotRetryable);

    // A request signed for the wrong region: the right one is in the body.
    let malformed = "<Error><Code>AuthorizationHeaderMalformed</Code><Message>The authorization header \
                     is malformed; the region 'us-east-1' is wrong; expecting 'eu-central-1'</Message>\
                     <Region>eu-central-1</Region><RequestId>R</RequestId><HostId>H</HostId></Error>";
    let error = GetObject::new(bucket(), key("k"))
        .response(response(400, &[], malformed.to_owned()))
        .unwrap_err();
    assert_eq!(
        error.retry_class(),
        RetryClass::RedirectRegion {
            region: "eu-central-1".into()
        }
    );
    assert_eq!(
        error.service_error().unwrap().region.as_deref(),
        Some("eu-central-1")
    );
    // The header wins over the body.
    assert_eq!(
        classify(400, &[("x-amz-bucket-region", "eu-west-3")], malformed),
        RetryClass::RedirectRegion {
            region: "eu-west-3".into()
        }
    );
    // HEAD gets no body: the header alone carries the region.
    let head = HeadObject::new(bucket(), key("k"))
        .response(response(301, &[("x-amz-bucket-region", "ap-south-1")], ""))
        .unwrap_err();
    assert_eq!(
        head.retry_class(),
        RetryClass::RedirectRegion {
            region: "ap-south-1".into()
        }
    );
}

#[test]
fn not_retryable() {
    for (status, code) in [
        (404, "NoSuchKey"),
        (403, "AccessDenied"),
        (403, "SignatureDoesNotMatch"),
        (400, "InvalidArgument"),
        (409, "BucketAlreadyExists"),
        (412, "PreconditionFailed"),
        (416, "InvalidRange"),
        (400, "AuthorizationHeaderMalformed"),
    ] {
        assert_eq!(
            classify(status, &[], &error_body(code)),
            RetryClass::NotRetryable,
            "{status} {code}"
        );
    }
    let local = GetObject::new(bucket(), key("k"))
        .part_number(0)
        .request(&aws())
        .unwrap_err();
    assert_eq!(local.retry_class(), RetryClass::NotRetryable);
}

#[test]
fn error_fields_and_display() {
    let body = "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message>\
                <Key>photos/a.jpg</Key><BucketName>examplebucket</BucketName>\
                <Resource>/examplebucket/photos/a.jpg</Resource>\
                <RequestId>4442587FB7D0A2F9</RequestId><HostId>H2</HostId></Error>";
    let error = GetObject::new(bucket(), key("photos/a.jpg"))
        .response(response(
            404,
            &[("x-amz-request-id", "HDR")],
            body.to_owned(),
        ))
        .unwrap_err();
    let Error::Service(service) = &error else {
        panic!("{error:?}")
    };
    assert_eq!(service.status, 404);
    assert_eq!(service.code, "NoSuchKey");
    assert_eq!(
        service.message.as_deref(),
        Some("The specified key does not exist.")
    );
    // The document's id is kept; the header only fills in what the body lacks.
    assert_eq!(service.request_id.as_deref(), Some("4442587FB7D0A2F9"));
    assert_eq!(service.host_id.as_deref(), Some("H2"));
    assert_eq!(
        service.resource.as_deref(),
        Some("/examplebucket/photos/a.jpg")
    );
    assert_eq!(service.extra("Key"), Some("photos/a.jpg"));
    assert_eq!(service.extra("BucketName"), Some("examplebucket"));
    assert!(service.is_not_found());
    assert_eq!(
        error.to_string(),
        "S3 error NoSuchKey (HTTP 404): The specified key does not exist. (request id 4442587FB7D0A2F9)"
    );
}

#[test]
fn recorded_java_sdk_error_documents() {
    // aws-sdk-java-v2's error fixtures, including malformed ones: every one decodes to a
    // service error (falling back to the status for bodies that are not an <Error>).
    for (file, code) in [
        ("ErrorResponseBasicTags.xml", "TestCode"),
        ("ErrorResponseWithAdditionalDetails.xml", "TestCode"),
        ("ErrorResponseChildTags.xml", "TestCode"),
        ("ErrorResponseChildTagError.xml", "TestCode"),
        // Not an <Error> document: the code comes from the status.
        ("ErrorResponseNoErrorTag.xml", "NotFound"),
        ("ErrorResponseRootElementAsFoo.xml", "NotFound"),
        ("ErrorResponseXMLNotProperFormat.xml", "NotFound"),
        ("ErrorResponseRepeatedXml.xml", "NotFound"),
    ] {
        let body = testdata(&format!("aws-sdk-java-v2/errorResponse/{file}"));
        let error = GetObject::new(bucket(), key("k"))
            .response(response(404, &[("x-amz-request-id", "HDR")], body))
            .unwrap_err();
        let service = error
            .service_error()
            .unwrap_or_else(|| panic!("{file}: {error:?}"));
        assert_eq!(service.code, code, "{file}");
        let request_id = if code == "TestCode" {
            "TestRequestId"
        } else {
            "HDR"
        };
        assert_eq!(service.request_id.as_deref(), Some(request_id), "{file}");
    }
    let details = GetObject::new(bucket(), key("k"))
        .response(response(
            400,
            &[],
            testdata("aws-sdk-java-v2/errorResponse/ErrorResponseWithAdditionalDetails.xml"),
        ))
        .unwrap_err();
    let service = details.service_error().unwrap();
    assert_eq!(
        service.extra("AdditionalDetails4"),
        Some("AdditionalDetails4")
    );
    assert_eq!(service.host_id.as_deref(), Some("TestExtendedRequestId"));
}

#[test]
fn smithy_head_object_empty_body() {
    // smithy-rs protocol test HeadObjectEmptyBody: 404, empty body, ids in headers.
    let error = HeadObject::new(bucket(), key("k"))
        .response(response(
            404,
            &[
                ("x-amz-request-id", "GRZ6BZ468DF52F2E"),
                (
                    "x-amz-id-2",
                    "UTniwu6QmCIjVeuK2ZfeWBOnu7SqMQOS3Vac6B/K4H2ZCawYUl+nDbhGTImuyhZ5DFiojR3Kcz4=",
                ),
                ("content-type", "application/xml"),
            ],
            "",
        ))
        .unwrap_err();
    let service: &S3Error = error.service_error().unwrap();
    assert_eq!(service.code, "NotFound");
    assert_eq!(service.request_id.as_deref(), Some("GRZ6BZ468DF52F2E"));
    assert_eq!(
        service.host_id.as_deref(),
        Some("UTniwu6QmCIjVeuK2ZfeWBOnu7SqMQOS3Vac6B/K4H2ZCawYUl+nDbhGTImuyhZ5DFiojR3Kcz4=")
    );
}

#[test]
fn idempotency_is_data() {
    use s3_ops::ops::{
        abort_multipart_upload::AbortMultipartUpload, copy_object::CopyObject,
        copy_source::CopySource, create_multipart_upload::CreateMultipartUpload,
        delete_objects::DeleteObjects, list_objects_v2::ListObjectsV2, put_object::PutObject,
        upload_part::UploadPart,
    };
    // Starting an upload twice leaves an empty second upload, which costs nothing lasting
    // (it is swept); every operation here is retried after a lost answer.
    assert!(CreateMultipartUpload::new(bucket(), key("k")).is_idempotent());
    assert!(PutObject::new(bucket(), key("k")).is_idempotent());
    assert!(UploadPart::new(bucket(), key("k"), "u", 1).is_idempotent());
    assert!(DeleteObjects::new(bucket(), [key("k")]).is_idempotent());
    assert!(AbortMultipartUpload::new(bucket(), key("k"), "u").is_idempotent());
    assert!(
        CopyObject::new(CopySource::new(bucket(), key("a")), bucket(), key("b")).is_idempotent()
    );
    assert!(ListObjectsV2::new(bucket()).is_idempotent());
    assert_eq!(
        CreateMultipartUpload::new(bucket(), key("k")).name(),
        "CreateMultipartUpload"
    );
}

#[test]
fn clock_skew_is_reported_with_the_server_time() {
    let body = "<Error><Code>RequestTimeTooSkewed</Code><Message>The difference between the request \
                time and the current time is too large.</Message><RequestTime>20130524T000000Z</RequestTime>\
                <ServerTime>2026-11-29T21:00:00Z</ServerTime><MaxAllowedSkewMilliseconds>900000\
                </MaxAllowedSkewMilliseconds></Error>";
    let error = GetObject::new(bucket(), key("k"))
        .response(response(
            403,
            &[("date", "Sun, 29 Nov 2026 21:00:00 GMT")],
            body.to_owned(),
        ))
        .unwrap_err();
    let service = error.service_error().unwrap();
    assert!(service.is_clock_skew());
    assert_eq!(
        service.server_time,
        Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_986_000))
    );
    assert_eq!(service.extra("ServerTime"), Some("2026-11-29T21:00:00Z"));
    assert!(!service.is_expired_credentials());
    assert_eq!(error.retry_class(), RetryClass::NotRetryable);

    let expired = GetObject::new(bucket(), key("k"))
        .response(response(400, &[], error_body("ExpiredToken")))
        .unwrap_err();
    assert!(expired.service_error().unwrap().is_expired_credentials());
    assert!(!expired.service_error().unwrap().is_clock_skew());
}

//! No formatting of a public type shows a secret: every type that can hold one is built
//! with known unique secrets, formatted with `{:?}`, `{:#?}` and `{}` (where implemented)
//! and through the `tracing` and `log` output of a client run, and each output is searched
//! for every form a secret can take: raw, percent-encoded, base64 (standard, unpadded,
//! URL-safe), hex (lower, upper, space-separated bytes as S3 echoes them), the Rust `Debug`
//! form of key bytes, the derived SigV4 signing keys, and every 10-character window of each
//! of those (a partially shown secret is a leak too).
//!
//! It cannot pass by searching for the wrong thing: each secret form is first found where it
//! must be (the bytes the loopback server received, the presigned URL, the form fields), so
//! the forms are the ones that travel; the `tracing` and `log` captures are checked with a
//! canary event.
//!
//! Types covered (from `grep` for `Debug` impls and `secret`/`token`/`key` fields across
//! the crates):
//!
//! * s3-sigv4: `Credentials`, `Signer` (its key caches hold the secret and derived keys),
//!   `Signature`, `SigningReport` (header signing and presigning, with an SSE-C header
//!   signed), `PresignedRequest` (signature, credential and token in the URL; SSE-C key in
//!   its headers), `PostPolicyForm`, `ChunkEncoder` (holds the signing key), `ChunkHeader`,
//!   `SigningParams`, `RawRequest` and an `http::Request` after `Signer::sign_headers`
//!   (expected: the `authorization` header holds a signature, never the secret key; the
//!   `x-amz-security-token`, `authorization` and SSE-C key headers are marked sensitive, so
//!   `http`'s `Debug` shows `Sensitive`), `s3_sigv4::Error`.
//! * s3-xml: `StsCredentials`, `AssumeRoleResult`.
//! * s3-ops: `SseCustomerKey` (and its parse error), `ServerSideEncryption::Customer`,
//!   `ObjectAttributes`, the operations that take an SSE-C key (GetObject, HeadObject,
//!   PutObject, CreateMultipartUpload, UploadPart, CompleteMultipartUpload, ListParts,
//!   CopyObject / UploadPartCopy with `CopySource` keys) and their `OperationRequest`s,
//!   `presign` output, `S3Error` / `s3_ops::Error` of a `SignatureDoesNotMatch` response that
//!   echoes the canonical request (as S3 does, with the token and SSE-C key in it).
//! * s3-wire-tokio: `ClientBuilder`, `Client`, the request-hook `AttemptRecord`s of every call,
//!   `Error` (403 with a request id, SSE-C GET and
//!   PUT, `SignatureDoesNotMatch` echo, connection refused with a transport source,
//!   credentials failure with a source), `GetObjectResponse` / `ObjectBody` of an SSE-C GET,
//!   the credentials module (`MapEnv`, `EnvironmentProvider`, `ProfileProvider`,
//!   `DefaultChain` after loading, `ProfileSet`, `Section`/`Profile`, `SharedConfig`,
//!   `credentials::Error`), a client whose explicit proxy (password in its URL, or set
//!   apart) refuses the tunnel with 407 (its builder, the client, the error), and the
//!   `tracing` / `log` output of all the client calls (the
//!   client emits none of its own; its dependencies' events are captured).

// Only the capture writer of the shared support (the rest is other suites' servers).
#[path = "support/capture.rs"]
mod capture;

use std::io::Write as _;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use s3_ops::ops::complete_multipart_upload::CompleteMultipartUpload;
use s3_ops::ops::copy_object::CopyObject;
use s3_ops::ops::copy_source::CopySource;
use s3_ops::ops::create_multipart_upload::CreateMultipartUpload;
use s3_ops::ops::get_object::GetObject;
use s3_ops::ops::head_object::HeadObject;
use s3_ops::ops::list_parts::ListParts;
use s3_ops::ops::put_object::PutObject;
use s3_ops::ops::upload_part::UploadPart;
use s3_ops::ops::upload_part_copy::UploadPartCopy;
use s3_ops::{
    BucketName, Endpoint, ObjectAttributes, ObjectKey, Operation, ServerSideEncryption,
    SseCustomerKey,
};
use s3_sigv4::{
    ChunkedLayout, Credentials, PayloadHash, PostPolicy, RawRequest, Signer, SigningParams,
    SigningTime,
};
use s3_wire_tokio::Client;
use s3_wire_tokio::credentials::{
    DefaultChain, EnvironmentProvider, MapEnv, ProfileProvider, ProfileSet, SharedConfig,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use capture::Capture;

const ACCESS_KEY: &str = "AKIAREDACTIONTEST01";
/// Unique, and with `/` and `+` so that its percent-encoded form differs.
const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzSECRETzKEYq9";
/// With `/`, `+` and `=` so that its percent-encoded form differs.
const SESSION_TOKEN: &str = "IQoJb3JpZ2luX2VjEAcaCXVz/TOKENzz+Zm9vYmFyYmF6cXV4=";
/// An SSE-KMS encryption context's JSON (it travels base64-encoded).
const KMS_CONTEXT_JSON: &str = r#"{"case":"KMSCONTEXTREDACTIONCASE7"}"#;
/// The password of an explicit proxy (with characters a URL must percent-encode).
const PROXY_PASSWORD: &str = "Pr0xyPa55@REDACTION:case/9";

fn kms_context() -> ServerSideEncryption {
    ServerSideEncryption::Kms {
        key_id: Some("alias/redaction".to_owned()),
        context: Some(s3_sigv4::base64_encode(KMS_CONTEXT_JSON.as_bytes())),
        bucket_key: None,
    }
}

/// The SSE-C key: 32 distinct bytes.
fn sse_key_bytes() -> [u8; 32] {
    std::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(11) ^ 0x5C)
}

fn sse_key() -> SseCustomerKey {
    SseCustomerKey::new(sse_key_bytes())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn spaced_hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn base64_url(standard: &str) -> String {
    standard
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

/// The SigV4 signing key of `SECRET_KEY` for `date` (`YYYYMMDD`) and `region`.
fn signing_key(date: &str, region: &str) -> [u8; 32] {
    use hmac::{KeyInit, Mac};
    type HmacSha256 = hmac::Hmac<sha2::Sha256>;
    let mac = |key: &[u8], data: &str| -> [u8; 32] {
        let mut mac = HmacSha256::new_from_slice(key).unwrap();
        mac.update(data.as_bytes());
        mac.finalize().into_bytes().into()
    };
    let date_key = mac(format!("AWS4{SECRET_KEY}").as_bytes(), date);
    let region_key = mac(&date_key, region);
    let service_key = mac(&region_key, "s3");
    mac(&service_key, "aws4_request")
}

/// `YYYYMMDD` of the fixed signing time and of the days around now (the client signs
/// with the clock).
fn signing_dates() -> Vec<String> {
    let mut dates = vec!["20240131".to_owned()];
    let now = SystemTime::now();
    for offset in [-86_400i64, 0, 86_400] {
        let at = if offset < 0 {
            now - Duration::from_secs(86_400)
        } else {
            now + Duration::from_secs(offset as u64)
        };
        dates.push(SigningTime::from_system_time(at).unwrap().date().to_owned());
    }
    dates
}

/// Every form a secret may take, by name.
struct Secrets {
    forms: Vec<(&'static str, String)>,
}

impl Secrets {
    fn new() -> Self {
        let key = sse_key_bytes();
        let key_base64 = s3_sigv4::base64_encode(&key);
        let mut forms = vec![
            ("secret key", SECRET_KEY.to_owned()),
            (
                "secret key, percent-encoded",
                s3_sigv4::uri_encode(SECRET_KEY, true),
            ),
            ("secret key, spaced hex", spaced_hex(SECRET_KEY.as_bytes())),
            ("session token", SESSION_TOKEN.to_owned()),
            (
                "session token, percent-encoded",
                s3_sigv4::uri_encode(SESSION_TOKEN, true),
            ),
            (
                "session token, spaced hex",
                spaced_hex(SESSION_TOKEN.as_bytes()),
            ),
            ("SSE-C key, base64", key_base64.clone()),
            (
                "SSE-C key, base64 unpadded",
                key_base64.trim_end_matches('=').to_owned(),
            ),
            ("SSE-C key, base64url", base64_url(&key_base64)),
            (
                "SSE-C key, base64 percent-encoded",
                s3_sigv4::uri_encode(&key_base64, true),
            ),
            (
                "SSE-C key, base64 spaced hex",
                spaced_hex(key_base64.as_bytes()),
            ),
            ("SSE-C key, hex", hex(&key)),
            ("SSE-C key, HEX", hex(&key).to_uppercase()),
            ("SSE-C key, spaced hex", spaced_hex(&key)),
            ("SSE-C key, Debug bytes", format!("{key:?}")),
            ("KMS context, JSON", KMS_CONTEXT_JSON.to_owned()),
            ("proxy password", PROXY_PASSWORD.to_owned()),
            (
                "proxy password, percent-encoded",
                s3_sigv4::uri_encode(PROXY_PASSWORD, true),
            ),
            (
                "proxy credentials, Basic",
                s3_sigv4::base64_encode(format!("proxy-user:{PROXY_PASSWORD}").as_bytes()),
            ),
            (
                "KMS context, base64",
                s3_sigv4::base64_encode(KMS_CONTEXT_JSON.as_bytes()),
            ),
        ];
        for date in signing_dates() {
            for region in ["us-east-1", "eu-west-1"] {
                let derived = signing_key(&date, region);
                forms.push(("derived signing key, hex", hex(&derived)));
                forms.push(("derived signing key, Debug bytes", format!("{derived:?}")));
            }
        }
        Secrets { forms }
    }

    /// Panics if `text` holds any form of a secret, or 10 consecutive characters of one.
    fn assert_absent(&self, label: &str, text: &str) {
        for (name, form) in &self.forms {
            assert!(
                !text.contains(form.as_str()),
                "{label} shows the {name}:\n{text}"
            );
            let bytes = form.as_bytes();
            for window in bytes.windows(10.min(bytes.len())) {
                let window = String::from_utf8_lossy(window);
                assert!(
                    !text.contains(window.as_ref()),
                    "{label} shows part ({window:?}) of the {name}:\n{text}"
                );
            }
        }
    }

    /// Checks `{:?}` and `{:#?}` of `value`.
    fn debug(&self, label: &str, value: &dyn std::fmt::Debug) {
        self.assert_absent(label, &format!("{value:?}"));
        self.assert_absent(label, &format!("{value:#?}"));
    }

    /// Checks `{:?}`, `{:#?}` and `{}` of `value`.
    fn both(&self, label: &str, value: &(impl std::fmt::Debug + std::fmt::Display)) {
        self.debug(label, value);
        self.assert_absent(label, &value.to_string());
    }

    /// Checks an error and its whole `source()` chain.
    fn error(&self, label: &str, error: &(dyn std::error::Error + 'static)) {
        self.debug(label, &error);
        self.assert_absent(label, &error.to_string());
        let mut source = error.source();
        while let Some(cause) = source {
            self.debug(label, &cause);
            self.assert_absent(label, &cause.to_string());
            source = cause.source();
        }
    }

    fn form(&self, name: &str) -> &str {
        &self.forms.iter().find(|(n, _)| *n == name).unwrap().1
    }
}

fn credentials() -> Credentials {
    Credentials::new(ACCESS_KEY, SECRET_KEY, Some(SESSION_TOKEN.to_owned()))
}

fn time() -> SigningTime {
    SigningTime::from_parts(2024, 1, 31, 12, 0, 0).unwrap()
}

fn names() -> (BucketName, ObjectKey) {
    (
        BucketName::new("bucket").unwrap(),
        ObjectKey::new("sse-c").unwrap(),
    )
}

/// An `http::Request` with an SSE-C key header and a KMS encryption context, signed in its
/// headers.
fn signed_request(signer: &Signer) -> (http::Request<()>, s3_sigv4::SigningReport) {
    let (bucket, key) = names();
    let get = GetObject::new(bucket, key).sse_customer_key(sse_key());
    let mut request = get
        .request(&Endpoint::aws("us-east-1").unwrap())
        .unwrap()
        .request;
    let context = s3_sigv4::base64_encode(KMS_CONTEXT_JSON.as_bytes());
    let mut value = http::HeaderValue::from_str(&context).unwrap();
    value.set_sensitive(true);
    request
        .headers_mut()
        .insert("x-amz-server-side-encryption-context", value);
    let params = SigningParams::new("us-east-1", "s3", time(), PayloadHash::Empty);
    let report = signer
        .sign_headers_with_report(&mut request, &credentials(), &params)
        .unwrap();
    (request, report)
}

#[test]
fn sigv4_types_never_show_a_secret() {
    let secrets = Secrets::new();
    let signer = Signer::new();
    let credentials = credentials();
    secrets.debug("Credentials", &credentials);

    // Header signing: the authorization header holds a signature, never the secret key;
    // the header values that are secrets are marked sensitive.
    let (request, report) = signed_request(&signer);
    let headers = request.headers();
    let authorization = headers["authorization"].to_str().unwrap();
    assert!(authorization.contains("Signature="));
    assert_eq!(
        headers["x-amz-security-token"].to_str().unwrap(),
        SESSION_TOKEN
    );
    assert_eq!(
        headers["x-amz-server-side-encryption-customer-key"]
            .to_str()
            .unwrap(),
        secrets.form("SSE-C key, base64"),
        "the SSE-C key travels as standard base64"
    );
    for name in [
        "authorization",
        "x-amz-security-token",
        "x-amz-server-side-encryption-customer-key",
    ] {
        assert!(
            headers[name].is_sensitive(),
            "{name} is not marked sensitive"
        );
    }
    secrets.debug("signed http::Request", &request);
    secrets.debug("SigningReport (headers)", &report);
    secrets.debug("Signature", &report.signature);
    // The signer's caches hold the secret and the derived key.
    secrets.debug("Signer", &signer);

    // Presigning with the token in the URL and an SSE-C header to send along.
    let (bucket, key) = names();
    let get = GetObject::new(bucket, key).sse_customer_key(sse_key());
    let encoded = get.request(&Endpoint::aws("eu-west-1").unwrap()).unwrap();
    let params = SigningParams::new("eu-west-1", "s3", time(), PayloadHash::Unsigned);
    let (presigned, report) = signer
        .presign_with_report(
            &encoded.request,
            &credentials,
            &params,
            Duration::from_secs(600),
        )
        .unwrap();
    let signature = presigned.signature().to_hex();
    assert!(presigned.url().contains(&signature));
    assert!(
        presigned
            .url()
            .contains(secrets.form("session token, percent-encoded"))
    );
    let presign_secrets = Secrets {
        forms: [("presigned URL signature", signature)]
            .into_iter()
            .chain(Secrets::new().forms)
            .collect(),
    };
    presign_secrets.debug("PresignedRequest", &presigned);
    presign_secrets.debug("SigningReport (presign)", &report);
    secrets.debug("OperationRequest (GetObject, SSE-C)", &encoded);

    // POST policy: the form fields carry the token and signature by design; Debug not.
    let policy = PostPolicy::new(SigningTime::from_parts(2024, 2, 1, 0, 0, 0).unwrap())
        .exact("bucket", "bucket");
    let form = signer
        .sign_post_policy(
            &policy,
            &credentials,
            &SigningParams::new("us-east-1", "s3", time(), PayloadHash::Empty),
        )
        .unwrap();
    let fields = form.fields();
    assert!(fields.iter().any(|(_, value)| value == SESSION_TOKEN));
    let form_secrets = Secrets {
        forms: [("POST policy signature", form.signature.to_hex())]
            .into_iter()
            .chain(Secrets::new().forms)
            .collect(),
    };
    form_secrets.debug("PostPolicyForm", &form);

    // aws-chunked: the encoder holds the signing key.
    let mut raw = RawRequest {
        method: "PUT".into(),
        scheme: Some("https".into()),
        authority: Some("bucket.s3.amazonaws.com".into()),
        path: "/k".into(),
        query: None,
        headers: http::HeaderMap::new(),
    };
    let layout = ChunkedLayout::signed(3, 8192).unwrap();
    let params = SigningParams::new("us-east-1", "s3", time(), PayloadHash::Empty);
    secrets.debug("SigningParams", &params);
    let mut encoder = signer
        .sign_streaming(&mut raw, &credentials, &params, layout)
        .unwrap();
    secrets.debug("ChunkEncoder", &encoder);
    secrets.debug("RawRequest (signed)", &raw);
    let header = encoder.chunk_header(b"abc").unwrap();
    secrets.debug("ChunkHeader", &header);

    // Errors the signer reports about bad credentials.
    let bad = Credentials::new(ACCESS_KEY, SECRET_KEY, Some(format!("{SESSION_TOKEN}\n")));
    let error = signer
        .sign_headers(
            &mut http::Request::get("https://b.s3.amazonaws.com/k")
                .body(())
                .unwrap(),
            &bad,
            &params,
        )
        .unwrap_err();
    secrets.both("s3_sigv4::Error", &error);
}

#[test]
fn s3_xml_and_s3_ops_types_never_show_a_secret() {
    let secrets = Secrets::new();
    let sts = format!(
        "<AssumeRoleResponse><AssumeRoleResult><Credentials>\
         <AccessKeyId>{ACCESS_KEY}</AccessKeyId><SecretAccessKey>{SECRET_KEY}</SecretAccessKey>\
         <SessionToken>{SESSION_TOKEN}</SessionToken>\
         <Expiration>2024-01-31T13:00:00Z</Expiration></Credentials>\
         </AssumeRoleResult></AssumeRoleResponse>"
    );
    let result = s3_xml::decode_assume_role(sts.as_bytes(), &s3_xml::Limits::default()).unwrap();
    assert_eq!(result.credentials.secret_access_key, SECRET_KEY);
    secrets.debug("AssumeRoleResult", &result);
    secrets.debug("StsCredentials", &result.credentials);

    let key = sse_key();
    secrets.debug("SseCustomerKey", &key);
    secrets.debug(
        "ServerSideEncryption::Customer",
        &ServerSideEncryption::Customer(key.clone()),
    );
    let short = s3_sigv4::base64_encode(&sse_key_bytes()[..31]);
    let error = SseCustomerKey::from_base64(&short).unwrap_err();
    let short_secrets = Secrets {
        forms: [("31-byte key, base64", short)]
            .into_iter()
            .chain(Secrets::new().forms)
            .collect(),
    };
    short_secrets.both("SseCustomerKey::from_base64 error", &error);

    let endpoint = Endpoint::aws("us-east-1").unwrap();
    let (bucket, object) = names();
    let attributes =
        ObjectAttributes::new().server_side_encryption(ServerSideEncryption::Customer(key.clone()));
    secrets.debug("ObjectAttributes", &attributes);
    let source = CopySource::new(bucket.clone(), object.clone()).sse_customer_key(key.clone());
    secrets.debug("CopySource", &source);

    let get = GetObject::new(bucket.clone(), object.clone()).sse_customer_key(key.clone());
    let head = HeadObject::new(bucket.clone(), object.clone()).sse_customer_key(key.clone());
    let put = PutObject::new(bucket.clone(), object.clone())
        .server_side_encryption(ServerSideEncryption::Customer(key.clone()));
    let create =
        CreateMultipartUpload::new(bucket.clone(), object.clone()).attributes(attributes.clone());
    let part =
        UploadPart::new(bucket.clone(), object.clone(), "upload", 1).sse_customer_key(key.clone());
    let etag = s3_ops::ETag::parse("\"0123abcd\"").unwrap();
    let completed = vec![s3_ops::CompletedPart::new(1, etag)];
    let complete =
        CompleteMultipartUpload::new(bucket.clone(), object.clone(), "upload", completed)
            .sse_customer_key(key.clone());
    let parts =
        ListParts::new(bucket.clone(), object.clone(), "upload").sse_customer_key(key.clone());
    let copy = CopyObject::new(source.clone(), bucket.clone(), object.clone())
        .server_side_encryption(ServerSideEncryption::Customer(key.clone()));
    secrets.debug("ServerSideEncryption::Kms", &kms_context());
    let kms_put =
        PutObject::new(bucket.clone(), object.clone()).server_side_encryption(kms_context());
    let kms_request = kms_put.request(&endpoint).unwrap();
    assert_eq!(
        kms_request.request.headers()["x-amz-server-side-encryption-context"],
        secrets.form("KMS context, base64"),
        "the context travels as base64"
    );
    secrets.debug("PutObject (SSE-KMS context)", &kms_put);
    secrets.debug("OperationRequest (SSE-KMS context)", &kms_request);
    secrets.debug("http::Request (SSE-KMS context)", &kms_request.request);
    let refused = PutObject::new(bucket.clone(), object.clone())
        .server_side_encryption(ServerSideEncryption::Kms {
            key_id: None,
            context: Some(KMS_CONTEXT_JSON.to_owned()),
            bucket_key: None,
        })
        .request(&endpoint)
        .unwrap_err();
    assert!(refused.to_string().contains("base64"), "{refused}");
    secrets.both("s3_ops::Error (a context that is not base64)", &refused);
    let part_copy =
        UploadPartCopy::new(source, bucket, object, "upload", 1).sse_customer_key(key.clone());
    let requests: Vec<(
        &str,
        &dyn std::fmt::Debug,
        Result<s3_ops::OperationRequest, s3_ops::Error>,
    )> = vec![
        ("GetObject", &get, get.request(&endpoint)),
        ("HeadObject", &head, head.request(&endpoint)),
        ("PutObject", &put, put.request(&endpoint)),
        ("CreateMultipartUpload", &create, create.request(&endpoint)),
        ("UploadPart", &part, part.request(&endpoint)),
        (
            "CompleteMultipartUpload",
            &complete,
            complete.request(&endpoint),
        ),
        ("ListParts", &parts, parts.request(&endpoint)),
        ("CopyObject", &copy, copy.request(&endpoint)),
        ("UploadPartCopy", &part_copy, part_copy.request(&endpoint)),
    ];
    let key_base64 = secrets.form("SSE-C key, base64");
    for (name, op, request) in requests {
        secrets.debug(name, op);
        let request = request.unwrap_or_else(|e| panic!("{name}: {e}"));
        // The key travels in the request headers: the search is for the right form.
        assert!(
            request
                .request
                .headers()
                .values()
                .any(|v| v.as_bytes() == key_base64.as_bytes()),
            "{name} does not send the key"
        );
        secrets.debug(&format!("OperationRequest ({name})"), &request);
        secrets.debug(&format!("http::Request ({name})"), &request.request);
    }

    let presigned = s3_ops::presign::presign(
        &get,
        &endpoint,
        &Signer::new(),
        &credentials(),
        time(),
        Duration::from_secs(60),
    )
    .unwrap();
    assert!(
        presigned
            .headers()
            .values()
            .any(|v| v.as_bytes() == key_base64.as_bytes())
    );
    let presign_secrets = Secrets {
        forms: [("signature", presigned.signature().to_hex())]
            .into_iter()
            .chain(Secrets::new().forms)
            .collect(),
    };
    presign_secrets.debug("s3_ops::presign PresignedRequest", &presigned);

    // A SignatureDoesNotMatch document echoing the canonical request, as S3 sends it.
    let canonical = format!(
        "GET\n/bucket/sse-c\n\nhost:bucket.s3.amazonaws.com\nx-amz-security-token:{SESSION_TOKEN}\n\
         x-amz-server-side-encryption-customer-key:{key_base64}\n\nhost;x-amz-security-token\nUNSIGNED-PAYLOAD"
    );
    let body = mismatch_document(&canonical);
    let response = http::Response::builder()
        .status(403)
        .header("x-amz-request-id", "REQ-MISMATCH")
        .body(bytes::Bytes::from(body))
        .unwrap();
    let error = get.response(response).unwrap_err();
    let service = error.service_error().unwrap();
    assert!(
        service
            .extra("CanonicalRequest")
            .is_some_and(|c| c.contains(SESSION_TOKEN))
    );
    secrets.debug("S3Error (SignatureDoesNotMatch)", service);
    secrets.assert_absent(
        "S3Error (SignatureDoesNotMatch) Display",
        &service.to_string(),
    );
    secrets.error("s3_ops::Error (SignatureDoesNotMatch)", &error);
}

/// The error document S3 answers a bad signature with: the canonical request and string
/// to sign as it computed them, also as space-separated hex bytes.
fn mismatch_document(canonical: &str) -> String {
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let string_to_sign = "AWS4-HMAC-SHA256\n20240131T120000Z\n20240131/us-east-1/s3/aws4_request\n\
                          0000000000000000000000000000000000000000000000000000000000000000";
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code>\
         <Message>The request signature we calculated does not match the signature you provided.\
         </Message><AWSAccessKeyId>{ACCESS_KEY}</AWSAccessKeyId>\
         <StringToSign>{}</StringToSign><SignatureProvided>00ff</SignatureProvided>\
         <StringToSignBytes>{}</StringToSignBytes>\
         <CanonicalRequest>{}</CanonicalRequest><CanonicalRequestBytes>{}</CanonicalRequestBytes>\
         <RequestId>REQ-MISMATCH</RequestId><HostId>host</HostId></Error>",
        escape(string_to_sign),
        spaced_hex(string_to_sign.as_bytes()),
        escape(canonical),
        spaced_hex(canonical.as_bytes()),
    )
}

// ---------------------------------------------------------------------------------------------
// The client, against a loopback server
// ---------------------------------------------------------------------------------------------

/// A loopback HTTP/1.1 server: one request per connection, answered by path, every
/// received byte kept.
struct Server {
    port: u16,
    received: Arc<Mutex<Vec<u8>>>,
}

impl Server {
    async fn start() -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(handle(socket, Arc::clone(&log)));
            }
        });
        Server { port, received }
    }

    fn received(&self) -> String {
        String::from_utf8_lossy(&self.received.lock().unwrap()).into_owned()
    }
}

async fn handle(mut socket: tokio::net::TcpStream, log: Arc<Mutex<Vec<u8>>>) {
    let mut request = Vec::new();
    let mut buffer = [0u8; 8192];
    let head_end = loop {
        let Ok(read) = socket.read(&mut buffer).await else {
            return;
        };
        if read == 0 {
            return;
        }
        request.extend_from_slice(&buffer[..read]);
        if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
    };
    let head = String::from_utf8_lossy(&request[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())
                .flatten()
        })
        .unwrap_or(0);
    while request.len() < head_end + length {
        match socket.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => request.extend_from_slice(&buffer[..read]),
        }
    }
    log.lock().unwrap().extend_from_slice(&request);
    let request_line = head.lines().next().unwrap_or_default().to_owned();
    let (status, headers, body) = if request_line.contains("/bucket/mismatch") {
        // Echo the request head as S3 echoes its canonical request.
        let canonical: String = head
            .lines()
            .skip(1)
            .filter(|line| !line.is_empty())
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| format!("{}:{}\n", name.to_ascii_lowercase(), value.trim()))
            .collect();
        let canonical = format!("{request_line}\n{canonical}");
        (
            "403 Forbidden",
            "x-amz-request-id: REQ-MISMATCH\r\ncontent-type: application/xml\r\n",
            mismatch_document(&canonical),
        )
    } else if request_line.starts_with("GET /bucket/sse-c") {
        (
            "200 OK",
            "x-amz-request-id: REQ-SSE-C\r\n\
             x-amz-server-side-encryption-customer-algorithm: AES256\r\n\
             x-amz-server-side-encryption-customer-key-md5: c2VjcmV0LWtleS1tZDU=\r\n\
             etag: \"5d41402abc4b2a76b9719d911017c592\"\r\n",
            "hello".to_owned(),
        )
    } else {
        (
            "403 Forbidden",
            "x-amz-request-id: REQ-FORBIDDEN-1\r\nx-amz-id-2: HOST-ID-1\r\ncontent-type: application/xml\r\n",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessDenied</Code>\
             <Message>Access Denied</Message><RequestId>REQ-FORBIDDEN-1</RequestId>\
             <HostId>HOST-ID-1</HostId></Error>"
                .to_owned(),
        )
    };
    let response = format!(
        "HTTP/1.1 {status}\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = socket.write_all(response.as_bytes()).await;
    let _ = socket.shutdown().await;
}

struct LogCapture(Capture);

impl log::Log for LogCapture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        let _ = writeln!(
            self.0.clone(),
            "{} {}: {}",
            record.level(),
            record.target(),
            record.args()
        );
    }
    fn flush(&self) {}
}

fn log_capture() -> &'static Capture {
    static LOGGER: OnceLock<&'static LogCapture> = OnceLock::new();
    let logger = LOGGER.get_or_init(|| {
        let logger: &'static LogCapture = Box::leak(Box::new(LogCapture(Capture::default())));
        log::set_logger(logger).unwrap();
        log::set_max_level(log::LevelFilter::Trace);
        logger
    });
    &logger.0
}

/// Keeps the `Debug` form of every request-hook record.
#[derive(Default, Clone)]
struct HookRecords(Arc<Mutex<Vec<String>>>);

impl s3_wire_tokio::RequestHook for HookRecords {
    fn on_attempt(&self, attempt: &s3_wire_tokio::AttemptRecord<'_>) {
        self.0
            .lock()
            .unwrap()
            .push(format!("{attempt:?} {attempt:#?}"));
    }
}

fn client_builder(port: u16) -> s3_wire_tokio::ClientBuilder {
    Client::builder()
        .endpoint(format!("http://127.0.0.1:{port}"))
        .region("us-east-1")
        .static_credentials(ACCESS_KEY, SECRET_KEY, Some(SESSION_TOKEN.to_owned()))
        .retry(s3_wire_tokio::RetryConfig::default().with_max_attempts(1))
}

#[tokio::test(flavor = "current_thread")]
async fn the_client_its_errors_and_its_logs_never_show_a_secret() {
    let secrets = Secrets::new();
    let traced = Capture::default();
    let writer = traced.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::TRACE)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let logged = log_capture();
    tracing::info!(canary = "TRACING-CANARY-7f3a", "redaction test");
    log::info!("LOG-CANARY-7f3a");

    let server = Server::start().await;
    let hooked = HookRecords::default();
    let builder = client_builder(server.port).request_hook(hooked.clone());
    secrets.debug("ClientBuilder", &builder);
    let client = builder.build().unwrap();
    secrets.debug("Client", &client);
    let bucket = BucketName::new("bucket").unwrap();

    // 403 with a request id.
    let error = client
        .head_object(HeadObject::new(
            bucket.clone(),
            ObjectKey::new("forbidden").unwrap(),
        ))
        .await
        .unwrap_err();
    assert_eq!(error.request_id(), Some("REQ-FORBIDDEN-1"));
    secrets.error("Error (403 HeadObject)", &error);
    let error = client
        .send(s3_ops::ops::list_objects_v2::ListObjectsV2::new(
            bucket.clone(),
        ))
        .await
        .unwrap_err();
    secrets.error("Error (403 ListObjectsV2)", &error);

    // An SSE-C GET that succeeds and a PUT that fails.
    let get = GetObject::new(bucket.clone(), ObjectKey::new("sse-c").unwrap())
        .sse_customer_key(sse_key());
    let mut response = client.get_object(get.clone()).await.unwrap();
    secrets.debug("GetObjectResponse (SSE-C)", &response);
    let mut body = Vec::new();
    while let Some(chunk) = response.body.next_chunk().await {
        body.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(body, b"hello");
    secrets.debug("ObjectBody (read)", &response.body);
    let put = PutObject::new(bucket.clone(), ObjectKey::new("sse-c-put").unwrap())
        .server_side_encryption(ServerSideEncryption::Customer(sse_key()));
    let error = client.put_object(put, "data").await.unwrap_err();
    secrets.error("Error (403 SSE-C PutObject)", &error);
    let put = PutObject::new(bucket.clone(), ObjectKey::new("kms-put").unwrap())
        .server_side_encryption(kms_context());
    let error = client.put_object(put, "data").await.unwrap_err();
    secrets.error("Error (403 SSE-KMS PutObject with a context)", &error);

    // A SignatureDoesNotMatch that echoes the request head (token and SSE-C key in it).
    let mismatch = GetObject::new(bucket.clone(), ObjectKey::new("mismatch").unwrap())
        .sse_customer_key(sse_key());
    let error = client.get_object(mismatch).await.unwrap_err();
    let echoed = error
        .service_error()
        .and_then(|e| e.extra("CanonicalRequest"))
        .unwrap_or_default()
        .to_owned();
    assert!(echoed.contains(SESSION_TOKEN), "the echo holds the token");
    secrets.error("Error (SignatureDoesNotMatch)", &error);

    // Every request hook record so far (403s, SSE-C GET and PUT, the mismatch echo).
    let records = hooked.0.lock().unwrap().join("\n");
    assert!(
        records.contains("operation: \"HeadObject\"") && records.contains("status: Some(403)"),
        "{records}"
    );
    secrets.assert_absent("RequestHook records", &records);

    // The client's presigned URL.
    let presigned = client.presign(&get, Duration::from_secs(60)).await.unwrap();
    let presign_secrets = Secrets {
        forms: [("signature", presigned.signature().to_hex())]
            .into_iter()
            .chain(Secrets::new().forms)
            .collect(),
    };
    presign_secrets.debug("Client::presign PresignedRequest", &presigned);

    // The secrets went over the wire in the forms searched for, except the secret key.
    let wire = server.received();
    assert!(wire.contains(SESSION_TOKEN));
    assert!(wire.contains(secrets.form("SSE-C key, base64")));
    let wire_secrets = Secrets {
        forms: Secrets::new()
            .forms
            .into_iter()
            .filter(|(name, _)| name.starts_with("secret key") || name.starts_with("derived"))
            .collect(),
    };
    wire_secrets.assert_absent("the bytes sent to the server", &wire);

    // Connection refused: a transport error with a source.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    let unreachable = client_builder(closed_port).build().unwrap();
    let error = unreachable.get_object(get.clone()).await.unwrap_err();
    assert!(std::error::Error::source(&error).is_some());
    secrets.error("Error (connection refused)", &error);

    // A credentials failure: a profile with the secret key but no access key id.
    let home = tempfile::tempdir().unwrap();
    let credentials_file = home.path().join("credentials");
    std::fs::write(
        &credentials_file,
        format!(
            "[default]\naws_secret_access_key = {SECRET_KEY}\naws_session_token = {SESSION_TOKEN}\n\
             [complete]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n\
             aws_session_token = {SESSION_TOKEN}\n"
        ),
    )
    .unwrap();
    let config_file = home.path().join("config");
    std::fs::write(
        &config_file,
        format!(
            "[profile complete]\nregion = eu-west-1\nservices = local\n\
             aws_secret_access_key = {SECRET_KEY}\n\
             [services local]\ns3 =\n  endpoint_url = http://127.0.0.1:1\n"
        ),
    )
    .unwrap();
    let env = MapEnv::new()
        .with_var(
            "AWS_SHARED_CREDENTIALS_FILE",
            credentials_file.to_string_lossy(),
        )
        .with_var("AWS_CONFIG_FILE", config_file.to_string_lossy())
        .with_var("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .with_var("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        .with_var("AWS_SESSION_TOKEN", SESSION_TOKEN);
    secrets.debug("MapEnv", &env);
    let env = Arc::new(env);
    let failing = client_builder(server.port)
        .credentials(ProfileProvider::with_env(
            Arc::new(
                MapEnv::new()
                    .with_var(
                        "AWS_SHARED_CREDENTIALS_FILE",
                        credentials_file.to_string_lossy(),
                    )
                    .with_var(
                        "AWS_CONFIG_FILE",
                        home.path().join("none").to_string_lossy(),
                    ),
            ),
            None,
        ))
        .build()
        .unwrap();
    let error = failing.get_object(get.clone()).await.unwrap_err();
    assert!(matches!(
        error.kind(),
        s3_wire_tokio::ErrorKind::Credentials
    ));
    secrets.error("Error (credentials)", &error);

    use s3_wire_tokio::credentials::CredentialsProvider as _;
    let environment = EnvironmentProvider::with_env(env.clone());
    assert_eq!(
        environment.credentials().await.unwrap().secret_access_key(),
        SECRET_KEY
    );
    secrets.debug("EnvironmentProvider", &environment);
    let profile = ProfileProvider::with_env(env.clone(), Some("complete".to_owned()));
    assert_eq!(
        profile.credentials().await.unwrap().session_token(),
        Some(SESSION_TOKEN)
    );
    secrets.debug("ProfileProvider (loaded)", &profile);
    let chain = DefaultChain::with_env(env.clone());
    chain.credentials().await.unwrap();
    secrets.debug("DefaultChain (loaded)", &chain);
    let shared = SharedConfig::load_profile(env.as_ref(), "complete").unwrap();
    secrets.debug("SharedConfig", &shared);
    let profiles = ProfileSet::load(env.as_ref()).unwrap();
    secrets.debug("ProfileSet", &profiles);
    secrets.debug("Profile", &profiles.profile("complete").unwrap());
    secrets.debug("Section (services)", &profiles.services("local").unwrap());
    let unparsable = ProfileSet::parse(
        "",
        std::path::Path::new("config"),
        &format!("[default]\naws_secret_access_key {SECRET_KEY}\n"),
        std::path::Path::new("credentials"),
    )
    .unwrap_err();
    secrets.error("credentials::Error (parse)", &unparsable);

    // Expiring credentials, their cache once loaded, and the errors of the fetched sources.
    #[derive(Debug)]
    struct Issuer;
    impl s3_wire_tokio::credentials::ExpiringSource for Issuer {
        fn fetch(&self) -> s3_wire_tokio::credentials::FetchFuture<'_> {
            Box::pin(async {
                Ok(s3_wire_tokio::credentials::ExpiringCredentials::new(
                    credentials(),
                    Some(std::time::SystemTime::now() + Duration::from_secs(3600)),
                ))
            })
        }
    }
    let cache = s3_wire_tokio::credentials::CachingProvider::new(Issuer);
    assert_eq!(
        cache.credentials().await.unwrap().secret_access_key(),
        SECRET_KEY
    );
    secrets.debug("CachingProvider (loaded)", &cache);
    secrets.debug(
        "ExpiringCredentials",
        &s3_wire_tokio::credentials::ExpiringCredentials::new(credentials(), None),
    );
    let malformed = format!(
        "{{\"Version\": 1, \"AccessKeyId\": \"{ACCESS_KEY}\", \"SecretAccessKey\": \"{SECRET_KEY}\", \
         \"SessionToken\": \"{SESSION_TOKEN}\", \"Expiration\": \"{SECRET_KEY}\"}}"
    );
    let refused = s3_wire_tokio::credentials::documents::parse_process_output(malformed.as_bytes())
        .unwrap_err();
    secrets.error("DocumentError", &refused);

    // An explicit proxy that refuses the tunnel (407): its password, in the proxy URL or
    // set apart, is in no builder, client, error or log output (only in the
    // Proxy-Authorization header the proxy receives).
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_port = proxy.local_addr().unwrap().port();
    let proxy_heads = Arc::new(Mutex::new(String::new()));
    let heads = proxy_heads.clone();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        while let Ok((mut socket, _)) = proxy.accept().await {
            let heads = heads.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && socket.read_exact(&mut byte).await.is_ok() {
                    head.push(byte[0]);
                }
                heads
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&head));
                let _ = socket
                    .write_all(
                        b"HTTP/1.1 407 Proxy Authentication Required\r\n\
                          proxy-authenticate: Basic realm=\"corp\"\r\ncontent-length: 0\r\n\r\n",
                    )
                    .await;
            });
        }
    });
    let proxied = || {
        Client::builder()
            .endpoint("https://s3.private.test")
            .region("us-east-1")
            .static_credentials(ACCESS_KEY, SECRET_KEY, Some(SESSION_TOKEN.to_owned()))
            .retry(s3_wire_tokio::RetryConfig::default().with_max_attempts(1))
    };
    let encoded = s3_sigv4::uri_encode(PROXY_PASSWORD, true);
    for builder in [
        proxied().proxy(&format!(
            "http://proxy-user:{encoded}@127.0.0.1:{proxy_port}"
        )),
        proxied()
            .proxy(&format!("http://127.0.0.1:{proxy_port}"))
            .proxy_credentials("proxy-user", PROXY_PASSWORD),
    ] {
        secrets.debug("ClientBuilder (proxy with a password)", &builder);
        let proxied = builder.build().unwrap();
        secrets.debug("Client (proxy with a password)", &proxied);
        let error = proxied
            .head_object(HeadObject::new(
                bucket.clone(),
                ObjectKey::new("through-proxy").unwrap(),
            ))
            .await
            .unwrap_err();
        assert!(
            error.to_string().contains("proxy authentication"),
            "{error}"
        );
        secrets.error("Error (407 from the proxy)", &error);
    }
    let expected = format!(
        "proxy-authorization: Basic {}",
        secrets.form("proxy credentials, Basic")
    );
    let heads = proxy_heads.lock().unwrap().to_ascii_lowercase();
    assert_eq!(
        heads.matches(&expected.to_ascii_lowercase()).count(),
        2,
        "{heads}"
    );

    drop(client);
    drop(failing);
    drop(unreachable);
    let traced = traced.text();
    assert!(
        traced.contains("TRACING-CANARY-7f3a"),
        "tracing is not captured"
    );
    // The client's own span and events (feature `tracing`) are among what is searched.
    assert!(
        traced.contains("s3.operation") && traced.contains("s3.attempt"),
        "the client's own tracing output is not captured:\n{traced}"
    );
    let logged = logged.text();
    assert!(logged.contains("LOG-CANARY-7f3a"), "log is not captured");
    secrets.assert_absent("tracing output", &traced);
    secrets.assert_absent("log output", &logged);
}

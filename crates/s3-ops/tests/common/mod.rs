//! Helpers shared by the integration tests.
#![allow(dead_code)]

use bytes::Bytes;
use s3_ops::{BucketName, Endpoint, ObjectKey, OperationRequest};

pub fn aws() -> Endpoint {
    Endpoint::aws("us-east-1").unwrap()
}

pub fn minio() -> Endpoint {
    Endpoint::custom("http://127.0.0.1:9000", "us-east-1").unwrap()
}

pub fn bucket() -> BucketName {
    BucketName::new("examplebucket").unwrap()
}

pub fn key(key: &str) -> ObjectKey {
    ObjectKey::new(key).unwrap()
}

/// Method, URI and all headers (`name: value`, sorted) of an encoded request.
pub fn shape(request: &OperationRequest) -> (String, String, Vec<String>) {
    let mut headers: Vec<String> = request
        .request
        .headers()
        .iter()
        .map(|(name, value)| format!("{}: {}", name, value.to_str().unwrap()))
        .collect();
    headers.sort();
    (
        request.request.method().to_string(),
        request.request.uri().to_string(),
        headers,
    )
}

pub fn strings(items: &[&str]) -> Vec<String> {
    let mut items: Vec<String> = items.iter().map(|s| (*s).to_owned()).collect();
    items.sort();
    items
}

pub fn testdata(path: &str) -> Bytes {
    let full = format!("{}/testdata/{path}", env!("CARGO_MANIFEST_DIR"));
    Bytes::from(std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}")))
}

pub fn response(
    status: u16,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> http::Response<Bytes> {
    let mut builder = http::Response::builder().status(status);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(body.into()).unwrap()
}

/// The body bytes of an in-memory request body.
pub fn body_text(request: &OperationRequest) -> String {
    match &request.body {
        s3_ops::Body::Bytes(bytes) => String::from_utf8(bytes.to_vec()).unwrap(),
        other => panic!("expected an in-memory body, got {other:?}"),
    }
}

//! Shared helpers for the vector tests: a minimal HTTP/1.1 request parser for
//! the `.req` / `request.txt` files.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use http::{HeaderMap, HeaderName, HeaderValue};
use s3_sigv4::RawRequest;

pub fn testdata(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(relative)
}

pub fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Parses a request file into a request (target kept verbatim: it may hold
/// spaces and raw UTF-8) and its body.
pub fn parse_request(text: &str) -> (RawRequest, Vec<u8>) {
    let (head, body) = match text.split_once("\n\n") {
        Some((head, body)) => (head, body.as_bytes().to_vec()),
        None => (text, Vec::new()),
    };
    let mut lines = head.lines();
    let request_line = lines.next().expect("request line");
    let (method, rest) = request_line.split_once(' ').expect("method");
    let (target, _version) = rest.rsplit_once(' ').expect("version");
    // Unfold obs-fold continuation lines (RFC 7230 §3.2.4) into one space.
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.starts_with([' ', '\t']) {
            let last = fields.last_mut().expect("continuation after a field");
            last.1.push(' ');
            last.1.push_str(line.trim_start());
        } else {
            let (name, value) = line.split_once(':').expect("header line");
            fields.push((name.to_owned(), value.to_owned()));
        }
    }
    let mut headers = HeaderMap::new();
    for (name, value) in fields {
        headers.append(
            HeaderName::from_bytes(name.as_bytes()).expect("header name"),
            HeaderValue::from_str(&value).expect("header value"),
        );
    }
    let mut request = RawRequest::new(method, target);
    request.headers = headers;
    (request, body)
}

/// As an `http::Request`, for files whose target is a valid URI.
pub fn to_http(request: &RawRequest) -> http::Request<()> {
    let target = match &request.query {
        Some(query) => format!("{}?{}", request.path, query),
        None => request.path.clone(),
    };
    let mut http_request = http::Request::builder()
        .method(request.method.as_str())
        .uri(target)
        .body(())
        .expect("valid request");
    *http_request.headers_mut() = request.headers.clone();
    http_request
}

//! Shared helpers for the vector tests: a minimal HTTP/1.1 request parser for
//! the `.req` / `request.txt` files and a `SignableRequest` over its result.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use http::{HeaderMap, HeaderName, HeaderValue};
use s3_sigv4::SignableRequest;

pub fn testdata(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(relative)
}

pub fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A parsed request file. The target is kept verbatim (it may contain spaces
/// and raw UTF-8, which `http::Uri` cannot hold).
#[derive(Debug, Clone)]
pub struct RawRequest {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl RawRequest {
    pub fn parse(text: &str) -> Self {
        let (head, body) = match text.split_once("\n\n") {
            Some((head, body)) => (head, body.as_bytes().to_vec()),
            None => (text, Vec::new()),
        };
        let mut lines = head.lines();
        let request_line = lines.next().expect("request line");
        let (method, rest) = request_line.split_once(' ').expect("method");
        let (target, _version) = rest.rsplit_once(' ').expect("version");
        let (path, query) = match target.split_once('?') {
            Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
            None => (target.to_owned(), None),
        };
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
        Self {
            method: method.to_owned(),
            path,
            query,
            headers,
            body,
        }
    }

    /// As an `http::Request`, for files whose target is a valid URI.
    pub fn to_http(&self) -> http::Request<Vec<u8>> {
        let target = match &self.query {
            Some(query) => format!("{}?{}", self.path, query),
            None => self.path.clone(),
        };
        let mut request = http::Request::builder()
            .method(self.method.as_str())
            .uri(target)
            .body(self.body.clone())
            .expect("valid request");
        *request.headers_mut() = self.headers.clone();
        request
    }
}

impl SignableRequest for RawRequest {
    fn method(&self) -> &str {
        &self.method
    }
    fn scheme(&self) -> Option<&str> {
        None
    }
    fn authority(&self) -> Option<&str> {
        None
    }
    fn path(&self) -> &str {
        &self.path
    }
    fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }
    fn headers(&self) -> &HeaderMap {
        &self.headers
    }
    fn headers_mut(&mut self) -> &mut HeaderMap {
        &mut self.headers
    }
}

//! The null server: just enough S3 on 127.0.0.1 to satisfy the clients, at almost no cost.
//!
//! Uploaded bytes are counted and dropped (aws-chunked bodies are decoded so the count is
//! the payload's); the server remembers only each key's size. GETs (whole or ranged) are
//! served from a generated pattern (byte `i` of every object is `i % 251`). No signature
//! is checked and no `x-amz-checksum-*` header is sent, so a verifying client reports the
//! download as not verified. It isolates the client's own cost, which s3s-fs hides.
//!
//! `null-tls` is the same server behind rustls (HTTP/1.1 by ALPN, a certificate from a CA
//! generated for the run, see [`crate::tls`]): what a client pays for TLS on top.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use s3_sigv4::fuzzing::aws_chunked;

const PATTERN_PERIOD: usize = 251;
const CHUNK: usize = 256 * 1024;

/// The byte at `offset` of every object the null server serves.
pub fn pattern_byte(offset: u64) -> u8 {
    (offset % PATTERN_PERIOD as u64) as u8
}

/// A body of `len` pattern bytes starting at object offset `offset`.
pub struct PatternBody {
    pattern: Bytes,
    offset: u64,
    remaining: u64,
}

impl PatternBody {
    fn new(pattern: Bytes, offset: u64, len: u64) -> Self {
        Self {
            pattern,
            offset,
            remaining: len,
        }
    }
}

impl Body for PatternBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.remaining == 0 {
            return Poll::Ready(None);
        }
        let take = self.remaining.min(CHUNK as u64) as usize;
        let start = (self.offset % PATTERN_PERIOD as u64) as usize;
        let data = self.pattern.slice(start..start + take);
        self.offset += take as u64;
        self.remaining -= take as u64;
        Poll::Ready(Some(Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

type ResponseBody = Either<Full<Bytes>, PatternBody>;

#[derive(Default)]
struct Store {
    objects: BTreeMap<(String, String), u64>,
    uploads: HashMap<String, BTreeMap<u32, u64>>,
    next_upload: u64,
    received: u64,
}

/// Shared state of one null server.
#[derive(Clone)]
pub struct NullServer {
    store: Arc<Mutex<Store>>,
    pattern: Bytes,
}

impl Default for NullServer {
    fn default() -> Self {
        Self::new()
    }
}

impl NullServer {
    /// An empty server.
    pub fn new() -> Self {
        let pattern: Vec<u8> = (0..CHUNK + PATTERN_PERIOD)
            .map(|i| pattern_byte(i as u64))
            .collect();
        Self {
            store: Arc::new(Mutex::new(Store::default())),
            pattern: Bytes::from(pattern),
        }
    }

    /// Object payload bytes received so far by PUTs (the round-trip test checks the count).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn received(&self) -> u64 {
        self.store.lock().unwrap().received
    }

    /// Starts serving plain HTTP on 127.0.0.1 (a free port) on its own thread and
    /// runtime; the thread lives as long as the process.
    pub fn spawn(self) -> std::io::Result<SocketAddr> {
        self.spawn_with(None)
    }

    /// Like [`NullServer::spawn`], over TLS: every accepted connection is wrapped by
    /// `tls` (HTTP/1.1 by ALPN) and then served exactly as a plain one.
    pub fn spawn_tls(self, tls: rustls::ServerConfig) -> std::io::Result<SocketAddr> {
        self.spawn_with(Some(tokio_rustls::TlsAcceptor::from(Arc::new(tls))))
    }

    fn spawn_with(self, tls: Option<tokio_rustls::TlsAcceptor>) -> std::io::Result<SocketAddr> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("null-s3")
            .enable_all()
            .build()?;
        let listener = runtime.block_on(tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))?;
        let addr = listener.local_addr()?;
        std::thread::Builder::new()
            .name("null-s3".into())
            .spawn(move || runtime.block_on(self.serve(listener, tls)))?;
        Ok(addr)
    }

    async fn serve(
        self,
        listener: tokio::net::TcpListener,
        tls: Option<tokio_rustls::TlsAcceptor>,
    ) {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let server = self.clone();
            let tls = tls.clone();
            tokio::spawn(async move {
                match tls {
                    None => server.serve_connection(stream).await,
                    Some(tls) => {
                        if let Ok(stream) = tls.accept(stream).await {
                            server.serve_connection(stream).await;
                        }
                    }
                }
            });
        }
    }

    /// HTTP/1.1 on one accepted connection, plain or already through its TLS handshake.
    async fn serve_connection<S>(self, stream: S)
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let service = hyper::service::service_fn(move |request| {
            let server = self.clone();
            async move { Ok::<_, Infallible>(server.handle(request).await) }
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
            .await;
    }

    async fn handle(&self, request: Request<Incoming>) -> Response<ResponseBody> {
        let (parts, body) = request.into_parts();
        let route = Route::parse(parts.uri.path(), parts.uri.query().unwrap_or(""));
        let chunked = parts
            .headers
            .get("x-amz-content-sha256")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("STREAMING-"))
            || parts
                .headers
                .get("content-encoding")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.contains("aws-chunked"));
        let (received, raw) = match drain(body, chunked).await {
            Ok(counted) => counted,
            Err(err) => return xml_error(StatusCode::BAD_REQUEST, "IncompleteBody", &err),
        };
        if let Some(decoded) = parts
            .headers
            .get("x-amz-decoded-content-length")
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
            && chunked
            && decoded != received
        {
            return xml_error(
                StatusCode::BAD_REQUEST,
                "IncompleteBody",
                &format!("decoded {received} bytes, header says {decoded}"),
            );
        }
        if parts.method == Method::PUT {
            self.store.lock().unwrap().received += received;
        }
        self.respond(&parts.method, &parts.headers, route, received, raw)
    }

    fn respond(
        &self,
        method: &Method,
        headers: &http::HeaderMap,
        route: Route,
        received: u64,
        raw: Vec<u8>,
    ) -> Response<ResponseBody> {
        let mut store = self.store.lock().unwrap();
        let Route { bucket, key, query } = route;
        let q = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        match (method, key.is_empty()) {
            (&Method::PUT, true) | (&Method::HEAD, true) => empty(StatusCode::OK),
            (&Method::GET, true) if q("list-type") == Some("2") => {
                let prefix = q("prefix").unwrap_or("");
                let max = q("max-keys")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(1000usize);
                let after = q("continuation-token").or(q("start-after")).unwrap_or("");
                list_v2(&store.objects, &bucket, prefix, after, max.min(1000))
            }
            (&Method::POST, true) if q("delete").is_some() => {
                let body = String::from_utf8_lossy(&raw);
                let mut xml = String::from(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">",
                );
                let mut rest = body.as_ref();
                while let Some(start) = rest.find("<Key>") {
                    let tail = &rest[start + 5..];
                    let Some(end) = tail.find("</Key>") else {
                        break;
                    };
                    let key = &tail[..end];
                    store.objects.remove(&(bucket.clone(), xml_unescape(key)));
                    xml.push_str(&format!("<Deleted><Key>{key}</Key></Deleted>"));
                    rest = &tail[end..];
                }
                xml.push_str("</DeleteResult>");
                xml_ok(xml)
            }
            (&Method::PUT, false) => {
                if let (Some(part), Some(upload)) = (q("partNumber"), q("uploadId")) {
                    let Some(parts) = store.uploads.get_mut(upload) else {
                        return xml_error(StatusCode::NOT_FOUND, "NoSuchUpload", upload);
                    };
                    let part: u32 = part.parse().unwrap_or(0);
                    parts.insert(part, received);
                    return with_etag(empty(StatusCode::OK), &etag(received, None));
                }
                if headers.contains_key("x-amz-copy-source") {
                    return xml_error(StatusCode::NOT_IMPLEMENTED, "NotImplemented", "copy");
                }
                store.objects.insert((bucket, key), received);
                with_etag(empty(StatusCode::OK), &etag(received, None))
            }
            (&Method::POST, false) if q("uploads").is_some() => {
                store.next_upload += 1;
                let id = format!("null-upload-{}", store.next_upload);
                store.uploads.insert(id.clone(), BTreeMap::new());
                xml_ok(format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<InitiateMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>{bucket}</Bucket><Key>{}</Key><UploadId>{id}</UploadId></InitiateMultipartUploadResult>",
                    xml_escape(&key)
                ))
            }
            (&Method::POST, false) if q("uploadId").is_some() => {
                let upload = q("uploadId").unwrap_or_default().to_owned();
                let Some(parts) = store.uploads.remove(&upload) else {
                    return xml_error(StatusCode::NOT_FOUND, "NoSuchUpload", &upload);
                };
                let size: u64 = parts.values().sum();
                let tag = etag(size, Some(parts.len()));
                store.objects.insert((bucket.clone(), key.clone()), size);
                xml_ok(format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CompleteMultipartUploadResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Location>/{bucket}/{0}</Location><Bucket>{bucket}</Bucket><Key>{0}</Key><ETag>{1}</ETag></CompleteMultipartUploadResult>",
                    xml_escape(&key),
                    xml_escape(&tag)
                ))
            }
            (&Method::DELETE, false) => {
                if let Some(upload) = q("uploadId") {
                    store.uploads.remove(upload);
                } else {
                    store.objects.remove(&(bucket, key));
                }
                empty(StatusCode::NO_CONTENT)
            }
            (&Method::GET | &Method::HEAD, false) => {
                let Some(&size) = store.objects.get(&(bucket, key.clone())) else {
                    return xml_error(StatusCode::NOT_FOUND, "NoSuchKey", &key);
                };
                let range = headers
                    .get(http::header::RANGE)
                    .and_then(|v| v.to_str().ok())
                    .map(|v| parse_range(v, size));
                let (status, start, len) = match range {
                    None => (StatusCode::OK, 0, size),
                    Some(Some((start, end))) => {
                        (StatusCode::PARTIAL_CONTENT, start, end + 1 - start)
                    }
                    Some(None) => {
                        return xml_error(
                            StatusCode::RANGE_NOT_SATISFIABLE,
                            "InvalidRange",
                            "range",
                        );
                    }
                };
                let body = if method == Method::HEAD {
                    Either::Left(Full::new(Bytes::new()))
                } else {
                    Either::Right(PatternBody::new(self.pattern.clone(), start, len))
                };
                let mut response = Response::builder()
                    .status(status)
                    .header("content-length", len)
                    .header("etag", etag(size, None))
                    .header("last-modified", "Thu, 01 Jan 2026 00:00:00 GMT")
                    .header("accept-ranges", "bytes")
                    .header("content-type", "application/octet-stream");
                if status == StatusCode::PARTIAL_CONTENT {
                    response = response.header(
                        "content-range",
                        format!("bytes {start}-{}/{size}", start + len - 1),
                    );
                }
                response.body(body).unwrap()
            }
            _ => xml_error(
                StatusCode::NOT_IMPLEMENTED,
                "NotImplemented",
                method.as_str(),
            ),
        }
    }
}

/// The decoder of uploads: s3-sigv4's strict one, which counts without keeping payload;
/// uppercase sizes too, since aws-sdk-s3 writes them.
fn chunked_decoder() -> aws_chunked::Decoder {
    aws_chunked::Decoder::new().accepting_uppercase_hex()
}

/// Reads a request body to its end, counting payload bytes; the raw bytes are kept only
/// when small (XML documents), never for object data.
async fn drain(mut body: Incoming, chunked: bool) -> Result<(u64, Vec<u8>), String> {
    let mut decoder = chunked_decoder();
    let mut count = 0u64;
    let mut raw = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| e.to_string())?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if chunked {
            decoder
                .feed(&data, |_| {})
                .map_err(|e| format!("aws-chunked: {e}"))?;
        } else {
            count += data.len() as u64;
            if raw.len() < 1 << 20 {
                raw.extend_from_slice(&data);
            }
        }
    }
    if chunked {
        count = decoder.finish().map_err(|e| format!("aws-chunked: {e}"))?;
    }
    Ok((count, raw))
}

/// Path-style request: bucket, key, decoded query pairs.
#[derive(Debug, PartialEq)]
pub struct Route {
    /// The bucket (first path segment).
    pub bucket: String,
    /// The key (the rest of the path, percent-decoded), empty for bucket requests.
    pub key: String,
    /// Query parameters, percent-decoded, in order.
    pub query: Vec<(String, String)>,
}

impl Route {
    /// Splits a path-style request target.
    pub fn parse(path: &str, query: &str) -> Self {
        let path = path.strip_prefix('/').unwrap_or(path);
        let (bucket, key) = path.split_once('/').unwrap_or((path, ""));
        let query = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                (percent_decode(k), percent_decode(v))
            })
            .collect();
        Self {
            bucket: percent_decode(bucket),
            key: percent_decode(key),
            query,
        }
    }
}

/// `%XX` and (in queries) `+` decoding; invalid escapes are kept as they are.
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `bytes=a-b`, `bytes=a-`, `bytes=-n` against an object of `size` bytes: the inclusive
/// range, clamped; `None` if unsatisfiable.
pub fn parse_range(header: &str, size: u64) -> Option<(u64, u64)> {
    let spec = header.trim().strip_prefix("bytes=")?;
    let (a, b) = spec.split_once('-')?;
    if size == 0 {
        return None;
    }
    if a.is_empty() {
        let n: u64 = b.parse().ok()?;
        if n == 0 {
            return None;
        }
        return Some((size.saturating_sub(n), size - 1));
    }
    let start: u64 = a.parse().ok()?;
    let end = if b.is_empty() {
        size - 1
    } else {
        b.parse::<u64>().ok()?.min(size - 1)
    };
    (start <= end).then_some((start, end))
}

fn list_v2(
    objects: &BTreeMap<(String, String), u64>,
    bucket: &str,
    prefix: &str,
    after: &str,
    max: usize,
) -> Response<ResponseBody> {
    let from = (bucket.to_owned(), after.to_owned());
    let mut matching = objects
        .range(from..)
        .take_while(|((b, _), _)| b == bucket)
        .filter(|((_, k), _)| k.as_str() > after && k.starts_with(prefix));
    let page: Vec<_> = matching.by_ref().take(max).collect();
    let truncated = matching.next().is_some();
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>{bucket}</Name><Prefix>{}</Prefix><KeyCount>{}</KeyCount><MaxKeys>{max}</MaxKeys><IsTruncated>{truncated}</IsTruncated>",
        xml_escape(prefix),
        page.len()
    );
    if truncated && let Some(((_, last), _)) = page.last() {
        xml.push_str(&format!(
            "<NextContinuationToken>{}</NextContinuationToken>",
            xml_escape(last)
        ));
    }
    for ((_, key), size) in &page {
        xml.push_str(&format!(
            "<Contents><Key>{}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>{}</ETag><Size>{size}</Size><StorageClass>STANDARD</StorageClass></Contents>",
            xml_escape(key),
            xml_escape(&etag(**size, None))
        ));
    }
    xml.push_str("</ListBucketResult>");
    xml_ok(xml)
}

fn etag(size: u64, parts: Option<usize>) -> String {
    match parts {
        Some(n) => format!("\"{size:032x}-{n}\""),
        None => format!("\"{size:032x}\""),
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn empty(status: StatusCode) -> Response<ResponseBody> {
    Response::builder()
        .status(status)
        .header("content-length", 0)
        .body(Either::Left(Full::new(Bytes::new())))
        .unwrap()
}

fn with_etag(mut response: Response<ResponseBody>, tag: &str) -> Response<ResponseBody> {
    response
        .headers_mut()
        .insert("etag", http::HeaderValue::from_str(tag).unwrap());
    response
}

fn xml_ok(xml: String) -> Response<ResponseBody> {
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/xml")
        .header("content-length", xml.len())
        .body(Either::Left(Full::new(Bytes::from(xml))))
        .unwrap()
}

fn xml_error(status: StatusCode, code: &str, message: &str) -> Response<ResponseBody> {
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>{}</Message><RequestId>null</RequestId></Error>",
        xml_escape(message)
    );
    let mut response = xml_ok(xml);
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the clients send: s3-wire's signed chunks with a trailer, and aws-sdk-s3's
    /// unsigned ones with uppercase sizes; counted the same wherever the network splits them.
    #[test]
    fn uploads_are_counted_in_every_client_s_encoding() {
        let signature = "a".repeat(64);
        let signed = format!(
            "5;chunk-signature={signature}\r\nhello\r\n3;chunk-signature={signature}\r\n wo\r\n\
             0;chunk-signature={signature}\r\nx-amz-checksum-crc32:AAAA\r\n\
             x-amz-trailer-signature:{signature}\r\n\r\n"
        );
        let unsigned = "1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nx-amz-checksum-crc64nvme:AAAAAAAAAAA=\r\n\r\n";
        for (body, payload) in [(signed.as_bytes(), 8), (unsigned.as_bytes(), 26)] {
            for split in 0..body.len() {
                let mut decoder = chunked_decoder();
                decoder.feed(&body[..split], |_| {}).unwrap();
                decoder.feed(&body[split..], |_| {}).unwrap();
                assert_eq!(decoder.finish(), Ok(payload), "split at {split}");
            }
        }
    }

    #[test]
    fn a_broken_upload_is_refused() {
        let mut truncated = chunked_decoder();
        truncated.feed(b"10\r\nabc", |_| {}).unwrap();
        assert!(truncated.finish().is_err());
        assert!(chunked_decoder().feed(b"zz\r\n", |_| {}).is_err());
        assert!(chunked_decoder().feed(b"2\r\nabXY", |_| {}).is_err());
    }

    #[test]
    fn routes_and_queries() {
        let route = Route::parse("/b/dir/a%20b", "partNumber=3&uploadId=x%2By&uploads");
        assert_eq!(route.bucket, "b");
        assert_eq!(route.key, "dir/a b");
        assert_eq!(
            route.query,
            vec![
                ("partNumber".into(), "3".into()),
                ("uploadId".into(), "x+y".into()),
                ("uploads".into(), String::new())
            ]
        );
        assert_eq!(Route::parse("/b", "").key, "");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%2"), "%2");
    }

    #[test]
    fn ranges() {
        assert_eq!(parse_range("bytes=0-9", 100), Some((0, 9)));
        assert_eq!(parse_range("bytes=90-", 100), Some((90, 99)));
        assert_eq!(parse_range("bytes=-10", 100), Some((90, 99)));
        assert_eq!(parse_range("bytes=95-200", 100), Some((95, 99)));
        assert_eq!(parse_range("bytes=100-", 100), None);
        assert_eq!(parse_range("items=0-1", 100), None);
    }

    #[test]
    fn pattern_body_slices() {
        let server = NullServer::new();
        let mut body = PatternBody::new(server.pattern.clone(), 1000, (CHUNK + 7) as u64);
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut offset = 1000u64;
        while let Poll::Ready(Some(Ok(frame))) = Pin::new(&mut body).poll_frame(&mut cx) {
            for byte in frame.into_data().unwrap() {
                assert_eq!(byte, pattern_byte(offset));
                offset += 1;
            }
        }
        assert_eq!(offset, 1000 + CHUNK as u64 + 7);
    }
}

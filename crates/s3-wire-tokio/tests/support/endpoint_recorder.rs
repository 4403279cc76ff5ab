//! A loopback stand-in for every host at once, for AWS's endpoint cases (tests/endpoint_rules.rs).
//!
//! The client is pointed at it as its HTTP proxy (`ClientBuilder::proxy`), so whatever host
//! and port a request is addressed to, it arrives here and nothing leaves the machine: a
//! `CONNECT` for HTTPS, after which it speaks TLS with a certificate of its own CA issued
//! for the host the tunnel names; the absolute URI for plain HTTP. Each request is recorded
//! with how it was signed, as the independent verifiers of [`super::sigv4`] find it, and
//! answered: CreateSession with a session's keys, a listing with the document the test chose
//! ([`EndpointRecorder::answer_listings_with`]), anything else with 200 and no body.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, Method, Response};
use http_body_util::{BodyExt as _, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

use super::fault::{ServerThread, loopback_listener};
use super::pki::{DEFAULT_VERSIONS, TestCa, server_config};
use super::sigv4;

/// The client's access key id.
pub const ACCESS_KEY: &str = "AKIDRECORDERCLIENT";
/// The client's secret key.
pub const SECRET_KEY: &str = "recorder-client-secret-key";
/// The access key id of the sessions CreateSession hands out.
const SESSION_KEY: &str = "AKIDRECORDERSESSION";
const SESSION_SECRET: &str = "recorder-session-secret";
const SESSION_TOKEN: &str = "recorder-session-token";

/// How a recorded request was signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signature {
    /// No `Authorization`.
    None,
    /// SigV4 with the caller's keys.
    V4 { service: String, region: String },
    /// SigV4 with a CreateSession's keys and its token in `x-amz-s3session-token`.
    Session { service: String, region: String },
    /// SigV4a with the caller's keys.
    V4a { service: String, region_set: String },
    /// Present, but not valid (and why).
    Invalid(String),
}

/// A request as it arrived.
#[derive(Debug, Clone)]
pub struct Sighting {
    /// `http` or `https`.
    pub scheme: &'static str,
    /// `host[:port]` as the request was addressed (the tunnel's, for HTTPS).
    pub authority: String,
    pub method: Method,
    pub path: String,
    pub query: String,
    pub headers: HeaderMap,
    pub signature: Signature,
}

impl Sighting {
    /// `scheme://authority/path`, the port left out where it is the scheme's own.
    pub fn url(&self) -> String {
        let authority = match (self.scheme, self.authority.rsplit_once(':')) {
            ("https", Some((host, "443"))) | ("http", Some((host, "80"))) => host,
            _ => &self.authority,
        };
        format!("{}://{authority}{}", self.scheme, self.path)
    }
}

/// The running recorder; dropping it stops it.
pub struct EndpointRecorder {
    addr: SocketAddr,
    ca: Vec<u8>,
    seen: Arc<Mutex<Vec<Sighting>>>,
    listing: Arc<Mutex<String>>,
    _thread: ServerThread,
}

impl EndpointRecorder {
    pub fn start() -> Self {
        let ca = Arc::new(TestCa::new("endpoint recorder CA"));
        let ca_der = ca.der();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let certificates = Arc::new(Mutex::new(HashMap::new()));
        let (listener, addr) = loopback_listener();
        let listing = Arc::new(Mutex::new(String::new()));
        let (recorded, document) = (seen.clone(), listing.clone());
        let thread = ServerThread::start("endpoint-recorder", listener, move |stream, _| {
            let (ca, certificates, seen, listing) = (
                ca.clone(),
                certificates.clone(),
                recorded.clone(),
                document.clone(),
            );
            tokio::spawn(async move {
                let _ = serve(stream, &ca, &certificates, seen, listing).await;
            });
        });
        Self {
            addr,
            ca: ca_der,
            seen,
            listing,
            _thread: thread,
        }
    }

    /// The URL to give `ClientBuilder::proxy`.
    pub fn proxy_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Its own address: a loopback endpoint is reached directly, not through a proxy.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The CA every certificate it shows is issued by.
    pub fn ca_der(&self) -> Vec<u8> {
        self.ca.clone()
    }

    /// The body of the answer to a `GET` of a bucket or of `/` without a sub-resource (a
    /// listing of the operation under test).
    pub fn answer_listings_with(&self, document: &str) {
        *self.listing.lock().unwrap_or_else(|p| p.into_inner()) = document.to_owned();
    }

    /// The requests recorded since the last call.
    pub fn take(&self) -> Vec<Sighting> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Sighting>> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }
}

type Certificates = Mutex<HashMap<String, Arc<rustls::ServerConfig>>>;

/// One connection: a tunnel to take over with TLS, or plain HTTP requests in absolute form.
async fn serve(
    mut stream: tokio::net::TcpStream,
    ca: &TestCa,
    certificates: &Certificates,
    seen: Arc<Mutex<Vec<Sighting>>>,
    listing: Arc<Mutex<String>>,
) -> io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
        stream.read_exact(&mut byte).await?;
        head.push(byte[0]);
    }
    let line = String::from_utf8_lossy(&head)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned();
    if let Some(target) = line.strip_prefix("CONNECT ") {
        let authority = target.split(' ').next().unwrap_or("").to_owned();
        let host = match authority.strip_prefix('[') {
            Some(rest) => rest.split(']').next().unwrap_or("").to_owned(),
            None => authority
                .rsplit_once(':')
                .map_or(authority.as_str(), |(h, _)| h)
                .to_owned(),
        };
        let config = certificates
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(host.clone())
            .or_insert_with(|| {
                Arc::new(server_config(
                    &ca.issue(&[&host]),
                    DEFAULT_VERSIONS,
                    &[b"http/1.1"],
                ))
            })
            .clone();
        stream
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await?;
        let tls = tokio_rustls::TlsAcceptor::from(config)
            .accept(stream)
            .await?;
        serve_http(tls, "https", Some(authority), seen, listing).await;
    } else {
        let replayed = Replay {
            head: Bytes::from(head),
            stream,
        };
        serve_http(replayed, "http", None, seen, listing).await;
    }
    Ok(())
}

async fn serve_http<S>(
    stream: S,
    scheme: &'static str,
    tunnel: Option<String>,
    seen: Arc<Mutex<Vec<Sighting>>>,
    listing: Arc<Mutex<String>>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
        let (tunnel, seen, listing) = (tunnel.clone(), seen.clone(), listing.clone());
        async move {
            let (parts, body) = request.into_parts();
            let body = body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            // A tunnel's, an absolute URI's, or (sent to it directly) the Host header's.
            let authority = tunnel
                .or_else(|| parts.uri.authority().map(|a| a.to_string()))
                .or_else(|| {
                    let host = parts.headers.get("host")?.to_str().ok()?;
                    Some(host.to_owned())
                })
                .unwrap_or_default();
            let path = parts.uri.path().to_owned();
            let query = parts.uri.query().unwrap_or("").to_owned();
            let signature = signature(&parts.method, &path, &query, &parts.headers, &body);
            let listing = listing.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let response = answer(&parts.method, &query, listing);
            seen.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Sighting {
                    scheme,
                    authority,
                    method: parts.method,
                    path,
                    query,
                    headers: parts.headers,
                    signature,
                });
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    let _ = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

fn signature(
    method: &Method,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Signature {
    let Some(authorization) = headers.get("authorization").and_then(|v| v.to_str().ok()) else {
        return Signature::None;
    };
    let target = if query.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{query}")
    };
    if authorization.starts_with("AWS4-ECDSA-P256-SHA256 ") {
        return match sigv4::verify_sigv4a(method.as_str(), &target, headers, ACCESS_KEY, SECRET_KEY)
        {
            Ok(signed) => Signature::V4a {
                service: signed.service,
                region_set: signed.region_set,
            },
            Err(why) => Signature::Invalid(why),
        };
    }
    let session = authorization.contains(&format!("Credential={SESSION_KEY}/"));
    let secret = if session { SESSION_SECRET } else { SECRET_KEY };
    let service = authorization
        .split("Credential=")
        .nth(1)
        .and_then(|c| c.split('/').nth(3))
        .unwrap_or("");
    match sigv4::verify_for(
        service,
        method.as_str(),
        &target,
        headers,
        Some(body),
        secret,
    ) {
        Ok(_)
            if session
                && headers
                    .get("x-amz-s3session-token")
                    .is_none_or(|t| t != SESSION_TOKEN) =>
        {
            Signature::Invalid("a session's signature without its x-amz-s3session-token".into())
        }
        Ok(signed) if session => Signature::Session {
            service: service.to_owned(),
            region: signed.region,
        },
        Ok(signed) => Signature::V4 {
            service: service.to_owned(),
            region: signed.region,
        },
        Err(why) => Signature::Invalid(why),
    }
}

fn answer(method: &Method, query: &str, listing: String) -> Response<Full<Bytes>> {
    let document = if query.split('&').any(|q| q == "session") {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CreateSessionResult \
             xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Credentials>\
             <SessionToken>{SESSION_TOKEN}</SessionToken>\
             <SecretAccessKey>{SESSION_SECRET}</SecretAccessKey>\
             <AccessKeyId>{SESSION_KEY}</AccessKeyId>\
             <Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></CreateSessionResult>"
        )
    } else if method == Method::GET {
        listing
    } else {
        String::new()
    };
    Response::new(Full::new(Bytes::from(document)))
}

/// A connection whose first bytes (the request head read to see whether it was a CONNECT)
/// are read again.
struct Replay {
    head: Bytes,
    stream: tokio::net::TcpStream,
}

impl AsyncRead for Replay {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.head.is_empty() {
            let n = self.head.len().min(buf.remaining());
            buf.put_slice(&self.head.split_to(n));
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Replay {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

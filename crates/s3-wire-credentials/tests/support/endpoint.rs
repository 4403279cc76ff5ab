//! A scripted loopback HTTP endpoint for the credential sources' fakes (IMDS, the container
//! endpoint, STS, the SSO portal): every request is recorded and answered by a handler.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

use super::server::{ServerThread, loopback_listener};

/// A request as the endpoint received it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: Method,
    /// Path and query, as sent.
    pub target: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The decoded `name` of the query string or of a form-encoded body.
    pub fn param(&self, name: &str) -> Option<String> {
        let query = self.target.split_once('?').map(|(_, q)| q).unwrap_or("");
        let body = std::str::from_utf8(&self.body).unwrap_or("");
        query
            .split('&')
            .chain(body.split('&'))
            .filter_map(|pair| pair.split_once('='))
            .find(|(key, _)| *key == name)
            .map(|(_, value)| form_decode(value))
    }
}

fn form_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An answer of the endpoint.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    /// Wait this long before answering (a slow or stalled endpoint).
    pub delay: Duration,
}

impl Answer {
    pub fn new(status: u16, body: impl Into<Bytes>) -> Self {
        Self {
            status: StatusCode::from_u16(status).expect("status"),
            headers: Vec::new(),
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    pub fn ok(body: impl Into<Bytes>) -> Self {
        Self::new(200, body)
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

type Handler = dyn Fn(&Request) -> Answer + Send + Sync;

/// The endpoint: `http://{addr}`. Dropping it stops it.
pub struct Endpoint {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    _thread: ServerThread,
}

impl Endpoint {
    /// Starts an endpoint that answers every request with `handler`.
    pub fn start(handler: impl Fn(&Request) -> Answer + Send + Sync + 'static) -> Self {
        let handler: Arc<Handler> = Arc::new(handler);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (listener, addr) = loopback_listener();
        let recorded = requests.clone();
        let thread = ServerThread::start("fake-endpoint", listener, move |stream, _| {
            let handler = handler.clone();
            let recorded = recorded.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let handler = handler.clone();
                    let recorded = recorded.clone();
                    async move {
                        let (parts, body) = request.into_parts();
                        let body = body
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        let request = Request {
                            method: parts.method,
                            target: parts
                                .uri
                                .path_and_query()
                                .map(|pq| pq.as_str().to_owned())
                                .unwrap_or_default(),
                            headers: parts.headers,
                            body,
                        };
                        let answer = handler(&request);
                        recorded.lock().unwrap().push(request);
                        if !answer.delay.is_zero() {
                            tokio::time::sleep(answer.delay).await;
                        }
                        let mut response = http::Response::new(Full::new(answer.body));
                        *response.status_mut() = answer.status;
                        for (name, value) in &answer.headers {
                            response.headers_mut().append(
                                http::HeaderName::from_bytes(name.as_bytes()).expect("name"),
                                http::HeaderValue::from_str(value).expect("value"),
                            );
                        }
                        Ok::<_, std::convert::Infallible>(response)
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        });
        Self {
            addr,
            requests,
            _thread: thread,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

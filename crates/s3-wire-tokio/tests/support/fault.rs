//! A loopback HTTP/1.1 server (hyper 1) that answers each request with the next reply of a
//! script — S3 errors, dropped connections, truncated or stalled bodies — and records every
//! request it received, so tests can count attempts and check each one's signature.
//!
//! [`FaultServer::start_tls`] serves HTTPS instead, with a certificate generated at start for
//! the given host names (tests route those names to it with `ClientBuilder::resolve`).
//! [`FaultServer::start_tls_with`] takes a rustls configuration of the test's own (another
//! CA, other TLS versions, ALPN `h2`: a connection that negotiates `h2` is served over
//! HTTP/2), records each TLS session and keeps the raw bytes clients sent.
//!
//! It runs on its own thread and runtime (like `local-s3`), so it keeps answering whatever
//! the test's runtime does; dropping the [`FaultServer`] stops it and cuts open connections.

use std::collections::VecDeque;
use std::future::Future as _;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

pub use super::server::{ServerThread, loopback_listener};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode, Uri};
use http_body_util::BodyExt;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

/// What the server does with one request (after reading its whole body).
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete response.
    Respond {
        /// Status code.
        status: u16,
        /// Extra headers (a `content-length` here overrides the body's length).
        headers: Vec<(String, String)>,
        /// Body.
        body: Bytes,
    },
    /// Reset the connection (TCP RST) without answering.
    Reset,
    /// Announce `declared` bytes, send `sent` (fewer), then abort the connection.
    Truncated {
        /// Status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// `Content-Length` announced.
        declared: u64,
        /// Bytes actually sent.
        sent: Bytes,
    },
    /// Announce `declared` bytes, send `sent` (fewer), then keep the connection open forever.
    Stalled {
        /// Status code.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// `Content-Length` announced.
        declared: u64,
        /// Bytes actually sent.
        sent: Bytes,
    },
    /// Wait, then reply.
    Delayed(Duration, Box<Reply>),
    /// Read nothing of the request body and never answer (a stalled upload).
    IgnoreBody,
    /// A `200 OK` body of `len` bytes (byte `i` is [`generated_byte`]`(i)`), produced only as
    /// fast as the connection takes it; [`FaultServer::bytes_produced`] counts them.
    Generated {
        /// Body length.
        len: u64,
    },
}

/// Byte `offset` of a [`Reply::Generated`] body.
pub fn generated_byte(offset: u64) -> u8 {
    (offset % 251) as u8
}

/// The body of an S3 error document.
pub fn error_document(code: &str, message: &str, request_id: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code>\
         <Message>{message}</Message><RequestId>{request_id}</RequestId>\
         <HostId>fault-host-id</HostId></Error>"
    )
}

/// Stands for the request id inside a scripted body; replaced by the real one when sent.
const REQUEST_ID_PLACEHOLDER: &str = "{request-id}";

impl Reply {
    /// A complete response with `body` and no extra headers.
    pub fn ok(body: impl Into<Bytes>) -> Self {
        Reply::Respond {
            status: 200,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    /// An empty `200 OK`.
    pub fn empty() -> Self {
        Self::ok(Bytes::new())
    }

    /// A response with the S3 error document `code` and an XML content type.
    pub fn s3_error(status: u16, code: &str, message: &str) -> Self {
        Reply::Respond {
            status,
            headers: vec![("content-type".into(), "application/xml".into())],
            body: error_document(code, message, REQUEST_ID_PLACEHOLDER).into(),
        }
    }

    /// `503 SlowDown` (throttling).
    pub fn slow_down() -> Self {
        Self::s3_error(503, "SlowDown", "Please reduce your request rate.")
    }

    /// `400 RequestTimeout` (transient).
    pub fn request_timeout() -> Self {
        Self::s3_error(
            400,
            "RequestTimeout",
            "Your socket connection to the server was not read from or written to within the timeout period.",
        )
    }

    /// `500 InternalError` (transient).
    pub fn internal_error() -> Self {
        Self::s3_error(
            500,
            "InternalError",
            "We encountered an internal error. Please try again.",
        )
    }

    /// `403 AccessDenied` (not retryable).
    pub fn access_denied() -> Self {
        Self::s3_error(403, "AccessDenied", "Access Denied")
    }

    /// A `200 OK` whose body is an error document, preceded by the whitespace S3 sends to
    /// keep a long CompleteMultipartUpload / CopyObject connection alive.
    pub fn error_in_200(code: &str, message: &str) -> Self {
        Reply::Respond {
            status: 200,
            headers: vec![("content-type".into(), "application/xml".into())],
            body: format!(
                "\n \n {}",
                error_document(code, message, REQUEST_ID_PLACEHOLDER)
            )
            .into(),
        }
    }

    /// `301 PermanentRedirect` naming the bucket's region in `x-amz-bucket-region`.
    pub fn permanent_redirect(region: &str) -> Self {
        Reply::Respond {
            status: 301,
            headers: vec![
                ("content-type".into(), "application/xml".into()),
                ("x-amz-bucket-region".into(), region.into()),
            ],
            body: format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>PermanentRedirect</Code>\
                 <Message>The bucket you are attempting to access must be addressed using the \
                 specified endpoint. Please send all future requests to this endpoint.</Message>\
                 <Endpoint>s3.{region}.amazonaws.com</Endpoint>\
                 <RequestId>{REQUEST_ID_PLACEHOLDER}</RequestId><HostId>fault-host-id</HostId></Error>"
            )
            .into(),
        }
    }

    /// A `200 OK` object body of `len` bytes announced, `sent` of them delivered, then the
    /// connection is aborted.
    pub fn truncated(body: &[u8], sent: usize) -> Self {
        Reply::Truncated {
            status: 200,
            headers: Vec::new(),
            declared: body.len() as u64,
            sent: Bytes::copy_from_slice(&body[..sent]),
        }
    }

    /// A `200 OK` object body of `len` bytes announced, `sent` of them delivered, then nothing.
    pub fn stalled(body: &[u8], sent: usize) -> Self {
        Reply::Stalled {
            status: 200,
            headers: Vec::new(),
            declared: body.len() as u64,
            sent: Bytes::copy_from_slice(&body[..sent]),
        }
    }

    /// Adds a header to a reply that sends one.
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        match &mut self {
            Reply::Respond { headers, .. }
            | Reply::Truncated { headers, .. }
            | Reply::Stalled { headers, .. } => headers.push((name.into(), value.into())),
            Reply::Reset | Reply::IgnoreBody | Reply::Generated { .. } => {}
            Reply::Delayed(_, inner) => **inner = inner.as_ref().clone().with_header(name, value),
        }
        self
    }

    /// This reply, sent after `delay`.
    pub fn after(self, delay: Duration) -> Self {
        Reply::Delayed(delay, Box::new(self))
    }
}

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Request method.
    pub method: Method,
    /// Request target (path and query), as sent.
    pub uri: Uri,
    /// Request headers.
    pub headers: HeaderMap,
    /// The body bytes received (all of them unless `body_complete` is false).
    pub body: Bytes,
    /// False if the client stopped sending before the body was complete.
    pub body_complete: bool,
    /// Which TCP connection carried it (0, 1, … in accept order).
    pub connection: usize,
    /// The HTTP version it arrived in.
    pub version: http::Version,
}

impl Recorded {
    /// The value of header `name`, if present and valid UTF-8.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)?.to_str().ok()
    }
}

struct Shared {
    /// Bytes of [`Reply::Generated`] bodies handed to the connection so far.
    produced: Arc<AtomicU64>,
    script: VecDeque<Reply>,
    /// Used once the script is exhausted.
    fallback: Reply,
    requests: Vec<Recorded>,
    /// The TLS sessions established, in order.
    sessions: Vec<TlsSession>,
}

/// A TLS session a client established with the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSession {
    /// The negotiated protocol version.
    pub version: Option<rustls::ProtocolVersion>,
    /// The negotiated ALPN protocol, if any.
    pub alpn: Option<Vec<u8>>,
    /// The negotiated cipher suite.
    pub cipher_suite: Option<rustls::CipherSuite>,
}

/// The most raw client bytes a [`FaultServer::start_tls_with`] server keeps.
const TAP_LIMIT: usize = 1 << 20;

/// A running fault server; see the module docs.
pub struct FaultServer {
    addr: SocketAddr,
    /// The self-signed certificate of a TLS server (DER).
    certificate: Option<Vec<u8>>,
    shared: Arc<Mutex<Shared>>,
    /// What clients sent, as it came off the socket (TLS records), for `start_tls_with`.
    tapped: Option<Arc<Mutex<Vec<u8>>>>,
    _thread: ServerThread,
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A test that panicked while holding the lock must not hide its own failure behind ours.
    shared.lock().unwrap_or_else(|poison| poison.into_inner())
}

impl FaultServer {
    /// Starts a server on `127.0.0.1:0` answering with `script` in order, then with
    /// `500 InternalError` ("script exhausted") for any further request.
    pub fn start(script: impl IntoIterator<Item = Reply>) -> Self {
        Self::start_with_fallback(
            script,
            Reply::s3_error(500, "InternalError", "fault server: script exhausted"),
        )
    }

    /// Starts a server answering with `script`, then with `fallback` for every further request.
    pub fn start_with_fallback(script: impl IntoIterator<Item = Reply>, fallback: Reply) -> Self {
        Self::spawn(script, fallback, None, None)
    }

    /// Like [`FaultServer::start`] over TLS: a self-signed certificate valid for `names`
    /// (trust it with [`FaultServer::certificate_der`]), HTTP/1.1 only.
    pub fn start_tls(script: impl IntoIterator<Item = Reply>, names: &[&str]) -> Self {
        let names: Vec<String> = names.iter().map(|&name| name.to_owned()).collect();
        let generated = rcgen::generate_simple_self_signed(names).expect("self-signed certificate");
        let certificate = generated.cert.der().to_vec();
        let key =
            rustls::pki_types::PrivateKeyDer::Pkcs8(generated.signing_key.serialize_der().into());
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![certificate.clone().into()], key)
        .expect("server certificate");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let mut server = Self::spawn(
            script,
            Reply::s3_error(500, "InternalError", "fault server: script exhausted"),
            Some(acceptor),
            None,
        );
        server.certificate = Some(certificate);
        server
    }

    /// Like [`FaultServer::start`] over TLS with `config` (its certificate, versions and
    /// ALPN protocols: a connection that negotiates `h2` is served over HTTP/2). Records
    /// every TLS session ([`FaultServer::tls_sessions`]) and the first MiB of raw bytes
    /// clients sent ([`FaultServer::raw_received`]).
    pub fn start_tls_with(
        script: impl IntoIterator<Item = Reply>,
        config: rustls::ServerConfig,
    ) -> Self {
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        Self::spawn(
            script,
            Reply::s3_error(500, "InternalError", "fault server: script exhausted"),
            Some(acceptor),
            Some(Arc::new(Mutex::new(Vec::new()))),
        )
    }

    fn spawn(
        script: impl IntoIterator<Item = Reply>,
        fallback: Reply,
        tls: Option<tokio_rustls::TlsAcceptor>,
        tapped: Option<Arc<Mutex<Vec<u8>>>>,
    ) -> Self {
        let shared = Arc::new(Mutex::new(Shared {
            produced: Arc::new(AtomicU64::new(0)),
            script: script.into_iter().collect(),
            fallback,
            requests: Vec::new(),
            sessions: Vec::new(),
        }));
        let (listener, addr) = loopback_listener();
        let server_shared = Arc::clone(&shared);
        let server_tapped = tapped.clone();
        let mut connections = 0;
        let thread = ServerThread::start("fault-server", listener, move |stream, socket| {
            let connection = Connection {
                index: connections,
                socket: Arc::new(socket),
                kill: Arc::new(tokio::sync::Notify::new()),
            };
            connections += 1;
            let shared = Arc::clone(&server_shared);
            let tls = tls.clone();
            let tapped = server_tapped.clone();
            tokio::spawn(async move {
                match (tls, tapped) {
                    (Some(acceptor), Some(sink)) => {
                        let stream = Tap {
                            inner: stream,
                            sink,
                        };
                        if let Ok(stream) = acceptor.accept(stream).await {
                            let h2 = record_session(&shared, stream.get_ref().1);
                            serve_tls(stream, h2, shared, connection).await;
                        }
                    }
                    (Some(acceptor), None) => {
                        if let Ok(stream) = acceptor.accept(stream).await {
                            let h2 = record_session(&shared, stream.get_ref().1);
                            serve_tls(stream, h2, shared, connection).await;
                        }
                    }
                    (None, _) => serve_connection(stream, shared, connection).await,
                }
            });
        });
        Self {
            addr,
            certificate: None,
            shared,
            tapped,
            _thread: thread,
        }
    }

    /// The TLS sessions clients established, in order.
    pub fn tls_sessions(&self) -> Vec<TlsSession> {
        lock(&self.shared).sessions.clone()
    }

    /// The raw bytes clients sent (the first MiB), for a server from
    /// [`FaultServer::start_tls_with`].
    pub fn raw_received(&self) -> Vec<u8> {
        let tapped = self.tapped.as_ref().expect("a start_tls_with server");
        tapped.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The DER certificate of a server started with [`FaultServer::start_tls`].
    pub fn certificate_der(&self) -> Vec<u8> {
        self.certificate.clone().expect("a TLS fault server")
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared).requests.clone()
    }

    /// How many requests were received so far.
    pub fn request_count(&self) -> usize {
        lock(&self.shared).requests.len()
    }

    /// Appends replies to the script.
    pub fn push(&self, replies: impl IntoIterator<Item = Reply>) {
        lock(&self.shared).script.extend(replies);
    }

    /// Bytes of [`Reply::Generated`] bodies produced so far (taken by the connection).
    pub fn bytes_produced(&self) -> u64 {
        lock(&self.shared).produced.load(Ordering::SeqCst)
    }

    /// Forgets the recorded requests (e.g. after a warm-up request).
    pub fn clear_requests(&self) {
        lock(&self.shared).requests.clear();
    }
}

/// One accepted connection: its index, and a second handle on its socket so that a
/// [`Reply::Reset`] can turn the close into a TCP RST after hyper took the stream.
#[derive(Clone)]
struct Connection {
    index: usize,
    socket: Arc<tokio::net::TcpStream>,
    /// Ends an HTTP/2 connection (where failing one request resets only its stream).
    kill: Arc<tokio::sync::Notify>,
}

/// Records the session of a TLS connection; true if it negotiated ALPN `h2`.
fn record_session(shared: &Mutex<Shared>, session: &rustls::ServerConnection) -> bool {
    let alpn = session.alpn_protocol().map(<[u8]>::to_vec);
    let h2 = alpn.as_deref() == Some(b"h2");
    lock(shared).sessions.push(TlsSession {
        version: session.protocol_version(),
        alpn,
        cipher_suite: session.negotiated_cipher_suite().map(|suite| suite.suite()),
    });
    h2
}

async fn serve_tls<S>(stream: S, h2: bool, shared: Arc<Mutex<Shared>>, connection: Connection)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    if !h2 {
        return serve_connection(stream, shared, connection).await;
    }
    let kill = Arc::clone(&connection.kill);
    let service = service_fn(move |request| {
        let shared = Arc::clone(&shared);
        let connection = connection.clone();
        async move { handle(request, &shared, &connection).await }
    });
    let serve = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
        .serve_connection(TokioIo::new(stream), service);
    // A scripted reset drops the whole connection (its socket closes with an RST), as over
    // HTTP/1.1; a failing body resets only its stream (RST_STREAM).
    tokio::select! {
        _ = serve => {}
        () = kill.notified() => {}
    }
}

/// A stream that keeps a copy of what it reads (up to [`TAP_LIMIT`] bytes in all).
struct Tap<S> {
    inner: S,
    sink: Arc<Mutex<Vec<u8>>>,
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Tap<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = result {
            let mut sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
            let room = TAP_LIMIT.saturating_sub(sink.len());
            let new = &buf.filled()[before..];
            sink.extend_from_slice(&new[..new.len().min(room)]);
        }
        result
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Tap<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

async fn serve_connection<S>(stream: S, shared: Arc<Mutex<Shared>>, connection: Connection)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request| {
        let shared = Arc::clone(&shared);
        let connection = connection.clone();
        async move { handle(request, &shared, &connection).await }
    });
    // Errors are the point of this server (resets, aborted bodies): ignore them.
    let _ = http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

async fn handle(
    request: http::Request<Incoming>,
    shared: &Mutex<Shared>,
    connection: &Connection,
) -> Result<Response<ScriptedBody>, io::Error> {
    let (parts, mut body) = request.into_parts();
    let ignore_body = {
        let mut shared = lock(shared);
        if matches!(shared.script.front(), Some(Reply::IgnoreBody)) {
            shared.script.pop_front();
            shared.requests.push(Recorded {
                method: parts.method.clone(),
                uri: parts.uri.clone(),
                headers: parts.headers.clone(),
                body: Bytes::new(),
                body_complete: false,
                connection: connection.index,
                version: parts.version,
            });
            true
        } else {
            false
        }
    };
    if ignore_body {
        // Keep the body unread (the client's writes stall once the socket buffers fill).
        std::future::pending::<()>().await;
    }
    // Read the body frame by frame so that a client abandoning its upload is still recorded.
    let mut received = Vec::new();
    let mut body_complete = true;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Some(data) = frame.data_ref() {
                    received.extend_from_slice(data);
                }
            }
            Err(_) => {
                body_complete = false;
                break;
            }
        }
    }
    let (index, mut reply, produced) = {
        let mut shared = lock(shared);
        shared.requests.push(Recorded {
            method: parts.method,
            uri: parts.uri,
            headers: parts.headers,
            version: parts.version,
            body: received.into(),
            body_complete,
            connection: connection.index,
        });
        let reply = match shared.script.pop_front() {
            Some(reply) => reply,
            None => shared.fallback.clone(),
        };
        (
            shared.requests.len() - 1,
            reply,
            Arc::clone(&shared.produced),
        )
    };
    if !body_complete {
        return Err(io::Error::other("request body aborted by the client"));
    }
    let request_id = format!("fault-req-{index}");
    while let Reply::Delayed(delay, inner) = reply {
        tokio::time::sleep(delay).await;
        reply = *inner;
    }
    let (status, headers, body) = match reply {
        Reply::Reset => {
            // An abortive close: the client reads ECONNRESET, not an orderly end of stream.
            connection.socket.set_zero_linger()?;
            connection.kill.notify_one();
            return Err(io::Error::other("scripted reset"));
        }
        Reply::Respond {
            status,
            headers,
            body,
        } => {
            let body = replace_request_id(body, &request_id);
            let length = body.len() as u64;
            (status, headers, ScriptedBody::new(body, length, Tail::End))
        }
        Reply::Truncated {
            status,
            headers,
            declared,
            sent,
        } => (
            status,
            headers,
            ScriptedBody::new(sent, declared, Tail::Abort),
        ),
        Reply::Stalled {
            status,
            headers,
            declared,
            sent,
        } => (
            status,
            headers,
            ScriptedBody::new(sent, declared, Tail::Hang),
        ),
        Reply::Delayed(..) => unreachable!("delays were unwrapped above"),
        Reply::IgnoreBody => unreachable!("handled before the body was read"),
        Reply::Generated { len } => {
            let mut body = ScriptedBody::new(Bytes::new(), len, Tail::End);
            body.generated = Some(Generated {
                offset: 0,
                produced,
            });
            (200, Vec::new(), body)
        }
    };
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::from_u16(status).expect("scripted status code");
    let declared = response.body().declared;
    let map = response.headers_mut();
    map.insert(http::header::CONTENT_LENGTH, HeaderValue::from(declared));
    map.insert(
        "x-amz-request-id",
        HeaderValue::from_str(&request_id).expect("request id header"),
    );
    for (name, value) in headers {
        map.insert(
            HeaderName::from_bytes(name.as_bytes()).expect("scripted header name"),
            HeaderValue::from_str(&value).expect("scripted header value"),
        );
    }
    Ok(response)
}

fn replace_request_id(body: Bytes, request_id: &str) -> Bytes {
    match std::str::from_utf8(&body) {
        Ok(text) if text.contains(REQUEST_ID_PLACEHOLDER) => {
            Bytes::from(text.replace(REQUEST_ID_PLACEHOLDER, request_id))
        }
        _ => body,
    }
}

/// What a scripted body does after its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Ends normally.
    End,
    /// Fails, which makes hyper abort the connection; after a pause, so that the data sent
    /// before is flushed to the client first.
    Abort,
    /// Never ends.
    Hang,
}

/// A response body: one data frame, then [`Tail`].
pub struct ScriptedBody {
    data: Option<Bytes>,
    declared: u64,
    tail: Tail,
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
    generated: Option<Generated>,
}

/// State of a [`Reply::Generated`] body.
struct Generated {
    offset: u64,
    produced: Arc<AtomicU64>,
}

/// Frame size of generated bodies.
const GENERATED_FRAME: u64 = 64 * 1024;

impl ScriptedBody {
    /// `data` in one frame with `declared` announced as `Content-Length`, then `tail`.
    pub fn new(data: Bytes, declared: u64, tail: Tail) -> Self {
        Self {
            data: (!data.is_empty()).then_some(data),
            declared,
            tail,
            pause: None,
            generated: None,
        }
    }
}

impl hyper::body::Body for ScriptedBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        if let Some(data) = self.data.take() {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        let declared = self.declared;
        if let Some(generated) = self.generated.as_mut() {
            // Called only when hyper can take more: counting here measures backpressure.
            let len = GENERATED_FRAME.min(declared - generated.offset);
            if len == 0 {
                return Poll::Ready(None);
            }
            let frame: Vec<u8> = (generated.offset..generated.offset + len)
                .map(generated_byte)
                .collect();
            generated.offset += len;
            generated.produced.fetch_add(len, Ordering::SeqCst);
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(frame)))));
        }
        match self.tail {
            Tail::End => Poll::Ready(None),
            Tail::Hang => Poll::Pending,
            Tail::Abort => {
                let pause = self
                    .pause
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(Duration::from_millis(50))));
                match pause.as_mut().poll(cx) {
                    Poll::Ready(()) => {
                        Poll::Ready(Some(Err(io::Error::other("scripted truncation"))))
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        let generating = self
            .generated
            .as_ref()
            .is_some_and(|g| g.offset < self.declared);
        self.tail == Tail::End && self.data.is_none() && !generating
    }

    fn size_hint(&self) -> SizeHint {
        // Never exact: hyper must send our `content-length` header as is (it is a lie for
        // truncated and stalled bodies, and differs from the empty body of a HEAD reply).
        SizeHint::default()
    }
}

/// [`super::sigv4::verify`] for a request recorded by the fault server.
pub fn verify_recorded(
    request: &Recorded,
    secret_key: &str,
) -> Result<super::sigv4::Signed, String> {
    let target = request
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    super::sigv4::verify(
        request.method.as_str(),
        target,
        &request.headers,
        Some(&request.body),
        secret_key,
    )
}

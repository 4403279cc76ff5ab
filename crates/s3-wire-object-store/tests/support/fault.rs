//! A minimal loopback HTTP/1.1 server (hyper) that answers each request with what a handler
//! decides from it and records every request, for what local-s3 cannot show: the exact
//! requests of an abort, and answers (status codes, error documents) chosen by the test.
//! It runs on its own thread and runtime, so it keeps answering whatever the test's runtime
//! does; dropping it stops it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response};
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::sync::oneshot;

/// A request as received (its body read whole).
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: Method,
    /// Path and query, as sent.
    pub target: String,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Recorded {
    pub fn query_has(&self, name: &str) -> bool {
        let query = self.target.split_once('?').map_or("", |(_, q)| q);
        query
            .split('&')
            .any(|pair| pair == name || pair.starts_with(&format!("{name}=")))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// An answer: status, headers, body, after an optional delay.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Bytes,
    pub delay: Duration,
}

impl Reply {
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Bytes::new(),
            delay: Duration::ZERO,
        }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// An S3 error document.
    pub fn s3_error(status: u16, code: &str) -> Self {
        Self::new(status)
            .header("content-type", "application/xml")
            .header("x-amz-request-id", "REQ-FAULT-1")
            .body(format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code>\
                 <Message>scripted {code}</Message><RequestId>REQ-FAULT-1</RequestId></Error>"
            ))
    }
}

type Handler = dyn Fn(&Recorded) -> Reply + Send + Sync;

pub struct FaultServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FaultServer {
    pub fn start(handler: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Self {
        let handler: Arc<Handler> = Arc::new(handler);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let (stop, mut stopped) = oneshot::channel::<()>();
        let recorded = requests.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                loop {
                    let (socket, _) = tokio::select! {
                        _ = &mut stopped => return,
                        accepted = listener.accept() => match accepted {
                            Ok(accepted) => accepted,
                            Err(_) => continue,
                        },
                    };
                    let (handler, recorded) = (handler.clone(), recorded.clone());
                    tokio::spawn(async move {
                        let service =
                            service_fn(move |request: http::Request<hyper::body::Incoming>| {
                                let (handler, recorded) = (handler.clone(), recorded.clone());
                                async move {
                                    let (parts, body) = request.into_parts();
                                    let body = body
                                        .collect()
                                        .await
                                        .map(|b| b.to_bytes())
                                        .unwrap_or_default();
                                    let request = Recorded {
                                        method: parts.method,
                                        target: parts
                                            .uri
                                            .path_and_query()
                                            .map(|p| p.to_string())
                                            .unwrap_or_default(),
                                        headers: parts.headers,
                                        body,
                                    };
                                    let reply = handler(&request);
                                    recorded.lock().unwrap().push(request);
                                    tokio::time::sleep(reply.delay).await;
                                    let mut response = Response::builder().status(reply.status);
                                    for (name, value) in &reply.headers {
                                        response = response.header(*name, value);
                                    }
                                    Ok::<_, Infallible>(
                                        response.body(Full::new(reply.body)).unwrap(),
                                    )
                                }
                            });
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(socket), service)
                            .await;
                    });
                }
            });
        });
        Self {
            addr,
            requests,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// A client of this server with fast retries.
    pub fn client(&self, max_attempts: u32) -> s3_wire_tokio::Client {
        super::install_crypto_provider();
        s3_wire_tokio::Client::builder()
            .endpoint(self.endpoint())
            .region("us-east-1")
            .static_credentials("AKID", "secret", None)
            .retry(
                s3_wire_tokio::RetryConfig::default()
                    .with_max_attempts(max_attempts)
                    .with_delays(Duration::from_millis(1), Duration::from_millis(10)),
            )
            .build()
            .expect("client")
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

//! A minimal HTTP `CONNECT` proxy on loopback, for the proxy tests: it records each request
//! line (and the `Proxy-Authorization` it came with), can demand Basic credentials (407
//! without them), can itself speak TLS (an HTTPS proxy, with a certificate of the test's
//! choosing), and tunnels every accepted connection to one origin, whatever host it names.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::server::{ServerThread, loopback_listener};

/// One request the proxy received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyRequest {
    /// `CONNECT host:port`, without the version.
    pub target: String,
    /// The `Proxy-Authorization` header, if any.
    pub authorization: Option<String>,
}

/// What the proxy demands and how it listens.
#[derive(Default)]
pub struct ProxyOptions {
    /// `Basic <base64(user:password)>` that must accompany every CONNECT.
    pub credentials: Option<(String, String)>,
    /// Serve TLS with this configuration (an HTTPS proxy).
    pub tls: Option<rustls::ServerConfig>,
}

/// The running proxy; dropping it stops it.
pub struct ConnectProxy {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<ProxyRequest>>>,
    _thread: ServerThread,
}

impl ConnectProxy {
    /// A proxy tunnelling to `origin`.
    pub fn start(origin: SocketAddr, options: ProxyOptions) -> Self {
        let (listener, addr) = loopback_listener();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        let expected = options.credentials.map(|(user, password)| {
            format!(
                "Basic {}",
                super::base64(format!("{user}:{password}").as_bytes())
            )
        });
        let acceptor = options
            .tls
            .map(|config| tokio_rustls::TlsAcceptor::from(Arc::new(config)));
        let thread = ServerThread::start("connect-proxy", listener, move |stream, _| {
            let (recorded, expected, acceptor) =
                (recorded.clone(), expected.clone(), acceptor.clone());
            tokio::spawn(async move {
                match acceptor {
                    Some(acceptor) => {
                        if let Ok(stream) = acceptor.accept(stream).await {
                            serve(stream, origin, &recorded, expected.as_deref()).await;
                        }
                    }
                    None => serve(stream, origin, &recorded, expected.as_deref()).await,
                }
            });
        });
        Self {
            addr,
            requests,
            _thread: thread,
        }
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<ProxyRequest> {
        self.requests.lock().unwrap().clone()
    }
}

async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    mut client: S,
    origin: SocketAddr,
    recorded: &Mutex<Vec<ProxyRequest>>,
    expected: Option<&str>,
) {
    // The request head, byte by byte up to the blank line (a tunnel must not read past it).
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 8192 {
        if client.read_exact(&mut byte).await.is_err() {
            return;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.lines();
    let request_line = lines.next().unwrap_or_default();
    let target = request_line
        .rsplit_once(' ')
        .map_or(request_line, |(t, _)| t)
        .to_owned();
    let authorization = lines
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("proxy-authorization"))
        .map(|(_, value)| value.trim().to_owned());
    recorded.lock().unwrap().push(ProxyRequest {
        target,
        authorization: authorization.clone(),
    });
    if !request_line.starts_with("CONNECT ") {
        let _ = client
            .write_all(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
            .await;
        return;
    }
    if expected.is_some() && authorization.as_deref() != expected {
        let _ = client
            .write_all(
                b"HTTP/1.1 407 Proxy Authentication Required\r\n\
                  proxy-authenticate: Basic realm=\"test\"\r\ncontent-length: 0\r\n\r\n",
            )
            .await;
        return;
    }
    let Ok(mut upstream) = tokio::net::TcpStream::connect(origin).await else {
        let _ = client
            .write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
            .await;
        return;
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

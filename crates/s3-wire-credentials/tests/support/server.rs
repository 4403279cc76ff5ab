//! Loopback servers' plumbing, shared by the test suites of s3-wire-credentials and
//! s3-wire-tokio (which includes this file): a listener on `127.0.0.1:0` and a thread with
//! its own runtime that serves it until dropped.

use std::io;
use std::net::SocketAddr;

use tokio::sync::oneshot;

/// `127.0.0.1:0`, bound and non-blocking (for [`ServerThread::start`]), and its address.
pub fn loopback_listener() -> (std::net::TcpListener, SocketAddr) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let addr = listener.local_addr().expect("local address");
    (listener, addr)
}

/// A loopback server's thread, with a current-thread runtime of its own (so that it keeps
/// answering whatever the test's runtime does). Dropping it stops accepting connections and
/// cuts the ones still open, stalled ones included.
pub struct ServerThread {
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ServerThread {
    /// Starts thread `name`, which accepts connections on `listener` (see
    /// [`loopback_listener`]) and hands each to `accept` with a second handle of its socket
    /// (see [`with_socket_handle`]). `accept` runs inside the server's runtime: it spawns what
    /// serves the connection.
    pub fn start(
        name: &str,
        listener: std::net::TcpListener,
        accept: impl FnMut(tokio::net::TcpStream, tokio::net::TcpStream) + Send + 'static,
    ) -> Self {
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("server runtime");
                runtime.block_on(accept_until_shutdown(listener, shutdown_rx, accept));
                // Stalled connections are still open: cut them.
                runtime.shutdown_background();
            })
            .expect("spawn server thread");
        Self {
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
        }
    }
}

impl Drop for ServerThread {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn accept_until_shutdown(
    listener: std::net::TcpListener,
    mut shutdown: oneshot::Receiver<()>,
    mut accept: impl FnMut(tokio::net::TcpStream, tokio::net::TcpStream),
) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
            _ = &mut shutdown => return,
        };
        let Ok((stream, socket)) = with_socket_handle(stream) else {
            continue;
        };
        accept(stream, socket);
    }
}

/// `stream` and a duplicate handle of the same socket. The socket closes (FIN, or RST once
/// `SO_LINGER` is zero) when the last of the two is dropped.
pub fn with_socket_handle(
    stream: tokio::net::TcpStream,
) -> io::Result<(tokio::net::TcpStream, tokio::net::TcpStream)> {
    let stream = stream.into_std()?;
    let duplicate = stream.try_clone()?;
    Ok((
        tokio::net::TcpStream::from_std(stream)?,
        tokio::net::TcpStream::from_std(duplicate)?,
    ))
}

//! An embedded S3-compatible server for tests, examples and the perf harness.
//!
//! [`LocalS3::start`] runs [`s3s-fs`](https://crates.io/crates/s3s-fs) on
//! `127.0.0.1:0` over a fresh temporary data directory, with real SigV4
//! verification (`s3s::auth::SimpleAuth`), on its own thread and Tokio runtime.
//! It hands back the endpoint URL and the credentials; dropping the handle stops
//! the server and removes the directory.
//!
//! The server runs on a dedicated runtime so that it keeps answering whatever the
//! caller's runtime does (a current-thread test runtime, a blocking example, a
//! benchmark that saturates its own workers).
//!
//! Known gaps of s3s-fs 0.14 (do not assert these semantics against it): no
//! ListMultipartUploads, tagging or versioning; DeleteBucket removes non-empty
//! buckets; PutObject into a missing bucket succeeds.
//!
//! ```no_run
//! let server = local_s3::LocalS3::start().expect("start local S3");
//! println!("{} {} {}", server.endpoint(), server.access_key(), server.region());
//! // … point a client at server.endpoint() with server.access_key()/secret_key() …
//! drop(server); // stops the server, deletes its data directory
//! ```

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// Access key id the server accepts unless [`Options::access_key`] says otherwise.
pub const DEFAULT_ACCESS_KEY: &str = "local-s3-access-key";
/// Secret access key the server accepts unless [`Options::secret_key`] says otherwise.
pub const DEFAULT_SECRET_KEY: &str = "local-s3-secret-key-0123456789";
/// Region the server's clients should sign for (s3s-fs answers for any region).
pub const REGION: &str = "us-east-1";

/// How to start a [`LocalS3`] server.
#[derive(Clone)]
#[non_exhaustive]
pub struct Options {
    /// Port on 127.0.0.1; `0` picks a free one.
    pub port: u16,
    /// Where objects are stored; `None` creates a temporary directory that is
    /// removed when the server is dropped. A given directory is kept.
    pub data_dir: Option<PathBuf>,
    /// Access key id that requests must be signed with.
    pub access_key: String,
    /// Secret key that requests must be signed with.
    pub secret_key: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            port: 0,
            data_dir: None,
            access_key: DEFAULT_ACCESS_KEY.to_owned(),
            secret_key: DEFAULT_SECRET_KEY.to_owned(),
        }
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("port", &self.port)
            .field("data_dir", &self.data_dir)
            .field("access_key", &self.access_key)
            .field("secret_key", &"<redacted>")
            .finish()
    }
}

/// A running in-process S3-compatible server. Dropping it stops the server and
/// removes its temporary data directory (if it created one).
pub struct LocalS3 {
    addr: SocketAddr,
    endpoint: String,
    access_key: String,
    secret_key: String,
    data_dir: PathBuf,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    // Declared last: removed after the server thread has stopped.
    _temp_dir: Option<tempfile::TempDir>,
}

impl LocalS3 {
    /// Starts a server on `127.0.0.1:0` over a fresh temporary directory with
    /// the default credentials.
    pub fn start() -> io::Result<Self> {
        Self::start_with(Options::default())
    }

    /// Starts a server with the given options.
    pub fn start_with(options: Options) -> io::Result<Self> {
        let (temp_dir, data_dir) = match &options.data_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir)?;
                (None, dir.clone())
            }
            None => {
                let dir = tempfile::Builder::new().prefix("local-s3-").tempdir()?;
                let path = dir.path().to_path_buf();
                (Some(dir), path)
            }
        };
        let fs = s3s_fs::FileSystem::new(&data_dir)
            .map_err(|err| io::Error::other(format!("s3s-fs: {err:?}")))?;
        let service = {
            let mut builder = S3ServiceBuilder::new(fs);
            builder.set_auth(SimpleAuth::from_single(
                options.access_key.clone(),
                options.secret_key.clone(),
            ));
            builder.build()
        };

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("local-s3")
            .enable_all()
            .build()?;
        let listener = runtime.block_on(TcpListener::bind((Ipv4Addr::LOCALHOST, options.port)))?;
        let addr = listener.local_addr()?;
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("local-s3".into())
            .spawn(move || {
                runtime.block_on(serve(listener, service, shutdown_rx, ready_tx));
                // Connections still open are cut here, without waiting for idle clients.
                runtime.shutdown_timeout(Duration::from_millis(100));
            })?;
        ready_rx
            .recv()
            .map_err(|_| io::Error::other("local-s3 server thread exited during start"))?;

        Ok(Self {
            addr,
            endpoint: format!("http://{addr}"),
            access_key: options.access_key,
            secret_key: options.secret_key,
            data_dir,
            shutdown: Some(shutdown_tx),
            thread: Some(thread),
            _temp_dir: temp_dir,
        })
    }

    /// The endpoint URL, `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The access key id requests must be signed with.
    pub fn access_key(&self) -> &str {
        &self.access_key
    }

    /// The secret key requests must be signed with.
    pub fn secret_key(&self) -> &str {
        &self.secret_key
    }

    /// The region clients should sign for.
    pub fn region(&self) -> &str {
        REGION
    }

    /// The directory holding the stored objects (one subdirectory per bucket).
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Stops the server and waits for its thread; also done by `Drop`.
    pub fn stop(mut self) {
        self.stop_inner();
    }

    fn stop_inner(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for LocalS3 {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

impl fmt::Debug for LocalS3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalS3")
            .field("endpoint", &self.endpoint)
            .field("access_key", &self.access_key)
            .field("secret_key", &"<redacted>")
            .field("data_dir", &self.data_dir)
            .finish()
    }
}

async fn serve(
    listener: TcpListener,
    service: s3s::service::S3Service,
    mut shutdown: oneshot::Receiver<()>,
    ready: mpsc::Sender<()>,
) {
    let http = ConnBuilder::new(TokioExecutor::new());
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let _ = ready.send(());
    loop {
        let socket = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => socket,
                // Transient accept errors (EMFILE, ECONNABORTED): keep serving.
                Err(_) => continue,
            },
            _ = &mut shutdown => break,
        };
        let _ = socket.set_nodelay(true);
        let conn = http.serve_connection(TokioIo::new(socket), service.clone());
        let conn = graceful.watch(conn.into_owned());
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
    drop(listener);
    // In-flight requests get a moment to finish; idle keep-alive connections do not hold us.
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(1)) => {}
    }
}

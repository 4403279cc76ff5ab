//! The client against hostile servers: each answer is built to exhaust memory or time
//! (endless headers, endless or overlong bodies, a response head trickled byte by byte,
//! redirect loops, a listing without end), and each must end in a typed error within its
//! bound, having read no more than its limits allow. Memory is judged by what the client
//! exposes (bytes received, the limit in the error) and by what the server managed to
//! write, not by the process's RSS.

mod support;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::{Client, ClientBuilder, Error, ErrorKind, TimeoutKind, TransportErrorKind};
use support::fault::{FaultServer, Recorded, Reply};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const ACCESS_KEY: &str = "AKIDHOSTILE";
const SECRET_KEY: &str = "hostile-secret-key";

/// The response-size bound of s3-ops for operations decoded in memory.
const LIMIT: usize = s3_wire_tokio::s3_ops::RESPONSE_BODY_LIMIT;

/// Far more than any bounded client lets a server write (its limits plus the loopback
/// socket buffers, which autotuning grows to tens of MiB); far less than an unbounded one
/// takes before the safety-net operation timeout.
const WRITE_BOUND: u64 = 128 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// A raw HTTP/1.1 server: whatever bytes a test writes, counted
// ---------------------------------------------------------------------------------------------

/// A loopback TCP server that hands each connection (with its index) to a test's script.
struct RawServer {
    addr: SocketAddr,
    /// Bytes the scripts managed to write, over all connections.
    written: Arc<AtomicU64>,
    /// Connections accepted.
    connections: Arc<AtomicUsize>,
    /// Request heads read by the scripts.
    heads: Arc<Mutex<Vec<String>>>,
}

/// One connection of a [`RawServer`].
struct RawConn {
    stream: TcpStream,
    buffer: Vec<u8>,
    written: Arc<AtomicU64>,
    heads: Arc<Mutex<Vec<String>>>,
}

impl RawConn {
    /// Reads the next request head (the tests' requests have no body); `None` at the end.
    async fn read_head(&mut self) -> Option<String> {
        loop {
            if let Some(end) = self.buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                let head: Vec<u8> = self.buffer.drain(..end + 4).collect();
                let head = String::from_utf8_lossy(&head).into_owned();
                self.heads.lock().unwrap().push(head.clone());
                return Some(head);
            }
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buffer.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// Writes `bytes` (and counts them once written).
    async fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes).await?;
        self.written.fetch_add(bytes.len() as u64, Ordering::SeqCst);
        Ok(())
    }
}

impl RawServer {
    async fn start<F, Fut>(script: F) -> Self
    where
        F: Fn(usize, RawConn) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = Self {
            addr: listener.local_addr().unwrap(),
            written: Arc::default(),
            connections: Arc::default(),
            heads: Arc::default(),
        };
        let (written, connections, heads) = (
            server.written.clone(),
            server.connections.clone(),
            server.heads.clone(),
        );
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let index = connections.fetch_add(1, Ordering::SeqCst);
                let conn = RawConn {
                    stream,
                    buffer: Vec::new(),
                    written: written.clone(),
                    heads: heads.clone(),
                };
                tokio::spawn(script(index, conn));
            }
        });
        server
    }

    fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn written(&self) -> u64 {
        self.written.load(Ordering::SeqCst)
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// A loopback listener that only counts the connections made to it (a redirect target
/// that must never be contacted).
async fn counting_listener() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    tokio::spawn(async move {
        while let Ok((_socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    (addr, count)
}

/// A complete, well-formed response that would look like a real answer if a client ever
/// took it for the next response on the connection.
const SMUGGLED: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-length: 8\r\nx-amz-meta-smuggled: yes\r\n\
                          etag: \"smuggled\"\r\n\r\nsmuggled";

/// An honest `200 OK` with `body`, and the given extra header lines.
fn honest(body: &[u8], headers: &str) -> Vec<u8> {
    let mut response = format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nx-amz-request-id: honest\r\n{headers}\r\n",
        body.len()
    )
    .into_bytes();
    response.extend_from_slice(body);
    response
}

fn builder(endpoint: &str) -> ClientBuilder {
    Client::builder()
        .endpoint(endpoint)
        .region("us-east-1")
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .retry(support::retry(3))
        // The safety net: an unbounded client would hit this instead of the bound tested.
        .operation_timeout(Duration::from_secs(20))
}

fn bucket() -> s3_wire_tokio::s3_ops::BucketName {
    s3_wire_tokio::bucket("bucket").unwrap()
}

fn get(key: &str) -> GetObject {
    GetObject::new(bucket(), s3_wire_tokio::key(key).unwrap())
}

fn head(key: &str) -> HeadObject {
    HeadObject::new(bucket(), s3_wire_tokio::key(key).unwrap())
}

/// Waits (a little) until the server's scripts stop writing: the client closed its end.
async fn settled_written(server: &RawServer) -> u64 {
    let mut last = server.written();
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = server.written();
        if now == last {
            return now;
        }
        last = now;
    }
    panic!("the server is still writing ({last} bytes): the client keeps reading");
}

// ---------------------------------------------------------------------------------------------
// Response heads
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn endless_response_headers_end_in_an_error_after_a_bounded_head() {
    let server = RawServer::start(|_, mut conn| async move {
        if conn.read_head().await.is_none() {
            return;
        }
        if conn.write(b"HTTP/1.1 200 OK\r\n").await.is_err() {
            return;
        }
        let filler = format!("x-amz-meta-filler: {}\r\n", "f".repeat(200));
        while conn.write(filler.as_bytes()).await.is_ok() {}
    })
    .await;
    let client = builder(&server.endpoint()).build().unwrap();
    let err = client.send(head("k")).await.unwrap_err();
    // hyper gives up on the head after 100 fields; the request is sent once more to read up
    // to 1,024, and hyper gives up again at its read buffer (about 400 KiB; its source is
    // hyper's `Parse(TooLarge)`): not usable HTTP, and not retried (asking again gets the
    // same answer).
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Transport(TransportErrorKind::Protocol)
        ),
        "{err:?}"
    );
    assert_eq!(err.attempts(), 2, "{err:?}");
    assert_eq!(server.connections(), 2);
    let written = settled_written(&server).await;
    assert!(
        written < WRITE_BOUND,
        "the server wrote {written} bytes of headers"
    );
}

#[tokio::test]
async fn an_answer_that_is_not_http_is_a_transport_error() {
    let server = RawServer::start(|_, mut conn| async move {
        if conn.read_head().await.is_some() {
            let _ = conn.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n").await;
        }
    })
    .await;
    let client = builder(&server.endpoint()).build().unwrap();
    let err = client.send(head("k")).await.unwrap_err();
    // hyper's `Parse(Version)`: the server does not speak HTTP. A protocol error, not a
    // dropped connection to retry.
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Transport(TransportErrorKind::Protocol)
        ),
        "{err:?}"
    );
    assert_eq!(err.attempts(), 1, "{err:?}");
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn a_head_with_hundreds_of_metadata_entries_is_read_whole() {
    // S3 keeps up to 2 KB of user metadata: several hundred short entries are a valid
    // object, above hyper's default limit of 100 header fields, which the client's common
    // HTTP client keeps (a limit of its own costs every response): such a head is asked
    // for again from a client that reads up to 1,024 fields.
    for (entries, connections) in [(98, 1), (600, 2)] {
        let server = RawServer::start(move |_, mut conn| async move {
            if conn.read_head().await.is_none() {
                return;
            }
            let mut head = String::from("HTTP/1.1 200 OK\r\ncontent-length: 5\r\netag: \"e\"\r\n");
            for index in 0..entries {
                head.push_str(&format!("x-amz-meta-k{index}: v\r\n"));
            }
            head.push_str("\r\n");
            let _ = conn.write(head.as_bytes()).await;
        })
        .await;
        let client = builder(&server.endpoint()).build().unwrap();
        let output = client
            .send(head("k"))
            .await
            .unwrap_or_else(|e| panic!("{entries} entries: {e:?}"));
        assert_eq!(output.metadata.len(), entries);
        let last = format!("k{}", entries - 1);
        assert_eq!(output.metadata.get(&last).map(String::as_str), Some("v"));
        assert_eq!(server.connections(), connections, "{entries} entries");
    }
}

#[tokio::test]
async fn a_slowloris_response_head_is_cut_off_by_the_stall_and_the_operation_timeouts() {
    // One byte every 100 ms of a header line that never ends. The bytes of a response head
    // are not progress the client can see (only body bytes are), so the stall limit fires.
    let trickle = || {
        RawServer::start(|_, mut conn| async move {
            if conn.read_head().await.is_none() {
                return;
            }
            if conn.write(b"HTTP/1.1 200 OK\r\nx-slow: ").await.is_err() {
                return;
            }
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                if conn.write(b"z").await.is_err() {
                    return;
                }
            }
        })
    };

    let server = trickle().await;
    let stall = Duration::from_millis(300);
    let client = builder(&server.endpoint())
        .stall_timeout(stall)
        .retry(support::retry(2))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.get_object(get("k")).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Timeout(TimeoutKind::Stalled(limit)) if *limit == stall),
        "{err:?}"
    );
    assert_eq!(err.attempts(), 2);
    assert_eq!(server.connections(), 2);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    // With a long stall limit, the operation deadline ends it.
    let server = trickle().await;
    let deadline = Duration::from_millis(700);
    let client = builder(&server.endpoint())
        .stall_timeout(Duration::from_secs(60))
        .operation_timeout(deadline)
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client.get_object(get("k")).await.unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Timeout(TimeoutKind::Operation(limit)) if *limit == deadline),
        "{err:?}"
    );
    assert_eq!(err.attempts(), 1);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(server.written() < 1024, "{}", server.written());
}

// ---------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------

/// A server whose first connection answers the first request with `hostile` and then
/// writes [`SMUGGLED`] responses for ever; later connections answer `honest_reply`.
async fn smuggling_server(hostile: Vec<u8>, honest_reply: Vec<u8>) -> RawServer {
    let hostile = Bytes::from(hostile);
    let honest_reply = Bytes::from(honest_reply);
    RawServer::start(move |index, mut conn| {
        let (hostile, honest_reply) = (hostile.clone(), honest_reply.clone());
        async move {
            if index == 0 {
                if conn.read_head().await.is_none() || conn.write(&hostile).await.is_err() {
                    return;
                }
                let flood = SMUGGLED.repeat(1024);
                while conn.write(&flood).await.is_ok() {}
            } else {
                while conn.read_head().await.is_some() {
                    if conn.write(&honest_reply).await.is_err() {
                        return;
                    }
                }
            }
        }
    })
    .await
}

#[tokio::test]
async fn an_endless_body_after_a_head_response_is_never_read_nor_taken_for_the_next_answer() {
    // The HEAD answer announces 12,345 bytes (of the object, as HEAD does) and then the
    // server streams bytes for ever: complete responses, ready to be misread as the next one.
    let server = smuggling_server(
        b"HTTP/1.1 200 OK\r\ncontent-length: 12345\r\netag: \"first\"\r\n\r\n".to_vec(),
        honest(b"", "etag: \"honest\"\r\n"),
    )
    .await;
    let client = builder(&server.endpoint()).build().unwrap();
    let first = client.head_object(head("k")).await.unwrap();
    assert_eq!(first.content_length, Some(12345));
    assert_eq!(first.etag.as_ref().map(|e| e.as_str()), Some("\"first\""));

    for _ in 0..3 {
        let next = client.head_object(head("k")).await.unwrap();
        assert_eq!(next.etag.as_ref().map(|e| e.as_str()), Some("\"honest\""));
        assert!(next.metadata.is_empty(), "{:?}", next.metadata);
    }
    assert!(
        server.connections() >= 2,
        "the flooded connection was not reused"
    );
    let written = settled_written(&server).await;
    assert!(written < WRITE_BOUND, "{written}");
    assert_eq!(server.heads().len(), 4);
}

#[tokio::test]
async fn a_get_body_longer_than_its_content_length_yields_only_the_declared_bytes() {
    // HTTP/1.1 frames the body by Content-Length: what follows is not the object. The
    // server sends 1,000 declared bytes, then an endless stream of well-formed responses.
    let declared = support::data(1000, 7);
    let mut hostile = format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\netag: \"first\"\r\n\r\n",
        declared.len()
    )
    .into_bytes();
    hostile.extend_from_slice(&declared);
    let server = smuggling_server(hostile, honest(b"honest", "etag: \"honest\"\r\n")).await;
    let client = builder(&server.endpoint()).build().unwrap();

    let mut body = client.get_object(get("k")).await.unwrap().body;
    let mut received = Vec::new();
    while let Some(chunk) = body.next_chunk().await {
        received.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(received, declared);
    assert_eq!(body.bytes_received(), 1000);

    // The next answers come from a new connection, not from the flood.
    for _ in 0..3 {
        let next = client.get_object(get("k")).await.unwrap();
        assert!(next.output.head.metadata.is_empty());
        assert_eq!(next.body.collect().await.unwrap(), "honest");
    }
    assert!(server.connections() >= 2);
    let written = settled_written(&server).await;
    assert!(written < WRITE_BOUND, "{written}");
}

#[tokio::test]
async fn a_trickling_body_is_progress_but_the_operation_deadline_bounds_it() {
    // One byte every 50 ms of a 1 MB body: never a stall, never finished.
    let server = RawServer::start(|_, mut conn| async move {
        if conn.read_head().await.is_none()
            || conn
                .write(b"HTTP/1.1 200 OK\r\ncontent-length: 1000000\r\n\r\n")
                .await
                .is_err()
        {
            return;
        }
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if conn.write(b"t").await.is_err() {
                return;
            }
        }
    })
    .await;
    let deadline = Duration::from_millis(1200);
    let client = builder(&server.endpoint())
        .stall_timeout(Duration::from_millis(400))
        .operation_timeout(deadline)
        .build()
        .unwrap();
    let started = Instant::now();
    let mut body = client.get_object(get("k")).await.unwrap().body;
    let err = loop {
        match body.next_chunk().await {
            Some(Ok(_)) => {}
            Some(Err(err)) => break err,
            None => panic!("a 1 MB body ended after {} bytes", body.bytes_received()),
        }
    };
    assert!(
        matches!(err.kind(), ErrorKind::Timeout(TimeoutKind::Operation(limit)) if *limit == deadline),
        "{err:?}"
    );
    assert!(body.bytes_received() > 2, "{}", body.bytes_received());
    assert!(body.bytes_received() < 1000, "{}", body.bytes_received());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.connections(), 1, "no resume past the deadline");
}

// ---------------------------------------------------------------------------------------------
// Redirects
// ---------------------------------------------------------------------------------------------

/// A redirect answer with status `status` to `location`, and optionally a bucket region.
fn redirect(status: u16, location: &str, region: Option<&str>) -> Reply {
    let code = if status == 301 {
        "PermanentRedirect"
    } else {
        "TemporaryRedirect"
    };
    let mut reply = Reply::s3_error(status, code, "Please re-send this request elsewhere.")
        .with_header("location", location);
    if let Some(region) = region {
        reply = reply.with_header("x-amz-bucket-region", region);
    }
    reply
}

#[tokio::test]
async fn a_custom_endpoint_s_redirects_are_never_followed_to_their_location() {
    let (elsewhere, contacted) = counting_listener().await;
    for status in [301, 302, 307, 308] {
        for to_self in [true, false] {
            let server = FaultServer::start_with_fallback([], Reply::empty());
            let location = if to_self {
                format!("{}/bucket/k", server.endpoint())
            } else {
                format!("http://{elsewhere}/bucket/k")
            };
            // A loop: every answer redirects again, with a region hint too.
            server.push(std::iter::repeat_n(
                redirect(status, &location, Some("us-west-2")),
                8,
            ));
            let client = builder(&server.endpoint()).build().unwrap();
            let err = client.get_object(get("k")).await.unwrap_err();
            let case = format!("{status} to {location}");
            let service = err
                .service_error()
                .unwrap_or_else(|| panic!("{case}: {err:?}"));
            assert_eq!(service.status.as_u16(), status, "{case}");
            assert_eq!(err.attempts(), 1, "{case}: {err:?}");
            assert_eq!(server.request_count(), 1, "{case}");
        }
    }
    assert_eq!(
        contacted.load(Ordering::SeqCst),
        0,
        "a Location was followed"
    );
}

/// Every host name the AWS tests may address: both regions, path-style and virtual-hosted.
const AWS_HOSTS: [&str; 4] = [
    "s3.us-east-1.amazonaws.com",
    "bucket.s3.us-east-1.amazonaws.com",
    "s3.us-west-2.amazonaws.com",
    "bucket.s3.us-west-2.amazonaws.com",
];

/// An AWS client whose hosts all lead to `server`, and `evil.example` to `evil`.
fn aws_client(server: &FaultServer, evil: SocketAddr) -> Client {
    AWS_HOSTS
        .iter()
        .fold(Client::builder(), |builder, host| {
            builder.resolve(host, server.addr())
        })
        .resolve("evil.example", evil)
        .proxy_from_env(false)
        .add_root_certificate_der(server.certificate_der())
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .region("us-east-1")
        .retry(support::retry(3))
        .build()
        .unwrap()
}

fn host(request: &Recorded) -> &str {
    request.header("host").expect("a Host header")
}

#[tokio::test]
async fn an_aws_region_redirect_loop_is_followed_once_re_signed_and_never_to_its_location() {
    let (evil, contacted) = counting_listener().await;
    let location = "https://evil.example/bucket/k";

    // us-east-1 → us-west-2 → back to us-east-1: one hop, then the error.
    let server = FaultServer::start_tls(
        [
            redirect(301, location, Some("us-west-2")),
            redirect(301, location, Some("us-east-1")),
            Reply::ok("never sent"),
        ],
        &AWS_HOSTS,
    );
    let err = aws_client(&server, evil)
        .get_object(get("k"))
        .await
        .unwrap_err();
    let service = err
        .service_error()
        .expect("the second redirect, as an error");
    assert_eq!(service.status.as_u16(), 301);
    assert_eq!(service.region.as_deref(), Some("us-east-1"));
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "only one redirect is followed");
    assert_eq!(host(&requests[0]), "bucket.s3.us-east-1.amazonaws.com");
    // The hop goes to the region's own host, never to the Location, and is signed anew:
    // nothing signed for the first host travels with it.
    assert_eq!(host(&requests[1]), "bucket.s3.us-west-2.amazonaws.com");
    let first = support::fault::verify_recorded(&requests[0], SECRET_KEY).unwrap();
    let second = support::fault::verify_recorded(&requests[1], SECRET_KEY).unwrap();
    assert_eq!(second.region, "us-west-2");
    assert_ne!(first.signature, second.signature);
    for (name, value) in &requests[1].headers {
        let value = value.to_str().unwrap_or_default();
        assert!(
            !value.contains(&first.signature) && !value.contains("us-east-1"),
            "{name}: {value} was signed for the first host"
        );
    }

    // A 307 naming the region already used: not followed at all.
    let server = FaultServer::start_tls(
        [
            redirect(307, location, Some("us-east-1")),
            Reply::ok("never sent"),
        ],
        &AWS_HOSTS,
    );
    let err = aws_client(&server, evil)
        .get_object(get("k"))
        .await
        .unwrap_err();
    assert_eq!(err.service_error().map(|e| e.status.as_u16()), Some(307));
    assert_eq!(server.request_count(), 1);
    assert_eq!(
        contacted.load(Ordering::SeqCst),
        0,
        "the Location was followed"
    );
}

// ---------------------------------------------------------------------------------------------
// Listings larger than the response limit
// ---------------------------------------------------------------------------------------------

/// A run of `<Contents>` entries of about 64 KiB.
fn contents_block() -> Bytes {
    let entry = "<Contents><Key>endless/key</Key><LastModified>2024-01-01T00:00:00.000Z\
                 </LastModified><ETag>&quot;0123456789abcdef0123456789abcdef&quot;</ETag>\
                 <Size>1</Size><StorageClass>STANDARD</StorageClass></Contents>";
    Bytes::from(entry.repeat(64 * 1024 / entry.len()))
}

const LISTING_START: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult \
    xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bucket</Name><Prefix></Prefix>\
    <KeyCount>1000</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>";

fn assert_over_the_limit(err: &Error) {
    assert!(matches!(err.kind(), ErrorKind::Operation(_)), "{err:?}");
    assert!(
        err.to_string().contains(&format!("{LIMIT}-byte limit")),
        "{err}"
    );
    assert_eq!(
        err.attempts(),
        1,
        "a response over the limit is not retried"
    );
}

#[tokio::test]
async fn a_listing_announced_larger_than_the_limit_is_refused_unread() {
    let announced = LIMIT as u64 + 1024 * 1024;
    let server = RawServer::start(move |_, mut conn| async move {
        if conn.read_head().await.is_none() {
            return;
        }
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/xml\r\ncontent-length: {announced}\r\n\r\n{LISTING_START}"
        );
        if conn.write(head.as_bytes()).await.is_err() {
            return;
        }
        let block = contents_block();
        // As much of the announced body as the client takes.
        while conn.write(&block).await.is_ok() {}
    })
    .await;
    let client = builder(&server.endpoint()).build().unwrap();
    let err = client
        .list_objects_v2(ListObjectsV2::new(bucket()))
        .await
        .unwrap_err();
    assert_over_the_limit(&err);
    assert!(err.to_string().contains(&announced.to_string()), "{err}");
    let written = settled_written(&server).await;
    // Refused on the Content-Length: the client read little more than the head.
    assert!(
        written < (LIMIT / 2) as u64,
        "the client took {written} bytes of a body it refused"
    );
}

#[tokio::test]
async fn an_endless_listing_is_cut_off_at_the_response_limit() {
    let server = RawServer::start(|_, mut conn| async move {
        if conn.read_head().await.is_none() {
            return;
        }
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/xml\r\n\
                    transfer-encoding: chunked\r\n\r\n";
        let start = format!("{:x}\r\n{LISTING_START}\r\n", LISTING_START.len());
        if conn.write(head.as_bytes()).await.is_err() || conn.write(start.as_bytes()).await.is_err()
        {
            return;
        }
        let block = contents_block();
        let mut chunk = format!("{:x}\r\n", block.len()).into_bytes();
        chunk.extend_from_slice(&block);
        chunk.extend_from_slice(b"\r\n");
        while conn.write(&chunk).await.is_ok() {}
    })
    .await;
    let client = builder(&server.endpoint()).build().unwrap();
    let err = client
        .list_objects_v2(ListObjectsV2::new(bucket()))
        .await
        .unwrap_err();
    assert_over_the_limit(&err);
    assert_eq!(server.connections(), 1);
    let written = settled_written(&server).await;
    // The client read up to the limit, then stopped and closed the connection.
    assert!(written > LIMIT as u64, "{written}");
    assert!(written < WRITE_BOUND, "{written}");
}

//! The client's TLS defaults against loopback servers: certificates are verified by default
//! (an unknown CA, another host's name, an expired certificate are refused with
//! `TransportErrorKind::Tls`, not retried, and nothing of the request leaves the client),
//! TLS 1.2 is the lowest version it offers or accepts, and plain `http://` is refused for
//! anything but loopback unless the builder explicitly allows it.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use s3_wire_tokio::credentials::MapEnv;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::{Client, ClientBuilder, Error, ErrorKind, TransportErrorKind};
use support::fault::{FaultServer, Reply};
use support::pki::{DEFAULT_VERSIONS, TestCa, server_config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ACCESS_KEY: &str = "AKIDTLSDEFAULTS";
const SECRET_KEY: &str = "tls-defaults-secret-key";
const HTTP1: &[&[u8]] = &[b"http/1.1"];

/// A client for `https://{host}:{port}` with `host` routed to `addr`, without any extra
/// root certificate (the platform's roots only) and ignoring the environment's proxies.
fn https_builder(host: &str, addr: SocketAddr) -> ClientBuilder {
    Client::builder()
        .resolve(host, addr)
        .endpoint(format!("https://{host}:{}", addr.port()))
        .proxy_from_env(false)
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .connect_timeout(Duration::from_secs(5))
        .retry(support::retry(3))
}

fn get(key: &str) -> GetObject {
    GetObject::new(
        s3_wire_tokio::bucket("bucket").unwrap(),
        s3_wire_tokio::key(key).unwrap(),
    )
}

/// The first `E` in `error`'s source chain, looking inside `io::Error`s too.
fn find_cause<'a, E: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a E> {
    let mut next = Some(error);
    while let Some(cause) = next {
        if let Some(found) = cause.downcast_ref::<E>() {
            return Some(found);
        }
        if let Some(inner) = cause
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            && let Some(found) = find_cause::<E>(inner)
        {
            return Some(found);
        }
        next = cause.source();
    }
    None
}

/// The rustls error that made the handshake fail.
fn rustls_cause(error: &Error) -> &rustls::Error {
    find_cause::<rustls::Error>(error)
        .unwrap_or_else(|| panic!("no rustls error in the source chain of {error:?}"))
}

/// `error` is the documented TLS failure: `Transport(Tls)`, after one attempt (a failed
/// handshake is not retried).
fn assert_tls_failure(error: &Error) {
    assert!(
        matches!(error.kind(), ErrorKind::Transport(TransportErrorKind::Tls)),
        "{error:?}"
    );
    assert_eq!(
        error.attempts(),
        1,
        "a TLS failure is not retried: {error:?}"
    );
    assert!(!error.is_timeout());
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// Nothing of an HTTP request is in `raw` (what the client sent, as the server's socket
/// received it): no method line, no signature, no access key, no object key.
fn assert_nothing_in_clear(raw: &[u8]) {
    assert!(!raw.is_empty(), "the client sent nothing at all");
    assert_eq!(raw[0], 0x16, "the first record is a TLS handshake record");
    for needle in [
        ACCESS_KEY.as_bytes(),
        b"AWS4-HMAC-SHA256",
        b"GET /",
        b"x-amz-",
        b"private-object",
    ] {
        assert!(
            !contains(raw, needle),
            "{:?} crossed the network in clear",
            String::from_utf8_lossy(needle)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Certificate verification
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn certificate_verification_is_on_by_default_and_nothing_is_sent_in_clear() {
    let ca = TestCa::new("s3-wire test CA");
    let leaf = ca.issue(&["localhost"]);
    let server = FaultServer::start_tls_with(
        [Reply::ok("the object")],
        server_config(&leaf, DEFAULT_VERSIONS, HTTP1),
    );

    // Default: the platform's roots only, which do not include the test CA.
    let client = https_builder("localhost", server.addr()).build().unwrap();
    let err = client.get_object(get("private-object")).await.unwrap_err();
    assert_tls_failure(&err);
    assert_eq!(
        rustls_cause(&err),
        &rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 0, "no request reached the server");
    assert_eq!(server.tls_sessions(), [], "no TLS session was established");
    assert_nothing_in_clear(&server.raw_received());

    // Trusting another CA does not make this one trusted.
    let other = TestCa::new("another CA");
    let client = https_builder("localhost", server.addr())
        .add_root_certificate_der(other.der())
        .build()
        .unwrap();
    let err = client.get_object(get("private-object")).await.unwrap_err();
    assert_tls_failure(&err);
    assert!(
        matches!(rustls_cause(&err), rustls::Error::InvalidCertificate(_)),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 0);
    assert_nothing_in_clear(&server.raw_received());

    // The control: trusting the test CA, the same request succeeds, and still nothing of
    // it crossed the network in clear.
    let client = https_builder("localhost", server.addr())
        .add_root_certificate_der(ca.der())
        .build()
        .unwrap();
    let object = client.get_object(get("private-object")).await.unwrap();
    assert_eq!(object.body.collect().await.unwrap(), "the object");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].uri.path(), "/bucket/private-object");
    support::fault::verify_recorded(&requests[0], SECRET_KEY).unwrap();
    assert_eq!(server.tls_sessions().len(), 1);
    assert_nothing_in_clear(&server.raw_received());
}

#[tokio::test]
async fn a_certificate_for_another_host_or_an_expired_one_is_refused() {
    let ca = TestCa::new("s3-wire test CA");
    let cases = [
        // A valid chain from a trusted CA, for another name.
        (
            "another host name",
            ca.issue(&["storage.example.com"]),
            "localhost",
        ),
        // A name is not an address: a certificate for `localhost` does not cover 127.0.0.1.
        ("an IP address", ca.issue(&["localhost"]), "127.0.0.1"),
        (
            "an expired certificate",
            ca.issue_expired(&["localhost"]),
            "localhost",
        ),
    ];
    for (case, leaf, host) in cases {
        let server = FaultServer::start_tls_with(
            [Reply::ok("never sent")],
            server_config(&leaf, DEFAULT_VERSIONS, HTTP1),
        );
        let client = https_builder(host, server.addr())
            .add_root_certificate_der(ca.der())
            .build()
            .unwrap();
        let err = client.get_object(get("private-object")).await.unwrap_err();
        assert_tls_failure(&err);
        let cause = rustls_cause(&err);
        let expected = match case {
            "an expired certificate" => matches!(
                cause,
                rustls::Error::InvalidCertificate(
                    rustls::CertificateError::Expired
                        | rustls::CertificateError::ExpiredContext { .. }
                )
            ),
            _ => matches!(
                cause,
                rustls::Error::InvalidCertificate(
                    rustls::CertificateError::NotValidForName
                        | rustls::CertificateError::NotValidForNameContext { .. }
                )
            ),
        };
        assert!(expected, "{case}: {cause:?}");
        assert_eq!(server.request_count(), 0, "{case}");
        assert_nothing_in_clear(&server.raw_received());
    }
}

// ---------------------------------------------------------------------------------------------
// Protocol versions
// ---------------------------------------------------------------------------------------------

/// What a ClientHello offered.
#[derive(Debug)]
struct ClientHello {
    legacy_version: u16,
    cipher_suites: Vec<u16>,
    /// The `supported_versions` extension (TLS 1.3's real version list).
    supported_versions: Vec<u16>,
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([bytes[at], bytes[at + 1]])
}

/// Parses the ClientHello in the handshake message `message` (type and length included).
fn parse_client_hello(message: &[u8]) -> ClientHello {
    assert_eq!(message[0], 1, "a ClientHello");
    let body = &message[4..];
    let legacy_version = u16_at(body, 0);
    let mut at = 2 + 32; // version, random
    at += 1 + usize::from(body[at]); // session id
    let suites_len = usize::from(u16_at(body, at));
    let cipher_suites = (0..suites_len / 2)
        .map(|i| u16_at(body, at + 2 + 2 * i))
        .collect();
    at += 2 + suites_len;
    at += 1 + usize::from(body[at]); // compression methods
    let extensions_end = at + 2 + usize::from(u16_at(body, at));
    at += 2;
    let mut supported_versions = Vec::new();
    while at < extensions_end {
        let (kind, len) = (u16_at(body, at), usize::from(u16_at(body, at + 2)));
        let data = &body[at + 4..at + 4 + len];
        if kind == 0x002b {
            supported_versions = (0..usize::from(data[0]) / 2)
                .map(|i| u16_at(data, 1 + 2 * i))
                .collect();
        }
        at += 4 + len;
    }
    ClientHello {
        legacy_version,
        cipher_suites,
        supported_versions,
    }
}

/// A ServerHello choosing `version` (no `supported_versions` extension, as a server of
/// TLS 1.1 or older sends it) and TLS_RSA_WITH_AES_128_CBC_SHA, in a handshake record.
fn legacy_server_hello(version: u16) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&version.to_be_bytes());
    body.extend_from_slice(&[0x42; 32]); // random
    body.push(0); // no session id
    body.extend_from_slice(&0x002f_u16.to_be_bytes());
    body.push(0); // no compression
    body.extend_from_slice(&0_u16.to_be_bytes()); // no extensions
    let mut message = vec![2]; // ServerHello
    message.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    message.extend_from_slice(&body);
    let mut record = vec![0x16];
    record.extend_from_slice(&version.to_be_bytes());
    record.extend_from_slice(&(message.len() as u16).to_be_bytes());
    record.extend_from_slice(&message);
    record
}

/// A raw TCP server playing a TLS server of `version` (0x0301 = TLS 1.0, 0x0302 = TLS 1.1):
/// it reads the ClientHello, answers with a ServerHello for `version`, then collects what
/// else the client sends until it closes. Returns the ClientHello and the records after it.
async fn legacy_tls_server(
    version: u16,
) -> (SocketAddr, tokio::task::JoinHandle<(ClientHello, Vec<u8>)>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut header = [0u8; 5];
        socket.read_exact(&mut header).await.unwrap();
        assert_eq!(header[0], 0x16, "the client starts with a handshake record");
        let mut message = vec![0u8; usize::from(u16_at(&header, 3))];
        socket.read_exact(&mut message).await.unwrap();
        let hello = parse_client_hello(&message);
        socket
            .write_all(&legacy_server_hello(version))
            .await
            .unwrap();
        let mut rest = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), socket.read_to_end(&mut rest)).await;
        (hello, rest)
    });
    (addr, task)
}

/// The record types in `bytes` (a sequence of TLS records).
fn record_types(mut bytes: &[u8]) -> Vec<u8> {
    let mut types = Vec::new();
    while bytes.len() >= 5 {
        types.push(bytes[0]);
        let len = usize::from(u16_at(bytes, 3));
        bytes = &bytes[(5 + len).min(bytes.len())..];
    }
    types
}

/// rustls has no implementation of TLS 1.1, 1.0 or SSL 3 at all, client or server: that
/// is the guarantee, and no rustls server can be built to offer them. So a raw server
/// plays one: it answers the client's ClientHello with the ServerHello a TLS 1.0 or 1.1
/// server would send. The client must offer nothing below 1.2 and refuse the old version.
#[tokio::test]
async fn tls_1_2_is_the_minimum_version_offered_and_accepted() {
    for (name, version) in [("TLS 1.0", 0x0301), ("TLS 1.1", 0x0302)] {
        let (addr, server) = legacy_tls_server(version).await;
        let client = https_builder("localhost", addr).build().unwrap();
        let err = client.get_object(get("private-object")).await.unwrap_err();
        assert_tls_failure(&err);
        assert_eq!(
            rustls_cause(&err),
            &rustls::Error::PeerIncompatible(
                rustls::PeerIncompatible::ServerDoesNotSupportTls12Or13
            ),
            "{name}: {err:?}"
        );
        drop(client);
        let (hello, rest) = server.await.unwrap();
        // The ClientHello: TLS 1.2 on the legacy field (as TLS 1.3 requires), and only
        // TLS 1.3 and 1.2 in supported_versions.
        assert_eq!(hello.legacy_version, 0x0303, "{hello:?}");
        assert_eq!(hello.supported_versions, [0x0304, 0x0303], "{hello:?}");
        // Only AEAD suites: TLS 1.3's, and ECDHE with AES-GCM or ChaCha20-Poly1305 for 1.2
        // (0x00ff is the renegotiation-info signalling value, not a cipher).
        for suite in &hello.cipher_suites {
            assert!(
                matches!(
                    suite,
                    0x1301..=0x1303 | 0xc02b | 0xc02c | 0xc02f | 0xc030 | 0xcca8 | 0xcca9 | 0x00ff
                ),
                "{name}: offered cipher suite {suite:#06x}: {hello:?}"
            );
        }
        // After the refusal the client sent at most an alert, never application data.
        assert!(
            record_types(&rest).iter().all(|&kind| kind == 0x15),
            "{name}: records after the ServerHello: {:?}",
            record_types(&rest)
        );
    }
}

#[tokio::test]
async fn servers_restricted_to_tls_1_2_or_to_tls_1_3_both_work() {
    let ca = TestCa::new("s3-wire test CA");
    let leaf = ca.issue(&["localhost"]);
    for (versions, expected) in [
        (
            &[&rustls::version::TLS12][..],
            rustls::ProtocolVersion::TLSv1_2,
        ),
        (
            &[&rustls::version::TLS13][..],
            rustls::ProtocolVersion::TLSv1_3,
        ),
    ] {
        let server = FaultServer::start_tls_with(
            [Reply::ok("over TLS")],
            server_config(&leaf, versions, HTTP1),
        );
        let client = https_builder("localhost", server.addr())
            .add_root_certificate_der(ca.der())
            .build()
            .unwrap();
        let object = client.get_object(get("k")).await.unwrap();
        assert_eq!(object.body.collect().await.unwrap(), "over TLS");
        let sessions = server.tls_sessions();
        assert_eq!(sessions.len(), 1, "{expected:?}");
        assert_eq!(sessions[0].version, Some(expected));
        assert_eq!(sessions[0].alpn.as_deref(), Some(&b"http/1.1"[..]));
        support::fault::verify_recorded(&server.requests()[0], SECRET_KEY).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Plain HTTP
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn plain_http_to_a_non_loopback_host_is_refused_unless_explicitly_allowed() {
    let server = FaultServer::start_with_fallback([], Reply::ok("in clear"));
    let endpoint = format!("http://storage.test:{}", server.addr().port());
    let builder = || {
        Client::builder()
            // The name resolves to loopback here, but the rule is about the name: on
            // another network it is another machine.
            .resolve("storage.test", server.addr())
            .endpoint(&endpoint)
            .proxy_from_env(false)
            .static_credentials(ACCESS_KEY, SECRET_KEY, None)
            .retry(support::retry(1))
    };
    let check_refusal = |err: Error| {
        let ErrorKind::Config(reason) = err.kind() else {
            panic!("not a configuration error: {err:?}");
        };
        assert!(reason.contains("plain http://"), "{reason}");
        assert!(reason.contains("storage.test"), "{reason}");
        assert!(reason.contains("allow_http"), "{reason}");
    };
    check_refusal(builder().build().unwrap_err());
    check_refusal(builder().allow_http(false).build().unwrap_err());

    // The same rule for an endpoint from the environment.
    let home = tempfile::tempdir().unwrap();
    let env = MapEnv::new()
        .with_home(home.path())
        .with_var("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .with_var("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        .with_var("AWS_ENDPOINT_URL", &endpoint);
    let err = ClientBuilder::from_env_with(Arc::new(env))
        .resolve("storage.test", server.addr())
        .proxy_from_env(false)
        .build()
        .unwrap_err();
    check_refusal(err);
    assert_eq!(server.request_count(), 0);

    // Opted in, the request goes out in clear to that host.
    let client = builder().allow_http(true).build().unwrap();
    let object = client.get_object(get("k")).await.unwrap();
    assert_eq!(object.body.collect().await.unwrap(), "in clear");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let expected_host = format!("storage.test:{}", server.addr().port());
    assert_eq!(requests[0].header("host"), Some(expected_host.as_str()));
    support::fault::verify_recorded(&requests[0], SECRET_KEY).unwrap();

    // Loopback needs no opt-in.
    let client = Client::builder()
        .endpoint(format!("http://localhost:{}", server.addr().port()))
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .build()
        .unwrap();
    let object = client.get_object(get("k")).await.unwrap();
    assert_eq!(object.body.collect().await.unwrap(), "in clear");
}

#[tokio::test]
async fn an_https_endpoint_never_falls_back_to_plain_http() {
    // A plain HTTP server behind an https:// endpoint: the handshake fails, and no request
    // is sent in clear instead.
    let server = FaultServer::start_with_fallback([], Reply::ok("in clear"));
    let client = https_builder("localhost", server.addr()).build().unwrap();
    let err = client.get_object(get("private-object")).await.unwrap_err();
    assert_tls_failure(&err);
    assert_eq!(server.request_count(), 0);
}

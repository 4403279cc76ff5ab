//! The embedded server really verifies SigV4: a request signed with the wrong
//! secret is refused, the same request signed with the right one is accepted.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, SystemTime};

use local_s3::LocalS3;
use s3_sigv4::{Credentials, PayloadHash, Signer, SigningParams, SigningTime};

/// Sends `method path` with an empty body, header-signed with `access_key` and
/// `secret`, over a fresh connection; returns the status code and the response text.
fn signed_request(
    server: &LocalS3,
    method: &str,
    path: &str,
    access_key: &str,
    secret: &str,
) -> (u16, String) {
    let url = format!("{}{}", server.endpoint(), path);
    let mut request = http::Request::builder()
        .method(method)
        .uri(&url)
        .body(())
        .expect("valid request");
    let credentials = Credentials::new(access_key, secret, None);
    let time = SigningTime::from_system_time(SystemTime::now()).expect("clock after 1970");
    let params = SigningParams::new(server.region(), "s3", time, PayloadHash::Empty);
    Signer::new()
        .sign_headers(&mut request, &credentials, &params)
        .expect("signing succeeds");

    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in request.headers() {
        head.push_str(&format!(
            "{}: {}\r\n",
            name,
            value.to_str().expect("ascii header")
        ));
    }
    // `host` is signed; the signer reads it from the URI authority.
    if !request.headers().contains_key("host") {
        head.push_str(&format!("host: {}\r\n", server.addr()));
    }
    head.push_str("content-length: 0\r\nconnection: close\r\n\r\n");

    let mut stream = TcpStream::connect(server.addr()).expect("connect to local-s3");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(head.as_bytes()).expect("send request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read response");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"));
    (status, response)
}

#[test]
fn wrong_secret_is_refused_and_right_secret_is_accepted() {
    let server = LocalS3::start().expect("start local-s3");

    let (status, body) = signed_request(
        &server,
        "PUT",
        "/sigcheck",
        server.access_key(),
        "not-the-secret",
    );
    assert_eq!(status, 403, "a wrong secret must be refused: {body}");
    assert!(
        body.contains("SignatureDoesNotMatch"),
        "S3 error code expected: {body}"
    );
    assert!(
        !server.data_dir().join("sigcheck").exists(),
        "a refused request must not create the bucket"
    );

    let (status, body) = signed_request(
        &server,
        "PUT",
        "/sigcheck",
        server.access_key(),
        server.secret_key(),
    );
    assert_eq!(
        status, 200,
        "a correctly signed CreateBucket must succeed: {body}"
    );
    assert!(
        server.data_dir().join("sigcheck").is_dir(),
        "bucket directory created"
    );

    let (status, body) = signed_request(
        &server,
        "HEAD",
        "/sigcheck",
        server.access_key(),
        server.secret_key(),
    );
    assert_eq!(status, 200, "HeadBucket on the new bucket: {body}");
}

#[test]
fn unknown_access_key_is_refused() {
    let server = LocalS3::start().expect("start local-s3");
    let (status, body) = signed_request(
        &server,
        "GET",
        "/",
        server.access_key(),
        server.secret_key(),
    );
    assert_eq!(status, 200, "ListBuckets with the server's own key: {body}");
    let (status, body) = signed_request(&server, "GET", "/", "AKIDUNKNOWN", server.secret_key());
    assert_eq!(
        status, 403,
        "an access key the server does not know must be refused: {body}"
    );
}

#[test]
fn dropping_the_server_removes_its_data_directory_and_stops_listening() {
    let server = LocalS3::start().expect("start local-s3");
    let dir = server.data_dir().to_path_buf();
    let addr = server.addr();
    assert!(dir.is_dir());
    drop(server);
    assert!(!dir.exists(), "temporary data dir removed on drop");
    assert!(
        TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err(),
        "nothing listens after drop"
    );
}

//! The client honours the standard proxy variables (`HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`),
//! read when the client is built, never sends a loopback endpoint's requests to a proxy, and
//! ignores the variables when told to (`ClientBuilder::proxy_from_env(false)`). HTTPS goes
//! through a `CONNECT` tunnel with TLS verified for the S3 host. Environment variables are
//! process-wide (and setting them needs `unsafe`, forbidden here), so the test re-runs this
//! test binary as a child process with the variables set; the fault servers run in the parent
//! and record what arrived.

mod support;

use std::net::SocketAddr;
use std::process::Command;

use s3_wire_tokio::Client;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use support::connect_proxy::{ConnectProxy, ProxyOptions};
use support::fault::{FaultServer, Reply};

const ACCESS_KEY: &str = "AKIDPROXYTEST";
const SECRET_KEY: &str = "proxy-test-secret-key";
/// Set in the child: the address of the direct server.
const CHILD_DIRECT_SERVER: &str = "S3_WIRE_TEST_PROXY_CHILD_DIRECT_SERVER";
/// A host name that only exists behind the proxy.
const PROXIED_HOST: &str = "s3.proxied.test";
/// A host name listed in `NO_PROXY`, routed to the direct server by `ClientBuilder::resolve`.
const EXCLUDED_HOST: &str = "s3.excluded.test";
/// Set in the child of the tunnel test: the TLS server's certificate file.
const CHILD_TUNNEL_CERTIFICATE: &str = "S3_WIRE_TEST_PROXY_CHILD_TUNNEL_CERTIFICATE";
/// The HTTPS host reached through the `CONNECT` proxy.
const TUNNELLED_HOST: &str = "s3.tunnelled.test";

/// Runs the test `name` of this binary again in a child process with `vars` set and every
/// other proxy variable removed; panics with its output if it fails.
fn run_child(name: &str, vars: &[(&str, String)]) {
    let mut command = Command::new(std::env::current_exe().expect("test binary"));
    command.args(["--exact", name, "--nocapture"]);
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
    ] {
        command.env_remove(var);
    }
    command.envs(vars.iter().map(|(name, value)| (name, value)));
    let output = command.output().expect("child test runs");
    assert!(
        output.status.success(),
        "child failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[tokio::test]
async fn environment_proxies_no_proxy_loopback_and_opting_out() {
    if let Ok(direct) = std::env::var(CHILD_DIRECT_SERVER) {
        return child(direct.parse().expect("direct server address")).await;
    }
    let proxy = FaultServer::start([Reply::ok("via proxy")]);
    let direct = FaultServer::start([
        Reply::ok("direct"),
        Reply::ok("direct"),
        Reply::ok("direct"),
    ]);
    let direct_address = direct.endpoint().trim_start_matches("http://").to_owned();
    run_child(
        "environment_proxies_no_proxy_loopback_and_opting_out",
        &[
            (CHILD_DIRECT_SERVER, direct_address.clone()),
            ("HTTP_PROXY", proxy.endpoint()),
            ("NO_PROXY", EXCLUDED_HOST.to_owned()),
        ],
    );

    // The proxy received the request for the proxied host in absolute form, still addressed
    // (Host) and signed for the origin, not for the proxy.
    let proxied = proxy.requests();
    assert_eq!(proxied.len(), 1, "exactly one request through the proxy");
    let request = &proxied[0];
    assert_eq!(
        request.uri.to_string(),
        format!("http://{PROXIED_HOST}/bucket/k")
    );
    assert_eq!(request.header("host"), Some(PROXIED_HOST));
    support::fault::verify_recorded(request, SECRET_KEY).expect("signed for the origin host");

    // NO_PROXY's host, the loopback endpoint and the client told to ignore the variables
    // called the direct server, in origin form.
    let direct_requests = direct.requests();
    let hosts: Vec<_> = direct_requests
        .iter()
        .map(|request| {
            assert_eq!(request.uri.to_string(), "/bucket/k");
            support::fault::verify_recorded(request, SECRET_KEY).expect("signed");
            request.header("host").unwrap_or_default().to_owned()
        })
        .collect();
    assert_eq!(
        hosts,
        [
            EXCLUDED_HOST.to_owned(),
            direct_address,
            PROXIED_HOST.to_owned()
        ]
    );
}

/// Runs in the child process: one GET each through the proxied host, the `NO_PROXY` host, the
/// loopback endpoint and the proxied host with `proxy_from_env(false)`; all must succeed with
/// the body of the server they should reach.
async fn child(direct: SocketAddr) {
    let cases = [
        (format!("http://{PROXIED_HOST}"), true, "via proxy"),
        (format!("http://{EXCLUDED_HOST}"), true, "direct"),
        (format!("http://{direct}"), true, "direct"),
        (format!("http://{PROXIED_HOST}"), false, "direct"),
    ];
    for (endpoint, proxy_from_env, expected) in cases {
        let client = Client::builder()
            .endpoint(&endpoint)
            .region("us-east-1")
            .static_credentials(ACCESS_KEY, SECRET_KEY, None)
            // The test host names are not loopback addresses.
            .allow_http(true)
            // Where the client connects directly, both names lead to the direct server.
            .resolve(EXCLUDED_HOST, direct)
            .resolve(PROXIED_HOST, direct)
            .proxy_from_env(proxy_from_env)
            .build()
            .expect("client");
        assert_eq!(get_k(&client, &endpoint).await, expected, "{endpoint}");
    }
}

#[tokio::test]
async fn https_through_a_proxy_is_a_connect_tunnel_verified_for_the_s3_host() {
    if let Ok(certificate) = std::env::var(CHILD_TUNNEL_CERTIFICATE) {
        return tunnel_child(&certificate).await;
    }
    let origin = FaultServer::start_tls([Reply::ok("through the tunnel")], &[TUNNELLED_HOST]);
    let proxy = ConnectProxy::start(origin.addr(), ProxyOptions::default());
    let directory = tempfile::tempdir().unwrap();
    let certificate = directory.path().join("origin.der");
    std::fs::write(&certificate, origin.certificate_der()).unwrap();
    run_child(
        "https_through_a_proxy_is_a_connect_tunnel_verified_for_the_s3_host",
        &[
            (
                CHILD_TUNNEL_CERTIFICATE,
                certificate.to_string_lossy().into_owned(),
            ),
            ("HTTPS_PROXY", format!("http://{}", proxy.addr)),
        ],
    );

    // The proxy only saw where to connect; the request went inside TLS, for the S3 host.
    let targets: Vec<String> = proxy.requests().into_iter().map(|r| r.target).collect();
    assert_eq!(targets, [format!("CONNECT {TUNNELLED_HOST}:443")]);
    let requests = origin.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].header("host"), Some(TUNNELLED_HOST));
    support::fault::verify_recorded(&requests[0], SECRET_KEY).expect("signed for the S3 host");
}

/// Runs in the child process: a GET over HTTPS that can only succeed through the tunnel (the
/// host name does not resolve) with the origin's certificate verified.
async fn tunnel_child(certificate: &str) {
    let client = Client::builder()
        .endpoint(format!("https://{TUNNELLED_HOST}"))
        .region("us-east-1")
        .static_credentials(ACCESS_KEY, SECRET_KEY, None)
        .add_root_certificate_der(std::fs::read(certificate).unwrap())
        .build()
        .expect("client");
    assert_eq!(get_k(&client, "the tunnel").await, "through the tunnel");
}

/// The body of `bucket/k`, read with `client` (`via` names the path for failure messages).
async fn get_k(client: &Client, via: &str) -> bytes::Bytes {
    let get = GetObject::new(
        s3_wire_tokio::bucket("bucket").unwrap(),
        s3_wire_tokio::key("k").unwrap(),
    );
    let response = client
        .get_object(get)
        .await
        .unwrap_or_else(|err| panic!("GET via {via}: {err:?}"));
    response.body.collect().await.unwrap()
}

//! The client honours the standard proxy variables (`HTTP_PROXY`, `NO_PROXY`), read when the
//! client is built, never sends a loopback endpoint's requests to a proxy, and ignores the
//! variables when told to (`ClientBuilder::proxy_from_env(false)`). Environment variables are
//! process-wide (and setting them needs `unsafe`, forbidden here), so the test re-runs this
//! test binary as a child process with the variables set; the fault servers run in the parent
//! and record what arrived.

mod support;

use std::net::SocketAddr;
use std::process::Command;

use s3_wire_tokio::Client;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use support::fault::{FaultServer, Reply};
use support::sigv4;

const ACCESS_KEY: &str = "AKIDPROXYTEST";
const SECRET_KEY: &str = "proxy-test-secret-key";
/// Set in the child: the address of the direct server.
const CHILD_DIRECT_SERVER: &str = "S3_WIRE_TEST_PROXY_CHILD_DIRECT_SERVER";
/// A host name that only exists behind the proxy.
const PROXIED_HOST: &str = "s3.proxied.test";
/// A host name listed in `NO_PROXY`, routed to the direct server by `ClientBuilder::resolve`.
const EXCLUDED_HOST: &str = "s3.excluded.test";

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
    let output = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "environment_proxies_no_proxy_loopback_and_opting_out",
            "--nocapture",
        ])
        .env(CHILD_DIRECT_SERVER, &direct_address)
        .env("HTTP_PROXY", proxy.endpoint())
        .env("NO_PROXY", EXCLUDED_HOST)
        .env_remove("http_proxy")
        .env_remove("no_proxy")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .output()
        .expect("child test runs");
    assert!(
        output.status.success(),
        "child failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
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
    sigv4::verify_recorded(request, SECRET_KEY).expect("signed for the origin host");

    // NO_PROXY's host, the loopback endpoint and the client told to ignore the variables
    // called the direct server, in origin form.
    let direct_requests = direct.requests();
    let hosts: Vec<_> = direct_requests
        .iter()
        .map(|request| {
            assert_eq!(request.uri.to_string(), "/bucket/k");
            sigv4::verify_recorded(request, SECRET_KEY).expect("signed");
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
        let response = client
            .get_object(GetObject::new(
                s3_wire_tokio::bucket("bucket").unwrap(),
                s3_wire_tokio::key("k").unwrap(),
            ))
            .await
            .unwrap_or_else(|err| panic!("GET via {endpoint}: {err:?}"));
        assert_eq!(
            response.body.collect().await.unwrap(),
            expected,
            "{endpoint}"
        );
    }
}

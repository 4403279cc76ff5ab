//! The client honours the standard proxy variables (`HTTP_PROXY`, `NO_PROXY`), read when the
//! client is built. Environment variables are process-wide (and setting them needs `unsafe`,
//! forbidden here), so the test re-runs this test binary as a child process with the variables
//! set; the fault servers run in the parent and record what arrived.

mod support;

use std::process::Command;

use s3_wire_tokio::Client;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use support::fault::{FaultServer, Reply};
use support::sigv4;

const ACCESS_KEY: &str = "AKIDPROXYTEST";
const SECRET_KEY: &str = "proxy-test-secret-key";
/// Set in the child: the endpoints it must call.
const CHILD_ENDPOINTS: &str = "S3_WIRE_TEST_PROXY_CHILD_ENDPOINTS";
/// A host name that only exists behind the proxy.
const PROXIED_HOST: &str = "s3.proxied.test";

#[tokio::test]
async fn http_proxy_and_no_proxy_from_the_environment() {
    if let Ok(endpoints) = std::env::var(CHILD_ENDPOINTS) {
        return child(&endpoints).await;
    }
    let proxy = FaultServer::start([Reply::ok("via proxy")]);
    let direct = FaultServer::start([Reply::ok("direct")]);
    let direct_endpoint = direct.endpoint();
    let proxy_address = proxy.endpoint();
    let output = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "http_proxy_and_no_proxy_from_the_environment",
            "--nocapture",
        ])
        .env(
            CHILD_ENDPOINTS,
            format!("http://{PROXIED_HOST} {direct_endpoint}"),
        )
        .env("HTTP_PROXY", &proxy_address)
        .env("NO_PROXY", "127.0.0.1")
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
    assert_eq!(proxied.len(), 1, "one request through the proxy");
    let request = &proxied[0];
    assert_eq!(
        request.uri.to_string(),
        format!("http://{PROXIED_HOST}/bucket/k")
    );
    assert_eq!(request.header("host"), Some(PROXIED_HOST));
    sigv4::verify_recorded(request, SECRET_KEY).expect("signed for the origin host");

    // NO_PROXY's host was called directly, in origin form.
    let direct_requests = direct.requests();
    assert_eq!(direct_requests.len(), 1, "one direct request");
    assert_eq!(direct_requests[0].uri.to_string(), "/bucket/k");
}

/// Runs in the child process: one GET through each endpoint, both must succeed.
async fn child(endpoints: &str) {
    let (proxied, direct) = endpoints.split_once(' ').expect("two endpoints");
    for (endpoint, expected) in [(proxied, "via proxy"), (direct, "direct")] {
        let client = Client::builder()
            .endpoint(endpoint)
            .region("us-east-1")
            .static_credentials(ACCESS_KEY, SECRET_KEY, None)
            // The proxied host is not a loopback address.
            .allow_http(true)
            .build()
            .expect("client");
        let response = client
            .get_object(GetObject::new(
                s3_wire_tokio::bucket("bucket").unwrap(),
                s3_wire_tokio::key("k").unwrap(),
            ))
            .await
            .unwrap_or_else(|err| panic!("GET via {endpoint}: {err:?}"));
        assert_eq!(response.body.collect().await.unwrap(), expected);
    }
}

//! The feature `tracing`: one `s3.operation` span per operation and one `s3.attempt` event
//! per attempt, with what was sent and what came back, and no secret.

mod support;

use std::time::Duration;

use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::{Client, RetryConfig};
use support::capture::Capture;
use support::fault::{FaultServer, Reply};

const ACCESS_KEY: &str = "AKIDTRACINGTEST";
const SECRET_KEY: &str = "tracing-test-secret-key";

fn client(server: &FaultServer, attempts: u32) -> Client {
    let mut retry = RetryConfig::default().with_max_attempts(attempts);
    retry.base_delay = Duration::from_millis(1);
    retry.max_delay = Duration::from_millis(5);
    Client::builder()
        .endpoint(server.endpoint())
        .region("us-east-1")
        .static_credentials(ACCESS_KEY, SECRET_KEY, Some("tracing-session-token".into()))
        .retry(retry)
        .build()
        .unwrap()
}

fn head(key: &str) -> HeadObject {
    HeadObject::new(
        s3_wire_tokio::bucket("bucket").unwrap(),
        s3_wire_tokio::key(key).unwrap(),
    )
}

/// The lines of `s3_wire` events written while `run` runs, at `level`.
async fn traced<F: Future>(level: tracing::Level, run: F) -> Vec<String> {
    let captured = Capture::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(level)
        .with_ansi(false)
        .finish();
    {
        let _guard = tracing::subscriber::set_default(subscriber);
        run.await;
    }
    captured
        .text()
        .lines()
        .filter(|line| line.contains("s3_wire"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn each_attempt_is_one_event_inside_the_operation_span() {
    let server = FaultServer::start([Reply::internal_error(), Reply::empty()]);
    let client = client(&server, 3);
    let lines = traced(tracing::Level::DEBUG, async {
        client
            .head_object(head("photos/cat one.jpg"))
            .await
            .unwrap();
    })
    .await;
    assert_eq!(lines.len(), 2, "one event per attempt: {lines:#?}");
    for (line, (attempt, status)) in lines.iter().zip([(1, 500), (2, 200)]) {
        assert!(
            line.contains("s3.operation{operation=\"HeadObject\"}"),
            "{line}"
        );
        assert!(line.contains("s3.attempt"), "{line}");
        assert!(line.contains("method=HEAD"), "{line}");
        assert!(line.contains("host=\"127.0.0.1\""), "{line}");
        assert!(
            line.contains("path=\"/bucket/photos/cat%20one.jpg\""),
            "{line}"
        );
        assert!(line.contains(&format!("attempt={attempt} ")), "{line}");
        assert!(line.contains(&format!("status={status} ")), "{line}");
        assert!(line.contains("request_id=\"fault-req-"), "{line}");
        assert!(line.contains("elapsed_ms="), "{line}");
    }
    assert!(lines[0].contains("error="), "{}", lines[0]);
    assert!(lines[0].contains("InternalError"), "{}", lines[0]);
    assert!(!lines[1].contains("error="), "{}", lines[1]);
    for line in &lines {
        for secret in [SECRET_KEY, "tracing-session-token", "Signature="] {
            assert!(!line.contains(secret), "{secret} in {line}");
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_request_never_sent_is_an_event_with_its_error() {
    let server = FaultServer::start([]);
    let client = client(&server, 1);
    // `..` segments are refused before the request leaves (the URL parser would rewrite them).
    let lines = traced(tracing::Level::DEBUG, async {
        client.head_object(head("a/../b")).await.unwrap_err();
    })
    .await;
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("attempt=1"), "{}", lines[0]);
    assert!(lines[0].contains("error="), "{}", lines[0]);
    assert!(!lines[0].contains("status="), "{}", lines[0]);
    assert_eq!(server.request_count(), 0);
}

#[tokio::test(flavor = "current_thread")]
async fn above_debug_nothing_is_emitted() {
    let server = FaultServer::start([Reply::empty()]);
    let client = client(&server, 1);
    let lines = traced(tracing::Level::INFO, async {
        client.head_object(head("quiet")).await.unwrap();
    })
    .await;
    assert!(lines.is_empty(), "{lines:#?}");
    assert_eq!(server.request_count(), 1);
}

//! A loopback IMDSv2 and its credentials document, shared by the credential sources' tests
//! and s3-wire-tokio's (which includes this file): tokens by PUT, the role listing, the
//! role's credentials, the region; the tests change its behaviour between calls.

#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use s3_wire_credentials::{ImdsProvider, MapEnv};

use super::endpoint::{Answer, Endpoint, Request};

pub const ACCESS_KEY: &str = "ASIAMETADATAEXAMPLE";
pub const SECRET_KEY: &str = "metadata-secret-key-DO-NOT-PRINT";
pub const SESSION_TOKEN: &str = "metadata-session-token-DO-NOT-PRINT";
/// Prefix of the IMDS session tokens the fake issues.
pub const IMDS_TOKEN: &str = "imds-session-token-DO-NOT-PRINT";
pub const AUTH_TOKEN: &str = "container-auth-token-DO-NOT-PRINT";
pub const ROLE: &str = "app-role";
pub const EXPIRATION: &str = "2099-01-02T03:04:05Z";
/// `EXPIRATION` in seconds since the Unix epoch.
pub const EXPIRATION_SECS: u64 = 4_071_006_245;

pub fn credentials_document(code: Option<&str>) -> String {
    let code = code.map_or(String::new(), |c| format!("\"Code\": \"{c}\", "));
    format!(
        "{{{code}\"LastUpdated\": \"2024-01-01T00:00:00Z\", \"Type\": \"AWS-HMAC\", \
         \"AccessKeyId\": \"{ACCESS_KEY}\", \"SecretAccessKey\": \"{SECRET_KEY}\", \
         \"Token\": \"{SESSION_TOKEN}\", \"Expiration\": \"{EXPIRATION}\"}}"
    )
}

/// What the IMDS fake does; the tests change it between calls.
#[derive(Default)]
pub struct ImdsState {
    /// The token GETs must carry (the last one issued), unless revoked.
    pub valid_token: Mutex<Option<String>>,
    pub issued: AtomicUsize,
    /// Answer the role listing with 404 (no instance profile).
    pub no_role: AtomicBool,
    /// Answer this many of the next role-credentials GETs with 500.
    pub failures: AtomicU32,
    /// Answer every GET with 401, whatever the token.
    pub always_unauthorized: AtomicBool,
    /// Delay every answer this much (milliseconds).
    pub stall_ms: AtomicU32,
}

pub struct ImdsFake {
    pub endpoint: Endpoint,
    pub state: Arc<ImdsState>,
}

impl ImdsFake {
    pub fn start() -> Self {
        let state = Arc::new(ImdsState::default());
        let shared = state.clone();
        let endpoint = Endpoint::start(move |request| {
            let answer = imds_answer(&shared, request);
            match shared.stall_ms.load(Ordering::SeqCst) {
                0 => answer,
                ms => answer.delayed(Duration::from_millis(ms.into())),
            }
        });
        Self { endpoint, state }
    }

    pub fn env(&self) -> MapEnv {
        MapEnv::new().with_var("AWS_EC2_METADATA_SERVICE_ENDPOINT", self.endpoint.url())
    }

    pub fn provider(&self) -> ImdsProvider {
        ImdsProvider::with_env(Arc::new(self.env()))
            .with_timeout(Duration::from_millis(500))
            .with_attempts(2)
    }

    /// The service forgets its tokens (as when one expires server-side).
    pub fn revoke_tokens(&self) {
        *self.state.valid_token.lock().unwrap() = None;
    }

    pub fn requests(&self) -> Vec<Request> {
        self.endpoint.requests()
    }

    pub fn puts(&self) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.method == Method::PUT)
            .count()
    }

    /// Method and path of every request, in order.
    pub fn log(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| format!("{} {}", r.method, r.path()))
            .collect()
    }
}

fn imds_answer(state: &ImdsState, request: &Request) -> Answer {
    if request.path() == "/latest/api/token" {
        if request.method != Method::PUT {
            return Answer::new(405, "");
        }
        if request.header("x-aws-ec2-metadata-token-ttl-seconds") != Some("21600") {
            return Answer::new(400, "missing or invalid TTL header");
        }
        let n = state.issued.fetch_add(1, Ordering::SeqCst) + 1;
        let token = format!("{IMDS_TOKEN}-{n}");
        *state.valid_token.lock().unwrap() = Some(token.clone());
        return Answer::ok(token).with_header("x-aws-ec2-metadata-token-ttl-seconds", "21600");
    }
    if request.method != Method::GET {
        return Answer::new(405, "");
    }
    let valid = state.valid_token.lock().unwrap().clone();
    let presented = request.header("x-aws-ec2-metadata-token");
    if state.always_unauthorized.load(Ordering::SeqCst)
        || valid.is_none()
        || presented != valid.as_deref()
    {
        return Answer::new(401, "");
    }
    match request.path() {
        "/latest/meta-data/iam/security-credentials/" => {
            if state.no_role.load(Ordering::SeqCst) {
                Answer::new(404, "<html>Not Found</html>")
            } else {
                Answer::ok(format!("{ROLE}\n"))
            }
        }
        path if path == format!("/latest/meta-data/iam/security-credentials/{ROLE}") => {
            let failing = state
                .failures
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if failing {
                Answer::new(500, "internal error")
            } else {
                Answer::ok(credentials_document(Some("Success")))
            }
        }
        "/latest/meta-data/placement/region" => Answer::ok("eu-west-3\n"),
        _ => Answer::new(404, ""),
    }
}

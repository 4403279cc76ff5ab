//! A loopback stand-in for AWS's own S3 front ends, for what no test can reach: access
//! points, S3 Express One Zone, FIPS / dual-stack / acceleration hosts, anonymous access and
//! Requester Pays buckets.
//!
//! It serves TLS (a certificate of its own test CA) for the AWS host names a test registers
//! ([`Gateway::host`]) and routes to it (`ClientBuilder::resolve`). For each request it
//! checks what AWS would check, from the host's registration:
//! - the signature, with the independent verifier of [`super::sigv4`] (header or presigned
//!   query), for the registered service and region;
//! - S3 Express: CreateSession (`GET /?session`, IAM-signed) issues session keys that expire
//!   after [`Gateway::set_session_lifetime`]; every other zonal request but HeadBucket and
//!   CopyObject must be signed with a live session's keys and carry its token in
//!   `x-amz-s3session-token` (never `x-amz-security-token`);
//! - a public bucket ([`Gateway::make_public`]) takes only requests without any signature
//!   material; a Requester Pays bucket ([`Gateway::require_request_payer`]) only requests
//!   with `x-amz-request-payer: requester`.
//!
//! What passes is forwarded to a store behind it ([`Backend`]: the fault store of the
//! transfer tests, whose part sizes can be small), path-style and re-signed with its keys,
//! so the bytes really land and come back. Every request is recorded ([`Gateway::seen`]).

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use s3_wire_tokio::s3_sigv4::{Credentials, PayloadHash, Signer, SigningParams, SigningTime};

use super::pki::{DEFAULT_VERSIONS, TestCa, server_config};
use super::server::{ServerThread, loopback_listener};
use super::sigv4;

/// The client's access key id.
pub const ACCESS_KEY: &str = "AKIDGATEWAYCLIENT";
/// The client's secret key.
pub const SECRET_KEY: &str = "gateway-client-secret-key";
/// The account of the access points in the tests.
pub const ACCOUNT: &str = "123456789012";

/// How requests to a host must be authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// The caller's own (IAM) credentials.
    Iam,
    /// S3 Express: a session's credentials (CreateSession, HeadBucket and CopyObject: IAM).
    Zonal,
}

/// What AWS serves at a host name.
#[derive(Debug, Clone)]
pub struct Route {
    /// The bucket (or access point) the host names; `None`: the first path segment.
    pub bucket: Option<String>,
    /// The signing service S3 expects (`s3`, `s3-object-lambda`, `s3express`).
    pub service: &'static str,
    /// The signing region S3 expects; `*` for SigV4a for every region (S3 on Outposts).
    pub region: String,
    /// How requests are authenticated.
    pub auth: Auth,
    /// The bucket at the backend (default: the same name).
    pub backend_bucket: Option<String>,
}

/// The store the gateway forwards to: path-style, plain HTTP, SigV4 with these keys.
#[derive(Debug, Clone)]
pub struct Backend {
    pub endpoint: String,
    pub access_key: String,
    pub secret_key: String,
    pub region: String,
}

impl Route {
    /// A host of `bucket` (or a path-style host, with `None`) for `service` in `region`,
    /// authenticated with IAM credentials.
    pub fn new(bucket: Option<&str>, service: &'static str, region: &str) -> Self {
        Self {
            bucket: bucket.map(str::to_owned),
            service,
            region: region.to_owned(),
            auth: Auth::Iam,
            backend_bucket: None,
        }
    }

    /// A directory bucket's zonal host; the backend keeps its objects in `express-backing`
    /// (a client would treat a `--x-s3` name at the backend as S3 Express too).
    pub fn zonal(bucket: &str, region: &str) -> Self {
        Self {
            auth: Auth::Zonal,
            backend_bucket: Some("express-backing".to_owned()),
            ..Self::new(Some(bucket), "s3express", region)
        }
    }
}

/// How a recorded request was authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authenticated {
    /// No signature material at all.
    Anonymous,
    /// A header signature with the caller's keys, for this service and region.
    Iam { service: String, region: String },
    /// A SigV4a header signature with the caller's keys, for this service and region set.
    IamV4a { service: String, region_set: String },
    /// A presigned query signature with the caller's keys.
    Presigned { service: String, region: String },
    /// A session's keys (S3 Express), for this service and region.
    Session { service: String, region: String },
    /// Refused, and why.
    Refused(String),
}

/// A request as the gateway received it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: Method,
    pub host: String,
    /// Path and query as sent.
    pub target: String,
    pub headers: HeaderMap,
    pub authenticated: Authenticated,
    /// The status answered.
    pub status: u16,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

struct Session {
    secret: String,
    expires: SystemTime,
}

#[derive(Default)]
struct State {
    routes: HashMap<String, Route>,
    public: HashSet<String>,
    requester_pays: HashSet<String>,
    session_lifetime: Option<Duration>,
    /// By access key id.
    sessions: HashMap<String, Session>,
    /// CreateSession calls: (bucket, mode).
    created: Vec<(String, String)>,
    seen: Vec<Seen>,
}

/// The gateway; dropping it stops it.
pub struct Gateway {
    addr: SocketAddr,
    ca: Vec<u8>,
    names: Vec<String>,
    state: Arc<Mutex<State>>,
    _thread: ServerThread,
}

impl Gateway {
    /// A gateway serving `routes` (host name → what AWS serves there), with a certificate
    /// for every host, in front of `backend`.
    pub fn start(routes: &[(&str, Route)], backend: Backend) -> Gateway {
        let backend = Arc::new(backend);
        let ca = TestCa::new("aws gateway CA");
        let names: Vec<&str> = routes.iter().map(|(host, _)| *host).collect();
        let leaf = ca.issue(&names);
        let config = server_config(&leaf, DEFAULT_VERSIONS, &[b"http/1.1"]);
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let state = Arc::new(Mutex::new(State {
            routes: routes
                .iter()
                .map(|(host, route)| ((*host).to_owned(), route.clone()))
                .collect(),
            ..State::default()
        }));
        let (listener, addr) = loopback_listener();
        let (server_state, server_backend) = (state.clone(), backend.clone());
        let forwarder = super::http_client();
        let thread = ServerThread::start("aws-gateway", listener, move |stream, _| {
            let (acceptor, state, backend, forwarder) = (
                acceptor.clone(),
                server_state.clone(),
                server_backend.clone(),
                forwarder.clone(),
            );
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(stream).await else {
                    return;
                };
                let service = service_fn(move |request| {
                    let (state, backend, forwarder) =
                        (state.clone(), backend.clone(), forwarder.clone());
                    async move {
                        Ok::<_, std::convert::Infallible>(
                            handle(request, &state, &backend, &forwarder).await,
                        )
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        });
        Gateway {
            addr,
            ca: ca.der(),
            names: names.iter().map(|name| (*name).to_owned()).collect(),
            state,
            _thread: thread,
        }
    }

    /// A client builder for `region` whose every registered host leads here, trusting the
    /// gateway's CA, with the caller's keys.
    pub fn client_builder(&self, region: &str) -> s3_wire_tokio::ClientBuilder {
        self.names
            .iter()
            .fold(s3_wire_tokio::Client::builder(), |builder, host| {
                builder.resolve(host, self.addr)
            })
            .proxy_from_env(false)
            .add_root_certificate_der(self.ca.clone())
            .static_credentials(ACCESS_KEY, SECRET_KEY, None)
            .region(region)
            .retry(super::retry(3))
    }

    /// `bucket` takes unsigned requests only.
    pub fn make_public(&self, bucket: &str) {
        self.lock().public.insert(bucket.to_owned());
    }

    /// `bucket` takes only requests that carry `x-amz-request-payer: requester`.
    pub fn require_request_payer(&self, bucket: &str) {
        self.lock().requester_pays.insert(bucket.to_owned());
    }

    /// How long the sessions CreateSession issues from now on live (default 300 s).
    pub fn set_session_lifetime(&self, lifetime: Duration) {
        self.lock().session_lifetime = Some(lifetime);
    }

    /// Forgets every session issued so far: requests signed with them are refused as
    /// expired.
    pub fn revoke_sessions(&self) {
        self.lock().sessions.clear();
    }

    /// The sessions the gateway holds: (access key id, secret key, token), in no order.
    pub fn sessions(&self) -> Vec<(String, String, String)> {
        self.lock()
            .sessions
            .iter()
            .map(|(key, session)| {
                (
                    key.clone(),
                    session.secret.clone(),
                    format!("token-of-{key}"),
                )
            })
            .collect()
    }

    /// Sends `method` to `https://{host}{path}` signed with `credentials` (a session's when
    /// `token` is given, for `s3express`; the caller's own for `s3`), as a client would but
    /// by hand, so a test can sign with whatever key it likes; returns the status and the
    /// error code of the answer.
    pub async fn send_signed(
        &self,
        method: Method,
        host: &str,
        path: &str,
        region: &str,
        (key, secret, token): (&str, &str, Option<&str>),
    ) -> (u16, Option<String>) {
        let mut request = http::Request::builder()
            .method(method)
            .uri(format!("https://{host}{path}"))
            .header("host", host);
        let service = if token.is_some() { "s3express" } else { "s3" };
        if let Some(token) = token {
            request = request.header("x-amz-s3session-token", token);
        }
        let (mut parts, ()) = request.body(()).expect("request").into_parts();
        let time = SigningTime::from_system_time(SystemTime::now()).expect("time");
        Signer::new()
            .sign_headers(
                &mut parts,
                &Credentials::new(key, secret, None),
                &SigningParams::new(region, service, time, PayloadHash::of(b"")),
            )
            .expect("sign");
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .resolve(host, self.addr)
            .add_root_certificate(
                reqwest::Certificate::from_der(&self.ca).expect("the gateway's CA"),
            )
            .no_proxy()
            .build()
            .expect("reqwest client");
        let request = reqwest::Request::try_from(http::Request::from_parts(parts, Vec::new()))
            .expect("reqwest request");
        let answer = client.execute(request).await.expect("an answer");
        let status = answer.status().as_u16();
        let body = answer.text().await.unwrap_or_default();
        let code = body
            .split_once("<Code>")
            .and_then(|(_, rest)| rest.split_once("</Code>"))
            .map(|(code, _)| code.to_owned());
        (status, code)
    }

    /// The CreateSession calls so far: (bucket, mode).
    pub fn sessions_created(&self) -> Vec<(String, String)> {
        self.lock().created.clone()
    }

    /// Every request so far, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.lock().seen.clone()
    }

    /// Forgets the recorded requests.
    pub fn clear_seen(&self) {
        self.lock().seen.clear();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

fn error(status: u16, code: &str, message: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code>\
         <Message>{message}</Message><RequestId>gateway</RequestId></Error>"
    ))));
    *response.status_mut() = StatusCode::from_u16(status).expect("status");
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("application/xml"));
    response
}

/// Whether a request carries anything of a signature.
fn has_signature_material(headers: &HeaderMap, query: &str) -> bool {
    headers.contains_key("authorization")
        || headers.contains_key("x-amz-security-token")
        || headers.contains_key("x-amz-s3session-token")
        || query.split('&').any(|pair| pair.starts_with("X-Amz-"))
}

/// The access key id of a header or query signature.
fn access_key_of(headers: &HeaderMap, query: &str) -> Option<String> {
    let credential = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|a| a.split("Credential=").nth(1).map(str::to_owned))
        .or_else(|| {
            query
                .split('&')
                .find_map(|pair| pair.strip_prefix("X-Amz-Credential="))
                .map(str::to_owned)
        })?;
    Some(credential.split(['/', '%']).next()?.to_owned())
}

async fn handle(
    request: http::Request<hyper::body::Incoming>,
    state: &Mutex<State>,
    backend: &Backend,
    forwarder: &reqwest::Client,
) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let host = parts
        .headers
        .get("host")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .split(':')
        .next()
        .unwrap_or_default()
        .to_owned();
    let target = parts
        .uri
        .path_and_query()
        .map(|pq| pq.as_str().to_owned())
        .unwrap_or_default();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let (authenticated, response) = match admit(
        state,
        &host,
        &parts.method,
        path,
        query,
        &target,
        &parts.headers,
        &body,
    ) {
        Verdict::Answer(authenticated, response) => (authenticated, *response),
        Verdict::Forward(authenticated) => {
            let bucket_and_rest = backend_path(state, &host, path);
            let headers = backend_copy_source(state, &parts.headers);
            let response = forward(
                backend,
                forwarder,
                &parts.method,
                &bucket_and_rest,
                query,
                &headers,
                body,
            )
            .await;
            (authenticated, response)
        }
    };
    let seen = Seen {
        method: parts.method,
        host,
        target,
        headers: parts.headers,
        authenticated,
        status: response.status().as_u16(),
    };
    state
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .seen
        .push(seen);
    response
}

/// What the gateway does with a request.
enum Verdict {
    /// Forward it to the backend.
    Forward(Authenticated),
    /// Answer it here (a refusal, CreateSession, ListDirectoryBuckets).
    Answer(Authenticated, Box<Response<Full<Bytes>>>),
}

/// Checks a request against its host's route and its bucket's policy; answers CreateSession
/// and ListDirectoryBuckets itself.
#[allow(clippy::too_many_arguments)]
fn admit(
    state: &Mutex<State>,
    host: &str,
    method: &Method,
    path: &str,
    query: &str,
    target: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> Verdict {
    let mut state = state.lock().unwrap_or_else(|poison| poison.into_inner());
    let refuse = |status, code: &str, why: String| {
        Verdict::Answer(
            Authenticated::Refused(why.clone()),
            Box::new(error(status, code, &why)),
        )
    };
    let Some(route) = state.routes.get(host).cloned() else {
        return refuse(400, "InvalidHost", format!("no route for host {host}"));
    };
    let bucket = route.bucket.clone().unwrap_or_else(|| {
        path.trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned()
    });
    if state.requester_pays.contains(&bucket)
        && headers
            .get("x-amz-request-payer")
            .and_then(|v| v.to_str().ok())
            != Some("requester")
    {
        return refuse(403, "AccessDenied", "Access Denied".into());
    }
    let signed = has_signature_material(headers, query);
    if state.public.contains(&bucket) {
        if signed {
            return refuse(
                400,
                "InvalidRequest",
                format!("{bucket} takes anonymous requests only, and this one is signed"),
            );
        }
        return Verdict::Forward(Authenticated::Anonymous);
    }
    if !signed {
        return refuse(403, "AccessDenied", "Access Denied".into());
    }
    let create_session = query.split('&').any(|p| p == "session");
    let iam_on_zonal = create_session
        || (*method == Method::HEAD && route.bucket.is_some() && (path == "/" || path.is_empty()))
        || headers.contains_key("x-amz-copy-source");
    let presigned = query.contains("X-Amz-Signature=");
    let session_auth = route.auth == Auth::Zonal && !iam_on_zonal && !presigned;
    let secret = if session_auth {
        if headers.contains_key("x-amz-security-token") {
            return refuse(
                400,
                "InvalidRequest",
                "S3 Express takes the session token in x-amz-s3session-token".into(),
            );
        }
        let Some(token) = headers
            .get("x-amz-s3session-token")
            .and_then(|v| v.to_str().ok())
        else {
            return refuse(
                403,
                "AccessDenied",
                "a zonal request needs x-amz-s3session-token".into(),
            );
        };
        let key = access_key_of(headers, query).unwrap_or_default();
        let Some(session) = state.sessions.get(&key) else {
            return refuse(
                400,
                "ExpiredToken",
                format!("session {key} is not known (revoked or never issued)"),
            );
        };
        if token != format!("token-of-{key}") {
            return refuse(
                403,
                "InvalidToken",
                "the session token is not the key's".into(),
            );
        }
        if session.expires <= SystemTime::now() {
            return refuse(400, "ExpiredToken", format!("session {key} expired"));
        }
        session.secret.clone()
    } else {
        if headers.contains_key("x-amz-s3session-token") {
            return refuse(
                400,
                "InvalidRequest",
                "an IAM-signed request carries a session token".into(),
            );
        }
        if access_key_of(headers, query).as_deref() != Some(ACCESS_KEY) {
            return refuse(403, "InvalidAccessKeyId", "not the caller's key".into());
        }
        SECRET_KEY.to_owned()
    };
    let sigv4a = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.starts_with("AWS4-ECDSA-P256-SHA256 "));
    if sigv4a != (route.region == "*") {
        return refuse(
            400,
            "AuthorizationHeaderMalformed",
            format!(
                "{host} takes {} signatures only",
                if sigv4a { "SigV4" } else { "SigV4a" }
            ),
        );
    }
    if sigv4a {
        return match sigv4::verify_sigv4a(method.as_str(), target, headers, ACCESS_KEY, &secret) {
            Ok(signed) if signed.service == route.service => {
                Verdict::Forward(Authenticated::IamV4a {
                    service: signed.service,
                    region_set: signed.region_set,
                })
            }
            Ok(signed) => refuse(
                400,
                "AuthorizationHeaderMalformed",
                format!(
                    "signed for {}, {host} expects {}",
                    signed.service, route.service
                ),
            ),
            Err(why) => refuse(403, "SignatureDoesNotMatch", why),
        };
    }
    let verified = if presigned {
        sigv4::verify_presigned(route.service, method.as_str(), target, headers, &secret)
    } else {
        sigv4::verify_for(
            route.service,
            method.as_str(),
            target,
            headers,
            Some(body),
            &secret,
        )
    };
    let signed = match verified {
        Ok(signed) => signed,
        Err(why) => return refuse(403, "SignatureDoesNotMatch", why),
    };
    if signed.region != route.region {
        return refuse(
            400,
            "AuthorizationHeaderMalformed",
            format!(
                "signed for region {}, {host} expects {}",
                signed.region, route.region
            ),
        );
    }
    let (service, region) = (route.service.to_owned(), signed.region);
    let authenticated = match (presigned, session_auth) {
        (true, _) => Authenticated::Presigned { service, region },
        (false, true) => Authenticated::Session { service, region },
        (false, false) => Authenticated::Iam { service, region },
    };
    if route.service == "s3express" && route.bucket.is_none() && path == "/" {
        // ListDirectoryBuckets: the directory buckets of the registered zonal hosts.
        let mut names: Vec<&String> = state
            .routes
            .values()
            .filter(|route| route.auth == Auth::Zonal)
            .filter_map(|route| route.bucket.as_ref())
            .collect();
        names.sort();
        let buckets: String = names
            .iter()
            .map(|name| {
                format!(
                    "<Bucket><Name>{name}</Name><CreationDate>2026-12-01T00:00:00.000Z</CreationDate>\
                     <BucketRegion>{}</BucketRegion></Bucket>",
                    route.region
                )
            })
            .collect();
        let document = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListAllMyDirectoryBucketsResult>\
             <Buckets>{buckets}</Buckets></ListAllMyDirectoryBucketsResult>"
        );
        return Verdict::Answer(
            authenticated,
            Box::new(Response::new(Full::new(Bytes::from(document)))),
        );
    }
    if !create_session || route.auth != Auth::Zonal {
        return Verdict::Forward(authenticated);
    }
    let mode = headers
        .get("x-amz-create-session-mode")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("ReadWrite")
        .to_owned();
    state.created.push((bucket, mode));
    let key = format!("SESSIONKEY{}", state.created.len());
    let lifetime = state.session_lifetime.unwrap_or(Duration::from_secs(300));
    let expires = SystemTime::now() + lifetime;
    state.sessions.insert(
        key.clone(),
        Session {
            secret: format!("secret-of-{key}"),
            expires,
        },
    );
    let expiration = s3_wire_tokio::s3_xml::Timestamp::from_system_time(expires)
        .expect("a time after 1970")
        .to_string();
    let document = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CreateSessionResult \
         xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Credentials>\
         <SessionToken>token-of-{key}</SessionToken><SecretAccessKey>secret-of-{key}</SecretAccessKey>\
         <AccessKeyId>{key}</AccessKeyId><Expiration>{expiration}</Expiration></Credentials>\
         </CreateSessionResult>"
    );
    Verdict::Answer(
        authenticated,
        Box::new(Response::new(Full::new(Bytes::from(document)))),
    )
}

/// `headers` with an `x-amz-copy-source` naming a bucket the backend keeps under another
/// name (a directory bucket's) renamed as the backend knows it.
fn backend_copy_source(state: &Mutex<State>, headers: &HeaderMap) -> HeaderMap {
    let mut headers = headers.clone();
    let Some(source) = headers
        .get("x-amz-copy-source")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
    else {
        return headers;
    };
    let (bucket, rest) = source
        .trim_start_matches('/')
        .split_once('/')
        .unwrap_or((source.as_str(), ""));
    let state = state.lock().unwrap_or_else(|poison| poison.into_inner());
    let renamed = state.routes.values().find_map(|route| {
        (route.bucket.as_deref() == Some(bucket))
            .then(|| route.backend_bucket.clone())
            .flatten()
    });
    if let Some(renamed) = renamed {
        let value = format!("/{renamed}/{rest}");
        headers.insert(
            "x-amz-copy-source",
            HeaderValue::from_str(&value).expect("a header value"),
        );
    }
    headers
}

/// `/{bucket}/{key}` at the backend for a request to `host` with `path`.
fn backend_path(state: &Mutex<State>, host: &str, path: &str) -> String {
    let state = state.lock().unwrap_or_else(|poison| poison.into_inner());
    let Some(route) = state.routes.get(host) else {
        return path.to_owned();
    };
    match (&route.backend_bucket, &route.bucket) {
        (Some(bucket), _) | (None, Some(bucket)) => {
            format!("/{bucket}{}", if path == "/" { "" } else { path })
        }
        (None, None) => path.to_owned(),
    }
}

/// Sends the request on to the backend, path-style and signed with its keys; hands its
/// answer back.
async fn forward(
    backend: &Backend,
    client: &reqwest::Client,
    method: &Method,
    path: &str,
    query: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Response<Full<Bytes>> {
    const DROPPED: [&str; 11] = [
        "host",
        "authorization",
        "x-amz-region-set",
        "x-amz-date",
        "x-amz-content-sha256",
        "x-amz-security-token",
        "x-amz-s3session-token",
        "x-amz-request-payer",
        "content-length",
        "connection",
        "transfer-encoding",
    ];
    let query: Vec<&str> = query
        .split('&')
        .filter(|pair| !pair.is_empty() && !pair.starts_with("X-Amz-"))
        .collect();
    let uri = if query.is_empty() {
        format!("{}{path}", backend.endpoint)
    } else {
        format!("{}{path}?{}", backend.endpoint, query.join("&"))
    };
    let payload = match headers
        .get("x-amz-content-sha256")
        .and_then(|v| v.to_str().ok())
    {
        Some("STREAMING-UNSIGNED-PAYLOAD-TRAILER") => PayloadHash::StreamingUnsignedTrailer,
        Some(hex) if hex.len() == 64 => {
            PayloadHash::from_hex(hex).unwrap_or(PayloadHash::of(&body))
        }
        _ => PayloadHash::of(&body),
    };
    let mut request = http::Request::builder().method(method.clone()).uri(&uri);
    for (name, value) in headers {
        if !DROPPED.contains(&name.as_str()) {
            request = request.header(name, value);
        }
    }
    let (mut parts, ()) = request.body(()).expect("request").into_parts();
    parts.headers.insert(
        HeaderName::from_static("content-length"),
        HeaderValue::from(body.len()),
    );
    let credentials = Credentials::new(&backend.access_key, &backend.secret_key, None);
    let time = SigningTime::from_system_time(SystemTime::now()).expect("time");
    Signer::new()
        .sign_headers(
            &mut parts,
            &credentials,
            &SigningParams::new(&backend.region, "s3", time, payload),
        )
        .expect("sign for the backend");
    let request = reqwest::Request::try_from(http::Request::from_parts(parts, body))
        .expect("reqwest request");
    match client.execute(request).await {
        Ok(answer) => {
            let status = answer.status();
            let mut headers = answer.headers().clone();
            for name in ["transfer-encoding", "connection"] {
                headers.remove(name);
            }
            if *method != Method::HEAD {
                // The body sent on is whole: hyper sets its length. A HEAD keeps the object's.
                headers.remove("content-length");
            }
            let body = answer.bytes().await.unwrap_or_default();
            let mut response = Response::new(Full::new(body));
            *response.status_mut() = status;
            *response.headers_mut() = headers;
            response
        }
        Err(why) => error(502, "BadGateway", &why.to_string()),
    }
}

impl Gateway {
    /// GETs `url` (a presigned URL to a registered host) the way a browser would: over TLS
    /// to the gateway, no credentials; returns the body of a 200.
    pub async fn https_get(&self, url: &str) -> Bytes {
        let parsed = reqwest::Url::parse(url).expect("URL");
        let host = parsed.host_str().expect("host").to_owned();
        let client = reqwest::Client::builder()
            .resolve(&host, self.addr)
            .add_root_certificate(reqwest::Certificate::from_der(&self.ca).expect("CA"))
            .no_proxy()
            .build()
            .expect("reqwest client");
        let answer = client.get(parsed).send().await.expect("GET");
        let status = answer.status();
        let body = answer.bytes().await.expect("body");
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        body
    }
}

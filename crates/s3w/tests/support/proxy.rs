//! A small HTTP/1.1 proxy in front of a test server: one request per connection, each
//! request line recorded with the status of its answer; a rule may answer a request
//! itself (an injected error) or delay it before it is forwarded.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the rule does with a request (given its request line).
pub enum Verdict {
    /// Forward it.
    Forward,
    /// Forward it after a pause.
    Delay(Duration),
    /// Answer with these bytes instead.
    Answer(Vec<u8>),
    /// Forward it, then close the connection without its answer (the store acted, the
    /// client never hears of it).
    LoseAnswer,
}

/// A running proxy; it stops when the test process ends.
pub struct Proxy {
    pub endpoint: String,
    /// `(request line, status)` of every request answered, in order.
    pub seen: Arc<Mutex<Vec<(String, u16)>>>,
    /// The head (request line and headers) of every request received, in order.
    pub heads: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    /// A proxy to `upstream` (`http://host:port`).
    pub fn start(upstream: &str, rule: impl Fn(&str) -> Verdict + Send + Sync + 'static) -> Proxy {
        let upstream = upstream
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let rule = Arc::new(rule);
        let (record, record_head) = (seen.clone(), heads.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let (upstream, rule, record, record_head) = (
                    upstream.clone(),
                    rule.clone(),
                    record.clone(),
                    record_head.clone(),
                );
                std::thread::spawn(move || {
                    let Some((head, request)) = read_request(&mut stream) else {
                        return;
                    };
                    let line = head.lines().next().unwrap_or_default().to_owned();
                    record_head.lock().unwrap().push(head.clone());
                    let answer = match rule(&line) {
                        Verdict::Answer(answer) => answer,
                        Verdict::LoseAnswer => {
                            let _ = forward(&upstream, &line, &head, &request);
                            record.lock().unwrap().push((line, 0));
                            return;
                        }
                        verdict => {
                            if let Verdict::Delay(pause) = verdict {
                                std::thread::sleep(pause);
                            }
                            match forward(&upstream, &line, &head, &request) {
                                Some(answer) => answer,
                                None => return,
                            }
                        }
                    };
                    let status = String::from_utf8_lossy(&answer[..answer.len().min(12)])
                        .split(' ')
                        .nth(1)
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                    if stream.write_all(&answer).is_ok() {
                        record.lock().unwrap().push((line, status));
                    }
                });
            }
        });
        Proxy {
            endpoint: format!("http://{address}"),
            seen,
            heads,
        }
    }

    /// Requests whose line contains every one of `parts`, answered with `status`.
    pub fn count(&self, parts: &[&str], status: u16) -> usize {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(line, s)| *s == status && parts.iter().all(|p| line.contains(p)))
            .count()
    }
}

/// Forwards with `connection: close` and reads the answer to its end.
fn forward(upstream: &str, line: &str, head: &str, request: &[u8]) -> Option<Vec<u8>> {
    let end = line.len() + 2;
    let mut forwarded = request[..end].to_vec();
    forwarded.extend_from_slice(b"connection: close\r\n");
    forwarded.extend(
        String::from_utf8_lossy(&request[end..head.len()])
            .split("\r\n")
            .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
            .collect::<Vec<_>>()
            .join("\r\n")
            .into_bytes(),
    );
    forwarded.extend_from_slice(&request[head.len()..]);
    let mut up = TcpStream::connect(upstream).ok()?;
    up.write_all(&forwarded).ok()?;
    let mut answer = Vec::new();
    let _ = up.read_to_end(&mut answer);
    Some(answer)
}

/// Reads one HTTP/1.1 request (headers and a `content-length` body).
fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 65536];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut byte).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&byte[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = stream.read(&mut byte).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&byte[..n]);
    }
    Some((head, buf))
}

/// An S3 error answer.
pub fn error_reply(status: &str, code: &str) -> Vec<u8> {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code>\
         <Message>injected by the test</Message><RequestId>FAULT-1</RequestId></Error>"
    );
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/xml\r\nx-amz-request-id: FAULT-1\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

//! A managed download of a multipart object with a composite checksum checks every part:
//! with the part checksums GetObjectAttributes lists (ranges on the part boundaries, the
//! first response serving part 1), or, where the store does not list them, part by part
//! with `partNumber`. A loopback store of one such object counts what each way costs.
//!
//! `S3W_PART_CHECKSUM_REPORT=1 cargo test -p s3-wire-tokio --test download_part_checksums
//! -- --nocapture` prints the request and byte counts of `measurements/`.

mod support;

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, Method, Response, StatusCode};
use hyper::body::{Body as HttpBody, Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use s3_wire_tokio::{Client, NotVerified, Verification, bucket, key};
use support::fault::{ServerThread, loopback_listener};

/// One multipart object, its parts, and how the store answers.
struct Store {
    data: Bytes,
    sizes: Vec<usize>,
    /// GetObjectAttributes lists the parts (else it answers 501 NotImplemented).
    lists_parts: bool,
    /// Parts per GetObjectAttributes page (S3: up to 1,000).
    page: usize,
    /// Serve this part's bytes with one flipped (a corrupted read).
    corrupt_part: Option<usize>,
    /// GetObjectAttributes answers for another generation of the object.
    attributes_of_another_object: bool,
    etag: String,
    counts: Mutex<BTreeMap<&'static str, u64>>,
    body_bytes_sent: AtomicU64,
}

impl Store {
    /// An object of `parts` parts of `part_size` bytes, the last one `last` bytes.
    fn new(parts: usize, part_size: usize, last: usize, lists_parts: bool) -> Arc<Store> {
        let mut sizes = vec![part_size; parts - 1];
        sizes.push(last);
        Self::with_parts(sizes, lists_parts)
    }

    fn with_parts(sizes: Vec<usize>, lists_parts: bool) -> Arc<Store> {
        let parts = sizes.len();
        Arc::new(Store {
            data: support::data(sizes.iter().sum::<usize>() as u64, 28),
            sizes,
            lists_parts,
            page: 1000,
            corrupt_part: None,
            attributes_of_another_object: false,
            etag: format!("\"0123456789abcdef0123456789abcdef-{parts}\""),
            counts: Mutex::default(),
            body_bytes_sent: AtomicU64::new(0),
        })
    }

    fn parts(&self) -> Vec<std::ops::Range<usize>> {
        let mut start = 0;
        self.sizes
            .iter()
            .map(|size| {
                start += size;
                start - size..start
            })
            .collect()
    }

    /// A part's CRC32, computed by the tests' own bit-by-bit CRC.
    fn part_crc(&self, part: &std::ops::Range<usize>) -> [u8; 4] {
        support::crc32(&self.data[part.clone()]).to_be_bytes()
    }

    /// The composite value: the CRC32 of the parts' CRC32s, `-N`.
    fn composite(&self) -> String {
        let digests: Vec<u8> = self.parts().iter().flat_map(|p| self.part_crc(p)).collect();
        format!(
            "{}-{}",
            support::base64(&support::crc32(&digests).to_be_bytes()),
            self.parts().len()
        )
    }

    fn count(&self, what: &'static str) {
        *self.counts.lock().unwrap().entry(what).or_default() += 1;
    }

    fn counts(&self) -> BTreeMap<&'static str, u64> {
        self.counts.lock().unwrap().clone()
    }

    fn bytes(&self, range: std::ops::Range<usize>) -> Bytes {
        let mut bytes = self.data[range.clone()].to_vec();
        if let Some(index) = self.corrupt_part {
            let part = &self.parts()[index];
            if part.start < range.end && range.start < part.end {
                let at = part.start.max(range.start) - range.start;
                bytes[at] ^= 0xff;
            }
        }
        Bytes::from(bytes)
    }

    fn answer(
        self: &Arc<Self>,
        method: &Method,
        query: &str,
        headers: &HeaderMap,
    ) -> Response<Counted> {
        let param = |name: &str| {
            query
                .split('&')
                .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
        };
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let total = self.data.len();
        let parts = self.parts();
        let checksum_mode = header("x-amz-checksum-mode") == Some("ENABLED");
        let mut response = Response::builder()
            .header("etag", self.etag.as_str())
            .header("x-amz-request-id", "R");
        if query.split('&').any(|pair| pair == "attributes") {
            self.count("GET ?attributes");
            if !self.lists_parts {
                let body = "<Error><Code>NotImplemented</Code><Message>not here</Message></Error>";
                return response
                    .status(501)
                    .body(Counted::new(Bytes::from(body), None))
                    .unwrap();
            }
            let marker: usize = header("x-amz-part-number-marker")
                .and_then(|m| m.parse().ok())
                .unwrap_or(0);
            let page: Vec<(usize, &std::ops::Range<usize>)> = parts
                .iter()
                .enumerate()
                .skip(marker)
                .take(self.page)
                .collect();
            let next = page.last().map_or(marker, |(index, _)| index + 1);
            let mut xml = format!(
                "<GetObjectAttributesResponse><ETag>{}</ETag><ObjectParts><PartsCount>{}</PartsCount>\
                 <PartNumberMarker>{marker}</PartNumberMarker><NextPartNumberMarker>{next}</NextPartNumberMarker>\
                 <MaxParts>{}</MaxParts><IsTruncated>{}</IsTruncated>",
                if self.attributes_of_another_object {
                    "fedcba9876543210fedcba9876543210-2"
                } else {
                    self.etag.trim_matches('"')
                },
                parts.len(),
                self.page,
                next < parts.len()
            );
            for (index, part) in page {
                xml.push_str(&format!(
                    "<Part><PartNumber>{}</PartNumber><Size>{}</Size><ChecksumCRC32>{}</ChecksumCRC32></Part>",
                    index + 1,
                    part.len(),
                    support::base64(&self.part_crc(part))
                ));
            }
            xml.push_str("</ObjectParts></GetObjectAttributesResponse>");
            return response
                .status(200)
                .body(Counted::new(Bytes::from(xml), None))
                .unwrap();
        }
        if let Some(if_match) = header("if-match")
            && if_match != self.etag
        {
            return response
                .status(412)
                .body(Counted::new(Bytes::new(), None))
                .unwrap();
        }
        let head = method == Method::HEAD;
        let (status, range, part_checksum) = if let Some(number) = param("partNumber") {
            let index: usize = number.parse::<usize>().unwrap() - 1;
            self.count(if head {
                "HEAD ?partNumber"
            } else {
                "GET ?partNumber"
            });
            response = response.header("x-amz-mp-parts-count", parts.len());
            (
                206,
                parts[index].clone(),
                Some(self.part_crc(&parts[index])),
            )
        } else if let Some(value) = header("range") {
            self.count("GET Range");
            let (first, last) = value
                .strip_prefix("bytes=")
                .unwrap()
                .split_once('-')
                .unwrap();
            let first: usize = first.parse().unwrap();
            let last: usize = last.parse::<usize>().unwrap().min(total - 1);
            (206, first..last + 1, None)
        } else {
            self.count(if head { "HEAD" } else { "GET" });
            (200, 0..total, None)
        };
        if status == 206 {
            response = response.header(
                "content-range",
                format!("bytes {}-{}/{total}", range.start, range.end - 1),
            );
        }
        if checksum_mode {
            match part_checksum {
                Some(crc) => {
                    response = response.header("x-amz-checksum-crc32", support::base64(&crc))
                }
                None if status == 200 => {
                    response = response
                        .header("x-amz-checksum-crc32", self.composite())
                        .header("x-amz-checksum-type", "COMPOSITE");
                }
                None => {}
            }
        }
        let len = range.len();
        let body = if head {
            Counted::new(Bytes::new(), None)
        } else {
            Counted::new(self.bytes(range), Some(Arc::clone(self)))
        };
        response
            .status(StatusCode::from_u16(status).unwrap())
            .header("content-length", len)
            .body(body)
            .unwrap()
    }
}

/// A body sent in 64 KiB chunks, counting the object bytes hyper actually takes (a
/// response the client drops unread stops being polled).
struct Counted {
    data: Bytes,
    store: Option<Arc<Store>>,
}

impl Counted {
    fn new(data: Bytes, store: Option<Arc<Store>>) -> Self {
        Self { data, store }
    }
}

impl HttpBody for Counted {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        if self.data.is_empty() {
            return Poll::Ready(None);
        }
        let take = self.data.len().min(64 << 10);
        let chunk = self.data.split_to(take);
        if let Some(store) = &self.store {
            store
                .body_bytes_sent
                .fetch_add(take as u64, Ordering::Relaxed);
        }
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }
}

fn serve(store: Arc<Store>) -> (ServerThread, String) {
    let (listener, addr) = loopback_listener();
    let thread = ServerThread::start("part-store", listener, move |stream, _| {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            let service = service_fn(move |request: http::Request<Incoming>| {
                let store = Arc::clone(&store);
                async move {
                    let query = request.uri().query().unwrap_or("").to_owned();
                    Ok::<_, std::io::Error>(store.answer(
                        request.method(),
                        &query,
                        request.headers(),
                    ))
                }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    });
    (thread, format!("http://{addr}"))
}

fn client(endpoint: &str) -> Client {
    Client::builder()
        .endpoint(endpoint)
        .region("us-east-1")
        .static_credentials("AKIDEXAMPLE", "secret", None)
        .retry(support::retry(2))
        .build()
        .unwrap()
}

/// Downloads the store's object to a file; returns the verification, the store's counts and
/// the object bytes it sent.
async fn download(
    store: &Arc<Store>,
) -> (
    Result<Verification, s3_wire_tokio::Error>,
    BTreeMap<&'static str, u64>,
    u64,
) {
    let (_server, endpoint) = serve(Arc::clone(store));
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("object.bin");
    let result = client(&endpoint)
        .download(
            bucket("parts").unwrap(),
            key("multi.bin").unwrap(),
            target.as_path(),
        )
        .single_request_limit(1)
        .concurrency(4)
        .await;
    let verification = result.map(|done| {
        assert_eq!(
            std::fs::read(&target).unwrap(),
            store.data,
            "the bytes stored"
        );
        done.verification
    });
    (
        verification,
        store.counts(),
        store.body_bytes_sent.load(Ordering::Relaxed),
    )
}

const MIB: usize = 1 << 20;

#[tokio::test]
async fn listed_part_checksums_verify_every_part_with_ranges() {
    let store = Store::new(5, MIB, MIB / 3, true);
    let (verification, counts, sent) = download(&store).await;
    assert_eq!(
        verification.unwrap(),
        Verification::PerPart {
            algorithm: s3_wire_tokio::s3_ops::ChecksumAlgorithm::Crc32,
            parts: 5
        }
    );
    // One GET (part 1 from its body), one GetObjectAttributes, four ranges; no HEAD and no
    // partNumber read.
    assert_eq!(
        counts,
        BTreeMap::from([("GET", 1), ("GET ?attributes", 1), ("GET Range", 4)])
    );
    // The first response runs on past part 1 until the client drops it.
    assert!(sent >= store.data.len() as u64);
}

#[tokio::test]
async fn a_store_without_listed_parts_is_read_part_by_part() {
    let store = Store::new(5, MIB, MIB / 3, false);
    let (verification, counts, _) = download(&store).await;
    assert_eq!(
        verification.unwrap(),
        Verification::PerPart {
            algorithm: s3_wire_tokio::s3_ops::ChecksumAlgorithm::Crc32,
            parts: 5
        }
    );
    assert_eq!(
        counts,
        BTreeMap::from([
            ("GET", 1),
            ("GET ?attributes", 1),
            ("HEAD ?partNumber", 1),
            ("GET ?partNumber", 5),
        ])
    );
}

#[tokio::test]
async fn parts_listed_on_several_pages_are_all_read() {
    let mut store = Store::new(7, MIB / 2, 10, true);
    Arc::get_mut(&mut store).unwrap().page = 3;
    let (verification, counts, _) = download(&store).await;
    assert!(matches!(
        verification.unwrap(),
        Verification::PerPart { parts: 7, .. }
    ));
    assert_eq!(counts.get("GET ?attributes"), Some(&3));
    assert_eq!(counts.get("HEAD ?partNumber"), None);
}

#[tokio::test]
async fn a_corrupted_part_fails_the_download_either_way() {
    for lists_parts in [true, false] {
        let mut store = Store::new(4, MIB, MIB, lists_parts);
        Arc::get_mut(&mut store).unwrap().corrupt_part = Some(2);
        let (verification, _, _) = download(&store).await;
        let error = verification.unwrap_err();
        assert!(
            error.to_string().contains("checksum mismatch"),
            "lists parts: {lists_parts}: {error}"
        );
    }
}

#[tokio::test]
async fn listed_parts_of_another_generation_are_not_trusted_and_the_parts_are_read_by_number() {
    // GetObjectAttributes answers for another ETag while the object itself is unchanged: the
    // answer is not used, and the download neither fails nor loses its per-part verification.
    let mut store = Store::new(3, MIB, MIB, true);
    Arc::get_mut(&mut store)
        .unwrap()
        .attributes_of_another_object = true;
    let (verification, counts, _) = download(&store).await;
    assert_eq!(
        verification.unwrap(),
        Verification::PerPart {
            algorithm: s3_wire_tokio::s3_ops::ChecksumAlgorithm::Crc32,
            parts: 3
        }
    );
    assert_eq!(counts.get("GET ?attributes"), Some(&1));
    assert_eq!(counts.get("HEAD ?partNumber"), Some(&1));
    assert_eq!(
        counts.get("GET Range"),
        None,
        "no range on the untrusted layout"
    );
}

#[tokio::test]
async fn non_uniform_listed_parts_fall_back_to_part_numbers() {
    // The last part larger than the others: not uniform, so neither way can check by parts.
    let store = Store::with_parts(vec![MIB, MIB, MIB + 5], true);
    let (verification, counts, _) = download(&store).await;
    assert_eq!(
        verification.unwrap(),
        Verification::NotVerified(NotVerified::CompositeNotByParts)
    );
    assert_eq!(counts.get("GET ?attributes"), Some(&1));
    assert_eq!(counts.get("HEAD ?partNumber"), Some(&1));
}

/// The request and byte counts behind `measurements/download-part-checksums.md`.
#[tokio::test]
async fn report_requests_per_way() {
    if std::env::var_os("S3W_PART_CHECKSUM_REPORT").is_none() {
        return;
    }
    let printed = AtomicBool::new(false);
    for parts in [2usize, 8, 32] {
        for lists_parts in [true, false] {
            let store = Store::new(parts, MIB, MIB, lists_parts);
            let (verification, counts, sent) = download(&store).await;
            let total: u64 = counts.values().sum();
            if !printed.swap(true, Ordering::Relaxed) {
                println!(
                    "| parts | GetObjectAttributes lists parts | requests | by kind | object bytes sent | verification |"
                );
                println!("|---|---|---|---|---|---|");
            }
            println!(
                "| {parts} | {lists_parts} | {total} | {counts:?} | {sent} ({:.2}× the object) | {:?} |",
                sent as f64 / store.data.len() as f64,
                verification.unwrap()
            );
        }
    }
}

//! s3-sigv4 workloads (the published s3-wire baseline):
//! - canonical URI of `/bucket/photos/2024/space + unicode-é.jpg` (S3 rules);
//! - canonical query of 64 pairs `field-NN` -> `value N+` (sent encoded, in
//!   reverse order so the sort does work);
//! - canonical headers of 32 `x-amz-meta-field-NN: " a\t b  c "` plus `host`;
//! - header signing of `GET /bucket/key with spaces` with a cached key, with
//!   SigV4 and, side by side, SigV4a (region set `*`);
//! - deriving the SigV4a key of a credential (once per credential: the cost a
//!   fresh client pays on its first SigV4a request).

use std::hint::black_box;

use criterion::{BatchSize, Criterion};
use s3_wire::sigv4::fuzzing::{canonical_headers, canonical_query, canonical_uri};
use s3_wire::sigv4::http::{self, HeaderMap, HeaderName, HeaderValue};
use s3_wire::sigv4::{
    Credentials, HeaderSelection, PayloadHash, Signer, SigningParams, SigningTime, UriRules,
    uri_encode,
};

pub fn benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("sigv4");

    let path = "/bucket/photos/2024/space + unicode-é.jpg";
    let mut out = Vec::with_capacity(256);
    group.bench_function("canonical_uri", |b| {
        b.iter(|| {
            out.clear();
            canonical_uri(black_box(path), UriRules::S3, &mut out).unwrap();
            black_box(&out);
        })
    });

    let query = (0..64)
        .rev()
        .map(|n| {
            format!(
                "{}={}",
                uri_encode(format!("field-{n:02}"), true),
                uri_encode(format!("value {n}+"), true)
            )
        })
        .collect::<Vec<_>>()
        .join("&");
    let mut out = Vec::with_capacity(4096);
    group.bench_function("canonical_query_64", |b| {
        b.iter(|| {
            out.clear();
            canonical_query(black_box(&query), &mut out).unwrap();
            black_box(&out);
        })
    });

    let mut headers = HeaderMap::new();
    headers.insert(
        "host",
        HeaderValue::from_static("examplebucket.s3.us-east-1.amazonaws.com"),
    );
    for n in 0..32 {
        let name = HeaderName::from_bytes(format!("x-amz-meta-field-{n:02}").as_bytes()).unwrap();
        headers.insert(name, HeaderValue::from_static(" a\t b  c "));
    }
    let selection = HeaderSelection::new();
    let mut out = Vec::with_capacity(4096);
    group.bench_function("canonical_headers_33", |b| {
        b.iter(|| {
            out.clear();
            black_box(canonical_headers(
                black_box(&headers),
                None,
                &selection,
                &mut out,
            ));
        })
    });

    let signer = Signer::new();
    let credentials = Credentials::new(
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        None,
    );
    let time = SigningTime::from_parts(2013, 5, 24, 0, 0, 0).unwrap();
    let params = SigningParams::new("us-east-1", "s3", time, PayloadHash::Empty);
    let request = http::Request::get(format!(
        "https://s3.us-east-1.amazonaws.com{}",
        uri_encode("/bucket/key with spaces", false)
    ))
    .body(())
    .unwrap();
    // Warm the key cache: the target is signing with a cached key.
    signer
        .sign_headers(&mut request.clone(), &credentials, &params)
        .unwrap();
    group.bench_function("sign_headers_cached_key", |b| {
        b.iter_batched_ref(
            || request.clone(),
            |request| signer.sign_headers(request, &credentials, &params).unwrap(),
            BatchSize::SmallInput,
        )
    });

    let v4a = SigningParams::v4a("*", "s3", time, PayloadHash::Empty);
    signer
        .sign_headers(&mut request.clone(), &credentials, &v4a)
        .unwrap();
    group.bench_function("sign_headers_v4a_cached_key", |b| {
        b.iter_batched_ref(
            || request.clone(),
            |request| signer.sign_headers(request, &credentials, &v4a).unwrap(),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("v4a_key_derivation", |b| {
        b.iter(|| black_box(credentials.sigv4a_public_key().unwrap()))
    });
    group.finish();
}

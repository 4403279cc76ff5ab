//! Internal entry points for the root benchmarks and the fuzz targets
//! (`fuzzing` feature). Not a stable API.

use std::ops::Range;

use http::{HeaderMap, HeaderName, HeaderValue};

use crate::error::Error;
use crate::params::{HeaderSelection, PayloadHash, SigningParams, SigningSettings, UriRules};
use crate::{Credentials, RawRequest, Signer, SigningTime};

/// Appends the canonical URI of `path` to `out`.
pub fn canonical_uri(path: &str, rules: UriRules, out: &mut Vec<u8>) -> Result<(), Error> {
    crate::canonical::canonical_uri_into(path, rules, out).map_err(Error::from)
}

/// Appends the canonical query string of `query` to `out`.
pub fn canonical_query(query: &str, out: &mut Vec<u8>) -> Result<(), Error> {
    crate::canonical::canonical_query_into(query, out).map_err(Error::from)
}

/// Appends the canonical headers block and signed header list to `out`;
/// returns the range of the signed header list.
pub fn canonical_headers(
    headers: &HeaderMap,
    host: Option<&[u8]>,
    selection: &HeaderSelection,
    out: &mut Vec<u8>,
) -> Range<usize> {
    crate::canonical::canonical_headers_into(headers, host, selection, out)
}

/// Feeds arbitrary bytes through URI, query and header canonicalization and a
/// full header signature and presignature. Must never panic; errors are fine.
///
/// Layout of `data`: path, query and a header block separated by `0xFF`
/// bytes; header lines separated by `\n`, name and value by the first `:`.
pub fn canonicalize_arbitrary(data: &[u8]) {
    let mut parts = data.splitn(3, |&b| b == 0xFF);
    let path = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let query = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let header_block = parts.next().unwrap_or_default();

    let mut headers = HeaderMap::new();
    for line in header_block.split(|&b| b == b'\n') {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(&line[..colon]),
            HeaderValue::from_bytes(&line[colon + 1..]),
        ) else {
            continue;
        };
        headers.append(name, value);
    }

    let mut out = Vec::new();
    for rules in [
        UriRules::S3,
        UriRules::GENERIC,
        UriRules::new(false, true),
        UriRules::new(true, false),
    ] {
        let _ = canonical_uri(&path, rules, &mut out);
    }
    let _ = canonical_query(&query, &mut out);
    let range = canonical_headers(
        &headers,
        Some(b"example.com"),
        &HeaderSelection::new(),
        &mut out,
    );
    assert!(range.end <= out.len());

    let request = RawRequest {
        method: "GET".into(),
        scheme: Some("https".into()),
        authority: Some("example.com".into()),
        path,
        query: Some(query),
        headers,
    };
    let signer = Signer::new();
    let credentials = Credentials::new("AKIDEXAMPLE", "secret", Some("token".into()));
    let time = SigningTime::from_unix(1_440_938_160).unwrap_or_else(|_| unreachable!());
    for settings in [SigningSettings::s3(), SigningSettings::generic()] {
        let params = SigningParams::new("us-east-1", "s3", time, PayloadHash::Empty)
            .with_settings(&settings);
        sign_every_way(&signer, &request, &credentials, &params);
        // SigV4a shares the canonicalization; what differs is the region set
        // (header, query parameter, validation), the scope and the padded chunk
        // signatures. The region set comes from the input, so invalid ones are
        // exercised; an ECDSA signature costs ~50 SigV4 ones, so once per input.
        #[cfg(feature = "sigv4a")]
        {
            let region_set = request.query.as_deref().unwrap_or_default();
            let params = SigningParams::v4a(region_set, "s3", time, PayloadHash::Empty)
                .with_settings(&settings);
            sign_every_way(&signer, &request, &credentials, &params);
        }
    }
}

/// Header signing, presigning and a signed aws-chunked body of a few bytes.
fn sign_every_way(
    signer: &Signer,
    request: &RawRequest,
    credentials: &Credentials,
    params: &SigningParams<'_>,
) {
    let mut signed = request.clone();
    let _ = signer.sign_headers(&mut signed, credentials, params);
    let _ = signer.presign(
        request,
        credentials,
        params,
        std::time::Duration::from_secs(60),
    );
    let mut streamed = request.clone();
    let Ok(layout) = crate::ChunkedLayout::signed(3, crate::MIN_CHUNK_SIZE) else {
        return;
    };
    if let Ok(mut encoder) = signer.sign_streaming(&mut streamed, credentials, params, layout) {
        let mut out = vec![0; encoder.layout().encoded_length() as usize];
        let written = encoder.encode_chunk(b"abc", &mut out).unwrap_or(0);
        let finished = encoder.finish(None, &mut out[written..]).unwrap_or(0);
        assert!(written + finished <= out.len());
        assert!(finished == 0 || written + finished == out.len());
    }
}

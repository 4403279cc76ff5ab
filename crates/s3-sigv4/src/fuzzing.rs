//! Internal entry points for the root benchmarks and the fuzz targets
//! (`fuzzing` feature). Not a stable API.

pub mod aws_chunked;

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

// ---------------------------------------------------------------------------
// aws-chunked round trip
// ---------------------------------------------------------------------------

/// Trailer names the client sends (checksum headers); the input may also name its own.
const TRAILER_NAMES: [&str; 5] = [
    "x-amz-checksum-crc32",
    "x-amz-checksum-crc32c",
    "x-amz-checksum-crc64nvme",
    "x-amz-checksum-sha1",
    "x-amz-checksum-sha256",
];

/// The fixed signing time of the round trip: 2015-08-30T12:36:00Z.
const ROUNDTRIP_TIME: u64 = 1_440_938_160;
const ROUNDTRIP_AMZ_DATE: &str = "20150830T123600Z";
const ROUNDTRIP_SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Encodes a payload as an aws-chunked body in the mode, algorithm, chunk size, decoded
/// length and trailer that `data` selects, with misuse of the encoder interleaved, then
/// decodes the body with an independent minimal parser and verifies every chunk and
/// trailer signature independently (SigV4: the HMAC chain recomputed from the secret;
/// SigV4a: ECDSA verification with the credential's public key). Panics only on a broken
/// invariant:
///
/// * the encoded length is `layout.encoded_length()` (and the signed `content-length`),
///   every data chunk's framing is `encoded_chunk_length`, the tail is `final_length`;
/// * decoding yields the payload, chunks of exactly the layout's sizes (then the empty
///   one), the trailer as given, and signatures that chain from the seed signature;
/// * misuse (a wrong chunk length, too much or too little data, a small buffer, a wrong
///   or invalid trailer, use after `finish`, mismatched params) is an error, never a panic,
///   and leaves the encoder as it was.
///
/// Layout of `data`: byte 0 flags (bits 0-1 mode: 0 signed, 1 signed with trailer,
/// 2 unsigned with trailer, 3 signed with trailer built through `chunk_encoder`; bit 2
/// SigV4a when the `sigv4a` feature is on; bit 3 session token; bit 4 an existing
/// `content-encoding`; bit 5 a declared trailer length one off; bit 6 large chunks;
/// bit 7 build through `chunk_encoder`), bytes 1-2 chunk size (from 16 bytes below
/// [`crate::MIN_CHUNK_SIZE`]), bytes 3-5 decoded length (modulo three chunks), byte 6
/// trailer name (below 5 a checksum header, else the name field), bytes 7-8 which steps
/// get misuse first, byte 9 which chunks go through `chunk_header` instead of
/// `encode_chunk`; then `0xFF`-separated fields: trailer value, trailer name, payload
/// pattern (repeated to the decoded length; a counter when empty).
pub fn chunked_roundtrip_arbitrary(data: &[u8]) {
    use crate::{ChunkedLayout, MIN_CHUNK_SIZE, StreamingError, StreamingMode};

    let byte = |index: usize| data.get(index).copied().unwrap_or(0);
    let flags = byte(0);
    let mut chunk_size =
        MIN_CHUNK_SIZE - 16 + usize::from(u16::from_be_bytes([byte(1), byte(2)])) % 8208;
    if flags & 0x40 != 0 {
        chunk_size *= 8;
    }
    let length_seed = u64::from(u32::from_be_bytes([0, byte(3), byte(4), byte(5)]));
    let decoded_length = length_seed % (3 * chunk_size as u64 + 1);
    let misuse_steps = u16::from_be_bytes([byte(7), byte(8)]);
    let header_path = byte(9);
    let mut fields = data.get(10..).unwrap_or_default().splitn(3, |&b| b == 0xFF);
    let trailer_value = String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let custom_name = String::from_utf8_lossy(fields.next().unwrap_or_default()).into_owned();
    let pattern = fields.next().unwrap_or_default();

    let mode = match flags & 3 {
        0 => StreamingMode::Signed,
        1 | 3 => StreamingMode::SignedWithTrailer,
        _ => StreamingMode::UnsignedWithTrailer,
    };
    let via_chunk_encoder = flags & 3 == 3 || flags & 0x80 != 0;
    let has_trailer = mode != StreamingMode::Signed;
    let trailer_name = TRAILER_NAMES
        .get(usize::from(byte(6)))
        .map_or(custom_name, |name| (*name).to_owned());
    let declared_value_length = if flags & 0x20 != 0 {
        trailer_value.len() + 1
    } else {
        trailer_value.len()
    };

    // The layout: refused exactly for a small chunk size or a bad trailer name.
    let layout = match mode {
        StreamingMode::Signed => ChunkedLayout::signed(decoded_length, chunk_size),
        StreamingMode::SignedWithTrailer => ChunkedLayout::signed_with_trailer(
            decoded_length,
            chunk_size,
            &trailer_name,
            declared_value_length,
        ),
        _ => ChunkedLayout::unsigned_with_trailer(
            decoded_length,
            chunk_size,
            &trailer_name,
            declared_value_length,
        ),
    };
    // A lowercase token, and not the signature line's own name.
    let name_ok = !trailer_name.is_empty()
        && trailer_name != "x-amz-trailer-signature"
        && trailer_name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || b"!#$%&'*+-.^_`|~".contains(&b)
        });
    let layout = match layout {
        Ok(layout) => {
            assert!(
                chunk_size >= MIN_CHUNK_SIZE,
                "chunk size {chunk_size} accepted"
            );
            assert!(
                !has_trailer || name_ok,
                "trailer name {trailer_name:?} accepted"
            );
            layout
        }
        Err(Error::Streaming(StreamingError::ChunkSizeTooSmall {
            chunk_size: refused,
        })) => {
            assert!(refused == chunk_size && chunk_size < MIN_CHUNK_SIZE);
            return;
        }
        Err(Error::InvalidHeader(_)) => {
            assert!(
                has_trailer && !name_ok,
                "trailer name {trailer_name:?} refused"
            );
            return;
        }
        Err(other) => panic!("unexpected layout error {other:?}"),
    };
    assert_eq!(
        (layout.mode(), layout.decoded_length(), layout.chunk_size()),
        (mode, decoded_length, chunk_size)
    );
    assert_eq!(
        layout.trailer_name().map(HeaderName::as_str),
        has_trailer.then_some(trailer_name.as_str())
    );

    let token = (flags & 8 != 0).then(|| "FQoGZXIvYXdzEXAMPLE//token".to_owned());
    let credentials = Credentials::new("AKIDEXAMPLE", ROUNDTRIP_SECRET, token);
    let time = SigningTime::from_unix(ROUNDTRIP_TIME).unwrap_or_else(|_| unreachable!());
    #[cfg(feature = "sigv4a")]
    let v4a = flags & 4 != 0;
    #[cfg(not(feature = "sigv4a"))]
    let v4a = false;
    let params = if v4a {
        #[cfg(feature = "sigv4a")]
        {
            SigningParams::v4a("us-east-1,us-west-*", "s3", time, PayloadHash::Empty)
        }
        #[cfg(not(feature = "sigv4a"))]
        unreachable!()
    } else {
        SigningParams::new("us-east-1", "s3", time, PayloadHash::Empty)
    };

    let mut request = RawRequest {
        method: "PUT".into(),
        scheme: Some("https".into()),
        authority: Some("examplebucket.s3.amazonaws.com".into()),
        path: "/chunked/object".into(),
        query: None,
        headers: HeaderMap::new(),
    };
    if flags & 0x10 != 0 {
        request.headers.insert(
            http::header::CONTENT_ENCODING,
            HeaderValue::from_static("gzip"),
        );
    }
    let signer = roundtrip_signer();
    let encoder = if via_chunk_encoder {
        let params = params.with_payload(mode.payload_hash());
        let layout = layout.clone().with_algorithm(params.algorithm());
        layout.apply_headers(&mut request.headers);
        let seed = signer
            .sign_headers(&mut request, &credentials, &params)
            .unwrap_or_else(|e| panic!("signing the headers failed: {e}"));
        // Params that do not describe the layout are refused.
        let wrong_payload = params.with_payload(PayloadHash::Unsigned);
        assert!(matches!(
            signer.chunk_encoder(&credentials, &wrong_payload, seed, layout.clone()),
            Err(Error::InvalidParameter(_))
        ));
        #[cfg(feature = "sigv4a")]
        {
            use crate::SigningAlgorithm;
            let other = if v4a {
                SigningAlgorithm::V4
            } else {
                SigningAlgorithm::V4a
            };
            assert!(matches!(
                signer.chunk_encoder(
                    &credentials,
                    &params,
                    seed,
                    layout.clone().with_algorithm(other)
                ),
                Err(Error::InvalidParameter(_))
            ));
        }
        signer.chunk_encoder(&credentials, &params, seed, layout)
    } else {
        signer.sign_streaming(&mut request, &credentials, &params, layout.clone())
    };
    let mut encoder = encoder.unwrap_or_else(|e| panic!("no encoder: {e}"));
    let layout = encoder.layout().clone();
    check_streaming_headers(&request.headers, &layout, flags & 0x10 != 0);
    let authorization = request.headers[http::header::AUTHORIZATION]
        .to_str()
        .unwrap_or_default()
        .to_owned();
    let seed = authorization
        .rsplit("Signature=")
        .next()
        .unwrap_or_default()
        .to_owned();

    let payload: Vec<u8> = (0..decoded_length as usize)
        .map(|i| match pattern {
            [] => i as u8,
            pattern => pattern[i % pattern.len()],
        })
        .collect();
    let mut body = Vec::with_capacity(layout.encoded_length() as usize);
    let chunks: Vec<&[u8]> = payload.chunks(chunk_size).collect();
    let mut written = 0u64;
    for (step, chunk) in chunks.iter().enumerate() {
        if misuse_steps >> (step % 16) & 1 == 1 {
            misuse_before_chunk(&mut encoder, chunk, step + usize::from(byte(6)));
        }
        if header_path >> (step % 8) & 1 == 1 {
            let header = encoder
                .chunk_header(chunk)
                .unwrap_or_else(|e| panic!("chunk {step} refused: {e}"));
            body.extend_from_slice(header.as_ref());
            body.extend_from_slice(chunk);
            body.extend_from_slice(crate::CHUNK_TERMINATOR);
        } else {
            let needed = layout.encoded_chunk_length(chunk.len());
            let start = body.len();
            // Room to spare: the encoder must write exactly `needed` bytes.
            body.resize(start + needed + 7, 0xAA);
            let length = encoder
                .encode_chunk(chunk, &mut body[start..])
                .unwrap_or_else(|e| panic!("chunk {step} refused: {e}"));
            assert_eq!(length, needed);
            assert!(body[start + needed..].iter().all(|&b| b == 0xAA));
            body.truncate(start + needed);
        }
        written += chunk.len() as u64;
        assert_eq!(encoder.bytes_written(), written);
    }
    if misuse_steps >> (chunks.len() % 16) & 1 == 1 {
        misuse_before_finish(&mut encoder, &layout, declared_value_length);
    }

    // The end: refused exactly for a trailer that does not fit the layout.
    let value = has_trailer.then_some(trailer_value.as_str());
    let value_ok = trailer_value
        .bytes()
        .all(|b| b == b'\t' || (b >= 0x20 && b != 0x7F));
    let start = body.len();
    body.resize(start + layout.final_length() + 3, 0xAA);
    match encoder.finish(value, &mut body[start..]) {
        Ok(length) => {
            assert!(!has_trailer || (value_ok && declared_value_length == trailer_value.len()));
            assert_eq!(length, layout.final_length());
            body.truncate(start + length);
        }
        Err(Error::Streaming(StreamingError::TrailerMismatch)) => {
            assert_ne!(declared_value_length, trailer_value.len());
            return;
        }
        Err(Error::InvalidHeader(_)) => {
            assert!(!value_ok, "trailer value {trailer_value:?} refused");
            // Nothing was written and the encoder still wants its end.
            assert!(encoder.finish(value, &mut body[start..]).is_err());
            return;
        }
        Err(other) => panic!("finish failed: {other}"),
    }
    assert!(matches!(
        encoder.finish(value, &mut [0; 1024]),
        Err(Error::Streaming(StreamingError::Finished))
    ));
    assert!(matches!(
        encoder.chunk_header(b"x"),
        Err(Error::Streaming(StreamingError::Finished))
    ));

    assert_eq!(body.len() as u64, layout.encoded_length());
    let decoded = aws_chunked::decode(&body).unwrap_or_else(|e| {
        panic!(
            "undecodable body ({e}): {:?}",
            String::from_utf8_lossy(&body)
        )
    });
    check_signature_forms(&decoded, mode != StreamingMode::UnsignedWithTrailer, v4a);
    assert!(decoded.data == payload, "decoded payload differs");
    let mut sizes: Vec<usize> = chunks.iter().map(|chunk| chunk.len()).collect();
    sizes.push(0);
    assert_eq!(decoded.chunk_lengths, sizes);
    for (size, frame) in decoded.chunk_lengths.iter().zip(&decoded.frame_lengths) {
        if *size > 0 {
            assert_eq!(*frame, layout.encoded_chunk_length(*size));
        }
    }
    assert_eq!(decoded.tail_length, layout.final_length());
    let trailers: Vec<(String, String)> = value
        .map(|value| (trailer_name.clone(), value.to_owned()))
        .into_iter()
        .collect();
    assert_eq!(decoded.trailers, trailers);
    if mode != StreamingMode::UnsignedWithTrailer {
        verify_chunk_signatures(&decoded, &seed, &credentials, v4a);
    }
}

fn roundtrip_signer() -> &'static Signer {
    static SIGNER: std::sync::OnceLock<Signer> = std::sync::OnceLock::new();
    SIGNER.get_or_init(Signer::new)
}

/// The headers `sign_streaming` (or `apply_headers`) must have set.
fn check_streaming_headers(headers: &HeaderMap, layout: &crate::ChunkedLayout, had_encoding: bool) {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let encoding = if had_encoding {
        "aws-chunked,gzip"
    } else {
        "aws-chunked"
    };
    assert_eq!(get("content-encoding"), Some(encoding));
    assert_eq!(
        get("content-length"),
        Some(layout.encoded_length().to_string().as_str())
    );
    assert_eq!(
        get("x-amz-decoded-content-length"),
        Some(layout.decoded_length().to_string().as_str())
    );
    assert_eq!(
        get("x-amz-trailer"),
        layout.trailer_name().map(HeaderName::as_str)
    );
    assert_eq!(
        get("x-amz-content-sha256"),
        Some(layout.mode().payload_hash().to_value_string().as_str())
    );
    assert_eq!(get("x-amz-date"), Some(ROUNDTRIP_AMZ_DATE));
}

/// One misuse before chunk `chunk` (the next one expected): each must be refused and
/// leave the encoder as it was. `kind` picks which.
fn misuse_before_chunk(encoder: &mut crate::ChunkEncoder, chunk: &[u8], kind: usize) {
    use crate::StreamingError;
    let layout = encoder.layout().clone();
    let before = encoder.bytes_written();
    match kind % 5 {
        0 => {
            let needed = layout.encoded_chunk_length(chunk.len());
            let mut small = vec![0; needed - 1];
            assert_eq!(
                encoder.encode_chunk(chunk, &mut small),
                Err(Error::Streaming(StreamingError::BufferTooSmall {
                    needed,
                    available: needed - 1
                }))
            );
        }
        1 => assert!(matches!(
            encoder.chunk_header(&[]),
            Err(Error::Streaming(StreamingError::ChunkLength {
                actual: 0,
                ..
            }))
        )),
        2 => {
            let mut longer = chunk.to_vec();
            longer.push(b'+');
            assert!(matches!(
                encoder.chunk_header(&longer),
                Err(Error::Streaming(
                    StreamingError::ChunkLength { .. } | StreamingError::TooMuchData { .. }
                ))
            ));
        }
        // One byte short: not the last chunk any more, and shorter than a chunk.
        3 => assert!(matches!(
            encoder.chunk_header(&chunk[..chunk.len() - 1]),
            Err(Error::Streaming(StreamingError::ChunkLength { .. }))
        )),
        _ => assert_eq!(
            encoder.finish(None, &mut [0; 1024]),
            Err(Error::Streaming(StreamingError::MissingData {
                declared: layout.decoded_length(),
                written: before,
            }))
        ),
    }
    assert_eq!(encoder.bytes_written(), before);
}

/// Misuse once every payload byte was written: more data, a small buffer, a trailer that
/// does not match the layout. Each must be refused and leave the encoder as it was.
fn misuse_before_finish(
    encoder: &mut crate::ChunkEncoder,
    layout: &crate::ChunkedLayout,
    declared_value_length: usize,
) {
    use crate::StreamingError;
    let before = encoder.bytes_written();
    assert!(matches!(
        encoder.chunk_header(b"x"),
        Err(Error::Streaming(StreamingError::TooMuchData { .. }))
    ));
    let needed = layout.final_length();
    let fitting = "A".repeat(declared_value_length);
    let value = layout.trailer_name().map(|_| fitting.as_str());
    assert_eq!(
        encoder.finish(value, &mut vec![0; needed - 1]),
        Err(Error::Streaming(StreamingError::BufferTooSmall {
            needed,
            available: needed - 1
        }))
    );
    let mut out = vec![0; needed + 512];
    let longer = format!("{fitting}=");
    let wrong: [Option<&str>; 2] = match value {
        Some(_) => [None, Some(&longer)],
        None => [Some("AAAAAA=="), Some("")],
    };
    for wrong in wrong {
        assert_eq!(
            encoder.finish(wrong, &mut out),
            Err(Error::Streaming(StreamingError::TrailerMismatch))
        );
    }
    assert_eq!(encoder.bytes_written(), before);
}

/// The signatures of a decoded body are there exactly when the mode signs, and of the
/// algorithm's form: SigV4's 64 hex digits, SigV4a's padded to 144 (the decoder accepts
/// either, one length per body).
fn check_signature_forms(decoded: &aws_chunked::Decoded, signed: bool, v4a: bool) {
    let expected = if v4a { 144 } else { 64 };
    if signed {
        assert_eq!(decoded.chunk_signatures.len(), decoded.chunk_lengths.len());
        assert!(
            decoded
                .chunk_signatures
                .iter()
                .chain(&decoded.trailer_signature)
                .all(|signature| signature.len() == expected),
            "{decoded:?}"
        );
        assert_eq!(
            decoded.trailer_signature.is_some(),
            !decoded.trailers.is_empty()
        );
    } else {
        assert!(decoded.chunk_signatures.is_empty(), "{decoded:?}");
        assert_eq!(decoded.trailer_signature, None);
    }
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex_of(&Sha256::digest(data))
}

/// Checks the chunk and trailer signatures of `decoded` from scratch: each one signs
/// `ALGORITHM-PAYLOAD\n date\n scope\n previous\n empty-hash\n chunk-hash` (trailer:
/// `ALGORITHM-TRAILER\n date\n scope\n previous\n trailer-hash`), chaining from `seed`.
fn verify_chunk_signatures(
    decoded: &aws_chunked::Decoded,
    seed: &str,
    credentials: &Credentials,
    v4a: bool,
) {
    let (algorithm, scope) = if v4a {
        ("AWS4-ECDSA-P256-SHA256", "20150830/s3/aws4_request")
    } else {
        ("AWS4-HMAC-SHA256", "20150830/us-east-1/s3/aws4_request")
    };
    let verify = independent_verifier(credentials, v4a);
    assert_eq!(decoded.chunk_signatures.len(), decoded.chunk_lengths.len());
    let mut previous = seed.to_owned();
    let mut offset = 0;
    for (size, signature) in decoded.chunk_lengths.iter().zip(&decoded.chunk_signatures) {
        let chunk = &decoded.data[offset..offset + size];
        offset += size;
        let string_to_sign = format!(
            "{algorithm}-PAYLOAD\n{ROUNDTRIP_AMZ_DATE}\n{scope}\n{previous}\n{EMPTY_SHA256}\n{}",
            sha256_hex(chunk)
        );
        let signature = signature.trim_end_matches('*');
        assert!(
            verify(&string_to_sign, signature),
            "chunk signature {signature} does not verify"
        );
        signature.clone_into(&mut previous);
    }
    match (decoded.trailers.as_slice(), &decoded.trailer_signature) {
        ([], None) => {}
        ([(name, value)], Some(signature)) => {
            let string_to_sign = format!(
                "{algorithm}-TRAILER\n{ROUNDTRIP_AMZ_DATE}\n{scope}\n{previous}\n{}",
                sha256_hex(format!("{name}:{value}\n").as_bytes())
            );
            let signature = signature.trim_end_matches('*');
            assert!(
                verify(&string_to_sign, signature),
                "trailer signature {signature} does not verify"
            );
        }
        (trailers, signature) => panic!("trailers {trailers:?} with signature {signature:?}"),
    }
}

/// Verifies a hex signature of a string to sign without the crate's signing code:
/// SigV4 recomputes the HMAC chain from the secret, SigV4a checks the ECDSA signature
/// with the credential's public key.
/// Whether a hex signature signs a string to sign: `verify(string_to_sign, signature)`.
type Verifier = Box<dyn Fn(&str, &str) -> bool>;

fn independent_verifier(credentials: &Credentials, v4a: bool) -> Verifier {
    use hmac::{Hmac, KeyInit, Mac};
    type HmacSha256 = Hmac<sha2::Sha256>;
    fn mac(key: &[u8], data: &[u8]) -> Vec<u8> {
        let Ok(mut mac) = HmacSha256::new_from_slice(key) else {
            unreachable!("HMAC takes keys of every length")
        };
        mac.update(data);
        mac.finalize().into_bytes().to_vec()
    }
    if v4a {
        #[cfg(feature = "sigv4a")]
        {
            use p256::ecdsa::signature::Verifier;
            use p256::ecdsa::{DerSignature, VerifyingKey};
            let key = credentials
                .sigv4a_public_key()
                .ok()
                .and_then(|sec1| VerifyingKey::from_sec1_bytes(&sec1).ok())
                .unwrap_or_else(|| panic!("no SigV4a public key"));
            return Box::new(move |string_to_sign: &str, signature: &str| {
                let der: Option<Vec<u8>> = (0..signature.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(signature.get(i..i + 2)?, 16).ok())
                    .collect();
                der.and_then(|der| DerSignature::from_bytes(&der).ok())
                    .is_some_and(|sig| key.verify(string_to_sign.as_bytes(), &sig).is_ok())
            });
        }
    }
    let mut secret = b"AWS4".to_vec();
    secret.extend_from_slice(credentials.secret_access_key().as_bytes());
    let key = ["20150830", "us-east-1", "s3", "aws4_request"]
        .iter()
        .fold(secret, |key, part| mac(&key, part.as_bytes()));
    Box::new(move |string_to_sign: &str, signature: &str| {
        hex_of(&mac(&key, string_to_sign.as_bytes())) == signature
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A signed-with-trailer body of two chunks from the public API, its seed signature
    /// and credentials.
    fn signed_body(v4a: bool) -> (Vec<u8>, String, Credentials) {
        let credentials = Credentials::new("AKIDEXAMPLE", ROUNDTRIP_SECRET, None);
        let time = SigningTime::from_unix(ROUNDTRIP_TIME).unwrap();
        let params = if v4a {
            #[cfg(feature = "sigv4a")]
            {
                SigningParams::v4a("*", "s3", time, PayloadHash::Empty)
            }
            #[cfg(not(feature = "sigv4a"))]
            unreachable!()
        } else {
            SigningParams::new("us-east-1", "s3", time, PayloadHash::Empty)
        };
        let layout = crate::ChunkedLayout::signed_with_trailer(
            8193,
            crate::MIN_CHUNK_SIZE,
            "x-amz-checksum-crc32",
            8,
        )
        .unwrap();
        let mut request = http::Request::put("https://b.s3.amazonaws.com/k")
            .body(())
            .unwrap();
        let mut encoder = Signer::new()
            .sign_streaming(&mut request, &credentials, &params, layout)
            .unwrap();
        let seed = request.headers()["authorization"]
            .to_str()
            .unwrap()
            .rsplit("Signature=")
            .next()
            .unwrap()
            .to_owned();
        let payload = vec![7u8; 8193];
        let mut body = vec![0; encoder.layout().encoded_length() as usize];
        let mut at = 0;
        for chunk in payload.chunks(crate::MIN_CHUNK_SIZE) {
            at += encoder.encode_chunk(chunk, &mut body[at..]).unwrap();
        }
        at += encoder.finish(Some("AAAAAA=="), &mut body[at..]).unwrap();
        assert_eq!(at, body.len());
        (body, seed, credentials)
    }

    fn algorithms() -> Vec<bool> {
        if cfg!(feature = "sigv4a") {
            vec![false, true]
        } else {
            vec![false]
        }
    }

    #[test]
    fn the_independent_checks_accept_the_encoder_output() {
        for v4a in algorithms() {
            let (body, seed, credentials) = signed_body(v4a);
            let decoded = aws_chunked::decode(&body).unwrap();
            check_signature_forms(&decoded, true, v4a);
            assert_eq!(decoded.chunk_lengths, [8192, 1, 0]);
            assert_eq!(decoded.data, vec![7u8; 8193]);
            assert_eq!(
                decoded.trailers,
                [("x-amz-checksum-crc32".to_owned(), "AAAAAA==".to_owned())]
            );
            verify_chunk_signatures(&decoded, &seed, &credentials, v4a);
        }
    }

    /// A SigV4a aws-chunked upload of several chunks through `sign_streaming`, with and
    /// without a trailer: the layout is sized for the padded signatures, the announced
    /// length is the length sent, and every chunk and trailer signature verifies.
    #[cfg(feature = "sigv4a")]
    #[test]
    fn a_sigv4a_chunked_upload_chains_verifiable_padded_signatures() {
        let signer = Signer::new();
        let credentials = Credentials::new("AKIDEXAMPLE", ROUNDTRIP_SECRET, Some("session".into()));
        let time = SigningTime::from_unix(ROUNDTRIP_TIME).unwrap();
        let params = SigningParams::v4a("*", "s3", time, PayloadHash::Empty);
        let body: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
        for trailer in [None, Some(("x-amz-checksum-crc32", "AAAAAA=="))] {
            let layout = match trailer {
                None => crate::ChunkedLayout::signed(body.len() as u64, 16 * 1024),
                Some((name, value)) => crate::ChunkedLayout::signed_with_trailer(
                    body.len() as u64,
                    16 * 1024,
                    name,
                    value.len(),
                ),
            }
            .unwrap();
            let mut request =
                http::Request::put("https://alias.mrap.accesspoint.s3-global.amazonaws.com/key")
                    .body(())
                    .unwrap();
            let mut encoder = signer
                .sign_streaming(&mut request, &credentials, &params, layout)
                .unwrap();
            assert_eq!(encoder.layout().algorithm(), crate::SigningAlgorithm::V4a);
            let encoded_length = encoder.layout().encoded_length();
            assert_eq!(
                request.headers()["content-length"],
                encoded_length.to_string().as_str()
            );
            let mut encoded = vec![0; encoded_length as usize];
            let mut at = 0;
            for chunk in body.chunks(16 * 1024) {
                at += encoder.encode_chunk(chunk, &mut encoded[at..]).unwrap();
            }
            at += encoder
                .finish(trailer.map(|(_, value)| value), &mut encoded[at..])
                .unwrap();
            assert_eq!(
                at as u64, encoded_length,
                "the length announced is the length sent"
            );
            let authorization = request.headers()["authorization"].to_str().unwrap();
            assert!(authorization.starts_with(
                "AWS4-ECDSA-P256-SHA256 Credential=AKIDEXAMPLE/20150830/s3/aws4_request, SignedHeaders="
            ));
            let seed = authorization.rsplit("Signature=").next().unwrap();
            // Strict: every signature padded with `*` to 144 hex digits.
            let decoded = aws_chunked::decode(&encoded).unwrap();
            check_signature_forms(&decoded, true, true);
            assert_eq!(decoded.data, body);
            let sent: Vec<(String, String)> = trailer
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
                .into_iter()
                .collect();
            assert_eq!(decoded.trailers, sent);
            verify_chunk_signatures(&decoded, seed, &credentials, true);
        }
    }

    #[test]
    fn the_verifier_rejects_tampering() {
        for v4a in algorithms() {
            let (body, seed, credentials) = signed_body(v4a);
            let decoded = aws_chunked::decode(&body).unwrap();
            let mut changed_seed = seed.clone().into_bytes();
            changed_seed[5] ^= 1;
            let mut changed_chunk = decoded.clone();
            changed_chunk.data[8192] ^= 1;
            let mut changed_trailer = decoded.clone();
            changed_trailer.trailers[0].1.push('A');
            let cases = [
                (decoded, String::from_utf8(changed_seed).unwrap()),
                (changed_chunk, seed.clone()),
                (changed_trailer, seed.clone()),
            ];
            for (decoded, seed) in cases {
                let result = std::panic::catch_unwind(|| {
                    verify_chunk_signatures(&decoded, &seed, &credentials, v4a)
                });
                assert!(result.is_err(), "tampering not detected (v4a {v4a})");
            }
        }
    }

    /// The strict decoder refuses what the encoder never writes (`aws_chunked`'s own tests
    /// hold the grammar case by case).
    #[test]
    fn the_decoder_is_strict_about_the_encoder_output() {
        let (body, _, _) = signed_body(false);
        let text = String::from_utf8(body.clone()).unwrap();
        let bad = [
            text.replacen("2000;", "02000;", 1),
            text.replacen("2000;", "2000 ;", 1),
            text.replacen("1;chunk", "A;chunk", 1),
            text.replacen("chunk-signature=", "chunk-signature=x", 1),
            format!("{text}x"),
            text[..text.len() - 2].to_owned(),
            text.replacen("x-amz-trailer-signature", "x-amz-trailer-signatur", 1),
        ];
        for bad in bad {
            assert!(aws_chunked::decode(bad.as_bytes()).is_err(), "{bad:?}");
        }
        let decoded = aws_chunked::decode(&body).unwrap();
        let unsigned = std::panic::catch_unwind(|| check_signature_forms(&decoded, false, false));
        assert!(unsigned.is_err(), "a signed body is not an unsigned one");
    }
}

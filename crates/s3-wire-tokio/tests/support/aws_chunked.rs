//! `aws-chunked` request bodies received by the test servers: decoded by s3-sigv4's strict
//! decoder (`s3_sigv4::fuzzing::aws_chunked`, the one the fuzz round trip and the perf null
//! server use too), and their chunk and trailer signatures checked here independently (from
//! the AWS "signature calculations for streaming uploads" documentation).

use sha2::{Digest, Sha256};

// Not every test binary decodes bodies itself.
#[allow(unused_imports)]
pub use s3_wire_tokio::s3_sigv4::fuzzing::aws_chunked::{Decoded, decode};

use super::sigv4::{Signed, hex, hmac, signing_key};

/// Checks the chain of chunk signatures (seeded by the header signature) and, if present, the
/// trailer signature.
pub fn verify_signatures(decoded: &Decoded, seed: &Signed, secret_key: &str) -> Result<(), String> {
    let key = signing_key(secret_key, &seed.scope);
    let empty_hash = hex(&Sha256::digest(b""));
    let mut previous = seed.signature.clone();
    let mut offset = 0;
    if decoded.chunk_signatures.len() != decoded.chunk_lengths.len() {
        return Err("not every chunk is signed".into());
    }
    for (index, (&len, signature)) in decoded
        .chunk_lengths
        .iter()
        .zip(&decoded.chunk_signatures)
        .enumerate()
    {
        let data = &decoded.data[offset..offset + len];
        offset += len;
        let string_to_sign = format!(
            "AWS4-HMAC-SHA256-PAYLOAD\n{}\n{}\n{previous}\n{empty_hash}\n{}",
            seed.amz_date,
            seed.scope,
            hex(&Sha256::digest(data))
        );
        let expected = hex(&hmac(&key, string_to_sign.as_bytes()));
        if *signature != expected {
            return Err(format!(
                "chunk {index}: signature {signature}, expected {expected}"
            ));
        }
        previous = expected;
    }
    if let Some(signature) = &decoded.trailer_signature {
        let mut trailer_text = String::new();
        for (name, value) in &decoded.trailers {
            trailer_text.push_str(&format!("{name}:{value}\n"));
        }
        let string_to_sign = format!(
            "AWS4-HMAC-SHA256-TRAILER\n{}\n{}\n{previous}\n{}",
            seed.amz_date,
            seed.scope,
            hex(&Sha256::digest(trailer_text.as_bytes()))
        );
        let expected = hex(&hmac(&key, string_to_sign.as_bytes()));
        if *signature != expected {
            return Err(format!(
                "trailer signature {signature}, expected {expected}"
            ));
        }
    }
    Ok(())
}

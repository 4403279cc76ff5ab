//! Choosing the payload mode of a request and signing it (s3-sigv4), and
//! building the body of one attempt.
//!
//! | body                     | plain HTTP                       | HTTPS                               |
//! |--------------------------|----------------------------------|-------------------------------------|
//! | none / XML document      | SHA-256 of the bytes             | SHA-256 of the bytes                |
//! | bytes, file              | SHA-256 (one read pass, cached)  | `UNSIGNED-PAYLOAD`                  |
//! | one-shot stream          | aws-chunked, signed chunks       | `UNSIGNED-PAYLOAD`                  |
//! | any, trailing checksum   | aws-chunked, signed + trailer    | aws-chunked, unsigned + trailer     |
//!
//! Uploads carry a trailing checksum by default (the client's `upload_checksum`), so the
//! rows without one are what a request or client that turned checksums off sends: nothing
//! beyond what SigV4 itself requires, for stores that reject checksums.

use std::time::SystemTime;

use http::request::Parts;
use s3_ops::{ChecksumAlgorithm, Endpoint, Scheme};
use s3_sigv4::{Credentials, PayloadHash, SigningParams, SigningTime};
use sha2::{Digest, Sha256};

use crate::body::{AttemptBody, Body, Source};
use crate::chunked::ChunkedBody;
use crate::error::{Error, ErrorKind};
use crate::stall::Activity;

/// In-memory payloads above this size are sent `UNSIGNED-PAYLOAD` over TLS.
const UNSIGNED_THRESHOLD: usize = 64 * 1024;

/// How the payload is described to the signer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Payload {
    /// Sent as-is, signed by its SHA-256 (or as the empty payload).
    Hashed(PayloadHash),
    /// Sent as-is, `UNSIGNED-PAYLOAD` (TLS protects it).
    Unsigned,
    /// Sent aws-chunked.
    Chunked {
        /// Chunk signatures (plain HTTP) or `STREAMING-UNSIGNED-PAYLOAD-TRAILER`.
        signed: bool,
        /// The checksum sent as a trailer.
        trailer: Option<ChecksumAlgorithm>,
    },
}

impl Payload {
    /// Picks the payload mode for an operation's body (see the module table).
    /// `sha256` caches the digest of a replayable upload across attempts.
    pub(crate) async fn choose(
        description: &s3_ops::Body,
        upload: Option<&Body>,
        endpoint: &Endpoint,
        sha256: &mut Option<[u8; 32]>,
    ) -> Result<Payload, Error> {
        let tls = endpoint.scheme() == Scheme::Https;
        match description {
            s3_ops::Body::Empty => Ok(Payload::Hashed(PayloadHash::Empty)),
            // Over TLS, large in-memory payloads are not hashed (UNSIGNED-PAYLOAD);
            // XML documents are small and always signed by their digest.
            s3_ops::Body::Bytes(bytes) if tls && bytes.len() > UNSIGNED_THRESHOLD => {
                Ok(Payload::Unsigned)
            }
            s3_ops::Body::Bytes(bytes) => {
                let digest = *sha256.get_or_insert_with(|| Sha256::digest(bytes).into());
                Ok(Payload::Hashed(PayloadHash::Sha256(digest)))
            }
            s3_ops::Body::External {
                content_length,
                trailing_checksum,
            } => {
                let upload = upload.ok_or_else(|| {
                    Error::request_body("the operation needs a body and none was given")
                })?;
                if upload.len() != *content_length {
                    return Err(Error::request_body(format!(
                        "body is {} bytes but the request announces {content_length}",
                        upload.len()
                    )));
                }
                if trailing_checksum.is_some() {
                    return Ok(Payload::Chunked {
                        signed: !tls,
                        trailer: *trailing_checksum,
                    });
                }
                if tls {
                    return Ok(Payload::Unsigned);
                }
                // Over plain HTTP a stream cannot be hashed ahead: its chunks are signed.
                if matches!(upload.source, Source::Stream(_)) {
                    return Ok(Payload::Chunked {
                        signed: true,
                        trailer: None,
                    });
                }
                let digest = match sha256 {
                    Some(digest) => *digest,
                    None => {
                        let digest = sha256_of(upload).await?;
                        *sha256 = Some(digest);
                        digest
                    }
                };
                Ok(Payload::Hashed(PayloadHash::Sha256(digest)))
            }
            _ => Err(Error::config("unsupported request body kind")),
        }
    }
}

/// The SHA-256 of a replayable body (a file is read once, by position, on a
/// blocking thread).
async fn sha256_of(body: &Body) -> Result<[u8; 32], Error> {
    match &body.source {
        Source::Bytes(bytes) => Ok(Sha256::digest(bytes).into()),
        Source::File(range) => {
            let range = range.clone();
            tokio::task::spawn_blocking(move || {
                let mut hasher = Sha256::new();
                let mut position = range.offset;
                let end = range.offset + range.len;
                while position < end {
                    let want = (end - position).min(1024 * 1024) as usize;
                    let chunk = crate::body::read_at(&range.file, position, want)?;
                    if chunk.is_empty() {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            "file shrank while hashing",
                        ));
                    }
                    hasher.update(&chunk);
                    position += chunk.len() as u64;
                }
                Ok(hasher.finalize().into())
            })
            .await
            .map_err(|e| Error::request_body(format!("hashing task failed: {e}")))?
            .map_err(|e| Error::request_body("reading the file to hash it failed").with_source(e))
        }
        Source::Stream(_) => Err(Error::request_body(
            "a one-shot stream cannot be pre-hashed",
        )),
    }
}

/// The client's signer: s3-sigv4's, with its signing-key cache.
#[derive(Debug, Default)]
pub(crate) struct Signer {
    inner: s3_sigv4::Signer,
}

impl Signer {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn raw(&self) -> &s3_sigv4::Signer {
        &self.inner
    }

    /// Signs `parts` for `payload` at `now` and builds this attempt's body.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sign(
        &self,
        parts: &mut Parts,
        credentials: &Credentials,
        region: &str,
        now: SystemTime,
        payload: Payload,
        description: &s3_ops::Body,
        upload: Option<&Body>,
        activity: Activity,
    ) -> Result<reqwest::Body, Error> {
        let time = SigningTime::from_system_time(now)
            .map_err(|e| Error::new(ErrorKind::Signing).with_source(format!("{e:?}")))?;
        let signing_error = |e: s3_sigv4::Error| Error::new(ErrorKind::Signing).with_source(e);
        let hash = match payload {
            Payload::Hashed(hash) => hash,
            Payload::Unsigned => PayloadHash::Unsigned,
            Payload::Chunked { signed, trailer } => {
                let upload = upload.ok_or_else(|| {
                    Error::request_body("the operation needs a body and none was given")
                })?;
                let layout = crate::chunked::layout(upload.len(), signed, trailer)?;
                let params = SigningParams::new(region, "s3", time, PayloadHash::Unsigned);
                let encoder = self
                    .inner
                    .sign_streaming(parts, credentials, &params, layout)
                    .map_err(signing_error)?;
                let body = ChunkedBody::new(upload, encoder, trailer, activity)?;
                return Ok(reqwest::Body::wrap(body));
            }
        };
        let params = SigningParams::new(region, "s3", time, hash);
        self.inner
            .sign_headers(parts, credentials, &params)
            .map_err(signing_error)?;
        let body = match (description, upload) {
            (s3_ops::Body::Empty, _) => reqwest::Body::from(bytes::Bytes::new()),
            (s3_ops::Body::Bytes(bytes), upload) => {
                let mut body = Body::from_bytes(bytes.clone());
                body.progress = upload.and_then(|upload| upload.progress.clone());
                reqwest::Body::wrap(AttemptBody::plain(&body, activity))
            }
            (_, Some(upload)) => reqwest::Body::wrap(AttemptBody::plain(upload, activity)),
            (_, None) => {
                return Err(Error::request_body(
                    "the operation needs a body and none was given",
                ));
            }
        };
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use std::io::Write;

    fn external(len: u64, trailer: Option<ChecksumAlgorithm>) -> s3_ops::Body {
        s3_ops::Body::External {
            content_length: len,
            trailing_checksum: trailer,
        }
    }

    fn one_shot(len: u64) -> Body {
        crate::body::test_stream_body(Vec::new(), len)
    }

    async fn choose(
        description: &s3_ops::Body,
        upload: Option<&Body>,
        tls: bool,
    ) -> Result<Payload, Error> {
        let url = if tls {
            "https://storage.example.com"
        } else {
            "http://127.0.0.1:9000"
        };
        let endpoint = Endpoint::custom(url, "us-east-1").unwrap();
        Payload::choose(description, upload, &endpoint, &mut None).await
    }

    #[tokio::test]
    async fn in_memory_bodies_are_hashed_once_per_operation() {
        let body = s3_ops::Body::Bytes(Bytes::from_static(b"<Delete/>"));
        let endpoint = Endpoint::custom("http://127.0.0.1:9000", "us-east-1").unwrap();
        let mut cache = None;
        let first = Payload::choose(&body, None, &endpoint, &mut cache)
            .await
            .unwrap();
        let digest: [u8; 32] = Sha256::digest(b"<Delete/>").into();
        assert_eq!(first, Payload::Hashed(PayloadHash::Sha256(digest)));
        assert_eq!(cache, Some(digest));
        // A retry takes the digest from the cache instead of hashing again.
        let mut cached = Some([7u8; 32]);
        let retry = Payload::choose(&body, None, &endpoint, &mut cached)
            .await
            .unwrap();
        assert_eq!(retry, Payload::Hashed(PayloadHash::Sha256([7u8; 32])));
    }

    #[tokio::test]
    async fn payload_modes_follow_the_table() {
        let small = s3_ops::Body::Bytes(Bytes::from_static(b"<Delete/>"));
        let small_hash = PayloadHash::Sha256(Sha256::digest(b"<Delete/>").into());
        let large = s3_ops::Body::Bytes(Bytes::from(vec![1u8; UNSIGNED_THRESHOLD + 1]));
        for tls in [false, true] {
            assert_eq!(
                choose(&s3_ops::Body::Empty, None, tls).await.unwrap(),
                Payload::Hashed(PayloadHash::Empty)
            );
            assert_eq!(
                choose(&small, None, tls).await.unwrap(),
                Payload::Hashed(small_hash)
            );
        }
        assert_eq!(choose(&large, None, true).await.unwrap(), Payload::Unsigned);
        assert!(matches!(
            choose(&large, None, false).await.unwrap(),
            Payload::Hashed(PayloadHash::Sha256(_))
        ));

        let stream = one_shot(5);
        assert_eq!(
            choose(&external(5, None), Some(&stream), false)
                .await
                .unwrap(),
            Payload::Chunked {
                signed: true,
                trailer: None
            }
        );
        assert_eq!(
            choose(&external(5, None), Some(&stream), true)
                .await
                .unwrap(),
            Payload::Unsigned
        );
        let bytes = Body::from_bytes(Bytes::from_static(b"hello"));
        assert_eq!(
            choose(
                &external(5, Some(ChecksumAlgorithm::Crc32c)),
                Some(&bytes),
                false
            )
            .await
            .unwrap(),
            Payload::Chunked {
                signed: true,
                trailer: Some(ChecksumAlgorithm::Crc32c)
            }
        );
        assert_eq!(
            choose(&external(5, None), Some(&bytes), true)
                .await
                .unwrap(),
            Payload::Unsigned
        );
        let mismatch = choose(&external(6, None), Some(&bytes), false)
            .await
            .unwrap_err();
        assert!(
            matches!(mismatch.kind(), ErrorKind::RequestBody(_)),
            "{mismatch:?}"
        );
        let missing = choose(&external(6, None), None, false).await.unwrap_err();
        assert!(
            matches!(missing.kind(), ErrorKind::RequestBody(_)),
            "{missing:?}"
        );
    }

    #[tokio::test]
    async fn a_file_range_over_plain_http_is_signed_by_its_sha256() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 253) as u8).collect();
        file.write_all(&data).unwrap();
        let range = Body::from_file_range(file.path(), 1_000, 2_500_000)
            .await
            .unwrap();
        let expected: [u8; 32] = Sha256::digest(&data[1_000..2_501_000]).into();
        assert_eq!(
            choose(&external(2_500_000, None), Some(&range), false)
                .await
                .unwrap(),
            Payload::Hashed(PayloadHash::Sha256(expected))
        );
        let beyond = Body::from_file_range(file.path(), 2_999_999, 2)
            .await
            .unwrap_err();
        assert!(
            matches!(beyond.kind(), ErrorKind::RequestBody(_)),
            "{beyond:?}"
        );
    }
}

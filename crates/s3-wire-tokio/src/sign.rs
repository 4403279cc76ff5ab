//! Choosing the payload mode of a request and signing it (s3-sigv4), and
//! building the body of one attempt.
//!
//! | body                          | plain HTTP                                          | HTTPS                                  |
//! |-------------------------------|-----------------------------------------------------|----------------------------------------|
//! | none / XML document           | SHA-256 of the bytes                                | SHA-256 of the bytes                   |
//! | bytes (checksum header)       | SHA-256 (cached); over 128 KiB with the checksum    | `UNSIGNED-PAYLOAD` above 64 KiB        |
//! | bytes in chunks               | SHA-256 and checksum in one pass ahead; header      | checksum ahead, header; `UNSIGNED-PAYLOAD` |
//! | file range, with checksum     | SHA-256 and checksum in one read pass; header       | aws-chunked, unsigned + trailer        |
//! | file range, no checksum       | SHA-256 (one read pass, cached)                     | `UNSIGNED-PAYLOAD`                     |
//! | one-shot stream, checksum     | aws-chunked, signed chunks + signed trailer         | aws-chunked, unsigned + trailer        |
//! | one-shot stream, no checksum  | aws-chunked, signed chunks                          | `UNSIGNED-PAYLOAD`                     |
//!
//! Over plain HTTP every payload is signed by its SHA-256: a replayable body (bytes, a file
//! range, a buffered part) is hashed ahead, its checksum computed in the same pass and sent
//! as a header, which every S3-compatible store accepts; signed aws-chunked trailers, which
//! some refuse (Garage 2.5.0), are left to the one body that cannot be read twice, a one-shot
//! stream, and a store whose profile says it takes none
//! ([`ProviderQuirks::signed_trailers`]) gets that stream in signed chunks without the
//! trailer. Over TLS a file's checksum is computed as it is sent (a trailer), or ahead where
//! the store takes no trailer.
//!
//! A managed upload's file part that is hashed ahead is read whole into memory, when the
//! budget has room at once, and hashed as it is read ([`read_whole_digested`]): it goes as
//! bytes, read once instead of twice.
//!
//! Bytes over 128 KiB (2 MiB for a CRC alone) are hashed on the blocking pool, not on the
//! thread polling the request; for a PutObject or UploadPart over 128 KiB, and for bytes in
//! chunks (which s3-ops cannot hold), `ops.rs` computes the checksum once ahead, in one pass
//! with any SHA-256, instead of s3-ops building it into every attempt's request.
//!
//! Uploads carry a checksum by default (the client's `upload_checksum`), so the rows without
//! one are what a request or client that turned checksums off sends: nothing beyond what
//! SigV4 itself requires, for stores that reject checksums.
//!
//! With [`PayloadSigning::UnsignedWithChecksum`] a payload that carries a checksum is sent
//! over plain HTTP as over TLS (the HTTPS column); one without a checksum is still signed.

use std::time::SystemTime;

use bytes::Bytes;
use http::HeaderValue;
use http::request::Parts;
use s3_ops::{Checksum, ChecksumAlgorithm, Endpoint, OperationRequest, ProviderQuirks, Scheme};
use s3_sigv4::{Credentials, PayloadHash, SigningTime};

use crate::body::{AttemptBody, Body, FileRange, Source};
use crate::chunked::ChunkedBody;
use crate::error::{Error, ErrorKind};
use crate::stall::Activity;

/// In-memory payloads above this size are sent `UNSIGNED-PAYLOAD` over TLS.
const UNSIGNED_THRESHOLD: usize = 64 * 1024;

/// Bytes a file is read in to be hashed ahead.
const HASH_BUFFER: usize = 256 * 1024;

/// In-memory bodies up to this size are hashed ahead on the runtime's thread (within about
/// 100 µs with SHA-256); larger ones on the blocking pool.
pub(crate) const INLINE_DIGEST_LIMIT: usize = 128 * 1024;

/// The same for a CRC alone, some 16 times cheaper per byte than SHA-256: below this a trip
/// to the blocking pool would cost more than the checksum.
const INLINE_CHECKSUM_LIMIT: usize = 2 << 20;

/// Bytes both digests of a body take in turn: small enough to stay in the L1/L2 cache
/// between the SHA-256 and the checksum.
const HASH_BLOCK: usize = 32 * 1024;

/// The header that names the algorithm of an upload's checksum, as the AWS SDKs send it.
const SDK_CHECKSUM_ALGORITHM: &str = "x-amz-sdk-checksum-algorithm";

/// How the payloads of a client's uploads are protected over plain HTTP (see
/// [`ClientBuilder::payload_signing`](crate::ClientBuilder::payload_signing)). Over HTTPS,
/// TLS protects them and the checksum proves them either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PayloadSigning {
    /// Every payload is signed by its SHA-256, as SigV4 intends: bytes, files and buffered
    /// parts hashed ahead (with their checksum, in one pass), one-shot streams in signed
    /// chunks. Nothing on the path can change a byte unnoticed. The default.
    #[default]
    Signed,
    /// Over plain HTTP, a payload that carries a checksum is sent as over TLS:
    /// `UNSIGNED-PAYLOAD` with its checksum in a header, or an unsigned aws-chunked body
    /// with the checksum as a trailer. The store still refuses bytes that do not match the
    /// checksum, so corruption is caught; but the signature no longer covers the payload, so
    /// anyone on the path can replace the bytes *and* their checksum. For trusted networks
    /// only (a private link, a host-local store); it saves the SHA-256 of every payload. A
    /// payload without a checksum is still signed.
    UnsignedWithChecksum,
}

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

/// What an operation's body was hashed to, computed once per operation: a file is read
/// once, by position, and retries reuse the result.
#[derive(Default)]
pub(crate) struct PayloadCache {
    sha256: Option<[u8; 32]>,
    /// The checksum of a replayable body computed ahead (sent as a header, not a trailer).
    checksum: Option<Checksum>,
    /// The last attempt's body went in signed chunks with a checksum trailer.
    signed_trailer: bool,
}

impl PayloadCache {
    /// The cache of an operation sending `upload`: empty, but for a SHA-256 the body already
    /// carries.
    pub(crate) fn for_upload(upload: Option<&Body>) -> Self {
        Self {
            sha256: upload.and_then(|body| body.sha256),
            checksum: None,
            signed_trailer: false,
        }
    }

    /// Whether the last attempt's body went in signed chunks with a checksum trailer.
    pub(crate) fn sent_signed_trailer(&self) -> bool {
        self.signed_trailer
    }

    /// Decides how the checksum of a streamed (`External`) body travels, before the store's
    /// profile adapts the request (see the module table): a replayable body's checksum is
    /// computed ahead — over plain HTTP together with the SHA-256 the signature needs, in one
    /// pass — and sent as a header, in the algorithm the store accepts; over TLS that happens
    /// only where the store takes no trailer. A one-shot stream over plain HTTP keeps its
    /// signed trailer unless the store refuses signed trailers; then it goes without.
    pub(crate) async fn place_checksum(
        &mut self,
        request: &mut OperationRequest,
        upload: Option<&Body>,
        endpoint: &Endpoint,
        quirks: &ProviderQuirks,
        signing: PayloadSigning,
    ) -> Result<(), Error> {
        let s3_ops::Body::External {
            trailing_checksum: trailing @ Some(_),
            ..
        } = &mut request.body
        else {
            return Ok(());
        };
        let Some(upload) = upload else {
            // Refused by `payload` with a clear error.
            return Ok(());
        };
        // The body carries a checksum: it needs no signature of its own where that is allowed.
        let unsigned = unsigned_allowed(endpoint, signing, true);
        let headers = request.request.headers_mut();
        if matches!(upload.source, Source::Stream(_)) {
            if !unsigned && !quirks.signed_trailers {
                *trailing = None;
                headers.remove(SDK_CHECKSUM_ALGORITHM);
            }
            return Ok(());
        }
        if !hashed_ahead(endpoint, signing, quirks, true) {
            return Ok(());
        }
        // The algorithm the store takes (what adapting the request would switch a trailer to).
        let algorithm = quirks.upload_checksum(*trailing);
        *trailing = None;
        headers.remove(SDK_CHECKSUM_ALGORITHM);
        let Some(algorithm) = algorithm else {
            return Ok(());
        };
        let checksum = match &self.checksum {
            Some(checksum) if checksum.algorithm() == algorithm => checksum.clone(),
            _ => {
                let want_sha256 = !unsigned && self.sha256.is_none();
                let (sha256, checksum) = digest_ahead(upload, want_sha256, Some(algorithm)).await?;
                if sha256.is_some() {
                    self.sha256 = sha256;
                }
                let checksum = checksum.expect("asked for");
                self.checksum = Some(checksum.clone());
                checksum
            }
        };
        let value = HeaderValue::from_str(&checksum.to_base64())
            .map_err(|e| Error::new(ErrorKind::Signing).with_source(e))?;
        headers.insert(algorithm.header_name(), value);
        headers.insert(
            SDK_CHECKSUM_ALGORITHM,
            HeaderValue::from_static(algorithm.as_str()),
        );
        if let Some(progress) = &upload.progress {
            progress.set_sent_checksum(checksum);
        }
        Ok(())
    }

    /// Picks the payload mode for an operation's body (see the module table), once the
    /// request is adapted to the store: a one-shot stream that would go aws-chunked without
    /// a trailer is refused where the store takes no aws-chunked bodies.
    pub(crate) async fn payload(
        &mut self,
        description: &s3_ops::Body,
        upload: Option<&Body>,
        headers: &http::HeaderMap,
        endpoint: &Endpoint,
        quirks: &ProviderQuirks,
        signing: PayloadSigning,
    ) -> Result<Payload, Error> {
        let checksummed = matches!(
            description,
            s3_ops::Body::External {
                trailing_checksum: Some(_),
                ..
            }
        ) || ChecksumAlgorithm::ALL
            .iter()
            .any(|algorithm| headers.contains_key(algorithm.header_name()));
        let unsigned = unsigned_allowed(endpoint, signing, checksummed);
        let payload = Payload::choose(description, upload, unsigned, &mut self.sha256).await?;
        if matches!(payload, Payload::Chunked { trailer: None, .. }) {
            quirks.check_aws_chunked()?;
        }
        self.signed_trailer = matches!(
            payload,
            Payload::Chunked {
                signed: true,
                trailer: Some(_)
            }
        );
        Ok(payload)
    }
}

/// Whether a replayable body read from a file is hashed before it is sent (`checksummed`: it
/// carries a checksum): its payload is signed, or its checksum cannot travel as a trailer.
/// It is then read twice, unless it is held in memory.
pub(crate) fn hashed_ahead(
    endpoint: &Endpoint,
    signing: PayloadSigning,
    quirks: &ProviderQuirks,
    checksummed: bool,
) -> bool {
    !unsigned_allowed(endpoint, signing, checksummed) || (checksummed && !quirks.trailing_checksums)
}

/// Whether a payload may go without a signature of its own: over TLS, or over plain HTTP with
/// the opt-in when it carries a checksum.
pub(crate) fn unsigned_allowed(
    endpoint: &Endpoint,
    signing: PayloadSigning,
    checksummed: bool,
) -> bool {
    endpoint.scheme() == Scheme::Https
        || (signing == PayloadSigning::UnsignedWithChecksum && checksummed)
}

impl Payload {
    /// Picks the payload mode for an operation's body (see the module table): `unsigned` where
    /// the payload needs no signature of its own ([`unsigned_allowed`]). `sha256` caches the
    /// digest of a replayable upload across attempts.
    pub(crate) async fn choose(
        description: &s3_ops::Body,
        upload: Option<&Body>,
        unsigned: bool,
        sha256: &mut Option<[u8; 32]>,
    ) -> Result<Payload, Error> {
        match description {
            s3_ops::Body::Empty => Ok(Payload::Hashed(PayloadHash::Empty)),
            // Over TLS, large in-memory payloads are not hashed (UNSIGNED-PAYLOAD);
            // XML documents are small and always signed by their digest.
            s3_ops::Body::Bytes(bytes) if unsigned && bytes.len() > UNSIGNED_THRESHOLD => {
                Ok(Payload::Unsigned)
            }
            s3_ops::Body::Bytes(bytes) => {
                let digest = match sha256 {
                    Some(digest) => *digest,
                    None => {
                        let (digest, _) =
                            digest_bytes(std::slice::from_ref(bytes), Digests::new(true, None))
                                .await?;
                        *sha256.insert(digest.expect("asked for"))
                    }
                };
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
                        signed: !unsigned,
                        trailer: *trailing_checksum,
                    });
                }
                if unsigned {
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
                        let (digest, _) = digest_ahead(upload, true, None).await?;
                        let digest = digest.expect("asked for");
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

/// The SHA-256 (if `sha256`) and the `algorithm` checksum (if any) of a replayable body, in
/// one pass: a file is read once, by position, on a blocking thread.
async fn digest_ahead(
    body: &Body,
    sha256: bool,
    algorithm: Option<ChecksumAlgorithm>,
) -> Result<(Option<[u8; 32]>, Option<Checksum>), Error> {
    let mut digests = Digests::new(sha256, algorithm);
    match &body.source {
        Source::Bytes(bytes) => digest_bytes(std::slice::from_ref(bytes), digests).await,
        Source::Pieces(pieces) => digest_bytes(pieces.as_slice(), digests).await,
        Source::File(range) => {
            let range = range.clone();
            tokio::task::spawn_blocking(move || {
                let mut buffer = vec![0u8; HASH_BUFFER.min(range.len as usize)];
                let bytes = range.offset..range.offset + range.len;
                crate::body::read_through(&range.file, bytes, &mut buffer, |read| {
                    digests.update(read)
                })?;
                Ok::<_, std::io::Error>(digests.finish())
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

/// The bytes of a file `range` read whole into one of its source's spare buffers, with
/// `digests` of them computed in the same pass (each piece while it is still in cache), on
/// the blocking pool: a part hashed before it is sent, read once instead of twice.
pub(crate) async fn read_whole_digested(
    range: &FileRange,
    mut digests: Digests,
) -> Result<(Bytes, (Option<[u8; 32]>, Option<Checksum>)), Error> {
    let range = range.clone();
    tokio::task::spawn_blocking(move || {
        let bytes = range.buffers.read_whole(
            &range.file,
            range.offset..range.offset + range.len,
            |piece| digests.update(piece),
        )?;
        Ok::<_, std::io::Error>((bytes, digests.finish()))
    })
    .await
    .map_err(|e| Error::request_body(format!("reading task failed: {e}")))?
    .map_err(|e| Error::request_body("reading the file part failed").with_source(e))
}

/// `digests` of in-memory bytes, the `pieces` in order: on the runtime's thread when they
/// are small, otherwise on the blocking pool, as a file's are — hashing 64 MiB there would
/// hold up every other task of that thread for about 40 ms.
pub(crate) async fn digest_bytes(
    pieces: &[bytes::Bytes],
    mut digests: Digests,
) -> Result<(Option<[u8; 32]>, Option<Checksum>), Error> {
    let len: usize = pieces.iter().map(bytes::Bytes::len).sum();
    if len <= digests.inline_limit() {
        pieces.iter().for_each(|piece| digests.update(piece));
        return Ok(digests.finish());
    }
    let pieces = pieces.to_vec();
    tokio::task::spawn_blocking(move || {
        pieces.iter().for_each(|piece| digests.update(piece));
        digests.finish()
    })
    .await
    .map_err(|e| Error::request_body(format!("hashing task failed: {e}")))
}

/// The digests computed ahead over the same bytes ([`digest_ahead`], [`digest_bytes`]).
///
/// The payload's SHA-256 is ring's, which rustls links anyway: on a CPU with SHA-NI it runs
/// as fast as sha2's (measurements/raw/sha256-ring-sha2-2026-12-07.txt), and on one without
/// (Intel servers before Ice Lake) its AVX code takes 0.6x the instructions of sha2's
/// portable code (measurements/engines-callgrind-2026-12-07.md).
pub(crate) struct Digests {
    sha256: Option<ring::digest::Context>,
    checksum: Option<s3_ops::Checksummer>,
    /// The SHA-256 asked for is the checksum's own value (a SHA-256 checksum): hashed once.
    sha256_is_checksum: bool,
}

impl Digests {
    pub(crate) fn new(sha256: bool, algorithm: Option<ChecksumAlgorithm>) -> Self {
        let sha256_is_checksum = sha256 && algorithm == Some(ChecksumAlgorithm::Sha256);
        Self {
            sha256: (sha256 && !sha256_is_checksum)
                .then(|| ring::digest::Context::new(&ring::digest::SHA256)),
            checksum: algorithm.map(s3_ops::Checksummer::new),
            sha256_is_checksum,
        }
    }

    /// The most bytes these digests are computed over on the runtime's thread: with nothing
    /// to compute (no checksum, no signed payload), any; a trip to the blocking pool would
    /// do nothing.
    fn inline_limit(&self) -> usize {
        if self.sha256.is_none() && self.checksum.is_none() {
            return usize::MAX;
        }
        let hashes = self.sha256.is_some()
            || self.checksum.as_ref().is_some_and(|checksum| {
                matches!(
                    checksum.algorithm(),
                    ChecksumAlgorithm::Sha1 | ChecksumAlgorithm::Sha256
                )
            });
        if hashes {
            INLINE_DIGEST_LIMIT
        } else {
            INLINE_CHECKSUM_LIMIT
        }
    }

    /// Feeds both digests block by block, so that the second reads each block while it is
    /// still in cache: one pass over memory however large the body.
    fn update(&mut self, bytes: &[u8]) {
        for block in bytes.chunks(HASH_BLOCK) {
            if let Some(sha256) = &mut self.sha256 {
                sha256.update(block);
            }
            if let Some(checksum) = &mut self.checksum {
                checksum.update(block);
            }
        }
    }

    fn finish(self) -> (Option<[u8; 32]>, Option<Checksum>) {
        let checksum = self.checksum.map(s3_ops::Checksummer::finish);
        let sha256 = match self.sha256 {
            Some(sha256) => {
                let mut digest = [0; 32];
                digest.copy_from_slice(sha256.finish().as_ref());
                Some(digest)
            }
            None if self.sha256_is_checksum => checksum
                .as_ref()
                .and_then(|checksum| checksum.as_bytes().try_into().ok()),
            None => None,
        };
        (sha256, checksum)
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

    /// Signs `parts` for `payload` at `now` and builds this attempt's body, as `scope` (the
    /// request's [`s3_ops::OperationRequest::signing`]) says: SigV4 for the endpoint's or an
    /// access point's region and service, or SigV4a for the region set of a Multi-Region
    /// Access Point, which needs the `sigv4a` feature.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sign(
        &self,
        parts: &mut Parts,
        credentials: Option<&Credentials>,
        endpoint: &Endpoint,
        scope: &s3_ops::SigningScope,
        now: SystemTime,
        payload: Payload,
        description: &s3_ops::Body,
        upload: Option<&Body>,
        activity: Activity,
    ) -> Result<reqwest::Body, Error> {
        let time = SigningTime::from_system_time(now)
            .map_err(|e| Error::new(ErrorKind::Signing).with_source(format!("{e:?}")))?;
        let signing_error = |e: s3_sigv4::Error| Error::new(ErrorKind::Signing).with_source(e);
        let params = |hash| scope.params(endpoint, time, hash).map_err(Error::from);
        let hash = match payload {
            Payload::Hashed(hash) => hash,
            Payload::Unsigned => PayloadHash::Unsigned,
            Payload::Chunked { signed, trailer } => {
                let upload = upload.ok_or_else(|| {
                    Error::request_body("the operation needs a body and none was given")
                })?;
                let layout = crate::chunked::layout(upload.len(), signed, trailer)?;
                let encoder = match credentials {
                    Some(credentials) => self
                        .inner
                        .sign_streaming(parts, credentials, &params(PayloadHash::Unsigned)?, layout)
                        .map_err(signing_error)?,
                    // Anonymous: the framing and its headers without a signature.
                    None => {
                        layout.apply_headers(&mut parts.headers);
                        parts.headers.insert(
                            http::header::HeaderName::from_static("x-amz-content-sha256"),
                            layout
                                .mode()
                                .payload_hash()
                                .to_value_string()
                                .parse()
                                .map_err(|_| Error::new(ErrorKind::Signing))?,
                        );
                        s3_sigv4::ChunkEncoder::unsigned(layout).map_err(signing_error)?
                    }
                };
                let body = ChunkedBody::new(upload, encoder, trailer, activity)?;
                return Ok(reqwest::Body::wrap(body));
            }
        };
        if let Some(credentials) = credentials {
            self.inner
                .sign_headers(parts, credentials, &params(hash)?)
                .map_err(signing_error)?;
        }
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
    use sha2::{Digest, Sha256};
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

    /// The payload mode over TLS (`tls`) or plain HTTP, without a cache.
    async fn choose(
        description: &s3_ops::Body,
        upload: Option<&Body>,
        tls: bool,
    ) -> Result<Payload, Error> {
        Payload::choose(description, upload, tls, &mut None).await
    }

    #[tokio::test]
    async fn in_memory_bodies_are_hashed_once_per_operation() {
        let body = s3_ops::Body::Bytes(Bytes::from_static(b"<Delete/>"));
        let mut cache = None;
        let first = Payload::choose(&body, None, false, &mut cache)
            .await
            .unwrap();
        let digest: [u8; 32] = Sha256::digest(b"<Delete/>").into();
        assert_eq!(first, Payload::Hashed(PayloadHash::Sha256(digest)));
        assert_eq!(cache, Some(digest));
        // A retry takes the digest from the cache instead of hashing again.
        let mut cached = Some([7u8; 32]);
        let retry = Payload::choose(&body, None, false, &mut cached)
            .await
            .unwrap();
        assert_eq!(retry, Payload::Hashed(PayloadHash::Sha256([7u8; 32])));
    }

    #[tokio::test]
    async fn in_memory_bodies_get_the_same_digests_on_the_runtime_thread_and_off_it() {
        // Up to the limit the runtime's thread hashes; above it the blocking pool.
        for len in [
            INLINE_DIGEST_LIMIT,
            INLINE_DIGEST_LIMIT + 1,
            3 * INLINE_DIGEST_LIMIT + 7,
        ] {
            let data = Bytes::from((0..len).map(|i| (i * 31 % 251) as u8).collect::<Vec<_>>());
            let sha256: [u8; 32] = Sha256::digest(&data).into();
            let mut cache = None;
            let payload =
                Payload::choose(&s3_ops::Body::Bytes(data.clone()), None, false, &mut cache)
                    .await
                    .unwrap();
            assert_eq!(
                payload,
                Payload::Hashed(PayloadHash::Sha256(sha256)),
                "length {len}"
            );
            // The same bytes whole, and in three uneven pieces as object_store hands them.
            let chunks = [0..1, 1..len / 3, len / 3..len].map(|range| data.slice(range));
            for body in [Body::from_bytes(data.clone()), Body::from_chunks(chunks)] {
                // A SHA-256 checksum is the signature's digest too, hashed once.
                for algorithm in [ChecksumAlgorithm::Crc32, ChecksumAlgorithm::Sha256] {
                    let (digest, checksum) =
                        digest_ahead(&body, true, Some(algorithm)).await.unwrap();
                    assert_eq!(digest, Some(sha256), "{body:?}, {algorithm}");
                    assert_eq!(checksum, Some(algorithm.checksum(&data)), "{algorithm}");
                }
                let (digest, _) = digest_ahead(&body, false, Some(ChecksumAlgorithm::Sha256))
                    .await
                    .unwrap();
                assert_eq!(digest, None, "no SHA-256 asked for");
            }
        }
        // A CRC alone stays on the runtime's thread up to 2 MiB, then goes to the pool.
        for len in [INLINE_CHECKSUM_LIMIT, INLINE_CHECKSUM_LIMIT + 1] {
            let data = Bytes::from(vec![0x5au8; len]);
            let (digest, checksum) = digest_ahead(
                &Body::from_bytes(data.clone()),
                false,
                Some(ChecksumAlgorithm::Crc32),
            )
            .await
            .unwrap();
            assert_eq!(digest, None);
            assert_eq!(
                checksum,
                Some(ChecksumAlgorithm::Crc32.checksum(&data)),
                "length {len}"
            );
        }
        // Nothing to compute (checksums off, payload unsigned): nothing leaves the thread.
        let nothing = Digests::new(false, None);
        assert_eq!(nothing.inline_limit(), usize::MAX);
        let large = Bytes::from(vec![1u8; INLINE_CHECKSUM_LIMIT + 1]);
        assert_eq!(
            digest_bytes(std::slice::from_ref(&large), nothing)
                .await
                .unwrap(),
            (None, None)
        );
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

    /// What a build without the `sigv4a` feature answers a request to a Multi-Region Access
    /// Point with, before sending it: s3-ops' [`s3_ops::SigningScope::params`] decides (tested
    /// with the feature off by `cargo test -p s3-ops`); the client passes it on.
    #[test]
    fn without_sigv4a_a_multi_region_access_point_is_a_clear_error() {
        let error = Error::from(s3_ops::Error::SigV4aDisabled);
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Operation(s3_ops::Error::SigV4aDisabled)
            ),
            "{error:?}"
        );
        assert!(
            error.to_string().contains(
                "Multi-Region Access Points need SigV4a: enable the `sigv4a` feature of s3-wire"
            ),
            "{error}"
        );
        assert!(!error.retry_class().is_retryable());
    }

    /// Requests to a Multi-Region Access Point, signed with SigV4a by both signing paths;
    /// each signature is checked against a canonical request rebuilt here from the headers
    /// sent, with the credentials' SigV4a public key.
    #[cfg(feature = "sigv4a")]
    mod multi_region_access_point {
        use super::*;
        use p256::ecdsa::signature::Verifier;
        use p256::ecdsa::{DerSignature, VerifyingKey};
        use s3_ops::Operation;
        use std::time::{Duration, UNIX_EPOCH};

        const ARN: &str = "arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap";
        const HOST: &str = "mfzwi23gnjvgw.mrap.accesspoint.s3-global.amazonaws.com";
        const ACCESS_KEY: &str = "AKIDEXAMPLE";

        fn credentials() -> Credentials {
            Credentials::new(ACCESS_KEY, "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None)
        }

        /// 2013-05-24T00:00:00Z.
        fn now() -> SystemTime {
            UNIX_EPOCH + Duration::from_secs(1_369_353_600)
        }

        fn hex(bytes: &[u8]) -> String {
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        }

        fn header<'a>(parts: &'a Parts, name: &str) -> &'a str {
            parts.headers[name].to_str().unwrap()
        }

        /// Checks the `Authorization` of `parts` (SigV4a, scope without region) and returns
        /// its signed header names.
        fn verify(parts: &Parts, credentials: &Credentials) -> Vec<String> {
            let authorization = header(parts, "authorization");
            let prefix = format!(
                "AWS4-ECDSA-P256-SHA256 Credential={ACCESS_KEY}/20130524/s3/aws4_request, "
            );
            let fields = authorization
                .strip_prefix(&prefix)
                .unwrap_or_else(|| panic!("{authorization}"));
            let (signed, signature) = fields
                .strip_prefix("SignedHeaders=")
                .and_then(|rest| rest.split_once(", Signature="))
                .unwrap_or_else(|| panic!("{authorization}"));
            let mut canonical_headers = String::new();
            for name in signed.split(';') {
                let value = match name {
                    "host" => parts.uri.authority().unwrap().as_str(),
                    _ => header(parts, name).trim(),
                };
                canonical_headers.push_str(&format!("{name}:{value}\n"));
            }
            // s3-ops encodes the path and sorts the query as SigV4 canonicalizes them.
            let canonical_request = format!(
                "{}\n{}\n{}\n{canonical_headers}\n{signed}\n{}",
                parts.method,
                parts.uri.path(),
                parts.uri.query().unwrap_or(""),
                header(parts, "x-amz-content-sha256"),
            );
            let string_to_sign = format!(
                "AWS4-ECDSA-P256-SHA256\n20130524T000000Z\n20130524/s3/aws4_request\n{}",
                hex(&Sha256::digest(canonical_request.as_bytes()))
            );
            let key =
                VerifyingKey::from_sec1_bytes(&credentials.sigv4a_public_key().unwrap()).unwrap();
            let der: Vec<u8> = (0..signature.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&signature[i..i + 2], 16).unwrap())
                .collect();
            key.verify(
                string_to_sign.as_bytes(),
                &DerSignature::from_bytes(&der).unwrap(),
            )
            .unwrap_or_else(|e| panic!("{e}: {canonical_request}"));
            signed.split(';').map(str::to_owned).collect()
        }

        #[test]
        fn header_signing_uses_sigv4a_for_every_region() {
            let endpoint = Endpoint::aws("eu-west-1").unwrap();
            let bucket = s3_ops::BucketName::new(ARN).unwrap();
            let get = s3_ops::GetObject::new(bucket, s3_ops::ObjectKey::new("a b.txt").unwrap());
            let encoded = get.request(&endpoint).unwrap();
            assert_eq!(encoded.region_set(), Some("*"));
            let scope = &encoded.signing().clone();
            let (mut parts, ()) = encoded.request.into_parts();
            let credentials = credentials();
            Signer::new()
                .sign(
                    &mut parts,
                    Some(&credentials),
                    &endpoint,
                    scope,
                    now(),
                    Payload::Hashed(PayloadHash::Empty),
                    &encoded.body,
                    None,
                    Activity::new(),
                )
                .unwrap();
            assert_eq!(parts.uri.host(), Some(HOST));
            assert_eq!(header(&parts, "x-amz-region-set"), "*");
            let signed = verify(&parts, &credentials);
            assert!(
                signed.contains(&"x-amz-region-set".to_owned()),
                "{signed:?}"
            );
            assert!(!header(&parts, "authorization").contains("eu-west-1"));
        }

        #[test]
        fn aws_chunked_uploads_use_sigv4a_for_every_region() {
            let endpoint = Endpoint::aws("us-east-1").unwrap();
            let bucket = s3_ops::BucketName::new(ARN).unwrap();
            let put = s3_ops::PutObject::new(bucket, s3_ops::ObjectKey::new("k").unwrap());
            let encoded = put.request(&endpoint).unwrap();
            let scope = &encoded.signing().clone();
            let (mut parts, ()) = encoded.request.into_parts();
            let credentials = credentials();
            let upload = Body::from_bytes(Bytes::from_static(b"hello"));
            Signer::new()
                .sign(
                    &mut parts,
                    Some(&credentials),
                    &endpoint,
                    scope,
                    now(),
                    Payload::Chunked {
                        signed: false,
                        trailer: Some(ChecksumAlgorithm::Crc32),
                    },
                    &external(5, Some(ChecksumAlgorithm::Crc32)),
                    Some(&upload),
                    Activity::new(),
                )
                .unwrap();
            assert_eq!(
                header(&parts, "x-amz-content-sha256"),
                "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
            );
            assert_eq!(header(&parts, "x-amz-trailer"), "x-amz-checksum-crc32");
            assert_eq!(header(&parts, "x-amz-region-set"), "*");
            let signed = verify(&parts, &credentials);
            assert!(
                signed.contains(&"x-amz-region-set".to_owned()),
                "{signed:?}"
            );
        }
    }

    /// A PutObject of `len` streamed bytes whose checksum (CRC32C) is computed by the
    /// transport, encoded for `url`.
    fn streamed_put(url: &str, len: u64) -> (Endpoint, OperationRequest) {
        use s3_ops::Operation;
        let endpoint = Endpoint::custom(url, "us-east-1").unwrap();
        let put = s3_ops::ops::put_object::PutObject::new(
            s3_ops::BucketName::new("bucket").unwrap(),
            s3_ops::ObjectKey::new("key").unwrap(),
        )
        .streaming_body(len)
        .checksum_algorithm(ChecksumAlgorithm::Crc32c);
        let request = put.request(&endpoint).unwrap();
        (endpoint, request)
    }

    fn trailer(request: &OperationRequest) -> Option<ChecksumAlgorithm> {
        match request.body {
            s3_ops::Body::External {
                trailing_checksum, ..
            } => trailing_checksum,
            _ => None,
        }
    }

    fn header<'a>(request: &'a OperationRequest, name: &str) -> Option<&'a str> {
        request
            .request
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap())
    }

    #[tokio::test]
    async fn a_file_checksum_is_computed_ahead_with_the_sha256_over_plain_http() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        file.write_all(&data).unwrap();
        let len = data.len() as u64;
        let body = Body::from_file(file.path()).await.unwrap();
        let generic = s3_ops::Provider::Generic.quirks();
        let crc32c = ChecksumAlgorithm::Crc32c.checksum(&data);

        // Plain HTTP: one pass gives the header and the SHA-256 the signature needs.
        let (endpoint, mut request) = streamed_put("http://127.0.0.1:9000", len);
        let mut cache = PayloadCache::default();
        cache
            .place_checksum(
                &mut request,
                Some(&body),
                &endpoint,
                &generic,
                PayloadSigning::Signed,
            )
            .await
            .unwrap();
        assert_eq!(trailer(&request), None);
        let crc32c_value = crc32c.to_base64();
        assert_eq!(
            header(&request, "x-amz-checksum-crc32c"),
            Some(&crc32c_value[..])
        );
        assert_eq!(header(&request, SDK_CHECKSUM_ALGORITHM), Some("CRC32C"));
        let sha256: [u8; 32] = Sha256::digest(&data).into();
        assert_eq!(cache.sha256, Some(sha256), "hashed in the same pass");
        let payload = cache
            .payload(
                &request.body,
                Some(&body),
                request.request.headers(),
                &endpoint,
                &generic,
                PayloadSigning::Signed,
            )
            .await
            .unwrap();
        assert_eq!(payload, Payload::Hashed(PayloadHash::Sha256(sha256)));

        // TLS: a trailer, computed as the body is sent...
        let (endpoint, mut request) = streamed_put("https://s3.example.com", len);
        let mut cache = PayloadCache::default();
        cache
            .place_checksum(
                &mut request,
                Some(&body),
                &endpoint,
                &generic,
                PayloadSigning::Signed,
            )
            .await
            .unwrap();
        assert_eq!(trailer(&request), Some(ChecksumAlgorithm::Crc32c));
        assert_eq!(header(&request, "x-amz-checksum-crc32c"), None);
        // ...unless the store takes no trailer: then a header, and no SHA-256.
        let mut no_trailers = generic;
        no_trailers.trailing_checksums = false;
        cache
            .place_checksum(
                &mut request,
                Some(&body),
                &endpoint,
                &no_trailers,
                PayloadSigning::Signed,
            )
            .await
            .unwrap();
        assert_eq!(trailer(&request), None);
        assert_eq!(
            header(&request, "x-amz-checksum-crc32c"),
            Some(&crc32c_value[..])
        );
        assert_eq!(cache.sha256, None);

        // A store that does not take CRC32C gets the algorithm the profile picks.
        let (endpoint, mut request) = streamed_put("http://127.0.0.1:9000", len);
        let moto = s3_ops::Provider::Moto.quirks();
        PayloadCache::default()
            .place_checksum(
                &mut request,
                Some(&body),
                &endpoint,
                &moto,
                PayloadSigning::Signed,
            )
            .await
            .unwrap();
        let crc32 = ChecksumAlgorithm::Crc32.checksum(&data).to_base64();
        assert_eq!(header(&request, "x-amz-checksum-crc32"), Some(&crc32[..]));
        assert_eq!(header(&request, "x-amz-checksum-crc32c"), None);
        assert_eq!(header(&request, SDK_CHECKSUM_ALGORITHM), Some("CRC32"));
    }

    #[tokio::test]
    async fn a_one_shot_stream_keeps_its_signed_trailer_unless_the_store_refuses_them() {
        let generic = s3_ops::Provider::Generic.quirks();
        let (endpoint, mut request) = streamed_put("http://127.0.0.1:9000", 5);
        let stream = one_shot(5);
        PayloadCache::default()
            .place_checksum(
                &mut request,
                Some(&stream),
                &endpoint,
                &generic,
                PayloadSigning::Signed,
            )
            .await
            .unwrap();
        assert_eq!(trailer(&request), Some(ChecksumAlgorithm::Crc32c));
        assert_eq!(header(&request, SDK_CHECKSUM_ALGORITHM), Some("CRC32C"));

        let mut refuses = generic;
        refuses.signed_trailers = false;
        let (_, mut request) = streamed_put("http://127.0.0.1:9000", 5);
        let mut cache = PayloadCache::default();
        cache
            .place_checksum(
                &mut request,
                Some(&stream),
                &endpoint,
                &refuses,
                PayloadSigning::Signed,
            )
            .await
            .unwrap();
        assert_eq!(trailer(&request), None);
        assert_eq!(header(&request, SDK_CHECKSUM_ALGORITHM), None);
        let payload = cache
            .payload(
                &request.body,
                Some(&stream),
                request.request.headers(),
                &endpoint,
                &refuses,
                PayloadSigning::Signed,
            )
            .await
            .unwrap();
        assert_eq!(
            payload,
            Payload::Chunked {
                signed: true,
                trailer: None
            }
        );
        // Over TLS its trailer is unsigned, which such a store takes.
        let (endpoint, mut request) = streamed_put("https://s3.example.com", 5);
        PayloadCache::default()
            .place_checksum(
                &mut request,
                Some(&stream),
                &endpoint,
                &refuses,
                PayloadSigning::Signed,
            )
            .await
            .unwrap();
        assert_eq!(trailer(&request), Some(ChecksumAlgorithm::Crc32c));
    }

    /// With the opt-in, over plain HTTP a payload that carries a checksum goes as over TLS,
    /// one without is still signed.
    #[tokio::test]
    async fn unsigned_with_checksum_drops_the_signature_only_where_a_checksum_is() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&[5u8; 100_000]).unwrap();
        let body = Body::from_file(file.path()).await.unwrap();
        let generic = s3_ops::Provider::Generic.quirks();
        let opt_in = PayloadSigning::UnsignedWithChecksum;
        let (endpoint, mut request) = streamed_put("http://127.0.0.1:9000", 100_000);
        let mut cache = PayloadCache::default();
        cache
            .place_checksum(&mut request, Some(&body), &endpoint, &generic, opt_in)
            .await
            .unwrap();
        assert_eq!(trailer(&request), Some(ChecksumAlgorithm::Crc32c));
        let payload = cache
            .payload(
                &request.body,
                Some(&body),
                request.request.headers(),
                &endpoint,
                &generic,
                opt_in,
            )
            .await
            .unwrap();
        assert_eq!(
            payload,
            Payload::Chunked {
                signed: false,
                trailer: Some(ChecksumAlgorithm::Crc32c)
            }
        );
        assert_eq!(cache.sha256, None, "nothing hashed");

        // In memory: UNSIGNED-PAYLOAD with a checksum header, a digest without one.
        let large = s3_ops::Body::Bytes(Bytes::from(vec![1u8; UNSIGNED_THRESHOLD + 1]));
        let mut with_checksum = http::HeaderMap::new();
        with_checksum.insert("x-amz-checksum-crc32", HeaderValue::from_static("AAAAAA=="));
        let without = http::HeaderMap::new();
        for (headers, expected_unsigned) in [(&with_checksum, true), (&without, false)] {
            let payload = PayloadCache::default()
                .payload(&large, None, headers, &endpoint, &generic, opt_in)
                .await
                .unwrap();
            assert_eq!(
                payload == Payload::Unsigned,
                expected_unsigned,
                "{payload:?}"
            );
        }
        // The default signs everything.
        let payload = PayloadCache::default()
            .payload(
                &large,
                None,
                &with_checksum,
                &endpoint,
                &generic,
                PayloadSigning::Signed,
            )
            .await
            .unwrap();
        assert!(matches!(payload, Payload::Hashed(PayloadHash::Sha256(_))));
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

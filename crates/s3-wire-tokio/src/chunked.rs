//! aws-chunked request bodies: a one-shot stream (or a replayable body with a
//! trailing checksum) cut into fixed-size chunks, each framed — and over plain
//! HTTP signed — by s3-sigv4's [`ChunkEncoder`], then the checksum trailer.
//!
//! Payload bytes are gathered into chunk-sized buffers (one copy); the framing
//! is sent around them without copying the payload again.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Body as _, Frame, SizeHint};
use s3_ops::{ChecksumAlgorithm, Checksummer};
use s3_sigv4::{CHUNK_TERMINATOR, ChunkEncoder, ChunkedLayout};

use crate::body::{AttemptBody, Body, BodyError, BoxError};
use crate::error::{Error, ErrorKind};
use crate::progress::PartProgress;
use crate::stall::Activity;

/// Payload bytes per aws-chunked chunk (S3's minimum is 8 KiB).
pub(crate) const CHUNK_SIZE: usize = 256 * 1024;

/// The layout of an aws-chunked upload of `len` payload bytes.
pub(crate) fn layout(
    len: u64,
    signed: bool,
    trailer: Option<ChecksumAlgorithm>,
) -> Result<ChunkedLayout, Error> {
    let layout = match (signed, trailer) {
        (true, None) => ChunkedLayout::signed(len, CHUNK_SIZE),
        (true, Some(algorithm)) => ChunkedLayout::signed_with_trailer(
            len,
            CHUNK_SIZE,
            algorithm.header_name().as_str(),
            base64_len(algorithm.digest_len()),
        ),
        (false, Some(algorithm)) => ChunkedLayout::unsigned_with_trailer(
            len,
            CHUNK_SIZE,
            algorithm.header_name().as_str(),
            base64_len(algorithm.digest_len()),
        ),
        (false, None) => {
            return Err(Error::new(ErrorKind::Signing)
                .with_source("an unsigned aws-chunked upload needs a checksum trailer"));
        }
    };
    layout.map_err(|e| Error::new(ErrorKind::Signing).with_source(e))
}

fn base64_len(bytes: usize) -> usize {
    bytes.div_ceil(3) * 4
}

/// The aws-chunked body of one attempt.
pub(crate) struct ChunkedBody {
    /// The payload bytes, exactly as many as announced (checked as they are read).
    payload: AttemptBody,
    encoder: ChunkEncoder,
    checksum: Option<Checksummer>,
    pending: BytesMut,
    /// Framed output, each piece with the payload bytes it carries.
    out: VecDeque<(Bytes, u64)>,
    remaining_encoded: u64,
    source_done: bool,
    finished: bool,
    activity: Activity,
    progress: Option<Arc<PartProgress>>,
}

impl ChunkedBody {
    pub(crate) fn new(
        upload: &Body,
        encoder: ChunkEncoder,
        trailer: Option<ChecksumAlgorithm>,
        activity: Activity,
    ) -> Result<Self, Error> {
        let payload = AttemptBody::payload(upload, Activity::new());
        Ok(Self {
            payload,
            remaining_encoded: encoder.layout().encoded_length(),
            encoder,
            checksum: trailer.map(Checksummer::new),
            pending: BytesMut::new(),
            out: VecDeque::new(),
            source_done: false,
            finished: false,
            activity,
            progress: upload.progress.clone(),
        })
    }

    /// Pulls the next piece of payload: `Ready(None)` at its end.
    fn poll_payload(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BoxError>>> {
        match std::task::ready!(Pin::new(&mut self.payload).poll_frame(cx)) {
            None => Poll::Ready(None),
            Some(Err(e)) => Poll::Ready(Some(Err(e))),
            Some(Ok(frame)) => Poll::Ready(Some(Ok(frame.into_data().unwrap_or_default()))),
        }
    }

    fn emit_chunk(&mut self, payload: Bytes) -> Result<(), BoxError> {
        let header = self.encoder.chunk_header(&payload)?;
        let len = payload.len() as u64;
        self.out
            .push_back((Bytes::copy_from_slice(header.as_ref()), 0));
        self.out.push_back((payload, len));
        self.out
            .push_back((Bytes::from_static(CHUNK_TERMINATOR), 0));
        Ok(())
    }

    fn emit_final(&mut self) -> Result<(), BoxError> {
        let trailer = self.checksum.take().map(Checksummer::finish);
        if let (Some(progress), Some(checksum)) = (&self.progress, &trailer) {
            progress.set_sent_checksum(checksum.clone());
        }
        let trailer = trailer.map(|checksum| checksum.to_base64());
        let mut out = vec![0u8; self.encoder.layout().final_length()];
        let written = self.encoder.finish(trailer.as_deref(), &mut out)?;
        out.truncate(written);
        self.out.push_back((Bytes::from(out), 0));
        Ok(())
    }

    /// Advances the encoder until output is queued or the body ends.
    fn fill(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        while self.out.is_empty() && !self.finished {
            if self.source_done {
                if !self.pending.is_empty() {
                    let last = self.pending.split().freeze();
                    self.emit_chunk(last)?;
                } else {
                    self.emit_final()?;
                    self.finished = true;
                }
                continue;
            }
            match self.poll_payload(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(None) => self.source_done = true,
                Poll::Ready(Some(Ok(mut data))) => {
                    if let Some(checksum) = &mut self.checksum {
                        checksum.update(&data);
                    }
                    while !data.is_empty() {
                        if self.pending.is_empty() && data.len() >= CHUNK_SIZE {
                            // Aligned: a whole chunk without copying.
                            let chunk = data.split_to(CHUNK_SIZE);
                            self.emit_chunk(chunk)?;
                            continue;
                        }
                        let take = (CHUNK_SIZE - self.pending.len()).min(data.len());
                        if self.pending.capacity() < CHUNK_SIZE {
                            self.pending.reserve(CHUNK_SIZE - self.pending.len());
                        }
                        self.pending.extend_from_slice(&data.split_to(take));
                        if self.pending.len() == CHUNK_SIZE {
                            let chunk = self.pending.split().freeze();
                            self.emit_chunk(chunk)?;
                        }
                    }
                }
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl http_body::Body for ChunkedBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if let Err(error) = std::task::ready!(this.fill(cx)) {
            this.finished = true;
            this.out.clear();
            return Poll::Ready(Some(Err(BodyError::wrap(error))));
        }
        match this.out.pop_front() {
            Some((bytes, payload)) => {
                this.remaining_encoded = this.remaining_encoded.saturating_sub(bytes.len() as u64);
                this.activity.touch();
                if let (Some(progress), 1..) = (&this.progress, payload) {
                    progress.moved(payload);
                }
                Poll::Ready(Some(Ok(Frame::data(bytes))))
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.finished && self.out.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining_encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::test_stream_body;
    use http::request::Parts;
    use http_body_util::BodyExt;
    use s3_sigv4::{Credentials, PayloadHash, SigningParams, SigningTime};

    /// Signs a PUT for an aws-chunked upload of `len` bytes and returns the
    /// encoder plus the request head.
    fn encoder(
        len: u64,
        signed: bool,
        trailer: Option<ChecksumAlgorithm>,
    ) -> (ChunkEncoder, Parts) {
        let (mut parts, ()) = http::Request::put("https://bucket.s3.amazonaws.com/key")
            .body(())
            .unwrap()
            .into_parts();
        let credentials = Credentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG", None);
        let time = SigningTime::from_unix(1_700_000_000).unwrap();
        let params = SigningParams::new("us-east-1", "s3", time, PayloadHash::Unsigned);
        let layout = layout(len, signed, trailer).unwrap();
        let encoder = s3_sigv4::Signer::new()
            .sign_streaming(&mut parts, &credentials, &params, layout)
            .unwrap();
        (encoder, parts)
    }

    fn stream_of(pieces: Vec<Vec<u8>>) -> Body {
        let len = pieces.iter().map(|p| p.len() as u64).sum();
        let items = pieces.into_iter().map(|p| Ok(Bytes::from(p))).collect();
        test_stream_body(items, len)
    }

    async fn encode(
        body: &Body,
        signed: bool,
        trailer: Option<ChecksumAlgorithm>,
    ) -> (Parts, Result<Bytes, BoxError>) {
        let (encoder, parts) = encoder(body.len(), signed, trailer);
        let chunked = ChunkedBody::new(body, encoder, trailer, Activity::new()).unwrap();
        let result = chunked.collect().await.map(|c| c.to_bytes());
        (parts, result)
    }

    #[tokio::test]
    async fn unsigned_with_crc32_trailer_matches_the_published_check_value() {
        // CRC-32 of "123456789" is 0xCBF43926 (base64 y/Q5Jg==).
        let body = stream_of(vec![b"1234".to_vec(), b"56789".to_vec()]);
        let (parts, encoded) = encode(&body, false, Some(ChecksumAlgorithm::Crc32)).await;
        let encoded = encoded.unwrap();
        assert_eq!(
            &encoded[..],
            b"9\r\n123456789\r\n0\r\nx-amz-checksum-crc32:y/Q5Jg==\r\n\r\n"
        );
        assert_eq!(
            parts.headers["content-length"],
            encoded.len().to_string().as_str()
        );
        assert_eq!(parts.headers["x-amz-decoded-content-length"], "9");
        assert_eq!(parts.headers["x-amz-trailer"], "x-amz-checksum-crc32");
        assert_eq!(
            parts.headers["x-amz-content-sha256"],
            "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
        );
        assert!(
            !body.is_replayable() && !body.can_resend(),
            "one-shot was consumed"
        );
    }

    #[tokio::test]
    async fn irregular_pieces_become_fixed_size_chunks() {
        let payload: Vec<u8> = (0..CHUNK_SIZE * 2 + 1234)
            .map(|i| (i * 31 % 251) as u8)
            .collect();
        let pieces = vec![
            payload[..1000].to_vec(),
            payload[1000..CHUNK_SIZE + 7].to_vec(),
            payload[CHUNK_SIZE + 7..].to_vec(),
        ];
        let body = stream_of(pieces);
        let (parts, encoded) = encode(&body, true, None).await;
        let encoded = encoded.unwrap();
        assert_eq!(
            parts.headers["content-length"],
            encoded.len().to_string().as_str()
        );
        // The framing, through the strict decoder the test servers use.
        let decoded = s3_sigv4::fuzzing::aws_chunked::decode(&encoded).unwrap();
        assert_eq!(decoded.chunk_lengths, [CHUNK_SIZE, CHUNK_SIZE, 1234, 0]);
        assert!(decoded.chunk_signatures.iter().all(|s| s.len() == 64));
        assert_eq!(decoded.chunk_signatures.len(), 4);
        assert_eq!(decoded.data, payload);
    }

    #[tokio::test]
    async fn a_stream_of_the_wrong_length_is_a_body_error() {
        for (pieces, announced) in [(vec![vec![7u8; 10]], 20u64), (vec![vec![7u8; 30]], 20)] {
            let items = pieces.into_iter().map(|p| Ok(Bytes::from(p))).collect();
            let body = test_stream_body(items, announced);
            let (_, encoded) = encode(&body, false, Some(ChecksumAlgorithm::Crc32c)).await;
            let error = encoded.expect_err("length mismatch");
            let body_error = error.downcast_ref::<BodyError>().expect("a BodyError");
            assert!(body_error.message.contains("20"), "{}", body_error.message);
        }
    }

    #[tokio::test]
    async fn a_failing_stream_is_wrapped_as_a_body_error_with_its_cause() {
        let items: Vec<Result<Bytes, BoxError>> =
            vec![Ok(Bytes::from_static(b"abc")), Err("disk on fire".into())];
        let body = test_stream_body(items, 10);
        let (_, encoded) = encode(&body, true, None).await;
        let error = encoded.expect_err("stream failed");
        let body_error = error.downcast_ref::<BodyError>().expect("a BodyError");
        assert_eq!(
            std::error::Error::source(body_error)
                .map(|e| e.to_string())
                .as_deref(),
            Some("disk on fire")
        );
    }
}

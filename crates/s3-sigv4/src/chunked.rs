//! `aws-chunked` streaming uploads, sans-IO.
//!
//! The body is cut into chunks of a fixed size (the last one may be shorter),
//! each framed as `hex-size[;chunk-signature=sig]\r\n payload \r\n`, and ended
//! by an empty chunk, optionally followed by a trailer (a checksum header) and
//! its signature. In the signed modes every chunk signature chains on the
//! previous one, starting from the seed signature of the request headers.
//!
//! The encoder never owns the payload: [`ChunkEncoder::chunk_header`] returns
//! the framing to send before a caller-owned payload slice (zero copies, for
//! vectored writes), and [`ChunkEncoder::encode_chunk`] writes a whole framed
//! chunk into a caller buffer (the payload copied exactly once).

use http::header::{CONTENT_ENCODING, CONTENT_LENGTH};
use http::{HeaderMap, HeaderName, HeaderValue};
use sha2::{Digest, Sha256};

use crate::encoding::{hex_len, hex32, push_hex_usize};
use crate::error::{Error, InvalidHeader, InvalidParameter, StreamingError};
use crate::header::{checked_name, checked_value};
use crate::key::ScopeKey;
use crate::params::{PayloadHash, SigningAlgorithm, SigningParams};
use crate::signer::Signature;

/// S3 rejects aws-chunked uploads whose non-final chunks are below 8 KiB.
pub const MIN_CHUNK_SIZE: usize = 8 * 1024;

/// What follows a payload slice sent after [`ChunkEncoder::chunk_header`].
pub const CHUNK_TERMINATOR: &[u8; 2] = b"\r\n";

const SIGNATURE_EXTENSION: &[u8] = b";chunk-signature=";
const TRAILER_SIGNATURE_NAME: &[u8] = b"x-amz-trailer-signature:";
/// SigV4a chunk and trailer signatures vary in length (DER), so they are
/// padded on the right with `*` to the longest one's 144 hex digits: the
/// encoded length stays known before anything is signed (as aws-c-auth does).
#[cfg(feature = "sigv4a")]
const V4A_SIGNATURE_HEX_LEN: usize = 144;
#[cfg(feature = "sigv4a")]
const V4A_PADDING: u8 = b'*';
/// Hex SHA-256 of the empty string, part of every chunk string to sign.
const EMPTY_SHA256_HEX: &[u8] = b"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const X_AMZ_DECODED_CONTENT_LENGTH: HeaderName =
    HeaderName::from_static("x-amz-decoded-content-length");
const X_AMZ_TRAILER: HeaderName = HeaderName::from_static("x-amz-trailer");

/// The three aws-chunked payload modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamingMode {
    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`: signed chunks, no trailer.
    Signed,
    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`: signed chunks and a signed trailer.
    SignedWithTrailer,
    /// `STREAMING-UNSIGNED-PAYLOAD-TRAILER`: plain chunks and an unsigned trailer.
    UnsignedWithTrailer,
}

impl StreamingMode {
    /// The `x-amz-content-sha256` value of this mode.
    pub fn payload_hash(self) -> PayloadHash {
        match self {
            Self::Signed => PayloadHash::StreamingSigned,
            Self::SignedWithTrailer => PayloadHash::StreamingSignedTrailer,
            Self::UnsignedWithTrailer => PayloadHash::StreamingUnsignedTrailer,
        }
    }

    fn is_signed(self) -> bool {
        !matches!(self, Self::UnsignedWithTrailer)
    }
}

/// The shape of an aws-chunked body: mode, decoded length, chunk size and
/// trailer. It determines the encoded `Content-Length` before any byte is read.
///
/// ```
/// use s3_sigv4::ChunkedLayout;
/// // The S3 documentation example: 66560 bytes in 64 KiB chunks.
/// let layout = ChunkedLayout::signed(66_560, 65_536)?;
/// assert_eq!(layout.encoded_length(), 66_824);
/// let with_trailer =
///     ChunkedLayout::signed_with_trailer(66_560, 65_536, "x-amz-checksum-crc32c", 8)?;
/// assert_eq!(with_trailer.encoded_length(), 66_946);
/// # Ok::<(), s3_sigv4::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkedLayout {
    mode: StreamingMode,
    decoded_length: u64,
    chunk_size: usize,
    trailer: Option<(HeaderName, usize)>,
    algorithm: SigningAlgorithm,
}

impl ChunkedLayout {
    /// Signed chunks without a trailer.
    pub fn signed(decoded_length: u64, chunk_size: usize) -> Result<Self, Error> {
        Self::build(StreamingMode::Signed, decoded_length, chunk_size, None)
    }

    /// Signed chunks followed by the signed trailer `trailer_name` whose value
    /// (e.g. a base64 checksum) is `trailer_value_length` bytes long.
    pub fn signed_with_trailer(
        decoded_length: u64,
        chunk_size: usize,
        trailer_name: &str,
        trailer_value_length: usize,
    ) -> Result<Self, Error> {
        let trailer = Some((trailer_header_name(trailer_name)?, trailer_value_length));
        Self::build(
            StreamingMode::SignedWithTrailer,
            decoded_length,
            chunk_size,
            trailer,
        )
    }

    /// Unsigned chunks followed by the unsigned trailer `trailer_name`.
    pub fn unsigned_with_trailer(
        decoded_length: u64,
        chunk_size: usize,
        trailer_name: &str,
        trailer_value_length: usize,
    ) -> Result<Self, Error> {
        let trailer = Some((trailer_header_name(trailer_name)?, trailer_value_length));
        Self::build(
            StreamingMode::UnsignedWithTrailer,
            decoded_length,
            chunk_size,
            trailer,
        )
    }

    fn build(
        mode: StreamingMode,
        decoded_length: u64,
        chunk_size: usize,
        trailer: Option<(HeaderName, usize)>,
    ) -> Result<Self, Error> {
        if chunk_size < MIN_CHUNK_SIZE {
            return Err(StreamingError::ChunkSizeTooSmall { chunk_size }.into());
        }
        Ok(Self {
            mode,
            decoded_length,
            chunk_size,
            trailer,
            algorithm: SigningAlgorithm::V4,
        })
    }

    /// The same layout for chunks signed with `algorithm` (SigV4 by default).
    /// [`crate::Signer::sign_streaming`] sets it from the params; a layout
    /// given to [`crate::Signer::chunk_encoder`] must already match them.
    pub fn with_algorithm(mut self, algorithm: SigningAlgorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    /// The algorithm the chunk signatures use.
    pub fn algorithm(&self) -> SigningAlgorithm {
        self.algorithm
    }

    /// Length of one chunk or trailer signature on the wire (signed modes).
    fn signature_hex_len(&self) -> usize {
        match self.algorithm {
            SigningAlgorithm::V4 => 64,
            #[cfg(feature = "sigv4a")]
            SigningAlgorithm::V4a => V4A_SIGNATURE_HEX_LEN,
        }
    }

    /// Appends `signature` as it goes on the wire (padded for SigV4a).
    fn push_signature(&self, signature: &Signature, out: &mut Vec<u8>) {
        let start = out.len();
        signature.write_hex(out);
        #[cfg(feature = "sigv4a")]
        out.resize(start + self.signature_hex_len(), V4A_PADDING);
        debug_assert_eq!(out.len() - start, self.signature_hex_len());
    }

    /// The mode.
    pub fn mode(&self) -> StreamingMode {
        self.mode
    }
    /// The payload length before encoding (`x-amz-decoded-content-length`).
    pub fn decoded_length(&self) -> u64 {
        self.decoded_length
    }
    /// The size of every chunk but the last.
    pub fn chunk_size(&self) -> usize {
        self.chunk_size
    }
    /// The trailer header name, if any.
    pub fn trailer_name(&self) -> Option<&HeaderName> {
        self.trailer.as_ref().map(|(name, _)| name)
    }

    /// Length of the framing around a chunk of `payload_length` bytes
    /// (everything but the payload).
    fn framing_length(&self, payload_length: u64) -> u64 {
        let signature = if self.mode.is_signed() {
            (SIGNATURE_EXTENSION.len() + self.signature_hex_len()) as u64
        } else {
            0
        };
        hex_len(payload_length) as u64 + signature + 2 + 2
    }

    /// The encoded length of a data chunk of `payload_length` bytes.
    pub fn encoded_chunk_length(&self, payload_length: usize) -> usize {
        // At most 16 hex digits + 165 bytes of framing: cannot overflow usize
        // beyond what `payload_length` already is.
        payload_length.saturating_add(self.framing_length(payload_length as u64) as usize)
    }

    /// The length of what [`ChunkEncoder::finish`] writes: the empty chunk,
    /// the trailer and its signature, and the closing line break.
    pub fn final_length(&self) -> usize {
        let signature = if self.mode.is_signed() {
            SIGNATURE_EXTENSION.len() + self.signature_hex_len()
        } else {
            0
        };
        let mut length = 1 + signature + 2;
        if let Some((name, value_length)) = &self.trailer {
            length += name.as_str().len() + 1 + value_length + 2;
            if self.mode.is_signed() {
                length += TRAILER_SIGNATURE_NAME.len() + self.signature_hex_len() + 2;
            }
        }
        length + 2
    }

    /// The encoded body length: the `Content-Length` to send.
    pub fn encoded_length(&self) -> u64 {
        let chunk_size = self.chunk_size as u64;
        let full_chunks = self.decoded_length / chunk_size;
        let remainder = self.decoded_length % chunk_size;
        let mut length = self.decoded_length + full_chunks * self.framing_length(chunk_size);
        if remainder > 0 {
            length += self.framing_length(remainder);
        }
        length + self.final_length() as u64
    }

    /// Sets the headers an aws-chunked request needs before it is signed:
    /// `content-encoding: aws-chunked` (prepended to an existing encoding),
    /// `content-length` (encoded), `x-amz-decoded-content-length` and
    /// `x-amz-trailer`.
    pub fn apply_headers(&self, headers: &mut HeaderMap) {
        let encoding = match headers.get(CONTENT_ENCODING).map(HeaderValue::as_bytes) {
            Some(existing) if !existing.starts_with(b"aws-chunked") => {
                let mut value = b"aws-chunked,".to_vec();
                value.extend_from_slice(existing);
                HeaderValue::from_bytes(&value).unwrap_or(HeaderValue::from_static("aws-chunked"))
            }
            _ => HeaderValue::from_static("aws-chunked"),
        };
        headers.insert(CONTENT_ENCODING, encoding);
        headers.insert(CONTENT_LENGTH, HeaderValue::from(self.encoded_length()));
        headers.insert(
            X_AMZ_DECODED_CONTENT_LENGTH,
            HeaderValue::from(self.decoded_length),
        );
        match &self.trailer {
            Some((name, _)) => {
                headers.insert(
                    X_AMZ_TRAILER,
                    HeaderValue::from_str(name.as_str()).unwrap_or(HeaderValue::from_static("")),
                );
            }
            None => {
                headers.remove(X_AMZ_TRAILER);
            }
        }
    }
}

/// Trailer names are checksum headers: lowercase, so the canonical trailer
/// (`name:value`) uses the name as given; never the signature line's own name.
fn trailer_header_name(name: &str) -> Result<HeaderName, Error> {
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(InvalidHeader::InvalidName {
            name: name.to_owned(),
        }
        .into());
    }
    // The encoder writes that line itself (the trailer's signature).
    if name.as_bytes() == &TRAILER_SIGNATURE_NAME[..TRAILER_SIGNATURE_NAME.len() - 1] {
        return Err(InvalidHeader::ReservedTrailerName.into());
    }
    Ok(checked_name(name)?)
}

/// The longest chunk framing: 16 hex digits, the signature extension with a
/// padded SigV4a signature, and the line break.
const MAX_CHUNK_HEADER: usize = 16 + SIGNATURE_EXTENSION.len() + 144 + 2;

/// The framing that precedes one chunk's payload (at most 179 bytes).
#[derive(Clone, Copy)]
pub struct ChunkHeader {
    bytes: [u8; MAX_CHUNK_HEADER],
    length: usize,
}

impl AsRef<[u8]> for ChunkHeader {
    fn as_ref(&self) -> &[u8] {
        &self.bytes[..self.length]
    }
}

impl std::fmt::Debug for ChunkHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ChunkHeader({:?})",
            String::from_utf8_lossy(self.as_ref())
        )
    }
}

struct ChunkSigning {
    key: ScopeKey,
    /// `date\nscope\n`, shared by every chunk string to sign.
    date_and_scope: Vec<u8>,
    previous: Signature,
    /// The string to sign, rebuilt for every chunk in the same buffer.
    scratch: Vec<u8>,
}

impl ChunkSigning {
    /// Signs `algorithm\n date\n scope\n previous\n hashes...` and chains.
    /// `previous` is the unpadded hex of the previous signature.
    fn sign(&mut self, algorithm: &[u8], hashes: &[&[u8]]) -> Signature {
        let sts = &mut self.scratch;
        sts.clear();
        sts.extend_from_slice(algorithm);
        sts.push(b'\n');
        sts.extend_from_slice(&self.date_and_scope);
        self.previous.write_hex(sts);
        for hash in hashes {
            sts.push(b'\n');
            sts.extend_from_slice(hash);
        }
        self.previous = self.key.sign(sts);
        self.previous
    }
}

/// Encodes one aws-chunked body, chunk by chunk (sans-IO: it only fills
/// buffers). Create it with [`crate::Signer::sign_streaming`] or
/// [`crate::Signer::chunk_encoder`].
///
/// Call [`ChunkEncoder::chunk_header`] or [`ChunkEncoder::encode_chunk`] for
/// each chunk in order (every chunk exactly [`ChunkedLayout::chunk_size`]
/// bytes except the last), then [`ChunkEncoder::finish`] once. The encoder
/// checks the chunk lengths against the layout, so the bytes produced always
/// add up to [`ChunkedLayout::encoded_length`].
#[must_use = "an aws-chunked body must be finished with `finish`"]
pub struct ChunkEncoder {
    layout: ChunkedLayout,
    signing: Option<ChunkSigning>,
    written: u64,
    finished: bool,
}

impl std::fmt::Debug for ChunkEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkEncoder")
            .field("layout", &self.layout)
            .field("written", &self.written)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl ChunkEncoder {
    pub(crate) fn new(
        layout: ChunkedLayout,
        key: ScopeKey,
        params: &SigningParams<'_>,
        seed: Signature,
    ) -> Result<Self, Error> {
        if params.payload() != layout.mode.payload_hash() {
            return Err(InvalidParameter::Payload(
                "the signing params' payload must be the layout's streaming mode",
            )
            .into());
        }
        if params.algorithm() != layout.algorithm {
            return Err(InvalidParameter::Payload(
                "the layout's algorithm must be the signing params' algorithm",
            )
            .into());
        }
        let signing = layout.mode.is_signed().then(|| {
            let mut date_and_scope = Vec::with_capacity(64);
            date_and_scope.extend_from_slice(params.time().amz_date_bytes());
            date_and_scope.push(b'\n');
            params.write_scope(&mut date_and_scope);
            date_and_scope.push(b'\n');
            ChunkSigning {
                key,
                date_and_scope,
                previous: seed,
                scratch: Vec::with_capacity(256),
            }
        });
        Ok(Self {
            layout,
            signing,
            written: 0,
            finished: false,
        })
    }

    /// An encoder for an unsigned layout ([`ChunkedLayout::unsigned_with_trailer`]) of a
    /// request that is not signed at all (anonymous): the framing and the trailer, nothing
    /// to sign. A signed layout is refused (its chunks need the request's signature).
    pub fn unsigned(layout: ChunkedLayout) -> Result<Self, Error> {
        if layout.mode.is_signed() {
            return Err(InvalidParameter::Payload(
                "a signed aws-chunked layout needs a signed request: use Signer::sign_streaming",
            )
            .into());
        }
        Ok(Self {
            layout,
            signing: None,
            written: 0,
            finished: false,
        })
    }

    /// The layout being encoded.
    pub fn layout(&self) -> &ChunkedLayout {
        &self.layout
    }

    /// Payload bytes accepted so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Whether `payload` fits the layout at this position.
    fn accept(&mut self, payload: &[u8]) -> Result<(), StreamingError> {
        if self.finished {
            return Err(StreamingError::Finished);
        }
        let length = payload.len() as u64;
        let declared = self.layout.decoded_length;
        let total = self.written.checked_add(length).filter(|&t| t <= declared);
        let Some(total) = total else {
            return Err(StreamingError::TooMuchData { declared });
        };
        let is_last = total == declared;
        let expected = self.layout.chunk_size;
        if payload.is_empty() || payload.len() > expected || (payload.len() < expected && !is_last)
        {
            return Err(StreamingError::ChunkLength {
                expected,
                actual: payload.len(),
            });
        }
        self.written = total;
        Ok(())
    }

    /// Returns the framing to send before `payload`; send `payload` itself and
    /// then [`CHUNK_TERMINATOR`]. Nothing is copied.
    pub fn chunk_header(&mut self, payload: &[u8]) -> Result<ChunkHeader, Error> {
        self.accept(payload)?;
        let mut header = Vec::with_capacity(MAX_CHUNK_HEADER);
        push_hex_usize(&mut header, payload.len());
        if let Some(signing) = &mut self.signing {
            let payload_hash = hex32(&Sha256::digest(payload).into());
            let signature = signing.sign(
                self.layout.algorithm.chunk_name(),
                &[EMPTY_SHA256_HEX, &payload_hash],
            );
            header.extend_from_slice(SIGNATURE_EXTENSION);
            self.layout.push_signature(&signature, &mut header);
        }
        header.extend_from_slice(b"\r\n");
        let mut bytes = [0u8; MAX_CHUNK_HEADER];
        bytes[..header.len()].copy_from_slice(&header);
        Ok(ChunkHeader {
            bytes,
            length: header.len(),
        })
    }

    /// Writes the framed chunk (header, payload, line break) to the start of
    /// `out`, which must hold [`ChunkedLayout::encoded_chunk_length`] bytes,
    /// and returns the number of bytes written.
    pub fn encode_chunk(&mut self, payload: &[u8], out: &mut [u8]) -> Result<usize, Error> {
        let needed = self.layout.encoded_chunk_length(payload.len());
        if out.len() < needed {
            return Err(StreamingError::BufferTooSmall {
                needed,
                available: out.len(),
            }
            .into());
        }
        let header = self.chunk_header(payload)?;
        let header = header.as_ref();
        let (head, rest) = out.split_at_mut(header.len());
        head.copy_from_slice(header);
        let (body, rest) = rest.split_at_mut(payload.len());
        body.copy_from_slice(payload);
        rest[..2].copy_from_slice(CHUNK_TERMINATOR);
        Ok(needed)
    }

    /// Writes the final empty chunk, the trailer (`trailer_value` is the value
    /// of the layout's trailer header, `None` when the layout has none) and the
    /// trailer signature into `out`, which must hold
    /// [`ChunkedLayout::final_length`] bytes. Returns the number of bytes written.
    pub fn finish(&mut self, trailer_value: Option<&str>, out: &mut [u8]) -> Result<usize, Error> {
        if self.finished {
            return Err(StreamingError::Finished.into());
        }
        if self.written != self.layout.decoded_length {
            return Err(StreamingError::MissingData {
                declared: self.layout.decoded_length,
                written: self.written,
            }
            .into());
        }
        let needed = self.layout.final_length();
        if out.len() < needed {
            return Err(StreamingError::BufferTooSmall {
                needed,
                available: out.len(),
            }
            .into());
        }
        let trailer = match (&self.layout.trailer, trailer_value) {
            (Some((name, length)), Some(value)) if value.len() == *length => {
                checked_value(name, value)?;
                Some((name, value))
            }
            (None, None) => None,
            _ => return Err(StreamingError::TrailerMismatch.into()),
        };

        let mut tail = Vec::with_capacity(needed);
        tail.push(b'0');
        if let Some(signing) = &mut self.signing {
            let signature = signing.sign(
                self.layout.algorithm.chunk_name(),
                &[EMPTY_SHA256_HEX, EMPTY_SHA256_HEX],
            );
            tail.extend_from_slice(SIGNATURE_EXTENSION);
            self.layout.push_signature(&signature, &mut tail);
        }
        tail.extend_from_slice(b"\r\n");
        if let Some((name, value)) = trailer {
            let line_start = tail.len();
            tail.extend_from_slice(name.as_str().as_bytes());
            tail.push(b':');
            tail.extend_from_slice(value.as_bytes());
            let line_end = tail.len();
            tail.extend_from_slice(b"\r\n");
            if let Some(signing) = &mut self.signing {
                // The canonical trailer ends with `\n`, not `\r\n`.
                let mut hasher = Sha256::new();
                hasher.update(&tail[line_start..line_end]);
                hasher.update(b"\n");
                let trailer_hash = hex32(&hasher.finalize().into());
                let signature =
                    signing.sign(self.layout.algorithm.trailer_name(), &[&trailer_hash]);
                tail.extend_from_slice(TRAILER_SIGNATURE_NAME);
                self.layout.push_signature(&signature, &mut tail);
                tail.extend_from_slice(b"\r\n");
            }
        }
        tail.extend_from_slice(b"\r\n");
        debug_assert_eq!(tail.len(), needed);
        out[..tail.len()].copy_from_slice(&tail);
        self.finished = true;
        Ok(tail.len())
    }
}

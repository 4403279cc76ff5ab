//! What an upload reads from: a file (parts read concurrently by position, never copied),
//! bytes in memory, whole or in pieces (parts are slices of them), or a stream / `AsyncRead`
//! read in order into part buffers.

use std::fmt;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::body::{BodyError, BoxError, ByteStream, Pieces};

/// The data of an upload; see [`Client::upload`](crate::Client::upload).
///
/// ```no_run
/// use s3_wire_tokio::UploadSource;
///
/// # async fn demo(socket: tokio::net::TcpStream) {
/// let file = UploadSource::file("backup.tar"); // read in place, by position
/// let bytes = UploadSource::bytes(vec![0u8; 1024]); // parts are slices, no copies
/// let pieces = UploadSource::chunks([bytes::Bytes::from_static(b"a"), "b".into()]); // never joined
/// let known = UploadSource::reader(socket, Some(10 << 30)); // read in order, 10 GiB
/// # }
/// ```
pub struct UploadSource(pub(crate) SourceKind);

pub(crate) enum SourceKind {
    File(PathBuf),
    Bytes(Pieces),
    Sequential {
        reader: Box<dyn SequentialRead>,
        len: Option<u64>,
    },
}

impl UploadSource {
    /// The file at `path`. Parts are read concurrently by position (no temporary copy) and
    /// re-read on retry; a file that changes while it is uploaded fails the upload.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Self(SourceKind::File(path.into()))
    }

    /// Bytes in memory; parts are slices of them (nothing is copied, and they count nothing
    /// against the client's memory budget: the caller already holds them).
    pub fn bytes(bytes: impl Into<Bytes>) -> Self {
        Self(SourceKind::Bytes(Pieces::from(bytes.into())))
    }

    /// Bytes in memory in pieces, in order (object_store's `PutPayload` is a list of them):
    /// as [`UploadSource::bytes`], without joining them into one buffer first. A part that
    /// spans pieces is sent as slices of each.
    pub fn chunks(chunks: impl IntoIterator<Item = Bytes>) -> Self {
        Self(SourceKind::Bytes(Pieces::new(chunks)))
    }

    /// An `AsyncRead` read in order into part buffers (admitted against the client's memory
    /// budget). With `len`, it must yield exactly that many bytes; without, the part size
    /// grows as the stream does, up to the 5 TiB object limit.
    pub fn reader(reader: impl AsyncRead + Send + Unpin + 'static, len: Option<u64>) -> Self {
        Self(SourceKind::Sequential {
            reader: Box::new(Reader(reader)),
            len,
        })
    }

    /// A stream of byte chunks, read in order like [`UploadSource::reader`].
    pub fn stream<S, E>(stream: S, len: Option<u64>) -> Self
    where
        S: Stream<Item = Result<Bytes, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        let stream: ByteStream = crate::body::boxed_stream(stream);
        Self(SourceKind::Sequential {
            reader: Box::new(Chunks {
                stream,
                leftover: Bytes::new(),
            }),
            len,
        })
    }

    /// The length, when it is known without reading.
    pub(crate) fn known_len(&self) -> Option<u64> {
        match &self.0 {
            SourceKind::File(_) => None,
            SourceKind::Bytes(pieces) => Some(pieces.len()),
            SourceKind::Sequential { len, .. } => *len,
        }
    }
}

impl fmt::Debug for UploadSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            SourceKind::File(path) => f.debug_tuple("File").field(path).finish(),
            SourceKind::Bytes(pieces) => f.debug_tuple("Bytes").field(&pieces.len()).finish(),
            SourceKind::Sequential { len, .. } => f.debug_tuple("Sequential").field(len).finish(),
        }
    }
}

impl From<PathBuf> for UploadSource {
    fn from(path: PathBuf) -> Self {
        Self::file(path)
    }
}

impl From<&Path> for UploadSource {
    fn from(path: &Path) -> Self {
        Self::file(path)
    }
}

impl From<Bytes> for UploadSource {
    fn from(bytes: Bytes) -> Self {
        Self::bytes(bytes)
    }
}

impl From<Vec<u8>> for UploadSource {
    fn from(bytes: Vec<u8>) -> Self {
        Self::bytes(bytes)
    }
}

/// A part being read.
pub(crate) type PartRead<'a> = Pin<Box<dyn Future<Output = io::Result<Bytes>> + Send + 'a>>;

/// A source read front to back, one part buffer at a time.
pub(crate) trait SequentialRead: Send {
    /// Reads up to `capacity` bytes: fewer only at the end of the source.
    fn read_part(&mut self, capacity: usize) -> PartRead<'_>;
}

struct Reader<R>(R);

impl<R: AsyncRead + Send + Unpin> SequentialRead for Reader<R> {
    fn read_part(&mut self, capacity: usize) -> PartRead<'_> {
        Box::pin(async move {
            let mut buffer = BytesMut::with_capacity(capacity);
            while buffer.len() < capacity {
                let limit = (capacity - buffer.len()) as u64;
                if (&mut self.0).take(limit).read_buf(&mut buffer).await? == 0 {
                    break;
                }
            }
            Ok(buffer.freeze())
        })
    }
}

struct Chunks {
    stream: ByteStream,
    /// The rest of a chunk that crossed the end of the previous part.
    leftover: Bytes,
}

impl SequentialRead for Chunks {
    fn read_part(&mut self, capacity: usize) -> PartRead<'_> {
        Box::pin(async move {
            let mut buffer = BytesMut::new();
            loop {
                if self.leftover.is_empty() {
                    let next = std::future::poll_fn(|cx| self.stream.as_mut().poll_next(cx)).await;
                    match next {
                        None => break,
                        Some(Err(error)) => {
                            return Err(io::Error::other(BodyError::wrap(error)));
                        }
                        Some(Ok(chunk)) => self.leftover = chunk,
                    }
                }
                let take = (capacity - buffer.len()).min(self.leftover.len());
                let piece = self.leftover.split_to(take);
                if buffer.is_empty() && piece.len() == capacity {
                    return Ok(piece); // a whole part in one chunk: no copy
                }
                if buffer.capacity() == 0 {
                    buffer.reserve(capacity);
                }
                buffer.extend_from_slice(&piece);
                if buffer.len() == capacity {
                    break;
                }
            }
            Ok(buffer.freeze())
        })
    }
}

/// A source whose first bytes were already read (to decide between one request and a
/// multipart upload).
pub(crate) struct Prefixed {
    pub(crate) prefix: Bytes,
    pub(crate) rest: Box<dyn SequentialRead>,
}

impl SequentialRead for Prefixed {
    fn read_part(&mut self, capacity: usize) -> PartRead<'_> {
        Box::pin(async move {
            if self.prefix.len() >= capacity {
                return Ok(self.prefix.split_to(capacity));
            }
            let head = std::mem::take(&mut self.prefix);
            let tail = self.rest.read_part(capacity - head.len()).await?;
            if head.is_empty() {
                return Ok(tail);
            }
            let mut joined = BytesMut::with_capacity(head.len() + tail.len());
            joined.extend_from_slice(&head);
            joined.extend_from_slice(&tail);
            Ok(joined.freeze())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(pieces: &[&'static [u8]]) -> UploadSource {
        let items: Vec<Result<Bytes, io::Error>> =
            pieces.iter().map(|p| Ok(Bytes::from_static(p))).collect();
        UploadSource::stream(crate::body::test_stream(items), None)
    }

    async fn parts(source: UploadSource, capacity: usize) -> Vec<Bytes> {
        let SourceKind::Sequential { mut reader, .. } = source.0 else {
            panic!("sequential");
        };
        let mut out = Vec::new();
        loop {
            let part = reader.read_part(capacity).await.unwrap();
            let last = part.len() < capacity;
            out.push(part);
            if last {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn streams_are_cut_into_full_parts_whatever_their_chunks() {
        let cut = parts(chunks(&[b"ab", b"cdefg", b"h", b"ijklmnopq"]), 4).await;
        assert_eq!(cut, ["abcd", "efgh", "ijkl", "mnop", "q"]);
        let exact = parts(chunks(&[b"abcd", b"efgh"]), 4).await;
        assert_eq!(exact, ["abcd", "efgh", ""]);
        let readers = parts(UploadSource::reader(&b"abcdefghij"[..], None), 3).await;
        assert_eq!(readers, ["abc", "def", "ghi", "j"]);
    }

    #[tokio::test]
    async fn a_prefix_is_read_before_the_rest() {
        let SourceKind::Sequential { reader, .. } = UploadSource::reader(&b"defghij"[..], None).0
        else {
            panic!("sequential");
        };
        let mut prefixed = Prefixed {
            prefix: Bytes::from_static(b"abc"),
            rest: reader,
        };
        assert_eq!(prefixed.read_part(2).await.unwrap(), "ab");
        assert_eq!(prefixed.read_part(4).await.unwrap(), "cdef");
        assert_eq!(prefixed.read_part(4).await.unwrap(), "ghij");
        assert_eq!(prefixed.read_part(4).await.unwrap(), "");
    }

    #[tokio::test]
    async fn a_failing_stream_is_a_body_error() {
        let items: Vec<Result<Bytes, io::Error>> = vec![
            Ok(Bytes::from_static(b"ab")),
            Err(io::Error::other("disk on fire")),
        ];
        let SourceKind::Sequential { mut reader, .. } =
            UploadSource::stream(crate::body::test_stream(items), None).0
        else {
            panic!("sequential");
        };
        let error = reader.read_part(10).await.unwrap_err();
        assert!(error.to_string().contains("stream failed"), "{error}");
    }
}

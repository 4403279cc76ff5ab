//! Request bodies: replayable ([`Body::from_bytes`], [`Body::from_chunks`],
//! [`Body::from_file`]) or one-shot ([`Body::from_stream`]).
//!
//! A replayable body is re-sent from its start on every attempt: bytes are
//! cheap clones, files are read in place by position (`pread`), so a retry
//! re-reads the file and no temporary copy is ever made. A one-shot stream can
//! only be sent once: the client retries it only if not a single byte of it
//! was taken by the connection.

use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_core::Stream;
use http_body::{Frame, SizeHint};
use tokio::task::JoinHandle;

use crate::error::Error;
use crate::progress::PartProgress;
use crate::stall::Activity;

pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A failure of the request body itself (the caller's data: a file that
/// shrank, a stream that failed or delivered the wrong length), as opposed to
/// the network. The transport reports it as `ErrorKind::RequestBody`.
#[derive(Debug)]
pub(crate) struct BodyError {
    pub(crate) message: String,
    source: Option<BoxError>,
}

impl BodyError {
    pub(crate) fn boxed(message: impl Into<String>, source: Option<BoxError>) -> BoxError {
        Box::new(Self {
            message: message.into(),
            source,
        })
    }

    /// Wraps an error from the caller's stream unless it already is one.
    pub(crate) fn wrap(error: BoxError) -> BoxError {
        if error.is::<BodyError>() {
            error
        } else {
            Self::boxed("the body stream failed", Some(error))
        }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BodyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as _)
    }
}

/// A boxed one-shot stream of body chunks.
pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, BoxError>> + Send + 'static>>;

/// Bytes handed to the connection per frame; small enough that stall
/// detection sees steady progress, large enough to keep syscalls few.
const FRAME_SIZE: usize = 256 * 1024;
/// Bytes read from a file per positioned read.
const FILE_READ_SIZE: usize = 1024 * 1024;

/// The body of an upload (PutObject, UploadPart).
pub struct Body {
    pub(crate) source: Source,
    /// The managed transfer part this body carries: counts what each attempt sent.
    pub(crate) progress: Option<Arc<PartProgress>>,
    /// The body's SHA-256, when it was computed ahead in one pass with its checksum (large
    /// in-memory uploads over plain HTTP): every attempt's signature takes it from here.
    pub(crate) sha256: Option<[u8; 32]>,
}

pub(crate) enum Source {
    Bytes(Bytes),
    /// Two pieces or more (one is `Bytes`).
    Pieces(Pieces),
    File(FileRange),
    Stream(OneShot),
}

/// Bytes in memory in one or more pieces, in order (object_store's `PutPayload` is such a
/// list): sent, hashed and cut into parts piece by piece, since joining them would copy
/// every byte once more.
#[derive(Clone)]
pub(crate) struct Pieces {
    pieces: Arc<[Bytes]>,
    /// Where each piece ends, from the first byte: a part is found by a binary search, so
    /// cutting a long list into many parts does not walk it once per part.
    ends: Arc<[u64]>,
}

impl Pieces {
    /// `pieces` in order, the empty ones left out.
    pub(crate) fn new(pieces: impl IntoIterator<Item = Bytes>) -> Self {
        let pieces: Arc<[Bytes]> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
        let ends = pieces
            .iter()
            .scan(0u64, |end, piece| {
                *end += piece.len() as u64;
                Some(*end)
            })
            .collect();
        Self { pieces, ends }
    }

    pub(crate) fn len(&self) -> u64 {
        self.ends.last().copied().unwrap_or(0)
    }

    pub(crate) fn as_slice(&self) -> &[Bytes] {
        &self.pieces
    }

    /// Where piece `index` starts (the length of all, past the last).
    fn start_of(&self, index: usize) -> u64 {
        index.checked_sub(1).map_or(0, |before| self.ends[before])
    }

    /// The bytes `range` of these (which must lie within them), sharing their memory.
    pub(crate) fn slice(&self, range: Range<u64>) -> Self {
        assert!(
            range.start <= range.end && range.end <= self.len(),
            "range {range:?} of {} bytes",
            self.len()
        );
        // The first piece that ends after the range starts.
        let first = self.ends.partition_point(|&end| end <= range.start);
        let mut taken = Vec::new();
        for (piece, &end) in self.pieces[first..].iter().zip(&self.ends[first..]) {
            let start = end - piece.len() as u64;
            if start >= range.end {
                break;
            }
            let from = range.start.saturating_sub(start) as usize;
            let to = (range.end.min(end) - start) as usize;
            taken.push(piece.slice(from..to));
        }
        Self::new(taken)
    }
}

impl From<Bytes> for Pieces {
    fn from(bytes: Bytes) -> Self {
        Self::new([bytes])
    }
}

/// A byte range of an open file, read by position through reused buffers.
#[derive(Clone)]
pub(crate) struct FileRange {
    pub(crate) file: Arc<std::fs::File>,
    pub(crate) offset: u64,
    pub(crate) len: u64,
    pub(crate) buffers: Arc<ReadBuffers>,
}

/// The spare read buffers of one file source (a body and its retries, or the parts of one
/// managed upload). A whole-size read ([`FILE_READ_SIZE`]), or a part read whole into memory
/// admitted for it ([`ReadBuffers::read_whole`]), fills a spare buffer, and the buffer comes
/// back when the connection drops the last [`Bytes`] of it, so a file of any size is read
/// through the few buffers its requests have in flight. A fresh buffer per read cost a page
/// fault and a page cleared by the kernel for every 4 KiB, and a memset (19 % of a profile of
/// a 1 GiB upload over TLS). The spares never outnumber the buffers the source's requests
/// held at once (for a managed upload, within the memory its parts were admitted for); they
/// are freed with the source, and a buffer still lent then is freed when its `Bytes` drop.
#[derive(Default)]
pub(crate) struct ReadBuffers {
    spare: Mutex<Vec<Vec<u8>>>,
}

impl ReadBuffers {
    /// Reads up to `want` bytes of `file` at `offset`; see [`read_at`].
    fn read_at(
        self: &Arc<Self>,
        file: &std::fs::File,
        offset: u64,
        want: usize,
    ) -> std::io::Result<Bytes> {
        if want != FILE_READ_SIZE {
            return read_at(file, offset, want);
        }
        let mut buffer = self.take(want);
        match fill_at(file, offset, &mut buffer[..want]) {
            Ok(len) => Ok(self.lend(buffer, len)),
            Err(error) => {
                self.give_back(buffer);
                Err(error)
            }
        }
    }

    /// The bytes `range` of `file`, read whole into one buffer piece by piece, each piece
    /// handed to `each` while it is still in cache (to be hashed: a part hashed before it is
    /// sent is then read once, not twice). `UnexpectedEof` if the file ends first.
    pub(crate) fn read_whole(
        self: &Arc<Self>,
        file: &std::fs::File,
        range: std::ops::Range<u64>,
        mut each: impl FnMut(&[u8]),
    ) -> std::io::Result<Bytes> {
        let len = usize::try_from(range.end - range.start)
            .map_err(|_| std::io::Error::other("a part too large for memory"))?;
        let mut buffer = self.take(len);
        let read = buffer[..len]
            .chunks_mut(FILE_READ_SIZE)
            .try_fold(range.start, |at, piece| {
                let end = at + piece.len() as u64;
                read_through(file, at..end, piece, &mut each).map(|()| end)
            });
        match read {
            Ok(_) => Ok(self.lend(buffer, len)),
            Err(error) => {
                self.give_back(buffer);
                Err(error)
            }
        }
    }

    /// The smallest spare of at least `len` bytes, or a new buffer of `len`.
    fn take(&self, len: usize) -> Vec<u8> {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        let fitting = spare
            .iter()
            .enumerate()
            .filter(|(_, buffer)| buffer.len() >= len)
            .min_by_key(|(_, buffer)| buffer.len())
            .map(|(index, _)| index);
        match fitting {
            Some(index) => spare.swap_remove(index),
            None => vec![0u8; len],
        }
    }

    /// `buffer`'s first `len` bytes, lent until the last of them is dropped.
    fn lend(self: &Arc<Self>, buffer: Vec<u8>, len: usize) -> Bytes {
        Bytes::from_owner(Lent {
            buffer,
            len,
            home: Arc::downgrade(self),
        })
    }

    fn give_back(&self, buffer: Vec<u8>) {
        self.spare
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(buffer);
    }

    /// Spare buffers held now.
    #[cfg(test)]
    fn spares(&self) -> usize {
        self.spare.lock().unwrap().len()
    }
}

/// A spare buffer lent to the bytes of one read; it goes back to its source's spares when
/// they are dropped (or is freed, if the source is gone).
struct Lent {
    buffer: Vec<u8>,
    len: usize,
    home: Weak<ReadBuffers>,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.buffer[..self.len]
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(home) = self.home.upgrade() {
            home.give_back(std::mem::take(&mut self.buffer));
        }
    }
}

/// A stream that can be consumed once, with its announced length.
pub(crate) struct OneShot {
    pub(crate) stream: Arc<Mutex<Option<ByteStream>>>,
    pub(crate) len: u64,
    pub(crate) started: Arc<AtomicBool>,
}

impl Body {
    /// An empty body.
    pub fn empty() -> Self {
        Self::from_bytes(Bytes::new())
    }

    /// A body from memory; replayable.
    pub fn from_bytes(bytes: impl Into<Bytes>) -> Self {
        Self::of(Source::Bytes(bytes.into()))
    }

    /// A body from pieces of memory sent one after the other (object_store's `PutPayload`
    /// is a list of them); replayable. The pieces are never joined into one buffer: each
    /// attempt sends them as they are, and the digests a request needs are computed over
    /// them in order.
    pub fn from_chunks(chunks: impl IntoIterator<Item = Bytes>) -> Self {
        Self::from_pieces(Pieces::new(chunks))
    }

    /// A body of `pieces`: one piece (or none) is a body of bytes.
    pub(crate) fn from_pieces(pieces: Pieces) -> Self {
        match pieces.as_slice() {
            [] => Self::empty(),
            [one] => Self::from_bytes(one.clone()),
            _ => Self::of(Source::Pieces(pieces)),
        }
    }

    fn of(source: Source) -> Self {
        Self {
            source,
            progress: None,
            sha256: None,
        }
    }

    /// The same body, reporting what each attempt sends to a transfer's progress.
    pub(crate) fn with_progress(mut self, progress: Arc<PartProgress>) -> Self {
        self.progress = Some(progress);
        self
    }

    /// The whole file at `path`; replayable (re-read on retry, no copy).
    pub async fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let file = open(path.as_ref()).await?;
        let len = file.metadata().map_err(Error::io)?.len();
        Ok(Self::file_range(file, 0, len))
    }

    /// `len` bytes of the file at `path` starting at `offset`; replayable.
    /// Fails if the file is shorter than `offset + len`.
    pub async fn from_file_range(
        path: impl AsRef<Path>,
        offset: u64,
        len: u64,
    ) -> Result<Self, Error> {
        let file = open(path.as_ref()).await?;
        let file_len = file.metadata().map_err(Error::io)?.len();
        if offset.checked_add(len).is_none_or(|end| end > file_len) {
            return Err(Error::request_body(format!(
                "range {offset}+{len} lies beyond the end of {} ({file_len} bytes)",
                path.as_ref().display()
            )));
        }
        Ok(Self::file_range(file, offset, len))
    }

    fn file_range(file: std::fs::File, offset: u64, len: u64) -> Self {
        Self::file_region(FileRange {
            file: Arc::new(file),
            offset,
            len,
            buffers: Arc::default(),
        })
    }

    /// A range of a file that is already open (the parts of a managed upload share one
    /// handle and its buffers); the caller checked the range.
    pub(crate) fn file_region(range: FileRange) -> Self {
        Self::of(Source::File(range))
    }

    /// A one-shot stream that yields exactly `len` bytes. It is sent with
    /// `aws-chunked` encoding and is not retried once its first byte was sent;
    /// a stream that ends early or runs long fails the upload.
    pub fn from_stream<S, E>(stream: S, len: u64) -> Self
    where
        S: Stream<Item = Result<Bytes, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        let stream = boxed_stream(stream);
        Self::of(Source::Stream(OneShot {
            stream: Arc::new(Mutex::new(Some(stream))),
            len,
            started: Arc::new(AtomicBool::new(false)),
        }))
    }

    /// The number of payload bytes.
    pub fn len(&self) -> u64 {
        match &self.source {
            Source::Bytes(bytes) => bytes.len() as u64,
            Source::Pieces(pieces) => pieces.len(),
            Source::File(range) => range.len,
            Source::Stream(one_shot) => one_shot.len,
        }
    }

    /// True for a zero-length body.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if the body can be sent again on retry.
    pub fn is_replayable(&self) -> bool {
        !matches!(self.source, Source::Stream(_))
    }

    /// True if a retry may send this body (again): always for replayable
    /// bodies, and for a one-shot stream only while none of it was sent.
    pub(crate) fn can_resend(&self) -> bool {
        match &self.source {
            Source::Stream(one_shot) => !one_shot.started.load(Ordering::Acquire),
            _ => true,
        }
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.source {
            Source::Bytes(_) => "bytes",
            Source::Pieces(_) => "chunks",
            Source::File(_) => "file",
            Source::Stream(_) => "stream",
        };
        f.debug_struct("Body")
            .field("kind", &kind)
            .field("len", &self.len())
            .finish()
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Self {
        Self::from_bytes(bytes)
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Self {
        Self::from_bytes(bytes)
    }
}

impl From<String> for Body {
    fn from(text: String) -> Self {
        Self::from_bytes(text)
    }
}

impl From<&'static [u8]> for Body {
    fn from(bytes: &'static [u8]) -> Self {
        Self::from_bytes(bytes)
    }
}

impl From<&'static str> for Body {
    fn from(text: &'static str) -> Self {
        Self::from_bytes(text)
    }
}

async fn open(path: &Path) -> Result<std::fs::File, Error> {
    let owned = path.to_path_buf();
    tokio::task::spawn_blocking(move || std::fs::File::open(owned))
        .await
        .map_err(|e| Error::request_body(format!("file open task failed: {e}")))?
        .map_err(|e| Error::request_body(format!("cannot open {}", path.display())).with_source(e))
}

/// The caller's stream, boxed, with its errors as [`BoxError`]s.
pub(crate) fn boxed_stream<S, E>(stream: S) -> ByteStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Into<BoxError>,
{
    Box::pin(MapErr(Box::pin(stream)))
}

/// Adapts the caller's error type; the stream is boxed so that it can be
/// polled without pin projection.
struct MapErr<S>(Pin<Box<S>>);

impl<S, E> Stream for MapErr<S>
where
    S: Stream<Item = Result<Bytes, E>>,
    E: Into<BoxError>,
{
    type Item = Result<Bytes, BoxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut()
            .0
            .as_mut()
            .poll_next(cx)
            .map(|item| item.map(|chunk| chunk.map_err(Into::into)))
    }
}

/// The `http_body::Body` of one attempt, created afresh for every attempt.
pub(crate) struct AttemptBody {
    state: AttemptState,
    activity: Activity,
    progress: Option<Arc<PartProgress>>,
}

enum AttemptState {
    Bytes(Bytes),
    Pieces {
        pieces: Pieces,
        /// The piece to take after `current`.
        next: usize,
        /// What is left of the piece being sent.
        current: Bytes,
    },
    File {
        range: FileRange,
        position: u64,
        end: u64,
        read: Option<JoinHandle<std::io::Result<Bytes>>>,
    },
    /// The caller's one-shot stream, held to exactly its announced length.
    Stream {
        stream: Arc<Mutex<Option<ByteStream>>>,
        started: Arc<AtomicBool>,
        announced: u64,
        received: u64,
        /// The piece that completes the announced length, sent only once the stream has
        /// ended: a stream that runs long must fail before the last byte goes out.
        last: Option<Bytes>,
    },
    Done,
}

impl AttemptBody {
    /// The body for one attempt of sending `body`'s payload as-is (no
    /// `aws-chunked` framing).
    pub(crate) fn plain(body: &Body, activity: Activity) -> Self {
        let mut attempt = Self::payload(body, activity);
        attempt.progress = body.progress.clone();
        attempt
    }

    /// `body`'s payload for an encoder that frames it (and counts progress itself).
    pub(crate) fn payload(body: &Body, activity: Activity) -> Self {
        let state = match &body.source {
            Source::Bytes(bytes) => AttemptState::Bytes(bytes.clone()),
            Source::Pieces(pieces) => AttemptState::Pieces {
                pieces: pieces.clone(),
                next: 0,
                current: Bytes::new(),
            },
            Source::File(range) => AttemptState::File {
                range: range.clone(),
                position: range.offset,
                end: range.offset + range.len,
                read: None,
            },
            Source::Stream(one_shot) => AttemptState::Stream {
                stream: one_shot.stream.clone(),
                started: one_shot.started.clone(),
                announced: one_shot.len,
                received: 0,
                last: None,
            },
        };
        Self {
            state,
            activity,
            progress: None,
        }
    }

    /// The next piece of a one-shot stream, checked against its announced length.
    fn poll_stream(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, BoxError>>> {
        let AttemptState::Stream {
            stream,
            started,
            announced,
            received,
            last,
        } = &mut self.state
        else {
            return Poll::Ready(None);
        };
        loop {
            let mut guard = stream.lock().unwrap_or_else(|e| e.into_inner());
            let Some(inner) = guard.as_mut() else {
                // Ended (or taken by an earlier attempt).
                return Poll::Ready(match (last.take(), *received == 0 && *announced > 0) {
                    (Some(piece), _) => Some(Ok(piece)),
                    (None, true) => Some(Err(BodyError::boxed(
                        "the one-shot body stream was already consumed",
                        None,
                    ))),
                    (None, false) => None,
                });
            };
            match ready!(inner.as_mut().poll_next(cx)) {
                Some(Err(error)) => return Poll::Ready(Some(Err(BodyError::wrap(error)))),
                Some(Ok(piece)) if piece.is_empty() => {}
                Some(Ok(piece)) => {
                    // From here on the stream cannot be replayed.
                    started.store(true, Ordering::Release);
                    *received += piece.len() as u64;
                    if *received > *announced {
                        return Poll::Ready(Some(Err(BodyError::boxed(
                            format!(
                                "body stream yielded more than its announced {announced} bytes"
                            ),
                            None,
                        ))));
                    }
                    if *received < *announced {
                        return Poll::Ready(Some(Ok(piece)));
                    }
                    *last = Some(piece);
                }
                None => {
                    *guard = None;
                    if *received < *announced {
                        return Poll::Ready(Some(Err(BodyError::boxed(
                            format!(
                                "body stream ended after {received} of its announced {announced} bytes"
                            ),
                            None,
                        ))));
                    }
                }
            }
        }
    }

    fn remaining(&self) -> u64 {
        match &self.state {
            AttemptState::Bytes(bytes) => bytes.len() as u64,
            AttemptState::Pieces {
                pieces,
                next,
                current,
            } => pieces.len() - pieces.start_of(*next) + current.len() as u64,
            AttemptState::File { position, end, .. } => end - position,
            AttemptState::Stream {
                announced,
                received,
                last,
                ..
            } => announced - received + last.as_ref().map_or(0, |b| b.len() as u64),
            AttemptState::Done => 0,
        }
    }
}

impl http_body::Body for AttemptBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        let chunk = match &mut this.state {
            AttemptState::Done => return Poll::Ready(None),
            AttemptState::Stream { .. } => match ready!(this.poll_stream(cx)) {
                Some(Ok(chunk)) => chunk,
                Some(Err(error)) => {
                    this.state = AttemptState::Done;
                    return Poll::Ready(Some(Err(error)));
                }
                None => {
                    this.state = AttemptState::Done;
                    return Poll::Ready(None);
                }
            },
            AttemptState::Bytes(bytes) if bytes.is_empty() => {
                this.state = AttemptState::Done;
                return Poll::Ready(None);
            }
            AttemptState::Bytes(bytes) => bytes.split_to(bytes.len().min(FRAME_SIZE)),
            AttemptState::Pieces {
                pieces,
                next,
                current,
            } => {
                if current.is_empty() {
                    // Pieces are never empty (`Pieces::new`): the next one has bytes.
                    let Some(piece) = pieces.as_slice().get(*next) else {
                        this.state = AttemptState::Done;
                        return Poll::Ready(None);
                    };
                    *current = piece.clone();
                    *next += 1;
                }
                current.split_to(current.len().min(FRAME_SIZE))
            }
            AttemptState::File {
                range,
                position,
                end,
                read,
            } => {
                if *position >= *end {
                    this.state = AttemptState::Done;
                    return Poll::Ready(None);
                }
                let handle = read.get_or_insert_with(|| {
                    let (file, buffers) = (range.file.clone(), range.buffers.clone());
                    let at = *position;
                    let want = (*end - at).min(FILE_READ_SIZE as u64) as usize;
                    tokio::task::spawn_blocking(move || buffers.read_at(&file, at, want))
                });
                let result = ready!(Pin::new(handle).poll(cx));
                *read = None;
                match result {
                    Ok(Ok(chunk)) if chunk.is_empty() => {
                        let missing = *end - *position;
                        this.state = AttemptState::Done;
                        return Poll::Ready(Some(Err(BodyError::boxed(
                            format!("file ended {missing} bytes before the announced length"),
                            None,
                        ))));
                    }
                    Ok(Ok(chunk)) => {
                        *position += chunk.len() as u64;
                        chunk
                    }
                    Ok(Err(io)) => {
                        this.state = AttemptState::Done;
                        return Poll::Ready(Some(Err(BodyError::boxed(
                            "reading the file failed",
                            Some(io.into()),
                        ))));
                    }
                    Err(join) => {
                        this.state = AttemptState::Done;
                        return Poll::Ready(Some(Err(BodyError::boxed(
                            "the file read task failed",
                            Some(join.into()),
                        ))));
                    }
                }
            }
        };
        this.activity.touch();
        if let Some(progress) = &this.progress {
            progress.moved(chunk.len() as u64);
        }
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining() == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining())
    }
}

/// Reads up to `want` bytes at `offset` without moving any file cursor, so
/// that retries and concurrent part uploads can share one open file.
pub(crate) fn read_at(file: &std::fs::File, offset: u64, want: usize) -> std::io::Result<Bytes> {
    let mut buffer = vec![0u8; want];
    let filled = fill_at(file, offset, &mut buffer)?;
    buffer.truncate(filled);
    Ok(Bytes::from(buffer))
}

/// Hands the bytes `range` of `file` to `each`, read by position through `buffer` (one
/// buffer for a whole pass, small enough that what was just read is still in cache);
/// `UnexpectedEof` if the file ends first.
pub(crate) fn read_through(
    file: &std::fs::File,
    range: std::ops::Range<u64>,
    buffer: &mut [u8],
    mut each: impl FnMut(&[u8]),
) -> std::io::Result<()> {
    let mut position = range.start;
    while position < range.end {
        let want = (range.end - position).min(buffer.len() as u64) as usize;
        let read = fill_at(file, position, &mut buffer[..want])?;
        if read == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the file is shorter than when it was opened",
            ));
        }
        each(&buffer[..read]);
        position += read as u64;
    }
    Ok(())
}

/// The `algorithm` checksum of the bytes `range` of `file` (see [`read_through`]).
pub(crate) fn checksum_at(
    file: &std::fs::File,
    range: std::ops::Range<u64>,
    algorithm: s3_ops::ChecksumAlgorithm,
    buffer: &mut [u8],
) -> std::io::Result<s3_ops::Checksum> {
    let mut checksummer = s3_ops::Checksummer::new(algorithm);
    read_through(file, range, buffer, |bytes| checksummer.update(bytes))?;
    Ok(checksummer.finish())
}

/// Reads into `buffer` from `offset` (without moving any file cursor) until it is full or
/// the file ends; returns the bytes read. For passes that reuse one buffer.
pub(crate) fn fill_at(
    file: &std::fs::File,
    offset: u64,
    buffer: &mut [u8],
) -> std::io::Result<usize> {
    let want = buffer.len();
    let mut filled = 0;
    while filled < want {
        #[cfg(unix)]
        let n = std::os::unix::fs::FileExt::read_at(
            file,
            &mut buffer[filled..],
            offset + filled as u64,
        );
        #[cfg(windows)]
        let n = std::os::windows::fs::FileExt::seek_read(
            file,
            &mut buffer[filled..],
            offset + filled as u64,
        );
        match n {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Test support: a stream over a fixed list of items.
#[cfg(test)]
pub(crate) fn test_stream<E: Send + 'static>(
    items: Vec<Result<Bytes, E>>,
) -> impl Stream<Item = Result<Bytes, E>> + Send + 'static {
    struct Items<E>(std::vec::IntoIter<Result<Bytes, E>>);

    impl<E> Stream for Items<E> {
        type Item = Result<Bytes, E>;
        fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            // The iterator is Unpin; so is this.
            Poll::Ready(self.get_mut().0.next())
        }
    }

    impl<E> Unpin for Items<E> {}

    Items(items.into_iter())
}

/// Test support: a one-shot body over a fixed list of stream items.
#[cfg(test)]
pub(crate) fn test_stream_body(items: Vec<Result<Bytes, BoxError>>, len: u64) -> Body {
    Body::from_stream(test_stream(items), len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;

    /// Polls one plain attempt of `body` to its end: the bytes it let out, and its error.
    async fn send_plain(body: &Body) -> (Vec<u8>, Option<String>) {
        let mut attempt = AttemptBody::plain(body, Activity::new());
        let mut sent = Vec::new();
        loop {
            match std::future::poll_fn(|cx| Pin::new(&mut attempt).poll_frame(cx)).await {
                None => return (sent, None),
                Some(Ok(frame)) => sent.extend_from_slice(&frame.into_data().unwrap()),
                Some(Err(error)) => return (sent, Some(error.to_string())),
            }
        }
    }

    fn pieces(pieces: &[&'static [u8]]) -> Vec<Result<Bytes, BoxError>> {
        pieces.iter().map(|p| Ok(Bytes::from_static(p))).collect()
    }

    #[test]
    fn pieces_are_cut_across_their_ends() {
        let whole = Bytes::from((0..100u8).collect::<Vec<_>>());
        let pieces = Pieces::new([0..0, 0..1, 1..40, 40..40, 40..100].map(|r| whole.slice(r)));
        assert_eq!(pieces.as_slice().len(), 3, "the empty pieces are left out");
        assert_eq!(pieces.len(), 100);
        for start in 0..=100u64 {
            for end in start..=100 {
                let cut = pieces.slice(start..end);
                assert_eq!(cut.len(), end - start);
                assert!(cut.as_slice().iter().all(|piece| !piece.is_empty()));
                let joined: Vec<u8> = cut.as_slice().concat();
                assert_eq!(
                    joined,
                    whole[start as usize..end as usize],
                    "{start}..{end}"
                );
            }
        }
    }

    #[tokio::test]
    async fn chunks_are_sent_in_order_in_frames_on_every_attempt() {
        let len = 2 * FRAME_SIZE + 5;
        let data = Bytes::from((0..len).map(|i| (i % 251) as u8).collect::<Vec<_>>());
        let body = Body::from_chunks(
            [0..3, 3..FRAME_SIZE + 10, FRAME_SIZE + 10..len].map(|r| data.slice(r)),
        );
        assert!(matches!(body.source, Source::Pieces(_)));
        assert_eq!(body.len(), len as u64);
        assert!(body.is_replayable());
        for attempt in 0..2 {
            let mut sending = AttemptBody::plain(&body, Activity::new());
            assert_eq!(sending.size_hint().exact(), Some(len as u64));
            let mut sent = Vec::new();
            while let Some(frame) =
                std::future::poll_fn(|cx| Pin::new(&mut sending).poll_frame(cx)).await
            {
                let frame = frame.unwrap().into_data().unwrap();
                assert!(frame.len() <= FRAME_SIZE && !frame.is_empty());
                sent.extend_from_slice(&frame);
                assert_eq!(sending.size_hint().exact(), Some((len - sent.len()) as u64));
            }
            assert!(sending.is_end_stream());
            assert_eq!(sent, data, "attempt {attempt}");
        }
        // One chunk is a body of bytes, none an empty body.
        let one = Body::from_chunks([Bytes::new(), data.clone()]);
        assert!(matches!(&one.source, Source::Bytes(bytes) if *bytes == data));
        assert!(Body::from_chunks([Bytes::new()]).is_empty());
    }

    #[tokio::test]
    async fn a_plain_stream_attempt_sends_exactly_its_announced_length() {
        let body = test_stream_body(pieces(&[b"abc", b"", b"defg"]), 7);
        assert_eq!(send_plain(&body).await, (b"abcdefg".to_vec(), None));
        assert!(!body.can_resend(), "its bytes were taken");
        // A second attempt cannot send it again.
        let (sent, error) = send_plain(&body).await;
        assert!(sent.is_empty());
        assert!(error.unwrap().contains("already consumed"));
    }

    #[tokio::test]
    async fn a_short_plain_stream_fails_after_what_it_had() {
        let body = test_stream_body(pieces(&[b"abc"]), 7);
        let (sent, error) = send_plain(&body).await;
        assert_eq!(sent, b"abc");
        assert!(error.unwrap().contains("ended after 3 of its announced 7"));
    }

    #[tokio::test]
    async fn file_reads_reuse_their_buffers_and_send_exactly_the_file() {
        // Three whole-size reads and a short last one.
        let data: Vec<u8> = (0..FILE_READ_SIZE * 7 / 2)
            .map(|i| (i % 251) as u8)
            .collect();
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &data).unwrap();
        let body = Body::from_file(file.path()).await.unwrap();
        let Source::File(range) = &body.source else {
            panic!("a file body");
        };
        let (handle, buffers) = (range.file.clone(), range.buffers.clone());
        // A retry re-reads the file through the same spares.
        for _ in 0..2 {
            assert_eq!(send_plain(&body).await, (data.clone(), None));
        }
        assert_eq!(buffers.spares(), 1, "each read was sent before the next");

        // Two reads in flight take two buffers; a reused buffer yields only what its
        // read filled, never what an earlier read left in it.
        let first = buffers.read_at(&handle, 0, FILE_READ_SIZE).unwrap();
        let tail_at = data.len() as u64 - 10;
        let tail = buffers.read_at(&handle, tail_at, FILE_READ_SIZE).unwrap();
        assert_eq!(
            (&first[..], &tail[..]),
            (&data[..FILE_READ_SIZE], &data[data.len() - 10..])
        );
        assert_eq!(buffers.spares(), 0);
        drop(tail);
        assert_eq!(buffers.spares(), 1);

        // A buffer still lent when its source is gone is freed with its bytes.
        let spares = Arc::downgrade(&buffers);
        drop((body, buffers));
        assert!(spares.upgrade().is_none());
        assert_eq!(first.slice(..3), data[..3]);
        drop(first);
    }

    #[test]
    fn a_part_read_whole_hands_every_piece_over_once_and_lends_a_spare_that_fits() {
        let data: Vec<u8> = (0..FILE_READ_SIZE * 5 / 2)
            .map(|i| (i % 253) as u8)
            .collect();
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &data).unwrap();
        let handle = std::fs::File::open(file.path()).unwrap();
        let buffers = Arc::new(ReadBuffers::default());

        // Pieces of at most one read each, in order, exactly the bytes returned.
        let mut pieces = Vec::new();
        let whole = buffers
            .read_whole(&handle, 7..data.len() as u64, |piece| {
                pieces.push(piece.to_vec())
            })
            .unwrap();
        assert_eq!(whole, data[7..]);
        assert_eq!(pieces.concat(), data[7..]);
        assert_eq!(
            pieces.iter().map(Vec::len).collect::<Vec<_>>(),
            [FILE_READ_SIZE, FILE_READ_SIZE, FILE_READ_SIZE / 2 - 7]
        );
        drop(whole);
        assert_eq!(buffers.spares(), 1);

        // A one-read body takes that spare and yields only its read; a short part read
        // meanwhile gets a buffer of its own.
        let first = buffers.read_at(&handle, 0, FILE_READ_SIZE).unwrap();
        let short = buffers.read_whole(&handle, 0..10, |_| {}).unwrap();
        assert_eq!(
            (&first[..], &short[..]),
            (&data[..FILE_READ_SIZE], &data[..10])
        );
        assert_eq!(buffers.spares(), 0);
        drop((first, short));
        assert_eq!(buffers.spares(), 2);
        // Each read takes the smallest spare that fits it, never one too small.
        let next = buffers.read_at(&handle, 0, FILE_READ_SIZE).unwrap();
        assert_eq!(next, data[..FILE_READ_SIZE]);
        assert_eq!(buffers.spares(), 1, "the 10-byte spare stays");
        let tiny = buffers.read_whole(&handle, 3..8, |_| {}).unwrap();
        assert_eq!(tiny, data[3..8]);
        assert_eq!(buffers.spares(), 0, "the 10-byte spare fits 5 bytes");
        drop((next, tiny));

        // A file shorter than the range: an error once its bytes are handed over (each once),
        // the buffer back.
        let mut handed = 0;
        let error = buffers
            .read_whole(&handle, 0..data.len() as u64 + 1, |piece| {
                handed += piece.len()
            })
            .unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::UnexpectedEof);
        assert_eq!(
            handed,
            data.len(),
            "every byte the file had, then the error"
        );
        assert_eq!(
            buffers.spares(),
            3,
            "its new buffer went back to the spares"
        );
    }

    #[tokio::test]
    async fn a_long_plain_stream_fails_before_its_last_announced_byte_goes_out() {
        // The store must never see a complete body of the announced length.
        let body = test_stream_body(pieces(&[b"abc", b"defg", b"h"]), 7);
        let (sent, error) = send_plain(&body).await;
        assert_eq!(sent, b"abc", "the piece completing the length is held back");
        assert!(error.unwrap().contains("more than its announced 7"));
    }
}

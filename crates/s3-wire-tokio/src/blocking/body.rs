//! A `GetObject` body for blocking code: [`std::io::Read`], or consumed whole in a task.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use bytes::{Buf, Bytes, BytesMut};
use s3_ops::ops::get_object::GetObjectOutput;

use super::Runtime;
use crate::error::Error;
use crate::task_hop::ReadAhead;

/// A streaming `GetObject` response for blocking code: the decoded head and the unread
/// body.
#[derive(Debug)]
#[non_exhaustive]
pub struct GetObjectResponse {
    /// Status, headers and metadata.
    pub output: GetObjectOutput,
    /// The object's bytes.
    pub body: ObjectBody,
}

impl GetObjectResponse {
    pub(super) fn new(response: crate::GetObjectResponse, runtime: Arc<Runtime>) -> Self {
        let content_length = response.body.content_length();
        Self {
            output: response.output,
            body: ObjectBody {
                state: State::Unread(Box::new(response.body)),
                content_length,
                runtime,
            },
        }
    }
}

/// The body of a `GetObject` response, for blocking code.
///
/// As a [`Read`], the body is read ahead by a task on the client's runtime (at most about
/// 3 MiB ahead) and handed over in batches of the chunks that arrived together, so the
/// reading thread is woken per batch, not per chunk; [`ObjectBody::bytes`],
/// [`ObjectBody::write_to_file`] run their whole loop in a task. Every check of the async
/// [`crate::ObjectBody`] applies (length, checksum, resumption of a broken-off body): a
/// read fails with an [`io::Error`] wrapping the client's [`Error`] rather than end early.
pub struct ObjectBody {
    state: State,
    content_length: Option<u64>,
    runtime: Arc<Runtime>,
}

enum State {
    /// Nothing read yet: the async body, to be read whole or ahead.
    Unread(Box<crate::ObjectBody>),
    /// Read ahead by a task; `current` holds the batch being read.
    Reading {
        batches: ReadAhead,
        current: VecDeque<Bytes>,
    },
    /// Read to its end, or failed.
    Done,
}

impl ObjectBody {
    /// The body's length from `Content-Length`, if the response had one.
    pub fn content_length(&self) -> Option<u64> {
        self.content_length
    }

    /// The next chunk, `None` at the (verified) end of the body.
    pub fn next_chunk(&mut self) -> Option<Result<Bytes, Error>> {
        loop {
            match &mut self.state {
                State::Unread(_) => self.start_reading(),
                State::Reading { batches, current } => {
                    if let Some(chunk) = current.pop_front() {
                        return Some(Ok(chunk));
                    }
                    match batches.blocking_next() {
                        Some(Ok(batch)) => current.extend(batch),
                        Some(Err(error)) => {
                            self.state = State::Done;
                            return Some(Err(error));
                        }
                        None => {
                            self.state = State::Done;
                            return None;
                        }
                    }
                }
                State::Done => return None,
            }
        }
    }

    /// Reads the (rest of the) body into memory. Read from its start, the whole loop runs
    /// in a task on the client's runtime.
    pub fn bytes(mut self) -> Result<Bytes, Error> {
        if matches!(self.state, State::Unread(_)) {
            let State::Unread(body) = std::mem::replace(&mut self.state, State::Done) else {
                unreachable!("matched just above");
            };
            return self.runtime.run(body.collect());
        }
        let mut gathered = BytesMut::new();
        while let Some(chunk) = self.next_chunk() {
            gathered.extend_from_slice(&chunk?);
        }
        Ok(gathered.freeze())
    }

    /// Writes the body to a new file at `path` (see [`crate::ObjectBody::write_to_file`]),
    /// in a task on the client's runtime; returns the byte count.
    ///
    /// # Panics
    ///
    /// When part of the body was read already.
    pub fn write_to_file(mut self, path: impl AsRef<Path>) -> Result<u64, Error> {
        let State::Unread(body) = std::mem::replace(&mut self.state, State::Done) else {
            panic!("ObjectBody::write_to_file needs a body of which nothing was read yet");
        };
        let path = path.as_ref().to_path_buf();
        self.runtime.run(body.write_to_file(path))
    }

    /// Copies the (rest of the) body into `writer` and flushes it; returns the bytes
    /// written. The body's checks have passed when this returns `Ok`.
    pub fn write_to(mut self, writer: &mut impl Write) -> Result<u64, Error> {
        let mut written = 0;
        while let Some(chunk) = self.next_chunk() {
            let chunk = chunk?;
            writer.write_all(&chunk).map_err(Error::io)?;
            written += chunk.len() as u64;
        }
        writer.flush().map_err(Error::io)?;
        Ok(written)
    }

    fn start_reading(&mut self) {
        let State::Unread(body) = std::mem::replace(&mut self.state, State::Done) else {
            return;
        };
        self.state = State::Reading {
            batches: ReadAhead::start(*body, self.runtime.get().handle()),
            current: VecDeque::new(),
        };
    }
}

impl Read for ObjectBody {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        match self.next_chunk() {
            Some(Ok(mut chunk)) => {
                let n = chunk.len().min(buf.len());
                buf[..n].copy_from_slice(&chunk[..n]);
                chunk.advance(n);
                if !chunk.is_empty() {
                    let State::Reading { current, .. } = &mut self.state else {
                        unreachable!("a chunk came from a body being read");
                    };
                    current.push_front(chunk);
                }
                Ok(n)
            }
            Some(Err(error)) => Err(io::Error::other(error)),
            None => Ok(0),
        }
    }
}

impl std::fmt::Debug for ObjectBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            State::Unread(_) => "unread",
            State::Reading { .. } => "reading",
            State::Done => "done",
        };
        f.debug_struct("blocking::ObjectBody")
            .field("content_length", &self.content_length)
            .field("state", &state)
            .finish()
    }
}

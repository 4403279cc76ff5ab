//! A body read in one GET (a small object, or one that cannot be split).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::Poll;

use bytes::Bytes;
use tokio::io::AsyncWriteExt;

use super::Sink;
use super::file::TempFile;
use super::ranged::FileMemory;
use crate::error::{Error, TransferErrorKind};
use crate::file_writer::{FileWriter, PositionedWriter};
use crate::object_body::ObjectBody;
use crate::progress::PartProgress;
use crate::transfer::handle::Control;
use futures_core::Stream as _;

/// Streams a whole body into the sink (a small object, or one that cannot be split).
pub(super) async fn receive_whole(
    sink: &mut Sink,
    mut body: ObjectBody,
    progress: &PartProgress,
    control: &Control,
    memory: FileMemory,
    sync: bool,
) -> Result<u64, Error> {
    let mut received = 0u64;
    match sink {
        Sink::Writer(writer) => {
            while let Some(chunk) = next_chunk(&mut body, control).await? {
                writer.write_all(&chunk).await.map_err(Error::io)?;
                progress.moved(chunk.len() as u64);
                received += chunk.len() as u64;
            }
            writer.flush().await.map_err(Error::io)?;
        }
        Sink::File(path)
            if body
                .content_length()
                .is_some_and(|len| len <= memory.write_buffer as u64) =>
        {
            let mut chunks = Vec::new();
            while let Some(chunk) = next_chunk(&mut body, control).await? {
                progress.moved(chunk.len() as u64);
                received += chunk.len() as u64;
                chunks.push(chunk);
            }
            TempFile::write_whole(path, chunks, sync).await?;
        }
        Sink::File(path) => {
            let file = TempFile::create(path, body.content_length().unwrap_or(0)).await?;
            let written = async {
                let mut writer = PositionedWriter::new(
                    FileWriter::start(file.file.clone()),
                    0,
                    memory.write_buffer,
                );
                while let Some(chunk) = next_chunk(&mut body, control).await? {
                    progress.moved(chunk.len() as u64);
                    received += chunk.len() as u64;
                    writer.push(chunk).await?;
                }
                writer.finish().await?;
                // A body without Content-Length may be shorter than the preallocation.
                let handle = file.file.clone();
                tokio::task::spawn_blocking(move || handle.set_len(received))
                    .await
                    .map_err(|e| Error::io(io::Error::other(e)))?
                    .map_err(Error::io)?;
                Ok::<_, Error>(())
            }
            .await;
            match written {
                Ok(()) => file.commit(sync).await?,
                Err(error) => {
                    file.discard().await;
                    return Err(error);
                }
            }
        }
    }
    Ok(received)
}

/// The next chunk of a body, or the cancellation.
async fn next_chunk(body: &mut ObjectBody, control: &Control) -> Result<Option<Bytes>, Error> {
    let mut cancelled = std::pin::pin!(control.cancelled());
    std::future::poll_fn(|cx| {
        if cancelled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(Error::transfer_error(TransferErrorKind::Cancelled)));
        }
        Pin::new(&mut *body).poll_next(cx).map(Option::transpose)
    })
    .await
}

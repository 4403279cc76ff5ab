//! Writing a response body into a file by position: the chunks as the connection delivered
//! them, in batches, by one writer per file on the blocking pool.

use std::io;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::Error;

/// The positioned writes into one file (a download's temporary file, a body written to a
/// file), done in the order given by one task on the blocking pool. Buffered writes to one
/// file take the file's lock in the kernel (tmpfs, ext4, XFS), so writes from several threads
/// at once only queue, spinning, on that lock; one writer keeps them back to back and each
/// range's task free to read its connection.
#[derive(Clone)]
pub(crate) struct FileWriter {
    jobs: tokio::sync::mpsc::UnboundedSender<WriteJob>,
}

/// Chunks to write back to back from `offset`, and who waits for them.
struct WriteJob {
    offset: u64,
    chunks: Vec<Bytes>,
    done: tokio::sync::oneshot::Sender<io::Result<()>>,
}

/// The end of a [`FileWriter`]'s task, which holds the file until every handle to the
/// writer is dropped and the jobs queued are written.
pub(crate) struct WriterEnd(tokio::task::JoinHandle<()>);

impl WriterEnd {
    /// Waits until the writer has let go of the file.
    pub(crate) async fn wait(self) {
        // A writer that panicked has let go of it too.
        let _ = self.0.await;
    }
}

impl FileWriter {
    /// Starts the writer of `file`; it ends once every handle to it is dropped.
    pub(crate) fn start(file: Arc<std::fs::File>) -> Self {
        Self::start_with_end(file).0
    }

    /// [`FileWriter::start`], with the writer's end, for a caller that must know when the
    /// file is no longer written (a download's part file, locked while anything holds it).
    pub(crate) fn start_with_end(file: Arc<std::fs::File>) -> (Self, WriterEnd) {
        let (jobs, mut queue) = tokio::sync::mpsc::unbounded_channel::<WriteJob>();
        let task = tokio::task::spawn_blocking(move || {
            while let Some(job) = queue.blocking_recv() {
                let written = write_chunks_at(&file, &job.chunks, job.offset);
                // Nobody waits any more when the range was given up.
                let _ = job.done.send(written);
            }
        });
        (Self { jobs }, WriterEnd(task))
    }

    /// Queues `chunks` for writing at `offset`; the answer comes once they are in the file.
    fn write(
        &self,
        offset: u64,
        chunks: Vec<Bytes>,
    ) -> tokio::sync::oneshot::Receiver<io::Result<()>> {
        let (done, answer) = tokio::sync::oneshot::channel();
        // The writer runs as long as this handle exists; a writer that panicked drops the
        // job, and `answer` then says so.
        let _ = self.jobs.send(WriteJob {
            offset,
            chunks,
            done,
        });
        answer
    }
}

/// Writes a body's chunks by position through a [`FileWriter`], in batches of about `batch`
/// bytes, one batch in flight while the next is gathered: the chunks go to the file as the
/// connection delivered them (no copy in between), and reading the connection waits for the
/// disk only when a whole batch is ready before the previous one landed. It holds at most two
/// batches: the one being written and the one being gathered (the chunks are slices of the
/// transport's read buffers, which they keep alive until written).
pub(crate) struct PositionedWriter {
    writer: FileWriter,
    /// Where the next chunk goes.
    offset: u64,
    batch: usize,
    gathered: Vec<Bytes>,
    gathered_len: usize,
    in_flight: Option<tokio::sync::oneshot::Receiver<io::Result<()>>>,
}

impl PositionedWriter {
    pub(crate) fn new(writer: FileWriter, offset: u64, batch: usize) -> Self {
        Self {
            writer,
            offset,
            batch,
            gathered: Vec::new(),
            gathered_len: 0,
            in_flight: None,
        }
    }

    /// Takes the next chunk of the body; starts writing the gathered batch once this chunk
    /// would make it larger than a batch.
    pub(crate) async fn push(&mut self, chunk: Bytes) -> Result<(), Error> {
        if chunk.is_empty() {
            return Ok(());
        }
        if self.gathered_len > 0 && self.gathered_len + chunk.len() > self.batch {
            self.start_batch().await?;
        }
        self.gathered_len += chunk.len();
        self.gathered.push(chunk);
        Ok(())
    }

    /// Writes what is left and waits until every byte is in the file.
    pub(crate) async fn finish(mut self) -> Result<(), Error> {
        self.start_batch().await?;
        self.wait().await
    }

    /// Waits for the batch in flight, then starts writing the gathered one.
    async fn start_batch(&mut self) -> Result<(), Error> {
        self.wait().await?;
        if self.gathered.is_empty() {
            return Ok(());
        }
        let chunks = std::mem::take(&mut self.gathered);
        self.in_flight = Some(self.writer.write(self.offset, chunks));
        self.offset += self.gathered_len as u64;
        self.gathered_len = 0;
        Ok(())
    }

    async fn wait(&mut self) -> Result<(), Error> {
        match self.in_flight.take() {
            Some(answer) => answer
                .await
                .map_err(|_| Error::io(io::Error::other("the file writer stopped")))?
                .map_err(Error::io),
            None => Ok(()),
        }
    }
}

/// Writes `chunks` back to back into `file` from `offset`.
pub(crate) fn write_chunks_at(
    file: &std::fs::File,
    chunks: &[Bytes],
    offset: u64,
) -> io::Result<()> {
    let mut at = offset;
    chunks.iter().try_for_each(|chunk| {
        write_all_at(file, chunk, at)?;
        at += chunk.len() as u64;
        Ok(())
    })
}

/// Writes all of `data` at `offset` of `file`.
pub(crate) fn write_all_at(file: &std::fs::File, data: &[u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, data, offset)
    }
    #[cfg(windows)]
    {
        let mut done = 0;
        while done < data.len() {
            match std::os::windows::fs::FileExt::seek_write(
                file,
                &data[done..],
                offset + done as u64,
            ) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn open(path: &std::path::Path, write: bool) -> Arc<std::fs::File> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(write)
            .open(path)
            .unwrap();
        Arc::new(file)
    }

    #[tokio::test]
    async fn chunks_land_at_their_offsets_across_batches() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target");
        std::fs::write(&path, vec![b'.'; 40]).unwrap();
        let writer = FileWriter::start(open(&path, true));
        // Two bodies into one file through one writer, with batches smaller than some chunks.
        let mut first = PositionedWriter::new(writer.clone(), 3, 4);
        let mut second = PositionedWriter::new(writer, 20, 4);
        for chunk in ["ab", "cde", "", "fghijkl", "m"] {
            first.push(Bytes::from(chunk)).await.unwrap();
        }
        for chunk in ["NOPQ", "R", "ST"] {
            second.push(Bytes::from(chunk)).await.unwrap();
        }
        first.finish().await.unwrap();
        second.finish().await.unwrap();
        let mut expected = vec![b'.'; 40];
        expected[3..16].copy_from_slice(b"abcdefghijklm");
        expected[20..27].copy_from_slice(b"NOPQRST");
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }

    #[tokio::test]
    async fn the_writer_lets_go_of_the_file_by_its_end_and_writes_what_was_queued() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target");
        std::fs::write(&path, b"....").unwrap();
        let file = open(&path, true);
        let (writer, end) = FileWriter::start_with_end(file.clone());
        // Queued, then given up: nobody waits for the answer.
        drop(writer.write(1, vec![Bytes::from("ab")]));
        drop(writer);
        end.wait().await;
        assert_eq!(
            Arc::strong_count(&file),
            1,
            "the writer still holds the file"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b".ab.");
    }

    #[tokio::test]
    async fn a_failed_write_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("read-only");
        std::fs::write(&path, b"x").unwrap();
        let mut writer = PositionedWriter::new(FileWriter::start(open(&path, false)), 0, 2);
        let mut result = Ok(());
        for chunk in ["ab", "cd", "ef"] {
            result = writer.push(Bytes::from(chunk)).await;
            if result.is_err() {
                break;
            }
        }
        let error = match result {
            Err(error) => error,
            Ok(()) => writer.finish().await.unwrap_err(),
        };
        assert!(matches!(error.kind(), ErrorKind::Io), "{error:?}");
    }
}

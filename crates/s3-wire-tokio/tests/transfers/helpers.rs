//! Helpers of the managed-transfer tests: lowered part limits, every kind of upload source,
//! and a writer destination whose bytes are collected.

use std::path::Path;

use bytes::Bytes;
use s3_wire_tokio::s3_multipart_plan::PartLimits;
use s3_wire_tokio::{Destination, UploadSource};

/// S3's part limits with a minimum part size of `min_part_size`, so that multipart cases
/// move little data.
pub fn part_limits(min_part_size: u64) -> PartLimits {
    PartLimits::new(min_part_size, 5 << 30, 10_000, 5 << 40).expect("part limits")
}

/// The kinds of [`UploadSource`].
#[derive(Debug, Clone, Copy)]
pub enum SourceKind {
    File,
    Bytes,
    ReaderKnown,
    ReaderUnknown,
    StreamKnown,
    StreamUnknown,
}

impl SourceKind {
    pub const ALL: [SourceKind; 6] = [
        SourceKind::File,
        SourceKind::Bytes,
        SourceKind::ReaderKnown,
        SourceKind::ReaderUnknown,
        SourceKind::StreamKnown,
        SourceKind::StreamUnknown,
    ];

    /// A source of this kind over `bytes`: a file in `directory` named after `name` (slashes
    /// replaced), the bytes themselves, or a reader or a stream of `chunk`-byte pieces, of
    /// announced (`…Known`) or unknown length.
    pub fn source(self, bytes: &Bytes, directory: &Path, name: &str, chunk: usize) -> UploadSource {
        let len = Some(bytes.len() as u64);
        let chunks =
            || crate::support::Chunks(bytes.chunks(chunk).map(Bytes::copy_from_slice).collect());
        match self {
            SourceKind::File => {
                let path = directory.join(name.replace('/', "_"));
                std::fs::write(&path, bytes).unwrap();
                UploadSource::file(path)
            }
            SourceKind::Bytes => UploadSource::bytes(bytes.clone()),
            SourceKind::ReaderKnown => {
                UploadSource::reader(std::io::Cursor::new(bytes.clone()), len)
            }
            SourceKind::ReaderUnknown => {
                UploadSource::reader(std::io::Cursor::new(bytes.clone()), None)
            }
            SourceKind::StreamKnown => UploadSource::stream(chunks(), len),
            SourceKind::StreamUnknown => UploadSource::stream(chunks(), None),
        }
    }
}

/// A writer destination (an in-memory pipe of `capacity` bytes) and the task that collects
/// everything written to it until the download drops the writer.
pub fn collecting_writer(capacity: usize) -> (Destination, tokio::task::JoinHandle<Vec<u8>>) {
    let (writer, mut reader) = tokio::io::duplex(capacity);
    let collected = tokio::spawn(async move {
        let mut all = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut reader, &mut all)
            .await
            .expect("read the pipe");
        all
    });
    (Destination::writer(writer), collected)
}

//! What was verified end to end, and why not when nothing was: the answer every download
//! (a GetObject body, a managed download) and every managed upload or copy gives.

use std::fmt;

use s3_ops::{Checksum, ChecksumAlgorithm};

/// How the bytes of a transfer (or of one GetObject body) were checked end to end.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verification {
    /// The whole object's checksum was computed here and the other side agreed: for an
    /// upload or copy, the store accepted it and reported the same value; for a download,
    /// the bytes that arrived have the store's full-object checksum.
    FullObject(Checksum),
    /// Each part's checksum was checked against the store's value for that part (a
    /// multipart object with a composite checksum), and the composite value too.
    PerPart {
        /// The algorithm.
        algorithm: ChecksumAlgorithm,
        /// The parts checked.
        parts: u32,
    },
    /// Nothing end to end; the reason says why.
    NotVerified(NotVerified),
}

/// Why a transfer could not be verified end to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotVerified {
    /// Checksums were turned off for this transfer.
    Disabled,
    /// The store returned no checksum to compare with (for an upload: it did not confirm the
    /// value sent, although it may have checked it).
    StoreSentNone,
    /// The body is part of an object (a range or a part number): the object's checksum
    /// covers other bytes too.
    PartOfObject,
    /// The object has a composite (checksum-of-checksums) value, and its parts could not be
    /// fetched one by one to check them (non-uniform parts, or the store ignores
    /// `partNumber`).
    CompositeNotByParts,
}

impl fmt::Display for Verification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FullObject(checksum) => write!(
                f,
                "verified: full-object {} {}",
                checksum.algorithm(),
                checksum.to_base64()
            ),
            Self::PerPart { algorithm, parts } => {
                write!(f, "verified: {algorithm} of each of {parts} parts")
            }
            Self::NotVerified(why) => write!(f, "not verified: {why}"),
        }
    }
}

impl fmt::Display for NotVerified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Disabled => "checksums are off for this transfer",
            Self::StoreSentNone => "the store returned no checksum to compare with",
            Self::CompositeNotByParts => {
                "the object's composite checksum could not be checked part by part"
            }
            Self::PartOfObject => "the body is part of the object its checksum covers",
        })
    }
}

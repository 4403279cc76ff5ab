//! Resumable upload state: a versioned text snapshot and its reconciliation
//! with a `ListParts` answer.

use std::fmt::Write as _;

use crate::error::{Error, SnapshotError, SnapshotErrorKind};
use crate::options::PartLimits;
use crate::part::{Checksum, ChecksumAlgorithm, CompletedPart, ListedPart, same_etag};
use crate::plan::UploadPlan;

/// The first line of every snapshot, followed by a space and the version.
const HEADER: &str = "s3-multipart-snapshot";
/// The format version this crate writes and reads.
const VERSION: &str = "1";

/// The resumable state of a known-size multipart upload.
///
/// Take one with [`UploadScheduler::snapshot`](crate::UploadScheduler::snapshot)
/// after parts finish, store [`to_text`](Self::to_text), and after an
/// interruption [`parse`](Self::parse) it, [`reconcile`](Self::reconcile) it
/// with `ListParts` and continue with
/// [`UploadScheduler::resume`](crate::UploadScheduler::resume).
///
/// # Text form, version 1
///
/// UTF-8 lines separated by `\n`:
///
/// ```text
/// s3-multipart-snapshot 1
/// upload-id <value>
/// object-size <decimal bytes>
/// part-size <decimal bytes>
/// part <number> <size> <etag> [<ALGORITHM>=<value>]
/// end
/// ```
///
/// `part` lines are ascending by number and may be absent; the `end` line
/// detects a snapshot that was cut short. Values percent-encode `%`, space,
/// control characters and non-ASCII bytes (as UTF-8), so any upload id or
/// ETag round-trips. Algorithms are `CRC32`, `CRC32C`, `CRC64NVME`, `SHA1`,
/// `SHA256`. Readers reject unknown versions and keys rather than guess.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UploadSnapshot {
    upload_id: String,
    object_size: u64,
    part_size: u64,
    parts: Vec<CompletedPart>,
}

impl UploadSnapshot {
    /// A snapshot from its parts; `parts` should be ascending by number
    /// ([`UploadScheduler::resume`](crate::UploadScheduler::resume) checks
    /// them against the plan).
    pub fn new(
        upload_id: String,
        object_size: u64,
        part_size: u64,
        parts: Vec<CompletedPart>,
    ) -> Self {
        Self {
            upload_id,
            object_size,
            part_size,
            parts,
        }
    }

    /// The multipart upload id.
    pub fn upload_id(&self) -> &str {
        &self.upload_id
    }

    /// The object size in bytes.
    pub fn object_size(&self) -> u64 {
        self.object_size
    }

    /// The part size in bytes.
    pub fn part_size(&self) -> u64 {
        self.part_size
    }

    /// The parts the server has accepted, ascending.
    pub fn parts(&self) -> &[CompletedPart] {
        &self.parts
    }

    /// The plan these sizes describe, with every recorded part checked
    /// against it.
    pub(crate) fn plan(&self, limits: &PartLimits) -> Result<UploadPlan, Error> {
        let plan = UploadPlan::recorded(self.object_size, self.part_size, limits).map_err(|e| {
            SnapshotError {
                line: 0,
                kind: SnapshotErrorKind::Plan(Box::new(e)),
            }
        })?;
        let mut previous = 0;
        for part in &self.parts {
            if !fits_plan(&plan, part.number, part.size) {
                return Err(whole(SnapshotErrorKind::PartOutsidePlan {
                    number: part.number,
                }));
            }
            if part.number <= previous {
                return Err(whole(SnapshotErrorKind::PartsOutOfOrder {
                    number: part.number,
                }));
            }
            previous = part.number;
        }
        Ok(plan)
    }

    /// The stable text form (version 1, described on the type).
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(96 + self.parts.len() * 64);
        // Writing to a String cannot fail.
        let _ = writeln!(out, "{HEADER} {VERSION}");
        out.push_str("upload-id ");
        encode_into(&mut out, &self.upload_id);
        out.push('\n');
        let _ = writeln!(out, "object-size {}", self.object_size);
        let _ = writeln!(out, "part-size {}", self.part_size);
        for part in &self.parts {
            let _ = write!(out, "part {} {} ", part.number, part.size);
            encode_into(&mut out, &part.etag);
            if let Some(checksum) = &part.checksum {
                out.push(' ');
                out.push_str(checksum.algorithm.as_str());
                out.push('=');
                encode_into(&mut out, &checksum.value);
            }
            out.push('\n');
        }
        out.push_str("end\n");
        out
    }

    /// Parses the text form.
    ///
    /// # Errors
    ///
    /// [`Error::Snapshot`] naming the line and what was wrong: a missing or
    /// unknown header or version, unknown keys, duplicate or missing fields,
    /// bad numbers or encodings, parts out of order, or a missing `end`.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        match lines.next().and_then(|(_, l)| l.split_once(' ')) {
            Some((HEADER, VERSION)) => {}
            Some((HEADER, other)) => {
                return Err(at(
                    1,
                    SnapshotErrorKind::UnsupportedVersion(other.to_owned()),
                ));
            }
            _ => return Err(at(1, SnapshotErrorKind::MissingHeader)),
        }
        let mut upload_id = None;
        let mut object_size = None;
        let mut part_size = None;
        let mut parts: Vec<CompletedPart> = Vec::new();
        let mut ended = false;
        for (line_number, line) in lines.by_ref() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            let err = |kind| at(line_number, kind);
            match key {
                "end" if value.is_empty() => {
                    ended = true;
                    break;
                }
                "upload-id" => set_once(&mut upload_id, decode(value).map_err(err)?, "upload-id")
                    .map_err(err)?,
                "object-size" => {
                    set_once(&mut object_size, number(value).map_err(err)?, "object-size")
                        .map_err(err)?
                }
                "part-size" => set_once(&mut part_size, number(value).map_err(err)?, "part-size")
                    .map_err(err)?,
                "part" => {
                    let part = parse_part(value).map_err(err)?;
                    if parts.last().is_some_and(|p| p.number >= part.number) {
                        return Err(err(SnapshotErrorKind::PartsOutOfOrder {
                            number: part.number,
                        }));
                    }
                    parts.push(part);
                }
                _ => return Err(err(SnapshotErrorKind::UnknownKey(key.to_owned()))),
            }
        }
        if !ended {
            return Err(whole(SnapshotErrorKind::Truncated));
        }
        if let Some((line_number, _)) = lines.find(|(_, l)| !l.is_empty()) {
            return Err(at(line_number, SnapshotErrorKind::TrailingData));
        }
        let missing = |field| whole(SnapshotErrorKind::MissingField(field));
        Ok(Self {
            upload_id: upload_id.ok_or_else(|| missing("upload-id"))?,
            object_size: object_size.ok_or_else(|| missing("object-size"))?,
            part_size: part_size.ok_or_else(|| missing("part-size"))?,
            parts,
        })
    }

    /// Reconciles the snapshot with the server's `ListParts` answer for the
    /// same upload id, so an interrupted upload continues where the server
    /// actually is:
    ///
    /// - a recorded part the server lists with the same size and ETag is
    ///   **kept**;
    /// - a listed part the snapshot does not know, with the size the plan
    ///   expects, is **adopted** (it finished after the snapshot was written);
    /// - a recorded part the server does not list, or lists with another ETag
    ///   or size, is **uploaded again** (the record no longer describes the
    ///   server's part; a new upload overwrites it);
    /// - a listed part outside the plan is **ignored** (it is not named in
    ///   `Complete`, so it does not become part of the object).
    ///
    /// A `NoSuchUpload` answer to `ListParts` means the upload is gone: start
    /// a new one instead.
    ///
    /// # Errors
    ///
    /// [`Error::Snapshot`] when the snapshot itself does not fit `limits`
    /// (the same check as [`UploadScheduler::resume`](crate::UploadScheduler::resume)).
    pub fn reconcile(
        &self,
        listed: &[ListedPart],
        limits: &PartLimits,
    ) -> Result<Reconciliation, Error> {
        let plan = self.plan(limits)?;
        let mut listed: Vec<&ListedPart> = listed.iter().collect();
        listed.sort_by_key(|p| p.number);
        // A well-behaved server lists each number once; keep the first.
        listed.dedup_by_key(|p| p.number);
        let mut recorded = self.parts.iter().peekable();
        let mut result = Reconciliation {
            snapshot: Self::new(
                self.upload_id.clone(),
                self.object_size,
                self.part_size,
                Vec::new(),
            ),
            kept: Vec::new(),
            adopted: Vec::new(),
            reupload: Vec::new(),
            ignored: Vec::new(),
        };
        for server in listed {
            // Recorded parts below this listed number are not on the server.
            while let Some(mine) = recorded.next_if(|p| p.number < server.number) {
                result.reupload.push(mine.number);
            }
            let mine = recorded.next_if(|p| p.number == server.number);
            if !fits_plan(&plan, server.number, server.size) {
                result.ignored.push(server.number);
                result.reupload.extend(mine.map(|p| p.number));
                continue;
            }
            match mine {
                Some(mine) if mine.size == server.size && same_etag(&mine.etag, &server.etag) => {
                    result.kept.push(mine.number);
                    result.snapshot.parts.push(mine.clone());
                }
                Some(mine) => result.reupload.push(mine.number),
                None => {
                    result.adopted.push(server.number);
                    result.snapshot.parts.push(CompletedPart {
                        number: server.number,
                        size: server.size,
                        etag: server.etag.clone(),
                        checksum: server.checksum.clone(),
                    });
                }
            }
        }
        result.reupload.extend(recorded.map(|p| p.number));
        Ok(result)
    }
}

/// The result of [`UploadSnapshot::reconcile`]: the snapshot to resume from
/// and what changed, by part number (each list ascending).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconciliation {
    /// The parts both sides agree on, plus adopted ones: resume from this.
    pub snapshot: UploadSnapshot,
    /// Recorded parts the server confirms.
    pub kept: Vec<u32>,
    /// Listed parts the snapshot did not know, taken from the server.
    pub adopted: Vec<u32>,
    /// Recorded parts that will be uploaded again.
    pub reupload: Vec<u32>,
    /// Listed parts outside the plan, which the upload will not use.
    pub ignored: Vec<u32>,
}

fn fits_plan(plan: &UploadPlan, number: u32, size: u64) -> bool {
    plan.part_range(number)
        .is_some_and(|range| range.end - range.start == size)
}

fn at(line: usize, kind: SnapshotErrorKind) -> Error {
    SnapshotError { line, kind }.into()
}

fn whole(kind: SnapshotErrorKind) -> Error {
    at(0, kind)
}

fn set_once<T>(
    slot: &mut Option<T>,
    value: T,
    field: &'static str,
) -> Result<(), SnapshotErrorKind> {
    if slot.replace(value).is_some() {
        return Err(SnapshotErrorKind::DuplicateField(field));
    }
    Ok(())
}

fn number<T: std::str::FromStr>(text: &str) -> Result<T, SnapshotErrorKind> {
    // `FromStr` accepts a leading `+`; the format does not.
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SnapshotErrorKind::InvalidNumber(text.to_owned()));
    }
    text.parse()
        .map_err(|_| SnapshotErrorKind::InvalidNumber(text.to_owned()))
}

fn parse_part(fields: &str) -> Result<CompletedPart, SnapshotErrorKind> {
    let mut fields = fields.split(' ');
    let (Some(number_text), Some(size), Some(etag)) = (fields.next(), fields.next(), fields.next())
    else {
        return Err(SnapshotErrorKind::MalformedPart);
    };
    let mut part = CompletedPart {
        number: number(number_text)?,
        size: number(size)?,
        etag: decode(etag)?,
        checksum: None,
    };
    if let Some(field) = fields.next() {
        let (name, value) = field
            .split_once('=')
            .ok_or(SnapshotErrorKind::MalformedPart)?;
        let algorithm = ChecksumAlgorithm::from_name(name)
            .ok_or_else(|| SnapshotErrorKind::UnknownChecksumAlgorithm(name.to_owned()))?;
        part.checksum = Some(Checksum {
            algorithm,
            value: decode(value)?,
        });
    }
    if fields.next().is_some() {
        return Err(SnapshotErrorKind::MalformedPart);
    }
    Ok(part)
}

/// Whether a byte is written as itself: printable ASCII other than `%`.
fn is_plain(byte: u8) -> bool {
    byte.is_ascii_graphic() && byte != b'%'
}

/// Percent-encodes `%`, space, controls and non-ASCII; everything else
/// (including `"` of ETags and `=`/`+`/`/` of base64) stays readable.
fn encode_into(out: &mut String, value: &str) {
    // Copy runs of plain bytes at once. A run is ASCII, so both of its ends
    // are char boundaries.
    let mut run_start = 0;
    for (index, byte) in value.bytes().enumerate() {
        if is_plain(byte) {
            continue;
        }
        if run_start < index {
            out.push_str(&value[run_start..index]);
        }
        let _ = write!(out, "%{byte:02X}");
        run_start = index + 1;
    }
    if run_start < value.len() {
        out.push_str(&value[run_start..]);
    }
}

fn decode(text: &str) -> Result<String, SnapshotErrorKind> {
    // The common case (ETags, base64, AWS upload ids) needs no decoding.
    if text.bytes().all(is_plain) {
        return Ok(text.to_owned());
    }
    let invalid = || SnapshotErrorKind::InvalidEncoding(text.to_owned());
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let (&[high, low], tail) = tail.split_first_chunk().ok_or_else(invalid)?;
            let digit = |b: u8| char::from(b).to_digit(16).ok_or_else(invalid);
            // Both digits are below 16, so the value fits a byte.
            bytes.push((digit(high)? * 16 + digit(low)?) as u8);
            rest = tail;
        } else if byte.is_ascii_graphic() {
            bytes.push(byte);
            rest = tail;
        } else {
            return Err(invalid());
        }
    }
    String::from_utf8(bytes).map_err(|_| invalid())
}

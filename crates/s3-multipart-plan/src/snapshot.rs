//! Resumable upload state: a versioned text snapshot and its reconciliation
//! with a `ListParts` answer.

use std::fmt::Write as _;

use crate::error::{Error, SnapshotError, SnapshotErrorKind};
use crate::options::PartLimits;
use crate::part::{CompletedPart, PartReceipt};
use crate::plan::UploadPlan;

/// The first line of every snapshot, followed by a space and the version.
const HEADER: &str = "s3-multipart-snapshot";
/// The format version this crate writes and reads.
const VERSION: &str = "2";
/// How an empty receipt text is written, so a part line always has four
/// fields (a receipt text that is exactly `-` is written `%2D`).
const EMPTY_RECEIPT: &str = "-";

/// The resumable state of a known-size multipart upload, with the driver's
/// receipt `R` for every part the server accepted (see [`PartReceipt`]).
///
/// Take one with [`UploadScheduler::snapshot`](crate::UploadScheduler::snapshot)
/// after parts finish, store [`to_text`](Self::to_text), and after an
/// interruption [`parse`](Self::parse) it, [`reconcile`](Self::reconcile) it
/// with `ListParts` and continue with
/// [`UploadScheduler::resume`](crate::UploadScheduler::resume).
///
/// # Text form, version 2
///
/// UTF-8 lines separated by `\n` (a reader also accepts `\r\n`):
///
/// ```text
/// s3-multipart-snapshot 2
/// upload-id <value>
/// object-size <decimal bytes>
/// part-size <decimal bytes>
/// part <number> <size> <receipt>
/// end
/// ```
///
/// `part` lines are ascending by number and may be absent; the `end` line
/// detects a snapshot that was cut short. `<receipt>` is the part's
/// [`PartReceipt::to_snapshot_text`], read back with
/// [`PartReceipt::from_snapshot_text`]. Values percent-encode `%`, space,
/// control characters and non-ASCII bytes (as UTF-8), so any upload id or
/// receipt text round-trips; an empty receipt text is written `-` (and a
/// receipt text that is exactly `-` is written `%2D`), so a part line always
/// has four fields. Readers reject unknown versions (version 1, which had
/// the planner's own ETag and checksum fields, included) and keys rather
/// than guess.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UploadSnapshot<R> {
    upload_id: String,
    object_size: u64,
    part_size: u64,
    parts: Vec<CompletedPart<R>>,
}

impl<R> UploadSnapshot<R> {
    /// A snapshot from its parts; `parts` should be ascending by number
    /// ([`UploadScheduler::resume`](crate::UploadScheduler::resume) checks
    /// them against the plan).
    pub fn new(
        upload_id: String,
        object_size: u64,
        part_size: u64,
        parts: Vec<CompletedPart<R>>,
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
    pub fn parts(&self) -> &[CompletedPart<R>] {
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
}

impl<R: PartReceipt> UploadSnapshot<R> {
    /// The stable text form (version 2, described on the type).
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
            encode_receipt_into(&mut out, &part.receipt.to_snapshot_text());
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
    /// bad numbers or encodings, a receipt that
    /// [`PartReceipt::from_snapshot_text`] rejects
    /// ([`SnapshotErrorKind::InvalidReceipt`]), parts out of order, or a
    /// missing `end`.
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
        let mut parts: Vec<CompletedPart<R>> = Vec::new();
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
    /// - a recorded part the server lists with the same size, and whose
    ///   receipt [`PartReceipt::same_part`] says is the listed one, is
    ///   **kept**;
    /// - a listed part the snapshot does not know, with the size the plan
    ///   expects, is **adopted** with the listed receipt (it finished after
    ///   the snapshot was written);
    /// - a recorded part the server does not list, or lists with another
    ///   size or a receipt that is not the [`same_part`](PartReceipt::same_part),
    ///   is **uploaded again** (the record no longer describes the server's
    ///   part; a new upload overwrites it);
    /// - a listed part outside the plan is **ignored** (it is not named in
    ///   `Complete`, so it does not become part of the object).
    ///
    /// `listed` holds the driver's records of the `ListParts` entries: number,
    /// size and a receipt built from what the entry says (ETag, checksum).
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
        listed: &[CompletedPart<R>],
        limits: &PartLimits,
    ) -> Result<Reconciliation<R>, Error> {
        let plan = self.plan(limits)?;
        let mut listed: Vec<&CompletedPart<R>> = listed.iter().collect();
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
                Some(mine)
                    if mine.size == server.size && mine.receipt.same_part(&server.receipt) =>
                {
                    result.kept.push(mine.number);
                    result.snapshot.parts.push(mine.clone());
                }
                Some(mine) => result.reupload.push(mine.number),
                None => {
                    result.adopted.push(server.number);
                    result.snapshot.parts.push(server.clone());
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
pub struct Reconciliation<R> {
    /// The parts both sides agree on, plus adopted ones: resume from this.
    pub snapshot: UploadSnapshot<R>,
    /// Recorded parts the server confirms.
    pub kept: Vec<u32>,
    /// Listed parts the snapshot did not know, taken from the server with
    /// their listed receipts.
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

fn parse_part<R: PartReceipt>(fields: &str) -> Result<CompletedPart<R>, SnapshotErrorKind> {
    let mut fields = fields.split(' ');
    let (Some(number_text), Some(size), Some(receipt), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(SnapshotErrorKind::MalformedPart);
    };
    let (number, size) = (number(number_text)?, number(size)?);
    let text = match receipt {
        // An empty field is no receipt at all; the empty text is `-`.
        "" => return Err(SnapshotErrorKind::MalformedPart),
        EMPTY_RECEIPT => String::new(),
        encoded => decode(encoded)?,
    };
    let receipt = R::from_snapshot_text(&text).map_err(SnapshotErrorKind::InvalidReceipt)?;
    Ok(CompletedPart {
        number,
        size,
        receipt,
    })
}

/// Writes a receipt text as one non-empty field: percent-encoded, with the
/// empty text as `-` and the text `-` as `%2D`.
fn encode_receipt_into(out: &mut String, text: &str) {
    match text {
        "" => out.push_str(EMPTY_RECEIPT),
        EMPTY_RECEIPT => out.push_str("%2D"),
        text => encode_into(out, text),
    }
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

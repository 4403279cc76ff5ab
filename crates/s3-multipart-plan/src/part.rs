//! Records of uploaded parts: the driver's receipts.

use std::ops::Deref;
use std::sync::Arc;

/// What a driver records for a part the store accepted (its ETag, its checksum, ...).
/// The scheduler only stores receipts and hands them back in `Action::Complete`;
/// snapshots write them as text, and reconciliation asks whether a listed part is the recorded one.
///
/// The planner never interprets a receipt, so it has no ETag or checksum
/// types of its own: a driver uses its own (typically the ETag and checksum
/// types of its operation codec). [`String`] is a receipt holding the ETag
/// alone, enough for simple drivers.
///
/// ```
/// use s3_multipart_plan::PartReceipt;
///
/// /// An ETag and, when the upload uses one, the part's checksum.
/// #[derive(Debug, Clone, PartialEq)]
/// struct Receipt {
///     etag: String,
///     checksum: Option<String>,
/// }
///
/// impl PartReceipt for Receipt {
///     fn to_snapshot_text(&self) -> String {
///         match &self.checksum {
///             Some(checksum) => format!("{} {checksum}", self.etag),
///             None => self.etag.clone(),
///         }
///     }
///
///     fn from_snapshot_text(text: &str) -> Result<Self, String> {
///         let mut fields = text.split(' ');
///         let etag = fields.next().unwrap_or_default().to_owned();
///         let checksum = fields.next().map(str::to_owned);
///         if etag.is_empty() || fields.next().is_some() {
///             return Err(format!("expected `<etag> [<checksum>]`, found {text:?}"));
///         }
///         Ok(Self { etag, checksum })
///     }
///
///     fn same_part(&self, listed: &Self) -> bool {
///         // ETags may or may not be quoted; String's comparison knows that.
///         self.etag.same_part(&listed.etag) && self.checksum == listed.checksum
///     }
/// }
///
/// let receipt = Receipt { etag: "\"e1\"".into(), checksum: Some("yZRlqg==".into()) };
/// let text = receipt.to_snapshot_text();
/// assert_eq!(Receipt::from_snapshot_text(&text), Ok(receipt));
/// ```
pub trait PartReceipt: Clone {
    /// The receipt as text for a snapshot. Any string: the snapshot percent-encodes it.
    fn to_snapshot_text(&self) -> String;
    /// Reads what `to_snapshot_text` wrote; `Err` carries a human-readable reason.
    fn from_snapshot_text(text: &str) -> Result<Self, String>;
    /// Whether `listed` (built by the driver from a ListParts entry) records the same stored
    /// part as `self`. Reconciliation keeps a recorded part only when the sizes are equal and this is true.
    fn same_part(&self, listed: &Self) -> bool;
}

/// The receipt is the ETag, as the store returned it (usually quoted). Its
/// snapshot text is the string itself; [`same_part`](PartReceipt::same_part)
/// compares ETags the way S3 formats them: surrounding quotes are optional
/// (headers and XML differ in practice), the rest must match exactly.
impl PartReceipt for String {
    fn to_snapshot_text(&self) -> String {
        self.clone()
    }

    fn from_snapshot_text(text: &str) -> Result<Self, String> {
        Ok(text.to_owned())
    }

    fn same_part(&self, listed: &Self) -> bool {
        same_etag(self, listed)
    }
}

/// A part that the server has accepted: what `CompleteMultipartUpload` lists.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompletedPart<R> {
    /// The part number, 1-based.
    pub number: u32,
    /// The part's size in bytes.
    pub size: u64,
    /// What the driver recorded for the part (see [`PartReceipt`]).
    pub receipt: R,
}

/// The parts listed by `Complete`, ascending by number: a cheaply cloned,
/// shared list that reads as a slice (`parts.iter()`, `parts.len()`,
/// `&parts[..]`).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct CompletedParts<R>(Arc<Vec<CompletedPart<R>>>);

impl<R> CompletedParts<R> {
    /// The parts as a slice.
    pub fn as_slice(&self) -> &[CompletedPart<R>] {
        &self.0
    }
}

impl<R> Clone for CompletedParts<R> {
    /// Shares the list: no part or receipt is copied.
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<R> Default for CompletedParts<R> {
    fn default() -> Self {
        Self(Arc::default())
    }
}

impl<R> Deref for CompletedParts<R> {
    type Target = [CompletedPart<R>];

    fn deref(&self) -> &[CompletedPart<R>] {
        &self.0
    }
}

impl<R> From<Vec<CompletedPart<R>>> for CompletedParts<R> {
    /// Wraps parts that are already ascending by number.
    fn from(parts: Vec<CompletedPart<R>>) -> Self {
        Self(Arc::new(parts))
    }
}

impl<'a, R> IntoIterator for &'a CompletedParts<R> {
    type Item = &'a CompletedPart<R>;
    type IntoIter = std::slice::Iter<'a, CompletedPart<R>>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Compares ETags the way S3 formats them: surrounding quotes are optional
/// (headers and XML differ in practice), the rest must match exactly.
fn same_etag(a: &str, b: &str) -> bool {
    fn bare(s: &str) -> &str {
        s.strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(s)
    }
    bare(a) == bare(b)
}

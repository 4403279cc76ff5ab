//! Comparing an entry with the destination's (size, time, checksum), and the modification
//! time kept in an object's metadata.

use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use s3_ops::ops::head_object::HeadObject;
use s3_ops::{ChecksumAlgorithm, ChecksumType};

use super::outcome::{DirectoryEntry, SkipReason};
use super::plan::Spot;
use super::run::Shared;
use super::walk::located;
use super::{Compare, MTIME_METADATA};
use crate::error::Error;

/// `Some(reason)` if the destination is the same by the rule (skip the entry), `None` if
/// the entry must be transferred.
pub(super) async fn unchanged(
    shared: &Shared,
    source: &DirectoryEntry,
    existing: &DirectoryEntry,
    from: &Spot,
    to: &Spot,
) -> Result<Option<SkipReason>, Error> {
    let same_size = source.size == existing.size;
    let unchanged = |same: bool| same.then_some(SkipReason::Unchanged);
    Ok(match shared.compare {
        Compare::Always => None,
        Compare::Missing => Some(SkipReason::Exists),
        Compare::SizeOnly => unchanged(same_size),
        _ if !same_size => None,
        Compare::SizeAndTime => {
            let newer = newer_by_seconds(source.modified, existing.modified);
            match (from, to) {
                // An object newer than the file by LastModified may still carry the file's
                // own time in its metadata (the file was downloaded from it).
                (Spot::Object(..), Spot::File(_)) if newer => {
                    let head = head(shared, from).await?;
                    unchanged(
                        object_mtime(&head.metadata).is_some_and(|mtime| {
                            existing.modified.is_some_and(|file| mtime <= file)
                        }),
                    )
                }
                // An object's LastModified is at least its `mtime` metadata: a file not
                // newer than LastModified is not newer than the object.
                _ => unchanged(!newer),
            }
        }
        Compare::ExactTime => {
            let (source_time, existing_time) = match (from, to) {
                (Spot::File(_), Spot::Object(..)) => {
                    (source.modified, exact_time(shared, to, existing).await?)
                }
                (Spot::Object(..), Spot::File(_)) => {
                    (exact_time(shared, from, source).await?, existing.modified)
                }
                _ => (source.modified, existing.modified),
            };
            unchanged(same_time(source_time, existing_time))
        }
        Compare::Checksum(algorithm) => {
            let (a, b) = (
                content_checksum(shared, from, algorithm).await?,
                content_checksum(shared, to, algorithm).await?,
            );
            unchanged(matches!((a, b), (Some(a), Some(b)) if a == b))
        }
    })
}

/// Whether `a` is later than `b` by at least a whole second (object times have whole
/// seconds; an unknown time is never newer).
fn newer_by_seconds(a: Option<SystemTime>, b: Option<SystemTime>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => unix_seconds(a) > unix_seconds(b),
        (Some(_), None) => true,
        _ => false,
    }
}

/// Equal to the nanosecond when both have sub-second parts, else to the second.
fn same_time(a: Option<SystemTime>, b: Option<SystemTime>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            let whole = |t: SystemTime| {
                t.duration_since(UNIX_EPOCH)
                    .is_ok_and(|d| d.subsec_nanos() == 0)
            };
            if whole(a) || whole(b) {
                unix_seconds(a) == unix_seconds(b)
            } else {
                a == b
            }
        }
        _ => false,
    }
}

fn unix_seconds(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_secs() as i64,
        Err(before) => -(before.duration().as_secs_f64().ceil() as i64),
    }
}

async fn head(
    shared: &Shared,
    object: &Spot,
) -> Result<s3_ops::ops::head_object::ObjectHead, Error> {
    let Spot::Object(bucket, key) = object else {
        unreachable!("called for objects only")
    };
    let mut request = HeadObject::new(bucket.clone(), key.clone()).checksum_mode(true);
    if let Some(key) = &shared.sse_customer_key {
        request = request.sse_customer_key(key.clone());
    }
    shared.client.head_object(request).await
}

/// An object's modification time: its `mtime` metadata, else its LastModified.
async fn exact_time(
    shared: &Shared,
    object: &Spot,
    listed: &DirectoryEntry,
) -> Result<Option<SystemTime>, Error> {
    let head = head(shared, object).await?;
    Ok(object_mtime(&head.metadata).or(listed.modified))
}

/// A file's checksum of `algorithm` (the file read once), or an object's stored
/// full-object one (`None` if it has none, or a composite one).
async fn content_checksum(
    shared: &Shared,
    spot: &Spot,
    algorithm: ChecksumAlgorithm,
) -> Result<Option<String>, Error> {
    match spot {
        Spot::File(path) => {
            let path = path.clone();
            tokio::task::spawn_blocking(move || {
                use std::io::Read;
                let mut file = std::fs::File::open(&path).map_err(|e| located(&path, e))?;
                let mut summer = s3_ops::Checksummer::new(algorithm);
                let mut buffer = vec![0u8; 1 << 20];
                loop {
                    let n = file.read(&mut buffer).map_err(|e| located(&path, e))?;
                    if n == 0 {
                        return Ok(Some(summer.finish().to_base64()));
                    }
                    summer.update(&buffer[..n]);
                }
            })
            .await
            .map_err(|e| Error::io(io::Error::other(e)))?
        }
        Spot::Object(..) => {
            let head = head(shared, spot).await?;
            if head.checksums.checksum_type == Some(ChecksumType::Composite) {
                return Ok(None);
            }
            Ok(head
                .checksums
                .values
                .iter()
                .find(|(a, _)| *a == algorithm)
                .map(|(_, value)| value.clone()))
        }
    }
}

/// `mtime` metadata as rclone writes it: Unix seconds, optionally with up to nine decimals.
pub fn format_mtime(time: SystemTime) -> String {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => format!("{}.{:09}", after.as_secs(), after.subsec_nanos()),
        Err(_) => "0".to_owned(),
    }
}

/// The `mtime` metadata of an object, if it has a valid one.
pub fn object_mtime(metadata: &std::collections::BTreeMap<String, String>) -> Option<SystemTime> {
    parse_mtime(metadata.get(MTIME_METADATA)?)
}

fn parse_mtime(text: &str) -> Option<SystemTime> {
    let (seconds, fraction) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    let seconds: u64 = seconds.parse().ok()?;
    if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        // More digits than nanoseconds (a float printed in full): keep nine.
        let digits: String = fraction
            .chars()
            .take_while(char::is_ascii_digit)
            .take(9)
            .collect();
        return parse_mtime(&format!("{seconds}.{digits}"));
    }
    let nanos = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<9}").parse::<u32>().ok()?
    };
    UNIX_EPOCH.checked_add(Duration::new(seconds, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mtime_metadata_round_trips_to_the_nanosecond_and_reads_rclone_floats() {
        let time = UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789);
        assert_eq!(format_mtime(time), "1700000000.123456789");
        assert_eq!(parse_mtime(&format_mtime(time)), Some(time));
        assert_eq!(
            parse_mtime("1700000000"),
            Some(UNIX_EPOCH + Duration::from_secs(1_700_000_000))
        );
        assert_eq!(
            parse_mtime("1700000000.5"),
            Some(UNIX_EPOCH + Duration::new(1_700_000_000, 500_000_000))
        );
        assert_eq!(
            parse_mtime("1700000000.1234567891234"),
            Some(UNIX_EPOCH + Duration::new(1_700_000_000, 123_456_789))
        );
        assert_eq!(parse_mtime("soon"), None);
        assert_eq!(parse_mtime("-5"), None);
    }

    #[test]
    fn times_compare_to_the_second_unless_both_have_nanoseconds() {
        let at = |s, n| Some(UNIX_EPOCH + Duration::new(s, n));
        assert!(same_time(at(10, 0), at(10, 700)));
        assert!(!same_time(at(10, 5), at(10, 6)));
        assert!(same_time(at(10, 5), at(10, 5)));
        assert!(!same_time(at(10, 0), None));
        assert!(newer_by_seconds(at(11, 0), at(10, 999)));
        assert!(!newer_by_seconds(at(10, 999), at(10, 0)));
        assert!(!newer_by_seconds(None, at(10, 0)));
    }
}

//! RFC 3339 timestamps, validated, without a date-time library.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// An instant read from an RFC 3339 timestamp such as `2009-10-12T17:50:30.000Z`
/// or `2019-11-09T13:34:41+01:00`, stored as UTC seconds and nanoseconds since
/// the Unix epoch.
///
/// Accepted: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of one or more digits
/// (digits beyond nanoseconds are truncated), then `Z` or a `±HH:MM` offset;
/// `T` and `Z` may be lowercase. Years 0000–9999. Calendar fields are checked
/// (month lengths, leap years); a leap second `:60` is accepted and counted as
/// the first second of the next minute.
///
/// ```
/// let t: s3_xml::Timestamp = "2009-10-12T17:50:30.250Z".parse().unwrap();
/// assert_eq!(t.unix_seconds(), 1_255_369_830);
/// assert_eq!(t.subsec_nanos(), 250_000_000);
/// assert_eq!(t.to_string(), "2009-10-12T17:50:30.25Z");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    seconds: i64,
    nanos: u32,
}

/// Why a string is not an accepted RFC 3339 timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimestampError {
    /// The text does not have the `YYYY-MM-DDTHH:MM:SS[.f](Z|±HH:MM)` shape.
    Format,
    /// A field is outside its range (month 13, day 31 in April, hour 24, ...).
    OutOfRange(&'static str),
}

impl fmt::Display for TimestampError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Format => f.write_str("not an RFC 3339 timestamp (YYYY-MM-DDTHH:MM:SS[.fff]Z)"),
            Self::OutOfRange(field) => write!(f, "timestamp {field} out of range"),
        }
    }
}

impl std::error::Error for TimestampError {}

/// Smallest and largest seconds of years 0000 and 9999 (UTC).
const MIN_SECONDS: i64 = -62_167_219_200;
const MAX_SECONDS: i64 = 253_402_300_799;

impl Timestamp {
    /// Parses an RFC 3339 timestamp (see the type's documentation).
    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        let b = text.as_bytes();
        if b.len() < 20 {
            return Err(TimestampError::Format);
        }
        let year = digits(b, 0, 4)?;
        let month = digits(b, 5, 2)?;
        let day = digits(b, 8, 2)?;
        let hour = digits(b, 11, 2)?;
        let minute = digits(b, 14, 2)?;
        let second = digits(b, 17, 2)?;
        if b[4] != b'-'
            || b[7] != b'-'
            || !matches!(b[10], b'T' | b't')
            || b[13] != b':'
            || b[16] != b':'
        {
            return Err(TimestampError::Format);
        }
        if !(1..=12).contains(&month) {
            return Err(TimestampError::OutOfRange("month"));
        }
        if day == 0 || day > days_in_month(year, month) {
            return Err(TimestampError::OutOfRange("day"));
        }
        if hour > 23 {
            return Err(TimestampError::OutOfRange("hour"));
        }
        if minute > 59 {
            return Err(TimestampError::OutOfRange("minute"));
        }
        if second > 60 {
            return Err(TimestampError::OutOfRange("second"));
        }
        let mut i = 19;
        let mut nanos = 0u32;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while let Some(d) = b.get(i).filter(|d| d.is_ascii_digit()) {
                if i - start < 9 {
                    nanos = nanos * 10 + u32::from(d - b'0');
                }
                i += 1;
            }
            let count = i - start;
            if count == 0 {
                return Err(TimestampError::Format);
            }
            for _ in count..9 {
                nanos *= 10;
            }
        }
        let offset_seconds = match &b[i..] {
            [b'Z' | b'z'] => 0,
            [sign @ (b'+' | b'-'), rest @ ..] if rest.len() == 5 && rest[2] == b':' => {
                let oh = digits(rest, 0, 2)?;
                let om = digits(rest, 3, 2)?;
                if oh > 23 || om > 59 {
                    return Err(TimestampError::OutOfRange("offset"));
                }
                let off = i64::from(oh * 3600 + om * 60);
                if *sign == b'-' { -off } else { off }
            }
            _ => return Err(TimestampError::Format),
        };
        let days = days_from_civil(i64::from(year), month, day);
        let seconds =
            days * 86_400 + i64::from(hour * 3600 + minute * 60 + second) - offset_seconds;
        Self::from_unix(seconds, nanos).ok_or(TimestampError::OutOfRange("year"))
    }

    /// The instant `seconds` + `nanos` after the Unix epoch (UTC), or `None` if
    /// `nanos` ≥ 10⁹ or the instant is outside years 0000–9999.
    pub const fn from_unix(seconds: i64, nanos: u32) -> Option<Self> {
        if nanos >= 1_000_000_000 || seconds < MIN_SECONDS || seconds > MAX_SECONDS {
            return None;
        }
        Some(Self { seconds, nanos })
    }

    /// Whole seconds since the Unix epoch (negative before 1970).
    pub const fn unix_seconds(&self) -> i64 {
        self.seconds
    }

    /// Nanoseconds past [`Timestamp::unix_seconds`], in `0..1_000_000_000`.
    pub const fn subsec_nanos(&self) -> u32 {
        self.nanos
    }

    /// The same instant as a [`SystemTime`], or `None` if the platform's
    /// `SystemTime` cannot hold it (e.g. years before 1601 on Windows).
    pub fn to_system_time(&self) -> Option<SystemTime> {
        let whole = Duration::from_secs(self.seconds.unsigned_abs());
        let base = if self.seconds >= 0 {
            UNIX_EPOCH.checked_add(whole)
        } else {
            UNIX_EPOCH.checked_sub(whole)
        }?;
        base.checked_add(Duration::from_nanos(u64::from(self.nanos)))
    }

    /// The instant of a [`SystemTime`], or `None` outside years 0000–9999.
    pub fn from_system_time(time: SystemTime) -> Option<Self> {
        match time.duration_since(UNIX_EPOCH) {
            Ok(after) => {
                Self::from_unix(i64::try_from(after.as_secs()).ok()?, after.subsec_nanos())
            }
            Err(before) => {
                let before = before.duration();
                let secs = i64::try_from(before.as_secs()).ok()?;
                match before.subsec_nanos() {
                    0 => Self::from_unix(-secs, 0),
                    n => Self::from_unix(-secs - 1, 1_000_000_000 - n),
                }
            }
        }
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// RFC 3339 in UTC with `Z`; the fraction is printed only when non-zero,
/// without trailing zeros.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.seconds.div_euclid(86_400);
        let secs_of_day = self.seconds.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
            secs_of_day / 3600,
            secs_of_day / 60 % 60,
            secs_of_day % 60
        )?;
        if self.nanos != 0 {
            let mut fraction = self.nanos;
            let mut width = 9;
            while fraction.is_multiple_of(10) {
                fraction /= 10;
                width -= 1;
            }
            write!(f, ".{fraction:0width$}")?;
        }
        f.write_str("Z")
    }
}

fn digits(b: &[u8], at: usize, count: usize) -> Result<u32, TimestampError> {
    let field = b.get(at..at + count).ok_or(TimestampError::Format)?;
    field.iter().try_fold(0u32, |acc, &d| {
        if d.is_ascii_digit() {
            Ok(acc * 10 + u32::from(d - b'0'))
        } else {
            Err(TimestampError::Format)
        }
    })
}

fn is_leap(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_with_and_without_fraction_and_offsets() {
        let t = Timestamp::parse("2009-02-13T23:31:30Z").unwrap();
        assert_eq!((t.unix_seconds(), t.subsec_nanos()), (1_234_567_890, 0));
        let t = Timestamp::parse("2017-12-28T16:03:28.120Z").unwrap();
        assert_eq!(
            (t.unix_seconds(), t.subsec_nanos()),
            (1_514_477_008, 120_000_000)
        );
        let t = Timestamp::parse("2009-02-14T00:31:30.123456789+01:00").unwrap();
        assert_eq!(
            (t.unix_seconds(), t.subsec_nanos()),
            (1_234_567_890, 123_456_789)
        );
        let t = Timestamp::parse("2009-02-13t18:31:30.1234567891-05:00").unwrap();
        assert_eq!(
            (t.unix_seconds(), t.subsec_nanos()),
            (1_234_567_890, 123_456_789)
        );
        let t = Timestamp::parse("1969-12-31T23:59:59.5Z").unwrap();
        assert_eq!((t.unix_seconds(), t.subsec_nanos()), (-1, 500_000_000));
        assert_eq!(
            Timestamp::parse("0000-01-01T00:00:00Z")
                .unwrap()
                .unix_seconds(),
            MIN_SECONDS
        );
        assert_eq!(
            Timestamp::parse("9999-12-31T23:59:59Z")
                .unwrap()
                .unix_seconds(),
            MAX_SECONDS
        );
        assert_eq!(
            Timestamp::parse("2016-12-31T23:59:60Z")
                .unwrap()
                .unix_seconds(),
            1_483_228_800
        );
    }

    #[test]
    fn rejects_bad_shapes_and_ranges() {
        for bad in [
            "",
            "creationDate",
            "2009-10-12",
            "2009-10-12T17:50:30",
            "2009-10-12 17:50:30Z",
            "2009-10-12T17:50:30.Z",
            "2009-10-12T17:50:30+0100",
            "2009-10-12T17:50:30ZZ",
            "2009-1a-12T17:50:30Z",
            "+009-10-12T17:50:30Z",
        ] {
            assert_eq!(
                Timestamp::parse(bad),
                Err(TimestampError::Format),
                "{bad:?}"
            );
        }
        assert_eq!(
            Timestamp::parse("2009-13-12T17:50:30Z"),
            Err(TimestampError::OutOfRange("month"))
        );
        assert_eq!(
            Timestamp::parse("2009-02-29T17:50:30Z"),
            Err(TimestampError::OutOfRange("day"))
        );
        assert!(Timestamp::parse("2008-02-29T17:50:30Z").is_ok());
        assert_eq!(
            Timestamp::parse("1900-02-29T17:50:30Z"),
            Err(TimestampError::OutOfRange("day"))
        );
        assert_eq!(
            Timestamp::parse("2009-04-31T17:50:30Z"),
            Err(TimestampError::OutOfRange("day"))
        );
        assert_eq!(
            Timestamp::parse("2009-04-30T24:00:00Z"),
            Err(TimestampError::OutOfRange("hour"))
        );
        assert_eq!(
            Timestamp::parse("2009-04-30T23:60:00Z"),
            Err(TimestampError::OutOfRange("minute"))
        );
        assert_eq!(
            Timestamp::parse("2009-04-30T23:00:61Z"),
            Err(TimestampError::OutOfRange("second"))
        );
        assert_eq!(
            Timestamp::parse("2009-04-30T23:00:00+24:00"),
            Err(TimestampError::OutOfRange("offset"))
        );
        assert_eq!(
            Timestamp::parse("0000-01-01T00:00:00+00:01"),
            Err(TimestampError::OutOfRange("year"))
        );
    }

    #[test]
    fn system_time_and_display_round_trip() {
        for text in [
            "1970-01-01T00:00:00Z",
            "1969-07-20T20:17:40.5Z",
            "2024-02-29T12:00:00.000000001Z",
        ] {
            let t = Timestamp::parse(text).unwrap();
            assert_eq!(t.to_string(), text);
            let st = t.to_system_time().unwrap();
            assert_eq!(Timestamp::from_system_time(st), Some(t));
        }
        let st = UNIX_EPOCH + Duration::new(1_255_369_830, 7);
        let t = Timestamp::from_system_time(st).unwrap();
        assert_eq!((t.unix_seconds(), t.subsec_nanos()), (1_255_369_830, 7));
        assert_eq!(Timestamp::from_unix(0, 1_000_000_000), None);
        assert_eq!(Timestamp::from_unix(MAX_SECONDS + 1, 0), None);
    }

    /// Cross-check the calendar arithmetic against a day-by-day walk.
    #[test]
    fn days_from_civil_matches_a_day_by_day_walk() {
        let mut days = days_from_civil(1890, 1, 1);
        for year in 1890..2110u32 {
            for month in 1..=12 {
                for day in 1..=days_in_month(year, month) {
                    assert_eq!(days_from_civil(i64::from(year), month, day), days);
                    assert_eq!(
                        civil_from_days(days),
                        (i64::from(year), i64::from(month), i64::from(day))
                    );
                    days += 1;
                }
            }
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
    }
}

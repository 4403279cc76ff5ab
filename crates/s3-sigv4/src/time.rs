//! The signing time, supplied by the caller (this crate never reads a clock).

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Error, InvalidTime};

/// A UTC instant with one-second precision, pre-formatted as `x-amz-date`.
///
/// ```
/// use s3_sigv4::SigningTime;
/// let t = SigningTime::from_parts(2013, 5, 24, 0, 0, 0).unwrap();
/// assert_eq!(t.amz_date(), "20130524T000000Z");
/// assert_eq!(t.date(), "20130524");
/// assert_eq!(t, SigningTime::from_unix(1_369_353_600).unwrap());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SigningTime {
    unix_seconds: u64,
    amz_date: [u8; 16],
}

/// Seconds of 9999-12-31T23:59:59Z, the last instant with a four-digit year.
const MAX_UNIX_SECONDS: u64 = 253_402_300_799;

impl SigningTime {
    /// From seconds since 1970-01-01T00:00:00Z.
    pub fn from_unix(unix_seconds: u64) -> Result<Self, Error> {
        if unix_seconds > MAX_UNIX_SECONDS {
            return Err(Error::InvalidTime(InvalidTime::YearOutOfRange));
        }
        let days = unix_seconds / 86_400;
        let seconds_of_day = unix_seconds % 86_400;
        let (year, month, day) = civil_from_days(days);
        let mut amz_date = *b"00000000T000000Z";
        write_digits(&mut amz_date[0..4], year);
        write_digits(&mut amz_date[4..6], month);
        write_digits(&mut amz_date[6..8], day);
        write_digits(&mut amz_date[9..11], seconds_of_day / 3600);
        write_digits(&mut amz_date[11..13], seconds_of_day / 60 % 60);
        write_digits(&mut amz_date[13..15], seconds_of_day % 60);
        Ok(Self {
            unix_seconds,
            amz_date,
        })
    }

    /// From a `SystemTime` (sub-second precision is dropped).
    pub fn from_system_time(time: SystemTime) -> Result<Self, Error> {
        let since_epoch = time
            .duration_since(UNIX_EPOCH)
            .map_err(|_| Error::InvalidTime(InvalidTime::BeforeUnixEpoch))?;
        Self::from_unix(since_epoch.as_secs())
    }

    /// From calendar parts in UTC.
    pub fn from_parts(
        year: u32,
        month: u32,
        day: u32,
        hour: u32,
        minute: u32,
        second: u32,
    ) -> Result<Self, Error> {
        if year < 1970 {
            return Err(Error::InvalidTime(InvalidTime::BeforeUnixEpoch));
        }
        if year > 9999 {
            return Err(Error::InvalidTime(InvalidTime::YearOutOfRange));
        }
        if !(1..=12).contains(&month) {
            return Err(Error::InvalidTime(InvalidTime::InvalidComponent("month")));
        }
        if day == 0 || day > days_in_month(year, month) {
            return Err(Error::InvalidTime(InvalidTime::InvalidComponent("day")));
        }
        if hour > 23 {
            return Err(Error::InvalidTime(InvalidTime::InvalidComponent("hour")));
        }
        if minute > 59 {
            return Err(Error::InvalidTime(InvalidTime::InvalidComponent("minute")));
        }
        if second > 59 {
            return Err(Error::InvalidTime(InvalidTime::InvalidComponent("second")));
        }
        let days = days_from_civil(year, month, day);
        Self::from_unix(
            days * 86_400 + u64::from(hour) * 3600 + u64::from(minute) * 60 + u64::from(second),
        )
    }

    /// Parses the `x-amz-date` form `YYYYMMDDTHHMMSSZ`.
    pub fn parse_amz_date(text: &str) -> Result<Self, Error> {
        let bytes = text.as_bytes();
        let shape_ok = bytes.len() == 16
            && bytes[8] == b'T'
            && bytes[15] == b'Z'
            && bytes[..8].iter().all(u8::is_ascii_digit)
            && bytes[9..15].iter().all(u8::is_ascii_digit);
        if !shape_ok {
            return Err(Error::InvalidTime(InvalidTime::Unparsable));
        }
        let number = |range: std::ops::Range<usize>| {
            bytes[range]
                .iter()
                .fold(0u32, |acc, b| acc * 10 + u32::from(b - b'0'))
        };
        Self::from_parts(
            number(0..4),
            number(4..6),
            number(6..8),
            number(9..11),
            number(11..13),
            number(13..15),
        )
    }

    /// `YYYYMMDDTHHMMSSZ`, the value of `x-amz-date` / `X-Amz-Date`.
    pub fn amz_date(&self) -> &str {
        // Only ASCII digits, 'T' and 'Z' are ever written.
        std::str::from_utf8(&self.amz_date).unwrap_or("")
    }

    /// `YYYYMMDD`, the date part of the credential scope.
    pub fn date(&self) -> &str {
        self.amz_date().get(..8).unwrap_or("")
    }

    /// Seconds since the Unix epoch.
    pub fn unix_seconds(&self) -> u64 {
        self.unix_seconds
    }

    /// The same instant as a `SystemTime`.
    pub fn to_system_time(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.unix_seconds)
    }

    pub(crate) fn amz_date_bytes(&self) -> &[u8; 16] {
        &self.amz_date
    }

    /// `YYYYMMDD` as bytes (no UTF-8 check on the hot path).
    pub(crate) fn date_bytes(&self) -> &[u8] {
        &self.amz_date[..8]
    }
}

impl fmt::Debug for SigningTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SigningTime({})", self.amz_date())
    }
}

impl fmt::Display for SigningTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.amz_date())
    }
}

fn write_digits(out: &mut [u8], mut value: u64) {
    for slot in out.iter_mut().rev() {
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
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

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's algorithm,
/// restricted to years >= 1970 so everything stays unsigned).
fn days_from_civil(year: u32, month: u32, day: u32) -> u64 {
    let year = u64::from(if month <= 2 { year - 1 } else { year });
    let era = year / 400;
    let year_of_era = year - era * 400;
    let month = u64::from(month);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + u64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Inverse of [`days_from_civil`].
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_instants() {
        assert_eq!(
            SigningTime::from_unix(0).unwrap().amz_date(),
            "19700101T000000Z"
        );
        assert_eq!(
            SigningTime::from_unix(1_440_938_160).unwrap().amz_date(),
            "20150830T123600Z"
        );
        assert_eq!(
            SigningTime::from_unix(951_782_400).unwrap().amz_date(),
            "20000229T000000Z"
        );
        assert_eq!(
            SigningTime::from_unix(MAX_UNIX_SECONDS).unwrap().amz_date(),
            "99991231T235959Z"
        );
        assert_eq!(
            SigningTime::from_unix(MAX_UNIX_SECONDS + 1),
            Err(Error::InvalidTime(InvalidTime::YearOutOfRange))
        );
    }

    #[test]
    fn rejects_bad_parts() {
        assert_eq!(
            SigningTime::from_parts(2023, 2, 29, 0, 0, 0),
            Err(Error::InvalidTime(InvalidTime::InvalidComponent("day")))
        );
        assert_eq!(
            SigningTime::from_parts(1969, 12, 31, 0, 0, 0),
            Err(Error::InvalidTime(InvalidTime::BeforeUnixEpoch))
        );
        assert_eq!(
            SigningTime::from_system_time(UNIX_EPOCH - Duration::from_secs(1)),
            Err(Error::InvalidTime(InvalidTime::BeforeUnixEpoch))
        );
        assert_eq!(
            SigningTime::parse_amz_date("2013-05-24T00:00:00Z"),
            Err(Error::InvalidTime(InvalidTime::Unparsable))
        );
    }

    proptest! {
        #[test]
        fn parse_and_format_round_trip(seconds in 0..=MAX_UNIX_SECONDS) {
            let time = SigningTime::from_unix(seconds).unwrap();
            let parsed = SigningTime::parse_amz_date(time.amz_date()).unwrap();
            prop_assert_eq!(parsed, time);
            prop_assert_eq!(
                SigningTime::from_system_time(time.to_system_time()).unwrap(),
                time
            );
        }
    }
}

//! Internal entry points for the fuzz targets (`fuzzing` feature). Not a stable API.
//!
//! * [`retry_after_arbitrary`]: `Retry-After` of arbitrary response headers (part of the
//!   target `ops_response_headers`).
//!
//! The credential sources' entry points are s3-wire-credentials' (its `fuzzing` feature).

use std::time::{Duration, SystemTime};

/// Parses every `Retry-After` value of a response whose headers come from `data` (the
/// layout of `s3_ops::fuzzing::response_with_headers`), and `data` itself as one, the way
/// the client does. Panics only on a broken invariant: delay-seconds give that many
/// seconds; an HTTP-date gives the time from now to it (zero when past), and every date
/// the `httpdate` crate reads in the IMF-fixdate form is read the same.
pub fn retry_after_arbitrary(data: &[u8]) {
    // 2023-11-14T22:13:20Z.
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let response = s3_ops::fuzzing::response_with_headers(data);
    for value in response.headers().get_all(http::header::RETRY_AFTER) {
        if let Ok(value) = value.to_str() {
            check_retry_after(value, now);
        }
    }
    if let Ok(value) = std::str::from_utf8(data) {
        check_retry_after(value, now);
    }
}

fn check_retry_after(value: &str, now: SystemTime) {
    let delay = crate::retry::parse_retry_after(value, now);
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        assert_eq!(delay, Some(Duration::from_secs(seconds)));
        return;
    }
    let date = crate::retry::parse_http_date(value);
    assert_eq!(
        delay,
        date.map(|at| at.duration_since(now).unwrap_or(Duration::ZERO))
    );
    // The reference reads obsolete forms too; IMF-fixdate starts `Www, DD`.
    let imf_fixdate = value.as_bytes().get(3) == Some(&b',');
    if let Some(reference) = s3_ops::fuzzing::http_date_reference(value).filter(|_| imf_fixdate) {
        assert_eq!(date, Some(reference), "{value:?}");
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn retry_after_never_panics(value in prop_oneof![
            "[0-9]{1,22}",
            "(Mon|Sun), [0-9]{1,2} (Jan|Feb|Nov) [0-9]{1,20} [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2} GMT",
            "[ -~]{0,40}",
        ]) {
            super::retry_after_arbitrary(value.as_bytes());
            let mut header = vec![0, 6];
            header.extend_from_slice(value.as_bytes());
            super::retry_after_arbitrary(&header);
        }
    }

    #[test]
    fn retry_after_examples() {
        for value in [
            "120",
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Fri, 31 Dec 9999 23:59:59 GMT",
            "Sat, 01 Jan 10000 00:00:00 GMT",
            "Sun, 06 Nov 300000000000 08:49:37 GMT",
            "Sun, 06 Nov 9223372036854775807 08:49:37 GMT",
            "18446744073709551615",
        ] {
            super::retry_after_arbitrary(value.as_bytes());
        }
    }
}

//! Retry policy: exponential backoff with full jitter, a client-wide retry
//! budget (token bucket) and `Retry-After` parsing.
//!
//! The decision *whether* a failure is retryable is made by `s3-ops`
//! (`RetryClass`); this module decides *how long to wait* and *whether the
//! client can still afford* another attempt.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// How the client retries failed attempts.
///
/// The defaults follow the AWS SDKs' "standard" retry mode: 3 attempts, a
/// 100 ms base delay doubling up to 20 s with full jitter, and a budget of
/// 500 tokens where a retry costs 5 (10 after a timeout) and a success
/// returns 1.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RetryConfig {
    /// Total attempts per operation, including the first (1 disables retries).
    pub max_attempts: u32,
    /// Upper bound of the first backoff; doubled for each further attempt.
    pub base_delay: Duration,
    /// Upper bound of any backoff.
    pub max_delay: Duration,
    /// Capacity of the client-wide retry budget, in tokens.
    pub budget_capacity: u32,
    /// Tokens one retry takes from the budget.
    pub retry_cost: u32,
    /// Tokens one retry after a timeout or dropped connection takes.
    pub timeout_retry_cost: u32,
    /// Tokens a successful attempt gives back (up to the capacity).
    pub success_refund: u32,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(20),
            budget_capacity: 500,
            retry_cost: 5,
            timeout_retry_cost: 10,
            success_refund: 1,
        }
    }
}

impl RetryConfig {
    /// A policy that never retries.
    pub fn disabled() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Sets the total number of attempts (at least 1).
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// Sets the base and the maximum backoff delay.
    pub fn with_delays(mut self, base: Duration, max: Duration) -> Self {
        self.base_delay = base;
        self.max_delay = max.max(base);
        self
    }

    /// Sets the capacity of the client-wide retry budget.
    pub fn with_budget_capacity(mut self, tokens: u32) -> Self {
        self.budget_capacity = tokens;
        self
    }

    /// The full-jitter backoff before attempt `attempt + 1` (`attempt` ≥ 1 is
    /// the number of attempts made so far): uniform in
    /// `[0, min(max_delay, base_delay · 2^(attempt-1))]`. `unit` is a
    /// uniform random number in `[0, 1)`.
    pub fn backoff(&self, attempt: u32, unit: f64) -> Duration {
        let exponent = attempt.saturating_sub(1).min(30);
        let ceiling = self
            .base_delay
            .saturating_mul(1u32 << exponent)
            .min(self.max_delay);
        ceiling.mul_f64(unit.clamp(0.0, 1.0))
    }
}

/// Why a retry is being paid for; timeouts cost more (they tie up resources
/// for longer and often mean an overloaded path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RetryCost {
    Normal,
    Timeout,
}

/// The client-wide token bucket that bounds how many retries all tasks of a
/// client may make while the service keeps failing.
#[derive(Debug)]
pub(crate) struct RetryBudget {
    tokens: Mutex<u32>,
    capacity: u32,
    retry_cost: u32,
    timeout_retry_cost: u32,
    success_refund: u32,
}

impl RetryBudget {
    pub(crate) fn new(config: &RetryConfig) -> Self {
        Self {
            tokens: Mutex::new(config.budget_capacity),
            capacity: config.budget_capacity,
            retry_cost: config.retry_cost,
            timeout_retry_cost: config.timeout_retry_cost,
            success_refund: config.success_refund,
        }
    }

    /// Takes the cost of one retry; `None` when the budget is exhausted.
    /// The returned token count is handed back by [`Self::refund`] if the retry
    /// succeeds.
    pub(crate) fn try_acquire(&self, cost: RetryCost) -> Option<u32> {
        let cost = match cost {
            RetryCost::Normal => self.retry_cost,
            RetryCost::Timeout => self.timeout_retry_cost,
        };
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        if *tokens < cost {
            return None;
        }
        *tokens -= cost;
        Some(cost)
    }

    /// Records a successful attempt; `retry_tokens` are the tokens the
    /// operation's retries took (given back in full, as the AWS SDKs do),
    /// otherwise the success refund.
    pub(crate) fn on_success(&self, retry_tokens: u32) {
        let refund = if retry_tokens > 0 {
            retry_tokens
        } else {
            self.success_refund
        };
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        *tokens = tokens.saturating_add(refund).min(self.capacity);
    }

    /// Tokens currently available.
    #[cfg(test)]
    pub(crate) fn available(&self) -> u32 {
        *self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub(crate) use s3_wire_credentials::jitter::Jitter;

/// Parses a `Retry-After` header value: delay-seconds or an HTTP-date
/// (RFC 9110 §10.2.3), relative to `now`. A date in the past means "now".
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses the IMF-fixdate form of an HTTP-date, `Sun, 06 Nov 1994 08:49:37 GMT`,
/// the only form servers may send (RFC 9110 §5.6.7).
pub(crate) fn parse_http_date(value: &str) -> Option<SystemTime> {
    let mut fields = value.split_ascii_whitespace();
    let _weekday = fields.next()?.strip_suffix(',')?;
    let day: u32 = fields.next()?.parse().ok()?;
    let month = match fields.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = fields.next()?.parse().ok()?;
    let mut clock = fields.next()?.split(':');
    let hour: u64 = clock.next()?.parse().ok()?;
    let minute: u64 = clock.next()?.parse().ok()?;
    let second: u64 = clock.next()?.parse().ok()?;
    if fields.next()? != "GMT" || fields.next().is_some() {
        return None;
    }
    // IMF-fixdate years have four digits; a larger one would overflow the arithmetic
    // below and `SystemTime` (a hostile `Retry-After` must not panic the client).
    if !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
        || !(1970..=9999).contains(&year)
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = u64::try_from(days).ok()? * 86_400 + hour * 3600 + minute * 60 + second;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_bounded_by_exponential_ceiling() {
        let config = RetryConfig::default();
        assert_eq!(
            config.backoff(1, 0.999_999),
            Duration::from_millis(100).mul_f64(0.999_999)
        );
        assert_eq!(config.backoff(3, 0.5), Duration::from_millis(200));
        assert_eq!(config.backoff(2, 0.0), Duration::ZERO);
        // 100 ms · 2^29 is far above the 20 s cap.
        assert_eq!(config.backoff(30, 1.0), Duration::from_secs(20));
        assert_eq!(config.backoff(u32::MAX, 1.0), Duration::from_secs(20));
    }

    #[test]
    fn budget_runs_out_and_refills() {
        let config = RetryConfig::default().with_budget_capacity(12);
        let budget = RetryBudget::new(&config);
        assert_eq!(budget.try_acquire(RetryCost::Timeout), Some(10));
        assert_eq!(budget.try_acquire(RetryCost::Normal), None);
        assert_eq!(budget.available(), 2);
        budget.on_success(10);
        assert_eq!(budget.available(), 12);
        budget.on_success(0);
        assert_eq!(budget.available(), 12, "never above capacity");
        assert_eq!(budget.try_acquire(RetryCost::Normal), Some(5));
        budget.on_success(0);
        assert_eq!(budget.available(), 8);
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777); // 1994-11-06T08:49:37Z
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 UTC", now),
            None
        );
        assert_eq!(parse_retry_after("-5", now), None);
        // Found by the `ops_response_headers` fuzz target's proptest twin: years past
        // 9999 overflowed (a panic in the client's retry loop).
        for year in ["10000", "300000000000", "9223372036854775807"] {
            let value = format!("Sun, 06 Nov {year} 08:49:37 GMT");
            assert_eq!(parse_retry_after(&value, now), None, "{value}");
        }
        assert_eq!(
            parse_retry_after("Fri, 31 Dec 9999 23:59:59 GMT", now),
            Some(Duration::from_secs(253_402_300_799 - 784_111_777))
        );
    }

    #[test]
    fn http_date_matches_known_epochs() {
        assert_eq!(
            parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"),
            Some(SystemTime::UNIX_EPOCH)
        );
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2000 12:00:00 GMT"),
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(951_825_600))
        );
    }
}

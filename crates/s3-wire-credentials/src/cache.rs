//! Caching expiring credentials: refresh ahead of expiry, once for all callers, with a
//! grace period through outages of the source.
//!
//! The rules, for the credentials held and the clock's `now`:
//! * before their refresh time (expiry minus [`CacheSettings::refresh_ahead`], minus up to
//!   [`CacheSettings::jitter`] so that many clients do not refresh at one instant) they are
//!   served as they are;
//! * after it but before expiry, one caller refreshes; the others keep getting the held
//!   credentials meanwhile, without waiting;
//! * with none held, or expired, every caller waits for the one refresh in flight
//!   (single flight) and gets its result;
//! * when a refresh fails, credentials that have not expired are kept; expired ones are
//!   kept for [`CacheSettings::grace`] if the failure is transient (an IMDS outage, an STS
//!   5xx), otherwise the failure is returned. After a failure the next refresh waits
//!   [`CacheSettings::retry_interval`];
//! * credentials that arrive already expired (instance metadata does that during an outage,
//!   on purpose) do not replace valid ones held; with none held they are used, and the
//!   source is asked again after [`CacheSettings::retry_interval`], not at every call;
//! * [`CredentialsProvider::invalidate`] with the held credentials drops them.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use super::{Credentials, CredentialsFuture, CredentialsProvider, Error, ExpiringSource};
use crate::jitter::Jitter;

/// Where the cache reads the time from: [`SystemClock`] unless a test supplies another.
pub trait Clock: fmt::Debug + Send + Sync {
    /// The current wall-clock time.
    fn now(&self) -> SystemTime;
}

/// The system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// When a [`CachingProvider`] refreshes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheSettings {
    /// How long before expiry a refresh starts (default 5 minutes).
    pub refresh_ahead: Duration,
    /// Up to this much earlier still, chosen at random per refresh (default 1 minute).
    pub jitter: Duration,
    /// How long expired credentials are still served while the source fails transiently
    /// (default 5 minutes).
    pub grace: Duration,
    /// How long to wait after a failed refresh before the next one (default 10 seconds).
    pub retry_interval: Duration,
}

impl Default for CacheSettings {
    fn default() -> Self {
        Self {
            refresh_ahead: Duration::from_secs(5 * 60),
            jitter: Duration::from_secs(60),
            grace: Duration::from_secs(5 * 60),
            retry_interval: Duration::from_secs(10),
        }
    }
}

/// A [`CredentialsProvider`] over an [`ExpiringSource`]; see the [crate documentation](crate).
///
/// ```no_run
/// use s3_wire_credentials::{CachingProvider, CredentialsProvider, ImdsProvider};
///
/// # async fn run() -> Result<(), s3_wire_credentials::Error> {
/// // Refreshed ahead of expiry, once for every caller (an s3-wire client takes it as
/// // `ClientBuilder::credentials(provider)`).
/// let provider = CachingProvider::new(ImdsProvider::new());
/// let credentials = provider.credentials().await?;
/// # let _ = credentials;
/// # Ok(())
/// # }
/// ```
pub struct CachingProvider<S> {
    source: S,
    settings: CacheSettings,
    clock: Arc<dyn Clock>,
    jitter: Jitter,
    held: Mutex<Option<Held>>,
    /// Taken by the one caller that refreshes.
    refresh: tokio::sync::Mutex<()>,
}

#[derive(Clone)]
struct Held {
    credentials: Credentials,
    expiration: Option<SystemTime>,
    /// `None`: never (the credentials do not expire).
    refresh_at: Option<SystemTime>,
}

enum State {
    /// Serve these.
    Fresh(Credentials),
    /// Valid, but a refresh is due.
    Due(Credentials),
    /// Nothing usable: wait for a refresh.
    Missing,
}

impl<S: ExpiringSource> CachingProvider<S> {
    /// Caches `source` with the default settings and the system clock.
    pub fn new(source: S) -> Self {
        Self::with_settings(source, CacheSettings::default(), Arc::new(SystemClock))
    }

    /// Caches `source` with `settings`, reading the time from `clock`.
    pub fn with_settings(source: S, settings: CacheSettings, clock: Arc<dyn Clock>) -> Self {
        Self {
            source,
            settings,
            clock,
            jitter: Jitter::new(),
            held: Mutex::new(None),
            refresh: tokio::sync::Mutex::new(()),
        }
    }

    /// The source.
    pub fn source(&self) -> &S {
        &self.source
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Option<Held>> {
        // A poisoned lock only means a caller panicked while holding it; the slot is valid.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn state(&self, now: SystemTime) -> State {
        let held = self.held();
        let Some(held) = held.as_ref() else {
            return State::Missing;
        };
        match held.refresh_at {
            None => State::Fresh(held.credentials.clone()),
            Some(at) if now < at => State::Fresh(held.credentials.clone()),
            Some(_) if held.expiration.is_some_and(|expiry| now < expiry) => {
                State::Due(held.credentials.clone())
            }
            Some(_) => State::Missing,
        }
    }

    async fn get(&self) -> Result<Credentials, Error> {
        match self.state(self.clock.now()) {
            State::Fresh(credentials) => return Ok(credentials),
            State::Due(credentials) => {
                // One caller refreshes; the others sign with what is still valid.
                let Ok(_refreshing) = self.refresh.try_lock() else {
                    return Ok(credentials);
                };
                return self.refresh_now().await;
            }
            State::Missing => {}
        }
        let _refreshing = self.refresh.lock().await;
        // Whoever held the lock before may have refreshed already.
        if let State::Fresh(credentials) = self.state(self.clock.now()) {
            return Ok(credentials);
        }
        self.refresh_now().await
    }

    /// Fetches from the source; the caller holds the refresh lock.
    async fn refresh_now(&self) -> Result<Credentials, Error> {
        let fetched = self.source.fetch().await;
        let now = self.clock.now();
        match fetched {
            Ok(fresh) if fresh.expiration().is_some_and(|expiry| expiry <= now) => {
                // Already expired: instance metadata hands out its last credentials through
                // an outage on purpose (AWS's static stability). Valid ones held are kept;
                // otherwise these are used (the store decides) and asked again after the
                // retry interval, never at every call.
                let mut held = self.held();
                let retry_at = Some(now + self.settings.retry_interval);
                if let Some(held) = held
                    .as_mut()
                    .filter(|held| held.expiration.is_none_or(|expiry| now < expiry))
                {
                    held.refresh_at = retry_at;
                    return Ok(held.credentials.clone());
                }
                let credentials = fresh.credentials().clone();
                *held = Some(Held {
                    credentials: credentials.clone(),
                    expiration: fresh.expiration(),
                    refresh_at: retry_at,
                });
                Ok(credentials)
            }
            Ok(fresh) => {
                let expiration = fresh.expiration();
                let refresh_at = expiration.map(|expiry| self.refresh_time(now, expiry));
                let credentials = fresh.into_credentials();
                *self.held() = Some(Held {
                    credentials: credentials.clone(),
                    expiration,
                    refresh_at,
                });
                Ok(credentials)
            }
            Err(error) => {
                let mut held = self.held();
                let keep = held.as_mut().filter(|held| {
                    held.expiration.is_none_or(|expiry| {
                        now < expiry || (error.is_transient() && now < expiry + self.settings.grace)
                    })
                });
                match keep {
                    Some(held) => {
                        held.refresh_at = Some(now + self.settings.retry_interval);
                        Ok(held.credentials.clone())
                    }
                    None => Err(error),
                }
            }
        }
    }

    /// When to refresh credentials that expire at `expiry`: `refresh_ahead` plus a random
    /// part of `jitter` before it, but never in the first half of what is left (credentials
    /// that live less than `refresh_ahead` would otherwise be refreshed at every call).
    fn refresh_time(&self, now: SystemTime, expiry: SystemTime) -> SystemTime {
        let remaining = expiry.duration_since(now).unwrap_or_default();
        let early = self.settings.refresh_ahead + self.settings.jitter.mul_f64(self.jitter.unit());
        let ahead = early.min(remaining / 2);
        expiry - ahead
    }
}

impl<S: ExpiringSource> CachingProvider<S> {
    /// Drops the held credentials if their access key id is `access_key_id` (the store
    /// refused them as expired): the next call fetches new ones.
    pub fn invalidate_key(&self, access_key_id: &str) {
        let mut held = self.held();
        if held
            .as_ref()
            .is_some_and(|held| held.credentials.access_key_id() == access_key_id)
        {
            *held = None;
        }
    }
}

impl<S: ExpiringSource> CredentialsProvider for CachingProvider<S> {
    fn credentials(&self) -> CredentialsFuture<'_> {
        Box::pin(self.get())
    }

    fn use_http_settings(&self, settings: &super::HttpSettings) {
        self.source.use_http_settings(settings);
    }

    fn invalidate(&self, rejected: &Credentials) {
        let mut held = self.held();
        if held.as_ref().is_some_and(|held| {
            held.credentials.access_key_id() == rejected.access_key_id()
                && held.credentials.session_token() == rejected.session_token()
        }) {
            *held = None;
        }
    }
}

impl<S: fmt::Debug> fmt::Debug for CachingProvider<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachingProvider")
            .field("source", &self.source)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::super::{ExpiringCredentials, FetchFuture, Origin, SourceErrorKind};
    use super::*;

    /// Wall-clock time that follows tokio's (paused) clock.
    #[derive(Debug)]
    struct TokioClock {
        start: tokio::time::Instant,
        epoch: SystemTime,
    }

    impl TokioClock {
        fn new() -> Arc<Self> {
            Arc::new(Self {
                start: tokio::time::Instant::now(),
                epoch: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
            })
        }
    }

    impl Clock for TokioClock {
        fn now(&self) -> SystemTime {
            self.epoch + self.start.elapsed()
        }
    }

    /// Hands out `AKID<n>` valid for `lifetime` from the clock's now; fails while `failing`
    /// is non-zero (transiently if it is 1, for good if 2). Each fetch takes 100 ms.
    #[derive(Debug)]
    struct Source {
        clock: Arc<TokioClock>,
        lifetime: Duration,
        fetches: AtomicU32,
        failing: AtomicU32,
    }

    impl ExpiringSource for Source {
        fn fetch(&self) -> FetchFuture<'_> {
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let n = self.fetches.fetch_add(1, Ordering::SeqCst) + 1;
                match self.failing.load(Ordering::SeqCst) {
                    0 => Ok(ExpiringCredentials::new(
                        Credentials::new(format!("AKID{n}"), "secret", Some("token".into())),
                        Some(self.clock.now() + self.lifetime),
                    )),
                    1 => Err(Error::from_source(
                        Origin::InstanceMetadata,
                        SourceErrorKind::Timeout(Duration::from_secs(1)),
                    )),
                    _ => Err(Error::from_source(
                        Origin::InstanceMetadata,
                        SourceErrorKind::Status {
                            status: 404,
                            code: None,
                            message: None,
                            request_id: None,
                        },
                    )),
                }
            })
        }
    }

    fn cache(lifetime: Duration) -> Arc<CachingProvider<Source>> {
        let clock = TokioClock::new();
        let source = Source {
            clock: clock.clone(),
            lifetime,
            fetches: AtomicU32::new(0),
            failing: AtomicU32::new(0),
        };
        let settings = CacheSettings {
            jitter: Duration::ZERO,
            ..CacheSettings::default()
        };
        Arc::new(CachingProvider::with_settings(source, settings, clock))
    }

    async fn key(cache: &CachingProvider<Source>) -> String {
        cache
            .credentials()
            .await
            .unwrap()
            .access_key_id()
            .to_owned()
    }

    fn fetches(cache: &CachingProvider<Source>) -> u32 {
        cache.source().fetches.load(Ordering::SeqCst)
    }

    #[tokio::test(start_paused = true)]
    async fn refreshes_five_minutes_before_expiry_and_not_before() {
        let cache = cache(Duration::from_secs(3600));
        assert_eq!(key(&cache).await, "AKID1");
        tokio::time::advance(Duration::from_secs(3600 - 5 * 60 - 1)).await;
        assert_eq!(key(&cache).await, "AKID1");
        assert_eq!(fetches(&cache), 1);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(key(&cache).await, "AKID2");
        assert_eq!(fetches(&cache), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hundred_concurrent_callers_share_one_fetch() {
        let cache = cache(Duration::from_secs(3600));
        let callers: Vec<_> = (0..100)
            .map(|_| {
                let cache = cache.clone();
                tokio::spawn(async move { key(&cache).await })
            })
            .collect();
        for caller in callers {
            assert_eq!(caller.await.unwrap(), "AKID1");
        }
        assert_eq!(fetches(&cache), 1);

        // Due for refresh: one caller refreshes, the others are served at once.
        tokio::time::advance(Duration::from_secs(3600 - 60)).await;
        let callers: Vec<_> = (0..100)
            .map(|_| {
                let cache = cache.clone();
                tokio::spawn(async move { key(&cache).await })
            })
            .collect();
        let mut keys = Vec::new();
        for caller in callers {
            keys.push(caller.await.unwrap());
        }
        assert_eq!(fetches(&cache), 2);
        assert!(keys.iter().all(|k| k == "AKID1" || k == "AKID2"));
        assert_eq!(key(&cache).await, "AKID2");
    }

    #[tokio::test(start_paused = true)]
    async fn a_transient_outage_is_bridged_for_the_grace_period_only() {
        let cache = cache(Duration::from_secs(900));
        assert_eq!(key(&cache).await, "AKID1");
        cache.source().failing.store(1, Ordering::SeqCst);
        // Past expiry, inside the grace period: the old credentials, one fetch per interval.
        tokio::time::advance(Duration::from_secs(900 + 60)).await;
        assert_eq!(key(&cache).await, "AKID1");
        let after_first = fetches(&cache);
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(key(&cache).await, "AKID1");
        assert_eq!(
            fetches(&cache),
            after_first,
            "no refetch within the retry interval"
        );
        // Past the grace period: the failure is returned.
        tokio::time::advance(Duration::from_secs(5 * 60)).await;
        let error = cache.credentials().await.unwrap_err();
        assert!(error.is_transient(), "{error}");
        // The source recovers.
        cache.source().failing.store(0, Ordering::SeqCst);
        assert!(key(&cache).await.starts_with("AKID"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_lasting_failure_ends_at_expiry() {
        let cache = cache(Duration::from_secs(900));
        assert_eq!(key(&cache).await, "AKID1");
        cache.source().failing.store(2, Ordering::SeqCst);
        // Due but still valid: served.
        tokio::time::advance(Duration::from_secs(800)).await;
        assert_eq!(key(&cache).await, "AKID1");
        // Expired, and the failure is not transient: no grace.
        tokio::time::advance(Duration::from_secs(101)).await;
        assert!(!cache.credentials().await.unwrap_err().is_transient());
    }

    #[tokio::test(start_paused = true)]
    async fn invalidation_drops_only_the_rejected_credentials() {
        let cache = cache(Duration::from_secs(3600));
        let first = cache.credentials().await.unwrap();
        cache.invalidate(&Credentials::new("OTHER", "secret", Some("token".into())));
        assert_eq!(key(&cache).await, "AKID1");
        cache.invalidate(&first);
        assert_eq!(key(&cache).await, "AKID2");
        // A second caller reporting the same rejection does not drop the new ones.
        cache.invalidate(&first);
        assert_eq!(key(&cache).await, "AKID2");
        assert_eq!(fetches(&cache), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn credentials_that_arrive_expired_are_asked_again_after_the_retry_interval() {
        let cache = cache(Duration::ZERO);
        assert_eq!(key(&cache).await, "AKID1");
        tokio::time::advance(Duration::from_secs(5)).await;
        assert_eq!(key(&cache).await, "AKID1");
        assert_eq!(fetches(&cache), 1, "not at every call");
        tokio::time::advance(Duration::from_secs(6)).await;
        assert_eq!(key(&cache).await, "AKID2");
    }

    #[tokio::test(start_paused = true)]
    async fn short_lived_credentials_are_not_refetched_at_every_call() {
        let cache = cache(Duration::from_secs(120));
        assert_eq!(key(&cache).await, "AKID1");
        tokio::time::advance(Duration::from_secs(59)).await;
        assert_eq!(key(&cache).await, "AKID1");
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(key(&cache).await, "AKID2");
    }
}

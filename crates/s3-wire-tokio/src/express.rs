//! S3 Express One Zone session credentials: the client's CreateSession calls, one per
//! directory bucket, session mode and base credentials, cached like every other expiring
//! source ([`CachingProvider`]): refreshed a minute before their five minutes run out, once
//! for all concurrent requests.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use s3_ops::ops::create_session::{CreateSession, SessionMode};
use s3_ops::{BucketName, Operation};

use crate::credentials::{
    CacheSettings, CachingProvider, Credentials, CredentialsProvider, Error, ExpiringCredentials,
    ExpiringSource, FetchFuture, SystemClock,
};

/// At most this many sessions are kept (directory buckets × base credentials in use).
const MAX_SESSIONS: usize = 64;

/// One cached session per directory bucket and access key id of the credentials that
/// created it.
type Sessions = HashMap<(String, String), Arc<CachingProvider<SessionSource>>>;

/// What sends CreateSession: the client, which implements it (a session is created through
/// the client's own pipeline: its retries, timeouts and base credentials).
pub(crate) trait CreateSessions: Send + Sync + 'static {
    /// Sends `create` and decodes the answer.
    fn create_session(
        self: Arc<Self>,
        create: CreateSession,
    ) -> Pin<
        Box<dyn Future<Output = Result<<CreateSession as Operation>::Output, crate::Error>> + Send>,
    >;
}

/// The session caches of one client.
pub(crate) struct ExpressSessions {
    mode: SessionMode,
    /// By directory bucket and the access key id of the credentials that created it.
    sessions: Mutex<Sessions>,
}

impl ExpressSessions {
    pub(crate) fn new(mode: SessionMode) -> Self {
        Self {
            mode,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// The session credentials for `bucket`, created with `base` (the client's own
    /// credentials) when none are held or they are about to expire.
    pub(crate) async fn credentials(
        &self,
        client: &Arc<impl CreateSessions>,
        bucket: &str,
        base: &Credentials,
    ) -> Result<Credentials, Error> {
        let session = self.session(client, bucket, base)?;
        session.credentials().await
    }

    /// S3 refused `rejected` (a session of `bucket`) as expired: the next request creates a
    /// new session. (`rejected` is what signed, without its token: matched by key id.)
    pub(crate) fn invalidate_session(&self, bucket: &str, rejected: &Credentials) {
        for ((session_bucket, _), session) in self.lock().iter() {
            if session_bucket == bucket {
                session.invalidate_key(rejected.access_key_id());
            }
        }
    }

    fn session(
        &self,
        client: &Arc<impl CreateSessions>,
        bucket: &str,
        base: &Credentials,
    ) -> Result<Arc<CachingProvider<SessionSource>>, Error> {
        let key = (bucket.to_owned(), base.access_key_id().to_owned());
        let mut sessions = self.lock();
        if let Some(session) = sessions.get(&key) {
            return Ok(session.clone());
        }
        if sessions.len() >= MAX_SESSIONS {
            // Sessions of rotated credentials first; otherwise any (it is recreated on use).
            sessions.retain(|(_, access_key), _| access_key == base.access_key_id());
            if sessions.len() >= MAX_SESSIONS
                && let Some(victim) = sessions.keys().next().cloned()
            {
                sessions.remove(&victim);
            }
        }
        let bucket = BucketName::new(bucket).map_err(Error::provider)?;
        let mut settings = CacheSettings::default();
        settings.refresh_ahead = Duration::from_secs(60);
        settings.jitter = Duration::from_secs(10);
        settings.grace = Duration::ZERO;
        settings.retry_interval = Duration::from_secs(1);
        let source = SessionSource {
            client: Arc::downgrade(client) as Weak<dyn CreateSessions>,
            bucket,
            mode: self.mode,
        };
        let session = Arc::new(CachingProvider::with_settings(
            source,
            settings,
            Arc::new(SystemClock),
        ));
        sessions.insert(key, session.clone());
        Ok(session)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for ExpressSessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExpressSessions")
            .field("mode", &self.mode)
            .field("sessions", &self.lock().len())
            .finish()
    }
}

/// CreateSession for one directory bucket, sent through the client (its retries, timeouts
/// and base credentials). Holds the client weakly: the client owns its sessions.
struct SessionSource {
    client: Weak<dyn CreateSessions>,
    bucket: BucketName,
    mode: SessionMode,
}

impl fmt::Debug for SessionSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionSource")
            .field("bucket", &self.bucket)
            .field("mode", &self.mode)
            .finish()
    }
}

/// Why CreateSession failed.
#[derive(Debug)]
struct SessionFailed {
    bucket: String,
    error: crate::Error,
}

impl fmt::Display for SessionFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CreateSession for directory bucket {:?} failed: {}",
            self.bucket, self.error
        )
    }
}

impl std::error::Error for SessionFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl ExpiringSource for SessionSource {
    fn fetch(&self) -> FetchFuture<'_> {
        Box::pin(async move {
            let client = self
                .client
                .upgrade()
                .ok_or_else(|| Error::provider("the client was dropped"))?;
            let create = CreateSession::new(self.bucket.clone()).mode(self.mode);
            let answer = client.create_session(create).await.map_err(|error| {
                Error::provider(SessionFailed {
                    bucket: self.bucket.to_string(),
                    error,
                })
            })?;
            let issued = answer.result.credentials;
            let credentials = Credentials::new(
                issued.access_key_id,
                issued.secret_access_key,
                Some(issued.session_token),
            );
            Ok(ExpiringCredentials::new(
                credentials,
                issued.expiration.to_system_time(),
            ))
        })
    }
}

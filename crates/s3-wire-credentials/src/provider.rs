//! The provider traits: what the client signs with ([`CredentialsProvider`]), temporary
//! credentials and the sources that fetch them ([`ExpiringCredentials`], [`ExpiringSource`]).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

use crate::{Credentials, Error, HttpSettings};

/// The future returned by [`CredentialsProvider::credentials`].
pub type CredentialsFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Credentials, Error>> + Send + 'a>>;

/// A source of signing credentials.
///
/// The client asks for credentials before every attempt (each attempt is re-signed), so an
/// implementation should be cheap once warm: cache, and refresh before expiry.
///
/// ```
/// use s3_wire_credentials::{Credentials, CredentialsFuture, CredentialsProvider};
///
/// #[derive(Debug)]
/// struct FromVault;
///
/// impl CredentialsProvider for FromVault {
///     fn credentials(&self) -> CredentialsFuture<'_> {
///         Box::pin(async {
///             // … fetch from the vault here …
///             Ok(Credentials::new("AKIDEXAMPLE", "secret", None))
///         })
///     }
/// }
/// ```
pub trait CredentialsProvider: fmt::Debug + Send + Sync {
    /// Returns the credentials to sign the next request with.
    fn credentials(&self) -> CredentialsFuture<'_>;

    /// The store refused `rejected` as expired (`ExpiredToken`): a caching provider drops
    /// them, if they are still the ones it holds, so that the next
    /// [`credentials`](Self::credentials) call fetches new ones. The client then re-signs
    /// and retries once. The default does nothing.
    fn invalidate(&self, rejected: &Credentials) {
        let _ = rejected;
    }

    /// The client that signs with this provider uses `settings` (its CA bundle, client
    /// certificate and proxy): a provider that calls AWS itself (STS, SSO, the container
    /// endpoint) should use them too. Called once by
    /// s3-wire's `ClientBuilder::build`; the default does nothing.
    fn use_http_settings(&self, settings: &HttpSettings) {
        let _ = settings;
    }
}

/// Credentials with the instant they stop being valid (`None`: they do not expire).
/// `Debug` redacts the secret key and the session token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiringCredentials {
    credentials: Credentials,
    expiration: Option<SystemTime>,
}

impl ExpiringCredentials {
    /// Credentials valid until `expiration` (`None`: for ever).
    pub fn new(credentials: Credentials, expiration: Option<SystemTime>) -> Self {
        Self {
            credentials,
            expiration,
        }
    }

    /// The credentials.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// When they expire, if ever.
    pub fn expiration(&self) -> Option<SystemTime> {
        self.expiration
    }

    /// The credentials, dropping the expiration.
    pub fn into_credentials(self) -> Credentials {
        self.credentials
    }
}

/// The future returned by [`ExpiringSource::fetch`].
pub type FetchFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ExpiringCredentials, Error>> + Send + 'a>>;

/// A source of credentials that expire: each call fetches fresh ones (an STS call, a
/// process run, an HTTP request). Wrap it in a [`CachingProvider`](crate::CachingProvider) to sign with it.
pub trait ExpiringSource: fmt::Debug + Send + Sync {
    /// Fetches new credentials.
    fn fetch(&self) -> FetchFuture<'_>;

    /// See [`CredentialsProvider::use_http_settings`] (a [`CachingProvider`](crate::CachingProvider) passes it on).
    fn use_http_settings(&self, settings: &HttpSettings) {
        let _ = settings;
    }
}

impl<S: ExpiringSource + ?Sized> ExpiringSource for Arc<S> {
    fn fetch(&self) -> FetchFuture<'_> {
        (**self).fetch()
    }

    fn use_http_settings(&self, settings: &HttpSettings) {
        (**self).use_http_settings(settings);
    }
}

impl<S: ExpiringSource + ?Sized> ExpiringSource for Box<S> {
    fn fetch(&self) -> FetchFuture<'_> {
        (**self).fetch()
    }

    fn use_http_settings(&self, settings: &HttpSettings) {
        (**self).use_http_settings(settings);
    }
}

impl CredentialsProvider for Credentials {
    fn credentials(&self) -> CredentialsFuture<'_> {
        let credentials = self.clone();
        Box::pin(async move { Ok(credentials) })
    }
}

impl<P: CredentialsProvider + ?Sized> CredentialsProvider for Arc<P> {
    fn credentials(&self) -> CredentialsFuture<'_> {
        (**self).credentials()
    }

    fn invalidate(&self, rejected: &Credentials) {
        (**self).invalidate(rejected);
    }

    fn use_http_settings(&self, settings: &HttpSettings) {
        (**self).use_http_settings(settings);
    }
}

impl<P: CredentialsProvider + ?Sized> CredentialsProvider for Box<P> {
    fn credentials(&self) -> CredentialsFuture<'_> {
        (**self).credentials()
    }

    fn invalidate(&self, rejected: &Credentials) {
        (**self).invalidate(rejected);
    }

    fn use_http_settings(&self, settings: &HttpSettings) {
        (**self).use_http_settings(settings);
    }
}

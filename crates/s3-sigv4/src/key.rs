//! Signing-key derivation and its cache.
//!
//! The key is `HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service),
//! "aws4_request")`. Four HMACs per request would dominate signing cost, so the
//! derived key is cached per (secret, date, region, service) as an [`HmacKey`]
//! whose pad blocks are already hashed.

use std::sync::RwLock;

use crate::sha256::HmacKey;
pub(crate) use crate::sha256::hmac;
use crate::signer::Signature;

/// How many scopes the cache remembers; more than one client region or a day
/// boundary need a few, never many.
const CACHE_CAPACITY: usize = 8;

/// Derives the signing key of a scope.
pub(crate) fn derive_signing_key(
    secret: &str,
    date: &[u8],
    region: &str,
    service: &str,
) -> HmacKey {
    let mut secret_key = Vec::with_capacity(4 + secret.len());
    secret_key.extend_from_slice(b"AWS4");
    secret_key.extend_from_slice(secret.as_bytes());
    let date_key = hmac(&secret_key, date);
    let region_key = hmac(&date_key, region.as_bytes());
    let service_key = hmac(&region_key, service.as_bytes());
    let signing_key = hmac(&service_key, b"aws4_request");
    secret_key.fill(0);
    HmacKey::new(&signing_key)
}

/// What signs a string to sign: the HMAC key of a SigV4 scope, or the ECDSA
/// key of a SigV4a credential.
#[derive(Clone)]
pub(crate) enum ScopeKey {
    Hmac(HmacKey),
    #[cfg(feature = "sigv4a")]
    Ecdsa(std::sync::Arc<p256::ecdsa::SigningKey>),
}

impl ScopeKey {
    pub(crate) fn sign(&self, string_to_sign: &[u8]) -> Signature {
        match self {
            Self::Hmac(key) => Signature::from_hmac(key.mac(string_to_sign)),
            #[cfg(feature = "sigv4a")]
            Self::Ecdsa(key) => {
                Signature::from_der(crate::v4a::sign(key, string_to_sign).as_bytes())
            }
        }
    }
}

struct Entry {
    secret: Box<str>,
    date: [u8; 8],
    region: Box<str>,
    service: Box<str>,
    key: HmacKey,
}

/// A small FIFO cache of derived keys, shared by `&self` across threads: SigV4's keyed
/// HMAC states here, SigV4a's private keys in `v4a`.
pub(crate) struct FifoCache<E> {
    entries: RwLock<Vec<E>>,
    capacity: usize,
}

impl<E> FifoCache<E> {
    pub(crate) const fn new(capacity: usize) -> Self {
        Self {
            entries: RwLock::new(Vec::new()),
            capacity,
        }
    }

    /// `value` of the entry `matches` accepts; otherwise `make` derives a new entry, kept
    /// among the most recent `capacity` (unless another thread added one meanwhile).
    pub(crate) fn get_or_insert<T, Err>(
        &self,
        matches: impl Fn(&E) -> bool,
        value: impl Fn(&E) -> T,
        make: impl FnOnce() -> Result<E, Err>,
    ) -> Result<T, Err> {
        // A poisoned lock only means another thread panicked mid-insert; the
        // vector is still valid, so keep using it.
        {
            let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
            if let Some(entry) = entries.iter().find(|e| matches(e)) {
                return Ok(value(entry));
            }
        }
        let entry = make()?;
        let found = value(&entry);
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        if !entries.iter().any(matches) {
            if entries.len() >= self.capacity {
                entries.remove(0);
            }
            entries.push(entry);
        }
        Ok(found)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.read().map(|e| e.len()).unwrap_or(0)
    }
}

/// The HMAC keys of the most recent SigV4 scopes.
pub(crate) struct KeyCache(FifoCache<Entry>);

impl Default for KeyCache {
    fn default() -> Self {
        Self(FifoCache::new(CACHE_CAPACITY))
    }
}

impl KeyCache {
    /// The HMAC key for this scope, derived at most once per scope while it
    /// stays among the most recent [`CACHE_CAPACITY`] scopes.
    pub(crate) fn signing_key(
        &self,
        secret: &str,
        date: &[u8],
        region: &str,
        service: &str,
    ) -> HmacKey {
        let date_bytes: [u8; 8] = match date.try_into() {
            Ok(bytes) => bytes,
            Err(_) => return derive_signing_key(secret, date, region, service),
        };
        let found = self.0.get_or_insert(
            |entry| {
                entry.date == date_bytes
                    && *entry.region == *region
                    && *entry.service == *service
                    && *entry.secret == *secret
            },
            |entry| entry.key,
            || {
                Ok::<_, std::convert::Infallible>(Entry {
                    secret: secret.into(),
                    date: date_bytes,
                    region: region.into(),
                    service: service.into(),
                    key: derive_signing_key(secret, date, region, service),
                })
            },
        );
        match found {
            Ok(key) => key,
            Err(never) => match never {},
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::hex32;

    /// The signing key of the AWS documentation example (derive-signing-key page).
    #[test]
    fn derived_key_matches_aws_documentation() {
        let mut secret_key = b"AWS4".to_vec();
        secret_key.extend_from_slice(b"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
        let date_key = hmac(&secret_key, b"20120215");
        let region_key = hmac(&date_key, b"us-east-1");
        let service_key = hmac(&region_key, b"iam");
        let signing_key = hmac(&service_key, b"aws4_request");
        assert_eq!(
            std::str::from_utf8(&hex32(&signing_key)).unwrap(),
            "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"
        );
    }

    #[test]
    fn cache_reuses_and_evicts() {
        let cache = KeyCache::default();
        let first = cache.signing_key("s", b"20130524", "us-east-1", "s3");
        let again = cache.signing_key("s", b"20130524", "us-east-1", "s3");
        assert_eq!(cache.len(), 1);
        assert_eq!(first.mac(b"x"), again.mac(b"x"));
        for day in 0..20 {
            cache.signing_key("s", format!("201305{day:02}").as_bytes(), "us-east-1", "s3");
        }
        assert_eq!(cache.len(), CACHE_CAPACITY);
        let other_secret = cache.signing_key("t", b"20130524", "us-east-1", "s3");
        let fresh = derive_signing_key("t", b"20130524", "us-east-1", "s3");
        assert_eq!(other_secret.mac(b"x"), fresh.mac(b"x"));
    }
}

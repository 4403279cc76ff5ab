//! Signing-key derivation and its cache.
//!
//! The key is `HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service),
//! "aws4_request")`. Four HMACs per request would dominate signing cost, so the
//! derived key is cached per (secret, date, region, service), already loaded
//! into a keyed HMAC state that each signature clones.

use std::sync::RwLock;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::signer::Signature;

pub(crate) type HmacSha256 = Hmac<Sha256>;

/// How many scopes the cache remembers; more than one client region or a day
/// boundary need a few, never many.
const CACHE_CAPACITY: usize = 8;

pub(crate) fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = keyed(key);
    mac.update(data);
    mac.finalize().into_bytes().into()
}

pub(crate) fn keyed(key: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length; the error type is uninhabited in practice.
    match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC takes keys of every length"),
    }
}

/// Derives the signing key and returns an HMAC state keyed with it.
pub(crate) fn derive_signing_mac(
    secret: &str,
    date: &[u8],
    region: &str,
    service: &str,
) -> HmacSha256 {
    let mut secret_key = Vec::with_capacity(4 + secret.len());
    secret_key.extend_from_slice(b"AWS4");
    secret_key.extend_from_slice(secret.as_bytes());
    let date_key = hmac(&secret_key, date);
    let region_key = hmac(&date_key, region.as_bytes());
    let service_key = hmac(&region_key, service.as_bytes());
    let signing_key = hmac(&service_key, b"aws4_request");
    keyed(&signing_key)
}

/// What signs a string to sign: the keyed HMAC of a SigV4 scope, or the ECDSA
/// key of a SigV4a credential.
#[derive(Clone)]
pub(crate) enum ScopeKey {
    Hmac(HmacSha256),
    #[cfg(feature = "sigv4a")]
    Ecdsa(std::sync::Arc<p256::ecdsa::SigningKey>),
}

impl ScopeKey {
    /// Consumes the key: a keyed HMAC state is spent by one signature, so a request's
    /// signature takes the cache's copy as it is, and a chunk encoder clones its own.
    pub(crate) fn sign(self, string_to_sign: &[u8]) -> Signature {
        match self {
            Self::Hmac(mut mac) => {
                mac.update(string_to_sign);
                Signature::from_mac(mac)
            }
            #[cfg(feature = "sigv4a")]
            Self::Ecdsa(key) => {
                Signature::from_der(crate::v4a::sign(&key, string_to_sign).as_bytes())
            }
        }
    }
}

struct Entry {
    secret: Box<str>,
    date: [u8; 8],
    region: Box<str>,
    service: Box<str>,
    mac: HmacSha256,
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

/// The keyed HMAC states of the most recent SigV4 scopes.
pub(crate) struct KeyCache(FifoCache<Entry>);

impl Default for KeyCache {
    fn default() -> Self {
        Self(FifoCache::new(CACHE_CAPACITY))
    }
}

impl KeyCache {
    /// The keyed HMAC for this scope, derived at most once per scope while it
    /// stays among the most recent [`CACHE_CAPACITY`] scopes.
    pub(crate) fn signing_mac(
        &self,
        secret: &str,
        date: &[u8],
        region: &str,
        service: &str,
    ) -> HmacSha256 {
        let date_bytes: [u8; 8] = match date.try_into() {
            Ok(bytes) => bytes,
            Err(_) => return derive_signing_mac(secret, date, region, service),
        };
        let found = self.0.get_or_insert(
            |entry| {
                entry.date == date_bytes
                    && *entry.region == *region
                    && *entry.service == *service
                    && *entry.secret == *secret
            },
            |entry| entry.mac.clone(),
            || {
                Ok::<_, std::convert::Infallible>(Entry {
                    secret: secret.into(),
                    date: date_bytes,
                    region: region.into(),
                    service: service.into(),
                    mac: derive_signing_mac(secret, date, region, service),
                })
            },
        );
        match found {
            Ok(mac) => mac,
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
        let first = cache.signing_mac("s", b"20130524", "us-east-1", "s3");
        let again = cache.signing_mac("s", b"20130524", "us-east-1", "s3");
        assert_eq!(cache.len(), 1);
        assert_eq!(
            first.chain_update(b"x").finalize().into_bytes(),
            again.chain_update(b"x").finalize().into_bytes()
        );
        for day in 0..20 {
            cache.signing_mac("s", format!("201305{day:02}").as_bytes(), "us-east-1", "s3");
        }
        assert_eq!(cache.len(), CACHE_CAPACITY);
        let other_secret = cache.signing_mac("t", b"20130524", "us-east-1", "s3");
        let fresh = derive_signing_mac("t", b"20130524", "us-east-1", "s3");
        assert_eq!(
            other_secret.chain_update(b"x").finalize().into_bytes(),
            fresh.chain_update(b"x").finalize().into_bytes()
        );
    }
}

//! SigV4a keys: the ECDSA P-256 private key derived from the secret, and its cache.
//!
//! The key depends on the access key id and the secret only (not on the date,
//! region or service), so one derivation serves a credential for its lifetime.
//! Derivation is NIST SP 800-108 HMAC-SHA256 in counter mode with the label
//! `AWS4-ECDSA-P256-SHA256` and the context `access key id || counter`; the
//! first candidate `k0 <= n - 2` gives the private scalar `k0 + 1`.
//! Signatures are deterministic (RFC 6979), so signing needs no randomness.

use std::sync::Arc;

use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{DerSignature, SigningKey};

use crate::error::InvalidParameter;
use crate::key::FifoCache;
use crate::sha256::HmacKey;

/// The KDF label: the algorithm name.
const LABEL: &[u8] = b"AWS4-ECDSA-P256-SHA256";

/// The order of P-256 minus two, big-endian: the largest acceptable `k0`.
const N_MINUS_2: [u8; 32] = [
    0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x4F,
];

/// How many credentials the cache remembers (a client has one at a time;
/// refreshes replace it).
const CACHE_CAPACITY: usize = 4;

/// Derives the SigV4a private key of a credential.
pub(crate) fn derive_key(
    access_key_id: &str,
    secret_access_key: &str,
) -> Result<SigningKey, InvalidParameter> {
    let mut input_key = Vec::with_capacity(5 + secret_access_key.len());
    input_key.extend_from_slice(b"AWS4A");
    input_key.extend_from_slice(secret_access_key.as_bytes());
    let keyed_input = HmacKey::new(&input_key);
    input_key.fill(0);
    // One block of counter mode: i || label || 0x00 || context || counter || L (bits).
    let mut message = Vec::with_capacity(4 + LABEL.len() + 1 + access_key_id.len() + 1 + 4);
    message.extend_from_slice(&1u32.to_be_bytes());
    message.extend_from_slice(LABEL);
    message.push(0);
    message.extend_from_slice(access_key_id.as_bytes());
    let counter_at = message.len();
    message.push(0);
    message.extend_from_slice(&256u32.to_be_bytes());
    for counter in 1..=u8::MAX {
        message[counter_at] = counter;
        let candidate = keyed_input.mac(&message);
        // Equal-length big-endian byte strings order like the numbers.
        if candidate <= N_MINUS_2 {
            let scalar = plus_one(candidate);
            return SigningKey::from_bytes(&scalar.into())
                .map_err(|_| InvalidParameter::SecretAccessKey);
        }
    }
    // Each candidate fails with probability about 2^-32: never in practice.
    Err(InvalidParameter::SecretAccessKey)
}

/// `value + 1` for a big-endian number below the maximum.
fn plus_one(mut value: [u8; 32]) -> [u8; 32] {
    for byte in value.iter_mut().rev() {
        let (sum, carry) = byte.overflowing_add(1);
        *byte = sum;
        if !carry {
            break;
        }
    }
    value
}

/// Signs `string_to_sign` (ECDSA over its SHA-256), DER-encoded.
pub(crate) fn sign(key: &SigningKey, string_to_sign: &[u8]) -> DerSignature {
    key.sign(string_to_sign)
}

struct Entry {
    access_key_id: Box<str>,
    secret: Box<str>,
    key: Arc<SigningKey>,
}

/// The derived keys of the most recent credentials.
pub(crate) struct KeyCache(FifoCache<Entry>);

impl Default for KeyCache {
    fn default() -> Self {
        Self(FifoCache::new(CACHE_CAPACITY))
    }
}

impl KeyCache {
    /// The key of this credential, derived at most once while it stays among
    /// the most recent [`CACHE_CAPACITY`] credentials.
    pub(crate) fn key(
        &self,
        access_key_id: &str,
        secret: &str,
    ) -> Result<Arc<SigningKey>, InvalidParameter> {
        self.0.get_or_insert(
            |entry| *entry.access_key_id == *access_key_id && *entry.secret == *secret,
            |entry| Arc::clone(&entry.key),
            || {
                Ok(Entry {
                    access_key_id: access_key_id.into(),
                    secret: secret.into(),
                    key: Arc::new(derive_key(access_key_id, secret)?),
                })
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plus_one_carries() {
        let mut value = [0u8; 32];
        value[31] = 0xFF;
        value[30] = 0xFF;
        let next = plus_one(value);
        assert_eq!(next[29..], [1, 0, 0]);
        assert_eq!(plus_one([0; 32])[31], 1);
    }

    #[test]
    fn the_bound_is_the_curve_order_minus_two() {
        // n = FFFFFFFF 00000000 FFFFFFFF FFFFFFFF BCE6FAAD A7179E84 F3B9CAC2 FC632551
        let mut n = N_MINUS_2;
        n = plus_one(plus_one(n));
        assert_eq!(
            n[24..],
            [0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51],
            "n - 2 + 2 must be the order"
        );
        // n - 1 is a valid scalar, n is not.
        assert!(SigningKey::from_bytes(&plus_one(N_MINUS_2).into()).is_ok());
        assert!(SigningKey::from_bytes(&n.into()).is_err());
    }

    #[test]
    fn the_cache_derives_once_per_credential() {
        let cache = KeyCache::default();
        let first = cache.key("AKID", "secret").unwrap();
        let again = cache.key("AKID", "secret").unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let other = cache.key("AKID", "other secret").unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        assert_ne!(first.to_bytes(), other.to_bytes());
        for index in 0..CACHE_CAPACITY {
            cache.key(&format!("AKID{index}"), "secret").unwrap();
        }
        assert_eq!(cache.0.len(), CACHE_CAPACITY);
    }
}

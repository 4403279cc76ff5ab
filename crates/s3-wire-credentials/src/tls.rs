//! PEM certificates and keys, as clients take them: CA bundles and client identities,
//! checked when the client is built with errors that name what was wrong (never a key), and
//! what the process keeps of them for the next client (`RecentlyBuilt`).

use std::sync::{Mutex, PoisonError};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::transport::BuildError;

/// Every certificate of the PEM bundle `pem`; `origin` names it in errors. A bundle with no
/// certificate, or one that is not PEM, is an error: trusting nothing by mistake would make
/// every connection fail later, with a less helpful message.
///
/// A bundle is decoded once per process (PEM's base64 costs about 20 instructions a byte,
/// and every client built from `AWS_CA_BUNDLE` reads the same file).
pub fn certificates(pem: &[u8], origin: &str) -> Result<Vec<CertificateDer<'static>>, BuildError> {
    static DECODED: RecentlyBuilt<Vec<u8>, Vec<CertificateDer<'static>>> = RecentlyBuilt::new();
    DECODED.get_or_build(
        |decoded| decoded == pem,
        || {
            let certificates = CertificateDer::pem_slice_iter(pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| {
                    BuildError::new(format!("{origin} is not a PEM certificate bundle: {e}"))
                })?;
            if certificates.is_empty() {
                return Err(BuildError::new(format!(
                    "{origin} holds no certificate (expected -----BEGIN CERTIFICATE----- blocks)"
                )));
            }
            Ok((pem.to_vec(), certificates))
        },
    )
}

/// What the process built for its last few distinct inputs (decoded CA bundles, TLS
/// configurations), handed out again: a process often builds many clients alike. A process
/// that cycles through more than [`RecentlyBuilt::KEPT`] inputs builds the oldest again.
pub(crate) struct RecentlyBuilt<K, V> {
    entries: Mutex<Vec<(K, V)>>,
}

impl<K, V: Clone> RecentlyBuilt<K, V> {
    const KEPT: usize = 8;

    pub(crate) const fn new() -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
        }
    }

    /// The value kept for the input `is_input` recognises, or the one `build` makes with its
    /// input, outside the lock. A failure is not kept: the next caller tries again.
    pub(crate) fn get_or_build<E>(
        &self,
        is_input: impl Fn(&K) -> bool,
        build: impl FnOnce() -> Result<(K, V), E>,
    ) -> Result<V, E> {
        let lock = || self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = |entries: &[(K, V)]| {
            let found = entries.iter().find(|(input, _)| is_input(input));
            found.map(|(_, value)| value.clone())
        };
        if let Some(value) = kept(&lock()) {
            return Ok(value);
        }
        let (input, value) = build()?;
        let mut entries = lock();
        if let Some(value) = kept(&entries) {
            return Ok(value);
        }
        if entries.len() == Self::KEPT {
            entries.remove(0);
        }
        entries.push((input, value.clone()));
        Ok(value)
    }
}

/// A client identity: the certificate chain of `chain_pem` (leaf first) and the private key
/// of `key_pem` (PKCS#8, PKCS#1 RSA or SEC1 EC).
pub fn identity(
    chain_pem: &[u8],
    key_pem: &[u8],
) -> Result<
    (
        Vec<CertificateDer<'static>>,
        std::sync::Arc<PrivateKeyDer<'static>>,
    ),
    BuildError,
> {
    let chain = certificates(chain_pem, "the client certificate chain")?;
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| {
        BuildError::new(format!(
            "the client key is not a PEM private key (PKCS#8, RSA or EC): {}",
            match e {
                rustls::pki_types::pem::Error::NoItemsFound => "no key found".to_owned(),
                other => other.to_string(),
            }
        ))
    })?;
    Ok((chain, std::sync::Arc::new(key)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_was_built_is_kept_and_a_failure_is_not() {
        let recent: RecentlyBuilt<u8, u8> = RecentlyBuilt::new();
        let build = |input: u8, value: Result<u8, &'static str>| {
            recent.get_or_build(|kept| *kept == input, || value.map(|v| (input, v)))
        };
        assert_eq!(build(1, Err("refused")), Err("refused"));
        assert_eq!(build(1, Ok(10)), Ok(10), "the failure was not kept");
        assert_eq!(build(1, Ok(11)), Ok(10), "kept");
        for input in 2..=8 {
            assert_eq!(build(input, Ok(input)), Ok(input));
        }
        assert_eq!(build(1, Ok(12)), Ok(10), "eight inputs are kept");
        assert_eq!(build(9, Ok(9)), Ok(9));
        assert_eq!(
            build(1, Ok(13)),
            Ok(13),
            "the oldest made room for the ninth"
        );
    }

    #[test]
    fn bundles_without_certificates_and_garbage_are_named_errors() {
        let empty = certificates(b"", "the CA bundle /etc/ca.pem").unwrap_err();
        assert!(
            empty
                .to_string()
                .contains("/etc/ca.pem holds no certificate"),
            "{empty}"
        );
        let garbage = certificates(
            b"-----BEGIN CERTIFICATE-----\n!!!not base64!!!\n-----END CERTIFICATE-----\n",
            "the CA bundle /etc/ca.pem",
        )
        .unwrap_err();
        assert!(
            garbage.to_string().contains("/etc/ca.pem is not a PEM"),
            "{garbage}"
        );
        let key = identity(b"", b"").unwrap_err();
        assert!(
            key.to_string()
                .contains("client certificate chain holds no certificate"),
            "{key}"
        );
    }
}

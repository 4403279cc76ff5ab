//! PEM certificates and keys, as the builder takes them: CA bundles and client identities,
//! checked when the client is built with errors that name what was wrong (never a key).

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::Error;

/// Every certificate of the PEM bundle `pem`; `origin` names it in errors. A bundle with no
/// certificate, or one that is not PEM, is an error: trusting nothing by mistake would make
/// every connection fail later, with a less helpful message.
pub(crate) fn certificates(
    pem: &[u8],
    origin: &str,
) -> Result<Vec<CertificateDer<'static>>, Error> {
    let certificates = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::config(format!("{origin} is not a PEM certificate bundle: {e}")))?;
    if certificates.is_empty() {
        return Err(Error::config(format!(
            "{origin} holds no certificate (expected -----BEGIN CERTIFICATE----- blocks)"
        )));
    }
    Ok(certificates)
}

/// A client identity: the certificate chain of `chain_pem` (leaf first) and the private key
/// of `key_pem` (PKCS#8, PKCS#1 RSA or SEC1 EC).
pub(crate) fn identity(
    chain_pem: &[u8],
    key_pem: &[u8],
) -> Result<
    (
        Vec<CertificateDer<'static>>,
        std::sync::Arc<PrivateKeyDer<'static>>,
    ),
    Error,
> {
    let chain = certificates(chain_pem, "the client certificate chain")?;
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| {
        Error::config(format!(
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

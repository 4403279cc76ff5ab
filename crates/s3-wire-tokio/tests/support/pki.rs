//! Test certificates: a CA generated at test time (nothing is read from disk or trusted by
//! the platform), leaf certificates it issues for chosen names, and rustls server
//! configurations for them with chosen protocol versions and ALPN protocols.

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A certificate authority of its own (one per call to [`TestCa::new`]).
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    der: Vec<u8>,
}

/// A leaf certificate with its chain (leaf first) and private key.
pub struct Leaf {
    /// The leaf, then the CA that issued it.
    pub chain: Vec<CertificateDer<'static>>,
    /// Its private key (PKCS#8).
    pub key: PrivateKeyDer<'static>,
}

impl Clone for Leaf {
    fn clone(&self) -> Self {
        Self {
            chain: self.chain.clone(),
            key: self.key.clone_key(),
        }
    }
}

fn name(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name
}

impl TestCa {
    /// A new CA called `common_name`.
    pub fn new(common_name: &str) -> Self {
        let key = KeyPair::generate().expect("CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.distinguished_name = name(common_name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let certificate = params.self_signed(&key).expect("CA certificate");
        Self {
            der: certificate.der().to_vec(),
            issuer: Issuer::new(params, key),
        }
    }

    /// The CA certificate (DER), to trust with `ClientBuilder::add_root_certificate_der`.
    pub fn der(&self) -> Vec<u8> {
        self.der.clone()
    }

    /// The CA certificate as a PEM block, what CA bundle files hold.
    pub fn pem(&self) -> String {
        let encoded = super::base64(&self.der);
        let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
        for line in encoded.as_bytes().chunks(64) {
            pem.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
            pem.push('\n');
        }
        pem.push_str("-----END CERTIFICATE-----\n");
        pem
    }

    /// A leaf certificate valid for `names` (DNS names or IP addresses), currently valid.
    pub fn issue(&self, names: &[&str]) -> Leaf {
        self.issue_with(names, |_| {})
    }

    /// A leaf certificate valid for `names` whose validity ended in 2001.
    pub fn issue_expired(&self, names: &[&str]) -> Leaf {
        self.issue_with(names, |params| {
            params.not_before = rcgen::date_time_ymd(2000, 1, 1);
            params.not_after = rcgen::date_time_ymd(2001, 1, 1);
        })
    }

    fn issue_with(&self, names: &[&str], adjust: impl FnOnce(&mut CertificateParams)) -> Leaf {
        let key = KeyPair::generate().expect("leaf key");
        let names: Vec<String> = names.iter().map(|&name| name.to_owned()).collect();
        let mut params = CertificateParams::new(names.clone()).expect("leaf parameters");
        params.distinguished_name = name(names.first().map_or("leaf", String::as_str));
        params.is_ca = IsCa::ExplicitNoCa;
        params.use_authority_key_identifier_extension = true;
        adjust(&mut params);
        let certificate = params
            .signed_by(&key, &self.issuer)
            .expect("leaf certificate");
        Leaf {
            chain: vec![
                certificate.der().clone(),
                CertificateDer::from(self.der.clone()),
            ],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        }
    }
}

/// A rustls server configuration (ring provider) presenting `leaf`, speaking only
/// `versions` and offering `alpn` (in preference order).
pub fn server_config(
    leaf: &Leaf,
    versions: &[&'static rustls::SupportedProtocolVersion],
    alpn: &[&[u8]],
) -> rustls::ServerConfig {
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(versions)
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(leaf.chain.clone(), leaf.key.clone_key())
    .expect("server certificate");
    config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
    config
}

/// TLS 1.3 and 1.2, what rustls offers by default.
pub const DEFAULT_VERSIONS: &[&rustls::SupportedProtocolVersion] = rustls::DEFAULT_VERSIONS;

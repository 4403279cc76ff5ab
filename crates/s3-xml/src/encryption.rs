//! A bucket's default encryption: `<ServerSideEncryptionConfiguration>`.

use crate::Error;
use crate::common::{DecodeBody, required};
use crate::reader::XmlReader;
use crate::writer::XmlWriter;

/// `ApplyServerSideEncryptionByDefault`: how objects uploaded without encryption headers are
/// encrypted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EncryptionByDefault {
    /// `SSEAlgorithm`: `AES256` (SSE-S3), `aws:kms`, `aws:kms:dsse` (required).
    pub algorithm: String,
    /// `KMSMasterKeyID`: the KMS key for `aws:kms` / `aws:kms:dsse`.
    pub kms_master_key_id: Option<String>,
}

impl EncryptionByDefault {
    /// Encrypts with `algorithm`.
    pub fn new(algorithm: impl Into<String>) -> Self {
        Self {
            algorithm: algorithm.into(),
            kms_master_key_id: None,
        }
    }
}

/// One `<Rule>` of a default-encryption configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EncryptionRule {
    /// `ApplyServerSideEncryptionByDefault`.
    pub default: Option<EncryptionByDefault>,
    /// `BucketKeyEnabled`: S3 Bucket Keys for SSE-KMS.
    pub bucket_key_enabled: Option<bool>,
}

impl EncryptionRule {
    /// A rule encrypting new objects as `default` says.
    pub fn new(default: EncryptionByDefault) -> Self {
        Self {
            default: Some(default),
            bucket_key_enabled: None,
        }
    }
}

/// `<ServerSideEncryptionConfiguration>`: the body of PutBucketEncryption and the result of
/// GetBucketEncryption.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerSideEncryptionConfiguration {
    /// The rules (S3 takes one).
    pub rules: Vec<EncryptionRule>,
}

impl ServerSideEncryptionConfiguration {
    /// A configuration of these rules.
    pub fn new(rules: Vec<EncryptionRule>) -> Self {
        Self { rules }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("ServerSideEncryptionConfiguration");
        for rule in &self.rules {
            w.open("Rule");
            if let Some(default) = &rule.default {
                w.open("ApplyServerSideEncryptionByDefault");
                w.leaf("SSEAlgorithm", &default.algorithm)?;
                w.leaf_opt("KMSMasterKeyID", default.kms_master_key_id.as_ref())?;
                w.close("ApplyServerSideEncryptionByDefault");
            }
            w.leaf_opt("BucketKeyEnabled", rule.bucket_key_enabled)?;
            w.close("Rule");
        }
        Ok(w.finish())
    }
}

impl DecodeBody for ServerSideEncryptionConfiguration {
    const ROOT: &'static str = "ServerSideEncryptionConfiguration";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "Rule" => {
                    r.count_entry()?;
                    let mut rule = EncryptionRule::default();
                    while let Some(name) = r.next_child()? {
                        match name {
                            "ApplyServerSideEncryptionByDefault" => r.put(
                                &mut rule.default,
                                "ApplyServerSideEncryptionByDefault",
                                |r, _| decode_by_default(r),
                            )?,
                            "BucketKeyEnabled" => r.put(
                                &mut rule.bucket_key_enabled,
                                "BucketKeyEnabled",
                                XmlReader::bool_value,
                            )?,
                            _ => r.skip()?,
                        }
                    }
                    out.rules.push(rule);
                }
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

fn decode_by_default(r: &mut XmlReader<'_>) -> Result<EncryptionByDefault, Error> {
    let (mut algorithm, mut key) = (None, None);
    while let Some(name) = r.next_child()? {
        match name {
            "SSEAlgorithm" => r.put(&mut algorithm, "SSEAlgorithm", XmlReader::string)?,
            "KMSMasterKeyID" => r.put(&mut key, "KMSMasterKeyID", XmlReader::string)?,
            _ => r.skip()?,
        }
    }
    Ok(EncryptionByDefault {
        algorithm: required(
            algorithm,
            r,
            "ApplyServerSideEncryptionByDefault",
            "SSEAlgorithm",
        )?,
        kms_master_key_id: key,
    })
}

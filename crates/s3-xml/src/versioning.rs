//! A bucket's versioning state: `<VersioningConfiguration>`.

use crate::Error;
use crate::common::{DecodeBody, keyword};
use crate::reader::XmlReader;
use crate::writer::XmlWriter;

keyword! {
    /// Whether new writes create versions.
    pub enum VersioningStatus {
        /// `Enabled`: every write keeps the previous version.
        Enabled = "Enabled",
        /// `Suspended`: writes replace the `null` version; existing versions stay.
        Suspended = "Suspended",
    }
}

keyword! {
    /// Whether deletes of versions and changes of the versioning state need an MFA code.
    pub enum MfaDeleteStatus {
        /// `Enabled`.
        Enabled = "Enabled",
        /// `Disabled`.
        Disabled = "Disabled",
    }
}

/// `<VersioningConfiguration>`: the body of PutBucketVersioning and the result of
/// GetBucketVersioning (empty for a bucket that was never versioned).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct VersioningConfiguration {
    /// `Status`; absent for a bucket that was never versioned.
    pub status: Option<VersioningStatus>,
    /// `MfaDelete`.
    pub mfa_delete: Option<MfaDeleteStatus>,
}

impl VersioningConfiguration {
    /// A configuration setting `status` (and leaving MFA delete as it is).
    pub fn new(status: VersioningStatus) -> Self {
        Self {
            status: Some(status),
            mfa_delete: None,
        }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("VersioningConfiguration");
        w.leaf_opt("Status", self.status)?;
        w.leaf_opt("MfaDelete", self.mfa_delete)?;
        Ok(w.finish())
    }
}

impl DecodeBody for VersioningConfiguration {
    const ROOT: &'static str = "VersioningConfiguration";

    /// moto answers GetBucketVersioning with the root `<GetBucketVersioningResponse>` (the
    /// content is S3's; boto3 ignores the root's name): accepting it loses nothing.
    fn accepts_root(root: &str) -> bool {
        root == Self::ROOT || root == "GetBucketVersioningResponse"
    }

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "Status" => r.put(&mut out.status, "Status", XmlReader::keyword)?,
                "MfaDelete" => r.put(&mut out.mfa_delete, "MfaDelete", XmlReader::keyword)?,
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

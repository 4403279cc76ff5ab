//! A bucket's public access block: `<PublicAccessBlockConfiguration>`.

use crate::Error;
use crate::common::DecodeBody;
use crate::reader::XmlReader;
use crate::writer::XmlWriter;

/// `<PublicAccessBlockConfiguration>`: the body of PutPublicAccessBlock and the result of
/// GetPublicAccessBlock. An absent setting is `false` to S3.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PublicAccessBlockConfiguration {
    /// `BlockPublicAcls`: refuse requests that would set a public ACL.
    pub block_public_acls: Option<bool>,
    /// `IgnorePublicAcls`: ignore public ACLs on the bucket and its objects.
    pub ignore_public_acls: Option<bool>,
    /// `BlockPublicPolicy`: refuse a bucket policy that grants public access.
    pub block_public_policy: Option<bool>,
    /// `RestrictPublicBuckets`: only AWS services and the owner's account may use a bucket
    /// with a public policy.
    pub restrict_public_buckets: Option<bool>,
}

impl PublicAccessBlockConfiguration {
    /// Every setting on (`true`), as S3 recommends.
    pub fn all_blocked() -> Self {
        Self {
            block_public_acls: Some(true),
            ignore_public_acls: Some(true),
            block_public_policy: Some(true),
            restrict_public_buckets: Some(true),
        }
    }

    fn fields(&mut self) -> [(&'static str, &mut Option<bool>); 4] {
        [
            ("BlockPublicAcls", &mut self.block_public_acls),
            ("IgnorePublicAcls", &mut self.ignore_public_acls),
            ("BlockPublicPolicy", &mut self.block_public_policy),
            ("RestrictPublicBuckets", &mut self.restrict_public_buckets),
        ]
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("PublicAccessBlockConfiguration");
        let mut copy = *self;
        for (name, value) in copy.fields() {
            w.leaf_opt(name, *value)?;
        }
        Ok(w.finish())
    }
}

impl DecodeBody for PublicAccessBlockConfiguration {
    const ROOT: &'static str = "PublicAccessBlockConfiguration";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match out.fields().into_iter().find(|(name, _)| *name == child) {
                Some((name, slot)) => r.put(slot, name, XmlReader::bool_value)?,
                None => r.skip()?,
            }
        }
        Ok(out)
    }
}

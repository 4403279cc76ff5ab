//! RestoreObject: the `<RestoreRequest>` body.

use crate::Error;
use crate::common::{DecodeBody, keyword, required};
use crate::reader::XmlReader;
use crate::writer::XmlWriter;

keyword! {
    /// How fast an archived object is restored (and what it costs).
    pub enum RestoreTier {
        /// `Standard`: hours (GLACIER 3–5, DEEP_ARCHIVE within 12).
        Standard = "Standard",
        /// `Bulk`: the cheapest (GLACIER 5–12 hours, DEEP_ARCHIVE within 48).
        Bulk = "Bulk",
        /// `Expedited`: minutes (GLACIER only).
        Expedited = "Expedited",
    }
}

/// `<RestoreRequest>`: restore a temporary copy of an archived object for `days`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestoreRequest {
    /// `Days` the restored copy stays (required for the GLACIER and DEEP_ARCHIVE classes;
    /// absent for the archive tiers of INTELLIGENT_TIERING).
    pub days: Option<u32>,
    /// `GlacierJobParameters/Tier`.
    pub tier: Option<RestoreTier>,
}

impl RestoreRequest {
    /// A restore for `days` days at `tier`.
    pub fn new(days: u32, tier: RestoreTier) -> Self {
        Self {
            days: Some(days),
            tier: Some(tier),
        }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("RestoreRequest");
        w.leaf_opt("Days", self.days)?;
        if let Some(tier) = self.tier {
            w.open("GlacierJobParameters");
            w.leaf("Tier", tier.as_str())?;
            w.close("GlacierJobParameters");
        }
        Ok(w.finish())
    }
}

impl DecodeBody for RestoreRequest {
    const ROOT: &'static str = "RestoreRequest";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "Days" => r.put(&mut out.days, "Days", XmlReader::u32_value)?,
                "GlacierJobParameters" => {
                    let mut tier = None;
                    while let Some(name) = r.next_child()? {
                        match name {
                            "Tier" => r.put(&mut tier, "Tier", XmlReader::keyword)?,
                            _ => r.skip()?,
                        }
                    }
                    let tier = required(tier, r, "GlacierJobParameters", "Tier")?;
                    r.put(&mut out.tier, "GlacierJobParameters", |_, _| Ok(tier))?;
                }
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

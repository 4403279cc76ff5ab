//! Object Lock: an object's `<Retention>` and `<LegalHold>`, and a bucket's
//! `<ObjectLockConfiguration>` (request bodies and results alike).

use crate::common::{DecodeBody, keyword, required};
use crate::error::ErrorKind;
use crate::reader::XmlReader;
use crate::writer::XmlWriter;
use crate::{Error, Timestamp};

keyword! {
    /// How a retention protects an object version.
    pub enum RetentionMode {
        /// `GOVERNANCE`: users with `s3:BypassGovernanceRetention` may still delete or
        /// shorten it.
        Governance = "GOVERNANCE",
        /// `COMPLIANCE`: nobody, the root user included, can delete the version or shorten
        /// the retention until it ends.
        Compliance = "COMPLIANCE",
    }
}

keyword! {
    /// Whether a legal hold is on.
    pub enum LegalHoldStatus {
        /// `ON`: the version cannot be deleted or overwritten until the hold is removed.
        On = "ON",
        /// `OFF`.
        Off = "OFF",
    }
}

/// An object version's retention: `<Retention>`, the body of PutObjectRetention and the
/// result of GetObjectRetention. Both fields absent (sent with the bypass header) removes a
/// governance retention.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retention {
    /// `Mode`.
    pub mode: Option<RetentionMode>,
    /// `RetainUntilDate`: the version is protected until this instant.
    pub retain_until_date: Option<Timestamp>,
}

impl Retention {
    /// A retention in `mode` until `until`.
    pub fn new(mode: RetentionMode, until: Timestamp) -> Self {
        Self {
            mode: Some(mode),
            retain_until_date: Some(until),
        }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("Retention");
        w.leaf_opt("Mode", self.mode)?;
        w.leaf_opt("RetainUntilDate", self.retain_until_date)?;
        Ok(w.finish())
    }
}

impl DecodeBody for Retention {
    const ROOT: &'static str = "Retention";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "Mode" => r.put(&mut out.mode, "Mode", XmlReader::keyword)?,
                "RetainUntilDate" => r.put(
                    &mut out.retain_until_date,
                    "RetainUntilDate",
                    XmlReader::timestamp_value,
                )?,
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

/// An object version's legal hold: `<LegalHold>`, the body of PutObjectLegalHold and the
/// result of GetObjectLegalHold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LegalHold {
    /// `Status` (required).
    pub status: LegalHoldStatus,
}

impl LegalHold {
    /// A legal hold with this status.
    pub fn new(status: LegalHoldStatus) -> Self {
        Self { status }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("LegalHold");
        w.leaf("Status", self.status.as_str())?;
        Ok(w.finish())
    }
}

impl DecodeBody for LegalHold {
    const ROOT: &'static str = "LegalHold";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut status = None;
        while let Some(child) = r.next_child()? {
            match child {
                "Status" => r.put(&mut status, "Status", XmlReader::keyword)?,
                _ => r.skip()?,
            }
        }
        Ok(Self {
            status: required(status, r, "LegalHold", "Status")?,
        })
    }
}

/// How long a default retention lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RetentionPeriod {
    /// `Days`.
    Days(u32),
    /// `Years`.
    Years(u32),
}

/// The retention every new object version of a bucket gets unless its upload names one:
/// `<Rule><DefaultRetention>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DefaultRetention {
    /// `Mode`.
    pub mode: RetentionMode,
    /// `Days` or `Years` (exactly one).
    pub period: RetentionPeriod,
}

impl DefaultRetention {
    /// A default retention.
    pub fn new(mode: RetentionMode, period: RetentionPeriod) -> Self {
        Self { mode, period }
    }
}

/// A bucket's Object Lock configuration: `<ObjectLockConfiguration>`, the body of
/// PutObjectLockConfiguration and the result of GetObjectLockConfiguration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectLockConfiguration {
    /// `<ObjectLockEnabled>Enabled</ObjectLockEnabled>` (its only value).
    pub enabled: bool,
    /// `Rule/DefaultRetention`.
    pub default_retention: Option<DefaultRetention>,
}

impl ObjectLockConfiguration {
    /// Object Lock enabled, with an optional default retention.
    pub fn enabled(default_retention: Option<DefaultRetention>) -> Self {
        Self {
            enabled: true,
            default_retention,
        }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("ObjectLockConfiguration");
        if self.enabled {
            w.leaf("ObjectLockEnabled", "Enabled")?;
        }
        if let Some(default) = &self.default_retention {
            w.open("Rule");
            w.open("DefaultRetention");
            w.leaf("Mode", default.mode.as_str())?;
            match default.period {
                RetentionPeriod::Days(days) => w.leaf("Days", &days.to_string())?,
                RetentionPeriod::Years(years) => w.leaf("Years", &years.to_string())?,
            }
            w.close("DefaultRetention");
            w.close("Rule");
        }
        Ok(w.finish())
    }
}

keyword! {
    /// The one value of `ObjectLockEnabled`.
    pub enum ObjectLockEnabled {
        /// `Enabled`.
        Enabled = "Enabled",
    }
}

impl DecodeBody for ObjectLockConfiguration {
    const ROOT: &'static str = "ObjectLockConfiguration";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let (mut enabled, mut rule) = (None::<ObjectLockEnabled>, None);
        while let Some(child) = r.next_child()? {
            match child {
                "ObjectLockEnabled" => {
                    r.put(&mut enabled, "ObjectLockEnabled", XmlReader::keyword)?
                }
                "Rule" => r.put(&mut rule, "Rule", |r, _| decode_rule(r))?,
                _ => r.skip()?,
            }
        }
        Ok(Self {
            enabled: enabled.is_some(),
            default_retention: rule.flatten(),
        })
    }
}

/// `<Rule>`: its `DefaultRetention`, if any.
fn decode_rule(r: &mut XmlReader<'_>) -> Result<Option<DefaultRetention>, Error> {
    let mut default = None;
    while let Some(name) = r.next_child()? {
        match name {
            "DefaultRetention" => {
                r.put(&mut default, "DefaultRetention", |r, _| {
                    decode_default_retention(r)
                })?;
            }
            _ => r.skip()?,
        }
    }
    Ok(default)
}

fn decode_default_retention(r: &mut XmlReader<'_>) -> Result<DefaultRetention, Error> {
    let (mut mode, mut days, mut years) = (None, None, None);
    while let Some(child) = r.next_child()? {
        match child {
            "Mode" => r.put(&mut mode, "Mode", XmlReader::keyword)?,
            "Days" => r.put(&mut days, "Days", XmlReader::u32_value)?,
            "Years" => r.put(&mut years, "Years", XmlReader::u32_value)?,
            _ => r.skip()?,
        }
    }
    // moto writes the unused one as 0 (`<Days>1</Days><Years>0</Years>`); a zero period is
    // no period, so it stands for absent beside a real one.
    let (days, years) = match (days, years) {
        (Some(d), Some(0)) if d > 0 => (Some(d), None),
        (Some(0), Some(y)) if y > 0 => (None, Some(y)),
        pair => pair,
    };
    let period = match (days, years) {
        (Some(days), None) => RetentionPeriod::Days(days),
        (None, Some(years)) => RetentionPeriod::Years(years),
        (Some(_), Some(_)) => {
            return Err(r.error_here(ErrorKind::Exclusive {
                parent: "DefaultRetention",
                elements: "Days|Years",
            }));
        }
        (None, None) => {
            return Err(r.error_here(ErrorKind::MissingElement {
                parent: "DefaultRetention",
                element: "Days",
            }));
        }
    };
    Ok(DefaultRetention {
        mode: required(mode, r, "DefaultRetention", "Mode")?,
        period,
    })
}

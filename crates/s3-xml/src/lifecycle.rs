//! A bucket's lifecycle rules: `<LifecycleConfiguration>`.

use crate::common::{DecodeBody, keyword, required};
use crate::error::ErrorKind;
use crate::reader::XmlReader;
use crate::writer::XmlWriter;
use crate::{Error, Tag, Timestamp};

keyword! {
    /// Whether a lifecycle rule is applied.
    pub enum RuleStatus {
        /// `Enabled`.
        Enabled = "Enabled",
        /// `Disabled`: kept, but not applied.
        Disabled = "Disabled",
    }
}

/// Which objects a rule applies to: `<Filter>`. Every condition given must hold (S3 writes
/// two or more inside `<And>`, which the encoder does and the decoder reads); no condition at
/// all is every object of the bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LifecycleFilter {
    /// `Prefix`: keys starting with it.
    pub prefix: Option<String>,
    /// `Tag`: objects carrying every one of these tags.
    pub tags: Vec<Tag>,
    /// `ObjectSizeGreaterThan`, in bytes.
    pub object_size_greater_than: Option<u64>,
    /// `ObjectSizeLessThan`, in bytes.
    pub object_size_less_than: Option<u64>,
}

impl LifecycleFilter {
    /// Every object of the bucket.
    pub fn everything() -> Self {
        Self::default()
    }

    /// Keys starting with `prefix`.
    pub fn with_prefix(prefix: impl Into<String>) -> Self {
        Self {
            prefix: Some(prefix.into()),
            ..Self::default()
        }
    }

    fn conditions(&self) -> usize {
        usize::from(self.prefix.is_some())
            + self.tags.len()
            + usize::from(self.object_size_greater_than.is_some())
            + usize::from(self.object_size_less_than.is_some())
    }

    fn encode_conditions(&self, w: &mut XmlWriter) -> Result<(), Error> {
        w.leaf_opt("Prefix", self.prefix.as_ref())?;
        for tag in &self.tags {
            tag.encode(w)?;
        }
        w.leaf_opt("ObjectSizeGreaterThan", self.object_size_greater_than)?;
        w.leaf_opt("ObjectSizeLessThan", self.object_size_less_than)
    }

    fn encode(&self, w: &mut XmlWriter) -> Result<(), Error> {
        w.open("Filter");
        if self.conditions() > 1 {
            w.open("And");
            self.encode_conditions(w)?;
            w.close("And");
        } else {
            self.encode_conditions(w)?;
        }
        w.close("Filter");
        Ok(())
    }

    /// Reads one condition element `name` into `self`; `false` if `name` is none.
    fn read_condition(&mut self, r: &mut XmlReader<'_>, name: &str) -> Result<bool, Error> {
        match name {
            "Prefix" => r.put(&mut self.prefix, "Prefix", XmlReader::string)?,
            "Tag" => self.tags.push(Tag::decode(r)?),
            "ObjectSizeGreaterThan" => r.put(
                &mut self.object_size_greater_than,
                "ObjectSizeGreaterThan",
                XmlReader::u64_value,
            )?,
            "ObjectSizeLessThan" => r.put(
                &mut self.object_size_less_than,
                "ObjectSizeLessThan",
                XmlReader::u64_value,
            )?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `<Filter>`: at most one condition, or one `<And>` of several.
    fn decode(r: &mut XmlReader<'_>) -> Result<Self, Error> {
        let mut out = Self::default();
        let mut direct = 0;
        while let Some(name) = r.next_child()? {
            if name == "And" {
                direct += 1;
                while let Some(name) = r.next_child()? {
                    if !out.read_condition(r, name)? {
                        r.skip()?;
                    }
                }
            } else if out.read_condition(r, name)? {
                direct += 1;
            } else {
                r.skip()?;
            }
            if direct > 1 {
                return Err(r.error_here(ErrorKind::Exclusive {
                    parent: "Filter",
                    elements: "Prefix|Tag|ObjectSizeGreaterThan|ObjectSizeLessThan|And",
                }));
            }
        }
        Ok(out)
    }
}

/// `<Expiration>`: when current versions expire (one of the three).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LifecycleExpiration {
    /// `Days` after creation.
    pub days: Option<u32>,
    /// `Date` (midnight UTC).
    pub date: Option<Timestamp>,
    /// `ExpiredObjectDeleteMarker`: remove delete markers that have no noncurrent versions.
    pub expired_object_delete_marker: Option<bool>,
}

impl LifecycleExpiration {
    /// `days` after creation.
    pub fn after_days(days: u32) -> Self {
        Self {
            days: Some(days),
            ..Self::default()
        }
    }
}

/// `<Transition>`: when current versions move to another storage class.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Transition {
    /// `Days` after creation.
    pub days: Option<u32>,
    /// `Date` (midnight UTC).
    pub date: Option<Timestamp>,
    /// `StorageClass` (`STANDARD_IA`, `GLACIER`, `DEEP_ARCHIVE`, ...; required).
    pub storage_class: String,
}

impl Transition {
    /// To `storage_class`, `days` after creation.
    pub fn after_days(days: u32, storage_class: impl Into<String>) -> Self {
        Self {
            days: Some(days),
            date: None,
            storage_class: storage_class.into(),
        }
    }
}

/// `<NoncurrentVersionTransition>`: when noncurrent versions move to another storage class.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NoncurrentVersionTransition {
    /// `NoncurrentDays`: days after a version became noncurrent.
    pub noncurrent_days: Option<u32>,
    /// `NewerNoncurrentVersions`: keep this many newer noncurrent versions where they are.
    pub newer_noncurrent_versions: Option<u32>,
    /// `StorageClass` (required).
    pub storage_class: String,
}

impl NoncurrentVersionTransition {
    /// To `storage_class`, `days` after becoming noncurrent.
    pub fn after_days(days: u32, storage_class: impl Into<String>) -> Self {
        Self {
            noncurrent_days: Some(days),
            newer_noncurrent_versions: None,
            storage_class: storage_class.into(),
        }
    }
}

/// `<NoncurrentVersionExpiration>`: when noncurrent versions are deleted for good.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NoncurrentVersionExpiration {
    /// `NoncurrentDays`: days after a version became noncurrent.
    pub noncurrent_days: Option<u32>,
    /// `NewerNoncurrentVersions`: keep this many newer noncurrent versions.
    pub newer_noncurrent_versions: Option<u32>,
}

impl NoncurrentVersionExpiration {
    /// `days` after becoming noncurrent.
    pub fn after_days(days: u32) -> Self {
        Self {
            noncurrent_days: Some(days),
            newer_noncurrent_versions: None,
        }
    }
}

/// One `<Rule>`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LifecycleRule {
    /// `ID` (up to 255 characters).
    pub id: Option<String>,
    /// `Status` (required).
    pub status: RuleStatus,
    /// `Filter`: which objects.
    pub filter: Option<LifecycleFilter>,
    /// The rule-level `Prefix` of the older API (S3 still returns it for rules written so);
    /// a rule has it or a [`LifecycleRule::filter`], not both.
    pub prefix: Option<String>,
    /// `Expiration`.
    pub expiration: Option<LifecycleExpiration>,
    /// `Transition` entries.
    pub transitions: Vec<Transition>,
    /// `NoncurrentVersionTransition` entries.
    pub noncurrent_version_transitions: Vec<NoncurrentVersionTransition>,
    /// `NoncurrentVersionExpiration`.
    pub noncurrent_version_expiration: Option<NoncurrentVersionExpiration>,
    /// `AbortIncompleteMultipartUpload/DaysAfterInitiation`: abort uploads left unfinished
    /// this many days.
    pub abort_incomplete_multipart_upload_days: Option<u32>,
}

impl LifecycleRule {
    /// An enabled rule for the objects `filter` selects, with no action yet.
    pub fn new(id: impl Into<String>, filter: LifecycleFilter) -> Self {
        Self {
            id: Some(id.into()),
            status: RuleStatus::Enabled,
            filter: Some(filter),
            prefix: None,
            expiration: None,
            transitions: Vec::new(),
            noncurrent_version_transitions: Vec::new(),
            noncurrent_version_expiration: None,
            abort_incomplete_multipart_upload_days: None,
        }
    }

    fn encode(&self, w: &mut XmlWriter) -> Result<(), Error> {
        w.open("Rule");
        w.leaf_opt("ID", self.id.as_ref())?;
        w.leaf_opt("Prefix", self.prefix.as_ref())?;
        if let Some(filter) = &self.filter {
            filter.encode(w)?;
        }
        w.leaf("Status", self.status.as_str())?;
        if let Some(expiration) = &self.expiration {
            w.open("Expiration");
            w.leaf_opt("Days", expiration.days)?;
            w.leaf_opt("Date", expiration.date)?;
            w.leaf_opt(
                "ExpiredObjectDeleteMarker",
                expiration.expired_object_delete_marker,
            )?;
            w.close("Expiration");
        }
        for transition in &self.transitions {
            w.open("Transition");
            w.leaf_opt("Days", transition.days)?;
            w.leaf_opt("Date", transition.date)?;
            w.leaf("StorageClass", &transition.storage_class)?;
            w.close("Transition");
        }
        for transition in &self.noncurrent_version_transitions {
            w.open("NoncurrentVersionTransition");
            w.leaf_opt("NoncurrentDays", transition.noncurrent_days)?;
            w.leaf_opt(
                "NewerNoncurrentVersions",
                transition.newer_noncurrent_versions,
            )?;
            w.leaf("StorageClass", &transition.storage_class)?;
            w.close("NoncurrentVersionTransition");
        }
        if let Some(expiration) = &self.noncurrent_version_expiration {
            w.open("NoncurrentVersionExpiration");
            w.leaf_opt("NoncurrentDays", expiration.noncurrent_days)?;
            w.leaf_opt(
                "NewerNoncurrentVersions",
                expiration.newer_noncurrent_versions,
            )?;
            w.close("NoncurrentVersionExpiration");
        }
        if let Some(days) = self.abort_incomplete_multipart_upload_days {
            w.open("AbortIncompleteMultipartUpload");
            w.leaf("DaysAfterInitiation", &days.to_string())?;
            w.close("AbortIncompleteMultipartUpload");
        }
        w.close("Rule");
        Ok(())
    }

    fn decode(r: &mut XmlReader<'_>) -> Result<Self, Error> {
        r.count_entry()?;
        let (mut id, mut status, mut filter, mut prefix) = (None, None, None, None);
        let (mut expiration, mut noncurrent_expiration, mut abort) = (None, None, None);
        let (mut transitions, mut noncurrent_transitions) = (Vec::new(), Vec::new());
        while let Some(name) = r.next_child()? {
            match name {
                "ID" => r.put(&mut id, "ID", XmlReader::string)?,
                "Status" => r.put(&mut status, "Status", XmlReader::keyword)?,
                "Prefix" => r.put(&mut prefix, "Prefix", XmlReader::string)?,
                "Filter" => r.put(&mut filter, "Filter", |r, _| LifecycleFilter::decode(r))?,
                "Expiration" => {
                    r.put(&mut expiration, "Expiration", |r, _| decode_expiration(r))?
                }
                "Transition" => {
                    r.count_entry()?;
                    transitions.push(decode_transition(r)?);
                }
                "NoncurrentVersionTransition" => {
                    r.count_entry()?;
                    noncurrent_transitions.push(decode_noncurrent_transition(r)?);
                }
                "NoncurrentVersionExpiration" => r.put(
                    &mut noncurrent_expiration,
                    "NoncurrentVersionExpiration",
                    |r, _| decode_noncurrent_expiration(r),
                )?,
                "AbortIncompleteMultipartUpload" => {
                    r.put(&mut abort, "AbortIncompleteMultipartUpload", |r, _| {
                        decode_abort(r)
                    })?;
                }
                _ => r.skip()?,
            }
        }
        if filter.is_some() && prefix.is_some() {
            return Err(r.error_here(ErrorKind::Exclusive {
                parent: "Rule",
                elements: "Prefix|Filter",
            }));
        }
        Ok(Self {
            id,
            status: required(status, r, "Rule", "Status")?,
            filter,
            prefix,
            expiration,
            transitions,
            noncurrent_version_transitions: noncurrent_transitions,
            noncurrent_version_expiration: noncurrent_expiration,
            abort_incomplete_multipart_upload_days: abort,
        })
    }
}

/// `Days` and `Date`: one at most.
fn days_or_date(
    r: &XmlReader<'_>,
    parent: &'static str,
    days: Option<u32>,
    date: Option<Timestamp>,
) -> Result<(), Error> {
    if days.is_some() && date.is_some() {
        return Err(r.error_here(ErrorKind::Exclusive {
            parent,
            elements: "Days|Date",
        }));
    }
    Ok(())
}

fn decode_expiration(r: &mut XmlReader<'_>) -> Result<LifecycleExpiration, Error> {
    let mut out = LifecycleExpiration::default();
    while let Some(name) = r.next_child()? {
        match name {
            "Days" => r.put(&mut out.days, "Days", XmlReader::u32_value)?,
            "Date" => r.put(&mut out.date, "Date", XmlReader::timestamp_value)?,
            "ExpiredObjectDeleteMarker" => r.put(
                &mut out.expired_object_delete_marker,
                "ExpiredObjectDeleteMarker",
                XmlReader::bool_value,
            )?,
            _ => r.skip()?,
        }
    }
    days_or_date(r, "Expiration", out.days, out.date)?;
    if out.expired_object_delete_marker.is_some() && (out.days.is_some() || out.date.is_some()) {
        return Err(r.error_here(ErrorKind::Exclusive {
            parent: "Expiration",
            elements: "Days|Date|ExpiredObjectDeleteMarker",
        }));
    }
    Ok(out)
}

fn decode_transition(r: &mut XmlReader<'_>) -> Result<Transition, Error> {
    let (mut days, mut date, mut class) = (None, None, None);
    while let Some(name) = r.next_child()? {
        match name {
            "Days" => r.put(&mut days, "Days", XmlReader::u32_value)?,
            "Date" => r.put(&mut date, "Date", XmlReader::timestamp_value)?,
            "StorageClass" => r.put(&mut class, "StorageClass", XmlReader::string)?,
            _ => r.skip()?,
        }
    }
    days_or_date(r, "Transition", days, date)?;
    Ok(Transition {
        days,
        date,
        storage_class: required(class, r, "Transition", "StorageClass")?,
    })
}

/// The `NoncurrentDays` / `NewerNoncurrentVersions` pair, and `StorageClass` if `class`.
fn decode_noncurrent(
    r: &mut XmlReader<'_>,
    mut class: Option<&mut Option<String>>,
) -> Result<(Option<u32>, Option<u32>), Error> {
    let (mut days, mut newer) = (None, None);
    while let Some(name) = r.next_child()? {
        match (name, class.as_deref_mut()) {
            ("NoncurrentDays", _) => r.put(&mut days, "NoncurrentDays", XmlReader::u32_value)?,
            ("NewerNoncurrentVersions", _) => {
                r.put(&mut newer, "NewerNoncurrentVersions", XmlReader::u32_value)?;
            }
            ("StorageClass", Some(class)) => r.put(class, "StorageClass", XmlReader::string)?,
            _ => r.skip()?,
        }
    }
    Ok((days, newer))
}

fn decode_noncurrent_transition(
    r: &mut XmlReader<'_>,
) -> Result<NoncurrentVersionTransition, Error> {
    let mut class = None;
    let (days, newer) = decode_noncurrent(r, Some(&mut class))?;
    Ok(NoncurrentVersionTransition {
        noncurrent_days: days,
        newer_noncurrent_versions: newer,
        storage_class: required(class, r, "NoncurrentVersionTransition", "StorageClass")?,
    })
}

fn decode_noncurrent_expiration(
    r: &mut XmlReader<'_>,
) -> Result<NoncurrentVersionExpiration, Error> {
    let (days, newer) = decode_noncurrent(r, None)?;
    Ok(NoncurrentVersionExpiration {
        noncurrent_days: days,
        newer_noncurrent_versions: newer,
    })
}

fn decode_abort(r: &mut XmlReader<'_>) -> Result<u32, Error> {
    let mut days = None;
    while let Some(name) = r.next_child()? {
        match name {
            "DaysAfterInitiation" => {
                r.put(&mut days, "DaysAfterInitiation", XmlReader::u32_value)?;
            }
            _ => r.skip()?,
        }
    }
    required(
        days,
        r,
        "AbortIncompleteMultipartUpload",
        "DaysAfterInitiation",
    )
}

/// `<LifecycleConfiguration>`: the body of PutBucketLifecycleConfiguration and the result of
/// GetBucketLifecycleConfiguration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LifecycleConfiguration {
    /// The rules (S3 takes up to 1,000).
    pub rules: Vec<LifecycleRule>,
}

impl LifecycleConfiguration {
    /// A configuration of these rules.
    pub fn new(rules: Vec<LifecycleRule>) -> Self {
        Self { rules }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("LifecycleConfiguration");
        for rule in &self.rules {
            rule.encode(&mut w)?;
        }
        Ok(w.finish())
    }
}

impl DecodeBody for LifecycleConfiguration {
    const ROOT: &'static str = "LifecycleConfiguration";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "Rule" => out.rules.push(LifecycleRule::decode(r)?),
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

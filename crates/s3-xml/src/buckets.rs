//! Bucket documents: ListBuckets, GetBucketLocation, CreateBucketConfiguration.

use crate::common::{DecodeBody, required};
use crate::reader::XmlReader;
use crate::writer::XmlWriter;
use crate::{Error, Owner, Timestamp};

/// One bucket of a ListBuckets result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Bucket {
    /// `Name`.
    pub name: String,
    /// `CreationDate`.
    pub creation_date: Timestamp,
    /// `BucketRegion` (sent by S3 since 2024).
    pub region: Option<String>,
}

/// The result of ListBuckets (`GET /` on the service): `<ListAllMyBucketsResult>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListBucketsResult {
    /// `Owner` of the buckets.
    pub owner: Option<Owner>,
    /// `Buckets/Bucket` entries, in document order.
    pub buckets: Vec<Bucket>,
    /// `ContinuationToken`: pass it as `continuation-token` for the next page
    /// (absent on the last page).
    pub continuation_token: Option<String>,
    /// `Prefix` echoed from the request.
    pub prefix: Option<String>,
}

impl DecodeBody for ListBucketsResult {
    const ROOT: &'static str = "ListAllMyBucketsResult";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "Buckets" => {
                    while let Some(name) = r.next_child()? {
                        match name {
                            "Bucket" => out.buckets.push(decode_bucket(r)?),
                            _ => r.skip()?,
                        }
                    }
                }
                "Owner" => r.put(&mut out.owner, "Owner", |r, _| Owner::decode(r))?,
                "ContinuationToken" => {
                    r.put(
                        &mut out.continuation_token,
                        "ContinuationToken",
                        XmlReader::string,
                    )?;
                }
                "Prefix" => r.put(&mut out.prefix, "Prefix", XmlReader::string)?,
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

pub(crate) fn decode_bucket(r: &mut XmlReader<'_>) -> Result<Bucket, Error> {
    r.count_entry()?;
    let (mut name, mut creation_date, mut region) = (None, None, None);
    while let Some(child) = r.next_child()? {
        match child {
            "Name" => r.put(&mut name, "Name", XmlReader::string)?,
            "CreationDate" => r.put(
                &mut creation_date,
                "CreationDate",
                XmlReader::timestamp_value,
            )?,
            "BucketRegion" => r.put(&mut region, "BucketRegion", XmlReader::string)?,
            _ => r.skip()?,
        }
    }
    Ok(Bucket {
        name: required(name, r, "Bucket", "Name")?,
        creation_date: required(creation_date, r, "Bucket", "CreationDate")?,
        region,
    })
}

/// The result of GetBucketLocation: `<LocationConstraint>region</LocationConstraint>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BucketLocation {
    /// The raw `LocationConstraint` text: empty for us-east-1, `EU` for
    /// buckets created with the legacy value. Use [`BucketLocation::region`].
    pub location_constraint: String,
}

impl BucketLocation {
    /// The bucket's region: `us-east-1` when the constraint is empty,
    /// `eu-west-1` for the legacy `EU`, otherwise the constraint itself.
    pub fn region(&self) -> &str {
        match self.location_constraint.as_str() {
            "" => "us-east-1",
            "EU" => "eu-west-1",
            other => other,
        }
    }
}

impl DecodeBody for BucketLocation {
    const ROOT: &'static str = "LocationConstraint";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let text = r.text("LocationConstraint")?;
        Ok(Self {
            location_constraint: text
                .trim_matches(|c: char| c.is_ascii_whitespace())
                .to_owned(),
        })
    }
}

/// The body of CreateBucket: `<CreateBucketConfiguration>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CreateBucketConfiguration {
    /// `LocationConstraint`: the region. S3 wants no body at all for
    /// us-east-1; the caller decides whether to send one.
    pub location_constraint: Option<String>,
}

impl CreateBucketConfiguration {
    /// A configuration for `region`.
    pub fn new(region: impl Into<String>) -> Self {
        Self {
            location_constraint: Some(region.into()),
        }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("CreateBucketConfiguration");
        if let Some(region) = &self.location_constraint {
            w.leaf("LocationConstraint", region)?;
        }
        Ok(w.finish())
    }
}

impl DecodeBody for CreateBucketConfiguration {
    const ROOT: &'static str = "CreateBucketConfiguration";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "LocationConstraint" => {
                    r.put(
                        &mut out.location_constraint,
                        "LocationConstraint",
                        XmlReader::string,
                    )?;
                }
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

//! S3 Express One Zone documents: CreateSession and ListDirectoryBuckets.

use crate::buckets::decode_bucket;
use crate::common::{DecodeBody, required};
use crate::reader::XmlReader;
use crate::sts::decode_credentials;
use crate::{Bucket, Error, StsCredentials};

/// The result of CreateSession (`<CreateSessionResult>`): session credentials for one
/// directory bucket, valid for five minutes. `Debug` redacts the secret key and the token.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CreateSessionResult {
    /// `Credentials`: sign zonal requests with them, and send `SessionToken` as
    /// `x-amz-s3session-token`.
    pub credentials: StsCredentials,
}

impl DecodeBody for CreateSessionResult {
    const ROOT: &'static str = "CreateSessionResult";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut credentials = None;
        while let Some(child) = r.next_child()? {
            match child {
                "Credentials" => r.put(&mut credentials, "Credentials", |r, _| {
                    decode_credentials(r)
                })?,
                _ => r.skip()?,
            }
        }
        Ok(Self {
            credentials: required(credentials, r, "CreateSessionResult", "Credentials")?,
        })
    }
}

/// The result of ListDirectoryBuckets (`<ListAllMyDirectoryBucketsResult>`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListDirectoryBucketsResult {
    /// `Buckets/Bucket` entries, in document order.
    pub buckets: Vec<Bucket>,
    /// `ContinuationToken`: pass it as `continuation-token` for the next page (absent on
    /// the last page).
    pub continuation_token: Option<String>,
}

impl DecodeBody for ListDirectoryBucketsResult {
    const ROOT: &'static str = "ListAllMyDirectoryBucketsResult";

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
                "ContinuationToken" => r.put(
                    &mut out.continuation_token,
                    "ContinuationToken",
                    XmlReader::string,
                )?,
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

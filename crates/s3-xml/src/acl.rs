//! Access control lists: `<AccessControlPolicy>`.

use crate::Error;
use crate::common::{DecodeBody, Owner, keyword, required};
use crate::error::ErrorKind;
use crate::reader::XmlReader;
use crate::writer::XmlWriter;

keyword! {
    /// What a grant allows.
    pub enum Permission {
        /// `FULL_CONTROL`: everything below.
        FullControl = "FULL_CONTROL",
        /// `WRITE`: create, overwrite and delete objects (buckets only).
        Write = "WRITE",
        /// `WRITE_ACP`: change the ACL.
        WriteAcp = "WRITE_ACP",
        /// `READ`: read the object, or list the bucket.
        Read = "READ",
        /// `READ_ACP`: read the ACL.
        ReadAcp = "READ_ACP",
    }
}

/// Who a grant is for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Grantee {
    /// An account by canonical user id (`xsi:type="CanonicalUser"`).
    CanonicalUser {
        /// `ID`.
        id: String,
        /// `DisplayName` (S3 no longer returns it everywhere).
        display_name: Option<String>,
    },
    /// A predefined group (`xsi:type="Group"`), such as
    /// `http://acs.amazonaws.com/groups/global/AllUsers`.
    Group {
        /// `URI`.
        uri: String,
    },
    /// An account by e-mail address (`xsi:type="AmazonCustomerByEmail"`; accepted in a few
    /// regions only, and returned as its canonical user).
    Email {
        /// `EmailAddress`.
        address: String,
    },
}

impl Grantee {
    /// The group of everyone, signed in or not.
    pub const ALL_USERS: &'static str = "http://acs.amazonaws.com/groups/global/AllUsers";
    /// The group of every AWS account.
    pub const AUTHENTICATED_USERS: &'static str =
        "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";
    /// The group S3 server access logs are written as.
    pub const LOG_DELIVERY: &'static str = "http://acs.amazonaws.com/groups/s3/LogDelivery";

    /// The `xsi:type` S3 names this kind of grantee with.
    pub fn type_name(&self) -> &'static str {
        match self {
            Grantee::CanonicalUser { .. } => "CanonicalUser",
            Grantee::Group { .. } => "Group",
            Grantee::Email { .. } => "AmazonCustomerByEmail",
        }
    }

    fn encode(&self, w: &mut XmlWriter) -> Result<(), Error> {
        w.open_with(
            "Grantee",
            match self {
                Grantee::CanonicalUser { .. } => {
                    r#"xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser""#
                }
                Grantee::Group { .. } => {
                    r#"xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group""#
                }
                Grantee::Email { .. } => {
                    r#"xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="AmazonCustomerByEmail""#
                }
            },
        );
        match self {
            Grantee::CanonicalUser { id, display_name } => {
                w.leaf("ID", id)?;
                w.leaf_opt("DisplayName", display_name.as_ref())?;
            }
            Grantee::Group { uri } => w.leaf("URI", uri)?,
            Grantee::Email { address } => w.leaf("EmailAddress", address)?,
        }
        w.close("Grantee");
        Ok(())
    }

    /// `<Grantee>`: its kind follows from the element that names it (`ID`, `URI` or
    /// `EmailAddress`, exactly one), which is what its `xsi:type` attribute says too.
    fn decode(r: &mut XmlReader<'_>) -> Result<Self, Error> {
        let (mut id, mut display_name, mut uri, mut address) = (None, None, None, None);
        while let Some(name) = r.next_child()? {
            match name {
                "ID" => r.put(&mut id, "ID", XmlReader::string)?,
                "DisplayName" => r.put(&mut display_name, "DisplayName", XmlReader::string)?,
                "URI" => r.put(&mut uri, "URI", XmlReader::string)?,
                "EmailAddress" => r.put(&mut address, "EmailAddress", XmlReader::string)?,
                _ => r.skip()?,
            }
        }
        match (id, uri, address) {
            (Some(id), None, None) => Ok(Grantee::CanonicalUser { id, display_name }),
            (None, Some(uri), None) => Ok(Grantee::Group { uri }),
            (None, None, Some(address)) => Ok(Grantee::Email { address }),
            (None, None, None) => Err(r.error_here(ErrorKind::MissingElement {
                parent: "Grantee",
                element: "ID",
            })),
            _ => Err(r.error_here(ErrorKind::Exclusive {
                parent: "Grantee",
                elements: "ID|URI|EmailAddress",
            })),
        }
    }
}

/// One `<Grant>`: a grantee and what it may do.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Grant {
    /// `Grantee`.
    pub grantee: Grantee,
    /// `Permission`.
    pub permission: Permission,
}

impl Grant {
    /// `permission` for `grantee`.
    pub fn new(grantee: Grantee, permission: Permission) -> Self {
        Self {
            grantee,
            permission,
        }
    }
}

/// `<AccessControlPolicy>`: the result of GetObjectAcl / GetBucketAcl and the body of
/// PutObjectAcl / PutBucketAcl (S3 takes up to 100 grants).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AccessControlPolicy {
    /// `Owner` (S3 requires it in a request body).
    pub owner: Option<Owner>,
    /// `AccessControlList/Grant` entries, in document order.
    pub grants: Vec<Grant>,
}

impl AccessControlPolicy {
    /// A policy of `owner` granting `grants`.
    pub fn new(owner: Owner, grants: Vec<Grant>) -> Self {
        Self {
            owner: Some(owner),
            grants,
        }
    }

    pub(crate) fn encode(&self) -> Result<String, Error> {
        let mut w = XmlWriter::new("AccessControlPolicy");
        if let Some(owner) = &self.owner {
            w.open("Owner");
            w.leaf_opt("ID", owner.id.as_ref())?;
            w.leaf_opt("DisplayName", owner.display_name.as_ref())?;
            w.close("Owner");
        }
        w.open("AccessControlList");
        for grant in &self.grants {
            w.open("Grant");
            grant.grantee.encode(&mut w)?;
            w.leaf("Permission", grant.permission.as_str())?;
            w.close("Grant");
        }
        w.close("AccessControlList");
        Ok(w.finish())
    }
}

impl DecodeBody for AccessControlPolicy {
    const ROOT: &'static str = "AccessControlPolicy";

    fn decode_body(r: &mut XmlReader<'_>, _root: &str) -> Result<Self, Error> {
        let mut out = Self::default();
        while let Some(child) = r.next_child()? {
            match child {
                "Owner" => r.put(&mut out.owner, "Owner", |r, _| Owner::decode(r))?,
                "AccessControlList" => {
                    while let Some(name) = r.next_child()? {
                        if name != "Grant" {
                            r.skip()?;
                            continue;
                        }
                        r.count_entry()?;
                        let (mut grantee, mut permission) = (None, None);
                        while let Some(field) = r.next_child()? {
                            match field {
                                "Grantee" => {
                                    r.put(&mut grantee, "Grantee", |r, _| Grantee::decode(r))?
                                }
                                "Permission" => {
                                    r.put(&mut permission, "Permission", XmlReader::keyword)?
                                }
                                _ => r.skip()?,
                            }
                        }
                        out.grants.push(Grant {
                            grantee: required(grantee, r, "Grant", "Grantee")?,
                            permission: required(permission, r, "Grant", "Permission")?,
                        });
                    }
                }
                _ => r.skip()?,
            }
        }
        Ok(out)
    }
}

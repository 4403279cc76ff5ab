//! Explicit ACL grants as request headers (`x-amz-grant-*`), for object writes
//! (PutObject, CreateMultipartUpload, CopyObject) and PutObjectAcl / PutBucketAcl.

use s3_xml::{Grantee, Permission};

use crate::error::{Error, InvalidInput};
use crate::request::RequestBuilder;

/// Grants sent as `x-amz-grant-read`, `-write`, `-read-acp`, `-write-acp` and
/// `-full-control` headers, each a comma-separated list of `id="…"`, `uri="…"` or
/// `emailAddress="…"`.
///
/// ```
/// use s3_ops::Grants;
/// use s3_xml::{Grantee, Permission};
///
/// let grants = Grants::new()
///     .grant(Permission::Read, Grantee::Group { uri: Grantee::ALL_USERS.into() })
///     .grant(Permission::FullControl, Grantee::CanonicalUser { id: "79a59df9".into(), display_name: None });
/// assert_eq!(
///     grants.header_values(),
///     [
///         ("x-amz-grant-full-control", r#"id="79a59df9""#.to_owned()),
///         ("x-amz-grant-read", r#"uri="http://acs.amazonaws.com/groups/global/AllUsers""#.to_owned()),
///     ]
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    grants: Vec<(Permission, Grantee)>,
}

impl Grants {
    /// No grants.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `permission` for `grantee`.
    pub fn grant(mut self, permission: Permission, grantee: Grantee) -> Self {
        self.grants.push((permission, grantee));
        self
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.grants.is_empty()
    }

    /// The grants.
    pub fn iter(&self) -> impl Iterator<Item = (Permission, &Grantee)> {
        self.grants.iter().map(|(p, g)| (*p, g))
    }

    /// `(header, value)` for each permission granted, in a fixed order.
    pub fn header_values(&self) -> Vec<(&'static str, String)> {
        const HEADERS: [(Permission, &str); 5] = [
            (Permission::FullControl, "x-amz-grant-full-control"),
            (Permission::Read, "x-amz-grant-read"),
            (Permission::ReadAcp, "x-amz-grant-read-acp"),
            (Permission::Write, "x-amz-grant-write"),
            (Permission::WriteAcp, "x-amz-grant-write-acp"),
        ];
        HEADERS
            .iter()
            .filter_map(|(permission, header)| {
                let value = self
                    .grants
                    .iter()
                    .filter(|(p, _)| p == permission)
                    .map(|(_, grantee)| match grantee {
                        Grantee::CanonicalUser { id, .. } => format!("id=\"{id}\""),
                        Grantee::Group { uri } => format!("uri=\"{uri}\""),
                        Grantee::Email { address } => format!("emailAddress=\"{address}\""),
                        // Grantee is non-exhaustive; every kind S3 defines is above.
                        _ => String::new(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                (!value.is_empty()).then_some((*header, value))
            })
            .collect()
    }

    /// Refuses what S3 would refuse: a grantee value with a `"` (it would end the quoted
    /// value), and `WRITE` on an object (`objects` true: S3 defines it for buckets only).
    pub(crate) fn validate(&self, objects: bool) -> Result<(), Error> {
        let invalid = |reason: String| -> Error {
            InvalidInput::Parameter {
                name: "x-amz-grant-*",
                reason,
            }
            .into()
        };
        for (permission, grantee) in &self.grants {
            if objects && *permission == Permission::Write {
                return Err(invalid(
                    "WRITE is a bucket permission; objects take READ, READ_ACP, WRITE_ACP and FULL_CONTROL"
                        .to_owned(),
                ));
            }
            let value = match grantee {
                Grantee::CanonicalUser { id, .. } => id,
                Grantee::Group { uri } => uri,
                Grantee::Email { address } => address,
                _ => continue,
            };
            if value.is_empty() || value.contains('"') {
                return Err(invalid(format!(
                    "grantee {value:?} is empty or holds a '\"', which the header cannot quote"
                )));
            }
        }
        Ok(())
    }

    pub(crate) fn apply<'a>(
        &self,
        objects: bool,
        builder: RequestBuilder<'a>,
    ) -> RequestBuilder<'a> {
        let builder = builder.check(self.validate(objects));
        self.header_values()
            .into_iter()
            .fold(builder, |builder, (header, value)| {
                builder.header(header, value)
            })
    }
}

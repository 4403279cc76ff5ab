//! `acl`: show a bucket's or an object's access control list, or replace it with a canned
//! ACL, explicit grants, or a whole `<AccessControlPolicy>` document.

use std::path::PathBuf;

use s3_wire::Client;
use s3_wire::ops::{
    AclSource, CannedAcl, GetBucketAcl, GetObjectAcl, Grants, PutBucketAcl, PutObjectAcl,
};
use s3_wire::xml::{self, AccessControlPolicy, Grantee, Limits, Permission};
use serde_json::json;

use crate::location::*;
use crate::report::*;

/// `acl`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct AclArgs {
    /// s3://bucket or s3://bucket/key
    pub path: String,
    /// Replace the ACL with a canned one: private, public-read, public-read-write,
    /// authenticated-read, bucket-owner-read, bucket-owner-full-control.
    #[arg(long, value_parser = parse_canned, conflicts_with_all = ["grant", "put"])]
    pub canned: Option<CannedAcl>,
    /// Replace the ACL with grants, PERMISSION=GRANTEE (repeatable): PERMISSION is read,
    /// write, read-acp, write-acp or full-control; GRANTEE is id=CANONICAL_ID, uri=GROUP_URI
    /// or email=ADDRESS.
    #[arg(long, value_parser = parse_grant, conflicts_with = "put")]
    pub grant: Vec<(Permission, Grantee)>,
    /// Replace the ACL with the `<AccessControlPolicy>` document in FILE.
    #[arg(long, value_name = "FILE")]
    pub put: Option<PathBuf>,
    /// The object version (default: the current one).
    #[arg(long)]
    pub version_id: Option<String>,
}

fn parse_canned(text: &str) -> Result<CannedAcl, String> {
    CannedAcl::parse(text).ok_or_else(|| format!("unknown canned ACL `{text}`"))
}

fn parse_grant(text: &str) -> Result<(Permission, Grantee), String> {
    let (permission, grantee) = text
        .split_once('=')
        .ok_or_else(|| format!("expected PERMISSION=GRANTEE, got `{text}`"))?;
    let permission = Permission::parse(&permission.to_ascii_uppercase().replace('-', "_"))
        .ok_or_else(|| {
            format!(
                "unknown permission `{permission}` (read, write, read-acp, write-acp, full-control)"
            )
        })?;
    let grantee = match grantee.split_once('=') {
        Some(("id", id)) => Grantee::CanonicalUser {
            id: id.to_owned(),
            display_name: None,
        },
        Some(("uri", uri)) => Grantee::Group {
            uri: uri.to_owned(),
        },
        Some(("email", address)) => Grantee::Email {
            address: address.to_owned(),
        },
        _ => return Err(format!("expected id=…, uri=… or email=…, got `{grantee}`")),
    };
    Ok((permission, grantee))
}

pub(crate) async fn acl(client: &Client, out: &Out, args: &AclArgs) -> Result<()> {
    let (b, k) = s3_location(&args.path)?;
    let bn = bucket_name(&b)?;
    let target = if k.is_empty() {
        format!("s3://{b}")
    } else {
        format!("s3://{b}/{k}")
    };
    let source = if let Some(acl) = args.canned {
        Some(AclSource::Canned(acl))
    } else if !args.grant.is_empty() {
        let grants = args
            .grant
            .iter()
            .fold(Grants::new(), |grants, (p, g)| grants.grant(*p, g.clone()));
        Some(AclSource::Grants(grants))
    } else if let Some(file) = &args.put {
        let text = std::fs::read(file)
            .map_err(|e| Failure::new(format!("cannot read `{}`: {e}", file.display())))?;
        let policy = xml::decode_access_control_policy(&text, &Limits::default())
            .map_err(|e| usage(format!("--put {}: {e}", file.display())))?;
        Some(AclSource::Policy(policy))
    } else {
        None
    };
    let Some(source) = source else {
        let policy = if k.is_empty() {
            client
                .get_bucket_acl(GetBucketAcl::new(bn))
                .await
                .map(|o| o.result)
        } else {
            let mut get = GetObjectAcl::new(bn, key_name(&k)?);
            if let Some(version) = &args.version_id {
                get = get.version_id(version.clone());
            }
            client.get_object_acl(get).await.map(|o| o.result)
        }
        .map_err(|e| failure_of(&format!("read the ACL of {target}"), &b, &e))?;
        show(out, &target, &policy);
        return Ok(());
    };
    if k.is_empty() {
        client.put_bucket_acl(PutBucketAcl::new(bn, source)).await
    } else {
        let mut put = PutObjectAcl::new(bn, key_name(&k)?, source);
        if let Some(version) = &args.version_id {
            put = put.version_id(version.clone());
        }
        client.put_object_acl(put).await
    }
    .map_err(|e| failure_of(&format!("set the ACL of {target}"), &b, &e))?;
    out.line(
        format!("acl: set ({target})"),
        json!({"path": target, "result": "set"}),
    );
    Ok(())
}

/// One line per grant: the permission and the grantee.
fn show(out: &Out, target: &str, policy: &AccessControlPolicy) {
    let owner = policy.owner.as_ref().and_then(|o| o.id.clone());
    let grants: Vec<(String, String)> = policy
        .grants
        .iter()
        .map(|grant| {
            let grantee = match &grant.grantee {
                Grantee::CanonicalUser { id, .. } => format!("id={id}"),
                Grantee::Group { uri } => format!("uri={uri}"),
                Grantee::Email { address } => format!("email={address}"),
                other => format!("{other:?}"),
            };
            (grant.permission.as_str().to_owned(), grantee)
        })
        .collect();
    let text = std::iter::once(format!("owner\t{}", owner.as_deref().unwrap_or("-")))
        .chain(grants.iter().map(|(p, g)| format!("{p}\t{g}")))
        .collect::<Vec<_>>()
        .join("\n");
    out.line(
        text,
        json!({"path": target, "owner": owner,
               "grants": grants.iter().map(|(p, g)| json!({"permission": p, "grantee": g})).collect::<Vec<_>>()}),
    );
}

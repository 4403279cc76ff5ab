//! The bucket configuration commands: `versioning`, and `lifecycle`, `policy`, `cors`,
//! `encryption`, `tagging`, `public-access-block` with `--get` (the default), `--put FILE`
//! and `--delete`. Documents are read and printed in S3's own form (the XML S3 takes and
//! answers with; a policy's JSON), so what the AWS documentation shows can be used as it is;
//! a document is decoded, strictly, before anything is sent.

use std::path::{Path, PathBuf};

use s3_wire::Client;
use s3_wire::ops::{
    BucketName, DeleteBucketCors, DeleteBucketEncryption, DeleteBucketLifecycle,
    DeleteBucketPolicy, DeleteBucketTagging, DeleteObjectTagging, DeletePublicAccessBlock,
    GetBucketCors, GetBucketEncryption, GetBucketLifecycleConfiguration, GetBucketPolicy,
    GetBucketTagging, GetBucketVersioning, GetObjectTagging, GetPublicAccessBlock, PutBucketCors,
    PutBucketEncryption, PutBucketLifecycleConfiguration, PutBucketPolicy, PutBucketTagging,
    PutBucketVersioning, PutObjectTagging, PutPublicAccessBlock,
};
use s3_wire::xml::{self, Limits, VersioningConfiguration, VersioningStatus};
use serde_json::json;

use crate::location::*;
use crate::report::*;

/// `versioning`: show a bucket's versioning state, or change it.
#[derive(Debug, clap::Args)]
pub(crate) struct VersioningArgs {
    /// s3://bucket
    pub bucket: String,
    /// Keep every version of every object from now on.
    #[arg(long, conflicts_with = "suspend")]
    pub enable: bool,
    /// Stop creating versions (existing versions stay).
    #[arg(long)]
    pub suspend: bool,
}

/// A bucket configuration command's arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct ConfigArgs {
    /// s3://bucket (for `tagging`, s3://bucket/key names an object's tags)
    pub path: String,
    /// Print the configuration (the default).
    #[arg(long, conflicts_with_all = ["put", "delete"])]
    pub get: bool,
    /// Replace the configuration with the document in FILE, as S3 takes it (XML; JSON for a
    /// policy).
    #[arg(long, value_name = "FILE", conflicts_with = "delete")]
    pub put: Option<PathBuf>,
    /// Remove the configuration.
    #[arg(long)]
    pub delete: bool,
}

/// Which configuration a [`ConfigArgs`] command handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConfigKind {
    Lifecycle,
    Policy,
    Cors,
    Encryption,
    Tagging,
    PublicAccessBlock,
}

impl ConfigKind {
    fn name(self) -> &'static str {
        match self {
            ConfigKind::Lifecycle => "lifecycle configuration",
            ConfigKind::Policy => "bucket policy",
            ConfigKind::Cors => "CORS configuration",
            ConfigKind::Encryption => "default encryption",
            ConfigKind::Tagging => "tags",
            ConfigKind::PublicAccessBlock => "public access block",
        }
    }
}

pub(crate) async fn versioning(client: &Client, out: &Out, args: &VersioningArgs) -> Result<()> {
    let (b, bn) = bucket_only(&args.bucket)?;
    let status = match (args.enable, args.suspend) {
        (true, _) => Some(VersioningStatus::Enabled),
        (_, true) => Some(VersioningStatus::Suspended),
        _ => None,
    };
    if let Some(status) = status {
        client
            .put_bucket_versioning(PutBucketVersioning::new(
                bn,
                VersioningConfiguration::new(status),
            ))
            .await
            .map_err(|e| failure_of(&format!("set versioning of `{b}`"), &b, &e))?;
        out.line(
            format!("versioning: {status} (s3://{b})"),
            json!({"bucket": b, "versioning": status.as_str()}),
        );
        return Ok(());
    }
    let state = client
        .get_bucket_versioning(GetBucketVersioning::new(bn))
        .await
        .map_err(|e| failure_of(&format!("read versioning of `{b}`"), &b, &e))?
        .result;
    let shown = state.status.map_or("unversioned", VersioningStatus::as_str);
    let mfa = state.mfa_delete.map(|m| m.as_str());
    out.line(
        match mfa {
            Some(mfa) => format!("{shown}\tMFA delete {mfa}"),
            None => shown.to_owned(),
        },
        json!({"bucket": b, "versioning": state.status.map(VersioningStatus::as_str), "mfa_delete": mfa}),
    );
    Ok(())
}

pub(crate) async fn configuration(
    client: &Client,
    out: &Out,
    kind: ConfigKind,
    args: &ConfigArgs,
) -> Result<()> {
    let (b, key) = s3_location(&args.path)?;
    if !key.is_empty() {
        if kind == ConfigKind::Tagging {
            return object_tags(client, out, args, &b, &key).await;
        }
        return Err(usage(format!(
            "`{}` names an object; the {} belongs to a bucket: s3://{b}",
            args.path,
            kind.name()
        )));
    }
    let bn = bucket_name(&b)?;
    let what = |verb: &str| format!("{verb} the {} of `{b}`", kind.name());
    if let Some(file) = &args.put {
        let document = read_document(file)?;
        put(client, kind, bn, &document, file)
            .await
            .map_err(|e| failure_of(&what("set"), &b, &e))?;
        out.line(
            format!("{}: set (s3://{b})", kind.name()),
            json!({"bucket": b, "configuration": kind.name(), "result": "set"}),
        );
    } else if args.delete {
        delete(client, kind, bn)
            .await
            .map_err(|e| failure_of(&what("remove"), &b, &e))?;
        out.line(
            format!("{}: removed (s3://{b})", kind.name()),
            json!({"bucket": b, "configuration": kind.name(), "result": "removed"}),
        );
    } else {
        let document = get(client, kind, bn)
            .await
            .map_err(|e| failure_of(&what("read"), &b, &e))?;
        out.line(
            document.trim_end(),
            json!({"bucket": b, "configuration": kind.name(), "document": document}),
        );
    }
    Ok(())
}

/// The document of `--put`, decoded (strictly) before anything is sent.
fn decoded<T>(
    document: &str,
    file: &Path,
    decode: fn(&[u8], &Limits) -> Result<T, xml::Error>,
) -> Result<T, s3_wire::Error> {
    decode(document.as_bytes(), &Limits::default()).map_err(|error| {
        s3_wire::Error::from(s3_wire::ops::Error::InvalidInput(
            s3_wire::ops::InvalidInput::Parameter {
                name: "--put",
                reason: format!("{}: {error}", file.display()),
            },
        ))
    })
}

async fn put(
    client: &Client,
    kind: ConfigKind,
    bucket: BucketName,
    document: &str,
    file: &Path,
) -> Result<(), s3_wire::Error> {
    match kind {
        ConfigKind::Lifecycle => {
            let config = decoded(document, file, xml::decode_lifecycle_configuration)?;
            client
                .put_bucket_lifecycle_configuration(PutBucketLifecycleConfiguration::new(
                    bucket, config,
                ))
                .await?;
        }
        ConfigKind::Policy => {
            client
                .put_bucket_policy(PutBucketPolicy::new(bucket, document))
                .await?;
        }
        ConfigKind::Cors => {
            let config = decoded(document, file, xml::decode_cors_configuration)?;
            client
                .put_bucket_cors(PutBucketCors::new(bucket, config))
                .await?;
        }
        ConfigKind::Encryption => {
            let config = decoded(
                document,
                file,
                xml::decode_server_side_encryption_configuration,
            )?;
            client
                .put_bucket_encryption(PutBucketEncryption::new(bucket, config))
                .await?;
        }
        ConfigKind::Tagging => {
            let tags = decoded(document, file, xml::decode_tagging)?;
            client
                .put_bucket_tagging(PutBucketTagging::new(bucket, tags))
                .await?;
        }
        ConfigKind::PublicAccessBlock => {
            let config = decoded(
                document,
                file,
                xml::decode_public_access_block_configuration,
            )?;
            client
                .put_public_access_block(PutPublicAccessBlock::new(bucket, config))
                .await?;
        }
    }
    Ok(())
}

async fn delete(
    client: &Client,
    kind: ConfigKind,
    bucket: BucketName,
) -> Result<(), s3_wire::Error> {
    match kind {
        ConfigKind::Lifecycle => {
            client
                .delete_bucket_lifecycle(DeleteBucketLifecycle::new(bucket))
                .await?;
        }
        ConfigKind::Policy => {
            client
                .delete_bucket_policy(DeleteBucketPolicy::new(bucket))
                .await?;
        }
        ConfigKind::Cors => {
            client
                .delete_bucket_cors(DeleteBucketCors::new(bucket))
                .await?;
        }
        ConfigKind::Encryption => {
            client
                .delete_bucket_encryption(DeleteBucketEncryption::new(bucket))
                .await?;
        }
        ConfigKind::Tagging => {
            client
                .delete_bucket_tagging(DeleteBucketTagging::new(bucket))
                .await?;
        }
        ConfigKind::PublicAccessBlock => {
            client
                .delete_public_access_block(DeletePublicAccessBlock::new(bucket))
                .await?;
        }
    }
    Ok(())
}

/// The configuration as S3's document (re-encoded from what was decoded, so it is what the
/// client understood; a policy verbatim).
async fn get(
    client: &Client,
    kind: ConfigKind,
    bucket: BucketName,
) -> Result<String, s3_wire::Error> {
    let encoded = match kind {
        ConfigKind::Lifecycle => xml::encode_lifecycle_configuration(
            &client
                .get_bucket_lifecycle_configuration(GetBucketLifecycleConfiguration::new(bucket))
                .await?
                .result,
        ),
        ConfigKind::Policy => {
            return Ok(client
                .get_bucket_policy(GetBucketPolicy::new(bucket))
                .await?
                .policy);
        }
        ConfigKind::Cors => xml::encode_cors_configuration(
            &client
                .get_bucket_cors(GetBucketCors::new(bucket))
                .await?
                .result,
        ),
        ConfigKind::Encryption => xml::encode_server_side_encryption_configuration(
            &client
                .get_bucket_encryption(GetBucketEncryption::new(bucket))
                .await?
                .result,
        ),
        ConfigKind::Tagging => xml::encode_tagging(
            &client
                .get_bucket_tagging(GetBucketTagging::new(bucket))
                .await?
                .result,
        ),
        ConfigKind::PublicAccessBlock => xml::encode_public_access_block_configuration(
            &client
                .get_public_access_block(GetPublicAccessBlock::new(bucket))
                .await?
                .result,
        ),
    };
    // What was decoded encodes again: only characters XML cannot carry could fail, and the
    // decoder never yields those.
    Ok(encoded.unwrap_or_default())
}

async fn object_tags(
    client: &Client,
    out: &Out,
    args: &ConfigArgs,
    b: &str,
    k: &str,
) -> Result<()> {
    let (bn, kn) = (bucket_name(b)?, key_name(k)?);
    let target = format!("s3://{b}/{k}");
    let fail =
        |verb: &str, e: &s3_wire::Error| failure_of(&format!("{verb} the tags of {target}"), b, e);
    if let Some(file) = &args.put {
        let document = read_document(file)?;
        let tags = decoded(&document, file, xml::decode_tagging).map_err(|e| fail("set", &e))?;
        let pairs = tags.tags.into_iter().map(|t| (t.key, t.value));
        client
            .put_object_tagging(PutObjectTagging::new(bn, kn, pairs))
            .await
            .map_err(|e| fail("set", &e))?;
        out.line(
            format!("tags: set ({target})"),
            json!({"bucket": b, "key": k, "result": "set"}),
        );
    } else if args.delete {
        client
            .delete_object_tagging(DeleteObjectTagging::new(bn, kn))
            .await
            .map_err(|e| fail("remove", &e))?;
        out.line(
            format!("tags: removed ({target})"),
            json!({"bucket": b, "key": k, "result": "removed"}),
        );
    } else {
        let tags = client
            .get_object_tagging(GetObjectTagging::new(bn, kn))
            .await
            .map_err(|e| fail("read", &e))?
            .tagging;
        let document = xml::encode_tagging(&tags).unwrap_or_default();
        out.line(
            &document,
            json!({"bucket": b, "key": k, "document": document}),
        );
    }
    Ok(())
}

fn bucket_only(path: &str) -> Result<(String, BucketName)> {
    let (b, key) = s3_location(path)?;
    if !key.is_empty() {
        return Err(usage(format!(
            "`{path}` names an object; expected s3://bucket"
        )));
    }
    let bn = bucket_name(&b)?;
    Ok((b, bn))
}

fn read_document(file: &Path) -> Result<String> {
    std::fs::read_to_string(file)
        .map_err(|e| Failure::new(format!("cannot read `{}`: {e}", file.display())))
}

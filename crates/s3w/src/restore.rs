//! `restore`: a temporary copy of an archived object (GLACIER, DEEP_ARCHIVE, or an archive
//! tier of INTELLIGENT_TIERING), readable for some days.

use s3_wire::Client;
use s3_wire::ops::RestoreObject;
use s3_wire::xml::{RestoreRequest, RestoreTier};
use serde_json::json;

use crate::location::*;
use crate::report::*;

/// `restore`'s arguments.
#[derive(Debug, clap::Args)]
pub(crate) struct RestoreArgs {
    /// s3://bucket/key
    pub path: String,
    /// Days the restored copy stays readable.
    #[arg(long, default_value_t = 1)]
    pub days: u32,
    /// How fast (and at what cost): Standard, Bulk or Expedited.
    #[arg(long, default_value = "Standard", value_parser = parse_tier)]
    pub tier: RestoreTier,
    /// The version to restore (default: the current one).
    #[arg(long)]
    pub version_id: Option<String>,
}

fn parse_tier(text: &str) -> Result<RestoreTier, String> {
    RestoreTier::ALL
        .iter()
        .copied()
        .find(|tier| tier.as_str().eq_ignore_ascii_case(text))
        .ok_or_else(|| format!("unknown tier `{text}` (Standard, Bulk or Expedited)"))
}

pub(crate) async fn restore(client: &Client, out: &Out, args: &RestoreArgs) -> Result<()> {
    let (bn, kn, b, k) = object_key(&args.path)?;
    let mut op = RestoreObject::new(bn, kn, RestoreRequest::new(args.days, args.tier));
    if let Some(version) = &args.version_id {
        op = op.version_id(version.clone());
    }
    let restored = client
        .restore_object(op)
        .await
        .map_err(|e| failure_of(&format!("restore s3://{b}/{k}"), &b, &e))?;
    let (text, result) = if restored.already_restored {
        (
            format!(
                "restore: s3://{b}/{k} is already restored; it stays readable {} more day(s)",
                args.days
            ),
            "already-restored",
        )
    } else {
        (
            format!(
                "restore: started for s3://{b}/{k} ({} tier, {} day(s)); `s3w stat` shows when it is ready",
                args.tier, args.days
            ),
            "started",
        )
    };
    out.line(
        text,
        json!({"bucket": b, "key": k, "days": args.days, "tier": args.tier.as_str(), "result": result}),
    );
    Ok(())
}

//! `presign --post`: the URL and form fields of a browser upload (a presigned POST).

use std::time::Duration;

use s3_wire::Client;
use s3_wire::PostConditions;
use serde_json::{Map, Value, json};

use crate::location::*;
use crate::report::*;

/// The `--post` flags of `presign`.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct PostArgs {
    /// A presigned POST (an upload form) instead of a URL: s3://bucket/key for that key,
    /// s3://bucket/prefix/ for any key under the prefix.
    #[arg(long)]
    pub post: bool,
    /// The upload's size must be MIN:MAX bytes.
    #[arg(long, requires = "post", value_parser = parse_range)]
    pub content_length_range: Option<(u64, u64)>,
    /// The upload's Content-Type must start with this (e.g. `image/`).
    #[arg(long, requires = "post")]
    pub content_type_prefix: Option<String>,
}

fn parse_range(text: &str) -> Result<(u64, u64), String> {
    let (min, max) = text
        .split_once(':')
        .ok_or_else(|| format!("expected MIN:MAX, got `{text}`"))?;
    let number = |n: &str| {
        n.trim()
            .parse::<u64>()
            .map_err(|_| format!("not a byte count: `{n}`"))
    };
    Ok((number(min)?, number(max)?))
}

pub(crate) async fn presign_post(
    client: &Client,
    out: &Out,
    path: &str,
    expires_in: u64,
    args: &PostArgs,
) -> Result<()> {
    let (b, k) = s3_location(path)?;
    let bn = bucket_name(&b)?;
    let mut conditions = if k.is_empty() || k.ends_with('/') {
        PostConditions::key_prefix(k.clone())
    } else {
        PostConditions::key(key_name(&k)?)
    };
    if let Some((min, max)) = args.content_length_range {
        conditions = conditions.content_length_range(min, max);
    }
    if let Some(prefix) = &args.content_type_prefix {
        conditions = conditions.content_type_prefix(prefix.clone());
    }
    let form = client
        .presign_post(&bn, &conditions, Duration::from_secs(expires_in))
        .await
        .map_err(|e| failure_of("presign a POST", &b, &e))?;
    let text = std::iter::once(form.url().to_owned())
        .chain(
            form.fields()
                .iter()
                .map(|(name, value)| format!("{name}={value}")),
        )
        .collect::<Vec<_>>()
        .join("\n");
    let fields: Map<String, Value> = form
        .fields()
        .iter()
        .map(|(name, value)| (name.clone(), json!(value)))
        .collect();
    out.line(
        text,
        json!({"url": form.url(), "fields": fields, "expires_in": expires_in}),
    );
    Ok(())
}

//! Object Lock: the `object-lock`, `retention` and `legal-hold` commands, and the
//! `--object-lock-*` flags of uploads (`cp`, `put`, `sync`), named as the AWS CLI's
//! `s3api put-object` names them.

use std::time::{Duration, SystemTime};

use s3_wire::Client;
use s3_wire::ops::{
    GetObjectLegalHold, GetObjectLockConfiguration, GetObjectRetention, ObjectAttributes,
    PutObjectLegalHold, PutObjectLockConfiguration, PutObjectRetention,
};
use s3_wire::xml::{
    DefaultRetention, LegalHoldStatus, ObjectLockConfiguration, Retention, RetentionMode,
    RetentionPeriod, Timestamp,
};
use serde_json::json;

use crate::location::*;
use crate::report::*;

/// The Object Lock flags of uploads.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct ObjectLockArgs {
    /// Object Lock retention mode of the upload: GOVERNANCE or COMPLIANCE (with
    /// --object-lock-retain-until-date; the bucket must have Object Lock enabled).
    #[arg(long, value_parser = parse_mode, requires = "object_lock_retain_until_date")]
    pub object_lock_mode: Option<RetentionMode>,
    /// Until when the retention holds: an RFC 3339 time (2030-01-31T00:00:00Z).
    #[arg(long, value_parser = parse_time, requires = "object_lock_mode")]
    pub object_lock_retain_until_date: Option<Timestamp>,
    /// Legal hold of the upload: ON or OFF.
    #[arg(long, value_parser = parse_hold)]
    pub object_lock_legal_hold_status: Option<LegalHoldStatus>,
}

impl ObjectLockArgs {
    /// The flags given.
    pub(crate) fn given(&self) -> Vec<&'static str> {
        [
            (self.object_lock_mode.is_some(), "--object-lock-mode"),
            (
                self.object_lock_retain_until_date.is_some(),
                "--object-lock-retain-until-date",
            ),
            (
                self.object_lock_legal_hold_status.is_some(),
                "--object-lock-legal-hold-status",
            ),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect()
    }

    /// The attributes with the retention and legal hold asked for.
    pub(crate) fn apply(&self, mut attributes: ObjectAttributes) -> Result<ObjectAttributes> {
        if let (Some(mode), Some(until)) =
            (self.object_lock_mode, self.object_lock_retain_until_date)
        {
            let until = until.to_system_time().ok_or_else(|| {
                usage(format!(
                    "--object-lock-retain-until-date {until}: out of range"
                ))
            })?;
            attributes = attributes.object_lock_retention(mode, until);
        }
        if let Some(status) = self.object_lock_legal_hold_status {
            attributes = attributes.object_lock_legal_hold(status);
        }
        Ok(attributes)
    }
}

fn parse_mode(text: &str) -> Result<RetentionMode, String> {
    RetentionMode::parse(&text.to_ascii_uppercase())
        .ok_or_else(|| format!("unknown mode `{text}` (GOVERNANCE or COMPLIANCE)"))
}

fn parse_hold(text: &str) -> Result<LegalHoldStatus, String> {
    LegalHoldStatus::parse(&text.to_ascii_uppercase())
        .ok_or_else(|| format!("unknown legal hold status `{text}` (ON or OFF)"))
}

fn parse_time(text: &str) -> Result<Timestamp, String> {
    text.parse().map_err(|e| format!("`{text}`: {e}"))
}

/// `retention`: show an object version's retention, or set it.
#[derive(Debug, clap::Args)]
pub(crate) struct RetentionArgs {
    /// s3://bucket/key
    pub path: String,
    /// The mode to set: GOVERNANCE or COMPLIANCE (with --until or --days).
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<RetentionMode>,
    /// Retain until this RFC 3339 time.
    #[arg(long, value_parser = parse_time, conflicts_with = "days")]
    pub until: Option<Timestamp>,
    /// Retain for this many days from now.
    #[arg(long)]
    pub days: Option<u64>,
    /// Remove a governance retention (with --bypass-governance-retention).
    #[arg(long, conflicts_with_all = ["mode", "until", "days"])]
    pub clear: bool,
    /// Shorten or remove a governance retention (needs s3:BypassGovernanceRetention).
    #[arg(long)]
    pub bypass_governance_retention: bool,
    /// The version to act on (default: the current one).
    #[arg(long)]
    pub version_id: Option<String>,
}

/// `object-lock`: show a bucket's Object Lock configuration, or set it.
#[derive(Debug, clap::Args)]
pub(crate) struct ObjectLockConfigArgs {
    /// s3://bucket
    pub bucket: String,
    /// The default retention mode of new objects: GOVERNANCE or COMPLIANCE (with --days or
    /// --years).
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<RetentionMode>,
    /// The default retention period in days.
    #[arg(long, conflicts_with = "years")]
    pub days: Option<u32>,
    /// The default retention period in years.
    #[arg(long)]
    pub years: Option<u32>,
    /// Enable Object Lock with no default retention (removes a default; Object Lock itself
    /// cannot be turned off).
    #[arg(long, conflicts_with_all = ["mode", "days", "years"])]
    pub enable: bool,
}

pub(crate) async fn object_lock_configuration(
    client: &Client,
    out: &Out,
    args: &ObjectLockConfigArgs,
) -> Result<()> {
    let (b, _) = s3_location(&args.bucket)?;
    let bn = bucket_name(&b)?;
    let period = match (args.days, args.years) {
        (Some(days), _) => Some(RetentionPeriod::Days(days)),
        (None, Some(years)) => Some(RetentionPeriod::Years(years)),
        (None, None) => None,
    };
    let configuration = match (args.mode, period, args.enable) {
        (Some(mode), Some(period), _) => Some(ObjectLockConfiguration::enabled(Some(
            DefaultRetention::new(mode, period),
        ))),
        (None, None, true) => Some(ObjectLockConfiguration::enabled(None)),
        (None, None, false) => None,
        _ => {
            return Err(usage(
                "a default retention needs --mode and a period (--days or --years)",
            ));
        }
    };
    let Some(configuration) = configuration else {
        let got = client
            .get_object_lock_configuration(GetObjectLockConfiguration::new(bn))
            .await
            .map_err(|e| {
                failure_of(
                    &format!("read the Object Lock configuration of s3://{b}"),
                    &b,
                    &e,
                )
            })?
            .result;
        let (text, value) = describe_lock(&b, &got);
        out.line(text, value);
        return Ok(());
    };
    client
        .put_object_lock_configuration(PutObjectLockConfiguration::new(bn, configuration))
        .await
        .map_err(|e| {
            failure_of(
                &format!("set the Object Lock configuration of s3://{b}"),
                &b,
                &e,
            )
        })?;
    let (text, mut value) = describe_lock(&b, &configuration);
    value["result"] = json!("set");
    out.line(format!("object lock: {text} (s3://{b})"), value);
    Ok(())
}

/// A configuration as a line (`Enabled GOVERNANCE 30 days`) and as JSON.
fn describe_lock(
    bucket: &str,
    configuration: &ObjectLockConfiguration,
) -> (String, serde_json::Value) {
    let enabled = if configuration.enabled {
        "Enabled"
    } else {
        "not enabled"
    };
    let default = configuration.default_retention.map(|d| {
        let (count, unit) = match d.period {
            RetentionPeriod::Days(days) => (days, "days"),
            RetentionPeriod::Years(years) => (years, "years"),
        };
        (d.mode.as_str(), count, unit)
    });
    let text = match default {
        Some((mode, count, unit)) => format!("{enabled}\t{mode}\t{count} {unit}"),
        None => format!("{enabled}\tno default retention"),
    };
    let value = json!({
        "bucket": bucket, "enabled": configuration.enabled,
        "mode": default.map(|d| d.0),
        "days": default.filter(|d| d.2 == "days").map(|d| d.1),
        "years": default.filter(|d| d.2 == "years").map(|d| d.1),
    });
    (text, value)
}

/// `legal-hold`: show an object version's legal hold, or put it on or off.
#[derive(Debug, clap::Args)]
pub(crate) struct LegalHoldArgs {
    /// s3://bucket/key
    pub path: String,
    /// Put the legal hold on.
    #[arg(long, conflicts_with = "off")]
    pub on: bool,
    /// Lift the legal hold.
    #[arg(long)]
    pub off: bool,
    /// The version to act on (default: the current one).
    #[arg(long)]
    pub version_id: Option<String>,
}

pub(crate) async fn retention(client: &Client, out: &Out, args: &RetentionArgs) -> Result<()> {
    let (bn, kn, b, k) = object_key(&args.path)?;
    let target = format!("s3://{b}/{k}");
    let until = match (args.until, args.days) {
        (Some(until), _) => Some(until),
        (None, Some(days)) => {
            let at = SystemTime::now() + Duration::from_secs(days.saturating_mul(86_400));
            Some(
                Timestamp::from_system_time(at)
                    .ok_or_else(|| usage(format!("--days {days}: out of range")))?,
            )
        }
        (None, None) => None,
    };
    let retention = match (args.mode, until, args.clear) {
        (Some(mode), Some(until), _) => Some(Retention::new(mode, until)),
        (None, None, true) => Some(Retention::default()),
        (None, None, false) => None,
        _ => return Err(usage("a retention needs --mode and --until (or --days)")),
    };
    let Some(retention) = retention else {
        let mut get = GetObjectRetention::new(bn, kn);
        if let Some(version) = &args.version_id {
            get = get.version_id(version.clone());
        }
        let got = client
            .get_object_retention(get)
            .await
            .map_err(|e| failure_of(&format!("read the retention of {target}"), &b, &e))?
            .result;
        let mode = got.mode.map(RetentionMode::as_str);
        let until = got.retain_until_date.map(|t| t.to_string());
        out.line(
            format!(
                "{}\t{}",
                mode.unwrap_or("none"),
                until.as_deref().unwrap_or("-")
            ),
            json!({"bucket": b, "key": k, "mode": mode, "retain_until_date": until}),
        );
        return Ok(());
    };
    let mut put = PutObjectRetention::new(bn, kn, retention.clone())
        .bypass_governance_retention(args.bypass_governance_retention);
    if let Some(version) = &args.version_id {
        put = put.version_id(version.clone());
    }
    client
        .put_object_retention(put)
        .await
        .map_err(|e| failure_of(&format!("set the retention of {target}"), &b, &e))?;
    let mode = retention.mode.map(RetentionMode::as_str);
    let until = retention.retain_until_date.map(|t| t.to_string());
    out.line(
        format!(
            "retention: {} until {} ({target})",
            mode.unwrap_or("none"),
            until.as_deref().unwrap_or("-")
        ),
        json!({"bucket": b, "key": k, "mode": mode, "retain_until_date": until, "result": "set"}),
    );
    Ok(())
}

pub(crate) async fn legal_hold(client: &Client, out: &Out, args: &LegalHoldArgs) -> Result<()> {
    let (bn, kn, b, k) = object_key(&args.path)?;
    let target = format!("s3://{b}/{k}");
    let status = match (args.on, args.off) {
        (true, _) => Some(LegalHoldStatus::On),
        (_, true) => Some(LegalHoldStatus::Off),
        _ => None,
    };
    let Some(status) = status else {
        let mut get = GetObjectLegalHold::new(bn, kn);
        if let Some(version) = &args.version_id {
            get = get.version_id(version.clone());
        }
        let got = client
            .get_object_legal_hold(get)
            .await
            .map_err(|e| failure_of(&format!("read the legal hold of {target}"), &b, &e))?
            .result;
        out.line(
            got.status.as_str(),
            json!({"bucket": b, "key": k, "legal_hold": got.status.as_str()}),
        );
        return Ok(());
    };
    let mut put = PutObjectLegalHold::new(bn, kn, status);
    if let Some(version) = &args.version_id {
        put = put.version_id(version.clone());
    }
    client
        .put_object_legal_hold(put)
        .await
        .map_err(|e| failure_of(&format!("set the legal hold of {target}"), &b, &e))?;
    out.line(
        format!("legal hold: {status} ({target})"),
        json!({"bucket": b, "key": k, "legal_hold": status.as_str(), "result": "set"}),
    );
    Ok(())
}

//! `rm`: one object, or a directory through DeleteObjects, a batch per listing page as it
//! arrives (never the whole listing in memory).

use s3_wire::Client;
use s3_wire::ops::DeleteObject;
use s3_wire::ops::ops::DeleteObjects;
use serde_json::json;

use crate::filter::*;
use crate::listing::*;
use crate::location::*;
use crate::report::*;

/// What `rm` is asked to do.
pub(crate) struct Removal<'a> {
    pub(crate) recursive: bool,
    pub(crate) dryrun: bool,
    /// One version, deleted for good.
    pub(crate) version_id: Option<&'a str>,
    pub(crate) bypass_governance_retention: bool,
}

pub(crate) async fn rm(
    client: &Client,
    out: &Out,
    path: &str,
    removal: &Removal<'_>,
    filter: &Filter,
) -> Result<()> {
    let Removal {
        recursive, dryrun, ..
    } = *removal;
    let (b, k) = s3_location(path)?;
    if !recursive {
        if k.is_empty() {
            return Err(usage(format!(
                "`{path}` names no object: use --recursive to delete a directory"
            )));
        }
        if dryrun {
            out.line(
                format!("(dryrun) delete: s3://{b}/{k}"),
                json!({"type": "dryrun", "operation": "delete", "bucket": b, "key": k}),
            );
            return Ok(());
        }
        let mut delete = DeleteObject::new(bucket_name(&b)?, key_name(&k)?)
            .bypass_governance_retention(removal.bypass_governance_retention);
        if let Some(version) = removal.version_id {
            delete = delete.version_id(version);
        }
        let deleted = client
            .delete_object(delete)
            .await
            .map_err(|e| failure_of(&format!("delete s3://{b}/{k}"), &b, &e))?;
        let version = deleted.version_id.filter(|_| removal.version_id.is_some());
        let shown = match &version {
            Some(version) => format!("delete: s3://{b}/{k} (version {version})"),
            None => format!("delete: s3://{b}/{k}"),
        };
        out.line(
            shown,
            json!({"type": "result", "operation": "delete", "bucket": b, "key": k,
                   "version_id": version}),
        );
        return Ok(());
    }
    let prefix = directory_prefix(&k);
    each_page(client, &b, &prefix, false, async |page, _| {
        let keys: Vec<String> = page
            .into_iter()
            .map(|o| o.key)
            .filter(|key| filter.keeps(&key[prefix.len()..]))
            .collect();
        if dryrun {
            for key in &keys {
                out.line(
                    format!("(dryrun) delete: s3://{b}/{key}"),
                    json!({"type": "dryrun", "operation": "delete", "bucket": b, "key": key}),
                );
            }
            return Ok(());
        }
        if keys.is_empty() {
            return Ok(());
        }
        let names = keys
            .iter()
            .map(|k| key_name(k))
            .collect::<Result<Vec<_>>>()?;
        let result = client
            .delete_objects(
                DeleteObjects::new(bucket_name(&b)?, names)
                    .bypass_governance_retention(removal.bypass_governance_retention),
            )
            .await
            .map_err(|e| failure_of(&format!("delete objects in s3://{b}"), &b, &e))?;
        for deleted in &result.result.deleted {
            out.line(
                format!("delete: s3://{b}/{}", deleted.key),
                json!({"type": "result", "operation": "delete", "bucket": b, "key": deleted.key}),
            );
        }
        for error in &result.result.errors {
            let key = error.key.clone().unwrap_or_default();
            out.error(
                format!(
                    "delete s3://{b}/{key}: {} ({})",
                    error.message.as_deref().unwrap_or("refused"),
                    error.code.as_deref().unwrap_or("?")
                ),
                json!({"operation": "delete", "bucket": b, "key": key, "code": error.code}),
            );
        }
        Ok(())
    })
    .await
}

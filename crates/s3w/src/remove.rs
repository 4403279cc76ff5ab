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

pub(crate) async fn rm(
    client: &Client,
    out: &Out,
    path: &str,
    recursive: bool,
    dryrun: bool,
    filter: &Filter,
) -> Result<()> {
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
        client
            .delete_object(DeleteObject::new(bucket_name(&b)?, key_name(&k)?))
            .await
            .map_err(|e| failure_of(&format!("delete s3://{b}/{k}"), &b, &e))?;
        out.line(
            format!("delete: s3://{b}/{k}"),
            json!({"type": "result", "operation": "delete", "bucket": b, "key": k}),
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
            .delete_objects(DeleteObjects::new(bucket_name(&b)?, names))
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

//! `rm`: one object, or a prefix through DeleteObjects in batches of 1,000.

use s3_wire::Client;
use s3_wire::ops::DeleteObject;
use s3_wire::ops::ops::DeleteObjects;
use serde_json::json;

use crate::listing::*;
use crate::location::*;
use crate::report::*;

pub(crate) async fn rm(
    client: &Client,
    out: &Out,
    path: &str,
    recursive: bool,
    dryrun: bool,
) -> Result<()> {
    let (b, k) = s3_location(path)?;
    let keys: Vec<String> = if recursive {
        list_all(client, &b, &directory_prefix(&k), false)
            .await?
            .0
            .into_iter()
            .map(|o| o.key)
            .collect()
    } else {
        if k.is_empty() {
            return Err(usage(format!(
                "`{path}` names no object: use --recursive to delete a prefix"
            )));
        }
        vec![k.clone()]
    };
    if dryrun {
        for key in &keys {
            out.line(
                format!("(dryrun) delete: s3://{b}/{key}"),
                json!({"dryrun": "delete", "bucket": b, "key": key}),
            );
        }
        return Ok(());
    }
    if !recursive {
        client
            .delete_object(DeleteObject::new(bucket_name(&b)?, key_name(&k)?))
            .await
            .map_err(|e| failure_of(&format!("delete s3://{b}/{k}"), &b, &e))?;
        out.line(
            format!("delete: s3://{b}/{k}"),
            json!({"operation": "delete", "bucket": b, "key": k}),
        );
        return Ok(());
    }
    for batch in keys.chunks(1000) {
        let names = batch
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
                json!({"operation": "delete", "bucket": b, "key": deleted.key}),
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
    }
    Ok(())
}

//! HEAD one object: `s3-wire-head BUCKET KEY`; region from AWS_REGION
//! (default us-east-1), credentials from the AWS_* variables — the same
//! configuration the s3-wire 0.1.1 baseline program reads.

use s3_wire::credentials::{ProcessEnv, credentials_from_env};
use s3_wire::ops::HeadObject;
use s3_wire::{Client, bucket, key};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(bucket_name), Some(key_name)) = (args.next(), args.next()) else {
        return Err("usage: s3-wire-head BUCKET KEY".into());
    };
    let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".to_owned());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let credentials =
            credentials_from_env(&ProcessEnv)?.ok_or("AWS_ACCESS_KEY_ID is not set")?;
        let client = Client::builder()
            .region(region)
            .credentials(credentials)
            .build()?;
        let head = client
            .head_object(HeadObject::new(bucket(&bucket_name)?, key(&key_name)?))
            .await?;
        println!(
            "{} bytes, etag {:?}",
            head.content_length.unwrap_or(0),
            head.etag
        );
        Ok(())
    })
}

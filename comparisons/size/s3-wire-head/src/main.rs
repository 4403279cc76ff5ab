//! HEAD one object: `s3-wire-head BUCKET KEY`, configured from the AWS
//! environment (credentials, region, optional endpoint).

use s3_wire::ops::ops::head_object::HeadObject;
use s3_wire::{Client, bucket, key};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(bucket_name), Some(key_name)) = (args.next(), args.next()) else {
        return Err("usage: s3-wire-head BUCKET KEY".into());
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = Client::from_env()?;
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

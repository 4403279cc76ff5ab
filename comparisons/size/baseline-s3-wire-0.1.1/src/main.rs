//! HEAD one object with s3-wire 0.1.1: `baseline-s3-wire-head BUCKET KEY`;
//! region from AWS_REGION (default us-east-1), credentials from AWS_* variables.

use s3_wire::{Endpoint, HeadObjectRequest, ObjectKey, S3Client, S3Config};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(bucket_name), Some(key_name)) = (args.next(), args.next()) else {
        return Err("usage: baseline-s3-wire-head BUCKET KEY".into());
    };
    let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".to_owned());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let config = S3Config::builder()
            .endpoint(Endpoint::for_aws_region(&region)?)
            .region(region.as_str())
            .bucket(bucket_name)
            .build()?;
        let client = S3Client::new(config)?;
        let head = client
            .head_object(HeadObjectRequest::new(ObjectKey::new(key_name)?))
            .await?;
        println!("{} bytes", head.content_length);
        Ok(())
    })
}

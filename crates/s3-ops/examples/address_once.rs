//! Binary-size probe for the hand-written addressing (measurements/endpoint-addressing-*.md):
//! the GetObject request for a bucket and region from argv (defaults `my-bucket`,
//! `us-west-2`), addressed and given its signing scope, its URI printed. The rule-set
//! interpreter's counterpart is tools/endpoint-rules/examples/resolve_once.rs.

use s3_ops::{BucketName, Endpoint, GetObject, ObjectKey, Operation};

fn main() -> Result<(), s3_ops::Error> {
    let mut args = std::env::args().skip(1);
    let bucket = args.next().unwrap_or_else(|| "my-bucket".to_owned());
    let region = args.next().unwrap_or_else(|| "us-west-2".to_owned());
    let request = GetObject::new(BucketName::new_relaxed(bucket)?, ObjectKey::new("key")?)
        .request(&Endpoint::aws(&region)?)?;
    println!("{} {}", request.request.uri(), request.signing().service());
    Ok(())
}

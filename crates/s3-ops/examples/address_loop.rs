//! Per-request cost probe for the hand-written addressing (measurements/endpoint-addressing-*.md):
//! `N` GetObject requests (N from argv, default 1000) cycling through the four inputs of
//! tools/endpoint-rules/examples/resolve_loop.rs, each addressed and given its signing
//! scope; a checksum of the URIs is printed so the work cannot be skipped.
//!
//! Usage: `address_loop [N [INPUT 1-4]]`: 1 a plain bucket, 2 the same with FIPS and
//! dual-stack, 3 an access point ARN, 4 a directory bucket, all in us-west-2.

use s3_ops::{BucketName, Endpoint, GetObject, ObjectKey, Operation};

fn main() -> Result<(), s3_ops::Error> {
    const USAGE: &str = "usage: address_loop [N [INPUT 1-4]]";
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(1000, |arg| arg.parse().expect(USAGE));
    let only: Option<usize> = args.next().map(|arg| {
        arg.parse()
            .ok()
            .filter(|i| (1..=4).contains(i))
            .expect(USAGE)
    });
    let region = "us-west-2";
    let plain = Endpoint::aws(region)?;
    let variants = Endpoint::aws(region)?.with_fips(true).with_dual_stack(true);
    let inputs = [
        (&plain, BucketName::new("my-bucket")?),
        (&variants, BucketName::new("my-bucket")?),
        (
            &plain,
            BucketName::new("arn:aws:s3:us-west-2:123456789012:accesspoint:myendpoint")?,
        ),
        (&plain, BucketName::new("mybucket--usw2-az1--x-s3")?),
    ];
    let key = ObjectKey::new("key")?;
    // FNV-1a over every URI and signing service.
    let mut checksum: u64 = 0xcbf2_9ce4_8422_2325;
    for i in 0..n {
        let index = only.map_or((i % 4) as usize, |k| k - 1);
        let (endpoint, bucket) = &inputs[index];
        let request = GetObject::new(bucket.clone(), key.clone()).request(endpoint)?;
        let uri = request.request.uri().to_string();
        for byte in uri.bytes().chain(request.signing().service().bytes()) {
            checksum = (checksum ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    println!("addressed {n} requests, checksum {checksum:016x}");
    Ok(())
}

//! Request encoding and response decoding cost: `cargo bench -p s3-ops --bench codec`.

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use s3_ops::ops::get_object::GetObject;
use s3_ops::ops::head_object::HeadObject;
use s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_ops::ops::put_object::PutObject;
use s3_ops::{BucketName, ChecksumAlgorithm, Endpoint, ObjectKey, Operation};

fn listing(entries: usize) -> Bytes {
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
         <Name>bench-bucket</Name><Prefix></Prefix><KeyCount>1000</KeyCount><MaxKeys>1000</MaxKeys>\
         <EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>\
         <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>",
    );
    for i in 0..entries {
        xml.push_str(&format!(
            "<Contents><Key>logs%2F2024%2F{i:06}+part.gz</Key><LastModified>2024-01-27T20:56:51.000Z</LastModified>\
             <ETag>&quot;446fc665f99183cd0540d7656a79d3ed&quot;</ETag><Size>{}</Size>\
             <StorageClass>STANDARD</StorageClass></Contents>",
            386_910 + i
        ));
    }
    xml.push_str("</ListBucketResult>");
    Bytes::from(xml)
}

fn codec(c: &mut Criterion) {
    let endpoint = Endpoint::aws("eu-west-1").unwrap();
    let bucket = BucketName::new("bench-bucket").unwrap();
    let key = ObjectKey::new("photos/2024/summer holiday/IMG 0042 (copy) + édit.jpg").unwrap();

    let mut group = c.benchmark_group("ops_encode");
    let get = GetObject::new(bucket.clone(), key.clone()).version_id("3/L4kqtJl40Nr8X8gdRQBpUMLUo");
    group.bench_function("get_object", |b| b.iter(|| get.request(&endpoint).unwrap()));
    let body = Bytes::from(vec![7u8; 1024]);
    let put = PutObject::new(bucket.clone(), key.clone())
        .body(body)
        .content_type("image/jpeg")
        .metadata("camera", "x100")
        .checksum_algorithm(ChecksumAlgorithm::Crc32c);
    group.bench_function("put_object_1KiB_crc32c", |b| {
        b.iter(|| put.request(&endpoint).unwrap())
    });
    group.finish();

    let mut group = c.benchmark_group("ops_decode");
    let head = HeadObject::new(bucket.clone(), key);
    let head_response = || {
        http::Response::builder()
            .status(200)
            .header("content-length", "434234")
            .header("content-type", "image/jpeg")
            .header("etag", "\"fba9dede5f27731c9771645a39863328\"")
            .header("last-modified", "Mon, 12 Oct 2009 17:50:30 GMT")
            .header("x-amz-version-id", "3/L4kqtJl40Nr8X8gdRQBpUMLUo")
            .header("x-amz-meta-camera", "x100")
            .header("x-amz-checksum-crc32c", "mnG7TA==")
            .header("x-amz-server-side-encryption", "AES256")
            .header("x-amz-request-id", "4442587FB7D0A2F9")
            .header("x-amz-id-2", "vlR7PnpV2Ce81puvW0Rqq5xpOlm5Hl0hqHm3AZl8=")
            .body(Bytes::new())
            .unwrap()
    };
    group.bench_function("head_object", |b| {
        b.iter_batched(
            head_response,
            |r| head.response(r).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
    let list = ListObjectsV2::new(bucket);
    let body = listing(1000);
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("list_objects_v2_1000_keys", |b| {
        b.iter_batched(
            || {
                http::Response::builder()
                    .status(200)
                    .body(body.clone())
                    .unwrap()
            },
            |r| list.response(r).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);

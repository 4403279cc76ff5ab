//! The client's tolerance of real servers' deviations, proven on the embedded server that
//! has them (s3s-fs; see docs/compatibility.md).

mod support;

use s3_wire_tokio::s3_ops::ops::create_bucket::CreateBucket;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::{bucket, key};

/// s3s-fs echoes `EncodingType=url` but sends keys raw. The paginator notices (a raw
/// space or `%`), asks again without `encoding-type`, and every key comes back as stored,
/// `a+b` included (decoded, it would read `a b`).
#[tokio::test]
async fn keys_listed_by_a_server_that_ignores_encoding_type_come_back_as_stored() {
    let (client, _server) = support::local_s3().await;
    let name = bucket("quirks").unwrap();
    client.send(CreateBucket::new(name.clone())).await.unwrap();
    let mut stored = ["100% done.txt", "a b", "a+b", "caf\u{e9}", "plain"];
    for k in stored {
        client
            .put_object(PutObject::new(name.clone(), key(k).unwrap()), "x")
            .await
            .unwrap();
    }
    let mut pages = client.list_objects_v2_pages(ListObjectsV2::new(name).max_keys(2));
    let mut listed = Vec::new();
    while let Some(page) = pages.next_page().await {
        listed.extend(page.unwrap().result.contents.into_iter().map(|o| o.key));
    }
    stored.sort_unstable();
    assert_eq!(listed, stored);
}

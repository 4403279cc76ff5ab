//! The example `hyper_stack` (the signer and this crate's chain over hyper's own client, no
//! s3-wire-tokio) run end to end: its credentials come from a profile whose role is assumed
//! through the loopback STS (which checks the base credentials' signature), and local-s3,
//! which accepts only the credentials that STS issued and checks every signature, stores the
//! object it puts and serves it back.

mod support;

#[allow(dead_code)] // its `main` is the example's; the test calls what main calls.
#[path = "../examples/hyper_stack.rs"]
mod hyper_stack;

use std::sync::Arc;

use bytes::Bytes;
use s3_ops::{BucketName, CreateBucket, ObjectKey};
use support::sts::{Home, base_credentials, sts};

#[test]
fn the_example_puts_and_gets_with_a_role_assumed_through_sts() {
    let sts = sts("unused");
    // STS's first AssumeRole answer is ASIA1 / secret-1: the only keys local-s3 takes.
    let mut options = local_s3::Options::default();
    options.access_key = "ASIA1".to_owned();
    options.secret_key = "secret-1".to_owned();
    let store = local_s3::LocalS3::start_with(options).unwrap();
    // And one with its default keys, which STS never issues.
    let wrong = local_s3::LocalS3::start().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let home = Home::new(
        "[profile app]\nrole_arn = arn:aws:iam::111:role/app\nsource_profile = base\n",
        &base_credentials(),
    );
    let env = home
        .env(&sts)
        .with_var("AWS_PROFILE", "app")
        .with_var("AWS_REGION", store.region())
        .with_var("AWS_ENDPOINT_URL", store.endpoint());
    let s3 = hyper_stack::S3::from_env(Arc::new(env)).unwrap();
    runtime.block_on(async {
        let bucket = BucketName::new("hyper-stack").unwrap();
        s3.send(&CreateBucket::new(bucket.clone())).await.unwrap();
        let key = ObjectKey::new("signed elsewhere/object.bin").unwrap();
        let data = Bytes::from((0..70_000u32).map(|i| (i % 251) as u8).collect::<Vec<_>>());
        let read = hyper_stack::put_and_get(&s3, &bucket, &key, data.clone())
            .await
            .unwrap();
        assert_eq!(read, data);
        let stored = std::fs::read(
            store
                .data_dir()
                .join("hyper-stack/signed elsewhere/object.bin"),
        )
        .unwrap();
        assert_eq!(stored, data, "the bytes on local-s3's disk");

        // One AssumeRole (the cache serves the later requests), signed by the base profile.
        let requests = sts.requests();
        assert_eq!(requests.len(), 1, "{requests:?}");
        assert_eq!(
            requests[0].param("RoleArn").as_deref(),
            Some("arn:aws:iam::111:role/app")
        );
        assert!(
            requests[0]
                .header("authorization")
                .is_some_and(|a| a.contains("Credential=AKIDBASE/")),
            "{:?}",
            requests[0].header("authorization")
        );

        // Credentials local-s3 does not take are refused as S3 refuses them, typed.
        let env = home
            .env(&sts)
            .with_var("AWS_PROFILE", "app")
            .with_var("AWS_REGION", wrong.region())
            .with_var("AWS_ENDPOINT_URL", wrong.endpoint());
        let refused = hyper_stack::S3::from_env(Arc::new(env))
            .unwrap()
            .send(&CreateBucket::new(bucket))
            .await
            .unwrap_err();
        let error = refused.downcast::<s3_ops::Error>().unwrap();
        let service = error.service_error().expect("an S3 error");
        assert_eq!(service.status, 403, "{service:?}");
    });
}

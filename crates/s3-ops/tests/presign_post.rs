//! Presigned POST: the form fields, the policy document they are signed with, and the
//! conditions refused before signing.

mod common;

use std::time::{Duration, UNIX_EPOCH};

use common::*;
use s3_ops::presign_post::{PostConditions, presign_post};
use s3_ops::{BucketName, CannedAcl, Endpoint, Error, InvalidInput};
use s3_sigv4::{Credentials, Signer};

/// Standard base64 decoding (independent of the crates under test).
fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in text.bytes().filter(|b| *b != b'=') {
        let value = ALPHABET.iter().position(|c| *c == byte).unwrap() as u32;
        bits = bits << 6 | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    out
}

fn credentials(token: Option<&str>) -> Credentials {
    Credentials::new(
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        token.map(str::to_owned),
    )
}

#[test]
fn fields_and_policy_cover_every_condition() {
    let conditions = PostConditions::key(key("user/alice/photo 1.jpg"))
        .content_length_range(10, 1000)
        .content_type("image/jpeg")
        .acl(CannedAcl::PublicRead)
        .success_action_status(201)
        .metadata("Origin", "web");
    let now = UNIX_EPOCH + Duration::from_secs(1_451_347_200); // 2015-12-29T00:00:00Z
    let sign = || {
        presign_post(
            &bucket(),
            &conditions,
            &aws(),
            &Signer::new(),
            &credentials(Some("SESSION\"TOKEN")),
            now,
            Duration::from_secs(36 * 3600),
        )
        .unwrap()
    };
    let post = sign();
    assert_eq!(
        post.url(),
        "https://examplebucket.s3.us-east-1.amazonaws.com/"
    );
    let names: Vec<&str> = post.fields().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "key",
            "Content-Type",
            "acl",
            "success_action_status",
            "x-amz-meta-origin",
            "policy",
            "x-amz-algorithm",
            "x-amz-credential",
            "x-amz-date",
            "x-amz-security-token",
            "x-amz-signature",
        ]
    );
    assert_eq!(post.field("key"), Some("user/alice/photo 1.jpg"));
    assert_eq!(post.field("x-amz-date"), Some("20151229T000000Z"));
    assert_eq!(post.expires_at(), now + Duration::from_secs(36 * 3600));
    let policy = String::from_utf8(base64_decode(post.field("policy").unwrap())).unwrap();
    assert_eq!(
        policy,
        "{\"expiration\":\"2015-12-30T12:00:00.000Z\",\"conditions\":[{\"bucket\":\"examplebucket\"},\
         {\"key\":\"user/alice/photo 1.jpg\"},{\"Content-Type\":\"image/jpeg\"},{\"acl\":\"public-read\"},\
         {\"success_action_status\":\"201\"},{\"x-amz-meta-origin\":\"web\"},[\"content-length-range\",10,1000],\
         {\"x-amz-algorithm\":\"AWS4-HMAC-SHA256\"},\
         {\"x-amz-credential\":\"AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request\"},\
         {\"x-amz-date\":\"20151229T000000Z\"},{\"x-amz-security-token\":\"SESSION\\\"TOKEN\"}]}"
    );
    // The signature is the SigV4 HMAC of the base64 policy: the same inputs sign the same.
    let again = sign();
    assert_eq!(again, post);
    assert_eq!(post.field("x-amz-signature").unwrap().len(), 64);
    // Debug shows no secret.
    let debug = format!("{post:?}");
    for secret in ["policy", "x-amz-signature", "x-amz-security-token"] {
        assert!(
            !debug.contains(post.field(secret).unwrap()),
            "{secret} in {debug}"
        );
    }
}

#[test]
fn a_key_prefix_leaves_the_name_to_the_uploader_and_paths_follow_the_endpoint() {
    let endpoint = Endpoint::custom("http://127.0.0.1:9000", "us-east-1").unwrap();
    let post = presign_post(
        &bucket(),
        &PostConditions::key_prefix("in/").content_type_prefix("text/"),
        &endpoint,
        &Signer::new(),
        &credentials(None),
        UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        Duration::from_secs(60),
    )
    .unwrap();
    assert_eq!(post.url(), "http://127.0.0.1:9000/examplebucket");
    assert_eq!(post.field("key"), Some("in/${filename}"));
    assert_eq!(post.field("Content-Type"), None);
    assert_eq!(post.field("x-amz-security-token"), None);
    let policy = String::from_utf8(base64_decode(post.field("policy").unwrap())).unwrap();
    assert!(
        policy.contains(
            "[\"starts-with\",\"$key\",\"in/\"],[\"starts-with\",\"$Content-Type\",\"text/\"]"
        ),
        "{policy}"
    );
}

#[test]
fn impossible_conditions_are_refused_before_signing() {
    let sign = |conditions: PostConditions, bucket: BucketName, expires: u64| {
        presign_post(
            &bucket,
            &conditions,
            &aws(),
            &Signer::new(),
            &credentials(None),
            UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            Duration::from_secs(expires),
        )
    };
    let name = |result: Result<_, Error>| match result.unwrap_err() {
        Error::InvalidInput(InvalidInput::Parameter { name, .. }) => name,
        other => panic!("{other}"),
    };
    assert_eq!(
        name(sign(
            PostConditions::key_prefix("a").content_length_range(5, 4),
            bucket(),
            60
        )),
        "content-length-range"
    );
    assert_eq!(
        name(sign(
            PostConditions::key_prefix("a").success_action_status(302),
            bucket(),
            60
        )),
        "success_action_status"
    );
    assert_eq!(
        name(sign(PostConditions::key_prefix("a"), bucket(), 0)),
        "expiration"
    );
    assert_eq!(
        name(sign(
            PostConditions::key_prefix("a"),
            bucket(),
            7 * 24 * 3600 + 1
        )),
        "expiration"
    );
    let mrap = BucketName::new("arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap").unwrap();
    assert_eq!(
        name(sign(PostConditions::key_prefix("a"), mrap, 60)),
        "bucket"
    );
}

//! The bucket configuration, Object Lock, restore, ACL and presigned POST commands, end to
//! end: the built `s3w` binary against moto 5.2.5 (the pinned venv of s3-wire-tokio's
//! interop tests, made from PyPI), which implements them, and the form upload against
//! local-s3, whose s3s verifies POST policies.

// The moto support module names the client crate `s3_wire_tokio`; the facade is the same
// client.
extern crate s3_wire as s3_wire_tokio;

use std::io::{Read, Write};
use std::process::{Command, Output};

mod support;

#[allow(dead_code)]
#[path = "../../s3-wire-tokio/tests/support/moto.rs"]
mod moto;

#[path = "../../s3-wire-tokio/tests/support/form.rs"]
mod form;

use moto::Moto;
use support::Env;

/// The built binary against a running moto, with nothing else of the environment.
struct MotoEnv {
    moto: Moto,
    home: tempfile::TempDir,
}

impl MotoEnv {
    fn new() -> MotoEnv {
        MotoEnv {
            moto: Moto::start(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_s3w"))
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("AWS_ENDPOINT_URL", self.moto.endpoint())
            .env("AWS_ACCESS_KEY_ID", moto::ACCESS_KEY)
            .env("AWS_SECRET_ACCESS_KEY", moto::SECRET_KEY)
            .env("AWS_REGION", moto::REGION)
            .env("AWS_CONFIG_FILE", self.home.path().join("no-config"))
            .env(
                "AWS_SHARED_CREDENTIALS_FILE",
                self.home.path().join("no-credentials"),
            )
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .output()
            .expect("run s3w")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "s3w {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The command fails with exit code 1 and this in its error line.
    fn fails(&self, args: &[&str], expected: &str) -> String {
        let out = self.run(args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "s3w {args:?}: {stderr}");
        assert!(stderr.contains(expected), "s3w {args:?}: {stderr}");
        stderr
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.home.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    }
}

const LIFECYCLE: &str = r#"<LifecycleConfiguration>
  <Rule>
    <ID>logs</ID>
    <Filter><Prefix>logs/</Prefix></Filter>
    <Status>Enabled</Status>
    <Transition><Days>30</Days><StorageClass>STANDARD_IA</StorageClass></Transition>
    <Expiration><Days>365</Days></Expiration>
  </Rule>
</LifecycleConfiguration>"#;

#[test]
fn bucket_configuration_commands() {
    let env = MotoEnv::new();
    env.ok(&["mb", "s3://conf"]);

    assert_eq!(env.ok(&["versioning", "s3://conf"]).trim(), "unversioned");
    env.ok(&["versioning", "s3://conf", "--enable"]);
    assert_eq!(env.ok(&["versioning", "s3://conf"]).trim(), "Enabled");
    let json = env.ok(&["--json", "versioning", "s3://conf"]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&json).unwrap()["versioning"],
        "Enabled"
    );

    // Lifecycle: the document as S3 takes it, back as the client read it.
    let rules = env.file("lifecycle.xml", LIFECYCLE);
    env.ok(&["lifecycle", "s3://conf", "--put", &rules]);
    let got = env.ok(&["lifecycle", "s3://conf"]);
    for part in [
        "<ID>logs</ID>",
        "<Filter><Prefix>logs/</Prefix></Filter>",
        "<Transition><Days>30</Days><StorageClass>STANDARD_IA</StorageClass></Transition>",
        "<Expiration><Days>365</Days></Expiration>",
    ] {
        assert!(got.contains(part), "{part} in {got}");
    }
    env.ok(&["lifecycle", "s3://conf", "--delete"]);
    env.fails(&["lifecycle", "s3://conf"], "NoSuchLifecycleConfiguration");
    // A document S3 would refuse is refused before anything is sent, naming the file.
    let typo = env.file("typo.xml", &LIFECYCLE.replace("Enabled", "On"));
    env.fails(&["lifecycle", "s3://conf", "--put", &typo], "typo.xml");

    // A policy, verbatim.
    let policy = "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":\"*\",\
                  \"Action\":\"s3:GetObject\",\"Resource\":\"arn:aws:s3:::conf/*\"}]}";
    let file = env.file("policy.json", policy);
    env.ok(&["policy", "s3://conf", "--put", &file]);
    assert_eq!(env.ok(&["policy", "s3://conf"]).trim_end(), policy);
    env.ok(&["policy", "s3://conf", "--delete"]);
    env.fails(&["policy", "s3://conf"], "NoSuchBucketPolicy");

    let cors = env.file(
        "cors.xml",
        "<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>\
         <MaxAgeSeconds>60</MaxAgeSeconds></CORSRule></CORSConfiguration>",
    );
    env.ok(&["cors", "s3://conf", "--put", &cors]);
    assert!(
        env.ok(&["cors", "s3://conf"])
            .contains("<AllowedMethod>GET</AllowedMethod>")
    );
    env.ok(&["cors", "s3://conf", "--delete"]);

    let sse = env.file(
        "sse.xml",
        "<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault>\
         <SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule>\
         </ServerSideEncryptionConfiguration>",
    );
    env.ok(&["encryption", "s3://conf", "--put", &sse]);
    assert!(
        env.ok(&["encryption", "s3://conf"])
            .contains("<SSEAlgorithm>AES256</SSEAlgorithm>")
    );
    env.ok(&["encryption", "s3://conf", "--delete"]);

    let block = env.file(
        "block.xml",
        "<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls>\
         </PublicAccessBlockConfiguration>",
    );
    env.ok(&["public-access-block", "s3://conf", "--put", &block]);
    assert!(
        env.ok(&["public-access-block", "s3://conf"])
            .contains("<BlockPublicAcls>true</BlockPublicAcls>")
    );
    env.ok(&["public-access-block", "s3://conf", "--delete"]);

    // Tags of the bucket, and of an object.
    let tags = env.file(
        "tags.xml",
        "<Tagging><TagSet><Tag><Key>team</Key><Value>data</Value></Tag></TagSet></Tagging>",
    );
    env.ok(&["tagging", "s3://conf", "--put", &tags]);
    assert!(
        env.ok(&["tagging", "s3://conf"])
            .contains("<Key>team</Key><Value>data</Value>")
    );
    env.ok(&["tagging", "s3://conf", "--delete"]);
    env.fails(&["tagging", "s3://conf"], "NoSuchTagSet");
    let object = env.file("object.txt", "tagged");
    env.ok(&["cp", &object, "s3://conf/t.txt"]);
    env.ok(&["tagging", "s3://conf/t.txt", "--put", &tags]);
    assert!(
        env.ok(&["tagging", "s3://conf/t.txt"])
            .contains("<Value>data</Value>")
    );
    // A bucket configuration names a bucket.
    let out = env.run(&["cors", "s3://conf/t.txt"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn object_lock_restore_and_acl_commands() {
    let env = MotoEnv::new();
    env.ok(&["mb", "--object-lock-enabled-for-bucket", "s3://locked"]);
    // Its configuration: enabled, no default retention; then a default, read back.
    assert_eq!(
        env.ok(&["object-lock", "s3://locked"]).trim(),
        "Enabled\tno default retention"
    );
    let set = env.ok(&[
        "object-lock",
        "s3://locked",
        "--mode",
        "GOVERNANCE",
        "--days",
        "1",
    ]);
    assert!(set.contains("Enabled\tGOVERNANCE\t1 days"), "{set}");
    let shown: serde_json::Value =
        serde_json::from_str(env.ok(&["--json", "object-lock", "s3://locked"]).trim()).unwrap();
    assert_eq!(
        (&shown["enabled"], &shown["mode"], &shown["days"]),
        (
            &serde_json::json!(true),
            &serde_json::json!("GOVERNANCE"),
            &serde_json::json!(1)
        ),
        "{shown}"
    );
    assert_eq!(
        env.run(&["object-lock", "s3://locked", "--mode", "GOVERNANCE"])
            .status
            .code(),
        Some(2)
    );
    env.ok(&["object-lock", "s3://locked", "--enable"]);
    assert_eq!(
        env.ok(&["object-lock", "s3://locked"]).trim(),
        "Enabled\tno default retention"
    );
    let data = env.file("data.txt", "under lock");
    env.ok(&[
        "cp",
        &data,
        "s3://locked/data.txt",
        "--object-lock-mode",
        "GOVERNANCE",
        "--object-lock-retain-until-date",
        "2099-01-01T00:00:00Z",
        "--object-lock-legal-hold-status",
        "ON",
    ]);
    assert_eq!(env.ok(&["legal-hold", "s3://locked/data.txt"]).trim(), "ON");
    // A multipart upload carries them too, on CreateMultipartUpload (seen at a recording
    // proxy: moto keeps no Object Lock header of CreateMultipartUpload).
    let big = env.home.path().join("big.bin");
    std::fs::write(&big, vec![7u8; 11 << 20]).unwrap();
    let proxy =
        support::proxy::Proxy::start(&env.moto.endpoint(), |_| support::proxy::Verdict::Forward);
    env.ok(&[
        "--endpoint-url",
        proxy.endpoint.as_str(),
        "--part-size",
        "5M",
        "--multipart-threshold",
        "5M",
        "cp",
        big.to_str().unwrap(),
        "s3://locked/big.bin",
        "--object-lock-legal-hold-status",
        "ON",
    ]);
    let heads = proxy.heads.lock().unwrap().clone();
    let create = heads
        .iter()
        .find(|head| head.starts_with("POST /locked/big.bin?uploads"))
        .expect("a multipart upload");
    assert!(
        create
            .to_ascii_lowercase()
            .contains("x-amz-object-lock-legal-hold: on"),
        "{create}"
    );
    // Its attributes (moto lists no parts: docs/compatibility.md).
    let attributes: serde_json::Value = serde_json::from_str(
        env.ok(&["--json", "attributes", "s3://locked/big.bin"])
            .trim(),
    )
    .unwrap();
    assert_eq!(attributes["size"], 11 << 20, "{attributes}");
    assert_eq!(attributes["storage_class"], "STANDARD", "{attributes}");
    assert!(
        attributes["etag"]
            .as_str()
            .is_some_and(|e| e.ends_with("-3\"")),
        "{attributes}"
    );
    env.ok(&["legal-hold", "s3://locked/data.txt", "--off"]);
    assert_eq!(
        env.ok(&["legal-hold", "s3://locked/data.txt"]).trim(),
        "OFF"
    );
    let set = env.ok(&[
        "retention",
        "s3://locked/data.txt",
        "--mode",
        "GOVERNANCE",
        "--until",
        "2099-06-01T00:00:00Z",
    ]);
    assert!(
        set.contains("GOVERNANCE until 2099-06-01T00:00:00Z"),
        "{set}"
    );
    // Read back from the object's head (moto answers GetObjectRetention with the object
    // itself, not a <Retention> document: docs/compatibility.md).
    let head: serde_json::Value =
        serde_json::from_str(env.ok(&["--json", "stat", "s3://locked/data.txt"]).trim()).unwrap();
    assert_eq!(head["object_lock_mode"], "GOVERNANCE", "{head}");
    assert!(
        head["object_lock_retain_until_date"]
            .as_str()
            .is_some_and(|t| t.starts_with("2099-06-01T00:00:00")),
        "{head}"
    );
    assert_eq!(head["object_lock_legal_hold"], "OFF", "{head}");
    // The version under retention: deleting it is refused, unless governance is bypassed.
    let version = head["version_id"].as_str().unwrap().to_owned();
    env.fails(
        &["rm", "s3://locked/data.txt", "--version-id", &version],
        "AccessDenied",
    );
    assert_eq!(env.ok(&["cat", "s3://locked/data.txt"]), "under lock");
    let deleted = env.ok(&[
        "rm",
        "s3://locked/data.txt",
        "--version-id",
        &version,
        "--bypass-governance-retention",
    ]);
    assert!(
        deleted.contains(&format!("(version {version})")),
        "{deleted}"
    );
    env.fails(
        &["stat", "s3://locked/data.txt", "--version-id", &version],
        "",
    );
    // A mode alone is a usage error.
    assert_eq!(
        env.run(&["retention", "s3://locked/data.txt", "--mode", "GOVERNANCE"])
            .status
            .code(),
        Some(2)
    );

    // Archived: cat says what to do; after the restore it reads.
    env.ok(&["mb", "s3://cold"]);
    let cold = env.file("cold.txt", "brr");
    env.ok(&[
        "cp",
        &cold,
        "s3://cold/cold.txt",
        "--storage-class",
        "GLACIER",
    ]);
    let err = env.fails(&["cat", "s3://cold/cold.txt"], "archived (GLACIER");
    assert!(err.contains("s3w restore"), "{err}");
    let started = env.ok(&["restore", "s3://cold/cold.txt", "--days", "2"]);
    assert!(started.contains("restore: started"), "{started}");
    assert_eq!(env.run(&["cat", "s3://cold/cold.txt"]).stdout, b"brr");

    // ACLs: canned on the object, explicit grants, and the bucket's.
    env.ok(&["acl", "s3://cold/cold.txt", "--canned", "public-read"]);
    let shown = env.ok(&["acl", "s3://cold/cold.txt"]);
    assert!(
        shown.contains("READ\turi=http://acs.amazonaws.com/groups/global/AllUsers"),
        "{shown}"
    );
    let owner = shown
        .lines()
        .find_map(|line| line.strip_prefix("owner\t"))
        .unwrap()
        .to_owned();
    env.ok(&[
        "acl",
        "s3://cold/cold.txt",
        "--grant",
        &format!("full-control=id={owner}"),
        "--grant",
        "read-acp=uri=http://acs.amazonaws.com/groups/global/AuthenticatedUsers",
    ]);
    let shown = env.ok(&["--json", "acl", "s3://cold/cold.txt"]);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    assert!(
        shown["grants"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!({
                "permission": "READ_ACP",
                "grantee": "uri=http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
            })),
        "{shown}"
    );
    env.ok(&["acl", "s3://cold", "--canned", "public-read"]);
    assert!(
        env.ok(&["acl", "s3://cold"])
            .contains("READ\turi=http://acs.amazonaws.com/groups/global/AllUsers")
    );
    assert_eq!(
        env.run(&["acl", "s3://cold/cold.txt", "--grant", "read=someone"])
            .status
            .code(),
        Some(2)
    );
}

/// Posts a `multipart/form-data` form over a plain TCP connection (an HTTP/1.1 request as
/// a browser sends it); returns the status code.
fn post_form(url: &str, fields: &[(String, String)], file: &[u8]) -> u16 {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let (content_type, body) = form::multipart_form(fields, "f.txt", "text/plain", file);
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    write!(
        stream,
        "POST /{path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: {content_type}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(&body).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split(' ')
        .nth(1)
        .and_then(|status| status.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"))
}

#[test]
fn presign_post_gives_a_form_that_uploads_within_its_conditions() {
    let env = Env::new();
    env.ok(&["mb", "s3://forms"]);
    let out = env.ok(&[
        "--json",
        "presign",
        "--post",
        "s3://forms/uploads/",
        "--content-length-range",
        "1:64",
        "--content-type-prefix",
        "text/",
        "--expires-in",
        "300",
    ]);
    let form: serde_json::Value = serde_json::from_str(&out).unwrap();
    let url = form["url"].as_str().unwrap();
    let fields = |key: &str| -> Vec<(String, String)> {
        form["fields"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(name, value)| {
                let value = if name == "key" {
                    key
                } else {
                    value.as_str().unwrap()
                };
                (name.clone(), value.to_owned())
            })
            .chain([("Content-Type".to_owned(), "text/plain".to_owned())])
            .collect()
    };
    assert_eq!(form["fields"]["key"], "uploads/${filename}");
    let status = post_form(url, &fields("uploads/one.txt"), b"posted from a form");
    assert!((200..300).contains(&status), "{status}");
    assert_eq!(
        env.run(&["cat", "s3://forms/uploads/one.txt"]).stdout,
        b"posted from a form"
    );
    // Over the size range, or outside the prefix: refused, nothing stored.
    assert_eq!(post_form(url, &fields("uploads/big.txt"), &[b'x'; 65]), 400);
    assert_eq!(post_form(url, &fields("other/x.txt"), b"x") / 100, 4);
    assert!(
        !env.run(&["stat", "s3://forms/uploads/big.txt"])
            .status
            .success()
    );
    assert!(
        !env.run(&["stat", "s3://forms/other/x.txt"])
            .status
            .success()
    );
    // The plain form: the URL, then one field a line.
    let text = env.ok(&["presign", "--post", "s3://forms/exact.txt"]);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(url));
    assert!(text.contains("\nkey=exact.txt\n"), "{text}");
}

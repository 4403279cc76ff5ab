//! The scenarios of issue 28 (Object Lock, bucket configuration, ACLs, GetObjectAttributes,
//! RestoreObject, ListObjects v1, presigned POST), run by the harness of `servers.rs` on both
//! servers like the others.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use s3_wire_tokio::s3_ops::ops::get_object::GetObject;
use s3_wire_tokio::s3_ops::ops::head_object::HeadObject;
use s3_wire_tokio::s3_ops::ops::list_object_versions::ListObjectVersions;
use s3_wire_tokio::s3_ops::ops::list_objects_v2::ListObjectsV2;
use s3_wire_tokio::s3_ops::ops::put_object::PutObject;
use s3_wire_tokio::s3_ops::presign_post::PostConditions;
use s3_wire_tokio::s3_ops::{
    AclSource, CannedAcl, ChecksumAlgorithm, CreateBucket, DeleteBucketCors,
    DeleteBucketEncryption, DeleteBucketLifecycle, DeleteBucketPolicy, DeleteBucketTagging,
    DeleteObject, DeletePublicAccessBlock, GetBucketAcl, GetBucketCors, GetBucketEncryption,
    GetBucketLifecycleConfiguration, GetBucketPolicy, GetBucketTagging, GetBucketVersioning,
    GetObjectAcl, GetObjectAttributes, GetObjectLegalHold, GetObjectLockConfiguration,
    GetObjectRetention, GetPublicAccessBlock, Grants, ListObjects, Operation, PutBucketAcl,
    PutBucketCors, PutBucketEncryption, PutBucketLifecycleConfiguration, PutBucketPolicy,
    PutBucketTagging, PutBucketVersioning, PutObjectAcl, PutObjectLegalHold,
    PutObjectLockConfiguration, PutObjectRetention, PutPublicAccessBlock, RestoreObject,
    StorageClass,
};
use s3_wire_tokio::s3_xml::{
    CorsConfiguration, CorsRule, DefaultRetention, EncryptionByDefault, EncryptionRule, Grantee,
    LegalHoldStatus, LifecycleConfiguration, LifecycleExpiration, LifecycleFilter, LifecycleRule,
    NoncurrentVersionExpiration, NoncurrentVersionTransition, ObjectLockConfiguration, Permission,
    PublicAccessBlockConfiguration, RestoreRequest, RestoreTier, Retention, RetentionMode,
    RetentionPeriod, ServerSideEncryptionConfiguration, Tag, Tagging, Timestamp, Transition,
    VersioningConfiguration, VersioningStatus,
};

use super::{Ctx, Kind, object_key, pattern, status_and_code, support, upload_parts};

/// The answer of a store that does not implement the operation.
fn assert_not_implemented<T: std::fmt::Debug>(result: Result<T, s3_wire_tokio::Error>) {
    let err = result.unwrap_err();
    assert_eq!(
        status_and_code(&err),
        Some((501, "NotImplemented")),
        "{err:?}"
    );
}

/// The S3 error code of a failed request.
fn code<T: std::fmt::Debug>(result: Result<T, s3_wire_tokio::Error>) -> (u16, String) {
    let err = result.unwrap_err();
    let (status, code) = status_and_code(&err).unwrap_or_else(|| panic!("{err:?}"));
    (status, code.to_owned())
}

pub(super) async fn object_lock(ctx: Ctx) {
    let client = &ctx.client;
    client
        .send(CreateBucket::new(ctx.bucket()).object_lock_enabled(true))
        .await
        .unwrap();
    let default = DefaultRetention::new(RetentionMode::Governance, RetentionPeriod::Days(1));
    let configured = client
        .put_object_lock_configuration(PutObjectLockConfiguration::new(
            ctx.bucket(),
            ObjectLockConfiguration::enabled(Some(default)),
        ))
        .await;
    if ctx.deviates() && ctx.kind() == Kind::LocalS3 {
        assert_not_implemented(configured);
        return;
    }
    configured.unwrap();
    let read = client
        .get_object_lock_configuration(GetObjectLockConfiguration::new(ctx.bucket()))
        .await
        .unwrap();
    assert!(read.result.enabled);
    assert_eq!(read.result.default_retention, Some(default));

    // A retention and a legal hold on the upload itself (with the client's CRC32, the
    // integrity header S3 requires on such an upload).
    let until = SystemTime::now() + Duration::from_secs(24 * 3600);
    let put = client
        .put_object(
            PutObject::new(ctx.bucket(), object_key("held"))
                .object_lock_retention(RetentionMode::Governance, until)
                .object_lock_legal_hold(LegalHoldStatus::On),
            Bytes::from_static(b"keep me"),
        )
        .await
        .unwrap();
    let version = put.version_id.expect("a locked bucket is versioned");
    let hold = client
        .get_object_legal_hold(GetObjectLegalHold::new(ctx.bucket(), object_key("held")))
        .await
        .unwrap();
    assert_eq!(hold.result.status, LegalHoldStatus::On);
    let retention = client
        .get_object_retention(GetObjectRetention::new(ctx.bucket(), object_key("held")))
        .await;
    if ctx.deviates() {
        // moto answers with the object itself.
        let err = retention.unwrap_err();
        assert!(err.to_string().contains("Retention"), "{err:?}");
        let head = ctx.head("held").await.unwrap();
        assert_eq!(head.object_lock_mode.as_deref(), Some("GOVERNANCE"));
    } else {
        let retention = retention.unwrap().result;
        assert_eq!(retention.mode, Some(RetentionMode::Governance));
        let stored = retention.retain_until_date.unwrap().unix_seconds();
        let asked = Timestamp::from_system_time(until).unwrap().unix_seconds();
        assert!(stored.abs_diff(asked) <= 1, "{stored} vs {asked}");
    }

    // A multipart upload gives them on CreateMultipartUpload.
    let attributes = s3_wire_tokio::s3_ops::ObjectAttributes::default()
        .object_lock_retention(RetentionMode::Governance, until)
        .object_lock_legal_hold(LegalHoldStatus::On);
    let stored = client
        .upload(
            ctx.bucket(),
            object_key("held-parts"),
            s3_wire_tokio::UploadSource::bytes(pattern((5 << 20) + 100, 3)),
        )
        .attributes(attributes)
        .part_size(5 << 20)
        .single_request_limit(5 << 20)
        .await
        .unwrap();
    assert_eq!(stored.parts, Some(2));
    let parts_hold = client
        .get_object_legal_hold(GetObjectLegalHold::new(
            ctx.bucket(),
            object_key("held-parts"),
        ))
        .await;
    let parts_head = ctx.head("held-parts").await.unwrap();
    if ctx.deviates() {
        // moto keeps no Object Lock header of CreateMultipartUpload.
        let err = parts_hold.unwrap_err();
        assert!(err.to_string().contains("Status"), "{err:?}");
        assert_eq!(parts_head.object_lock_mode, None);
    } else {
        assert_eq!(parts_hold.unwrap().result.status, LegalHoldStatus::On);
        assert_eq!(parts_head.object_lock_mode.as_deref(), Some("GOVERNANCE"));
    }

    let delete = || DeleteObject::new(ctx.bucket(), object_key("held")).version_id(version.clone());
    // Held: not even the governance bypass deletes it.
    assert_eq!(
        code(client.delete_object(delete()).await),
        (403, "AccessDenied".into())
    );
    assert_eq!(
        code(
            client
                .delete_object(delete().bypass_governance_retention(true))
                .await
        ),
        (403, "AccessDenied".into())
    );
    client
        .put_object_legal_hold(PutObjectLegalHold::new(
            ctx.bucket(),
            object_key("held"),
            LegalHoldStatus::Off,
        ))
        .await
        .unwrap();
    // Under a governance retention: refused without the bypass, deleted with it.
    assert_eq!(
        code(client.delete_object(delete()).await),
        (403, "AccessDenied".into())
    );
    assert_eq!(
        ctx.get_with(GetObject::new(ctx.bucket(), object_key("held")))
            .await
            .unwrap(),
        "keep me"
    );
    // The retention can be extended (to a whole second: moto parses no fraction).
    let later = Timestamp::from_system_time(until + Duration::from_secs(3600)).unwrap();
    let later = Timestamp::from_unix(later.unix_seconds() + 1, 0).unwrap();
    client
        .put_object_retention(PutObjectRetention::new(
            ctx.bucket(),
            object_key("held"),
            Retention::new(RetentionMode::Governance, later),
        ))
        .await
        .unwrap();
    client
        .delete_object(delete().bypass_governance_retention(true))
        .await
        .unwrap();
    let gone = client
        .send(HeadObject::new(ctx.bucket(), object_key("held")).version_id(version.clone()))
        .await
        .unwrap_err();
    assert!(
        gone.is_not_found() || status_and_code(&gone).is_some_and(|(s, _)| s == 405),
        "{gone:?}"
    );
}

pub(super) async fn bucket_versioning(ctx: Ctx) {
    ctx.create_bucket().await;
    let client = &ctx.client;
    let enabled = client
        .put_bucket_versioning(PutBucketVersioning::new(
            ctx.bucket(),
            VersioningConfiguration::new(VersioningStatus::Enabled),
        ))
        .await;
    if ctx.deviates() {
        assert_not_implemented(enabled);
        return;
    }
    enabled.unwrap();
    let state = client
        .get_bucket_versioning(GetBucketVersioning::new(ctx.bucket()))
        .await
        .unwrap();
    assert_eq!(state.result.status, Some(VersioningStatus::Enabled));
    let first = ctx.put("doc", Bytes::from_static(b"one")).await;
    let second = ctx.put("doc", Bytes::from_static(b"two")).await;
    let versions = client
        .send(ListObjectVersions::new(ctx.bucket()))
        .await
        .unwrap();
    assert_eq!(versions.result.entries.len(), 2, "{versions:?}");
    assert_ne!(first, second);
    client
        .put_bucket_versioning(PutBucketVersioning::new(
            ctx.bucket(),
            VersioningConfiguration::new(VersioningStatus::Suspended),
        ))
        .await
        .unwrap();
    let state = client
        .get_bucket_versioning(GetBucketVersioning::new(ctx.bucket()))
        .await
        .unwrap();
    assert_eq!(state.result.status, Some(VersioningStatus::Suspended));
    // MFA delete is refused before anything is sent, with the way to do it instead.
    let mut mfa = VersioningConfiguration::new(VersioningStatus::Enabled);
    mfa.mfa_delete = Some(s3_wire_tokio::s3_xml::MfaDeleteStatus::Enabled);
    let err = client
        .put_bucket_versioning(PutBucketVersioning::new(ctx.bucket(), mfa))
        .await
        .unwrap_err();
    assert!(
        err.service_error().is_none() && err.to_string().contains("x-amz-mfa"),
        "{err}"
    );
}

/// One bucket configuration put, read back as `expected`, deleted, and then missing (404
/// `missing`); a store without the operation (`not_implemented`) answers the put 501.
#[allow(clippy::too_many_arguments)]
async fn configuration_cycle<P, G, D, T>(
    ctx: &Ctx,
    not_implemented: bool,
    put: P,
    get: impl Fn() -> G,
    read: impl FnOnce(G::Output) -> T,
    expected: T,
    delete: D,
    missing: &str,
) where
    P: Operation,
    P::Output: std::fmt::Debug,
    G: Operation,
    G::Output: std::fmt::Debug,
    D: Operation,
    D::Output: std::fmt::Debug,
    T: PartialEq + std::fmt::Debug,
{
    let client = &ctx.client;
    let put = client.send(put).await;
    if not_implemented {
        assert_not_implemented(put);
        return;
    }
    put.unwrap();
    assert_eq!(read(client.send(get()).await.unwrap()), expected);
    client.send(delete).await.unwrap();
    let (status, error) = code(client.send(get()).await);
    assert_eq!((status, error.as_str()), (404, missing));
}

pub(super) async fn bucket_lifecycle_configuration(ctx: Ctx) {
    ctx.create_bucket().await;
    let mut filter = LifecycleFilter::with_prefix("logs/");
    filter.tags = vec![Tag::new("class", "debug")];
    filter.object_size_greater_than = Some(1024);
    let mut rule = LifecycleRule::new("logs", filter);
    rule.expiration = Some(LifecycleExpiration::after_days(90));
    rule.transitions = vec![Transition::after_days(30, "GLACIER")];
    let mut noncurrent = NoncurrentVersionExpiration::after_days(7);
    noncurrent.newer_noncurrent_versions = Some(3);
    rule.noncurrent_version_expiration = Some(noncurrent);
    rule.noncurrent_version_transitions =
        vec![NoncurrentVersionTransition::after_days(1, "STANDARD_IA")];
    let mut uploads = LifecycleRule::new("uploads", LifecycleFilter::everything());
    uploads.abort_incomplete_multipart_upload_days = Some(2);
    let configuration = LifecycleConfiguration::new(vec![rule, uploads]);
    let mut expected = configuration.clone();
    if ctx.deviates() && ctx.kind() == Kind::Moto {
        // moto keeps neither the size condition nor NewerNoncurrentVersions.
        expected.rules[0]
            .filter
            .iter_mut()
            .for_each(|f| f.object_size_greater_than = None);
        expected.rules[0]
            .noncurrent_version_expiration
            .iter_mut()
            .for_each(|e| e.newer_noncurrent_versions = None);
    }
    configuration_cycle(
        &ctx,
        ctx.deviates() && ctx.kind() == Kind::LocalS3,
        PutBucketLifecycleConfiguration::new(ctx.bucket(), configuration),
        || GetBucketLifecycleConfiguration::new(ctx.bucket()),
        |read| read.result,
        expected,
        DeleteBucketLifecycle::new(ctx.bucket()),
        "NoSuchLifecycleConfiguration",
    )
    .await;
}

pub(super) async fn bucket_policy(ctx: Ctx) {
    ctx.create_bucket().await;
    let policy = format!(
        "{{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [{{\"Sid\": \"ReadOnly\", \"Effect\": \"Allow\", \
         \"Principal\": \"*\", \"Action\": \"s3:GetObject\", \"Resource\": \"arn:aws:s3:::{}/*\"}}]\n}}",
        ctx.bucket
    );
    configuration_cycle(
        &ctx,
        ctx.deviates(),
        PutBucketPolicy::new(ctx.bucket(), policy.clone()),
        || GetBucketPolicy::new(ctx.bucket()),
        // The policy comes back verbatim.
        |read| read.policy,
        policy,
        DeleteBucketPolicy::new(ctx.bucket()),
        "NoSuchBucketPolicy",
    )
    .await;
}

pub(super) async fn bucket_cors(ctx: Ctx) {
    ctx.create_bucket().await;
    let mut rule = CorsRule::new(["https://app.example.com"], ["GET", "PUT"]);
    rule.id = Some("app".into());
    rule.allowed_headers = vec!["*".into()];
    rule.expose_headers = vec!["ETag".into()];
    rule.max_age_seconds = Some(3000);
    let cors = CorsConfiguration::new(vec![rule, CorsRule::new(["*"], ["HEAD"])]);
    configuration_cycle(
        &ctx,
        ctx.deviates(),
        PutBucketCors::new(ctx.bucket(), cors.clone()),
        || GetBucketCors::new(ctx.bucket()),
        |read| read.result,
        cors,
        DeleteBucketCors::new(ctx.bucket()),
        "NoSuchCORSConfiguration",
    )
    .await;
}

pub(super) async fn bucket_encryption(ctx: Ctx) {
    ctx.create_bucket().await;
    let mut default = EncryptionByDefault::new("aws:kms");
    default.kms_master_key_id = Some("alias/backups".into());
    let mut rule = EncryptionRule::new(default);
    rule.bucket_key_enabled = Some(true);
    let configuration = ServerSideEncryptionConfiguration::new(vec![rule]);
    configuration_cycle(
        &ctx,
        ctx.deviates(),
        PutBucketEncryption::new(ctx.bucket(), configuration.clone()),
        || GetBucketEncryption::new(ctx.bucket()),
        |read| read.result,
        configuration,
        DeleteBucketEncryption::new(ctx.bucket()),
        "ServerSideEncryptionConfigurationNotFoundError",
    )
    .await;
}

pub(super) async fn bucket_tagging(ctx: Ctx) {
    ctx.create_bucket().await;
    let tags = Tagging::new(vec![
        Tag::new("team", "data"),
        Tag::new("cost center", "42 / b"),
    ]);
    configuration_cycle(
        &ctx,
        ctx.deviates(),
        PutBucketTagging::new(ctx.bucket(), tags.clone()),
        || GetBucketTagging::new(ctx.bucket()),
        |read| read.result,
        tags,
        DeleteBucketTagging::new(ctx.bucket()),
        "NoSuchTagSet",
    )
    .await;
}

pub(super) async fn public_access_block(ctx: Ctx) {
    ctx.create_bucket().await;
    let mut block = PublicAccessBlockConfiguration::all_blocked();
    block.restrict_public_buckets = Some(false);
    configuration_cycle(
        &ctx,
        ctx.deviates(),
        PutPublicAccessBlock::new(ctx.bucket(), block),
        || GetPublicAccessBlock::new(ctx.bucket()),
        |read| read.result,
        block,
        DeletePublicAccessBlock::new(ctx.bucket()),
        "NoSuchPublicAccessBlockConfiguration",
    )
    .await;
}

/// `(grantee, permission)` pairs of an ACL, by kind and value.
fn grants(acl: &s3_wire_tokio::s3_xml::AccessControlPolicy) -> Vec<(String, Permission)> {
    acl.grants
        .iter()
        .map(|grant| {
            let who = match &grant.grantee {
                Grantee::CanonicalUser { id, .. } => format!("id={id}"),
                Grantee::Group { uri } => format!("uri={uri}"),
                Grantee::Email { address } => format!("email={address}"),
                other => format!("{other:?}"),
            };
            (who, grant.permission)
        })
        .collect()
}

pub(super) async fn acls(ctx: Ctx) {
    ctx.create_bucket().await;
    let client = &ctx.client;
    // A canned ACL on the upload.
    client
        .put_object(
            PutObject::new(ctx.bucket(), object_key("public")).acl(CannedAcl::PublicRead),
            Bytes::from_static(b"x"),
        )
        .await
        .unwrap();
    let read = client
        .get_object_acl(GetObjectAcl::new(ctx.bucket(), object_key("public")))
        .await;
    if ctx.deviates() && ctx.kind() == Kind::LocalS3 {
        assert_not_implemented(read);
        return;
    }
    let acl = read.unwrap().result;
    let owner = acl
        .owner
        .clone()
        .and_then(|o| o.id)
        .expect("the ACL names its owner");
    let all_users = format!("uri={}", Grantee::ALL_USERS);
    assert_eq!(
        grants(&acl),
        [
            (format!("id={owner}"), Permission::FullControl),
            (all_users.clone(), Permission::Read)
        ]
    );
    // Canned ACL, explicit grants, a whole policy: each replaces the object's ACL.
    client
        .put_object_acl(PutObjectAcl::new(
            ctx.bucket(),
            object_key("public"),
            AclSource::Canned(CannedAcl::Private),
        ))
        .await
        .unwrap();
    let private = client
        .get_object_acl(GetObjectAcl::new(ctx.bucket(), object_key("public")))
        .await
        .unwrap();
    assert_eq!(
        grants(&private.result),
        [(format!("id={owner}"), Permission::FullControl)]
    );
    let by_headers = Grants::new()
        .grant(
            Permission::FullControl,
            Grantee::CanonicalUser {
                id: owner.clone(),
                display_name: None,
            },
        )
        .grant(
            Permission::Read,
            Grantee::Group {
                uri: Grantee::AUTHENTICATED_USERS.into(),
            },
        );
    client
        .put_object_acl(PutObjectAcl::new(
            ctx.bucket(),
            object_key("public"),
            AclSource::Grants(by_headers),
        ))
        .await
        .unwrap();
    let granted = client
        .get_object_acl(GetObjectAcl::new(ctx.bucket(), object_key("public")))
        .await
        .unwrap();
    assert!(
        grants(&granted.result).contains(&(
            format!("uri={}", Grantee::AUTHENTICATED_USERS),
            Permission::Read
        )),
        "{granted:?}"
    );
    let mut policy = private.result.clone();
    policy.grants.push(s3_wire_tokio::s3_xml::Grant::new(
        Grantee::Group {
            uri: Grantee::ALL_USERS.into(),
        },
        Permission::ReadAcp,
    ));
    client
        .put_object_acl(PutObjectAcl::new(
            ctx.bucket(),
            object_key("public"),
            AclSource::Policy(policy.clone()),
        ))
        .await
        .unwrap();
    let replaced = client
        .get_object_acl(GetObjectAcl::new(ctx.bucket(), object_key("public")))
        .await
        .unwrap();
    if ctx.deviates() {
        // moto answers 200 and resets the ACL to the owner's alone.
        assert_eq!(grants(&replaced.result), grants(&private.result));
    } else {
        assert_eq!(grants(&replaced.result), grants(&policy));
    }
    // The bucket's own ACL.
    client
        .put_bucket_acl(PutBucketAcl::new(
            ctx.bucket(),
            AclSource::Canned(CannedAcl::PublicRead),
        ))
        .await
        .unwrap();
    let bucket_acl = client
        .get_bucket_acl(GetBucketAcl::new(ctx.bucket()))
        .await
        .unwrap();
    assert!(grants(&bucket_acl.result).contains(&(all_users, Permission::Read)));
}

pub(super) async fn get_object_attributes(ctx: Ctx) {
    ctx.create_bucket().await;
    let client = &ctx.client;
    let put = client
        .put_object(
            PutObject::new(ctx.bucket(), object_key("single"))
                .checksum_algorithm(ChecksumAlgorithm::Crc32),
            Bytes::from_static(b"attributes"),
        )
        .await
        .unwrap();
    let single = client
        .get_object_attributes(GetObjectAttributes::new(ctx.bucket(), object_key("single")))
        .await;
    if ctx.deviates() && ctx.kind() == Kind::LocalS3 {
        assert_not_implemented(single);
        return;
    }
    let single = single.unwrap().result;
    assert_eq!(single.etag, put.etag);
    assert_eq!(single.object_size, Some(10));
    assert_eq!(
        single.checksums.crc32.as_deref(),
        put.checksums.get(ChecksumAlgorithm::Crc32)
    );
    assert_eq!(single.storage_class.as_deref(), Some("STANDARD"));

    // A multipart object: its parts and their checksums, in one request.
    let (upload_id, parts, _) = upload_parts(
        &ctx,
        "multi",
        &[5 << 20, 5 << 20, 7],
        Some(ChecksumAlgorithm::Crc32),
    )
    .await;
    client
        .complete_multipart_upload(
            s3_wire_tokio::s3_ops::ops::complete_multipart_upload::CompleteMultipartUpload::new(
                ctx.bucket(),
                object_key("multi"),
                upload_id,
                parts.clone(),
            ),
        )
        .await
        .unwrap();
    let multi = client
        .get_object_attributes(
            GetObjectAttributes::new(ctx.bucket(), object_key("multi")).max_parts(2),
        )
        .await
        .unwrap();
    assert_eq!(multi.result.object_size, Some((10 << 20) + 7));
    if ctx.deviates() {
        // moto lists no parts.
        assert!(multi.result.object_parts.is_none(), "{multi:?}");
        return;
    }
    let object_parts = multi.result.object_parts.clone().expect("the parts");
    assert_eq!(object_parts.total_parts_count, Some(3));
    let mut listed = object_parts.parts;
    let mut page = multi;
    let mut op = GetObjectAttributes::new(ctx.bucket(), object_key("multi")).max_parts(2);
    while let Some(next) = op.next_page(&page) {
        page = client.get_object_attributes(next.clone()).await.unwrap();
        listed.extend(page.result.object_parts.clone().unwrap().parts);
        op = next;
    }
    let got: Vec<(u32, Option<u64>, Option<String>)> = listed
        .iter()
        .map(|p| (p.part_number, p.size, p.checksums.crc32.clone()))
        .collect();
    let sent: Vec<(u32, Option<u64>, Option<String>)> = parts
        .iter()
        .zip([5 << 20, 5 << 20, 7])
        .map(|(p, size)| (p.part_number, Some(size), p.checksums.crc32.clone()))
        .collect();
    assert_eq!(got, sent);
}

pub(super) async fn restore_object(ctx: Ctx) {
    ctx.create_bucket().await;
    let client = &ctx.client;
    let put = client
        .put_object(
            PutObject::new(ctx.bucket(), object_key("cold")).storage_class(StorageClass::Glacier),
            Bytes::from_static(b"brr"),
        )
        .await;
    let restore = |key: &str| {
        client.restore_object(RestoreObject::new(
            ctx.bucket(),
            object_key(key),
            RestoreRequest::new(1, RestoreTier::Standard),
        ))
    };
    if ctx.deviates() {
        // local-s3 has no archive classes, and no restore.
        assert_eq!(code(put), (400, "InvalidStorageClass".into()));
        ctx.put("standard", Bytes::from_static(b"x")).await;
        assert_not_implemented(restore("standard").await);
        return;
    }
    put.unwrap();
    let get = ctx
        .get_with(GetObject::new(ctx.bucket(), object_key("cold")))
        .await;
    let restore = restore("cold").await;
    // Archived: the error says so, and what to do.
    let err = get.unwrap_err();
    assert!(
        err.service_error().is_some_and(|e| e.is_archived()),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("RestoreObject") && text.contains("GLACIER"),
        "{text}"
    );
    assert!(!restore.unwrap().already_restored);
    let head = ctx.head("cold").await.unwrap();
    assert!(
        head.restore
            .as_deref()
            .is_some_and(|r| r.contains("ongoing-request=\"false\"")),
        "{:?}",
        head.restore
    );
    assert_eq!(ctx.get("cold").await, "brr");
    let again = client
        .restore_object(RestoreObject::new(
            ctx.bucket(),
            object_key("cold"),
            RestoreRequest::new(2, RestoreTier::Bulk),
        ))
        .await
        .unwrap();
    assert!(again.already_restored);
}

pub(super) async fn list_objects_v1(ctx: Ctx) {
    ctx.create_bucket().await;
    let keys = [
        "a b/1",
        "a b/2",
        "plus+sign",
        "percent 100%",
        "top",
        "z/deep/x",
    ];
    for key in keys {
        ctx.put(key, Bytes::from_static(b"v")).await;
    }
    let mut pages = ctx
        .client
        .list_objects_pages(ListObjects::new(ctx.bucket()).delimiter("/").max_keys(2));
    let (mut listed, mut prefixes, mut count) = (Vec::new(), Vec::new(), 0);
    while let Some(page) = pages.next_page().await {
        let page = page.unwrap();
        count += 1;
        listed.extend(page.result.contents.into_iter().map(|o| o.key));
        prefixes.extend(page.result.common_prefixes);
    }
    assert_eq!(listed, ["percent 100%", "plus+sign", "top"]);
    if ctx.deviates() {
        // moto lists every common prefix on every page (and counts only keys).
        assert_eq!(prefixes, ["a b/", "z/", "a b/", "z/"]);
        assert_eq!(count, 2);
    } else {
        assert_eq!(prefixes, ["a b/", "z/"]);
        assert!(count >= 3, "{count} pages of at most 2 entries");
    }
    // The same keys as ListObjectsV2 lists.
    let mut flat = ctx
        .client
        .list_objects_pages(ListObjects::new(ctx.bucket()).max_keys(4));
    let mut v1 = Vec::new();
    while let Some(page) = flat.next_page().await {
        v1.extend(page.unwrap().result.contents.into_iter().map(|o| o.key));
    }
    let mut v2 = Vec::new();
    let mut pages = ctx
        .client
        .list_objects_v2_pages(ListObjectsV2::new(ctx.bucket()));
    while let Some(page) = pages.next_page().await {
        v2.extend(page.unwrap().result.contents.into_iter().map(|o| o.key));
    }
    assert_eq!(v1, v2);
    assert_eq!(v1.len(), keys.len());
}

/// The fields of a form, in order.
type Form = Vec<(String, String)>;

pub(super) async fn presigned_post(ctx: Ctx) {
    ctx.create_bucket().await;
    let conditions = PostConditions::key_prefix("uploads/")
        .content_length_range(1, 1024)
        .content_type_prefix("text/");
    let form = ctx
        .client
        .presign_post(&ctx.bucket(), &conditions, Duration::from_secs(300))
        .await
        .unwrap();
    let with_key = |key: &str| -> Form {
        form.fields()
            .iter()
            .map(|(name, value)| {
                let value = if name == "key" {
                    key.to_owned()
                } else {
                    value.clone()
                };
                (name.clone(), value)
            })
            .chain([("Content-Type".to_owned(), "text/plain".to_owned())])
            .collect()
    };
    // The signature is the HMAC of the policy under the SigV4 key of the credential's scope,
    // as the independent verifier of the tests computes it.
    let credential = form.field("x-amz-credential").unwrap();
    let (access_key, scope) = credential.split_once('/').unwrap();
    assert_eq!(access_key, ctx.server.access_key);
    let key = support::sigv4::signing_key(&ctx.server.secret_key, scope);
    let policy = form.field("policy").unwrap();
    assert_eq!(
        form.field("x-amz-signature"),
        Some(support::sigv4::hex(&support::sigv4::hmac(&key, policy.as_bytes())).as_str())
    );
    // A browser-style upload with the fields succeeds.
    let data = pattern(700, 5);
    let (status, body) =
        post_form(form.url(), &with_key("uploads/ok.txt"), "text/plain", &data).await;
    assert!((200..300).contains(&status), "POST: {status} {body}");
    assert_eq!(ctx.get("uploads/ok.txt").await, data);

    // Each broken condition: the form is refused, nothing is stored.
    let mut broken: Vec<(&str, Form, Vec<u8>)> = vec![
        (
            "too-big",
            with_key("uploads/too-big.txt"),
            pattern(1025, 6).to_vec(),
        ),
        ("empty", with_key("uploads/empty.txt"), Vec::new()),
        ("other-prefix", with_key("elsewhere/x.txt"), b"x".to_vec()),
    ];
    let mut wrong_type = with_key("uploads/wrong-type.txt");
    wrong_type.iter_mut().for_each(|(name, value)| {
        if name == "Content-Type" {
            *value = "image/png".into();
        }
    });
    broken.push(("wrong-type", wrong_type, b"x".to_vec()));
    let mut tampered = with_key("uploads/tampered.txt");
    tampered.iter_mut().for_each(|(name, value)| {
        if name == "x-amz-signature" {
            let last = if value.ends_with('0') { '1' } else { '0' };
            value.pop();
            value.push(last);
        }
    });
    broken.push(("tampered", tampered, b"x".to_vec()));
    // Expired: signed ten minutes ago for one minute, with the server's keys.
    let expired = s3_wire_tokio::s3_ops::presign_post::presign_post(
        &ctx.bucket(),
        &conditions,
        ctx.client.endpoint(),
        &s3_wire_tokio::s3_sigv4::Signer::new(),
        &s3_wire_tokio::s3_sigv4::Credentials::new(
            ctx.server.access_key.clone(),
            ctx.server.secret_key.clone(),
            None,
        ),
        SystemTime::now() - Duration::from_secs(600),
        Duration::from_secs(60),
    )
    .unwrap();
    let mut expired_fields: Form = expired
        .fields()
        .iter()
        .map(|(n, v)| {
            let v = if n == "key" {
                "uploads/expired.txt".to_owned()
            } else {
                v.clone()
            };
            (n.clone(), v)
        })
        .collect();
    expired_fields.push(("Content-Type".into(), "text/plain".into()));
    broken.push(("expired", expired_fields, b"x".to_vec()));

    let deviates = ctx.deviates();
    for (case, fields, file) in broken {
        let key = fields
            .iter()
            .find(|(n, _)| n == "key")
            .map(|(_, v)| v.clone())
            .unwrap();
        let file_type = fields
            .iter()
            .find(|(n, _)| n == "Content-Type")
            .map(|(_, v)| v.clone())
            .unwrap();
        let (status, body) = post_form(form.url(), &fields, &file_type, &file).await;
        let stored = ctx.head(&key).await;
        if deviates {
            // moto checks none of the policy: every form is stored.
            assert!((200..300).contains(&status), "{case}: {status} {body}");
            assert!(stored.is_ok(), "{case}");
        } else {
            assert!((400..500).contains(&status), "{case}: {status} {body}");
            assert!(stored.unwrap_err().is_not_found(), "{case}: stored anyway");
        }
    }
}

/// Posts the form to `url`; returns the status and the body.
async fn post_form(
    url: &str,
    fields: &[(String, String)],
    file_type: &str,
    file: &[u8],
) -> (u16, String) {
    let (content_type, body) = support::form::multipart_form(fields, "upload.txt", file_type, file);
    let response = support::http_client()
        .post(url)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("POST the form");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

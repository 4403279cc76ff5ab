//! Encoders round-trip through the decoders for arbitrary values.

use proptest::prelude::*;
use s3_xml::*;

/// Characters XML 1.0 can carry (with `\r` via `&#13;`), biased towards the
/// ones that need care: markup, quotes, whitespace, line ends, non-ASCII.
fn xml_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => prop::sample::select(vec!['&', '<', '>', '"', '\'', ' ', '\t', '\n', '\r', '%', '+', ';', '#', ']', '/', 'é', '😀', '\u{85}', '\u{2028}', '\u{fffd}']),
        5 => any::<char>().prop_filter("XML 1.0 character", |c| !is_illegal(*c)),
    ]
}

fn is_illegal(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
}

fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(xml_char(), 0..max).prop_map(String::from_iter)
}

fn etag() -> impl Strategy<Value = ETag> {
    "[!#-~\u{80}-\u{fffd}\u{10000}-\u{10ffff}]{1,40}"
        .prop_map(|s| ETag::parse(&format!("\"{s}\"")).unwrap())
}

fn limits() -> Limits {
    Limits::default()
}

/// Instants of years 0000–9999 with millisecond fractions, as S3 writes them.
fn timestamp() -> impl Strategy<Value = Timestamp> {
    (-62_167_219_200i64..253_402_300_799, 0u32..1000).prop_map(|(seconds, millis)| {
        let time = if seconds >= 0 {
            std::time::UNIX_EPOCH + std::time::Duration::new(seconds as u64, millis * 1_000_000)
        } else {
            std::time::UNIX_EPOCH - std::time::Duration::from_secs(seconds.unsigned_abs())
                + std::time::Duration::from_millis(u64::from(millis))
        };
        Timestamp::from_system_time(time).unwrap()
    })
}

fn lifecycle_filter() -> impl Strategy<Value = LifecycleFilter> {
    (
        proptest::option::of(text(12)),
        proptest::collection::vec((text(8), text(8)), 0..3),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
    )
        .prop_map(|(prefix, tags, greater, less)| {
            let mut filter = LifecycleFilter::everything();
            filter.prefix = prefix;
            filter.tags = tags.into_iter().map(|(k, v)| Tag::new(k, v)).collect();
            filter.object_size_greater_than = greater;
            filter.object_size_less_than = less;
            filter
        })
}

/// A rule S3's schema allows: a filter or a legacy prefix (not both), one of days / date /
/// delete-marker expiration, days or a date for each transition.
fn lifecycle_rule() -> impl Strategy<Value = LifecycleRule> {
    (
        (
            proptest::option::of(text(10)),
            any::<bool>(),
            proptest::option::of(lifecycle_filter()),
            proptest::option::of(text(8)),
        ),
        proptest::option::of((0u8..3, any::<u32>(), timestamp(), any::<bool>())),
        proptest::collection::vec(
            (any::<bool>(), any::<u32>(), timestamp(), "[A-Z_]{1,12}"),
            0..3,
        ),
        proptest::collection::vec(
            (
                proptest::option::of(any::<u32>()),
                proptest::option::of(any::<u32>()),
                "[A-Z_]{1,12}",
            ),
            0..3,
        ),
        proptest::option::of((
            proptest::option::of(any::<u32>()),
            proptest::option::of(any::<u32>()),
        )),
        proptest::option::of(any::<u32>()),
    )
        .prop_map(
            |(
                (id, enabled, filter, legacy),
                expiration,
                transitions,
                noncurrent,
                noncurrent_expiration,
                abort,
            )| {
                let mut rule = LifecycleRule::new("x", LifecycleFilter::everything());
                rule.id = id;
                rule.status = if enabled {
                    RuleStatus::Enabled
                } else {
                    RuleStatus::Disabled
                };
                rule.filter = filter.clone();
                rule.prefix = if filter.is_some() { None } else { legacy };
                rule.expiration = expiration.map(|(kind, days, date, marker)| {
                    let mut expiration = LifecycleExpiration::default();
                    match kind {
                        0 => expiration.days = Some(days),
                        1 => expiration.date = Some(date),
                        _ => expiration.expired_object_delete_marker = Some(marker),
                    }
                    expiration
                });
                rule.transitions = transitions
                    .into_iter()
                    .map(|(by_days, days, date, class)| {
                        let mut transition = Transition::after_days(days, class);
                        if !by_days {
                            transition.days = None;
                            transition.date = Some(date);
                        }
                        transition
                    })
                    .collect();
                rule.noncurrent_version_transitions = noncurrent
                    .into_iter()
                    .map(|(days, newer, class)| {
                        let mut transition = NoncurrentVersionTransition::after_days(0, class);
                        transition.noncurrent_days = days;
                        transition.newer_noncurrent_versions = newer;
                        transition
                    })
                    .collect();
                rule.noncurrent_version_expiration = noncurrent_expiration.map(|(days, newer)| {
                    let mut expiration = NoncurrentVersionExpiration::default();
                    expiration.noncurrent_days = days;
                    expiration.newer_noncurrent_versions = newer;
                    expiration
                });
                rule.abort_incomplete_multipart_upload_days = abort;
                rule
            },
        )
}

proptest! {
    #[test]
    fn delete_round_trips(
        objects in proptest::collection::vec((text(60), proptest::option::of(text(20))), 0..20),
        quiet in any::<bool>(),
    ) {
        let objects = objects.into_iter().map(|(key, version)| match version {
            Some(v) => ObjectIdentifier::with_version(key, v),
            None => ObjectIdentifier::new(key),
        }).collect();
        let request = Delete::new(objects).quiet(quiet);
        let xml = encode_delete(&request).unwrap();
        prop_assert_eq!(decode_delete_request(xml.as_bytes(), &limits()).unwrap(), request);
    }

    #[test]
    fn tagging_round_trips(tags in proptest::collection::vec((text(30), text(30)), 0..10)) {
        let tagging = Tagging::new(tags.into_iter().map(|(k, v)| Tag::new(k, v)).collect());
        let xml = encode_tagging(&tagging).unwrap();
        prop_assert_eq!(decode_tagging(xml.as_bytes(), &limits()).unwrap(), tagging);
    }

    #[test]
    fn complete_multipart_upload_round_trips(
        parts in proptest::collection::vec(
            (1u32..=10_000, etag(), proptest::collection::vec(proptest::option::of(text(12)), 5)),
            0..20,
        ),
    ) {
        let parts = parts.into_iter().map(|(n, etag, sums)| {
            let mut c = Checksums::default();
            c.crc32 = sums[0].clone();
            c.crc32c = sums[1].clone();
            c.crc64nvme = sums[2].clone();
            c.sha1 = sums[3].clone();
            c.sha256 = sums[4].clone();
            CompletedPart::new(n, etag).with_checksums(c)
        }).collect();
        let request = CompleteMultipartUpload::new(parts);
        let xml = encode_complete_multipart_upload(&request).unwrap();
        prop_assert_eq!(decode_complete_multipart_upload_request(xml.as_bytes(), &limits()).unwrap(), request);
    }

    #[test]
    fn create_bucket_configuration_round_trips(region in proptest::option::of(text(20))) {
        let mut config = CreateBucketConfiguration::default();
        config.location_constraint = region;
        let xml = encode_create_bucket_configuration(&config).unwrap();
        prop_assert_eq!(decode_create_bucket_configuration(xml.as_bytes(), &limits()).unwrap(), config);
    }

    #[test]
    fn object_lock_documents_round_trip(
        mode in proptest::option::of(prop::sample::select(RetentionMode::ALL.to_vec())),
        until in proptest::option::of(timestamp()),
        hold in prop::sample::select(LegalHoldStatus::ALL.to_vec()),
        enabled in any::<bool>(),
        default in proptest::option::of((prop::sample::select(RetentionMode::ALL.to_vec()), any::<bool>(), any::<u32>())),
    ) {
        let mut retention = Retention::default();
        retention.mode = mode;
        retention.retain_until_date = until;
        let xml = encode_retention(&retention).unwrap();
        prop_assert_eq!(decode_retention(xml.as_bytes(), &limits()).unwrap(), retention);
        let hold = LegalHold::new(hold);
        let xml = encode_legal_hold(&hold).unwrap();
        prop_assert_eq!(decode_legal_hold(xml.as_bytes(), &limits()).unwrap(), hold);
        let mut config = ObjectLockConfiguration::enabled(default.map(|(mode, days, n)| {
            DefaultRetention::new(mode, if days { RetentionPeriod::Days(n) } else { RetentionPeriod::Years(n) })
        }));
        config.enabled = enabled;
        let xml = encode_object_lock_configuration(&config).unwrap();
        prop_assert_eq!(decode_object_lock_configuration(xml.as_bytes(), &limits()).unwrap(), config);
    }

    #[test]
    fn versioning_and_public_access_block_round_trip(
        status in proptest::option::of(prop::sample::select(VersioningStatus::ALL.to_vec())),
        mfa in proptest::option::of(prop::sample::select(MfaDeleteStatus::ALL.to_vec())),
        settings in proptest::collection::vec(proptest::option::of(any::<bool>()), 4),
    ) {
        let mut versioning = VersioningConfiguration::default();
        versioning.status = status;
        versioning.mfa_delete = mfa;
        let xml = encode_versioning_configuration(&versioning).unwrap();
        prop_assert_eq!(decode_versioning_configuration(xml.as_bytes(), &limits()).unwrap(), versioning);
        let mut block = PublicAccessBlockConfiguration::default();
        block.block_public_acls = settings[0];
        block.ignore_public_acls = settings[1];
        block.block_public_policy = settings[2];
        block.restrict_public_buckets = settings[3];
        let xml = encode_public_access_block_configuration(&block).unwrap();
        prop_assert_eq!(decode_public_access_block_configuration(xml.as_bytes(), &limits()).unwrap(), block);
    }

    #[test]
    fn lifecycle_configurations_round_trip(rules in proptest::collection::vec(lifecycle_rule(), 0..5)) {
        let config = LifecycleConfiguration::new(rules);
        let xml = encode_lifecycle_configuration(&config).unwrap();
        prop_assert_eq!(decode_lifecycle_configuration(xml.as_bytes(), &limits()).unwrap(), config);
    }

    #[test]
    fn cors_and_encryption_round_trip(
        rules in proptest::collection::vec(
            (proptest::option::of(text(10)), proptest::collection::vec(proptest::collection::vec(text(12), 0..4), 4), proptest::option::of(any::<u32>())),
            0..5,
        ),
        sse in proptest::collection::vec((proptest::option::of((text(12), proptest::option::of(text(20)))), proptest::option::of(any::<bool>())), 0..3),
    ) {
        let rules = rules.into_iter().map(|(id, mut lists, max_age)| {
            // A rule needs a method and an origin.
            lists[1].push("GET".into());
            lists[2].push("*".into());
            let mut rule = CorsRule::new(lists[2].clone(), lists[1].clone());
            rule.id = id;
            rule.allowed_headers = lists[0].clone();
            rule.expose_headers = lists[3].clone();
            rule.max_age_seconds = max_age;
            rule
        }).collect();
        let cors = CorsConfiguration::new(rules);
        let xml = encode_cors_configuration(&cors).unwrap();
        prop_assert_eq!(decode_cors_configuration(xml.as_bytes(), &limits()).unwrap(), cors);
        let rules = sse.into_iter().map(|(default, bucket_key)| {
            let mut rule = EncryptionRule::default();
            rule.default = default.map(|(algorithm, key)| {
                let mut default = EncryptionByDefault::new(algorithm);
                default.kms_master_key_id = key;
                default
            });
            rule.bucket_key_enabled = bucket_key;
            rule
        }).collect();
        let sse = ServerSideEncryptionConfiguration::new(rules);
        let xml = encode_server_side_encryption_configuration(&sse).unwrap();
        prop_assert_eq!(decode_server_side_encryption_configuration(xml.as_bytes(), &limits()).unwrap(), sse);
    }

    #[test]
    fn access_control_policies_and_restore_requests_round_trip(
        owner in proptest::option::of((text(20), proptest::option::of(text(10)))),
        grants in proptest::collection::vec((0u8..3, text(20), proptest::option::of(text(10)), prop::sample::select(Permission::ALL.to_vec())), 0..6),
        days in proptest::option::of(any::<u32>()),
        tier in proptest::option::of(prop::sample::select(RestoreTier::ALL.to_vec())),
    ) {
        let mut acl = AccessControlPolicy::default();
        acl.owner = owner.map(|(id, name)| {
            let mut owner = Owner::new(id);
            owner.display_name = name;
            owner
        });
        acl.grants = grants.into_iter().map(|(kind, value, name, permission)| {
            let grantee = match kind {
                0 => Grantee::CanonicalUser { id: value, display_name: name },
                1 => Grantee::Group { uri: value },
                _ => Grantee::Email { address: value },
            };
            Grant::new(grantee, permission)
        }).collect();
        let xml = encode_access_control_policy(&acl).unwrap();
        prop_assert_eq!(decode_access_control_policy(xml.as_bytes(), &limits()).unwrap(), acl);
        let mut restore = RestoreRequest::default();
        restore.days = days;
        restore.tier = tier;
        let xml = encode_restore_request(&restore).unwrap();
        prop_assert_eq!(decode_restore_request(xml.as_bytes(), &limits()).unwrap(), restore);
    }

    #[test]
    fn illegal_characters_are_refused_where_they_are(
        before in text(10),
        bad in prop::sample::select(vec!['\u{0}', '\u{1}', '\u{8}', '\u{b}', '\u{c}', '\u{e}', '\u{1f}', '\u{fffe}', '\u{ffff}']),
        after in text(10),
    ) {
        let key = format!("{before}{bad}{after}");
        let err = encode_delete(&Delete::new(vec![ObjectIdentifier::new(key)])).unwrap_err();
        prop_assert_eq!(err.kind(), &ErrorKind::Unencodable { field: "Key", character: bad });
        prop_assert_eq!(err.position(), before.len() as u64);
    }
}

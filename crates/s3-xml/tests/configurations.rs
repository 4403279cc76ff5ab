//! The bucket and object configuration documents (Object Lock, versioning, lifecycle, CORS,
//! default encryption, public access block, ACLs, GetObjectAttributes, RestoreObject):
//! every fixture in testdata/ (see SOURCE.txt) against the decoders, the encoders' exact
//! output, and their strictness and bounds.

use s3_xml::*;

fn fixture(path: &str) -> Vec<u8> {
    let full = format!("{}/testdata/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn limits() -> Limits {
    Limits::default()
}

const NS: &str = r#" xmlns="http://s3.amazonaws.com/doc/2006-03-01/""#;

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[test]
fn s3mock_object_lock_documents() {
    let retention = decode_retention(
        &fixture("s3mock/RetentionTest_testDeserialization.xml"),
        &limits(),
    )
    .unwrap();
    assert_eq!(
        retention,
        Retention::new(RetentionMode::Governance, ts("2017-12-28T16:03:28.120Z"))
    );
    let retention = decode_retention(
        &fixture("s3mock/RetentionTest_testSerialization.xml"),
        &limits(),
    )
    .unwrap();
    assert_eq!(retention.mode, Some(RetentionMode::Compliance));

    let hold = decode_legal_hold(
        &fixture("s3mock/LegalHoldTest_testDeserialization.xml"),
        &limits(),
    )
    .unwrap();
    assert_eq!(hold.status, LegalHoldStatus::On);

    // Without `ObjectLockEnabled`: a default retention in years.
    let config = decode_object_lock_configuration(
        &fixture("s3mock/ObjectLockConfigurationTest_testDeserialization.xml"),
        &limits(),
    )
    .unwrap();
    assert!(!config.enabled);
    assert_eq!(
        config.default_retention,
        Some(DefaultRetention::new(
            RetentionMode::Compliance,
            RetentionPeriod::Years(1)
        ))
    );
    let config = decode_object_lock_configuration(
        &fixture("s3mock/ObjectLockConfigurationTest_testSerialization.xml"),
        &limits(),
    )
    .unwrap();
    assert_eq!(
        config,
        ObjectLockConfiguration::enabled(Some(DefaultRetention::new(
            RetentionMode::Compliance,
            RetentionPeriod::Days(1)
        )))
    );
}

#[test]
fn object_lock_encoders_and_strictness() {
    let retention = Retention::new(RetentionMode::Compliance, ts("2030-01-02T03:04:05Z"));
    assert_eq!(
        encode_retention(&retention).unwrap(),
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Retention{NS}><Mode>COMPLIANCE</Mode>\
             <RetainUntilDate>2030-01-02T03:04:05Z</RetainUntilDate></Retention>"
        )
    );
    // The empty retention (removing a governance one) has no children.
    assert_eq!(
        encode_retention(&Retention::default()).unwrap(),
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Retention{NS}></Retention>")
    );
    assert_eq!(
        encode_legal_hold(&LegalHold::new(LegalHoldStatus::Off)).unwrap(),
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><LegalHold{NS}><Status>OFF</Status></LegalHold>"
        )
    );
    let config = ObjectLockConfiguration::enabled(Some(DefaultRetention::new(
        RetentionMode::Governance,
        RetentionPeriod::Years(7),
    )));
    assert_eq!(
        encode_object_lock_configuration(&config).unwrap(),
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ObjectLockConfiguration{NS}>\
             <ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>\
             <Mode>GOVERNANCE</Mode><Years>7</Years></DefaultRetention></Rule></ObjectLockConfiguration>"
        )
    );

    let err = |xml: &str| {
        decode_object_lock_configuration(xml.as_bytes(), &limits())
            .unwrap_err()
            .kind()
            .clone()
    };
    assert_eq!(
        err(
            "<ObjectLockConfiguration><Rule><DefaultRetention><Mode>COMPLIANCE</Mode>\
             <Days>1</Days><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>"
        ),
        ErrorKind::Exclusive {
            parent: "DefaultRetention",
            elements: "Days|Years"
        }
    );
    assert_eq!(
        err(
            "<ObjectLockConfiguration><Rule><DefaultRetention><Days>1</Days>\
             </DefaultRetention></Rule></ObjectLockConfiguration>"
        ),
        ErrorKind::MissingElement {
            parent: "DefaultRetention",
            element: "Mode"
        }
    );
    assert_eq!(
        err(
            "<ObjectLockConfiguration><ObjectLockEnabled>Disabled</ObjectLockEnabled></ObjectLockConfiguration>"
        ),
        ErrorKind::InvalidValue {
            element: "ObjectLockEnabled",
            problem: ValueProblem::NotOneOf {
                expected: "Enabled"
            }
        }
    );
    assert_eq!(
        err("<ObjectLockConfiguration><Rule/><Rule/></ObjectLockConfiguration>"),
        ErrorKind::DuplicateElement { element: "Rule" }
    );
    let bad_mode = "<Retention><Mode>governance</Mode></Retention>";
    let e = decode_retention(bad_mode.as_bytes(), &limits()).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::InvalidValue {
            element: "Mode",
            problem: ValueProblem::NotOneOf {
                expected: "GOVERNANCE|COMPLIANCE"
            }
        }
    );
    assert!(bad_mode[e.position() as usize..].starts_with("governance"));
    assert!(e.to_string().contains("GOVERNANCE|COMPLIANCE"), "{e}");
    let no_status = decode_legal_hold(b"<LegalHold></LegalHold>", &limits()).unwrap_err();
    assert_eq!(
        no_status.kind(),
        &ErrorKind::MissingElement {
            parent: "LegalHold",
            element: "Status"
        }
    );
}

#[test]
fn versioning_fixtures() {
    let v = |path| decode_versioning_configuration(&fixture(path), &limits());
    assert_eq!(
        v("s3mock/VersioningConfigurationTest_testDeserialization.xml").unwrap(),
        {
            let mut expected = VersioningConfiguration::new(VersioningStatus::Enabled);
            expected.mfa_delete = Some(MfaDeleteStatus::Enabled);
            expected
        }
    );
    assert_eq!(
        v("s3mock/VersioningConfigurationTest_testSerialization.xml").unwrap(),
        VersioningConfiguration::new(VersioningStatus::Suspended)
    );
    assert_eq!(
        v("aws-docs/versioning-unversioned.xml").unwrap(),
        VersioningConfiguration::default()
    );
    assert_eq!(
        v("aws-docs/versioning-enabled.xml").unwrap(),
        VersioningConfiguration::new(VersioningStatus::Enabled)
    );
    // The guide's template with placeholders is refused at the first one.
    let err = v("aws-docs/versioning-placeholders.xml").unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::InvalidValue {
            element: "Status",
            problem: ValueProblem::NotOneOf {
                expected: "Enabled|Suspended"
            }
        }
    );
    assert_eq!(
        encode_versioning_configuration(&VersioningConfiguration::new(VersioningStatus::Enabled))
            .unwrap(),
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><VersioningConfiguration{NS}><Status>Enabled</Status></VersioningConfiguration>"
        )
    );
}

fn rule_summary(rule: &LifecycleRule) -> String {
    format!(
        "{:?} {} filter={:?} prefix={:?} exp={:?} tr={:?} nct={:?} nce={:?} abort={:?}",
        rule.id,
        rule.status,
        rule.filter
            .as_ref()
            .map(|f| (f.prefix.clone(), f.tags.len())),
        rule.prefix,
        rule.expiration
            .as_ref()
            .map(|e| (e.days, e.expired_object_delete_marker)),
        rule.transitions
            .iter()
            .map(|t| (t.days, t.storage_class.as_str()))
            .collect::<Vec<_>>(),
        rule.noncurrent_version_transitions
            .iter()
            .map(|t| (t.noncurrent_days, t.storage_class.as_str()))
            .collect::<Vec<_>>(),
        rule.noncurrent_version_expiration
            .as_ref()
            .map(|e| e.noncurrent_days),
        rule.abort_incomplete_multipart_upload_days,
    )
}

#[test]
fn aws_docs_lifecycle_examples() {
    let rules = |path: &str| -> Vec<String> {
        decode_lifecycle_configuration(&fixture(&format!("aws-docs/{path}")), &limits())
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .rules
            .iter()
            .map(rule_summary)
            .collect()
    };
    assert_eq!(
        rules("lifecycle-filter-prefix.xml"),
        [
            r#"Some("Transition and Expiration Rule") Enabled filter=Some((Some("tax/"), 0)) prefix=None exp=Some((Some(3650), None)) tr=[(Some(365), "S3 Glacier")] nct=[] nce=None abort=None"#
        ]
    );
    assert_eq!(
        rules("lifecycle-empty-prefix.xml"),
        [
            r#"Some("Archive all object same-day upon creation") Enabled filter=Some((Some(""), 0)) prefix=None exp=None tr=[(Some(0), "S3 Glacier")] nct=[] nce=None abort=None"#
        ]
    );
    // The second rule uses the older rule-level prefix.
    assert_eq!(
        rules("lifecycle-disabled-rule-legacy-prefix.xml"),
        [
            r#"Some("Rule1") Enabled filter=Some((Some("logs/"), 0)) prefix=None exp=None tr=[(Some(0), "S3 Glacier")] nct=[] nce=None abort=None"#,
            r#"Some("Rule2") Disabled filter=None prefix=Some("documents/") exp=None tr=[(Some(0), "S3 Glacier")] nct=[] nce=None abort=None"#,
        ]
    );
    assert_eq!(
        rules("lifecycle-tiering.xml"),
        [
            r#"Some("example-id") Enabled filter=Some((Some("logs/"), 0)) prefix=None exp=Some((Some(365), None)) tr=[(Some(30), "STANDARD_IA"), (Some(90), "GLACIER")] nct=[] nce=None abort=None"#
        ]
    );
    assert_eq!(rules("lifecycle-multiple-rules.xml").len(), 2);
    assert_eq!(
        rules("lifecycle-noncurrent-versions.xml"),
        [
            r#"Some("sample-rule") Enabled filter=Some((Some(""), 0)) prefix=None exp=None tr=[(Some(90), "STANDARD_IA")] nct=[(Some(30), "S3 Glacier")] nce=Some(Some(365)) abort=None"#
        ]
    );
    assert_eq!(
        rules("lifecycle-expired-delete-marker.xml"),
        [
            r#"Some("Rule 1") Enabled filter=Some((Some("logs/"), 0)) prefix=None exp=Some((None, Some(true))) tr=[] nct=[] nce=Some(Some(30)) abort=None"#
        ]
    );
    // Typos of the guide: an unclosed <StorageClass> and a placeholder status.
    for typo in [
        "lifecycle-empty-filter-typo.xml",
        "lifecycle-conflicting-actions-typo.xml",
        "lifecycle-overlapping-prefixes-typo.xml",
        "lifecycle-tag-filters-typo.xml",
    ] {
        let err = decode_lifecycle_configuration(&fixture(&format!("aws-docs/{typo}")), &limits())
            .unwrap_err();
        // `<StorageClass>X<StorageClass>` reads as a second element inside the first.
        assert_eq!(
            err.kind(),
            &ErrorKind::UnexpectedChild {
                element: "StorageClass",
                child: "StorageClass".into()
            },
            "{typo}"
        );
    }
    let err = decode_lifecycle_configuration(
        &fixture("aws-docs/lifecycle-abort-multipart-placeholder.xml"),
        &limits(),
    )
    .unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::InvalidValue {
            element: "Status",
            problem: ValueProblem::NotOneOf {
                expected: "Enabled|Disabled"
            }
        }
    );
}

#[test]
fn s3mock_lifecycle_and_smithy_body() {
    for path in [
        "s3mock/BucketLifecycleConfigurationTest_testDeserialization.xml",
        "s3mock/BucketLifecycleConfigurationTest_testSerialization.xml",
    ] {
        let config = decode_lifecycle_configuration(&fixture(path), &limits()).unwrap();
        let summaries: Vec<String> = config.rules.iter().map(rule_summary).collect();
        assert_eq!(
            summaries,
            [
                r#"Some("id1") Enabled filter=Some((Some("documents/"), 0)) prefix=None exp=None tr=[(Some(30), "GLACIER")] nct=[] nce=None abort=None"#,
                r#"Some("id2") Enabled filter=Some((Some("logs/"), 0)) prefix=None exp=Some((Some(365), None)) tr=[] nct=[] nce=None abort=None"#,
            ],
            "{path}"
        );
    }
    // smithy-rs' PutBucketLifecycleConfiguration protocol test: its body and parameters.
    let smithy = std::fs::read_to_string(format!(
        "{}/testdata/smithy-rs/protocol-tests/s3-tests.smithy",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let start = smithy.find("<LifecycleConfiguration").unwrap();
    let end = smithy.find("</LifecycleConfiguration>").unwrap() + "</LifecycleConfiguration>".len();
    let body = smithy[start..end].replace("\\\"", "\"");
    let config = decode_lifecycle_configuration(body.as_bytes(), &limits()).unwrap();
    let mut expected = LifecycleRule::new("Expire", LifecycleFilter::everything());
    expected.filter = None;
    expected.expiration = Some(LifecycleExpiration::after_days(1));
    assert_eq!(config.rules, [expected]);
}

#[test]
fn lifecycle_filters_and_their_encoding() {
    let mut filter = LifecycleFilter::with_prefix("tax/");
    filter.tags = vec![Tag::new("key1", "value1"), Tag::new("key2", "value2")];
    filter.object_size_greater_than = Some(128);
    let mut rule = LifecycleRule::new("r", filter);
    rule.abort_incomplete_multipart_upload_days = Some(7);
    rule.transitions = vec![Transition::after_days(30, "STANDARD_IA")];
    let mut noncurrent = NoncurrentVersionTransition::after_days(10, "GLACIER");
    noncurrent.newer_noncurrent_versions = Some(2);
    rule.noncurrent_version_transitions = vec![noncurrent];
    rule.noncurrent_version_expiration = Some(NoncurrentVersionExpiration::after_days(90));
    let config = LifecycleConfiguration::new(vec![rule]);
    let xml = encode_lifecycle_configuration(&config).unwrap();
    assert_eq!(
        xml,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><LifecycleConfiguration{NS}><Rule><ID>r</ID>\
             <Filter><And><Prefix>tax/</Prefix><Tag><Key>key1</Key><Value>value1</Value></Tag>\
             <Tag><Key>key2</Key><Value>value2</Value></Tag><ObjectSizeGreaterThan>128</ObjectSizeGreaterThan>\
             </And></Filter><Status>Enabled</Status><Transition><Days>30</Days><StorageClass>STANDARD_IA</StorageClass>\
             </Transition><NoncurrentVersionTransition><NoncurrentDays>10</NoncurrentDays>\
             <NewerNoncurrentVersions>2</NewerNoncurrentVersions><StorageClass>GLACIER</StorageClass>\
             </NoncurrentVersionTransition><NoncurrentVersionExpiration><NoncurrentDays>90</NoncurrentDays>\
             </NoncurrentVersionExpiration><AbortIncompleteMultipartUpload><DaysAfterInitiation>7\
             </DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>"
        )
    );
    assert_eq!(
        decode_lifecycle_configuration(xml.as_bytes(), &limits()).unwrap(),
        config
    );
    // One condition stands alone; none is an empty filter (every object).
    let mut by_size = LifecycleFilter::everything();
    by_size.object_size_less_than = Some(5);
    let single = LifecycleConfiguration::new(vec![LifecycleRule::new("s", by_size)]);
    assert!(
        encode_lifecycle_configuration(&single)
            .unwrap()
            .contains("<Filter><ObjectSizeLessThan>5</ObjectSizeLessThan></Filter>")
    );
    let all =
        LifecycleConfiguration::new(vec![LifecycleRule::new("a", LifecycleFilter::everything())]);
    assert!(
        encode_lifecycle_configuration(&all)
            .unwrap()
            .contains("<Filter></Filter>")
    );

    let err = |xml: &str| {
        decode_lifecycle_configuration(xml.as_bytes(), &limits())
            .unwrap_err()
            .kind()
            .clone()
    };
    let rule = |body: &str| {
        format!("<LifecycleConfiguration><Rule>{body}</Rule></LifecycleConfiguration>")
    };
    // Two conditions outside <And>.
    assert_eq!(
        err(&rule(
            "<Filter><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status>"
        )),
        ErrorKind::Exclusive {
            parent: "Filter",
            elements: "Prefix|Tag|ObjectSizeGreaterThan|ObjectSizeLessThan|And"
        }
    );
    assert_eq!(
        err(&rule("<Prefix>a</Prefix><Filter/><Status>Enabled</Status>")),
        ErrorKind::Exclusive {
            parent: "Rule",
            elements: "Prefix|Filter"
        }
    );
    assert_eq!(
        err(&rule(
            "<Filter/><Expiration><Days>1</Days><Date>2030-01-01T00:00:00Z</Date></Expiration><Status>Enabled</Status>"
        )),
        ErrorKind::Exclusive {
            parent: "Expiration",
            elements: "Days|Date"
        }
    );
    assert_eq!(
        err(&rule(
            "<Filter/><Expiration><Days>1</Days><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration><Status>Enabled</Status>"
        )),
        ErrorKind::Exclusive {
            parent: "Expiration",
            elements: "Days|Date|ExpiredObjectDeleteMarker"
        }
    );
    assert_eq!(
        err(&rule("<Filter/>")),
        ErrorKind::MissingElement {
            parent: "Rule",
            element: "Status"
        }
    );
    assert_eq!(
        err(&rule(
            "<Status>Enabled</Status><Transition><Days>1</Days></Transition>"
        )),
        ErrorKind::MissingElement {
            parent: "Transition",
            element: "StorageClass"
        }
    );
    assert_eq!(
        err(&rule(
            "<Status>Enabled</Status><AbortIncompleteMultipartUpload/>"
        )),
        ErrorKind::MissingElement {
            parent: "AbortIncompleteMultipartUpload",
            element: "DaysAfterInitiation"
        }
    );
    assert_eq!(
        err(&rule(
            "<Status>Enabled</Status><Expiration><Days>-1</Days></Expiration>"
        )),
        ErrorKind::InvalidValue {
            element: "Days",
            problem: ValueProblem::NotAnInteger
        }
    );
    // Rules, transitions and tags count against the entry limit.
    let three = format!(
        "<LifecycleConfiguration>{}</LifecycleConfiguration>",
        "<Rule><Status>Enabled</Status></Rule>".repeat(3)
    );
    assert!(
        decode_lifecycle_configuration(three.as_bytes(), &Limits::default().with_max_entries(3))
            .is_ok()
    );
    assert_eq!(
        decode_lifecycle_configuration(three.as_bytes(), &Limits::default().with_max_entries(2))
            .unwrap_err()
            .kind(),
        &ErrorKind::TooManyEntries { limit: 2 }
    );
}

#[test]
fn aws_docs_cors_examples() {
    let three =
        decode_cors_configuration(&fixture("aws-docs/cors-three-rules.xml"), &limits()).unwrap();
    assert_eq!(three.rules.len(), 3);
    assert_eq!(three.rules[0].allowed_origins, ["http://www.example1.com"]);
    assert_eq!(three.rules[0].allowed_methods, ["PUT", "POST", "DELETE"]);
    assert_eq!(three.rules[0].allowed_headers, ["*"]);
    assert_eq!(three.rules[2], CorsRule::new(["*"], ["GET"]));
    let expose =
        decode_cors_configuration(&fixture("aws-docs/cors-expose-headers.xml"), &limits()).unwrap();
    assert_eq!(expose.rules[0].max_age_seconds, Some(3000));
    assert_eq!(
        expose.rules[0].expose_headers,
        [
            "x-amz-server-side-encryption",
            "x-amz-request-id",
            "x-amz-id-2"
        ]
    );
    // Encoded and decoded again, the rules are the same.
    let xml = encode_cors_configuration(&expose).unwrap();
    assert_eq!(
        decode_cors_configuration(xml.as_bytes(), &limits()).unwrap(),
        expose
    );

    let err = |body: &str| {
        decode_cors_configuration(
            format!("<CORSConfiguration><CORSRule>{body}</CORSRule></CORSConfiguration>")
                .as_bytes(),
            &limits(),
        )
        .unwrap_err()
        .kind()
        .clone()
    };
    assert_eq!(
        err("<AllowedOrigin>*</AllowedOrigin>"),
        ErrorKind::MissingElement {
            parent: "CORSRule",
            element: "AllowedMethod"
        }
    );
    assert_eq!(
        err("<AllowedMethod>GET</AllowedMethod>"),
        ErrorKind::MissingElement {
            parent: "CORSRule",
            element: "AllowedOrigin"
        }
    );
    assert_eq!(
        err(
            "<AllowedMethod>GET</AllowedMethod><AllowedOrigin>*</AllowedOrigin><MaxAgeSeconds>x</MaxAgeSeconds>"
        ),
        ErrorKind::InvalidValue {
            element: "MaxAgeSeconds",
            problem: ValueProblem::NotAnInteger
        }
    );
}

#[test]
fn encryption_and_public_access_block() {
    let mut default = EncryptionByDefault::new("aws:kms");
    default.kms_master_key_id = Some("arn:aws:kms:us-east-1:123456789012:key/abc".into());
    let mut rule = EncryptionRule::new(default);
    rule.bucket_key_enabled = Some(true);
    let config = ServerSideEncryptionConfiguration::new(vec![rule]);
    let xml = encode_server_side_encryption_configuration(&config).unwrap();
    assert_eq!(
        xml,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ServerSideEncryptionConfiguration{NS}><Rule>\
             <ApplyServerSideEncryptionByDefault><SSEAlgorithm>aws:kms</SSEAlgorithm>\
             <KMSMasterKeyID>arn:aws:kms:us-east-1:123456789012:key/abc</KMSMasterKeyID>\
             </ApplyServerSideEncryptionByDefault><BucketKeyEnabled>true</BucketKeyEnabled></Rule>\
             </ServerSideEncryptionConfiguration>"
        )
    );
    assert_eq!(
        decode_server_side_encryption_configuration(xml.as_bytes(), &limits()).unwrap(),
        config
    );
    let missing = "<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault>\
                   <KMSMasterKeyID>k</KMSMasterKeyID></ApplyServerSideEncryptionByDefault></Rule>\
                   </ServerSideEncryptionConfiguration>";
    assert_eq!(
        decode_server_side_encryption_configuration(missing.as_bytes(), &limits())
            .unwrap_err()
            .kind(),
        &ErrorKind::MissingElement {
            parent: "ApplyServerSideEncryptionByDefault",
            element: "SSEAlgorithm"
        }
    );

    let block = PublicAccessBlockConfiguration::all_blocked();
    let xml = encode_public_access_block_configuration(&block).unwrap();
    assert_eq!(
        xml,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><PublicAccessBlockConfiguration{NS}>\
             <BlockPublicAcls>true</BlockPublicAcls><IgnorePublicAcls>true</IgnorePublicAcls>\
             <BlockPublicPolicy>true</BlockPublicPolicy><RestrictPublicBuckets>true</RestrictPublicBuckets>\
             </PublicAccessBlockConfiguration>"
        )
    );
    assert_eq!(
        decode_public_access_block_configuration(xml.as_bytes(), &limits()).unwrap(),
        block
    );
    let twice = "<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls>\
                 <BlockPublicAcls>false</BlockPublicAcls></PublicAccessBlockConfiguration>";
    assert_eq!(
        decode_public_access_block_configuration(twice.as_bytes(), &limits())
            .unwrap_err()
            .kind(),
        &ErrorKind::DuplicateElement {
            element: "BlockPublicAcls"
        }
    );
    let not_bool = "<PublicAccessBlockConfiguration><IgnorePublicAcls>yes</IgnorePublicAcls>\
                    </PublicAccessBlockConfiguration>";
    assert_eq!(
        decode_public_access_block_configuration(not_bool.as_bytes(), &limits())
            .unwrap_err()
            .kind(),
        &ErrorKind::InvalidValue {
            element: "IgnorePublicAcls",
            problem: ValueProblem::NotABoolean
        }
    );
}

#[test]
fn access_control_policies() {
    for path in [
        "s3mock/AccessControlPolicyTest_testDeserialization.xml",
        "s3mock/AccessControlPolicyTest_testSerialization.xml",
    ] {
        let acl = decode_access_control_policy(&fixture(path), &limits()).unwrap();
        let id = "75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a";
        assert_eq!(acl.owner, Some(Owner::new(id)), "{path}");
        assert_eq!(
            acl.grants,
            [
                Grant::new(
                    Grantee::CanonicalUser {
                        id: id.into(),
                        display_name: Some("mtd@amazon.com".into())
                    },
                    Permission::FullControl
                ),
                Grant::new(
                    Grantee::Group {
                        uri: Grantee::LOG_DELIVERY.into()
                    },
                    Permission::Write
                ),
                Grant::new(
                    Grantee::Email {
                        address: "xyz@amazon.com".into()
                    },
                    Permission::WriteAcp
                ),
            ],
            "{path}"
        );
    }
    let sample =
        decode_access_control_policy(&fixture("aws-docs/acl-sample.xml"), &limits()).unwrap();
    let kinds: Vec<(&str, Permission)> = sample
        .grants
        .iter()
        .map(|g| (g.grantee.type_name(), g.permission))
        .collect();
    assert_eq!(
        kinds,
        [
            ("CanonicalUser", Permission::FullControl),
            ("CanonicalUser", Permission::Write),
            ("CanonicalUser", Permission::Read),
            ("Group", Permission::Read),
            ("Group", Permission::Write),
        ]
    );
    // The guide's default ACL spells the type "Canonical User"; the grantee is known by its
    // <ID> all the same.
    let default =
        decode_access_control_policy(&fixture("aws-docs/acl-default-bucket.xml"), &limits())
            .unwrap();
    assert_eq!(default.grants[0].grantee.type_name(), "CanonicalUser");

    // The encoder writes the xsi:type attribute S3 requires, and reads back the same policy.
    let xml = encode_access_control_policy(&sample).unwrap();
    assert!(xml.contains(
        "<Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"Group\">\
         <URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>READ</Permission>"
    ));
    assert_eq!(
        decode_access_control_policy(xml.as_bytes(), &limits()).unwrap(),
        sample
    );

    let err = |grant: &str| {
        decode_access_control_policy(
            format!("<AccessControlPolicy><AccessControlList><Grant>{grant}</Grant></AccessControlList></AccessControlPolicy>").as_bytes(),
            &limits(),
        )
        .unwrap_err()
        .kind()
        .clone()
    };
    assert_eq!(
        err("<Grantee><ID>a</ID><URI>u</URI></Grantee><Permission>READ</Permission>"),
        ErrorKind::Exclusive {
            parent: "Grantee",
            elements: "ID|URI|EmailAddress"
        }
    );
    assert_eq!(
        err("<Grantee><DisplayName>a</DisplayName></Grantee><Permission>READ</Permission>"),
        ErrorKind::MissingElement {
            parent: "Grantee",
            element: "ID"
        }
    );
    assert_eq!(
        err("<Grantee><ID>a</ID></Grantee><Permission>ALL</Permission>"),
        ErrorKind::InvalidValue {
            element: "Permission",
            problem: ValueProblem::NotOneOf {
                expected: "FULL_CONTROL|WRITE|WRITE_ACP|READ|READ_ACP"
            }
        }
    );
    assert_eq!(
        err("<Permission>READ</Permission>"),
        ErrorKind::MissingElement {
            parent: "Grant",
            element: "Grantee"
        }
    );
}

#[test]
fn get_object_attributes_results() {
    let multipart = decode_get_object_attributes(
        &fixture("s3mock/GetObjectAttributesOutputTest_testSerialization_multiPart.xml"),
        &limits(),
    )
    .unwrap();
    assert_eq!(multipart.etag.as_ref().map(ETag::as_str), Some("\"etag\""));
    assert_eq!(multipart.checksums.crc32.as_deref(), Some("checksumCRC32"));
    assert_eq!(
        multipart.checksums.checksum_type.as_deref(),
        Some("FULL_OBJECT")
    );
    assert_eq!(
        (multipart.object_size, multipart.storage_class.as_deref()),
        (Some(1), Some("STANDARD"))
    );
    let parts = multipart.object_parts.unwrap();
    assert_eq!(
        (parts.max_parts, parts.is_truncated, parts.total_parts_count),
        (Some(1000), false, Some(0))
    );
    assert_eq!(parts.parts.len(), 1);
    assert_eq!(
        (parts.parts[0].part_number, parts.parts[0].size),
        (1, Some(1))
    );
    assert_eq!(
        parts.parts[0].checksums.crc64nvme.as_deref(),
        Some("checksumCRC64NVME")
    );
    let single = decode_get_object_attributes(
        &fixture("s3mock/GetObjectAttributesOutputTest_testSerialization_object.xml"),
        &limits(),
    )
    .unwrap();
    assert!(single.object_parts.is_none());

    // S3's own root, a truncated page of parts with composite checksums.
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><GetObjectAttributesResponse{NS}>\
         <ETag>0c78aef83f66abc1fa1e8477f296d394-3</ETag><Checksum><ChecksumCRC32C>yZRlqg==-3</ChecksumCRC32C>\
         <ChecksumType>COMPOSITE</ChecksumType></Checksum><ObjectParts><PartNumberMarker>0</PartNumberMarker>\
         <NextPartNumberMarker>2</NextPartNumberMarker><MaxParts>2</MaxParts><IsTruncated>true</IsTruncated>\
         <PartsCount>3</PartsCount><Part><ChecksumCRC32C>AAAAAA==</ChecksumCRC32C><PartNumber>1</PartNumber>\
         <Size>5242880</Size></Part><Part><ChecksumCRC32C>BBBBBB==</ChecksumCRC32C><PartNumber>2</PartNumber>\
         <Size>5242880</Size></Part></ObjectParts><ObjectSize>10485761</ObjectSize></GetObjectAttributesResponse>"
    );
    let page = decode_get_object_attributes(xml.as_bytes(), &limits()).unwrap();
    let parts = page.object_parts.unwrap();
    assert_eq!(
        (
            parts.is_truncated,
            parts.next_part_number_marker,
            parts.total_parts_count
        ),
        (true, Some(2), Some(3))
    );
    assert_eq!(parts.parts[1].checksums.crc32c.as_deref(), Some("BBBBBB=="));
    assert_eq!(
        page.etag.unwrap().unquoted(),
        "0c78aef83f66abc1fa1e8477f296d394-3"
    );

    let err = decode_get_object_attributes(
        b"<GetObjectAttributesResponse><ObjectParts><Part><Size>1</Size></Part></ObjectParts></GetObjectAttributesResponse>",
        &limits(),
    )
    .unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::MissingElement {
            parent: "Part",
            element: "PartNumber"
        }
    );
    let too_many = format!(
        "<GetObjectAttributesResponse><ObjectParts>{}</ObjectParts></GetObjectAttributesResponse>",
        "<Part><PartNumber>1</PartNumber></Part>".repeat(3)
    );
    assert_eq!(
        decode_get_object_attributes(too_many.as_bytes(), &Limits::default().with_max_entries(2))
            .unwrap_err()
            .kind(),
        &ErrorKind::TooManyEntries { limit: 2 }
    );
}

#[test]
fn restore_requests() {
    let xml = encode_restore_request(&RestoreRequest::new(2, RestoreTier::Bulk)).unwrap();
    assert_eq!(
        xml,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><RestoreRequest{NS}><Days>2</Days>\
             <GlacierJobParameters><Tier>Bulk</Tier></GlacierJobParameters></RestoreRequest>"
        )
    );
    assert_eq!(
        decode_restore_request(xml.as_bytes(), &limits()).unwrap(),
        RestoreRequest::new(2, RestoreTier::Bulk)
    );
    let bad = b"<RestoreRequest><GlacierJobParameters><Tier>Fast</Tier></GlacierJobParameters></RestoreRequest>";
    assert_eq!(
        decode_restore_request(bad, &limits()).unwrap_err().kind(),
        &ErrorKind::InvalidValue {
            element: "Tier",
            problem: ValueProblem::NotOneOf {
                expected: "Standard|Bulk|Expedited"
            }
        }
    );
}

#[test]
fn configurations_are_bounded_like_every_document() {
    let xml =
        encode_cors_configuration(&CorsConfiguration::new(vec![CorsRule::new(["*"], ["GET"])]))
            .unwrap();
    assert!(decode_cors_configuration(xml.as_bytes(), &Limits::new(xml.len())).is_ok());
    assert_eq!(
        decode_cors_configuration(xml.as_bytes(), &Limits::new(xml.len() - 1))
            .unwrap_err()
            .kind(),
        &ErrorKind::TooLarge {
            limit: xml.len() - 1,
            len: xml.len()
        }
    );
    let deep = format!(
        "<LifecycleConfiguration>{}{}</LifecycleConfiguration>",
        "<Rule>".repeat(40),
        "</Rule>".repeat(40)
    );
    assert!(matches!(
        decode_lifecycle_configuration(deep.as_bytes(), &limits())
            .unwrap_err()
            .kind(),
        ErrorKind::TooDeep { .. }
    ));
    let doctype = "<!DOCTYPE x [<!ENTITY e \"x\">]><Retention><Mode>&e;</Mode></Retention>";
    assert_eq!(
        decode_retention(doctype.as_bytes(), &limits())
            .unwrap_err()
            .kind(),
        &ErrorKind::DoctypeRejected
    );
    assert_eq!(
        decode_legal_hold(b"<Retention/>", &limits())
            .unwrap_err()
            .kind(),
        &ErrorKind::UnexpectedRoot {
            expected: "LegalHold",
            found: "Retention".into()
        }
    );
    let unencodable = CorsConfiguration::new(vec![CorsRule::new(["a\u{1}"], ["GET"])]);
    assert_eq!(
        encode_cors_configuration(&unencodable).unwrap_err().kind(),
        &ErrorKind::Unencodable {
            field: "AllowedOrigin",
            character: '\u{1}'
        }
    );
}

#[test]
fn moto_recordings_decode_with_its_deviations() {
    let moto = |name: &str| fixture(&format!("moto/{name}"));
    // Roots named after the model's shapes are read like S3's.
    let attributes =
        decode_get_object_attributes(&moto("GetObjectAttributesOutput-multipart.xml"), &limits())
            .unwrap();
    assert_eq!(
        attributes.checksums.checksum_type.as_deref(),
        Some("COMPOSITE")
    );
    assert_eq!(attributes.object_size, Some(5_242_890));
    assert!(attributes.object_parts.is_none(), "moto sends no parts");
    assert_eq!(
        decode_versioning_configuration(&moto("GetBucketVersioningResponse.xml"), &limits())
            .unwrap(),
        VersioningConfiguration::new(VersioningStatus::Enabled)
    );
    // `<Years>0</Years>` beside `<Days>1</Days>` is no second period...
    assert_eq!(
        decode_object_lock_configuration(&moto("ObjectLockConfiguration-days.xml"), &limits())
            .unwrap()
            .default_retention,
        Some(DefaultRetention::new(
            RetentionMode::Governance,
            RetentionPeriod::Days(1)
        ))
    );
    // ... but two real ones are.
    let two = "<ObjectLockConfiguration><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days>\
               <Years>2</Years></DefaultRetention></Rule></ObjectLockConfiguration>";
    assert!(matches!(
        decode_object_lock_configuration(two.as_bytes(), &limits())
            .unwrap_err()
            .kind(),
        ErrorKind::Exclusive { .. }
    ));
    let lifecycle =
        decode_lifecycle_configuration(&moto("LifecycleConfiguration.xml"), &limits()).unwrap();
    let filter = lifecycle.rules[0].filter.as_ref().unwrap();
    assert_eq!(filter.prefix.as_deref(), Some("logs/"));
    assert_eq!(filter.tags, [Tag::new("a", "b")]);
    assert_eq!(filter.object_size_greater_than, None, "moto drops it");
    let acl = decode_access_control_policy(&moto("AccessControlPolicy-public-read.xml"), &limits())
        .unwrap();
    assert_eq!(
        acl.grants.last(),
        Some(&Grant::new(
            Grantee::Group {
                uri: Grantee::ALL_USERS.into()
            },
            Permission::Read
        ))
    );
}

//! Bounds, strictness and tolerance, on small hand-written documents.

use s3_xml::*;

const NS: &str = r#" xmlns="http://s3.amazonaws.com/doc/2006-03-01/""#;

fn v2(body: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><ListBucketResult{NS}><Name>b</Name>{body}</ListBucketResult>"#
    )
}

fn contents(key: &str) -> String {
    format!(
        "<Contents><Key>{key}</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>\
         <ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag><Size>434234</Size>\
         <Owner><ID>o</ID></Owner><StorageClass>STANDARD</StorageClass></Contents>"
    )
}

fn v2_err(xml: &str, limits: &Limits) -> Error {
    decode_list_objects_v2(xml.as_bytes(), limits).unwrap_err()
}

/// The error's kind, after checking that `position` points at `marker`.
fn err_at(xml: &str, err: &Error, marker: &str) -> ErrorKind {
    let at = usize::try_from(err.position()).unwrap();
    assert!(
        xml[at..].starts_with(marker),
        "{err} points at {:?}",
        &xml[at..]
    );
    err.kind().clone()
}

#[test]
fn dtd_and_entity_declarations_are_rejected() {
    let laughs = r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>
        <Error><Code>&lol2;</Code></Error>"#;
    let err = decode_error_document(laughs.as_bytes(), &Limits::default()).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::DoctypeRejected);
    let xxe =
        r#"<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><Error><Code>&e;</Code></Error>"#;
    let err = decode_or_error::<CopyObjectResult>(xxe.as_bytes(), &Limits::default()).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::DoctypeRejected);
    // A DOCTYPE after the root is refused too, not skipped.
    let late = "<Error><Code>c</Code></Error><!DOCTYPE x>";
    assert_eq!(
        decode_error_document(late.as_bytes(), &Limits::default())
            .unwrap_err()
            .kind(),
        &ErrorKind::DoctypeRejected
    );
}

#[test]
fn unknown_entities_are_errors_everywhere() {
    let xml = v2(&contents("a&nbsp;b"));
    let err = v2_err(&xml, &Limits::default());
    assert_eq!(err.kind(), &ErrorKind::UnknownEntity("nbsp".into()));
    // Also inside an element that is otherwise skipped.
    let xml = v2("<Unknown><Deep>&bogus;</Deep></Unknown>");
    assert_eq!(
        v2_err(&xml, &Limits::default()).kind(),
        &ErrorKind::UnknownEntity("bogus".into())
    );
    // Predefined and character references are resolved.
    let xml = v2(&contents("&lt;&gt;&amp;&apos;&quot;&#x263A;&#9731;"));
    let r = decode_list_objects_v2(xml.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(r.contents[0].key, "<>&'\"☺☃");
}

#[test]
fn byte_limit() {
    let xml = v2(&contents("k"));
    let exact = Limits::new(xml.len());
    assert!(decode_list_objects_v2(xml.as_bytes(), &exact).is_ok());
    let err = v2_err(&xml, &Limits::new(xml.len() - 1));
    assert_eq!(
        err.kind(),
        &ErrorKind::TooLarge {
            limit: xml.len() - 1,
            len: xml.len()
        }
    );
}

#[test]
fn depth_limit() {
    // ListBucketResult > Contents > Owner > ID is 4 levels.
    let xml = v2(&contents("k"));
    assert!(decode_list_objects_v2(xml.as_bytes(), &Limits::default().with_max_depth(4)).is_ok());
    let err = v2_err(&xml, &Limits::default().with_max_depth(3));
    assert_eq!(err.kind(), &ErrorKind::TooDeep { limit: 3 });
    // Deep unknown elements count as well.
    let deep = v2(&format!("{}{}", "<X>".repeat(100), "</X>".repeat(100)));
    assert_eq!(
        v2_err(&deep, &Limits::default()).kind(),
        &ErrorKind::TooDeep {
            limit: Limits::DEFAULT_MAX_DEPTH
        }
    );
    let deep_empty = v2(&format!("{}<Y/>{}", "<X>".repeat(31), "</X>".repeat(31)));
    assert_eq!(
        v2_err(&deep_empty, &Limits::default()).kind(),
        &ErrorKind::TooDeep { limit: 32 }
    );
}

#[test]
fn entry_limit() {
    let two = v2(&[contents("a"), contents("b")].concat());
    assert!(decode_list_objects_v2(two.as_bytes(), &Limits::default().with_max_entries(2)).is_ok());
    let three = v2(&[
        contents("a"),
        contents("b"),
        "<CommonPrefixes><Prefix>p/</Prefix></CommonPrefixes>".into(),
    ]
    .concat());
    let err = v2_err(&three, &Limits::default().with_max_entries(2));
    assert_eq!(err.kind(), &ErrorKind::TooManyEntries { limit: 2 });
}

#[test]
fn values_are_validated_with_positions() {
    let cases: &[(&str, &str, &str, ValueProblem)] = &[
        (
            "<Size>434234</Size>",
            "<Size>-1</Size>",
            "-1<",
            ValueProblem::NotAnInteger,
        ),
        (
            "<Size>434234</Size>",
            "<Size>1.5</Size>",
            "1.5<",
            ValueProblem::NotAnInteger,
        ),
        (
            "<Size>434234</Size>",
            "<Size></Size>",
            "</Size>",
            ValueProblem::NotAnInteger,
        ),
        (
            "<Size>434234</Size>",
            "<Size>18446744073709551616</Size>",
            "1844",
            ValueProblem::IntegerOutOfRange,
        ),
        (
            "<LastModified>2009-10-12T17:50:30.000Z</LastModified>",
            "<LastModified>2009-10-12 17:50:30</LastModified>",
            "2009",
            ValueProblem::Timestamp(TimestampError::Format),
        ),
        (
            "<LastModified>2009-10-12T17:50:30.000Z</LastModified>",
            "<LastModified>2009-02-30T17:50:30Z</LastModified>",
            "2009",
            ValueProblem::Timestamp(TimestampError::OutOfRange("day")),
        ),
        (
            "<ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag>",
            "<ETag>&quot;fba9dede</ETag>",
            "&quot;fba9",
            ValueProblem::ETag(ETagError::UnbalancedQuote),
        ),
        (
            "<ETag>&quot;fba9dede5f27731c9771645a39863328&quot;</ETag>",
            "<ETag></ETag>",
            "</ETag>",
            ValueProblem::ETag(ETagError::Empty),
        ),
    ];
    for (good, bad, marker, problem) in cases {
        let xml = v2(&contents("k").replace(good, bad));
        let err = v2_err(&xml, &Limits::default());
        let ErrorKind::InvalidValue { problem: got, .. } = err_at(&xml, &err, marker) else {
            panic!("{err}");
        };
        assert_eq!(&got, problem, "{bad}");
    }
    let xml = v2("<IsTruncated>yes</IsTruncated>");
    let err = v2_err(&xml, &Limits::default());
    assert_eq!(
        err_at(&xml, &err, "yes"),
        ErrorKind::InvalidValue {
            element: "IsTruncated",
            problem: ValueProblem::NotABoolean
        }
    );
    assert!(err.to_string().contains("IsTruncated"), "{err}");
    // Typed values tolerate surrounding whitespace (xs:int / xs:dateTime collapse it).
    let xml = v2("<MaxKeys>\n 1000 \n</MaxKeys><IsTruncated> true </IsTruncated>");
    let r = decode_list_objects_v2(xml.as_bytes(), &Limits::default()).unwrap();
    assert_eq!((r.max_keys, r.is_truncated), (Some(1000), true));
}

#[test]
fn structural_errors() {
    let dup = v2(&contents("k").replace("<Size>", "<Key>again</Key><Size>"));
    let err = v2_err(&dup, &Limits::default());
    assert_eq!(
        err_at(&dup, &err, "again"),
        ErrorKind::DuplicateElement { element: "Key" }
    );
    let missing = v2(&contents("k").replace("<Size>434234</Size>", ""));
    assert_eq!(
        v2_err(&missing, &Limits::default()).kind(),
        &ErrorKind::MissingElement {
            parent: "Contents",
            element: "Size"
        }
    );
    let nested = v2(&contents("<b>k</b>"));
    assert_eq!(
        v2_err(&nested, &Limits::default()).kind(),
        &ErrorKind::UnexpectedChild {
            element: "Key",
            child: "b".into()
        }
    );
    let wrong_root = "<ListVersionsResult><Name>b</Name></ListVersionsResult>";
    let err = v2_err(wrong_root, &Limits::default());
    assert_eq!(
        err.kind(),
        &ErrorKind::UnexpectedRoot {
            expected: "ListBucketResult",
            found: "ListVersionsResult".into()
        }
    );
    for (xml, want) in [
        ("", Malformed::UnexpectedEof),
        ("   \n ", Malformed::UnexpectedEof),
        ("<?xml version=\"1.0\"?>", Malformed::UnexpectedEof),
        ("<ListBucketResult><Name>b</Name>", Malformed::UnexpectedEof),
        ("junk<ListBucketResult/>", Malformed::TextBeforeRoot),
        (
            "<ListBucketResult><Name>b</Name></ListBucketResult>junk",
            Malformed::ContentAfterRoot,
        ),
        (
            "<ListBucketResult><Name>b</Name></ListBucketResult><ListBucketResult/>",
            Malformed::ContentAfterRoot,
        ),
        (
            "<ListBucketResult><Name>b</Nam></ListBucketResult>",
            Malformed::MismatchedEndTag {
                expected: "Name".into(),
                found: "Nam".into(),
            },
        ),
    ] {
        assert_eq!(
            v2_err(xml, &Limits::default()).kind(),
            &ErrorKind::Malformed(want),
            "{xml:?}"
        );
    }
    let bad_utf8 = [
        b"<ListBucketResult><Name>".as_slice(),
        &[0xff, 0xfe],
        b"</Name></ListBucketResult>",
    ]
    .concat();
    let err = decode_list_objects_v2(&bad_utf8, &Limits::default()).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::Malformed(Malformed::InvalidUtf8));
    let bom = "\u{feff}<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name></ListBucketResult>";
    assert_eq!(
        decode_list_objects_v2(bom.as_bytes(), &Limits::default())
            .unwrap()
            .name,
        "b"
    );
    let late_bom = "<ListBucketResult><Name>b</Name></ListBucketResult>\u{feff}";
    assert_eq!(
        v2_err(late_bom, &Limits::default()).kind(),
        &ErrorKind::Malformed(Malformed::ContentAfterRoot)
    );
    let latin1 = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><ListBucketResult><Name>b</Name></ListBucketResult>";
    assert_eq!(
        v2_err(latin1, &Limits::default()).kind(),
        &ErrorKind::UnsupportedEncoding("ISO-8859-1".into())
    );
    let no_name = "<ListBucketResult></ListBucketResult>";
    assert_eq!(
        v2_err(no_name, &Limits::default()).kind(),
        &ErrorKind::MissingElement {
            parent: "ListBucketResult",
            element: "Name"
        }
    );
}

/// Found by fuzzing the tokenizer against quick-xml: a processing
/// instruction whose target is not an XML name (`<?>`, `<?1a`) was skipped
/// as if well-formed. It is a syntax error pointing at the target.
#[test]
fn processing_instruction_target_must_be_a_name() {
    let cases = [
        "<?>C32>x?><Error><Code>c</Code></Error>",
        "<Error><?1pi?><Code>c</Code></Error>",
        "<Error><Code>c<?a>b?></Code></Error>",
    ];
    for xml in cases {
        let err = decode_error_document(xml.as_bytes(), &Limits::default()).unwrap_err();
        let at = usize::try_from(err.position()).unwrap();
        assert_eq!(&xml[at - 2..at], "<?", "{xml:?}: {err}");
        assert!(
            matches!(err.kind(), ErrorKind::Malformed(Malformed::Syntax(_))),
            "{xml:?}: {err}"
        );
    }
    let named = "<?pi-1.x data?><Error><?a:b?><Code>c</Code></Error>";
    let doc = decode_error_document(named.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(doc.code, "c");
}

#[test]
fn unknown_elements_namespaces_comments_and_cdata() {
    let body = format!(
        "<!-- c --><Unknown attr=\"1\"><Nested><Deeper/>text</Nested></Unknown><?pi x?>{}<RestoreStatus><IsRestoreInProgress>true</IsRestoreInProgress></RestoreStatus>",
        contents("<![CDATA[a&b>]]>&lt;")
    );
    let with_ns = v2(&body);
    let without_ns = with_ns.replace(NS, "");
    let prefixed = with_ns
        .replace(NS, r#" xmlns:s3="http://s3.amazonaws.com/doc/2006-03-01/""#)
        .replace('<', "<s3:")
        .replace("<s3:/", "</s3:")
        .replace("<s3:?", "<?")
        .replace("<s3:!", "<!");
    for xml in [&with_ns, &without_ns, &prefixed] {
        let r = decode_list_objects_v2(xml.as_bytes(), &Limits::default())
            .unwrap_or_else(|e| panic!("{e}\n{xml}"));
        assert_eq!(r.name, "b");
        assert_eq!(r.contents[0].key, "a&b><");
        assert_eq!(r.contents[0].size, 434_234);
    }
}

#[test]
fn whitespace_and_line_ends() {
    // Whitespace inside keys is kept, line ends follow XML 1.0 (CRLF and CR
    // become LF) unless written as character references.
    let xml = v2(&[
        contents("  a \t b  "),
        contents("x\r\ny\rz"),
        contents("x&#13;&#10;y&#13;z"),
        contents("\n"),
    ]
    .concat())
    .replace("><", ">\r\n<");
    let r = decode_list_objects_v2(xml.as_bytes(), &Limits::default()).unwrap();
    let keys: Vec<_> = r.contents.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(keys, ["  a \t b  ", "x\ny\nz", "x\r\ny\rz", "\n"]);
}

#[test]
fn url_encoded_listings_are_decoded_and_reported() {
    let xml = v2(&format!(
        "<Prefix>dir%2F+a</Prefix><Delimiter>%2F</Delimiter><StartAfter>%C3%A9</StartAfter>\
         <ContinuationToken>tok%2B</ContinuationToken>{}<CommonPrefixes><Prefix>dir%2Fsub%2F</Prefix></CommonPrefixes>\
         <EncodingType>url</EncodingType>",
        contents("dir%2Fa+b%25%0A")
    ));
    let r = decode_list_objects_v2(xml.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(r.prefix.as_deref(), Some("dir/ a"));
    assert_eq!(r.delimiter.as_deref(), Some("/"));
    assert_eq!(r.start_after.as_deref(), Some("é"));
    assert_eq!(r.contents[0].key, "dir/a b%\n");
    assert_eq!(r.common_prefixes, ["dir/sub/"]);
    // S3 does not encode continuation tokens.
    assert_eq!(r.continuation_token.as_deref(), Some("tok%2B"));
    let d = r.url_decoded;
    assert_eq!(
        (
            d.keys,
            d.prefix,
            d.delimiter,
            d.start_after,
            d.common_prefixes
        ),
        (true, true, true, true, true)
    );
    assert_eq!(
        (d.marker, d.next_marker, d.key_marker, d.next_key_marker),
        (false, false, false, false)
    );

    // Values URL encoding never leaves raw: the server sent them unencoded (s3s-fs echoes
    // EncodingType=url and does that), and decoding them could change them.
    // Escapes that decode to bytes that are not UTF-8 cannot be S3's encoding of a (UTF-8)
    // key either: `a%ff` is a raw key.
    for raw in [
        "a%zz",
        "100%",
        "a b",
        "caf\u{e9}",
        "tab\there",
        "a%ff",
        "50%c3/x",
    ] {
        let bad = v2(&format!(
            "{}<EncodingType>url</EncodingType>",
            contents(raw)
        ));
        let err = v2_err(&bad, &Limits::default());
        assert_eq!(
            err_at(&bad, &err, "url</EncodingType>"),
            ErrorKind::NotUrlEncoded { element: "Key" },
            "{raw:?}"
        );
        assert!(err.to_string().contains("encoding-type"), "{err}");
    }
    let versions = "<ListVersionsResult><Name>b</Name><KeyMarker>k%20m</KeyMarker><NextKeyMarker>n%20m</NextKeyMarker>\
         <EncodingType>url</EncodingType><DeleteMarker><Key>a%2Bb</Key><VersionId>v</VersionId><IsLatest>true</IsLatest>\
         <LastModified>2009-10-12T17:50:30Z</LastModified></DeleteMarker></ListVersionsResult>";
    let r = decode_list_object_versions(versions.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(
        (
            r.key_marker.as_deref(),
            r.next_key_marker.as_deref(),
            r.entries[0].key()
        ),
        (Some("k m"), Some("n m"), "a+b")
    );
    assert!(
        r.url_decoded.key_marker
            && r.url_decoded.next_key_marker
            && r.url_decoded.keys
            && !r.url_decoded.prefix
    );

    let v1 = "<ListBucketResult><Name>b</Name><Marker>m%2F</Marker><NextMarker>n%2F</NextMarker><EncodingType>url</EncodingType></ListBucketResult>";
    let r = decode_list_objects(v1.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(
        (r.marker.as_deref(), r.next_marker.as_deref()),
        (Some("m/"), Some("n/"))
    );
    assert!(r.url_decoded.marker && r.url_decoded.next_marker && !r.url_decoded.keys);

    let uploads = "<ListMultipartUploadsResult><Bucket>b</Bucket><KeyMarker>a%26b</KeyMarker><EncodingType>url</EncodingType>\
        <Upload><Key>x%3Fy</Key><UploadId>u</UploadId></Upload></ListMultipartUploadsResult>";
    let r = decode_list_multipart_uploads(uploads.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(
        (r.key_marker.as_deref(), r.uploads[0].key.as_str()),
        (Some("a&b"), "x?y")
    );
    assert!(r.url_decoded.key_marker && r.url_decoded.keys);
}

#[test]
fn bucket_location_forms() {
    let l = Limits::default();
    for (xml, raw, region) in [
        (format!("<LocationConstraint{NS}/>"), "", "us-east-1"),
        (
            format!("<?xml version=\"1.0\"?>\n<LocationConstraint{NS}></LocationConstraint>"),
            "",
            "us-east-1",
        ),
        (
            format!("<LocationConstraint{NS}>EU</LocationConstraint>"),
            "EU",
            "eu-west-1",
        ),
        (
            "<LocationConstraint>us-west-2</LocationConstraint>".to_owned(),
            "us-west-2",
            "us-west-2",
        ),
    ] {
        let r = decode_bucket_location(xml.as_bytes(), &l).unwrap();
        assert_eq!(
            (r.location_constraint.as_str(), r.region()),
            (raw, region),
            "{xml}"
        );
    }
}

#[test]
fn error_hidden_in_200_is_told_apart() {
    let l = Limits::default();
    // S3 keeps slow CompleteMultipartUpload connections alive with whitespace
    // sent before the document.
    let error = "          \n  <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InternalError</Code>\
        <Message>We encountered an internal error. Please try again.</Message><RequestId>656c76696e6727732072657175657374</RequestId>\
        <HostId>Uuag1LuByRx9e6j5Onimru9pO4ZVKnJ2Qz7/C1NPcfTWAtRPfTaOFg==</HostId></Error>";
    let Outcome::Error(e) =
        decode_or_error::<CompleteMultipartUploadResult>(error.as_bytes(), &l).unwrap()
    else {
        panic!("expected the error document");
    };
    assert_eq!(
        (e.code.as_str(), e.request_id.as_deref()),
        ("InternalError", Some("656c76696e6727732072657175657374"))
    );
    assert!(matches!(
        decode_or_error::<CopyObjectResult>(error.as_bytes(), &l).unwrap(),
        Outcome::Error(_)
    ));
    assert!(matches!(
        decode_or_error::<CopyPartResult>(error.as_bytes(), &l).unwrap(),
        Outcome::Error(_)
    ));
    // The plain decoders refuse it.
    let err = decode_complete_multipart_upload(error.as_bytes(), &l).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::UnexpectedRoot {
            expected: "CompleteMultipartUploadResult",
            found: "Error".into()
        }
    );
    // A leading-whitespace error position counts the whitespace.
    let bad = "   <Error><Code>x</Code></Error><Oops/>";
    assert_eq!(
        decode_error_document(bad.as_bytes(), &l)
            .unwrap_err()
            .position(),
        32
    );

    let done = format!(
        "   <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CompleteMultipartUploadResult{NS}>\
         <Location>https://b.s3.amazonaws.com/k</Location><Bucket>b</Bucket><Key>k</Key>\
         <ETag>\"3858f62230ac3c915f300c664312c11f-9\"</ETag><ChecksumCRC64NVME>AAAAAAAAAAA=</ChecksumCRC64NVME>\
         <ChecksumType>FULL_OBJECT</ChecksumType></CompleteMultipartUploadResult>"
    );
    let Outcome::Success(r) =
        decode_or_error::<CompleteMultipartUploadResult>(done.as_bytes(), &l).unwrap()
    else {
        panic!("expected the result");
    };
    assert_eq!(
        r.etag.unwrap().unquoted(),
        "3858f62230ac3c915f300c664312c11f-9"
    );
    assert_eq!(
        (
            r.checksums.crc64nvme.as_deref(),
            r.checksums.checksum_type.as_deref()
        ),
        (Some("AAAAAAAAAAA="), Some("FULL_OBJECT"))
    );

    let copy = "<CopyObjectResult><LastModified>2009-10-28T22:32:00.000Z</LastModified><ETag>\"9b2cf535f27731c974343645a3985328\"</ETag></CopyObjectResult>";
    let Outcome::Success(c) = decode_or_error::<CopyObjectResult>(copy.as_bytes(), &l).unwrap()
    else {
        panic!()
    };
    assert_eq!(c.last_modified.unwrap().unix_seconds(), 1_256_769_120);
    let other = decode_or_error::<CopyObjectResult>(b"<CopyPartResult/>", &l).unwrap_err();
    assert_eq!(
        other.kind(),
        &ErrorKind::UnexpectedRoot {
            expected: "CopyObjectResult",
            found: "CopyPartResult".into()
        }
    );
}

#[test]
fn sts_responses() {
    let l = Limits::default();
    let assume = r#"<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
  <SourceIdentity>Alice</SourceIdentity>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/demo/TestAR</Arn>
      <AssumedRoleId>ARO123EXAMPLE123:TestAR</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>ASIAIOSFODNN7EXAMPLE</AccessKeyId>
      <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>
      <SessionToken>AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQW</SessionToken>
      <Expiration>2019-11-09T13:34:41Z</Expiration>
    </Credentials>
    <PackedPolicySize>6</PackedPolicySize>
  </AssumeRoleResult>
  <ResponseMetadata>
    <RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId>
  </ResponseMetadata>
</AssumeRoleResponse>"#;
    let r = decode_assume_role(assume.as_bytes(), &l).unwrap();
    assert_eq!(r.credentials.access_key_id, "ASIAIOSFODNN7EXAMPLE");
    assert_eq!(
        r.credentials.secret_access_key,
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"
    );
    assert!(r.credentials.session_token.starts_with("AQoDYXdzEPT//"));
    assert_eq!(r.credentials.expiration.unix_seconds(), 1_573_306_481);
    assert_eq!(
        r.credentials.expiration.to_system_time().unwrap(),
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_573_306_481)
    );
    assert_eq!(
        r.assumed_role_user
            .as_ref()
            .unwrap()
            .assumed_role_id
            .as_deref(),
        Some("ARO123EXAMPLE123:TestAR")
    );
    assert_eq!(
        (r.packed_policy_size, r.source_identity.as_deref()),
        (Some(6), Some("Alice"))
    );
    assert_eq!(
        r.request_id.as_deref(),
        Some("c6104cbe-af31-11e0-8154-cbc7ccf896c7")
    );
    let debug = format!("{r:?}");
    assert!(
        !debug.contains("wJalrXUtnFEMI") && !debug.contains("AQoDYXdzEPT"),
        "{debug}"
    );
    assert!(debug.contains("ASIAIOSFODNN7EXAMPLE"));

    let web = r#"<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>amzn1.account.AF6RHO7KZU5XRVQJGXK6HB56KR2A</SubjectFromWebIdentityToken>
    <Audience>client.5498841531868486423.1548@apps.example.com</Audience>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/FederatedWebIdentityRole/app1</Arn>
      <AssumedRoleId>AROACLKWSDQRAOEXAMPLE:app1</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <SessionToken>AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE</SessionToken>
      <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>
      <Expiration>2014-10-24T23:00:23.123Z</Expiration>
      <AccessKeyId>ASgeIAIOSFODNN7EXAMPLE</AccessKeyId>
    </Credentials>
    <SourceIdentity>SourceIdentityValue</SourceIdentity>
    <Provider>www.amazon.com</Provider>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata>
    <RequestId>ad4156e9-bce1-11e2-82e6-6b6efEXAMPLE</RequestId>
  </ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>"#;
    let r = decode_assume_role(web.as_bytes(), &l).unwrap();
    assert_eq!(r.credentials.access_key_id, "ASgeIAIOSFODNN7EXAMPLE");
    let exp = r.credentials.expiration;
    assert_eq!(
        (exp.unix_seconds(), exp.subsec_nanos()),
        (1_414_191_623, 123_000_000)
    );
    assert_eq!(r.provider.as_deref(), Some("www.amazon.com"));
    assert_eq!(
        r.audience.as_deref(),
        Some("client.5498841531868486423.1548@apps.example.com")
    );
    assert_eq!(
        r.subject_from_web_identity_token.as_deref(),
        Some("amzn1.account.AF6RHO7KZU5XRVQJGXK6HB56KR2A")
    );

    let no_creds = "<AssumeRoleResponse><AssumeRoleResult/></AssumeRoleResponse>";
    assert_eq!(
        decode_assume_role(no_creds.as_bytes(), &l)
            .unwrap_err()
            .kind(),
        &ErrorKind::MissingElement {
            parent: "AssumeRoleResult",
            element: "Credentials"
        }
    );
    let bad_expiry = web.replace("2014-10-24T23:00:23.123Z", "tomorrow");
    let err = decode_assume_role(bad_expiry.as_bytes(), &l).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::InvalidValue {
                element: "Expiration",
                ..
            }
        ),
        "{err}"
    );

    let sts_error = r#"<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <Error><Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>No OpenIDConnect provider found</Message></Error>
  <RequestId>3f5d1a2e-0000-11e9-9b6a-7d3f4bEXAMPLE</RequestId>
</ErrorResponse>"#;
    let e = decode_error_document(sts_error.as_bytes(), &l).unwrap();
    assert_eq!(
        (e.code.as_str(), e.other("Type")),
        ("InvalidIdentityToken", Some("Sender"))
    );
    assert_eq!(
        e.request_id.as_deref(),
        Some("3f5d1a2e-0000-11e9-9b6a-7d3f4bEXAMPLE")
    );
}

#[test]
fn error_document_fields() {
    let xml = "<Error><Code>PermanentRedirect</Code><Message>m</Message><BucketName>b</BucketName>\
        <Key>k</Key><Resource>/b/k</Resource><Region>eu-west-1</Region><Endpoint>b.s3.eu-west-1.amazonaws.com</Endpoint>\
        <RequestId>r</RequestId><HostId>h</HostId></Error>";
    let e = decode_error_document(xml.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(
        (
            e.code.as_str(),
            e.bucket_name.as_deref(),
            e.key.as_deref(),
            e.resource.as_deref(),
            e.region.as_deref()
        ),
        (
            "PermanentRedirect",
            Some("b"),
            Some("k"),
            Some("/b/k"),
            Some("eu-west-1")
        )
    );
    assert_eq!(
        e.other,
        [(
            "Endpoint".to_owned(),
            "b.s3.eu-west-1.amazonaws.com".to_owned()
        )]
    );
    let no_code = "<Error><Message>m</Message></Error>";
    assert_eq!(
        decode_error_document(no_code.as_bytes(), &Limits::default())
            .unwrap_err()
            .kind(),
        &ErrorKind::MissingElement {
            parent: "Error",
            element: "Code"
        }
    );
}

#[test]
fn tagging_document() {
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Tagging{NS}><TagSet><Tag><Key>tag1</Key><Value>val1</Value></Tag>\
         <Tag><Key> spaced key </Key><Value></Value></Tag><Tag><Key>k</Key><Value/></Tag></TagSet></Tagging>"
    );
    let t = decode_tagging(xml.as_bytes(), &Limits::default()).unwrap();
    assert_eq!(
        t,
        Tagging::new(vec![
            Tag::new("tag1", "val1"),
            Tag::new(" spaced key ", ""),
            Tag::new("k", "")
        ])
    );
}

#[test]
fn encoder_output_and_unencodable_characters() {
    let delete = Delete::new(vec![
        ObjectIdentifier::new("a&b<c>"),
        ObjectIdentifier::with_version("k", "v1"),
    ])
    .quiet(true);
    assert_eq!(
        encode_delete(&delete).unwrap(),
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete{NS}><Object><Key>a&amp;b&lt;c&gt;</Key></Object>\
             <Object><Key>k</Key><VersionId>v1</VersionId></Object><Quiet>true</Quiet></Delete>"
        )
    );
    let config = CreateBucketConfiguration::new("eu-central-1");
    assert_eq!(
        encode_create_bucket_configuration(&config).unwrap(),
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CreateBucketConfiguration{NS}>\
             <LocationConstraint>eu-central-1</LocationConstraint></CreateBucketConfiguration>"
        )
    );
    let mut checksums = Checksums::default();
    checksums.crc32c = Some("yZRlqg==".into());
    checksums.checksum_type = Some("COMPOSITE".into());
    let parts = CompleteMultipartUpload::new(vec![
        CompletedPart::new(1, "\"a54357aff0632cce46d942af68356b38\"".parse().unwrap())
            .with_checksums(checksums),
        CompletedPart::new(2, "0c78aef83f66abc1fa1e8477f296d394".parse().unwrap()),
    ]);
    assert_eq!(
        encode_complete_multipart_upload(&parts).unwrap(),
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUpload{NS}>\
             <Part><ChecksumCRC32C>yZRlqg==</ChecksumCRC32C><ETag>\"a54357aff0632cce46d942af68356b38\"</ETag><PartNumber>1</PartNumber></Part>\
             <Part><ETag>\"0c78aef83f66abc1fa1e8477f296d394\"</ETag><PartNumber>2</PartNumber></Part></CompleteMultipartUpload>"
        )
    );
    let tags = Tagging::new(vec![Tag::new("k\u{1b}", "v")]);
    let err = encode_tagging(&tags).unwrap_err();
    assert_eq!(
        (err.kind(), err.position()),
        (
            &ErrorKind::Unencodable {
                field: "Key",
                character: '\u{1b}'
            },
            1
        )
    );
    assert!(err.to_string().contains("U+001B"), "{err}");
    let bad_key = Delete::new(vec![ObjectIdentifier::with_version("ok", "\u{ffff}")]);
    assert_eq!(
        encode_delete(&bad_key).unwrap_err().kind(),
        &ErrorKind::Unencodable {
            field: "VersionId",
            character: '\u{ffff}'
        }
    );
}

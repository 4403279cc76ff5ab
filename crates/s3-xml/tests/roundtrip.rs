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

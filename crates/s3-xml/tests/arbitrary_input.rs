//! Arbitrary and mutated bytes through every decoder: no panic, byte limit
//! respected (the same checks as the fuzz targets, under `cargo test`).

use proptest::prelude::*;
use s3_xml::Limits;
use s3_xml::fuzzing::{Family, decode_family};

fn fixtures() -> &'static [(String, Vec<u8>)] {
    static ALL: std::sync::OnceLock<Vec<(String, Vec<u8>)>> = std::sync::OnceLock::new();
    ALL.get_or_init(read_fixtures)
}

fn read_fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata");
    let mut out = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(path) = stack.pop() {
        for entry in std::fs::read_dir(&path).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "xml") {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn run_all(data: &[u8], limits: &Limits) {
    for family in Family::ALL {
        decode_family(family, data, limits);
    }
}

#[test]
fn every_fixture_is_accepted_by_some_decoder_and_byte_limit_holds() {
    let all = fixtures();
    assert_eq!(all.len(), 74);
    // The four malformed Java error bodies, the mock's placeholder date, s3s-fs's
    // unencoded listing under EncodingType=url, and the AWS guide's examples with typos and
    // placeholders are refused by every decoder (fixtures.rs and configurations.rs check
    // how).
    let refused_on_purpose = [
        "ErrorResponseNoErrorTag",
        "ErrorResponseRootElementAsFoo",
        "ErrorResponseRepeatedXml",
        "ErrorResponseXMLNotProperFormat",
        "ListAllMyBucketsResultTest",
        "ListObjectsV2-encoding-type-ignored",
        "-typo.xml",
        "-placeholder.xml",
        "versioning-placeholders.xml",
    ];
    for (path, xml) in all {
        let accepted: usize = Family::ALL
            .iter()
            .map(|f| decode_family(*f, xml, &Limits::default()))
            .sum();
        let refused = refused_on_purpose.iter().any(|name| path.contains(name));
        assert_eq!(
            accepted == 0,
            refused,
            "{path}: accepted by {accepted} decoders"
        );
        run_all(xml, &Limits::new(xml.len() / 2));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..600), limit in 0usize..800) {
        run_all(&data, &Limits::default());
        run_all(&data, &Limits::new(limit).with_max_depth(4).with_max_entries(3));
    }

    #[test]
    fn xml_like_text(data in "(<[A-Za-z:]{1,8}/?>|</[A-Za-z]{1,6}>|&[a-z#x0-9]{0,5};|<!\\[CDATA\\[[a-z<]*\\]\\]>|<!--[a-z-]*-->|<\\?[a-z ]*\\?>|<!DOCTYPE[ a-z]*>|[ a-z\\r\\n\"=]{0,6}){0,40}") {
        run_all(data.as_bytes(), &Limits::default());
    }

    #[test]
    fn mutated_fixtures(
        pick in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8),
    ) {
        let all = fixtures();
        let mut data = all[pick.index(all.len())].1.clone();
        for (at, byte, op) in edits {
            if data.is_empty() { break; }
            let i = at.index(data.len());
            match op {
                0 => data[i] = byte,
                1 => { data.remove(i); }
                _ => data.insert(i, byte),
            }
        }
        run_all(&data, &Limits::default());
        run_all(&data, &Limits::new(data.len().saturating_sub(1)));
    }
}

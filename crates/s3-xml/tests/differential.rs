//! The decoders' tokenizer against quick-xml: whatever the tokenizer accepts,
//! quick-xml (with its well-formedness checks on) must accept too, with the
//! same elements, text, references and CDATA.

use proptest::prelude::*;
use quick_xml::events::Event;
use s3_xml::fuzzing::tokens;

/// quick-xml's view, rendered like `s3_xml::fuzzing::tokens`.
fn quick_xml_tokens(input: &str) -> Result<Vec<String>, String> {
    let mut reader = quick_xml::Reader::from_str(input);
    let config = reader.config_mut();
    config.check_comments = true;
    config.check_end_names = true;
    let mut out: Vec<String> = Vec::new();
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("{e} at {}", reader.error_position()))?;
        match event {
            Event::Eof => return Ok(out),
            Event::Start(e) => out.push(format!("<{}", e.name().local_name().as_ref())),
            Event::Empty(e) => out.push(format!("<{}/", e.name().local_name().as_ref())),
            Event::End(_) => out.push(">".into()),
            Event::Text(t) if t.is_empty() => {}
            Event::Text(t) => match out.last_mut() {
                Some(last) if last.starts_with("T:") => last.push_str(&t),
                _ => out.push(format!("T:{}", &*t)),
            },
            Event::GeneralRef(r) => out.push(format!("&{};", &*r)),
            Event::CData(c) => out.push(format!("C:{}", &*c)),
            Event::Comment(_) | Event::PI(_) | Event::Decl(_) => {}
            Event::DocType(_) => return Err("doctype".into()),
        }
    }
}

fn agree(input: &str) -> Result<(), TestCaseError> {
    if let Some(ours) = tokens(input) {
        let theirs = quick_xml_tokens(input);
        prop_assert_eq!(Ok(ours), theirs, "input {:?}", input);
    }
    Ok(())
}

#[test]
fn fixtures_tokenize_like_quick_xml() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata");
    let mut stack = vec![std::path::PathBuf::from(dir)];
    let mut compared = 0;
    while let Some(path) = stack.pop() {
        for entry in std::fs::read_dir(&path).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "xml") {
                let text = std::fs::read_to_string(&p).unwrap();
                let ours = tokens(&text);
                let theirs = quick_xml_tokens(&text).ok();
                // Only the mismatched-end-tag Java body is refused by both.
                assert_eq!(ours, theirs, "{}", p.display());
                compared += usize::from(ours.is_some());
            }
        }
    }
    assert_eq!(compared, 33);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn xml_like_text(input in "(<[A-Za-z][A-Za-z:.-]{0,4}( [a-z]{1,3}=(\"[a-z>&;']*\"|'[a-z\"]*'))?[ ]?/?>|</[A-Za-z][a-z:]{0,4} ?>|&[a-z#x0-9]{0,5};|<!\\[CDATA\\[[a-z<\\]>]*\\]\\]>|<!--[a-z ->]*-->|<\\?[a-z ]*\\?>|[ a-z\\r\\n\"'=>\\]-]{0,6}){0,30}") {
        agree(&input)?;
    }

    #[test]
    fn balanced_documents(names in proptest::collection::vec("[a-z]{1,3}", 1..6), text in "[ a-z&;<>\\]]{0,12}") {
        let open: String = names.iter().map(|n| format!("<{n}>")).collect();
        let close: String = names.iter().rev().map(|n| format!("</{n}>")).collect();
        agree(&format!("{open}{text}{close}"))?;
    }
}

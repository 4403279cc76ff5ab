//! The cheap claims of the README and `docs/`, kept true mechanically: the number of S3
//! operations and of fuzz targets they state, every `measurements/…` and `docs/…` link (and
//! every other relative link) resolving, and every crate of the README's crate map existing
//! with the dependencies it lists. What cannot be checked here is reviewed by hand before
//! each closing note (`docs/testing.md`, "Before a stop").

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The Markdown files whose claims readers rely on: the README, `docs/`, the crates'
/// READMEs, `measurements/`.
fn markdown_files() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md")];
    for directory in ["docs", "measurements"] {
        for entry in std::fs::read_dir(root.join(directory)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let readme = entry.unwrap().path().join("README.md");
        if readme.exists() {
            files.push(readme);
        }
    }
    files.sort();
    files
}

/// The operations of s3-ops: its `ops/` modules that define one (one module per S3 action,
/// by an `impl Operation for …` or one of the module-level macros that write it, such as
/// `get_bucket_configuration! { … }`). `RawRequest`, the escape hatch for the others, is not
/// one.
fn operation_types() -> BTreeSet<String> {
    let mut types = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("crates/s3-ops/src/ops")).unwrap() {
        let path = entry.unwrap().path();
        let defines = read(&path).lines().any(|line| {
            line.starts_with("impl Operation for ")
                || (line.ends_with("_configuration! {") && !line.starts_with("macro_rules!"))
        });
        if defines {
            types.insert(path.file_stem().unwrap().to_string_lossy().into_owned());
        }
    }
    types
}

/// Every number `n` written as `<n> <noun>` (e.g. `24 operations`) in `text`, with the line.
fn counts<'a>(text: &'a str, noun: &str) -> Vec<(u64, &'a str)> {
    let mut found = Vec::new();
    for line in text.lines() {
        let mut rest = line;
        while let Some(at) = rest.find(noun) {
            let before = rest[..at].trim_end();
            let digits: String = before
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_digit() || *c == ',')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .filter(|c| *c != ',')
                .collect();
            // A number of its own, not the end of a word ("S3 operations").
            let standalone = before[..before.len() - digits.len()]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            if !digits.is_empty() && standalone {
                found.push((digits.parse().unwrap(), line));
            }
            rest = &rest[at + noun.len()..];
        }
    }
    found
}

#[test]
fn stated_operation_counts_are_the_operation_types_of_s3_ops() {
    let types = operation_types();
    assert!(types.len() > 20, "{types:?}");
    let mut stated = 0;
    for file in markdown_files() {
        if file.starts_with(root().join("measurements")) {
            continue; // a measurement says what was true when it was taken
        }
        let text = read(&file);
        for (count, line) in counts(&text, " operations") {
            // Only statements about s3-ops' own number of operations.
            if line.contains("s3-ops") || line.contains("operation types") {
                stated += 1;
                assert_eq!(
                    count,
                    types.len() as u64,
                    "{} says {count} operations; s3-ops has {} ({types:?}):\n{line}",
                    file.display(),
                    types.len()
                );
            }
        }
    }
    assert!(
        stated > 0,
        "no document states the number of operations any more"
    );
}

#[test]
fn stated_fuzz_target_counts_are_the_targets_in_fuzz() {
    let targets = std::fs::read_dir(root().join("fuzz/fuzz_targets"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "rs")
        })
        .count() as u64;
    let mut stated = 0;
    for file in markdown_files() {
        if file.starts_with(root().join("measurements")) {
            continue;
        }
        for (count, line) in counts(&read(&file), " fuzz targets") {
            stated += 1;
            assert_eq!(
                count,
                targets,
                "{} says {count} fuzz targets, fuzz/ has {targets}:\n{line}",
                file.display()
            );
        }
    }
    assert!(
        stated > 0,
        "no document states the number of fuzz targets any more"
    );
}

/// The targets of the Markdown links `[text](target)` in `text`.
fn links(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        match after.find(')') {
            Some(end) => {
                found.push(&after[..end]);
                rest = &after[end..];
            }
            None => break,
        }
    }
    found
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = read(&file);
        let directory = file.parent().unwrap();
        for link in links(&text) {
            let target = link.split('#').next().unwrap_or_default().trim();
            if target.is_empty()
                || target.contains("://")
                || target.starts_with("mailto:")
                || target.contains(' ')
            {
                continue;
            }
            checked += 1;
            if !directory.join(target).exists() {
                broken.push(format!("{}: {link}", file.display()));
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: is the parser broken?"
    );
    assert!(
        broken.is_empty(),
        "links that lead nowhere:\n{}",
        broken.join("\n")
    );
}

/// The README's crate map: `| [`name`](path) | what | depends on |`.
#[test]
fn the_crate_map_lists_existing_crates_with_their_dependencies() {
    let readme = read(&root().join("README.md"));
    let map = readme
        .split("## Crate map")
        .nth(1)
        .expect("a crate map section")
        .split("\n## ")
        .next()
        .unwrap();
    let mut rows = 0;
    for line in map.lines().filter(|l| l.starts_with("| [`")) {
        rows += 1;
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (name_cell, depends) = (cells[1], cells[3]);
        let name = name_cell.split('`').nth(1).unwrap();
        let path = name_cell.split("](").nth(1).unwrap().trim_end_matches(')');
        let manifest = if path.ends_with(".rs") {
            root().join("Cargo.toml")
        } else {
            root().join(path).join("Cargo.toml")
        };
        let manifest_text = read(&manifest);
        assert!(
            manifest_text.contains(&format!("name = \"{name}\"")),
            "{} is not the manifest of {name}",
            manifest.display()
        );
        // Every backticked crate in "depends on" is a dependency of that crate: those before
        // a parenthesis always, those inside one ("+ `p256` for SigV4a") behind a feature.
        let dependencies = manifest_text
            .split("[dependencies]")
            .nth(1)
            .map(|rest| rest.split("\n[").next().unwrap_or_default())
            .unwrap_or_default();
        let (always, optional) = depends.split_once('(').unwrap_or((depends, ""));
        for (dependency, required) in always
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|d| (d, true))
            .chain(optional.split('`').skip(1).step_by(2).map(|d| (d, false)))
        {
            if dependency == "std" {
                continue;
            }
            // Listed, and not only behind a feature.
            assert!(
                dependencies.lines().any(|l| {
                    let l = l.trim_start();
                    (l.starts_with(&format!("{dependency} "))
                        || l.starts_with(&format!("{dependency}."))
                        || l.starts_with(&format!("{dependency}=")))
                        && (!required || !l.contains("optional = true"))
                }),
                "the crate map says {name} depends on {dependency}; its [dependencies] do not \
                 list it (or only as an optional feature)"
            );
        }
    }
    assert!(rows >= 6, "only {rows} crate map rows found");
}

//! The cheap claims of the README and `docs/`, kept true mechanically: the number of S3
//! operations, of fuzz targets and of two-server scenarios they state, every `measurements/…`
//! and `docs/…` link (and every other relative link) resolving, every crate of the README's
//! crate map existing with the dependencies it lists, and every passage that quotes a
//! measured figure linking the `measurements/` file it comes from. What cannot be checked
//! here is reviewed by hand before each stop (`docs/testing.md`, "Before a stop").

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
        let listed = text.lines().filter_map(|line| {
            // The s3-ops README's list: "**Operations** (58, one module each ...".
            let rest = line.split("**Operations** (").nth(1)?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            Some((digits.parse().ok()?, line))
        });
        for (count, line) in counts(&text, " operations").into_iter().chain(listed) {
            // Only statements about s3-ops' own number of operations.
            if line.contains("s3-ops")
                || line.contains("operation types")
                || line.contains("**Operations**")
            {
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

/// The scenarios of the two-server suite (`crates/s3-wire-tokio/tests/servers.rs`): the rows
/// of its `scenarios!` table.
fn server_scenarios() -> usize {
    let suite = read(&root().join("crates/s3-wire-tokio/tests/servers.rs"));
    let table = suite
        .split("\nscenarios! {\n")
        .nth(1)
        .expect("the scenarios! table")
        .split("\n}\n")
        .next()
        .unwrap();
    table
        .lines()
        .filter(|line| line.trim_start().starts_with('"') && line.contains("=>"))
        .count()
}

#[test]
fn stated_scenario_counts_are_the_scenarios_of_the_two_server_suite() {
    let scenarios = server_scenarios() as u64;
    assert!(scenarios > 20, "only {scenarios} scenarios found");
    let mut stated = 0;
    for file in markdown_files() {
        if file.starts_with(root().join("measurements")) {
            continue;
        }
        for (count, line) in counts(&read(&file), " scenarios") {
            // Statements about the suite that runs on both servers.
            if line.contains("local-s3") && line.contains("moto") {
                stated += 1;
                assert_eq!(
                    count,
                    scenarios,
                    "{} says {count} scenarios, tests/servers.rs has {scenarios}:\n{line}",
                    file.display()
                );
            }
        }
    }
    assert!(
        stated > 0,
        "no document states the number of scenarios any more"
    );
}

/// Whether `text` quotes a measured figure: a rate (`MiB/s`, `GiB/s`, `ops/s`), a time in
/// `ns` or `µs`, CPU seconds (`s/GiB`, `s CPU`), a size in `MB` (binaries), or a ratio
/// written against its number (`1.07×`; a product is spaced: `8 × 8 MiB`). Sizes in MiB,
/// milliseconds and seconds are also settings and limits, so they do not count; nor does a
/// target (`≤ 1 µs`, `≥ 1.5×`, `the 1 µs budget`).
fn quotes_a_figure(text: &str) -> bool {
    const UNITS: [&str; 8] = [
        "MiB/s", "GiB/s", "ops/s", "ns", "µs", "s/GiB", "s CPU", "MB",
    ];
    text.char_indices().any(|(at, c)| {
        // The last digit of a number.
        let rest = &text[at + c.len_utf8()..];
        if !c.is_ascii_digit() || rest.starts_with(|n: char| n.is_ascii_digit() || n == '.') {
            return false;
        }
        let number_start = text[..at]
            .rfind(|p: char| !(p.is_ascii_digit() || p == '.' || p == ','))
            .map_or(0, |p| {
                p + text[p..].chars().next().map_or(1, char::len_utf8)
            });
        let target = text[..number_start]
            .trim_end()
            .ends_with(['≤', '≥', '<', '>']);
        let unit_len = if rest.starts_with('×') {
            '×'.len_utf8()
        } else {
            let spaced = rest.strip_prefix(' ').unwrap_or(rest);
            match UNITS.iter().find(|unit| {
                spaced.starts_with(*unit)
                    && spaced[unit.len()..]
                        .chars()
                        .next()
                        .is_none_or(|next| !next.is_alphanumeric() && next != '/')
            }) {
                Some(unit) => rest.len() - spaced.len() + unit.len(),
                None => return false,
            }
        };
        let after = &rest[unit_len..];
        !target && !after.starts_with(" budget") && !after.starts_with(" target")
    })
}

/// One claim of a Markdown file (a paragraph, a list item or a table row), its first line
/// (1-based), and the text that may cite its source: the claim itself, plus for a table row
/// the paragraphs just before and after the table, and for a list item the lead-in of its
/// list.
struct Passage<'a> {
    line: usize,
    claim: Vec<&'a str>,
    context: Vec<&'a str>,
}

fn passages(text: &str) -> Vec<Passage<'_>> {
    enum Chunk<'a> {
        Code,
        Heading,
        Table(usize, Vec<&'a str>),
        Prose(usize, Vec<&'a str>),
    }
    // Runs of non-blank lines; headings end a run, fenced code is a run of its own.
    let mut chunks = Vec::new();
    let mut run: Vec<(usize, &str)> = Vec::new();
    let mut fenced = false;
    fn close<'a>(run: &mut Vec<(usize, &'a str)>, chunks: &mut Vec<Chunk<'a>>) {
        if let Some(&(first, line)) = run.first() {
            let lines = run.iter().map(|(_, l)| *l).collect();
            chunks.push(if line.starts_with('|') {
                Chunk::Table(first, lines)
            } else {
                Chunk::Prose(first, lines)
            });
        }
        run.clear();
    }
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            if !fenced {
                close(&mut run, &mut chunks);
                chunks.push(Chunk::Code);
            }
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if line.trim().is_empty() {
            close(&mut run, &mut chunks);
        } else if line.starts_with('#') {
            close(&mut run, &mut chunks);
            chunks.push(Chunk::Heading);
        } else {
            run.push((index + 1, line));
        }
    }
    close(&mut run, &mut chunks);

    let prose_near = |at: usize, step: isize| -> Vec<&str> {
        let mut index = at as isize + step;
        while let Some(chunk) = usize::try_from(index).ok().and_then(|i| chunks.get(i)) {
            match chunk {
                Chunk::Code => index += step,
                Chunk::Prose(_, lines) => return lines.clone(),
                // A table's caption is prose; a section's text is not the next section's.
                Chunk::Table(..) | Chunk::Heading => break,
            }
        }
        Vec::new()
    };
    let is_item = |line: &str| {
        line.starts_with("- ")
            || line.starts_with("* ")
            || line
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    let mut found = Vec::new();
    for (at, chunk) in chunks.iter().enumerate() {
        match chunk {
            Chunk::Code | Chunk::Heading => {}
            Chunk::Table(first, rows) => {
                let mut around = prose_near(at, -1);
                around.extend(prose_near(at, 1));
                for (offset, row) in rows.iter().enumerate().skip(2) {
                    let mut context = around.clone();
                    context.push(row);
                    found.push(Passage {
                        line: first + offset,
                        claim: vec![row],
                        context,
                    });
                }
            }
            Chunk::Prose(first, lines) => {
                let lead_in_end = lines.iter().position(|l| is_item(l)).unwrap_or(lines.len());
                let lead_in = if lead_in_end == 0 {
                    prose_near(at, -1)
                } else {
                    lines[..lead_in_end].to_vec()
                };
                if lead_in_end > 0 {
                    found.push(Passage {
                        line: *first,
                        claim: lines[..lead_in_end].to_vec(),
                        context: lines[..lead_in_end].to_vec(),
                    });
                }
                let mut start = lead_in_end;
                while start < lines.len() {
                    let end = lines[start + 1..]
                        .iter()
                        .position(|l| is_item(l))
                        .map_or(lines.len(), |p| start + 1 + p);
                    let mut context = lead_in.clone();
                    context.extend(&lines[start..end]);
                    found.push(Passage {
                        line: first + start,
                        claim: lines[start..end].to_vec(),
                        context,
                    });
                    start = end;
                }
            }
        }
    }
    found
}

/// Figures come from a committed file in `measurements/` and the text that quotes one links
/// it: every paragraph, list item or table row of the README, `docs/` and the crates'
/// READMEs that quotes a measured figure has a link to `measurements/…` in it, or (a table
/// row) in the paragraph before or after its table, or (a list item) in its list's lead-in.
/// Whether the linked file holds the figure is for the hand review (`docs/testing.md`).
#[test]
fn every_passage_quoting_a_figure_links_its_measurement() {
    let mut quoting = 0;
    let mut unlinked = Vec::new();
    for file in markdown_files() {
        if file.starts_with(root().join("measurements")) {
            continue;
        }
        let text = read(&file);
        for passage in passages(&text) {
            if !passage.claim.iter().any(|line| quotes_a_figure(line)) {
                continue;
            }
            quoting += 1;
            let cites = passage.context.iter().any(|line| {
                links(line)
                    .iter()
                    .any(|target| target.contains("measurements/"))
            });
            if !cites {
                unlinked.push(format!(
                    "{}:{}: {}",
                    file.display(),
                    passage.line,
                    passage.claim[0]
                ));
            }
        }
    }
    assert!(
        quoting > 20,
        "only {quoting} passages with figures: is the parser broken?"
    );
    assert!(
        unlinked.is_empty(),
        "figures quoted without a link to their measurements/ file:\n{}",
        unlinked.join("\n")
    );
}

#[test]
fn the_figure_check_sees_figures_and_their_links() {
    for figure in [
        "977 MiB/s",
        "1.07×",
        "845 ns",
        "44.5 µs",
        "163.8 s CPU",
        "0.89 s/GiB",
        "4.35 MB",
    ] {
        assert!(quotes_a_figure(figure), "{figure}");
    }
    for setting in [
        "8 MiB parts",
        "8 × 8 MiB",
        "a 10 s deadline",
        "100 MB/s",
        "16 MiB",
        "≤ 1 µs",
        "≥ 1.5× the best",
        "the 1 µs budget",
    ] {
        assert!(!quotes_a_figure(setting), "{setting}");
    }
    let text = "Intro [report](../measurements/a.md):\n\n| a | b |\n|---|---|\n| x | 9 MiB/s |\n\n\
                - one 2.0× ([m](measurements/b.md))\n- two 3 ns\n\nPlain 5 µs.\n\n\
                Linked [r](measurements/c.md).\n\n## Next\n\n- 4 ns\n";
    let found = passages(text);
    let cited = |p: &Passage<'_>| {
        p.context
            .iter()
            .any(|l| links(l).iter().any(|t| t.contains("measurements/")))
    };
    let summary: Vec<(usize, bool)> = found
        .iter()
        .filter(|p| p.claim.iter().any(|l| quotes_a_figure(l)))
        .map(|p| (p.line, cited(p)))
        .collect();
    // The table row is cited by its caption, the first item by itself; the second item's
    // list has no lead-in of its own and follows a table, so nothing cites it; nor the
    // plain paragraph; nor a list after a heading by the paragraph before it.
    assert_eq!(
        summary,
        [(5, true), (7, true), (8, false), (10, false), (16, false)]
    );
}

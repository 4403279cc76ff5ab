//! `--include` / `--exclude` with the AWS CLI's rules, and `*` / `?` wildcards in keys.
//!
//! The AWS CLI (`awscli/customizations/s3/filters.py`) joins each pattern to the source
//! directory and matches it against each file's full path with Python's `fnmatch`: `*`
//! matches any run of characters, `/` included; `?` one character; `[abc]`, `[a-z]`,
//! `[!abc]` one of (or none of) a set. Every file starts included; the patterns are tried in
//! the order given and each one that matches sets the file to included or excluded, so the
//! last matching pattern wins. Matching the pattern against the path relative to the
//! directory is the same thing.

use glob::{MatchOptions, Pattern};

use crate::report::*;

/// fnmatch: `*` crosses `/`, a leading `.` is an ordinary character, case matters.
const FNMATCH: MatchOptions = MatchOptions {
    case_sensitive: true,
    require_literal_separator: false,
    require_literal_leading_dot: false,
};

/// One `--include` or `--exclude`.
#[derive(Debug, Clone)]
struct Rule {
    include: bool,
    pattern: Pattern,
}

/// The filters of one command, in the order given on the command line.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    rules: Vec<Rule>,
}

impl Filter {
    /// The filters from `(include, pattern)` pairs in command-line order.
    pub(crate) fn new<'a>(rules: impl IntoIterator<Item = (bool, &'a str)>) -> Result<Filter> {
        let rules = rules
            .into_iter()
            .map(|(include, text)| {
                Ok(Rule {
                    include,
                    pattern: pattern(text)?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Filter { rules })
    }

    /// Whether a relative path is kept.
    pub(crate) fn keeps(&self, relative: &str) -> bool {
        self.rules.iter().fold(true, |kept, rule| {
            match rule.pattern.matches_with(relative, FNMATCH) {
                true => rule.include,
                false => kept,
            }
        })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

fn pattern(text: &str) -> Result<Pattern> {
    // fnmatch knows no `**`: two stars are two stars, which match what one does.
    let mut collapsed = text.to_owned();
    while collapsed.contains("**") {
        collapsed = collapsed.replace("**", "*");
    }
    Pattern::new(&collapsed).map_err(|e| usage(format!("bad pattern `{text}`: {e}")))
}

/// Whether a key matches a wildcard (`*`, `?`, `[...]`, `*` crossing `/`).
pub(crate) fn wildcard_match(wildcard: &str, key: &str) -> bool {
    pattern(wildcard).is_ok_and(|p| p.matches_with(key, FNMATCH))
}

/// Whether a key holds a wildcard character.
pub(crate) fn has_wildcard(key: &str) -> bool {
    key.contains(['*', '?'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(rules: &[(&str, &str)]) -> Filter {
        Filter::new(rules.iter().map(|(kind, p)| (*kind == "include", *p))).unwrap()
    }

    /// The AWS CLI's documented filter examples ("Use of Exclude and Include Filters") and
    /// the cases of its tests (`tests/unit/customizations/s3/test_filters.py`), each as
    /// (filters in order, path, kept).
    #[test]
    fn the_aws_cli_filter_cases() {
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, bool);
        let cases: &[Case] = &[
            // No filter: everything.
            (&[], "a.txt", true),
            // --exclude "*": nothing.
            (&[("exclude", "*")], "a.txt", false),
            (&[("exclude", "*")], "dir/a.txt", false),
            // --exclude "*" --include "*.txt": only .txt files, in any directory.
            (&[("exclude", "*"), ("include", "*.txt")], "a.txt", true),
            (
                &[("exclude", "*"), ("include", "*.txt")],
                "dir/sub/a.txt",
                true,
            ),
            (&[("exclude", "*"), ("include", "*.txt")], "a.jpg", false),
            // --include "*.txt" --exclude "*": the later exclude wins, nothing.
            (&[("include", "*.txt"), ("exclude", "*")], "a.txt", false),
            // --exclude "*.txt": everything else.
            (&[("exclude", "*.txt")], "a.jpg", true),
            (&[("exclude", "*.txt")], "dir/a.txt", false),
            // --exclude "dir/*": the directory's files, at any depth.
            (&[("exclude", "dir/*")], "dir/a.txt", false),
            (&[("exclude", "dir/*")], "dir/sub/a.txt", false),
            (&[("exclude", "dir/*")], "dir2/a.txt", true),
            (&[("exclude", "dir/*")], "a.txt", true),
            // Patterns are anchored at the directory: `*.txt` is not `dir/*.txt` only.
            (&[("exclude", "a.txt")], "dir/a.txt", true),
            (&[("exclude", "a.txt")], "a.txt", false),
            // ? is one character.
            (&[("exclude", "file?.log")], "file1.log", false),
            (&[("exclude", "file?.log")], "file10.log", true),
            // Sets and negated sets.
            (&[("exclude", "[ab].txt")], "a.txt", false),
            (&[("exclude", "[ab].txt")], "c.txt", true),
            (&[("exclude", "[!ab].txt")], "c.txt", false),
            (&[("exclude", "[!ab].txt")], "a.txt", true),
            // Three filters: the last match decides.
            (
                &[
                    ("exclude", "*"),
                    ("include", "logs/*"),
                    ("exclude", "logs/*.tmp"),
                ],
                "logs/a.log",
                true,
            ),
            (
                &[
                    ("exclude", "*"),
                    ("include", "logs/*"),
                    ("exclude", "logs/*.tmp"),
                ],
                "logs/a.tmp",
                false,
            ),
            (
                &[
                    ("exclude", "*"),
                    ("include", "logs/*"),
                    ("exclude", "logs/*.tmp"),
                ],
                "other/a.log",
                false,
            ),
            // A leading dot is an ordinary character; case matters.
            (&[("exclude", "*.txt")], ".hidden.txt", false),
            (&[("exclude", "*.txt")], "A.TXT", true),
        ];
        for (rules, path, kept) in cases {
            assert_eq!(filter(rules).keeps(path), *kept, "{rules:?} on {path}");
        }
    }

    #[test]
    fn a_bad_pattern_is_a_usage_error() {
        let error = Filter::new([(false, "[z-a")]).unwrap_err();
        assert!(error.message.starts_with(USAGE), "{error}");
    }

    #[test]
    fn wildcards_cross_slashes() {
        assert!(wildcard_match("logs/2026-*.gz", "logs/2026-01.gz"));
        assert!(wildcard_match("logs/2026-*.gz", "logs/2026-01/x.gz"));
        assert!(!wildcard_match("logs/2026-*.gz", "logs/2025-01.gz"));
    }
}

//! `*` / `?` patterns: wildcards in S3 keys and `--exclude` / `--include`.

/// Matches `text` against a glob with `*` (any run, `/` included) and `?` (one char).
pub(crate) fn wildcard_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// `--exclude` / `--include` globs over relative paths.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    pub(crate) exclude: Vec<String>,
    pub(crate) include: Vec<String>,
}

impl Filter {
    pub(crate) fn keeps(&self, relative: &str) -> bool {
        !self.exclude.iter().any(|g| wildcard_match(g, relative))
            || self.include.iter().any(|g| wildcard_match(g, relative))
    }
}

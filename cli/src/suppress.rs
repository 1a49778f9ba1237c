//! Inline suppressions:
//! - `// warplint: ignore[SM001, GM001]` on the line of the diagnostic or
//!   the line before it;
//! - `// warplint: file-ignore[GM001]` anywhere in the file;
//! - clang-tidy style, only with explicit `warplint-` names:
//!   `// NOLINT(warplint-SM001)` (same line),
//!   `// NOLINTNEXTLINE(warplint-*)` (next line).
//!
//! Inside the brackets: codes, code prefixes or rule names.

use warplint_lints::Diagnostic;

#[derive(Default, Debug)]
pub struct Suppressions {
    /// (line, selectors) — a diagnostic on that line is suppressed.
    lines: Vec<(u32, Vec<String>)>,
    file: Vec<String>,
}

fn selectors(inner: &str) -> Vec<String> {
    inner
        .split(',')
        .map(|s| s.trim().trim_start_matches("warplint-").to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The text inside the first `[...]` or `(...)` after `at`.
fn bracketed(s: &str, open: char, close: char) -> Option<&str> {
    let start = s.find(open)?;
    let end = s[start..].find(close)? + start;
    Some(&s[start + 1..end])
}

impl Suppressions {
    pub fn parse(text: &str) -> Suppressions {
        let mut out = Suppressions::default();
        for (i, line) in text.lines().enumerate() {
            let n = i as u32 + 1;
            if let Some(p) = line.find("warplint:") {
                let rest = line[p + "warplint:".len()..].trim_start();
                if let Some(r) = rest.strip_prefix("file-ignore") {
                    if let Some(inner) = bracketed(r, '[', ']') {
                        out.file.extend(selectors(inner));
                    }
                } else if let Some(r) = rest.strip_prefix("ignore") {
                    if let Some(inner) = bracketed(r, '[', ']') {
                        let sel = selectors(inner);
                        out.lines.push((n, sel.clone()));
                        out.lines.push((n + 1, sel));
                    }
                }
            }
            if let Some(p) = line.find("NOLINTNEXTLINE(") {
                if let Some(inner) = bracketed(&line[p..], '(', ')') {
                    let sel = selectors_nolint(inner);
                    if !sel.is_empty() {
                        out.lines.push((n + 1, sel));
                    }
                }
            } else if let Some(p) = line.find("NOLINT(") {
                if let Some(inner) = bracketed(&line[p..], '(', ')') {
                    let sel = selectors_nolint(inner);
                    if !sel.is_empty() {
                        out.lines.push((n, sel));
                    }
                }
            }
        }
        out
    }

    pub fn suppresses(&self, d: &Diagnostic) -> bool {
        let hit = |sel: &[String]| sel.iter().any(|s| matches(s, d));
        hit(&self.file)
            || self
                .lines
                .iter()
                .any(|(line, sel)| *line == d.span.line && hit(sel))
    }
}

/// Only `warplint-…` entries count in NOLINT comments (a bare NOLINT
/// belongs to clang-tidy).
fn selectors_nolint(inner: &str) -> Vec<String> {
    inner
        .split(',')
        .map(str::trim)
        .filter_map(|s| s.strip_prefix("warplint-"))
        .map(str::to_string)
        .collect()
}

pub fn matches(sel: &str, d: &Diagnostic) -> bool {
    sel == "*"
        || sel.eq_ignore_ascii_case("ALL")
        || sel == d.name
        || d.code
            .to_ascii_uppercase()
            .starts_with(&sel.to_ascii_uppercase())
}

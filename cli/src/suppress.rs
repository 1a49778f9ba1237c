//! Inline suppressions:
//! - `// warplint: ignore[SM001, GM001]` at the end of the diagnostic's
//!   line, or on a line of its own before it;
//! - `// warplint: file-ignore[GM001]` anywhere in the file;
//! - clang-tidy style, only with explicit `warplint-` names:
//!   `// NOLINT(warplint-SM001)` (same line),
//!   `// NOLINTNEXTLINE(warplint-*)` (next line),
//!   `// NOLINTBEGIN(warplint-SM001)` … `// NOLINTEND(warplint-SM001)` (the
//!   lines between; an END closes the latest BEGIN with the same list; an
//!   END closing none, and a BEGIN never closed (it runs to the end of the
//!   file), are named as clang-tidy names them).
//!
//! Inside the brackets: codes, code prefixes or rule names. Each comment
//! remembers whether it suppressed anything, so that the run can name the
//! ones that did nothing (ruff's RUF100) and those naming no rule.

use warplint_lints::Diagnostic;

/// One suppression comment.
#[derive(Debug)]
struct Comment {
    /// The line the comment is on.
    at: u32,
    /// The lines it covers (inclusive); `None` is the whole file.
    lines: Option<(u32, u32)>,
    selectors: Vec<String>,
    /// How the comment is written, for messages.
    form: &'static str,
    used: bool,
}

impl Comment {
    /// A NOLINTBEGIN on line `begin` covering the lines up to `end`.
    fn range(begin: u32, end: u32, selectors: Vec<String>) -> Comment {
        Comment {
            at: begin,
            lines: Some((begin, end)),
            selectors,
            form: "NOLINTBEGIN",
            used: false,
        }
    }
}

#[derive(Default, Debug)]
pub struct Suppressions {
    comments: Vec<Comment>,
    /// NOLINTENDs that close nothing and NOLINTBEGINs never closed: (line,
    /// form, selectors).
    unmatched: Vec<(u32, &'static str, Vec<String>)>,
}

/// A suppression comment the run reports: what it names matches no rule,
/// or it suppressed nothing.
#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Idle {
    pub line: u32,
    #[serde(deserialize_with = "warplint_analyzer::interned::deserialize")]
    pub form: warplint_analyzer::interned::Name,
    pub selectors: Vec<String>,
    /// The selectors that name no rule (empty: all do, and none was hit).
    pub unknown: Vec<String>,
    /// A NOLINTEND closing no NOLINTBEGIN, or a NOLINTBEGIN never closed.
    pub unmatched: bool,
}

impl Idle {
    /// What the run says of the comment (after its location).
    pub fn describe(&self) -> String {
        let comment = if self.form.starts_with("NOLINT") {
            let names: Vec<String> = self
                .selectors
                .iter()
                .map(|s| format!("warplint-{s}"))
                .collect();
            format!("{}({})", self.form, names.join(", "))
        } else {
            format!("{}[{}]", self.form, self.selectors.join(", "))
        };
        if self.unmatched && self.form == "NOLINTEND" {
            format!("`{comment}` closes no NOLINTBEGIN with the same list")
        } else if self.unmatched {
            format!("`{comment}` is never closed: it covers the rest of the file")
        } else if self.unknown.is_empty() {
            format!("unused suppression `{comment}`: nothing it names is reported there")
        } else {
            format!("`{comment}` names no rule: {}", self.unknown.join(", "))
        }
    }
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

/// The selectors of a `NOLINT…(` comment on `line` starting with `marker`.
fn nolint(line: &str, marker: &str) -> Option<Vec<String>> {
    let p = line.find(marker)?;
    let sel = selectors_nolint(bracketed(&line[p..], '(', ')')?);
    (!sel.is_empty()).then_some(sel)
}

impl Suppressions {
    pub fn parse(text: &str) -> Suppressions {
        let mut out = Suppressions::default();
        let mut open: Vec<(u32, Vec<String>)> = Vec::new();
        let mut last = 0;
        for (i, line) in text.lines().enumerate() {
            let n = i as u32 + 1;
            last = n;
            let mut push = |lines, selectors, form| {
                out.comments.push(Comment {
                    at: n,
                    lines,
                    selectors,
                    form,
                    used: false,
                })
            };
            if let Some(p) = line.find("warplint:") {
                let rest = line[p + "warplint:".len()..].trim_start();
                if let Some(r) = rest.strip_prefix("file-ignore") {
                    if let Some(inner) = bracketed(r, '[', ']') {
                        push(None, selectors(inner), "warplint: file-ignore");
                    }
                } else if let Some(r) = rest.strip_prefix("ignore") {
                    if let Some(inner) = bracketed(r, '[', ']') {
                        // After code: that line only; on a line of its own:
                        // the next line.
                        let opener = line[..p].rfind("//").or_else(|| line[..p].rfind("/*"));
                        let alone = opener.is_some_and(|o| line[..o].trim().is_empty());
                        let lines = if alone { (n, n + 1) } else { (n, n) };
                        push(Some(lines), selectors(inner), "warplint: ignore");
                    }
                }
            }
            if let Some(sel) = nolint(line, "NOLINTNEXTLINE(") {
                push(Some((n + 1, n + 1)), sel, "NOLINTNEXTLINE");
            } else if let Some(sel) = nolint(line, "NOLINTBEGIN(") {
                open.push((n, sel));
            } else if let Some(sel) = nolint(line, "NOLINTEND(") {
                match open.iter().rposition(|(_, s)| *s == sel) {
                    Some(i) => {
                        let (begin, sel) = open.remove(i);
                        out.comments.push(Comment::range(begin, n, sel));
                    }
                    None => out.unmatched.push((n, "NOLINTEND", sel)),
                }
            } else if let Some(sel) = nolint(line, "NOLINT(") {
                push(Some((n, n)), sel, "NOLINT");
            }
        }
        for (begin, sel) in open {
            out.unmatched.push((begin, "NOLINTBEGIN", sel.clone()));
            out.comments.push(Comment::range(begin, last, sel));
        }
        out
    }

    /// Whether a comment suppresses `d`; every comment that does is marked
    /// used.
    pub fn suppresses(&mut self, d: &Diagnostic) -> bool {
        let mut hit = false;
        for c in &mut self.comments {
            let covers = c.lines.is_none_or(|(a, b)| (a..=b).contains(&d.span.line));
            if covers && c.selectors.iter().any(|s| matches(s, d)) {
                c.used = true;
                hit = true;
            }
        }
        hit
    }

    /// The comments to report: those naming something that is no rule, and
    /// those that suppressed nothing although every rule they name ran
    /// (`ran` says whether a rule code was selected).
    pub fn idle(&self, ran: &dyn Fn(&str) -> bool) -> Vec<Idle> {
        let mut out = Vec::new();
        for c in &self.comments {
            let codes: Vec<Vec<&'static str>> = c.selectors.iter().map(|s| rule_codes(s)).collect();
            let unknown: Vec<String> = c
                .selectors
                .iter()
                .zip(&codes)
                .filter(|(_, k)| k.is_empty())
                .map(|(s, _)| s.clone())
                .collect();
            let all_ran = codes.iter().flatten().all(|code| ran(code));
            if !unknown.is_empty() || (!c.used && all_ran) {
                out.push(Idle {
                    line: c.at,
                    form: c.form,
                    selectors: c.selectors.clone(),
                    unknown,
                    unmatched: false,
                });
            }
        }
        out.extend(self.unmatched.iter().map(|(line, form, sel)| Idle {
            line: *line,
            form,
            selectors: sel.clone(),
            unknown: Vec::new(),
            unmatched: true,
        }));
        out.sort_by_key(|i| i.line);
        out
    }
}

/// The rule codes a selector names (none: it names no rule).
fn rule_codes(sel: &str) -> Vec<&'static str> {
    warplint_lints::rules()
        .filter(|r| selects(sel, r.code, r.name))
        .map(|r| r.code)
        .collect()
}

/// Whether a selector (`*`, `ALL`, a name, a code or its prefix) names the
/// rule `code`/`name`.
fn selects(sel: &str, code: &str, name: &str) -> bool {
    sel == "*"
        || sel.eq_ignore_ascii_case("ALL")
        || sel == name
        || code
            .to_ascii_uppercase()
            .starts_with(&sel.to_ascii_uppercase())
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
    selects(sel, d.code, d.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(code: &'static str, line: u32) -> Diagnostic {
        crate::fix::tests::diagnostic(code, line)
    }

    #[test]
    fn nolint_begin_end_covers_the_lines_between() {
        let text = "a\n// NOLINTBEGIN(warplint-SM001)\nb\nc\n// NOLINTEND(warplint-SM001)\nd\n";
        let mut s = Suppressions::parse(text);
        assert!(!s.suppresses(&diag("SM001", 1)));
        assert!(s.suppresses(&diag("SM001", 3)));
        assert!(s.suppresses(&diag("SM001", 4)));
        assert!(!s.suppresses(&diag("GM001", 4)));
        assert!(!s.suppresses(&diag("SM001", 6)));
        // Never closed: to the end of the file, and said.
        let mut s = Suppressions::parse("// NOLINTBEGIN(warplint-*)\na\nb\n");
        assert!(s.suppresses(&diag("GM001", 3)));
        let idle = s.idle(&|_| true);
        assert!(idle[0].unmatched && idle[0].describe().contains("never closed"));
        // An END with another list closes nothing.
        let s = Suppressions::parse(
            "// NOLINTBEGIN(warplint-SM001)\na\n// NOLINTEND(warplint-GM001)\n// NOLINTEND(warplint-SM001)\n",
        );
        let idle: Vec<String> = s.idle(&|_| false).iter().map(Idle::describe).collect();
        assert_eq!(
            idle,
            ["`NOLINTEND(warplint-GM001)` closes no NOLINTBEGIN with the same list"]
        );
    }

    #[test]
    fn a_trailing_comment_covers_its_line_and_an_own_line_one_the_next() {
        let text = "x = a[t]; // warplint: ignore[GM001]\ny = a[u];\n// warplint: ignore[GM001]\nz = a[v];\n";
        let mut s = Suppressions::parse(text);
        assert!(s.suppresses(&diag("GM001", 1)));
        assert!(!s.suppresses(&diag("GM001", 2)));
        assert!(s.suppresses(&diag("GM001", 4)));
    }

    #[test]
    fn unknown_names_and_unused_comments_are_idle() {
        let text = "x; // warplint: ignore[SM999]\ny; // warplint: ignore[GM001]\n\
                    z; // warplint: ignore[SM001]\n";
        let mut s = Suppressions::parse(text);
        assert!(s.suppresses(&diag("SM001", 3)));
        let all = |_: &str| true;
        let idle = s.idle(&all);
        let lines: Vec<(u32, Vec<String>)> =
            idle.iter().map(|i| (i.line, i.unknown.clone())).collect();
        assert_eq!(lines, [(1, vec!["SM999".to_string()]), (2, vec![])]);
        // A comment for a rule that did not run is not unused.
        let only_sm = |c: &str| c == "SM001";
        assert_eq!(s.idle(&only_sm).len(), 1);
    }
}

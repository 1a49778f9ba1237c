//! Applying fixes: `--fix` (safe ones), `--unsafe-fixes` (also padding),
//! `--diff` (show, do not write). Edits never overlap; each fix is kept
//! only if re-analysing the edited file shows its diagnostic gone; files
//! are written atomically (temp file + rename).

use std::path::Path;

use warplint_lints::{Applicability, Diagnostic};

/// Applies `edits` (non-overlapping, by byte span) to `src`.
fn apply(src: &[u8], edits: &[(usize, usize, &str)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() + 64);
    let mut pos = 0;
    for (start, end, content) in edits {
        out.extend_from_slice(&src[pos..*start]);
        out.extend_from_slice(content.as_bytes());
        pos = *end;
    }
    out.extend_from_slice(&src[pos..]);
    out
}

/// Same rule, same line, same array and kernel: the diagnostic a fix was for.
fn same_site(a: &Diagnostic, b: &Diagnostic) -> bool {
    a.code == b.code
        && a.span.line == b.span.line
        && a.facts.array == b.facts.array
        && a.facts.kernel == b.facts.kernel
}

/// Applies every applicable fix whose diagnostic disappears afterwards.
/// `lint` re-analyses a candidate text. Returns the new text and how many
/// fixes were applied.
pub fn fix_source(
    src: &[u8],
    diagnostics: &[Diagnostic],
    unsafe_fixes: bool,
    lint: &dyn Fn(&[u8]) -> Vec<Diagnostic>,
) -> (Vec<u8>, usize) {
    let mut current = src.to_vec();
    let mut accepted: Vec<(usize, usize, String)> = Vec::new();
    let mut applied = 0;
    for d in diagnostics {
        let Some(fix) = &d.fix else { continue };
        let allowed = match fix.applicability {
            Applicability::Safe => true,
            Applicability::Unsafe => unsafe_fixes,
            Applicability::DisplayOnly => false,
        };
        if !allowed || fix.edits.is_empty() {
            continue;
        }
        // Spans refer to the original text; a fix touching bytes another
        // fix already changed waits for the next run.
        let overlaps = fix.edits.iter().any(|e| {
            e.span.file != 0
                || e.span.end > src.len()
                || e.span.start > e.span.end
                || accepted
                    .iter()
                    .any(|(s, t, _)| e.span.start < *t && *s < e.span.end || e.span.start == *s)
        });
        if overlaps {
            continue;
        }
        let mut candidate_edits = accepted.clone();
        candidate_edits.extend(
            fix.edits
                .iter()
                .map(|e| (e.span.start, e.span.end, e.content.clone())),
        );
        candidate_edits.sort_by_key(|e| e.0);
        let refs: Vec<(usize, usize, &str)> = candidate_edits
            .iter()
            .map(|(s, t, c)| (*s, *t, c.as_str()))
            .collect();
        let candidate = apply(src, &refs);
        if lint(&candidate).iter().any(|x| same_site(x, d)) {
            continue; // the fix does not remove the problem: not applied
        }
        current = candidate;
        accepted = candidate_edits;
        applied += 1;
    }
    (current, applied)
}

/// A unified diff of two texts (`similar`'s: hunks with three lines of
/// context, line counts that may differ).
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(path, path)
        .to_string()
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.warplint-{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use warplint_analyzer::ir::Span;
    use warplint_lints::{Edit, Facts, Fix, Severity};

    /// A diagnostic of `code` on `line`, without a fix (for unit tests).
    pub(crate) fn diagnostic(code: &'static str, line: u32) -> Diagnostic {
        Diagnostic {
            code,
            name: "shared-bank-conflict",
            severity: Severity::Warning,
            message: String::new(),
            span: Span {
                line,
                ..Span::default()
            },
            label: String::new(),
            related: Vec::new(),
            notes: Vec::new(),
            help: None,
            fix: None,
            facts: Facts::default(),
        }
    }

    fn diag(line: u32, start: usize, end: usize, content: &str) -> Diagnostic {
        Diagnostic {
            fix: Some(Fix {
                applicability: Applicability::Unsafe,
                message: String::new(),
                edits: vec![Edit {
                    span: Span {
                        start,
                        end,
                        ..Span::default()
                    },
                    content: content.into(),
                }],
            }),
            ..diagnostic("SM001", line)
        }
    }

    #[test]
    fn overlapping_fixes_wait_and_unsafe_ones_need_the_flag() {
        let src = b"abcdef";
        let ds = [diag(1, 1, 3, "XY"), diag(2, 2, 4, "ZZ"), diag(3, 5, 6, "!")];
        let (out, n) = fix_source(src, &ds, true, &|_| Vec::new());
        assert_eq!(
            (String::from_utf8(out).unwrap(), n),
            ("aXYde!".to_string(), 2)
        );
        let (out, n) = fix_source(src, &ds, false, &|_| Vec::new());
        assert_eq!((out.as_slice(), n), (&src[..], 0));
    }

    #[test]
    fn a_fix_that_leaves_its_diagnostic_is_not_applied() {
        let src = b"abcdef";
        let d = diag(7, 0, 1, "z");
        let still_there = d.clone();
        let (out, n) = fix_source(src, std::slice::from_ref(&d), true, &|_| {
            vec![still_there.clone()]
        });
        assert_eq!((out.as_slice(), n), (&src[..], 0));
    }

    #[test]
    fn diff_has_context_and_hunks() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\n";
        let d = unified_diff("k.cu", old, new);
        assert!(
            d.starts_with("--- k.cu\n+++ k.cu\n@@ -1,7 +1,7 @@\n"),
            "{d}"
        );
        assert!(d.contains("-d\n+D\n"));
        assert_eq!(unified_diff("k.cu", old, old), "");
        // A line added: one small hunk, not the whole file.
        let long: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let grown = long.replace("line 20\n", "line 20\nextra\n");
        let d = unified_diff("k.cu", &long, &grown);
        assert!(d.contains("@@ -19,6 +19,7 @@\n"), "{d}");
        assert_eq!(d.lines().count(), 2 + 1 + 7, "{d}");
    }
}

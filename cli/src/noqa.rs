//! `check --add-noqa`: a `// warplint: ignore[CODES]` comment at the end of
//! every line with a diagnostic (ruff's `--add-noqa`), so that a codebase
//! can adopt warplint with its current findings acknowledged. A line that
//! already has such a comment gets the new codes inside it; a line that
//! ends a macro continuation (`\`) or inside a block comment is left alone
//! (a comment there would change the code), and counted.

use std::collections::{BTreeMap, BTreeSet};

/// What adding comments to one text did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Added {
    pub text: String,
    /// Lines that got a comment or new codes in one.
    pub lines: usize,
    /// Lines left alone, where a comment would change the code.
    pub skipped: Vec<u32>,
}

/// `text` with `codes` (by 1-based line) acknowledged on their lines.
pub fn add(text: &str, codes: &BTreeMap<u32, BTreeSet<&str>>) -> Added {
    let mut out = Added::default();
    let mut in_block = false;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let n = i as u32 + 1;
        let (body, eol) = match line.strip_suffix("\r\n") {
            Some(b) => (b, "\r\n"),
            None => match line.strip_suffix('\n') {
                Some(b) => (b, "\n"),
                None => (line, ""),
            },
        };
        let started_in_block = in_block;
        in_block = ends_in_block(body, in_block);
        let Some(want) = codes.get(&n) else {
            out.text.push_str(line);
            continue;
        };
        if body.trim_end().ends_with('\\') || in_block || (started_in_block && !body.contains("*/"))
        {
            out.skipped.push(n);
            out.text.push_str(line);
            continue;
        }
        match merged(body, want) {
            Some(new) => {
                out.lines += usize::from(new != body);
                out.text.push_str(&new);
            }
            None => out.text.push_str(body),
        }
        out.text.push_str(eol);
    }
    out
}

/// `body` with the codes in its `warplint: ignore[...]` comment, or one
/// appended; `None` when every code is already there.
fn merged(body: &str, want: &BTreeSet<&str>) -> Option<String> {
    const MARK: &str = "warplint: ignore[";
    if let Some(p) = body.find(MARK) {
        let start = p + MARK.len();
        let end = start + body[start..].find(']')?;
        let mut have: Vec<String> = body[start..end]
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let missing: Vec<&str> = want
            .iter()
            .copied()
            .filter(|c| !have.iter().any(|h| h == c))
            .collect();
        if missing.is_empty() {
            return None;
        }
        have.extend(missing.iter().map(|c| c.to_string()));
        return Some(format!(
            "{}{}{}",
            &body[..start],
            have.join(", "),
            &body[end..]
        ));
    }
    let list: Vec<&str> = want.iter().copied().collect();
    Some(format!(
        "{}  // warplint: ignore[{}]",
        body.trim_end(),
        list.join(", ")
    ))
}

/// Whether a block comment is open at the end of `body`, given whether one
/// was open at its start (strings and `//` comments considered).
fn ends_in_block(body: &str, mut open: bool) -> bool {
    let b = body.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        if open {
            if b[i..].starts_with(b"*/") {
                open = false;
                i += 2;
                continue;
            }
        } else if let Some(q) = quote {
            if b[i] == b'\\' {
                i += 2;
                continue;
            }
            if b[i] == q {
                quote = None;
            }
        } else if b[i..].starts_with(b"//") {
            return false;
        } else if b[i..].starts_with(b"/*") {
            open = true;
            i += 2;
            continue;
        } else if b[i] == b'"' || b[i] == b'\'' {
            quote = Some(b[i]);
        }
        i += 1;
    }
    open
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(list: &[(u32, &[&'static str])]) -> BTreeMap<u32, BTreeSet<&'static str>> {
        list.iter()
            .map(|(l, c)| (*l, c.iter().copied().collect()))
            .collect()
    }

    #[test]
    fn comments_are_added_merged_and_kept_out_of_macros_and_block_comments() {
        let text = "a = s[t];\nb = s[u]; // warplint: ignore[GM001]\n#define M(x) x[t] \\\n  + 1\n\
                    /* open\nc = s[t];  */ d = 1;\ne = s[t]; // warplint: ignore[SM001]\n";
        let got = add(
            text,
            &codes(&[
                (1, &["SM001"]),
                (2, &["SM001"]),
                (3, &["GM001"]),
                (5, &["GM001"]),
                (7, &["SM001"]),
            ]),
        );
        let lines: Vec<&str> = got.text.lines().collect();
        assert_eq!(lines[0], "a = s[t];  // warplint: ignore[SM001]");
        assert_eq!(lines[1], "b = s[u]; // warplint: ignore[GM001, SM001]");
        assert_eq!(lines[2], "#define M(x) x[t] \\");
        assert_eq!(lines[4], "/* open");
        assert_eq!(lines[6], "e = s[t]; // warplint: ignore[SM001]");
        assert_eq!(got.lines, 2);
        assert_eq!(got.skipped, [3, 5]);
        // Running it again changes nothing.
        let again = add(&got.text, &codes(&[(1, &["SM001"]), (2, &["SM001"])]));
        assert_eq!(again.text, got.text);
        assert_eq!(again.lines, 0);
    }
}

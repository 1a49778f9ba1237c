//! The text the parser sees, and mapping byte offsets back to lines and
//! columns.
//!
//! A few CUDA spellings that tree-sitter-cuda does not parse are blanked
//! out before parsing, with spaces of the same length so every byte offset
//! still points into the user's file: `__align__(N)` (its value is kept,
//! keyed by offset, for struct and array layout).

use crate::ir::Span;

pub struct Source {
    /// Text as parsed (same length as the input).
    pub text: Vec<u8>,
    line_starts: Vec<usize>,
    /// `(offset, n)` of every `__align__(n)` that was blanked.
    pub aligns: Vec<(usize, u64)>,
    /// Length of the user's text (closing braces may follow it).
    pub input_len: usize,
    /// Braces appended to close a truncated file.
    pub closed_braces: usize,
}

/// Braces left open at the end of `text`, skipping comments, strings and
/// character literals.
fn open_braces(text: &[u8]) -> usize {
    let mut depth: i64 = 0;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'/' if text.get(i + 1) == Some(&b'/') => {
                while i < text.len() && text[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if text.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < text.len() && !(text[i] == b'*' && text[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < text.len() && text[i] != q && text[i] != b'\n' {
                    if text[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'{' => depth += 1,
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    depth.clamp(0, 10_000) as usize
}

impl Source {
    pub fn new(input: &[u8]) -> Source {
        let mut text = input.to_vec();
        let mut aligns = Vec::new();
        let key = b"__align__";
        let mut i = 0;
        while i + key.len() <= text.len() {
            if &text[i..i + key.len()] == key {
                let mut j = i + key.len();
                while j < text.len() && text[j].is_ascii_whitespace() {
                    j += 1;
                }
                if j < text.len() && text[j] == b'(' {
                    if let Some(close) = text[j..].iter().take(64).position(|&c| c == b')') {
                        let inner = String::from_utf8_lossy(&text[j + 1..j + close])
                            .trim()
                            .to_string();
                        if let Ok(n) = inner.parse::<u64>() {
                            aligns.push((i, n));
                        }
                        for b in &mut text[i..=j + close] {
                            if *b != b'\n' {
                                *b = b' ';
                            }
                        }
                        i = j + close + 1;
                        continue;
                    }
                }
            }
            i += 1;
        }
        let input_len = text.len();
        // A truncated file: close what it left open so the parser keeps the
        // functions whole instead of one large error.
        let closed_braces = open_braces(&text);
        if closed_braces > 0 {
            text.push(b'\n');
            text.extend(std::iter::repeat_n(b'}', closed_braces));
            text.push(b'\n');
        }
        let mut line_starts = vec![0];
        for (k, &b) in text.iter().enumerate() {
            if b == b'\n' {
                line_starts.push(k + 1);
            }
        }
        Source {
            text,
            line_starts,
            aligns,
            input_len,
            closed_braces,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn position(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.line_starts[line];
        let col = String::from_utf8_lossy(&self.text[start..offset])
            .chars()
            .count();
        (line as u32 + 1, col as u32 + 1)
    }

    pub fn span(&self, start: usize, end: usize) -> Span {
        let (line, column) = self.position(start);
        let (end_line, end_column) = self.position(end);
        Span {
            start,
            end,
            line,
            column,
            end_line,
            end_column,
        }
    }

    /// Alignment from an `__align__(n)` blanked inside `start..end`.
    pub fn align_in(&self, start: usize, end: usize) -> Option<u64> {
        self.aligns
            .iter()
            .find(|(o, _)| *o >= start && *o < end)
            .map(|(_, n)| *n)
    }
}

//! The text the parser sees, and mapping byte offsets back to lines and
//! columns.
//!
//! A few CUDA spellings that tree-sitter-cuda does not parse are blanked
//! out before parsing, with spaces of the same length so every byte offset
//! still points into the user's file: `__align__(N)` (its value is kept,
//! keyed by offset, for struct and array layout).

use crate::budget;
use crate::ir::Span;

#[derive(Clone)]
pub struct Source {
    /// The file id spans carry (0: the file analysed; n: its n-th header).
    pub file: u32,
    /// Text as parsed (same length as the input).
    pub text: Vec<u8>,
    line_starts: Vec<usize>,
    /// `(offset, n)` of every `__align__(n)` that was blanked.
    pub aligns: Vec<(usize, u64)>,
    /// Length of the user's text (closing braces may follow it).
    pub input_len: usize,
    /// Braces appended to close a truncated file.
    pub closed_braces: usize,
    /// Braces of a truncated file left open past
    /// `budget::MAX_CLOSED_BRACES`.
    pub(crate) braces_left_open: usize,
    /// `(offset, name)` of every attribute left unread because its
    /// arguments run past `budget::MAX_ATTRIBUTE_ARGUMENT_BYTES`
    /// (preprocessing notes each).
    pub(crate) long_attributes: Vec<(usize, &'static str)>,
}

/// Blanks `key(args)` (same length, newlines kept) and reports each one's
/// offset and argument text (`None`: its arguments run past
/// `budget::MAX_ATTRIBUTE_ARGUMENT_BYTES`; left as it is).
fn blank_attribute(text: &mut [u8], key: &[u8], mut found: impl FnMut(usize, Option<&str>)) {
    let finder = memchr::memmem::Finder::new(key);
    let mut from = 0;
    while let Some(at) = text.get(from..).and_then(|t| finder.find(t)) {
        let i = from + at;
        from = i + 1;
        if i > 0 && (text[i - 1].is_ascii_alphanumeric() || text[i - 1] == b'_') {
            continue;
        }
        let mut j = i + key.len();
        while j < text.len() && text[j].is_ascii_whitespace() {
            j += 1;
        }
        if j >= text.len() || text[j] != b'(' {
            continue;
        }
        // Matching parenthesis, within a small window.
        let mut depth = 0;
        let mut close = None;
        let window = budget::MAX_ATTRIBUTE_ARGUMENT_BYTES;
        for (k, b) in text[j..].iter().enumerate().take(window) {
            match b {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(j + k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            if text.len() - j > window {
                found(i, None);
            }
            continue;
        };
        let arg = String::from_utf8_lossy(&text[j + 1..close]).into_owned();
        found(i, Some(&arg));
        for b in &mut text[i..=close] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        from = close + 1;
    }
}

/// Extended lambdas (`[=] __device__ (int i) { … }`): the grammar does not
/// take the annotation after the capture list, so it is blanked.
fn blank_lambda_annotations(text: &mut [u8]) {
    let mut i = 0;
    while i < text.len() {
        match memchr::memchr(b']', &text[i..]) {
            Some(at) => i += at,
            None => break,
        }
        let mut j = i + 1;
        loop {
            while j < text.len() && text[j].is_ascii_whitespace() {
                j += 1;
            }
            let rest = &text[j..];
            let kw = [&b"__device__"[..], b"__host__"].into_iter().find(|k| {
                rest.starts_with(k)
                    && !rest
                        .get(k.len())
                        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
            });
            match kw {
                Some(k) => {
                    for b in &mut text[j..j + k.len()] {
                        *b = b' ';
                    }
                    j += k.len();
                }
                None => break,
            }
        }
        i += 1;
    }
}

fn line_starts(text: &[u8]) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(memchr::memchr_iter(b'\n', text).map(|k| k + 1));
    v
}

/// The arguments of a macro use whose `(` is at `open` in `text`: split
/// at the commas outside brackets and strings, up to the matching `)`.
/// `None` when it does not close.
pub(crate) fn macro_args(text: &[u8], open: usize) -> Option<Vec<String>> {
    macro_args_to(text, open).map(|(args, _)| args)
}

/// [`macro_args`] and the index of the `)` that closes them.
pub(crate) fn macro_args_to(text: &[u8], open: usize) -> Option<(Vec<String>, usize)> {
    let mut depth = 0u32;
    let mut args = Vec::new();
    let mut start = open + 1;
    let mut i = open;
    let mut quote: Option<u8> = None;
    while i < text.len() {
        let c = text[i];
        if let Some(q) = quote {
            if c == b'\\' {
                i += 1;
            } else if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' | b'\'' => quote = Some(c),
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    args.push(String::from_utf8_lossy(&text[start..i]).trim().to_string());
                    return Some((args, i));
                }
            }
            b',' if depth == 1 => {
                args.push(String::from_utf8_lossy(&text[start..i]).trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The `)` that closes the `(` at `open` in `t[..end]` (parentheses only,
/// nested ones counted), if it closes there.
pub(crate) fn closing_paren(t: &[u8], open: usize, end: usize) -> Option<usize> {
    let mut depth = 0u32;
    for (j, &b) in t.iter().enumerate().take(end).skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// Where a comment starting at `i` ends (the byte after `*/`; a line
/// comment ends at its newline, which it leaves), or `None` when none does.
pub(crate) fn comment_end(t: &[u8], i: usize) -> Option<usize> {
    if t.get(i) != Some(&b'/') {
        return None;
    }
    match t.get(i + 1) {
        Some(b'/') => Some(
            t[i..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(t.len(), |n| i + n),
        ),
        Some(b'*') => Some(
            t[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(t.len(), |n| i + 2 + n + 2),
        ),
        _ => None,
    }
}

/// Where a comment or a string or character literal starting at `i` ends
/// (an unterminated literal ends at its newline), or `None` when none does.
pub(crate) fn skip_comment_or_literal(t: &[u8], i: usize) -> Option<usize> {
    if let Some(end) = comment_end(t, i) {
        return Some(end);
    }
    let q = *t.get(i)?;
    if q != b'"' && q != b'\'' {
        return None;
    }
    let mut j = i + 1;
    while j < t.len() && t[j] != q && t[j] != b'\n' {
        j += if t[j] == b'\\' { 2 } else { 1 };
    }
    Some(match t.get(j) {
        Some(c) if *c == q => j + 1,
        _ => j.min(t.len()),
    })
}

/// A set of bytes, for [`next_of`].
const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut set = [false; 256];
    let mut k = 0;
    while k < bytes.len() {
        set[bytes[k] as usize] = true;
        k += 1;
    }
    set
}

/// The first index from `i` whose byte is in `set`, or `t.len()`: the
/// scans below skip the bytes they do nothing with in a tight loop.
fn next_of(t: &[u8], i: usize, set: &[bool; 256]) -> usize {
    t.get(i..)
        .and_then(|rest| rest.iter().position(|b| set[*b as usize]))
        .map_or(t.len(), |n| i + n)
}

/// Braces left open at the end of `text`, skipping comments, strings and
/// character literals.
fn open_braces(text: &[u8]) -> usize {
    const SET: [bool; 256] = byte_set(b"/\"'{}");
    let mut depth: i64 = 0;
    let mut i = 0;
    while i < text.len() {
        i = next_of(text, i, &SET);
        if i >= text.len() {
            break;
        }
        if let Some(end) = skip_comment_or_literal(text, i) {
            i = end;
            continue;
        }
        match text[i] {
            b'{' => depth += 1,
            b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    depth.max(0) as usize
}

impl Source {
    pub fn new(input: &[u8]) -> Source {
        Source::with_file(input, 0)
    }

    pub fn with_file(input: &[u8], file: u32) -> Source {
        let mut text = input.to_vec();
        let mut aligns = Vec::new();
        let mut long_attributes = Vec::new();
        for key in ["__align__", "__cluster_dims__", "__maxnreg__"] {
            blank_attribute(&mut text, key.as_bytes(), |at, arg| match arg {
                None => long_attributes.push((at, key)),
                Some(arg) if key == "__align__" => {
                    if let Ok(n) = arg.trim().parse::<u64>() {
                        aligns.push((at, n));
                    }
                }
                Some(_) => {}
            });
        }
        aligns.sort_unstable();
        long_attributes.sort_unstable();
        blank_lambda_annotations(&mut text);
        let input_len = text.len();
        // A file that does not end with a newline: a final `#include` or
        // `#define` would otherwise miss its terminator.
        if text.last().is_some_and(|b| *b != b'\n') {
            text.push(b'\n');
        }
        let line_starts = line_starts(&text);
        Source {
            file,
            text,
            line_starts,
            aligns,
            input_len,
            closed_braces: 0,
            braces_left_open: 0,
            long_attributes,
        }
    }

    /// `a.allocate<col_vec<st_fl<N, D>>>()`: three template closers read as
    /// the launch token `>>>`, which the grammar cannot parse there. A
    /// `>>>` that closes no `<<<` of its statement becomes `> >>` by moving
    /// the nearest space before it on its line (one next to punctuation, so
    /// no two tokens join): `, D>>>` reads `,D> >>`. Only the bytes between
    /// that space and the `>` move, by one; lines and everything outside
    /// stay where they were. Run before parsing.
    pub fn split_template_closers(&mut self) {
        let t = &mut self.text;
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let mut launches = 0usize;
        let mut line_start = 0usize;
        const SET: [bool; 256] = byte_set(b"/\"'\n;{}<>");
        let mut i = 0usize;
        while i < t.len() {
            i = next_of(t, i, &SET);
            if i >= t.len() {
                break;
            }
            if let Some(end) = skip_comment_or_literal(t, i) {
                if let Some(n) = t[i..end].iter().rposition(|b| *b == b'\n') {
                    line_start = i + n + 1;
                }
                i = end;
                continue;
            }
            match t[i] {
                b'\n' => line_start = i + 1,
                b';' | b'{' | b'}' => launches = 0,
                b'<' if t[i..].starts_with(b"<<<") => {
                    launches += 1;
                    i += 3;
                    continue;
                }
                b'>' if t[i..].starts_with(b">>>") => {
                    if launches > 0 {
                        launches -= 1;
                    } else if let Some(sp) = (line_start..i).rev().find(|&s| {
                        matches!(t[s], b' ' | b'\t')
                            && !(s > 0 && ident(t[s - 1]) && s + 1 < t.len() && ident(t[s + 1]))
                    }) {
                        t.copy_within(sp + 1..=i, sp);
                        t[i] = b' ';
                    }
                    i += 3;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// A truncated file: close what it left open so the parser keeps the
    /// functions whole instead of one large error. Run after conditional
    /// compilation is resolved (braces of inactive branches do not count).
    pub fn close_open_braces(&mut self) {
        let open = open_braces(&self.text);
        let n = open.min(budget::MAX_CLOSED_BRACES);
        self.braces_left_open = open - n;
        if n > 0 {
            // Line starts come from the text as read: a newline that the
            // preprocessor turned into `;` still ends its line.
            let end = self.text.len();
            self.text.push(b'\n');
            self.text.extend(std::iter::repeat_n(b'}', n));
            self.text.push(b'\n');
            self.line_starts.push(end + 1);
            self.line_starts.push(end + n + 2);
        }
        self.closed_braces = n;
    }

    /// This source with bytes `start..old_end` replaced by `new`, which
    /// (like the bytes it replaces) holds no newline and nothing the steps
    /// before parsing rewrite: offsets past the edit move by the change in
    /// length, lines stay.
    pub(crate) fn spliced(&self, start: usize, old_end: usize, new: &[u8]) -> Source {
        let delta = new.len() as isize - (old_end - start) as isize;
        let moved = |x: usize| {
            if x >= old_end {
                x.saturating_add_signed(delta)
            } else {
                x
            }
        };
        let mut text = Vec::with_capacity(self.text.len() + new.len());
        text.extend_from_slice(&self.text[..start]);
        text.extend_from_slice(new);
        text.extend_from_slice(&self.text[old_end..]);
        Source {
            file: self.file,
            text,
            line_starts: self.line_starts.iter().map(|l| moved(*l)).collect(),
            aligns: self.aligns.iter().map(|(at, n)| (moved(*at), *n)).collect(),
            input_len: self.input_len.saturating_add_signed(delta),
            closed_braces: self.closed_braces,
            braces_left_open: self.braces_left_open,
            long_attributes: self
                .long_attributes
                .iter()
                .map(|(at, key)| (moved(*at), *key))
                .collect(),
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
            file: self.file,
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

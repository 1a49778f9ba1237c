//! The spellings the grammar cannot parse, rewritten in place before
//! parsing: macros used as declaration specifiers replaced by their
//! expansion or blanked, undefined specifier macros before a parameter
//! blanked, a lone macro use where a statement ends terminated with `;`
//! (or blanked), a macro name read as a string literal's suffix blanked,
//! `unsigned(` respelled `uint32_t(`, `typename` blanked in expressions.
//! Every rewrite blanks or respells bytes: offsets and lines never move.

use super::super::source::{closing_paren, comment_end, skip_comment_or_literal};
use super::{blank, comment_state, logical_lines, strip_comments, Defines, Macro};
use crate::budget;
use crate::finding::{Cut, NoteKind};

/// A rewrite that a budget stopped: where (`at..at + len`) and the note.
pub(super) struct Stopped {
    pub at: usize,
    pub len: usize,
    pub kind: NoteKind,
}

/// The rewrites of a whole file, once its directives are done (with the
/// macros defined at its end); returns where a budget stopped one.
pub(super) fn after_directives(text: &mut [u8], defines: &Defines) -> Vec<Stopped> {
    let mut stopped = Vec::new();
    terminate_lone_macros(text, defines);
    blank_parameter_specifiers(text, defines, &mut stopped);
    blank_string_macro_suffixes(text, defines);
    respell_unsigned_casts(text);
    blank_typename_in_expressions(text, &mut stopped);
    stopped
}

/// Declaration specifiers that a macro may stand for.
const SPECIFIERS: &[&str] = &[
    "__device__",
    "__host__",
    "__global__",
    "__forceinline__",
    "__noinline__",
    "__inline__",
    "inline",
    "static",
    "extern",
    "constexpr",
    // A kernel parameter's annotation (CUTLASS_GRID_CONSTANT): the
    // grammar knows it written out, not behind a macro.
    "__grid_constant__",
];
/// Macros used as declaration specifiers (`#define CUTLASS_DEVICE
/// __forceinline__ __device__`, `#define API`): the grammar takes an
/// unknown identifier there for a type and derails, so a use is
/// replaced in place by `__global__` (when the macro says so and the
/// name is long enough) or blanked; offsets do not move.
pub(super) fn replace_specifiers(defines: &Defines, text: &mut [u8], start: usize, end: usize) {
    let mut i = start;
    while i < end {
        let c = text[i];
        if c == b'"' || c == b'\'' {
            // Skip a literal.
            let q = c;
            i += 1;
            while i < end && text[i] != q {
                if text[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        if c == b'/' && i + 1 < end && (text[i + 1] == b'/' || text[i + 1] == b'*') {
            return;
        }
        if !(c.is_ascii_alphabetic() || c == b'_') {
            i += 1;
            continue;
        }
        let s = i;
        while i < end && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
            i += 1;
        }
        // An identifier is ASCII: no copy to look it up.
        let word = std::str::from_utf8(&text[s..i]).unwrap_or("");
        let is_specifier = SPECIFIERS.contains(&word);
        let Some(m) = defines.get(word) else {
            continue;
        };
        if let Some((params, body)) = m.function() {
            i = expand_specifier_call(text, s, i, end, params, body).unwrap_or(i);
            continue;
        }
        let Some(body) = m.object_body() else {
            continue;
        };
        let tokens: Vec<&str> = body.split_whitespace().collect();
        let mut work = 0;
        if !tokens
            .iter()
            .all(|t| specifier_word(defines, t, 0, &mut work))
            || is_specifier
        {
            continue;
        }
        let global = tokens.contains(&"__global__");
        if global && word.len() < "__global__".len() {
            continue; // cannot be said in place
        }
        for b in &mut text[s..i] {
            *b = b' ';
        }
        if global {
            text[s..s + 10].copy_from_slice(b"__global__");
        }
    }
}

/// A declaration specifier, or an object-like macro that stands for
/// nothing but specifiers (`#define CUTLASS_GRID_CONSTANT
/// CUTE_GRID_CONSTANT`, itself `__grid_constant__`), followed as far as
/// `MAX_MACRO_DEPTH` and for at most `MAX_MACRO_DEPTH` words in all
/// (`work`): macros that name each other twice over stay cheap.
fn specifier_word(defines: &Defines, word: &str, depth: u32, work: &mut u32) -> bool {
    if SPECIFIERS.contains(&word) {
        return true;
    }
    *work += 1;
    if depth >= budget::MAX_MACRO_DEPTH || *work > budget::MAX_MACRO_DEPTH {
        return false;
    }
    match defines.get(word).and_then(Macro::object_body) {
        Some(body) => {
            let mut tokens = body.split_whitespace().peekable();
            tokens.peek().is_some() && tokens.all(|t| specifier_word(defines, t, depth + 1, work))
        }
        None => false,
    }
}

/// A use `NAME(args)` at `s..name_end` of a function-like macro whose body
/// is declaration specifiers and `__launch_bounds__(...)`
/// (`#define LAUNCH_BOUNDS(n) __launch_bounds__(n)`): the expansion is
/// written in place when it fits, else the use is blanked. Returns the end
/// of the use.
fn expand_specifier_call(
    text: &mut [u8],
    s: usize,
    name_end: usize,
    end: usize,
    params: &[String],
    body: &str,
) -> Option<usize> {
    let open = (name_end..end).find(|&j| !text[j].is_ascii_whitespace())?;
    if text[open] != b'(' {
        return None;
    }
    let close = closing_paren(text, open, end)?;
    let args: Vec<String> = String::from_utf8_lossy(&text[open + 1..close])
        .split(',')
        .map(|a| a.trim().to_string())
        .collect();
    // The body with the arguments in place of the parameters.
    let mut out = String::new();
    let mut word = String::new();
    for c in body.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        match params.iter().position(|p| *p == word) {
            Some(k) => out.push_str(args.get(k).map(String::as_str).unwrap_or("")),
            None => out.push_str(&word),
        }
        word.clear();
        out.push(c);
    }
    let out = out.trim().to_string();
    // Only specifiers once launch bounds are set aside.
    let mut rest = out.clone();
    while let Some(at) = rest.find("__launch_bounds__") {
        let tail = &rest[at..];
        let stop = tail.find(')').map(|k| at + k + 1).unwrap_or(rest.len());
        rest.replace_range(at..stop, " ");
    }
    if !rest.split_whitespace().all(|t| SPECIFIERS.contains(&t)) {
        return None;
    }
    let span = close + 1 - s;
    blank(text, s, close + 1);
    if out.len() <= span && !out.contains('\n') {
        text[s..s + out.len()].copy_from_slice(out.as_bytes());
    }
    Some(close + 1)
}
/// An undefined ALL_CAPS name that opens a parameter and is followed by a
/// type and a name (`CUTLASS_GRID_CONSTANT TmaA const tma_a`, from a header
/// that is not here) is a specifier macro: blanked, as a defined one would
/// be replaced. A parameter whose type it is (`DWORD x`, `UINT32 const x`)
/// has one name after it and is left alone.
fn blank_parameter_specifiers(text: &mut [u8], defines: &Defines, stopped: &mut Vec<Stopped>) {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let word_at = |t: &[u8], i: usize| {
        let mut e = i;
        while e < t.len() && ident(t[e]) {
            e += 1;
        }
        e
    };
    // Whitespace and comments.
    let skip_ws = |t: &[u8], mut i: usize| loop {
        while i < t.len() && t[i].is_ascii_whitespace() {
            i += 1;
        }
        match comment_end(t, i) {
            Some(end) => i = end,
            None => return i,
        }
    };
    let mut i = 0;
    let mut line_start = true;
    while i < text.len() {
        let c = text[i];
        if line_start && c == b'#' {
            // A directive: to the end of its line.
            while i < text.len() && text[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if !c.is_ascii_whitespace() {
            line_start = false;
        }
        if let Some(end) = skip_comment_or_literal(text, i) {
            i = end;
            continue;
        }
        if !matches!(c, b'(' | b',') {
            i += 1;
            continue;
        }
        let w = skip_ws(text, i + 1);
        let we = word_at(text, w);
        let word = &text[w..we];
        let caps = word.len() >= 4
            && word
                .first()
                .is_some_and(|b| b.is_ascii_uppercase() || *b == b'_')
            && word.contains(&b'_')
            && word
                .iter()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_');
        // Two names side by side are a declaration, never an expression.
        let next = skip_ws(text, we);
        let adjacent = next > we && text.get(next).is_some_and(|b| ident(*b));
        if !caps || !adjacent || defines.contains_key(String::from_utf8_lossy(word).as_ref()) {
            i += 1;
            continue;
        }
        // Names after it, up to the end of the parameter (cv-qualifiers,
        // pointers, references and template arguments not counted).
        let mut names = 0;
        let mut j = we;
        let mut angle = 0i32;
        // Whether the parameter's end was not reached.
        let mut ran_out = true;
        for _ in 0..budget::MAX_PARAMETER_SCAN_TOKENS {
            j = skip_ws(text, j);
            let Some(&b) = text.get(j) else {
                ran_out = false;
                break;
            };
            if ident(b) {
                let e = word_at(text, j);
                let tok = &text[j..e];
                let cv = matches!(
                    tok,
                    b"const" | b"volatile" | b"__restrict__" | b"restrict" | b"__restrict"
                );
                if angle == 0 && !cv {
                    names += 1;
                }
                j = e;
                continue;
            }
            match b {
                b'<' => angle += 1,
                b'>' => angle -= 1,
                b'*' | b'&' | b':' => {}
                _ if angle > 0 => {}
                _ => {
                    ran_out = false;
                    break;
                }
            }
            j += 1;
        }
        if names >= 2 {
            for b in &mut text[w..we] {
                *b = b' ';
            }
        } else if ran_out {
            stopped.push(Stopped {
                at: w,
                len: we - w,
                kind: NoteKind::OutOfBudget {
                    what: Cut::SpecifierMacro {
                        word: String::from_utf8_lossy(word).into_owned(),
                    },
                    budget: budget::PARAMETER_SCAN_TOKENS,
                },
            });
        }
        i = we.max(i + 1);
    }
}

/// `"node ("fNID"): %c"` with `#define fNID "%d"`: C++11 would lex the
/// macro as a literal suffix, and the grammar does; compilers read a suffix
/// without a leading `_` that names a macro as the macro (GCC's
/// `-Wliteral-suffix`). The name is blanked, leaving adjacent string
/// literals that still concatenate to a string; offsets do not move.
fn blank_string_macro_suffixes(text: &mut [u8], defines: &Defines) {
    let mut i = 0;
    while i < text.len() {
        let Some(end) = skip_comment_or_literal(text, i) else {
            i += 1;
            continue;
        };
        if text[i] == b'"' && text.get(end).is_some_and(u8::is_ascii_alphabetic) {
            let mut e = end;
            while e < text.len() && (text[e].is_ascii_alphanumeric() || text[e] == b'_') {
                e += 1;
            }
            let name = String::from_utf8_lossy(&text[end..e]);
            if defines
                .get(name.as_ref())
                .and_then(Macro::object_body)
                .is_some_and(|body| body.trim_start().starts_with('"'))
            {
                text[end..e].fill(b' ');
            }
        }
        i = end;
    }
}

/// Whether the whole word `word` starts at `i` (not part of a longer name).
fn word_at(text: &[u8], i: usize, word: &[u8]) -> bool {
    let ident = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    text[i..].starts_with(word)
        && (i == 0 || !ident(&text[i - 1]))
        && !text.get(i + word.len()).is_some_and(ident)
}

/// `(unsigned(pred) << bit)`: the grammar reads `(unsigned` as the start
/// of a C cast and derails. `unsigned` right before `(` is respelled
/// `uint32_t`, the same type in as many bytes, which parses as a
/// functional cast (and as a declaration's type in `unsigned (*f)(int)`).
fn respell_unsigned_casts(text: &mut [u8]) {
    const WORD: &[u8] = b"unsigned";
    let mut i = 0;
    while i < text.len() {
        if let Some(end) = skip_comment_or_literal(text, i) {
            i = end;
            continue;
        }
        if word_at(text, i, WORD) {
            let mut j = i + WORD.len();
            while j < text.len() && matches!(text[j], b' ' | b'\t') {
                j += 1;
            }
            if text.get(j) == Some(&b'(') {
                text[i..i + WORD.len()].copy_from_slice(b"uint32_t");
            }
            i += WORD.len();
            continue;
        }
        i += 1;
    }
}

/// `f(typename It::TensorRef({p, n}), t)`: the grammar has no functional
/// cast through a dependent type. In an argument or initializer (after
/// `(`, `,`, `=` or `return`) and right before `(` or `{`, the `typename`
/// keyword is blanked, leaving a call of `It::TensorRef`; declarations
/// (`typename It::Params p`) and template parameters are left alone.
fn blank_typename_in_expressions(text: &mut [u8], stopped: &mut Vec<Stopped>) {
    const WORD: &[u8] = b"typename";
    let mut i = 0;
    while i < text.len() {
        if let Some(end) = skip_comment_or_literal(text, i) {
            i = end;
            continue;
        }
        if !word_at(text, i, WORD) {
            i += 1;
            continue;
        }
        let before = text[..i].trim_ascii_end();
        let in_expression = matches!(before.last(), Some(b'(' | b',' | b'='))
            || before.len() >= 6 && word_at(before, before.len() - 6, b"return");
        let name = qualified_name(text, i + WORD.len());
        if in_expression
            && name.qualified
            && name.closed
            && matches!(text.get(name.end), Some(b'(' | b'{'))
        {
            text[i..i + WORD.len()].fill(b' ');
        } else if in_expression && name.ran_out {
            stopped.push(Stopped {
                at: i,
                len: WORD.len(),
                kind: NoteKind::OutOfBudget {
                    what: Cut::TypenameName,
                    budget: budget::TYPENAME_NAME_BYTES,
                },
            });
        }
        i += WORD.len();
    }
}

/// The qualified name read after a `typename` ([`qualified_name`]).
struct QualifiedName {
    /// The first byte past it.
    end: usize,
    /// It has a `::`.
    qualified: bool,
    /// Its template arguments' angle brackets are balanced.
    closed: bool,
    /// `budget::MAX_TYPENAME_NAME_BYTES` ran out before its end.
    ran_out: bool,
}

/// The qualified name starting at or after `from` (after white space):
/// identifiers, `::`, balanced template arguments; a name followed by
/// white space and another name ends it (a declaration).
fn qualified_name(text: &[u8], from: usize) -> QualifiedName {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut j = from;
    while text.get(j).is_some_and(u8::is_ascii_whitespace) {
        j += 1;
    }
    let mut angle = 0i32;
    let mut qualified = false;
    let mut steps = 0;
    // A name, then white space: another name is a declaration.
    let mut name_done = false;
    let mut ran_out = false;
    while j < text.len() {
        if steps == budget::MAX_TYPENAME_NAME_BYTES {
            ran_out = true;
            break;
        }
        steps += 1;
        match text[j] {
            b if ident(b) => {
                if name_done && angle == 0 {
                    break;
                }
                name_done = false;
            }
            b if b.is_ascii_whitespace() => {
                name_done = ident(text[j - 1]) || name_done;
            }
            b':' if text.get(j + 1) == Some(&b':') => {
                qualified = true;
                name_done = false;
                j += 1;
            }
            b'<' => {
                angle += 1;
                name_done = false;
            }
            b'>' if angle > 0 => {
                angle -= 1;
                name_done = false;
            }
            b',' if angle > 0 => name_done = false,
            _ => break,
        }
        j += 1;
    }
    QualifiedName {
        end: j,
        qualified,
        closed: angle == 0,
        ran_out,
    }
}

/// A line that is one macro use, `NAME` or `NAME(args)`, standing where a
/// statement or declaration ends (`CUTLASS_PRAGMA_UNROLL`, `PERF_BEGIN`,
/// `CUDA_CHECK(cudaMalloc(&p, n))`, `TORCH_BINDING(f32, float)`): the
/// grammar would read the next line as its continuation and derail. A use
/// of a name that is not defined and takes no arguments (an attribute or
/// pragma macro from a header that is not here) is blanked, as is any use
/// right after a template header; any other gets a `;` in the first byte
/// after it that is whitespace (the line's newline, where the next line is
/// no directive: line numbers come from the text as read). Offsets never
/// move.
fn terminate_lone_macros(text: &mut [u8], defines: &Defines) {
    // The code of each line (comments stripped), or `None` for a line that
    // starts inside a block comment.
    let lines = logical_lines(text);
    let mut codes: Vec<Option<String>> = Vec::with_capacity(lines.len());
    let mut in_comment = false;
    for &(s, e) in &lines {
        let line = String::from_utf8_lossy(&text[s..e]);
        let was = in_comment;
        in_comment = comment_state(&line, was);
        codes.push((!was).then(|| strip_comments(&line).trim().to_string()));
    }
    let is_code = |c: &Option<String>| c.as_ref().is_none_or(|c| !c.is_empty());
    for i in 0..lines.len() {
        let Some(code) = codes[i].as_deref() else {
            continue;
        };
        let Some((name, has_args)) = lone_macro(code) else {
            continue;
        };
        let defined = defines.contains_key(name);
        let looks_like_macro = name.len() >= 2
            && name.bytes().any(|b| b.is_ascii_uppercase())
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        if !defined && !looks_like_macro {
            continue;
        }
        let prev = codes[..i].iter().rev().find(|c| is_code(c));
        let after_template = match prev {
            None => false,
            Some(None) => continue,
            Some(Some(p)) if p.starts_with('#') => false,
            Some(Some(p)) => match p.chars().last() {
                Some(';' | '{' | '}' | ')' | ':') => false,
                Some('>') => true,
                _ => continue,
            },
        };
        let next = codes[i + 1..].iter().find(|c| is_code(c));
        let next_directive = match next {
            Some(Some(n)) => {
                let first = n.chars().next().unwrap_or(' ');
                if "{.-+*/%&|^?:,)]<>=;([".contains(first) {
                    continue;
                }
                first == '#'
            }
            Some(None) => continue,
            None => false,
        };
        let (start, end) = lines[i];
        let Some(at) = (start..end).find(|&j| !text[j].is_ascii_whitespace()) else {
            continue;
        };
        let call_end = at + code.len().min(end - at);
        if !has_args && !defined || after_template {
            blank(text, at, call_end);
            continue;
        }
        let spot = (call_end..end)
            .find(|&j| matches!(text[j], b' ' | b'\t' | b'\r'))
            .or_else(|| (call_end == end && end < text.len() && !next_directive).then_some(end));
        if let Some(j) =
            spot.filter(|&j| j == call_end || text[call_end..j].iter().all(u8::is_ascii_whitespace))
        {
            text[j] = b';';
        }
    }
}

/// `NAME` or `NAME(balanced args)` filling all of `code`: the name and
/// whether it has arguments.
fn lone_macro(code: &str) -> Option<(&str, bool)> {
    let b = code.as_bytes();
    if !b
        .first()
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return None;
    }
    let name_end = b
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .unwrap_or(b.len());
    let name = &code[..name_end];
    let rest = code[name_end..].trim_start();
    if rest.is_empty() {
        return Some((name, false));
    }
    if !rest.starts_with('(') || !rest.ends_with(')') {
        return None;
    }
    // The parenthesis opened first closes last.
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i + 1 != rest.len() {
                    return None;
                }
            }
            _ => {}
        }
    }
    (depth == 0).then_some((name, true))
}

//! Conditional compilation, resolved before parsing.
//!
//! tree-sitter parses `#if … #else … #endif` as syntax, and code whose
//! braces are split across the branches becomes one large error. This pass
//! walks the directives of a file (and of the headers it includes, where
//! they are included) in order, keeps a table of object-like macros, and
//! blanks every line of an inactive branch and every conditional directive
//! with spaces (newlines kept), so byte offsets, lines and columns stay
//! those of the user's file. `#define`/`#undef`/`#include` lines of active
//! regions are left for the front end.
//!
//! Conditions are evaluated over tree-sitter's parse of the condition
//! (never a hand-written parser). One that uses a macro not defined at
//! that point is unknown: its first branch is kept and a note says so.

use super::fields::Fields;
use std::collections::HashMap;

use tree_sitter::{Node, Parser};

use super::source::{comment_end, skip_comment_or_literal, Source};
use crate::budget;
use crate::ir::Note;

/// A macro known to the preprocessor.
#[derive(Clone)]
pub(crate) enum Macro {
    /// An object-like macro's body.
    Object(String),
    /// A function-like macro's parameters and body (`None`: a definition
    /// that could not be read).
    Function(Option<(Vec<String>, String)>),
}

/// The macros known so far, by name.
pub(crate) type Defines = HashMap<String, Macro>;

/// One open `#if` group.
struct Group {
    /// The enclosing region is active.
    parent_active: bool,
    /// Some branch of this group was taken already.
    taken: bool,
    /// The current branch is active.
    active: bool,
}

/// Lines of `text` with their byte ranges, continuation lines joined for
/// directives.
fn logical_lines(text: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < text.len() {
        if text[i] == b'\n' {
            let continued = i > 0 && text[i - 1] == b'\\'
                || i > 1 && text[i - 1] == b'\r' && text[i - 2] == b'\\';
            if !continued {
                out.push((start, i));
                start = i + 1;
            }
        }
        i += 1;
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

fn blank(text: &mut [u8], start: usize, end: usize) {
    for b in &mut text[start..end] {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

/// The directive name and its argument text, for a line that is one.
fn directive(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start().strip_prefix('#')?.trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_alphabetic() || c == '_'))
        .unwrap_or(t.len());
    Some((&t[..end], t[end..].trim()))
}

/// A directive's argument without its comments, continuation lines joined.
pub(crate) fn strip_comments(s: &str) -> String {
    if !s.contains(['/', '\\']) {
        // Most lines: no comment, no continuation.
        return s.trim().to_string();
    }
    let mut out = String::new();
    let mut rest = s;
    while !rest.is_empty() {
        if rest.starts_with("//") {
            break;
        }
        if let Some(r) = rest.strip_prefix("/*") {
            match r.find("*/") {
                Some(e) => {
                    out.push(' ');
                    rest = &r[e + 2..];
                    continue;
                }
                None => break,
            }
        }
        let c = rest.chars().next().unwrap_or(' ');
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out.replace("\\\n", " ")
        .replace("\\\r\n", " ")
        .trim()
        .to_string()
}

/// C++'s alternative tokens (`and`, `or`, `not`, …) spelled as operators:
/// they are keywords, never macro names, and the grammar's `#if` does not
/// know them (`#if defined(__CUDA_ARCH__) and (__CUDA_ARCH__ == 900)`).
fn operator_words(text: &str) -> String {
    const WORDS: &[(&str, &str)] = &[
        ("and", "&&"),
        ("or", "||"),
        ("not", "!"),
        ("not_eq", "!="),
        ("bitand", "&"),
        ("bitor", "|"),
        ("xor", "^"),
        ("compl", "~"),
    ];
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        match WORDS.iter().find(|(w, _)| *w == word.as_str()) {
            Some((_, op)) => out.push_str(&format!(" {op} ")),
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Evaluates a condition; `Err(name)` names the first macro not defined.
fn eval_condition(
    parser: &mut Parser,
    text: &str,
    defines: &Defines,
    depth: u32,
) -> Result<i64, String> {
    if depth > budget::MAX_MACRO_DEPTH {
        return Err(format!(
            "(macros nested past the {})",
            budget::named("MAX_MACRO_DEPTH", budget::MAX_MACRO_DEPTH, "levels")
        ));
    }
    let snippet = format!("#if {}\n#endif\n", operator_words(text));
    let tree = parser
        .parse(&snippet, None)
        .ok_or_else(|| text.to_string())?;
    let cond = tree
        .root_node()
        .named_child(0)
        .and_then(|n| n.field("condition"))
        .ok_or_else(|| text.to_string())?;
    eval_node(parser, cond, snippet.as_bytes(), defines, depth)
}

fn eval_node(
    parser: &mut Parser,
    n: Node,
    src: &[u8],
    defines: &Defines,
    depth: u32,
) -> Result<i64, String> {
    let text = |n: Node| String::from_utf8_lossy(&src[n.byte_range()]).into_owned();
    match n.node_kind() {
        "number_literal" => super::lower::parse_int(&text(n)).ok_or_else(|| text(n)),
        "char_literal" => Ok(text(n)
            .trim_matches('\'')
            .chars()
            .next()
            .map(|c| c as i64)
            .unwrap_or(0)),
        "true" => Ok(1),
        "false" => Ok(0),
        "identifier" => {
            let name = text(n);
            match defines.get(&name) {
                Some(Macro::Object(body)) if !body.trim().is_empty() => {
                    eval_condition(parser, body, defines, depth + 1)
                }
                Some(Macro::Object(_)) => Ok(0),
                _ => Err(name),
            }
        }
        "preproc_defined" => {
            let name = n.named_child(0).map(text).unwrap_or_default();
            Ok(defines.contains_key(&name) as i64)
        }
        "parenthesized_expression" => match n.named_child(0) {
            Some(i) => eval_node(parser, i, src, defines, depth),
            None => Err(text(n)),
        },
        "unary_expression" => {
            let op = n.field("operator").map(|o| o.node_kind()).unwrap_or("");
            let v = eval_node(
                parser,
                n.field("argument").ok_or_else(|| text(n))?,
                src,
                defines,
                depth,
            )?;
            Ok(match op {
                "!" => (v == 0) as i64,
                "-" => v.wrapping_neg(),
                "~" => !v,
                _ => v,
            })
        }
        "binary_expression" => {
            let op = n.field("operator").map(|o| o.node_kind()).unwrap_or("");
            let l = n.field("left").ok_or_else(|| text(n))?;
            let r = n.field("right").ok_or_else(|| text(n))?;
            let a = eval_node(parser, l, src, defines, depth);
            // `defined(X) && X > 2` with X undefined is simply false.
            match (op, &a) {
                ("&&", Ok(0)) => return Ok(0),
                ("||", Ok(v)) if *v != 0 => return Ok(1),
                _ => {}
            }
            let b = eval_node(parser, r, src, defines, depth)?;
            let a = a?;
            let bop = match op {
                "+" => crate::ir::BinOp::Add,
                "-" => crate::ir::BinOp::Sub,
                "*" => crate::ir::BinOp::Mul,
                "/" => crate::ir::BinOp::Div,
                "%" => crate::ir::BinOp::Rem,
                "<<" => crate::ir::BinOp::Shl,
                ">>" => crate::ir::BinOp::Shr,
                "&" => crate::ir::BinOp::And,
                "|" => crate::ir::BinOp::Or,
                "^" => crate::ir::BinOp::Xor,
                "<" => crate::ir::BinOp::Lt,
                "<=" => crate::ir::BinOp::Le,
                ">" => crate::ir::BinOp::Gt,
                ">=" => crate::ir::BinOp::Ge,
                "==" => crate::ir::BinOp::Eq,
                "!=" => crate::ir::BinOp::Ne,
                "&&" => crate::ir::BinOp::LAnd,
                "||" => crate::ir::BinOp::LOr,
                _ => return Err(text(n)),
            };
            crate::ir::eval_bin(bop, a, b).ok_or_else(|| text(n))
        }
        "conditional_expression" => {
            let c = eval_node(
                parser,
                n.field("condition").ok_or_else(|| text(n))?,
                src,
                defines,
                depth,
            )?;
            let pick = if c != 0 { "consequence" } else { "alternative" };
            eval_node(
                parser,
                n.field(pick).ok_or_else(|| text(n))?,
                src,
                defines,
                depth,
            )
        }
        _ => Err(text(n)),
    }
}

/// A 128-bit fingerprint (two SipHash-1-3 with fixed, different keys:
/// the same in every run and on every thread).
type Fp = (u64, u64);

fn fingerprint(parts: &[&[u8]]) -> Fp {
    use std::hash::{Hash, Hasher};
    let half = |salt: u8| {
        let mut h = std::hash::DefaultHasher::new();
        salt.hash(&mut h);
        for p in parts {
            p.hash(&mut h);
        }
        h.finish()
    };
    (half(1), half(2))
}

fn xor(a: &mut Fp, b: Fp) {
    a.0 ^= b.0;
    a.1 ^= b.1;
}

/// A macro's share of the fingerprint of the macro table.
fn macro_fp(name: &str, m: &Macro) -> Fp {
    match m {
        Macro::Object(body) => fingerprint(&[b"o", name.as_bytes(), body.as_bytes()]),
        Macro::Function(None) => fingerprint(&[b"f", name.as_bytes()]),
        Macro::Function(Some((params, body))) => {
            let params = params.join(",");
            fingerprint(&[b"p", name.as_bytes(), params.as_bytes(), body.as_bytes()])
        }
    }
}

/// The state a header is entered in: the header (its text as read), the
/// macros defined, the headers already entered, the include depth. The
/// same state gives the same preprocessing, whichever file includes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct EntryKey {
    header: Fp,
    defines: Fp,
    entered: Fp,
    depth: u32,
}

/// What entering a header did, in order, replayable in another file
/// (headers named by fingerprint, not by that file's numbering).
#[derive(Clone)]
enum Event {
    /// `#include "name"` entered this header.
    Enter(String, Fp),
    /// `#include "name"` found no header not yet entered.
    Missing(String),
    /// At the depth budget, `#include "name"` was looked up only.
    Probe(String, Option<Fp>),
    /// A header's text once resolved.
    Text(Fp, std::sync::Arc<[u8]>),
    Define(String, Macro),
    Undef(String),
    /// A note in a header.
    Note(Fp, Note),
}

/// One header's preprocessing, as [`super::cache::ParseCache`] keeps it.
pub(crate) struct Entry {
    events: Vec<Event>,
}

impl Entry {
    /// Header text held, in bytes.
    pub fn bytes(&self) -> usize {
        self.events
            .iter()
            .map(|e| match e {
                Event::Text(_, t) => t.len(),
                _ => 64,
            })
            .sum()
    }
}

/// The pass over one file. `headers` are looked up by the name written
/// in `#include "…"`; each is processed once, where first included.
pub(crate) struct Conditionals<'a> {
    parser: Parser,
    defines: Defines,
    headers: Vec<(&'a str, &'a mut Source, bool)>,
    pub notes: Vec<Note>,
    /// Lines of the file run at depth 0 (1-based, inclusive ranges) left
    /// out as inactive; blank lines and directives between two left-out
    /// lines join their ranges.
    pub skipped: Vec<(u32, u32)>,
    /// Run-wide store of preprocessed headers (none: no sharing).
    cache: Option<&'a super::cache::ParseCache>,
    /// Fingerprints of the macro table and of the set of headers entered,
    /// kept up to date as they change.
    defines_fp: Fp,
    entered_fp: Fp,
    /// Each header's fingerprint (of its text as read), once computed.
    idents: Vec<Option<Fp>>,
    /// What the headers being entered did so far, innermost last.
    recording: Vec<Vec<Event>>,
}

impl<'a> Conditionals<'a> {
    pub fn new(
        defines: Defines,
        headers: Vec<(&'a str, &'a mut Source)>,
        cache: Option<&'a super::cache::ParseCache>,
    ) -> Option<Conditionals<'a>> {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_cuda::LANGUAGE.into())
            .ok()?;
        let mut defines_fp = (0, 0);
        for (name, m) in &defines {
            xor(&mut defines_fp, macro_fp(name, m));
        }
        Some(Conditionals {
            parser,
            defines,
            idents: vec![None; headers.len()],
            headers: headers.into_iter().map(|(n, s)| (n, s, false)).collect(),
            notes: Vec::new(),
            skipped: Vec::new(),
            cache,
            defines_fp,
            entered_fp: (0, 0),
            recording: Vec::new(),
        })
    }

    fn record(&mut self, e: impl FnOnce() -> Event) {
        if !self.recording.is_empty() {
            let e = e();
            for r in &mut self.recording {
                r.push(e.clone());
            }
        }
    }

    fn set_macro(&mut self, name: String, m: Macro) {
        self.record(|| Event::Define(name.clone(), m.clone()));
        self.define_as(name, m);
    }

    fn unset_macro(&mut self, name: &str) {
        self.record(|| Event::Undef(name.to_string()));
        self.undefine(name);
    }

    /// The table and its fingerprint, without recording.
    fn define_as(&mut self, name: String, m: Macro) {
        xor(&mut self.defines_fp, macro_fp(&name, &m));
        if let Some(old) = self.defines.insert(name.clone(), m) {
            xor(&mut self.defines_fp, macro_fp(&name, &old));
        }
    }

    fn undefine(&mut self, name: &str) {
        if let Some(old) = self.defines.remove(name) {
            xor(&mut self.defines_fp, macro_fp(name, &old));
        }
    }

    /// A note in the file (`file` 0) or in a header.
    fn push_note(&mut self, note: Note) {
        if note.span.file > 0 {
            let i = note.span.file as usize - 1;
            if i < self.headers.len() {
                let id = self.ident(i);
                self.record(|| Event::Note(id, note.clone()));
            }
        }
        self.notes.push(note);
    }

    /// Header `i`'s fingerprint; taken before it is entered (its text is
    /// then as read).
    fn ident(&mut self, i: usize) -> Fp {
        if let Some(f) = self.idents[i] {
            return f;
        }
        let f = fingerprint(&[&self.headers[i].1.text]);
        self.idents[i] = Some(f);
        f
    }

    /// The first header of that name not in `entered` (a replay's
    /// simulation of the flags).
    fn position(&self, name: &str, entered: &[bool]) -> Option<usize> {
        (0..self.headers.len()).find(|&i| self.headers[i].0 == name && !entered[i])
    }

    /// The first header of that name not entered yet.
    fn unentered(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h.0 == name && !h.2)
    }

    /// Resolves the conditionals of `source` in place.
    pub fn run(&mut self, source: &mut Source, depth: u32) {
        // Lines are read from (and notes located in) the original text.
        let mut text = source.text.clone();
        let mut stack: Vec<Group> = Vec::new();
        let mut in_comment = false;
        // Whether the last line with text outside directives was left out.
        let mut skipping = false;
        for (start, end) in logical_lines(&text) {
            let active = stack.last().map(|g| g.active).unwrap_or(true);
            // Read from the original: `text` differs only in lines already
            // done (and in this one, after it is read). Borrowed, not copied,
            // when the line is UTF-8.
            let line = String::from_utf8_lossy(&source.text[start..end]);
            let was_comment = in_comment;
            in_comment = comment_state(&line, in_comment);
            let dir = if was_comment { None } else { directive(&line) };
            let Some((name, arg)) = dir else {
                if depth == 0 && !text[start..end].iter().all(u8::is_ascii_whitespace) {
                    if !active {
                        let lines = (source.position(start).0, source.position(end).0);
                        match self.skipped.last_mut() {
                            Some((_, last)) if skipping => *last = lines.1,
                            _ => self.skipped.push(lines),
                        }
                    }
                    skipping = !active;
                }
                if !active {
                    blank(&mut text, start, end);
                } else if !was_comment {
                    self.replace_specifiers(&mut text, start, end);
                }
                continue;
            };
            let arg = strip_comments(arg);
            match name {
                "if" | "ifdef" | "ifndef" => {
                    let (value, taken) = if !active {
                        (false, true)
                    } else {
                        match self.condition(name, &arg) {
                            Ok(v) => (v, v),
                            Err(missing) => {
                                self.note(source, start, end, &arg, &missing);
                                (true, true)
                            }
                        }
                    };
                    stack.push(Group {
                        parent_active: active,
                        taken,
                        active: active && value,
                    });
                    blank(&mut text, start, end);
                }
                "elif" | "elifdef" | "elifndef" => {
                    if let Some(g) = stack.last_mut() {
                        if !g.parent_active || g.taken {
                            g.active = false;
                        } else {
                            let kind = match name {
                                "elifdef" => "ifdef",
                                "elifndef" => "ifndef",
                                _ => "if",
                            };
                            let r = self.condition(kind, &arg);
                            let g = stack.last_mut().expect("group");
                            match r {
                                Ok(v) => {
                                    g.active = v;
                                    g.taken = v;
                                }
                                Err(missing) => {
                                    g.active = true;
                                    g.taken = true;
                                    self.note(source, start, end, &arg, &missing);
                                }
                            }
                        }
                    }
                    blank(&mut text, start, end);
                }
                "else" => {
                    if let Some(g) = stack.last_mut() {
                        g.active = g.parent_active && !g.taken;
                        g.taken = true;
                    }
                    blank(&mut text, start, end);
                }
                "endif" => {
                    stack.pop();
                    blank(&mut text, start, end);
                }
                _ if !active => blank(&mut text, start, end),
                "define" => self.define(&arg),
                "undef" => self.unset_macro(arg.trim()),
                // `#pragma unroll` between a loop's header and its body
                // (`for (...)\n#pragma unroll\nfor (...)`) is a syntax
                // error to the grammar, which knows directives only where
                // statements go; no pragma changes an address.
                "pragma" => blank(&mut text, start, end),
                "include" => {
                    let inc = arg.trim().trim_matches(['"', '<', '>']).to_string();
                    if depth >= budget::MAX_INCLUDE_DEPTH {
                        let found = self.unentered(&inc);
                        let id = found.map(|i| self.ident(i));
                        self.record(|| Event::Probe(inc.clone(), id));
                        if found.is_some() {
                            self.push_note(Note {
                                span: source.span(start, end),
                                message: format!(
                                    "`{inc}` is not followed: the {} ran out",
                                    budget::named(
                                        "MAX_INCLUDE_DEPTH",
                                        budget::MAX_INCLUDE_DEPTH,
                                        "nested includes"
                                    )
                                ),
                            });
                        }
                    } else {
                        self.include(&inc, depth);
                    }
                }
                _ => {}
            }
        }
        terminate_lone_macros(&mut text, &self.defines);
        blank_parameter_specifiers(&mut text, &self.defines);
        blank_string_macro_suffixes(&mut text, &self.defines);
        respell_unsigned_casts(&mut text);
        blank_typename_in_expressions(&mut text);
        source.text = text;
    }

    /// Macros used as declaration specifiers (`#define CUTLASS_DEVICE
    /// __forceinline__ __device__`, `#define API`): the grammar takes an
    /// unknown identifier there for a type and derails, so a use is
    /// replaced in place by `__global__` (when the macro says so and the
    /// name is long enough) or blanked; offsets do not move.
    fn replace_specifiers(&self, text: &mut [u8], start: usize, end: usize) {
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
            let body = match self.defines.get(word) {
                Some(Macro::Object(body)) => body,
                Some(Macro::Function(Some((params, body)))) => {
                    i = expand_specifier_call(text, s, i, end, params, body).unwrap_or(i);
                    continue;
                }
                _ => continue,
            };
            let tokens: Vec<&str> = body.split_whitespace().collect();
            let mut work = 0;
            if !tokens.iter().all(|t| self.specifier_word(t, 0, &mut work)) || is_specifier {
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
    fn specifier_word(&self, word: &str, depth: u32, work: &mut u32) -> bool {
        if SPECIFIERS.contains(&word) {
            return true;
        }
        *work += 1;
        if depth >= budget::MAX_MACRO_DEPTH || *work > budget::MAX_MACRO_DEPTH {
            return false;
        }
        match self.defines.get(word) {
            Some(Macro::Object(body)) => {
                let mut tokens = body.split_whitespace().peekable();
                tokens.peek().is_some() && tokens.all(|t| self.specifier_word(t, depth + 1, work))
            }
            _ => false,
        }
    }

    fn condition(&mut self, kind: &str, arg: &str) -> Result<bool, String> {
        match kind {
            "ifdef" => Ok(self.defines.contains_key(arg.trim())),
            "ifndef" => Ok(!self.defines.contains_key(arg.trim())),
            _ => eval_condition(&mut self.parser, arg, &self.defines, 0).map(|v| v != 0),
        }
    }

    fn define(&mut self, arg: &str) {
        let name_end = arg
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(arg.len());
        let name = arg[..name_end].to_string();
        if name.is_empty() {
            return;
        }
        let rest = &arg[name_end..];
        let definition = match rest.strip_prefix('(') {
            Some(params) => Macro::Function(params.split_once(')').map(|(params, body)| {
                let params = params.split(',').map(|p| p.trim().to_string()).collect();
                (params, body.trim().to_string())
            })),
            None => Macro::Object(rest.trim().to_string()),
        };
        self.set_macro(name, definition);
    }

    /// Per header (in the order given): whether an active `#include`
    /// entered it. A header no active line includes is never parsed.
    pub fn entered(&self) -> Vec<bool> {
        self.headers.iter().map(|h| h.2).collect()
    }

    /// Enters the first header of that name not entered yet: replayed
    /// from the run's cache when some file entered it in the same state
    /// (and its own includes find the same headers here), else processed
    /// and kept there.
    fn include(&mut self, name: &str, depth: u32) {
        let Some(i) = self.unentered(name) else {
            self.record(|| Event::Missing(name.to_string()));
            return;
        };
        let id = self.ident(i);
        let key = EntryKey {
            header: id,
            defines: self.defines_fp,
            entered: self.entered_fp,
            depth,
        };
        if let Some(entry) = self.cache.and_then(|c| c.preprocessed(&key)) {
            if self.replay(&entry) {
                return;
            }
        }
        self.record(|| Event::Enter(name.to_string(), id));
        // Without a cache nothing is recorded (nor kept).
        if self.cache.is_some() {
            self.recording
                .push(vec![Event::Enter(name.to_string(), id)]);
        }
        self.enter(i, id);
        let mut src = std::mem::replace(self.headers[i].1, Source::new(b""));
        self.run(&mut src, depth + 1);
        let text: Option<std::sync::Arc<[u8]>> = self.cache.map(|_| src.text.as_slice().into());
        *self.headers[i].1 = src;
        if let (Some(cache), Some(text)) = (self.cache, text) {
            let mut events = self.recording.pop().unwrap_or_default();
            events.push(Event::Text(id, text.clone()));
            self.record(|| Event::Text(id, text));
            cache.keep_preprocessed(key, Entry { events });
        }
    }

    fn enter(&mut self, i: usize, id: Fp) {
        self.headers[i].2 = true;
        xor(&mut self.entered_fp, id);
    }

    /// Applies a kept entry when every include in it finds here the
    /// header it found there (checked first: all or nothing).
    fn replay(&mut self, entry: &Entry) -> bool {
        let mut entered: Vec<bool> = self.headers.iter().map(|h| h.2).collect();
        let mut index: Vec<(Fp, usize)> = Vec::new();
        for e in &entry.events {
            match e {
                Event::Enter(name, id) => {
                    let Some(i) = self.position(name, &entered) else {
                        return false;
                    };
                    if self.ident(i) != *id {
                        return false;
                    }
                    entered[i] = true;
                    index.push((*id, i));
                }
                Event::Missing(name) => {
                    if self.position(name, &entered).is_some() {
                        return false;
                    }
                }
                Event::Probe(name, id) => {
                    let found = self.position(name, &entered);
                    if found.map(|i| self.ident(i)) != *id {
                        return false;
                    }
                }
                Event::Text(..) | Event::Define(..) | Event::Undef(_) | Event::Note(..) => {}
            }
        }
        let at = |id: &Fp| index.iter().find(|(f, _)| f == id).map(|(_, i)| *i);
        for e in &entry.events {
            self.record(|| e.clone());
            match e {
                Event::Enter(_, id) => {
                    if let Some(i) = at(id) {
                        self.enter(i, *id);
                    }
                }
                Event::Text(id, text) => {
                    if let Some(i) = at(id) {
                        self.headers[i].1.text = text.to_vec();
                    }
                }
                Event::Define(name, m) => self.define_as(name.clone(), m.clone()),
                Event::Undef(name) => self.undefine(name),
                Event::Note(id, note) => {
                    if let Some(i) = at(id) {
                        let mut note = note.clone();
                        note.span.file = i as u32 + 1;
                        self.notes.push(note);
                    }
                }
                Event::Missing(_) | Event::Probe(..) => {}
            }
        }
        true
    }

    fn note(&mut self, source: &Source, start: usize, end: usize, arg: &str, missing: &str) {
        let cond = arg.split_whitespace().collect::<Vec<_>>().join(" ");
        self.push_note(Note {
            span: source.span(start, end),
            message: format!(
                "`#if {cond}` depends on `{missing}`, which is not defined here; its first branch is \
                 analysed (define it with -D or [analysis.defines])"
            ),
        });
    }
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
    let mut depth = 0;
    let mut close = None;
    for (j, &b) in text.iter().enumerate().take(end).skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(j);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
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
/// An undefined ALL_CAPS name that opens a parameter and is followed by a
/// type and a name (`CUTLASS_GRID_CONSTANT TmaA const tma_a`, from a header
/// that is not here) is a specifier macro: blanked, as a defined one would
/// be replaced. A parameter whose type it is (`DWORD x`, `UINT32 const x`)
/// has one name after it and is left alone.
fn blank_parameter_specifiers(text: &mut [u8], defines: &Defines) {
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
        for _ in 0..64 {
            j = skip_ws(text, j);
            let Some(&b) = text.get(j) else { break };
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
                _ => break,
            }
            j += 1;
        }
        if names >= 2 {
            for b in &mut text[w..we] {
                *b = b' ';
            }
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
            if matches!(defines.get(name.as_ref()), Some(Macro::Object(body)) if body.trim_start().starts_with('"'))
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
fn blank_typename_in_expressions(text: &mut [u8]) {
    const WORD: &[u8] = b"typename";
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
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
        // The qualified name: identifiers, `::`, balanced template arguments.
        let mut j = i + WORD.len();
        while text.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        let mut angle = 0i32;
        let mut qualified = false;
        let mut steps = 0;
        // A name, then white space: another name is a declaration.
        let mut name_done = false;
        while j < text.len() && steps < 512 {
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
        if in_expression && qualified && angle == 0 && matches!(text.get(j), Some(b'(' | b'{')) {
            text[i..i + WORD.len()].fill(b' ');
        }
        i += WORD.len();
    }
}

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

/// Whether a `/* … */` comment is open at the end of `line`.
fn comment_state(line: &str, mut open: bool) -> bool {
    let b = line.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if open {
            if b[i] == b'*' && b[i + 1] == b'/' {
                open = false;
                i += 2;
                continue;
            }
        } else if b[i] == b'/' && b[i + 1] == b'/' {
            return false;
        } else if b[i] == b'/' && b[i + 1] == b'*' {
            open = true;
            i += 2;
            continue;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
        }
        i += 1;
    }
    open
}

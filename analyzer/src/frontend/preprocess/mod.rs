//! Text-level preprocessing, before parsing: no IR, no syntax tree of
//! the file (only tree-sitter's parse of an `#if` condition).
//!
//! tree-sitter parses `#if … #else … #endif` as syntax, and code whose
//! braces are split across the branches becomes one large error. This pass
//! walks the directives of a file (and of the headers it includes, where
//! they are included) in order, keeps a table of macros, and blanks every
//! line of an inactive branch and every conditional directive with spaces
//! (newlines kept), so byte offsets, lines and columns stay those of the
//! user's file. `#define`/`#undef`/`#include` lines of active regions are
//! left in place; what each `#define`/`#undef` did is kept
//! ([`MacroDirectives`]) for the translation-unit pass, which reads no
//! definition itself.
//!
//! - this file: the driver ([`Conditionals::run`]), line by line: groups,
//!   directives, the macro table.
//! - [`condition`]: `#if` expressions evaluated. Conditions are evaluated
//!   over tree-sitter's parse of the condition (never a hand-written
//!   parser). One that uses a macro not defined at that point is unknown:
//!   its first branch is kept and a note says so.
//! - [`entry`]: entering a header, recorded as events under the state it
//!   was entered in (fingerprints), and replayed from the run's cache.
//! - [`rewrite`]: the spellings the grammar cannot parse, blanked or
//!   respelled in place (specifier macros, lone macro uses, `unsigned(`,
//!   `typename` in expressions, …).
//!
//! Invariant: every step rewrites bytes in place; offsets never move.

mod condition;
mod entry;
mod rewrite;

use std::collections::HashMap;

use tree_sitter::Parser;

use super::source::Source;
use crate::budget;
use crate::finding::{Cut, NoteKind};
use crate::ir::Note;
use condition::Missing;
pub(crate) use entry::{Entry, EntryKey};
use entry::{Event, Fp};

/// A macro: an object-like macro's body, or a function-like macro's
/// parameters and body. Read from its definition here only
/// ([`Conditionals`]); the translation-unit pass's table (`tu::Tu::macros`,
/// which lowering expands) starts from the same macros defined before the
/// first line and applies this pass's [`MacroDirectives`].
#[derive(Clone, Debug)]
pub(crate) struct Macro {
    /// A function-like macro's parameters (`None`: object-like).
    pub params: Option<Vec<String>>,
    pub body: String,
    /// A function-like definition whose parameter list does not close
    /// (`#define F(a, b`): defined, never expanded.
    unreadable: bool,
}

impl Macro {
    /// A macro read from a definition.
    pub fn new(params: Option<Vec<String>>, body: String) -> Macro {
        Macro {
            params,
            body,
            unreadable: false,
        }
    }

    /// A function-like macro whose parameter list does not close.
    fn unreadable() -> Macro {
        Macro {
            params: Some(Vec::new()),
            body: String::new(),
            unreadable: true,
        }
    }

    /// An object-like macro's body.
    pub fn object_body(&self) -> Option<&str> {
        self.params.is_none().then_some(self.body.as_str())
    }

    /// A function-like macro's parameters and body, when it could be read.
    pub fn function(&self) -> Option<(&[String], &str)> {
        match &self.params {
            Some(params) if !self.unreadable => Some((params, &self.body)),
            _ => None,
        }
    }
}

/// The macros known so far, by name.
pub(crate) type Defines = HashMap<String, Macro>;

/// Where a directive is: the file id ([`Source::file`]) and its line
/// (1-based; a directive continued over several lines, its first).
pub(crate) type DirectiveAt = (u32, u32);

/// What each `#define` (`Some`) and `#undef` (`None`) of an active region
/// did, by where it is, in the file and every header entered. Macro
/// definitions are read here and nowhere else: the translation-unit pass
/// applies these where its walk meets them.
pub(crate) type MacroDirectives = HashMap<DirectiveAt, (String, Option<Macro>)>;

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

/// Blanks `start..end` with spaces, line ends kept.
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
    /// The `#define`s and `#undef`s read (or replayed) so far.
    pub directives: MacroDirectives,
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
            entry::xor(&mut defines_fp, entry::macro_fp(name, m));
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
            directives: HashMap::new(),
        })
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
                    rewrite::replace_specifiers(&self.defines, &mut text, start, end);
                    self.note_long_attributes(source, start, end);
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
                                self.note(source, start, end, &arg, missing);
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
                                    self.note(source, start, end, &arg, missing);
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
                "define" => self.define(&arg, (source.file, source.position(start).0)),
                "undef" => self.unset_macro(arg.trim(), (source.file, source.position(start).0)),
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
                                kind: NoteKind::IncludeNotFollowed {
                                    include: inc.clone(),
                                    budget: budget::INCLUDE_DEPTH,
                                },
                            });
                        }
                    } else {
                        self.include(&inc, depth);
                    }
                }
                _ => {}
            }
        }
        for stop in rewrite::after_directives(&mut text, &self.defines) {
            self.push_note(Note {
                span: source.span(stop.at, stop.at + stop.len),
                kind: stop.kind,
            });
        }
        source.text = text;
    }

    /// A note for each attribute of active line `start..end` that was left
    /// unread (`budget::MAX_ATTRIBUTE_ARGUMENT_BYTES`).
    fn note_long_attributes(&mut self, source: &Source, start: usize, end: usize) {
        let long = source.long_attributes.iter();
        for &(at, key) in long.filter(|(at, _)| (start..end).contains(at)) {
            self.push_note(Note {
                span: source.span(at, at + key.len()),
                kind: NoteKind::OutOfBudget {
                    what: Cut::AttributeArguments { key: key.into() },
                    budget: budget::ATTRIBUTE_ARGUMENT_BYTES,
                },
            });
        }
    }

    /// The value of a conditional directive's condition (`kind` is `if`,
    /// `ifdef` or `ifndef`); `Err` names what is not defined.
    fn condition(&mut self, kind: &str, arg: &str) -> Result<bool, condition::Missing> {
        match kind {
            "ifdef" => Ok(self.defines.contains_key(arg.trim())),
            "ifndef" => Ok(!self.defines.contains_key(arg.trim())),
            _ => condition::eval_condition(&mut self.parser, arg, &self.defines, 0).map(|v| v != 0),
        }
    }

    /// `#define` at `at`: an object-like or function-like macro, read from
    /// the directive's text.
    fn define(&mut self, arg: &str, at: DirectiveAt) {
        let name_end = arg
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(arg.len());
        let name = arg[..name_end].to_string();
        if name.is_empty() {
            return;
        }
        let rest = &arg[name_end..];
        let definition = match rest.strip_prefix('(') {
            Some(params) => match params.split_once(')') {
                Some((params, body)) => {
                    // A variadic macro's `...` is no parameter: its
                    // arguments past the named ones are `__VA_ARGS__`.
                    let params = params
                        .split(',')
                        .map(|p| p.trim().to_string())
                        .filter(|p| !p.is_empty() && p != "...")
                        .collect();
                    Macro::new(Some(params), body.trim().to_string())
                }
                None => Macro::unreadable(),
            },
            None => Macro::new(None, rest.trim().to_string()),
        };
        self.set_macro(name, definition, at);
    }

    /// Per header (in the order given): whether an active `#include`
    /// entered it. A header no active line includes is never parsed.
    pub fn entered(&self) -> Vec<bool> {
        self.headers.iter().map(|h| h.2).collect()
    }

    /// The note for a condition that reads a macro not defined here.
    fn note(&mut self, source: &Source, start: usize, end: usize, arg: &str, missing: Missing) {
        let condition = arg.split_whitespace().collect::<Vec<_>>().join(" ");
        let kind = match missing {
            Missing::Name(name) => NoteKind::UndefinedInCondition { condition, name },
            Missing::TooDeep(budget) => NoteKind::ConditionTooDeep { condition, budget },
        };
        self.push_note(Note {
            span: source.span(start, end),
            kind,
        });
    }
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

//! The file and its headers as they are parsed: preprocessed afresh, or
//! carried over from the unedited file's analysis when an edit (the fix
//! search's candidate array sizes) cannot change what preprocessing did.
//! A test compares every report, note, launch and left-out line of a
//! carried-over analysis with a from-scratch one.

use std::sync::Arc;

use super::super::preprocess;
use super::super::source::Source;
use super::super::{Options, Reparse};
use super::LaunchSite;
use crate::budget;
use crate::finding::{Cut, NoteKind};
use crate::ir::{Note, Span};

/// What one analysis of a file worked out before lowering that an edit
/// inside one declaration's brackets (the fix search's candidate array
/// sizes) leaves as it was: the conditionals and specifier macros resolved
/// (in the file and in every header), which headers were entered, the
/// launches in host code. A candidate that reuses it spends its time on
/// parsing the edit and lowering one kernel, not on the headers again.
pub(crate) struct Prepared {
    /// The file as read.
    input: Vec<u8>,
    /// The file as parsed (conditionals resolved, braces closed).
    source: Source,
    headers: Vec<Source>,
    entered: Vec<bool>,
    notes: Vec<Note>,
    skipped: Vec<(u32, u32)>,
    directives: Arc<preprocess::MacroDirectives>,
    launches: Vec<LaunchSite>,
    /// The kernel the launches were looked for (`None`: all).
    only: Option<String>,
}

impl Prepared {
    /// Whether `input` is this file with bytes `start..old_end` replaced
    /// by `start..new_end`, in active code, by text that no preprocessing
    /// step reads (numbers, spaces, arithmetic and the names already there,
    /// on one line), inside the brackets of an array dimension on a line
    /// that is not a directive: the padding search's edit. The pitch
    /// search's edit of a constant's value is not one: a `#if` or a launch
    /// prepared here may read that constant.
    fn fits(&self, input: &[u8], start: usize, old_end: usize, new_end: usize) -> bool {
        let old = &self.input;
        if start > old_end || old_end > old.len() || start > new_end || new_end > input.len() {
            return false;
        }
        // No `__` either: attributes (`__align__(8)`) are read before parsing.
        let plain = |t: &[u8]| !t.windows(2).any(|w| w == b"__") && t.iter().all(plain_byte);
        // Names the preprocessing acts on (specifier and statement macros,
        // `unsigned(`, `typename`) stay where they were: the edit brings no
        // name the replaced text did not have.
        let names = |t: &[u8]| -> Vec<Vec<u8>> {
            t.split(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                .filter(|w| w.first().is_some_and(|b| !b.is_ascii_digit()))
                .map(<[u8]>::to_vec)
                .collect()
        };
        let (before, after) = (names(&old[start..old_end]), names(&input[start..new_end]));
        let same_names = after
            .iter()
            .all(|w| before.contains(w) && w != b"unsigned" && w != b"typename");
        old.len() - old_end == input.len() - new_end
            && old[..start] == input[..start]
            && old[old_end..] == input[new_end..]
            && plain(&input[start..new_end])
            && plain(&old[start..old_end])
            && same_names
            && in_array_dimension(old, start, old_end)
            // Untouched before parsing: not in a left-out branch.
            && self.source.text.get(start..old_end) == Some(&old[start..old_end])
    }
}

/// A byte of the plain text a reused preparation allows an edit to hold:
/// names, numbers, spaces, `+ - * ( )`.
fn plain_byte(b: &u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b' ' | b'+' | b'-' | b'*' | b'(' | b')')
}

/// Whether bytes `start..end` of `text` lie between an array dimension's
/// `[` and `]` (with only plain expression text between them and the
/// edit), on a line that is not a preprocessor directive.
fn in_array_dimension(text: &[u8], start: usize, end: usize) -> bool {
    let open = text[..start].iter().rposition(|b| !plain_byte(b));
    let close = text[end..]
        .iter()
        .position(|b| !plain_byte(b))
        .map(|i| end + i);
    let line_start = text[..start]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let directive = text[line_start..start]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        == Some(&b'#');
    matches!((open, close), (Some(o), Some(c)) if text[o] == b'[' && text[c] == b']') && !directive
}

/// `span` (in the file before an edit at `at` that changed its length by
/// `delta`) in the edited `source`.
fn shifted(span: Span, at: usize, delta: isize, source: &Source) -> Span {
    if span.file != 0 || span.start < at {
        return span;
    }
    let m = |x: usize| x.saturating_add_signed(delta);
    source.span(m(span.start), m(span.end))
}

/// The file and its headers as they are parsed, and what preprocessing
/// them said: worked out afresh, or carried over from an unedited file's
/// [`Prepared`].
pub(super) struct Preprocessed {
    /// The file as parsed (conditionals resolved, braces closed).
    pub source: Source,
    pub headers: Vec<Source>,
    /// Per header: whether an active `#include` entered it.
    pub entered: Vec<bool>,
    pub notes: Vec<Note>,
    pub skipped: Vec<(u32, u32)>,
    /// What the `#define`s and `#undef`s did, where they are (an edit that
    /// [`Prepared::fits`] adds no line).
    pub directives: Arc<preprocess::MacroDirectives>,
    /// Launch sites carried over (`None`: to be found).
    pub launches: Option<Vec<LaunchSite>>,
}

/// The file and its headers preprocessed: carried over from the unedited
/// file when the edit allows it (see [`Prepared`]), else afresh.
pub(super) fn preprocess(
    input: &[u8],
    macros: &preprocess::Defines,
    options: &Options,
) -> Preprocessed {
    // An edit the fix search made inside one declaration's brackets: what
    // the unedited file's analysis prepared still holds (see `Prepared`).
    let reuse = options.reparse.as_ref().and_then(|r| {
        let p = r.base.prepared.as_ref()?;
        let same_scope = p.only.is_none() || p.only == options.only_kernel;
        (same_scope && p.fits(input, r.start, r.old_end, r.new_end)).then_some((r, p))
    });
    match reuse {
        Some((r, p)) => p.reused(input, r),
        None => fresh(input, macros.clone(), options),
    }
}

impl Prepared {
    /// What this file's preparation says of `input`, this file with the
    /// edit `r` (which [`Prepared::fits`]): the edit spliced in, notes and
    /// launch sites past it moved.
    fn reused(&self, input: &[u8], r: &Reparse) -> Preprocessed {
        let delta = r.new_end as isize - r.old_end as isize;
        let source = self
            .source
            .spliced(r.start, r.old_end, &input[r.start..r.new_end]);
        let notes = self
            .notes
            .iter()
            .map(|n| Note {
                span: shifted(n.span, r.old_end, delta, &source),
                kind: n.kind.clone(),
            })
            .collect();
        let launches = self
            .launches
            .iter()
            .map(|l| LaunchSite {
                span: shifted(l.span, r.old_end, delta, &source),
                ..l.clone()
            })
            .collect::<Vec<_>>();
        Preprocessed {
            source,
            headers: self.headers.clone(),
            entered: self.entered.clone(),
            notes,
            skipped: self.skipped.clone(),
            directives: self.directives.clone(),
            launches: Some(launches),
        }
    }
}

/// The file and the headers the caller read, preprocessed from scratch
/// with `defines` defined before the first line: conditionals and
/// specifier macros resolved (offsets unchanged), braces of a truncated
/// file closed, template closers split.
fn fresh(input: &[u8], defines: preprocess::Defines, options: &Options) -> Preprocessed {
    let mut source = Source::new(input);
    // Headers the caller read for us.
    let mut headers: Vec<Source> = options
        .headers
        .iter()
        .take(budget::MAX_HEADERS)
        .enumerate()
        .filter(|(_, h)| h.text.len() <= budget::MAX_FILE_BYTES && !h.text.contains(&0))
        .map(|(i, h)| Source::with_file(&h.text, i as u32 + 1))
        .collect();
    let names: Vec<String> = headers
        .iter()
        .map(|s| options.headers[s.file as usize - 1].name.clone())
        .collect();
    let hs: Vec<(&str, &mut Source)> = names
        .iter()
        .map(String::as_str)
        .zip(headers.iter_mut())
        .collect();
    // #if/#ifdef/#else/#endif resolved before parsing (offsets unchanged).
    let (entered, mut notes, skipped, directives) =
        match preprocess::Conditionals::new(defines, hs, options.parse_cache.as_deref()) {
            Some(mut c) => {
                c.run(&mut source, 0);
                (c.entered(), c.notes, c.skipped, c.directives)
            }
            None => (
                vec![true; headers.len()],
                Vec::new(),
                Vec::new(),
                Default::default(),
            ),
        };
    if options.headers.len() > budget::MAX_HEADERS {
        notes.push(Note {
            span: source.span(0, 0),
            kind: NoteKind::OutOfBudget {
                what: Cut::Headers {
                    given: options.headers.len() as u64,
                },
                budget: budget::HEADERS,
            },
        });
    }
    for h in &mut headers {
        h.close_open_braces();
        h.split_template_closers();
    }
    source.close_open_braces();
    source.split_template_closers();
    Preprocessed {
        source,
        headers,
        entered,
        notes,
        skipped,
        directives: Arc::new(directives),
        launches: None,
    }
}

impl Preprocessed {
    /// Kept with the analysis of `input`, for an edited copy to start from.
    pub(super) fn keep(
        self,
        input: &[u8],
        launches: Vec<LaunchSite>,
        options: &Options,
    ) -> Prepared {
        Prepared {
            input: input.to_vec(),
            source: self.source,
            headers: self.headers,
            entered: self.entered,
            notes: self.notes,
            skipped: self.skipped,
            directives: self.directives,
            launches,
            only: options.only_kernel.clone(),
        }
    }
}

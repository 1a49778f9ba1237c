//! Entering a header, recorded and replayed. What entering a header does
//! (headers entered, includes that found nothing, the header's resolved
//! text, `#define`/`#undef`, notes) is recorded as events and kept in the
//! run's cache under the state it was entered in ([`EntryKey`]:
//! fingerprints of the header's text, of the macro table and of the set of
//! headers entered, kept up to date incrementally, and the depth). Another
//! file entering it in the same state replays the events when every include
//! in them finds the same header there (checked before anything is
//! applied), else processes it.

use super::super::source::Source;
use super::{Conditionals, DirectiveAt, Macro};
use crate::ir::Note;

/// A 128-bit fingerprint (two SipHash-1-3 with fixed, different keys:
/// the same in every run and on every thread).
pub(super) type Fp = (u64, u64);

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

pub(super) fn xor(a: &mut Fp, b: Fp) {
    a.0 ^= b.0;
    a.1 ^= b.1;
}

/// A macro's share of the fingerprint of the macro table.
pub(super) fn macro_fp(name: &str, m: &Macro) -> Fp {
    match (m.object_body(), m.function()) {
        (Some(body), _) => fingerprint(&[b"o", name.as_bytes(), body.as_bytes()]),
        (None, None) => fingerprint(&[b"f", name.as_bytes()]),
        (None, Some((params, body))) => {
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
pub(super) enum Event {
    /// `#include "name"` entered this header.
    Enter(String, Fp),
    /// `#include "name"` found no header not yet entered.
    Missing(String),
    /// At the depth budget, `#include "name"` was looked up only.
    Probe(String, Option<Fp>),
    /// A header's text once resolved.
    Text(Fp, std::sync::Arc<[u8]>),
    /// `#define` on this line of the header being entered (the innermost
    /// `Enter` not yet closed by its `Text`).
    Define(String, Macro, u32),
    /// `#undef` on this line, as `Define`.
    Undef(String, u32),
    /// A note in a header.
    Note(Fp, Note),
}

/// One header's preprocessing, as [`super::cache::ParseCache`] keeps it.
pub(crate) struct Entry {
    events: Vec<Event>,
}

/// What an event other than a header's text counts for in
/// [`Entry::bytes`]: an estimate of its size (names, a macro, a note), so
/// that entries of many small events count too. Not a limit.
const EVENT_BYTES: usize = 64;

impl Entry {
    /// Header text held, in bytes (other events at [`EVENT_BYTES`]).
    pub fn bytes(&self) -> usize {
        self.events
            .iter()
            .map(|e| match e {
                Event::Text(_, t) => t.len(),
                _ => EVENT_BYTES,
            })
            .sum()
    }
}

impl Conditionals<'_> {
    pub(super) fn record(&mut self, e: impl FnOnce() -> Event) {
        if !self.recording.is_empty() {
            let e = e();
            for r in &mut self.recording {
                r.push(e.clone());
            }
        }
    }

    pub(super) fn set_macro(&mut self, name: String, m: Macro, at: DirectiveAt) {
        self.record(|| Event::Define(name.clone(), m.clone(), at.1));
        self.directives.insert(at, (name.clone(), Some(m.clone())));
        self.define_as(name, m);
    }

    pub(super) fn unset_macro(&mut self, name: &str, at: DirectiveAt) {
        self.record(|| Event::Undef(name.to_string(), at.1));
        self.directives.insert(at, (name.to_string(), None));
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
    pub(super) fn push_note(&mut self, note: Note) {
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
    pub(super) fn ident(&mut self, i: usize) -> Fp {
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
    pub(super) fn unentered(&self, name: &str) -> Option<usize> {
        self.headers.iter().position(|h| h.0 == name && !h.2)
    }

    /// Enters the first header of that name not entered yet: replayed
    /// from the run's cache when some file entered it in the same state
    /// (and its own includes find the same headers here), else processed
    /// and kept there.
    pub(super) fn include(&mut self, name: &str, depth: u32) {
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

    /// Marks header `i` entered, in the flags and their fingerprint.
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
                Event::Text(..) | Event::Define(..) | Event::Undef(..) | Event::Note(..) => {}
            }
        }
        let at = |id: &Fp| index.iter().find(|(f, _)| f == id).map(|(_, i)| *i);
        // The file ids of the headers being entered, innermost last.
        let mut files: Vec<u32> = Vec::new();
        for e in &entry.events {
            self.record(|| e.clone());
            match e {
                Event::Enter(_, id) => {
                    if let Some(i) = at(id) {
                        self.enter(i, *id);
                        files.push(i as u32 + 1);
                    }
                }
                Event::Text(id, text) => {
                    if let Some(i) = at(id) {
                        self.headers[i].1.text = text.to_vec();
                        files.pop();
                    }
                }
                Event::Define(name, m, line) => {
                    if let Some(&file) = files.last() {
                        let d = (name.clone(), Some(m.clone()));
                        self.directives.insert((file, *line), d);
                    }
                    self.define_as(name.clone(), m.clone());
                }
                Event::Undef(name, line) => {
                    if let Some(&file) = files.last() {
                        self.directives.insert((file, *line), (name.clone(), None));
                    }
                    self.undefine(name);
                }
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
}

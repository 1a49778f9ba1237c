//! Where each piece of the CUDA C++ the translation wrote came from in
//! the Rust source, and the front end's result moved back onto the Rust
//! text: every span, and the texts that quote the source (an access as
//! written, a declaration).

use crate::frontend::source::Source;
use crate::ir::{Placement, Program, RemovedWhy, Span};

/// A piece of the translation (`gen`, bytes of the C++ text) and the Rust
/// syntax it was written for (`src`, bytes of the Rust text).
#[derive(Clone, Copy, Debug)]
pub(super) struct Seg {
    pub gen: (usize, usize),
    pub src: (usize, usize),
}

/// The pieces of one translation, and the Rust text to locate spans in.
pub(super) struct SpanMap<'a> {
    segs: Vec<Seg>,
    rust: &'a str,
    lines: Source,
}

impl<'a> SpanMap<'a> {
    pub fn new(mut segs: Vec<Seg>, rust: &'a str) -> SpanMap<'a> {
        // Innermost first among those that start alike.
        segs.sort_by_key(|s| (s.gen.0, std::cmp::Reverse(s.gen.1)));
        SpanMap {
            segs,
            rust,
            lines: Source::new(rust.as_bytes()),
        }
    }

    /// The Rust bytes of the smallest piece whose C++ holds `start..end`
    /// (the start of the file when none does).
    fn source_of(&self, start: usize, end: usize) -> (usize, usize) {
        self.segs
            .iter()
            .take_while(|s| s.gen.0 <= start)
            .filter(|s| s.gen.1 >= end)
            .min_by_key(|s| s.gen.1 - s.gen.0)
            .map_or((0, 0), |s| s.src)
    }

    /// `span` of the C++ text, moved onto the Rust text.
    pub fn span(&self, span: Span) -> Span {
        let (start, end) = self.source_of(span.start, span.end);
        self.lines.span(start, end)
    }

    /// The Rust text of a span already moved.
    pub fn text(&self, span: Span) -> String {
        self.rust
            .get(span.start..span.end)
            .unwrap_or_default()
            .to_string()
    }

    /// Every span of `program` moved onto the Rust text, and the texts that
    /// quote the source re-read from it.
    pub fn program(&self, program: &mut Program) {
        let m = |s: &mut Span| *s = self.span(*s);
        for k in &mut program.kernels {
            m(&mut k.span);
            m(&mut k.extent);
            for o in &mut k.objects {
                m(&mut o.decl);
                o.decl_text = self.text(o.decl);
                if let Some(d) = &mut o.inner_dim {
                    m(d);
                }
            }
            for a in &mut k.accesses {
                m(&mut a.span);
                a.text = self.text(a.span);
                if let Some(i) = &mut a.inlined_at {
                    m(&mut i.call);
                }
                if let Some(h) = &mut a.hoisted {
                    m(&mut h.from);
                    m(&mut h.counted);
                }
            }
            for l in &mut k.loops {
                m(&mut l.span);
            }
            for l in &mut k.launches {
                if let Some(s) = &mut l.span {
                    m(s);
                }
            }
            for n in &mut k.lowering_notes {
                m(&mut n.span);
            }
            for r in &mut k.removed {
                m(&mut r.span);
                r.text = self.text(r.span);
                match &mut r.why {
                    RemovedWhy::Merged { into: s }
                    | RemovedWhy::Reloaded { from: s }
                    | RemovedWhy::Forwarded { from: s } => m(s),
                    RemovedWhy::NotInSass { .. } | RemovedWhy::Registers => {}
                }
            }
            for l in &mut k.locals {
                if let Placement::Memory {
                    store,
                    load,
                    runtime_loop,
                } = &mut l.placement
                {
                    m(store);
                    m(load);
                    if let Some(s) = runtime_loop {
                        m(s);
                    }
                }
            }
        }
        for n in &mut program.notes {
            m(&mut n.span);
        }
        for s in &mut program.launch_sites {
            m(&mut s.span);
        }
        program.skipped_lines.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_moves_to_the_smallest_piece_that_holds_it() {
        let rust = "let x = a[i + 1];";
        let segs = vec![
            Seg {
                gen: (0, 30),
                src: (0, 17),
            },
            Seg {
                gen: (10, 24),
                src: (8, 16),
            },
            Seg {
                gen: (12, 20),
                src: (10, 15),
            },
        ];
        let map = SpanMap::new(segs, rust);
        let at = |s: usize, e: usize| {
            let sp = map.span(Span {
                start: s,
                end: e,
                ..Span::default()
            });
            map.text(sp)
        };
        assert_eq!(at(10, 24), "a[i + 1]");
        assert_eq!(at(11, 23), "a[i + 1]");
        assert_eq!(at(13, 19), "i + 1");
        assert_eq!(at(2, 5), rust);
        assert_eq!(at(40, 41), "");
    }
}

//! The Rust front end: Rust-CUDA kernels (`#[kernel]` functions over
//! `cuda_std::thread`) to the same [`Program`] the CUDA front end makes.
//!
//! `syn` parses the file; [`emit`] writes each kernel, the functions it
//! may call, its constants and its shared statics as the CUDA C++ they
//! compile to, recording which Rust syntax each piece stands for; the CUDA
//! front end lowers that text; [`spans`] moves every span and quoted text
//! of the result back onto the Rust source. Rust-CUDA compiles through
//! NVVM, the optimiser nvcc uses, so what `crate::nvcc` models of nvcc's
//! code applies to it as well.
//!
//! What the translation does not read (`match` on tuples or enums,
//! iterators other than counted ranges, closures, …) is a [`NoteKind::RustUnread`] at its span,
//! and any value it stands for is unknown.

mod emit;
mod launches;
mod spans;
mod types;

use crate::budget;
use crate::finding::NoteKind;
use crate::frontend::source::Source;
use crate::frontend::Options;
use crate::ir::{Note, Program};

/// Whether `text` may hold a Rust kernel or a launch: a `#[kernel]` or
/// `#[cube…]` attribute, a `launch!` or a CubeCL `k::launch…` call (cheap:
/// ordinary Rust is skipped without a parse).
pub fn may_hold_kernels(text: &[u8]) -> bool {
    ["kernel]".as_bytes(), b"launch!", b"#[cube", b"::launch"]
        .iter()
        .any(|m| memchr::memmem::find(text, m).is_some())
}

/// The deepest nesting of brackets in `text` (strings and comments
/// counted too: an overestimate), to refuse what would overflow the
/// recursive parser's stack.
fn nesting(text: &[u8]) -> u32 {
    let (mut depth, mut max) = (0u32, 0u32);
    for b in text {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// A note about the whole file (it is not analysed): no span.
fn whole_file(kind: NoteKind) -> Note {
    Note {
        span: crate::ir::Span::default(),
        kind,
    }
}

fn note_at(source: &Source, start: usize, end: usize, kind: NoteKind) -> Note {
    Note {
        span: source.span(start, end),
        kind,
    }
}

/// The Rust file `input` as the front end's [`Program`].
pub fn parse_program(input: &[u8], options: &Options) -> Program {
    let mut program = Program::default();
    if !may_hold_kernels(input) {
        return program;
    }
    let lines = Source::new(input);
    if input.len() > budget::MAX_FILE_BYTES {
        program.notes.push(whole_file(NoteKind::FileTooLarge {
            budget: budget::FILE_BYTES,
        }));
        return program;
    }
    let Ok(text) = std::str::from_utf8(input) else {
        program.notes.push(whole_file(NoteKind::RustSyntax {
            message: "the file is not UTF-8".into(),
        }));
        return program;
    };
    if nesting(input) > budget::MAX_SYNTAX_DEPTH {
        program.notes.push(whole_file(NoteKind::StatementsTooDeep {
            budget: budget::SYNTAX_DEPTH,
        }));
        return program;
    }
    let translated = translate(text, &lines);
    // The spans of one file are read; the thread's table of them is
    // emptied so that a long run (the language server) does not grow it.
    proc_macro2::extra::invalidate_current_thread_spans();
    let (cuda, segs, skipped, statics, sites) = match translated {
        Ok(t) => t,
        Err((at, message)) => {
            // The file is not analysed: a note about the whole file, which
            // says where syn stopped.
            let (line, column) = lines.position(at.0);
            let message = format!("{message}, at {line}:{column}");
            program
                .notes
                .push(whole_file(NoteKind::RustSyntax { message }));
            return program;
        }
    };
    let mut o = options.clone();
    // A slice's length is the C++ parameter `name__len`; the configuration
    // names it as Rust does (`"a.len()"`).
    for k in o.kernels.values_mut() {
        k.params = std::mem::take(&mut k.params)
            .into_iter()
            .map(|(name, v)| (c_param(&name), v))
            .collect();
    }
    o.headers.clear();
    o.reparse = None;
    o.language = crate::frontend::Language::Cuda;
    let mut lowered = crate::frontend::parse_program(cuda.as_bytes(), &o);
    lines_in_rust_terms(&mut lowered, &cuda);
    spans::SpanMap::new(segs, text).program(&mut lowered);
    for k in &mut lowered.kernels {
        for p in &mut k.params {
            p.name = rust_param(&p.name);
        }
        for o in &mut k.objects {
            pad_alike(o, &statics, &lines);
        }
    }
    for s in skipped {
        lowered.notes.push(note_at(
            &lines,
            s.at.0,
            s.at.1,
            NoteKind::RustUnread { what: s.what },
        ));
    }
    lowered.notes.sort_by(|a, b| {
        (a.span.start, a.span.end, &a.kind).cmp(&(b.span.start, b.span.end, &b.kind))
    });
    lowered.notes.dedup();
    lowered.files.clear();
    lowered.launch_sites = sites;
    lowered
}

/// What the front end says of the `Line` type the translation declares
/// (`types::LINE_PRELUDE`) said in Rust's terms: nothing of its own
/// definition (its `N` is a template parameter), and a line width no
/// launch gives is the buffer's (`__wl_line<F, __line_out>`: `out`'s),
/// shown as `?` among the kernel's arguments.
fn lines_in_rust_terms(p: &mut Program, cuda: &str) {
    use crate::finding::{Origin, UnknownReason};
    if !cuda.starts_with(types::LINE_PRELUDE) {
        return;
    }
    let end = types::LINE_PRELUDE.len();
    p.notes.retain(|n| n.span.file != 0 || n.span.start >= end);
    let line_of = |o: &mut Origin| {
        if let Origin::TypeSize { ty } = o {
            if let Some((_, b)) = ty
                .strip_prefix("__wl_line<")
                .and_then(|rest| rest.rsplit_once("__line_"))
            {
                *o = Origin::LineWidth {
                    buffer: b.trim_end_matches('>').trim().to_string(),
                };
            }
        }
    };
    for k in &mut p.kernels {
        for u in &mut k.unknowns {
            line_of(&mut u.origin);
        }
        for a in &mut k.accesses {
            if let Some(
                UnknownReason::DependsOn { origin, .. } | UnknownReason::BranchUndecided { origin },
            ) = &mut a.unknown
            {
                line_of(origin);
            }
        }
        if let Some((name, args)) = k.display_name.split_once('<') {
            let shown: Vec<&str> = args
                .trim_end_matches('>')
                .split(", ")
                .map(|a| if a.starts_with("__line_") { "?" } else { a })
                .collect();
            k.display_name = format!("{name}<{}>", shown.join(", "));
        }
    }
}

/// A shared static's initializer that writes its innermost length too:
/// padding edits both ([`crate::ir::MemObject::dim_copies`]), or is not
/// offered when the initializer cannot follow.
fn pad_alike(o: &mut crate::ir::MemObject, statics: &[emit::SharedStatic], lines: &Source) {
    let Some(dim) = o.inner_dim else {
        return;
    };
    let Some(s) = statics.iter().find(|s| s.inner == (dim.start, dim.end)) else {
        return;
    };
    match &s.copies {
        Some(c) => o.dim_copies = c.iter().map(|&(a, b)| lines.span(a, b)).collect(),
        None => o.inner_dim = None,
    }
}

/// The C++ parameter for a parameter as Rust names it (`a.len()` is
/// `a__len`).
fn c_param(name: &str) -> String {
    match name.strip_suffix(".len()") {
        Some(slice) => format!("{slice}__len"),
        None => name.to_string(),
    }
}

/// A C++ parameter as Rust names it ([`c_param`]'s inverse).
fn rust_param(name: &str) -> String {
    match name.strip_suffix("__len") {
        Some(slice) => format!("{slice}.len()"),
        None => name.to_string(),
    }
}

type Translated = (
    String,
    Vec<spans::Seg>,
    Vec<emit::Skipped>,
    Vec<emit::SharedStatic>,
    Vec<crate::ir::SiteRecord>,
);

/// The CUDA C++ for `text`, or where and why syn could not parse it.
fn translate(text: &str, lines: &Source) -> Result<Translated, ((usize, usize), String)> {
    let file = syn::parse_file(text).map_err(|e| {
        let r = e.span().byte_range();
        ((r.start, r.end), e.to_string())
    })?;
    let mut e = emit::Emitter::default();
    e.file(&file);
    let sites = launches::sites(&file, lines);
    Ok((e.out, e.segs, e.skipped, e.statics, sites))
}

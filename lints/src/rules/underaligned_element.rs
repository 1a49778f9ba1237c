//! GM004 `underaligned-element`.
//!
//! A struct of 2, 4, 8 or 16 bytes whose alignment is smaller than its size
//! cannot be moved by one instruction: nvcc splits each copy of it into
//! pieces no wider than the alignment (measured:
//! `fixtures/groundtruth/align/`). The rule re-analyses the kernel with the
//! struct declared `__align__(size)` (its size unchanged, so no padding) and
//! reports where that leaves fewer instructions and no more sectors.

use std::collections::BTreeMap;

use warplint_analyzer::frontend::{Language, Reparse};
use warplint_analyzer::ir::{Kernel, MemObject, Op, Space, Span};
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::{analyze, AccessReport, FileAnalysis, Status};

use crate::padding::FixBudget;
use crate::{
    assumption_notes, facts, fmt_num, Applicability, Context, Diagnostic, Edit, Fix, Label, Lint,
    Rule, Severity,
};

pub struct UnderalignedElement;

pub static RULE: Rule = Rule {
    code: "GM004",
    name: "underaligned-element",
    summary: "a struct of 2, 4, 8 or 16 bytes aligned below its size, so nvcc moves it in several narrower global loads or stores",
    fixable: true,
    doc: r#"## What it does
Flags a global array of structs whose size is 2, 4, 8 or 16 bytes but whose
alignment is smaller (a `struct { float x, y, z; int w; }` is 16 bytes and
4-byte aligned), where the accesses move whole elements or neighbouring
fields. nvcc cannot prove such an element is aligned to its size, so it
moves it in pieces no wider than its alignment: four 4-byte loads instead
of one 16-byte load. The rule re-analyses the kernel with the struct
declared `__align__(size)` and reports only where that gives fewer
instructions and no more sectors; the finding names the instructions and
sectors before and after.

## Why is this bad?
The CUDA programming guide (5.3.2.1.1): global memory instructions move
1, 2, 4, 8 or 16 bytes, and only naturally aligned data compiles to one
instruction. Measured on an H200 (`fixtures/groundtruth/align/`): copying
16-byte, 4-byte-aligned structs ran as 5 loads and 4 stores per element
(80 + 64 sectors per warp) and took 148 µs for 16 M elements; declared
`__align__(16)`, one `LDG.E.128` and one `STG.E.128` (16 + 16 sectors), 124
µs. Where the kernel is bound by DRAM bandwidth alone, the extra
instructions can cost no time (reading the same elements: 83.5 against
82.7 µs), but they use issue slots and L1 bandwidth other work needs.

Elements whose size is not a power of two (a 12-byte `float3`) are not
reported: padding them to 16 bytes moves a third more bytes, and on the
H200 a streaming copy ran 25% slower padded (101 against 127 µs), while a
structure of arrays ran no faster than the 12-byte elements.

## Example
```cuda
struct Particle { float x, y, z; int id; };   // 16 bytes, 4-byte aligned
out[i] = in[i];                               // 4 loads and 4 stores
```

## Use instead
```cuda
struct __align__(16) Particle { float x, y, z; int id; };
out[i] = in[i];                               // one 16-byte load and store
```

## Fix safety
The fix adds `__align__(n)` to the struct's definition when it is in the
file checked. It is unsafe: the struct's size is unchanged, but a struct
that contains it may grow, and a pointer to it that is not aligned to `n`
(into a packed buffer) faults once nvcc relies on the alignment."#,
};

/// The sizes one global instruction moves whole.
const WIDE: [u64; 4] = [2, 4, 8, 16];

/// What the accesses of one source location cost under one launch: the
/// instructions nvcc emits for them (pieces) and their sectors, per
/// warp-level execution.
#[derive(Clone, Copy, Debug)]
struct SiteCost {
    pieces: u32,
    width: u32,
    sectors: f64,
    executions: f64,
}

/// Keyed by (launch, op, span start as in the unedited file), with the
/// access's span and text.
type Sites = BTreeMap<(usize, Op, usize), (SiteCost, Span, String)>;

/// The accesses of `array` in kernel `kernel` by site; `None` when one of
/// them is unknown or its cost is not a global one.
fn site_costs<'a>(
    reports: impl Iterator<Item = &'a AccessReport>,
    kernel: &str,
    array: &str,
    unshift: impl Fn(Span) -> Span,
) -> Option<Sites> {
    let mut out: Sites = BTreeMap::new();
    for r in reports.filter(|r| r.kernel_name == kernel && r.array == array) {
        if r.status == Status::Unknown || r.op == Op::Atomic {
            return None;
        }
        let Some(Cost::Global(g)) = &r.cost else {
            return None;
        };
        let span = unshift(r.span);
        let e = out.entry((r.launch, r.op, span.start)).or_insert((
            SiteCost {
                pieces: 0,
                width: 0,
                sectors: 0.0,
                executions: r.executions,
            },
            span,
            r.text.clone(),
        ));
        e.0.pieces += 1;
        e.0.width = e.0.width.max(r.width);
        e.0.sectors += g.sectors;
    }
    Some(out)
}

/// Instructions and sectors per block of the sites in `keys`.
fn totals(sites: &Sites, keys: &[(usize, Op, usize)]) -> (f64, f64) {
    keys.iter()
        .filter_map(|k| sites.get(k))
        .fold((0.0, 0.0), |(i, s), (c, _, _)| {
            (
                i + f64::from(c.pieces) * c.executions,
                s + c.sectors * c.executions,
            )
        })
}

/// The object's struct, when GM004 may be about it: a global array of a
/// struct defined in a file, 2, 4, 8 or 16 bytes, aligned below its size.
fn candidate(o: &MemObject) -> Option<Span> {
    (o.space == Space::Global && WIDE.contains(&o.elem_size) && o.elem_align < o.elem_size)
        .then_some(o.elem_keyword)
        .flatten()
}

/// The source with `__align__(n)` written after the struct keyword at
/// `kw`, and the options that re-analyse `kernel`'s `array` on it.
fn aligned_analysis(
    ctx: &Context,
    k: &Kernel,
    o: &MemObject,
    kw: Span,
    insert: &str,
) -> Option<FileAnalysis> {
    let mut options = ctx.options.clone();
    options.frontend.only_kernel = Some(k.name.clone());
    options.engine.only_array = Some(o.name.clone());
    let edit = |text: &[u8]| -> Option<Vec<u8>> {
        (text.get(kw.start..kw.end)? == b"struct" || text.get(kw.start..kw.end)? == b"class")
            .then_some(())?;
        let mut t = Vec::with_capacity(text.len() + insert.len());
        t.extend_from_slice(text.get(..kw.end)?);
        t.extend_from_slice(insert.as_bytes());
        t.extend_from_slice(text.get(kw.end..)?);
        Some(t)
    };
    if kw.file == 0 {
        let edited = edit(ctx.source)?;
        options.frontend.reparse = ctx.analysis.parsed.clone().map(|base| Reparse {
            base,
            start: kw.end,
            old_end: kw.end,
            new_end: kw.end + insert.len(),
        });
        Some(analyze(&edited, ctx.model, &options))
    } else {
        let path = ctx.analysis.program.files.get(kw.file as usize - 1)?;
        let h = options
            .frontend
            .headers
            .iter_mut()
            .find(|h| &h.path == path)?;
        h.text = edit(&h.text)?;
        options.frontend.reparse = None;
        Some(analyze(ctx.source, ctx.model, &options))
    }
}

impl Lint for UnderalignedElement {
    fn rule(&self) -> &'static Rule {
        &RULE
    }

    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>) {
        if ctx.options.frontend.language == Language::Rust {
            return; // a Rust struct's alignment is `#[repr(align(n))]`: not offered yet
        }
        let mut budget = FixBudget::default();
        for (ki, k) in ctx.analysis.program.kernels.iter().enumerate() {
            for (oi, o) in k.objects.iter().enumerate() {
                let Some(kw) = candidate(o) else { continue };
                let narrow = k
                    .accesses
                    .iter()
                    .any(|a| a.obj == oi && u64::from(a.width) < o.elem_size);
                if !narrow {
                    continue;
                }
                let mine = || ctx.analysis.reports.iter().filter(|r| r.kernel == ki);
                let known = ctx.known_reports().filter(|r| r.kernel == ki);
                if known.filter(|r| r.array == o.name).count()
                    != mine().filter(|r| r.array == o.name).count()
                {
                    continue;
                }
                let Some(before) = site_costs(mine(), &k.display_name, &o.name, |s| s) else {
                    continue;
                };
                if !budget.take() {
                    return;
                }
                let insert = format!(" __align__({})", o.elem_size);
                let Some(after) = aligned_analysis(ctx, k, o, kw, &insert) else {
                    continue;
                };
                let unshift = |s: Span| shifted_back(s, kw, insert.len());
                let Some(after) =
                    site_costs(after.reports.iter(), &k.display_name, &o.name, unshift)
                else {
                    continue;
                };
                if let Some(d) = finding(ctx, ki, oi, kw, &insert, &before, &after) {
                    out.push(d);
                }
            }
        }
    }
}

/// `s` as it lies in the unedited file, `len` bytes having been written
/// after the keyword `kw`.
fn shifted_back(mut s: Span, kw: Span, len: usize) -> Span {
    if s.file == kw.file && s.start >= kw.end {
        s.start -= len;
        s.end -= len;
    }
    s
}

/// The finding for object `oi` of kernel `ki` under the first launch where
/// the aligned struct takes fewer instructions and no more sectors.
fn finding(
    ctx: &Context,
    ki: usize,
    oi: usize,
    kw: Span,
    insert: &str,
    before: &Sites,
    after: &Sites,
) -> Option<Diagnostic> {
    let k = &ctx.analysis.program.kernels[ki];
    let o = &k.objects[oi];
    let launches: Vec<usize> = before.keys().map(|(l, _, _)| *l).collect();
    let copies = copies(ctx, ki);
    for li in launches {
        // The sites the alignment changes: moved in fewer, wider
        // instructions, or merged into another site's.
        let changed: Vec<(usize, Op, usize)> = before
            .iter()
            .filter(|(key, (b, span, _))| {
                key.0 == li
                    && predictable(&copies, key, b, *span)
                    && after
                        .get(key)
                        .is_none_or(|(a, _, _)| a.pieces < b.pieces || a.width > b.width)
            })
            .map(|(key, _)| *key)
            .collect();
        let Some(primary) = changed.iter().find(|key| after.contains_key(key)) else {
            continue;
        };
        let (ib, sb) = totals(before, &changed);
        let (ia, sa) = totals(after, &changed);
        if ia >= ib - 1e-9 || sa > sb + 1e-9 {
            continue;
        }
        let (b, span, _) = &before[primary];
        let (a, _, _) = &after[primary];
        let r =
            ctx.analysis.reports.iter().find(|r| {
                r.kernel == ki && r.launch == li && r.array == o.name && r.span == *span
            })?;
        let narrowest = changed.iter().map(|key| before[key].0.width).min();
        let per_warp = |i: f64, s: f64| Counts {
            instructions: (i / b.executions.max(1e-9)).round() as u32,
            width: 0,
            sectors: s / b.executions.max(1e-9),
        };
        let was = Counts {
            width: narrowest.unwrap_or(b.width),
            ..per_warp(ib, sb)
        };
        let now = Counts {
            width: a.width,
            ..per_warp(ia, sa)
        };
        // The accesses merged, in source order.
        let mut texts: Vec<String> = Vec::new();
        let mut others = Vec::new();
        let mut all: Vec<&(SiteCost, Span, String)> = changed.iter().map(|k| &before[k]).collect();
        all.sort_by_key(|(_, s, _)| (s.file, s.start));
        for (_, s, t) in all {
            if !texts.contains(t) {
                texts.push(t.clone());
            }
            if s != span {
                others.push(*s);
            }
        }
        return Some(diagnostic(
            ctx,
            (k, o),
            r,
            (kw, insert),
            (was, now),
            (texts, others),
        ));
    }
    None
}

/// Whether nvcc's instructions for a site follow from the struct's
/// alignment alone (measured, `fixtures/groundtruth/align/`): one field
/// (neighbouring fields merge as `nvcc::fuse` says), or either side of an
/// element copied whole (`out[i] = in[i]`: the aggregate copy moves every
/// byte). A whole element loaded into a variable (`P v = in[i];`) is not:
/// nvcc loads only the fields used later. Nor is a store of a variable
/// (`out[i] = v;` after `v.x += 1`): nvcc stores it field by field, and
/// aligned to 16 bytes a 16-byte struct of four fields was still three
/// stores.
fn predictable(
    copies: &[(usize, Span)],
    key: &(usize, Op, usize),
    c: &SiteCost,
    span: Span,
) -> bool {
    c.pieces == 1
        || copies.iter().any(|(l, at)| {
            *l == key.0 && at.file == span.file && at.start <= span.start && span.end <= at.end
        })
}

/// The element copies of kernel `ki`, by launch: a store in pieces whose
/// span holds a load in pieces (`out[i] = in[i]`).
fn copies(ctx: &Context, ki: usize) -> Vec<(usize, Span)> {
    let mut seen: Vec<(usize, Op, Span, u32)> = Vec::new();
    for r in ctx.analysis.reports.iter() {
        if r.kernel != ki || r.space != Space::Global || r.op == Op::Atomic {
            continue;
        }
        match seen
            .iter_mut()
            .find(|(l, op, s, _)| *l == r.launch && *op == r.op && *s == r.span)
        {
            Some(e) => e.3 += 1,
            None => seen.push((r.launch, r.op, r.span, 1)),
        }
    }
    let piecewise = |op: Op| seen.iter().filter(move |e| e.1 == op && e.3 > 1);
    piecewise(Op::Store)
        .filter(|(l, _, at, _)| {
            piecewise(Op::Load).any(|(m, _, s, _)| {
                m == l && s.file == at.file && at.start <= s.start && s.end <= at.end
            })
        })
        .map(|(l, _, at, _)| (*l, *at))
        .collect()
}

/// Instructions and sectors per warp of the sites the alignment changes.
struct Counts {
    instructions: u32,
    /// The narrowest piece (before) or the primary access's width (after).
    width: u32,
    sectors: f64,
}

fn plural(n: u32, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn diagnostic(
    ctx: &Context,
    (k, o): (&Kernel, &MemObject),
    r: &AccessReport,
    (kw, insert): (Span, &str),
    (b, a): (Counts, Counts),
    (texts, others): (Vec<String>, Vec<Span>),
) -> Diagnostic {
    let op = match r.op {
        Op::Load => "load",
        _ => "store",
    };
    let ty = o.elem_type.trim_start_matches("struct ").trim();
    let quoted: Vec<String> = texts.iter().map(|t| format!("`{t}`")).collect();
    let message = format!(
        "underaligned element: `{ty}` is {} bytes but {}-byte aligned, so {} run{} as {} of {} \
         bytes ({} sectors per warp); aligned to {} bytes, {} of {} bytes ({} sectors) (kernel \
         `{}`)",
        o.elem_size,
        o.elem_align,
        quoted.join(" and "),
        if quoted.len() == 1 { "s" } else { "" },
        plural(b.instructions, op),
        b.width,
        fmt_num(b.sectors),
        o.elem_size,
        plural(a.instructions, op),
        a.width,
        fmt_num(a.sectors),
        k.display_name,
    );
    let mut notes = vec![format!(
        "{}, block {}x{}x{}; re-checked by analysing the kernel with `{ty}` declared \
         `{}`: its size stays {} bytes, no padding is added",
        ctx.arch,
        r.block[0],
        r.block[1],
        r.block[2],
        insert.trim(),
        o.elem_size
    )];
    if texts.len() > 1 {
        notes.push(format!(
            "aligned, nvcc moves {} with one {op}: the finding is on the access it keeps",
            quoted.join(" and ")
        ));
    }
    notes.extend(assumption_notes(r));
    let mut related = vec![Label::declaration(o)];
    related.extend(others.iter().map(|s| Label {
        span: *s,
        message: format!("also merged once `{ty}` is aligned"),
    }));
    related.push(Label {
        span: kw,
        message: format!("`{ty}` defined here"),
    });
    // A template is declared once for every instance: `struct __align__(8) Vec2`.
    let name = ty.split('<').next().unwrap_or(ty).trim();
    let help = format!(
        "declare the struct `{}` (`struct{insert} {name}`): the same {} bytes, moved by one \
         instruction",
        insert.trim(),
        o.elem_size
    );
    let fix = (kw.file == 0).then(|| Fix {
        applicability: Applicability::Unsafe,
        message: format!("declare `{ty}` `{}`", insert.trim()),
        edits: vec![Edit {
            span: Span {
                start: kw.end,
                end: kw.end,
                line: kw.end_line,
                column: kw.end_column,
                ..kw
            },
            content: insert.to_string(),
        }],
    });
    let mut f = facts(ctx, r);
    f.sectors = Some(b.sectors);
    f.ideal_sectors = Some(a.sectors);
    Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity: Severity::Warning,
        message,
        span: r.span,
        label: format!("{} of {} bytes", plural(b.instructions, op), b.width),
        related,
        notes,
        help: Some(help),
        fix,
        facts: f,
    }
}

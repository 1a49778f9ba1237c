//! GM004 `underaligned-element`.
//!
//! A struct of 2, 4, 8 or 16 bytes whose alignment is smaller than its size
//! cannot be moved by one instruction: nvcc splits each copy of it into
//! pieces no wider than the alignment (measured:
//! `fixtures/groundtruth/align/`). The rule re-analyses the kernel with the
//! struct declared `__align__(size)` (its size unchanged, so no padding) and
//! reports where that leaves fewer instructions and fewer sectors.

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
instructions and fewer sectors; the finding names the instructions and
sectors before and after.

Not reported: a whole element loaded into a variable (`P v = in[i];`:
nvcc loads only the fields used later) or a changed variable stored (it
stores field by field); an element every lane of a warp shares (one sector
per instruction either way); a struct that already asks for an alignment
or packing, a template (one declaration serves instances of other sizes),
a union; and an element whose size is not a power of two (below).

## Why is this bad?
The CUDA programming guide (5.3.2.1.1): global memory instructions move
1, 2, 4, 8 or 16 bytes, and only naturally aligned data compiles to one
instruction. Measured on an H200 (`fixtures/groundtruth/align/`): copying
16-byte, 4-byte-aligned structs ran as 5 loads and 4 stores per element
(80 + 64 sectors per warp) and took 148.2 µs for 16 M elements (Nsight
Compute, `fixtures/groundtruth/align/ncu.txt`); declared `__align__(16)`,
one `LDG.E.128` and one `STG.E.128` (16 + 16 sectors), 126.2 µs. Where the
kernel is bound by DRAM bandwidth alone, the extra instructions can cost no
time (reading the same elements: 83.1 against 82.7 µs; copies of 8-byte
pieces ran at the same speed), but they use issue slots and L1 bandwidth
other work needs.

Elements whose size is not a power of two (a 12-byte `float3`) are not
reported: padding them to 16 bytes moves a third more bytes, and on the
H200 a streaming copy ran 25% slower padded (100.3 against 124.9 µs), while a
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

A copy counts on either side, global or shared memory (`s[t] = in[i]`,
`out[i] = s[j]`: four `LDG.E` became one `LDG.E.128`, measured).

## Fix safety
The fix adds `__align__(n)` to the struct's definition when it is in the
file checked, and is not offered when a struct of the file that holds this
one would grow (the note names it). It is unsafe: the struct's size is unchanged, but a struct
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

/// A site's key: (launch, op, span start as in the unedited file).
type Key = (usize, Op, usize);

/// The sites of one array, with each access's span and text.
type Sites = BTreeMap<Key, (SiteCost, Span, String)>;

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
fn totals(sites: &Sites, keys: &[Key]) -> (f64, f64) {
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
/// struct (not a template's instance: one declaration serves instances of
/// other sizes) defined in a file, 2, 4, 8 or 16 bytes, aligned below its
/// size.
fn candidate(o: &MemObject) -> Option<Span> {
    (o.space == Space::Global
        && WIDE.contains(&o.elem_size)
        && o.elem_align < o.elem_size
        && !o.elem_type.contains('<'))
    .then_some(o.elem_keyword)
    .flatten()
}

/// The text of file `file` of the unit (0: the file checked; else the
/// header the program read).
fn file_text<'a>(ctx: &'a Context, file: u32) -> Option<&'a [u8]> {
    if file == 0 {
        return Some(ctx.source);
    }
    let path = ctx.analysis.program.files.get(file as usize - 1)?;
    let h = ctx
        .options
        .frontend
        .headers
        .iter()
        .find(|h| &h.path == path)?;
    Some(&h.text)
}

/// The definition's head, from after its keyword to its body (`Name`, or
/// nothing for `typedef struct { … } Name`), when it asks for no
/// alignment or packing of its own: adding `__align__` beside one would
/// not do what the re-analysis assumes (nvcc keeps the first).
fn plain_head(text: &[u8], kw: Span) -> Option<String> {
    let rest = text.get(kw.end..)?;
    let end = rest.iter().position(|&b| b == b'{' || b == b';')?;
    let head = String::from_utf8_lossy(&rest[..end]).trim().to_string();
    let own = ["align", "packed", "declspec", "attribute"];
    (!own.iter().any(|w| head.contains(w))).then_some(head)
}

/// `text` with `insert` written after the struct keyword at `kw`.
fn with_insert(text: &[u8], kw: Span, insert: &str) -> Option<Vec<u8>> {
    let word = text.get(kw.start..kw.end)?;
    (word == b"struct" || word == b"class").then_some(())?;
    let mut t = Vec::with_capacity(text.len() + insert.len());
    t.extend_from_slice(text.get(..kw.end)?);
    t.extend_from_slice(insert.as_bytes());
    t.extend_from_slice(text.get(kw.end..)?);
    Some(t)
}

/// The file analysed again with `insert` written after the struct keyword
/// at `kw` (in the file, or in the header the program read): every kernel,
/// so that a struct holding this one shows its new size.
fn aligned_analysis(ctx: &Context, kw: Span, insert: &str) -> Option<FileAnalysis> {
    let mut options = ctx.options.clone();
    if kw.file == 0 {
        let edited = with_insert(ctx.source, kw, insert)?;
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
        h.text = with_insert(&h.text, kw, insert)?;
        options.frontend.reparse = None;
        Some(analyze(ctx.source, ctx.model, &options))
    }
}

/// The element types, other than the struct at `kw`, whose size changes
/// once it is aligned: structs that hold it.
fn grown(ctx: &Context, after: &FileAnalysis, kw: Span) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in &ctx.analysis.program.kernels {
        let Some(a) = after
            .program
            .kernels
            .iter()
            .find(|x| x.display_name == k.display_name)
        else {
            continue;
        };
        for o in k.objects.iter().filter(|o| o.elem_keyword != Some(kw)) {
            let changed = a
                .objects
                .iter()
                .any(|n| n.name == o.name && n.elem_size != o.elem_size);
            let ty = o.elem_type.trim_start_matches("struct ").trim().to_string();
            if changed && !out.contains(&ty) {
                out.push(ty);
            }
        }
    }
    out
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
        for (kw, size, arrays) in candidates(ctx) {
            let Some(head) = file_text(ctx, kw.file).and_then(|t| plain_head(t, kw)) else {
                continue;
            };
            if !budget.take() {
                return;
            }
            let insert = format!(" __align__({size})");
            let Some(after) = aligned_analysis(ctx, kw, &insert) else {
                continue;
            };
            let grows = grown(ctx, &after, kw);
            let change = Change {
                kw,
                insert: &insert,
                head: &head,
                grows: &grows,
            };
            let unshift = |s: Span| shifted_back(s, kw, insert.len());
            for (ki, oi) in arrays {
                let k = &ctx.analysis.program.kernels[ki];
                let o = &k.objects[oi];
                let mine = ctx.analysis.reports.iter().filter(|r| r.kernel == ki);
                let before = site_costs(mine, &k.display_name, &o.name, |s| s);
                let now = site_costs(after.reports.iter(), &k.display_name, &o.name, unshift);
                let (Some(before), Some(now)) = (before, now) else {
                    continue;
                };
                let copies = copies(ctx, ki);
                for op in [Op::Load, Op::Store] {
                    let Some((li, changed)) = best_launch(&copies, op, &before, &now) else {
                        continue;
                    };
                    for cluster in clusters(&changed, &now, op) {
                        let site = Site {
                            li,
                            op,
                            changed: cluster,
                            before: &before,
                            after: &now,
                        };
                        if let Some(d) = diagnostic(ctx, (ki, oi), &change, &site) {
                            out.push(d);
                        }
                    }
                }
            }
        }
    }
}

/// A struct's keyword, its size, and the (kernel, array) pairs holding it.
type Candidate = (Span, u64, Vec<(usize, usize)>);

/// The arrays GM004 may be about, by the struct they hold (its keyword and
/// size): one re-analysis of the file per struct. An array qualifies when
/// some access to it is narrower than its element and none is unknown.
fn candidates(ctx: &Context) -> Vec<Candidate> {
    let mut structs: Vec<Candidate> = Vec::new();
    for (ki, k) in ctx.analysis.program.kernels.iter().enumerate() {
        for (oi, o) in k.objects.iter().enumerate() {
            let Some(kw) = candidate(o) else { continue };
            let narrow = k
                .accesses
                .iter()
                .any(|a| a.obj == oi && u64::from(a.width) < o.elem_size);
            let mine = |r: &&AccessReport| r.kernel == ki && r.array == o.name;
            let all = ctx.analysis.reports.iter().filter(mine).count();
            if !narrow || all != ctx.known_reports().filter(mine).count() {
                continue;
            }
            match structs.iter_mut().find(|(s, _, _)| *s == kw) {
                Some(e) => e.2.push((ki, oi)),
                None => structs.push((kw, o.elem_size, vec![(ki, oi)])),
            }
        }
    }
    structs
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

/// The sites of `op` under launch `li` the alignment changes (moved in
/// fewer, wider instructions, or merged into another site's), when it
/// leaves them fewer instructions and fewer sectors.
fn changed_sites(
    copies: &[(usize, Span)],
    li: usize,
    op: Op,
    before: &Sites,
    after: &Sites,
) -> Option<Vec<Key>> {
    let changed: Vec<Key> = before
        .iter()
        .filter(|(key, (b, span, _))| {
            key.0 == li
                && key.1 == op
                && predictable(copies, key, b, *span)
                && after
                    .get(key)
                    .is_none_or(|(a, _, _)| a.pieces < b.pieces || a.width > b.width)
        })
        .map(|(key, _)| *key)
        .collect();
    changed.iter().find(|key| after.contains_key(key))?;
    let (ib, sb) = totals(before, &changed);
    let (ia, sa) = totals(after, &changed);
    (ia < ib - 1e-9 && sa < sb - 1e-9).then_some(changed)
}

/// The launch where aligning saves the most sectors per warp for `op`, and
/// its changed sites.
fn best_launch(
    copies: &[(usize, Span)],
    op: Op,
    before: &Sites,
    after: &Sites,
) -> Option<(usize, Vec<Key>)> {
    let mut launches: Vec<usize> = before.keys().map(|(l, _, _)| *l).collect();
    launches.dedup();
    let saved = |keys: &[Key]| {
        let per = keys
            .iter()
            .filter_map(|k| before.get(k))
            .map(|(c, _, _)| c.executions)
            .fold(0.0f64, f64::max)
            .max(1e-9);
        (totals(before, keys).1 - totals(after, keys).1) / per
    };
    launches
        .into_iter()
        .filter_map(|li| Some((li, changed_sites(copies, li, op, before, after)?)))
        .fold(
            None,
            |best: Option<(usize, Vec<Key>)>, (li, keys)| match best {
                Some((bl, bk)) if saved(&bk) >= saved(&keys) => Some((bl, bk)),
                _ => Some((li, keys)),
            },
        )
}

/// The changed sites by the access nvcc keeps: each site still there once
/// the struct is aligned, with the sites merged into it (a load merges
/// into the first of its fields, a store into the last: `nvcc::fuse`).
fn clusters(changed: &[Key], after: &Sites, op: Op) -> Vec<Vec<Key>> {
    let mut sorted = changed.to_vec();
    sorted.sort_by_key(|k| k.2);
    let kept: Vec<usize> = (0..sorted.len())
        .filter(|&i| after.contains_key(&sorted[i]))
        .collect();
    let mut out: Vec<Vec<Key>> = kept.iter().map(|&i| vec![sorted[i]]).collect();
    for (i, key) in sorted.iter().enumerate() {
        if after.contains_key(key) {
            continue;
        }
        let before = kept.iter().rposition(|&k| k < i);
        let after_it = kept.iter().position(|&k| k > i);
        let home = match op {
            Op::Store => after_it.or(before),
            _ => before.or(after_it),
        };
        if let Some(h) = home {
            out[h].push(*key);
        }
    }
    out
}

/// Whether nvcc's instructions for a site follow from the struct's
/// alignment alone (measured, `fixtures/groundtruth/align/`): one field
/// (neighbouring fields merge as `nvcc::fuse` says), or either side of an
/// element copied whole (`out[i] = in[i]`: the aggregate copy moves every
/// byte). A whole element loaded into a variable (`P v = in[i];`) is not:
/// nvcc loads only the fields used later. Nor is a store of a variable
/// (`out[i] = v;` after `v.x += 1`): nvcc stores it field by field, and
/// aligned to 16 bytes a 16-byte struct of four fields was still three
/// stores; nor a store of a choice between two loads (`c ? a[i] : b[i]`).
fn predictable(copies: &[(usize, Span)], key: &Key, c: &SiteCost, span: Span) -> bool {
    c.pieces == 1
        || copies.iter().any(|(l, at)| {
            *l == key.0 && at.file == span.file && at.start <= span.start && span.end <= at.end
        })
}

/// The right-hand side of an assignment's text (`out[i] = in[i]`), not of
/// a compound one or a comparison.
fn assigned(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let at = (0..b.len()).find(|&i| {
        b[i] == b'='
            && b.get(i + 1) != Some(&b'=')
            && (i == 0 || !b"=<>!+-*/%&|^".contains(&b[i - 1]))
    })?;
    Some(text[at + 1..].trim().trim_end_matches(';').trim())
}

/// The element copies of kernel `ki`, by launch: a store whose value is a
/// load (`out[i] = in[i]`), one of them in pieces, either side in global or
/// shared memory (a shared array is placed aligned: its side may be whole).
fn copies(ctx: &Context, ki: usize) -> Vec<(usize, Span)> {
    let mut seen: Vec<(&AccessReport, u32)> = Vec::new();
    for r in ctx.analysis.reports.iter() {
        if r.kernel != ki || r.op == Op::Atomic {
            continue;
        }
        match seen
            .iter_mut()
            .find(|(x, _)| x.launch == r.launch && x.op == r.op && x.span == r.span)
        {
            Some(e) => e.1 += 1,
            None => seen.push((r, 1)),
        }
    }
    let mut out = Vec::new();
    for (st, sn) in seen.iter().filter(|(r, _)| r.op == Op::Store) {
        let Some(value) = assigned(&st.text) else {
            continue;
        };
        for (ld, ln) in seen.iter().filter(|(r, _)| r.op == Op::Load) {
            if ld.launch == st.launch && (*sn > 1 || *ln > 1) && ld.text.trim() == value {
                out.push((st.launch, st.span));
                out.push((ld.launch, ld.span));
            }
        }
    }
    out
}

/// Instructions and sectors per warp of the sites the alignment changes.
struct Counts {
    instructions: u32,
    /// The narrowest piece (before) or the primary access's width (after).
    width: u32,
    sectors: f64,
}

/// The edit a finding is about.
struct Change<'a> {
    kw: Span,
    insert: &'a str,
    /// The definition's head (`Name`, or empty for an anonymous typedef).
    head: &'a str,
    /// Structs that hold this one and change size with it.
    grows: &'a [String],
}

/// The sites of one finding.
struct Site<'a> {
    li: usize,
    op: Op,
    changed: Vec<Key>,
    before: &'a Sites,
    after: &'a Sites,
}

fn plural(n: u32, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn sectors(v: f64) -> String {
    if (v - 1.0).abs() < 1e-9 {
        "1 sector".into()
    } else {
        format!("{} sectors", fmt_num(v))
    }
}

/// `a`, `b` and `c`.
fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn diagnostic(
    ctx: &Context,
    (ki, oi): (usize, usize),
    change: &Change,
    site: &Site,
) -> Option<Diagnostic> {
    let k = &ctx.analysis.program.kernels[ki];
    let o = &k.objects[oi];
    let primary = *site
        .changed
        .iter()
        .find(|key| site.after.contains_key(key))?;
    let (b, span, _) = &site.before[&primary];
    let (a, _, _) = &site.after[&primary];
    let r = ctx.analysis.reports.iter().find(|r| {
        r.kernel == ki
            && r.launch == site.li
            && r.op == site.op
            && r.array == o.name
            && r.span == *span
    })?;
    let per_warp = |(i, s): (f64, f64)| {
        (
            (i / b.executions.max(1e-9)).round() as u32,
            s / b.executions.max(1e-9),
        )
    };
    let (ib, sb) = per_warp(totals(site.before, &site.changed));
    let (ia, sa) = per_warp(totals(site.after, &site.changed));
    // Lanes that share one element (a block's parameters read by every
    // thread) touch one sector per instruction: the extra instructions
    // cost issue slots, not bandwidth, and are not reported.
    if ia >= ib || sa >= sb - 1e-9 || sb <= f64::from(ib) + 1e-9 {
        return None;
    }
    let narrowest = site
        .changed
        .iter()
        .map(|key| site.before[key].0.width)
        .min();
    let was = Counts {
        instructions: ib,
        width: narrowest.unwrap_or(b.width),
        sectors: sb,
    };
    let now = Counts {
        instructions: ia,
        width: a.width,
        sectors: sa,
    };
    // The accesses merged, in source order.
    let mut all: Vec<&(SiteCost, Span, String)> =
        site.changed.iter().map(|k| &site.before[k]).collect();
    all.sort_by_key(|(_, s, _)| (s.file, s.start));
    let mut texts: Vec<String> = Vec::new();
    let mut others = Vec::new();
    for (_, s, t) in all {
        let t = format!("`{t}`");
        if !texts.contains(&t) {
            texts.push(t);
        }
        if s != span {
            others.push(*s);
        }
    }
    Some(build(ctx, (k, o), r, change, (was, now), (texts, others)))
}

fn build(
    ctx: &Context,
    (k, o): (&Kernel, &MemObject),
    r: &AccessReport,
    change: &Change,
    (b, a): (Counts, Counts),
    (texts, others): (Vec<String>, Vec<Span>),
) -> Diagnostic {
    let op = match r.op {
        Op::Load => "load",
        _ => "store",
    };
    let ty = o.elem_type.trim_start_matches("struct ").trim();
    let align = change.insert.trim();
    let message = format!(
        "underaligned element: `{ty}` is {} but {}-byte aligned, so {} run{} as {} of {} \
         ({} per warp); aligned to {} bytes, {} of {} ({}) (kernel `{}`)",
        plural(o.elem_size as u32, "byte"),
        o.elem_align,
        listed(&texts),
        if texts.len() == 1 { "s" } else { "" },
        plural(b.instructions, op),
        plural(b.width, "byte"),
        sectors(b.sectors),
        o.elem_size,
        plural(a.instructions, op),
        plural(a.width, "byte"),
        sectors(a.sectors),
        k.display_name,
    );
    let kw_text = file_text(ctx, change.kw.file)
        .and_then(|t| t.get(change.kw.start..change.kw.end))
        .map_or("struct".to_string(), |w| {
            String::from_utf8_lossy(w).into_owned()
        });
    let written = if change.head.is_empty() {
        format!("typedef {kw_text} {align} {{ … }} {ty}")
    } else {
        format!("{kw_text} {align} {}", change.head)
    };
    let mut notes = Vec::new();
    if texts.len() > 1 {
        notes.push(format!(
            "aligned, nvcc moves {} with one {op}: the finding is on the access it keeps",
            listed(&texts)
        ));
    }
    let fixable = change.kw.file == 0 && change.grows.is_empty();
    if change.grows.is_empty() {
        notes.push(format!(
            "{}, block {}x{}x{}; re-checked by analysing the kernel with `{ty}` declared \
             `{align}`: its size stays {}, no padding is added",
            ctx.arch,
            r.block[0],
            r.block[1],
            r.block[2],
            plural(o.elem_size as u32, "byte"),
        ));
    } else {
        let held: Vec<String> = change.grows.iter().map(|g| format!("`{g}`")).collect();
        notes.push(format!(
            "{}, block {}x{}x{}; re-checked by analysing the kernel with `{ty}` declared \
             `{align}`: {}, which hold{} it, then change{} size, so no fix is offered",
            ctx.arch,
            r.block[0],
            r.block[1],
            r.block[2],
            listed(&held),
            if held.len() == 1 { "s" } else { "" },
            if held.len() == 1 { "s" } else { "" },
        ));
    }
    notes.extend(assumption_notes(r));
    let mut related = vec![Label::declaration(o)];
    related.extend(others.iter().map(|s| Label {
        span: *s,
        message: format!("also merged once `{ty}` is aligned"),
    }));
    related.push(Label {
        span: change.kw,
        message: format!("`{ty}` defined here"),
    });
    let help = format!(
        "declare the struct `{align}` (`{written}`): the same {}, moved by one instruction",
        plural(o.elem_size as u32, "byte")
    );
    let kw = change.kw;
    let fix = fixable.then(|| Fix {
        applicability: Applicability::Unsafe,
        message: format!("declare `{ty}` `{align}`"),
        edits: vec![Edit {
            span: Span {
                start: kw.end,
                end: kw.end,
                line: kw.end_line,
                column: kw.end_column,
                ..kw
            },
            content: change.insert.to_string(),
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
        label: format!(
            "{} of {}",
            plural(b.instructions, op),
            plural(b.width, "byte")
        ),
        related,
        notes,
        help: Some(help),
        fix,
        facts: f,
    }
}

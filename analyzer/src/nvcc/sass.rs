//! What nvcc really emitted, read from its SASS: `nvdisasm -gi` (or `-g`)
//! of a cubin built with `-lineinfo`. [`parse`] reads the listing's memory
//! instructions with their source lines; [`check`] checks each report of
//! the model against them, where a toolkit was there to compile the file
//! (`warplint check --nvcc`, or a listing given with `--sass`).
//!
//! The listing's form (nvcc 13.0, `fixtures/sass/`): a function starts at
//! `.text.<mangled>:`; a block of `//## File "<path>", line <n>` comments,
//! the first with ` inlined at "<path>", line <m>` under `-gi` when the
//! code is inlined, gives the lines of the instructions after it; an
//! instruction is `/*<address>*/ [@P] OPCODE.MODIFIERS operands ;`.
//!
//! What a report becomes (the instruction that runs is the hardware's
//! answer; the model only stands in for it), looking on its line, the
//! lines of the accesses merged into it, an inlined access's call and a
//! hoisted load's loop:
//! - the instructions of its space and operation there have its width:
//!   it is verified ([`SassCheck`]); found only on the line of an access
//!   merged into it, it is counted there ([`SassCheck::counted_at`]);
//!   for an access in a loop with none on its lines, the instructions of
//!   its kind and width on the loop's lines no other access claims are
//!   its unrolled copies, counted on each of their lines
//!   ([`SassCheck::in_loop`]);
//! - they have another width (nvcc merged or split what the model did
//!   not): it is costed again as that instruction
//!   ([`SassCheck::modelled`]), or, in a kernel lowered with a
//!   representative type, becomes `unknown`
//!   ([`crate::finding::UnknownReason::SassWidth`]);
//! - there is none (nvcc merged it into a neighbour on another line,
//!   reused a value, or proved it dead): the report is dropped and the
//!   access is listed in `Kernel::removed` ([`RemovedWhy::NotInSass`]);
//!   a hoisted load not found is left as the model says.
//!
//! A kernel the listing lacks, an atomic, a constant access, and an
//! instruction whose width the opcode does not say (`LDSM`, `LDGSTS`)
//! are left as the model says.

use crate::ir::{Kernel, Op, Program, Removed, RemovedWhy, Space, Span};
use crate::symbolic::{AccessReport, Status};

/// A source line: a file of the listing (index into [`Listing::files`])
/// and its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Loc {
    pub file: usize,
    pub line: u32,
}

/// One memory instruction of a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Insn {
    /// The line the line table gives it (the innermost when inlined).
    pub at: Loc,
    /// The calls it was inlined through, innermost first (`-gi` only).
    pub inlined_at: Vec<Loc>,
    /// The opcode with its modifiers (`LDS.64`, `LDG.E.128.CONSTANT`).
    pub opcode: String,
    /// `None`: a generic `LD`/`ST`, whose space the hardware decides.
    pub space: Option<Space>,
    pub op: Op,
    /// Bytes per lane; `None` where the opcode does not say it as a
    /// plain access (`LDSM`, `LDGSTS`, atomics).
    pub width: Option<u32>,
}

/// One function of the listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub mangled: String,
    /// The unqualified name the mangled name gives (`_ZN2ns2nkEPdi`: `nk`).
    pub name: String,
    pub insns: Vec<Insn>,
}

/// A parsed SASS listing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    pub files: Vec<String>,
    pub functions: Vec<Function>,
}

/// A listing ready to check a translation unit against: which of its
/// files is which file of the unit.
#[derive(Clone, Debug, Default)]
pub struct Sass {
    pub listing: Listing,
    /// Per [`Listing::files`] entry, the `Span::file` it is (0: the file
    /// analysed; `n`: its header `n - 1`), `None` for another file.
    pub file_ids: Vec<Option<u32>>,
    /// Which compiler built it, for the wording (`nvcc 13.0`); `None`
    /// when the listing was given.
    pub compiler: Option<String>,
}

/// What the SASS says of one report ([`AccessReport::sass`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SassCheck {
    /// [`Sass::compiler`].
    pub compiler: Option<String>,
    /// The instruction that runs the access (one of them, the widest).
    pub opcode: String,
    /// Its width in bytes.
    pub width: u32,
    /// The width the model had, where the instruction's differs: the cost
    /// is then that of the instruction (the model's lane addresses, each
    /// aligned down to its width), not of the model's access.
    pub modelled: Option<u32>,
    /// Where the listing has the instruction, when not on the access's
    /// own line: the access merged into it whose line nvcc gave the
    /// instruction (a conditional overwrite's select store on the first
    /// store's line, `overwrite2.cu`). Nsight Compute counts it there.
    pub counted_at: Option<Span>,
    /// Where `counted_at` is not the line of a merged access but one of
    /// the lines of the access's loop the listing has the instruction on
    /// instead (nvcc unrolled the loop and its line table gives the
    /// copies the loop header's or a neighbouring statement's line:
    /// `forward_branches.cu`, `overwrite.cu`): every such line, in order,
    /// `counted_at` the first.
    pub in_loop: Vec<Span>,
}

/// The memory instructions of a listing. Lines it does not understand are
/// skipped: a listing of another form gives no instructions, never an
/// error.
pub fn parse(text: &str) -> Listing {
    let mut listing = Listing::default();
    let mut here: Option<Loc> = None;
    let mut chain: Vec<Loc> = Vec::new();
    // Whether the last line read was a `//##` line (a new block starts
    // after an instruction).
    let mut in_block = false;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix("//##") {
            let locs = locations(rest, &mut listing.files);
            // A block's first line names the innermost line and the calls
            // it is inlined at; the lines after it repeat those calls. A
            // block of plain lines (no inlining) means its last.
            if !in_block || chain.is_empty() {
                here = locs.first().copied();
                chain = locs.get(1..).unwrap_or_default().to_vec();
                in_block = true;
            } else {
                for l in locs {
                    if Some(l) != here && !chain.contains(&l) {
                        chain.push(l);
                    }
                }
            }
            continue;
        }
        in_block = false;
        if let Some(name) = function_start(line) {
            listing.functions.push(Function {
                name: base_name(name).unwrap_or_else(|| name.to_string()),
                mangled: name.to_string(),
                insns: Vec::new(),
            });
            here = None;
            chain.clear();
            continue;
        }
        let (Some(f), Some(at)) = (listing.functions.last_mut(), here) else {
            continue;
        };
        if let Some(opcode) = instruction_opcode(line) {
            if let Some((space, op, width)) = classify(opcode) {
                f.insns.push(Insn {
                    at,
                    inlined_at: chain.clone(),
                    opcode: opcode.to_string(),
                    space,
                    op,
                    width,
                });
            }
        }
    }
    listing
}

/// `.text.<mangled>:` starts a function.
fn function_start(line: &str) -> Option<&str> {
    let name = line.strip_prefix(".text.")?.strip_suffix(':')?;
    (!name.is_empty() && !name.contains(char::is_whitespace)).then_some(name)
}

/// The `File "<path>", line <n>` locations of a `//##` line, in order.
fn locations(mut rest: &str, files: &mut Vec<String>) -> Vec<Loc> {
    let mut out = Vec::new();
    while let Some(q) = rest.find('"') {
        let after = &rest[q + 1..];
        let Some(end) = after.find('"') else { break };
        let path = &after[..end];
        let tail = after[end + 1..].trim_start();
        let Some(num) = tail.strip_prefix(", line") else {
            rest = &after[end + 1..];
            continue;
        };
        let num = num.trim_start();
        let digits: &str = &num[..num.find(|c: char| !c.is_ascii_digit()).unwrap_or(num.len())];
        if let Ok(line) = digits.parse::<u32>() {
            let file = match files.iter().position(|f| f == path) {
                Some(i) => i,
                None => {
                    files.push(path.to_string());
                    files.len() - 1
                }
            };
            out.push(Loc { file, line });
        }
        rest = &num[digits.len()..];
    }
    out
}

/// The opening brace of a dual-issued pair of instructions (older
/// architectures' listings), spelled by its code point.
const PAIR_OPEN: char = '\u{7b}';

/// The opcode with its modifiers of an instruction line
/// (`/*0130*/ @!P0 STS.64 [R0], R4 ;`: `STS.64`).
fn instruction_opcode(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("/*")?;
    let close = rest.find("*/")?;
    if !rest[..close].chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let mut words = rest[close + 2..]
        .trim_start()
        .trim_start_matches(PAIR_OPEN)
        .split_whitespace();
    let mut w = words.next()?;
    if w.starts_with('@') {
        w = words.next()?;
    }
    let w = w.trim_end_matches(';');
    w.starts_with(|c: char| c.is_ascii_uppercase()).then_some(w)
}

/// The space, operation and width of a memory opcode; `None` for any
/// other instruction (and the constant bank's `LDC`/`ULDC`).
fn classify(opcode: &str) -> Option<(Option<Space>, Op, Option<u32>)> {
    let mut parts = opcode.split('.');
    let base = parts.next()?;
    let mods: Vec<&str> = parts.collect();
    let (space, op) = match base {
        "LDS" => (Some(Space::Shared), Op::Load),
        "STS" => (Some(Space::Shared), Op::Store),
        "LDG" => (Some(Space::Global), Op::Load),
        "STG" => (Some(Space::Global), Op::Store),
        "LDL" => (Some(Space::Local), Op::Load),
        "STL" => (Some(Space::Local), Op::Store),
        "LD" => (None, Op::Load),
        "ST" => (None, Op::Store),
        "ATOMS" => (Some(Space::Shared), Op::Atomic),
        "ATOMG" | "REDG" => (Some(Space::Global), Op::Atomic),
        "ATOM" | "RED" => (None, Op::Atomic),
        // ldmatrix and cp.async: a shape, not a per-lane width.
        "LDSM" | "STSM" => return Some((Some(Space::Shared), op_of(base), None)),
        "LDGSTS" => return Some((Some(Space::Global), Op::Load, None)),
        _ => return None,
    };
    if op == Op::Atomic {
        return Some((space, op, None));
    }
    let mut width = 4;
    for m in &mods {
        match *m {
            "U8" | "S8" => width = 1,
            "U16" | "S16" => width = 2,
            "64" => width = 8,
            "128" => width = 16,
            _ => {}
        }
    }
    Some((space, op, Some(width)))
}

fn op_of(base: &str) -> Op {
    if base.starts_with("ST") {
        Op::Store
    } else {
        Op::Load
    }
}

/// The unqualified name of an Itanium-mangled function name (`_Z6kernelPf`:
/// `kernel`; `_ZN2ns2nkEPdi`: `nk`); `None` for a name not mangled so.
pub fn base_name(mangled: &str) -> Option<String> {
    let rest = mangled.strip_prefix("_Z")?;
    let (nested, mut rest) = match rest.strip_prefix('N') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let mut last = None;
    loop {
        // Qualifiers of a nested name (`K`, `V`, `r`) before the parts.
        rest = rest.trim_start_matches(['K', 'V', 'r']);
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            break;
        }
        let n: usize = rest[..digits].parse().ok()?;
        let id = rest.get(digits..digits + n)?;
        last = Some(id.to_string());
        rest = &rest[digits + n..];
        if !nested {
            break;
        }
        // Template arguments of a nested part: skipped (the base name is
        // the part before them).
        if rest.starts_with('I') || rest.starts_with('E') {
            break;
        }
    }
    last
}

impl Sass {
    /// Whether the listing's location `l` is the line of span `s` (its
    /// file mapped to the unit's numbering).
    fn is_line(&self, l: &Loc, s: &Span) -> bool {
        l.line == s.line && self.file_ids.get(l.file).copied().flatten() == Some(s.file)
    }
}

/// The instructions of a kernel's `functions` of `space` and `op` on the
/// lines of `spans` (an access and those merged into it: nvcc gives a
/// merged instruction one of their lines, not always the model's); or,
/// for an access inlined from a call, those whose inlining passes through
/// the call's line; for one with none on its lines, those of a header the
/// analysis did not read (the toolkit's intrinsics) inlined at them.
fn at_lines<'a>(
    sass: &'a Sass,
    functions: &[&'a Function],
    spans: &[Span],
    call: Option<Span>,
    space: Space,
    op: Op,
) -> Vec<&'a Insn> {
    let is = |l: &Loc, s: &Span| sass.is_line(l, s);
    let insns = || {
        functions
            .iter()
            .flat_map(|f| &f.insns)
            .filter(move |i| i.op == op && i.space.is_none_or(|s| s == space))
    };
    let mut here: Vec<&Insn> = insns()
        .filter(|i| spans.iter().any(|s| is(&i.at, s)))
        .collect();
    // An intrinsic the toolkit's headers define (`__ldg`): its
    // instruction's line is the header's, inlined at the access's line.
    if here.is_empty() && call.is_none() {
        let unanalysed = |l: &Loc| sass.file_ids.get(l.file).copied().flatten().is_none();
        here = insns()
            .filter(|i| unanalysed(&i.at))
            .filter(|i| {
                i.inlined_at
                    .last()
                    .is_some_and(|l| spans.iter().any(|s| is(l, s)))
            })
            .collect();
    }
    match call {
        Some(c) if here.is_empty() => insns()
            .filter(|i| i.inlined_at.iter().any(|l| is(l, &c)) || is(&i.at, &c))
            .collect(),
        _ => here,
    }
}

/// What the SASS says of one report.
enum Verdict {
    Agrees(SassCheck),
    Width(SassCheck),
    Absent,
}

/// `merged`: the spans of the accesses the model merged into `r`.
fn verdict(
    sass: &Sass,
    functions: &[&Function],
    k: &Kernel,
    r: &AccessReport,
    merged: &[Span],
) -> Option<Verdict> {
    if !matches!(r.space, Space::Shared | Space::Global | Space::Local)
        || !matches!(r.op, Op::Load | Op::Store)
    {
        return None;
    }
    // A file the listing does not hold (another unit's listing, a header
    // nvcc read elsewhere): nothing to say.
    if !sass.file_ids.contains(&Some(r.span.file)) {
        return None;
    }
    let call = r.inlined_at.as_ref().map(|i| i.call);
    // A hoisted load runs on the line it is counted on (the loop's, or
    // the kernel's entry): not finding it says nothing.
    let spans: Vec<Span> = std::iter::once(r.span)
        .chain(merged.iter().copied())
        .chain(r.hoisted.map(|h| h.counted))
        .collect();
    let mut insns = at_lines(sass, functions, &spans, call, r.space, r.op);
    let mut in_loop = Vec::new();
    if insns.is_empty() && call.is_none() && r.hoisted.is_none() {
        (insns, in_loop) = loop_copies(sass, functions, k, r);
    }
    if insns.is_empty() {
        return r.hoisted.is_none().then_some(Verdict::Absent);
    }
    let counted_at = in_loop
        .first()
        .copied()
        .or_else(|| counted_elsewhere(sass, &insns, r, merged));
    let check = |i: &Insn| SassCheck {
        compiler: sass.compiler.clone(),
        opcode: i.opcode.clone(),
        width: i.width.unwrap_or(r.width),
        modelled: None,
        counted_at,
        in_loop: in_loop.clone(),
    };
    if let Some(i) = insns.iter().find(|i| i.width == Some(r.width)) {
        return Some(Verdict::Agrees(check(i)));
    }
    // Instructions whose width the opcode does not say: no verdict.
    let widest = insns
        .iter()
        .filter(|i| i.width.is_some())
        .max_by_key(|i| i.width)?;
    Some(Verdict::Width(check(widest)))
}

/// For an access in a loop with no instruction on its lines: the
/// instructions of its space, operation and width on the loop's lines
/// that no other access of the kernel claims (none of that space and
/// operation is on their line), with a span on each of their lines.
/// nvcc unrolled the loop and gave the copies the header's line or a
/// neighbouring statement's (measured: the select store of
/// `forward_branches.cu`'s `loop_both_branches` on the `for` line and
/// the accumulation's, `overwrite.cu`'s `in_loop` on the `for` line).
fn loop_copies<'a>(
    sass: &'a Sass,
    functions: &[&'a Function],
    k: &Kernel,
    r: &AccessReport,
) -> (Vec<&'a Insn>, Vec<Span>) {
    let none = (Vec::new(), Vec::new());
    let Some(lp) = k
        .accesses
        .get(r.access)
        .and_then(|a| a.loops.last())
        .and_then(|l| k.loops.get(*l))
    else {
        return none;
    };
    let body = lp.span;
    let alike =
        |obj: usize, op: Op| op == r.op && k.objects.get(obj).is_some_and(|o| o.space == r.space);
    // The lines of the kernel's other accesses of that kind, and of the
    // accesses merged into them.
    let claimed = |l: &Loc| {
        let others = k
            .accesses
            .iter()
            .enumerate()
            .any(|(i, a)| i != r.access && alike(a.obj, a.op) && sass.is_line(l, &a.span));
        let merged = k.removed.iter().any(|x| {
            matches!(x.why, RemovedWhy::Merged { into } if into != r.span)
                && alike(x.obj, x.op)
                && sass.is_line(l, &x.span)
        });
        others || merged
    };
    let insns: Vec<&Insn> = functions
        .iter()
        .flat_map(|f| &f.insns)
        .filter(|i| {
            i.op == r.op
                && i.space.is_none_or(|s| s == r.space)
                && i.width == Some(r.width)
                && sass.file_ids.get(i.at.file).copied().flatten() == Some(body.file)
                && (body.line..=body.end_line).contains(&i.at.line)
                && !claimed(&i.at)
        })
        .collect();
    let mut lines: Vec<u32> = insns.iter().map(|i| i.at.line).collect();
    lines.sort_unstable();
    lines.dedup();
    let span_on = |line: u32| {
        let known = k
            .accesses
            .iter()
            .map(|a| a.span)
            .chain(k.removed.iter().map(|x| x.span))
            .chain(std::iter::once(body))
            .filter(|s| s.file == body.file && s.line == line)
            .min_by_key(|s| s.column);
        known.unwrap_or(Span {
            line,
            column: 1,
            end_line: line,
            end_column: 1,
            ..body
        })
    };
    (insns, lines.into_iter().map(span_on).collect())
}

/// The merged access whose line holds the instructions `insns` found for
/// `r`, when none is on `r`'s own line (nor, for an inlined or hoisted
/// access, on the line it is counted on already).
fn counted_elsewhere(
    sass: &Sass,
    insns: &[&Insn],
    r: &AccessReport,
    merged: &[Span],
) -> Option<Span> {
    if r.inlined_at.is_some() || r.hoisted.is_some() {
        return None;
    }
    let on = |i: &Insn, s: &Span| sass.is_line(&i.at, s);
    if insns.iter().any(|i| on(i, &r.span)) {
        return None;
    }
    insns
        .iter()
        .find_map(|i| merged.iter().find(|s| on(i, s)))
        .copied()
}

/// Checks `program`'s `reports` against the listing (see the module doc),
/// costing again, as the instruction, each access nvcc emits with another
/// width than the model's.
pub fn check(
    sass: &Sass,
    program: &mut Program,
    reports: &mut Vec<AccessReport>,
    model: &dyn crate::MemoryModel,
    engine: &crate::EngineOptions,
) {
    let again = apply(sass, program, reports);
    place_locals(sass, program);
    if again.is_empty() {
        return;
    }
    let which: Vec<(usize, usize)> = again.iter().map(|&(k, a, _)| (k, a)).collect();
    let wide = widened(program, &again);
    recosted(
        reports,
        crate::symbolic::analyze_accesses(&wide, model, engine, &which),
    );
}

/// Checks `reports` against the listing (see the module doc): verified
/// reports carry [`AccessReport::sass`], a width the model did not give
/// makes the report `unknown`, and an access with no instruction on its
/// line is removed, with why, from the reports. Returns the accesses
/// (kernel, access, the instruction's width) to cost again as the
/// instruction ([`widened`]); a kernel lowered with a representative type
/// (its reports put together) keeps `unknown`.
fn apply(
    sass: &Sass,
    program: &mut Program,
    reports: &mut Vec<AccessReport>,
) -> Vec<(usize, usize, u32)> {
    let mut again: Vec<(usize, usize, u32)> = Vec::new();
    let mut absent: Vec<(usize, usize)> = Vec::new();
    for r in reports.iter_mut() {
        let Some(k) = program.kernels.get(r.kernel) else {
            continue;
        };
        let functions = functions_of(sass, k);
        if functions.is_empty() {
            continue;
        }
        let merged: Vec<Span> = k
            .removed
            .iter()
            .filter(|x| matches!(x.why, RemovedWhy::Merged { into } if into == r.span))
            .map(|x| x.span)
            .collect();
        match verdict(sass, &functions, k, r, &merged) {
            Some(Verdict::Agrees(c)) => r.sass = Some(c),
            Some(Verdict::Width(c)) => {
                if k.representative.is_none()
                    && !again.iter().any(|x| (x.0, x.1) == (r.kernel, r.access))
                {
                    again.push((r.kernel, r.access, c.width));
                }
                r.unknown_reason = Some(crate::finding::UnknownReason::SassWidth {
                    opcode: c.opcode.clone(),
                    width: c.width,
                    modelled: r.width,
                });
                r.status = Status::Unknown;
                r.cost = None;
                r.worst = None;
                r.sass = Some(c);
            }
            Some(Verdict::Absent) if !absent.contains(&(r.kernel, r.access)) => {
                absent.push((r.kernel, r.access));
            }
            Some(Verdict::Absent) | None => {}
        }
    }
    for &(ki, ai) in &absent {
        let Some(k) = program.kernels.get_mut(ki) else {
            continue;
        };
        let Some(a) = k.accesses.get(ai) else {
            continue;
        };
        k.removed.push(Removed {
            obj: a.obj,
            op: a.op,
            span: a.span,
            text: a.text.clone(),
            why: RemovedWhy::NotInSass {
                compiler: sass.compiler.clone(),
            },
        });
    }
    reports.retain(|r| !absent.contains(&(r.kernel, r.access)));
    again
}

/// The listing's functions of kernel `k` (by its unqualified name: every
/// instantiation's).
fn functions_of<'a>(sass: &'a Sass, k: &crate::ir::Kernel) -> Vec<&'a Function> {
    let name = k.name.rsplit("::").next().unwrap_or(&k.name);
    sass.listing
        .functions
        .iter()
        .filter(|f| f.name == name)
        .collect()
}

/// Each per-thread array where the listing has its kernel: in local
/// memory where it has local instructions (`LDL`, `STL`) on the lines of
/// the array's accesses, of a store and of a load where the array has
/// both (a spill of another value on one line does not decide it); else
/// in registers ([`crate::ir::LocalArray::sass`]). The accesses are the
/// model's, those it kept in registers and those the listing lacks.
fn place_locals(sass: &Sass, program: &mut Program) {
    use crate::ir::SassPlacement;
    for k in &mut program.kernels {
        let functions = functions_of(sass, k);
        if functions.is_empty() {
            continue;
        }
        let local: Vec<&Insn> = functions
            .iter()
            .flat_map(|f| &f.insns)
            .filter(|i| i.space == Some(Space::Local))
            .collect();
        let mut placed = Vec::with_capacity(k.locals.len());
        for l in &k.locals {
            let kept = k.accesses.iter().map(|a| (a.obj, a.op, a.span));
            let removed = k
                .removed
                .iter()
                .filter(|r| matches!(r.why, RemovedWhy::Registers | RemovedWhy::NotInSass { .. }))
                .map(|r| (r.obj, r.op, r.span));
            let mut mine: Vec<(Op, Span)> = kept
                .chain(removed)
                .filter(|(o, _, _)| *o == l.obj)
                .map(|(_, op, s)| (op, s))
                .collect();
            mine.sort_by_key(|(op, s)| (s.line, s.column, *op == Op::Load));
            mine.dedup();
            let on = |s: &Span, op: Op| -> Vec<String> {
                local
                    .iter()
                    .filter(|i| i.op == op && sass.is_line(&i.at, s))
                    .map(|i| i.opcode.clone())
                    .collect()
            };
            let hits: Vec<(Op, Span, Vec<String>)> = mine
                .iter()
                .map(|(op, s)| (*op, *s, on(s, *op)))
                .filter(|(_, _, ops)| !ops.is_empty())
                .collect();
            // Each operation the array has, found on one of its lines.
            let decided = !hits.is_empty()
                && [Op::Load, Op::Store]
                    .into_iter()
                    .filter(|op| mine.iter().any(|m| m.0 == *op))
                    .all(|op| hits.iter().any(|h| h.0 == op));
            let mut sites: Vec<(Span, Vec<String>)> = Vec::new();
            for (_, s, ops) in hits.into_iter().filter(|_| decided) {
                match sites.iter_mut().find(|(x, _)| *x == s) {
                    Some((_, v)) => v.extend(ops),
                    None => sites.push((s, ops)),
                }
            }
            placed.push(SassPlacement {
                compiler: sass.compiler.clone(),
                local: sites,
            });
        }
        for (l, p) in k.locals.iter_mut().zip(placed) {
            l.sass = Some(p);
        }
    }
}

/// `program` with each access of `again` made the instruction the SASS
/// runs for it: `width` bytes per lane, each lane's address aligned down
/// to it (a merged pair's instruction starts at the lower of the two).
fn widened(program: &Program, again: &[(usize, usize, u32)]) -> Program {
    use crate::ir::{BinOp, Expr};
    let mut p = program.clone();
    for &(ki, ai, width) in again {
        if let Some(a) = p.kernels.get_mut(ki).and_then(|k| k.accesses.get_mut(ai)) {
            a.width = width;
            a.offset = Expr::bin(BinOp::And, a.offset.clone(), Expr::konst(-i64::from(width)));
            a.unrolled = 1;
        }
    }
    p
}

/// `reports` with those of `again` replaced by `costed` (their reports
/// as the instruction), each saying what the model had.
fn recosted(reports: &mut [AccessReport], costed: Vec<AccessReport>) {
    for new in costed {
        let Some(old) = reports
            .iter_mut()
            .find(|r| (r.kernel, r.access, r.launch) == (new.kernel, new.access, new.launch))
        else {
            continue;
        };
        let sass = old.sass.take().map(|c| SassCheck {
            modelled: Some(old.width),
            ..c
        });
        *old = AccessReport { sass, ..new };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mangled_names_give_their_base_name() {
        let cases = [
            ("_Z6kernelPf", Some("kernel")),
            ("_ZN2ns2nkEPdi", Some("nk")),
            ("_Z2tkILi64EEvPfPKf", Some("tk")),
            ("_ZN5outer5inner3fooILi4EEEvv", Some("foo")),
            ("_ZN3fooILi4EE3barEv", Some("foo")),
            ("main", None),
            ("_Z", None),
            ("_Z99x", None),
        ];
        for (m, want) in cases {
            assert_eq!(base_name(m).as_deref(), want, "{m}");
        }
    }

    #[test]
    fn opcodes_give_space_operation_and_width() {
        let cases = [
            ("LDS", Some((Some(Space::Shared), Op::Load, Some(4)))),
            ("STS.64", Some((Some(Space::Shared), Op::Store, Some(8)))),
            ("LDS.U.128", Some((Some(Space::Shared), Op::Load, Some(16)))),
            (
                "LDG.E.128.CONSTANT",
                Some((Some(Space::Global), Op::Load, Some(16))),
            ),
            ("STG.E.U16", Some((Some(Space::Global), Op::Store, Some(2)))),
            ("LDS.S8", Some((Some(Space::Shared), Op::Load, Some(1)))),
            ("LD.E.64", Some((None, Op::Load, Some(8)))),
            (
                "ATOMS.POPC.INC.32",
                Some((Some(Space::Shared), Op::Atomic, None)),
            ),
            (
                "REDG.E.ADD.F32.FTZ.RN.STRONG.GPU",
                Some((Some(Space::Global), Op::Atomic, None)),
            ),
            ("LDSM.16.M88.4", Some((Some(Space::Shared), Op::Load, None))),
            ("LDC.64", None),
            ("ULDC", None),
            ("FADD", None),
        ];
        for (o, want) in cases {
            assert_eq!(classify(o), want, "{o}");
        }
    }

    #[test]
    fn a_listing_gives_each_function_its_memory_instructions_and_lines() {
        let text = r#"
//--------------------- .text._Z2tkILi64EEvPfPKf  --------------------------
_Z2tkILi64EEvPfPKf:
.text._Z2tkILi64EEvPfPKf:
	//## File "/a/inl.cu", line 6
        /*0050*/                   LDG.E R4, desc[UR6][R2.64] ;
	//## File "/a/inl.cuh", line 3 inlined at "/a/inl.cu", line 6
	//## File "/a/inl.cu", line 6
        /*0120*/                   FADD R5, R4, R4 ;
        /*0130*/               @!P0 STS.64 [R0], R4 ;
	//## File "/a/inl.cu", line 8
        /*0160*/                   LDS R7, [R7] ;
.L_x_1:
        /*01b0*/                   BRA `(.L_x_1);
"#;
        let l = parse(text);
        assert_eq!(
            l.files,
            vec!["/a/inl.cu".to_string(), "/a/inl.cuh".to_string()]
        );
        assert_eq!(l.functions.len(), 1);
        let f = &l.functions[0];
        assert_eq!(f.name, "tk");
        let got: Vec<(&str, u32, usize, Vec<u32>)> = f
            .insns
            .iter()
            .map(|i| {
                (
                    i.opcode.as_str(),
                    i.at.line,
                    i.at.file,
                    i.inlined_at.iter().map(|l| l.line).collect(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("LDG.E", 6, 0, vec![]),
                ("STS.64", 3, 1, vec![6]),
                ("LDS", 8, 0, vec![]),
            ]
        );
    }

    #[test]
    fn text_that_is_not_a_listing_gives_nothing() {
        for t in [
            "",
            "hello\n/*zz*/ LDS R0 ;",
            "//## File \"x\", line",
            ".text.:\n/*0010*/ LDS",
        ] {
            assert!(
                parse(t).functions.iter().all(|f| f.insns.is_empty()),
                "{t:?}"
            );
        }
    }
}

//! GM001 `uncoalesced-global-access`.

use warplint_analyzer::hardware::WARP;
use warplint_analyzer::ir::{Atom, Builtin, Dim, Space};
use warplint_analyzer::symbolic::{linear, Cost};

use super::{unit_stride_misaligned, waste};
use crate::wording;
use crate::{
    assumption_notes, facts, fmt_num, sites, Context, Diagnostic, Label, Lint, Rule, Severity,
};

pub struct UncoalescedGlobalAccess;

pub static RULE: Rule = Rule {
    code: "GM001",
    name: "uncoalesced-global-access",
    summary: "a global-memory access that touches more 32-byte sectors than its data needs",
    fixable: false,
    doc: r#"## What it does
Flags a global memory access whose warp touches more 32-byte
sectors than the bytes it asks for need, and says which index term spreads
the lanes apart.

## Why is this bad?
Global memory moves whole 32-byte sectors. A warp reading 32 consecutive
floats needs 4 sectors; if neighbouring lanes are 128 bytes apart it needs
32, and 7 of every 8 bytes fetched are wasted bandwidth.

## Example
```cuda
int x = blockIdx.x * 32 + threadIdx.x;
odata[x * width + y] = v;          // threadIdx.x is multiplied by width
```

## Use instead
```cuda
odata[y * width + x] = v;          // threadIdx.x is the fastest-varying index
```
or stage the tile through shared memory (the coalesced transpose), or turn
an array of structures into a structure of arrays. Where each lane already
walks its own run of consecutive elements in a loop (`in[t * 8 + j]`), the
help says to move the run in 8- or 16-byte vectors instead, with the sectors
that takes in the worst warp (only where its lanes are aligned for them).

## Fields of vector elements
`in[i].x` then `in[i].y` are costed as nvcc compiles them: neighbouring
fields of one element read (or written) in straight-line code merge into one
wider access (the four fields of a `float4`: one 128-bit load, no finding),
as measured on the H200. A store to another array between them, a math
function whose code branches (`logf`, `sinf`, `powf`) or a barrier keeps
them apart; another branch, loop or unknown call between them makes the
access `unknown` (whether they merge is the compiler's choice), never a
finding.

## Elements moved whole in pieces
A 12-byte `float3` (or any element whose size is not a power of two) read
or written whole is three 4-byte accesses, each touching the sectors of the
warp's 384 bytes. The help says what the H200 measured
(`fixtures/groundtruth/align/`): the caches serve the three from the same
sectors, so DRAM moves only the data; padding to 16 bytes makes one access
but moved a third more bytes and ran 25% slower on a bandwidth-bound copy,
and a structure of arrays ran no faster. An element of 2, 4, 8 or 16 bytes
moved in pieces for want of alignment is GM004's.

## Options
`[lint.thresholds] global-efficiency-warning` (default 0.5) and
`global-efficiency-error` (default 0.125): the sector efficiency (ideal /
actual) at or below which the rule warns or errs."#,
};

impl Lint for UncoalescedGlobalAccess {
    fn rule(&self) -> &'static Rule {
        &RULE
    }

    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>) {
        let t = ctx.thresholds;
        let dialect =
            crate::wording::dialect::Dialect::of(ctx.options.frontend.language, ctx.source);
        // Local arrays are left out: most are registers once loops unroll.
        let global = ctx.known_reports().filter(|r| r.space == Space::Global);
        for site in sites(ctx, global, waste) {
            let r = site.worst;
            let Some(Cost::Global(g)) = &r.cost else {
                continue;
            };
            if g.sectors <= 0.0 || g.sectors <= g.ideal_sectors + 1e-9 {
                continue;
            }
            let efficiency = g.ideal_sectors / g.sectors;
            if efficiency > t.global_efficiency_warning + 1e-9 {
                continue;
            }
            if let Some(s) = &r.worst {
                if unit_stride_misaligned(ctx.model, &s.lanes, r.width).is_some() {
                    continue; // GM002's
                }
            }
            let severity = if efficiency <= t.global_efficiency_error + 1e-9 {
                Severity::Error
            } else {
                Severity::Warning
            };
            let (k, access, obj) = ctx.site_of(r);
            let elem = obj.elem_size.max(1) as i64;
            // Which term spreads the lanes: the coefficient of threadIdx.x.
            let tx = linear::coefficient(&access.offset, Atom::Builtin(Builtin::ThreadIdx(Dim::X)))
                .and_then(|c| c.as_const());
            let gap = r
                .worst
                .as_ref()
                .and_then(|s| match (s.lanes[0], s.lanes[1]) {
                    (Some(a), Some(b)) => Some(b - a),
                    _ => None,
                });
            let step = tx.filter(|c| *c != 0).or(gap);
            let rows = rows_misaligned(ctx.model, r);
            let cause = match step {
                Some(d) if d % elem == 0 && d / elem != 1 && d != 0 => format!(
                    "{} is multiplied by {} ({} bytes between neighbouring lanes)",
                    dialect.thread_x(),
                    d / elem,
                    d
                ),
                Some(d) if d != r.width as i64 && d != 0 => {
                    format!("neighbouring lanes are {d} bytes apart")
                }
                _ if rows.is_some() => {
                    let (bx, off) = rows.unwrap_or_default();
                    format!(
                        "each row of {bx} lanes starts {off} bytes into a {}-byte sector",
                        ctx.model.sector_bytes()
                    )
                }
                _ => {
                    // Idle lanes: the active ones are spaced out.
                    let active: Vec<i64> = r
                        .worst
                        .as_ref()
                        .map(|s| s.lanes.iter().flatten().copied().collect())
                        .unwrap_or_default();
                    match active.as_slice() {
                        [a, b, ..] if active.len() < WARP => format!(
                            "only {} of the warp's {WARP} lanes are active, {} bytes apart",
                            active.len(),
                            (b - a).abs()
                        ),
                        _ => "the lanes of a warp are spread over many sectors".to_string(),
                    }
                }
            };
            let message = format!(
                "uncoalesced {} of `{}`: {} sectors per request, {} needed ({}% efficiency){}",
                site.ops,
                r.array,
                fmt_num(g.sectors),
                fmt_num(g.ideal_sectors),
                fmt_num(efficiency * 100.0),
                wording::when(&r.assumptions)
            );
            // A field of a wider element that is not a CUDA vector type.
            let aos = obj.elem_size > r.width as u64
                && (obj.elem_type.contains("struct")
                    || !obj.elem_type.ends_with(char::is_numeric)
                    || piece_bytes(k, access) == obj.elem_size);
            let help = if aos {
                aos_help(k, access, obj, site.ops.as_str(), r.width, dialect)
            } else if let Some((bx, _)) = rows {
                format!(
                    "with rows of {bx} lanes, every misaligned row pays a sector more: make the \
                     block 32 or more threads wide so a warp's row shares that sector, or start \
                     each row on a {}-byte boundary",
                    ctx.model.sector_bytes()
                )
            } else if let Some(v) = r.worst.as_ref().and_then(|s| {
                crate::advice::vector_chunk(ctx.model, k, access, s, r.width, dialect)
            }) {
                v
            } else {
                format!(
                    "make {} the fastest-varying index, or stage the data through shared \
                     memory and write it out row by row",
                    dialect.thread_x()
                )
            };
            let mut notes = vec![format!(
                "{}, block {}x{}x{}; allocations are assumed 256-byte aligned",
                ctx.arch, r.block[0], r.block[1], r.block[2]
            )];
            notes.extend(crate::instruction_notes(k, r));
            notes.extend(sibling_note(k, access, r));
            notes.extend(assumption_notes(r));
            notes.extend(site.also_note());
            let mut facts = facts(ctx, r);
            facts.sectors = Some(g.sectors);
            facts.ideal_sectors = Some(g.ideal_sectors);
            facts.lanes = r
                .worst
                .as_ref()
                .map(|s| {
                    (0..WARP as u32)
                        .filter(|l| s.lanes[*l as usize].is_some())
                        .collect()
                })
                .unwrap_or_default();
            out.push(Diagnostic {
                code: RULE.code,
                name: RULE.name,
                severity,
                message,
                span: r.span,
                label: cause,
                related: vec![Label::declaration(obj)],
                notes,
                help: Some(help),
                fix: None,
                facts,
            });
        }
    }
}

/// Where a 2-D block's rows of `block.x` lanes each start the same number
/// of bytes into a sector (oceanFFT's `h[i + 1]` under 8x8 blocks): that
/// number, and the row length.
fn rows_misaligned(
    model: &dyn warplint_analyzer::hardware::MemoryModel,
    r: &warplint_analyzer::AccessReport,
) -> Option<(usize, i64)> {
    let bx = usize::try_from(r.block[0])
        .ok()
        .filter(|b| *b > 1 && *b < WARP)?;
    let s = r.worst.as_ref()?;
    let sector = i64::from(model.sector_bytes());
    let starts: Vec<i64> = (0..WARP)
        .step_by(bx)
        .filter_map(|row| (row..(row + bx).min(WARP)).find_map(|l| s.lanes[l]))
        .map(|o| o.rem_euclid(sector))
        .collect();
    let first = *starts.first()?;
    (starts.len() > 1 && first != 0 && starts.iter().all(|m| *m == first)).then_some((bx, first))
}

/// The bytes the source access `access` moves, over the pieces the front
/// end split it into (one access per piece, same span and operation, from
/// the same inlined call): a whole element moved in pieces sums to its size.
fn piece_bytes(k: &warplint_analyzer::ir::Kernel, access: &warplint_analyzer::ir::Access) -> u64 {
    k.accesses
        .iter()
        .filter(|x| {
            x.obj == access.obj
                && x.span == access.span
                && x.op == access.op
                && x.inlined_at.as_ref().map(|i| i.call)
                    == access.inlined_at.as_ref().map(|i| i.call)
        })
        .map(|x| u64::from(x.width))
        .sum()
}

/// The help for a lane that moves part of a wider element: align a whole
/// element moved in pieces (for want of alignment), else split the fields
/// into arrays.
fn aos_help(
    k: &warplint_analyzer::ir::Kernel,
    access: &warplint_analyzer::ir::Access,
    obj: &warplint_analyzer::ir::MemObject,
    ops: &str,
    width: u32,
    dialect: crate::wording::dialect::Dialect,
) -> String {
    let verb = match ops {
        "load" => "reads",
        "store" => "writes",
        _ => "reads and writes",
    };
    // A whole element moved in pieces narrower than it, for
    // want of alignment (`struct { double lo, hi; }` is two
    // 8-byte accesses): aligned to its size, it is one.
    let pieces = piece_bytes(k, access);
    let whole = pieces == obj.elem_size
        && matches!(obj.elem_size, 8 | 16)
        && obj.elem_align < obj.elem_size;
    if pieces == obj.elem_size && !obj.elem_size.is_power_of_two() && obj.elem_size < 16 {
        // A 12-byte `float3` or struct: measured, padding it does not pay.
        let padded = obj.elem_size.next_power_of_two();
        let (op, cache) = match ops {
            "load" => ("loads", "L1 serves from the same sectors"),
            "store" => ("stores", "L2 merges into the same sectors"),
            _ => ("accesses", "the caches serve from the same sectors"),
        };
        return format!(
            "each lane {verb} its {}-byte element in {} {}-byte {op}, which {cache} (DRAM \
             moves only the data); padding it to {padded} bytes ({}) \
             makes one access but moves {}% more bytes: on the H200 a bandwidth-bound copy \
             ran 25% slower padded and a structure of arrays no faster, so change the layout \
             only where instructions, not bandwidth, limit the kernel",
            obj.elem_size,
            obj.elem_size / u64::from(width.max(1)),
            width,
            dialect.align(padded),
            (padded - obj.elem_size) * 100 / obj.elem_size,
        );
    }
    if whole {
        format!(
            "each lane {verb} its {}-byte element in {}-byte pieces, as its alignment \
             is {} bytes: declare the type {} so that {} moves each \
             element in one {}-byte access, or store the fields as separate arrays \
             (structure of arrays)",
            obj.elem_size,
            width,
            obj.elem_align,
            dialect.align(obj.elem_size),
            dialect.compiler(),
            obj.elem_size
        )
    } else {
        format!(
            "each lane {verb} {} of a {}-byte element: store the fields as separate \
             arrays (structure of arrays)",
            width, obj.elem_size
        )
    }
}

/// The constant byte distance `b - a` between two offsets of kernel `k`
/// (`x[2 i + 1]` against `x[2 i]`: 4): the same at eight draws of every
/// value they read (thread, block, launch, parameters, loop variables);
/// `None` where it differs, or reads something unknown.
fn constant_distance(
    k: &warplint_analyzer::ir::Kernel,
    a: &warplint_analyzer::ir::Expr,
    b: &warplint_analyzer::ir::Expr,
) -> Option<i64> {
    use warplint_analyzer::symbolic::eval::{eval, LaneEnv, Reads};
    let diff = warplint_analyzer::ir::Expr::minus(b.clone(), a.clone());
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |m: i64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m as u64) as i64
    };
    let mut seen = None;
    for _ in 0..8 {
        let params: Vec<i64> = k.params.iter().map(|_| next(4096) + 1).collect();
        let assumed = vec![false; params.len()];
        let loops: Vec<Result<i64, _>> = k.loop_vars.iter().map(|_| Ok(next(512))).collect();
        let env = LaneEnv {
            tid: [next(1024), next(64), next(64)],
            bid: [next(4096), next(64), next(64)],
            block: [next(1024) + 1, next(64) + 1, next(64) + 1],
            grid: [next(4096) + 1, next(64) + 1, next(64) + 1],
            params: &params,
            params_assumed: &assumed,
            grid_assumed: false,
            loop_vals: &loops,
            data: None,
        };
        let d = eval(&diff, &env, &mut Reads::default()).ok()?;
        if seen.is_some_and(|s| s != d) {
            return None;
        }
        seen = Some(d);
    }
    seen
}

/// Where the same thread's access of the same kind, in the same iteration
/// and under the same conditions, moves bytes of the sectors this one
/// spreads over (`x[2 i]` and `x[2 i + 1]`, each a request of 8 sectors
/// for 4 of data): L1 and L2 serve both from those sectors, so the waste
/// is in requests, not in the bytes moved from DRAM. A note naming it.
fn sibling_note(
    k: &warplint_analyzer::ir::Kernel,
    access: &warplint_analyzer::ir::Access,
    r: &warplint_analyzer::AccessReport,
) -> Option<String> {
    let lanes: Vec<i64> = r.worst.as_ref()?.lanes.iter().flatten().copied().collect();
    let stride = match lanes.as_slice() {
        [a, b, ..] => (b - a).abs(),
        _ => return None,
    };
    let same_guards = |x: &warplint_analyzer::ir::Access| {
        x.guards.len() == access.guards.len()
            && x.guards
                .iter()
                .zip(&access.guards)
                .all(|(g, h)| g.expect == h.expect && g.cond.same(&h.cond))
    };
    let sibling = k.accesses.iter().find(|x| {
        // Another access, not another piece of this one (the element
        // help says those).
        x.span != access.span
            && x.obj == access.obj
            && x.op == access.op
            && x.loops == access.loops
            && x.region == access.region
            && x.unknown.is_none()
            && same_guards(x)
            && constant_distance(k, &access.offset, &x.offset)
                .is_some_and(|d| d != 0 && d.abs() < stride)
    })?;
    let verb = if access.op == warplint_analyzer::ir::Op::Store {
        "writes"
    } else {
        "reads"
    };
    Some(format!(
        "the same thread's `{}` (line {}) {verb} the bytes beside these, in the same sectors: L1 \
         and L2 serve both, so the waste is in requests to them, not in the data moved from DRAM",
        sibling.text, sibling.span.line
    ))
}

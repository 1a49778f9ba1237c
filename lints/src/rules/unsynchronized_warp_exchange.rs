//! SY002 `unsynchronized-warp-exchange`.

use warplint_analyzer::finding::Assumption;
use warplint_analyzer::ir::Op;
use warplint_analyzer::symbolic::{Exchange, RaceReport};
use warplint_analyzer::Status;

use crate::wording;
use crate::{Context, Diagnostic, Label, Lint, Rule, Severity};

pub struct UnsynchronizedWarpExchange;

pub static RULE: Rule = Rule {
    code: "SY002",
    name: "unsynchronized-warp-exchange",
    summary: "lanes of one warp passing data through memory with no __syncwarp() between the write and the other lane's access (compute capability 7.0+)",
    fixable: false,
    doc: r#"## What it does
Flags two accesses to one shared or global array, at least one a store,
in the same iteration of the same loops with nothing between them that
synchronises the warp (`__syncwarp()`, `__syncthreads()`, a warp `*_sync`
intrinsic such as `__shfl_xor_sync`, a group's `sync()` or collective, a
fence, a call warplint cannot see), where a lane of a warp touches bytes
another lane of the same warp stores: the classic last-warp reduction
written without `__syncwarp()` (`if (tid < 32) { s[tid] += s[tid + 16];
s[tid] += s[tid + 8]; … }`). Reported for compute capability 7.0 and later
only. Not reported: arrays accessed through a `volatile` pointer anywhere
in the kernel, atomics, a lane touching only its own bytes, exchanges
between different warps or carried from one loop iteration to the next,
and findings that rest on values no launch gives (the block, a size
parameter): the launch in the file must give them.

## Why is this bad?
Since Volta the lanes of a warp are scheduled independently: a write by one
lane is not known to be visible to another lane, nor done before it reads,
without synchronisation (CUDA programming guide, compute capability 7.x:
"applications that have warp-synchronous codes … will need to insert
`__syncwarp()` … between any steps where data is exchanged between threads
via global or shared memory"). The compiler also assumes no other thread
writes the array between, and keeps values in registers: measured on an
H200 (`fixtures/lints/SY002/MEASURED.md`), the last-warp reduction above
summed 256 ones to 28 in every one of 81,920 blocks; with `__syncwarp()`
(or a `volatile` array) every sum was right.

## Example
```cuda
if (tid < 32) {
    s[tid] += s[tid + 16];   // lane 0 reads what lane 16 wrote …
    s[tid] += s[tid + 8];    // … with nothing in between
}
```

## Use instead
```cuda
if (tid < 32) {
    float v = s[tid];
    for (int k = 16; k > 0; k >>= 1) {
        v += s[tid + k];
        __syncwarp();
        s[tid] = v;
        __syncwarp();
    }
}
```
or reduce in registers with `__shfl_down_sync`.

## Severity
An error: the result is wrong (measured)."#,
};

/// Whether a pair's exchange is one to report: found, and resting on
/// nothing but the launch's own values. Which lanes exist and which bytes
/// they touch depend on the block and on the parameters; where a value no
/// launch gives was tried (the default block, a size parameter), two
/// arrays carved from one buffer at parameter offsets, or a kernel
/// launched with one thread, would be reported wrongly (the corpus has
/// both).
fn reported(r: &RaceReport) -> bool {
    r.status != Status::Unknown
        && r.sample.is_some()
        && r.assumptions.iter().all(|a| {
            matches!(
                a,
                Assumption::LaunchBoundsBlock { .. }
                    | Assumption::Grid { .. }
                    // The run was cut short after the exchange was found.
                    | Assumption::FirstIterations { .. }
                    | Assumption::FirstExecutions { .. }
                    | Assumption::NoExit { .. }
            )
        })
}

impl Lint for UnsynchronizedWarpExchange {
    fn rule(&self) -> &'static Rule {
        &RULE
    }

    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>) {
        if ctx.arch.major < 7 {
            // Lanes of a warp run in lockstep before Volta.
            return;
        }
        // One finding per stretch of code with nothing ordering the lanes
        // (a kernel's array, epoch and loops): its first exchange, a store
        // read by another lane where there is one, the others listed.
        type Key = (String, usize, u32, Vec<usize>);
        let mut groups: Vec<(Key, Vec<&RaceReport>)> = Vec::new();
        for r in ctx.analysis.races.iter().filter(|r| reported(r)) {
            let k = &ctx.analysis.program.kernels[r.kernel];
            let a = &k.accesses[r.first];
            let key = (r.kernel_name.clone(), a.obj, a.epoch, a.loops.clone());
            match groups.iter_mut().find(|(g, _)| *g == key) {
                Some((_, v)) => v.push(r),
                None => groups.push((key, vec![r])),
            }
        }
        for (_, rs) in groups {
            let ops = |r: &RaceReport| {
                let k = &ctx.analysis.program.kernels[r.kernel];
                let (a, b) = (&k.accesses[r.first], &k.accesses[r.second]);
                (
                    a.op != Op::Store || b.op == Op::Store,
                    b.span.start,
                    a.span.start,
                )
            };
            let Some(first) = rs.iter().copied().min_by_key(|r| ops(r)) else {
                continue;
            };
            let Some(x) = first.sample else { continue };
            let mut lines: Vec<(u32, u32)> = rs
                .iter()
                .filter(|r| !std::ptr::eq(**r, first))
                .map(|r| {
                    let k = &ctx.analysis.program.kernels[r.kernel];
                    (
                        k.accesses[r.first].span.line,
                        k.accesses[r.second].span.line,
                    )
                })
                .collect();
            lines.sort_unstable();
            lines.dedup();
            out.push(diagnostic(ctx, first, x, &lines));
        }
    }
}

fn diagnostic(ctx: &Context, r: &RaceReport, x: Exchange, others: &[(u32, u32)]) -> Diagnostic {
    let k = &ctx.analysis.program.kernels[r.kernel];
    let (a, b) = (&k.accesses[r.first], &k.accesses[r.second]);
    let obj = &k.objects[a.obj];
    // The element both touch (the first byte they share), as declared:
    // `s[1][3]` for a 2-D array.
    let shared = x.first_offset.max(x.second_offset);
    let at = |off: i64| match i64::try_from(obj.elem_size) {
        Ok(e) if e > 0 => {
            let mut i = off / e;
            let mut idx: Vec<String> = Vec::new();
            let dims: Vec<i64> = obj.dims.iter().map(|d| d.unwrap_or(0) as i64).collect();
            if dims.len() > 1 && dims[1..].iter().all(|d| *d > 0) {
                for d in dims[1..].iter().rev() {
                    idx.push(format!("[{}]", i % d));
                    i /= d;
                }
            }
            idx.push(format!("[{i}]"));
            idx.reverse();
            format!("`{}{}`", obj.name, idx.concat())
        }
        _ => format!("byte {off} of `{}`", obj.name),
    };
    let verb = |op: Op| if op == Op::Store { "writes" } else { "reads" };
    let (first, second) = (
        format!("lane {} {} {}", x.first_lane, verb(a.op), at(shared)),
        format!("lane {} {} {}", x.second_lane, verb(b.op), at(shared)),
    );
    let lines = if a.span.line == b.span.line {
        format!("on line {}", a.span.line)
    } else {
        format!("on lines {} and {}", a.span.line, b.span.line)
    };
    // A read of what another lane then overwrites (`s[i] += s[i ^ 8]`):
    // the hazard is the write landing first, so no order is stated.
    let (joined, measured) = if a.op == Op::Load {
        (
            format!("{first}, and {second} {lines}, with nothing ordering the two (no `__syncwarp()` between)"),
            "",
        )
    } else {
        (
            format!("{first}, then {second} {lines}, with no `__syncwarp()` between"),
            "; measured on an H200, the last-warp reduction without `__syncwarp()` was wrong in \
             every block",
        )
    };
    let message = format!(
        "unsynchronized warp exchange through `{}`: {joined} (kernel `{}`, {}){}",
        obj.name,
        r.kernel_name,
        ctx.arch,
        wording::when(&r.assumptions)
    );
    let related = vec![Label {
        span: a.span,
        message: format!("{first} here"),
    }];
    let mut notes = vec![format!(
        "{}, block {}x{}x{}, warp {} of block ({}, {}, {}): since compute capability 7.0 the \
         lanes of a warp are scheduled independently, and the compiler may keep `{}` in \
         registers{measured}",
        ctx.arch,
        r.block[0],
        r.block[1],
        r.block[2],
        x.warp,
        x.block[0],
        x.block[1],
        x.block[2],
        obj.name
    )];
    if let (Some(lo), Some(hi)) = (
        others.iter().map(|p| p.0).min(),
        others.iter().map(|p| p.1).max(),
    ) {
        let n = others.len();
        let lines = if lo == hi {
            format!("on line {lo}")
        } else {
            format!("in lines {lo}–{hi}")
        };
        notes.push(format!(
            "`{}` is exchanged so by {} more pair{} of accesses {lines}, with nothing ordering \
             them",
            obj.name,
            n,
            if n == 1 { "" } else { "s" }
        ));
    }
    if let Some(i) = b.inlined_at.as_ref().or(a.inlined_at.as_ref()) {
        notes.push(format!(
            "in `{}`, inlined at line {}",
            i.callee, i.call.line
        ));
    }
    let (mut facts, assumed) =
        super::control_facts(ctx, (&r.kernel_name, r.block), &r.assumptions, r.status);
    notes.extend(assumed);
    facts.array = obj.name.clone();
    facts.lanes = vec![x.first_lane, x.second_lane];
    let between = if a.span.line == b.span.line && a.op == Op::Load && b.op == Op::Store {
        "between the read and the write (split the statement)".to_string()
    } else if a.span.line == b.span.line {
        format!("between the two accesses on line {}", a.span.line)
    } else {
        format!("between line {} and line {}", a.span.line, b.span.line)
    };
    let help = format!(
        "put `__syncwarp()` {between}, and between every later step that exchanges data (the \
         guide's rule for warp-synchronous code on compute capability 7.0+), or pass the \
         values through registers with `__shfl_down_sync`/`__shfl_xor_sync`"
    );
    Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity: Severity::Error,
        message,
        span: b.span,
        label: format!("{second} here"),
        related,
        notes,
        help: Some(help),
        fix: None,
        facts,
    }
}

//! LM001 `local-memory-array`.

use warplint_analyzer::ir::{Kernel, LocalArray, MemObject, Placement, SassPlacement, Space, Span};
use warplint_analyzer::symbolic::Cost;

use crate::{fmt_num, Context, Diagnostic, Facts, Label, Lint, Rule, Severity};

pub struct LocalMemoryArray;

/// What every finding rests on.
const ASSUMED: &str = "nvcc's choice of registers or local memory is as measured on the H200 \
                       (nvcc 13.0); it is not read from the compiled code";

pub static RULE: Rule = Rule {
    code: "LM001",
    name: "local-memory-array",
    summary: "a per-thread array nvcc must put in local memory: stored and loaded at indices known only at run time",
    fixable: false,
    doc: r#"## What it does
Flags a per-thread array (`float a[16];` in a kernel) that nvcc cannot keep
in registers: a store and a load both index it with values known only at run
time (`a[i] = …` in a loop of `n` iterations, then `a[n - 1 - i]`; a
histogram `h[v & 31] += 1`). Its elements then live in local memory, which is
device memory behind the L1 cache: every access is a load or store
instruction with the latency of a global one. The finding names the two
accesses, the loop whose trip count is set at run time, and the sectors
each access moves.

Not reported: arrays whose indices are constants once nvcc unrolls the
loops of constant trip count (`for (int i = 0; i < 8; i++)`, also `i < n
&& i < 16`), and arrays only read (or only written) at run-time indices
(`a[threadIdx.x % 8]`, `a[k]`, `a[idx[t] & 63]`): nvcc keeps those in
registers, reading through a chain of selects; nor arrays of up to 16
elements written only at masked indices (`acc[k % 4] += …`, `ring[head]`
with `head = (head + 1) % 8`), which nvcc writes with predicated moves. An
index whose loop nvcc may or may not unroll (a loop of more than 512
iterations, a `do`/`while`, a counter it does not recognise) leaves the
placement unknown, and so does an array larger than a thread's 255
registers: a 300-float array read in reverse spilled, 128 doubles summed in
order did not (measured); RL001 reports one over the local memory a thread
may have.

## Why is this bad?
The CUDA programming guide (5.3.2.2): local memory has the latency and
bandwidth of global memory. Measured on an H200 (nvcc 13.0, `-Xptxas -v`,
the SASS's `LDL`/`STL` and Nsight Compute; `fixtures/groundtruth/local/`):
the arrays stored and loaded at run-time indices got a stack frame and
`LDL`/`STL` instructions (32 local loads and 16 local stores per warp for
a 16-float array in a 16-iteration loop, 4 sectors each); every other shape
above had none. Local accesses are interleaved per thread: when the lanes
of a warp use one index they move one 32-byte sector per 8 lanes, else
more.

## Example
```cuda
float a[16];
for (int i = 0; i < n; i++) a[i] = in[t + i * 32];
for (int i = 0; i < n; i++) s += a[i] * a[n - 1 - i];
```

## Use instead
Give the loops a constant bound nvcc can unroll, so every index is a
constant in each copy:
```cuda
for (int i = 0; i < 16 && i < n; i++) a[i] = in[t + i * 32];
```
or keep the values in shared memory (`__shared__ float a[16][256]`, indexed
by thread), or restructure so each value is used where it is computed.

## With the compiled code
With `--nvcc` (or a listing given with `--sass`) the SASS decides over the
model: an array is reported where the listing has local loads and stores
(`LDL`, `STL`) on the lines of its accesses (on a store's line and on a
load's, so that a spill of another value on one line does not decide it),
and not where it has none. The finding names the instructions and their
lines, says it was verified against the SASS, and for an array larger
than a thread's 255 registers suggests keeping fewer of its values live at
once. All 67 measured kernels of `fixtures/groundtruth/local/` agree with
their recorded listings (`fixtures/sass/local/`), the misses and unknowns
below included.

## Limits
Measured and not modelled (a review's 50 probes, H200): `#pragma unroll 1`
or `unroll 2` on a constant loop keeps its indices values (local memory);
warplint does not read pragmas and takes the loop as unrolled. An array
passed to a `__noinline__` function or copied with `memcpy` went to local
memory where warplint says registers. These are misses, never findings,
and the SASS finds them. An array of 1- or 8-byte elements read at a
run-time index, and a loop whose condition also reads data (a top-k
insertion, `while (j > 0 && best[j-1] > v)`), leave the placement unknown
without the SASS."#,
};

impl Lint for LocalMemoryArray {
    fn rule(&self) -> &'static Rule {
        &RULE
    }

    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>) {
        // One finding per array of a kernel definition (its instantiations
        // and launches say the same).
        let mut seen: Vec<(Span, String)> = Vec::new();
        for (ki, k) in ctx.analysis.program.kernels.iter().enumerate() {
            for l in &k.locals {
                let Some(o) = k.objects.get(l.obj) else {
                    continue;
                };
                if o.space != Space::Local || seen.contains(&(k.span, o.name.clone())) {
                    continue;
                }
                let d = match (&l.sass, &l.placement) {
                    // The compiled code decides where it has the kernel.
                    (Some(s), _) if s.local.is_empty() => continue,
                    (Some(s), _) => in_sass(ctx, ki, (l, o), s),
                    (
                        None,
                        Placement::Memory {
                            store,
                            load,
                            runtime_loop,
                        },
                    ) => indexed(ctx, ki, o, (*store, *load, *runtime_loop)),
                    // More words than registers does not decide it: a
                    // 300-float array read in reverse spilled, 128 doubles
                    // summed in order and 200 floats in reverse did not
                    // (measured). Not reported.
                    (None, Placement::TooLarge { .. }) => continue,
                    (None, Placement::Registers | Placement::Unknown) => continue,
                };
                seen.push((k.span, o.name.clone()));
                out.push(d);
            }
        }
    }
}

/// The array's shape, as declared: `16 × float, 64 bytes`.
fn shape(o: &MemObject) -> String {
    let elems: u64 = o.dims.iter().map(|d| d.unwrap_or(0)).product();
    format!(
        "{elems} × {}, {} bytes a thread",
        o.elem_type.trim(),
        elems * o.elem_size
    )
}

/// The mean sectors the array's analysed accesses move per warp-level
/// access, and the most, over the kernel's launches.
fn sectors(ctx: &Context, ki: usize, o: &MemObject) -> Option<(f64, u32)> {
    let mut sum = 0.0;
    let mut n = 0.0;
    let mut max = 0;
    for r in ctx
        .known_reports()
        .filter(|r| r.kernel == ki && r.array == o.name && r.space == Space::Local)
    {
        if let Some(Cost::Global(g)) = &r.cost {
            sum += g.sectors * r.executions;
            n += r.executions;
            max = max.max(g.max_sectors);
        }
    }
    (n > 0.0).then(|| (sum / n, max))
}

fn text_at(ctx: &Context, k: &Kernel, s: Span) -> String {
    k.accesses
        .iter()
        .find(|a| a.span == s)
        .map(|a| a.text.clone())
        .or_else(|| {
            (s.file == 0)
                .then(|| ctx.source.get(s.start..s.end))
                .flatten()
                .map(|b| String::from_utf8_lossy(b).into_owned())
        })
        .unwrap_or_default()
}

fn indexed(
    ctx: &Context,
    ki: usize,
    o: &MemObject,
    (store, load, runtime_loop): (Span, Span, Option<Span>),
) -> Diagnostic {
    let k = &ctx.analysis.program.kernels[ki];
    let all_known = ctx
        .analysis
        .reports
        .iter()
        .filter(|r| r.kernel == ki && r.array == o.name)
        .all(|r| r.status != warplint_analyzer::Status::Unknown);
    let traffic = match sectors(ctx, ki, o).filter(|_| all_known) {
        Some((mean, max)) if (mean - f64::from(max)).abs() < 1e-9 => {
            format!(
                "; each access moves {max} sector{} per warp",
                if max == 1 { "" } else { "s" }
            )
        }
        Some((mean, max)) => format!(
            "; each access moves {} sectors per warp on average, {max} at most",
            fmt_num(mean)
        ),
        None => String::new(),
    };
    let why = match runtime_loop {
        Some(l) => format!(
            " (the loop on line {} runs a number of times set at run time, so nvcc cannot \
             unroll it)",
            l.line
        ),
        None => String::new(),
    };
    let accesses = if store == load {
        format!(
            "`{}` (line {}) reads and writes it at an index",
            text_at(ctx, k, store),
            store.line
        )
    } else {
        format!(
            "`{}` (line {}) and `{}` (line {}) index it with values",
            text_at(ctx, k, store),
            store.line,
            text_at(ctx, k, load),
            load.line
        )
    };
    let message = format!(
        "per-thread array `{}` ({}) is in local memory: {accesses} known only at run \
         time{why}{traffic} (kernel `{}`)",
        o.name,
        shape(o),
        k.display_name
    );
    let elems: u64 = o.dims.iter().map(|d| d.unwrap_or(0)).product();
    let help = match (data_help(k, o), runtime_loop) {
        (Some(h), _) => h,
        (None, Some(_)) => bound_help(o, elems),
        (None, None) => format!(
            "index `{}` with constants (a loop of constant trip count, unrolled), or keep the \
             values in shared memory",
            o.name
        ),
    };
    let related = vec![
        Label::declaration(o),
        Label {
            span: load,
            message: "loaded at a run-time index".into(),
        },
    ];
    let at = (store, "stored at a run-time index");
    diagnostic(ctx, (k, o), at, (message, help), related)
}

/// An access to the array whose index depends on data: a loaded value
/// (`h[v & 31]`), or the variable of a loop whose condition reads the
/// array itself (an insertion sort's `while (j >= 0 && a[j] > v)`; a
/// loop merely bounded by a loaded count is not: a constant bound makes
/// its index a constant); its text and line, and whether it is the loop.
fn data_index(k: &Kernel, o: &MemObject) -> Option<(String, u32, bool)> {
    use warplint_analyzer::finding::Origin;
    use warplint_analyzer::ir::Atom;
    let obj = k.objects.iter().position(|x| std::ptr::eq(x, o))?;
    let loaded = |u: u32, own: bool| {
        k.unknowns.get(u as usize).is_some_and(
            |x| matches!(&x.origin, Origin::Loaded { array } if !own || *array == o.name),
        )
    };
    let data_loop = |v: u32| {
        let lp = k
            .loop_vars
            .get(v as usize)
            .and_then(|x| k.loops.get(x.loop_id));
        lp.is_some_and(|lp| {
            let mut data = false;
            for c in lp.pre_cond.iter().chain(&lp.post_cond) {
                c.visit_atoms(&mut |a| data |= matches!(a, Atom::Unknown(u) if loaded(u, true)));
            }
            data
        })
    };
    k.accesses.iter().filter(|a| a.obj == obj).find_map(|a| {
        let (mut value, mut looped) = (false, false);
        a.offset.visit_atoms(&mut |x| match x {
            Atom::Unknown(u) => value |= loaded(u, false),
            Atom::LoopVar(v) => looped |= data_loop(v),
            _ => {}
        });
        (value || looped).then(|| (a.text.clone(), a.span.line, !value))
    })
}

/// The help for an array indexed by data ([`data_index`]).
fn data_help(k: &Kernel, o: &MemObject) -> Option<String> {
    let (text, line, sorting) = data_index(k, o)?;
    Some(format!(
        "`{text}` (line {line}) indexes `{}` with a value that depends on data, which no loop \
         bound makes a constant: keep the values in shared memory, indexed by thread \
         (`s[i][threadIdx.x]`){}",
        o.name,
        if sorting {
            ", or order them with constant indices (a sorting network of compare-and-swaps)"
        } else {
            ""
        }
    ))
}

/// The help for an array a loop of run-time trip count indexes.
fn bound_help(o: &MemObject, elems: u64) -> String {
    format!(
        "bound the loop by a constant nvcc can unroll (`i < {elems} && i < n`), so every index \
         of `{}` is a constant and it stays in registers; or keep the values in shared memory",
        o.name
    )
}

/// A finding from the SASS: the local instructions on the array's lines.
fn in_sass(
    ctx: &Context,
    ki: usize,
    (l, o): (&LocalArray, &MemObject),
    s: &SassPlacement,
) -> Diagnostic {
    let k = &ctx.analysis.program.kernels[ki];
    let by = crate::wording::sass_by(s.compiler.as_ref());
    // Per line, its opcodes once each, the lines in order.
    let mut lines: Vec<(u32, Vec<String>)> = Vec::new();
    for (at, ops) in &s.local {
        match lines.iter_mut().find(|(l, _)| *l == at.line) {
            Some((_, v)) => v.extend(ops.iter().cloned()),
            None => lines.push((at.line, ops.clone())),
        }
    }
    lines.sort_by_key(|(l, _)| *l);
    const SHOWN: usize = 4;
    let mut sites: Vec<String> = lines
        .iter_mut()
        .take(SHOWN)
        .map(|(line, ops)| {
            ops.sort();
            ops.dedup();
            let ops: Vec<String> = ops.iter().map(|o| format!("`{o}`")).collect();
            format!("{} (line {line})", ops.join("/"))
        })
        .collect();
    if lines.len() > SHOWN {
        sites.push(format!("{} more lines", lines.len() - SHOWN));
    }
    let elems: u64 = o.dims.iter().map(|d| d.unwrap_or(0)).product();
    let (why, help) = match (data_help(k, o), &l.placement) {
        (Some(h), _) => (String::new(), h),
        (None, Placement::TooLarge { words }) => (
            format!(
                "; at {words} words it is larger than the {} registers a thread has",
                warplint_analyzer::nvcc::THREAD_REGISTERS
            ),
            "keep fewer of its values live at once (use each where it is computed, or work in \
             chunks of at most a few dozen), or keep them in shared memory"
                .to_string(),
        ),
        (
            None,
            Placement::Memory {
                runtime_loop: Some(_),
                ..
            },
        ) => (String::new(), bound_help(o, elems)),
        (None, _) => (
            String::new(),
            format!(
                "index `{}` with constants in loops nvcc unrolls whole (no `#pragma unroll 1`, \
                 no call it keeps), or keep the values in shared memory",
                o.name
            ),
        ),
    };
    let message = format!(
        "per-thread array `{}` ({}) is in local memory: {by} loads and stores it there, {}{why} \
         (kernel `{}`)",
        o.name,
        shape(o),
        crate::wording::and_list(&sites),
        k.display_name
    );
    let (first, _) = s.local[0];
    let related = std::iter::once(Label::declaration(o))
        .chain(s.local.iter().skip(1).map(|(at, _)| Label {
            span: *at,
            message: "a local-memory instruction here".into(),
        }))
        .collect();
    let mut d = diagnostic(
        ctx,
        (k, o),
        (first, "a local-memory instruction here"),
        (message, help),
        related,
    );
    let verified = format!("verified against {by}");
    d.notes = vec![format!("{}; {verified}", ctx.arch)];
    d.facts.assumptions = Vec::new();
    d.facts.status = "exact".into();
    d
}

fn diagnostic(
    ctx: &Context,
    (k, o): (&Kernel, &MemObject),
    (span, label): (Span, &str),
    (message, help): (String, String),
    related: Vec<Label>,
) -> Diagnostic {
    let block = k.launches.first().map_or([0; 3], |l| l.block);
    Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity: Severity::Warning,
        message,
        span,
        label: label.into(),
        related,
        notes: vec![format!("{}; assumed: {ASSUMED}", ctx.arch)],
        help: Some(help),
        fix: None,
        facts: Facts {
            kernel: k.display_name.clone(),
            array: o.name.clone(),
            arch: ctx.arch.to_string(),
            block,
            assumptions: vec![ASSUMED.into()],
            status: "assumed".into(),
            ..Facts::default()
        },
    }
}

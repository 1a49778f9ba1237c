//! RL001 `resource-limit`: what the compiler or the launch refuses, from
//! the guide's tables of limits per compute capability (appendix F,
//! "Technical Specifications"): static shared memory per block, local
//! memory per thread, threads and dimensions per block, and a block over
//! the kernel's own `__launch_bounds__`.

use warplint_analyzer::finding::NoteKind;
use warplint_analyzer::ir::{Kernel, LaunchOrigin, MemObject, Space, Span};
use warplint_analyzer::Arch;

use crate::{Context, Diagnostic, Facts, Label, Lint, Rule, Severity};

pub struct ResourceLimit;

pub static RULE: Rule = Rule {
    code: "RL001",
    name: "resource-limit",
    summary:
        "a kernel over the architecture's limits: static shared memory, local memory, block size",
    fixable: false,
    doc: r#"## What it does
Flags what the compiler or the launch refuses on the architecture
checked, before either runs:
- static `__shared__` arrays of one kernel over the static shared memory a
  block may have (16 KB on compute capability 1.x, 48 KB from 2.0);
- local (per-thread) arrays over the local memory a thread may have
  (16 KB on 1.x, 512 KB from 2.0);
- a launch whose block has more threads than a block may have (512 on
  1.x, 1024 from 2.0), or a dimension over its maximum (x and y 512 on
  1.x, 1024 from 2.0; z 64);
- a launch whose block has more threads than the kernel's own
  `__launch_bounds__(N)`.

## Why is this bad?
The kernel does not run. Measured on an H100 with nvcc 13.0
(`fixtures/lints/RL001/MEASURED.md`): 64 KB of static shared memory stops
ptxas ("uses too much shared data (0x10000 bytes, 0xc000 max)"); a
640,000-byte local array compiles, and its launch fails with `invalid
argument`, as do a 2048-thread block and a 512-thread block of a kernel
compiled with `__launch_bounds__(256)`. Only what is proven is reported:
sizes and blocks that are constants (a launch's block, declared array
sizes). Each array is counted once (a `__shared__` array of a device
function inlined at two calls is one variable), and only if an access to it
runs (nvcc drops an array nothing touches); of the local arrays only the
largest counts, as the compiler reuses their storage. A local array just
under 512 KB may still fail (the measured 512 KB one did: the thread's
stack holds more than its arrays); it is not reported.

## Example
```cuda
__global__ void k(float *out) {
    __shared__ float a[64 * 256];   // 64 KB
    ...
}
```

## Use instead
Declare the array `extern __shared__` and size it at the launch, opting in
past 48 KB with `cudaFuncSetAttribute(k,
cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)` (up to the
architecture's per-block maximum), or tile the data so a block needs less;
launch at most the threads a block may have, or raise
`__launch_bounds__`."#,
};

/// The limits of one compute capability (the guide's appendix F tables).
pub(crate) struct Limits {
    static_shared: u64,
    pub(crate) local: u64,
    threads: u64,
    dims: [u64; 3],
}

pub(crate) fn limits(arch: Arch) -> Limits {
    if arch.major < 2 {
        Limits {
            static_shared: 16 << 10,
            local: 16 << 10,
            threads: 512,
            dims: [512, 512, 64],
        }
    } else {
        Limits {
            static_shared: 48 << 10,
            local: 512 << 10,
            threads: 1024,
            dims: [1024, 1024, 64],
        }
    }
}

/// `n` bytes as KB where whole (`48 KB`), else KB to a tenth, or bytes
/// under one KB.
fn kb(n: u64) -> String {
    if n == u64::MAX {
        "more than 2^64 bytes".into()
    } else if n < 1024 {
        format!("{n} bytes")
    } else if n.is_multiple_of(1024) {
        format!("{} KB", n / 1024)
    } else {
        format!("{n} bytes ({:.1} KB)", n as f64 / 1024.0)
    }
}

/// The bytes of an array whose every dimension and element size is known
/// (saturating: a sum of them past `u64` is still over every limit).
fn bytes(o: &MemObject) -> Option<u64> {
    if o.elem_size == 0
        || o.dims.is_empty()
        || o.pointee_of.is_some()
        || o.elem_type.trim_end().ends_with('*')
        || o.decl_text.contains('*')
    {
        return None;
    }
    o.dims
        .iter()
        .try_fold(o.elem_size, |acc, d| Some(acc.saturating_mul((*d)?)))
}

/// The arrays of `space` kernel `k` allocates, each declaration once (a
/// `__shared__` array of a device function inlined at two calls is one
/// variable; a local one's storage is reused between the calls, measured:
/// ptxas gives one frame), and only where an access to it runs under some
/// launch (nvcc drops an array it never touches: `k<false>`'s branch on
/// `BIG` not taken).
fn allocated<'k>(
    ctx: &Context,
    ki: usize,
    k: &'k Kernel,
    space: Space,
) -> Vec<(&'k MemObject, u64)> {
    let mut out: Vec<(&MemObject, u64)> = Vec::new();
    for (oi, o) in k.objects.iter().enumerate() {
        if o.space != space {
            continue;
        }
        let used = ctx.analysis.reports.iter().any(|r| {
            r.kernel == ki
                && r.executions > 0.0
                && k.accesses.get(r.access).is_some_and(|a| a.obj == oi)
        });
        let Some(b) = bytes(o).filter(|_| used) else {
            continue;
        };
        if !out.iter().any(|(x, _)| x.decl == o.decl) {
            out.push((o, b));
        }
    }
    out
}

impl Lint for ResourceLimit {
    fn rule(&self) -> &'static Rule {
        &RULE
    }

    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>) {
        let lim = limits(ctx.arch);
        let mut found: Vec<Diagnostic> = Vec::new();
        for (ki, k) in ctx.analysis.program.kernels.iter().enumerate() {
            memory(ctx, (ki, k), Space::Shared, lim.static_shared, &mut found);
            memory(ctx, (ki, k), Space::Local, lim.local, &mut found);
            blocks(ctx, k, &lim, &mut found);
        }
        // A block too large for the engine to run (over 1024 threads) was
        // left as a note where it is launched.
        for n in &ctx.analysis.program.notes {
            if let NoteKind::BlockTooLarge { block, .. } = n.kind {
                let threads = threads_of(block);
                if threads > lim.threads {
                    found.push(block_error(
                        ctx,
                        "",
                        n.span,
                        block,
                        threads,
                        lim.threads,
                        None,
                    ));
                }
            }
        }
        // One finding per place and message (template instantiations of a
        // kernel share them).
        for d in found {
            if !out
                .iter()
                .any(|o| o.code == d.code && o.span == d.span && o.message == d.message)
            {
                out.push(d);
            }
        }
    }
}

fn facts(ctx: &Context, kernel: &str, block: [u64; 3]) -> Facts {
    Facts {
        kernel: kernel.to_string(),
        arch: ctx.arch.to_string(),
        block,
        status: "exact".into(),
        ..Facts::default()
    }
}

/// Threads in a block (saturating).
fn threads_of(block: [u64; 3]) -> u64 {
    block.iter().fold(1u64, |a, x| a.saturating_mul(*x))
}

/// A count, or what it is past when saturated.
fn count(n: u64) -> String {
    if n == u64::MAX {
        "more than 2^64".into()
    } else {
        n.to_string()
    }
}

/// Static arrays of `space` over `limit` bytes in kernel `k` (its index
/// and itself). Shared arrays all take room at once; of the local ones,
/// the largest is what is proven (the compiler may reuse storage between
/// arrays whose lives do not overlap).
fn memory(
    ctx: &Context,
    (ki, k): (usize, &Kernel),
    space: Space,
    limit: u64,
    out: &mut Vec<Diagnostic>,
) {
    let mut arrays = allocated(ctx, ki, k, space);
    arrays.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.decl.start.cmp(&b.0.decl.start)));
    if space != Space::Shared {
        arrays.truncate(1);
    }
    let total = arrays.iter().fold(0u64, |a, x| a.saturating_add(x.1));
    if total <= limit {
        return;
    }
    let (what, per, fix) = match space {
        Space::Shared => (
            "static shared memory",
            "a block may declare statically",
            "declare the largest array `extern __shared__`, size it at the launch and opt in \
             past 48 KB with `cudaFuncSetAttribute(kernel, \
             cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`, or tile the data so a block \
             needs less",
        ),
        _ => (
            "local memory",
            "a thread may have",
            "keep the per-thread arrays smaller: stage the data through shared or global memory",
        ),
    };
    let list: Vec<String> = arrays
        .iter()
        .map(|(o, b)| format!("`{}` {}", o.name, kb(*b)))
        .collect();
    out.push(Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity: Severity::Error,
        message: format!(
            "{what} of `{}` is {} ({}), over the {} {per} on {}",
            k.display_name,
            kb(total),
            list.join(", "),
            kb(limit),
            ctx.arch
        ),
        span: k.span,
        label: format!("{} of {what}", kb(total)),
        related: arrays
            .iter()
            .map(|(o, b)| Label {
                span: o.decl,
                message: format!("`{}`: {}", o.name, kb(*b)),
            })
            .collect(),
        notes: vec![if space == Space::Shared {
            format!(
                "{}: ptxas stops here (\"uses too much shared data\")",
                ctx.arch
            )
        } else {
            format!(
                "{}: it compiles, and every launch of the kernel fails (`invalid argument`)",
                ctx.arch
            )
        }],
        help: Some(fix.into()),
        fix: None,
        facts: facts(ctx, &k.display_name, [0; 3]),
    });
}

/// Launch sites of `k` whose block is over the architecture's or the
/// kernel's own limit.
fn blocks(ctx: &Context, k: &Kernel, lim: &Limits, out: &mut Vec<Diagnostic>) {
    for l in &k.launches {
        if l.origin != LaunchOrigin::LaunchSite {
            continue;
        }
        let span = l.span.unwrap_or(k.span);
        let at = l
            .elsewhere
            .as_ref()
            .map(|s| format!(" (launched at {}:{})", s.path, s.line))
            .unwrap_or_default();
        let threads = threads_of(l.block);
        let over_dim = l.block.iter().zip(&lim.dims).any(|(b, m)| b > m);
        if threads > lim.threads || over_dim {
            out.push(block_error(
                ctx,
                &k.display_name,
                span,
                l.block,
                threads,
                lim.threads,
                Some(&at),
            ));
        } else if let Some(bound) = k.launch_bounds.filter(|b| threads > *b) {
            out.push(Diagnostic {
                code: RULE.code,
                name: RULE.name,
                severity: Severity::Error,
                message: format!(
                    "launch of `{}` with {} threads per block ({}x{}x{}), over its \
                     `__launch_bounds__({bound})`{at}",
                    k.display_name,
                    count(threads),
                    l.block[0],
                    l.block[1],
                    l.block[2]
                ),
                span,
                label: format!("{threads} threads"),
                related: vec![Label {
                    span: k.span,
                    message: format!("`{}` is compiled for at most {bound}", k.display_name),
                }],
                notes: vec![
                    "the compiler sized the kernel for that many threads: the launch fails \
                     (`invalid argument`) and the kernel does not run"
                        .into(),
                ],
                help: Some(format!(
                    "launch at most {bound} threads per block, or raise `__launch_bounds__` \
                     to {threads}"
                )),
                fix: None,
                facts: facts(ctx, &k.display_name, l.block),
            });
        }
    }
}

fn block_error(
    ctx: &Context,
    kernel: &str,
    span: Span,
    block: [u64; 3],
    threads: u64,
    max: u64,
    at: Option<&str>,
) -> Diagnostic {
    let lim = limits(ctx.arch);
    let which = if threads > max {
        format!(
            "{} threads per block, over the {max} a block may have",
            count(threads)
        )
    } else {
        format!(
            "a block of {}x{}x{}, over the largest dimensions a block may have ({}x{}x{})",
            block[0], block[1], block[2], lim.dims[0], lim.dims[1], lim.dims[2]
        )
    };
    let of = if kernel.is_empty() {
        String::new()
    } else {
        format!(" of `{kernel}`")
    };
    Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity: Severity::Error,
        message: format!(
            "launch{of} with {which} on {}{}",
            ctx.arch,
            at.unwrap_or_default()
        ),
        span,
        label: format!("{}x{}x{}", block[0], block[1], block[2]),
        related: Vec::new(),
        notes: vec!["the launch fails (`invalid argument`) and the kernel does not run".into()],
        help: Some(format!(
            "launch at most {max} threads per block ({}x{}x{} at most per dimension), and \
             more blocks",
            lim.dims[0], lim.dims[1], lim.dims[2]
        )),
        fix: None,
        facts: facts(ctx, kernel, block),
    }
}

//! SY001 `divergent-barrier`.

use warplint_analyzer::symbolic::{BarrierReport, Split};
use warplint_analyzer::Status;

use crate::wording;
use crate::{Context, Diagnostic, Label, Lint, Rule, Severity};

pub struct DivergentBarrier;

pub static RULE: Rule = Rule {
    code: "SY001",
    name: "divergent-barrier",
    summary:
        "a __syncthreads() that some threads of a block reach and others, still running, do not",
    fixable: false,
    doc: r#"## What it does
Flags a block-wide barrier (`__syncthreads()`, `__syncthreads_count/and/or`,
a cooperative group block's `sync()`) that threads of one block reach a
different number of times: inside an `if` whose condition differs between
threads of the block, or inside a loop whose trip count does. It names the
condition (or the loop) and two threads that disagree. A condition that is
the same for the whole block (`blockIdx`, a parameter, a loop counter every
thread shares) is never reported, and neither are threads that returned
from the kernel before the barrier: the barrier waits only for threads that
have not exited.

## Why is this bad?
The CUDA programming guide: "`__syncthreads()` is allowed in conditional
code but only if the conditional evaluates identically across the entire
thread block, otherwise the code execution is likely to hang or produce
unintended side effects." Since compute capability 7.0 the barrier waits
for every thread of the block that has not exited. Measured on an H200
(nvcc 13.0, `fixtures/lints/SY001/MEASURED.md`): the fixtures' kernels do
not hang there, because ptxas predicates the barrier and the threads that
skip it run on and exit, which releases it; but then the barrier holds
nobody back and orders nothing, and every `__syncthreads()` is barrier 0,
so one in an `if` and one in its `else` synchronise with each other. A
thread that skips it and later waits for the others does hang.

## Example
```cuda
if (threadIdx.x < 128) {
    s[threadIdx.x] += s[threadIdx.x + 128];
    __syncthreads();              // threads 128..255 never arrive
}
```

## Use instead
Keep the condition around the work and put the barrier where every thread
of the block reaches it:
```cuda
if (threadIdx.x < 128)
    s[threadIdx.x] += s[threadIdx.x + 128];
__syncthreads();
```
In a loop whose trip count depends on the thread (`for (i = threadIdx.x; i
< n; i += blockDim.x)`), loop to a bound the whole block shares (`n`
rounded up to a multiple of `blockDim.x`) and guard the work inside.

## Conditions computed from data
A condition on a value loaded from memory leaves the barrier unknown (the
data decides), and it is not reported.

## Severity
An error: undefined behaviour, which hangs or lets threads race past the
data the barrier was meant to protect."#,
};

/// "thread (x, y, z)" or "thread x" for a 1-D block.
fn thread(t: [i64; 3], block: [u64; 3]) -> String {
    if block[1] <= 1 && block[2] <= 1 {
        format!("thread {}", t[0])
    } else {
        format!("thread ({}, {}, {})", t[0], t[1], t[2])
    }
}

/// How many times: "once", "twice", "n times", "never".
fn times(n: u64) -> String {
    match n {
        0 => "never".into(),
        1 => "once".into(),
        2 => "twice".into(),
        n => format!("{n} times"),
    }
}

impl Lint for DivergentBarrier {
    fn rule(&self) -> &'static Rule {
        &RULE
    }

    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>) {
        let split = |b: &BarrierReport| -> Option<Split> {
            (b.status != Status::Unknown)
                .then(|| b.split.clone())
                .flatten()
        };
        // One finding per barrier of a kernel: its first launch that splits.
        let mut seen: Vec<(String, warplint_analyzer::ir::Span)> = Vec::new();
        for b in &ctx.analysis.barriers {
            let Some(s) = split(b) else { continue };
            let key = (b.kernel_name.clone(), b.span);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            out.push(diagnostic(ctx, b, &s));
        }
    }
}

fn diagnostic(ctx: &Context, b: &BarrierReport, s: &Split) -> Diagnostic {
    let hi = thread(s.reached.0, b.block);
    let lo = thread(s.missed.0, b.block);
    let block = format!("{}x{}x{}", b.block[0], b.block[1], b.block[2]);
    let how = if s.reached.1 == 1 && s.missed.1 == 0 {
        format!(
            "{} of the {} threads of a block reach it, the other {} do not",
            s.reaching,
            s.threads,
            s.threads - s.reaching
        )
    } else {
        format!(
            "threads of a block reach it different numbers of times: {hi} {}, {lo} {}",
            times(s.reached.1),
            times(s.missed.1)
        )
    };
    let message = format!(
        "divergent barrier `{}`: {how} (kernel `{}`, block {block}){}",
        b.text,
        b.kernel_name,
        wording::when(&b.assumptions)
    );
    let label = format!(
        "{hi} reaches it {}, {lo} {}",
        times(s.reached.1),
        times(s.missed.1)
    );
    let mut related = Vec::new();
    let line = |sp: warplint_analyzer::ir::Span| sp.line;
    let help = match s.site {
        Some(site) => {
            related.push(Label {
                span: site,
                message: format!("{hi} and {lo} part here"),
            });
            format!(
                "keep the condition on line {} around the work only and put `{}` where every \
                 thread of the block reaches it (after the conditional code), or make the \
                 condition the same for the whole block",
                line(site),
                b.text
            )
        }
        None => match s.loop_line {
            Some(l) => format!(
                "threads leave the loop on line {l} after different numbers of iterations: \
                 give every thread of the block the same trip count (loop to a bound the \
                 whole block shares, such as one rounded up to a multiple of `blockDim.x`, \
                 and guard the work inside), so that every thread reaches `{}` as often",
                b.text
            ),
            None => format!(
                "put `{}` where every thread of the block reaches it, outside the code that \
                 only some threads run",
                b.text
            ),
        },
    };
    let mut notes = vec![format!(
        "{}, block {block}: block ({}, {}, {}) is split here; the guide allows \
         a barrier in conditional code only where the condition is the same across the whole \
         block: otherwise it may hang, or, as measured on an H200, release when the threads \
         that skip it exit, ordering none of their memory accesses",
        ctx.arch, s.block[0], s.block[1], s.block[2]
    )];
    if let Some(i) = &b.inlined_at {
        notes.push(format!(
            "in `{}`, inlined at line {}",
            i.callee, i.call.line
        ));
    }
    let (facts, assumed) =
        super::control_facts(ctx, (&b.kernel_name, b.block), &b.assumptions, b.status);
    notes.extend(assumed);
    Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity: Severity::Error,
        message,
        span: b.span,
        label,
        related,
        notes,
        help: Some(help),
        fix: None,
        facts,
    }
}

//! CF001 `divergent-branch`.

use warplint_analyzer::symbolic::{BranchReport, BranchSample};
use warplint_analyzer::Status;

use crate::wording;
use crate::{fmt_num, lane_ranges, Context, Diagnostic, Lint, Rule, Severity};

pub struct DivergentBranch;

/// The share of the warp-level executions reaching a branch that must be
/// split for it to be reported: a bounds check that splits only the warp
/// holding the end of the data is not what the rule is about.
const MIN_DIVERGENT_SHARE: f64 = 0.5;

pub static RULE: Rule = Rule {
    code: "CF001",
    name: "divergent-branch",
    summary: "an if/else whose condition splits the lanes of most warps reaching it, with work on both sides",
    fixable: false,
    doc: r#"## What it does
Flags an `if` with an `else`, each side holding work nvcc branches around
(a loop whose trip count is not a constant, a floating-point division not
by a power of two, a call whose code branches such as `logf` or `powf`),
whose condition splits the lanes of at least half the
warp-level executions that reach it (`threadIdx.x % 2`, `threadIdx.x < 16`
in 32-thread blocks). A condition the whole warp shares (`threadIdx.x /
32`, `blockIdx`, a parameter) is never reported, nor a bounds check that
splits only the warp at the end of the data, nor short sides nvcc turns
into predicated instructions or merges.

## Why is this bad?
A warp executes one instruction for all its lanes: when its lanes take
different sides, both sides run one after the other, each with the other
side's lanes idle (CUDA programming guide, 5.4.2). Measured on an H200
(`fixtures/lints/CF001/MEASURED.md`): a loop on each side under `t % 2`
executed 1.7 times the instructions of the same kernel branching on `(t /
32) % 2`, with 18 of 32 lanes active per instruction on average instead
of 32.

## Example
```cuda
if (threadIdx.x % 2) { for (int j = 0; j < n; j++) v = f(v); }
else                 { for (int j = 0; j < n; j++) v = g(v); }
```

## Use instead
Make the condition the same for every lane of a warp, and give each warp
one side's work (the element each thread handles chosen to match):
```cuda
if ((threadIdx.x / 32) % 2) { ... } else { ... }
```
or take what differs out of the branch so that one path remains.

## Conditions computed from data
A condition on a value loaded from memory leaves the branch unknown, and it
is not reported.

## Severity
A warning: a cost in executed instructions, measured."#,
};

impl Lint for DivergentBranch {
    fn rule(&self) -> &'static Rule {
        &RULE
    }

    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>) {
        let share = |b: &BranchReport| b.divergent as f64 / b.executions.max(1) as f64;
        let reported = |b: &BranchReport| {
            b.status != Status::Unknown
                && b.executions > 0
                && share(b) >= MIN_DIVERGENT_SHARE
                && b.sample.is_some()
        };
        // One finding per branch of a kernel: its first launch that splits.
        let mut seen: Vec<(String, warplint_analyzer::ir::Span)> = Vec::new();
        for b in ctx.analysis.branches.iter().filter(|b| reported(b)) {
            let key = (b.kernel_name.clone(), b.span);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            if let Some(s) = b.sample {
                out.push(diagnostic(ctx, b, s, share(b)));
            }
        }
    }
}

fn lanes(m: u32) -> String {
    match m.count_ones() {
        1 => format!("lane {}", lane_ranges(m)),
        _ => format!("lanes {}", lane_ranges(m)),
    }
}

fn diagnostic(ctx: &Context, b: &BranchReport, s: BranchSample, share: f64) -> Diagnostic {
    let block = format!("{}x{}x{}", b.block[0], b.block[1], b.block[2]);
    let (nt, ne) = (s.then_lanes.count_ones(), s.else_lanes.count_ones());
    let how_many = if share >= 1.0 - 1e-9 {
        "every warp that reaches it".to_string()
    } else {
        format!(
            "{}% of the warps that reach it",
            fmt_num((share * 100.0).round())
        )
    };
    let message = format!(
        "divergent branch on `{}`: it splits the lanes of {how_many}, so both sides run one \
         after the other ({nt} lane{} take{} the `if`, {ne} the `else` in warp {}; kernel \
         `{}`, block {block}){}",
        b.text,
        if nt == 1 { "" } else { "s" },
        if nt == 1 { "s" } else { "" },
        s.warp,
        b.kernel_name,
        wording::when(&b.assumptions)
    );
    let label = format!(
        "{} take the `if`, {} the `else`",
        lanes(s.then_lanes),
        lanes(s.else_lanes)
    );
    let mut notes = vec![format!(
        "{}, block {block}, warp {} of block ({}, {}, {}): while one side runs, the other \
         side's lanes are idle; measured on an H200, a loop on each side under `t % 2` ran 1.7 \
         times the instructions of the warp-uniform `(t / 32) % 2`",
        ctx.arch, s.warp, s.block[0], s.block[1], s.block[2]
    )];
    if let Some(i) = &b.inlined_at {
        notes.push(format!(
            "in `{}`, inlined at line {}",
            i.callee, i.call.line
        ));
    }
    let (mut facts, assumed) =
        super::control_facts(ctx, (&b.kernel_name, b.block), &b.assumptions, b.status);
    notes.extend(assumed);
    facts.lanes = (0..32u32)
        .filter(|l| s.then_lanes & (1 << l) != 0)
        .collect();
    let help = "branch on a value every lane of a warp shares, such as the warp's number \
                `threadIdx.x / 32`, and give each warp one side's work; or move what differs \
                out of the branch so that one path remains"
        .to_string();
    Diagnostic {
        code: RULE.code,
        name: RULE.name,
        severity: Severity::Warning,
        message,
        span: b.span,
        label,
        related: Vec::new(),
        notes,
        help: Some(help),
        fix: None,
        facts,
    }
}

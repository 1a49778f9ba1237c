//! SM001 `shared-bank-conflict`.

use std::collections::HashMap;

use warplint_analyzer::finding::Assumption;
use warplint_analyzer::hardware::WARP;
use warplint_analyzer::ir::{MemObject, Space};
use warplint_analyzer::symbolic::{Cost, SharedStats};
use warplint_analyzer::AccessReport;

use crate::padding::{self, NamedConstant, PaddingPlan};
use crate::picture::{bank_table, worst_banks};
use crate::wording;
use crate::{
    assumption_notes, facts, fmt_num, lane_ranges, sites, Applicability, Context, Diagnostic, Fix,
    Label, Lint, Rule, Severity,
};

pub struct SharedBankConflict;

pub static RULE: Rule = Rule {
    code: "SM001",
    name: "shared-bank-conflict",
    summary: "a shared-memory access whose warp needs more wavefronts than a conflict-free one",
    fixable: true,
    doc: r#"## What it does
Flags a shared-memory load, store or atomic for which some warp of the block
needs more wavefronts than a conflict-free access of the same width: an n-way
bank conflict. The degree is the one of the worst warp, under the launch
configuration found in the file (or assumed, as the message says).

## Why is this bad?
Shared memory is 32 banks of 4 bytes. The lanes of a warp (half-warp for
8-byte accesses, quarter-warp for 16-byte ones) are served together; when
n different words fall into one bank they are served one after another, so
the instruction takes n times as long. Lanes reading the same word do not
conflict.

## Example
```cuda
__shared__ float tile[32][32];
tile[threadIdx.y][threadIdx.x] = in[...];
__syncthreads();
out[...] = tile[threadIdx.x][threadIdx.y];   // 32-way: a column is one bank
```

## Use instead
```cuda
__shared__ float tile[32][33];               // one element of padding per row
```

## Fix safety
The padding fix is unsafe: it changes the array's footprint (and so
occupancy) and breaks code that flattens the array or hard-codes its
stride. It is only offered after re-analysing every access to the array in
the kernel with the new size. When no padding or pitch is verified, the help
is computed from the worst warp's addresses: the stride between neighbouring
lanes, or the pitch between the rows of a 2-D block's lanes, that the
hardware model shows removes the conflict in that warp (SobelFilter's rows
384 bytes apart, 0 mod 128, get a pitch of 64 mod 128); else an XOR
swizzle.

## Addresses computed from data
When the address is computed from integers loaded from memory (a
histogram's bin, a table's index) and the expression keeps every value
inside the array (a mask, a byte), the degree depends on the data. It is
then the mean over draws of uniformly distributed values, each lane's its
own, and the finding says so ("on average for uniformly distributed data",
the `uniform-data` assumption, with the range over the draws). It is an
estimate, reported as a warning at most: skewed data, where lanes share
values, collides less; values chosen to meet in one bank collide more.
Where the expression does not keep the values inside the array, the access
is unknown.

```cuda
__shared__ unsigned char s_Hist[64 * 64];     // laid out for 16 banks
s_Hist[threadPos + ((data >> 2) & 63) * 64]++; // 2-way on 32 banks
```

## Options
`[lint.thresholds] shared-ways-warning` (default 2) and `shared-ways-error`
(default 8) set the severity from the worst warp's n-way degree."#,
};

impl Lint for SharedBankConflict {
    fn rule(&self) -> &'static Rule {
        &RULE
    }

    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>) {
        let t = ctx.thresholds;
        // A padding, else a pitch, and whether the search ran out of budget.
        type Plans = (
            Option<PaddingPlan>,
            Option<(NamedConstant, PaddingPlan)>,
            bool,
        );
        let mut plans: HashMap<(usize, usize), Plans> = HashMap::new();
        let mut budget = padding::FixBudget::default();
        // A cost drawn from data is said by its mean: its worst warp is
        // the rarest draw, not something the program does.
        let drawn = |r: &AccessReport| {
            r.assumptions
                .iter()
                .any(|a| matches!(a, Assumption::UniformData { .. }))
        };
        let headline = |r: &AccessReport, s: &SharedStats| {
            if drawn(r) {
                s.ways
            } else {
                s.max_ways
            }
        };
        let ways = |r: &AccessReport| match &r.cost {
            Some(Cost::Shared(s)) => headline(r, s),
            _ => 0.0,
        };
        let shared = ctx.known_reports().filter(|r| r.space == Space::Shared);
        for site in sites(ctx, shared, ways) {
            let r = site.worst;
            let Some(Cost::Shared(s)) = &r.cost else {
                continue;
            };
            let top = headline(r, s);
            if top < t.shared_ways_warning - 1e-9 {
                continue;
            }
            // A cost that rests on the data being uniform is an estimate
            // (skewed data collides less, adversarial data more): never
            // an error.
            let severity = if top >= t.shared_ways_error - 1e-9 && !drawn(r) {
                Severity::Error
            } else {
                Severity::Warning
            };
            let (k, access, obj) = ctx.site_of(r);
            let ways = fmt_num(top);
            let mean = if drawn(r) {
                ", on average for uniformly distributed data".to_string()
            } else if (s.ways - s.max_ways).abs() > 1e-9 {
                format!(", mean {}-way", fmt_num(s.ways))
            } else {
                String::new()
            };
            let message = format!(
                "{ways}-way bank conflict on `{}` ({} of {} byte{}{mean}; {}, block {}x{}x{}){}",
                r.array,
                site.ops,
                r.width,
                if r.width == 1 { "" } else { "s" },
                ctx.arch,
                r.block[0],
                r.block[1],
                r.block[2],
                wording::when(&r.assumptions)
            );
            let mut notes = Vec::new();
            let mut label = format!("the worst warp needs {} wavefronts", s.max_wavefronts);
            let mut colliding = Vec::new();
            if let Some(sample) = &r.worst {
                let worst = worst_banks(ctx.model, sample, r.width);
                if let Some(b) = worst.first() {
                    label = format!(
                        "lanes {} hit bank {} with {} different words",
                        lane_ranges(b.lanes),
                        b.bank,
                        b.words.len()
                    );
                    colliding = (0..WARP as u32)
                        .filter(|l| b.lanes & (1 << l) != 0)
                        .collect();
                }
                if let Some(table) = bank_table(ctx.model, sample, r.width) {
                    notes.push(table);
                }
            }
            notes.extend(crate::instruction_notes(k, r));
            notes.extend(assumption_notes(r));
            notes.extend(site.also_note());
            let (plan, pitch, cut) = plans
                .entry((r.kernel, access.obj))
                .or_insert_with(|| {
                    budget.ran_out = false;
                    let (plan, pitch) = match padding::find(ctx, r.kernel, access.obj, &mut budget)
                    {
                        Some(p) => (Some(p), None),
                        None => (
                            None,
                            padding::find_pitch(ctx, r.kernel, access.obj, &mut budget),
                        ),
                    };
                    (plan, pitch, budget.ran_out)
                })
                .clone();
            if plan.is_none() && pitch.is_none() && cut {
                notes.push(format!(
                    "no fix was verified for `{}`: the {} ran out before its search ended",
                    obj.name,
                    wording::budget(&warplint_analyzer::budget::FIX_REANALYSES_PER_FILE)
                ));
            }
            let computed = if drawn(r) {
                // Which banks collide changes with the data: a layout is
                // conflict-free for any data only where every entry a lane
                // may touch stays in a bank of its own.
                Some(
                    "the lanes' banks depend on the values loaded: lay out each lane's entries \
                     a multiple of 32 words (128 bytes) apart, with the lanes in different banks, \
                     so that whatever the values each lane stays in its own bank"
                        .to_string(),
                )
            } else {
                r.worst
                    .as_ref()
                    .and_then(|w| crate::advice::bank_conflict(ctx.model, w, r.width, r.block[0]))
            };
            let (help, fix) = help_and_fix(&plan, &pitch, obj, &k.display_name, r.width, computed);
            let mut facts = facts(ctx, r);
            facts.ways = Some(s.ways);
            facts.max_ways = Some(s.max_ways);
            facts.lanes = colliding;
            out.push(Diagnostic {
                code: RULE.code,
                name: RULE.name,
                severity,
                message,
                span: r.span,
                label,
                related: vec![Label::declaration(obj)],
                notes,
                help,
                fix,
                facts,
            });
        }
    }
}

/// The help and fix of a conflict on `obj` in `kernel`: the verified
/// padding, else the verified pitch, else the advice computed from the
/// worst warp ([`crate::advice`]), else advice for its shape.
fn help_and_fix(
    plan: &Option<PaddingPlan>,
    pitch: &Option<(NamedConstant, PaddingPlan)>,
    obj: &MemObject,
    kernel: &str,
    width: u32,
    computed: Option<String>,
) -> (Option<String>, Option<Fix>) {
    match plan {
        Some(p) => {
            let outcome = if p.conflict_free() {
                format!(
                    "every access to `{}` in `{}` becomes conflict-free",
                    obj.name, kernel
                )
            } else {
                format!(
                    "the worst access to `{}` in `{}` drops to {}-way",
                    obj.name,
                    kernel,
                    fmt_num(p.worst_after)
                )
            };
            let decl = p.new_decl.split_whitespace().collect::<Vec<_>>().join(" ");
            (
                Some(format!(
                    "pad the innermost dimension by {}: `{decl}` ({outcome})",
                    p.pad
                )),
                Some(Fix {
                    applicability: Applicability::Unsafe,
                    message: format!("Pad `{}` to `{decl}`", obj.name),
                    edits: std::iter::once(p.edit.clone())
                        .chain(p.also.iter().cloned())
                        .collect(),
                }),
            )
        }
        None => match pitch {
            Some((c, p)) => (
                Some(format!(
                    "raise the pitch `{}` from {} to {}: `{}` (every access to `{}` becomes conflict-free, no other shared access gets worse)",
                    c.name, c.value, p.edit.content, p.new_decl, obj.name
                )),
                Some(Fix {
                    applicability: Applicability::Unsafe,
                    message: format!("Set `{}` to {}", c.name, p.edit.content),
                    edits: vec![p.edit.clone()],
                }),
            ),
            None => (
                Some(computed.unwrap_or_else(|| advice(obj.dims.len(), width))),
                None,
            ),
        },
    }
}

fn advice(dims: usize, width: u32) -> String {
    if width >= 16 {
        "16-byte elements fill four banks each: pad by a 16-byte element only if rows are \
         read column-wise, or swizzle the column with `col ^ (row % 8)`"
            .into()
    } else if dims < 2 {
        "swizzle the index with an XOR (`i ^ (i / 32)`) so that the lanes' words spread over \
         the banks"
            .into()
    } else {
        "no padding of the innermost dimension removes the conflict: swizzle the column \
         index with an XOR of the row (`col ^ row`)"
            .into()
    }
}

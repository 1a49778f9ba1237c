//! CM001 `divergent-constant-read`.

use warplint_analyzer::hardware::Lanes;
use warplint_analyzer::ir::Space;
use warplint_analyzer::symbolic::Cost;
use warplint_analyzer::AccessReport;

use crate::wording;
use crate::{
    assumption_notes, facts, fmt_num, lane_ranges, sites, Context, Diagnostic, Label, Lint, Rule,
    Severity,
};

pub struct DivergentConstantRead;

pub static RULE: Rule = Rule {
    code: "CM001",
    name: "divergent-constant-read",
    summary:
        "a __constant__ read whose warp's lanes read different addresses, served one after another",
    fixable: false,
    doc: r#"## What it does
Flags a read of a `__constant__` array for which the lanes of some warp
read n different addresses (n ≥ 2). The constant cache serves one address
per request: the instruction is split into n requests served one after
another. A read where every lane of the warp reads one address (an index
from `blockIdx`, a loop counter, a constant) is never reported.

## Why is this bad?
Constant memory is made for values every lane reads at once: then it is as
fast as a register. Measured on an H200 (nvcc 13.0, Nsight Compute's
`idc__requests` per `LDC`): n different addresses in a warp, whether 4
bytes or 64 bytes apart, whether whole words, doubles or bytes of one word,
cost exactly n requests; 32 lanes reading 32 floats took 141 cycles per
read against 42 for 2 addresses. A uniform index is not even a load: nvcc
reads the value as an operand of the instruction that uses it.

## Example
```cuda
__constant__ float c_weights[256];
out[i] = in[i] * c_weights[threadIdx.x];     // 32 requests per warp
```

## Use instead
Index constant memory with a value the whole warp shares, or move the table
to global memory and read it through the read-only path (`const float
*__restrict__` and `__ldg`), where 32 neighbouring floats are 4 sectors of
one request:
```cuda
__global__ void k(const float *__restrict__ weights, ...)
out[i] = in[i] * __ldg(&weights[threadIdx.x]);
```

## Addresses computed from data
An index loaded from memory (a lookup table's entry) leaves the read
unknown: which lanes share a value depends on the data, and a value the
whole warp loads from one address is one request.

## Severity
A warning: the cost is serialisation of one instruction, measured in
requests, and a table read this way may still be the right trade where its
reads are few."#,
};

/// The distinct addresses the active lanes of `lanes` read, with the
/// lanes reading each, in address order.
fn addresses(lanes: &Lanes) -> Vec<(i64, u32)> {
    let mut out: Vec<(i64, u32)> = Vec::new();
    for (l, a) in lanes.iter().enumerate() {
        let Some(a) = *a else { continue };
        match out.iter_mut().find(|(x, _)| *x == a) {
            Some((_, m)) => *m |= 1 << l,
            None => out.push((a, 1 << l)),
        }
    }
    out.sort_unstable();
    out
}

impl Lint for DivergentConstantRead {
    fn rule(&self) -> &'static Rule {
        &RULE
    }

    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>) {
        // The worst warp's requests. (An index from data leaves the read
        // unknown: constant memory is never drawn, `symbolic/data.rs`.)
        let requests = |r: &AccessReport| match &r.cost {
            Some(Cost::Constant(c)) => f64::from(c.max_requests),
            _ => 0.0,
        };
        // Only the divergent ones: a uniform instantiation or launch of
        // the same read is not among those the finding stands for.
        let divergent = |r: &AccessReport| requests(r) >= 2.0 - 1e-9;
        let constant = ctx
            .known_reports()
            .filter(|r| r.space == Space::Constant && divergent(r));
        for site in sites(ctx, constant, requests) {
            let r = site.worst;
            let Some(Cost::Constant(c)) = &r.cost else {
                continue;
            };
            let n = requests(r);
            let (k, _, obj) = ctx.site_of(r);
            let mean = if (c.requests - n).abs() > 1e-9 {
                format!(", mean {} requests a warp", fmt_num(c.requests))
            } else {
                String::new()
            };
            let message = format!(
                "divergent constant read of `{}`: a warp's lanes read {} different addresses, \
                 {} requests served one after another ({} of {} byte{}{mean}; {}, block \
                 {}x{}x{}){}",
                r.array,
                fmt_num(n),
                fmt_num(n),
                site.ops,
                r.width,
                if r.width == 1 { "" } else { "s" },
                ctx.arch,
                r.block[0],
                r.block[1],
                r.block[2],
                wording::when(&r.assumptions)
            );
            let mut label = format!("{} different addresses in one warp", fmt_num(n));
            let mut alternative = None;
            if let Some(sample) = &r.worst {
                let groups = addresses(&sample.lanes);
                if let [(a0, m0), (a1, m1), ..] = groups[..] {
                    let who = |m: u32| {
                        let ranges = lane_ranges(m);
                        match m.count_ones() {
                            1 => format!("lane {ranges} reads"),
                            n if ranges.len() > 16 => format!("{n} lanes read"),
                            _ => format!("lanes {ranges} read"),
                        }
                    };
                    // Where in `obj` (the sample's offsets are from its
                    // start): the element, where the offset is one's.
                    let at = |a: i64| match i64::try_from(obj.elem_size) {
                        Ok(e) if e > 0 && a % e == 0 => format!("`{}[{}]`", obj.name, a / e),
                        _ => format!("byte {a} of `{}`", obj.name),
                    };
                    let more = if groups.len() > 2 { ", …" } else { "" };
                    label = format!(
                        "{} {}, {} {}{more} ({} addresses)",
                        who(m0),
                        at(a0),
                        who(m1),
                        at(a1),
                        groups.len()
                    );
                }
                // The same lanes through global memory: what the move
                // would cost (the model's sectors, one request).
                let g = ctx.model.global(&sample.lanes, r.width);
                alternative = Some(g.sectors);
            }
            let mut notes = vec![format!(
                "{}, block {}x{}x{}: the constant cache serves one address per request \
                 (measured on an H200: n addresses, n requests)",
                ctx.arch, r.block[0], r.block[1], r.block[2]
            )];
            notes.extend(crate::instruction_notes(k, r));
            notes.extend(assumption_notes(r));
            notes.extend(site.also_note());
            let through_global = alternative.map_or(String::new(), |s| {
                format!(
                    " (the same lanes read from global memory need {} sector{} in one request)",
                    s,
                    if s == 1 { "" } else { "s" }
                )
            });
            let help = format!(
                "make the index the same for every lane of a warp (from `blockIdx`, the warp's \
                 number `threadIdx.x / 32`, or a loop counter that does not start from the \
                 lane), or move `{}` to global memory and read it through the read-only path \
                 (a `const __restrict__` pointer){through_global}",
                obj.name
            );
            let mut facts = facts(ctx, r);
            // The other calls of an inlined function that read divergently
            // (a uniform call is not what the finding is about).
            if let Some(i) = facts.inlined.as_mut() {
                let divergent_call = |call: &warplint_analyzer::ir::Span| {
                    ctx.analysis.reports.iter().any(|x| {
                        x.span == r.span
                            && x.array == r.array
                            && x.inlined_at.as_ref().map(|c| c.call) == Some(*call)
                            && divergent(x)
                    })
                };
                i.others.retain(divergent_call);
            }
            facts.requests = Some(c.requests);
            facts.max_requests = Some(f64::from(c.max_requests));
            facts.lanes = r
                .worst
                .as_ref()
                .map(|w| {
                    (0..32u32)
                        .filter(|l| w.lanes[*l as usize].is_some())
                        .collect()
                })
                .unwrap_or_default();
            out.push(Diagnostic {
                code: RULE.code,
                name: RULE.name,
                severity: Severity::Warning,
                message,
                span: r.span,
                label,
                related: vec![Label::declaration(obj)],
                notes,
                help: Some(help),
                fix: None,
                facts,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_grouped_by_value_with_their_lanes() {
        let mut lanes: Lanes = [None; 32];
        for (l, a) in lanes.iter_mut().enumerate() {
            *a = Some((l as i64 % 4) * 4);
        }
        lanes[31] = None;
        let g = addresses(&lanes);
        assert_eq!(g.len(), 4);
        assert_eq!(g[0], (0, 0x1111_1111));
        assert_eq!(g[3], (12, 0x0888_8888));
    }
}

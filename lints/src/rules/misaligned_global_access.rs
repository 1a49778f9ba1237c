//! GM002 `misaligned-global-access`.

use warplint_analyzer::finding::Assumption;
use warplint_analyzer::ir::Space;
use warplint_analyzer::symbolic::Cost;

use super::{unit_stride_misaligned, waste};
use crate::wording;
use crate::{
    assumption_notes, facts, fmt_num, sites, Context, Diagnostic, Label, Lint, Rule, Severity,
};

pub struct MisalignedGlobalAccess;

pub static RULE: Rule = Rule {
    code: "GM002",
    name: "misaligned-global-access",
    summary: "a unit-stride global access whose warp starts off a 32-byte boundary",
    fixable: false,
    doc: r#"## What it does
Flags a global-memory access whose lanes touch consecutive elements but
whose first address is not on a 32-byte sector boundary, so the warp
straddles one sector more than it needs.

## Why is this bad?
Allocations are 256-byte aligned and memory moves in 32-byte sectors: 32
floats starting at `in + 1` need 5 sectors instead of 4, a 25% overhead on
every request.

## Example
```cuda
float v = in[blockIdx.x * blockDim.x + threadIdx.x + 1];
```

## Use instead
Shift the data (or the pointer) so each warp starts on a 32-byte boundary,
or load the aligned range and shuffle the neighbour in with `__shfl_down_sync`.

## Known limits
Alignment is counted from the pointer the kernel receives, assumed to be
the start of an allocation. A kernel that reads below that pointer
(`g_s[threadIdx.x - 1]`, lane 0 at index -1) shows it is not one (the host
passes `base + 1`): that array's alignment is unknown and the rule says
nothing about it. So does a launch that passes a moved pointer
(`bufferIn + padding`, `&buf[k]`, or a variable the launching function sets
to one, as FDTD3d does to bring its halo back onto a boundary)."#,
};

impl Lint for MisalignedGlobalAccess {
    fn rule(&self) -> &'static Rule {
        &RULE
    }

    fn check(&self, ctx: &Context, out: &mut Vec<Diagnostic>) {
        // A pointer read below its start in some lane is not the start of
        // an allocation: its alignment is not known, so neither is a
        // misalignment.
        let offset: Vec<(usize, usize, &str)> = ctx
            .analysis
            .reports
            .iter()
            .filter(|r| r.space == Space::Global && r.min_offset.is_some_and(|m| m < 0))
            .map(|r| (r.kernel, r.launch, r.array.as_str()))
            .collect();
        // So is a pointer the launch passes moved (`buf + padding`).
        let moved = |r: &warplint_analyzer::AccessReport| {
            let k = &ctx.analysis.program.kernels[r.kernel];
            let param = k.params.iter().position(|p| p.name == r.array);
            match (k.launches.get(r.launch), param) {
                (Some(l), Some(i)) => l.offset_args.get(i).copied().unwrap_or(false),
                _ => false,
            }
        };
        // A misalignment measured under the assumption that an unknown
        // shift keeps the warp aligned is not known: the shift decides it
        // (a struct of 2068 bytes indexed by a loaded node number). So is
        // one whose address moves with a loaded value tried over the
        // spread: the values tried say nothing of the node numbers the
        // program reads.
        let shifted = |r: &warplint_analyzer::AccessReport| {
            r.assumptions
                .iter()
                .any(|a| matches!(a, Assumption::KeepsAligned { .. }))
                || address_moves_with_loaded_value(
                    &ctx.analysis.program.kernels[r.kernel],
                    r,
                    i64::from(ctx.model.sector_bytes()),
                )
        };
        let global = ctx.known_reports().filter(|r| {
            r.space == Space::Global
                && !offset.contains(&(r.kernel, r.launch, r.array.as_str()))
                && !moved(r)
                && !shifted(r)
        });
        for site in sites(ctx, global, waste) {
            let r = site.worst;
            let Some(Cost::Global(g)) = &r.cost else {
                continue;
            };
            if g.sectors <= g.ideal_sectors + 1e-9 {
                continue;
            }
            let Some(sample) = &r.worst else { continue };
            let Some(off) = unit_stride_misaligned(ctx.model, &sample.lanes, r.width) else {
                continue;
            };
            let (k, _, obj) = ctx.site_of(r);
            let sector = ctx.model.sector_bytes();
            let message = format!(
                "misaligned {} of `{}`: the warp starts {off} bytes into a {sector}-byte sector \
                 ({} sectors per request instead of {}){}",
                site.ops,
                r.array,
                fmt_num(g.sectors),
                fmt_num(g.ideal_sectors),
                wording::when(&r.assumptions)
            );
            let mut notes = vec![format!(
                "{}, block {}x{}x{}; allocations are assumed 256-byte aligned",
                ctx.arch, r.block[0], r.block[1], r.block[2]
            )];
            notes.extend(crate::instruction_notes(k, r));
            notes.extend(assumption_notes(r));
            notes.extend(site.also_note());
            let mut facts = facts(ctx, r);
            facts.sectors = Some(g.sectors);
            facts.ideal_sectors = Some(g.ideal_sectors);
            out.push(Diagnostic {
                code: RULE.code,
                name: RULE.name,
                severity: Severity::Warning,
                message,
                span: r.span,
                label: format!("first lane at byte {off} of its sector"),
                related: vec![Label::declaration(obj)],
                notes,
                help: Some(format!(
                    "start each warp on a {sector}-byte boundary (shift the index or the \
                     pointer), or load aligned and exchange neighbours with __shfl_sync"
                )),
                fix: None,
                facts,
            });
        }
    }
}

/// Whether the address of a report's access moves with an integer the
/// block loads ([`warplint_analyzer::ir::Param::loaded`]) by other than a
/// multiple of `sector` bytes: where the warp starts within a sector then
/// depends on data (a node number times a 2068-byte struct), whatever the
/// values tried gave. A loaded value that only bounds a loop or a branch,
/// or that picks a row of 1024 floats, does not move it.
fn address_moves_with_loaded_value(
    k: &warplint_analyzer::ir::Kernel,
    r: &warplint_analyzer::AccessReport,
    sector: i64,
) -> bool {
    let Some(a) = k.accesses.get(r.access) else {
        return false;
    };
    a.offset.atoms().into_iter().any(|x| match x {
        warplint_analyzer::ir::Atom::Param(i)
            if k.params.get(i as usize).is_some_and(|p| p.loaded.is_some()) =>
        {
            let c = warplint_analyzer::symbolic::linear::coefficient(&a.offset, x);
            !c.and_then(|c| c.as_const())
                .is_some_and(|c| sector > 0 && c % sector == 0)
        }
        _ => false,
    })
}

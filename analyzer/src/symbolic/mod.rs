//! The warp engine: for each access, each launch configuration, each
//! representative block, each warp and each enumerated loop iteration, the
//! 32 lane addresses and the active mask, costed by a hardware model.
//!
//! Results are three-valued ([`Status`]): `exact` for the given launch
//! (and for every value tried of what it does not give), `assumed` when
//! they rest on stated assumptions (a condition on a parameter or the block
//! shape, a sampled loop), `unknown` when the address depends on data or a
//! budget ran out; unknown results carry no cost.
//!
//! The room:
//! - `report.rs`: the public answer ([`AccessReport`], [`Status`], [`Cost`])
//!   and [`EngineOptions`];
//! - `setup.rs`: a launch resolved to numbers, and the blocks an access runs in;
//! - `values.rs`: one access under one launch, over representative values
//!   of what no launch gives (integer parameters, the block shape), and
//!   for which of them the answer holds;
//! - `types.rs`: the instantiations of a template kernel nothing
//!   instantiates, one per representative type, put together;
//! - `access.rs`: one run of an access, from its run to its report;
//! - `run.rs`: the run's state, the warps of every block, warp-wide
//!   evaluation and the cost of one execution;
//! - `loops.rs`: loop iterations, and which loops cost the same every time;
//! - `branches.rs`: `if`/`else` with work on both sides, run like
//!   accesses, counting the warps whose lanes take both sides;
//! - `races.rs`: pairs of accesses, one a store, with nothing ordering
//!   them, run together: lanes of a warp touching what another stores;
//! - `reach.rs`: barriers, run like accesses, counting per thread how
//!   many times each is reached (a block split at a `__syncthreads()`);
//! - `assume.rs`: assumptions, keyed and worded once per access;
//! - `unknowns.rs`: unknown values that only shift the warp;
//! - `data.rs`: values drawn for loaded integers a shared address is
//!   computed from, where the expression bounds them to the array;
//! - `collapse.rs`: warps and blocks proved to cost what an earlier one did;
//! - `stride.rs`: runs of the innermost loop's iterations proved to cost
//!   what the first run did;
//! - `reuse.rs`: a kernel's reports kept for another file that lowers the
//!   same kernel;
//! - `eval.rs`, `graph.rs`, `linear.rs`: evaluating expressions (one lane, a
//!   whole warp, remembered per loop level) and their linear forms.

mod access;
mod assume;
mod branches;
mod collapse;
pub mod data;
pub mod eval;
mod graph;
pub mod linear;
mod loops;
mod races;
mod reach;
mod report;
pub mod reuse;
mod run;
mod setup;
mod stride;
mod types;
mod unknowns;
mod values;

pub use branches::{analyze_branches, BranchReport, BranchSample};
pub use races::{analyze_races, Exchange, RaceReport};
pub use reach::{analyze_barriers, BarrierReport, Split};
pub use report::{
    AccessReport, ConstantStats, Cost, EngineOptions, GlobalStats, SharedStats, Status, WarpSample,
};

use crate::hardware::MemoryModel;
use crate::ir::Program;
use setup::Setup;
use values::analyze_access;

/// Analyses every access of every kernel under each of its launches.
pub fn analyze_program(
    p: &Program,
    model: &dyn MemoryModel,
    opts: &EngineOptions,
) -> Vec<AccessReport> {
    let mut out = Vec::new();
    let memo = opts
        .kernel_memo
        .as_ref()
        .filter(|_| opts.only_array.is_none() && opts.stop_above_ways.is_none());
    for (ki, k) in p.kernels.iter().enumerate() {
        // A kernel of the file analysed (file 0) is lowered once per run
        // and configuration: only a header's kernels can be met again, so
        // only theirs are keyed (the key is the kernel's whole `Debug`
        // text: 5% of a ggml run when every kernel paid it).
        let key = memo
            .filter(|_| k.span.file != 0)
            .map(|_| reuse::key(k, model, opts));
        if let (Some(m), Some(key)) = (memo, key) {
            if let Some(reports) = m.get(key) {
                out.extend(reports.iter().cloned().map(|mut r| {
                    r.kernel = ki;
                    r
                }));
                continue;
            }
        }
        let start = out.len();
        let mut kernel_work = 0u64;
        for (li, _) in k.launches.iter().enumerate() {
            let setup = Setup::new(k, li, opts);
            for ai in 0..k.accesses.len() {
                if let Some(only) = &opts.only_array {
                    if k.objects[k.accesses[ai].obj].name != *only {
                        continue;
                    }
                }
                let (r, stopped) =
                    analyze_access(k, (ki, ai, li), &setup, model, opts, &mut kernel_work);
                out.push(r);
                if stopped {
                    // The fix search has its answer for this candidate.
                    return out;
                }
            }
        }
        if let (Some(m), Some(key)) = (memo, key) {
            m.put(key, out[start..].to_vec());
        }
    }
    let mut out = types::put_together(p, out);
    sort(&mut out);
    out
}

/// The reports of the accesses `which` (kernel, access) alone, under each
/// of their kernel's launches, in [`analyze_program`]'s order (for a
/// kernel lowered with a representative type, not put together).
pub fn analyze_accesses(
    p: &Program,
    model: &dyn MemoryModel,
    opts: &EngineOptions,
    which: &[(usize, usize)],
) -> Vec<AccessReport> {
    let mut out = Vec::new();
    for (ki, k) in p.kernels.iter().enumerate() {
        let mut kernel_work = 0u64;
        let mine: Vec<usize> = which
            .iter()
            .filter(|(k2, a)| *k2 == ki && *a < k.accesses.len())
            .map(|&(_, a)| a)
            .collect();
        if mine.is_empty() {
            continue;
        }
        for li in 0..k.launches.len() {
            let setup = Setup::new(k, li, opts);
            for &ai in &mine {
                let (r, _) = analyze_access(k, (ki, ai, li), &setup, model, opts, &mut kernel_work);
                out.push(r);
            }
        }
    }
    sort(&mut out);
    out
}

fn sort(out: &mut [AccessReport]) {
    out.sort_by(|a, b| {
        (a.span.start, a.kernel, a.launch, a.access).cmp(&(
            b.span.start,
            b.kernel,
            b.launch,
            b.access,
        ))
    });
}

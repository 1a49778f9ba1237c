//! The rules, one per file, and the registry.

mod divergent_barrier;
mod divergent_branch;
mod divergent_constant_read;
mod local_memory_array;
mod misaligned_global_access;
pub(crate) mod resource_limit;
mod shared_bank_conflict;
mod uncoalesced_global_access;
mod underaligned_element;
mod unpitched_2d_array;
mod unsynchronized_warp_exchange;

use crate::{Context, Lint};

/// Every lint, in code order. Adding a rule: one file here, one line below.
pub static LINTS: &[&dyn Lint] = &[
    &uncoalesced_global_access::UncoalescedGlobalAccess,
    &misaligned_global_access::MisalignedGlobalAccess,
    &shared_bank_conflict::SharedBankConflict,
    &resource_limit::ResourceLimit,
    &divergent_constant_read::DivergentConstantRead,
    &divergent_barrier::DivergentBarrier,
    &divergent_branch::DivergentBranch,
    &unsynchronized_warp_exchange::UnsynchronizedWarpExchange,
    &unpitched_2d_array::Unpitched2dArray,
    &underaligned_element::UnderalignedElement,
    &local_memory_array::LocalMemoryArray,
];

/// A warp whose active lanes touch consecutive elements in lane order,
/// starting off a sector boundary, where that offset itself costs sectors
/// (the same warp moved back to the boundary needs fewer): the shape GM002
/// owns (GM001 leaves it). The offset into the sector. Half the lanes of a
/// stride-2 pattern starting one element in are not it: aligned, they need
/// as many sectors.
pub(crate) fn unit_stride_misaligned(
    model: &dyn warplint_analyzer::MemoryModel,
    lanes: &warplint_analyzer::hardware::Lanes,
    width: u32,
) -> Option<i64> {
    let off = unit_stride_offset(lanes, width, i64::from(model.sector_bytes()))?;
    let mut aligned = *lanes;
    for a in aligned.iter_mut().flatten() {
        *a -= off;
    }
    (model.global(&aligned, width).sectors < model.global(lanes, width).sectors).then_some(off)
}

/// The offset into its `sector`-byte sector of a warp whose active lanes
/// touch consecutive elements in lane order, when it is not zero.
fn unit_stride_offset(
    lanes: &warplint_analyzer::hardware::Lanes,
    width: u32,
    sector: i64,
) -> Option<i64> {
    let active: Vec<(usize, i64)> = lanes
        .iter()
        .enumerate()
        .filter_map(|(l, a)| a.map(|a| (l, a)))
        .collect();
    if active.len() < 2 {
        return None;
    }
    let w = width as i64;
    let unit = active
        .windows(2)
        .all(|p| p[1].1 - p[0].1 == (p[1].0 - p[0].0) as i64 * w);
    let off = active[0].1.rem_euclid(sector);
    (unit && off != 0).then_some(off)
}

/// Sectors beyond the ideal: how bad a global access is.
pub(crate) fn waste(r: &warplint_analyzer::AccessReport) -> f64 {
    match &r.cost {
        Some(warplint_analyzer::symbolic::Cost::Global(g)) => g.sectors - g.ideal_sectors,
        _ => 0.0,
    }
}

/// The facts of a finding about control flow (a barrier, a branch, a pair
/// of accesses) in `kernel` under `block`, and its "assumed:" notes.
pub(crate) fn control_facts(
    ctx: &Context,
    (kernel, block): (&str, [u64; 3]),
    assumptions: &[warplint_analyzer::finding::Assumption],
    status: warplint_analyzer::Status,
) -> (crate::Facts, Vec<String>) {
    let assumed = crate::wording::assumptions(assumptions);
    let notes = assumed
        .iter()
        .map(|(a, _)| format!("assumed: {a}"))
        .collect();
    let facts = crate::Facts {
        kernel: kernel.to_string(),
        arch: ctx.arch.to_string(),
        block,
        assumptions: assumed.iter().map(|(a, _)| a.clone()).collect(),
        assumption_kinds: assumed.iter().map(|(_, k)| *k).collect(),
        status: match status {
            warplint_analyzer::Status::Exact => "exact",
            _ => "assumed",
        }
        .into(),
        ..crate::Facts::default()
    };
    (facts, notes)
}

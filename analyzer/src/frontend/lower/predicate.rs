//! Which sides of an `if` nvcc predicates rather than branches around
//! ([`crate::ir::Access::predicated_from`]). A predicated instruction is
//! issued by every warp that reaches the `if`, also by a warp none of
//! whose lanes takes the side: Nsight Compute counts that warp's
//! instruction with no sector or wavefront, so the mean per executed
//! instruction it reports is diluted. A side nvcc branches around is
//! skipped by such a warp.
//!
//! Measured on an H200 (nvcc 13.0 `-O3`,
//! `fixtures/groundtruth/sm_90/predication.cu`, 1 block of 8 warps whose
//! first 2 take the side): predicated (all 8 warps issue it) are one or
//! two global stores, one shared store, a shared update (`s[i] += s[i +
//! k]`: two shared loads and a store) in a constant loop, nested `if`s of
//! one store, and both sides of a short `if`/`else`. Branched (only the 2
//! warps issue it): four or more stores, any global load (`v = b[t]`,
//! `a[t] = b[t] * 2`), a loop or a division on either side of the `if`
//! (the other side's store too), an `if` in a loop of run-time
//! trip count, and an `if` that ends the kernel (`@P EXIT`). What was not measured is taken as branched: the
//! warps that issue it are the ones with an active lane, the engine's
//! reading without this model.

use crate::ir::{Kernel, Op, Space, Span};
use std::ops::Range;

/// Most stores a predicated side was measured to hold (two; four were
/// branched around).
const MAX_STORES: usize = 2;
/// Most accesses a predicated side was measured to hold (a shared update:
/// two loads and a store).
const MAX_ACCESSES: usize = 3;

/// One side of an `if`, as the lowering left it.
#[derive(Clone, Debug)]
pub struct Side {
    /// The `if`'s condition, as its guards name it.
    pub site: Span,
    /// `true` for the `then` side.
    pub expect: bool,
    /// The accesses lowered in the side.
    pub accesses: Range<usize>,
    /// A side of the `if` (this one or the other) holds work nvcc
    /// branches around (`stmt.rs`, `has_work`) or a loop of any kind.
    pub work: bool,
    /// This side holds a loop.
    pub looped: bool,
    /// The loops the `if` sits in: something follows it in every
    /// iteration but the last.
    pub loops: Vec<usize>,
    /// Accesses lowered before the end of the whole `if` statement.
    pub end: usize,
    /// Barriers, fences and unseen calls lowered before that end.
    pub fences: u32,
}

/// Marks the accesses of every predicated side of `k`, `sides` in the
/// order their lowering finished (inner `if`s first); `fences` is how
/// many barriers, fences and unseen calls the kernel holds.
pub fn mark(k: &mut Kernel, sides: &[Side], fences: u32) {
    for s in sides {
        // An `if` nothing follows ends the kernel: nvcc exits the threads
        // that fail it (`@P EXIT`).
        let tail = s.loops.is_empty() && s.end >= k.accesses.len() && s.fences >= fences;
        // nvcc unrolls a loop of run-time trip count by four and branches
        // around the four iterations' sides together (measured,
        // `in_runtime_loop`); a constant loop it unrolls whole, each
        // iteration's side predicated (`in_constant_loop`).
        let unrolled = s
            .loops
            .iter()
            .all(|l| k.loops.get(*l).is_some_and(super::stmt::constant_trip));
        if s.work || tail || !unrolled || s.accesses.is_empty() || !fits(k, s) {
            continue;
        }
        let Some(at) = k.accesses.get(s.accesses.clone()) else {
            continue;
        };
        let from: Option<Vec<u32>> = at.iter().map(|a| predicated_from(a, s)).collect();
        let Some(from) = from else { continue };
        for (a, j) in k.accesses[s.accesses.clone()].iter_mut().zip(from) {
            a.predicated_from = Some(j);
        }
    }
}

/// Whether the side's accesses are of the kinds and numbers measured
/// predicated: no atomic, no load but a shared one, no per-thread array.
fn fits(k: &Kernel, s: &Side) -> bool {
    let Some(at) = k.accesses.get(s.accesses.clone()) else {
        return false;
    };
    let space = |obj: usize| k.objects.get(obj).map(|o| o.space);
    let stores = at.iter().filter(|a| a.op == Op::Store).count();
    at.len() <= MAX_ACCESSES
        && stores <= MAX_STORES
        && at.iter().all(|a| {
            matches!(
                (a.op, space(a.obj)),
                (Op::Store, Some(Space::Global | Space::Shared)) | (Op::Load, Some(Space::Shared))
            )
        })
}

/// The index of side `s`'s guard in `a`'s guards, where every later
/// guard is a predicated side's (`a` was marked from the next one on);
/// `None` when `a` sits under anything else in the side (a `return`, a
/// branched `if`).
fn predicated_from(a: &crate::ir::Access, s: &Side) -> Option<u32> {
    let j = a
        .guards
        .iter()
        .rposition(|g| g.site == Some(s.site) && g.expect == s.expect && !g.exits)?;
    let last = j + 1 == a.guards.len();
    let inner = a.predicated_from == Some(j as u32 + 1);
    (last || inner).then_some(j as u32)
}

//! What nvcc does with a store that overwrites, under a condition, what
//! the thread has just stored: `x[i] = v; if (c) x[i] = w;` is one store
//! of `c ? w : v`, whatever `c` is for each lane.
//!
//! Measured (nvcc 13.0, `-O3 -arch=sm_90`, Nsight Compute on an H200;
//! `fixtures/groundtruth/sm_90/overwrite.cu`):
//! - with nothing between the two that may read or write the bytes (the
//!   condition may reload them: that load is forwarded), one `STG` runs,
//!   counted on the `if`'s line (rodinia particlefilter's `ind[...] =
//!   abs(...); if (ind[...] >= max_size) ind[...] = 0;`, measured 8.00x on
//!   the `if` line);
//! - with a load between that may alias (`if (flag[i] > 0)` through
//!   another pointer), both stores run, the second unconditional, on the
//!   `if`'s line;
//! - an `if` with an `else`, or a body of more than that one store, is a
//!   branch: nothing changes (the lowering marks only a lone store,
//!   `Access::select_at`);
//! - so is a pair that sits directly in another `if`'s block (`if (j < m)
//!   { x[j] = v; if (x[j] <= e) x[j] = 1; }`, rodinia/polybench
//!   correlation's `std[j]`): the inner store runs only in the warps that
//!   take it. A pair in a loop's body, the loop in an `if`, is merged
//!   (particlefilter);
//! - in a loop nvcc unrolls, the merged stores are counted on the `for`
//!   line or the `if` line, copy by copy (not modelled: the `if` line;
//!   with the SASS, `sass.rs` puts them where the listing has them);
//!   two straight-line kernels count theirs on the first store's line
//!   (not modelled either);
//! - `if (c) x[i] = v; else x[i] = w;` is one store of a select too, run
//!   by every lane and counted on the `else` store's line (measured in
//!   `fixtures/groundtruth/sm_90/forward_branches.cu`, also when the `else`
//!   branch first loads `x[i]`, which stays its own, predicated load); not
//!   where the `then` branch may touch the bytes after its store, nor
//!   where the `if` sits directly in another `if`'s block (as above);
//! - a store the thread overwrites unconditionally (`x[j] /= c; x[j] =
//!   sqrt(x[j]);`, the load between forwarded) is not emitted: only the
//!   last store runs (dead-store elimination).

use super::reload::{may_write, stores_bytes_of};
use crate::ir::{Access, Kernel, Op, RemovedWhy, Space};

/// Whether `b` stores the bytes store `a` stored, in the same loop
/// iteration, under `a`'s guards and `extra` more (0: in every case `a`
/// did, so `a`'s value is never read from memory; 1: an `if`'s).
fn stores_over(a: &Access, b: &Access, extra: usize) -> bool {
    stores_bytes_of(a, b)
        && b.guards.len() == a.guards.len() + extra
        && a.guards.iter().zip(&b.guards).all(|(x, y)| x.same(y))
}

/// Whether access `x`, between the two stores, may read or write their
/// bytes (a load of another object that may alias counts: the first
/// store must reach memory before it).
fn may_touch(k: &Kernel, store: &Access, x: &Access) -> bool {
    if x.op == Op::Load {
        let same = x.obj == store.obj;
        let aliasing = {
            let (so, xo) = (&k.objects[store.obj], &k.objects[x.obj]);
            let restrict = |o: &crate::ir::MemObject| o.decl_text.contains("restrict");
            match (so.space, xo.space) {
                (Space::Global, Space::Global) => !(restrict(so) && restrict(xo)),
                (_, Space::Generic) | (Space::Generic, _) => true,
                _ => false,
            }
        };
        return same || aliasing;
    }
    may_write(k, store, x)
}

/// Drops each store the thread overwrites before anything may read it,
/// and makes each conditional overwrite one unconditional store of a
/// select on its `if`'s line, dropping the first store where nothing
/// between may touch the bytes (see the module doc).
pub fn merge_overwrites(k: &mut Kernel) {
    let n = k.accesses.len();
    let mut drop: Vec<Option<RemovedWhy>> = vec![None; n];
    for j in 0..n {
        let b = &k.accesses[j];
        if b.op != Op::Store
            || b.unknown.is_some()
            || k.objects[b.obj].volatile
            || !matches!(k.objects[b.obj].space, Space::Global | Space::Shared)
        {
            continue;
        }
        if b.select_at.is_none() {
            if let Some(i) = replaced(k, &drop, j) {
                drop[i] = Some(RemovedWhy::Merged {
                    into: k.accesses[j].span,
                });
            } else if let Some(i) = other_branch(k, &drop, j) {
                drop[i] = Some(RemovedWhy::Merged {
                    into: k.accesses[j].span,
                });
                let b = &mut k.accesses[j];
                b.guards.pop();
                b.predicated_from = None;
            }
            continue;
        }
        let Some(at) = b.select_at else { continue };
        if b.op != Op::Store
            || b.unknown.is_some()
            || k.objects[b.obj].volatile
            || !matches!(k.objects[b.obj].space, Space::Global | Space::Shared)
        {
            continue;
        }
        let mut between = false;
        let mut first = None;
        for i in (0..j).rev().take(crate::budget::MAX_FUSE_WINDOW) {
            let a = &k.accesses[i];
            if a.region != b.region {
                break;
            }
            if drop[i].is_some() {
                continue;
            }
            if stores_over(a, b, 1) {
                first = Some(i);
                break;
            }
            if may_touch(k, b, a) {
                between = true;
            }
        }
        let Some(i) = first else { continue };
        // Directly in another `if`'s block (in the innermost loop's body,
        // or in the kernel's when none): a branch, as measured.
        let a = &k.accesses[i];
        if a.guards.len() > loop_entry_guards(k, a) {
            continue;
        }
        if !between {
            drop[i] = Some(RemovedWhy::Merged { into: at });
        }
        let keep = k.accesses[i].guards.clone();
        let b = &mut k.accesses[j];
        b.guards = keep;
        b.predicated_from = None;
        b.span = at;
    }
    // A load forwarded from a store merged here now takes its value from
    // the store that runs.
    let moved: Vec<(crate::ir::Span, crate::ir::Span)> = k
        .accesses
        .iter()
        .zip(&drop)
        .filter_map(|(a, why)| match why {
            Some(RemovedWhy::Merged { into }) => Some((a.span, *into)),
            _ => None,
        })
        .collect();
    super::drop_marked(k, &drop);
    for r in &mut k.removed {
        if let RemovedWhy::Forwarded { from } = &mut r.why {
            if let Some((_, into)) = moved.iter().find(|(s, _)| s == from) {
                *from = *into;
            }
        }
    }
}

/// How many guards `a`'s innermost loop is entered under (0 outside
/// loops): an access with more sits in an `if` inside that body.
pub(super) fn loop_entry_guards(k: &Kernel, a: &Access) -> usize {
    a.loops
        .last()
        .and_then(|l| k.loops.get(*l))
        .map_or(0, |l| l.entry_guards.len())
}

/// The earlier store that store `j` replaces with nothing between that
/// may read or write its bytes, if any (dropped ones skipped).
fn replaced(k: &Kernel, drop: &[Option<RemovedWhy>], j: usize) -> Option<usize> {
    let b = &k.accesses[j];
    for i in (0..j).rev().take(crate::budget::MAX_FUSE_WINDOW) {
        let a = &k.accesses[i];
        if a.region != b.region {
            return None;
        }
        if drop[i].is_some() {
            continue;
        }
        if stores_over(a, b, 0) {
            return Some(i);
        }
        if may_touch(k, b, a) {
            return None;
        }
    }
    None
}

/// The store of `j`'s bytes on the other branch of the `if` store `j` is
/// the `else` branch of (see the module doc): the same bytes under the
/// same guards but the last, which is the `if`'s condition with the
/// other sense; nothing after it on its branch may touch the bytes, and
/// the `if` is not directly in another `if`'s block.
fn other_branch(k: &Kernel, drop: &[Option<RemovedWhy>], j: usize) -> Option<usize> {
    let b = &k.accesses[j];
    let (else_guard, outer) = b.guards.split_last()?;
    if else_guard.expect || else_guard.site.is_some_and(|s| k.branched_ifs.contains(&s)) {
        return None;
    }
    if outer.len() > loop_entry_guards(k, b) {
        return None;
    }
    let on_then = |x: &Access| {
        x.guards
            .iter()
            .any(|g| g.expect && g.cond.same(&else_guard.cond))
    };
    for i in (0..j).rev().take(crate::budget::MAX_FUSE_WINDOW) {
        let a = &k.accesses[i];
        if a.region != b.region {
            return None;
        }
        if drop[i].is_some() {
            continue;
        }
        let then_store = stores_bytes_of(a, b)
            && a.guards.len() == b.guards.len()
            && a.guards.split_last().is_some_and(|(g, rest)| {
                g.expect
                    && g.cond.same(&else_guard.cond)
                    && rest.iter().zip(outer).all(|(x, y)| x.same(y))
            });
        if then_store {
            return Some(i);
        }
        // The `else` branch's own accesses run on the other path; one
        // after the `then` store on its path, or before the `if`, ends
        // the search where it may touch the bytes.
        if on_then(a) && may_touch(k, b, a) {
            return None;
        }
        if !on_then(a)
            && !a
                .guards
                .iter()
                .any(|g| !g.expect && g.cond.same(&else_guard.cond))
        {
            return None;
        }
    }
    None
}

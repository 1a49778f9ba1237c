//! What nvcc does with a load of an address it has already loaded, or
//! that the same thread has just stored: it keeps the value in a register
//! and emits no load.
//!
//! Measured (nvcc 13.0, `-O3 -arch=sm_90`, SASS and Nsight Compute;
//! `fixtures/groundtruth/sm_90/reload.cu`):
//! - `x = a[2t]; …; z = a[2t];` is one `LDG` (one `LDS` in shared memory),
//!   also within one expression and when the second load is under an `if`
//!   the first is not;
//! - a store through another global pointer between them keeps both
//!   (unless both pointers are `__restrict__`), and so does a barrier; a
//!   store to another `__shared__` array does not;
//! - the same for a load of what the thread stored (forwarded:
//!   `fixtures/groundtruth/sm_90/forward.cu`; `a[2t] += b[t]` twice then
//!   `out[t] = a[2t]` loads `a` never), unless the store is under an `if`
//!   the load is not.
//!
//! - a store of the address on both branches of an `if`/`else` the load
//!   is not under forwards too (`fixtures/groundtruth/sm_90/forward_branches.cu`,
//!   llm.c's softmax `S[i] = … ; row_l += S[i]`).
//!
//! The later load is dropped: the hardware runs no instruction for it.

use crate::ir::{Access, Guard, Kernel, MemObject, Op, RemovedWhy, Space};

/// Whether `b`, between an earlier load and the load `load` of the same
/// address, may write the loaded bytes (see the module doc).
pub(super) fn may_write(k: &Kernel, load: &Access, b: &Access) -> bool {
    if b.op == Op::Load {
        return false;
    }
    let (lo, bo) = (&k.objects[load.obj], &k.objects[b.obj]);
    let restrict = |o: &MemObject| o.decl_text.contains("restrict");
    match (lo.space, bo.space) {
        (Space::Shared, Space::Shared) => load.obj == b.obj,
        (Space::Global, Space::Global) => load.obj == b.obj || !(restrict(lo) && restrict(bo)),
        // A generic pointer may point into either space.
        (Space::Global | Space::Shared, Space::Generic) => true,
        _ => false,
    }
}

/// Whether the earlier load or store `a` leaves `b`'s value in a
/// register: the same bytes, in the same loop iteration, on every path
/// that reaches `b`.
fn same_load(a: &Access, b: &Access) -> bool {
    matches!(a.op, Op::Load | Op::Store)
        && a.obj == b.obj
        && a.width == b.width
        && a.loops == b.loops
        && a.unknown.is_none()
        && a.offset.same(&b.offset)
        && a.guards.len() <= b.guards.len()
        && a.guards.iter().zip(&b.guards).all(|(x, y)| x.same(y))
}

/// Whether `a` is a store of `b`'s bytes (its object, width and offset)
/// in the same loop iteration, its address known.
pub(super) fn stores_bytes_of(a: &Access, b: &Access) -> bool {
    a.op == Op::Store
        && a.obj == b.obj
        && a.width == b.width
        && a.loops == b.loops
        && a.unknown.is_none()
        && a.offset.same(&b.offset)
}

/// Where `a` stores `b`'s bytes under `b`'s guards and exactly one more
/// (one branch of an `if` `b` is not under): that guard.
fn branch_store<'a>(a: &'a Access, b: &Access) -> Option<&'a Guard> {
    if !stores_bytes_of(a, b) || a.guards.len() != b.guards.len() + 1 {
        return None;
    }
    // `b`'s guards, in any order (a `break`'s guard may come after the
    // branch's), and one more.
    let extra: Vec<&Guard> = a
        .guards
        .iter()
        .filter(|g| !b.guards.iter().any(|h| g.same(h)))
        .collect();
    let covered = b.guards.iter().all(|h| a.guards.iter().any(|g| g.same(h)));
    match extra[..] {
        [g] if covered => Some(g),
        _ => None,
    }
}

/// Drops the loads nvcc does not emit again (see the module doc).
pub fn drop_reloads(k: &mut Kernel) {
    let n = k.accesses.len();
    let mut drop: Vec<Option<RemovedWhy>> = vec![None; n];
    for j in 0..n {
        let b = &k.accesses[j];
        let space = k.objects[b.obj].space;
        if b.op != Op::Load
            || b.unknown.is_some()
            || k.objects[b.obj].volatile
            || !matches!(space, Space::Global | Space::Shared)
        {
            continue;
        }
        let earlier = (0..j).rev().take(crate::budget::MAX_FUSE_WINDOW);
        // Stores of the same bytes under one guard more than the load's:
        // the branch each covers (a store on the other branch completes it).
        let mut branches: Vec<&Guard> = Vec::new();
        for i in earlier {
            let a = &k.accesses[i];
            // A barrier or fence. (A call the engine cannot see into might
            // write the bytes too: dropping the reload then misses a cost,
            // it never invents one.)
            if a.region != b.region {
                break;
            }
            if drop[i].is_none() && same_load(a, b) {
                drop[j] = Some(if a.op == Op::Load {
                    RemovedWhy::Reloaded { from: a.span }
                } else {
                    RemovedWhy::Forwarded { from: a.span }
                });
                break;
            }
            if let Some(g) = branch_store(a, b) {
                if branches
                    .iter()
                    .any(|h| h.expect != g.expect && h.cond.same(&g.cond))
                {
                    drop[j] = Some(RemovedWhy::Forwarded { from: a.span });
                    break;
                }
                branches.push(g);
                continue;
            }
            if may_write(k, b, a) {
                break;
            }
        }
    }
    super::drop_marked(k, &drop);
}

//! What nvcc does with an `if`/`else` whose two sides make the same
//! accesses: `if (c) a[i] = x; else a[j] = y;` is one store to `c ? i :
//! j`, run by every lane that reaches the `if` (LLVM sinks the two stores
//! into one below the branch, the address a select), counted on the
//! `else` access's line.
//!
//! Measured (nvcc 13.0, `-O3 -arch=sm_90`, Nsight Compute on an H200,
//! `fixtures/groundtruth/sm_90/predication_review*.cu`):
//! `ifelse_same_array` (`a[t] = 1` / `a[t + 256] = 2`: one `STG`, all 8
//! warps, on the `else` line), `ifelse_shared_to_global` (a shared load
//! and a global store on each side: one `LDS` and one `STG`, both on the
//! `else` line) and `ifelse_shared_loads` (one `LDS`, which nvcc counts on
//! the line that uses the value; warplint says the `else` line);
//! `predication_review3.cu` (also at the kernel's end, after a barrier,
//! per inlined call; in loops and inlined functions on the `then` line;
//! but two shared stores of different values stay two predicated `STS`).
//! Not where the `if` sits directly in another `if`'s block (polybench
//! fdtd2d's `if (i == 0) … else …` inside its bounds check kept its two
//! stores, measured on an H100; `overwrite.rs` found the same).
//! The sides' accesses are paired from their ends while alike in array,
//! operation and width (no shared store); those before the pairs stay
//! (`ifelse_2_1`: two stores against one, the second and the `else`
//! store one `STG`, the first predicated). Not where a side holds a
//! nested `if` or jump, nor where a side stores over what the thread
//! stored just before the `if` (`overwrite.cu`'s `else_branch`,
//! `overwrite.rs`'s case, keeps its two); an `if` with a loop on a side is
//! branched, its accesses each their own (`else_only_work`); the same
//! address on both sides is `overwrite.rs`'s case, also when a side loads
//! first.

use super::reload::stores_bytes_of;
use crate::ir::{Access, Expr, Kernel, Op, RemovedWhy, Space, Span};

/// An `if`'s condition and the call it was inlined through (`None`: the
/// kernel's own body).
type IfOf = (Span, Option<Span>);

/// Makes each `if`/`else` whose sides' accesses pair off one access per
/// pair, its address a select (see the module doc).
pub fn sink_common_accesses(k: &mut Kernel) {
    let n = k.accesses.len();
    let mut drop: Vec<Option<RemovedWhy>> = vec![None; n];
    // Each `if`, once per call it was inlined through, with the accesses
    // under it (one pass: a kernel's accesses are not read again per `if`).
    let key = |s: &Span| (s.file, s.line, s.column);
    let mut under: std::collections::HashMap<IfOf, Vec<usize>> = Default::default();
    for (i, a) in k.accesses.iter().enumerate() {
        let call = a.inlined_at.as_ref().map(|x| x.call);
        let mut sites: Vec<Span> = a.guards.iter().filter_map(|g| g.site).collect();
        sites.sort_by_key(key);
        sites.dedup();
        for site in sites {
            under.entry((site, call)).or_default().push(i);
        }
    }
    let mut ifs: Vec<(IfOf, Vec<usize>)> = under.into_iter().collect();
    ifs.sort_by_key(|((s, c), _)| (key(s), c.as_ref().map(key)));
    for ((site, _), members) in ifs {
        if k.branched_ifs.contains(&site) || k.branches.iter().any(|b| b.span == site) {
            continue;
        }
        let Some((then, other)) = sides(k, site, &members) else {
            continue;
        };
        // Paired from the sides' ends, as LLVM sinks: the accesses before
        // the pairs stay on their sides (`ifelse_2_1`: the `then` side's
        // second store and the `else` store are one, its first predicated).
        let pairs: Vec<(usize, usize)> = then
            .iter()
            .rev()
            .zip(other.iter().rev())
            .map(|(&i, &j)| (i, j))
            .take_while(|&(i, j)| alike(k, i, j))
            .collect();
        if pairs.is_empty() {
            continue;
        }
        // A side that stores over what the thread stored just before the
        // `if` is `overwrite.rs`'s (measured apart: `overwrite.cu`'s
        // `else_branch` keeps its two stores).
        // Directly in another `if`'s block (beyond what the innermost loop
        // is entered under; an early `return` aside): two branches, as
        // measured (polybench fdtd2d's `if (i == 0) ey[..] = ..; else
        // ey[..] = ..;` inside its bounds check: two `STG`s), as for
        // `overwrite.rs`'s pairs.
        let a = &k.accesses[pairs[0].1];
        let conditions = a.guards.iter().filter(|g| !g.exits).count() - 1;
        if conditions > super::overwrite::loop_entry_guards(k, a) {
            continue;
        }
        let first = then.first().copied().unwrap_or(0);
        let overwrites = (0..first)
            .rev()
            .take(crate::budget::MAX_FUSE_WINDOW)
            .any(|p| {
                then.iter()
                    .chain(&other)
                    .any(|&x| stores_bytes_of(&k.accesses[p], &k.accesses[x]))
            });
        if overwrites {
            continue;
        }
        for (i, j) in pairs {
            let side = |x: &Access| x.guards.iter().position(|g| g.site == Some(site));
            let Some(cond) = side(&k.accesses[i]).map(|p| k.accesses[i].guards[p].cond.clone())
            else {
                continue;
            };
            // nvcc counts it on the `else` line in a kernel's body, on the
            // `then` line in a loop or an inlined function (measured).
            let (a, b) = (&k.accesses[i], &k.accesses[j]);
            let on_then = !b.loops.is_empty() || b.inlined_at.is_some();
            let offset = Expr::select(cond, a.offset.clone(), b.offset.clone());
            let (keep, gone) = if on_then { (i, j) } else { (j, i) };
            let Some(at) = side(&k.accesses[keep]) else {
                continue;
            };
            let kept = &mut k.accesses[keep];
            kept.offset = offset;
            kept.guards.remove(at);
            kept.predicated_from = None;
            drop[gone] = Some(RemovedWhy::Merged { into: kept.span });
        }
    }
    super::drop_marked(k, &drop);
}

/// The accesses of `site`'s `then` and `else` sides among `members` (the
/// accesses under it inlined through one call), in order, where each sits
/// directly in one of them (no nested `if`, `break` or `return` guard
/// after the side's) and the two sides share the guards before it;
/// `None` otherwise.
fn sides(k: &Kernel, site: Span, members: &[usize]) -> Option<(Vec<usize>, Vec<usize>)> {
    let (mut then, mut other) = (Vec::new(), Vec::new());
    let mut outer: Option<&[crate::ir::Guard]> = None;
    for &i in members {
        let a = &k.accesses[i];
        let Some(at) = a.guards.iter().position(|g| g.site == Some(site)) else {
            continue;
        };
        // After it only an early `return`'s guards (the lowering keeps
        // those last).
        if a.guards[at + 1..].iter().any(|g| !g.exits) {
            return None;
        }
        let before = &a.guards[..at];
        match outer {
            None => outer = Some(before),
            Some(o) if o.len() == before.len() && o.iter().zip(before).all(|(x, y)| x.same(y)) => {}
            Some(_) => return None,
        }
        if a.guards[at].expect {
            if !other.is_empty() {
                return None; // a `then` access after the `else` side began
            }
            then.push(i);
        } else {
            other.push(i);
        }
    }
    Some((then, other))
}

/// Whether accesses `i` (`then`) and `j` (`else`) are one instruction's
/// two forms: the same array, operation, width and loops, and nothing
/// that keeps them apart (a volatile or generic array, a cache hint, an
/// access nvcc merges across iterations, an unknown address, a store to
/// shared memory: nvcc kept two predicated `STS` for different values,
/// and whether the values are the same is not known here).
fn alike(k: &Kernel, i: usize, j: usize) -> bool {
    let (a, b): (&Access, &Access) = (&k.accesses[i], &k.accesses[j]);
    let o = &k.objects[a.obj];
    a.obj == b.obj
        && a.op == b.op
        && a.width == b.width
        && a.loops == b.loops
        && a.unrolled == 1
        && b.unrolled == 1
        && !a.hinted
        && !b.hinted
        && a.unknown.is_none()
        && b.unknown.is_none()
        && a.select_at.is_none()
        && !o.volatile
        && match (a.op, o.space) {
            (Op::Store, Space::Shared) => false,
            (_, space) => matches!(space, Space::Global | Space::Shared),
        }
}

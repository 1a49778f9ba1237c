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
//! the line that uses the value; warplint says the `else` line). Only
//! where the two sides' accesses pair off in order, alike in array,
//! operation and width, and the sides hold nothing else that accesses
//! memory, and where an access follows the `if` (one that ends the kernel
//! stays a branch, `overwrite.cu`'s `else_branch`): a side of three
//! stores against one of one stays two
//! predicated sides (`ifelse_2_1`); an `if` with a loop on a side is
//! branched, its accesses each their own (`else_only_work`); the same
//! address on both sides is `overwrite.rs`'s case, also when a side loads
//! first.

use crate::ir::{Access, Expr, Kernel, RemovedWhy, Space, Span};

/// Makes each `if`/`else` whose sides' accesses pair off one access per
/// pair, on the `else` side's span, its address a select (see the module
/// doc).
pub fn sink_common_accesses(k: &mut Kernel) {
    let n = k.accesses.len();
    let mut drop: Vec<Option<RemovedWhy>> = vec![None; n];
    let mut sites: Vec<Span> = k
        .accesses
        .iter()
        .filter_map(|a| a.guards.last().and_then(|g| g.site))
        .collect();
    sites.sort_by_key(|s| (s.file, s.line, s.column));
    sites.dedup();
    for site in sites {
        if k.branched_ifs.contains(&site) || k.branches.iter().any(|b| b.span == site) {
            continue;
        }
        let Some((then, other)) = sides(k, site) else {
            continue;
        };
        if then.len() != other.len() || then.is_empty() {
            continue;
        }
        // An `if`/`else` that ends the kernel stays a branch (measured,
        // `overwrite.cu`'s `else_branch`): some access must follow it, or
        // the loop it sits in go round again.
        let last = other.iter().chain(&then).max().copied().unwrap_or(0);
        let follows = last + 1 < n || !k.accesses[last].loops.is_empty();
        if !follows {
            continue;
        }
        if !then.iter().zip(&other).all(|(&i, &j)| alike(k, i, j)) {
            continue;
        }
        for (i, j) in then.into_iter().zip(other) {
            let cond = k.accesses[i].guards.last().map(|g| g.cond.clone());
            let Some(cond) = cond else { continue };
            let taken = k.accesses[i].offset.clone();
            let b = &mut k.accesses[j];
            b.offset = Expr::select(cond, taken, b.offset.clone());
            b.guards.pop();
            b.predicated_from = None;
            drop[i] = Some(RemovedWhy::Merged { into: b.span });
        }
    }
    super::drop_marked(k, &drop);
}

/// The accesses of `site`'s `then` and `else` sides, in order, where every
/// access under the `if` sits directly in one of them (no nested `if`,
/// `break` or `return` guard after the side's) and the two sides share
/// the guards before it; `None` otherwise.
fn sides(k: &Kernel, site: Span) -> Option<(Vec<usize>, Vec<usize>)> {
    let (mut then, mut other) = (Vec::new(), Vec::new());
    let mut outer: Option<&[crate::ir::Guard]> = None;
    for (i, a) in k.accesses.iter().enumerate() {
        let Some(at) = a.guards.iter().position(|g| g.site == Some(site)) else {
            continue;
        };
        if at + 1 != a.guards.len() {
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
/// access nvcc merges across iterations, an unknown address).
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
        && matches!(o.space, Space::Global | Space::Shared)
}

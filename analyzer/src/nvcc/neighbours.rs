//! What nvcc does to neighbouring elements of one shared array that one
//! thread writes (or reads) one after the other: `s[2t] = a; s[2t+1] = b;`
//! is one 8-byte store.
//!
//! Measured (nvcc 13.0, `-O3 -arch=sm_90`, SASS and Nsight Compute;
//! `fixtures/groundtruth/sm_90/neighbours.cu`):
//! - two neighbouring floats stored or loaded are one `STS.64`/`LDS.64`
//!   (in either order), four are one `STS.128`;
//! - only where the first is aligned to the whole (`s[2t+1]`, `s[2t+2]`
//!   stay two 4-byte stores);
//! - two neighbouring `__half`s stored are one 4-byte store; loaded, they
//!   stay two 2-byte loads;
//! - a store to another shared array between them keeps them apart.
//!
//! The merged access takes the place of the first load (the last store)
//! of the run, the others are dropped; global memory is left alone (nvcc
//! cannot prove a pointer's alignment).

use crate::ir::{Access, BinOp, Expr, ExprKind, Kernel, Op, Space};

use super::unroll::{const_align, MAX_BYTES, SHARED_BASE_ALIGN};

/// The most elements one vector access holds (`.v4`).
const MAX_ELEMENTS: usize = super::unroll::MAX_ELEMENTS as usize;

/// `e` as `rest + c` with constants gathered through sums and through
/// products by a constant (`(2t + 1) * 4` is `(2t) * 4 + 4`), `rest` `None`
/// when nothing but the constant is left.
fn normal(e: &Expr) -> (Option<Expr>, i64) {
    match e.kind() {
        ExprKind::Const(v) => (None, *v),
        ExprKind::Bin(BinOp::Add, a, b) => {
            let ((ra, ca), (rb, cb)) = (normal(a), normal(b));
            let rest = match (ra, rb) {
                (Some(x), Some(y)) => Some(Expr::plus(x, y)),
                (x, None) | (None, x) => x,
            };
            (rest, ca.wrapping_add(cb))
        }
        ExprKind::Bin(BinOp::Mul, a, k) if k.as_const().is_some() => {
            let k = k.as_const().unwrap_or(1);
            let (r, c) = normal(a);
            (r.map(|r| Expr::times(r, Expr::konst(k))), c.wrapping_mul(k))
        }
        _ => (Some(e.clone()), 0),
    }
}

/// The constant `b.offset - a.offset`, when the two differ by one.
pub(super) fn distance(a: &Access, b: &Access) -> Option<i64> {
    let ((ra, ca), (rb, cb)) = (normal(&a.offset), normal(&b.offset));
    let same = match (ra, rb) {
        (None, None) => true,
        (Some(x), Some(y)) => x.same(&y),
        _ => false,
    };
    same.then(|| cb.wrapping_sub(ca))
}

/// Whether `a` and `b` are the same kind of access in the same place, and
/// two source accesses (the pieces of one aggregate copy are moved as the
/// front end splits them).
fn alike(a: &Access, b: &Access) -> bool {
    a.span != b.span
        && a.obj == b.obj
        && a.op == b.op
        && a.width == b.width
        && a.region == b.region
        && a.loops == b.loops
        && a.unknown.is_none()
        && b.unknown.is_none()
        && a.guards.len() == b.guards.len()
        && a.guards.iter().zip(&b.guards).all(|(x, y)| x.same(y))
}

/// Merges neighbouring shared elements (see the module doc).
pub fn merge_neighbours(k: &mut Kernel) {
    let n = k.accesses.len();
    let mut done = vec![false; n];
    let mut drop: Vec<Option<crate::ir::RemovedWhy>> = vec![None; n];
    for i in 0..n {
        let a = &k.accesses[i];
        let w = u64::from(a.width);
        let obj = &k.objects[a.obj];
        if done[i]
            || obj.space != Space::Shared
            || obj.volatile
            || !matches!(a.op, Op::Load | Op::Store)
            || a.unknown.is_some()
            || w < 2
            || (w < 4 && a.op == Op::Load)
            || w * 2 > MAX_BYTES
        {
            continue;
        }
        // The run: later alike accesses at constant distances, up to the
        // first other shared access that may stand between them.
        let mut run: Vec<(usize, i64)> = vec![(i, 0)];
        let window = k
            .accesses
            .iter()
            .enumerate()
            .skip(i + 1)
            .take(crate::budget::MAX_FUSE_WINDOW);
        for (j, b) in window {
            if b.region != a.region {
                break;
            }
            if k.objects[b.obj].space != Space::Shared {
                continue;
            }
            if !done[j] && alike(a, b) {
                if let Some(d) = distance(a, b) {
                    run.push((j, d));
                    continue;
                }
            }
            // Loads pass loads; anything else of shared memory stops it.
            if a.op == Op::Load && b.op == Op::Load {
                continue;
            }
            break;
        }
        if run.len() < 2 {
            continue;
        }
        // Elements `lo, lo + w, …` each once, contiguous from the lowest.
        let mut at: Vec<i64> = run.iter().map(|r| r.1).collect();
        at.sort_unstable();
        at.dedup();
        if at.len() != run.len() || at.windows(2).any(|p| p[1] - p[0] != w as i64) {
            continue;
        }
        let lo = at[0];
        let first = run.iter().find(|r| r.1 == lo).map(|r| r.0).unwrap_or(i);
        // The run's start must be aligned to the merged width.
        let (rest, c) = normal(&k.accesses[first].offset);
        let rest_align = match rest.map(|r| super::unroll::multiple_of(&r, u32::MAX)) {
            None | Some(0) => SHARED_BASE_ALIGN,
            Some(m) => m.min(SHARED_BASE_ALIGN),
        };
        let align = rest_align.min(const_align(c));
        let mut count = at.len().min(MAX_ELEMENTS);
        while count >= 2
            && (!(count as u64 * w).is_power_of_two()
                || count as u64 * w > MAX_BYTES
                || !align.is_multiple_of(count as u64 * w))
        {
            count -= 1;
        }
        if count < 2 || count != at.len() {
            continue;
        }
        // A merged load issues where its first member was read, a merged
        // store where its last member is written.
        let lead = if a.op == Op::Store {
            run.iter().map(|r| r.0).max().unwrap_or(i)
        } else {
            i
        };
        let offset = k.accesses[first].offset.clone();
        let into = k.accesses[lead].span;
        for &(m, _) in &run {
            done[m] = true;
            drop[m] = (m != lead).then_some(crate::ir::RemovedWhy::Merged { into });
        }
        let l = &mut k.accesses[lead];
        l.width = (count as u64 * w) as u32;
        l.offset = offset;
    }
    super::drop_marked(k, &drop);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Atom;

    #[test]
    fn constants_are_gathered_through_products() {
        let t = Expr::atom(Atom::Param(0));
        let two_t = Expr::times(Expr::konst(2), t.clone());
        let e = Expr::times(Expr::plus(two_t.clone(), Expr::konst(1)), Expr::konst(4));
        let (r, c) = normal(&e);
        assert_eq!(c, 4);
        let (r0, c0) = normal(&Expr::times(two_t, Expr::konst(4)));
        assert_eq!(c0, 0);
        assert!(r.unwrap().same(&r0.unwrap()));
    }
}

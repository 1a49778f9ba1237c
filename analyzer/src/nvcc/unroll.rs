//! What nvcc does to a loop it unrolls over consecutive shared-memory
//! elements of one thread: `for (k = 0; k < 4; k++) s[t * 4 + k] = …` is one
//! 16-byte store, not four 4-byte ones.
//!
//! Measured (nvcc 13.0, `-O3 -arch=sm_90`, SASS and Nsight Compute;
//! `fixtures/groundtruth/sm_90/unrolled_shared.cu`):
//! - a constant-trip loop whose shared access advances one element per
//!   iteration becomes vector accesses of up to 4 elements and 16 bytes
//!   (`STS.128`/`LDS.128` for floats, two elements of a `double`, four of a
//!   `short`: `STS.64`), with or without `#pragma unroll` (32 trips: eight
//!   `STS.128`), on a static, `extern` or raw `__shared__` buffer;
//! - each vector starts where the address is aligned to its size: an offset
//!   known to be a multiple of 8 bytes only gives 8-byte accesses;
//! - 1-byte elements stay 1-byte accesses;
//! - loads merge beside loads of another shared array; stores do not merge
//!   beside stores to another `__shared__` array, but do beside stores
//!   through another pointer into the same buffer at a distant constant
//!   offset; a loop that reads and writes the same array merges neither.
//!
//! The merged access keeps its place in the loop and runs in one iteration
//! of every `n` (a guard on the loop variable), `n` elements wide.

use crate::ir::{Access, Atom, BinOp, Expr, ExprKind, Guard, Kernel, Op, Space};
use crate::symbolic::linear::coefficient;

/// The most elements a PTX vector access holds (`.v4`).
pub(super) const MAX_ELEMENTS: u64 = 4;
/// The widest access, in bytes.
pub(super) const MAX_BYTES: u64 = 16;
/// The alignment nvcc gives a `__shared__` buffer it places (measured:
/// 16-byte accesses at offset 0 of static and `extern` arrays).
pub(super) const SHARED_BASE_ALIGN: u64 = 16;

/// The largest power of two that the constant `c` is a multiple of, at
/// most the buffer's alignment.
pub(super) fn const_align(c: i64) -> u64 {
    if c == 0 {
        SHARED_BASE_ALIGN
    } else {
        (1u64 << c.unsigned_abs().trailing_zeros().min(62)).min(SHARED_BASE_ALIGN)
    }
}

/// The largest power of two (up to 2^62) that `e` is known to be a
/// multiple of for every lane, with loop variable `var` taken as 0; `0`
/// when `e` is known to be 0.
pub(super) fn multiple_of(e: &Expr, var: u32) -> u64 {
    const ANY: u64 = 1 << 62;
    let pow2 = |v: i64| -> u64 {
        if v == 0 {
            0
        } else {
            1u64 << v.unsigned_abs().trailing_zeros().min(62)
        }
    };
    let gcd = |a: u64, b: u64| match (a, b) {
        (0, x) | (x, 0) => x,
        (x, y) => x.min(y),
    };
    match e.kind() {
        ExprKind::Const(v) => pow2(*v),
        ExprKind::Atom(Atom::LoopVar(v)) if *v == var => 0,
        ExprKind::Atom(_) => 1,
        ExprKind::Un(crate::ir::UnOp::Neg, a) => multiple_of(a, var),
        ExprKind::Bin(BinOp::Add | BinOp::Sub, a, b) => {
            gcd(multiple_of(a, var), multiple_of(b, var))
        }
        ExprKind::Bin(BinOp::Mul, a, b) => match (multiple_of(a, var), multiple_of(b, var)) {
            (0, _) | (_, 0) => 0,
            (x, y) => x.saturating_mul(y).min(ANY),
        },
        ExprKind::Bin(BinOp::Shl, a, b) => match (multiple_of(a, var), b.as_const()) {
            (0, _) => 0,
            (x, Some(s)) if (0..62).contains(&s) => x.saturating_mul(1 << s).min(ANY),
            _ => 1,
        },
        ExprKind::Select(_, a, b) => gcd(multiple_of(a, var), multiple_of(b, var)),
        _ => 1,
    }
}

/// Loop `l`'s counting variable: one that starts at a constant, steps by
/// one and bounds the loop (`k < N`), with its first value and trip count.
pub(crate) fn counter(k: &Kernel, l: usize) -> Option<(u32, i64, i64)> {
    let lp = k.loops.get(l)?;
    // Iterations apart across a barrier or a call nvcc does not merge
    // across, or left early, are not merged.
    if !lp.breaks.is_empty() || lp.post_cond.is_some() || lp.splits_regions {
        return None;
    }
    let cond = lp.pre_cond.as_ref()?;
    let ExprKind::Bin(op @ (BinOp::Lt | BinOp::Le), x, n) = cond.kind() else {
        return None;
    };
    let ExprKind::Atom(Atom::LoopVar(v)) = x.kind() else {
        return None;
    };
    let i = lp.vars.iter().position(|w| w == v)?;
    let start = lp.init.get(i)?.as_const()?;
    let next = lp.next.get(i)?;
    let steps_by_one = matches!(next.kind(), ExprKind::Bin(BinOp::Add, a, b)
        if matches!(a.kind(), ExprKind::Atom(Atom::LoopVar(w)) if w == v) && b.as_const() == Some(1));
    let end = n.as_const()? + i64::from(*op == BinOp::Le);
    (steps_by_one && end > start).then_some((*v, start, end - start))
}

/// Whether another access `b` in the loop keeps nvcc from merging `a`'s
/// iterations (see the module doc).
fn keeps_apart(k: &Kernel, a: &Access, b: &Access) -> bool {
    let other = &k.objects[b.obj];
    if other.space != Space::Shared {
        return false;
    }
    if b.region != a.region || b.op == Op::Atomic {
        return true;
    }
    match (a.op, b.op) {
        (Op::Load, Op::Load) => false,
        (Op::Store, Op::Store) if b.obj == a.obj => {
            // Through another pointer into the same buffer: only at a
            // constant distance past the bytes the vector covers.
            let (ra, ca) = super::fuse::split_const(&a.offset);
            let (rb, cb) = super::fuse::split_const(&b.offset);
            !(rb.same(&ra) && (cb - ca).unsigned_abs() >= MAX_BYTES * MAX_ELEMENTS)
        }
        _ => true,
    }
}

/// The accesses of a loop nvcc unrolls into vector accesses, widened (see
/// the module doc).
pub fn vectorise_unrolled(k: &mut Kernel) {
    let mut drop: Vec<Option<crate::ir::RemovedWhy>> = vec![None; k.accesses.len()];
    for i in 0..k.accesses.len() {
        let a = &k.accesses[i];
        let obj = &k.objects[a.obj];
        let w = u64::from(a.width);
        if obj.space != Space::Shared
            || obj.volatile
            || a.op == Op::Atomic
            || a.unknown.is_some()
            || w < 2
        {
            continue;
        }
        let Some(&l) = a.loops.last() else {
            continue;
        };
        let Some((var, start, trips)) = counter(k, l) else {
            continue;
        };
        let v = Expr::atom(Atom::LoopVar(var));
        if coefficient(&a.offset, Atom::LoopVar(var)).and_then(|c| c.as_const()) != Some(w as i64) {
            continue;
        }
        // Inside an `if` in the loop, or guarded by the loop variable:
        // whether the iterations still merge is not measured.
        let entry = k.loops[l].entry_guards.len();
        let reads_var = |g: &Guard| g.cond.atoms().contains(&Atom::LoopVar(var));
        if a.guards.len() != entry || a.guards.iter().any(reads_var) {
            continue;
        }
        let others = k
            .accesses
            .iter()
            .enumerate()
            .filter(|(j, b)| *j != i && b.loops.contains(&l));
        if others.clone().any(|(_, b)| keeps_apart(k, a, b)) {
            continue;
        }
        // The vector's start: the offset at the first iteration, within a
        // buffer nvcc aligns to 16 bytes.
        let first = (start as u64).wrapping_mul(w) as i64;
        let align = match multiple_of(&a.offset, var) {
            0 => SHARED_BASE_ALIGN,
            m => m.min(SHARED_BASE_ALIGN),
        };
        let align = align.min(const_align(first));
        let mut n = MAX_ELEMENTS.min(MAX_BYTES / w);
        while n >= 2 && (!(trips as u64).is_multiple_of(n) || !align.is_multiple_of(n * w)) {
            n /= 2;
        }
        if n < 2 {
            if let Some((p, n)) = pre_loop_read(k, i, l, var, start, trips) {
                join_pre_loop_read(k, (p, i), (var, start, trips), n, &mut drop);
            }
            continue;
        }
        let a = &mut k.accesses[i];
        a.width = (n * w) as u32;
        a.unrolled = n as u32;
        // Runs in the first iteration of every `n`.
        let phase = Expr::bin(
            BinOp::Rem,
            Expr::minus(v, Expr::konst(start)),
            Expr::konst(n as i64),
        );
        a.guards.push(Guard {
            cond: phase,
            expect: false,
            site: None,
            exits: false,
        });
        a.predicated_from = None;
    }
    super::drop_marked(k, &drop);
}

/// A load just before loop `l` of the element before the loop's first
/// (`total = red[m * 4]; for (sw = 1; sw < 4; sw++) total += red[m * 4 +
/// sw]`, flashinfer's router GEMM reduction): nvcc merges it with the
/// loop's loads (measured: one `LDS.128` on the first read's line,
/// `fixtures/groundtruth/sm_90/unrolled_loads.cu`). The read and the
/// vector's size, when the run of `trips + 1` elements is aligned.
fn pre_loop_read(
    k: &Kernel,
    i: usize,
    l: usize,
    var: u32,
    start: i64,
    trips: i64,
) -> Option<(usize, u64)> {
    let a = &k.accesses[i];
    if a.op != Op::Load {
        return None;
    }
    let (p, b) = k.accesses[..i]
        .iter()
        .enumerate()
        .rev()
        .find(|(_, b)| !b.loops.contains(&l))?;
    let outer = &a.loops[..a.loops.len().saturating_sub(1)];
    let entry = &k.loops[l].entry_guards;
    let same_guards =
        b.guards.len() == entry.len() && b.guards.iter().zip(entry).all(|(x, y)| x.same(y));
    if b.obj != a.obj
        || b.op != Op::Load
        || b.width != a.width
        || b.unknown.is_some()
        || b.region != a.region
        || b.loops != outer
        || !same_guards
    {
        return None;
    }
    let (ra, ca) = super::fuse::split_const(&at(&a.offset, var, start - 1));
    let (rb, cb) = super::fuse::split_const(&b.offset);
    if !(ra.same(&rb) && ca == cb) {
        return None;
    }
    let w = u64::from(a.width);
    let align = match multiple_of(&b.offset, var) {
        0 => SHARED_BASE_ALIGN,
        m => m.min(SHARED_BASE_ALIGN),
    };
    let total = trips as u64 + 1;
    let mut n = MAX_ELEMENTS.min(MAX_BYTES / w);
    while n >= 2 && (!total.is_multiple_of(n) || !align.is_multiple_of(n * w)) {
        n /= 2;
    }
    (n >= 2).then_some((p, n))
}

/// Widens the read before the loop (`p`) and the loop's load (`i`) to `n`
/// elements: the loop's runs where a vector starts, or not at all when the
/// read's vector covers every iteration.
fn join_pre_loop_read(
    k: &mut Kernel,
    (p, i): (usize, usize),
    (var, start, trips): (u32, i64, i64),
    n: u64,
    drop: &mut [Option<crate::ir::RemovedWhy>],
) {
    let width = (n * u64::from(k.accesses[p].width)) as u32;
    let b = &mut k.accesses[p];
    b.width = width;
    b.unrolled = n as u32;
    if trips as u64 + 1 == n {
        drop[i] = Some(crate::ir::RemovedWhy::Merged { into: b.span });
        return;
    }
    let a = &mut k.accesses[i];
    a.width = width;
    a.unrolled = n as u32;
    let v = Expr::atom(Atom::LoopVar(var));
    let phase = Expr::bin(
        BinOp::Rem,
        Expr::minus(v, Expr::konst(start - 1)),
        Expr::konst(n as i64),
    );
    a.guards.push(Guard {
        cond: phase,
        expect: false,
        site: None,
        exits: false,
    });
    a.predicated_from = None;
}

/// `e` with loop variable `var` replaced by `value`.
fn at(e: &Expr, var: u32, value: i64) -> Expr {
    match e.kind() {
        ExprKind::Atom(Atom::LoopVar(v)) if *v == var => Expr::konst(value),
        ExprKind::Const(_) | ExprKind::Atom(_) => e.clone(),
        ExprKind::Un(op, a) => Expr::un(*op, at(a, var, value)),
        ExprKind::Bin(op, a, b) => Expr::bin(*op, at(a, var, value), at(b, var, value)),
        ExprKind::Select(c, a, b) => {
            Expr::select(at(c, var, value), at(a, var, value), at(b, var, value))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiples_are_known_through_sums_products_and_shifts() {
        let t = Expr::atom(Atom::Param(0));
        let v = Expr::atom(Atom::LoopVar(3));
        let e = Expr::plus(
            Expr::plus(Expr::times(t.clone(), Expr::konst(16)), Expr::konst(20480)),
            Expr::times(v.clone(), Expr::konst(4)),
        );
        assert_eq!(multiple_of(&e, 3), 16);
        let off8 = Expr::plus(Expr::times(t.clone(), Expr::konst(16)), Expr::konst(8));
        assert_eq!(multiple_of(&off8, 3), 8);
        let shl = Expr::bin(BinOp::Shl, t.clone(), Expr::konst(5));
        assert_eq!(multiple_of(&shl, 3), 32);
        assert_eq!(multiple_of(&t, 3), 1);
        assert_eq!(multiple_of(&v, 3), 0);
    }
}

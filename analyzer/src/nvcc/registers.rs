//! Which per-thread arrays nvcc keeps in registers, and which it puts in
//! local memory.
//!
//! Measured on the H200 (nvcc 13.0, `-O3 -arch=sm_90`, `-Xptxas -v` and
//! the SASS's `LDL`/`STL`; `fixtures/groundtruth/local/`, and a review's
//! 50 probes in its `review/`):
//! - an array is in registers when every index is a constant once nvcc
//!   unrolls the loops of constant trip count (512 iterations did, 1024
//!   did not; `i < n && i < 16` is bounded by 16; a template argument or a
//!   `constexpr` bound too), and also when only its loads, or only its
//!   stores, are indexed with other values (4-byte elements): a read
//!   `a[threadIdx.x % 8]`, `a[k]`, `a[idx[t] & 63]` or a read in a loop of
//!   run-time trip count becomes a chain of selects; a store `a[i]` in such
//!   a loop, read back at constant indices, predicated moves; and when an
//!   array of up to 16 elements is written only at masked indices
//!   (`acc[k % 4] += …`, a ring buffer's `head = (head + 1) % 8`);
//! - it is in local memory when a store and a load both are, at different
//!   indices (`a[i] = …` in `for (i < n)`, then `a[n - 1 - i]`), or the
//!   load reads what an earlier iteration stored (a 32-bin histogram
//!   `h[v & 31] += 1`);
//! - the rest is not known: a loop nvcc may or may not unroll (a
//!   `do`/`while`, a counter not stepped by a constant, more than 512
//!   iterations, a condition that reads data), an element other than 4 bytes read at a run-time index
//!   (a `long long` and a `char` array went to local memory), an array of
//!   more words than a thread's registers (300 floats read in reverse
//!   spilled; 128 doubles summed in order, 200 floats in reverse did not).
//!
//! Not read, so not modelled (misses, listed in the review's truth file):
//! `#pragma unroll 1`/`2`, `__noinline__` callees, `memcpy`.
//!
//! An array in registers has no memory instruction: its accesses are
//! removed ([`RemovedWhy::Registers`]). The placement of each array is kept
//! in [`Kernel::locals`] for the local-memory rule.

use crate::finding::Origin;
use crate::ir::{
    Atom, BinOp, Expr, ExprKind, Kernel, LocalArray, Op, Placement, RemovedWhy, Space,
};

/// The registers one thread has (compute capability 3.5 and later): an
/// array of more 4-byte words cannot stay in them all at once.
pub const THREAD_REGISTERS: u64 = 255;

/// The longest constant loop nvcc was measured to unroll fully (512 did,
/// 1024 did not): past it, whether its variable is a constant is unsure.
const MAX_UNROLLED: i64 = 512;

/// The most elements an array may have for nvcc to write it at a masked
/// run-time index (`a[t % 4] += …`, `a[i & 7]`) with predicated moves
/// (measured up to 8; a 32-element histogram `h[v & 31]` went to local
/// memory).
const MAX_MASKED_ELEMENTS: u64 = 16;

/// What nvcc does with a loop, as far as its variables index arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unroll {
    /// A constant trip count (or a constant bound): fully unrolled, its
    /// variables constants in each copy.
    Full,
    /// The trip count is set at run time: its variables stay values.
    No,
    /// Neither is clear.
    Unsure,
}

/// What an atom is when nvcc compiles the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Known {
    /// A constant in the compiled code (a template argument, a loop
    /// variable of a loop nvcc unrolls in each copy).
    Compile,
    /// Set at run time: a thread or block index, a dimension, a kernel
    /// argument, a value loaded from memory, a loop variable of a loop not
    /// unrolled.
    Run,
    /// Not known which (an unknown warplint cannot resolve, which may be a
    /// `constexpr` it does not read).
    Unsure,
}

/// What atom `a` of `k` is, given each loop's unrolling (`loops`, `None`
/// while they are being decided: a loop variable is then unsure).
fn known(k: &Kernel, loops: Option<&[Unroll]>, a: Atom) -> Known {
    match a {
        Atom::Builtin(_) => Known::Run,
        Atom::Param(i) => match k.params.get(i as usize) {
            Some(p) if p.template => Known::Compile,
            Some(_) => Known::Run,
            None => Known::Unsure,
        },
        Atom::Unknown(u) => match k.unknowns.get(u as usize).map(|x| &x.origin) {
            Some(Origin::Loaded { .. } | Origin::LoadedPointer { .. }) => Known::Run,
            _ => Known::Unsure,
        },
        Atom::LoopVar(v) if invariant(k, v) => Known::Compile,
        Atom::LoopVar(v) => {
            let li = k.loop_vars.get(v as usize).map(|x| x.loop_id);
            match li.and_then(|l| loops?.get(l)) {
                Some(Unroll::Full) => Known::Compile,
                Some(Unroll::No) => Known::Run,
                _ => Known::Unsure,
            }
        }
        Atom::TooComplex => Known::Unsure,
    }
}

/// Whether loop variable `v` starts at a constant that each iteration
/// gives back (`idx ^= 1` twice in the body, a double buffer's index at
/// the top of each iteration): nvcc folds it to that constant.
fn invariant(k: &Kernel, v: u32) -> bool {
    let Some(l) = k
        .loop_vars
        .get(v as usize)
        .and_then(|x| k.loops.get(x.loop_id))
    else {
        return false;
    };
    let Some(i) = l.vars.iter().position(|&w| w == v) else {
        return false;
    };
    let (Some(init), Some(next)) = (l.init.get(i).and_then(Expr::as_const), l.next.get(i)) else {
        return false;
    };
    let var = Expr::atom(Atom::LoopVar(v));
    next.replaced(&var, &Expr::konst(init)).as_const() == Some(init)
}

/// What an expression is: run-time if any atom is, else unsure if any
/// atom is, else a compile-time constant.
fn known_expr(k: &Kernel, loops: Option<&[Unroll]>, e: &Expr) -> Known {
    let mut out = Known::Compile;
    e.visit_atoms(&mut |a| match (out, known(k, loops, a)) {
        (_, Known::Run) => out = Known::Run,
        (Known::Compile, Known::Unsure) => out = Known::Unsure,
        _ => {}
    });
    out
}

/// `e` as a comparison of loop variable `v` with something, when it is.
fn bound_of(e: &Expr, var: u32) -> Option<&Expr> {
    match e.kind() {
        ExprKind::Bin(BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Ne, a, b) => {
            let is_var =
                |x: &Expr| matches!(x.kind(), ExprKind::Atom(Atom::LoopVar(w)) if *w == var);
            if is_var(a) {
                Some(b)
            } else if is_var(b) {
                Some(a)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The conjuncts of a condition (`a && b && c`).
fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e.kind() {
        ExprKind::Bin(BinOp::LAnd, a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        _ => vec![e],
    }
}

/// How nvcc unrolls loop `li` of `k`: by the variables its condition
/// compares, each starting at a constant and stepping by one (others the
/// body carries, an accumulator, do not matter).
fn unroll(k: &Kernel, li: usize) -> Unroll {
    let l = &k.loops[li];
    let Some(cond) = &l.pre_cond else {
        return Unroll::Unsure;
    };
    if l.post_cond.is_some() {
        return Unroll::Unsure;
    }
    let counter = |i: usize, v: u32| {
        let init = l.init.get(i).and_then(Expr::as_const).is_some();
        let step = l.next.get(i).is_some_and(|n| match n.kind() {
            ExprKind::Bin(BinOp::Add | BinOp::Sub, a, b) => {
                matches!(a.kind(), ExprKind::Atom(Atom::LoopVar(w)) if *w == v)
                    && b.as_const().is_some_and(|c| c != 0)
            }
            _ => false,
        });
        init && step
    };
    let bounds: Vec<&Expr> = conjuncts(cond)
        .into_iter()
        .filter_map(|c| {
            l.vars
                .iter()
                .enumerate()
                .find_map(|(i, &v)| bound_of(c, v).filter(|_| counter(i, v)))
        })
        .collect();
    // A bound fixed when nvcc compiles (a constant, a template argument)
    // unrolls the loop; else one set at run time (an argument, a
    // dimension, data) keeps it a loop.
    let kinds: Vec<Known> = bounds.iter().map(|b| known_expr(k, None, b)).collect();
    // A condition that also reads data besides a counter's bound (`j > 0
    // && best[j - 1] > v`, a top-k insertion) leaves the loop at an
    // iteration only the data decides: measured in local memory, not
    // modelled.
    let data = conjuncts(cond).into_iter().any(|c| {
        // A counter's bound set by data (`i < cnt`, `cnt` loaded) is a
        // loop of run-time trip count, not this.
        if l.vars.iter().any(|&v| bound_of(c, v).is_some()) {
            return false;
        }
        let mut loaded = false;
        c.visit_atoms(&mut |a| {
            loaded |= matches!(a, Atom::Unknown(u) if matches!(
                k.unknowns.get(u as usize).map(|x| &x.origin),
                Some(Origin::Loaded { .. } | Origin::LoadedPointer { .. })
            ));
        });
        loaded
    });
    if data {
        return Unroll::Unsure;
    }
    if kinds.contains(&Known::Compile) {
        // nvcc unrolled 512 iterations, not 1024 (measured).
        let trip = |b: &&Expr| -> Option<i64> {
            let c = b.as_const()?;
            let (i, _) = l.vars.iter().enumerate().find(|(i, &v)| counter(*i, v))?;
            Some(
                c.saturating_sub(l.init.get(i)?.as_const()?)
                    .saturating_abs(),
            )
        };
        let longest = bounds.iter().filter_map(trip).min();
        if longest.is_some_and(|t| t > MAX_UNROLLED) {
            return Unroll::Unsure;
        }
        Unroll::Full
    } else if !kinds.is_empty() && kinds.iter().all(|x| *x == Known::Run) {
        Unroll::No
    } else {
        Unroll::Unsure
    }
}

/// Whether an index is a constant once loops are unrolled (`Some(false)`),
/// a run-time value (`Some(true)`, with the loop of run-time trip count it
/// depends on, if any), or not known (`None`).
fn dynamic(k: &Kernel, loops: &[Unroll], e: &Expr) -> Option<(bool, Option<usize>)> {
    match known_expr(k, Some(loops), e) {
        Known::Compile => Some((false, None)),
        Known::Unsure => None,
        Known::Run => {
            let mut runtime_loop = None;
            e.visit_atoms(&mut |a| {
                if let Atom::LoopVar(v) = a {
                    let li = k.loop_vars.get(v as usize).map(|x| x.loop_id);
                    if li.and_then(|l| loops.get(l)) == Some(&Unroll::No) {
                        runtime_loop = runtime_loop.or(li);
                    }
                }
            });
            Some((true, runtime_loop))
        }
    }
}

/// Whether every run-time value in index `e` is reduced to a small range
/// (`% c` or `& c` with a constant of at most [`MAX_MASKED_ELEMENTS`]), or
/// is a loop variable each iteration reduces so (`head = (head + 1) % 8`).
fn masked(k: &Kernel, loops: &[Unroll], e: &Expr) -> bool {
    let small = |c: &Expr| {
        c.as_const()
            .is_some_and(|c| c > 0 && c as u64 <= MAX_MASKED_ELEMENTS)
    };
    match e.kind() {
        ExprKind::Const(_) => true,
        ExprKind::Bin(BinOp::Rem | BinOp::And, _, c) if small(c) => true,
        ExprKind::Bin(_, a, b) => masked(k, loops, a) && masked(k, loops, b),
        ExprKind::Un(_, a) => masked(k, loops, a),
        ExprKind::Select(c, a, b) => {
            masked(k, loops, c) && masked(k, loops, a) && masked(k, loops, b)
        }
        ExprKind::Atom(Atom::LoopVar(v)) => {
            let reduced = k
                .loop_vars
                .get(*v as usize)
                .and_then(|x| k.loops.get(x.loop_id))
                .and_then(|l| {
                    let i = l.vars.iter().position(|w| w == v)?;
                    Some(matches!(
                        l.next.get(i)?.kind(),
                        ExprKind::Bin(BinOp::Rem | BinOp::And, _, c) if small(c)
                    ))
                })
                .unwrap_or(false);
            reduced || known(k, Some(loops), Atom::LoopVar(*v)) == Known::Compile
        }
        ExprKind::Atom(a) => known(k, Some(loops), *a) == Known::Compile,
    }
}

/// Where an array lives, from its accesses at run-time indices (each with
/// the loop of run-time trip count it depends on): a store and a load at
/// different indices, or a load that reads what an earlier iteration of
/// such a loop stored (`h[v] += 1`), need memory. A load at the index a
/// store just wrote (`p[g] = …; … p[g]`, no loop between) takes the
/// stored value, as nvcc forwards it.
fn decide(
    k: &Kernel,
    loops: &[Unroll],
    stores: &[(usize, Option<usize>)],
    loads: &[(usize, Option<usize>)],
    (elems, elem_size, unsure): (u64, u64, bool),
) -> Placement {
    // The load reads the index the store wrote, in the same iteration.
    let same = |si: usize, li: usize| {
        let (s, l) = (&k.accesses[si], &k.accesses[li]);
        s.offset.same(&l.offset) && s.loops == l.loops
    };
    // Selects and predicated moves were measured on 4-byte elements; a
    // `long long` or `char` array read at a lane's index went to local
    // memory: not known.
    if elem_size != 4 && !(stores.is_empty() && loads.is_empty()) {
        let memory = stores
            .iter()
            .any(|&(si, _)| loads.iter().any(|&(li, _)| !same(si, li)));
        if !memory {
            return Placement::Unknown;
        }
    }
    let in_runtime_loop = |i: usize| {
        k.accesses[i]
            .loops
            .iter()
            .any(|&l| loops.get(l) == Some(&Unroll::No))
    };
    // A small array written only at masked indices: predicated moves.
    if elems <= MAX_MASKED_ELEMENTS
        && stores
            .iter()
            .all(|&(si, _)| masked(k, loops, &k.accesses[si].offset))
    {
        return if unsure {
            Placement::Unknown
        } else {
            Placement::Registers
        };
    }
    let mut undecided = unsure;
    for &(si, sl) in stores {
        for &(li, ll) in loads {
            let (s, l) = (&k.accesses[si], &k.accesses[li]);
            let carried = li < si && in_runtime_loop(si);
            if !same(si, li) || carried {
                let runtime_loop = sl.or(ll).map(|x| k.loops[x].span);
                return Placement::Memory {
                    store: s.span,
                    load: l.span,
                    runtime_loop,
                };
            }
            // Loaded before it is stored, outside a loop of run-time
            // trip count: not measured.
            undecided |= li < si;
        }
    }
    if undecided {
        Placement::Unknown
    } else {
        Placement::Registers
    }
}

/// Decides where each per-thread array lives; removes the accesses of
/// those in registers (see the module doc).
pub fn place_local_arrays(k: &mut Kernel) {
    let loops: Vec<Unroll> = (0..k.loops.len()).map(|li| unroll(k, li)).collect();
    let mut drop: Vec<Option<RemovedWhy>> = vec![None; k.accesses.len()];
    let mut locals = Vec::new();
    for (oi, o) in k.objects.iter().enumerate() {
        if o.space != Space::Local {
            continue;
        }
        let mine: Vec<usize> = (0..k.accesses.len())
            .filter(|&i| k.accesses[i].obj == oi)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let elems: u64 = o.dims.iter().map(|d| d.unwrap_or(0)).product();
        let words = elems.saturating_mul(o.elem_size).div_ceil(4);
        let placement = if elems == 0 || o.elem_size == 0 {
            Placement::Unknown // a size warplint does not know
        } else if words > THREAD_REGISTERS {
            Placement::TooLarge { words }
        } else {
            let mut stores: Vec<(usize, Option<usize>)> = Vec::new();
            let mut loads: Vec<(usize, Option<usize>)> = Vec::new();
            let mut unsure = false;
            for &i in &mine {
                let a = &k.accesses[i];
                match dynamic(k, &loops, &a.offset) {
                    None => unsure = true,
                    Some((false, _)) => {}
                    Some((true, l)) => match a.op {
                        Op::Load => loads.push((i, l)),
                        _ => stores.push((i, l)),
                    },
                }
            }
            decide(k, &loops, &stores, &loads, (elems, o.elem_size, unsure))
        };
        if placement == Placement::Registers {
            for &i in &mine {
                drop[i] = Some(RemovedWhy::Registers);
            }
        }
        locals.push(LocalArray {
            obj: oi,
            placement,
            sass: None,
        });
    }
    k.locals = locals;
    super::drop_marked(k, &drop);
}

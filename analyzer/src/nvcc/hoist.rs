//! What nvcc does with a load whose address does not change in its loop:
//! it loads once, before the loop, and keeps the value in a register.
//!
//! Measured (nvcc 13.0, `-O3 -arch=sm_90`, SASS and Nsight Compute;
//! `fixtures/groundtruth/sm_90/hoist.cu`):
//! - `acc += s[(t * 2) % 1024] * w[j]` in `for j < n`: the `s` load runs
//!   once per warp (2-way, as in the loop) and Nsight Compute counts it on
//!   the loop's line; `w[j]` stays in the loop;
//! - the same with `__syncthreads()` in the loop body: not hoisted;
//! - `in[t * 2]` of a global array: hoisted too (counted on a line before
//!   the loop); with a store through another (not `__restrict__`) global
//!   pointer in the loop it is not;
//! - both fields of a shared struct element (`a[t].v`, `a[t].x`, merged
//!   into one 16-byte load): hoisted, counted on the loop's line;
//! - where the hoisted load is the kernel's first memory instruction (no
//!   access before its loop, which is in no other loop), Nsight Compute
//!   counts it on the body's first statement (`int t = threadIdx.x;`),
//!   also when the loop is in an `if` or an inlined `__device__` function
//!   (`fixtures/groundtruth/sm_90/hoistline.cu`); with an access before the
//!   loop, on the loop's line.
//!
//! Here a load is hoisted out of its innermost loop when its address and
//! the guards it has beyond the loop's own use none of that loop's
//! variables and no unknown value, no
//! barrier or fence splits the loop's body, and nothing in the loop may
//! write what it reads (a store or atomic to the same shared array, or
//! through a global pointer unless both are `__restrict__`; the aliasing
//! rules of `reload.rs`), except a store to the same array that the
//! thread provably never makes to the loaded bytes (`disjoint.rs`,
//! measured in `hoist2.cu`: counted on the loop's line, or the body's
//! first statement, as above). `volatile` loads stay.
//!
//! nvcc also sinks such a store out of the loop when its address does not
//! change either (it runs once, after the loop, on its own line:
//! `hoist2.cu`); that is not modelled: the cost per instruction is the
//! same, only how often it runs differs.

use crate::ir::{Atom, Expr, Hoisted, Kernel, Op, Space};

/// Whether loads hoisted out of loop `l` are the kernel's first memory
/// instructions: `l` is in no other loop and no access comes before it
/// (accesses are recorded in program order). nvcc issues them at the
/// kernel's entry, and its line table counts them on the body's first
/// statement (measured: `hoistline.cu`'s `top_level`, `under_if`,
/// `through_device_function`; with an access before the loop,
/// `after_statements`, on the loop's line).
fn first_memory_instruction(k: &Kernel, l: usize) -> bool {
    k.loops.get(l).is_some_and(|lp| lp.parent.is_none())
        && k.accesses.iter().position(|b| b.loops.contains(&l)) == Some(0)
}

/// Whether `e` uses a variable of loop `l` (or of a loop inside it), an
/// unknown value or an expression too large to follow.
fn varies_in(k: &Kernel, l: usize, e: &Expr) -> bool {
    let inside = |mut id: usize| loop {
        if id == l {
            return true;
        }
        match k.loops.get(id).and_then(|x| x.parent) {
            Some(p) => id = p,
            None => return false,
        }
    };
    e.atoms().into_iter().any(|a| match a {
        Atom::LoopVar(v) => k
            .loop_vars
            .get(v as usize)
            .is_none_or(|lv| inside(lv.loop_id)),
        Atom::Unknown(_) | Atom::TooComplex => true,
        Atom::Builtin(_) | Atom::Param(_) => false,
    })
}

/// Whether `g` is one of the guards the loop `lp` is entered under (it
/// holds before the loop, whatever it depends on).
fn entered_under(lp: &crate::ir::Loop, g: &crate::ir::Guard) -> bool {
    lp.entry_guards.iter().any(|e| e.same(g))
}

/// Moves each hoistable load out of its innermost loop (see the module
/// doc), recording the loop in `Access::hoisted`.
pub fn hoist_invariant_loads(k: &mut Kernel) {
    let mut hoist: Vec<(usize, usize)> = Vec::new();
    for (ai, a) in k.accesses.iter().enumerate() {
        let Some(&l) = a.loops.last() else { continue };
        let Some(lp) = k.loops.get(l) else { continue };
        let obj = &k.objects[a.obj];
        if a.op != Op::Load
            || !matches!(obj.space, Space::Shared | Space::Global)
            || obj.volatile
            || a.unknown.is_some()
            || a.unrolled != 1
            || lp.fenced
            || varies_in(k, l, &a.offset)
            || a.guards
                .iter()
                .filter(|g| !entered_under(lp, g))
                .any(|g| varies_in(k, l, &g.cond))
        {
            continue;
        }
        let written = k.accesses.iter().any(|b| {
            b.loops.contains(&l)
                && super::reload::may_write(k, a, b)
                && !(b.op == Op::Store && super::disjoint::never_overlap(a, b))
        });
        if !written {
            hoist.push((ai, l));
        }
    }
    for (ai, l) in hoist {
        let from = k.loops[l].span;
        let counted = match k.entry {
            Some(entry) if first_memory_instruction(k, l) => entry,
            _ => from,
        };
        let a = &mut k.accesses[ai];
        a.loops.pop();
        a.hoisted = Some(Hoisted { from, counted });
    }
}

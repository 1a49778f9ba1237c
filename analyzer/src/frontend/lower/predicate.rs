//! Which sides of an `if` nvcc predicates rather than branches around
//! ([`crate::ir::Access::predicated_from`]). A predicated instruction is
//! issued by every warp that reaches the `if`, also by a warp none of
//! whose lanes takes the side: Nsight Compute counts that warp's
//! instruction with no sector or wavefront, so the mean per executed
//! instruction it reports is diluted. A side nvcc branches around is
//! skipped by such a warp.
//!
//! Measured on an H200 (nvcc 13.0 `-O3`): fitted on
//! `fixtures/groundtruth/sm_90/predication.cu` (1 block of 8 warps whose
//! first 2 take the side), then checked on the held-out
//! `predication_review.cu` and `predication_review2.cu` (and the third
//! review's `predication_review3*.cu`, and `predication_return.cu`: after
//! an early `return` alike). ptxas predicates
//! a side of at most about eight instructions (three, four or six
//! constant stores, a sum of three shared loads, nested `if`s that fold
//! into one condition) when code follows the `if`; it branches around a
//! side of nine or more (four stores of four constants), one with a
//! global load, a call (`expf`, `sqrtf`'s slow path), an integer or
//! floating-point division, a loop of run-time trip count, a `return`, a
//! nested `if` beside other work or with an `else`; both sides of an
//! `if`/`else` with a loop on either (a constant loop in an `if` alone is
//! unrolled, each copy counted, and predicated when short:
//! `const_loop2_in_side`); an `if` in a loop of run-time trip count (unrolled by four,
//! the iterations' sides branched around together) or whose condition a
//! constant loop does not change (unswitched); an `if` that ends the
//! kernel (`@P EXIT`; of an `if`/`else` there one side is predicated,
//! measured to be either). Where both sides access one array alike nvcc
//! sinks them into one access (`nvcc/sink.rs`, which clears the mark).
//! The side's instructions are estimated from its
//! syntax ([`syntax_cost`]) and its accesses. What was not measured is
//! taken as branched: the warps that issue it are the ones with an
//! active lane, the engine's reading without this model.

use super::Src;
use crate::frontend::fields::Fields;
use crate::ir::{Atom, Kernel, Op, Space, Span};
use std::ops::Range;
use tree_sitter::Node;

/// Most instructions (estimated) of a side ptxas was measured to
/// predicate: eight (six constant stores and the base's two); nine were
/// branched around (four stores of four constants).
const MAX_INSTRUCTIONS: u32 = 8;

/// The limit where a side stores to two global arrays or more: a side of
/// four stores, two to each of two arrays, estimated at eight, was
/// branched around (its addresses took ten instructions,
/// `predication_review3.cu`'s `two_arrays_two_each`), two other sides at
/// eight were predicated: at eight it is undecided.
const MAX_INSTRUCTIONS_TWO_BASES: u32 = 7;

/// Calls that are one instruction each (`VIADDMNMX`, `FMNMX` with an
/// absolute operand): measured predicated.
const ONE_INSTRUCTION: [&str; 10] = [
    "min", "max", "fminf", "fmaxf", "fmin", "fmax", "fabsf", "fabs", "abs", "umin",
];

/// One side of an `if`, as the lowering left it.
#[derive(Clone, Debug)]
pub struct Side {
    /// The `if`'s condition, as its guards name it.
    pub site: Span,
    /// `true` for the `then` side.
    pub expect: bool,
    /// The accesses lowered in the side.
    pub accesses: Range<usize>,
    /// nvcc branches around this side whatever it holds: a side of the
    /// `if` (this one or the other) holds work (`stmt.rs`, `has_work`),
    /// an `if`/`else` has a loop on either side, the `if` is an `else if`,
    /// or the side's syntax says so ([`syntax_cost`]).
    pub work: bool,
    /// The side's instructions besides its accesses and their bases
    /// ([`syntax_cost`]).
    pub ops: u32,
    /// This side holds a loop.
    pub looped: bool,
    /// The loops the `if` sits in: something follows it in every
    /// iteration but the last.
    pub loops: Vec<usize>,
    /// Accesses lowered before the end of the whole `if` statement.
    pub end: usize,
    /// Barriers, fences and unseen calls lowered before that end.
    pub fences: u32,
    /// The `if` has an `else`.
    pub has_else: bool,
}

/// Marks the accesses of every predicated side of `k`, `sides` in the
/// order their lowering finished (inner `if`s first); `fences` is how
/// many barriers, fences and unseen calls the kernel holds.
pub fn mark(k: &mut Kernel, sides: &[Side], fences: u32) {
    for s in sides {
        // An `if` nothing follows ends the kernel: nvcc exits the threads
        // that fail it (`@P EXIT`). Of an `if`/`else` there it predicates
        // one side, exits its threads and runs the other in the warps
        // left; which one was measured both ways (the `else` in
        // `ifelse_tail_two_arrays`, the `then` in `overwrite.cu`'s
        // `else_branch`): undecided for both.
        let tail = s.loops.is_empty() && s.end >= k.accesses.len() && s.fences >= fences;
        // nvcc unrolls a loop of run-time trip count by four and branches
        // around the four iterations' sides together (measured,
        // `in_runtime_loop`); a constant loop it unrolls whole, each
        // iteration's side predicated (`in_constant_loop`).
        let unrolled = s
            .loops
            .iter()
            .all(|l| k.loops.get(*l).is_some_and(super::stmt::constant_trip));
        if s.work || (tail && !s.has_else) || !unrolled || s.accesses.is_empty() {
            continue;
        }
        let undecided = match fits(k, s) {
            Fit::No => continue,
            Fit::Undecided => true,
            Fit::Yes => tail,
        };
        if unswitched(k, s) {
            continue;
        }
        let Some(at) = k.accesses.get(s.accesses.clone()) else {
            continue;
        };
        let from: Option<Vec<u32>> = at.iter().map(|a| predicated_from(a, s)).collect();
        let Some(from) = from else { continue };
        for (a, j) in k.accesses[s.accesses.clone()].iter_mut().zip(from) {
            a.predicated_from = Some(j);
            a.predication_undecided |= undecided;
        }
    }
}

/// Whether a side is short enough to be predicated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fit {
    Yes,
    /// Measured both predicated and branched around at this size.
    Undecided,
    No,
}

/// Whether the side's accesses are of the kinds measured predicated (no
/// atomic, no load but a shared one, no per-thread array) and its
/// instructions few enough: one per access, two per global array (its
/// base's load and address), and its syntax's.
fn fits(k: &Kernel, s: &Side) -> Fit {
    let Some(at) = k.accesses.get(s.accesses.clone()) else {
        return Fit::No;
    };
    let space = |obj: usize| k.objects.get(obj).map(|o| o.space);
    let kinds = at.iter().all(|a| {
        matches!(
            (a.op, space(a.obj)),
            (Op::Store, Some(Space::Global | Space::Shared)) | (Op::Load, Some(Space::Shared))
        )
    });
    // A constant loop in the side is unrolled whole: its accesses and
    // syntax count once per iteration (measured predicated,
    // `const_loop2_in_side`); any other loop is branched around.
    let mut copies = Vec::with_capacity(at.len());
    for a in at {
        let mut n: i64 = 1;
        for l in a.loops.iter().filter(|l| !s.loops.contains(l)) {
            let Some((_, _, trip)) = crate::nvcc::unroll::counter(k, *l) else {
                return Fit::No;
            };
            n = n.saturating_mul(trip);
        }
        copies.push(u32::try_from(n).unwrap_or(u32::MAX));
    }
    let most = copies.iter().copied().max().unwrap_or(1);
    let mut bases: Vec<usize> = at
        .iter()
        .filter(|a| space(a.obj) == Some(Space::Global))
        .map(|a| a.obj)
        .collect();
    bases.sort_unstable();
    bases.dedup();
    let n = copies
        .iter()
        .fold(0u32, |t, c| t.saturating_add(*c))
        .saturating_add(2 * bases.len() as u32)
        .saturating_add(s.ops.saturating_mul(most));
    let limit = if bases.len() >= 2 {
        MAX_INSTRUCTIONS_TWO_BASES
    } else {
        MAX_INSTRUCTIONS
    };
    match (kinds, n) {
        (true, n) if n <= limit => Fit::Yes,
        // Two arrays at eight: predicated in `two_arrays` and
        // `two_arrays_three_one_const`, branched around in
        // `two_arrays_two_each`.
        (true, n) if n <= MAX_INSTRUCTIONS => Fit::Undecided,
        _ => Fit::No,
    }
}

/// An `if` in a constant loop whose condition reads none of the loop's
/// variables: nvcc unswitches it, one side around the unrolled
/// iterations together.
fn unswitched(k: &Kernel, s: &Side) -> bool {
    let Some(a) = k.accesses.get(s.accesses.start) else {
        return false;
    };
    let Some(g) = a.guards.iter().rev().find(|g| g.site == Some(s.site)) else {
        return false;
    };
    let atoms = g.cond.atoms();
    s.loops.iter().any(|l| {
        k.loops
            .get(*l)
            .is_some_and(|lp| !lp.vars.iter().any(|v| atoms.contains(&Atom::LoopVar(*v))))
    })
}

/// The instructions an `if` side's syntax adds to its accesses: one per
/// arithmetic operator outside an index (an index's constant offset is
/// folded into the instruction), compound assignment, conversion,
/// selection and distinct non-zero constant stored; `None` where nvcc
/// branches around it whatever its size: a call, a division, a `while`
/// or `do` loop (a `for` counts its body: [`fits`] says whether it is
/// unrolled), a jump, inline `asm`, or a nested `if` that is not the side's only
/// statement or has an `else` (`has_else`: the outer `if` has one).
pub fn syntax_cost(side: Node, src: &Src, has_else: bool) -> Option<u32> {
    let mut side = side;
    let mut cost = 0;
    loop {
        let kids = side.kids();
        match (side.node_kind(), &kids[..]) {
            ("compound_statement", [one]) => side = *one,
            ("if_statement", _) if !has_else && side.field("alternative").is_none() => {
                let cond = side.field("condition")?;
                cost += ops_in(cond, src, false)?;
                side = side.field("consequence")?;
            }
            _ => break,
        }
    }
    let mut constants: Vec<String> = Vec::new();
    Some(cost + ops_in(side, src, false)? + count_constants(side, src, &mut constants))
}

/// The operators of `n` outside an index; `None` for what is branched
/// around.
fn ops_in(n: Node, src: &Src, in_index: bool) -> Option<u32> {
    let kind = n.node_kind();
    // A vector constructor (`make_float4(...)`) makes no instruction; a
    // minimum, maximum or absolute value one (measured predicated,
    // `predication_review3.cu`).
    let callee = || n.field("function").map(|f| src.text(f)).unwrap_or_default();
    let mut own = 0;
    match kind {
        "call_expression" if callee().starts_with("make_") => {}
        "call_expression" if ONE_INSTRUCTION.contains(&callee().as_str()) => own = 1,
        // A loop's header is gone once it is unrolled; whether it is
        // constant is [`fits`]'s to say.
        "for_statement" => return ops_in(n.field("body")?, src, in_index),
        "call_expression" | "return_statement" | "break_statement" | "continue_statement"
        | "goto_statement" | "while_statement" | "do_statement" | "switch_statement"
        | "for_range_loop" | "if_statement" | "gnu_asm_expression" | "lambda_expression"
        | "throw_statement" => return None,
        _ => {}
    }
    if kind == "binary_expression" {
        let op = n.field("operator").map(|o| src.text(o)).unwrap_or_default();
        let literal = |f: &str| {
            n.field(f)
                .is_some_and(|x| x.node_kind() == "number_literal")
        };
        if (op == "/" || op == "%") && !(literal("left") && literal("right")) {
            return None;
        }
        own = u32::from(!in_index);
    } else if matches!(
        kind,
        "unary_expression" | "conditional_expression" | "cast_expression"
    ) || (kind == "assignment_expression"
        && n.field("operator").is_some_and(|o| src.text(o) != "="))
    {
        own = u32::from(!in_index);
    }
    let mut total = own;
    for (i, c) in n.kids().into_iter().enumerate() {
        let index = in_index || (kind == "subscript_expression" && i > 0);
        total += ops_in(c, src, index)?;
    }
    Some(total)
}

/// Distinct non-zero number literals stored by `n`'s assignments: each
/// is moved into a register first.
fn count_constants(n: Node, src: &Src, seen: &mut Vec<String>) -> u32 {
    let mut total = 0;
    if n.node_kind() == "assignment_expression" {
        if let Some(r) = n
            .field("right")
            .filter(|r| r.node_kind() == "number_literal")
        {
            let text = src.text(r);
            let zero = text
                .trim_end_matches(['f', 'F', 'u', 'U', 'l', 'L'])
                .parse::<f64>()
                .is_ok_and(|v| v == 0.0);
            if !zero && !seen.contains(&text) {
                seen.push(text);
                total += 1;
            }
        }
    }
    for c in n.kids() {
        total += count_constants(c, src, seen);
    }
    total
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
    // After it only predicated sides' guards, or an early `return`'s
    // (the lowering keeps those last; measured predicated after one,
    // `predication_return.cu`).
    let last = a.guards[j + 1..].iter().all(|g| g.exits);
    let inner = a.predicated_from == Some(j as u32 + 1);
    (last || inner).then_some(j as u32)
}

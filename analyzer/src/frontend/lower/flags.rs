//! Enum-like integer parameters: one the kernel only tests as a
//! condition, compares with constants (`mode == 2`) or with a condition
//! (`(a > b) == dir`, through `^` with one: bitonic sort's `dir ^ (i & s
//! != 0)`) takes few values, not sizes. Such a parameter is tried over
//! those values ([`crate::ir::Param::values`], [`Param::compared`]): 0 and
//! 1 where it is a condition, each constant it is compared with and one
//! value equal to none of them, never the spread of sizes (`dir` = 100 is
//! no value a program passes, and made the swap of two loaded keys known
//! never to happen).
//!
//! Every expression the engine evaluates is looked at (accesses' offsets
//! and guards, loops' bounds, updates and exits, unknowns' witnesses); a
//! single use as a number (an index, a bound, arithmetic) leaves the
//! parameter to the spread. A `__shared__` value the block loads
//! ([`crate::ir::Param::loaded`]) is treated alike: a loaded flag is tried
//! as 0 and 1, not over the spread (which has no 0).

use std::collections::{BTreeSet, HashSet};

use crate::ir::{Atom, BinOp, Expr, ExprKind, Kernel, Param, UnOp};

/// How a subexpression's value is used by the expression above it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Use {
    /// As a number.
    Value,
    /// Only whether it is 0 (a condition, `!`, `&&`, an equality with a
    /// condition).
    Truth,
}

/// What the walk found per parameter.
#[derive(Default, Clone)]
struct Seen {
    as_value: bool,
    as_truth: bool,
    constants: BTreeSet<i64>,
}

/// Whether `e` is 0 or 1 by construction (a comparison, a logical
/// operator, `!`, the constants 0 and 1, or a select or `^` of those).
fn boolean(e: &Expr) -> bool {
    match e.kind() {
        ExprKind::Const(c) => *c == 0 || *c == 1,
        ExprKind::Un(UnOp::Not, _) => true,
        ExprKind::Bin(op, a, b) => match op {
            BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::Eq
            | BinOp::Ne
            | BinOp::LAnd
            | BinOp::LOr => true,
            BinOp::Xor | BinOp::And | BinOp::Or => boolean(a) && boolean(b),
            _ => false,
        },
        ExprKind::Select(_, a, b) => boolean(a) && boolean(b),
        _ => false,
    }
}

struct Walk<'a> {
    params: &'a [Param],
    seen: Vec<Seen>,
    visited: HashSet<(*const (), Use)>,
}

impl Walk<'_> {
    fn param(&mut self, e: &Expr) -> Option<usize> {
        match e.kind() {
            ExprKind::Atom(Atom::Param(i)) if (*i as usize) < self.params.len() => {
                Some(*i as usize)
            }
            _ => None,
        }
    }

    fn go(&mut self, e: &Expr, u: Use) {
        if e.size() > 1 && !self.visited.insert((e.identity(), u)) {
            return;
        }
        match e.kind() {
            ExprKind::Const(_) => {}
            ExprKind::Atom(Atom::Param(i)) => {
                if let Some(s) = self.seen.get_mut(*i as usize) {
                    match u {
                        Use::Value => s.as_value = true,
                        Use::Truth => s.as_truth = true,
                    }
                }
            }
            ExprKind::Atom(_) => {}
            ExprKind::Un(UnOp::Not, a) => self.go(a, Use::Truth),
            ExprKind::Un(_, a) => self.go(a, Use::Value),
            ExprKind::Bin(BinOp::LAnd | BinOp::LOr, a, b) => {
                self.go(a, Use::Truth);
                self.go(b, Use::Truth);
            }
            ExprKind::Bin(BinOp::Eq | BinOp::Ne, a, b) => {
                for (x, y) in [(a, b), (b, a)] {
                    match (self.param(x), y.as_const()) {
                        (Some(i), Some(c)) => {
                            self.seen[i].constants.insert(c);
                        }
                        _ if boolean(y) => self.go(x, Use::Truth),
                        _ => self.go(x, Use::Value),
                    }
                }
            }
            ExprKind::Bin(BinOp::Xor, a, b) if u == Use::Truth && (boolean(a) || boolean(b)) => {
                // `dir ^ c` with `c` a condition, used as a condition:
                // only whether `dir` is 0 matters.
                self.go(a, Use::Truth);
                self.go(b, Use::Truth);
            }
            ExprKind::Bin(_, a, b) => {
                self.go(a, Use::Value);
                self.go(b, Use::Value);
            }
            ExprKind::Select(c, a, b) => {
                self.go(c, Use::Truth);
                self.go(a, u);
                self.go(b, u);
            }
        }
    }
}

/// Sets [`Param::values`] and [`Param::compared`] of each integer
/// parameter of `k` the kernel uses only as a condition or in equalities
/// (see the module's documentation).
pub(super) fn mark_compared(k: &mut Kernel) {
    let mut w = Walk {
        params: &k.params,
        seen: vec![Seen::default(); k.params.len()],
        visited: HashSet::new(),
    };
    let truth = |g: &crate::ir::Guard| g.cond.clone();
    for a in &k.accesses {
        w.go(&a.offset, Use::Value);
        for g in &a.guards {
            w.go(&truth(g), Use::Truth);
        }
    }
    for lp in &k.loops {
        for e in lp.init.iter().chain(&lp.next) {
            w.go(e, Use::Value);
        }
        for e in lp.pre_cond.iter().chain(&lp.post_cond) {
            w.go(e, Use::Truth);
        }
        for g in lp.entry_guards.iter().chain(lp.breaks.iter().flatten()) {
            w.go(&truth(g), Use::Truth);
        }
    }
    for u in &k.unknowns {
        if let Some(e) = &u.witness {
            w.go(e, Use::Value);
        }
    }
    let seen = w.seen;
    for (p, s) in k.params.iter_mut().zip(seen) {
        let used = s.as_truth || !s.constants.is_empty();
        if !p.is_integer || p.values.is_some() || s.as_value || !used {
            continue;
        }
        let compared_with_constants = !s.constants.is_empty();
        let mut values = s.constants;
        if s.as_truth {
            values.extend([0, 1]);
        }
        if compared_with_constants {
            // One value equal to none of the constants: the `else` of
            // `if (mode == 0) … else if (mode == 2) …`.
            let other = (0..).find(|v| !values.contains(v)).unwrap_or(0);
            values.insert(other);
        }
        p.values = Some(values.into_iter().collect());
        p.compared = true;
    }
}

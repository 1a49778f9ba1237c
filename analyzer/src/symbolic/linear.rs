//! Symbolic linearity: how an expression changes with one atom.
//!
//! `coefficient(e, a)` finds `k` (itself an expression free of `a`) with
//! `e = k * a + rest(a-free)`, or says `e` is not linear in `a`. The engine
//! uses it to prove that an assumed value (a parameter, `blockIdx`) only
//! shifts a warp's addresses by a multiple of the hardware's period, so the
//! cost does not depend on it.

use crate::ir::{Atom, BinOp, Expr, ExprKind, UnOp};

fn contains(e: &Expr, a: Atom) -> bool {
    let mut found = false;
    e.visit_atoms(&mut |x| found |= x == a);
    found
}

/// `Some(k)` when `e == k * a + (terms without a)`.
pub fn coefficient(e: &Expr, a: Atom) -> Option<Expr> {
    if !contains(e, a) {
        return Some(Expr::konst(0));
    }
    match e.kind() {
        ExprKind::Atom(x) if *x == a => Some(Expr::konst(1)),
        ExprKind::Un(UnOp::Neg, x) => Some(Expr::un(UnOp::Neg, coefficient(x, a)?)),
        ExprKind::Bin(BinOp::Add, x, y) => Some(Expr::plus(coefficient(x, a)?, coefficient(y, a)?)),
        ExprKind::Bin(BinOp::Sub, x, y) => {
            Some(Expr::minus(coefficient(x, a)?, coefficient(y, a)?))
        }
        ExprKind::Bin(BinOp::Mul, x, y) => match (contains(x, a), contains(y, a)) {
            (true, false) => Some(Expr::times(coefficient(x, a)?, y.clone())),
            (false, true) => Some(Expr::times(x.clone(), coefficient(y, a)?)),
            _ => None,
        },
        ExprKind::Bin(BinOp::Shl, x, y) if !contains(y, a) => {
            Some(Expr::bin(BinOp::Shl, coefficient(x, a)?, y.clone()))
        }
        ExprKind::Select(c, x, y) if !contains(c, a) => Some(Expr::select(
            c.clone(),
            coefficient(x, a)?,
            coefficient(y, a)?,
        )),
        _ => None,
    }
}

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

/// `e` with every atom in `atoms` replaced by zero (constants folded), so
/// that `e == zeroed(e) + sum(coefficient(e, a) * a)` when `e` is linear in
/// each of them.
pub fn zeroed(e: &Expr, atoms: &[Atom]) -> Expr {
    let mut any = false;
    e.visit_atoms(&mut |x| any |= atoms.contains(&x));
    if !any {
        return e.clone();
    }
    match e.kind() {
        ExprKind::Const(_) => e.clone(),
        ExprKind::Atom(_) => Expr::konst(0),
        ExprKind::Un(op, x) => Expr::un(*op, zeroed(x, atoms)),
        ExprKind::Bin(op, x, y) => Expr::bin(*op, zeroed(x, atoms), zeroed(y, atoms)),
        ExprKind::Select(c, x, y) => {
            Expr::select(zeroed(c, atoms), zeroed(x, atoms), zeroed(y, atoms))
        }
    }
}

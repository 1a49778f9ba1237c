//! Whether two accesses of one thread can never touch the same bytes,
//! proved as nvcc's alias analysis proves it (LLVM's: constant distances
//! and known low bits of the offsets).
//!
//! Measured (nvcc 13.0, `-O3 -arch=sm_90`, SASS and Nsight Compute;
//! `fixtures/groundtruth/sm_90/hoist2.cu`): a load in a loop whose
//! address does not change is hoisted past a store to the same array in
//! the loop when the store writes
//! - the other parity (`s[(2t) % 1024]` read, `s[(2t + 1) % 1024]`
//!   written, also when the store's index moves with the loop,
//!   `s[(2t + 1 + 2j) % 1024]`);
//! - another residue of a larger power of two (`s[(4t) % 1024]` read,
//!   `s[(4t + 2) % 1024]` written);
//! - at a constant distance (`s[2t]` read, `s[2t + 64]` written; a global
//!   `in[2t]` read and `in[2t + 1]` written through the same pointer);
//!
//! and not when the two may meet for some thread (`s[(2t) % 1024]` read,
//! `s[(t + 1) % 1024]` written: equal at `t = 1`).

use crate::ir::{Access, BinOp, Expr, ExprKind, UnOp};

/// The largest power of two tried as a modulus: offsets are bytes, and
/// no access is wider than 16 bytes.
const MAX_MODULUS: i64 = 1 << 12;

/// `e` modulo the power of two `m`, in `0..m`, when it is the same for
/// every lane and every iteration (`4 * ((2t + 1) % 1024)` is 4 modulo 8).
fn residue(e: &Expr, m: i64) -> Option<i64> {
    let r = |x: &Expr, m: i64| residue(x, m);
    let v = match e.kind() {
        ExprKind::Const(c) => *c,
        ExprKind::Atom(_) => return None,
        ExprKind::Un(UnOp::Neg, a) => -r(a, m)?,
        ExprKind::Un(..) => return None,
        ExprKind::Bin(BinOp::Add, a, b) => r(a, m)? + r(b, m)?,
        ExprKind::Bin(BinOp::Sub, a, b) => r(a, m)? - r(b, m)?,
        ExprKind::Bin(BinOp::Mul, a, b) => match (a.as_const(), b.as_const()) {
            (_, Some(k)) => scaled(a, k, m)?,
            (Some(k), _) => scaled(b, k, m)?,
            _ => match (r(a, m), r(b, m)) {
                (Some(0), _) | (_, Some(0)) => 0,
                (Some(x), Some(y)) => x * y,
                _ => return None,
            },
        },
        ExprKind::Bin(BinOp::Shl, a, s) => match s.as_const() {
            Some(s @ 0..=62) => scaled(a, 1 << s, m)?,
            _ => return None,
        },
        // `a % c` differs from `a` by a multiple of `c`.
        ExprKind::Bin(BinOp::Rem, a, c) => match c.as_const() {
            Some(c) if c != 0 && c % m == 0 => r(a, m)?,
            _ => return None,
        },
        // The low bits of a bitwise operation are those of its operands'.
        ExprKind::Bin(op @ (BinOp::And | BinOp::Or | BinOp::Xor), a, b) => {
            let (x, y) = (r(a, m), r(b, m));
            match (op, x, y) {
                (BinOp::And, Some(0), _) | (BinOp::And, _, Some(0)) => 0,
                (BinOp::And, Some(x), Some(y)) => x & y,
                (BinOp::Or, Some(x), Some(y)) => x | y,
                (BinOp::Xor, Some(x), Some(y)) => x ^ y,
                _ => return None,
            }
        }
        ExprKind::Select(_, a, b) => {
            let x = r(a, m)?;
            (r(b, m)? == x).then_some(x)?
        }
        ExprKind::Bin(..) => return None,
    };
    Some(v.rem_euclid(m))
}

/// `a * k` modulo `m`: with `k = 2^g * odd`, `a` modulo `m / 2^g`
/// decides it.
fn scaled(a: &Expr, k: i64, m: i64) -> Option<i64> {
    if k == 0 {
        return Some(0);
    }
    let g = k.trailing_zeros().min(62);
    let rest = m >> g;
    if rest <= 1 {
        return Some(0);
    }
    let x = residue(a, rest)?;
    Some(x.wrapping_mul(k).rem_euclid(m))
}

/// Whether `[x, x + wx)` and `[y, y + wy)` meet modulo `m`.
fn meet_modulo(x: i64, wx: i64, y: i64, wy: i64, m: i64) -> bool {
    if wx + wy > m {
        return true;
    }
    let d = (y - x).rem_euclid(m);
    d < wx || m - d < wy
}

/// Whether accesses `a` and `b` of the same object, made by one thread
/// (any iteration of the loops they are in), never touch the same byte:
/// their offsets differ by a constant at least the lower one's width, or
/// leave residues modulo a power of two whose byte ranges do not meet.
pub(super) fn never_overlap(a: &Access, b: &Access) -> bool {
    if a.obj != b.obj || a.unknown.is_some() || b.unknown.is_some() {
        return false;
    }
    let (wa, wb) = (i64::from(a.width), i64::from(b.width));
    if let Some(d) = super::neighbours::distance(a, b) {
        return d >= wa || -d >= wb;
    }
    let mut m = 2;
    while m <= MAX_MODULUS {
        if let (Some(x), Some(y)) = (residue(&a.offset, m), residue(&b.offset, m)) {
            if !meet_modulo(x, wa, y, wb, m) {
                return true;
            }
        }
        m *= 2;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{eval_bin, eval_un, Atom, Builtin, Dim};

    fn t() -> Expr {
        Expr::atom(Atom::Builtin(Builtin::ThreadIdx(Dim::X)))
    }
    /// `e` at `threadIdx.x = x`.
    fn at(e: &Expr, x: i64) -> Option<i64> {
        match e.kind() {
            ExprKind::Const(c) => Some(*c),
            ExprKind::Atom(_) => Some(x),
            ExprKind::Un(op, a) => Some(eval_un(*op, at(a, x)?)),
            ExprKind::Bin(op, a, b) => eval_bin(*op, at(a, x)?, at(b, x)?),
            ExprKind::Select(c, a, b) => {
                if at(c, x)? != 0 {
                    at(a, x)
                } else {
                    at(b, x)
                }
            }
        }
    }
    fn k(v: i64) -> Expr {
        Expr::konst(v)
    }
    fn bytes(index: Expr) -> Expr {
        Expr::bin(BinOp::Mul, index, k(4))
    }

    /// Brute force: the residue, where given, is that of every value.
    #[test]
    fn residues_hold_for_every_thread() {
        let cases = [
            bytes(Expr::bin(
                BinOp::Rem,
                Expr::plus(Expr::times(t(), k(2)), k(1)),
                k(1024),
            )),
            bytes(Expr::bin(BinOp::Rem, Expr::times(t(), k(4)), k(1024))),
            Expr::bin(BinOp::Shl, Expr::plus(Expr::times(t(), k(8)), k(3)), k(2)),
            Expr::bin(BinOp::And, Expr::plus(Expr::times(t(), k(6)), k(5)), k(63)),
            Expr::bin(BinOp::Or, Expr::times(t(), k(16)), k(9)),
        ];
        for e in &cases {
            let mut m = 2;
            while m <= MAX_MODULUS {
                if let Some(r) = residue(e, m) {
                    for x in 0..1024 {
                        let v = at(e, x).map(|v| v.rem_euclid(m));
                        assert_eq!(v, Some(r), "{e:?} mod {m} at {x}");
                    }
                }
                m *= 2;
            }
        }
        assert_eq!(residue(&cases[0], 8), Some(4));
        assert_eq!(residue(&cases[1], 16), Some(0));
        assert_eq!(residue(&t(), 2), None);
    }

    #[test]
    fn ranges_meet_modulo_across_the_wrap() {
        assert!(!meet_modulo(0, 4, 4, 4, 8));
        assert!(meet_modulo(0, 8, 4, 4, 8));
        assert!(meet_modulo(6, 4, 0, 4, 8));
        assert!(!meet_modulo(12, 4, 0, 4, 16));
        assert!(meet_modulo(0, 4, 0, 4, 1024));
    }
}

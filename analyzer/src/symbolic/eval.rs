//! Evaluation of symbolic expressions for one lane, and the linear view of
//! an address in the values the engine has to assume.

use super::data::DataDraw;
use crate::hardware::WARP;
use crate::ir::{eval_bin, eval_un, Atom, BinOp, Builtin, Expr, ExprKind, UnOp};

/// Why an expression has no value for a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fail {
    /// Depends on [`crate::ir::Kernel::unknowns`]`[i]`.
    Unknown(u32),
    /// A loop variable whose value is not known at this point.
    LoopVar(u32),
    /// The expression grew past a budget.
    TooComplex,
    /// Division by zero or a shift out of range.
    Arith,
}

/// A symbolic value the engine supplies an assumed value for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Assumed {
    Param(u32),
    BlockIdx,
    GridDim,
}

/// Everything an evaluation needs about one lane.
pub struct LaneEnv<'a> {
    pub tid: [i64; 3],
    pub bid: [i64; 3],
    pub block: [i64; 3],
    pub grid: [i64; 3],
    /// Parameter values (known or assumed).
    pub params: &'a [i64],
    /// Which parameters are assumed (no launch or config value).
    pub params_assumed: &'a [bool],
    /// Whether the grid is assumed.
    pub grid_assumed: bool,
    pub loop_vals: &'a [Result<i64, Fail>],
    /// Values drawn for loaded integers, and this lane's index
    /// (`data.rs`).
    pub data: Option<(&'a DataDraw, usize)>,
}

/// Collects which assumed values an evaluation read: a set, kept as bits
/// (block index, grid, the first 126 parameters) so that merging the
/// reads of a remembered subexpression costs nothing.
#[derive(Clone, Default, Debug, PartialEq)]
pub struct Reads {
    bits: u128,
    /// Parameters past the bits (a kernel with more than 126 parameters).
    rest: Vec<u32>,
}

/// Parameters kept in [`Reads`]'s bits.
const PARAM_BITS: u32 = 126;

impl Reads {
    pub fn add(&mut self, a: Assumed) {
        match a {
            Assumed::BlockIdx => self.bits |= 1,
            Assumed::GridDim => self.bits |= 2,
            Assumed::Param(i) if i < PARAM_BITS => self.bits |= 4 << i,
            Assumed::Param(i) => {
                if !self.rest.contains(&i) {
                    self.rest.push(i);
                }
            }
        }
    }

    pub fn merge(&mut self, o: &Reads) {
        self.bits |= o.bits;
        for i in &o.rest {
            if !self.rest.contains(i) {
                self.rest.push(*i);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.bits == 0 && self.rest.is_empty()
    }

    /// Whether `a` is among the values read.
    pub fn contains(&self, a: Assumed) -> bool {
        match a {
            Assumed::BlockIdx => self.bits & 1 != 0,
            Assumed::GridDim => self.bits & 2 != 0,
            Assumed::Param(i) if i < PARAM_BITS => self.bits & (4 << i) != 0,
            Assumed::Param(i) => self.rest.contains(&i),
        }
    }

    /// Whether every value `self` read is among `o`'s.
    pub fn within(&self, o: &Reads) -> bool {
        self.bits & !o.bits == 0 && self.rest.iter().all(|i| o.rest.contains(i))
    }

    /// The values read: block index, grid, then parameters in order.
    pub fn iter(&self) -> impl Iterator<Item = Assumed> + '_ {
        // One step per bit set.
        let mut bits = self.bits;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let i = bits.trailing_zeros();
            bits &= bits - 1;
            Some(match i {
                0 => Assumed::BlockIdx,
                1 => Assumed::GridDim,
                _ => Assumed::Param(i - 2),
            })
        })
        .chain(self.rest.iter().map(|i| Assumed::Param(*i)))
    }
}

fn atom(a: Atom, env: &LaneEnv, reads: &mut Reads) -> Result<i64, Fail> {
    match a {
        Atom::Builtin(b) => Ok(match b {
            Builtin::ThreadIdx(d) => env.tid[d.index()],
            Builtin::BlockIdx(d) => {
                if env.grid_assumed {
                    reads.add(Assumed::BlockIdx);
                }
                env.bid[d.index()]
            }
            Builtin::BlockDim(d) => env.block[d.index()],
            Builtin::GridDim(d) => {
                if env.grid_assumed {
                    reads.add(Assumed::GridDim);
                }
                env.grid[d.index()]
            }
        }),
        Atom::Param(i) => {
            let i = i as usize;
            if env.params_assumed.get(i).copied().unwrap_or(true) {
                reads.add(Assumed::Param(i as u32));
            }
            env.params.get(i).copied().ok_or(Fail::TooComplex)
        }
        Atom::LoopVar(v) => match env.loop_vals.get(v as usize) {
            Some(r) => *r,
            None => Err(Fail::LoopVar(v)),
        },
        Atom::Unknown(u) => env
            .data
            .and_then(|(d, lane)| d.value(u, lane))
            .ok_or(Fail::Unknown(u)),
        Atom::TooComplex => Err(Fail::TooComplex),
    }
}

/// Evaluates `e` for one lane with C integer semantics.
pub fn eval(e: &Expr, env: &LaneEnv, reads: &mut Reads) -> Result<i64, Fail> {
    match e.kind() {
        ExprKind::Const(v) => Ok(*v),
        ExprKind::Atom(a) => atom(*a, env, reads),
        ExprKind::Un(op, a) => Ok(eval_un(*op, eval(a, env, reads)?)),
        ExprKind::Bin(op, a, b) => {
            let x = eval(a, env, reads);
            // Short-circuit logic tolerates an unknown right side.
            match (op, &x) {
                (BinOp::LAnd, Ok(0)) => return Ok(0),
                (BinOp::LOr, Ok(v)) if *v != 0 => return Ok(1),
                (BinOp::Mul, Ok(0)) => return Ok(0),
                _ => {}
            }
            let y = eval(b, env, reads)?;
            eval_bin(*op, x?, y).ok_or(Fail::Arith)
        }
        ExprKind::Select(c, a, b) => {
            if eval(c, env, reads)? != 0 {
                eval(a, env, reads)
            } else {
                eval(b, env, reads)
            }
        }
    }
}

/// `c + sum(coeff * unknown)`: an address seen as linear in the unknowns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lin {
    pub c: i64,
    pub terms: Vec<(u32, i64)>,
}

impl Lin {
    fn konst(c: i64) -> Lin {
        Lin {
            c,
            terms: Vec::new(),
        }
    }
    fn scale(mut self, k: i64) -> Lin {
        self.c = self.c.wrapping_mul(k);
        for t in &mut self.terms {
            t.1 = t.1.wrapping_mul(k);
        }
        self.terms.retain(|t| t.1 != 0);
        self
    }
    fn add(mut self, o: Lin, sign: i64) -> Lin {
        self.c = self.c.wrapping_add(o.c.wrapping_mul(sign));
        for (u, k) in o.terms {
            match self.terms.iter_mut().find(|t| t.0 == u) {
                Some(t) => t.1 = t.1.wrapping_add(k.wrapping_mul(sign)),
                None => self.terms.push((u, k.wrapping_mul(sign))),
            }
        }
        self.terms.retain(|t| t.1 != 0);
        self.terms.sort_unstable();
        self
    }
}

/// Evaluates `e` keeping unknowns symbolic where it stays linear in them.
/// `Err` names the first unknown (or failure) that is used non-linearly.
pub fn eval_lin(e: &Expr, env: &LaneEnv, reads: &mut Reads) -> Result<Lin, Fail> {
    match e.kind() {
        ExprKind::Const(v) => Ok(Lin::konst(*v)),
        ExprKind::Atom(Atom::Unknown(u)) => Ok(Lin {
            c: 0,
            terms: vec![(*u, 1)],
        }),
        ExprKind::Atom(a) => atom(*a, env, reads).map(Lin::konst),
        ExprKind::Un(UnOp::Neg, a) => Ok(eval_lin(a, env, reads)?.scale(-1)),
        ExprKind::Bin(op @ (BinOp::Add | BinOp::Sub), a, b) => {
            let x = eval_lin(a, env, reads)?;
            let y = eval_lin(b, env, reads)?;
            Ok(x.add(y, if *op == BinOp::Add { 1 } else { -1 }))
        }
        ExprKind::Bin(BinOp::Mul, a, b) => {
            let x = eval_lin(a, env, reads)?;
            let y = eval_lin(b, env, reads)?;
            if x.terms.is_empty() {
                Ok(y.scale(x.c))
            } else if y.terms.is_empty() {
                Ok(x.scale(y.c))
            } else {
                Err(Fail::Unknown(x.terms[0].0))
            }
        }
        ExprKind::Bin(BinOp::Shl, a, b) => {
            let x = eval_lin(a, env, reads)?;
            let y = eval(b, env, reads)?;
            if !(0..62).contains(&y) {
                return Err(Fail::Arith);
            }
            Ok(x.scale(1i64 << y))
        }
        _ => {
            // Anything else must be free of unknowns.
            match eval(e, env, reads) {
                Ok(v) => Ok(Lin::konst(v)),
                Err(f) => Err(f),
            }
        }
    }
}

/// One value per lane of a warp; lanes in `err` have no value (`fail`
/// says why, for the first such lane).
#[derive(Clone, Copy, Debug)]
pub struct Vals {
    pub v: [i64; WARP],
    pub err: u32,
    pub fail: Fail,
}

impl Vals {
    pub fn splat(x: i64) -> Vals {
        Vals {
            v: [x; WARP],
            err: 0,
            fail: Fail::TooComplex,
        }
    }
    pub fn failed(f: Fail) -> Vals {
        Vals {
            v: [0; WARP],
            err: u32::MAX,
            fail: f,
        }
    }
    /// The value of lane `l`.
    pub fn get(&self, l: usize) -> Result<i64, Fail> {
        if self.err & (1 << l) != 0 {
            Err(self.fail)
        } else {
            Ok(self.v[l])
        }
    }
    /// Lanes whose value is known and non-zero.
    pub fn truthy(&self) -> u32 {
        let mut m = 0u32;
        for (l, v) in self.v.iter().enumerate() {
            m |= ((*v != 0) as u32) << l;
        }
        m & !self.err
    }
}

/// The whole warp at once: what [`LaneEnv`] is for one lane.
pub struct WarpEnv<'a> {
    pub tid: &'a [[i64; WARP]; 3],
    pub bid: [i64; 3],
    pub block: [i64; 3],
    pub grid: [i64; 3],
    pub params: &'a [i64],
    pub params_assumed: &'a [bool],
    pub grid_assumed: bool,
    pub loop_vals: &'a [Vals],
    /// Values drawn for loaded integers (`data.rs`).
    pub data: Option<&'a DataDraw>,
}

fn merge_fail(a: &Vals, b: &Vals) -> Fail {
    if a.err != 0 {
        a.fail
    } else {
        b.fail
    }
}

/// One node of an expression as the warp evaluator sees it, its operands
/// being handles of type `C` (subtrees, or indices into a [`super::graph`]).
#[derive(Clone, Copy)]
pub(crate) enum View<C> {
    Const(i64),
    Atom(Atom),
    Un(UnOp, C),
    Bin(BinOp, C, C),
    Select(C, C, C),
}

pub(crate) fn view(e: &Expr) -> View<&Expr> {
    match e.kind() {
        ExprKind::Const(v) => View::Const(*v),
        ExprKind::Atom(a) => View::Atom(*a),
        ExprKind::Un(op, a) => View::Un(*op, a),
        ExprKind::Bin(op, a, b) => View::Bin(*op, a, b),
        ExprKind::Select(c, a, b) => View::Select(c, a, b),
    }
}

/// Evaluates `e` for the 32 lanes of a warp in one walk of the tree (the
/// same semantics as [`eval`] lane by lane). `work` counts nodes visited.
pub fn eval32(e: &Expr, env: &WarpEnv, reads: &mut Reads, work: &mut u64) -> Vals {
    eval_view(view(e), env, reads, work, &mut |c, reads, work| {
        eval32(c, env, reads, work)
    })
}

/// One node for the whole warp; `operand` evaluates an operand, and is
/// called only for operands some lane needs (short circuits, the branches
/// of a select), so the values read are those [`eval`] reads.
pub(crate) fn eval_view<C: Copy>(
    node: View<C>,
    env: &WarpEnv,
    reads: &mut Reads,
    work: &mut u64,
    operand: &mut impl FnMut(C, &mut Reads, &mut u64) -> Vals,
) -> Vals {
    *work += 1;
    match node {
        View::Const(v) => Vals::splat(v),
        View::Atom(a) => atom_vals(a, env, reads),
        View::Un(op, a) => un_vals(op, operand(a, reads, work)),
        View::Bin(op, a, b) => {
            let x = operand(a, reads, work);
            // Lanes the left side decides on its own (short circuit, `0 * _`).
            let decided = match op {
                BinOp::LAnd | BinOp::Mul => !x.truthy() & !x.err,
                BinOp::LOr => x.truthy(),
                _ => 0,
            };
            if decided == u32::MAX {
                let mut out = x;
                if op == BinOp::LOr {
                    out.v = [1; WARP];
                } else {
                    out.v = [0; WARP];
                }
                return out;
            }
            let y = operand(b, reads, work);
            bin_vals(op, &x, &y, decided)
        }
        View::Select(c, a, b) => {
            let cv = operand(c, reads, work);
            let take_a = cv.truthy();
            let take_b = !take_a & !cv.err;
            let av = if take_a != 0 {
                operand(a, reads, work)
            } else {
                Vals::failed(Fail::TooComplex)
            };
            let bv = if take_b != 0 {
                operand(b, reads, work)
            } else {
                Vals::failed(Fail::TooComplex)
            };
            select_vals(&cv, take_a, &av, take_b, &bv)
        }
    }
}

/// The value of atom `a` for the whole warp.
#[inline]
fn atom_vals(a: Atom, env: &WarpEnv, reads: &mut Reads) -> Vals {
    match a {
        Atom::Builtin(Builtin::ThreadIdx(d)) => Vals {
            v: env.tid[d.index()],
            err: 0,
            fail: Fail::TooComplex,
        },
        Atom::Builtin(b) => {
            let one = LaneEnv {
                tid: [0; 3],
                bid: env.bid,
                block: env.block,
                grid: env.grid,
                params: env.params,
                params_assumed: env.params_assumed,
                grid_assumed: env.grid_assumed,
                loop_vals: &[],
                data: None,
            };
            match atom(Atom::Builtin(b), &one, reads) {
                Ok(v) => Vals::splat(v),
                Err(f) => Vals::failed(f),
            }
        }
        Atom::Param(i) => {
            let i = i as usize;
            if env.params_assumed.get(i).copied().unwrap_or(true) {
                reads.add(Assumed::Param(i as u32));
            }
            match env.params.get(i) {
                Some(v) => Vals::splat(*v),
                None => Vals::failed(Fail::TooComplex),
            }
        }
        Atom::LoopVar(v) => match env.loop_vals.get(v as usize) {
            Some(x) => *x,
            None => Vals::failed(Fail::LoopVar(v)),
        },
        Atom::Unknown(u) => match env.data {
            Some(d) if d.value(u, 0).is_some() => {
                let mut v = Vals::splat(0);
                for (l, x) in v.v.iter_mut().enumerate() {
                    *x = d.value(u, l).unwrap_or(0);
                }
                v
            }
            _ => Vals::failed(Fail::Unknown(u)),
        },
        Atom::TooComplex => Vals::failed(Fail::TooComplex),
    }
}

/// `op x` for the whole warp.
#[inline]
fn un_vals(op: UnOp, mut x: Vals) -> Vals {
    match op {
        UnOp::Neg => x.v.iter_mut().for_each(|v| *v = v.wrapping_neg()),
        UnOp::Not => x.v.iter_mut().for_each(|v| *v = (*v == 0) as i64),
        UnOp::BitNot => x.v.iter_mut().for_each(|v| *v = !*v),
        UnOp::Popc(_) | UnOp::Clz(_) | UnOp::Ffs(_) => {
            x.v.iter_mut().for_each(|v| *v = crate::ir::eval_un(op, *v))
        }
    }
    x
}

/// `x op y` for the whole warp, the lanes of `decided` taking the value
/// the left side decided on its own.
#[inline]
fn bin_vals(op: BinOp, x: &Vals, y: &Vals, decided: u32) -> Vals {
    let mut out = Vals {
        v: [0; WARP],
        err: 0,
        fail: merge_fail(x, y),
    };
    // Every lane has both values: one branch-free loop per op (a
    // decided lane gets the same value the slow path gives).
    if (x.err | y.err) == 0 && bin_lanes(op, &x.v, &y.v, &mut out.v) {
        return out;
    }
    out.v = [0; WARP];
    for l in 0..WARP {
        let bit = 1u32 << l;
        if decided & bit != 0 {
            out.v[l] = if op == BinOp::LOr { 1 } else { 0 };
            continue;
        }
        if (x.err | y.err) & bit != 0 {
            out.err |= bit;
            continue;
        }
        match eval_bin(op, x.v[l], y.v[l]) {
            Some(v) => out.v[l] = v,
            None => {
                if out.err == 0 && x.err == 0 && y.err == 0 {
                    out.fail = Fail::Arith;
                }
                out.err |= bit;
            }
        }
    }
    out
}

/// A select for the whole warp: the lanes of `take_a` from `av`, those of
/// `take_b` from `bv`, the others failing as the condition `cv` did.
#[inline]
fn select_vals(cv: &Vals, take_a: u32, av: &Vals, take_b: u32, bv: &Vals) -> Vals {
    let mut out = Vals {
        v: [0; WARP],
        err: cv.err,
        fail: cv.fail,
    };
    for l in 0..WARP {
        let bit = 1u32 << l;
        let src = if take_a & bit != 0 {
            av
        } else if take_b & bit != 0 {
            bv
        } else {
            continue;
        };
        if src.err & bit != 0 {
            if out.err == 0 {
                out.fail = src.fail;
            }
            out.err |= bit;
        } else {
            out.v[l] = src.v[l];
        }
    }
    out
}

/// `x op y` lane by lane into `out` when every lane is defined; false
/// (with `out` partly written) when some lane divides by zero or shifts out
/// of range (the caller's slow path says which). Same C semantics as
/// [`eval_bin`], in loops the compiler can vectorise.
fn bin_lanes(op: BinOp, x: &[i64; WARP], y: &[i64; WARP], out: &mut [i64; WARP]) -> bool {
    #[inline(always)]
    fn map(x: &[i64; WARP], y: &[i64; WARP], out: &mut [i64; WARP], f: impl Fn(i64, i64) -> i64) {
        for l in 0..WARP {
            out[l] = f(x[l], y[l]);
        }
    }
    let shift_ok = || y.iter().all(|s| (0..64).contains(s));
    match op {
        BinOp::Add => map(x, y, out, |a, b| a.wrapping_add(b)),
        BinOp::Sub => map(x, y, out, |a, b| a.wrapping_sub(b)),
        BinOp::Mul => map(x, y, out, |a, b| a.wrapping_mul(b)),
        BinOp::Div | BinOp::Rem if y.contains(&0) => return false,
        BinOp::Div => map(x, y, out, |a, b| a.wrapping_div(b)),
        BinOp::Rem => map(x, y, out, |a, b| a.wrapping_rem(b)),
        BinOp::Shl | BinOp::Shr if !shift_ok() => return false,
        BinOp::Shl => map(x, y, out, |a, b| a.wrapping_shl(b as u32)),
        BinOp::Shr => map(x, y, out, |a, b| a >> b),
        BinOp::And => map(x, y, out, |a, b| a & b),
        BinOp::Or => map(x, y, out, |a, b| a | b),
        BinOp::Xor => map(x, y, out, |a, b| a ^ b),
        BinOp::Lt => map(x, y, out, |a, b| (a < b) as i64),
        BinOp::Le => map(x, y, out, |a, b| (a <= b) as i64),
        BinOp::Gt => map(x, y, out, |a, b| (a > b) as i64),
        BinOp::Ge => map(x, y, out, |a, b| (a >= b) as i64),
        BinOp::Eq => map(x, y, out, |a, b| (a == b) as i64),
        BinOp::Ne => map(x, y, out, |a, b| (a != b) as i64),
        BinOp::LAnd => map(x, y, out, |a, b| (a != 0 && b != 0) as i64),
        BinOp::LOr => map(x, y, out, |a, b| (a != 0 || b != 0) as i64),
        BinOp::Min => map(x, y, out, |a, b| a.min(b)),
        BinOp::Max => map(x, y, out, |a, b| a.max(b)),
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Dim;
    use proptest::prelude::*;

    const BIN: [BinOp; 20] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::Shl,
        BinOp::Shr,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::LAnd,
        BinOp::LOr,
        BinOp::Min,
        BinOp::Max,
    ];

    /// Constants that hit the edge cases (zero divisors, shifts of 63 and
    /// 64, negative values).
    fn constant() -> impl Strategy<Value = Expr> {
        prop::sample::select(vec![0i64, 1, -1, 2, 3, 31, 32, 63, 64, -7, i64::MIN])
            .prop_map(Expr::konst)
    }

    const UN: [UnOp; 9] = [
        UnOp::Neg,
        UnOp::Not,
        UnOp::BitNot,
        UnOp::Popc(32),
        UnOp::Popc(64),
        UnOp::Clz(32),
        UnOp::Clz(64),
        UnOp::Ffs(32),
        UnOp::Ffs(64),
    ];

    /// Every operator over `leaf`, up to `depth` levels and `size` nodes.
    fn grown(
        leaf: impl Strategy<Value = Expr> + 'static,
        depth: u32,
        size: u32,
    ) -> impl Strategy<Value = Expr> {
        leaf.prop_recursive(depth, size, 3, |inner| {
            prop_oneof![
                (0..BIN.len(), inner.clone(), inner.clone())
                    .prop_map(|(o, a, b)| Expr::bin(BIN[o], a, b)),
                (0..UN.len(), inner.clone()).prop_map(|(o, a)| Expr::un(UN[o], a)),
                (inner.clone(), inner.clone(), inner).prop_map(|(c, a, b)| Expr::select(c, a, b)),
            ]
        })
    }

    /// Expressions over a per-lane value (`threadIdx.x`), a loop variable
    /// known in some lanes only, an unknown, and [`constant`]s.
    fn expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            Just(Expr::builtin(Builtin::ThreadIdx(Dim::X))),
            Just(Expr::atom(Atom::LoopVar(0))),
            Just(Expr::atom(Atom::Unknown(0))),
            constant(),
        ];
        grown(leaf, 5, 48)
    }

    /// [`expr`]'s leaves plus an outer loop variable, an assumed parameter
    /// and an assumed block index (values read are compared).
    fn loop_expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            Just(Expr::builtin(Builtin::ThreadIdx(Dim::X))),
            Just(Expr::atom(Atom::LoopVar(0))),
            Just(Expr::atom(Atom::LoopVar(1))),
            Just(Expr::atom(Atom::Param(0))),
            Just(Expr::builtin(Builtin::BlockIdx(Dim::X))),
            Just(Expr::atom(Atom::Unknown(0))),
            constant(),
        ];
        grown(leaf, 4, 32)
    }

    /// A step of a run: assign a loop variable (0: inner, 1: outer) new
    /// lane values, or move to another warp; then evaluate a root.
    #[derive(Clone, Debug)]
    enum Step {
        Assign(u32, [i64; WARP], u32),
        NewWarp([i64; WARP]),
    }

    fn step() -> impl Strategy<Value = (Step, usize)> {
        let assign = (
            0..2u32,
            prop::array::uniform32(-70i64..70),
            prop::sample::select(vec![0u32, u32::MAX, 0xF0F0_0001]),
        )
            .prop_map(|(v, vals, err)| Step::Assign(v, vals, err));
        let warp = prop::array::uniform32(-40i64..40).prop_map(Step::NewWarp);
        (prop_oneof![3 => assign, 1 => warp], 0..5usize)
    }

    proptest! {
        /// The compiled graph with its remembered values gives, root by
        /// root and step by step, exactly what the tree walk gives: the
        /// same lanes, failures and values read, however loop variables
        /// change between evaluations (the epochs are right).
        #[test]
        fn remembered_evaluation_matches_the_tree_walk(
            e1 in loop_expr(),
            e2 in loop_expr(),
            e3 in loop_expr(),
            steps in prop::collection::vec(step(), 1..24),
        ) {
            // Shared subtrees: two roots reuse the others.
            let e4 = Expr::bin(BinOp::Add, e1.clone(), e2.clone());
            let e5 = Expr::select(e3.clone(), e1.clone(), e4.clone());
            let roots = [&e1, &e2, &e3, &e4, &e5];
            let depths = [0u32, 1, 2, 2, 1];
            let level_of = |v: u32| if v == 0 { 2 } else { 1 };
            let with_depth: Vec<(&Expr, u32)> =
                roots.iter().copied().zip(depths).collect();
            let g = super::super::graph::Graph::new(&with_depth, level_of);
            let mut memo = super::super::graph::Memo::new(&g, 2);
            let mut tid = [[0i64; WARP]; 3];
            let mut loop_vals = [Vals::failed(Fail::LoopVar(0)), Vals::failed(Fail::LoopVar(1))];
            memo.touch(0);
            for (step, root) in steps {
                match step {
                    Step::Assign(v, vals, err) => {
                        let x = &mut loop_vals[v as usize];
                        x.v = vals;
                        x.err = err;
                        x.fail = Fail::LoopVar(v);
                        memo.touch(level_of(v) as usize);
                    }
                    Step::NewWarp(t) => {
                        tid[0] = t;
                        memo.touch(0);
                    }
                }
                let env = WarpEnv {
                    tid: &tid,
                    bid: [1, 0, 0],
                    block: [32, 1, 1],
                    grid: [2, 1, 1],
                    params: &[5],
                    params_assumed: &[true],
                    grid_assumed: true,
                    loop_vals: &loop_vals,
                    data: None,
                };
                let e = roots[root];
                let id = g.root(e).expect("a root");
                let (mut r1, mut r2) = (Reads::default(), Reads::default());
                let got = memo.eval(&g, id, &env, &mut r1, &mut 0);
                let want = eval32(e, &env, &mut r2, &mut 0);
                prop_assert_eq!(got.v, want.v, "root {}", root);
                prop_assert_eq!(got.err, want.err, "root {}", root);
                prop_assert_eq!(got.fail, want.fail, "root {}", root);
                prop_assert_eq!(r1, r2, "root {}", root);
            }
        }

        /// The whole-warp evaluator (with its branch-free fast paths) gives
        /// every lane exactly what the one-lane evaluator gives it.
        #[test]
        fn warp_evaluation_matches_lane_by_lane(
            e in expr(),
            tids in prop::array::uniform32(-40i64..40),
            loop_vals in prop::array::uniform32(-70i64..70),
            loop_err in any::<u32>(),
        ) {
            let mut lv = Vals::splat(0);
            lv.v = loop_vals;
            lv.err = loop_err;
            lv.fail = Fail::LoopVar(0);
            let tid = [tids, [0; WARP], [0; WARP]];
            let warp = WarpEnv {
                tid: &tid,
                bid: [0; 3],
                block: [32, 1, 1],
                grid: [1, 1, 1],
                params: &[],
                params_assumed: &[],
                grid_assumed: false,
                loop_vals: std::slice::from_ref(&lv),
                data: None,
            };
            let all = eval32(&e, &warp, &mut Reads::default(), &mut 0);
            for (l, t) in tids.iter().enumerate() {
                let lane_vals = [lv.get(l)];
                let one = LaneEnv {
                    tid: [*t, 0, 0],
                    bid: [0; 3],
                    block: [32, 1, 1],
                    grid: [1, 1, 1],
                    params: &[],
                    params_assumed: &[],
                    grid_assumed: false,
                    loop_vals: &lane_vals,
                    data: None,
                };
                let want = eval(&e, &one, &mut Reads::default());
                prop_assert_eq!(all.get(l).ok(), want.ok(), "lane {}", l);
            }
        }
    }
}

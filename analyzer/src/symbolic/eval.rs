//! Evaluation of symbolic expressions for one lane, and the linear view of
//! an address in the values the engine has to assume.

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
}

/// Collects which assumed values an evaluation read.
#[derive(Default, Debug)]
pub struct Reads {
    pub assumed: Vec<Assumed>,
}

impl Reads {
    fn add(&mut self, a: Assumed) {
        if !self.assumed.contains(&a) {
            self.assumed.push(a);
        }
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
        Atom::Unknown(u) => Err(Fail::Unknown(u)),
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

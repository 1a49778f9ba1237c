//! Host values followed up the calls: a launch argument that is a
//! parameter of the host function it is in (`k<<<…>>>(…, n)` in `void
//! run(int n)`) is marked as that parameter, and the walk of a host
//! function records its calls of launching functions with what each
//! argument is: a constant, the values an enclosing loop with constant
//! bounds gives its variable (`for (len = 4; len <= 1024; len <<= 1)`,
//! enumerated once the loop is lowered), or the walked function's own
//! parameter. `tu/host_values.rs` joins them.

use crate::budget;
use crate::ir::{
    Atom, BinOp, Expr, ExprKind, Guard, HostArg, HostBound, HostCall, HostExpr, Kernel, UnOp,
};

use tree_sitter::Node;

use super::{Lowerer, Src, Val};

use crate::finding::{Budget, Cut, NoteKind, Origin};
use crate::ir::{Note, Span};

/// The host function a walk is in: its name, the unknowns its integer
/// parameters are (with their positions), and the calls and launch
/// arguments whose values wait for the loops around them to be lowered.
#[derive(Default)]
pub(crate) struct HostFn {
    pub(crate) name: String,
    params: Vec<(Expr, u32)>,
    calls: Vec<PendingCall>,
    /// Launch arguments over loop variables: (site, argument, value,
    /// the conditions the launch is under).
    site_args: Vec<(usize, usize, Expr, Vec<Guard>)>,
}

/// A call recorded: each argument with the expression it was when it
/// waits for its loops, the conditions the call is under, and where it is.
struct PendingCall {
    call: HostCall,
    waiting: Vec<Option<Expr>>,
    guards: Vec<Guard>,
    span: Span,
}

impl HostFn {
    pub(crate) fn new(name: String) -> HostFn {
        HostFn {
            name,
            ..HostFn::default()
        }
    }
}

impl Lowerer<'_, '_> {
    /// Parameter `pos` of the host function walked is the unknown `u`.
    pub(super) fn host_param(&mut self, u: &Expr, pos: u32) {
        if let Some(h) = self.host_fn.as_mut() {
            h.params.push((u.clone(), pos));
        }
    }

    /// The position of the walked host function's parameter `e` is, if
    /// it is one.
    pub(super) fn host_param_of(&self, e: &Expr) -> Option<u32> {
        let h = self.host_fn.as_ref()?;
        h.params.iter().find(|(u, _)| u.same(e)).map(|(_, p)| *p)
    }

    /// What the conditions around the current point say of the walked
    /// function's parameters: `p < K`, `p <= K`, `p == K`, … (either way
    /// round, under `&&`, or negated by an `else`); other conditions say
    /// nothing here.
    pub(super) fn host_bounds(&self) -> Vec<HostBound> {
        let mut out = Vec::new();
        let mut todo: Vec<(Expr, bool)> = self
            .current_guards()
            .into_iter()
            .map(|g| (g.cond, g.expect))
            .collect();
        while let Some((c, expect)) = todo.pop() {
            let (op, a, b) = match c.kind() {
                ExprKind::Un(UnOp::Not, x) => {
                    todo.push((x.clone(), !expect));
                    continue;
                }
                ExprKind::Bin(op, a, b) => (op, a, b),
                _ => continue,
            };
            let truth = |x: &Expr| x.as_const().map(|v| v != 0);
            match (op, expect, truth(a), truth(b)) {
                // `x != 0` is `x`; `x == 0` is `!x`.
                (BinOp::Ne, _, _, Some(false)) => todo.push((a.clone(), expect)),
                (BinOp::Eq, _, _, Some(false)) => todo.push((a.clone(), !expect)),
                (BinOp::LAnd, true, _, _) | (BinOp::LOr, false, _, _) => {
                    todo.push((a.clone(), expect));
                    todo.push((b.clone(), expect));
                }
                // `!(true && x)` is `!x`.
                (BinOp::LAnd, false, Some(true), _) => todo.push((b.clone(), false)),
                (BinOp::LAnd, false, _, Some(true)) => todo.push((a.clone(), false)),
                _ => {}
            }
            if matches!(op, BinOp::LAnd | BinOp::LOr) {
                continue;
            }
            let (p, k, op) = match (self.host_param_of(a), b.as_const()) {
                (Some(p), Some(k)) => (p, k, *op),
                _ => match (a.as_const(), self.host_param_of(b)) {
                    (Some(k), Some(p)) => (p, k, flipped(*op)),
                    _ => continue,
                },
            };
            let op = if expect { Some(op) } else { negated(op) };
            let (lo, hi) = match op {
                Some(BinOp::Lt) => (i64::MIN, k.saturating_sub(1)),
                Some(BinOp::Le) => (i64::MIN, k),
                Some(BinOp::Gt) => (k.saturating_add(1), i64::MAX),
                Some(BinOp::Ge) => (k, i64::MAX),
                Some(BinOp::Eq) => (k, k),
                _ => continue,
            };
            out.push(HostBound { param: p, lo, hi });
        }
        out.sort();
        out.dedup();
        out
    }

    /// In a host walk, a variable whose address a call is given
    /// (`count(&n)`) may hold anything after it.
    pub(super) fn forget_written(&mut self, callee: &str, args: &[Node], src: &Src) {
        if self.host_fn.is_none() {
            return;
        }
        for a in args {
            let text = src.text(*a);
            let Some(name) = text.trim().strip_prefix('&') else {
                continue;
            };
            let name = name.trim();
            if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let origin = Origin::CallResult {
                callee: format!("{callee}()"),
            };
            let u = self.unknown(origin, None);
            if let Some(b) = self.lookup_mut(name) {
                b.val = Val::Int(u);
            }
        }
    }

    /// `e` as an expression over the walked host function's parameters
    /// (`C / NH`), when it is one: its unknowns are all parameters, its
    /// operations integer arithmetic.
    pub(super) fn host_expr(&self, e: &Expr) -> Option<HostExpr> {
        if let Some(p) = self.host_param_of(e) {
            return Some(HostExpr::Param(p));
        }
        match e.kind() {
            ExprKind::Const(c) => Some(HostExpr::Const(*c)),
            ExprKind::Bin(op, a, b) => {
                use BinOp::*;
                if matches!(op, Lt | Le | Gt | Ge | Eq | Ne | LAnd | LOr) {
                    return None;
                }
                let (a, b) = (self.host_expr(a)?, self.host_expr(b)?);
                Some(HostExpr::Bin(*op, Box::new(a), Box::new(b)))
            }
            _ => None,
        }
    }

    /// Whether a call of `name` is one the walk records.
    pub(super) fn records_calls_of(&self, name: &str) -> bool {
        self.host_fn.is_some() && self.tu.host_callees.contains(name)
    }

    /// Records the walked host function's call of `callee` with the
    /// values `vals` of its arguments (none where the conditions it is
    /// under are false: code that never runs).
    pub(super) fn record_host_call(&mut self, callee: &str, vals: &[Val], span: Span) {
        if self.current_cond().as_const() == Some(0) {
            return;
        }
        let mut args = Vec::new();
        let mut waiting = Vec::new();
        for v in vals {
            let (a, w) = match v {
                Val::Int(e) => self.host_arg(e),
                _ => (HostArg::Unknown, None),
            };
            args.push(a);
            waiting.push(w);
        }
        let guards = self.current_guards();
        let Some(h) = self.host_fn.as_mut() else {
            return;
        };
        let call = HostCall {
            callee: callee.to_string(),
            caller: h.name.clone(),
            args,
        };
        h.calls.push(PendingCall {
            call,
            waiting,
            guards,
            span,
        });
    }

    /// What an argument of value `e` is, and the expression to enumerate
    /// once its loops are lowered when it is over loop variables.
    fn host_arg(&self, e: &Expr) -> (HostArg, Option<Expr>) {
        if let Some(c) = e.as_const() {
            return (HostArg::Values(vec![c]), None);
        }
        if let Some(p) = self.host_param_of(e) {
            return (HostArg::Param(p), None);
        }
        let over_loops = e.atoms().iter().all(|a| matches!(a, Atom::LoopVar(_)));
        if over_loops && !self.open_loops.is_empty() {
            return (HostArg::Unknown, Some(e.clone()));
        }
        (HostArg::Unknown, None)
    }

    /// Marks argument `arg` of launch site `site` (of the walk's
    /// `launches`) as one whose value is `e`, over the variables of
    /// enclosing loops: enumerated when the walk ends.
    pub(super) fn launch_arg_over_loops(&mut self, site: usize, arg: usize, e: &Expr) {
        let over_loops = e.atoms().iter().all(|a| matches!(a, Atom::LoopVar(_)));
        if !over_loops || self.open_loops.is_empty() || e.as_const().is_some() {
            return;
        }
        let guards = self.current_guards();
        if let Some(h) = self.host_fn.as_mut() {
            h.site_args.push((site, arg, e.clone(), guards));
        }
    }

    /// Ends a host function's walk: the arguments over loop variables
    /// enumerated, the calls recorded moved to the unit's.
    pub(super) fn finish_host_fn(&mut self) -> Vec<HostCall> {
        let Some(h) = self.host_fn.take() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut cuts = Vec::new();
        for PendingCall {
            mut call,
            waiting,
            guards,
            span,
        } in h.calls
        {
            for (a, w) in call.args.iter_mut().zip(waiting) {
                let Some(e) = w else {
                    continue;
                };
                match loop_values(&self.k, &e, &guards) {
                    Ok(v) => *a = HostArg::Values(v),
                    Err(Some(b)) => cuts.push((span, b, call.callee.clone())),
                    Err(None) => {}
                }
            }
            out.push(call);
        }
        if let Some(sites) = self.launches.as_mut() {
            for (si, ai, e, guards) in h.site_args {
                let Some(s) = sites.get_mut(si) else {
                    continue;
                };
                let values = match loop_values(&self.k, &e, &guards) {
                    Ok(v) => v,
                    Err(Some(b)) => {
                        cuts.push((s.span, b, s.kernel.clone()));
                        continue;
                    }
                    Err(None) => continue,
                };
                let n = s.args.len();
                let host = s.host.get_or_insert_with(|| crate::ir::HostArgs {
                    function: h.name.clone(),
                    params: vec![None; n],
                    values: Vec::new(),
                    bounds: Vec::new(),
                    sampled: Vec::new(),
                });
                host.set_values(ai, values);
            }
        }
        for (span, budget, function) in cuts {
            let kind = NoteKind::OutOfBudget {
                what: Cut::HostValues { function },
                budget,
            };
            if !self.notes.iter().any(|x| x.span == span && x.kind == kind) {
                self.notes.push(Note { span, kind });
            }
        }
        out
    }
}

/// The values `e`, an expression over loop variables, takes: the loops
/// whose variables it reads run from their entry values (constants, or
/// values of the loops around them) while their condition holds, the
/// outermost first; `None` when a value, condition or update is not a
/// constant there, a loop runs past `budget::MAX_LOOP_ITERATIONS`, or
/// more than `budget::MAX_HOST_VALUES_SEEN` values come out.
pub(crate) fn loop_values(
    k: &Kernel,
    e: &Expr,
    guards: &[Guard],
) -> Result<Vec<i64>, Option<Budget>> {
    let mut out = Vec::new();
    let mut env = Vec::new();
    let mut steps = 0;
    enumerate(k, e, guards, &mut env, (&mut out, &mut steps))?;
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Not known (`None`), or cut by a budget.
type NotFollowed = Option<Budget>;

/// `x` with each loop variable of `env` replaced by its value.
fn bound(x: &Expr, env: &[(u32, i64)]) -> Expr {
    env.iter().fold(x.clone(), |x, (v, s)| {
        x.replaced(&Expr::atom(Atom::LoopVar(*v)), &Expr::konst(*s))
    })
}

/// Adds the values of `e` under the loop variables' values `env` (those
/// of the loops entered so far) to `out`.
fn enumerate(
    k: &Kernel,
    e: &Expr,
    guards: &[Guard],
    env: &mut Vec<(u32, i64)>,
    (out, steps): (&mut Vec<i64>, &mut u64),
) -> Result<(), NotFollowed> {
    *steps += 1;
    if *steps > budget::MAX_HOST_LOOP_STEPS {
        return Err(Some(budget::HOST_LOOP_STEPS));
    }
    let e = bound(e, env);
    if let Some(c) = e.as_const() {
        // A value the conditions around the call rule out under these
        // iterations is not passed (a condition over anything else may
        // hold).
        let ruled_out = guards.iter().any(|g| {
            bound(&g.cond, env)
                .as_const()
                .is_some_and(|c| (c != 0) != g.expect)
        });
        if !ruled_out && !out.contains(&c) {
            out.push(c);
        }
        if out.len() > budget::MAX_HOST_VALUES_SEEN {
            return Err(Some(budget::HOST_VALUES_SEEN));
        }
        return Ok(());
    }
    // The outermost loop among those whose variables `e` reads (loops
    // are numbered as they open: an enclosing one has a smaller id).
    let id = e
        .atoms()
        .iter()
        .filter_map(|a| match a {
            Atom::LoopVar(v) => k.loop_vars.get(*v as usize).map(|lv| lv.loop_id),
            _ => None,
        })
        .min()
        .ok_or(None)?;
    let lp = k.loops.get(id).ok_or(None)?;
    if lp.post_cond.is_some() || lp.vars.len() != lp.init.len() {
        return Err(None);
    }
    let cond = lp.pre_cond.as_ref().ok_or(None)?;
    // The loop's variables `e` and the condition read, and those their
    // updates read (others, such as a result stored each iteration, may
    // be anything).
    let reads = |x: &Expr, out: &mut Vec<usize>| {
        for a in x.atoms() {
            if let Atom::LoopVar(v) = a {
                if let Some(j) = lp.vars.iter().position(|w| *w == v) {
                    if !out.contains(&j) {
                        out.push(j);
                    }
                }
            }
        }
    };
    let mut used = Vec::new();
    reads(&e, &mut used);
    reads(cond, &mut used);
    let mut i = 0;
    while i < used.len() {
        let j = used[i];
        if let Some(n) = lp.next.get(j) {
            reads(n, &mut used);
        }
        i += 1;
    }
    let consts = |env: &[(u32, i64)]| -> Result<Vec<(u32, i64)>, NotFollowed> {
        used.iter()
            .map(|&j| {
                let next = lp.next.get(j).ok_or(None)?;
                Ok((lp.vars[j], bound(next, env).as_const().ok_or(None)?))
            })
            .collect()
    };
    let mut state: Vec<(u32, i64)> = used
        .iter()
        .map(|&j| Ok((lp.vars[j], bound(&lp.init[j], env).as_const().ok_or(None)?)))
        .collect::<Result<_, NotFollowed>>()?;
    let outer = env.len();
    for _ in 0..budget::MAX_LOOP_ITERATIONS {
        env.truncate(outer);
        env.extend(state.iter().copied());
        if bound(cond, env).as_const().ok_or(None)? == 0 {
            env.truncate(outer);
            return Ok(());
        }
        enumerate(k, &e, guards, env, (&mut *out, &mut *steps))?;
        state = consts(env)?;
    }
    Err(Some(budget::LOOP_ITERATIONS))
}

/// `k op p` as `p op' k`.
fn flipped(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        other => other,
    }
}

/// The comparison that holds where `op` does not (`None`: `!=`, or not a
/// comparison).
fn negated(op: BinOp) -> Option<BinOp> {
    Some(match op {
        BinOp::Lt => BinOp::Ge,
        BinOp::Le => BinOp::Gt,
        BinOp::Gt => BinOp::Le,
        BinOp::Ge => BinOp::Lt,
        BinOp::Ne => BinOp::Eq,
        _ => return None,
    })
}

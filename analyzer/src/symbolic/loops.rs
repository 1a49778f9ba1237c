//! The loops around an access: their iterations enumerated per lane mask
//! (entry guards, conditions, breaks, updates), up to the loop budget; a
//! loop none of whose variables reaches the access is costed once per
//! distinct lane mask with a weight (the same result as enumerating it).

use std::collections::BTreeSet;

use super::assume::{fail_origin, Said};
use super::eval::{Fail, Vals};
use super::run::Run;
use super::stride::Stride;
use crate::budget;
use crate::finding::Assumption;
use crate::hardware::WARP;
use crate::ir::{Access, Atom, BinOp, Expr, ExprKind, Kernel, UnOp};

impl Run<'_> {
    /// Lanes of `mask` for which `cond` holds; an unknown condition keeps
    /// the lane for one iteration (`unknown_trip` is set).
    fn loop_cond(&mut self, cond: &Expr, mask: u32, line: u32, unknown_trip: &mut bool) -> u32 {
        let v = self.eval(cond);
        if v.err & mask != 0 {
            *unknown_trip = true;
            self.say(Said::TripDependsOn(line, v.fail), |run| {
                Assumption::LoopTrips {
                    line,
                    origin: fail_origin(run.k, v.fail),
                }
            });
        }
        mask & (v.truthy() | v.err)
    }

    /// Runs the loops from `level` inward for the lanes of `mask`, and the
    /// access inside them.
    pub(super) fn iterate(&mut self, level: usize, mask: u32) {
        if self.budget_hit || mask == 0 {
            return;
        }
        if level == self.levels.len() {
            self.execute(mask);
            return;
        }
        if !self.a.loops.contains(&self.levels[level]) {
            self.run_to_exit(level, mask);
            return;
        }
        let lp = &self.k.loops[self.levels[level]];
        let line = lp.span.line;
        let invariant = self.invariant[level];
        let mut groups: Vec<(u32, u64)> = Vec::new();
        // A predicated access in a loop inside its `if` side: the loop is
        // unrolled and every copy issued by the warps that reach the `if`
        // (`Access::predicated_from`); its guards from there on are the
        // access's to apply.
        let entry_guards = match self.a.predicated_from {
            Some(j) => &lp.entry_guards[..(j as usize).min(lp.entry_guards.len())],
            None => &lp.entry_guards[..],
        };
        let entry = self.mask_of(entry_guards, mask);
        if entry == 0 {
            return;
        }
        for (i, e) in lp.vars.iter().zip(&lp.init) {
            let v = self.eval(e);
            self.loop_vals[*i as usize] = v;
            self.memo.touch(level + 1);
        }
        let mut inside = entry;
        let mut k = 0u64;
        let limit = self.opts.max_loop_iterations;
        let mut unknown_trip = false;
        // The innermost loop's runs of iterations that cost the same.
        let plan = self
            .plan
            .filter(|_| level + 1 == self.levels.len() && self.opts.stride);
        let mut stride = Stride::Idle(None);
        loop {
            if self.budget_hit {
                self.track = None;
                return;
            }
            if let (Some(plan), false) = (plan, unknown_trip) {
                self.stride(plan, &mut stride, (level, &mut k, inside, limit), &lp.vars);
            }
            if k >= limit {
                self.say(Said::FirstIterations(line), |_| {
                    Assumption::FirstIterations {
                        line,
                        budget: budget::loop_iterations(limit),
                    }
                });
                break;
            }
            if unknown_trip && k >= 1 {
                break;
            }
            if let Some(c) = &lp.pre_cond {
                inside = self.loop_cond(c, inside, line, &mut unknown_trip);
            }
            if inside == 0 {
                break;
            }
            if invariant {
                // Same cost every iteration: count, cost once per lane mask.
                match groups.iter_mut().find(|g| g.0 == inside) {
                    Some(g) => g.1 += 1,
                    None => groups.push((inside, 1)),
                }
            } else {
                self.iters.push(k);
                self.iterate(level + 1, inside);
                self.iters.pop();
                if self.budget_hit {
                    return;
                }
            }
            // Lanes that break leave; the rest advance.
            let mut stay = inside;
            for b in &lp.breaks {
                let mut all = inside;
                for g in b {
                    let v = self.eval(&g.cond);
                    let holds = if g.expect {
                        v.truthy()
                    } else {
                        !v.truthy() & !v.err
                    };
                    all &= holds;
                }
                stay &= !all;
                if self.reach.is_some() && b.iter().all(|g| g.exits) {
                    // Left by a `return` from the kernel.
                    self.reach_exited(all);
                }
            }
            if let Some(pc) = &lp.post_cond {
                stay = self.loop_cond(pc, stay, line, &mut unknown_trip);
            }
            self.advance(lp);
            self.memo.touch(level + 1);
            inside = stay;
            k += 1;
            if lp.pre_cond.is_none() && lp.post_cond.is_none() && lp.breaks.is_empty() {
                self.say(Said::NoExit(line), |_| Assumption::NoExit { line });
                break;
            }
        }
        self.track = None;
        for i in &lp.vars {
            self.loop_vals[*i as usize] = idle(self.k, *i);
        }
        self.memo.touch(level + 1);
        for (m, count) in groups {
            let saved = self.weight;
            self.weight = self.weight.saturating_mul(count);
            self.iters.push(0);
            self.iterate(level + 1, m);
            self.iters.pop();
            self.weight = saved;
            if self.budget_hit {
                return;
            }
        }
    }
}

impl Run<'_> {
    /// Assigns loop `lp`'s variables their next values (each update reads
    /// the old values).
    fn advance(&mut self, lp: &crate::ir::Loop) {
        if let ([var], [next]) = (&lp.vars[..], &lp.next[..]) {
            // One variable (the common case): no buffer for the update.
            let v = self.eval(next);
            self.loop_vals[*var as usize] = v;
            return;
        }
        let next: Vec<Vals> = lp.next.iter().map(|e| self.eval(e)).collect();
        for (i, v) in lp.vars.iter().zip(next) {
            self.loop_vals[*i as usize] = v;
        }
    }
}

/// Loop variable `v`'s value where no level sets it: its after-loop
/// unknown where it has one (an exit the run does not simulate), else
/// unknown as a loop variable.
pub(super) fn idle(k: &Kernel, v: u32) -> Vals {
    match k.loop_vars.get(v as usize).and_then(|x| x.exit_unknown) {
        Some(u) => Vals::failed(Fail::Unknown(u)),
        None => Vals::failed(Fail::LoopVar(v)),
    }
}

impl Run<'_> {
    /// A loop before the access (level `level`): runs it to each lane's
    /// exit (lanes that do not enter keep the initial values), then the
    /// levels inside once with its variables at their exit values. A lane
    /// whose exit is not found (an unknown condition, the loop budget)
    /// takes the variable's after-loop unknown.
    fn run_to_exit(&mut self, level: usize, mask: u32) {
        let lp = &self.k.loops[self.levels[level]];
        let vars = lp.vars.clone();
        for (i, e) in vars.iter().zip(&lp.init) {
            let v = self.eval(e);
            self.loop_vals[*i as usize] = v;
        }
        self.memo.touch(level + 1);
        // The values each lane leaves with (entry: those who never enter).
        let mut exit: Vec<Vals> = vars.iter().map(|v| self.loop_vals[*v as usize]).collect();
        let mut inside = self.mask_of(&lp.entry_guards, mask);
        let freeze = |run: &Self, exit: &mut Vec<Vals>, lanes: u32| {
            for (slot, v) in exit.iter_mut().zip(&vars) {
                let now = run.loop_vals[*v as usize];
                for l in 0..WARP {
                    if lanes & (1 << l) != 0 {
                        slot.v[l] = now.v[l];
                        slot.err = (slot.err & !(1 << l)) | (now.err & (1 << l));
                    }
                }
                if now.err & lanes != 0 {
                    slot.fail = now.fail;
                }
            }
        };
        // Lanes whose exit is not found: an unknown condition, the budget.
        let mut lost = 0u32;
        let mut k = 0u64;
        while inside != 0 && !self.budget_hit && k < self.opts.max_loop_iterations {
            if let Some(c) = &lp.pre_cond {
                self.leave_where_false(c, &mut inside, &mut lost, &mut |run, lanes| {
                    freeze(run, &mut exit, lanes)
                });
                if inside == 0 {
                    break;
                }
            }
            self.advance(lp);
            self.memo.touch(level + 1);
            if let Some(c) = &lp.post_cond {
                self.leave_where_false(c, &mut inside, &mut lost, &mut |run, lanes| {
                    freeze(run, &mut exit, lanes)
                });
            }
            k += 1;
        }
        if inside != 0 && !self.budget_hit {
            // Past the loop budget: a counted loop whose variables step
            // by amounts the loop does not change jumps to its exit.
            let done = self.fast_forward(lp, inside);
            freeze(self, &mut exit, done);
            inside &= !done;
        }
        lost |= inside;
        if lost != 0 {
            for (slot, v) in exit.iter_mut().zip(&vars) {
                slot.err |= lost;
                let u = self.k.loop_vars[*v as usize].exit_unknown;
                slot.fail = u.map_or(Fail::LoopVar(*v), Fail::Unknown);
            }
        }
        for (v, x) in vars.iter().zip(exit) {
            self.loop_vals[*v as usize] = x;
        }
        self.memo.touch(level + 1);
        self.iterate(level + 1, mask);
        for v in &vars {
            self.loop_vals[*v as usize] = idle(self.k, *v);
        }
        self.memo.touch(level + 1);
    }
}

impl Run<'_> {
    /// Lanes of `inside` for which loop condition `c` is false leave the
    /// loop (`leave` keeps their values); those for which it is not known
    /// are `lost`.
    fn leave_where_false(
        &mut self,
        c: &Expr,
        inside: &mut u32,
        lost: &mut u32,
        leave: &mut dyn FnMut(&Self, u32),
    ) {
        let v = self.eval(c);
        *lost |= v.err & *inside;
        let gone = *inside & !v.truthy() & !v.err;
        leave(self, gone);
        *inside &= !gone & !v.err;
    }

    /// Lanes of `inside` that loop `lp` (a condition `i < b` on a variable
    /// stepping by a constant `s`, every other variable stepping by an
    /// amount free of the loop's variables, no `do … while`) takes to its
    /// exit in closed form: `r = ceil((b - i) / s)` more iterations, each
    /// variable advanced by `r` steps (rodinia hotspot3D's `W += xy` over
    /// `k < nz - 1`, past 128 iterations). Returns the lanes done.
    fn fast_forward(&mut self, lp: &crate::ir::Loop, inside: u32) -> u32 {
        let Some(form) = counted(lp) else {
            return 0;
        };
        let own = |e: &Expr| {
            e.atoms()
                .into_iter()
                .any(|a| matches!(a, Atom::LoopVar(v) if lp.vars.contains(&v)))
        };
        // A variable that does not step (`temp = t[c]`) is not known at
        // the exit: its after-loop unknown.
        let steps: Vec<Option<Vals>> = lp
            .vars
            .iter()
            .zip(&lp.next)
            .map(|(v, next)| step_of(*v, next).filter(|d| !own(d)).map(|d| self.eval(&d)))
            .collect();
        let Some(s) = steps[form.var] else {
            return 0;
        };
        if own(&form.bound) {
            return 0;
        }
        let b = self.eval(&form.bound);
        let i = self.loop_vals[lp.vars[form.var] as usize];
        let mut done = 0u32;
        let mut r = [0i64; WARP];
        for (l, r) in r.iter_mut().enumerate() {
            let bit = 1u32 << l;
            if inside & bit == 0 || (b.err | i.err | s.err) & bit != 0 {
                continue;
            }
            if let Some(n) = form.remaining(i.v[l], b.v[l], s.v[l]) {
                *r = n;
                done |= bit;
            }
        }
        for (v, d) in lp.vars.iter().zip(&steps) {
            let mut x = self.loop_vals[*v as usize];
            let unknown = self.k.loop_vars[*v as usize].exit_unknown;
            for (l, r) in r.iter().enumerate() {
                if done & (1 << l) == 0 {
                    continue;
                }
                match d {
                    Some(d) if d.err & (1 << l) == 0 => {
                        x.v[l] = x.v[l].wrapping_add(r.wrapping_mul(d.v[l]));
                    }
                    Some(d) => {
                        x.err |= 1 << l;
                        x.fail = d.fail;
                    }
                    None => {
                        x.err |= 1 << l;
                        x.fail = unknown.map_or(Fail::LoopVar(*v), Fail::Unknown);
                    }
                }
            }
            self.loop_vals[*v as usize] = x;
        }
        done
    }
}

/// A loop's condition `vars[var] op bound` (the variable on the left).
pub(super) struct Counted {
    pub(super) var: usize,
    op: BinOp,
    pub(super) bound: Expr,
}

impl Counted {
    /// Iterations left from `i` with step `s` until `i op b` fails; `None`
    /// when it never does or the step is not towards the bound.
    pub(super) fn remaining(&self, i: i64, b: i64, s: i64) -> Option<i64> {
        let (gap, s) = match self.op {
            BinOp::Lt if s > 0 => (b.checked_sub(i)?, s),
            BinOp::Le if s > 0 => (b.checked_sub(i)?.checked_add(1)?, s),
            BinOp::Gt if s < 0 => (i.checked_sub(b)?, s.checked_neg()?),
            BinOp::Ge if s < 0 => (i.checked_sub(b)?.checked_add(1)?, s.checked_neg()?),
            _ => return None,
        };
        Some(if gap <= 0 { 0 } else { (gap - 1) / s + 1 })
    }
}

/// `lp`'s condition as a [`Counted`] form: checked before each iteration
/// (no `do … while`, no `break`).
pub(super) fn counted(lp: &crate::ir::Loop) -> Option<Counted> {
    if lp.post_cond.is_some() || !lp.breaks.is_empty() {
        return None;
    }
    let ExprKind::Bin(op, a, b) = lp.pre_cond.as_ref()?.kind() else {
        return None;
    };
    let var_of = |e: &Expr| match e.kind() {
        ExprKind::Atom(Atom::LoopVar(v)) => lp.vars.iter().position(|x| x == v),
        _ => None,
    };
    let flipped = |op: &BinOp| match op {
        BinOp::Lt => Some(BinOp::Gt),
        BinOp::Le => Some(BinOp::Ge),
        BinOp::Gt => Some(BinOp::Lt),
        BinOp::Ge => Some(BinOp::Le),
        _ => None,
    };
    flipped(op)?;
    match (var_of(a), var_of(b)) {
        (Some(var), None) => Some(Counted {
            var,
            op: *op,
            bound: b.clone(),
        }),
        (None, Some(var)) => Some(Counted {
            var,
            op: flipped(op)?,
            bound: a.clone(),
        }),
        _ => None,
    }
}

/// How loop variable `v` changes per iteration when its update is `v + d`,
/// `d + v` or `v - d` (`d`, or its negation), or `v` itself (0).
pub(super) fn step_of(v: u32, next: &Expr) -> Option<Expr> {
    let is_v = |e: &Expr| matches!(e.kind(), ExprKind::Atom(Atom::LoopVar(x)) if *x == v);
    if is_v(next) {
        return Some(Expr::konst(0));
    }
    match next.kind() {
        ExprKind::Bin(BinOp::Add, a, d) if is_v(a) => Some(d.clone()),
        ExprKind::Bin(BinOp::Add, d, a) if is_v(a) => Some(d.clone()),
        ExprKind::Bin(BinOp::Sub, a, d) if is_v(a) => Some(Expr::un(UnOp::Neg, d.clone())),
        _ => None,
    }
}

/// For each enclosing loop (outermost first): true when none of its
/// variables reaches the access's address, guards or the conditions of the
/// loops inside it (directly or through other loop variables), so every
/// iteration costs the same.
pub(super) fn invariant_loops(k: &Kernel, a: &Access, levels: &[usize]) -> Vec<bool> {
    (0..levels.len())
        .map(|level| {
            if !a.loops.contains(&levels[level]) {
                // A loop before the access: run for its exit values.
                return false;
            }
            let mut roots: Vec<&Expr> = vec![&a.offset];
            roots.extend(a.guards.iter().map(|g| &g.cond));
            for &li in &levels[level + 1..] {
                let lp = &k.loops[li];
                roots.extend(lp.pre_cond.iter());
                roots.extend(lp.post_cond.iter());
                roots.extend(lp.entry_guards.iter().map(|g| &g.cond));
                roots.extend(lp.breaks.iter().flatten().map(|g| &g.cond));
            }
            let relevant = relevant_vars(k, &roots);
            !k.loops[levels[level]]
                .vars
                .iter()
                .any(|v| relevant.contains(v))
        })
        .collect()
}

/// The loops access `a`'s values depend on, outermost first (by loop id:
/// source order, a loop before the loops inside it): its enclosing loops
/// and the loops before it whose exit values it reads (a variable after
/// its loop, [`crate::ir::LoopVar::exit_unknown`]), directly or through
/// those loops' own control.
pub(super) fn levels(k: &Kernel, a: &Access) -> Vec<usize> {
    // A loop's control (what decides which lanes run which iterations);
    // its variables' values are followed only where they are read.
    let control = |lp: &'_ crate::ir::Loop| -> Vec<Expr> {
        let mut v: Vec<Expr> = lp.pre_cond.iter().chain(&lp.post_cond).cloned().collect();
        v.extend(lp.entry_guards.iter().map(|g| g.cond.clone()));
        v.extend(lp.breaks.iter().flatten().map(|g| g.cond.clone()));
        v
    };
    let mut work: Vec<Expr> = vec![a.offset.clone()];
    work.extend(a.guards.iter().map(|g| g.cond.clone()));
    for &li in &a.loops {
        work.extend(control(&k.loops[li]));
    }
    let mut seen: BTreeSet<u32> = BTreeSet::new();
    let mut exits: BTreeSet<usize> = BTreeSet::new();
    while let Some(e) = work.pop() {
        for atom in e.atoms() {
            let Atom::LoopVar(v) = atom else {
                continue;
            };
            if !seen.insert(v) {
                continue;
            }
            let Some(info) = k.loop_vars.get(v as usize) else {
                continue;
            };
            push_values(k, v, &mut work);
            let lp = &k.loops[info.loop_id];
            // Simulated once per warp: a loop inside one of the access's
            // loops (rerun every iteration) stays unknown.
            let nested = std::iter::successors(lp.parent, |&p| k.loops[p].parent)
                .any(|p| a.loops.contains(&p));
            let exit = info.exit_unknown.is_some() && !a.loops.contains(&info.loop_id) && !nested;
            if exit && exits.insert(info.loop_id) {
                work.extend(control(lp));
            }
        }
    }
    if exits.is_empty() {
        return a.loops.clone();
    }
    let mut levels = a.loops.clone();
    levels.extend(exits);
    levels.sort_unstable();
    levels.dedup();
    levels
}

/// Loop variables `roots` depend on, through the variables' own updates.
fn relevant_vars(k: &Kernel, roots: &[&Expr]) -> BTreeSet<u32> {
    reachable_atoms(k, roots, &[])
        .into_iter()
        .filter_map(|a| match a {
            Atom::LoopVar(v) => Some(v),
            _ => None,
        })
        .collect()
}

/// Pushes loop variable `v`'s initial value and update onto `work`, for a
/// walk that follows it.
fn push_values(k: &Kernel, v: u32, work: &mut Vec<Expr>) {
    let Some(info) = k.loop_vars.get(v as usize) else {
        return;
    };
    let lp = &k.loops[info.loop_id];
    if let Some(i) = lp.vars.iter().position(|x| *x == v) {
        work.extend(lp.init.get(i).cloned());
        work.extend(lp.next.get(i).cloned());
    }
}

/// Every atom `roots` read, following loop variables (theirs and `vars`)
/// to their initial values and updates.
pub(super) fn reachable_atoms(k: &Kernel, roots: &[&Expr], vars: &[u32]) -> Vec<Atom> {
    let mut atoms: Vec<Atom> = Vec::new();
    let mut done: BTreeSet<u32> = BTreeSet::new();
    let mut work: Vec<Expr> = roots.iter().map(|e| (*e).clone()).collect();
    let mut follow = |v: u32, work: &mut Vec<Expr>| {
        if done.insert(v) {
            push_values(k, v, work);
        }
    };
    for v in vars {
        follow(*v, &mut work);
    }
    while let Some(e) = work.pop() {
        for a in e.atoms() {
            if let Atom::LoopVar(v) = a {
                follow(v, &mut work);
            }
            if !atoms.contains(&a) {
                atoms.push(a);
            }
        }
    }
    atoms
}

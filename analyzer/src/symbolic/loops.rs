//! The loops around an access: their iterations enumerated per lane mask
//! (entry guards, conditions, breaks, updates), up to the loop budget; a
//! loop none of whose variables reaches the access is costed once per
//! distinct lane mask with a weight (the same result as enumerating it).

use std::collections::BTreeSet;

use super::assume::{fail_origin, Said};
use super::eval::{Fail, Vals};
use super::run::Run;
use crate::budget;
use crate::finding::Assumption;
use crate::ir::{Access, Atom, Expr, Kernel};

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
        if level == self.a.loops.len() {
            self.execute(mask);
            return;
        }
        let lp = &self.k.loops[self.a.loops[level]];
        let line = lp.span.line;
        let invariant = self.invariant[level];
        let mut groups: Vec<(u32, u64)> = Vec::new();
        let entry = self.mask_of(&lp.entry_guards, mask);
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
        loop {
            if self.budget_hit {
                return;
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
            }
            if let Some(pc) = &lp.post_cond {
                stay = self.loop_cond(pc, stay, line, &mut unknown_trip);
            }
            if let ([var], [next]) = (&lp.vars[..], &lp.next[..]) {
                // One variable (the common case): no buffer for the update.
                let v = self.eval(next);
                self.loop_vals[*var as usize] = v;
            } else {
                // Several: every update reads the old values.
                let next: Vec<Vals> = lp.next.iter().map(|e| self.eval(e)).collect();
                for (i, v) in lp.vars.iter().zip(next) {
                    self.loop_vals[*i as usize] = v;
                }
            }
            self.memo.touch(level + 1);
            inside = stay;
            k += 1;
            if lp.pre_cond.is_none() && lp.post_cond.is_none() && lp.breaks.is_empty() {
                self.say(Said::NoExit(line), |_| Assumption::NoExit { line });
                break;
            }
        }
        for i in &lp.vars {
            self.loop_vals[*i as usize] = Vals::failed(Fail::LoopVar(*i));
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

/// For each enclosing loop (outermost first): true when none of its
/// variables reaches the access's address, guards or the conditions of the
/// loops inside it (directly or through other loop variables), so every
/// iteration costs the same.
pub(super) fn invariant_loops(k: &Kernel, a: &Access) -> Vec<bool> {
    (0..a.loops.len())
        .map(|level| {
            let mut roots: Vec<&Expr> = vec![&a.offset];
            roots.extend(a.guards.iter().map(|g| &g.cond));
            for &li in &a.loops[level + 1..] {
                let lp = &k.loops[li];
                roots.extend(lp.pre_cond.iter());
                roots.extend(lp.post_cond.iter());
                roots.extend(lp.entry_guards.iter().map(|g| &g.cond));
                roots.extend(lp.breaks.iter().flatten().map(|g| &g.cond));
            }
            let relevant = relevant_vars(k, &roots);
            !k.loops[a.loops[level]]
                .vars
                .iter()
                .any(|v| relevant.contains(v))
        })
        .collect()
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

/// Every atom `roots` read, following loop variables (theirs and `vars`)
/// to their initial values and updates.
pub(super) fn reachable_atoms(k: &Kernel, roots: &[&Expr], vars: &[u32]) -> Vec<Atom> {
    let mut atoms: Vec<Atom> = Vec::new();
    let mut done: BTreeSet<u32> = BTreeSet::new();
    let mut work: Vec<Expr> = roots.iter().map(|e| (*e).clone()).collect();
    let mut follow = |v: u32, work: &mut Vec<Expr>| {
        if !done.insert(v) {
            return;
        }
        let Some(info) = k.loop_vars.get(v as usize) else {
            return;
        };
        let lp = &k.loops[info.loop_id];
        if let Some(i) = lp.vars.iter().position(|x| *x == v) {
            work.extend(lp.init.get(i).cloned());
            work.extend(lp.next.get(i).cloned());
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

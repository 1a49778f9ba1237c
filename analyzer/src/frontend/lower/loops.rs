//! Loops: each variable assigned in a loop becomes loop-carried (its value
//! at entry, its value after one iteration); the condition and update are
//! recorded on the IR's `Loop`; after a loop with a condition and no
//! `break` or `return` a carried variable is still its loop variable,
//! which the engine runs the loop to each lane's exit for (else it is an
//! unknown exit value).

use tree_sitter::Node;

use super::{LoopCtx, Lowerer, Ptr, Scope, Src, Val};
use crate::budget;
use crate::finding::{Cut, Origin};
use crate::frontend::fields::Fields;
use crate::ir::{Atom, Expr, Guard, Loop, LoopVar};

/// Identifiers assigned (`=`, `op=`, `++`, `--`) anywhere under `n`;
/// `false` when the walk ran out of `budget::MAX_SCAN_NODES` first.
fn collect_assigned(n: Node, src: &Src, out: &mut Vec<String>) -> bool {
    let mut stack = vec![n];
    let mut seen = 0;
    while let Some(x) = stack.pop() {
        seen += 1;
        if seen > budget::MAX_SCAN_NODES {
            return false;
        }
        let target = match x.node_kind() {
            "assignment_expression" => x.field("left"),
            "update_expression" => x.field("argument"),
            _ => None,
        };
        if let Some(mut t) = target {
            while t.node_kind() == "parenthesized_expression" {
                match t.named(0) {
                    Some(i) => t = i,
                    None => break,
                }
            }
            if t.node_kind() == "identifier" {
                let name = src.text(t);
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        let mut c = x.walk();
        stack.extend(x.children(&mut c));
    }
    true
}

/// A variable carried around a loop: its name, and the objects of the
/// pointers it holds, one loop variable per object (`None`: an integer,
/// itself the loop variable; one object: a pointer, whose offset is; more:
/// a [`Val::Either`], one offset per side, in order).
struct Carried {
    name: String,
    objects: Option<Vec<usize>>,
    /// A pointer choice's conditions at entry, in order: the body keeps
    /// them, so an iteration that changes them is too complex.
    conds: Vec<Expr>,
}

/// A pointer choice's conditions, in order (none for one pointer).
fn conditions(v: &Val) -> Vec<Expr> {
    match v {
        Val::Either(e) => {
            let mut out = vec![e.0.clone()];
            out.extend(conditions(&e.1));
            out.extend(conditions(&e.2));
            out
        }
        _ => Vec::new(),
    }
}

/// Whether a value holds the same choice as one carried in: the same
/// objects under the same conditions.
fn same_choice(v: &Val, objects: &[usize], conds: &[Expr]) -> bool {
    let now = conditions(v);
    pointers(v).is_some_and(|ps| ps.iter().map(|p| p.obj).eq(objects.iter().copied()))
        && now.len() == conds.len()
        && now.iter().zip(conds).all(|(a, b)| a.same(b))
}

/// The pointers a value holds, in order: one for a pointer, each side's
/// for a [`Val::Either`] (a null side holds none); `None` if any is not a
/// pointer.
fn pointers(v: &Val) -> Option<Vec<&Ptr>> {
    match v {
        Val::Ptr(p) => Some(vec![p]),
        v if v.is_null() => Some(Vec::new()),
        Val::Either(e) => {
            let mut out = pointers(&e.1)?;
            out.extend(pointers(&e.2)?);
            Some(out)
        }
        _ => None,
    }
}

/// `v` with the offset of each pointer it holds replaced, in order, by
/// the next of `offs`.
fn with_offsets(v: &Val, offs: &mut impl Iterator<Item = Expr>) -> Val {
    match v {
        Val::Ptr(p) => Val::Ptr(Ptr {
            obj: p.obj,
            off: offs.next().unwrap_or_else(|| Expr::atom(Atom::TooComplex)),
            pointee: p.pointee.clone(),
        }),
        Val::Either(e) => {
            let a = with_offsets(&e.1, offs);
            let b = with_offsets(&e.2, offs);
            Val::Either(Box::new((e.0.clone(), a, b)))
        }
        other => other.clone(),
    }
}

impl<'a, 't> Lowerer<'a, 't> {
    pub(super) fn loop_stmt(&mut self, n: Node, src: &Src) {
        let kind = n.node_kind();
        self.scopes.push(Scope::new());
        if kind == "for_statement" {
            if let Some(init) = n.field("initializer") {
                if init.node_kind() == "declaration" {
                    self.local_decl(init, src);
                } else {
                    self.expr(init, src);
                }
            }
        }
        let body = n.field("body");
        let cond_node = n.field("condition").map(|c| {
            if c.node_kind() == "condition_clause" {
                c.field("value").or_else(|| c.named(0)).unwrap_or(c)
            } else if c.node_kind() == "parenthesized_expression" && kind == "do_statement" {
                c.named(0).unwrap_or(c)
            } else {
                c
            }
        });
        let update = n.field("update");
        let mut assigned = Vec::new();
        for part in [body, cond_node, update].into_iter().flatten() {
            if !collect_assigned(part, src, &mut assigned)
                || !self.objects_written(part, src, &mut assigned)
            {
                self.budget_note(part, src, budget::SCAN_NODES, Cut::LoopScan);
            }
        }
        let id = self.k.loops.len();
        let span = self.span(n, src);
        self.k.loops.push(Loop {
            parent: self.open_loops.last().copied(),
            vars: Vec::new(),
            init: Vec::new(),
            next: Vec::new(),
            pre_cond: None,
            post_cond: None,
            entry_guards: self.current_guards(),
            breaks: Vec::new(),
            splits_regions: false,
            fenced: false,
            span,
        });
        let (region, slow_paths, fences) = (self.region, self.slow_paths, self.fences);
        let carried = self.carry(assigned, id);
        self.open_loops.push(id);
        // A value stored before the loop or in an earlier iteration's
        // later statements is not the one a load here reads every time.
        self.own_stores.clear();
        self.frame().loops.push(LoopCtx {
            id,
            ..LoopCtx::default()
        });
        if kind != "do_statement" {
            let pre = cond_node.map(|c| {
                if c.node_kind() == "declaration" {
                    self.local_decl(c, src);
                    self.unknown(Origin::DeclarationLoopCondition, None)
                } else {
                    self.int(c, src)
                }
            });
            self.k.loops[id].pre_cond = pre;
        }
        if let Some(b) = body {
            self.stmt(b, src);
            self.frame().terminated = false;
        }
        // The update runs for lanes that did not break or return this iteration.
        if let Some(l) = self.frame().loops.last_mut() {
            l.skip.retain(|_| false);
        }
        if let Some(u) = update {
            self.expr(u, src);
        }
        if kind == "do_statement" {
            let post = cond_node.map(|c| self.int(c, src));
            self.k.loops[id].post_cond = post;
        }
        self.k.loops[id].next = self.next_values(&carried);
        self.k.loops[id].splits_regions = self.region != region || self.slow_paths != slow_paths;
        self.k.loops[id].fenced = self.fences != fences;
        self.open_loops.pop();
        self.own_stores.clear();
        let ctx = self.frame().loops.pop().unwrap_or_default();
        if ctx.returned {
            self.returned_in_loop(span.line);
        }
        let simulable = !ctx.returned
            && self.k.loops[id].breaks.is_empty()
            && (self.k.loops[id].pre_cond.is_some() || self.k.loops[id].post_cond.is_some());
        self.exit_values(carried, id, simulable, span.line);
        self.scopes.pop();
    }

    /// Makes each variable in `assigned` that holds an integer or
    /// pointers carried by loop `id`: its value at entry is the loop's
    /// `init`, and in the body it is the loop variable (a pointer's offset;
    /// one per object of a [`Val::Either`]).
    fn carry(&mut self, assigned: Vec<String>, id: usize) -> Vec<Carried> {
        let mut carried = Vec::new();
        for name in assigned {
            let Some(b) = self.lookup(&name).cloned() else {
                continue;
            };
            let (inits, objects) = match &b.val {
                Val::Int(e) => (vec![e.clone()], None),
                v => match pointers(v) {
                    Some(ps) => (
                        ps.iter().map(|p| p.off.clone()).collect(),
                        Some(ps.iter().map(|p| p.obj).collect()),
                    ),
                    None => continue,
                },
            };
            let mut atoms = Vec::new();
            for init in inits {
                let var = self.k.loop_vars.len() as u32;
                self.k.loop_vars.push(LoopVar {
                    name: name.clone(),
                    loop_id: id,
                    exit_unknown: None,
                });
                self.k.loops[id].vars.push(var);
                self.k.loops[id].init.push(init);
                atoms.push(Expr::atom(Atom::LoopVar(var)));
            }
            let newval = match objects {
                None => Val::Int(atoms.remove(0)),
                Some(_) => with_offsets(&b.val, &mut atoms.into_iter()),
            };
            if let Some(b) = self.lookup_mut(&name) {
                b.val = newval;
            }
            let conds = conditions(&b.val);
            carried.push(Carried {
                name,
                objects,
                conds,
            });
        }
        carried
    }

    /// Each carried variable's value at the end of one iteration (the
    /// loop's `next`), in terms of the loop variables: a pointer's offset
    /// while it still points into the same object(s), else too complex.
    fn next_values(&self, carried: &[Carried]) -> Vec<Expr> {
        let mut next = Vec::new();
        for c in carried {
            let v = self.lookup(&c.name).map(|b| b.val.clone());
            match (&v, &c.objects) {
                (Some(Val::Int(e)), None) => next.push(e.clone()),
                (Some(v), Some(objs)) => match pointers(v) {
                    Some(ps) if same_choice(v, objs, &c.conds) => {
                        next.extend(ps.iter().map(|p| p.off.clone()))
                    }
                    _ => next.extend(objs.iter().map(|_| Expr::atom(Atom::TooComplex))),
                },
                (_, objs) => {
                    let n = objs.as_ref().map_or(1, Vec::len);
                    next.extend((0..n).map(|_| Expr::atom(Atom::TooComplex)));
                }
            }
        }
        next
    }

    /// Some lanes returned inside the loop at `line`: after the outermost
    /// loop they are dead (an unknown guard), inside another loop that
    /// loop is marked as returned from too.
    fn returned_in_loop(&mut self, line: u32) {
        let outermost = self.frame().loops.iter().all(|l| l.id == usize::MAX);
        if outermost {
            let u = self.unknown(Origin::ReturnedInLoop { line }, None);
            let exits = self.inline_depth == 0;
            self.frame().dead.push(Guard {
                cond: u,
                expect: false,
                site: None,
                exits,
            });
        } else if let Some(p) = self.frame().loops.last_mut() {
            p.returned = true;
        }
    }

    /// After loop `id` (at `line`), carried variables hold their exit
    /// values (a pointer keeps its object): where the loop is `simulable`
    /// (a condition, no `break` or `return`), the loop variable itself,
    /// which the engine runs the loop for ([`LoopVar::exit_unknown`] when
    /// it cannot); else unknown.
    fn exit_values(&mut self, carried: Vec<Carried>, id: usize, simulable: bool, line: u32) {
        let vars = self.k.loops[id].vars.clone();
        // Each carried variable's loop variables, in order.
        let mut vars_of = {
            let mut all = vars.iter().copied();
            carried
                .iter()
                .map(|c| {
                    let n = c.objects.as_ref().map_or(1, Vec::len);
                    all.by_ref().take(n).collect::<Vec<u32>>()
                })
                .collect::<Vec<_>>()
                .into_iter()
        };
        let mut vars = vars.into_iter();
        for Carried {
            name,
            objects,
            conds,
        } in carried
        {
            let count = objects.as_ref().map_or(1, Vec::len);
            let mut exits = Vec::new();
            for _ in 0..count {
                let origin = Origin::AfterLoop {
                    name: name.clone(),
                    line,
                };
                let u = self.unknown(origin, None);
                let u = match (simulable, vars.next(), u.kind()) {
                    (true, Some(var), crate::ir::ExprKind::Atom(Atom::Unknown(ui))) => {
                        self.k.loop_vars[var as usize].exit_unknown = Some(*ui);
                        Expr::atom(Atom::LoopVar(var))
                    }
                    _ => u,
                };
                exits.push(u);
            }
            // A choice the body changed (another object, another
            // condition) is not the one the exit values are of.
            let changed = match (self.lookup(&name), &objects) {
                (Some(b), Some(objs)) => !same_choice(&b.val, objs, &conds),
                _ => false,
            };
            if changed {
                let u = self.unknown(
                    Origin::AfterLoop {
                        name: name.clone(),
                        line,
                    },
                    None,
                );
                if let Some(b) = self.lookup_mut(&name) {
                    b.val = Val::Int(u);
                }
                continue;
            }
            // A variable the body never changes (its next value is its
            // loop variable: a member carried because a method was called)
            // leaves the loop as it entered.
            let own: Vec<u32> = vars_of.next().unwrap_or_default();
            let unchanged = !own.is_empty()
                && own.iter().all(|&v| {
                    let i = self.k.loops[id].vars.iter().position(|x| *x == v);
                    i.and_then(|i| self.k.loops[id].next.get(i))
                        .is_some_and(|e| e.same(&Expr::atom(Atom::LoopVar(v))))
                });
            if unchanged {
                let inits: Vec<Expr> = own
                    .iter()
                    .filter_map(|&v| {
                        let i = self.k.loops[id].vars.iter().position(|x| *x == v)?;
                        self.k.loops[id].init.get(i).cloned()
                    })
                    .collect();
                exits = inits;
            }
            if let Some(b) = self.lookup_mut(&name) {
                b.val = match (&b.val, objects.is_some()) {
                    (v @ (Val::Ptr(_) | Val::Either(_)), true) => {
                        with_offsets(v, &mut exits.into_iter())
                    }
                    _ => Val::Int(exits.remove(0)),
                };
            }
        }
    }
}

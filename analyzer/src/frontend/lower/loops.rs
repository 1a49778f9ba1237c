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

/// A variable carried around a loop: its name, and whether it is a
/// pointer (the loop variable is then its offset).
struct Carried {
    name: String,
    is_ptr: bool,
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
            if !collect_assigned(part, src, &mut assigned) {
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

    /// Makes each variable in `assigned` that holds an integer or a pointer
    /// carried by loop `id`: its value at entry is the loop's `init`, and
    /// in the body it is the loop variable.
    fn carry(&mut self, assigned: Vec<String>, id: usize) -> Vec<Carried> {
        let mut carried = Vec::new();
        for name in assigned {
            let Some(b) = self.lookup(&name).cloned() else {
                continue;
            };
            let var = self.k.loop_vars.len() as u32;
            let atom = Expr::atom(Atom::LoopVar(var));
            let (init, newval, is_ptr) = match b.val {
                Val::Int(e) => (e, Val::Int(atom), false),
                Val::Ptr(p) => (
                    p.off,
                    Val::Ptr(Ptr {
                        obj: p.obj,
                        off: atom,
                        pointee: p.pointee,
                    }),
                    true,
                ),
                _ => continue,
            };
            self.k.loop_vars.push(LoopVar {
                name: name.clone(),
                loop_id: id,
                exit_unknown: None,
            });
            self.k.loops[id].vars.push(var);
            self.k.loops[id].init.push(init);
            if let Some(b) = self.lookup_mut(&name) {
                b.val = newval;
            }
            carried.push(Carried { name, is_ptr });
        }
        carried
    }

    /// Each carried variable's value at the end of one iteration (the
    /// loop's `next`), in terms of the loop variables.
    fn next_values(&self, carried: &[Carried]) -> Vec<Expr> {
        let mut next = Vec::new();
        for c in carried {
            let v = self.lookup(&c.name).map(|b| b.val.clone());
            let e = match (v, c.is_ptr) {
                (Some(Val::Int(e)), false) => e,
                (Some(Val::Ptr(p)), true) => p.off,
                _ => Expr::atom(Atom::TooComplex),
            };
            next.push(e);
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
            self.frame().dead.push(Guard {
                cond: u,
                expect: false,
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
        for (i, Carried { name, is_ptr }) in carried.into_iter().enumerate() {
            let origin = Origin::AfterLoop {
                name: name.clone(),
                line,
            };
            let u = self.unknown(origin, None);
            let u = match (simulable, vars.get(i), u.kind()) {
                (true, Some(&var), crate::ir::ExprKind::Atom(Atom::Unknown(ui))) => {
                    self.k.loop_vars[var as usize].exit_unknown = Some(*ui);
                    Expr::atom(Atom::LoopVar(var))
                }
                _ => u,
            };
            if let Some(b) = self.lookup_mut(&name) {
                b.val = match (&b.val, is_ptr) {
                    (Val::Ptr(p), true) => Val::Ptr(Ptr {
                        obj: p.obj,
                        off: u,
                        pointee: p.pointee.clone(),
                    }),
                    _ => Val::Int(u),
                };
            }
        }
    }
}

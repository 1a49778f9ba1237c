//! Statements: blocks open scopes, `if` branches run under guards and
//! merge their variables into selects, `switch` cases run under their
//! value's guard (falling through where they do), and `return`, `break`
//! and `continue` turn into guards on what follows. Control flow counts in
//! `Access::undecided`, except an `if` small enough for nvcc to if-convert.

use std::collections::HashMap;

use tree_sitter::Node;

use super::{LoopCtx, Lowerer, Scope, Src, Val};
use crate::budget;
use crate::finding::{NoteKind, Origin};
use crate::frontend::fields::Fields;
use crate::frontend::fuse;
use crate::frontend::types::Ty;
use crate::ir::{BinOp, Expr, Guard, Span};

/// An `if` that nvcc turns into a select: it only assigns values (no
/// memory access, loop, jump or call other than a branch-free math
/// function) and is small. `if (d > 0) cnd = 1.0f - cnd;` in BlackScholes
/// leaves the field reads around it merged (measured).
fn if_converts(n: Node, src: &Src) -> bool {
    if n.node_kind() != "if_statement" {
        return false;
    }
    let mut stack = vec![n];
    let mut seen = 0;
    while let Some(x) = stack.pop() {
        seen += 1;
        if seen > budget::MAX_IF_CONVERTED_NODES {
            return false;
        }
        let ok = match x.node_kind() {
            "subscript_expression"
            | "for_statement"
            | "while_statement"
            | "do_statement"
            | "switch_statement"
            | "return_statement"
            | "break_statement"
            | "continue_statement"
            | "goto_statement"
            | "labeled_statement"
            | "declaration"
            | "ERROR" => false,
            "pointer_expression" => src.text(x).trim_start().starts_with('&'),
            "field_expression" => !src.text(x).contains("->"),
            "call_expression" => x
                .field("function")
                .is_some_and(|f| fuse::MERGES.contains(&src.text(f).as_str())),
            _ => true,
        };
        if !ok {
            return false;
        }
        stack.extend(x.kids());
    }
    true
}

/// Whether `s` is one plain assignment to memory (`x[i] = v;`, in braces
/// or not): no compound operator, the target a subscript, a dereference
/// or a field.
fn is_plain_store(s: Node) -> bool {
    let mut s = s;
    if s.node_kind() == "compound_statement" {
        let kids: Vec<Node> = s
            .kids()
            .into_iter()
            .filter(|k| k.node_kind() != "comment")
            .collect();
        match kids[..] {
            [one] => s = one,
            _ => return false,
        }
    }
    let Some(e) = (s.node_kind() == "expression_statement")
        .then(|| s.named(0))
        .flatten()
    else {
        return false;
    };
    e.node_kind() == "assignment_expression"
        && e.field("operator").is_some_and(|o| o.node_kind() == "=")
        && e.field("left").is_some_and(|l| {
            matches!(
                l.node_kind(),
                "subscript_expression" | "pointer_expression" | "field_expression"
            )
        })
}

impl<'a, 't> Lowerer<'a, 't> {
    pub(crate) fn stmt(&mut self, n: Node, src: &Src) {
        if self.frame().terminated {
            return;
        }
        if self.depth >= budget::MAX_SYNTAX_DEPTH {
            let kind = NoteKind::StatementsTooDeep {
                budget: budget::SYNTAX_DEPTH,
            };
            self.note(n, src, kind);
            return;
        }
        self.depth += 1;
        // Control flow between two field accesses may or may not keep nvcc
        // from merging them (if-conversion, unrolling): on the way in and out.
        let branches = !if_converts(n, src)
            && matches!(
                n.node_kind(),
                "if_statement"
                    | "for_statement"
                    | "while_statement"
                    | "do_statement"
                    | "for_range_loop"
                    | "switch_statement"
                    | "labeled_statement"
                    | "goto_statement"
            );
        self.undecided += branches as u32;
        self.stmt_inner(n, src);
        self.undecided += branches as u32;
        self.depth -= 1;
    }

    fn stmt_inner(&mut self, n: Node, src: &Src) {
        match n.node_kind() {
            "compound_statement" | "declaration_list" => {
                self.scopes.push(Scope::new());
                self.local_aliases.push(HashMap::new());
                let kids = n.kids();
                for k in kids {
                    self.stmt(k, src);
                }
                self.local_aliases.pop();
                self.scopes.pop();
            }
            "declaration" => self.local_decl(n, src),
            "enum_specifier" => self.local_enum(n, src),
            "expression_statement" => {
                if let Some(e) = n.named(0) {
                    if e.node_kind() == "call_expression" {
                        // A macro used as a statement may expand to statements.
                        if let Some(f) = e.field("function") {
                            let name = src.text(f);
                            if let Some(m) = self.tu.macros.get(&name) {
                                if m.params.is_some() && !self.expanding.contains(&name) {
                                    let args: Vec<String> = e
                                        .field("arguments")
                                        .map(|a| {
                                            a.kids().into_iter().map(|x| src.text(x)).collect()
                                        })
                                        .unwrap_or_default();
                                    self.expand_function_macro_stmt(&name, &args, e, src);
                                    return;
                                }
                            }
                        }
                    }
                    self.expr(e, src);
                }
            }
            "if_statement" => self.if_stmt(n, src),
            "for_statement" | "while_statement" | "do_statement" => self.loop_stmt(n, src),
            "for_range_loop" => {
                // `for (x : range)`: the body, once per unknown element.
                self.scopes.push(Scope::new());
                if let Some(d) = n.field("declarator") {
                    let name = src.text(d);
                    let u = self.unknown_val(Origin::RangeElement { name: name.clone() });
                    self.bind(name, u);
                }
                if let Some(b) = n.field("body") {
                    self.stmt(b, src);
                }
                self.scopes.pop();
            }
            "return_statement" => {
                let v = match n.named(0) {
                    Some(e) => self.rv(e, src),
                    None => Val::Void,
                };
                self.exit(n, src, Some(v), false);
            }
            "break_statement" => self.exit(n, src, None, true),
            "continue_statement" => {
                let cond = self.current_cond();
                let site = Some(self.span(n, src));
                if let Some(l) = self.frame().loops.last_mut() {
                    l.skip.push(Guard {
                        cond,
                        expect: false,
                        site,
                        exits: false,
                    });
                }
            }
            "switch_statement" => self.switch_stmt(n, src),
            "labeled_statement" => {
                if let Some(s) = n.field("statement").or_else(|| n.named(1)) {
                    self.stmt(s, src);
                }
            }
            "preproc_if" | "preproc_ifdef" | "preproc_elif" | "preproc_else" => {
                let kids = Self::preproc_branch(n);
                for k in kids {
                    self.stmt(k, src);
                }
            }
            "type_definition" | "alias_declaration" => {
                if let Some(t) = n.field("type") {
                    let ty = if n.node_kind() == "alias_declaration" {
                        self.type_descriptor(t, src)
                    } else {
                        self.resolve_type(t, src)
                    };
                    let mut c = n.walk();
                    let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
                    let names: Vec<(String, Ty)> = if n.node_kind() == "alias_declaration" {
                        n.field("name")
                            .map(|x| vec![(src.text(x), ty.clone())])
                            .unwrap_or_default()
                    } else {
                        decls
                            .iter()
                            .map(|d| {
                                let (name, t, _) = self.declarator(ty.clone(), *d, src);
                                (name, t)
                            })
                            .collect()
                    };
                    // `using K = Dims<D>;`: `K::stages` reads the struct
                    // with these arguments.
                    if n.node_kind() == "alias_declaration" {
                        let tt = t.field("type").filter(|x| x.node_kind() == "template_type");
                        let name = n.field("name").map(|x| src.text(x));
                        if let (Some(tt), Some(name)) = (tt, name) {
                            if let Some(found) = self.template_type_args(tt, src) {
                                if let Some(m) = self.local_aliases.last_mut() {
                                    m.insert(name, found);
                                }
                            }
                        }
                    }
                    if let Some(s) = self.tscopes.last_mut() {
                        for (name, t) in names {
                            s.insert(name, t);
                        }
                    }
                }
            }
            "goto_statement" => self.note(n, src, NoteKind::Goto),
            _ => {}
        }
    }

    fn exit(&mut self, n: Node, src: &Src, value: Option<Val>, is_break: bool) {
        let cond = self.current_cond();
        let site = Some(self.span(n, src));
        let guard_base = self.frame().guard_base;
        let unguarded = self.guards.len() == guard_base;
        // A `return` in the kernel's own body ends the thread.
        let kernel = self.inline_depth == 0;
        if is_break {
            let Some(ctx) = self.frame().loops.last_mut() else {
                return;
            };
            let id = ctx.id;
            ctx.skip.push(Guard {
                cond: cond.clone(),
                expect: false,
                site,
                exits: false,
            });
            if id != usize::MAX {
                if let Some(l) = self.k.loops.get_mut(id) {
                    l.breaks.push(vec![Guard {
                        cond,
                        expect: true,
                        site,
                        exits: false,
                    }]);
                }
            }
            return;
        }
        if let Some(v) = value {
            self.frame().returns.push((cond.clone(), v));
        }
        let loop_ids: Vec<usize> = self.frame().loops.iter().map(|l| l.id).collect();
        if loop_ids.is_empty() {
            if unguarded {
                self.frame().terminated = true;
            } else {
                self.frame().dead.push(Guard {
                    cond,
                    expect: false,
                    site,
                    exits: kernel,
                });
            }
            return;
        }
        for id in loop_ids {
            if let Some(l) = self.k.loops.get_mut(id) {
                l.breaks.push(vec![Guard {
                    cond: cond.clone(),
                    expect: true,
                    site,
                    exits: kernel,
                }]);
            }
        }
        for ctx in self.frame().loops.iter_mut() {
            ctx.skip.push(Guard {
                cond: cond.clone(),
                expect: false,
                site,
                exits: kernel,
            });
            ctx.returned = true;
        }
    }

    fn if_stmt(&mut self, n: Node, src: &Src) {
        let Some(c) = n.field("condition") else {
            return;
        };
        let c = if c.node_kind() == "condition_clause" {
            c.field("value").or_else(|| c.named(0)).unwrap_or(c)
        } else {
            c
        };
        let cond = if c.node_kind() == "declaration" {
            self.local_decl(c, src);
            self.unknown(Origin::DeclarationCondition, None)
        } else {
            self.int(c, src)
        };
        let cons = n.field("consequence");
        let alt = n.field("alternative").map(|a| {
            if a.node_kind() == "else_clause" {
                a.named(0).unwrap_or(a)
            } else {
                a
            }
        });
        if let Some(v) = cond.as_const() {
            let taken = if v != 0 { cons } else { alt };
            if let Some(s) = taken {
                self.stmt(s, src);
            }
            return;
        }
        // `if constexpr` over a value not known: only one branch is
        // compiled, and which is not known (its accesses are unknown).
        // Over template parameters analysed by value, each run decides.
        let constexpr = {
            let mut c = n.walk();
            let kw = n.children(&mut c).any(|k| k.node_kind() == "constexpr");
            kw
        };
        let undecided = constexpr
            .then(|| {
                cond.atoms().into_iter().find_map(|a| match a {
                    crate::ir::Atom::Unknown(u) => {
                        self.k.unknowns.get(u as usize).map(|x| x.origin.clone())
                    }
                    _ => None,
                })
            })
            .flatten();
        let pushed = undecided.is_some();
        if let Some(o) = undecided {
            self.constexpr_undecided.push(o);
        }
        let before = self.scopes.clone();
        let site = Some(self.span(c, src));
        let outer = self.current_guards();
        // `if (c) { … } else return;` in the kernel's body: a thread that
        // fails `c` exits (and the mirror).
        let kernel = self.inline_depth == 0;
        let then_exits = kernel && alt.is_some_and(is_bare_return);
        let else_exits = kernel && cons.is_some_and(is_bare_return);
        let then_mark = self.side_mark();
        self.guards.push(Guard {
            cond: cond.clone(),
            expect: true,
            site,
            exits: then_exits,
        });
        let accesses_before = self.k.accesses.len();
        if let Some(s) = cons {
            self.stmt(s, src);
        }
        self.guards.pop();
        // A store alone in an `if` without `else` (`nvcc/overwrite.rs`).
        let lone_store = alt.is_none()
            && cons.is_some_and(is_plain_store)
            && self.k.accesses.len() == accesses_before + 1
            && self.k.accesses[accesses_before].op == crate::ir::Op::Store;
        if lone_store && src.at.is_none() {
            let at = self.span(c, src);
            self.k.accesses[accesses_before].select_at = Some(at);
        }
        let then_work = self.has_work(then_mark);
        let cost = cons.and_then(|c| super::predicate::syntax_cost(c, src, alt.is_some()));
        let mut sides =
            vec![self.side(site, true, (then_mark, accesses_before), (then_work, cost))];
        let then_scopes = std::mem::replace(&mut self.scopes, before);
        self.frame().terminated = false;
        if let Some(s) = alt {
            let else_mark = self.side_mark();
            let else_before = self.k.accesses.len();
            self.guards.push(Guard {
                cond: cond.clone(),
                expect: false,
                site,
                exits: else_exits,
            });
            self.stmt(s, src);
            self.guards.pop();
            self.frame().terminated = false;
            let else_work = self.has_work(else_mark);
            let cost = super::predicate::syntax_cost(s, src, true);
            sides.push(self.side(site, false, (else_mark, else_before), (else_work, cost)));
            if then_work && else_work && !pushed {
                self.k.branches.push(crate::ir::Branch {
                    span: self.span(c, src),
                    text: src.text(c),
                    cond: cond.clone(),
                    guards: outer,
                    loops: self.open_loops.clone(),
                    inlined_at: self.call_site.clone(),
                });
            }
        }
        if pushed {
            self.constexpr_undecided.pop();
        }
        // Whether nvcc predicates a side is decided once the kernel is
        // lowered (`predicate.rs`): it depends on what follows.
        if let (Some(at), false) = (site, pushed) {
            // nvcc branches around both sides where one holds work
            // (measured, `else_only_work`).
            // An `else if` nvcc branches to (measured, `else_if_chain`).
            // Two sides alike over one array are sunk into one access
            // afterwards (`nvcc/sink.rs`), which is then not predicated.
            let else_if = n.parent().is_some_and(|p| p.node_kind() == "else_clause");
            // A loop on either side of an `if`/`else`: both branched around
            // (measured with a run-time loop, `else_only_work`; a
            // constant loop in an `if` alone is unrolled, `predicate.rs`).
            let looped = sides.iter().flatten().any(|s| s.looped);
            let work =
                else_if || sides.iter().flatten().any(|s| s.work) || (looped && alt.is_some());
            if looped {
                self.k.branched_ifs.push(at);
            }
            let (end, fences) = (self.k.accesses.len(), self.fences);
            self.if_sides
                .extend(sides.into_iter().flatten().map(|mut s| {
                    s.work = work;
                    s.end = end;
                    s.fences = fences;
                    s.has_else = alt.is_some();
                    s
                }));
        }
        self.merge_scopes(cond, then_scopes);
    }

    /// One side of an `if` whose lowering began at `m` with access
    /// `first`, for [`super::predicate::mark`].
    fn side(
        &self,
        site: Option<Span>,
        expect: bool,
        (m, first): (SideMark, usize),
        (work, cost): (bool, Option<u32>),
    ) -> Option<super::predicate::Side> {
        Some(super::predicate::Side {
            site: site?,
            expect,
            accesses: first..self.k.accesses.len(),
            work: work || cost.is_none(),
            ops: cost.unwrap_or(0),
            looped: self.k.loops.len() != m.loops,
            loops: self.open_loops.clone(),
            end: 0,
            fences: 0,
            has_else: false,
        })
    }

    /// Where the lowering stands, to tell afterwards whether a side of an
    /// `if` held work nvcc branches around ([`Self::has_work`]).
    fn side_mark(&self) -> SideMark {
        SideMark {
            loops: self.k.loops.len(),
            branchy_calls: self.branchy_calls,
        }
    }

    /// Whether what was lowered since `m` holds work nvcc branches around
    /// rather than predicates (measured on an H200,
    /// `fixtures/lints/CF001/MEASURED.md`): a loop whose trip count is not
    /// a constant, a floating-point division (its slow path), a call whose
    /// code branches. Short code (intrinsics, an inline `asm` store) and
    /// constant loops nvcc predicates or merges across the two sides.
    fn has_work(&self, m: SideMark) -> bool {
        self.branchy_calls != m.branchy_calls
            || self.k.loops[m.loops..].iter().any(|lp| !constant_trip(lp))
    }

    fn merge_scopes(&mut self, cond: Expr, then_scopes: Vec<Scope>) {
        for (i, then_scope) in then_scopes.iter().enumerate().take(self.scopes.len()) {
            let names: Vec<String> = self.scopes[i].keys().cloned().collect();
            for name in names {
                let Some(t) = then_scope.get(&name) else {
                    continue;
                };
                let e = &self.scopes[i][&name];
                if t.val.same(&e.val) {
                    continue;
                }
                let merged = self.merge_vals(cond.clone(), t.val.clone(), e.val.clone());
                if let Some(b) = self.scopes[i].get_mut(&name) {
                    b.val = merged;
                }
            }
        }
    }

    fn switch_stmt(&mut self, n: Node, src: &Src) {
        let Some(c) = n.field("condition") else {
            return;
        };
        let c = if c.node_kind() == "condition_clause" {
            c.field("value").or_else(|| c.named(0)).unwrap_or(c)
        } else {
            c
        };
        let value = self.int(c, src);
        let Some(body) = n.field("body") else {
            return;
        };
        self.frame().loops.push(LoopCtx {
            id: usize::MAX,
            ..LoopCtx::default()
        });
        let cases = body.kids();
        // The condition the previous case was entered under, when its
        // statements fall through into the next one.
        let mut falling: Option<Expr> = None;
        for case in cases {
            if case.node_kind() != "case_statement" {
                self.stmt(case, src);
                continue;
            }
            let cv = case.field("value").map(|v| self.int(v, src));
            let own = match cv {
                Some(v) => Expr::bin(BinOp::Eq, value.clone(), v),
                None => self.unknown(Origin::DefaultCase, None),
            };
            // A case the one before falls into runs for either value.
            let cond = match falling.take() {
                Some(prev) => Expr::bin(BinOp::LOr, prev, own),
                None => own,
            };
            let site = Some(self.span(case, src));
            self.guards.push(Guard {
                cond: cond.clone(),
                expect: true,
                site,
                exits: false,
            });
            let stmts: Vec<Node> = case
                .kids()
                .into_iter()
                .filter(|s| Some(s.id()) != case.field("value").map(|v| v.id()))
                .collect();
            let jumps = stmts.last().is_some_and(|s| {
                matches!(
                    s.node_kind(),
                    "break_statement"
                        | "return_statement"
                        | "continue_statement"
                        | "goto_statement"
                        | "throw_statement"
                )
            });
            if !jumps {
                falling = Some(cond);
            }
            self.scopes.push(Scope::new());
            for s in stmts {
                self.stmt(s, src);
            }
            self.scopes.pop();
            self.guards.pop();
            if let Some(l) = self.frame().loops.last_mut() {
                l.skip.clear();
            }
        }
        self.frame().loops.pop();
    }
}

/// [`Lowerer::side_mark`]'s record.
#[derive(Clone, Copy)]
struct SideMark {
    loops: usize,
    branchy_calls: u32,
}

/// Whether a loop's trip count is a constant: its control (conditions,
/// breaks) reads nothing but constants and its own variables, and those
/// variables' initial values and updates read nothing else either.
pub(super) fn constant_trip(lp: &crate::ir::Loop) -> bool {
    use crate::ir::Atom;
    let mut work: Vec<&Expr> = lp.pre_cond.iter().chain(&lp.post_cond).collect();
    work.extend(lp.breaks.iter().flatten().map(|g| &g.cond));
    // A `break`'s guard is the conjunction of every condition around it,
    // those around the loop too: what they read is not the trip count's.
    let outside: Vec<Atom> = lp
        .entry_guards
        .iter()
        .flat_map(|g| g.cond.atoms())
        .collect();
    let mut seen: Vec<u32> = Vec::new();
    while let Some(e) = work.pop() {
        for a in e.atoms() {
            if outside.contains(&a) {
                continue;
            }
            let Atom::LoopVar(v) = a else { return false };
            let Some(i) = lp.vars.iter().position(|x| *x == v) else {
                return false;
            };
            if !seen.contains(&v) {
                seen.push(v);
                work.extend(lp.init.get(i));
                work.extend(lp.next.get(i));
            }
        }
    }
    true
}

/// Whether statement `n` is only a `return` (`return;`, `{ return; }`).
fn is_bare_return(n: Node) -> bool {
    match n.node_kind() {
        "return_statement" => true,
        "compound_statement" => {
            let kids: Vec<Node> = n
                .kids()
                .into_iter()
                .filter(|k| k.node_kind() != "comment")
                .collect();
            matches!(&kids[..], [only] if is_bare_return(*only))
        }
        _ => false,
    }
}

//! Assignments: `x = v` rebinds a variable, or stores to a place in
//! memory (a compound assignment also loads it), on the line nvcc gives
//! the store (measured: `fixtures/groundtruth/sm_90/multiline*.cu`).

use tree_sitter::Node;

use super::expr::{bin_op, op_of};
use super::{Lowerer, Place, Ptr, Src, Val};
use crate::frontend::fields::Fields;
use crate::frontend::types::Ty;
use crate::ir::{BinOp, Expr, Op, Span};

impl<'a, 't> Lowerer<'a, 't> {
    /// `x = v`, `x op= v`: the value assigned.
    pub(super) fn assignment(&mut self, n: Node, src: &Src) -> Val {
        let op = op_of(n);
        let (Some(left), Some(right)) = (n.field("left"), n.field("right")) else {
            return Val::Void;
        };
        // `op=` takes the binary operator `op`; plain `=` none.
        let bop = bin_op(op.trim_end_matches('='));
        let v = self.expr(right, src);
        // What a struct or vector copied from memory is copied from: a
        // place (through macros too: `LDST128BITS(RA[0][j][0])`), or a name,
        // a subscript, a dereference or a field as written.
        let mut r = right;
        while r.node_kind() == "parenthesized_expression" {
            match r.named(0) {
                Some(x) => r = x,
                None => break,
            }
        }
        let lvalue = matches!(
            r.node_kind(),
            "subscript_expression" | "pointer_expression" | "field_expression" | "identifier"
        );
        let copied = (lvalue || matches!(v, Val::Place(_))).then_some(right);
        let rhs = self.rvalue_of(v, right, src);
        self.assign(left, bop, Some((rhs, copied)), n, src).1
    }

    /// The line nvcc gives the store of `target = right` (`n`), measured
    /// (`fixtures/groundtruth/sm_90/multiline*.cu`, nvcc 13.0 `-lineinfo`):
    /// a copy of a struct or vector (`float4`, `int4`) from memory (`right`,
    /// given only for a copy from a place) is one load and one store,
    /// both on the last line of `right`, and the load recorded for `right`
    /// moves there too; any other store is on the last line of the target
    /// (`out[t *\n 2] = …` on the second). `None`: where `n` starts.
    fn store_line(
        &mut self,
        target: Node,
        right: Option<Node>,
        ty: &Ty,
        n: Node,
        src: &Src,
    ) -> Option<Span> {
        if src.at.is_some() {
            return None; // a macro expansion: its use's span
        }
        let copy =
            right.filter(|_| matches!(ty, Ty::Vector { .. } | Ty::Struct(_) | Ty::Instance(_)));
        let last = copy.unwrap_or(target);
        let end = last.end_byte();
        let text = src.bytes.get(last.start_byte()..end)?;
        let start = match text.iter().rposition(|b| *b == b'\n') {
            Some(nl) => nl + text[nl..].iter().position(|b| !b.is_ascii_whitespace())?,
            // On one line: a copy's store is on it; another store where
            // the statement starts.
            None if copy.is_some() => 0,
            None => return None,
        };
        let span = src
            .map
            .span(last.start_byte() + start, n.end_byte().max(end));
        if span.line == self.span(n, src).line {
            // On the statement's first line: where it is written.
            return None;
        }
        if let Some(r) = copy {
            let load = self.span(r, src);
            for a in self.k.accesses.iter_mut().rev() {
                if a.op == Op::Load && a.span == load {
                    a.span = span;
                }
            }
        }
        Some(span)
    }

    /// Assigns to `target`: a variable (rebinds it) or a place in memory
    /// (a store; compound assignment also loads). Returns (old, new).
    pub(super) fn assign(
        &mut self,
        target: Node,
        op: Option<BinOp>,
        rhs: Option<(Val, Option<Node>)>,
        n: Node,
        src: &Src,
    ) -> (Val, Val) {
        let (rhs, right) = match rhs {
            Some((v, r)) => (Some(v), r),
            None => (None, None),
        };
        let mut t = target;
        while t.node_kind() == "parenthesized_expression" {
            match t.named(0) {
                Some(i) => t = i,
                None => break,
            }
        }
        if let Some(v) = self.launch_cfg_field(t, op, rhs.as_ref(), src) {
            return (Val::Void, v);
        }
        // `block.x = n` on a `dim3` variable.
        if t.node_kind() == "field_expression" {
            let base = t.field("argument");
            let field = t.field("field").map(|f| src.text(f));
            let dot = t.field("operator").is_none_or(|o| o.node_kind() == ".");
            if let (Some(base), Some(field), true) = (base, field, dot) {
                let i = match field.as_str() {
                    "x" => Some(0),
                    "y" => Some(1),
                    "z" => Some(2),
                    _ => None,
                };
                let name = src.text(base);
                if let (Some(i), Some(Val::Dim3(d))) =
                    (i, self.lookup(&name).map(|b| b.val.clone()))
                {
                    let old = d[i].clone();
                    let new = match (op, rhs) {
                        (None, Some(v)) => self.as_int(v),
                        (Some(o), r) => {
                            let r = self.as_int(r.unwrap_or(Val::Int(Expr::konst(1))));
                            Expr::bin(o, old.clone(), r)
                        }
                        (None, None) => old.clone(),
                    };
                    let mut d = d;
                    d[i] = new.clone();
                    if let Some(b) = self.lookup_mut(&name) {
                        b.val = Val::Dim3(d);
                    }
                    return (Val::Int(old), Val::Int(new));
                }
            }
        }
        // A member of an object held in registers (`objects.rs`): `v.m`,
        // or `this->m` in a method.
        if t.node_kind() == "field_expression" {
            let arg = t.field("argument");
            let field = t.field("field").map(|f| src.text(f));
            if let (Some(a), Some(f)) = (arg, field) {
                if a.node_kind() == "this" {
                    if let Some(old) = self.this_member(&f) {
                        let new = self.assigned_value(&old, op, rhs);
                        self.set_this_member(&f, new.clone());
                        return (old, new);
                    }
                } else if a.node_kind() == "identifier" {
                    let key = super::objects::member_name(&src.text(a), &f);
                    if let Some(b) = self.lookup(&key).cloned() {
                        if !matches!(b.val, Val::Place(_)) {
                            let new = self.assigned_value(&b.val, op, rhs);
                            if let Some(x) = self.lookup_mut(&key) {
                                x.val = new.clone();
                            }
                            return (b.val, new);
                        }
                    }
                }
            }
        }
        if t.node_kind() == "identifier" {
            let name = src.text(t);
            if let Some(b) = self.lookup(&name).cloned() {
                if !matches!(b.val, Val::Place(_)) {
                    let old = b.val.clone();
                    let new = self.assigned_value(&old, op, rhs);
                    if let Some(b) = self.lookup_mut(&name) {
                        b.val = new.clone();
                    }
                    return (old, new);
                }
            }
        }
        // A place in memory.
        let place = match self.expr(t, src) {
            Val::Place(p) => p,
            v @ Val::Either(_) => {
                // One store per object, each under its side.
                let mut old = Val::Void;
                self.on_each(v, &mut |s, side| {
                    match side {
                        Val::Place(place) => old = s.store(&place, op, &rhs, right, t, n, src),
                        _ => s.forget_memory(),
                    }
                    Val::Void
                });
                return (old, rhs.unwrap_or(Val::Void));
            }
            _ => {
                // A store through what the analysis does not follow may
                // write any shared value.
                self.forget_memory();
                return (Val::Void, Val::Void);
            }
        };
        let old = self.store(&place, op, &rhs, right, t, n, src);
        (old, rhs.unwrap_or(Val::Void))
    }

    /// The value a variable holding `old` takes from assignment `op`
    /// (`None`: plain `=`) of `rhs` (`None`: `++`/`--`, as `+= 1`): a
    /// pointer keeps its declared pointee, and moves in elements.
    fn assigned_value(&mut self, old: &Val, op: Option<BinOp>, rhs: Option<Val>) -> Val {
        match (op, rhs) {
            (None, Some(v)) => match (old, v) {
                (Val::Ptr(p), Val::Ptr(q)) => Val::Ptr(Ptr {
                    obj: q.obj,
                    off: q.off,
                    pointee: p.pointee.clone(),
                }),
                (_, v) => v,
            },
            (Some(o), rhs) => {
                let r = rhs.unwrap_or(Val::Int(Expr::konst(1)));
                match (old, r) {
                    (Val::Ptr(p), Val::Int(i)) if matches!(o, BinOp::Add | BinOp::Sub) => {
                        let sz = self.elem_size(&p.pointee).unwrap_or(1) as i64;
                        Val::Ptr(Ptr {
                            obj: p.obj,
                            off: Expr::bin(o, p.off.clone(), Expr::times(i, Expr::konst(sz))),
                            pointee: p.pointee.clone(),
                        })
                    }
                    (Val::Either(_), Val::Int(i)) if matches!(o, BinOp::Add | BinOp::Sub) => {
                        self.offset_val(old.clone(), &i, o == BinOp::Sub)
                    }
                    (_, r) => {
                        let a = self.as_int(old.clone());
                        let b = self.as_int(r);
                        Val::Int(Expr::bin(o, a, b))
                    }
                }
            }
            (None, None) => old.clone(),
        }
    }

    /// The store of assignment `n` (`op`, value `rhs`, copied from `right`)
    /// to `place`, written `target`, on the line nvcc gives it; a compound
    /// assignment loads first. Returns the value before the store.
    #[allow(clippy::too_many_arguments)]
    fn store(
        &mut self,
        place: &Place,
        op: Option<BinOp>,
        rhs: &Option<Val>,
        right: Option<Node>,
        target: Node,
        n: Node,
        src: &Src,
    ) -> Val {
        let old = if op.is_some() {
            self.rvalue_of(Val::Place(place.clone()), n, src)
        } else {
            Val::Void
        };
        let copy_from = right.filter(|_| op.is_none());
        let span = self
            .store_line(target, copy_from, &place.ty, n, src)
            .unwrap_or_else(|| self.span(n, src));
        self.access_at(place, Op::Store, n, span, src);
        if let (None, Some(v)) = (op, rhs) {
            self.note_stored(place, v);
            self.own_store(place, v);
        }
        old
    }
}

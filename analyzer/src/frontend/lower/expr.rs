//! Expressions: each syntax node kind evaluates to a [`Val`]. Names look
//! up variables, macros, constants, sibling static members and globals in
//! that order; operators build symbolic expressions (pointer arithmetic
//! scales by the element size); assignments are `assign.rs`. Nesting is bounded by `budget::MAX_SYNTAX_DEPTH`.

use tree_sitter::Node;

use super::groups::Group;
use super::{parse_int, Binding, Lowerer, Place, PointeeKey, Ptr, Src, Val};
use crate::budget;
use crate::finding::Origin;
use crate::frontend::fields::Fields;
use crate::frontend::types::{self, align_of, field, size_of, Ty};
use crate::ir::{BinOp, Builtin, Dim, Expr, Guard, UnOp};

/// The operator token of a unary/binary/assignment/update expression.
pub(super) fn op_of(n: Node) -> String {
    n.field("operator")
        .map(|o| o.node_kind().to_string())
        .unwrap_or_default()
}

/// The arithmetic, bitwise or comparison operator a binary operator token
/// spells (`&&` and `||` are lowered under guards, not here).
pub(super) fn bin_op(op: &str) -> Option<BinOp> {
    Some(match op {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Rem,
        "<<" => BinOp::Shl,
        ">>" => BinOp::Shr,
        "&" | "bitand" => BinOp::And,
        "|" | "bitor" => BinOp::Or,
        "^" | "xor" => BinOp::Xor,
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        "==" => BinOp::Eq,
        "!=" | "not_eq" => BinOp::Ne,
        _ => return None,
    })
}

impl<'a, 't> Lowerer<'a, 't> {
    pub(super) fn ident(&mut self, name: &str, n: Node, src: &Src) -> Val {
        if let Some(b) = self.lookup(name) {
            return b.val.clone();
        }
        if let Some(m) = self.tu.macros.get(name) {
            if m.params.is_none() && !self.expanding.iter().any(|e| e == name) {
                let body = m.body.clone();
                return self.expand_text(name, &body, n, src, false);
            }
        }
        if let Some(v) = self.tu.consts.get(name) {
            return Val::Int(Expr::konst(*v));
        }
        // `NUM_WARPS = NUM_WARPGROUPS * 4` inside a struct: a sibling.
        if let Some((s, args)) = self.member_scopes.last().cloned() {
            if let Some(v) = self.member_value(&s, &args, name) {
                return Val::Int(Expr::konst(v));
            }
        }
        if let Some(&obj) = self.globals_map.get(name) {
            let ty = self.tu.globals[name].ty.clone();
            return Val::Place(Place {
                obj,
                off: Expr::konst(0),
                ty,
            });
        }
        if let Some(g) = self.tu.globals.get(name) {
            let g = g.clone();
            let obj = self.new_object(name, g.space, &g.ty, g.elem_text, g.span, g.text);
            self.globals_map.insert(name.to_string(), obj);
            return Val::Place(Place {
                obj,
                off: Expr::konst(0),
                ty: g.ty,
            });
        }
        match name {
            "warpSize" => Val::Int(Expr::konst(32)),
            "true" => Val::Int(Expr::konst(1)),
            "false" | "NULL" | "nullptr" => Val::Int(Expr::konst(0)),
            _ => {
                // `detail::STAGES_v<T>` with a template parameter that no
                // launch instantiates.
                let text = src.text(n);
                self.dependent_unknown(&text, None, |param| Origin::ThroughTemplateParam {
                    name: text.clone(),
                    param,
                })
                .unwrap_or_else(|| self.unknown_val(Origin::Undeclared { name: name.into() }))
            }
        }
    }

    pub(crate) fn expr(&mut self, n: Node, src: &Src) -> Val {
        if self.depth >= budget::MAX_SYNTAX_DEPTH {
            return self.budget_unknown(n, src, budget::SYNTAX_DEPTH, Origin::NestedTooDeeply);
        }
        self.depth += 1;
        let v = self.expr_inner(n, src);
        self.depth -= 1;
        v
    }

    fn expr_inner(&mut self, n: Node, src: &Src) -> Val {
        match n.node_kind() {
            "number_literal" => {
                let t = src.text(n);
                match parse_int(&t) {
                    Some(v) => Val::Int(Expr::konst(v)),
                    None => Val::Int(self.unknown(Origin::FloatingPoint, Some(Expr::konst(0)))),
                }
            }
            "char_literal" => self.char_literal(n, src),
            "true" => Val::Int(Expr::konst(1)),
            "false" | "null" | "nullptr" => Val::Int(Expr::konst(0)),
            "string_literal" | "concatenated_string" | "raw_string_literal" => Val::Void,
            "identifier" => {
                let name = src.text(n);
                self.ident(&name, n, src)
            }
            "qualified_identifier" => self.qualified_ident(n, src),
            "preproc_defined" => {
                let name = n.named(0).map(|x| src.text(x)).unwrap_or_default();
                Val::Int(Expr::konst(self.tu.macros.contains_key(&name) as i64))
            }
            "parenthesized_expression" => match n.named(0) {
                Some(inner) => self.expr(inner, src),
                None => Val::Void,
            },
            "field_expression" => self.field_expr(n, src),
            "subscript_expression" => self.subscript(n, src),
            "pointer_expression" => self.address_or_deref(n, src),
            "unary_expression" => self.unary(n, src),
            "binary_expression" => self.binary(n, src),
            "update_expression" => self.update(n, src),
            "assignment_expression" => self.assignment(n, src),
            "conditional_expression" => self.conditional(n, src),
            "cast_expression" => self.cast_expr(n, src),
            "sizeof_expression" => self.sizeof_expr(n, src),
            "alignof_expression" => {
                let ty = n
                    .field("type")
                    .map(|t| self.type_descriptor(t, src))
                    .unwrap_or(Ty::Unknown(String::new()));
                match align_of(&ty, self.structs()) {
                    Some(a) => Val::Int(Expr::konst(a as i64)),
                    None => self.unknown_val(Origin::Written { text: src.text(n) }),
                }
            }
            "comma_expression" => {
                if let Some(l) = n.field("left") {
                    self.expr(l, src);
                }
                match n.field("right") {
                    Some(r) => self.expr(r, src),
                    None => Val::Void,
                }
            }
            "call_expression" => self.call(n, src),
            "gnu_asm_expression" => self.inline_asm(n, src),
            "initializer_list" | "argument_list" => self.brace_list(n, src),
            "ERROR" => self.unknown_val(Origin::Unparsed),
            other => {
                let kind = other.replace('_', " ");
                let text = src.text(n);
                // `cosize_v<Layout>` and the like with a template parameter
                // that no launch instantiates.
                self.dependent_unknown(&text, None, |param| Origin::ThroughTemplateParam {
                    name: text.clone(),
                    param,
                })
                .unwrap_or_else(|| self.unknown_val(Origin::Construct { kind }))
            }
        }
    }

    /// A character constant (`'a'`, `'\n'`) as its code.
    fn char_literal(&mut self, n: Node, src: &Src) -> Val {
        let t = src.text(n);
        let inner = t.trim_matches('\'');
        let v = match inner {
            "\\0" => 0,
            "\\n" => 10,
            "\\t" => 9,
            _ => inner.chars().next().map(|c| c as i64).unwrap_or(0),
        };
        Val::Int(Expr::konst(v))
    }

    /// `Scope::name`: a static member of a struct, a member of a template
    /// parameter no launch instantiates, or else the plain name.
    fn qualified_ident(&mut self, n: Node, src: &Src) -> Val {
        let name = n
            .field("name")
            .map(|x| src.text(x))
            .unwrap_or_else(|| src.text(n));
        let scope = n.field("scope");
        if let Some(v) = scope.and_then(|scope| self.static_member(scope, src, &name)) {
            return Val::Int(Expr::konst(v));
        }
        if let Some(scope) = scope {
            let text = src.text(n);
            let member =
                self.dependent_unknown(&src.text(scope), None, |param| Origin::TemplateMember {
                    member: text,
                    param,
                });
            if let Some(v) = member {
                return v;
            }
        }
        self.ident(&name, n, src)
    }

    /// `a[i]`: the place of element `i`.
    fn subscript(&mut self, n: Node, src: &Src) -> Val {
        let Some(arg) = n.field("argument") else {
            return Val::Void;
        };
        let base = self.expr(arg, src);
        let idx_node = n
            .field("indices")
            .and_then(|i| {
                if i.node_kind() == "subscript_argument_list" {
                    i.named(0)
                } else {
                    Some(i)
                }
            })
            .or_else(|| n.field("index"));
        let idx = match idx_node {
            Some(i) => self.int(i, src),
            None => self.unknown(Origin::EmptySubscript, None),
        };
        self.index_place(base, idx, n, src)
    }

    /// `&x` (the pointer to a place) or `*p` (the place a pointer points to).
    fn address_or_deref(&mut self, n: Node, src: &Src) -> Val {
        let op = op_of(n);
        let Some(arg) = n.field("argument") else {
            return Val::Void;
        };
        if op == "&" {
            let v = self.expr(arg, src);
            self.on_each(v, &mut |s, side| match side {
                Val::Place(p) => Val::Ptr(Ptr {
                    obj: p.obj,
                    off: p.off,
                    pointee: p.ty,
                }),
                _ => s.unknown_val(Origin::AddressOfNonMemory),
            })
        } else {
            let v = self.rv(arg, src);
            self.on_each(v, &mut |s, side| {
                let p = match side {
                    Val::Ptr(p) => p,
                    Val::Int(e) => match s.undeclared_pointer(e, n, src) {
                        Some(p) => p,
                        None => return s.unknown_val(Origin::DerefUnknownPointer),
                    },
                    _ => return s.unknown_val(Origin::DerefUnknownPointer),
                };
                Val::Place(Place {
                    obj: p.obj,
                    off: p.off,
                    ty: p.pointee,
                })
            })
        }
    }

    /// `-x`, `!x`, `~x`, `+x`.
    fn unary(&mut self, n: Node, src: &Src) -> Val {
        let op = op_of(n);
        let Some(arg) = n.field("argument") else {
            return Val::Void;
        };
        let v = self.rv(arg, src);
        if op == "+" {
            return v;
        }
        let e = self.as_int(v);
        let u = match op.as_str() {
            "-" => UnOp::Neg,
            "!" | "not" => UnOp::Not,
            "~" | "compl" => UnOp::BitNot,
            _ => return Val::Int(e),
        };
        Val::Int(Expr::un(u, e))
    }

    /// `++x`, `x--`: the new or old value, after storing the new one.
    fn update(&mut self, n: Node, src: &Src) -> Val {
        let op = op_of(n);
        let Some(arg) = n.field("argument") else {
            return Val::Void;
        };
        let bop = if op == "--" { BinOp::Sub } else { BinOp::Add };
        let prefix = n.child(0).map(|c| c.node_kind() == op).unwrap_or(false);
        let (old, new) = self.assign(arg, Some(bop), None, n, src);
        if prefix {
            new
        } else {
            old
        }
    }

    /// `c ? a : b`: one side when `c` is known, else a select of both
    /// (each evaluated under its guard).
    fn conditional(&mut self, n: Node, src: &Src) -> Val {
        let (Some(c), Some(a), Some(b)) = (
            n.field("condition"),
            n.field("consequence"),
            n.field("alternative"),
        ) else {
            return Val::Void;
        };
        // A pointer as the condition is its null test.
        let cv = self.rv(c, src);
        let tested = match &cv {
            Val::Ptr(_) | Val::Either(_) => self.null_test(cv.clone(), "!="),
            _ => None,
        };
        let cond = match tested {
            Some(Val::Int(t)) => t,
            _ => self.as_int(cv),
        };
        if let Some(v) = cond.as_const() {
            return self.rv(if v != 0 { a } else { b }, src);
        }
        self.guards.push(Guard {
            cond: cond.clone(),
            expect: true,
            site: None,
            exits: false,
        });
        let va = self.rv(a, src);
        self.guards.pop();
        self.guards.push(Guard {
            cond: cond.clone(),
            expect: false,
            site: None,
            exits: false,
        });
        let vb = self.rv(b, src);
        self.guards.pop();
        self.merge_vals(cond, va, vb)
    }

    /// `(T)v`; `(a & (b * c))` that the grammar read as a cast is re-read
    /// as arithmetic.
    fn cast_expr(&mut self, n: Node, src: &Src) -> Val {
        // `(a & (b * c)) * d` parses as a cast to `a&` when the grammar
        // cannot tell `a` is a variable; we can: re-read it as arithmetic.
        if let Some(b) = n
            .field("type")
            .and_then(|t| t.field("type"))
            .filter(|b| b.node_kind() == "type_identifier")
        {
            let name = src.text(b);
            if self.lookup(&name).is_some() && matches!(self.named_type(&name), Ty::Unknown(_)) {
                let r = n.byte_range();
                let (s, e) = (b.start_byte() - r.start, b.end_byte() - r.start);
                let whole = src.text(n);
                if whole.is_char_boundary(s) && whole.is_char_boundary(e) {
                    let text = format!("{}({}){}", &whole[..s], name, &whole[e..]);
                    return self.expand_text(&name, &text, n, src, false);
                }
            }
        }
        let ty = n
            .field("type")
            .map(|t| self.type_descriptor(t, src))
            .unwrap_or(Ty::Unknown(String::new()));
        let Some(v) = n.field("value") else {
            return Val::Void;
        };
        let val = self.rv(v, src);
        let val = match &ty {
            Ty::Ptr(t) => self.pointer_from(t, val, v, src),
            _ => val,
        };
        self.cast(ty, val)
    }

    /// `sizeof(T)` or `sizeof(x)`.
    fn sizeof_expr(&mut self, n: Node, src: &Src) -> Val {
        if let Some(t) = n.field("type") {
            let ty = self.type_descriptor(t, src);
            return match self.elem_size(&ty) {
                Some(s) => Val::Int(Expr::konst(s as i64)),
                None => self.sizeof_unknown(n, src),
            };
        }
        if let Some(v) = n.field("value") {
            let inner = if v.node_kind() == "parenthesized_expression" {
                v.named(0).unwrap_or(v)
            } else {
                v
            };
            // sizeof(T) where T parsed as an expression, or sizeof(var).
            let text = src.text(inner);
            let ty = self.named_type(text.trim());
            if let Some(s) = self.elem_size(&ty) {
                return Val::Int(Expr::konst(s as i64));
            }
            if let Some(Binding { val: Val::Place(p) }) = self.lookup(text.trim()) {
                if let Some(s) = size_of(&p.ty, self.structs()) {
                    return Val::Int(Expr::konst(s as i64));
                }
            }
        }
        self.sizeof_unknown(n, src)
    }

    /// `{a}` (one value) or `{x, y, z}` (a `dim3`); an argument list likewise.
    fn brace_list(&mut self, n: Node, src: &Src) -> Val {
        let kids = n.kids();
        let mut vals: Vec<Expr> = kids.iter().map(|k| self.int(*k, src)).collect();
        if n.node_kind() == "initializer_list" && vals.len() == 1 {
            // `constexpr int WARPGROUP_WARPS{4};` (a dim3 from
            // `{32}` is made where the type says so).
            return Val::Int(vals.remove(0));
        }
        if (1..=3).contains(&vals.len()) {
            let mut d = [Expr::konst(1), Expr::konst(1), Expr::konst(1)];
            for (i, v) in vals.into_iter().enumerate() {
                d[i] = v;
            }
            Val::Dim3(d)
        } else {
            Val::Void
        }
    }

    pub(super) fn cast(&mut self, ty: Ty, val: Val) -> Val {
        match (ty, val) {
            (ty @ Ty::Ptr(_), v @ Val::Either(_)) => {
                self.on_each(v, &mut |s, side| s.cast(ty.clone(), side))
            }
            (Ty::Ptr(t), Val::Ptr(p)) => Val::Ptr(Ptr {
                obj: p.obj,
                off: p.off,
                pointee: *t,
            }),
            (_, v) => v,
        }
    }

    pub(super) fn merge_vals(&mut self, cond: Expr, a: Val, b: Val) -> Val {
        match (a, b) {
            (Val::Int(x), Val::Int(y)) => Val::Int(Expr::select(cond, x, y)),
            (Val::Ptr(p), Val::Ptr(q)) if p.obj == q.obj => Val::Ptr(Ptr {
                obj: p.obj,
                off: Expr::select(cond, p.off, q.off),
                pointee: p.pointee,
            }),
            (Val::Place(p), Val::Place(q)) if p.obj == q.obj && p.off.same(&q.off) => Val::Place(p),
            (Val::Dim3(x), Val::Dim3(y)) => {
                let [x0, x1, x2] = x;
                let [y0, y1, y2] = y;
                Val::Dim3([
                    Expr::select(cond.clone(), x0, y0),
                    Expr::select(cond.clone(), x1, y1),
                    Expr::select(cond, x2, y2),
                ])
            }
            (Val::Void, Val::Void) => Val::Void,
            (Val::Group(x), Val::Group(y)) => match Group::select(&cond, x, y) {
                Some(g) => Val::Group(g),
                None => self.unknown_val(Origin::BranchDependent),
            },
            (a, b) if a.same(&b) => a,
            // A null pointer on one side is a side of its own: nothing is
            // accessed through it (dereferencing null is undefined), and
            // `p != nullptr` is false there.
            (
                a @ (Val::Ptr(_) | Val::Place(_) | Val::Either(_) | Val::Int(_)),
                b @ (Val::Ptr(_) | Val::Place(_) | Val::Either(_) | Val::Int(_)),
            ) if !matches!((&a, &b), (Val::Int(_), Val::Int(_)))
                && [&a, &b].iter().all(|v| pointer_or_null(v)) =>
            {
                if a.choices() + b.choices() <= budget::MAX_POINTER_CHOICES {
                    return Val::Either(Box::new((cond, a, b)));
                }
                self.unknown_val(Origin::OutOfBudget {
                    what: Box::new(Origin::BranchDependent),
                    budget: budget::POINTER_CHOICES,
                })
            }
            _ => self.unknown_val(Origin::BranchDependent),
        }
    }

    /// `p == 0` / `p != 0` (`op`) of a pointer, or of each side of a
    /// pointer choice (a null side compares as null).
    fn null_test(&mut self, v: Val, op: &str) -> Option<Val> {
        let eq = op == "==";
        match v {
            v if v.is_null() => Some(Val::Int(Expr::konst(i64::from(eq)))),
            Val::Ptr(p) => {
                let i = self.k.params.iter().position(|q| q.object == Some(p.obj))?;
                let bop = if eq { BinOp::Eq } else { BinOp::Ne };
                let null = Expr::atom(crate::ir::Atom::Param(i as u32));
                Some(Val::Int(Expr::bin(bop, null, Expr::konst(0))))
            }
            Val::Either(e) => {
                let (cond, a, b) = *e;
                let a = self.null_test(a, op)?;
                let b = self.null_test(b, op)?;
                Some(self.merge_vals(cond, a, b))
            }
            _ => None,
        }
    }

    fn field_expr(&mut self, n: Node, src: &Src) -> Val {
        let (Some(arg), Some(fname)) = (n.field("argument"), n.field("field")) else {
            return Val::Void;
        };
        let fname = src.text(fname);
        let arrow = n
            .field("operator")
            .map(|o| o.node_kind() == "->")
            .unwrap_or(false);
        if arg.node_kind() == "identifier" && !arrow {
            let base = src.text(arg);
            if self.lookup(&base).is_none() {
                let dim = match fname.as_str() {
                    "x" => Some(Dim::X),
                    "y" => Some(Dim::Y),
                    "z" => Some(Dim::Z),
                    _ => None,
                };
                if let Some(d) = dim {
                    let b = match base.as_str() {
                        "threadIdx" => Some(Builtin::ThreadIdx(d)),
                        "blockIdx" => Some(Builtin::BlockIdx(d)),
                        "blockDim" => Some(Builtin::BlockDim(d)),
                        "gridDim" => Some(Builtin::GridDim(d)),
                        _ => None,
                    };
                    if let Some(b) = b {
                        if let Builtin::ThreadIdx(d) = b {
                            self.k.uses_thread_dims[d.index()] = true;
                        }
                        return Val::Int(Expr::builtin(b));
                    }
                }
            }
        }
        // A member of an object held in registers (`objects.rs`).
        if arg.node_kind() == "this" && arrow {
            if let Some(v) = self.this_member(&fname) {
                return v;
            }
        }
        if arg.node_kind() == "identifier" && !arrow {
            let key = super::objects::member_name(&src.text(arg), &fname);
            if let Some(b) = self.lookup(&key) {
                return b.val.clone();
            }
        }
        let base = self.expr(arg, src);
        self.on_each(base, &mut |s, side| {
            s.field_of(side, arrow, &fname, arg, src)
        })
    }

    /// The origin of a value loaded from memory, when `v` is one (an
    /// unknown whose origin is a load).
    fn loaded_origin(&self, v: &Val) -> Option<Origin> {
        let Val::Int(e) = v else {
            return None;
        };
        let Some(crate::ir::Atom::Unknown(u)) = e.atoms().first().copied() else {
            return None;
        };
        let origin = &self.k.unknowns.get(u as usize)?.origin;
        matches!(origin, Origin::Loaded { .. } | Origin::LoadedPointer { .. })
            .then(|| origin.clone())
    }

    /// Field `fname` of the value `base` (through it, `arrow`).
    fn field_of(&mut self, base: Val, arrow: bool, fname: &str, arg: Node, src: &Src) -> Val {
        let fname = fname.to_string();
        let place = match (base, arrow) {
            (Val::Dim3(d), false) => {
                return match fname.as_str() {
                    "x" => Val::Int(d[0].clone()),
                    "y" => Val::Int(d[1].clone()),
                    "z" => Val::Int(d[2].clone()),
                    _ => Val::Void,
                }
            }
            (Val::Place(p), false) => p,
            (Val::Ptr(p), true) => Place {
                obj: p.obj,
                off: p.off,
                ty: p.pointee,
            },
            (Val::Place(p), true) => match self.rvalue_of(Val::Place(p), arg, src) {
                Val::Ptr(q) => Place {
                    obj: q.obj,
                    off: q.off,
                    ty: q.pointee,
                },
                _ => return self.unknown_val(Origin::FieldOfUnknown { field: fname }),
            },
            (other, _) => {
                // A field of a struct or vector loaded from memory (`uint4
                // data = in[pos]; data.x`): loaded too.
                if let Some(origin) = self.loaded_origin(&other) {
                    let bits = match &other {
                        Val::Int(e) => match e.atoms().first() {
                            Some(crate::ir::Atom::Unknown(u)) => {
                                self.k.unknowns.get(*u as usize).and_then(|x| x.loaded_bits)
                            }
                            _ => None,
                        },
                        _ => None,
                    };
                    let v = self.unknown(origin, None);
                    if let Some(crate::ir::Atom::Unknown(u)) = v.atoms().first() {
                        if let Some(x) = self.k.unknowns.get_mut(*u as usize) {
                            x.loaded_bits = bits;
                        }
                    }
                    return Val::Int(v);
                }
                // A pointer field of a by-value struct parameter of the
                // kernel (not of a function it calls: its parameter of the
                // same name may be another struct).
                let param = (!arrow && arg.node_kind() == "identifier" && self.inline_depth == 0)
                    .then(|| src.text(arg))
                    .and_then(|a| self.struct_params.get(&a).cloned().map(|t| (a, t)));
                if let Some((name, (ty, bound))) = param {
                    // Still the parameter (not a local of the same name).
                    let own = matches!(self.lookup(&name).map(|b| &b.val),
                        Some(Val::Int(e)) if e.same(&bound));
                    if let (true, Some((_, Ty::Ptr(pointee)))) =
                        (own, field(&ty, &fname, self.structs()))
                    {
                        let text = format!("{name}.{fname}");
                        let key = PointeeKey::Field(text.clone());
                        return self.pointee_object(key, &text, *pointee, arg, src);
                    }
                }
                return self.unknown_val(Origin::FieldNotInMemory { field: fname });
            }
        };
        match field(&place.ty, &fname, self.structs()) {
            Some((off, ty)) => Val::Place(Place {
                obj: place.obj,
                off: Expr::plus(place.off, Expr::konst(off as i64)),
                ty,
            }),
            None => {
                let ty = types::spell(&place.ty, self.structs());
                self.unknown_val(Origin::FieldOfType { field: fname, ty })
            }
        }
    }

    /// `p + i` (or `p - i`, `minus`) in elements of `p`'s pointee.
    fn offset_ptr(&mut self, p: &Ptr, i: &Expr, minus: bool) -> Val {
        let Some(sz) = self.elem_size(&p.pointee) else {
            return self.unknown_val(Origin::UnsizedPointerArithmetic);
        };
        let scaled = Expr::times(i.clone(), Expr::konst(sz as i64));
        let off = if minus {
            Expr::minus(p.off.clone(), scaled)
        } else {
            Expr::plus(p.off.clone(), scaled)
        };
        Val::Ptr(Ptr {
            obj: p.obj,
            off,
            pointee: p.pointee.clone(),
        })
    }

    /// `v + i` (or `v - i`, `minus`) in elements of the pointee, for a
    /// pointer or each pointer of a choice.
    pub(super) fn offset_val(&mut self, v: Val, i: &Expr, minus: bool) -> Val {
        self.on_each(v, &mut |s, side| match side {
            Val::Ptr(p) => s.offset_ptr(&p, i, minus),
            _ => s.unknown_val(Origin::DerefUnknownPointer),
        })
    }

    fn binary(&mut self, n: Node, src: &Src) -> Val {
        let op = op_of(n);
        let (Some(l), Some(r)) = (n.field("left"), n.field("right")) else {
            return Val::Void;
        };
        if op == "&&" || op == "||" || op == "and" || op == "or" {
            let a = self.int(l, src);
            let is_and = op == "&&" || op == "and";
            if let Some(v) = a.as_const() {
                if is_and && v == 0 {
                    return Val::Int(Expr::konst(0));
                }
                if !is_and && v != 0 {
                    return Val::Int(Expr::konst(1));
                }
            }
            self.guards.push(Guard {
                cond: a.clone(),
                expect: is_and,
                site: None,
                exits: false,
            });
            let b = self.int(r, src);
            self.guards.pop();
            let bop = if is_and { BinOp::LAnd } else { BinOp::LOr };
            return Val::Int(Expr::bin(bop, a, b));
        }
        if op == ">" && self.misread_declaration(n, src) {
            return Val::Void;
        }
        let a = self.rv(l, src);
        let b = self.rv(r, src);
        if op == "/" && (self.is_float(l, src) || self.is_float(r, src)) {
            self.slow_paths += 1;
            // Work an `if` branches around, unless nvcc makes it a
            // multiplication (a power of two: measured, CF001).
            if !power_of_two_literal(&src.text(r)) {
                self.branchy_calls += 1;
            }
        }
        // Pointer arithmetic.
        match (&a, &b, op.as_str()) {
            (Val::Ptr(p), Val::Int(i), "+" | "-") | (Val::Int(i), Val::Ptr(p), "+") => {
                return self.offset_ptr(p, i, op == "-");
            }
            (Val::Either(_), Val::Int(i), "+" | "-") | (Val::Int(i), Val::Either(_), "+") => {
                let i = i.clone();
                let e = if matches!(a, Val::Either(_)) { a } else { b };
                return self.offset_val(e, &i, op == "-");
            }
            (p @ (Val::Ptr(_) | Val::Either(_)), Val::Int(z), "==" | "!=")
            | (Val::Int(z), p @ (Val::Ptr(_) | Val::Either(_)), "==" | "!=")
                if z.as_const() == Some(0) =>
            {
                // `probs != NULL` on a pointer parameter: whether the
                // launch passes a null pointer (llm.c's optional outputs).
                if let Some(v) = self.null_test(p.clone(), &op) {
                    return v;
                }
            }
            (Val::Ptr(p), Val::Ptr(q), "-") if p.obj == q.obj => {
                let sz = self.elem_size(&p.pointee).unwrap_or(1).max(1);
                return Val::Int(Expr::bin(
                    BinOp::Div,
                    Expr::minus(p.off.clone(), q.off.clone()),
                    Expr::konst(sz as i64),
                ));
            }
            _ => {}
        }
        let Some(bop) = bin_op(&op) else {
            return self.unknown_val(Origin::Operator { op });
        };
        let x = self.as_int(a);
        let y = self.as_int(b);
        Val::Int(Expr::bin(bop, x, y))
    }

    /// Whether expression `n` has a floating-point type, as far as its
    /// syntax, the declared types of names and the element types of
    /// arrays say (a call or anything else not known: no).
    fn is_float(&self, n: Node, src: &Src) -> bool {
        match n.node_kind() {
            "number_literal" => {
                let t = src.text(n).to_ascii_lowercase();
                !t.starts_with("0x") && (t.contains('.') || t.contains('e') || t.ends_with('f'))
            }
            "identifier" => self.float_vars.contains(&src.text(n)),
            "parenthesized_expression" => self.named_is_float(n, 0, src),
            "binary_expression" => {
                let side = |f: &str| n.field(f).is_some_and(|x| self.is_float(x, src));
                side("left") || side("right")
            }
            "unary_expression" => n.field("argument").is_some_and(|x| self.is_float(x, src)),
            "cast_expression" => n.field("type").is_some_and(|t| {
                let t = src.text(t);
                t.contains("float") || t.contains("double")
            }),
            "subscript_expression" => {
                let Some(base) = n
                    .field("argument")
                    .filter(|b| b.node_kind() == "identifier")
                else {
                    return false;
                };
                let elem_is_float = |t: &Ty| match t {
                    Ty::Float { .. } => true,
                    Ty::Array(e, _) => matches!(**e, Ty::Float { .. }),
                    _ => false,
                };
                match self.lookup(&src.text(base)).map(|b| &b.val) {
                    Some(Val::Ptr(p)) => elem_is_float(&p.pointee),
                    Some(Val::Place(p)) => elem_is_float(&p.ty),
                    _ => false,
                }
            }
            _ => false,
        }
    }

    fn named_is_float(&self, n: Node, i: usize, src: &Src) -> bool {
        n.named(i).is_some_and(|x| self.is_float(x, src))
    }
}

/// A pointer, a place, a choice of them, or the null pointer: what a
/// pointer choice's side may be.
fn pointer_or_null(v: &Val) -> bool {
    v.is_null() || matches!(v, Val::Ptr(_) | Val::Place(_) | Val::Either(_))
}

/// Whether `text` is a floating-point literal that is a power of two
/// (`2.0f`, `0.25`, `8.`): its reciprocal is exact.
fn power_of_two_literal(text: &str) -> bool {
    let t = text.trim().trim_end_matches(['f', 'F', 'l', 'L']);
    match t.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => {
            let e = x.log2().round();
            (2f64.powf(e) - x).abs() == 0.0
        }
        _ => false,
    }
}

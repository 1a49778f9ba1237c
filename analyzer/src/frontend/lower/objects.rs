//! Objects of the file's structs and classes held in registers.
//!
//! A local variable of such a type (`global_stack<I, N, T> result(buf, t);`
//! in cuda-samples' interval) is its data members, each bound as a
//! variable named `result.member` in the scope that declares it (a name no
//! C++ identifier can take). Its constructor runs (the member
//! initializers, then the body); a method call (`result.push(x)`) runs
//! with the struct's value template parameters and the object's members as
//! its outermost names (its parameters shadow them, as in C++), `this->m`
//! naming the member, and writes the members back; a method it calls
//! without an object is the same object's. An object passed by reference
//! to a function that is inlined is the caller's (by value, a copy). An
//! array member is a local-memory object of its own per variable. A loop
//! whose body calls a method, or passes an object to a call, carries the
//! object's members (`loops.rs`). A struct with more data members than
//! `budget::MAX_OBJECT_MEMBERS` is not held: its members are unknown.

use std::collections::HashMap;

use tree_sitter::Node;

use super::{Binding, Lowerer, Place, Scope, Src, Val};
use crate::budget;
use crate::finding::{Cut, Origin};
use crate::frontend::fields::Fields;
use crate::frontend::tu::{FuncDef, TArg};
use crate::frontend::types::Ty;
use crate::ir::{Expr, Space};

/// A data member of a struct instance: its name, its type with the
/// struct's template arguments bound, and its default member initializer.
pub(super) struct Member<'t> {
    pub name: String,
    pub ty: Ty,
    pub default: Option<Node<'t>>,
    /// The member's declaration and its type, as written.
    pub text: String,
    pub ty_text: String,
}

/// The object a method runs on: its struct (name and template arguments)
/// and the names the method sees first (the struct's value template
/// parameters and the object's members).
pub(super) struct This {
    pub strukt: (String, Vec<TArg>),
    pub names: Scope,
    /// The member names among `names` (written back after the call).
    pub members: Vec<String>,
}

/// The name of member `m` of variable `var`.
pub(super) fn member_name(var: &str, m: &str) -> String {
    format!("{var}.{m}")
}

/// Whether a field declaration is a data member: not `static`, not a
/// method declared in the class (`T const &lower() const;`, a function
/// declarator under any pointers and references; a function pointer
/// `void (*f)(int)` is a member), not a nested type.
pub(crate) fn is_data_member(f: Node, src: &Src) -> bool {
    if f.node_kind() != "field_declaration" {
        return false;
    }
    let is_static = f.kids().into_iter().any(|k| {
        k.node_kind() == "storage_class_specifier" && matches!(src.text(k).as_str(), "static")
    });
    let Some(mut d) = f.field("declarator") else {
        return false;
    };
    let method = loop {
        match d.node_kind() {
            "function_declarator" => {
                break d
                    .field("declarator")
                    .is_none_or(|x| x.node_kind() != "parenthesized_declarator")
            }
            "pointer_declarator" | "reference_declarator" => {
                match d.field("declarator").or_else(|| d.named(0)) {
                    Some(x) => d = x,
                    None => break false,
                }
            }
            _ => break false,
        }
    };
    !is_static && !method
}

impl<'a, 't> Lowerer<'a, 't> {
    /// The data members of struct `name` under template arguments `targs`,
    /// with the struct's value template parameters (bound to the
    /// arguments). No members for a struct without data members, or with
    /// more than `budget::MAX_OBJECT_MEMBERS` (noted at `at`): it is not
    /// held.
    /// `None`: not a struct the file defines.
    pub(super) fn members(
        &mut self,
        name: &str,
        targs: &[TArg],
        at: Node,
        src: &Src,
    ) -> Option<(Vec<Member<'t>>, Scope)> {
        let (tparams, node, ssrc) = self.struct_instance(name, targs)?;
        let msrc = Src::of(ssrc);
        let mut tscope = HashMap::new();
        let mut vscope = Scope::new();
        self.bind_targs(&tparams, targs, &mut tscope, &mut vscope);
        let fields: Vec<Node<'t>> = node
            .field("body")?
            .kids()
            .into_iter()
            .filter(|f| is_data_member(*f, &msrc))
            .collect();
        self.tscopes.push(tscope);
        let saved = std::mem::replace(&mut self.scopes, vec![vscope.clone()]);
        let mut out = Vec::new();
        let mut over = false;
        'fields: for f in fields {
            let Some(tn) = f.field("type") else { continue };
            let base = self.resolve_type(tn, &msrc);
            let mut c = f.walk();
            let decls: Vec<Node<'t>> = f.children_by_field_name("declarator", &mut c).collect();
            for d in decls {
                if out.len() >= budget::MAX_OBJECT_MEMBERS {
                    out.clear();
                    over = true;
                    break 'fields;
                }
                let (m, ty, _, _) = self.declarator_ref(base.clone(), d, &msrc, 0);
                if !m.is_empty() {
                    out.push(Member {
                        name: m,
                        ty,
                        default: f.field("default_value"),
                        text: msrc.text(f),
                        ty_text: msrc.text(tn),
                    });
                }
            }
        }
        self.scopes = saved;
        self.tscopes.pop();
        if over {
            let cut = Cut::ObjectMembers {
                ty: name.to_string(),
            };
            self.budget_note(at, src, budget::OBJECT_MEMBERS, cut);
        }
        Some((out, vscope))
    }

    /// The method (or, `name` the struct's own, constructor) of struct
    /// `strukt` named `name` with `nargs` parameters, defined in its body.
    pub(super) fn method_def(
        &mut self,
        strukt: &(String, Vec<TArg>),
        name: &str,
        nargs: usize,
    ) -> Option<FuncDef<'t>> {
        let (tparams, node, ssrc) = self.struct_instance(&strukt.0, &strukt.1)?;
        let msrc = Src::of(ssrc);
        let def = node.field("body")?.kids().into_iter().find(|m| {
            m.node_kind() == "function_definition"
                && super::call::function_params(*m).len() == nargs
                && m.field("declarator").is_some_and(|d| {
                    crate::frontend::tu::function_name(d, &msrc) == Ok(Some(name.to_string()))
                })
        })?;
        def.field("body")?;
        Some(FuncDef {
            node: def,
            src: ssrc,
            name: format!("{}::{name}", strukt.0),
            tdefaults: vec![None; tparams.len()],
            tparams,
            is_kernel: false,
        })
    }

    /// `var` declared with type `tn` and declarator `d` (initializer
    /// `init`): a plain variable of a struct the file defines (not a
    /// pointer, reference, array or `__shared__`) is remembered for its
    /// method calls and, where the struct has data members, held in
    /// registers. `true` when it was declared so (the caller declares it
    /// as any other variable otherwise).
    pub(super) fn declare_object(
        &mut self,
        var: &str,
        (tn, d): (Node, Node),
        init: Option<Node>,
        shared: bool,
        src: &Src,
    ) -> bool {
        let key = (var.to_string(), self.scopes.len().saturating_sub(1));
        let plain = d.node_kind() == "identifier"
            || (d.node_kind() == "init_declarator"
                && d.field("declarator")
                    .is_some_and(|x| x.node_kind() == "identifier"));
        let strukt = self.struct_named(tn, src).filter(|_| plain && !shared);
        match &strukt {
            Some(s) => self.struct_vars.insert(key, s.clone()),
            None => self.struct_vars.remove(&key),
        };
        strukt.is_some_and(|s| self.construct(var, s, init, d, src))
    }

    /// `S v(a, b);` of a struct the file defines, read as a function
    /// declaration `d` (C++'s most vexing parse): the object constructed.
    /// `false` for another type, or a struct not held.
    pub(super) fn declare_vexing_object(&mut self, tn: Node, d: Node, src: &Src) -> bool {
        let var = d
            .field("declarator")
            .map(|x| src.text(x))
            .unwrap_or_default();
        let Some(s) = self.struct_named(tn, src) else {
            return false;
        };
        let key = (var.clone(), self.scopes.len().saturating_sub(1));
        self.struct_vars.insert(key, s.clone());
        self.construct_vexing(&var, s, d, src)
    }

    /// Declares `var`, of struct `strukt`, as an object held in registers
    /// (declarator `d`, initializer `init` as written): its members bound,
    /// its constructor run. `false`: not held (the caller declares it as
    /// any other variable).
    fn construct(
        &mut self,
        var: &str,
        strukt: (String, Vec<TArg>),
        init: Option<Node>,
        d: Node,
        src: &Src,
    ) -> bool {
        self.construct_with(var, strukt, init, None, d, src)
    }

    /// `S v(a, b);` read as a function declaration (C++'s most vexing
    /// parse): the object `v` constructed from the parameters' texts,
    /// each evaluated as an expression.
    fn construct_vexing(
        &mut self,
        var: &str,
        strukt: (String, Vec<TArg>),
        d: Node,
        src: &Src,
    ) -> bool {
        let Some(pl) = d.field("parameters") else {
            return false;
        };
        let params = pl.kids();
        if self
            .members(&strukt.0, &strukt.1, d, src)
            .is_none_or(|(m, _)| m.is_empty())
        {
            return false;
        }
        let vals: Vec<Val> = params
            .iter()
            .map(|p| {
                let text = src.text(*p);
                self.expand_text(var, &text, *p, src, false)
            })
            .collect();
        self.construct_with(var, strukt, Some(pl), Some((params, vals)), d, src)
    }

    fn construct_with(
        &mut self,
        var: &str,
        strukt: (String, Vec<TArg>),
        init: Option<Node>,
        given: Option<(Vec<Node>, Vec<Val>)>,
        d: Node,
        src: &Src,
    ) -> bool {
        let Some((members, vscope)) = self.members(&strukt.0, &strukt.1, d, src) else {
            return false;
        };
        if members.is_empty() {
            return false;
        }
        let short = strukt
            .0
            .rsplit("::")
            .next()
            .unwrap_or(&strukt.0)
            .to_string();
        // The constructor's arguments as written.
        let (given_args, mut given_vals) = match given {
            Some((a, v)) => (Some(a), Some(v)),
            None => (None, None),
        };
        let args: Option<Vec<Node>> = match init {
            _ if given_args.is_some() => given_args,
            None => Some(Vec::new()),
            Some(i) if matches!(i.node_kind(), "argument_list" | "initializer_list") => Some(
                i.kids()
                    .into_iter()
                    .filter(|x| x.node_kind() != "comment")
                    .collect(),
            ),
            Some(i) if i.node_kind() == "call_expression" => {
                let f = i.field("function");
                let named = f.map(|f| match f.node_kind() {
                    "template_function" => f.field("name").map(|n| src.text(n)).unwrap_or_default(),
                    _ => src.text(f),
                });
                (named.as_deref() == Some(short.as_str())).then(|| {
                    i.field("arguments")
                        .map(|a| {
                            a.kids()
                                .into_iter()
                                .filter(|x| x.node_kind() != "comment")
                                .collect()
                        })
                        .unwrap_or_default()
                })
            }
            Some(_) => None,
        };
        // A copy of another object held in registers.
        if let (None, Some(i)) = (&args, init) {
            let from = (i.node_kind() == "identifier").then(|| src.text(i));
            let held = from.as_ref().is_some_and(|f| {
                members
                    .iter()
                    .all(|m| self.lookup(&member_name(f, &m.name)).is_some())
            });
            let Some(from) = from.filter(|_| held) else {
                return false;
            };
            for m in &members {
                let v = match &m.ty {
                    Ty::Array(..) => self.member_array(var, m, d, src),
                    _ => self
                        .lookup(&member_name(&from, &m.name))
                        .map(|b| b.val.clone())
                        .unwrap_or(Val::Void),
                };
                self.bind(member_name(var, &m.name), v);
            }
            let v = self.unknown_val(Origin::FieldNotInMemory {
                field: var.to_string(),
            });
            self.bind(var.to_string(), v);
            return true;
        }
        let Some(args) = args else { return false };
        // Members before the constructor: arrays, default initializers,
        // else not yet assigned.
        let mut names = vscope;
        for m in &members {
            let v = match (&m.ty, m.default) {
                (Ty::Array(..), _) => self.member_array(var, m, d, src),
                (_, Some(dv)) => {
                    let (_, _, ssrc) = match self.struct_instance(&strukt.0, &strukt.1) {
                        Some(x) => x,
                        None => return false,
                    };
                    let saved = std::mem::replace(&mut self.scopes, vec![names.clone()]);
                    let v = self.rv(dv, &Src::of(ssrc));
                    self.scopes = saved;
                    v
                }
                _ => self.unknown_val(Origin::BeforeAssigned {
                    name: member_name(var, &m.name),
                }),
            };
            names.insert(m.name.clone(), Binding { val: v });
        }
        let member_names: Vec<String> = members.iter().map(|m| m.name.clone()).collect();
        let ctor = self.method_def(&strukt, &short, args.len());
        let after = match ctor {
            Some(def) => {
                let vals: Vec<Val> = match given_vals.take() {
                    Some(v) => v,
                    None => args.iter().map(|a| self.expr(*a, src)).collect(),
                };
                let this = This {
                    strukt: strukt.clone(),
                    names,
                    members: member_names.clone(),
                };
                self.inline_with(&def, vals, args.clone(), d, src, Some(this))
                    .1
            }
            // An aggregate: its members in order.
            None if init.is_some_and(|i| i.node_kind() == "initializer_list") => {
                for (m, a) in members.iter().zip(&args) {
                    let v = self.rv(*a, src);
                    let v = self.as_declared(&m.ty, v, &m.text);
                    names.insert(m.name.clone(), Binding { val: v });
                }
                Some(names)
            }
            None if args.is_empty() => Some(names),
            None => {
                for a in &args {
                    self.rv(*a, src);
                }
                None
            }
        };
        for m in &member_names {
            let v = match after.as_ref().and_then(|s| s.get(m)) {
                Some(b) => b.val.clone(),
                None => self.unknown_val(Origin::FieldNotInMemory {
                    field: member_name(var, m),
                }),
            };
            self.bind(member_name(var, m), v);
        }
        let v = self.unknown_val(Origin::FieldNotInMemory {
            field: var.to_string(),
        });
        self.bind(var.to_string(), v);
        true
    }

    /// A local-memory object for array member `m` of variable `var`,
    /// declared at `d`.
    fn member_array(&mut self, var: &str, m: &Member, d: Node, src: &Src) -> Val {
        let name = member_name(var, &m.name);
        let span = self.span(d, src);
        let obj = self.new_object(
            &name,
            Space::Local,
            &m.ty,
            m.ty_text.clone(),
            span,
            m.text.clone(),
        );
        Val::Place(Place {
            obj,
            off: Expr::konst(0),
            ty: m.ty.clone(),
        })
    }

    /// The names a method of `strukt` sees for object `var`: the struct's
    /// value template parameters and `var`'s members (unknown for one not
    /// held).
    pub(super) fn this_of(
        &mut self,
        var: &str,
        strukt: &(String, Vec<TArg>),
        at: Node,
        src: &Src,
    ) -> Option<This> {
        let (members, mut names) = self.members(&strukt.0, &strukt.1, at, src)?;
        let mut member_names = Vec::new();
        for m in members {
            let key = member_name(var, &m.name);
            let v = match self.lookup(&key) {
                Some(b) => b.val.clone(),
                None => self.unknown_val(Origin::FieldNotInMemory { field: key }),
            };
            names.insert(m.name.clone(), Binding { val: v });
            member_names.push(m.name);
        }
        Some(This {
            strukt: strukt.clone(),
            names,
            members: member_names,
        })
    }

    /// Writes the members a method left (`after`; `None`: not known, the
    /// method returned early) back to variable `var`'s, where `var` holds
    /// them.
    pub(super) fn write_back(&mut self, var: &str, members: &[String], after: Option<Scope>) {
        for m in members {
            let key = member_name(var, m);
            if self.lookup(&key).is_none() {
                continue;
            }
            let v = match after.as_ref().and_then(|s| s.get(m)) {
                Some(b) => b.val.clone(),
                None => self.unknown_val(Origin::BranchDependent),
            };
            if let Some(b) = self.lookup_mut(&key) {
                b.val = v;
            }
        }
    }

    /// `m(args)` inside a method, without an object: the struct's method
    /// `m`, on the same object (the method's members, its outermost
    /// names). `None`: not in a method, or no such method.
    pub(super) fn this_call(&mut self, m: &str, args: &[Node], n: Node, src: &Src) -> Option<Val> {
        let strukt = self.methods.last().cloned().flatten()?;
        let def = self.method_def(&strukt, m, args.len())?;
        let (members, mut names) = self.members(&strukt.0, &strukt.1, n, src)?;
        if members.is_empty() {
            return None;
        }
        let outer = self.scopes.first().cloned().unwrap_or_default();
        let mut member_names = Vec::new();
        for mm in members {
            if let Some(b) = outer.get(&mm.name) {
                names.insert(mm.name.clone(), b.clone());
            }
            member_names.push(mm.name);
        }
        let vals: Vec<Val> = args.iter().map(|a| self.expr(*a, src)).collect();
        let this = This {
            strukt,
            names,
            members: member_names.clone(),
        };
        let (v, after) = self.inline_with(&def, vals, args.to_vec(), n, src, Some(this));
        for mm in member_names {
            let v = match after.as_ref().and_then(|s| s.get(&mm)) {
                Some(b) => b.val.clone(),
                None => self.unknown_val(Origin::BranchDependent),
            };
            if let Some(b) = self.scopes.first_mut().and_then(|s| s.get_mut(&mm)) {
                b.val = v;
            }
        }
        Some(v)
    }

    /// `this->m` (or `this->m` assigned): member `m` of the method's
    /// object, in its outermost scope.
    pub(super) fn this_member(&self, m: &str) -> Option<Val> {
        self.methods.last()?.as_ref()?;
        self.scopes.first()?.get(m).map(|b| b.val.clone())
    }

    /// Sets `this->m` to `v`.
    pub(super) fn set_this_member(&mut self, m: &str, v: Val) -> bool {
        if !self.methods.last().is_some_and(Option::is_some) {
            return false;
        }
        match self.scopes.first_mut().and_then(|s| s.get_mut(m)) {
            Some(b) => {
                b.val = v;
                true
            }
            None => false,
        }
    }

    /// The member variables (`v.m`) of each object held in registers that
    /// a call under `n` may assign: the object of a method call
    /// (`v.f(…)`), an object passed to a call, and, inside a method, the
    /// method's own members for a call without an object. For loops.
    pub(super) fn objects_written(&self, n: Node, src: &Src, out: &mut Vec<String>) -> bool {
        let mut stack = vec![n];
        let mut seen = 0;
        let in_method = self.methods.last().is_some_and(Option::is_some);
        while let Some(x) = stack.pop() {
            seen += 1;
            if seen > budget::MAX_SCAN_NODES {
                return false;
            }
            let mut objects = Vec::new();
            match x.node_kind() {
                "call_expression" => {
                    match x.field("function") {
                        Some(f) if f.node_kind() == "field_expression" => {
                            if let Some(a) = f
                                .field("argument")
                                .filter(|a| a.node_kind() == "identifier")
                            {
                                objects.push(src.text(a));
                            }
                        }
                        Some(f) if f.node_kind() == "identifier" && in_method => {
                            if let Some(s) = self.scopes.first() {
                                for k in s.keys() {
                                    if !out.contains(k) {
                                        out.push(k.clone());
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                    if let Some(args) = x.field("arguments") {
                        for a in args.kids() {
                            if a.node_kind() == "identifier" {
                                objects.push(src.text(a));
                            }
                        }
                    }
                }
                "assignment_expression" | "update_expression" => {
                    let t = x.field("left").or_else(|| x.field("argument"));
                    if let Some(t) = t.filter(|t| t.node_kind() == "field_expression") {
                        let arg = t.field("argument");
                        let field = t.field("field").map(|f| src.text(f));
                        match (arg, field) {
                            (Some(a), Some(f)) if a.node_kind() == "identifier" => {
                                let key = member_name(&src.text(a), &f);
                                if !out.contains(&key) {
                                    out.push(key);
                                }
                            }
                            (Some(a), Some(f)) if a.node_kind() == "this" && !out.contains(&f) => {
                                out.push(f)
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            // Only names of objects held (any other argument is a plain
            // value: no scan of every binding for it).
            for o in objects.iter().filter(|o| self.object_struct(o).is_some()) {
                let prefix = format!("{o}.");
                for s in &self.scopes {
                    for k in s.keys() {
                        if k.starts_with(&prefix) && !out.contains(k) {
                            out.push(k.clone());
                        }
                    }
                }
            }
            let mut c = x.walk();
            stack.extend(x.children(&mut c));
        }
        true
    }

    /// The struct of the object held in registers that variable `var`
    /// names (the innermost declaration of it).
    pub(super) fn object_struct(&self, var: &str) -> Option<(String, Vec<TArg>)> {
        let depth = self.scopes.iter().rposition(|s| s.contains_key(var))?;
        self.struct_vars.get(&(var.to_string(), depth)).cloned()
    }

    /// The members of the objects held in registers passed to an inlined
    /// function (`objects`: argument index, the caller's variable, its
    /// struct, whether by reference), bound in the callee's `scope` under
    /// the parameters' names (`pnames`), with the struct for its method
    /// calls (`method`: the callee is a method, whose members are the
    /// outermost scope). Returns, for those passed by reference, the
    /// caller's variable, the parameter and the members, to write back.
    pub(super) fn objects_into(
        &mut self,
        objects: Vec<(usize, String, (String, Vec<TArg>))>,
        refs: &[bool],
        pnames: &[String],
        scope: &mut Scope,
        method: bool,
    ) -> Vec<(String, String, Vec<String>)> {
        let mut out = Vec::new();
        for (i, a, strukt) in objects {
            let Some(p) = pnames.get(i).filter(|p| !p.is_empty()) else {
                continue;
            };
            let prefix = format!("{a}.");
            let mut members: Vec<String> = self
                .scopes
                .iter()
                .flat_map(|s| s.keys())
                .filter_map(|k| k.strip_prefix(&prefix).map(str::to_string))
                .collect();
            members.sort();
            members.dedup();
            for m in &members {
                // The innermost binding of each member.
                if let Some(b) = self.lookup(&member_name(&a, m)).cloned() {
                    scope.insert(member_name(p, m), b);
                }
            }
            if refs.get(i).copied().unwrap_or(false) {
                out.push((a, p.clone(), members));
            }
            self.struct_vars
                .insert((p.clone(), usize::from(method)), strukt);
        }
        out
    }

    /// What an inlined function left in the members of the objects passed
    /// by reference (`objects_into`'s result), read before its scopes go:
    /// each caller's member with its value (`None`: not known, the body
    /// returned before its end, `straight` false).
    pub(super) fn objects_left(
        &self,
        passed: Vec<(String, String, Vec<String>)>,
        straight: bool,
    ) -> Vec<(String, Option<Val>)> {
        let mut out = Vec::new();
        for (a, p, members) in passed {
            for m in members {
                let v = straight
                    .then(|| self.lookup(&member_name(&p, &m)).map(|b| b.val.clone()))
                    .flatten();
                out.push((member_name(&a, &m), v));
            }
        }
        out
    }

    /// Writes `objects_left`'s values to the caller's members (an unknown
    /// where the value is not known).
    pub(super) fn write_objects(&mut self, written: Vec<(String, Option<Val>)>) {
        for (name, v) in written {
            let v = v.unwrap_or_else(|| self.unknown_val(Origin::BranchDependent));
            if let Some(b) = self.lookup_mut(&name) {
                b.val = v;
            }
        }
    }
}

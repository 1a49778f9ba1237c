//! Templates: the template arguments of a call or launch, static members
//! of struct templates read through a scope (`Dims<D>::stages`, an alias,
//! a type parameter bound to an instance), evaluated once per struct,
//! arguments and member; and unknowns that depend on a template parameter
//! no launch instantiates.

use std::collections::HashMap;

use tree_sitter::Node;

use super::{Binding, Lowerer, Scope, Src, Val};
use crate::budget;
use crate::finding::Origin;
use crate::frontend::fields::Fields;
use crate::frontend::tu::{TArg, TParam};
use crate::frontend::types::Ty;
use crate::ir::Expr;

impl<'a, 't> Lowerer<'a, 't> {
    /// The template type parameter without an instantiation that `text` (a
    /// type, scope or call as written: `T`, `typename MT::KV`, `f<T>`)
    /// depends on, directly or through local aliases (`chain`: those being
    /// followed; one that comes round again is not followed twice), if any;
    /// `cut` is set when aliases nest past `budget::MAX_ALIAS_DEPTH`.
    fn dependent_on(&self, text: &str, chain: &mut Vec<String>, cut: &mut bool) -> Option<String> {
        if chain.len() as u32 > budget::MAX_ALIAS_DEPTH {
            *cut = true;
            return None;
        }
        text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .find_map(|w| match self.scoped_type(w)? {
                Ty::Unknown(n) if n == w => Some(w.to_string()),
                Ty::Unknown(_) if chain.iter().any(|c| c == w) => None,
                Ty::Unknown(n) => {
                    chain.push(w.to_string());
                    let found = self.dependent_on(n, chain, cut);
                    chain.pop();
                    found
                }
                _ => None,
            })
    }

    /// The type a template parameter or local alias `name` stands for.
    pub(super) fn scoped_type(&self, name: &str) -> Option<&Ty> {
        self.tscopes.iter().rev().find_map(|t| t.get(name))
    }

    /// An unknown for `text` when it spells a template parameter without an
    /// instantiation (see [`Unknown::dependent`](crate::ir::Unknown)), with
    /// the origin `origin(parameter)`; `None` when it does not. When its
    /// aliases nest too deeply to tell, an unknown naming the budget.
    pub(super) fn dependent_unknown(
        &mut self,
        text: &str,
        witness: Option<Expr>,
        origin: impl FnOnce(String) -> Origin,
    ) -> Option<Val> {
        let mut cut = false;
        match self.dependent_on(text, &mut Vec::new(), &mut cut) {
            Some(p) => Some(Val::Int(self.k.add_dependent(origin(p), witness))),
            None if cut => {
                let origin = Origin::OutOfBudget {
                    what: Box::new(Origin::AliasesTooDeep { text: text.into() }),
                    budget: budget::ALIAS_DEPTH,
                };
                Some(Val::Int(self.unknown(origin, witness)))
            }
            None => None,
        }
    }

    /// `sizeof(...)` of a type not known here.
    pub(super) fn sizeof_unknown(&mut self, n: Node, src: &Src) -> Val {
        let text = src.text(n);
        let name = text.clone();
        self.dependent_unknown(&text, Some(Expr::konst(0)), |param| {
            Origin::ThroughTemplateParam { name, param }
        })
        .unwrap_or_else(|| self.unknown_val(Origin::Written { text }))
    }

    /// `S::member` / `S<T>::member` / `Alias::member`: a static constant
    /// of a struct, with the template's parameters bound to the arguments.
    pub(super) fn static_member(&mut self, scope: Node, src: &Src, member: &str) -> Option<i64> {
        if self.depth >= budget::MAX_SYNTAX_DEPTH {
            return None;
        }
        let (struct_name, args) = self.scope_struct(scope, src)?;
        self.member_value(&struct_name, &args, member)
    }

    /// The struct a scope names and its template arguments: a
    /// `template_type` (`Dims<D>`), an alias in the function (`using K =
    /// Dims<D>;`) or the file, a template type parameter bound to a struct
    /// (`Ktraits::N` in `k<Traits>`), or the struct's own name.
    fn scope_struct(&mut self, scope: Node, src: &Src) -> Option<(String, Vec<TArg>)> {
        if scope.node_kind() == "template_type" {
            return self.template_type_args(scope, src);
        }
        let name = src.text(scope);
        if let Some(found) = self.local_aliases.iter().rev().find_map(|m| m.get(&name)) {
            return Some(found.clone());
        }
        if let Some((t, s)) = self.tu.template_aliases.get(&name).copied() {
            return self.template_type_args(t, &Src::of(s));
        }
        match self.scoped_type(&name) {
            Some(Ty::Struct(id)) => Some((self.structs().get(*id)?.name.clone(), Vec::new())),
            Some(Ty::Instance(d)) => self
                .instances
                .get(&d.name)
                .cloned()
                .or(Some((name, Vec::new()))),
            Some(Ty::Unknown(text)) => self
                .instances
                .get(text)
                .cloned()
                .or(Some((name, Vec::new()))),
            _ => Some((name, Vec::new())),
        }
    }

    /// Binds each template parameter whose argument is known: a type (or
    /// struct template instance) into `tscope`, an integer into `scope`.
    pub(super) fn bind_targs(
        &mut self,
        params: &[TParam],
        args: &[TArg],
        tscope: &mut HashMap<String, Ty>,
        scope: &mut Scope,
    ) {
        for (p, a) in params.iter().zip(args) {
            match (p, a) {
                (TParam::Type(n), TArg::Type(t) | TArg::Instance(t, ..)) => {
                    tscope.insert(n.clone(), t.clone());
                    self.instance(a);
                }
                (TParam::Value(n), TArg::Value(v)) => {
                    scope.insert(
                        n.clone(),
                        Binding {
                            val: Val::Int(Expr::konst(*v)),
                        },
                    );
                }
                _ => {}
            }
        }
    }

    /// Remembers, when `a` (a template parameter's value) is a struct
    /// template instance, which template and arguments its type's text
    /// stands for, for `scope_struct`.
    pub(super) fn instance(&mut self, a: &TArg) {
        match a {
            TArg::Instance(Ty::Unknown(text), name, args) => {
                self.instances
                    .insert(text.clone(), (name.clone(), args.clone()));
            }
            TArg::Instance(Ty::Instance(def), name, args) => {
                self.instances
                    .insert(def.name.clone(), (name.clone(), args.clone()));
            }
            _ => {}
        }
    }

    /// `Name<args>` (`tt`) of a struct template the file defines, every
    /// argument known: laid out with the arguments bound (its data
    /// members in order, `__align__` kept), once per lowering. `None` for
    /// another type, an argument not known, or a member without a size.
    pub(super) fn struct_template_instance(
        &mut self,
        tt: Node,
        name: &str,
        src: &Src,
    ) -> Option<Ty> {
        if !self.tu.struct_nodes.contains_key(name) || self.depth >= budget::MAX_SYNTAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let found = self.template_type_args(tt, src);
        self.depth -= 1;
        let (name, args) = found?;
        if !TArg::all_known(&args) {
            return None;
        }
        let spelled: Vec<String> = args
            .iter()
            .map(|a| match a {
                TArg::Value(v) => v.to_string(),
                TArg::Type(t) | TArg::Instance(t, ..) => {
                    crate::frontend::types::spell(t, self.structs())
                }
                TArg::Unknown(s) => s.clone(),
            })
            .collect();
        let key = format!("{name}<{}>", spelled.join(", "));
        if let Some(t) = self.instance_types.get(&key) {
            return Some(t.clone()).filter(|t| !matches!(t, Ty::Unknown(_)));
        }
        // In progress: a member that names the instance (through a
        // pointer) sees a type without a layout.
        self.instance_types
            .insert(key.clone(), Ty::Unknown(key.clone()));
        let (tparams, node, ssrc) = self.struct_instance(&name, &args)?;
        let msrc = Src::of(ssrc);
        let body = node.field("body")?;
        let mut tscope = HashMap::new();
        let mut vscope = Scope::new();
        self.bind_targs(&tparams, &args, &mut tscope, &mut vscope);
        self.tscopes.push(tscope);
        let saved = std::mem::replace(&mut self.scopes, vec![vscope]);
        self.depth += 1;
        let mut fields = Vec::new();
        for f in body.kids() {
            if !super::objects::is_data_member(f, &msrc) {
                continue;
            }
            let Some(tn) = f.field("type") else { continue };
            let base = self.resolve_type(tn, &msrc);
            let mut c = f.walk();
            let decls: Vec<Node> = f.children_by_field_name("declarator", &mut c).collect();
            for d in decls {
                let (fname, ty, _, _) = self.declarator_ref(base.clone(), d, &msrc, 0);
                fields.push((fname, ty));
            }
        }
        // `alignas(sizeof(T) * N)`, read with the arguments bound
        // (CUTLASS's `AlignedArray`).
        let blanked = ssrc.align_in(node.start_byte(), body.start_byte());
        let force = self.struct_alignment(node, &msrc, blanked);
        self.depth -= 1;
        self.scopes = saved;
        self.tscopes.pop();
        let mut def =
            crate::frontend::types::layout_struct(key.clone(), fields, force, self.structs())?;
        def.keyword = crate::frontend::tu::struct_keyword(node, &msrc);
        let ty = Ty::Instance(std::sync::Arc::new(def));
        self.instances.insert(key.clone(), (name, args));
        self.instance_types.insert(key, ty.clone());
        Some(ty)
    }

    /// `Name<args>` with each argument resolved (a type, or an integer;
    /// `None` for an integer not known here).
    pub(super) fn template_type_args(
        &mut self,
        tt: Node,
        src: &Src,
    ) -> Option<(String, Vec<TArg>)> {
        let name = src.text(tt.field("name")?);
        let mut args = Vec::new();
        if let Some(a) = tt.field("arguments") {
            let nodes = a.kids();
            for n in nodes {
                // `Dims<D>` parses `D` as a type; a bound value parameter
                // is a value.
                let bound = match self.lookup(&src.text(n)).map(|b| &b.val) {
                    Some(Val::Int(e)) => e.as_const(),
                    _ => None,
                };
                let arg = if let Some(v) = bound {
                    TArg::Value(v)
                } else if n.node_kind() == "type_descriptor" {
                    self.type_arg(n, src)
                } else {
                    match self.int(n, src).as_const() {
                        Some(v) => TArg::Value(v),
                        None => TArg::Unknown(src.text(n)),
                    }
                };
                args.push(arg);
            }
        }
        Some((name, args))
    }

    /// A type given as a template argument; an instance of a struct
    /// template whose arguments are all known keeps them
    /// ([`TArg::Instance`]).
    fn type_arg(&mut self, n: Node, src: &Src) -> TArg {
        let t = self.type_descriptor(n, src);
        // An alias of an instance: `using Cfg = PipelineConfig<4, 16>;`
        // in the launching function, or in the file.
        let text = src.text(n);
        let text = text.trim();
        if let Some((name, args)) = self
            .local_aliases
            .iter()
            .rev()
            .find_map(|m| m.get(text))
            .filter(|(_, args)| TArg::all_known(args))
            .cloned()
        {
            return TArg::Instance(t, name, args);
        }
        let Some(tt) = n.field("type").filter(|x| x.node_kind() == "template_type") else {
            return TArg::Type(t);
        };
        let known = tt
            .field("name")
            .is_some_and(|x| self.tu.struct_nodes.contains_key(&src.text(x)));
        // Nested instances (`A<B<C<...>>>`) recurse: bounded like syntax.
        if !known || self.depth >= budget::MAX_SYNTAX_DEPTH {
            return TArg::Type(t);
        }
        self.depth += 1;
        let found = self.template_type_args(tt, src);
        self.depth -= 1;
        match found {
            Some((name, args)) if TArg::all_known(&args) => TArg::Instance(t, name, args),
            _ => TArg::Type(t),
        }
    }

    /// `Name<args>::member` for a `static constexpr` member: a full
    /// specialisation whose arguments match (`template <> struct
    /// Dims<64>`) before the primary template.
    pub(super) fn member_value(
        &mut self,
        struct_name: &str,
        args: &[TArg],
        member: &str,
    ) -> Option<i64> {
        let key = format!("{struct_name}\u{0}{args:?}\u{0}{member}");
        if let Some(v) = self.member_values.get(&key) {
            return *v;
        }
        // In progress: a member defined through itself is not a constant.
        self.member_values.insert(key.clone(), None);
        let v = self.member_value_uncached(struct_name, args, member);
        self.member_values.insert(key, v);
        v
    }

    fn member_value_uncached(
        &mut self,
        struct_name: &str,
        args: &[TArg],
        member: &str,
    ) -> Option<i64> {
        let (tparams, node, ssrc) = self.struct_instance(struct_name, args)?;
        let body = node.field("body")?;
        let init = body.kids().into_iter().find_map(|f| {
            let d = f.field("declarator")?;
            (f.node_kind() == "field_declaration" && Src::of(ssrc).text(d) == member)
                .then(|| f.field("default_value"))
                .flatten()
        })?;
        // Bind the template's parameters to the arguments.
        let mut tscope = HashMap::new();
        let mut scope_vals = Scope::new();
        self.bind_targs(&tparams, args, &mut tscope, &mut scope_vals);
        if self.depth >= budget::MAX_SYNTAX_DEPTH {
            return None;
        }
        self.tscopes.push(tscope);
        self.scopes.push(scope_vals);
        self.member_scopes
            .push((struct_name.to_string(), args.to_vec()));
        self.depth += 1;
        let v = self.const_int(init, &Src::of(ssrc));
        self.depth -= 1;
        self.member_scopes.pop();
        self.scopes.pop();
        self.tscopes.pop();
        v
    }

    /// The definition of struct `struct_name` under template arguments
    /// `args`: a full specialisation whose arguments match (`template <>
    /// struct Dims<64>`) before the primary template; its template
    /// parameters, node and file.
    pub(super) fn struct_instance(
        &mut self,
        struct_name: &str,
        args: &[TArg],
    ) -> Option<(Vec<TParam>, Node<'t>, &'t crate::frontend::source::Source)> {
        let prefix = format!("{struct_name}<");
        let keys: Vec<String> = self
            .tu
            .struct_nodes
            .keys()
            .filter(|k| k.starts_with(&prefix))
            .cloned()
            .collect();
        let mut chosen = None;
        for key in keys {
            let Some((tparams, node, ssrc)) = self.tu.struct_nodes.get(&key).cloned() else {
                continue;
            };
            if !tparams.is_empty() {
                continue; // a partial specialisation: not matched
            }
            let Some((_, sargs)) = node
                .field("name")
                .and_then(|t| self.template_type_args(t, &Src::of(ssrc)))
            else {
                continue;
            };
            // Equal arguments, none of them unknown here.
            if sargs.as_slice() == args && TArg::all_known(&sargs) {
                chosen = Some((tparams, node, ssrc));
                break;
            }
        }
        match chosen {
            Some(c) => Some(c),
            None => self.tu.struct_nodes.get(struct_name).cloned(),
        }
    }

    pub(crate) fn template_args(&mut self, list: Node, src: &Src) -> Vec<TArg> {
        let mut out = Vec::new();
        let kids = list.kids();
        for a in kids {
            if a.node_kind() == "type_descriptor" {
                let text = src.text(a).trim().to_string();
                let is_value = self.tu.consts.contains_key(&text)
                    || self
                        .tu
                        .macros
                        .get(&text)
                        .map(|m| m.params.is_none())
                        .unwrap_or(false)
                    || self.lookup(&text).is_some();
                if self.open_type_params.contains(&text) {
                    out.push(TArg::Unknown(text));
                } else if is_value {
                    let v = self.ident(&text, a, src);
                    let e = self.as_int(v);
                    out.push(match e.as_const() {
                        Some(v) => TArg::Value(v),
                        None => TArg::Unknown(text),
                    });
                } else {
                    let t = self.type_arg(a, src);
                    out.push(t);
                }
            } else {
                match self.const_int(a, src) {
                    Some(v) => out.push(TArg::Value(v)),
                    None => out.push(TArg::Unknown(src.text(a))),
                }
            }
        }
        out
    }
}

//! Types and declarators: a type as written resolved against template
//! parameters, typedefs, builtins, structs, object-like macros and, last,
//! CUDA's own types (so a file's own definition of one wins); a
//! declarator applied to its base type; local declarations (`__shared__`
//! and local arrays become memory objects, scalars are bound to their
//! values), local enums, and `ns::Name<N> x = v;` that the grammar read
//! as a comparison.

use tree_sitter::Node;

use super::{Lowerer, Place, Src, Val};
use crate::budget;
use crate::finding::{Cut, NoteKind, Origin};
use crate::frontend::cuda_types::{self, Arg};
use crate::frontend::fields::Fields;
use crate::frontend::tu::{qualifiers, TArg};
use crate::frontend::types::{builtin, Ty};
use crate::ir::{Expr, Space};

/// The size expression of the innermost dimension of an array declarator
/// (`33` in `tile[32][33]`: the outermost `array_declarator` node).
fn innermost_size(d: Node) -> Option<Node> {
    let mut x = d;
    loop {
        match x.node_kind() {
            "array_declarator" => return x.field("size"),
            "init_declarator" | "parenthesized_declarator" | "attributed_declarator" => {
                x = x.field("declarator").or_else(|| x.named(0))?
            }
            _ => return None,
        }
    }
}

impl<'a, 't> Lowerer<'a, 't> {
    pub fn resolve_type(&mut self, n: Node, src: &Src) -> Ty {
        let text = src.text(n);
        match n.node_kind() {
            "primitive_type" | "sized_type_specifier" => {
                let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
                builtin(&folded).unwrap_or(Ty::Unknown(folded))
            }
            "type_identifier" | "qualified_type_identifier" => self.named_type(&text),
            "struct_specifier" | "class_specifier" | "union_specifier" => {
                let name = n.field("name").map(|x| src.text(x)).unwrap_or_default();
                match self.tu.struct_names.get(&name) {
                    Some(i) => Ty::Struct(*i),
                    None => Ty::Unknown(text),
                }
            }
            "enum_specifier" => Ty::Int { size: 4 },
            "template_type" => {
                let name = n.field("name").map(|x| src.text(x)).unwrap_or_default();
                self.library_instance(n, &name, &text, src)
                    .or_else(|| self.struct_template_instance(n, &name, src))
                    .unwrap_or(Ty::Unknown(text))
            }
            "qualified_identifier" => self.qualified_type(n, src).unwrap_or(Ty::Unknown(text)),
            _ => Ty::Unknown(text),
        }
    }

    pub(crate) fn named_type(&mut self, name: &str) -> Ty {
        let short = name.rsplit("::").next().unwrap_or(name).to_string();
        if let Some(t) = self.scoped_type(&short) {
            return t.clone();
        }
        if let Some(t) = self.tu.typedefs.get(&short) {
            return t.clone();
        }
        if let Some(t) = builtin(name).or_else(|| builtin(&short)) {
            return t;
        }
        if let Some(i) = self.tu.struct_names.get(&short) {
            return Ty::Struct(*i);
        }
        if let Some(m) = self.tu.macros.get(&short) {
            if m.params.is_none() && !self.expanding.contains(&short) {
                let body = m.body.trim().to_string();
                self.expanding.push(short.clone());
                let t = self.named_type(&body);
                self.expanding.pop();
                return t;
            }
        }
        cuda_types::named(&short)
            .or_else(|| crate::frontend::types::system_typedef(&short))
            .unwrap_or(Ty::Unknown(short))
    }

    /// A type named through a scope: an instance of a library template
    /// (`cuda::std::array<float, 4>`, `nvcuda::wmma::fragment<…>`), or a
    /// name in the standard library's or CUDA's namespaces (`std::uint32_t`,
    /// `::__half`). A name in any other scope (`Traits::T`, a member type)
    /// is not resolved by its last segment, which could mean another type.
    fn qualified_type(&mut self, n: Node, src: &Src) -> Option<Ty> {
        let text = src.text(n);
        let mut inner = n;
        while inner.node_kind() == "qualified_identifier" {
            inner = inner.field("name")?;
        }
        let scope_len = inner.start_byte().checked_sub(n.start_byte())?;
        let scope = text.get(..scope_len)?.trim();
        if inner.node_kind() == "template_type" {
            let name = format!("{scope}{}", src.text(inner.field("name")?));
            return self.library_instance(inner, &name, &text, src);
        }
        let scope = scope.trim_start_matches("::").trim_end_matches("::");
        // A name not known keeps its whole spelling (`std::false_type` in a
        // kernel's instantiation name).
        matches!(
            scope,
            "" | "std" | "cuda::std" | "nvcuda" | "nvcuda::wmma" | "wmma"
        )
        .then(|| self.named_type(&text))
        .filter(|t| !matches!(t, Ty::Unknown(_)))
    }

    /// `cuda::std::array<float, 4>`, `wmma::fragment<…>` (`name`: the
    /// template as written, with its scope): an instance of a template of
    /// CUDA's or the standard library's that [`cuda_types::instance`]
    /// sizes, unless the file defines a template of that name itself.
    fn library_instance(&mut self, tt: Node, name: &str, spelling: &str, src: &Src) -> Option<Ty> {
        let short = name.rsplit("::").next().unwrap_or(name);
        if !cuda_types::is_template(name) || self.tu.struct_nodes.contains_key(short) {
            return None;
        }
        let list = tt.field("arguments")?;
        // As a call's template arguments are read: a macro or constant
        // spelled where a type could be (`fragment<…, M, N, K, float>`
        // with `#define M 16`) is a value.
        let targs = self.template_args(list, src);
        let texts: Vec<String> = list.kids().into_iter().map(|a| src.text(a)).collect();
        let args: Vec<Arg> = targs
            .iter()
            .zip(&texts)
            .map(|(a, text)| match a {
                TArg::Value(v) => Arg::Value(*v),
                TArg::Type(t) | TArg::Instance(t, ..) => Arg::Type(t, text),
                TArg::Unknown(_) => Arg::Other,
            })
            .collect();
        cuda_types::instance(name, &args, spelling)
    }

    pub fn type_descriptor(&mut self, n: Node, src: &Src) -> Ty {
        let base = match n.field("type") {
            Some(t) => self.resolve_type(t, src),
            None => return Ty::Unknown(src.text(n)),
        };
        match n.field("declarator") {
            Some(d) => self.abstract_declarator(base, d, src),
            None => base,
        }
    }

    fn abstract_declarator(&mut self, base: Ty, d: Node, src: &Src) -> Ty {
        let inner = d.field("declarator");
        let ty = match d.node_kind() {
            "abstract_pointer_declarator" => Ty::Ptr(Box::new(base)),
            "abstract_array_declarator" => {
                let size = d
                    .field("size")
                    .and_then(|s| self.const_int(s, src))
                    .map(|v| v.max(0) as u64);
                Ty::Array(Box::new(base), size)
            }
            "abstract_reference_declarator" => base,
            _ => base,
        };
        match inner {
            Some(i) => self.abstract_declarator(ty, i, src),
            None => ty,
        }
    }

    /// Applies a declarator to a base type: `(name, type, initializer, is_reference)`.
    pub fn declarator<'n>(
        &mut self,
        base: Ty,
        d: Node<'n>,
        src: &Src,
    ) -> (String, Ty, Option<Node<'n>>) {
        let (n, t, i, _) = self.declarator_ref(base, d, src, 0);
        (n, t, i)
    }

    pub(super) fn declarator_ref<'n>(
        &mut self,
        base: Ty,
        d: Node<'n>,
        src: &Src,
        depth: u32,
    ) -> (String, Ty, Option<Node<'n>>, bool) {
        if depth > budget::MAX_DECLARATOR_DEPTH {
            self.budget_note(d, src, budget::DECLARATOR_DEPTH, Cut::Declarator);
            return (String::new(), Ty::Unknown("declarator".into()), None, false);
        }
        match d.node_kind() {
            "identifier" | "field_identifier" | "type_identifier" => {
                (src.text(d), base, None, false)
            }
            "qualified_identifier" => (
                d.field("name")
                    .map(|x| src.text(x))
                    .unwrap_or_else(|| src.text(d)),
                base,
                None,
                false,
            ),
            "pointer_declarator" => match d.field("declarator") {
                Some(inner) => self.declarator_ref(Ty::Ptr(Box::new(base)), inner, src, depth + 1),
                None => (String::new(), Ty::Ptr(Box::new(base)), None, false),
            },
            "reference_declarator" => {
                let inner = d.named(0);
                match inner {
                    Some(i) => {
                        let (n, t, init, _) = self.declarator_ref(base, i, src, depth + 1);
                        (n, t, init, true)
                    }
                    None => (String::new(), base, None, true),
                }
            }
            "array_declarator" => {
                let size = d.field("size").map(|s| {
                    let e = self.int(s, src);
                    let v = e.as_const().map(|v| v.max(0) as u64);
                    // A dimension that depends on the kernel's template
                    // arguments is understood; only its instantiation is
                    // missing, and the accesses say so.
                    if v.is_none() && !self.k.only_dependent(&e) {
                        let text = src.text(s);
                        self.note(s, src, NoteKind::ArrayDimension { text });
                    }
                    v
                });
                let ty = Ty::Array(Box::new(base), size.flatten());
                match d.field("declarator") {
                    Some(inner) => self.declarator_ref(ty, inner, src, depth + 1),
                    None => (String::new(), ty, None, false),
                }
            }
            "init_declarator" => {
                let value = d.field("value");
                match d.field("declarator") {
                    Some(inner) => {
                        let (n, t, _, r) = self.declarator_ref(base, inner, src, depth + 1);
                        (n, t, value, r)
                    }
                    None => (String::new(), base, value, false),
                }
            }
            "parenthesized_declarator" | "attributed_declarator" => match d.named(0) {
                Some(inner) => self.declarator_ref(base, inner, src, depth + 1),
                None => (String::new(), base, None, false),
            },
            "function_declarator" => match d.field("declarator") {
                Some(inner) => self.declarator_ref(base, inner, src, depth + 1),
                None => (String::new(), base, None, false),
            },
            _ => (src.text(d), base, None, false),
        }
    }

    /// `enum { A = expr, B };` in a function body: each enumerator is a
    /// constant of the enclosing scope (its value may depend on template
    /// arguments).
    pub(super) fn local_enum(&mut self, n: Node, src: &Src) {
        let Some(body) = n.field("body") else {
            return;
        };
        let mut next = Expr::konst(0);
        let items = body.kids();
        for e in items {
            let Some(name) = e.field("name").filter(|_| e.node_kind() == "enumerator") else {
                continue;
            };
            if let Some(v) = e.field("value") {
                next = self.int(v, src);
            }
            self.bind(src.text(name), Val::Int(next.clone()));
            next = Expr::plus(next, Expr::konst(1));
        }
    }

    pub(super) fn local_decl(&mut self, n: Node, src: &Src) {
        let Some(tn) = n.field("type") else {
            return;
        };
        if tn.node_kind() == "enum_specifier" {
            self.local_enum(tn, src);
        }
        let quals = qualifiers(n, src);
        let shared = quals.iter().any(|q| q == "__shared__");
        let is_extern = quals.iter().any(|q| q == "extern");
        let base = self.resolve_type(tn, src);
        let elem_text = src.text(tn);
        let decl_span = self.span(n, src);
        let decl_text = src.text(n);
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            if d.node_kind() == "function_declarator" {
                // `dim3 block(BX, BY);` with macro arguments parses as a
                // function declaration (C++'s most vexing parse); inside a
                // function body it is a constructor call.
                if !self.declare_vexing_object(tn, d, src) {
                    self.vexing_parse(d, &base, src);
                }
                continue;
            }
            let (name, ty, init, is_ref) = self.declarator_ref(base.clone(), d, src, 0);
            if name.is_empty() {
                continue;
            }
            if matches!(ty, Ty::Float { .. }) {
                self.float_vars.insert(name.clone());
            } else {
                self.float_vars.remove(&name);
            }
            if matches!(ty, Ty::Opaque { .. }) {
                self.opaque_vars.insert(name.clone(), ty.clone());
            } else {
                self.opaque_vars.remove(&name);
            }
            if self.declare_object(&name, (tn, d), init, shared, src) {
                continue;
            }
            if let Some(i) = init {
                self.note_kernel_var(&name, i, src);
            }
            if shared {
                let ty = if is_extern {
                    match ty {
                        Ty::Array(e, _) => Ty::Array(e, None),
                        t => t,
                    }
                } else {
                    ty
                };
                let ty = match ty {
                    Ty::Array(..) => ty,
                    t => Ty::Array(Box::new(t), Some(1)),
                };
                let obj = self.new_object(
                    &name,
                    Space::Shared,
                    &ty,
                    elem_text.clone(),
                    decl_span,
                    decl_text.clone(),
                );
                if src.at.is_none() {
                    self.k.objects[obj].inner_dim =
                        innermost_size(d).map(|n| src.map.span(n.start_byte(), n.end_byte()));
                }
                let val = if matches!(&ty, Ty::Array(_, Some(1))) && !src.text(d).contains('[') {
                    // A scalar `__shared__ float x;`: a place of one element.
                    let Ty::Array(e, _) = ty else { continue };
                    Val::Place(Place {
                        obj,
                        off: Expr::konst(0),
                        ty: *e,
                    })
                } else {
                    Val::Place(Place {
                        obj,
                        off: Expr::konst(0),
                        ty,
                    })
                };
                self.bind(name, val);
                continue;
            }
            if let Ty::Array(..) = ty {
                let obj = self.new_object(
                    &name,
                    Space::Local,
                    &ty,
                    elem_text.clone(),
                    decl_span,
                    decl_text.clone(),
                );
                if let Some(i) = init {
                    self.expr(i, src);
                }
                self.bind(
                    name,
                    Val::Place(Place {
                        obj,
                        off: Expr::konst(0),
                        ty,
                    }),
                );
                continue;
            }
            let val = match init {
                Some(i) => {
                    if is_ref {
                        self.expr(i, src)
                    } else {
                        let v = self.rv(i, src);
                        match (&ty, v) {
                            (Ty::Dim3, Val::Int(e)) => {
                                Val::Dim3([e, Expr::konst(1), Expr::konst(1)])
                            }
                            (Ty::Ptr(t), v @ Val::Int(_)) => self.pointer_from(t, v, i, src),
                            (_, v) => self.as_declared(&ty, v, &decl_text),
                        }
                    }
                }
                None if ty == Ty::Dim3 => {
                    Val::Dim3([Expr::konst(1), Expr::konst(1), Expr::konst(1)])
                }
                None => self.unknown_val(Origin::BeforeAssigned { name: name.clone() }),
            };
            self.bind(name, val);
        }
    }

    /// `ns::Name<N> x = v;` that the grammar read as the comparison
    /// `(ns::Name < N) > (x = v)` (it does after a block's first
    /// statement): declares `x` with the value `v`. Whether `n`, a `>`,
    /// was one: `ns::Name` is no variable, constant or macro, and `x` a
    /// plain name.
    pub(super) fn misread_declaration(&mut self, n: Node, src: &Src) -> bool {
        let op = |x: Node| x.field("operator").map(|o| o.node_kind().to_string());
        let (Some(l), Some(r)) = (n.field("left"), n.field("right")) else {
            return false;
        };
        if op(l).as_deref() != Some("<")
            || r.node_kind() != "assignment_expression"
            || op(r).as_deref() != Some("=")
        {
            return false;
        }
        let (Some(ty), Some(name), Some(value)) = (
            l.field("left")
                .filter(|t| t.node_kind() == "qualified_identifier"),
            r.field("left").filter(|x| x.node_kind() == "identifier"),
            r.field("right"),
        ) else {
            return false;
        };
        let short = ty.field("name").map(|x| src.text(x)).unwrap_or_default();
        let is_value = self.lookup(&short).is_some()
            || self.tu.consts.contains_key(&short)
            || self.tu.macros.contains_key(&short)
            || self.tu.globals.contains_key(&short);
        if is_value {
            return false;
        }
        let v = self.rv(value, src);
        self.bind(src.text(name), v);
        true
    }

    /// `T name(a, b);` read as a variable constructed from `a` and `b`.
    fn vexing_parse(&mut self, d: Node, base: &Ty, src: &Src) {
        let Some(name) = d.field("declarator").map(|x| src.text(x)) else {
            return;
        };
        let mut args = Vec::new();
        if let Some(pl) = d.field("parameters") {
            let params = pl.kids();
            for p in params {
                let text = src.text(p);
                let v = self.expand_text(&name, &text, p, src, false);
                args.push(self.as_int(v));
            }
        }
        let val = match (base, args.len()) {
            (Ty::Dim3, 0..=3) => {
                let mut dims = [Expr::konst(1), Expr::konst(1), Expr::konst(1)];
                for (i, a) in args.into_iter().enumerate() {
                    dims[i] = a;
                }
                Val::Dim3(dims)
            }
            (_, 1) => Val::Int(args.remove(0)),
            _ => self.unknown_val(Origin::Written { text: name.clone() }),
        };
        self.bind(name, val);
    }
}

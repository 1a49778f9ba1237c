//! Declarations read into the pass's tables: structs (laid out), enums
//! and integer constants, typedefs and template aliases, file-scope
//! `__constant__`/`__device__`/`__shared__` arrays, and functions and
//! kernels (with their template parameters and defaults).

use tree_sitter::Node;

use super::super::fields::Fields;
use super::super::lower::{Lowerer, Src};
use super::super::types::{layout_struct, Ty};
use super::launch_sites::{contains_launch, launch_api_named, launch_chevrons};
use super::{FuncDef, GlobalDecl, TParam, Tu};
use crate::budget;
use crate::finding::{Cut, NoteKind};
use crate::ir::Space;

impl<'t> Tu<'t> {
    /// Registers a struct with a body; returns its type.
    pub(crate) fn struct_def(&mut self, n: Node<'t>, alias: Option<String>) -> Option<Ty> {
        let src = self.src();
        let name = n.field("name").map(|x| src.text(x)).or(alias)?;
        self.struct_nodes
            .entry(name.clone())
            .or_insert((Vec::new(), n, self.src));
        let body = n.field("body")?;
        let mut fields = Vec::new();
        {
            let mut lw = Lowerer::new(self);
            for f in body.kids().into_iter() {
                // Data members only: a method declared in the class or a
                // static member takes no room in an object.
                if !crate::frontend::lower::objects::is_data_member(f, &src) {
                    continue;
                }
                let Some(tn) = f.field("type") else {
                    continue;
                };
                let base = lw.resolve_type(tn, &src);
                let mut c2 = f.walk();
                for d in f.children_by_field_name("declarator", &mut c2) {
                    let (fname, ty, _) = lw.declarator(base.clone(), d, &src);
                    fields.push((fname, ty));
                }
            }
        }
        let blanked = self.src.align_in(n.start_byte(), body.start_byte());
        let force = Lowerer::new(self).struct_alignment(n, &src, blanked);
        let mut def = layout_struct(name.clone(), fields, force, &self.structs)?;
        def.keyword = struct_keyword(n, &src);
        self.structs.push(def);
        let id = self.structs.len() - 1;
        self.struct_names.insert(name, id);
        Some(Ty::Struct(id))
    }

    pub(super) fn enum_def(&mut self, n: Node<'t>) {
        let src = self.src();
        let Some(body) = n.field("body") else {
            return;
        };
        let mut next = 0i64;
        let items = body.kids();
        for e in items {
            if e.node_kind() != "enumerator" {
                continue;
            }
            let Some(name) = e.field("name") else {
                continue;
            };
            if let Some(v) = e.field("value") {
                match Lowerer::new(self).const_int(v, &src) {
                    Some(x) => next = x,
                    None => continue,
                }
            }
            self.consts.insert(src.text(name), next);
            next = next.wrapping_add(1);
        }
    }

    pub(super) fn typedef(&mut self, n: Node<'t>) {
        let src = self.src();
        let Some(tn) = n.field("type") else {
            return;
        };
        if tn.node_kind() == "template_type" {
            let mut c = n.walk();
            let decls: Vec<_> = n.children_by_field_name("declarator", &mut c).collect();
            for d in decls {
                self.template_aliases.insert(src.text(d), (tn, self.src));
            }
        }
        let mut c = n.walk();
        let decls: Vec<_> = n.children_by_field_name("declarator", &mut c).collect();
        // `typedef struct { … } Name;`
        let first_name = decls.first().map(|d| src.text(*d));
        let base = if matches!(tn.node_kind(), "struct_specifier" | "class_specifier")
            && tn.field("body").is_some()
        {
            match self.struct_def(tn, first_name) {
                Some(t) => t,
                None => return,
            }
        } else {
            Lowerer::new(self).resolve_type(tn, &src)
        };
        for d in decls {
            let (name, ty, _) = Lowerer::new(self).declarator(base.clone(), d, &src);
            self.typedefs.insert(name, ty);
        }
    }

    pub(super) fn global_declaration(&mut self, n: Node<'t>) {
        let src = self.src();
        let text = src.text(n);
        let Some(tn) = n.field("type") else {
            return;
        };
        if matches!(tn.node_kind(), "struct_specifier" | "class_specifier")
            && tn.field("body").is_some()
        {
            self.struct_def(tn, None);
        }
        if tn.node_kind() == "enum_specifier" {
            self.enum_def(tn);
        }
        let quals = qualifiers(n, &src);
        let space = if quals.iter().any(|q| q == "__constant__") {
            Some(Space::Constant)
        } else if quals.iter().any(|q| q == "__shared__") {
            Some(Space::Shared)
        } else if quals
            .iter()
            .any(|q| q == "__device__" || q == "__managed__")
        {
            Some(Space::Global)
        } else {
            None
        };
        let is_const = quals.iter().any(|q| q == "const" || q == "constexpr");
        let external = quals.iter().any(|q| q == "extern") || in_linkage_specification(n);
        let mut c = n.walk();
        let decls: Vec<_> = n.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            let (name, ty, init, elem_text) = {
                let mut lw = Lowerer::new(self);
                let base = lw.resolve_type(tn, &src);
                let (name, ty, init) = lw.declarator(base, d, &src);
                (name, ty, init, src.text(tn))
            };
            if name.is_empty() {
                continue;
            }
            if let Some(space) = space {
                if matches!(ty, Ty::Array(..)) || space != Space::Shared {
                    let span = self.src.span(n.start_byte(), n.end_byte());
                    self.globals.insert(
                        name,
                        GlobalDecl {
                            space,
                            ty,
                            elem_text,
                            span,
                            text: text.clone(),
                        },
                    );
                }
                continue;
            }
            if is_const && ty.is_integer() {
                if let Some(init) = init {
                    if let Some(v) = Lowerer::new(self).const_int(init, &src) {
                        // `extern const` (or in `extern "C" { … }`): other
                        // files see it declared only.
                        if external {
                            self.extern_consts.push((name.clone(), v));
                        }
                        self.consts.insert(name, v);
                    }
                }
            }
        }
    }

    pub(super) fn function(
        &mut self,
        n: Node<'t>,
        tparams: Vec<TParam>,
        tdefaults: Vec<Option<Node<'t>>>,
    ) {
        let src = self.src();
        let Some(decl) = n.field("declarator") else {
            return;
        };
        let name = match function_name(decl, &src) {
            Ok(Some(name)) => name,
            Ok(None) => return,
            Err(()) => {
                let kind = NoteKind::OutOfBudget {
                    what: Cut::FunctionDeclarator,
                    budget: budget::FUNCTION_DECLARATOR_DEPTH,
                };
                self.note(n, kind);
                return;
            }
        };
        let mut is_kernel = false;
        let mut c = n.walk();
        for k in n.children(&mut c) {
            if k.node_kind() == "__global__" {
                is_kernel = true;
            }
            if k.id() == decl.id() {
                break;
            }
        }
        if !is_kernel {
            // Older grammars put the qualifier in an attribute or storage class.
            let head = &self.src.text[n.start_byte()..decl.start_byte()];
            is_kernel = head.windows(10).any(|w| w == b"__global__");
        }
        let def = FuncDef {
            node: n,
            src: self.src,
            name: name.clone(),
            tparams,
            tdefaults,
            is_kernel,
        };
        if is_kernel {
            self.kernels.push(def.clone());
        }
        // A launch needs `<<<` (or `<< <`) in the function's text: the
        // byte search spares the tree walk for almost every function.
        let text = self
            .src
            .text
            .get(n.start_byte()..n.end_byte())
            .unwrap_or(&[]);
        // Or a call of the runtime's launch API, by name.
        let api = launch_api_named(text);
        if launch_chevrons(text) {
            match contains_launch(n) {
                Some(true) => self.launch_fns.push(def.clone()),
                Some(false) if api => self.launch_fns.push(def.clone()),
                Some(false) => {}
                None => {
                    let kind = NoteKind::OutOfBudget {
                        what: Cut::LaunchSearch {
                            function: name.clone(),
                        },
                        budget: budget::LAUNCH_SEARCH_NODES,
                    };
                    self.note(n, kind);
                }
            }
        } else if api || self.uses_launching_macro(text) {
            self.launch_fns.push(def.clone());
        }
        self.functions.entry(name).or_default().push(def);
    }
}

/// The default argument of each template parameter, if any.
pub(super) fn template_defaults(n: Node) -> Vec<Option<Node>> {
    let Some(list) = n.field("parameters") else {
        return Vec::new();
    };
    list.kids()
        .into_iter()
        .filter(|p| {
            matches!(
                p.node_kind(),
                "type_parameter_declaration"
                    | "optional_type_parameter_declaration"
                    | "parameter_declaration"
                    | "optional_parameter_declaration"
            )
        })
        .map(|p| p.field("default_value").or_else(|| p.field("default_type")))
        .collect()
}

/// The parameters of a template declaration, by name.
pub(crate) fn template_params(n: Node, src: &Src) -> Vec<TParam> {
    let mut out = Vec::new();
    let Some(list) = n.field("parameters") else {
        return out;
    };
    for p in list.kids().into_iter() {
        match p.node_kind() {
            "type_parameter_declaration" | "optional_type_parameter_declaration" => {
                let name = p
                    .field("name")
                    .or_else(|| p.named(0))
                    .map(|x| src.text(x))
                    .unwrap_or_default();
                out.push(TParam::Type(name));
            }
            "parameter_declaration" | "optional_parameter_declaration" => {
                let name = p
                    .field("declarator")
                    .map(|x| src.text(x))
                    .unwrap_or_default();
                out.push(TParam::Value(name));
            }
            _ => {}
        }
    }
    out
}

/// Whether template parameter `name` of the template declaration `n` is
/// declared `bool`.
pub(crate) fn template_param_is_bool(n: Node, name: &str, src: &Src) -> bool {
    let Some(list) = n.field("parameters") else {
        return false;
    };
    let found = list.kids().into_iter().any(|p| {
        p.field("declarator").is_some_and(|d| src.text(d) == name)
            && p.field("type")
                .is_some_and(|t| src.text(t).trim() == "bool")
    });
    found
}

/// Qualifier keywords of a declaration (`__shared__`, `const`, `extern`, …).
/// Whether declaration `n` is inside `extern "C" …` (alone or a block).
fn in_linkage_specification(n: Node) -> bool {
    let mut p = n.parent();
    while let Some(x) = p {
        match x.node_kind() {
            "linkage_specification" => return true,
            "declaration_list" => p = x.parent(),
            _ => return false,
        }
    }
    false
}

pub(crate) fn qualifiers(n: Node, src: &Src) -> Vec<String> {
    let mut out = Vec::new();
    let mut c = n.walk();
    for k in n.children(&mut c) {
        match k.node_kind() {
            "type_qualifier" | "storage_class_specifier" | "attribute_specifier" => {
                out.extend(src.text(k).split_whitespace().map(str::to_string))
            }
            "__shared__" | "__constant__" | "__device__" | "__managed__" | "constexpr"
            | "const" | "extern" | "static" => out.push(k.node_kind().to_string()),
            _ => {}
        }
    }
    out
}

/// The name a function declarator declares (the last part of a
/// qualified one); `Err` when its declarators nest past
/// `budget::MAX_FUNCTION_DECLARATOR_DEPTH`.
pub(crate) fn function_name(decl: Node, src: &Src) -> Result<Option<String>, ()> {
    let mut d = decl;
    for _ in 0..budget::MAX_FUNCTION_DECLARATOR_DEPTH {
        match d.node_kind() {
            "function_declarator" => {
                let Some(inner) = d.field("declarator") else {
                    return Ok(None);
                };
                return Ok(Some(match inner.node_kind() {
                    "qualified_identifier" => inner
                        .field("name")
                        .map(|x| src.text(x))
                        .unwrap_or_else(|| src.text(inner)),
                    _ => src.text(inner),
                }));
            }
            _ => match d.field("declarator") {
                Some(inner) => d = inner,
                None => return Ok(None),
            },
        }
    }
    Err(())
}

/// Where the `struct`/`class` keyword of definition `n` is written: `None`
/// when a macro wrote it (the span is then the macro's use, not the keyword).
pub(crate) fn struct_keyword(n: Node, src: &Src) -> Option<crate::ir::Span> {
    let kw = n.child(0)?;
    let text = src.text(kw);
    let span = src.span(kw);
    (matches!(text.as_str(), "struct" | "class") && span.end - span.start == text.len())
        .then_some(span)
}

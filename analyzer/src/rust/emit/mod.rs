//! Rust-CUDA kernels written out as the CUDA C++ they compile to, piece
//! by piece, each piece recorded with the Rust syntax it stands for
//! ([`Seg`]). What the translation does not read is noted at its Rust
//! span and stands in the C++ as a name nothing declares, so that what
//! depends on it is unknown, never guessed.

use std::collections::HashMap;

use syn::spanned::Spanned;

mod expr;
mod matches;
mod patterns;

use super::spans::Seg;
use super::types::{self, Ty};
use crate::budget;

/// A construct the translation does not read, and where.
#[derive(Clone, Debug)]
pub(super) struct Skipped {
    pub at: (usize, usize),
    pub what: String,
}

/// A variable in scope: its C name and type.
#[derive(Clone, Debug)]
struct Var {
    c: String,
    ty: Ty,
}

/// A shared static whose innermost length is also written in its
/// initializer: padding must change both (`src` bytes of each).
#[derive(Clone, Debug)]
pub(super) struct SharedStatic {
    /// The innermost length in the type.
    pub inner: (usize, usize),
    /// The same length in the initializer; `None`: an initializer that
    /// cannot be padded alike (an array literal).
    pub copies: Option<Vec<(usize, usize)>>,
}

#[derive(Default)]
pub(super) struct Emitter {
    pub statics: Vec<SharedStatic>,
    pub out: String,
    pub segs: Vec<Seg>,
    pub skipped: Vec<Skipped>,
    /// Kernels written.
    pub kernels: usize,
    scopes: Vec<HashMap<String, Var>>,
    /// C names taken in the function being written.
    taken: HashMap<String, u32>,
    /// File-scope constants and statics, by Rust name.
    globals: HashMap<String, Var>,
    /// Functions of the file, by name: their return types.
    functions: HashMap<String, Ty>,
    /// The function being written returns a value.
    returns: bool,
    /// Types of the expressions written or looked at, by address (a type
    /// looked for is not worked out twice: chained calls stay linear).
    typed: HashMap<usize, Ty>,
    depth: u32,
}

/// Whether `attrs` hold `#[name]` (or `#[path::name]`).
fn has_attr(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs
        .iter()
        .any(|a| a.path().segments.last().is_some_and(|s| s.ident == name))
}

/// Whether `attrs` make a kernel: Rust-CUDA's `#[kernel]`, CubeCL's
/// `#[cube(launch)]` or `#[cube(launch_unchecked)]`.
fn is_kernel(attrs: &[syn::Attribute]) -> bool {
    has_attr(attrs, "kernel")
        || attrs.iter().any(|a| {
            a.path().segments.last().is_some_and(|s| s.ident == "cube")
                && a.meta.require_list().is_ok_and(|l| {
                    l.tokens
                        .to_string()
                        .split([',', ' '])
                        .any(|w| w == "launch" || w == "launch_unchecked")
                })
        })
}

/// C++'s keywords, which Rust names may be (`new`, `class`): written with
/// a trailing `_`.
const CPP_KEYWORDS: [&str; 51] = [
    "alignas",
    "alignof",
    "and",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "case",
    "catch",
    "char",
    "class",
    "compl",
    "default",
    "delete",
    "double",
    "explicit",
    "export",
    "extern",
    "float",
    "friend",
    "goto",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "not",
    "operator",
    "or",
    "private",
    "protected",
    "public",
    "register",
    "short",
    "signed",
    "sizeof",
    "switch",
    "template",
    "this",
    "throw",
    "try",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "xor",
];

/// The buffer parameters of a function that takes a `Line` buffer, by
/// name, in order: each takes its line width as a template argument (one
/// per buffer, so that a launch, which does not know which buffers are
/// lines, gives them in order: `launches::cubecl`); none for a function
/// without lines.
fn line_params(sig: &syn::Signature) -> Vec<String> {
    let buffers: Vec<(String, Ty)> = sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(p) => match (&*p.pat, types::of(&p.ty)) {
                (syn::Pat::Ident(id), t @ Ty::Slice(_)) => Some((id.ident.to_string(), t)),
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let lined = buffers
        .iter()
        .any(|(_, t)| matches!(t, Ty::Slice(e) if matches!(**e, Ty::Line(_))));
    if lined {
        buffers.into_iter().map(|(n, _)| n).collect()
    } else {
        Vec::new()
    }
}

/// Whether a function of the file (of its inline modules too) takes a
/// `Line` buffer.
pub(super) fn lined_file(file: &syn::File) -> bool {
    fn any(items: &[syn::Item]) -> bool {
        items.iter().any(|i| match i {
            syn::Item::Fn(f) => !line_params(&f.sig).is_empty(),
            syn::Item::Mod(m) => m.content.as_ref().is_some_and(|(_, c)| any(c)),
            _ => false,
        })
    }
    any(&file.items)
}

/// The template parameter that holds buffer `name`'s line width.
fn line_width(name: &str) -> String {
    format!("__line_{}", c_ident(name))
}

/// A Rust name as a C++ name.
pub(super) fn c_ident(name: &str) -> String {
    if CPP_KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// Whether `attrs` put the item in shared memory (`#[address_space(shared)]`).
fn is_shared(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "address_space")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().trim() == "shared")
    })
}

fn range(s: proc_macro2::Span) -> (usize, usize) {
    let r = s.byte_range();
    (r.start, r.end)
}

impl Emitter {
    /// Writes `f` (the C++ for it) and records where it came from.
    fn piece<T: Spanned + ?Sized, R>(&mut self, node: &T, f: impl FnOnce(&mut Self) -> R) -> R {
        self.piece_at(range(node.span()), f)
    }

    /// [`Emitter::piece`] for the Rust bytes `src`.
    fn piece_at<R>(&mut self, src: (usize, usize), f: impl FnOnce(&mut Self) -> R) -> R {
        let start = self.out.len();
        let r = f(self);
        self.segs.push(Seg {
            gen: (start, self.out.len()),
            src,
        });
        r
    }

    fn w(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// Notes `node` as not read; writes a name nothing declares in its
    /// place when it stands for a value.
    fn skip<T: Spanned + ?Sized>(&mut self, node: &T, what: &str, value: bool) -> Ty {
        self.skipped.push(Skipped {
            at: range(node.span()),
            what: what.to_string(),
        });
        if value {
            let name = format!("unread_rust_{}", what.replace([' ', '`', '.', '!'], "_"));
            self.piece(node, |e| e.w(&name));
        }
        Ty::Named(String::new())
    }

    fn lookup(&self, name: &str) -> Option<&Var> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name))
            .or_else(|| self.globals.get(name))
    }

    /// Declares Rust `name` in the innermost scope under a C name no
    /// other declaration of the function has (Rust shadows, C++ may not).
    fn declare(&mut self, name: &str, ty: Ty) -> String {
        let c = self.declare_later(name);
        self.bind(name, c.clone(), ty);
        c
    }

    // ---- items -------------------------------------------------------

    pub fn file(&mut self, file: &syn::File) {
        // The `Line` type first, at the start of the text (`rust/mod.rs`
        // leaves out what the front end says of it).
        if lined_file(file) {
            self.w(types::LINE_PRELUDE);
        }
        let mut fns = Vec::new();
        self.items(&file.items, &mut fns);
        for f in &fns {
            let ret = match &f.sig.output {
                syn::ReturnType::Default => Ty::Named("void".into()),
                syn::ReturnType::Type(_, t) => types::of(t),
            };
            self.functions.insert(f.sig.ident.to_string(), ret);
        }
        // Device functions before kernels: C++ reads in order.
        for f in fns.iter().filter(|f| !is_kernel(&f.attrs)) {
            self.function(f, false);
        }
        for f in fns.iter().filter(|f| is_kernel(&f.attrs)) {
            self.function(f, true);
            self.kernels += 1;
        }
    }

    /// Constants and shared statics written at once; functions gathered.
    fn items<'f>(&mut self, items: &'f [syn::Item], fns: &mut Vec<&'f syn::ItemFn>) {
        for item in items {
            match item {
                syn::Item::Const(c) => self.constant(c, true),
                syn::Item::Static(s) => self.static_item(s, true),
                syn::Item::Fn(f) => fns.push(f),
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        self.items(inner, fns);
                    }
                }
                _ => {}
            }
        }
    }

    fn constant(&mut self, c: &syn::ItemConst, global: bool) {
        let ty = types::of(&c.ty);
        let name = c.ident.to_string();
        if !matches!(ty, Ty::Scalar(_)) {
            return;
        }
        let cname = if global {
            self.globals.insert(
                name.clone(),
                Var {
                    c: name.clone(),
                    ty: ty.clone(),
                },
            );
            name
        } else {
            self.declare(&name, ty.clone())
        };
        self.piece(c, |e| {
            e.w(&format!("const {} {cname} = ", ty.c()));
            e.expr(&c.expr);
            e.w(";\n");
        });
    }

    /// `#[address_space(shared)] static mut NAME: [T; N]` as `__shared__`.
    fn static_item(&mut self, s: &syn::ItemStatic, global: bool) {
        if !is_shared(&s.attrs) {
            return;
        }
        let name = s.ident.to_string();
        let mut dims = Vec::new();
        let mut ty: &syn::Type = &s.ty;
        while let syn::Type::Array(a) = ty {
            dims.push(&a.len);
            ty = &a.elem;
        }
        let elem = types::of(ty);
        let cname = if global {
            name.clone()
        } else {
            self.declare(&name, Ty::Named(String::new()))
        };
        let var = Var {
            c: cname.clone(),
            ty: Ty::Array(Box::new(elem.clone())),
        };
        if global {
            self.globals.insert(name, var);
        } else if let Some(sc) = self.scopes.last_mut() {
            sc.insert(name, var);
        }
        if let Some(inner) = dims.last() {
            self.statics.push(SharedStatic {
                inner: range(inner.span()),
                copies: initializer_lengths(&s.expr, dims.len()),
            });
        }
        // From `static` on: the attributes are not the declaration.
        let whole = (range(s.static_token.span).0, range(s.span()).1);
        self.piece_at(whole, |e| {
            e.w(&format!("__shared__ {} {cname}", elem.c()));
            // `[[T; C]; R]` is C++'s `T x[R][C]`: the outer length first.
            for d in &dims {
                e.w("[");
                e.piece(*d, |e| e.expr(d));
                e.w("]");
            }
            e.w(";\n");
        });
    }

    fn function(&mut self, f: &syn::ItemFn, kernel: bool) {
        self.scopes = vec![HashMap::new()];
        self.taken.clear();
        self.depth = 0;
        let ret = match &f.sig.output {
            syn::ReturnType::Default => None,
            syn::ReturnType::Type(_, t) => Some(types::of(t)),
        };
        self.returns = ret.is_some();
        let lines = line_params(&f.sig);
        self.piece(f, |e| {
            e.generics(&f.sig.generics, &lines);
            if kernel {
                e.w("__global__ void ");
            } else {
                let r = ret.as_ref().map_or("void".to_string(), Ty::c);
                e.w(&format!("__device__ {r} "));
            }
            e.piece(&f.sig.ident, |e| e.w(&c_ident(&f.sig.ident.to_string())));
            e.w("(");
            let mut first = true;
            for input in &f.sig.inputs {
                let syn::FnArg::Typed(p) = input else {
                    continue;
                };
                if !first {
                    e.w(", ");
                }
                first = false;
                e.param(p);
            }
            e.w(") ");
            e.block(&f.block);
            e.w("\n");
        });
    }

    /// The function's generics as a C++ template header, then an `int`
    /// per buffer of `lines` ([`line_params`]).
    fn generics(&mut self, g: &syn::Generics, lines: &[String]) {
        let params: Vec<String> = g
            .params
            .iter()
            .filter_map(|p| match p {
                syn::GenericParam::Type(t) => Some(format!("typename {}", t.ident)),
                syn::GenericParam::Const(c) => {
                    Some(format!("{} {}", types::of(&c.ty).c(), c.ident))
                }
                syn::GenericParam::Lifetime(_) => None,
            })
            .chain(lines.iter().map(|l| format!("int {}", line_width(l))))
            .collect();
        for p in &g.params {
            if let syn::GenericParam::Const(c) = p {
                let v = Var {
                    c: c.ident.to_string(),
                    ty: types::of(&c.ty),
                };
                if let Some(s) = self.scopes.first_mut() {
                    s.insert(c.ident.to_string(), v);
                }
            }
        }
        if !params.is_empty() {
            self.w(&format!("template <{}>\n", params.join(", ")));
        }
    }

    fn param(&mut self, p: &syn::PatType) {
        let syn::Pat::Ident(id) = &*p.pat else {
            let c = format!("unread_param_{}", self.out.len());
            self.skip(&p.pat, "parameter pattern", false);
            self.w(&format!("int {c}"));
            return;
        };
        let ty = types::of(&p.ty);
        let name = id.ident.to_string();
        let c = self.declare(&name, ty.clone());
        let konst = match &*p.ty {
            syn::Type::Reference(r) => r.mutability.is_none(),
            syn::Type::Ptr(r) => r.mutability.is_none(),
            _ => false,
        };
        let k = if konst { "const " } else { "" };
        self.piece(p, |e| match &ty {
            Ty::Slice(t) => {
                let elem = match &**t {
                    Ty::Line(x) => format!("__wl_line<{}, {}>", x.c(), line_width(&name)),
                    other => other.c(),
                };
                e.w(&format!("{k}{elem}* {c}, unsigned long long {c}__len"))
            }
            Ty::Ptr(t) => e.w(&format!("{k}{}* {c}", t.c())),
            other => e.w(&format!("{} {c}", other.c())),
        });
    }

    // ---- statements --------------------------------------------------

    fn block(&mut self, b: &syn::Block) {
        self.depth += 1;
        if self.depth > budget::MAX_SYNTAX_DEPTH {
            self.skip(b, "block nested too deeply", false);
            self.w("{}");
            self.depth -= 1;
            return;
        }
        self.scopes.push(HashMap::new());
        self.w("{\n");
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            self.stmt(s, i + 1 == n);
        }
        self.w("}\n");
        self.scopes.pop();
        self.depth -= 1;
    }

    fn stmt(&mut self, s: &syn::Stmt, last: bool) {
        match s {
            syn::Stmt::Local(l) => self.local(l),
            syn::Stmt::Item(syn::Item::Const(c)) => self.constant(c, false),
            syn::Stmt::Item(syn::Item::Static(st)) => self.static_item(st, false),
            syn::Stmt::Item(_) => {}
            syn::Stmt::Expr(e, semi) => {
                let tail = last && semi.is_none() && self.returns;
                self.statement_expr(e, tail);
            }
            syn::Stmt::Macro(m) => self.statement_macro(&m.mac),
        }
    }

    fn statement_macro(&mut self, m: &syn::Macro) {
        let name = m.path.segments.last().map(|s| s.ident.to_string());
        // Printing and assertions touch no memory the analysis models.
        if !matches!(
            name.as_deref(),
            Some("println" | "print" | "assert" | "debug_assert" | "assert_eq" | "debug_assert_eq")
        ) {
            self.skip(m, "macro statement", false);
        }
    }

    fn local(&mut self, l: &syn::Local) {
        let (pat, declared) = match &l.pat {
            syn::Pat::Type(t) => (&*t.pat, Some(types::of(&t.ty))),
            p => (p, None),
        };
        let syn::Pat::Ident(id) = pat else {
            self.skip(&l.pat, "let pattern", false);
            return;
        };
        let name = id.ident.to_string();
        let init = l.init.as_ref().map(|i| &*i.expr);
        if let Some(syn::Expr::Macro(m)) = init {
            if self.shared_array(&name, l, &m.mac) {
                return;
            }
        }
        if let Some(syn::Expr::Call(c)) = init {
            if self.shared_memory(&name, l, c, declared.as_ref()) {
                return;
            }
        }
        self.piece(l, |e| {
            let ty = match (&declared, init) {
                (Some(t), _) => t.clone(),
                (None, Some(x)) => e.type_of(x),
                (None, None) => Ty::Named(String::new()),
            };
            let spelled = match &ty {
                Ty::Named(n) if n.is_empty() => "auto".to_string(),
                t => t.c(),
            };
            let c = e.declare_later(&name);
            e.w(&format!("{spelled} {c}"));
            if let Some(x) = init {
                e.w(" = ");
                e.expr(x);
            }
            e.w(";\n");
            e.bind(&name, c, ty);
        });
    }

    /// The C name the next declaration of `name` takes (bound after its
    /// initializer, which still sees the shadowed variable).
    fn declare_later(&mut self, name: &str) -> String {
        let base = c_ident(name);
        let n = self.taken.entry(name.to_string()).or_insert(0);
        let c = if *n == 0 {
            base
        } else {
            format!("{base}__{n}")
        };
        *n += 1;
        c
    }

    fn bind(&mut self, name: &str, c: String, ty: Ty) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), Var { c, ty });
        }
    }

    /// `let s = shared_array![T; N];` as a `__shared__` array named `s`.
    fn shared_array(&mut self, name: &str, l: &syn::Local, m: &syn::Macro) -> bool {
        if m.path
            .segments
            .last()
            .is_none_or(|s| s.ident != "shared_array")
        {
            return false;
        }
        let Ok((ty, len)) = m.parse_body_with(|input: syn::parse::ParseStream| {
            let ty: syn::Type = input.parse()?;
            input.parse::<syn::Token![;]>()?;
            let len: syn::Expr = input.parse()?;
            Ok((ty, len))
        }) else {
            self.skip(m, "shared_array! arguments", false);
            return true;
        };
        self.shared_buffer(name, l, types::of(&ty), &len);
        true
    }

    /// `let name = …` as a `__shared__ elem name[len];` that `name` stands for.
    fn shared_buffer(&mut self, name: &str, l: &syn::Local, elem: Ty, len: &syn::Expr) {
        let c = self.declare_later(name);
        self.piece(l, |e| {
            e.w(&format!("__shared__ {} {c}[", elem.c()));
            e.expr(len);
            e.w("];\n");
        });
        self.bind(name, c, Ty::Array(Box::new(elem)));
    }

    /// CubeCL's `let s = SharedMemory::<T>::new(n);` as a `__shared__`
    /// array named `s` (the element type from the turbofish or from the
    /// `let`'s `SharedMemory<T>`).
    fn shared_memory(
        &mut self,
        name: &str,
        l: &syn::Local,
        c: &syn::ExprCall,
        declared: Option<&Ty>,
    ) -> bool {
        let syn::Expr::Path(p) = &*c.func else {
            return false;
        };
        let segs: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
        let [.., shared, new] = segs.as_slice() else {
            return false;
        };
        if shared.ident != "SharedMemory" || new.ident != "new" || c.args.len() != 1 {
            return false;
        }
        let elem = match (types::first_generic(&shared.arguments), declared) {
            (Some(t), _) => t,
            (None, Some(Ty::Slice(t))) => (**t).clone(),
            _ => Ty::Named("SharedMemoryElement".into()),
        };
        let Some(len) = c.args.first() else {
            return false;
        };
        self.shared_buffer(name, l, elem, len);
        true
    }

    /// An expression in statement position (`tail`: the value the
    /// function returns).
    fn statement_expr(&mut self, x: &syn::Expr, tail: bool) {
        match x {
            syn::Expr::If(i) => self.if_stmt(i),
            syn::Expr::ForLoop(f) => self.for_loop(f),
            syn::Expr::While(w) => {
                if let syn::Expr::Let(l) = &*w.cond {
                    if !self.while_let(w, l) {
                        self.skip(&w.cond, "while let", false);
                    }
                    return;
                }
                self.piece(w, |e| {
                    e.w("while (");
                    e.expr(&w.cond);
                    e.w(") ");
                    e.block(&w.body);
                });
            }
            syn::Expr::Loop(l) => self.piece(l, |e| {
                e.w("while (true) ");
                e.block(&l.body);
            }),
            syn::Expr::Block(b) => self.block(&b.block),
            syn::Expr::Unsafe(u) => self.block(&u.block),
            syn::Expr::Break(_) => self.w("break;\n"),
            syn::Expr::Continue(_) => self.w("continue;\n"),
            syn::Expr::Return(r) => self.piece(r, |e| {
                e.w("return");
                if let Some(v) = &r.expr {
                    e.w(" ");
                    e.expr(v);
                }
                e.w(";\n");
            }),
            syn::Expr::Macro(m) => self.statement_macro(&m.mac),
            syn::Expr::Match(m) => self.match_stmt(m),
            other => {
                if tail {
                    self.w("return ");
                }
                self.expr(other);
                self.w(";\n");
            }
        }
    }

    fn if_stmt(&mut self, i: &syn::ExprIf) {
        if let syn::Expr::Let(l) = &*i.cond {
            if !self.if_let(i, l) {
                self.skip(&i.cond, "if let", false);
            }
            return;
        }
        self.piece(i, |e| {
            e.w("if (");
            e.expr(&i.cond);
            e.w(") ");
            e.block(&i.then_branch);
            e.else_branch(i);
            e.w("\n");
        });
    }

    /// ` else …` of `i`, where it has one.
    fn else_branch(&mut self, i: &syn::ExprIf) {
        if let Some((_, els)) = &i.else_branch {
            self.w(" else ");
            match &**els {
                syn::Expr::If(inner) => self.if_stmt(inner),
                syn::Expr::Block(b) => self.block(&b.block),
                other => self.statement_expr(other, false),
            }
        }
    }

    /// `for i in a..b`, `a..=b` and `(a..b).step_by(s)`.
    fn for_loop(&mut self, f: &syn::ExprForLoop) {
        let syn::Pat::Ident(id) = &*f.pat else {
            if !self.for_pattern(f) {
                self.skip(&f.pat, "for pattern", false);
            }
            return;
        };
        let Some((from, to, inclusive, step)) = counted(&f.expr) else {
            if !self.for_pattern(f) {
                self.skip(&f.expr, "for over an iterator", false);
            }
            return;
        };
        let name = id.ident.to_string();
        let ty = match (self.type_of(from), to.map(|t| self.type_of(t))) {
            (Ty::Scalar("int"), Some(t @ Ty::Scalar(_))) => t,
            (t @ Ty::Scalar(_), _) => t,
            _ => Ty::Scalar("long long"),
        };
        self.piece(f, |e| {
            e.scopes.push(HashMap::new());
            let c = e.declare_later(&name);
            e.w(&format!("for ({} {c} = ", ty.c()));
            e.expr(from);
            e.w("; ");
            match to {
                Some(to) => {
                    e.w(&format!("{c} {} ", if inclusive { "<=" } else { "<" }));
                    e.expr(to);
                }
                None => e.w("true"),
            }
            e.w(&format!("; {c} += "));
            match step {
                Some(s) => {
                    e.expr(s);
                }
                None => e.w("1"),
            }
            e.w(") ");
            e.bind(&name, c, ty.clone());
            e.block(&f.body);
            e.scopes.pop();
        });
    }
}

/// Where an initializer of a static with `depth` array dimensions writes
/// its innermost length: `[[0.0; N]; M]` writes it once (`N`); a call
/// (`MaybeUninit::uninit()`, `zeroed()`) writes none; an array literal
/// cannot be padded alike (`None`).
fn initializer_lengths(x: &syn::Expr, depth: usize) -> Option<Vec<(usize, usize)>> {
    match x {
        syn::Expr::Repeat(r) if depth <= 1 => Some(vec![range(r.len.span())]),
        syn::Expr::Repeat(r) => initializer_lengths(&r.expr, depth - 1),
        syn::Expr::Paren(p) => initializer_lengths(&p.expr, depth),
        syn::Expr::Call(_) | syn::Expr::Path(_) | syn::Expr::MethodCall(_) => Some(Vec::new()),
        _ => None,
    }
}

/// `a..b`, `a..=b`, `a..` and either stepped by `.step_by(s)`, possibly
/// in parentheses: (from, to, inclusive, step).
type Counted<'x> = (
    &'x syn::Expr,
    Option<&'x syn::Expr>,
    bool,
    Option<&'x syn::Expr>,
);

fn counted(x: &syn::Expr) -> Option<Counted<'_>> {
    match x {
        syn::Expr::Paren(p) => counted(&p.expr),
        syn::Expr::Group(g) => counted(&g.expr),
        syn::Expr::Range(r) => {
            let from = r.start.as_deref()?;
            let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
            Some((from, r.end.as_deref(), inclusive, None))
        }
        syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
            let (from, to, inclusive, None) = counted(&m.receiver)? else {
                return None;
            };
            Some((from, to, inclusive, m.args.first()))
        }
        _ => None,
    }
}

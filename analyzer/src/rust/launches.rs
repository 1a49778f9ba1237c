//! Rust-CUDA's host launches, `launch!(kernel<<<grid, block, smem,
//! stream>>>(args))`, as the project's launch sites ([`SiteRecord`]): the
//! kernel a host function launches is named by its `get_function("NAME")`
//! (the variable launched is bound to it, directly or through other
//! `let`s), else by the name launched; grid and block are tuples or single
//! values of constants the function or file defines (`const TILE: usize =
//! 16`, `let (gx, gy) = (n.div_ceil(TILE) as u32, 4)` with `n` unknown
//! leaves gx unknown). Slices are passed as a pointer and a length, as the
//! kernel's translation declares them.
//!
//! CubeCL's host launches, `k::launch::<f32, R>(&client, CubeCount::Static(x,
//! y, z), CubeDim::new(x, y, z), args…)` (and `launch_unchecked`), are
//! sites too ([`cubecl`]): the generic arguments but the last (the runtime)
//! are the kernel's element types; an `ArrayArg`/`TensorArg` is its pointer
//! and length, a `ScalarArg::new(v)` or a constant one value.

use std::collections::HashMap;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::frontend::source::Source;
use crate::ir::SiteRecord;

mod cubecl;

/// Every `launch!` of the file's functions, as sites.
pub(super) fn sites(file: &syn::File, lines: &Source) -> Vec<SiteRecord> {
    let mut consts = HashMap::new();
    for item in &file.items {
        if let syn::Item::Const(c) = item {
            if let Some(v) = eval(&c.expr, &consts) {
                consts.insert(c.ident.to_string(), v);
            }
        }
    }
    let mut scan = Scan {
        consts: consts.clone(),
        file_consts: consts,
        kernels: HashMap::new(),
        cube: cubecl::Bound::default(),
        layouts: cubecl::layouts(file),
        assigned: Vec::new(),
        out: Vec::new(),
        lines,
    };
    scan.visit_file(file);
    scan.out
}

struct Scan<'l> {
    /// Constants in scope: the file's, and the current function's
    /// constants and `let`s of constant value.
    consts: HashMap<String, i64>,
    file_consts: HashMap<String, i64>,
    /// Variables bound to a kernel (`get_function("NAME")`), by name.
    kernels: HashMap<String, String>,
    /// CubeCL values bound to variables: shapes and buffer arguments.
    cube: cubecl::Bound,
    /// The buffer parameters of the file's functions ([`cubecl::layouts`]).
    layouts: HashMap<String, Vec<bool>>,
    /// Names assigned (`x = …`, `x += …`) in the block being walked: what
    /// they held is forgotten past the block too.
    assigned: Vec<String>,
    out: Vec<SiteRecord>,
    lines: &'l Source,
}

impl<'ast> Visit<'ast> for Scan<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.enter_function();
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.enter_function();
        syn::visit::visit_impl_item_fn(self, f);
    }

    /// A block's `let`s end with it (an inner `let dim = …` leaves the
    /// outer `dim` as it was); a name assigned inside it is forgotten.
    fn visit_block(&mut self, b: &'ast syn::Block) {
        let saved = (self.consts.clone(), self.kernels.clone(), self.cube.clone());
        let outer = std::mem::take(&mut self.assigned);
        syn::visit::visit_block(self, b);
        let inner = std::mem::replace(&mut self.assigned, outer);
        (self.consts, self.kernels, self.cube) = saved;
        for n in inner {
            self.forget(&n);
            self.assigned.push(n);
        }
    }

    /// A loop's body runs again after its assignments: what it assigns is
    /// not known anywhere in it.
    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        self.forget_assigned_in(&f.body);
        syn::visit::visit_expr_for_loop(self, f);
    }

    fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
        self.forget_assigned_in(&w.body);
        syn::visit::visit_expr_while(self, w);
    }

    fn visit_expr_loop(&mut self, l: &'ast syn::ExprLoop) {
        self.forget_assigned_in(&l.body);
        syn::visit::visit_expr_loop(self, l);
    }

    /// An assignment (`x = …`, `x += …`), after its value: what the
    /// variable held is forgotten, past the block too.
    fn visit_expr(&mut self, x: &'ast syn::Expr) {
        syn::visit::visit_expr(self, x);
        if let Some(n) = assigned_name(x) {
            self.forget(&n);
            self.assigned.push(n);
        }
    }

    fn visit_item_const(&mut self, c: &'ast syn::ItemConst) {
        if let Some(v) = eval(&c.expr, &self.consts) {
            self.consts.insert(c.ident.to_string(), v);
        }
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        syn::visit::visit_local(self, l);
        let Some(init) = &l.init else {
            return;
        };
        let pat = match &l.pat {
            syn::Pat::Type(t) => &*t.pat,
            p => p,
        };
        match (pat, &*init.expr) {
            (syn::Pat::Ident(id), x) => {
                let name = id.ident.to_string();
                self.consts.remove(&name);
                self.kernels.remove(&name);
                self.cube.bind(&name, x, &self.consts);
                if let Some(v) = eval(x, &self.consts) {
                    self.consts.insert(name.clone(), v);
                }
                if let Some(k) = self.kernel_in(x) {
                    self.kernels.insert(name, k);
                }
            }
            (syn::Pat::Tuple(p), syn::Expr::Tuple(t)) => {
                let mut names = Vec::new();
                bound(pat, &mut names);
                for n in &names {
                    self.forget(n);
                }
                for (pat, x) in p.elems.iter().zip(&t.elems) {
                    if let syn::Pat::Ident(id) = pat {
                        let name = id.ident.to_string();
                        if let Some(v) = eval(x, &self.consts) {
                            self.consts.insert(name, v);
                        }
                    }
                }
            }
            (p, _) => {
                // Anything else it binds is not a known value.
                let mut names = Vec::new();
                bound(p, &mut names);
                for n in names {
                    self.forget(&n);
                }
            }
        }
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        syn::visit::visit_expr_call(self, c);
        if let Some(site) = cubecl::site(c, &self.consts, &self.cube, &self.layouts, self.lines) {
            self.out.push(site);
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if m.path.segments.last().is_some_and(|s| s.ident == "launch") {
            if let Some(site) = self.site(m) {
                self.out.push(site);
            }
        }
    }
}

/// The variable `x` assigns (`x = …`, `x += …`), if it is one.
fn assigned_name(x: &syn::Expr) -> Option<String> {
    let target = match x {
        syn::Expr::Assign(a) => &a.left,
        syn::Expr::Binary(b) if compound_assign(&b.op) => &b.left,
        _ => return None,
    };
    match &**target {
        syn::Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
        _ => None,
    }
}

/// Whether `op` is a compound assignment (`+=`, `<<=`, …).
fn compound_assign(op: &syn::BinOp) -> bool {
    use syn::BinOp as B;
    matches!(
        op,
        B::AddAssign(_)
            | B::SubAssign(_)
            | B::MulAssign(_)
            | B::DivAssign(_)
            | B::RemAssign(_)
            | B::BitXorAssign(_)
            | B::BitAndAssign(_)
            | B::BitOrAssign(_)
            | B::ShlAssign(_)
            | B::ShrAssign(_)
    )
}

/// The names a pattern binds.
fn bound(p: &syn::Pat, out: &mut Vec<String>) {
    match p {
        syn::Pat::Ident(i) => out.push(i.ident.to_string()),
        syn::Pat::Tuple(t) => t.elems.iter().for_each(|e| bound(e, out)),
        syn::Pat::Type(t) => bound(&t.pat, out),
        syn::Pat::Reference(r) => bound(&r.pat, out),
        _ => {}
    }
}

/// Finds the kernel a `let`'s initializer names: a `get_function("X")`
/// anywhere in it, or a variable already bound to one.
struct KernelIn<'a> {
    kernels: &'a HashMap<String, String>,
    found: Option<String>,
}

impl<'ast> Visit<'ast> for KernelIn<'_> {
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if m.method == "get_function" {
            if let Some(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            })) = m.args.first()
            {
                self.found.get_or_insert(s.value());
            }
        }
        syn::visit::visit_expr_method_call(self, m);
    }

    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if let Some(id) = p.path.get_ident() {
            if let Some(k) = self.kernels.get(&id.to_string()) {
                self.found.get_or_insert(k.clone());
            }
        }
    }
}

impl Scan<'_> {
    /// What `name` held, forgotten.
    fn forget(&mut self, name: &str) {
        self.consts.remove(name);
        self.kernels.remove(name);
        self.cube.forget(name);
    }

    /// Forgets every variable `body` assigns.
    fn forget_assigned_in(&mut self, body: &syn::Block) {
        struct Targets(Vec<String>);
        impl<'ast> Visit<'ast> for Targets {
            fn visit_expr(&mut self, x: &'ast syn::Expr) {
                syn::visit::visit_expr(self, x);
                self.0.extend(assigned_name(x));
            }
        }
        let mut t = Targets(Vec::new());
        t.visit_block(body);
        for n in t.0 {
            self.forget(&n);
        }
    }

    /// A function's body starts with the file's constants and no kernel.
    fn enter_function(&mut self) {
        self.consts = self.file_consts.clone();
        self.kernels.clear();
        self.cube = cubecl::Bound::default();
    }

    fn kernel_in(&self, x: &syn::Expr) -> Option<String> {
        let mut k = KernelIn {
            kernels: &self.kernels,
            found: None,
        };
        k.visit_expr(x);
        k.found
    }

    /// `launch!(target<<<grid, block, ...>>>(args))` as a site.
    fn site(&self, m: &syn::Macro) -> Option<SiteRecord> {
        let tokens: Vec<TokenTree> = m.tokens.clone().into_iter().collect();
        let open = (0..tokens.len().saturating_sub(2)).find(|&i| {
            (0..3).all(|d| matches!(&tokens[i + d], TokenTree::Punct(p) if p.as_char() == '<'))
        })?;
        let close = (open + 3..tokens.len().saturating_sub(2)).find(|&i| {
            (0..3).all(|d| matches!(&tokens[i + d], TokenTree::Punct(p) if p.as_char() == '>'))
        })?;
        let launched = tokens[..open].iter().rev().find_map(|t| match t {
            TokenTree::Ident(i) => Some(i.to_string()),
            _ => None,
        })?;
        let kernel = self.kernels.get(&launched).cloned().unwrap_or(launched);
        let config = split(&tokens[open + 3..close]);
        let dims = |i: usize| config.get(i).and_then(|t| self.dims(t));
        let args: Vec<Option<i64>> = match tokens.get(close + 3) {
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                let list: Vec<TokenTree> = g.stream().into_iter().collect();
                split(&list)
                    .iter()
                    .map(|t| {
                        syn::parse2::<syn::Expr>(t.clone())
                            .ok()
                            .and_then(|x| eval(&x, &self.consts))
                    })
                    .collect()
            }
            _ => return None,
        };
        let r = m.span().byte_range();
        let n = args.len();
        Some(SiteRecord {
            kernel,
            targs: Vec::new(),
            grid: dims(0),
            block: dims(1),
            offset_args: vec![false; n],
            args,
            span: self.lines.span(r.start, r.end),
            kernel_file: None,
            host: None,
        })
    }

    /// A grid or block: `(x, y, z)`, `(x, y)` or `x`, all constants.
    fn dims(&self, t: &TokenStream) -> Option<[u64; 3]> {
        let x = syn::parse2::<syn::Expr>(t.clone()).ok()?;
        let parts: Vec<&syn::Expr> = match &x {
            syn::Expr::Tuple(t) => t.elems.iter().collect(),
            other => vec![other],
        };
        if parts.is_empty() || parts.len() > 3 {
            return None;
        }
        let mut d = [1u64; 3];
        for (i, p) in parts.iter().enumerate() {
            d[i] = u64::try_from(eval(p, &self.consts)?).ok()?;
        }
        Some(d)
    }
}

/// Tokens split at their top-level commas (a trailing comma ends the
/// list).
fn split(tokens: &[TokenTree]) -> Vec<TokenStream> {
    let mut out = Vec::new();
    let mut cur = TokenStream::new();
    for t in tokens {
        if matches!(t, TokenTree::Punct(p) if p.as_char() == ',') {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.extend(std::iter::once(t.clone()));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The value of a constant expression: literals, constants in scope,
/// casts, arithmetic, `div_ceil`.
pub(super) fn eval(x: &syn::Expr, consts: &HashMap<String, i64>) -> Option<i64> {
    use syn::BinOp as B;
    match x {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<i64>().ok(),
        syn::Expr::Path(p) => consts.get(&p.path.get_ident()?.to_string()).copied(),
        syn::Expr::Paren(p) => eval(&p.expr, consts),
        syn::Expr::Group(g) => eval(&g.expr, consts),
        syn::Expr::Cast(c) => eval(&c.expr, consts),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
            eval(&u.expr, consts)?.checked_neg()
        }
        syn::Expr::Binary(b) => {
            let (l, r) = (eval(&b.left, consts)?, eval(&b.right, consts)?);
            match b.op {
                B::Add(_) => l.checked_add(r),
                B::Sub(_) => l.checked_sub(r),
                B::Mul(_) => l.checked_mul(r),
                B::Div(_) => l.checked_div(r),
                B::Rem(_) => l.checked_rem(r),
                B::Shl(_) => l.checked_shl(u32::try_from(r).ok()?),
                B::Shr(_) => l.checked_shr(u32::try_from(r).ok()?),
                _ => None,
            }
        }
        syn::Expr::MethodCall(m) if m.method == "div_ceil" && m.args.len() == 1 => {
            let a = eval(&m.receiver, consts)?;
            let b = eval(m.args.first()?, consts)?;
            if a < 0 || b <= 0 {
                return None;
            }
            Some(a.checked_add(b - 1)? / b)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cubecl_launch_gives_grid_block_types_and_arguments() {
        let s = sites_of(
            r#"
const N: usize = 4096;
fn copy(a: u32) {}
#[cube(launch)]
fn local(a: &Array<f32>, b: &mut [f32], n: u32) {}
fn run<R: Runtime>(client: &ComputeClient<R::Server>, a: &Handle, b: &Handle, f: f32) {
    let dim = CubeDim::new(32, 8, 1);
    let input = unsafe { ArrayArg::from_raw_parts::<f32>(a, N, 1) };
    unsafe {
        transpose_tile::launch_unchecked::<f32, R>(
            client,
            CubeCount::Static(N as u32 / 32, N as u32 / 32, 1),
            dim,
            input,
            b.as_array_arg(1),
            ScalarArg::new(2),
            64,
        );
    }
    scale::launch::<R>(client, CubeCount::Static(4, 1, 1), CubeDim::new_1d(256), unknown, 3);
    local::launch::<R>(client, CubeCount::Static(1, 1, 1), CubeDim::new_1d(32), h.unknown(), BufferArg::from_raw_parts(h, 64), 5);
    // A host function named as the kernel does not place its arguments.
    kernels::copy::launch::<f32, R>(client, count, CubeDim::new_2d(16, 16), ArrayArg::from_raw_parts::<f32>(a, 1024, 4));
}
"#,
        );
        let got: Vec<_> = s
            .iter()
            .map(|s| {
                (
                    s.kernel.as_str(),
                    s.targs.clone(),
                    s.grid,
                    s.block,
                    s.args.clone(),
                )
            })
            .collect();
        use crate::ir::TemplateArg::{Type, Unknown, Value};
        // After the element types, each buffer's line width (its
        // vectorisation factor), which a kernel with `Line` buffers takes.
        assert_eq!(
            got,
            [
                (
                    "transpose_tile",
                    vec![Type("float".into()), Value(1), Value(1)],
                    Some([128, 128, 1]),
                    Some([32, 8, 1]),
                    vec![None, Some(4096), None, None, Some(2), Some(64)],
                ),
                // `unknown` could be a buffer (two values) or one value:
                // no argument is placed.
                ("scale", vec![], Some([4, 1, 1]), Some([256, 1, 1]), vec![]),
                // Defined in the file: its parameters place the arguments
                // (`h.unknown()` is the first buffer, of unknown length).
                (
                    "local",
                    vec![Unknown("the vectorisation factor".into()), Value(1)],
                    Some([1, 1, 1]),
                    Some([32, 1, 1]),
                    vec![None, None, None, Some(64), Some(5)]
                ),
                (
                    "copy",
                    vec![Type("float".into()), Value(4)],
                    None,
                    Some([16, 16, 1]),
                    // Vectorised by 4: a `Line` array's `len()` counts
                    // lines, so the length 1024 is not placed.
                    vec![None, None]
                ),
            ]
        );
    }

    fn sites_of(text: &str) -> Vec<SiteRecord> {
        let file = syn::parse_file(text).expect("parses");
        let s = sites(&file, &Source::new(text.as_bytes()));
        proc_macro2::extra::invalidate_current_thread_spans();
        s
    }

    #[test]
    fn a_launch_names_the_kernel_its_function_was_got_by() {
        let s = sites_of(
            r#"
const TILE: usize = 16;
fn run(module: &Module, n: usize) {
    const HALF: usize = TILE / 2;
    let cell = LazyCell::new(|| module.get_function("gemm_tiled").expect("k"));
    let kernel = &*cell;
    let (gx, gy) = (n.div_ceil(TILE) as u32, 3);
    unsafe {
        launch!(kernel<<<(gx, gy), (TILE as u32, HALF as u32), 0, stream>>>(
            a.as_device_ptr(), a.len(), 7, n,
        ))?;
    }
}
fn other(module: &Module, bs: u32) {
    let vecadd = module.get_function("vecadd")?;
    launch!(vecadd<<<(12u32).div_ceil(4), bs, 0, stream>>>(x, 1 << 4))?;
    launch!(module.scale<<<1, (32, 2, 2), 0, stream>>>())?;
}
"#,
        );
        let got: Vec<_> = s
            .iter()
            .map(|s| {
                (
                    s.kernel.as_str(),
                    s.grid,
                    s.block,
                    s.args.clone(),
                    s.span.line,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "gemm_tiled",
                    None,
                    Some([16, 8, 1]),
                    vec![None, None, Some(7), None],
                    9
                ),
                ("vecadd", Some([3, 1, 1]), None, vec![None, Some(16)], 16),
                ("scale", Some([1, 1, 1]), Some([32, 2, 2]), vec![], 17),
            ]
        );
    }

    /// A value is known only where it holds on every path: an inner
    /// block's `let` ends with the block, an assignment forgets, and a loop
    /// forgets what its body assigns before the body runs.
    #[test]
    fn shapes_and_values_follow_scopes_and_assignments() {
        let s = sites_of(
            r#"
fn run(c: &C) {
    let mut dim = CubeDim::new(1, 1, 1);
    dim = CubeDim::new(32, 32, 1);
    k::launch::<R>(c, CubeCount::Static(1, 1, 1), dim, 1);
    let d2 = CubeDim::new(8, 1, 1);
    { let d2 = CubeDim::new(64, 1, 1); k::launch::<R>(c, CubeCount::Static(1, 1, 1), d2, 2); }
    k::launch::<R>(c, CubeCount::Static(1, 1, 1), d2, 3);
    let (d3, _) = (CubeDim::new(16, 1, 1), 0);
    k::launch::<R>(c, CubeCount::Static(1, 1, 1), d3, 4);
    let mut n = 5;
    for i in 0..4 {
        k::launch::<R>(c, CubeCount::Static(1, 1, 1), d2, n);
        n += 1;
    }
    { n = 9; }
    k::launch::<R>(c, CubeCount::Static(1, 1, 1), d2, n);
}
"#,
        );
        let got: Vec<_> = s.iter().map(|s| (s.block, s.args.clone())).collect();
        assert_eq!(
            got,
            [
                (None, vec![Some(1)]),
                (Some([64, 1, 1]), vec![Some(2)]),
                (Some([8, 1, 1]), vec![Some(3)]),
                (None, vec![Some(4)]),
                (Some([8, 1, 1]), vec![]),
                (Some([8, 1, 1]), vec![]),
            ]
        );
    }

    #[test]
    fn a_binding_made_again_forgets_its_value() {
        let s = sites_of(
            r#"
fn run(m: &Module, t: u32) {
    let b = 64;
    let b = t;
    let k = m.get_function("k")?;
    launch!(k<<<1, b, 0, s>>>())?;
}
"#,
        );
        assert_eq!(s[0].block, None);
        assert_eq!(s[0].kernel, "k");
    }
}

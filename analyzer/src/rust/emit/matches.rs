//! `match` written as C++: as a statement, the scrutinee in a variable
//! and the arms an `if`/`else if` chain (a binding arm declares its name
//! from the variable); as a value, a chain of `?:` over a scrutinee that
//! is a variable (read again per arm: it must not be an access).
//!
//! Read patterns: literals, ranges (`a..=b`, `a..b`), `_`, a binding, a
//! constant by its name (upper case, declared), `p | q`, and guards
//! (`if c`; with a binding only in a statement). Anything else leaves the
//! whole `match` unread, as before.

use super::{Emitter, Ty};

/// How an arm's pattern reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Matches some values: a condition on the scrutinee.
    Test,
    /// Matches every value.
    All,
    /// Matches every value and names it.
    Binds,
}

impl Emitter {
    /// How `p` reads, or `None` when the translation cannot read it.
    fn shape(&self, p: &syn::Pat) -> Option<Shape> {
        match p {
            syn::Pat::Lit(_) | syn::Pat::Range(_) => Some(Shape::Test),
            syn::Pat::Wild(_) => Some(Shape::All),
            syn::Pat::Paren(q) => self.shape(&q.pat),
            syn::Pat::Or(o) => {
                let all: Option<Vec<Shape>> = o.cases.iter().map(|c| self.shape(c)).collect();
                let all = all?;
                if all.contains(&Shape::Binds) {
                    return None;
                }
                Some(if all.contains(&Shape::All) {
                    Shape::All
                } else {
                    Shape::Test
                })
            }
            syn::Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none() => {
                let name = i.ident.to_string();
                if self.is_constant(&name) {
                    Some(Shape::Test)
                } else if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                    // Not declared in the file but named as Rust names
                    // constants and unit variants (`K` imported, `Col`
                    // from `use Mode::*`): a comparison with a value not
                    // known, not a binding.
                    None
                } else {
                    Some(Shape::Binds)
                }
            }
            _ => None,
        }
    }

    /// A name a pattern compares with rather than binds: a declared name
    /// in upper case (Rust's constants; a binding of that spelling would
    /// be linted by rustc).
    fn is_constant(&self, name: &str) -> bool {
        name.chars().any(|c| c.is_ascii_uppercase())
            && !name.chars().any(|c| c.is_ascii_lowercase())
            && self.lookup(name).is_some()
    }

    /// Writes the condition that `p` (read: [`Emitter::shape`]) matches
    /// the C expression `m`.
    fn pattern_cond(&mut self, p: &syn::Pat, m: &str) {
        match p {
            syn::Pat::Lit(l) => {
                self.w(&format!("({m} == "));
                self.literal(&l.lit);
                self.w(")");
            }
            syn::Pat::Range(r) => {
                self.w("(");
                let mut and = "";
                if let Some(lo) = &r.start {
                    self.w(&format!("{m} >= "));
                    self.expr(lo);
                    and = " && ";
                }
                if let Some(hi) = &r.end {
                    let op = match r.limits {
                        syn::RangeLimits::Closed(_) => "<=",
                        syn::RangeLimits::HalfOpen(_) => "<",
                    };
                    self.w(&format!("{and}{m} {op} "));
                    self.expr(hi);
                    and = " && ";
                }
                if and.is_empty() {
                    self.w("1");
                }
                self.w(")");
            }
            syn::Pat::Paren(q) => self.pattern_cond(&q.pat, m),
            syn::Pat::Or(o) => {
                self.w("(");
                for (i, c) in o.cases.iter().enumerate() {
                    if i > 0 {
                        self.w(" || ");
                    }
                    self.pattern_cond(c, m);
                }
                self.w(")");
            }
            syn::Pat::Ident(i) if self.shape(p) == Some(Shape::Test) => {
                let c = self
                    .lookup(&i.ident.to_string())
                    .map_or_else(|| "0".to_string(), |v| v.c.clone());
                self.w(&format!("({m} == {c})"));
            }
            _ => self.w("1"),
        }
    }

    /// `match` in statement position.
    pub(super) fn match_stmt(&mut self, x: &syn::ExprMatch) {
        let shapes: Option<Vec<Shape>> = x.arms.iter().map(|a| self.shape(&a.pat)).collect();
        let Some(shapes) = shapes else {
            self.skip(x, "match", false);
            return;
        };
        self.piece(x, |e| {
            let ty = e.type_of(&x.expr);
            let spelled = match &ty {
                Ty::Named(n) if n.is_empty() => "auto".to_string(),
                t => t.c(),
            };
            let m = e.declare_later("match");
            e.w(&format!("{{\n{spelled} {m} = "));
            e.expr(&x.expr);
            e.w(";\n");
            for (i, (arm, shape)) in x.arms.iter().zip(&shapes).enumerate() {
                if i > 0 {
                    e.w(" else ");
                }
                e.w("if (");
                e.arm_cond(&arm.pat, *shape, &m, &ty, arm.guard.as_ref().map(|g| &*g.1));
                e.w(") {\n");
                e.scopes.push(std::collections::HashMap::new());
                if *shape == Shape::Binds {
                    if let syn::Pat::Ident(id) = &arm.pat {
                        let name = id.ident.to_string();
                        let c = e.declare_later(&name);
                        e.piece(&arm.pat, |e| e.w(&format!("{spelled} {c} = {m};\n")));
                        e.bind(&name, c, ty.clone());
                    }
                }
                match &*arm.body {
                    syn::Expr::Block(b) => e.block(&b.block),
                    other => e.statement_expr(other, false),
                }
                e.scopes.pop();
                e.w("}");
            }
            e.w("\n}\n");
        });
    }

    /// An arm's condition: its pattern's, and its guard's. A binding
    /// arm's guard sees the name: `({ T x = m; guard })` is not C++, so
    /// the guard is written with the name replaced by the variable.
    fn arm_cond(
        &mut self,
        pat: &syn::Pat,
        shape: Shape,
        m: &str,
        ty: &Ty,
        guard: Option<&syn::Expr>,
    ) {
        match shape {
            Shape::Test => self.pattern_cond(pat, m),
            Shape::All | Shape::Binds => self.w("1"),
        }
        if let Some(g) = guard {
            self.w(" && (");
            self.scopes.push(std::collections::HashMap::new());
            if let (Shape::Binds, syn::Pat::Ident(id)) = (shape, pat) {
                self.bind(&id.ident.to_string(), m.to_string(), ty.clone());
            }
            self.expr(g);
            self.scopes.pop();
            self.w(")");
        }
    }

    /// `match` as a value: `(c1 ? v1 : (c2 ? v2 : vn))`.
    pub(super) fn match_value(&mut self, x: &syn::ExprMatch, whole: &syn::Expr) -> Ty {
        // The scrutinee is read once per arm: only a variable's name.
        let var = match &*x.expr {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|i| self.lookup(&i.to_string()))
                .map(|v| (v.c.clone(), v.ty.clone())),
            _ => None,
        };
        let shapes: Option<Vec<Shape>> = x.arms.iter().map(|a| self.shape(&a.pat)).collect();
        let bodies: Option<Vec<&syn::Expr>> = x.arms.iter().map(|a| value_of(&a.body)).collect();
        let (Some(shapes), Some(bodies), Some((m, ty))) = (shapes, bodies, var) else {
            return self.skip(whole, "match", true);
        };
        if shapes.contains(&Shape::Binds) || x.arms.is_empty() {
            return self.skip(whole, "match", true);
        }
        let n = x.arms.len();
        let mut out_ty = None;
        for (i, (arm, body)) in x.arms.iter().zip(&bodies).enumerate() {
            if i + 1 == n {
                let t = self.expr(body);
                out_ty.get_or_insert(t);
                break;
            }
            self.w("(");
            self.arm_cond(
                &arm.pat,
                shapes[i],
                &m,
                &ty,
                arm.guard.as_ref().map(|g| &*g.1),
            );
            self.w(" ? ");
            let t = self.expr(body);
            out_ty.get_or_insert(t);
            self.w(" : ");
        }
        self.w(&")".repeat(n - 1));
        out_ty.unwrap_or(Ty::Named(String::new()))
    }
}

/// An arm's body as one expression: itself, or a block of one expression.
fn value_of(body: &syn::Expr) -> Option<&syn::Expr> {
    match body {
        syn::Expr::Block(b) => match b.block.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => Some(e),
            _ => None,
        },
        syn::Expr::Unsafe(_) | syn::Expr::Return(_) | syn::Expr::Break(_) => None,
        other => Some(other),
    }
}

//! Rust's pattern-bound control flow written as the C++ it means:
//! `if let Some(x) = s.get(i)` (`get_mut`) is a bounds check and a
//! reference to `s[i]`; `for x in s.iter()` (`iter_mut`, `&s`, `&mut
//! s`, each optionally `.enumerate()`) a counted loop over a slice's
//! length, `x` a reference to its element; `for (x, y) in
//! s.iter().zip(t.iter())` one over the shorter of two; `for c in
//! s.chunks(n)` (`chunks_exact`, `chunks_mut`, `chunks_exact_mut`) one
//! over sub-slices; `while let Some(x) = s.get(i)` a loop that stops at
//! the first index past the end; `for i in (a..b).rev()` (and `a..=b`) a
//! counted loop down. Anything else is left to the caller, which notes it
//! as not read.

use super::{counted, Emitter};
use crate::rust::types::Ty;

/// What a pattern binds an element to: a reference to it (`x`, `mut
/// x`) or a copy of its value (`&x`, `&mut x`).
struct Binding {
    name: String,
    copy: bool,
}

fn binding(p: &syn::Pat) -> Option<Binding> {
    match p {
        syn::Pat::Ident(id) if id.subpat.is_none() => Some(Binding {
            name: id.ident.to_string(),
            copy: false,
        }),
        syn::Pat::Reference(r) => match &*r.pat {
            syn::Pat::Ident(id) if id.subpat.is_none() => Some(Binding {
                name: id.ident.to_string(),
                copy: true,
            }),
            _ => None,
        },
        _ => None,
    }
}

/// `s.get(i)` / `s.get_mut(i)` of a slice `s`: the slice's path and `i`.
fn slice_get(x: &syn::Expr) -> Option<(&syn::ExprPath, &syn::Expr)> {
    let syn::Expr::MethodCall(m) = x else {
        return None;
    };
    let (syn::Expr::Path(p), [i]) = (&*m.receiver, &m.args.iter().collect::<Vec<_>>()[..]) else {
        return None;
    };
    (m.method == "get" || m.method == "get_mut").then_some((p, *i))
}

/// `s.iter()`, `s.iter_mut()`, `&s`, `&mut s`, each optionally
/// `.enumerate()`: the slice's path and whether it is enumerated.
fn slice_iter(x: &syn::Expr) -> Option<(&syn::ExprPath, bool)> {
    match x {
        syn::Expr::Paren(p) => slice_iter(&p.expr),
        syn::Expr::MethodCall(m) if m.method == "enumerate" && m.args.is_empty() => {
            let (p, false) = slice_iter(&m.receiver)? else {
                return None;
            };
            Some((p, true))
        }
        syn::Expr::MethodCall(m)
            if (m.method == "iter" || m.method == "iter_mut") && m.args.is_empty() =>
        {
            match &*m.receiver {
                syn::Expr::Path(p) => Some((p, false)),
                _ => None,
            }
        }
        syn::Expr::Reference(r) => match &*r.expr {
            syn::Expr::Path(p) => Some((p, false)),
            _ => None,
        },
        _ => None,
    }
}

/// `s.chunks(n)` and its kin: the slice, `n`, and whether only whole
/// chunks are visited (`_exact`).
fn slice_chunks(x: &syn::Expr) -> Option<(&syn::ExprPath, &syn::Expr, bool)> {
    let syn::Expr::MethodCall(m) = x else {
        return None;
    };
    let exact = match m.method.to_string().as_str() {
        "chunks" | "chunks_mut" => false,
        "chunks_exact" | "chunks_exact_mut" => true,
        _ => return None,
    };
    let (syn::Expr::Path(p), [n]) = (&*m.receiver, &m.args.iter().collect::<Vec<_>>()[..]) else {
        return None;
    };
    Some((p, *n, exact))
}

/// `a.zip(b)` of two slice iterations ([`slice_iter`], or a slice's
/// path for `b`), neither enumerated.
fn slice_zip(x: &syn::Expr) -> Option<(&syn::ExprPath, &syn::ExprPath)> {
    let syn::Expr::MethodCall(m) = x else {
        return None;
    };
    let (true, [other]) = (m.method == "zip", &m.args.iter().collect::<Vec<_>>()[..]) else {
        return None;
    };
    let (a, false) = slice_iter(&m.receiver)? else {
        return None;
    };
    let b = match other {
        syn::Expr::Path(p) => p,
        o => match slice_iter(o)? {
            (p, false) => p,
            _ => return None,
        },
    };
    Some((a, b))
}

impl Emitter {
    /// The element type of slice `p`, if `p` names one.
    fn slice_elem(&mut self, p: &syn::ExprPath) -> Option<Ty> {
        let one = p.path.get_ident()?.to_string();
        match &self.lookup(&one)?.ty {
            Ty::Slice(e) => Some((**e).clone()),
            _ => None,
        }
    }

    /// Declares `b` in the innermost scope as `s[index]` (written as C
    /// text): a pointer to it, or a copy of it.
    fn bind_element(&mut self, b: &Binding, p: &syn::ExprPath, elem: &Ty, index: &str) {
        let c = self.declare_later(&b.name);
        let (spelled, ty, amp) = if b.copy {
            (elem.c(), elem.clone(), "")
        } else {
            let t = Ty::Ptr(Box::new(elem.clone()));
            (t.c(), t, "&")
        };
        self.w(&format!("{spelled} {c} = {amp}"));
        self.path(p);
        self.w(&format!("[{index}];\n"));
        self.bind(&b.name, c, ty);
    }

    /// `let Some(x) = s.get(i)` (`get_mut`, `Some(&x)`) of a slice `s`:
    /// the binding, the slice, `i` and the element type.
    fn some_get<'l>(
        &mut self,
        l: &'l syn::ExprLet,
    ) -> Option<(Binding, &'l syn::ExprPath, &'l syn::Expr, Ty)> {
        let syn::Pat::TupleStruct(ts) = &*l.pat else {
            return None;
        };
        let some = ts.path.segments.last().is_some_and(|s| s.ident == "Some");
        let (true, [inner]) = (some, &ts.elems.iter().collect::<Vec<_>>()[..]) else {
            return None;
        };
        let (b, (p, idx)) = (binding(inner)?, slice_get(&l.expr)?);
        let elem = self.slice_elem(p)?;
        Some((b, p, idx, elem))
    }

    /// `if let Some(x) = s.get(i) { … } else { … }`: `true` when written.
    pub(super) fn if_let(&mut self, i: &syn::ExprIf, l: &syn::ExprLet) -> bool {
        let Some((b, p, idx, elem)) = self.some_get(l) else {
            return false;
        };
        self.piece(i, |e| {
            e.scopes.push(Default::default());
            let at = e.declare_later("__at");
            e.w(&format!("{{\nunsigned long long {at} = "));
            e.expr(idx);
            e.w(&format!(";\nif ({at} < "));
            e.path(p);
            e.w("__len) {\n");
            e.bind_element(&b, p, &elem, &at);
            e.block(&i.then_branch);
            e.w("}");
            e.else_branch(i);
            e.w("\n}\n");
            e.scopes.pop();
        });
        true
    }

    /// `while let Some(x) = s.get(i) { … }`: `true` when written.
    pub(super) fn while_let(&mut self, w: &syn::ExprWhile, l: &syn::ExprLet) -> bool {
        let Some((b, p, idx, elem)) = self.some_get(l) else {
            return false;
        };
        self.piece(w, |e| {
            e.w("while (true) {\n");
            e.scopes.push(Default::default());
            let at = e.declare_later("__at");
            e.w(&format!("unsigned long long {at} = "));
            e.expr(idx);
            e.w(&format!(";\nif (!({at} < "));
            e.path(p);
            e.w("__len)) break;\n");
            e.bind_element(&b, p, &elem, &at);
            e.block(&w.body);
            e.scopes.pop();
            e.w("}\n");
        });
        true
    }

    /// `for (x, y) in s.iter().zip(t.iter())`: `true` when written.
    fn for_zip(&mut self, f: &syn::ExprForLoop) -> bool {
        let Some((a, b)) = slice_zip(&f.expr) else {
            return false;
        };
        let syn::Pat::Tuple(t) = &*f.pat else {
            return false;
        };
        let (Some(x), Some(y)) = (
            t.elems.first().and_then(binding),
            t.elems.last().and_then(binding),
        ) else {
            return false;
        };
        let (2, Some(ea), Some(eb)) = (t.elems.len(), self.slice_elem(a), self.slice_elem(b))
        else {
            return false;
        };
        self.piece(f, |e| {
            e.scopes.push(Default::default());
            let c = e.declare_later("__i");
            e.w(&format!("for (unsigned long long {c} = 0; {c} < "));
            e.path(a);
            e.w(&format!("__len && {c} < "));
            e.path(b);
            e.w(&format!("__len; {c} += 1) {{\n"));
            e.bind_element(&x, a, &ea, &c);
            e.bind_element(&y, b, &eb, &c);
            e.block(&f.body);
            e.w("}\n");
            e.scopes.pop();
        });
        true
    }

    /// `for c in s.chunks(n)`: `c` a slice of `n` elements from `s`
    /// (the last shorter, unless `_exact`): `true` when written.
    fn for_chunks(&mut self, f: &syn::ExprForLoop) -> bool {
        let Some((p, n, exact)) = slice_chunks(&f.expr) else {
            return false;
        };
        let syn::Pat::Ident(id) = &*f.pat else {
            return false;
        };
        let Some(elem) = self.slice_elem(p) else {
            return false;
        };
        let name = id.ident.to_string();
        self.piece(f, |e| {
            e.scopes.push(Default::default());
            let size = e.declare_later("__chunk");
            e.w(&format!("{{\nunsigned long long {size} = "));
            e.expr(n);
            let i = e.declare_later("__i");
            e.w(&format!(";\nfor (unsigned long long {i} = 0; "));
            if exact {
                e.w(&format!("({i} + 1) * {size} <= "));
            } else {
                e.w(&format!("{i} * {size} < "));
            }
            e.path(p);
            e.w(&format!("__len; {i} += 1) {{\n"));
            let c = e.declare_later(&name);
            e.w(&format!("{}* {c} = ", elem.c()));
            e.path(p);
            e.w(&format!(" + {i} * {size};\nunsigned long long {c}__len = "));
            if exact {
                e.w(&format!("{size};\n"));
            } else {
                e.path(p);
                e.w(&format!("__len - {i} * {size} < {size} ? "));
                e.path(p);
                e.w(&format!("__len - {i} * {size} : {size};\n"));
            }
            e.bind(&name, c, Ty::Slice(Box::new(elem.clone())));
            e.block(&f.body);
            e.w("}\n}\n");
            e.scopes.pop();
        });
        true
    }

    /// `for` over a slice's elements or a range counted down: `true` when
    /// written.
    pub(super) fn for_pattern(&mut self, f: &syn::ExprForLoop) -> bool {
        if let syn::Expr::MethodCall(m) = &*f.expr {
            if m.method == "rev" && m.args.is_empty() {
                return self.for_rev(f, &m.receiver);
            }
        }
        if self.for_zip(f) || self.for_chunks(f) {
            return true;
        }
        let Some((p, enumerated)) = slice_iter(&f.expr) else {
            return false;
        };
        let (index, item) = match (&*f.pat, enumerated) {
            (syn::Pat::Tuple(t), true) if t.elems.len() == 2 => {
                let (Some(syn::Pat::Ident(i)), Some(x)) = (t.elems.first(), t.elems.last()) else {
                    return false;
                };
                (Some(i.ident.to_string()), binding(x))
            }
            (pat, false) => (None, binding(pat)),
            _ => return false,
        };
        let (Some(item), Some(elem)) = (item, self.slice_elem(p)) else {
            return false;
        };
        self.piece(f, |e| {
            e.scopes.push(Default::default());
            let name = index.clone().unwrap_or_else(|| "__i".into());
            let c = e.declare_later(&name);
            e.w(&format!("for (unsigned long long {c} = 0; {c} < "));
            e.path(p);
            e.w(&format!("__len; {c} += 1) {{\n"));
            if let Some(i) = &index {
                e.bind(i, c.clone(), Ty::Scalar("unsigned long long"));
            }
            e.bind_element(&item, p, &elem, &c);
            e.block(&f.body);
            e.w("}\n");
            e.scopes.pop();
        });
        true
    }

    /// `for i in (a..b).rev()` (or `a..=b`): from the last value down to
    /// `a`, signed so that the end test holds at 0.
    fn for_rev(&mut self, f: &syn::ExprForLoop, range: &syn::Expr) -> bool {
        let syn::Pat::Ident(id) = &*f.pat else {
            return false;
        };
        let Some((from, Some(to), inclusive, None)) = counted(range) else {
            return false;
        };
        let name = id.ident.to_string();
        self.piece(f, |e| {
            e.scopes.push(Default::default());
            let c = e.declare_later(&name);
            e.w(&format!("for (long long {c} = (long long)("));
            e.expr(to);
            e.w(&format!(
                "){}; {c} >= (long long)(",
                if inclusive { "" } else { " - 1" }
            ));
            e.expr(from);
            e.w(&format!("); {c} -= 1) "));
            e.bind(&name, c, Ty::Scalar("long long"));
            e.block(&f.body);
            e.scopes.pop();
        });
        true
    }
}

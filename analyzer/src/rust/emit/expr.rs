//! Rust expressions written as C++ expressions, each returning the type
//! the translation gives it.

use super::{Emitter, Ty};
use crate::budget;
use crate::rust::types;

impl Emitter {
    /// The type of `x` as the translation would write it (nothing written).
    pub(super) fn type_of(&mut self, x: &syn::Expr) -> Ty {
        if let Some(t) = self.typed.get(&(x as *const syn::Expr as usize)) {
            return t.clone();
        }
        // Written and taken back; an expression declares nothing.
        let (out, segs, skipped) = (self.out.len(), self.segs.len(), self.skipped.len());
        let ty = self.expr(x);
        self.out.truncate(out);
        self.segs.truncate(segs);
        self.skipped.truncate(skipped);
        ty
    }

    /// Writes `x`; returns its type.
    pub(super) fn expr(&mut self, x: &syn::Expr) -> Ty {
        self.depth += 1;
        let ty = if self.depth > budget::MAX_SYNTAX_DEPTH {
            self.skip(x, "expression nested too deeply", true)
        } else {
            self.piece(x, |e| e.expr_inner(x))
        };
        self.depth -= 1;
        self.typed
            .insert(x as *const syn::Expr as usize, ty.clone());
        ty
    }

    fn expr_inner(&mut self, x: &syn::Expr) -> Ty {
        use syn::Expr as E;
        match x {
            E::Lit(l) => self.literal(&l.lit),
            E::Path(p) => self.path(p),
            E::Paren(p) => {
                self.w("(");
                let t = self.expr(&p.expr);
                self.w(")");
                t
            }
            E::Group(g) => self.expr(&g.expr),
            E::Binary(b) => self.binary(b),
            E::Unary(u) => self.unary(u),
            E::Reference(r) => {
                self.w("(&");
                let t = self.expr(&r.expr);
                self.w(")");
                Ty::Ptr(Box::new(t))
            }
            E::Cast(c) => {
                let ty = types::of(&c.ty);
                self.w(&format!("(({})(", ty.c()));
                self.expr(&c.expr);
                self.w("))");
                ty
            }
            E::Index(i) => self.index(i),
            E::Field(f) => self.field(f),
            E::Assign(a) => {
                self.expr(&a.left);
                self.w(" = ");
                self.expr(&a.right)
            }
            E::MethodCall(m) => self.method(m),
            E::Call(c) => self.call(c),
            E::Block(b) => self.block_value(&b.block, x),
            E::Unsafe(u) => self.block_value(&u.block, x),
            E::If(i) => self.if_value(i, x),
            E::Macro(m) => self.skip(&m.mac, "macro", true),
            E::Match(m) => self.match_value(m, x),
            E::Tuple(_) => self.skip(x, "tuple", true),
            E::Closure(_) => self.skip(x, "closure", true),
            E::Range(_) => self.skip(x, "range", true),
            _ => self.skip(x, "expression", true),
        }
    }

    pub(super) fn literal(&mut self, l: &syn::Lit) -> Ty {
        match l {
            syn::Lit::Int(i) => {
                let digits = i.base10_digits();
                let ty = types::suffix(i.suffix()).unwrap_or("int");
                let c = match ty {
                    "unsigned long long" => "ull",
                    "long long" => "ll",
                    "unsigned int" => "u",
                    _ => "",
                };
                self.w(&format!("{digits}{c}"));
                Ty::Scalar(ty)
            }
            syn::Lit::Float(f) => {
                let mut digits = f.base10_digits().to_string();
                if !digits.contains(['.', 'e', 'E']) {
                    digits.push_str(".0");
                } else if digits.ends_with('.') {
                    digits.push('0');
                }
                let single = f.suffix() == "f32";
                self.w(&format!("{digits}{}", if single { "f" } else { "" }));
                Ty::Scalar(if single { "float" } else { "double" })
            }
            syn::Lit::Bool(b) => {
                self.w(if b.value { "true" } else { "false" });
                Ty::Scalar("bool")
            }
            other => self.skip(other, "literal", true),
        }
    }

    pub(super) fn path(&mut self, p: &syn::ExprPath) -> Ty {
        let segs: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        if let [one] = segs.as_slice() {
            if let Some(v) = self.lookup(one).cloned() {
                self.w(&v.c);
                return v.ty;
            }
        }
        if let [.., ty, bound] = segs.as_slice() {
            if let (Some(c), Some(v)) = (types::primitive(ty), int_bound(ty, bound)) {
                self.w(&v);
                return Ty::Scalar(c);
            }
        }
        if let [one] = segs.as_slice() {
            if let Some((text, ty)) = cube_builtin(one) {
                self.w(text);
                return ty;
            }
        }
        // Another module's constant, a unit struct: a name nothing here
        // declares, so what depends on it is unknown.
        let last = segs.last().cloned().unwrap_or_default();
        self.w(&super::c_ident(&last));
        Ty::Named(String::new())
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> Ty {
        use syn::BinOp as B;
        let op = match b.op {
            B::Add(_) => "+",
            B::Sub(_) => "-",
            B::Mul(_) => "*",
            B::Div(_) => "/",
            B::Rem(_) => "%",
            B::And(_) => "&&",
            B::Or(_) => "||",
            B::BitXor(_) => "^",
            B::BitAnd(_) => "&",
            B::BitOr(_) => "|",
            B::Shl(_) => "<<",
            B::Shr(_) => ">>",
            B::Eq(_) => "==",
            B::Lt(_) => "<",
            B::Le(_) => "<=",
            B::Ne(_) => "!=",
            B::Ge(_) => ">=",
            B::Gt(_) => ">",
            B::AddAssign(_) => "+=",
            B::SubAssign(_) => "-=",
            B::MulAssign(_) => "*=",
            B::DivAssign(_) => "/=",
            B::RemAssign(_) => "%=",
            B::BitXorAssign(_) => "^=",
            B::BitAndAssign(_) => "&=",
            B::BitOrAssign(_) => "|=",
            B::ShlAssign(_) => "<<=",
            B::ShrAssign(_) => ">>=",
            _ => return self.skip(b, "operator", true),
        };
        let l = self.expr(&b.left);
        self.w(&format!(" {op} "));
        let r = self.expr(&b.right);
        match b.op {
            B::Eq(_)
            | B::Lt(_)
            | B::Le(_)
            | B::Ne(_)
            | B::Ge(_)
            | B::Gt(_)
            | B::And(_)
            | B::Or(_) => Ty::Scalar("bool"),
            // An untyped literal takes the other side's type.
            _ if l == Ty::Scalar("int") => r,
            _ => l,
        }
    }

    fn unary(&mut self, u: &syn::ExprUnary) -> Ty {
        match u.op {
            syn::UnOp::Deref(_) => {
                self.w("(*");
                let t = self.expr(&u.expr);
                self.w(")");
                t.elem().cloned().unwrap_or(Ty::Named(String::new()))
            }
            syn::UnOp::Not(_) => {
                let t = self.type_of(&u.expr);
                self.w(if t.is_bool() { "(!" } else { "(~" });
                let t = self.expr(&u.expr);
                self.w(")");
                t
            }
            syn::UnOp::Neg(_) => {
                self.w("(-");
                let t = self.expr(&u.expr);
                self.w(")");
                t
            }
            _ => self.skip(u, "operator", true),
        }
    }

    fn index(&mut self, i: &syn::ExprIndex) -> Ty {
        if let syn::Expr::Range(_) = &*i.index {
            return self.skip(i, "slice of a range", true);
        }
        let base = self.expr(&i.expr);
        self.w("[");
        self.expr(&i.index);
        self.w("]");
        base.elem().cloned().unwrap_or(Ty::Named(String::new()))
    }

    fn field(&mut self, f: &syn::ExprField) -> Ty {
        let syn::Member::Named(name) = &f.member else {
            return self.skip(f, "tuple field", true);
        };
        let base = self.expr(&f.base);
        let arrow = matches!(base, Ty::Ptr(_));
        self.w(&format!("{}{name}", if arrow { "->" } else { "." }));
        // `index_2d().x` and the like are `u32`.
        match base {
            Ty::Named(n) if n == "uint3" || n == "uint2" => Ty::Scalar("unsigned int"),
            _ => Ty::Named(String::new()),
        }
    }

    fn method(&mut self, m: &syn::ExprMethodCall) -> Ty {
        let name = m.method.to_string();
        let args: Vec<&syn::Expr> = m.args.iter().collect();
        let recv = self.type_of(&m.receiver);
        match (name.as_str(), args.as_slice()) {
            ("add" | "offset" | "wrapping_add" | "wrapping_offset" | "byte_add", [a]) => {
                self.binary_call(&m.receiver, "+", a)
            }
            ("sub" | "wrapping_sub", [a]) => self.binary_call(&m.receiver, "-", a),
            ("wrapping_mul", [a]) => self.binary_call(&m.receiver, "*", a),
            ("len", []) => match (&*m.receiver, recv) {
                (syn::Expr::Path(p), Ty::Slice(_)) => {
                    self.path(p);
                    self.w("__len");
                    Ty::Scalar("unsigned long long")
                }
                (_, Ty::Array(..)) => self.skip(m, "len of an array", true),
                _ => self.skip(m, "len", true),
            },
            ("read" | "read_volatile" | "read_unaligned", []) => {
                self.w("(*");
                let t = self.expr(&m.receiver);
                self.w(")");
                t.elem().cloned().unwrap_or(Ty::Named(String::new()))
            }
            ("write" | "write_volatile" | "write_unaligned", [v]) => {
                self.w("((*");
                self.expr(&m.receiver);
                self.w(") = ");
                self.expr(v);
                self.w(")");
                Ty::Named("void".into())
            }
            ("as_ptr" | "as_mut_ptr" | "cast" | "cast_mut" | "cast_const", []) => {
                let t = self.expr(&m.receiver);
                match t {
                    Ty::Slice(e) | Ty::Array(e) => Ty::Ptr(e),
                    other => other,
                }
            }
            ("get_unchecked" | "get_unchecked_mut", [a]) => {
                self.w("(&");
                let t = self.expr(&m.receiver);
                self.w("[");
                self.expr(a);
                self.w("])");
                Ty::Ptr(Box::new(
                    t.elem().cloned().unwrap_or(Ty::Named(String::new())),
                ))
            }
            // CubeCL's `.comptime()` reads a value at compile time: the value.
            ("comptime", []) => self.expr(&m.receiver),
            ("min" | "max", [a]) => {
                self.w(&format!("{name}("));
                let t = self.expr(&m.receiver);
                self.w(", ");
                self.expr(a);
                self.w(")");
                t
            }
            _ => {
                // Any other method: a call the analysis does not follow,
                // by the method's name.
                self.w(&format!("{}(", super::c_ident(&name)));
                let t = self.expr(&m.receiver);
                for a in args {
                    self.w(", ");
                    self.expr(a);
                }
                self.w(")");
                if recv.is_float() {
                    t
                } else {
                    Ty::Named(String::new())
                }
            }
        }
    }

    fn binary_call(&mut self, l: &syn::Expr, op: &str, r: &syn::Expr) -> Ty {
        self.w("(");
        let t = self.expr(l);
        self.w(&format!(" {op} ("));
        self.expr(r);
        self.w("))");
        t
    }

    fn call(&mut self, c: &syn::ExprCall) -> Ty {
        let syn::Expr::Path(p) = &*c.func else {
            return self.skip(c, "call", true);
        };
        let name = p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        if c.args.is_empty() {
            if let Some((text, ty)) = thread_builtin(&name) {
                self.w(text);
                return ty;
            }
        }
        let ret = self.functions.get(&name).cloned();
        let name = match name.as_str() {
            "sync_threads" | "sync_cube" | "sync_units" => "__syncthreads".to_string(),
            _ => super::c_ident(&name),
        };
        self.w(&format!("{name}("));
        for (i, a) in c.args.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.expr(a);
        }
        self.w(")");
        ret.unwrap_or(Ty::Named(String::new()))
    }

    /// `unsafe { e }` or `{ e }` as a value: only a block that is one
    /// expression is read.
    fn block_value(&mut self, b: &syn::Block, whole: &syn::Expr) -> Ty {
        match b.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => {
                self.w("(");
                let t = self.expr(e);
                self.w(")");
                t
            }
            _ => self.skip(whole, "block with statements as a value", true),
        }
    }

    /// `if c { a } else { b }` as a value: `c ? a : b`.
    fn if_value(&mut self, i: &syn::ExprIf, whole: &syn::Expr) -> Ty {
        let then = match i.then_branch.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => e,
            _ => return self.skip(whole, "if with statements as a value", true),
        };
        let Some((_, els)) = &i.else_branch else {
            return self.skip(whole, "if without else as a value", true);
        };
        self.w("(");
        self.expr(&i.cond);
        self.w(" ? ");
        let t = self.expr(then);
        self.w(" : ");
        self.expr(els);
        self.w(")");
        t
    }
}

/// `u32::MAX` and the like, as C literals.
fn int_bound(ty: &str, bound: &str) -> Option<String> {
    let v: i128 = match (ty, bound) {
        ("u8", "MAX") => u8::MAX.into(),
        ("u16", "MAX") => u16::MAX.into(),
        ("u32", "MAX") => u32::MAX.into(),
        ("u64" | "usize", "MAX") => u64::MAX.into(),
        ("i8", "MAX") => i8::MAX.into(),
        ("i16", "MAX") => i16::MAX.into(),
        ("i32", "MAX") => i32::MAX.into(),
        ("i64" | "isize", "MAX") => i64::MAX.into(),
        ("u8" | "u16" | "u32" | "u64" | "usize", "MIN") => 0,
        ("i32", "MIN") => i32::MIN.into(),
        _ => return None,
    };
    let suffix = match ty {
        "u64" | "usize" => "ull",
        "i64" | "isize" => "ll",
        "u32" => "u",
        _ => "",
    };
    Some(if v < 0 {
        format!("({v}{suffix})")
    } else {
        format!("{v}{suffix}")
    })
}

/// Rust-CUDA's `cuda_std::thread` functions of no argument, as CUDA's
/// built-in variables (the library defines them so: `thread_idx_x()` is
/// `threadIdx.x`, `index_1d()` is `threadIdx.x + blockIdx.x * blockDim.x`).
fn thread_builtin(name: &str) -> Option<(&'static str, Ty)> {
    let u32t = Ty::Scalar("unsigned int");
    let v3 = Ty::Named("uint3".into());
    let v2 = Ty::Named("uint2".into());
    Some(match name {
        "thread_idx_x" => ("threadIdx.x", u32t),
        "thread_idx_y" => ("threadIdx.y", u32t),
        "thread_idx_z" => ("threadIdx.z", u32t),
        "block_idx_x" => ("blockIdx.x", u32t),
        "block_idx_y" => ("blockIdx.y", u32t),
        "block_idx_z" => ("blockIdx.z", u32t),
        "block_dim_x" => ("blockDim.x", u32t),
        "block_dim_y" => ("blockDim.y", u32t),
        "block_dim_z" => ("blockDim.z", u32t),
        "grid_dim_x" => ("gridDim.x", u32t),
        "grid_dim_y" => ("gridDim.y", u32t),
        "grid_dim_z" => ("gridDim.z", u32t),
        "thread_idx" => ("threadIdx", v3),
        "block_idx" => ("blockIdx", v3),
        "block_dim" => ("blockDim", v3),
        "grid_dim" => ("gridDim", v3),
        "warp_size" => ("32u", u32t),
        "index_1d" => ("(threadIdx.x + blockIdx.x * blockDim.x)", u32t),
        "index_2d" => (
            "make_uint2(threadIdx.x + blockIdx.x * blockDim.x, threadIdx.y + blockIdx.y * blockDim.y)",
            v2,
        ),
        "index_3d" => (
            "make_uint3(threadIdx.x + blockIdx.x * blockDim.x, threadIdx.y + blockIdx.y * blockDim.y, threadIdx.z + blockIdx.z * blockDim.z)",
            v3,
        ),
        "index" => (
            "((blockIdx.x + blockIdx.y * gridDim.x + gridDim.x * gridDim.y * blockIdx.z) * (blockDim.x * blockDim.y * blockDim.z) + threadIdx.z * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x)",
            u32t,
        ),
        _ => return None,
    })
}

/// CubeCL's position and dimension constants, as CubeCL's CUDA backend
/// defines them (`cubecl-cpp/src/shared/builtin.rs`).
fn cube_builtin(name: &str) -> Option<(&'static str, Ty)> {
    let u32t = Ty::Scalar("unsigned int");
    let usize_t = Ty::Scalar("unsigned long long");
    Some(match name {
        "UNIT_POS_X" => ("threadIdx.x", u32t),
        "UNIT_POS_Y" => ("threadIdx.y", u32t),
        "UNIT_POS_Z" => ("threadIdx.z", u32t),
        "CUBE_POS_X" => ("blockIdx.x", u32t),
        "CUBE_POS_Y" => ("blockIdx.y", u32t),
        "CUBE_POS_Z" => ("blockIdx.z", u32t),
        "CUBE_DIM_X" => ("blockDim.x", u32t),
        "CUBE_DIM_Y" => ("blockDim.y", u32t),
        "CUBE_DIM_Z" => ("blockDim.z", u32t),
        "CUBE_COUNT_X" => ("gridDim.x", u32t),
        "CUBE_COUNT_Y" => ("gridDim.y", u32t),
        "CUBE_COUNT_Z" => ("gridDim.z", u32t),
        "ABSOLUTE_POS_X" => ("(blockIdx.x * blockDim.x + threadIdx.x)", u32t),
        "ABSOLUTE_POS_Y" => ("(blockIdx.y * blockDim.y + threadIdx.y)", u32t),
        "ABSOLUTE_POS_Z" => ("(blockIdx.z * blockDim.z + threadIdx.z)", u32t),
        "UNIT_POS" => (
            "(threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y)",
            u32t,
        ),
        "CUBE_DIM" => ("(blockDim.x * blockDim.y * blockDim.z)", u32t),
        "CUBE_POS" => (
            "((unsigned long long)blockIdx.z * gridDim.y * gridDim.x + (unsigned long long)blockIdx.y * gridDim.x + blockIdx.x)",
            usize_t,
        ),
        "CUBE_COUNT" => (
            "((unsigned long long)gridDim.x * gridDim.y * gridDim.z)",
            usize_t,
        ),
        "ABSOLUTE_POS" => (
            "((unsigned long long)(blockIdx.z * blockDim.z + threadIdx.z) * gridDim.x * blockDim.x * gridDim.y * blockDim.y + (unsigned long long)(blockIdx.y * blockDim.y + threadIdx.y) * gridDim.x * blockDim.x + (blockIdx.x * blockDim.x + threadIdx.x))",
            usize_t,
        ),
        "PLANE_DIM" => ("32u", u32t),
        "UNIT_POS_PLANE" => ("(threadIdx.x % 32u)", u32t),
        _ => return None,
    })
}

//! CubeCL's host launches as sites (see the parent module's doc):
//! `k::launch::<f32, R>(&client, CubeCount::Static(x, y, z), CubeDim::new(x,
//! y, z), args…)`, `launch_unchecked` alike.

use std::collections::HashMap;

use syn::spanned::Spanned;

use super::eval;
use crate::frontend::source::Source;
use crate::ir::{SiteRecord, TemplateArg};
use crate::rust::types::{self, Ty};

/// A launch argument: a buffer (the kernel's pointer and length, the
/// length where known, and its vectorisation factor where given) or one
/// value (where known).
#[derive(Clone, Copy, Debug)]
enum Arg {
    Buffer { len: Option<i64>, line: Option<i64> },
    Value(Option<i64>),
}

/// CubeCL values a function binds to variables (`let dim =
/// CubeDim::new(..)`, `let input = ArrayArg::from_raw_parts(..)`).
#[derive(Clone, Default)]
pub(in crate::rust) struct Bound {
    shapes: HashMap<String, [u64; 3]>,
    args: HashMap<String, Arg>,
}

impl Bound {
    /// What `name` held, forgotten.
    pub(in crate::rust) fn forget(&mut self, name: &str) {
        self.shapes.remove(name);
        self.args.remove(name);
    }

    /// `let name = x;`: what it binds, forgetting what the name held.
    pub(in crate::rust) fn bind(
        &mut self,
        name: &str,
        x: &syn::Expr,
        consts: &HashMap<String, i64>,
    ) {
        let shape = shape(x, consts, self);
        let buffer = buffer(x, consts);
        self.shapes.remove(name);
        self.args.remove(name);
        if let Some(s) = shape {
            self.shapes.insert(name.to_string(), s);
        }
        if let Some(a) = buffer {
            self.args.insert(name.to_string(), a);
        }
    }
}

/// `x` without what does not change its value: `&`, parentheses, an
/// `unsafe { x }` block.
fn strip(x: &syn::Expr) -> &syn::Expr {
    match x {
        syn::Expr::Reference(r) => strip(&r.expr),
        syn::Expr::Paren(p) => strip(&p.expr),
        syn::Expr::Group(g) => strip(&g.expr),
        syn::Expr::Unsafe(u) => match u.block.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => strip(e),
            _ => x,
        },
        _ => x,
    }
}

/// The last two segments of a call's path (`CubeDim`, `new`).
fn callee(c: &syn::ExprCall) -> Option<(String, String)> {
    let syn::Expr::Path(p) = &*c.func else {
        return None;
    };
    let mut segs = p.path.segments.iter().rev();
    let last = segs.next()?.ident.to_string();
    let owner = segs.next().map(|s| s.ident.to_string()).unwrap_or_default();
    Some((owner, last))
}

/// `CubeCount::Static(x, y, z)`, `CubeDim::new(x, y, z)`,
/// `CubeDim::new_2d(x, y)`, `CubeDim::new_1d(x)`, or a variable bound to
/// one; every size a constant.
fn shape(x: &syn::Expr, consts: &HashMap<String, i64>, bound: &Bound) -> Option<[u64; 3]> {
    match strip(x) {
        syn::Expr::Path(p) => bound.shapes.get(&p.path.get_ident()?.to_string()).copied(),
        syn::Expr::Call(c) => {
            let (owner, f) = callee(c)?;
            let n = match (owner.as_str(), f.as_str()) {
                ("CubeCount", "Static") | ("CubeDim", "new" | "new_3d") => 3,
                ("CubeDim", "new_2d") => 2,
                ("CubeDim", "new_1d") => 1,
                _ => return None,
            };
            if c.args.len() != n {
                return None;
            }
            let mut d = [1u64; 3];
            for (o, a) in d.iter_mut().zip(&c.args) {
                *o = u64::try_from(eval(a, consts)?).ok()?;
            }
            Some(d)
        }
        _ => None,
    }
}

/// A buffer or scalar argument by how it is made: `ArrayArg::
/// from_raw_parts::<T>(&h, len, vectorisation)`, `TensorArg::…`,
/// `h.as_array_arg(v)`, `h.as_tensor_arg(v)`, `ScalarArg::new(v)`.
fn buffer(x: &syn::Expr, consts: &HashMap<String, i64>) -> Option<Arg> {
    match strip(x) {
        syn::Expr::Call(c) => match callee(c)? {
            // The length, where no vectorisation factor other than 1
            // follows it (a `Line` array's `len()` counts lines).
            (o, f) if (o == "ArrayArg" || o == "BufferArg") && f == "from_raw_parts" => {
                let line = match c.args.iter().nth(2) {
                    Some(v) => eval(v, consts),
                    None => Some(1),
                };
                Some(Arg::Buffer {
                    len: c
                        .args
                        .iter()
                        .nth(1)
                        .filter(|_| line == Some(1))
                        .and_then(|l| eval(l, consts)),
                    line,
                })
            }
            // `TensorArg::from_raw_parts::<T>(&h, strides, shape, factor)`.
            (o, f) if o == "TensorArg" && f == "from_raw_parts" => Some(Arg::Buffer {
                len: None,
                line: c.args.iter().nth(3).and_then(|v| eval(v, consts)),
            }),
            (o, _) if o == "ArrayArg" || o == "TensorArg" => Some(Arg::Buffer {
                len: None,
                line: None,
            }),
            (o, f) if o == "ScalarArg" && f == "new" => {
                Some(Arg::Value(c.args.first().and_then(|v| eval(v, consts))))
            }
            _ => None,
        },
        syn::Expr::MethodCall(m)
            if matches!(
                m.method.to_string().as_str(),
                "as_array_arg" | "as_tensor_arg" | "into_array_arg" | "into_tensor_arg"
            ) =>
        {
            Some(Arg::Buffer {
                len: None,
                line: m.args.first().and_then(|v| eval(v, consts)),
            })
        }
        _ => None,
    }
}

/// What argument `x` is, or `None` when that is not known (a variable
/// of unknown kind could be a buffer, two of the kernel's values, or one).
fn arg(x: &syn::Expr, consts: &HashMap<String, i64>, bound: &Bound) -> Option<Arg> {
    if let Some(a) = buffer(x, consts) {
        return Some(a);
    }
    if let syn::Expr::Path(p) = strip(x) {
        let name = p.path.get_ident()?.to_string();
        if let Some(a) = bound.args.get(&name) {
            return Some(*a);
        }
    }
    eval(strip(x), consts).map(|v| Arg::Value(Some(v)))
}

/// Which parameters of each CubeCL kernel of the file (a `#[cube(...)]`
/// function; a host function of the same name is not one) are buffers (a
/// pointer and a length in the kernel's translation), by name.
pub(in crate::rust) fn layouts(file: &syn::File) -> HashMap<String, Vec<bool>> {
    file.items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Fn(f)
                if f.attrs
                    .iter()
                    .any(|a| a.path().segments.last().is_some_and(|s| s.ident == "cube")) =>
            {
                Some(f)
            }
            _ => None,
        })
        .map(|f| {
            let buffers = f
                .sig
                .inputs
                .iter()
                .filter_map(|a| match a {
                    syn::FnArg::Typed(p) => Some(matches!(types::of(&p.ty), Ty::Slice(_))),
                    syn::FnArg::Receiver(_) => None,
                })
                .collect();
            (f.sig.ident.to_string(), buffers)
        })
        .collect()
}

/// The launch's arguments as the kernel's translation takes them: by the
/// kernel's own parameters where the file defines it (`buffers`), each
/// argument of a buffer its pointer and length, else by how each argument
/// is made; empty where neither tells.
fn placed(
    rest: &[&syn::Expr],
    buffers: Option<&Vec<bool>>,
    consts: &HashMap<String, i64>,
    bound: &Bound,
) -> Vec<Option<i64>> {
    if let Some(b) = buffers.filter(|b| b.len() == rest.len()) {
        return rest
            .iter()
            .zip(b)
            .flat_map(|(x, &buffer)| match (arg(x, consts, bound), buffer) {
                (Some(Arg::Buffer { len, .. }), true) => vec![None, len],
                (_, true) => vec![None, None],
                (Some(Arg::Value(v)), false) => vec![v],
                (_, false) => vec![None],
            })
            .collect();
    }
    let kinds: Option<Vec<Arg>> = rest.iter().map(|x| arg(x, consts, bound)).collect();
    kinds
        .unwrap_or_default()
        .into_iter()
        .flat_map(|a| match a {
            Arg::Buffer { len, .. } => vec![None, len],
            Arg::Value(v) => vec![v],
        })
        .collect()
}

/// The line width of each buffer argument, in order, as the template
/// arguments a kernel with `Line` buffers takes after its own
/// (`rust::emit`'s `line_params`): the vectorisation factor where the
/// launch gives it, else not known; none where which arguments are
/// buffers is not known.
fn line_widths(
    rest: &[&syn::Expr],
    buffers: Option<&Vec<bool>>,
    consts: &HashMap<String, i64>,
    bound: &Bound,
) -> Vec<TemplateArg> {
    let width = |a: Option<Arg>| match a {
        Some(Arg::Buffer { line: Some(v), .. }) if v > 0 => TemplateArg::Value(v),
        _ => TemplateArg::Unknown("the vectorisation factor".into()),
    };
    if let Some(b) = buffers.filter(|b| b.len() == rest.len()) {
        return rest
            .iter()
            .zip(b)
            .filter(|(_, &buffer)| buffer)
            .map(|(x, _)| width(arg(x, consts, bound)))
            .collect();
    }
    let kinds: Option<Vec<Arg>> = rest.iter().map(|x| arg(x, consts, bound)).collect();
    kinds
        .unwrap_or_default()
        .into_iter()
        .filter(|a| matches!(a, Arg::Buffer { .. }))
        .map(|a| width(Some(a)))
        .collect()
}

/// A CubeCL launch as a site, or `None` when `c` is not one; `layouts`:
/// the file's functions' buffer parameters ([`layouts`]).
pub(in crate::rust) fn site(
    c: &syn::ExprCall,
    consts: &HashMap<String, i64>,
    bound: &Bound,
    layouts: &HashMap<String, Vec<bool>>,
    lines: &Source,
) -> Option<SiteRecord> {
    let syn::Expr::Path(p) = &*c.func else {
        return None;
    };
    let mut segs = p.path.segments.iter().rev();
    let last = segs.next()?;
    if last.ident != "launch" && last.ident != "launch_unchecked" {
        return None;
    }
    let kernel = segs.next()?.ident.to_string();
    if c.args.len() < 3 {
        return None;
    }
    // The generic arguments but the last, the runtime: the kernel's
    // element types, in order.
    let mut targs: Vec<TemplateArg> = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|g| match g {
                syn::GenericArgument::Type(t) => Some(match types::of(t) {
                    Ty::Scalar(s) => TemplateArg::Type(s.to_string()),
                    _ => TemplateArg::Unknown(type_name(t)),
                }),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    targs.pop();
    let rest: Vec<&syn::Expr> = c.args.iter().skip(3).collect();
    let args = placed(&rest, layouts.get(&kernel), consts, bound);
    targs.extend(line_widths(&rest, layouts.get(&kernel), consts, bound));
    let r = c.span().byte_range();
    let n = args.len();
    Some(SiteRecord {
        kernel,
        targs,
        grid: shape(&c.args[1], consts, bound),
        block: shape(&c.args[2], consts, bound),
        offset_args: vec![false; n],
        args,
        span: lines.span(r.start, r.end),
        kernel_file: None,
        host: None,
    })
}

/// A type's name as written (its path's last segment), for saying which
/// argument is not known.
fn type_name(t: &syn::Type) -> String {
    match t {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => "_".to_string(),
    }
}

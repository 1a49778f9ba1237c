//! `nvcuda::wmma::load_matrix_sync` and `store_matrix_sync` as the shared
//! and global accesses nvcc emits for them on compute capability 8.0 and
//! later, for the fragments measured (`fixtures/groundtruth/sm_90/wmma.cu`,
//! nvcc 13.0 `-O3`, an H200: the instructions and every lane's bank
//! pattern over leading dimensions that do and do not conflict). Lane `l`
//! of a warp is `g = l / 4`, `t = l % 4` in the fragment's 8 x 4 grid;
//! `R`, `C` pick one of the four 8 x 8 quarters of a 16 x 16 tile:
//!
//! | fragment (16 x 16 x 16 unless said) | call, layout | per warp | lane's element |
//! |---|---|---|---|
//! | accumulator `float`/`int` | store (and a `float` one's load), row-major | 4 x 8 bytes | `(g + 8R, 2t + 8C)` |
//! | accumulator `float`/`int` | store, column-major | 8 x 4 bytes | `(g + 8R, 2t + j + 8C)`, `j` 0 or 1 |
//! | accumulator `half` | store, row-major | 4 x 4 bytes | `(g + 8R, 2t + 8C)` |
//! | `matrix_a`/`matrix_b` `half`, shared | load, either layout | 1 x 16 bytes (`ldmatrix.x4`) | line `8 (q % 2) + l % 8` of `q = l / 8`, from element `8 (q / 2)` |
//! | `matrix_a` `__nv_bfloat16`, shared, row-major | load | 4 x 4 bytes | `(g + 8R, 2t + 8C)` |
//! | `matrix_a` `precision::tf32` 16 x 16 x 8, shared, row-major | load | 4 x 4 bytes | `(g + 8R, t + 4C)` |
//! | accumulator `double` 8 x 8 x 4 | store, row-major | 1 x 16 bytes | `(l / 4, 2t)` |
//!
//! Element `(row, col)` of a row-major tile is at `row * ldm + col`
//! elements from the pointer, of a column-major one at `col * ldm + row`;
//! an `ldmatrix` line is a row of a row-major `matrix_a` or a column of a
//! column-major one (`matrix_b` the other way round), `ldm` elements apart.
//! Accumulator stores to global memory were measured too (8-byte stores,
//! the same lanes). Other fragments, other shapes, loads from global
//! memory, a layout held in a variable and architectures before 8.0
//! (Volta lays fragments out otherwise) are not modelled: the call records
//! no access, as before.

use tree_sitter::Node;

use super::{Lowerer, Place, Src, Val};
use crate::frontend::types::Ty;
use crate::ir::{BinOp, Builtin, Dim, Expr, Op, Space};

/// A fragment's role, element type, shape and (for `matrix_a`/`matrix_b`)
/// layout, as its type spells them.
#[derive(Debug, PartialEq, Eq)]
struct Fragment {
    role: Role,
    elem: Elem,
    shape: [i64; 3],
    col_major: bool,
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Role {
    A,
    B,
    Acc,
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Elem {
    F32,
    I32,
    F16,
    Bf16,
    Tf32,
    F64,
    Other,
}

/// The fragment a type names (`wmma::fragment<wmma::matrix_a, 16, 16, 16,
/// half, wmma::row_major>`), from its spelling; `value` gives a dimension
/// spelled as a name (`M` with `#define M 16`).
fn fragment(ty: &Ty, value: &mut dyn FnMut(&str) -> Option<i64>) -> Option<Fragment> {
    let Ty::Opaque { name, .. } = ty else {
        return None;
    };
    let open = name.find('<')?;
    let head = name[..open].trim().trim_start_matches("::");
    if !matches!(
        head,
        "fragment" | "wmma::fragment" | "nvcuda::wmma::fragment"
    ) {
        return None;
    }
    let inner = name[open + 1..].trim_end().strip_suffix('>')?;
    let args: Vec<&str> = inner.split(',').map(str::trim).collect();
    if args.len() < 5 {
        return None;
    }
    let last = |s: &str| s.rsplit("::").next().unwrap_or(s).trim().to_string();
    let role = match last(args[0]).as_str() {
        "matrix_a" => Role::A,
        "matrix_b" => Role::B,
        "accumulator" => Role::Acc,
        _ => return None,
    };
    let mut dim = |s: &str| s.parse::<i64>().ok().or_else(|| value(s));
    let shape = [dim(args[1])?, dim(args[2])?, dim(args[3])?];
    let elem = match last(args[4]).as_str() {
        "float" => Elem::F32,
        "int" | "int32_t" => Elem::I32,
        "half" | "__half" => Elem::F16,
        "__nv_bfloat16" | "nv_bfloat16" | "bf16" => Elem::Bf16,
        "tf32" => Elem::Tf32,
        "double" => Elem::F64,
        _ => Elem::Other,
    };
    let col_major = args.get(5).is_some_and(|l| last(l) == "col_major");
    Some(Fragment {
        role,
        elem,
        shape,
        col_major,
    })
}

/// One instruction per warp: its width in bytes and each lane's element
/// offset (in elements, from the pointer) as a function of the lane.
type Instr = (u32, Box<dyn Fn(&Lane, &Expr) -> Expr>);

/// The lane's coordinates as expressions.
struct Lane {
    l: Expr,
    g: Expr,
    t: Expr,
}

fn k(v: i64) -> Expr {
    Expr::konst(v)
}

fn add(a: Expr, b: Expr) -> Expr {
    Expr::plus(a, b)
}

fn mul(a: Expr, b: Expr) -> Expr {
    Expr::times(a, b)
}

/// Row-major element `(row, col)` with leading dimension `ldm`.
fn at(row: Expr, col: Expr, ldm: &Expr) -> Expr {
    add(mul(row, ldm.clone()), col)
}

/// The instructions nvcc emits for `frag` loaded (`store` false) from or
/// stored to `space` with the given memory layout of an accumulator
/// (`acc_col_major`); `None` where not measured.
fn instructions(
    frag: &Fragment,
    store: bool,
    acc_col_major: bool,
    space: Space,
) -> Option<(u32, Vec<Instr>)> {
    let shared = space == Space::Shared;
    match (frag.role, frag.elem, frag.shape) {
        (Role::Acc, Elem::F32 | Elem::I32, [16, 16, 16])
            if !acc_col_major && (store || shared) && (store || frag.elem == Elem::F32) =>
        {
            Some((4, quarters(8, 2, 8)))
        }
        (Role::Acc, Elem::F32 | Elem::I32, [16, 16, 16]) if acc_col_major && store && shared => {
            let mut v: Vec<Instr> = Vec::new();
            for (r, c) in QUARTERS {
                for j in 0..2 {
                    v.push((
                        4,
                        Box::new(move |x: &Lane, ldm: &Expr| {
                            let col = add(mul(k(2), x.t.clone()), k(j + 8 * c));
                            at(col, add(x.g.clone(), k(8 * r)), ldm)
                        }),
                    ));
                }
            }
            Some((4, v))
        }
        (Role::Acc, Elem::F16, [16, 16, 16]) if !acc_col_major && store && shared => {
            Some((2, quarters(4, 2, 8)))
        }
        (Role::A | Role::B, Elem::F16, [16, 16, 16]) if !store && shared => {
            let v: Instr = (
                16,
                Box::new(|x: &Lane, ldm: &Expr| {
                    let q = Expr::bin(BinOp::Shr, x.l.clone(), k(3));
                    let line = add(
                        mul(k(8), Expr::bin(BinOp::And, q.clone(), k(1))),
                        Expr::bin(BinOp::And, x.l.clone(), k(7)),
                    );
                    let from = mul(k(8), Expr::bin(BinOp::Shr, q, k(1)));
                    at(line, from, ldm)
                }),
            );
            Some((2, vec![v]))
        }
        (Role::A, Elem::Bf16, [16, 16, 16]) if !store && shared && !frag.col_major => {
            Some((2, quarters(4, 2, 8)))
        }
        (Role::A, Elem::Tf32, [16, 16, 8]) if !store && shared && !frag.col_major => {
            Some((4, quarters(4, 1, 4)))
        }
        (Role::Acc, Elem::F64, [8, 8, 4]) if !acc_col_major && store && shared => {
            let v: Instr = (
                16,
                Box::new(|x: &Lane, ldm: &Expr| at(x.g.clone(), mul(k(2), x.t.clone()), ldm)),
            );
            Some((8, vec![v]))
        }
        _ => None,
    }
}

/// The four 8 x 8 quarters of a 16-row tile, `(R, C)`.
const QUARTERS: [(i64, i64); 4] = [(0, 0), (0, 1), (1, 0), (1, 1)];

/// One `width`-byte instruction per quarter, lane `(g, t)` at row-major
/// element `(g + 8R, step t + quarter_cols C)`.
fn quarters(width: u32, step: i64, quarter_cols: i64) -> Vec<Instr> {
    QUARTERS
        .iter()
        .map(|&(r, c)| -> Instr {
            (
                width,
                Box::new(move |x: &Lane, ldm: &Expr| {
                    at(
                        add(x.g.clone(), k(8 * r)),
                        add(mul(k(step), x.t.clone()), k(quarter_cols * c)),
                        ldm,
                    )
                }),
            )
        })
        .collect()
}

impl Lowerer<'_, '_> {
    /// `load_matrix_sync(frag, ptr, ldm[, layout])` and
    /// `store_matrix_sync(ptr, frag, ldm, layout)` of a measured fragment
    /// as the accesses nvcc emits (see the module's table); `None` for any
    /// other call, which the caller lowers as before.
    pub(super) fn wmma_call(
        &mut self,
        short: &str,
        args: &[Node],
        n: Node,
        src: &Src,
    ) -> Option<Val> {
        let store = match short {
            "store_matrix_sync" => true,
            "load_matrix_sync" => false,
            _ => return None,
        };
        if args.len() < 3 || !self.wmma_layouts_known() {
            return None;
        }
        let (frag_node, ptr_node) = if store {
            (args[1], args[0])
        } else {
            (args[0], args[1])
        };
        let ty = match self.expr(frag_node, src) {
            Val::Place(p) => p.ty,
            _ => self.opaque_vars.get(src.text(frag_node).trim())?.clone(),
        };
        // A dimension spelled as a name is what the name means here (a
        // macro, a constant), read as any name is.
        let frag = fragment(&ty, &mut |name| match self.ident(name, frag_node, src) {
            Val::Int(e) => e.as_const(),
            _ => None,
        })?;
        // An accumulator's memory layout as written (`wmma::mem_col_major`,
        // or a macro naming it); one held in a variable is not known.
        let acc_col_major = match args.get(3).map(|a| self.spelled(&src.text(*a))) {
            None => false,
            Some(t) if t.ends_with("mem_col_major") => true,
            Some(t) if t.ends_with("mem_row_major") => false,
            Some(_) if frag.role == Role::Acc => return None,
            Some(_) => false,
        };
        let modelled = |space| instructions(&frag, store, acc_col_major, space).is_some();
        if !modelled(Space::Shared) && !modelled(Space::Global) {
            return None;
        }
        let ptr = self.rv(ptr_node, src);
        let ldm = self.int(args[2], src);
        for a in args.iter().skip(3) {
            self.rv(*a, src);
        }
        let model = match &ptr {
            Val::Ptr(p) => instructions(&frag, store, acc_col_major, self.k.objects[p.obj].space),
            _ => None,
        };
        let (Val::Ptr(p), Some((elem_bytes, instrs))) = (ptr, model) else {
            // Not modelled for this memory: what a call the analysis does
            // not see does (its arguments evaluated, the others above).
            let _ = self.rv(frag_node, src);
            self.unseen_call();
            return Some(Val::Void);
        };
        let lane = lane();
        let op = if store { Op::Store } else { Op::Load };
        for (width, element) in instrs {
            let off = mul(element(&lane, &ldm), k(i64::from(elem_bytes)));
            let place = Place {
                obj: p.obj,
                off: add(p.off.clone(), off),
                ty: Ty::Int {
                    size: u64::from(width),
                },
            };
            self.access(&place, op, n, src);
        }
        Some(Val::Void)
    }

    /// `text` with object-like macros it names replaced by their bodies
    /// (`C_LAYOUT` with `#define C_LAYOUT wmma::mem_row_major`), up to the
    /// macro depth.
    fn spelled(&self, text: &str) -> String {
        let mut t = text.trim().to_string();
        for _ in 0..crate::budget::MAX_MACRO_DEPTH {
            match self.tu.macros.get(&t).filter(|m| m.params.is_none()) {
                Some(m) => t = m.body.trim().to_string(),
                None => break,
            }
        }
        t
    }

    /// Whether the fragments' layouts are the ones measured: compute
    /// capability 8.0 or later (`__CUDA_ARCH__`), or no architecture set.
    fn wmma_layouts_known(&self) -> bool {
        match self.tu.macros.get("__CUDA_ARCH__") {
            Some(m) => m.body.trim().parse::<u32>().is_ok_and(|v| v >= 800),
            None => true,
        }
    }
}

/// The lane of the thread in its warp (`linear thread index % 32`) and its
/// coordinates `g = lane / 4`, `t = lane % 4`.
fn lane() -> Lane {
    let b = Expr::builtin;
    let x = b(Builtin::ThreadIdx(Dim::X));
    let y = b(Builtin::ThreadIdx(Dim::Y));
    let z = b(Builtin::ThreadIdx(Dim::Z));
    let bx = b(Builtin::BlockDim(Dim::X));
    let by = b(Builtin::BlockDim(Dim::Y));
    let linear = add(x, mul(bx.clone(), add(y, mul(by, z))));
    let l = Expr::bin(BinOp::And, linear, k(31));
    Lane {
        g: Expr::bin(BinOp::Shr, l.clone(), k(2)),
        t: Expr::bin(BinOp::And, l.clone(), k(3)),
        l,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opaque(name: &str) -> Ty {
        Ty::Opaque {
            name: name.into(),
            size: 32,
            align: 8,
        }
    }

    #[test]
    fn fragments_are_read_from_their_spelling() {
        let mut none = |_: &str| None;
        assert_eq!(
            fragment(
                &opaque(
                    "nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::col_major>"
                ),
                &mut none
            ),
            Some(Fragment {
                role: Role::A,
                elem: Elem::F16,
                shape: [16, 16, 16],
                col_major: true
            })
        );
        let mut m8 = |s: &str| (s == "M").then_some(8);
        assert_eq!(
            fragment(
                &opaque("wmma::fragment<wmma::accumulator, M, 8, 4, double>"),
                &mut m8
            ),
            Some(Fragment {
                role: Role::Acc,
                elem: Elem::F64,
                shape: [8, 8, 4],
                col_major: false
            })
        );
        assert_eq!(
            fragment(
                &opaque("wmma::fragment<wmma::accumulator, M, 8, 4, double>"),
                &mut none
            ),
            None
        );
        assert_eq!(
            fragment(&opaque("cuda::std::array<float, 4>"), &mut none),
            None
        );
        assert_eq!(fragment(&Ty::Int { size: 4 }, &mut none), None);
    }
}

//! What nvcc does to neighbouring field accesses of one vector element.
//!
//! `in[i].x` then `in[i].y` are two 4-byte accesses in the source, but
//! nvcc's load/store vectorizer merges accesses to adjacent bytes of one
//! element into a single wider one when nothing between them stops it.
//! Measured on the H200 (nvcc 13.0, `-O3 -arch=sm_90`;
//! `fixtures/groundtruth/sm_90/fields_of_vectors.cu` and `README.md`):
//! - the four fields of a `uint4`/`float4`, read one after the other (also
//!   through a `const uint4 &`), are one `LDG.E.128`;
//! - `.x` and `.y` of a `float4` are one `LDG.E.64`; `.y` and `.z` are two
//!   loads (8 bytes at offset 4 are not 8-byte aligned);
//! - `.x`, `.y`, `.z` of a `uchar4` read are one 32-bit load (a load may
//!   cover a byte it does not use); written, they are a 16-bit and an 8-bit
//!   store (a store may not);
//! - a store to another array between two field reads keeps them apart
//!   unless both pointers are `__restrict__`, and so does a call to a math
//!   function whose implementation branches (`logf`, the [`SPLITS`] list);
//!   a `?:`, arithmetic, a small `__device__` function or a branch-free
//!   math function (`expf`, [`MERGES`]) does not;
//! - an `if` that only assigns is if-converted and does not split them
//!   (`if (d > 0) cnd = 1.0f - cnd;`, BlackScholes); another `if` or a loop
//!   may (a one-trip loop unrolled away did not; an `if` around a `logf`
//!   did).
//!
//! - in shared memory the same holds (`LDS.64`/`LDS.128`, `STS.64`), and
//!   an 8-byte struct of two floats merges too: the compiler places the
//!   array, so each element is aligned to its size
//!   (`fixtures/groundtruth/sm_90/shared_fields.cu`); a 32-byte struct of
//!   four doubles is merged in two 16-byte halves, `.v` with `.x` and `.y`
//!   with `.z` (`STS.128`/`LDS.128`: `fixtures/groundtruth/sm_90/hoist.cu`,
//!   rodinia's lavaMD).
//!
//! Each merged group becomes one access (the first in source order, widened)
//! and the others are dropped: the hardware runs one instruction for them.
//! Where a branch, a loop or a call the engine cannot see into (a function
//! in neither list, and not a vector constructor such as `make_uchar4`)
//! lies between two fields, whether they merge is not known and each of
//! them is `unknown`, with that reason.

use crate::finding::UnknownReason;
use crate::ir::{Access, BinOp, Expr, ExprKind, Kernel, MemObject, Op, RemovedWhy, Space};

/// The largest element (bytes) whose fields are merged in 16-byte pieces:
/// what was measured (a 32-byte struct of four doubles), and twice it.
const MAX_PIECED_ELEMENT: u64 = 64;

/// Math functions whose libdevice implementation branches: nvcc does not
/// merge field accesses across a call to one (measured, nvcc 13.0).
pub const SPLITS: &[&str] = &[
    "logf", "log2f", "log10f", "log1pf", "sinf", "cosf", "tanf", "atanf", "atan2f", "erff",
    "normcdff", "lgammaf", "tgammaf", "sinpif", "powf", "fmodf", "log", "sin", "cos", "erf", "pow",
    "atan2",
];

/// Math functions that compile to straight-line code: field accesses on
/// both sides of a call still merge (measured, nvcc 13.0).
pub const MERGES: &[&str] = &[
    "expf",
    "exp2f",
    "exp10f",
    "expm1f",
    "sqrtf",
    "rsqrtf",
    "cbrtf",
    "asinf",
    "acosf",
    "sinhf",
    "coshf",
    "tanhf",
    "erfcf",
    "fabsf",
    "floorf",
    "ceilf",
    "truncf",
    "roundf",
    "rintf",
    "__expf",
    "__logf",
    "__sinf",
    "__cosf",
    "__log2f",
    "__powf",
    "__fsqrt_rn",
    "__frcp_rn",
    "__saturatef",
    "__fdividef",
    "fdividef",
    "fminf",
    "fmaxf",
    "hypotf",
    "copysignf",
    "exp",
    "sqrt",
    "fabs",
    "tanh",
];

/// Whether `name` is one of CUDA's vector constructors (`make_uchar4`,
/// `make_float2`, `make_int4`, …, `vector_functions.hpp`): it only builds
/// a value, so field accesses on both sides of it still merge (measured:
/// cuda-samples' shfl_scan, `uint_to_uchar4(data.x)` … `(data.w)` through
/// `make_uchar4`, one `LDG.E.128`).
pub fn vector_constructor(name: &str) -> bool {
    const BASES: &[&str] = &[
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "longlong",
        "ulonglong",
        "float",
        "double",
    ];
    let Some(rest) = name.strip_prefix("make_") else {
        return false;
    };
    let base = rest.trim_end_matches(|c: char| c.is_ascii_digit());
    let n = &rest[base.len()..];
    BASES.contains(&base) && matches!(n, "1" | "2" | "3" | "4")
}

/// `e` as `rest + c`, peeling constant addends off the top.
pub(super) fn split_const(e: &Expr) -> (Expr, i64) {
    let mut rest = e.clone();
    let mut c: i64 = 0;
    loop {
        let next = match rest.kind() {
            ExprKind::Const(v) => {
                c = c.wrapping_add(*v);
                Expr::konst(0)
            }
            ExprKind::Bin(BinOp::Add, a, b) if b.as_const().is_some() => {
                c = c.wrapping_add(b.as_const().unwrap_or(0));
                a.clone()
            }
            ExprKind::Bin(BinOp::Add, a, b) if a.as_const().is_some() => {
                c = c.wrapping_add(a.as_const().unwrap_or(0));
                b.clone()
            }
            ExprKind::Bin(BinOp::Sub, a, b) if b.as_const().is_some() => {
                c = c.wrapping_sub(b.as_const().unwrap_or(0));
                a.clone()
            }
            _ => return (rest, c),
        };
        if next.as_const() == Some(0) {
            return (next, c);
        }
        rest = next;
    }
}

fn same_place(a: &Access, b: &Access) -> bool {
    a.obj == b.obj
        && a.loops == b.loops
        && a.guards.len() == b.guards.len()
        && a.guards.iter().zip(&b.guards).all(|(x, y)| x.same(y))
}

fn restrict(o: &MemObject) -> bool {
    o.decl_text.contains("restrict")
}

/// The aligned power-of-two pieces nvcc splits the bytes `[lo, hi)` into.
fn pieces(lo: u64, hi: u64, align: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut s = lo;
    while s < hi {
        let mut p = 16u64.min(align.max(1));
        while p > 1 && (!s.is_multiple_of(p) || s + p > hi) {
            p /= 2;
        }
        out.push((s, p));
        s += p;
    }
    out
}

/// A group of field accesses of one element: `(access, byte in element)`.
struct Chain {
    members: Vec<(usize, u64)>,
    /// Why merging is not known (a call lies between two members).
    unsure: Option<UnknownReason>,
    /// `MAX_FUSE_WINDOW` ended the search with a possible member past it.
    cut: bool,
}

/// Later accesses of the same element as access `i`, up to whatever keeps
/// nvcc from merging them.
fn chain(k: &Kernel, i: usize, done: &[bool]) -> Option<Chain> {
    let a = &k.accesses[i];
    let obj = &k.objects[a.obj];
    if !matches!(obj.space, Space::Global | Space::Shared)
        || obj.volatile
        || a.op == Op::Atomic
        || a.unknown.is_some()
        || a.hinted
    {
        return None;
    }
    let e = obj.elem_size;
    // A vector-sized element, or a larger one made of 16-byte pieces (a
    // struct of four doubles: measured in shared memory, `hoist.cu`).
    let sized = e <= 16 || (e.is_multiple_of(16) && e <= MAX_PIECED_ELEMENT);
    if e < 2 || a.width as u64 >= e || !sized {
        return None; // not a field of an element nvcc merges within
    }
    let (rest, c) = split_const(&a.offset);
    let base = c.div_euclid(e as i64) * e as i64;
    let mut members = vec![(i, (c - base) as u64)];
    let mut unsure = None;
    let mut last_calls = a.undecided;
    // Bytes of the element that a load chain's later members must not
    // touch (written in between).
    let mut written: Vec<(i64, i64)> = Vec::new();
    let overlaps = |x: (i64, i64), y: (i64, i64)| x.0 < y.1 && y.0 < x.1;
    let window = k.accesses.iter().enumerate().skip(i + 1);
    // Whether the search ended before the window did (a region's end, an
    // access that keeps the members apart).
    let mut ended = false;
    let mut looked = 0;
    for (j, b) in window.take(crate::budget::MAX_FUSE_WINDOW) {
        looked += 1;
        if b.region != a.region {
            ended = true;
            break;
        }
        let other = &k.objects[b.obj];
        let (r, d) = split_const(&b.offset);
        let bytes = (d, d + b.width as i64);
        let in_element =
            b.obj == a.obj && r.same(&rest) && bytes.0 >= base && bytes.1 <= base + e as i64;
        // Fields of one width only: a `double` and an `int` of one 16-byte
        // aligned struct stay an `LDG.E.64` and an `LDG.E` (measured,
        // `fixtures/groundtruth/align/`).
        if in_element
            && !done[j]
            && b.op == a.op
            && b.width == a.width
            && !b.hinted
            && b.unknown.is_none()
            && same_place(a, b)
        {
            if written.iter().any(|w| overlaps(*w, bytes)) {
                ended = true;
                break;
            }
            if b.undecided != last_calls && unsure.is_none() {
                unsure = Some(UnknownReason::MergeUndecided {
                    first: a.text.clone(),
                    second: b.text.clone(),
                });
            }
            last_calls = b.undecided;
            members.push((j, (d - base) as u64));
            continue;
        }
        // Global memory may alias any other global pointer; distinct
        // `__shared__` arrays never alias, nor do the two spaces; a generic
        // pointer may point into either.
        let may_alias = match (obj.space, other.space) {
            (Space::Global, Space::Global) => true,
            (Space::Generic, Space::Global | Space::Shared | Space::Generic)
            | (Space::Global | Space::Shared, Space::Generic) => true,
            (Space::Shared, Space::Shared) => b.obj == a.obj,
            _ => false,
        };
        if !may_alias || (a.op == Op::Load && b.op == Op::Load) {
            continue;
        }
        if in_element {
            // Another access to the element: a load chain may not move a
            // later read above a write of its bytes; a store chain may not
            // move an earlier write below an access to its bytes.
            if a.op == Op::Load {
                written.push(bytes);
                continue;
            }
            let clash = members.iter().any(|&(m, at)| {
                let lo = base + at as i64;
                overlaps((lo, lo + k.accesses[m].width as i64), bytes)
            });
            if clash {
                ended = true;
                break;
            }
            continue;
        }
        // Another element or another array: it may alias, unless both
        // pointers are `__restrict__` (or it is provably another element).
        let elsewhere = b.obj == a.obj && r.same(&rest);
        if elsewhere || (b.obj != a.obj && restrict(obj) && restrict(other)) {
            continue;
        }
        ended = true;
        break;
    }
    // Past the window, an access to the same element in the same region
    // might have merged: whether it does is not known.
    let cut = !ended
        && looked == crate::budget::MAX_FUSE_WINDOW
        && k.accesses
            .iter()
            .skip(i + 1 + crate::budget::MAX_FUSE_WINDOW)
            .take_while(|b| b.region == a.region)
            .any(|b| {
                let (r, d) = split_const(&b.offset);
                b.obj == a.obj && b.op == a.op && r.same(&rest) && d >= base && d < base + e as i64
            });
    (members.len() > 1 || cut).then_some(Chain {
        members,
        unsure,
        cut,
    })
}

/// The bytes the members of a chain touch, each once.
fn covered_bytes(k: &Kernel, members: &[(usize, u64)]) -> u64 {
    let mut runs: Vec<(u64, u64)> = members
        .iter()
        .map(|&(m, at)| (at, at + u64::from(k.accesses[m].width)))
        .collect();
    runs.sort_unstable();
    let mut total = 0;
    let mut end = 0;
    for (s, t) in runs {
        let s = s.max(end);
        if t > s {
            total += t - s;
            end = t;
        }
    }
    total
}

/// Merges the field accesses nvcc merges (see the module doc).
pub fn fuse_fields(k: &mut Kernel) {
    let n = k.accesses.len();
    let mut done = vec![false; n];
    let mut drop: Vec<Option<RemovedWhy>> = vec![None; n];
    for i in 0..n {
        if done[i] {
            continue;
        }
        let Some(ch) = chain(k, i, &done) else {
            continue;
        };
        for &(m, _) in &ch.members {
            done[m] = true;
        }
        if ch.cut {
            for &(m, _) in &ch.members {
                let why = UnknownReason::OutOfBudget(crate::budget::FUSE_WINDOW);
                k.accesses[m].unknown = Some(why);
            }
            continue;
        }
        let a = &k.accesses[i];
        let obj = &k.objects[a.obj];
        // A global pointer is as aligned as its type says; a `__shared__`
        // array is placed by the compiler, which aligns each element to its
        // size (an 8-byte struct of floats merges into one 64-bit access).
        let align = match obj.space {
            Space::Shared => 1u64 << obj.elem_size.max(1).trailing_zeros().min(4),
            _ => obj.elem_align.clamp(1, 16),
        };
        let (rest, c) = split_const(&a.offset);
        let base = c.div_euclid(obj.elem_size as i64) * obj.elem_size as i64;
        let op = a.op;
        let lo = ch.members.iter().map(|&(_, at)| at).min().unwrap_or(0);
        let hi = ch
            .members
            .iter()
            .map(|&(m, at)| at + k.accesses[m].width as u64)
            .max()
            .unwrap_or(0);
        // A load may read bytes it does not use (the whole aligned span),
        // one field's worth at most: `.x`, `.y`, `.w` of a `float4` are one
        // 16-byte load, `.x` and `.z` or `.x` and `.w` two 4-byte loads,
        // `.x`, `.y`, `.z` of a `uchar4` one 4-byte load (measured:
        // `fixtures/groundtruth/align/gaps.sass`); a store writes only
        // contiguous runs of what it was given.
        let span = (hi - lo).next_power_of_two();
        let unused = span.saturating_sub(covered_bytes(k, &ch.members));
        let narrowest = ch
            .members
            .iter()
            .map(|&(m, _)| u64::from(k.accesses[m].width))
            .min()
            .unwrap_or(0);
        let groups: Vec<(u64, u64)> = if op == Op::Load
            && lo.is_multiple_of(span)
            && span <= align
            && span <= 16
            && unused <= narrowest
        {
            vec![(lo, span)]
        } else {
            let mut covered: Vec<(u64, u64)> = ch
                .members
                .iter()
                .map(|&(m, at)| (at, at + k.accesses[m].width as u64))
                .collect();
            covered.sort_unstable();
            let mut runs: Vec<(u64, u64)> = Vec::new();
            for (s, t) in covered {
                match runs.last_mut() {
                    Some(r) if s <= r.1 => r.1 = r.1.max(t),
                    _ => runs.push((s, t)),
                }
            }
            runs.into_iter()
                .flat_map(|(s, t)| pieces(s, t, align))
                .collect()
        };
        for (start, width) in groups {
            let inside: Vec<usize> = ch
                .members
                .iter()
                .filter(|&&(m, at)| at >= start && at + k.accesses[m].width as u64 <= start + width)
                .map(|&(m, _)| m)
                .collect();
            // A merged load issues where its first field was read, a
            // merged store where its last field is written.
            let lead = if op == Op::Store {
                inside.last()
            } else {
                inside.first()
            };
            let Some(&lead) = lead else {
                continue;
            };
            if inside.len() == 1 && k.accesses[lead].width as u64 == width {
                continue; // nothing merges
            }
            if let Some(why) = &ch.unsure {
                for &m in &inside {
                    k.accesses[m].unknown = Some(why.clone());
                }
                continue;
            }
            let l = &mut k.accesses[lead];
            l.width = width as u32;
            l.offset = Expr::plus(rest.clone(), Expr::konst(base + start as i64));
            let into = l.span;
            for &m in &inside {
                drop[m] = (m != lead).then_some(RemovedWhy::Merged { into });
            }
        }
    }
    super::drop_marked(k, &drop);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_aligned_powers_of_two() {
        assert_eq!(pieces(0, 3, 4), vec![(0, 2), (2, 1)]);
        assert_eq!(pieces(4, 12, 16), vec![(4, 4), (8, 4)]);
        assert_eq!(pieces(0, 16, 16), vec![(0, 16)]);
        assert_eq!(pieces(0, 16, 4), vec![(0, 4), (4, 4), (8, 4), (12, 4)]);
    }

    #[test]
    fn constants_are_peeled_off_the_top() {
        let x = Expr::atom(crate::ir::Atom::Param(0));
        let e = Expr::plus(Expr::plus(x.clone(), Expr::konst(8)), Expr::konst(4));
        let (r, c) = split_const(&e);
        assert!(r.same(&x));
        assert_eq!(c, 12);
        let (r, c) = split_const(&Expr::konst(7));
        assert_eq!((r.as_const(), c), (Some(0), 7));
    }

    #[test]
    fn vector_constructors_are_make_and_a_vector_type() {
        for n in [
            "make_uchar4",
            "make_float2",
            "make_int4",
            "make_ulonglong2",
            "make_double3",
        ] {
            assert!(vector_constructor(n), "{n}");
        }
        for n in [
            "make_uchar5",
            "make_float",
            "make_pair",
            "make_shared",
            "uchar4",
            "make_",
        ] {
            assert!(!vector_constructor(n), "{n}");
        }
    }
}

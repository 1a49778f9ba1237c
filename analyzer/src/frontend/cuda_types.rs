//! CUDA's own types, sized without the toolkit's headers: the vector types
//! (with CUDA 13's `_16a`/`_32a` forms), `__half`/`__nv_bfloat16` and their
//! pair and `_raw` forms, the fp8/fp6/fp4 types, the curand states,
//! `cuComplex`/`cuDoubleComplex`, `cuda::std::complex<T>`, `std::array` /
//! `cuda::std::array` and `nvcuda::wmma::fragment`.
//!
//! Every size, alignment and element count here is a line of
//! `fixtures/groundtruth/types/cuda_types.sm_90.txt` (nvcc 13.0, printed by
//! the host and by an sm_90 kernel, which agree); `analyzer/tests/cuda_types.rs`
//! checks each line through the front end, so the table cannot drift from
//! the measurement. A type is known here only where it was measured (or,
//! for `array<T, N>`, where its layout is `T[N]` by definition). The front
//! end asks this table last, after the file's own typedefs, structs and
//! macros, so a project that defines one of these names itself is sized by
//! its own definition.

use super::types::Ty;

/// How a named type is modelled: a scalar, components `x`…`w` of `size`
/// bytes each (a vector type, or a struct of `unsigned short x, y`), or its
/// size and alignment alone (its fields are not modelled).
#[derive(Clone, Copy)]
enum Shape {
    Int,
    Float,
    Comps { size: u64, float: bool, n: u64 },
    Opaque,
}

const HALF2: Shape = Shape::Comps {
    size: 2,
    float: true,
    n: 2,
};
const RAW1: Shape = Shape::Comps {
    size: 2,
    float: false,
    n: 1,
};
const RAW2: Shape = Shape::Comps {
    size: 2,
    float: false,
    n: 2,
};
const FLOAT2: Shape = Shape::Comps {
    size: 4,
    float: true,
    n: 2,
};
const DOUBLE2: Shape = Shape::Comps {
    size: 8,
    float: true,
    n: 2,
};

/// Named types other than the vector types: name, `sizeof`, `alignof`
/// (each a line of the measurement) and shape. `cuComplex` is `float2`
/// and `cuDoubleComplex` `double2` (typedefs in `cuComplex.h`); the fp8,
/// fp6 and fp4 scalars are one-byte integers like `__nv_fp8_e4m3` always
/// was here, their pairs and quads opaque; the `_storage_t` typedefs are
/// unsigned integers.
const NAMED: &[(&str, u64, u64, Shape)] = &[
    ("half", 2, 2, Shape::Float),
    ("__half", 2, 2, Shape::Float),
    ("__nv_bfloat16", 2, 2, Shape::Float),
    ("nv_bfloat16", 2, 2, Shape::Float),
    ("half2", 4, 4, HALF2),
    ("__half2", 4, 4, HALF2),
    ("__nv_bfloat162", 4, 4, HALF2),
    ("nv_bfloat162", 4, 4, HALF2),
    ("__half_raw", 2, 2, RAW1),
    ("__nv_bfloat16_raw", 2, 2, RAW1),
    ("__half2_raw", 4, 4, RAW2),
    ("__nv_bfloat162_raw", 4, 4, RAW2),
    ("__nv_fp8_e4m3", 1, 1, Shape::Int),
    ("__nv_fp8_e5m2", 1, 1, Shape::Int),
    ("__nv_fp8_e8m0", 1, 1, Shape::Int),
    ("__nv_fp6_e2m3", 1, 1, Shape::Int),
    ("__nv_fp6_e3m2", 1, 1, Shape::Int),
    ("__nv_fp4_e2m1", 1, 1, Shape::Int),
    ("__nv_fp8x2_e4m3", 2, 2, Shape::Opaque),
    ("__nv_fp8x4_e4m3", 4, 4, Shape::Opaque),
    ("__nv_fp8x2_e5m2", 2, 2, Shape::Opaque),
    ("__nv_fp8x4_e5m2", 4, 4, Shape::Opaque),
    ("__nv_fp8x2_e8m0", 2, 2, Shape::Opaque),
    ("__nv_fp8x4_e8m0", 4, 4, Shape::Opaque),
    ("__nv_fp6x2_e2m3", 2, 2, Shape::Opaque),
    ("__nv_fp6x4_e2m3", 4, 4, Shape::Opaque),
    ("__nv_fp6x2_e3m2", 2, 2, Shape::Opaque),
    ("__nv_fp6x4_e3m2", 4, 4, Shape::Opaque),
    ("__nv_fp4x2_e2m1", 1, 1, Shape::Opaque),
    ("__nv_fp4x4_e2m1", 2, 2, Shape::Opaque),
    ("__nv_fp8_storage_t", 1, 1, Shape::Int),
    ("__nv_fp8x2_storage_t", 2, 2, Shape::Int),
    ("__nv_fp8x4_storage_t", 4, 4, Shape::Int),
    ("__nv_fp6_storage_t", 1, 1, Shape::Int),
    ("__nv_fp6x2_storage_t", 2, 2, Shape::Int),
    ("__nv_fp6x4_storage_t", 4, 4, Shape::Int),
    ("__nv_fp4_storage_t", 1, 1, Shape::Int),
    ("__nv_fp4x2_storage_t", 1, 1, Shape::Int),
    ("__nv_fp4x4_storage_t", 2, 2, Shape::Int),
    ("cuComplex", 8, 8, FLOAT2),
    ("cuFloatComplex", 8, 8, FLOAT2),
    ("cuDoubleComplex", 16, 16, DOUBLE2),
    ("curandState", 48, 8, Shape::Opaque),
    ("curandState_t", 48, 8, Shape::Opaque),
    ("curandStateXORWOW", 48, 8, Shape::Opaque),
    ("curandStateXORWOW_t", 48, 8, Shape::Opaque),
    ("curandStatePhilox4_32_10", 64, 16, Shape::Opaque),
    ("curandStatePhilox4_32_10_t", 64, 16, Shape::Opaque),
    ("curandStateMRG32k3a", 48, 8, Shape::Opaque),
    ("curandStateMRG32k3a_t", 48, 8, Shape::Opaque),
    ("curandStateSobol32", 140, 4, Shape::Opaque),
    ("curandStateSobol32_t", 140, 4, Shape::Opaque),
    ("curandStateScrambledSobol32", 140, 4, Shape::Opaque),
    ("curandStateScrambledSobol32_t", 140, 4, Shape::Opaque),
    ("curandStateSobol64", 536, 8, Shape::Opaque),
    ("curandStateSobol64_t", 536, 8, Shape::Opaque),
    ("curandStateScrambledSobol64", 536, 8, Shape::Opaque),
    ("curandStateScrambledSobol64_t", 536, 8, Shape::Opaque),
    ("curandStateMtgp32", 4112, 8, Shape::Opaque),
    ("curandStateMtgp32_t", 4112, 8, Shape::Opaque),
];

/// A CUDA type named without template arguments (`curandState`,
/// `::__half`, `long4_32a`), if it is one the table knows.
pub fn named(name: &str) -> Option<Ty> {
    let short = name.rsplit("::").next().unwrap_or(name).trim();
    if let Some(&(n, size, align, shape)) = NAMED.iter().find(|e| e.0 == short) {
        return Some(match shape {
            Shape::Int => Ty::Int { size },
            Shape::Float => Ty::Float { size },
            Shape::Comps {
                size,
                float,
                n: count,
            } => Ty::Vector {
                name: n.to_string(),
                comp: Box::new(scalar(size, float)),
                n: count,
                align,
            },
            Shape::Opaque => Ty::Opaque {
                name: n.to_string(),
                size,
                align,
            },
        });
    }
    vector(short)
}

fn scalar(size: u64, float: bool) -> Ty {
    if float {
        Ty::Float { size }
    } else {
        Ty::Int { size }
    }
}

/// The vector types: `float4`, `uchar2`, `longlong3`, … and CUDA 13's
/// `long4_16a`, `double4_32a`, … (aligned as the suffix says).
fn vector(n: &str) -> Option<Ty> {
    let (head, forced) = match n.strip_suffix("_16a").or_else(|| n.strip_suffix("_32a")) {
        Some(h) => (h, Some(if n.ends_with("_16a") { 16 } else { 32 })),
        None => (n, None),
    };
    let digit = u64::from(head.chars().last()?.to_digit(10)?);
    if !(1..=4).contains(&digit) {
        return None;
    }
    let base = &head[..head.len() - 1];
    let (csize, float) = match base {
        "char" | "uchar" => (1, false),
        "short" | "ushort" => (2, false),
        "int" | "uint" => (4, false),
        "long" | "ulong" | "longlong" | "ulonglong" => (8, false),
        "float" => (4, true),
        "double" => (8, true),
        _ => return None,
    };
    // Measured: 2- and 4-component vectors are aligned to their size, but
    // no more than 16 bytes (`long4`, `double4`: 32 bytes, 16-aligned);
    // 1- and 3-component ones to their component. The `_16a`/`_32a` forms
    // exist only for the 32-byte 4-vectors.
    let align = match (forced, digit) {
        (Some(a), 4) if csize == 8 => a,
        (Some(_), _) => return None,
        (None, 2 | 4) => (digit * csize).min(16),
        (None, _) => csize,
    };
    Some(Ty::Vector {
        name: n.to_string(),
        comp: Box::new(scalar(csize, float)),
        n: digit,
        align,
    })
}

/// A template argument as the table reads it: an integer, or a type with
/// its spelling (which tells `half` from `__nv_bfloat16`, both `Float { size:
/// 2 }` here), or anything else.
pub enum Arg<'a> {
    Value(i64),
    Type(&'a Ty, &'a str),
    Other,
}

/// Whether `template` (as written: `cuda::std::array`, `wmma::fragment`) is
/// one of the templates [`instance`] sizes.
pub fn is_template(template: &str) -> bool {
    template_kind(template).is_some()
}

enum Template {
    Array,
    Complex,
    Fragment,
}

fn template_kind(template: &str) -> Option<Template> {
    let t: String = template.split_whitespace().collect();
    Some(match t.trim_start_matches("::") {
        "array" | "std::array" | "cuda::std::array" => Template::Array,
        "cuda::std::complex" => Template::Complex,
        "fragment" | "wmma::fragment" | "nvcuda::wmma::fragment" => Template::Fragment,
        _ => return None,
    })
}

/// An instance of one of the templates (`cuda::std::array<float, 4>`,
/// `wmma::fragment<wmma::accumulator, 16, 16, 16, float>`), named
/// `spelling` in messages; `None` when the arguments are not all known, or
/// name a combination that was not measured.
pub fn instance(template: &str, args: &[Arg], spelling: &str) -> Option<Ty> {
    match template_kind(template)? {
        // `T[N]` by definition (libstdc++'s and libcu++'s `array` hold one
        // `T _M_elems[N]`/`__elems_[N]`); measured for several `T`. `N = 0`
        // differs between them (1 and 4 bytes for `float`): not sized.
        Template::Array => match args {
            [Arg::Type(t, _), Arg::Value(n)]
                if *n > 0 && !matches!(t, Ty::Unknown(_) | Ty::Void) =>
            {
                Some(Ty::Array(Box::new((*t).clone()), Some(*n as u64)))
            }
            _ => None,
        },
        // Measured for `float`, `double`, `__half` and `__nv_bfloat16`:
        // two elements, aligned to their total size.
        Template::Complex => {
            let [Arg::Type(t, text)] = args else {
                return None;
            };
            let e = agree(elements(t, text), |e| match e {
                Elem::Half | Elem::Bf16 => Some(4),
                Elem::F32 => Some(8),
                Elem::F64 => Some(16),
                _ => None,
            })?;
            Some(opaque(spelling, e, e))
        }
        Template::Fragment => {
            let f = fragment(args)?;
            Some(opaque(spelling, f.size, f.align))
        }
    }
}

fn opaque(spelling: &str, size: u64, align: u64) -> Ty {
    Ty::Opaque {
        name: spelling.split_whitespace().collect::<Vec<_>>().join(" "),
        size,
        align,
    }
}

/// Size, alignment and `num_elements` of an `nvcuda::wmma::fragment`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fragment {
    pub size: u64,
    pub align: u64,
    pub num_elements: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    A,
    B,
    Acc,
}

/// A fragment's element type (`S8`/`U8`: `signed`/`unsigned char`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Elem {
    Half,
    Bf16,
    S8,
    U8,
    F32,
    F64,
    I32,
    Tf32,
    S4,
    U4,
    B1,
}

/// Use, `[m, n, k]`, element types, `sizeof`, `num_elements`.
type FragmentRow = (Use, [i64; 3], &'static [Elem], u64, u64);

/// Every fragment `mma.h` declares for the shapes measured: use, `m`, `n`,
/// `k`, elements, `sizeof` and `num_elements`; each is 8-byte aligned. The
/// layout (`row_major`/`col_major`) changes neither (measured for every
/// fragment declared with both).
const FRAGMENTS: &[FragmentRow] = &[
    (Use::A, [16, 16, 16], &[Elem::Half], 32, 16),
    (Use::A, [16, 16, 16], &[Elem::Bf16], 16, 8),
    (Use::A, [16, 16, 16], &[Elem::S8, Elem::U8], 8, 8),
    (Use::B, [16, 16, 16], &[Elem::Half], 32, 16),
    (Use::B, [16, 16, 16], &[Elem::Bf16], 16, 8),
    (Use::B, [16, 16, 16], &[Elem::S8, Elem::U8], 8, 8),
    (Use::Acc, [16, 16, 16], &[Elem::F32, Elem::I32], 32, 8),
    (Use::Acc, [16, 16, 16], &[Elem::Half], 16, 8),
    (Use::A, [32, 8, 16], &[Elem::Half, Elem::Bf16], 32, 16),
    (Use::A, [32, 8, 16], &[Elem::S8, Elem::U8], 16, 16),
    (Use::B, [32, 8, 16], &[Elem::Half], 32, 16),
    (Use::B, [32, 8, 16], &[Elem::Bf16, Elem::S8, Elem::U8], 8, 4),
    (Use::Acc, [32, 8, 16], &[Elem::F32, Elem::I32], 32, 8),
    (Use::Acc, [32, 8, 16], &[Elem::Half], 16, 8),
    (Use::A, [8, 32, 16], &[Elem::Half], 32, 16),
    (Use::A, [8, 32, 16], &[Elem::Bf16, Elem::S8, Elem::U8], 8, 4),
    (Use::B, [8, 32, 16], &[Elem::Half, Elem::Bf16], 32, 16),
    (Use::B, [8, 32, 16], &[Elem::S8, Elem::U8], 16, 16),
    (Use::Acc, [8, 32, 16], &[Elem::F32, Elem::I32], 32, 8),
    (Use::Acc, [8, 32, 16], &[Elem::Half], 16, 8),
    (Use::A, [16, 16, 8], &[Elem::Tf32], 16, 4),
    (Use::B, [16, 16, 8], &[Elem::Tf32], 16, 4),
    (Use::Acc, [16, 16, 8], &[Elem::F32], 32, 8),
    (Use::A, [8, 8, 4], &[Elem::F64], 8, 1),
    (Use::B, [8, 8, 4], &[Elem::F64], 8, 1),
    (Use::Acc, [8, 8, 4], &[Elem::F64], 16, 2),
    (Use::A, [8, 8, 32], &[Elem::S4, Elem::U4], 8, 8),
    (Use::B, [8, 8, 32], &[Elem::S4, Elem::U4], 8, 8),
    (Use::Acc, [8, 8, 32], &[Elem::I32], 8, 2),
    (Use::A, [8, 8, 128], &[Elem::B1], 8, 32),
    (Use::B, [8, 8, 128], &[Elem::B1], 8, 32),
    (Use::Acc, [8, 8, 128], &[Elem::I32], 8, 2),
];

/// The fragment `wmma::fragment<Use, M, N, K, T[, Layout]>` names, when its
/// use, shape and element type are known and every element type the
/// arguments may stand for gives the same fragment.
pub fn fragment(args: &[Arg]) -> Option<Fragment> {
    let (u, m, n, k, t, text) = match args {
        [Arg::Type(u, ut), Arg::Value(m), Arg::Value(n), Arg::Value(k), Arg::Type(t, text), ..] => {
            (use_of(u, ut)?, *m, *n, *k, *t, *text)
        }
        _ => return None,
    };
    agree(elements(t, text), |e| {
        FRAGMENTS
            .iter()
            .find(|f| f.0 == u && f.1 == [m, n, k] && f.2.contains(&e))
            .map(|f| Fragment {
                size: f.3,
                align: 8,
                num_elements: f.4,
            })
    })
}

/// The one answer `f` gives for every candidate it answers for (`None`
/// when it answers for none, or differently for two).
fn agree<T: PartialEq>(candidates: Vec<Elem>, f: impl Fn(Elem) -> Option<T>) -> Option<T> {
    let mut found: Option<T> = None;
    for v in candidates.into_iter().filter_map(f) {
        match &found {
            Some(x) if *x != v => return None,
            Some(_) => {}
            None => found = Some(v),
        }
    }
    found
}

/// The last `::` segment of a spelling, whitespace folded.
fn last_segment(text: &str) -> String {
    let t = text.rsplit("::").next().unwrap_or(text);
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn use_of(ty: &Ty, text: &str) -> Option<Use> {
    let name = match ty {
        Ty::Unknown(n) => last_segment(n),
        _ => last_segment(text),
    };
    match name.as_str() {
        "matrix_a" => Some(Use::A),
        "matrix_b" => Some(Use::B),
        "accumulator" => Some(Use::Acc),
        _ => None,
    }
}

/// The element types a fragment's argument may stand for: those of its
/// type (`Float { size: 2 }` is `half` or `__nv_bfloat16`), narrowed by its
/// spelling when that names one of them.
fn elements(ty: &Ty, text: &str) -> Vec<Elem> {
    let by_name = |n: &str| match n {
        "half" | "__half" => Some(Elem::Half),
        "__nv_bfloat16" | "nv_bfloat16" => Some(Elem::Bf16),
        "signed char" | "int8_t" => Some(Elem::S8),
        "unsigned char" | "uint8_t" => Some(Elem::U8),
        "float" => Some(Elem::F32),
        "double" => Some(Elem::F64),
        "int" | "signed" | "signed int" | "int32_t" => Some(Elem::I32),
        "tf32" => Some(Elem::Tf32),
        "s4" => Some(Elem::S4),
        "u4" => Some(Elem::U4),
        "b1" => Some(Elem::B1),
        _ => None,
    };
    let of_type = match ty {
        Ty::Float { size: 2 } => vec![Elem::Half, Elem::Bf16],
        Ty::Float { size: 4 } => vec![Elem::F32],
        Ty::Float { size: 8 } => vec![Elem::F64],
        Ty::Int { size: 1 } => vec![Elem::S8, Elem::U8],
        Ty::Int { size: 4 } => vec![Elem::I32],
        Ty::Unknown(n) => by_name(&last_segment(n)).into_iter().collect(),
        _ => Vec::new(),
    };
    match by_name(&last_segment(text)) {
        Some(e) if of_type.contains(&e) => vec![e],
        _ => of_type,
    }
}

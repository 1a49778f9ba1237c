//! C/CUDA types with their sizes and alignments: C and C++ built-ins,
//! structs laid out with natural alignment (and `__align__`); CUDA's own
//! types are in [`super::cuda_types`].

#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Int {
        size: u64,
    },
    Float {
        size: u64,
    },
    /// CUDA vector types (`float4`, `int2`, …) and other fixed-layout
    /// built-ins with components `x`, `y`, `z`, `w`.
    Vector {
        name: String,
        comp: Box<Ty>,
        n: u64,
        align: u64,
    },
    Struct(usize),
    /// An instance of a struct template the file defines, laid out with
    /// its template arguments bound (`interval_gpu<double>`): the layout
    /// travels with the type, as no file-wide table holds it.
    Instance(std::sync::Arc<StructDef>),
    Array(Box<Ty>, Option<u64>),
    Ptr(Box<Ty>),
    /// A type whose size and alignment are known but whose fields are not
    /// modelled (`curandState`, `wmma::fragment<…>`: [`super::cuda_types`]).
    Opaque {
        name: String,
        size: u64,
        align: u64,
    },
    /// `dim3` (host side, for launch configurations).
    Dim3,
    Void,
    /// A type the analyzer cannot size (unresolved name).
    Unknown(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: Ty,
    pub offset: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    pub name: String,
    pub fields: Vec<Field>,
    pub size: u64,
    pub align: u64,
    /// Where its `struct`/`class` keyword is written (a fix that raises
    /// its alignment writes `__align__(n)` after it), when the definition
    /// is in a file, not made by a macro.
    pub keyword: Option<crate::ir::Span>,
}

impl Ty {
    pub fn is_integer(&self) -> bool {
        matches!(self, Ty::Int { .. })
    }
    pub fn is_scalar_data(&self) -> bool {
        matches!(
            self,
            Ty::Float { .. } | Ty::Vector { .. } | Ty::Struct(_) | Ty::Instance(_)
        )
    }
}

/// Sizes and alignments, given the struct table.
pub fn size_of(ty: &Ty, structs: &[StructDef]) -> Option<u64> {
    match ty {
        Ty::Int { size } | Ty::Float { size } => Some(*size),
        Ty::Vector { comp, n, align, .. } => {
            let raw = size_of(comp, structs)? * n;
            Some(round_up(raw, *align))
        }
        Ty::Struct(i) => structs.get(*i).map(|s| s.size),
        Ty::Instance(s) => Some(s.size),
        Ty::Array(e, n) => Some(size_of(e, structs)?.checked_mul((*n)?)?),
        Ty::Ptr(_) => Some(8),
        Ty::Opaque { size, .. } => Some(*size),
        Ty::Dim3 => Some(12),
        Ty::Void | Ty::Unknown(_) => None,
    }
}

pub fn align_of(ty: &Ty, structs: &[StructDef]) -> Option<u64> {
    match ty {
        Ty::Int { size } | Ty::Float { size } => Some(*size),
        Ty::Vector { align, .. } => Some(*align),
        Ty::Struct(i) => structs.get(*i).map(|s| s.align),
        Ty::Instance(s) => Some(s.align),
        Ty::Array(e, _) => align_of(e, structs),
        Ty::Ptr(_) => Some(8),
        Ty::Opaque { align, .. } => Some(*align),
        Ty::Dim3 => Some(4),
        Ty::Void | Ty::Unknown(_) => None,
    }
}

pub fn round_up(v: u64, a: u64) -> u64 {
    if a <= 1 {
        v
    } else {
        v.div_ceil(a).saturating_mul(a)
    }
}

/// Lays out fields in order with natural alignment; `force_align` from `__align__(n)`.
pub fn layout_struct(
    name: String,
    fields: Vec<(String, Ty)>,
    force_align: Option<u64>,
    structs: &[StructDef],
) -> Option<StructDef> {
    let mut off = 0u64;
    let mut align = 1u64;
    let mut out = Vec::new();
    for (fname, ty) in fields {
        let a = align_of(&ty, structs)?;
        let s = size_of(&ty, structs)?;
        off = round_up(off, a);
        out.push(Field {
            name: fname,
            ty,
            offset: off,
        });
        off = off.checked_add(s)?;
        align = align.max(a);
    }
    if let Some(f) = force_align {
        if f.is_power_of_two() {
            align = align.max(f);
        }
    }
    Some(StructDef {
        name,
        fields: out,
        size: if off == 0 { 1 } else { round_up(off, align) },
        align,
        keyword: None,
    })
}

fn int(size: u64) -> Ty {
    Ty::Int { size }
}

/// C and C++ built-in type names (after whitespace is folded), with the
/// fixed-width integer typedefs and `dim3`.
pub fn builtin(name: &str) -> Option<Ty> {
    let n = name.trim_start_matches("std::").trim_start_matches("::");
    let t = match n {
        "bool" | "char" | "signed char" | "unsigned char" | "int8_t" | "uint8_t" | "char8_t" => {
            int(1)
        }
        "short" | "short int" | "signed short" | "unsigned short" | "unsigned short int"
        | "int16_t" | "uint16_t" | "char16_t" => int(2),
        "int" | "signed" | "signed int" | "unsigned" | "unsigned int" | "int32_t" | "uint32_t"
        | "char32_t" | "wchar_t" => int(4),
        "long"
        | "long int"
        | "unsigned long"
        | "unsigned long int"
        | "long long"
        | "long long int"
        | "unsigned long long"
        | "unsigned long long int"
        | "int64_t"
        | "uint64_t"
        | "size_t"
        | "ptrdiff_t"
        | "intptr_t"
        | "uintptr_t"
        | "ssize_t" => int(8),
        "float" => Ty::Float { size: 4 },
        "double" => Ty::Float { size: 8 },
        "void" => Ty::Void,
        "dim3" => Ty::Dim3,
        _ => return None,
    };
    Some(t)
}

/// The types a kernel instantiation is lowered with, one lowering each, for
/// the type parameters it gives no known type: the element sizes kernels
/// mostly run on (4, 2 and 8 bytes); the first is said when they agree.
pub const REPRESENTATIVE_TYPES: [&str; 3] = ["float", "__half", "double"];

/// A representative type ([`REPRESENTATIVE_TYPES`]) resolved.
pub fn representative(name: &str) -> Option<Ty> {
    builtin(name).or_else(|| super::cuda_types::named(name))
}

/// The system headers' and the CUDA runtime's integer typedefs that the
/// toolkit-free front end cannot read: `uint`/`ushort`/`ulong`, `clock_t`
/// and `time_t` (64-bit Linux, where CUDA runs: `long` is 8 bytes), and the
/// runtime's texture and surface object handles (`unsigned long long`).
/// Asked last, after the file's own typedefs, structs and macros.
pub fn system_typedef(name: &str) -> Option<Ty> {
    Some(match name {
        "ushort" => int(2),
        "uint" => int(4),
        "ulong" | "clock_t" | "time_t" | "cudaTextureObject_t" | "cudaSurfaceObject_t" => int(8),
        _ => return None,
    })
}

/// Offset and type of a component (`x`…`w`) or field.
pub fn field(ty: &Ty, name: &str, structs: &[StructDef]) -> Option<(u64, Ty)> {
    match ty {
        Ty::Vector { comp, n, .. } => {
            let i = ["x", "y", "z", "w"].iter().position(|c| *c == name)? as u64;
            if i >= *n {
                return None;
            }
            Some((i * size_of(comp, structs)?, (**comp).clone()))
        }
        Ty::Struct(_) | Ty::Instance(_) => {
            let s = match ty {
                Ty::Instance(s) => s,
                Ty::Struct(i) => structs.get(*i)?,
                _ => return None,
            };
            s.fields
                .iter()
                .find(|f| f.name == name)
                .map(|f| (f.offset, f.ty.clone()))
        }
        _ => None,
    }
}

/// How the C type is spelled in messages.
pub fn spell(ty: &Ty, structs: &[StructDef]) -> String {
    match ty {
        Ty::Int { size } => match size {
            1 => "char".into(),
            2 => "short".into(),
            4 => "int".into(),
            _ => "long long".into(),
        },
        Ty::Float { size } => match size {
            2 => "half".into(),
            4 => "float".into(),
            _ => "double".into(),
        },
        Ty::Vector { name, .. } | Ty::Opaque { name, .. } => name.clone(),
        Ty::Struct(i) => structs
            .get(*i)
            .map(|s| s.name.clone())
            .unwrap_or_else(|| "struct".into()),
        Ty::Instance(s) => s.name.clone(),
        Ty::Array(e, _) => spell(e, structs),
        Ty::Ptr(e) => format!("{}*", spell(e, structs)),
        Ty::Dim3 => "dim3".into(),
        Ty::Void => "void".into(),
        Ty::Unknown(n) => n.clone(),
    }
}

//! Rust types as the translation spells them in CUDA C++, and the little
//! type inference it needs: which C type a `let` declares, whether `!` is
//! a logical or a bitwise not, whether a variable is a pointer (a Rust
//! reference or raw pointer) or a slice (a pointer and a length).

/// A Rust type, as far as the translation tells types apart.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Ty {
    /// A primitive integer, float or `bool`, by its C spelling.
    Scalar(&'static str),
    /// `*const T`, `*mut T`, `&T`, `&mut T` of a scalar or struct.
    Ptr(Box<Ty>),
    /// `&[T]`, `&mut [T]`: a pointer and a length (`name__len`).
    Slice(Box<Ty>),
    /// `[T; N]`, a shared array (its dimensions are written apart).
    Array(Box<Ty>),
    /// CubeCL's `Line<T>`: as many `T`s as the launch's vectorisation
    /// factor, one access (`__wl_line<T, N>`, [`LINE_PRELUDE`]); the
    /// factor is a template argument of the kernel per buffer.
    Line(Box<Ty>),
    /// A type parameter or a type the translation does not know.
    Named(String),
}

impl Ty {
    /// The C spelling of a value of this type (an array's element type:
    /// arrays are declared with their dimensions apart).
    pub fn c(&self) -> String {
        match self {
            Ty::Scalar(s) => (*s).to_string(),
            Ty::Ptr(t) | Ty::Slice(t) => format!("{}*", t.c()),
            Ty::Array(t) => t.c(),
            // A value read from a line buffer: its width is the
            // buffer's, which the declaration takes from the read.
            Ty::Line(_) => "auto".to_string(),
            // A type the translation does not know (`dyn Trait`, `impl
            // Fn`): a name nothing declares, whose size is unknown.
            Ty::Named(n) if n.is_empty() => "unread_rust_type".to_string(),
            Ty::Named(n) => n.clone(),
        }
    }

    pub fn is_bool(&self) -> bool {
        *self == Ty::Scalar("bool")
    }

    pub fn is_float(&self) -> bool {
        matches!(
            self,
            Ty::Scalar("float" | "double" | "__half" | "__nv_bfloat16")
        )
    }

    /// The element type behind a pointer, slice or array.
    pub fn elem(&self) -> Option<&Ty> {
        match self {
            Ty::Ptr(t) | Ty::Slice(t) | Ty::Array(t) => Some(t),
            _ => None,
        }
    }
}

/// The C++ a file with `Line` buffers starts with: a line of `N` `T`s is
/// aligned to its size, as CubeCL's vectorised elements are (one
/// instruction each, up to 16 bytes).
pub(super) const LINE_PRELUDE: &str =
    "template <typename T, int N> struct alignas(sizeof(T) * N) __wl_line { T v[N]; };\n";

/// The C type of a Rust primitive, by its name.
pub(super) fn primitive(name: &str) -> Option<&'static str> {
    Some(match name {
        "usize" | "u64" => "unsigned long long",
        "isize" | "i64" => "long long",
        "u32" => "unsigned int",
        "i32" => "int",
        "u16" => "unsigned short",
        "i16" => "short",
        "u8" => "unsigned char",
        "i8" => "signed char",
        "f32" => "float",
        "f64" => "double",
        "bool" => "bool",
        "f16" => "__half",
        "bf16" => "__nv_bfloat16",
        _ => return None,
    })
}

/// The type of a literal's suffix (`1u32`, `0.5f32`).
pub(super) fn suffix(s: &str) -> Option<&'static str> {
    primitive(s)
}

/// CubeCL's buffers (`Array<T>`, `Tensor<T>`, `SharedMemory<T>`): their
/// element type. They are passed as a pointer and a length, as slices.
fn buffer(ty: &syn::Type) -> Option<Ty> {
    let syn::Type::Path(p) = ty else {
        return None;
    };
    let last = p.path.segments.last()?;
    if !matches!(
        last.ident.to_string().as_str(),
        "Array" | "Tensor" | "SharedMemory"
    ) {
        return None;
    }
    first_generic(&last.arguments)
}

/// The first type argument of `Name<T, ...>`.
pub(super) fn first_generic(args: &syn::PathArguments) -> Option<Ty> {
    let syn::PathArguments::AngleBracketed(a) = args else {
        return None;
    };
    a.args.iter().find_map(|g| match g {
        syn::GenericArgument::Type(t) => Some(of(t)),
        _ => None,
    })
}

/// A syn type as the translation knows it.
pub(super) fn of(ty: &syn::Type) -> Ty {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return Ty::Named(String::new());
            };
            let name = last.ident.to_string();
            match primitive(&name) {
                Some(c) => Ty::Scalar(c),
                None if name == "Line" => match first_generic(&last.arguments) {
                    Some(t) => Ty::Line(Box::new(t)),
                    None => Ty::Named(name),
                },
                None => Ty::Named(name),
            }
        }
        syn::Type::Ptr(p) => Ty::Ptr(Box::new(of(&p.elem))),
        syn::Type::Reference(r) => match &*r.elem {
            syn::Type::Slice(s) => Ty::Slice(Box::new(of(&s.elem))),
            other => match buffer(other) {
                Some(t) => Ty::Slice(Box::new(t)),
                None => Ty::Ptr(Box::new(of(other))),
            },
        },
        syn::Type::Slice(s) => Ty::Slice(Box::new(of(&s.elem))),
        syn::Type::Array(a) => Ty::Array(Box::new(of(&a.elem))),
        syn::Type::Paren(p) => of(&p.elem),
        syn::Type::Group(g) => of(&g.elem),
        _ => Ty::Named(String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(s: &str) -> Ty {
        of(&syn::parse_str::<syn::Type>(s).expect("a type"))
    }

    #[test]
    fn rust_types_spell_as_their_c_equivalents() {
        assert_eq!(ty("usize").c(), "unsigned long long");
        assert_eq!(ty("*mut f32").c(), "float*");
        assert_eq!(
            ty("&[u32]"),
            Ty::Slice(Box::new(Ty::Scalar("unsigned int")))
        );
        assert_eq!(ty("&mut f64").c(), "double*");
        assert_eq!(ty("T"), Ty::Named("T".into()));
        assert!(ty("bool").is_bool() && ty("f32").is_float() && !ty("i32").is_float());
    }
}

//! The language a kernel is written in, so that help names what its
//! author writes: `threadIdx.x` in CUDA C++, `thread::thread_idx_x()` in
//! Rust-CUDA, `UNIT_POS_X` in CubeCL.

/// Which language the kernel's source is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Cuda,
    RustCuda,
    CubeCl,
}

impl Dialect {
    /// The dialect of a file the front end read as `language`, its text
    /// `source` (a Rust file with a `#[cube` attribute is CubeCL's).
    pub fn of(language: warplint_analyzer::frontend::Language, source: &[u8]) -> Dialect {
        match language {
            warplint_analyzer::frontend::Language::Cuda => Dialect::Cuda,
            warplint_analyzer::frontend::Language::Rust => {
                if source.windows(6).any(|w| w == b"#[cube") {
                    Dialect::CubeCl
                } else {
                    Dialect::RustCuda
                }
            }
        }
    }

    /// The x thread index within the block.
    pub fn thread_x(self) -> &'static str {
        match self {
            Dialect::Cuda => "threadIdx.x",
            Dialect::RustCuda => "thread::thread_idx_x()",
            Dialect::CubeCl => "UNIT_POS_X",
        }
    }

    /// What moves `bytes` (8 or 16) per lane in one access, quoted.
    pub fn vectors(self, bytes: i64) -> String {
        match (self, bytes) {
            (Dialect::Cuda, 16) => "`float4`, `int4`".into(),
            (Dialect::Cuda, _) => "`float2`, `int2`".into(),
            (Dialect::RustCuda, n) => format!(
                "a `#[repr(C, align({n}))]` struct of {} `f32`s read whole",
                n / 4
            ),
            (Dialect::CubeCl, n) => format!(
                "`Line<f32>` with a vectorisation factor of {} at the launch",
                n / 4
            ),
        }
    }

    /// What compiles the kernel.
    pub fn compiler(self) -> &'static str {
        match self {
            Dialect::Cuda => "nvcc",
            Dialect::RustCuda | Dialect::CubeCl => "the compiler",
        }
    }

    /// The attribute that aligns a type to `bytes`.
    pub fn align(self, bytes: u64) -> String {
        match self {
            Dialect::Cuda => format!("`__align__({bytes})`"),
            Dialect::RustCuda | Dialect::CubeCl => format!("`#[repr(C, align({bytes}))]`"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Dialect;
    use warplint_analyzer::frontend::Language;

    #[test]
    fn each_language_names_its_own_constructs() {
        let rust = Dialect::of(Language::Rust, b"#[kernel]\npub unsafe fn k() {}");
        let cube = Dialect::of(Language::Rust, b"#[cube(launch)]\nfn k() {}");
        let cuda = Dialect::of(Language::Cuda, b"#[cube");
        assert_eq!(
            (rust, cube, cuda),
            (Dialect::RustCuda, Dialect::CubeCl, Dialect::Cuda)
        );
        assert_eq!(cuda.thread_x(), "threadIdx.x");
        assert_eq!(rust.thread_x(), "thread::thread_idx_x()");
        assert_eq!(cube.thread_x(), "UNIT_POS_X");
        assert_eq!(cuda.align(16), "`__align__(16)`");
        assert_eq!(rust.align(8), "`#[repr(C, align(8))]`");
        assert!(cuda.vectors(16).contains("float4"));
        assert!(rust.vectors(16).contains("4 `f32`s"));
        assert!(cube.vectors(8).contains("factor of 2"));
    }
}

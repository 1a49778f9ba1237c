//! Never panic on input: random mixtures of directives, braces, macros and
//! kernel fragments go through the whole pipeline (preprocessing, parsing,
//! lowering, engine) on several architectures.

use proptest::prelude::*;
use warplint_analyzer::hardware::Arch;
use warplint_analyzer::{analyze, Options};

const PIECES: &[&str] = &[
    "#if X > 1\n",
    "#ifdef X\n",
    "#ifndef X\n",
    "#elif defined(Y) && Y\n",
    "#else\n",
    "#endif\n",
    "#define X 2\n",
    "#define Y(a, b) ((a) * (b))\n",
    "#define API __device__\n",
    "#undef X\n",
    "#include \"missing.h\"\n",
    "__global__ void k(float *a) {\n",
    "template <int N = 4> __global__ void t(float *a) {\n",
    "API float f(const float *p, int i) { return p[i]; }\n",
    "__shared__ float s[32][33];\n",
    "a[threadIdx.x * X] = s[threadIdx.x][Y(1, 2)];\n",
    "for (int i = 0; i < 8; i += 2) { a[i * blockDim.x + threadIdx.x] += 1; }\n",
    "if (threadIdx.x < 16) return;\n",
    "}\n",
    "{\n",
    "int main() { k<<<2, 64>>>(0); t<8><<<1, dim3(32, 4)>>>(0); }\n",
    "/* unterminated comment\n",
    "\"string with #if\"\n",
    "\\\n",
    "[=] __device__ (int i) { return i; };\n",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_sources_never_panic(picks in proptest::collection::vec(0usize..PIECES.len(), 0..40)) {
        let src: String = picks.iter().map(|i| PIECES[*i]).collect();
        for arch in ["sm_13", "sm_35", "sm_90"] {
            let model = Arch::parse(arch).unwrap().model().unwrap();
            let a = analyze(src.as_bytes(), model.as_ref(), &Options::default());
            for r in &a.reports {
                prop_assert!(r.span.start <= r.span.end);
                prop_assert!(r.span.end <= src.len() + 64);
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let model = Arch::parse("sm_90").unwrap().model().unwrap();
        let _ = analyze(&bytes, model.as_ref(), &Options::default());
    }
}

/// Lines of SASS listings, whole and cut anywhere, in any order: the
/// listing parser (`--sass`, `--nvcc`) never panics.
const SASS_PIECES: &[&str] = &[
    ".text._Z1kPf:\n",
    ".text._ZN2ns2nkEPdi:\n",
    ".text.:\n",
    "\t//## File \"/a/k.cu\", line 4\n",
    "\t//## File \"/a/k.cuh\", line 2 inlined at \"/a/k.cu\", line 9\n",
    "\t//## File \"/a/k.cu\", line\n",
    "\t//## File \"unterminated, line 3\n",
    "        /*0020*/                   LDS.64 R4, [R3] ;\n",
    "        /*0030*/               @!P0 STG.E.128 desc[UR4][R2.64], R4 ;\n",
    "        /*0040*/                   ATOMS.POPC.INC.32 RZ, [URZ] ;\n",
    "        /*zz*/ LDS\n",
    "        /*0050*/ {\n",
    "_Z99\n",
];

proptest! {
    #[test]
    fn sass_listings_never_panic(
        pieces in prop::collection::vec((0..SASS_PIECES.len(), 0usize..80), 0..30)
    ) {
        let mut text = String::new();
        for (i, cut) in pieces {
            let p = SASS_PIECES[i];
            let mut end = cut.min(p.len());
            while !p.is_char_boundary(end) {
                end -= 1;
            }
            text.push_str(if cut % 3 == 0 { &p[..end] } else { p });
        }
        let l = warplint_analyzer::nvcc::sass::parse(&text);
        for f in &l.functions {
            for i in &f.insns {
                prop_assert!(i.at.file < l.files.len());
            }
        }
    }
}
